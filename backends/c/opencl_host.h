/* opencl_host.h: the C host runtime of mdpoly's OpenCL output (OpenCL 1.2 API), once per file.
 *
 * Device choice (MDPOLY_OPENCL_DEVICE: index or name substring, else the first GPU, else the first
 * device), one context and in-order queue, program building with the build log on failure, error
 * checks that name the failed call, each nest's device buffers kept across calls (mdp_cl_buffer),
 * kernel arguments set only when changed (mdp_cl_arg), and MDPOLY_PROFILE: per-command events,
 * each nest's sums printed at exit, the last call's profile in mdp_cl_last (read by the tuner).
 * Spliced into out.c by mdpoly.backends.opencl_host; compiles on its own (tests/backends/test_c_files.py).
 */
#ifndef MDP_OPENCL_RUNTIME
#define MDP_OPENCL_RUNTIME
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <time.h>
#define MDP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MDP_CDIV(a, b) (((a) + (b) - 1) / (b))
#ifndef MDP_FITS_FN
#if defined(__GNUC__) || defined(__clang__)
#define MDP_FITS_FN __attribute__((unused)) static int   /* a nest's launch check, called at its call site */
#else
#define MDP_FITS_FN static int
#endif
#endif
#define MDP_CL_MAX_OBJECTS 256
static cl_device_id mdp_cl_device;
static cl_context mdp_cl_context;
static cl_command_queue mdp_cl_queue;
static cl_program mdp_cl_programs[MDP_CL_MAX_OBJECTS];
static cl_kernel mdp_cl_kernels[MDP_CL_MAX_OBJECTS];
static int mdp_cl_nprograms, mdp_cl_nkernels;
static int mdp_cl_profile;   /* MDPOLY_PROFILE set (read once, in mdp_cl_init) */
static struct { const char *nest; long calls; double kernel_ns, transfer_ns, host_ms; } mdp_cl_prof[MDP_CL_MAX_OBJECTS];
static int mdp_cl_nprof;
/* MDPOLY_PROFILE: the last call's kernel and transfer device time, and the device time from its
   first command's start to its last command's end (the whole call); a tuner reads it back. */
static struct { double kernel_ms, transfer_ms, call_ms; } mdp_cl_last;
static cl_mem *mdp_cl_buffers[4 * MDP_CL_MAX_OBJECTS];   /* each nest's kept device buffers */
static int mdp_cl_nbuffers;

static const char *mdp_cl_error_name(cl_int err)
{
    switch (err) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_PLATFORM: return "CL_INVALID_PLATFORM";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown error";
    }
}

static void mdp_cl_check(cl_int err, const char *call)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "mdpoly: OpenCL error: %s failed with error %d (%s)\n", call, (int)err,
                mdp_cl_error_name(err));
        exit(1);
    }
}

static void mdp_cl_release(void)
{
    int i;
    for (i = 0; i < mdp_cl_nbuffers; ++i)
        if (*mdp_cl_buffers[i])
            clReleaseMemObject(*mdp_cl_buffers[i]);
    mdp_cl_nbuffers = 0;
    for (i = 0; i < mdp_cl_nkernels; ++i)
        clReleaseKernel(mdp_cl_kernels[i]);
    for (i = 0; i < mdp_cl_nprograms; ++i)
        clReleaseProgram(mdp_cl_programs[i]);
    if (mdp_cl_queue)
        clReleaseCommandQueue(mdp_cl_queue);
    if (mdp_cl_context)
        clReleaseContext(mdp_cl_context);
    mdp_cl_nkernels = mdp_cl_nprograms = 0;
    mdp_cl_queue = NULL;
    mdp_cl_context = NULL;
}

static int mdp_cl_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle), i, j;
    for (i = 0; hay[i]; ++i) {
        for (j = 0; j < n && hay[i + j] && tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j]); ++j)
            ;
        if (j == n)
            return 1;
    }
    return n == 0;
}

/* MDPOLY_PROFILE: the device time of each nest's commands, summed over its calls and printed at exit. */
static double mdp_cl_event_ns(cl_event ev, cl_ulong *first, cl_ulong *last)
{
    cl_ulong start = 0, end = 0;
    mdp_cl_check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL),
                 "clGetEventProfilingInfo");
    mdp_cl_check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL),
                 "clGetEventProfilingInfo");
    mdp_cl_check(clReleaseEvent(ev), "clReleaseEvent");
    if (start && (*first == 0 || start < *first))
        *first = start;
    if (end > *last)
        *last = end;
    return end > start ? (double)(end - start) : 0.0;
}

/* Adds one call of 'nest': its kernel events and transfer events (completed; released here). */
static void mdp_cl_profile_add(const char *nest, cl_event *kernels, int nk, cl_event *transfers, int nt)
{
    int i, slot;
    cl_ulong first = 0, last = 0;
    double kernel_ns = 0.0, transfer_ns = 0.0;
    for (slot = 0; slot < mdp_cl_nprof && strcmp(mdp_cl_prof[slot].nest, nest) != 0; ++slot)
        ;
    if (slot == MDP_CL_MAX_OBJECTS)
        mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_cl_profile_add (too many nests)");
    if (slot == mdp_cl_nprof) {
        mdp_cl_prof[slot].nest = nest;
        ++mdp_cl_nprof;
    }
    mdp_cl_prof[slot].calls++;
    for (i = 0; i < nk; ++i)
        kernel_ns += mdp_cl_event_ns(kernels[i], &first, &last);
    for (i = 0; i < nt; ++i)
        transfer_ns += mdp_cl_event_ns(transfers[i], &first, &last);
    mdp_cl_prof[slot].kernel_ns += kernel_ns;
    mdp_cl_prof[slot].transfer_ns += transfer_ns;
    mdp_cl_last.kernel_ms = kernel_ns * 1e-6;
    mdp_cl_last.transfer_ms = transfer_ns * 1e-6;
    mdp_cl_last.call_ms = last > first ? (double)(last - first) * 1e-6 : 0.0;
}

/* MDPOLY_PROFILE: the host's monotonic clock in milliseconds (POSIX; C11 without it; else processor time). */
static double mdp_cl_now_ms(void)
{
#if defined(CLOCK_MONOTONIC)
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
#elif defined(TIME_UTC)
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
#else   /* strict ISO C99 without POSIX: the processor time */
    return (double)clock() * 1e3 / (double)CLOCKS_PER_SEC;
#endif
}

/* Ski rental for the runtime's set-up (context creation and module loads, paid once per program):
   a call whose per-call guard sends it to the device (its work known only at run time) runs on
   the host while the host time of such calls is below setup_s (the cost model's gpu_setup_ns, in
   the guard: mdp_gpu_rent(0.2, <the call's host estimate>)); after that, once the runtime is up, or
   for a call estimated to take the set-up's time on the host alone, the device runs them. A short program then
   never pays the set-up (a 6-step training run was 5x slower on the device than on the host), a
   long one pays it after at most its cost in host time. */
#ifndef MDP_GPU_RENT_H
#define MDP_GPU_RENT_H
#if defined(__GNUC__) || defined(__clang__)
#define MDP_RENT_FN __attribute__((unused)) static
#else
#define MDP_RENT_FN static
#endif
static double mdp_gpu_rent_ms;     /* host time of the calls the device would have run */
static int mdp_gpu_rent_pending;   /* the last guard deferred its call to the host */
MDP_RENT_FN int mdp_gpu_rent(double setup_s, double host_s)
{
    if (mdp_cl_queue != NULL || mdp_gpu_rent_ms >= 1e3 * setup_s || host_s >= setup_s)
        return 1;
    mdp_gpu_rent_pending = 1;
    return 0;
}
/* The host branch: whether its call was deferred (timed, then mdp_gpu_rent_pay). */
MDP_RENT_FN int mdp_gpu_rent_take(void)
{
    int pending = mdp_gpu_rent_pending;
    mdp_gpu_rent_pending = 0;
    return pending;
}
MDP_RENT_FN double mdp_gpu_rent_now(void) { return mdp_cl_now_ms(); }
MDP_RENT_FN void mdp_gpu_rent_pay(double since_ms) { mdp_gpu_rent_ms += mdp_cl_now_ms() - since_ms; }
#endif /* MDP_GPU_RENT_H */

/* After mdp_cl_profile_add: the host overhead of the call of 'nest' that began setting up its device
   work at 'host_start' (mdp_cl_now_ms): its host time since then less its kernel and transfer time. */
static void mdp_cl_profile_host(const char *nest, double host_start)
{
    int slot;
    double host = mdp_cl_now_ms() - host_start - mdp_cl_last.kernel_ms - mdp_cl_last.transfer_ms;
    for (slot = 0; slot < mdp_cl_nprof && strcmp(mdp_cl_prof[slot].nest, nest) != 0; ++slot)
        ;
    if (slot < mdp_cl_nprof)
        mdp_cl_prof[slot].host_ms += host > 0.0 ? host : 0.0;
}

static void mdp_cl_profile_report(void)
{
    int i;
    for (i = 0; i < mdp_cl_nprof; ++i)
        fprintf(stderr, "mdpoly-profile: %s calls=%ld kernel_ms=%.6f transfer_ms=%.6f host_ms=%.6f\n",
                mdp_cl_prof[i].nest, mdp_cl_prof[i].calls, mdp_cl_prof[i].kernel_ns * 1e-6,
                mdp_cl_prof[i].transfer_ns * 1e-6, mdp_cl_prof[i].host_ms);
    fflush(stderr);
}

/* MDPOLY_PROFILE: every copy of each array (by its name in the source; a nest's own copies, a data
   region's and the kept arrays' together), counted and summed in bytes per direction, printed at exit:
       mdpoly-profile: array <name> uploads=<n> upload_bytes=<b> downloads=<n> download_bytes=<b> */
#define MDP_CL_MAX_ARRAYS 256
static struct { const char *name; long up, down; unsigned long long up_bytes, down_bytes; } mdp_cl_moved[MDP_CL_MAX_ARRAYS];
static int mdp_cl_nmoved;

static void mdp_cl_moved_report(void)
{
    int i;
    for (i = 0; i < mdp_cl_nmoved; ++i)
        fprintf(stderr, "mdpoly-profile: array %s uploads=%ld upload_bytes=%llu downloads=%ld download_bytes=%llu\n",
                mdp_cl_moved[i].name, mdp_cl_moved[i].up, mdp_cl_moved[i].up_bytes, mdp_cl_moved[i].down,
                mdp_cl_moved[i].down_bytes);
    fflush(stderr);
}

/* Counts one copy of 'bytes' bytes of array 'name' to the device ('up') or back (when profiling). */
static void mdp_cl_count(const char *name, int up, size_t bytes)
{
    int i;
    if (!mdp_cl_profile)
        return;
    for (i = 0; i < mdp_cl_nmoved && strcmp(mdp_cl_moved[i].name, name) != 0; ++i)
        ;
    if (i == MDP_CL_MAX_ARRAYS)
        return;
    if (i == mdp_cl_nmoved) {
        if (mdp_cl_nmoved == 0)
            atexit(mdp_cl_moved_report);
        mdp_cl_moved[i].name = name;
        ++mdp_cl_nmoved;
    }
    if (up) {
        mdp_cl_moved[i].up++;
        mdp_cl_moved[i].up_bytes += bytes;
    } else {
        mdp_cl_moved[i].down++;
        mdp_cl_moved[i].down_bytes += bytes;
    }
}

static void mdp_cl_init(void)
{
    cl_uint nplat = 0, p, d;
    cl_platform_id *plats;
    cl_device_id chosen = NULL, first = NULL, first_gpu = NULL;
    const char *want = getenv("MDPOLY_OPENCL_DEVICE");
    int want_index = -1, index = 0;
    cl_int err;
    if (mdp_cl_queue)
        return;
    if (want && *want) {
        const char *c = want;
        while (isdigit((unsigned char)*c))
            ++c;
        if (*c == '\0')
            want_index = atoi(want);
    }
    err = clGetPlatformIDs(0, NULL, &nplat);
    if (err == -1001 || (err == CL_SUCCESS && nplat == 0)) {
        fprintf(stderr, "mdpoly: OpenCL error: no OpenCL platform found (clGetPlatformIDs returned %d, %s); "
                "install an OpenCL driver (ICD) for your device, e.g. pocl-opencl-icd for CPUs\n",
                (int)err, mdp_cl_error_name(err));
        exit(1);
    }
    mdp_cl_check(err, "clGetPlatformIDs");
    plats = (cl_platform_id *)malloc(nplat * sizeof *plats);
    if (!plats)
        mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "malloc");
    mdp_cl_check(clGetPlatformIDs(nplat, plats, NULL), "clGetPlatformIDs");
    for (p = 0; p < nplat; ++p) {
        cl_uint ndev = 0;
        cl_device_id devs[64];
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &ndev);
        if (err == CL_DEVICE_NOT_FOUND)
            continue;
        mdp_cl_check(err, "clGetDeviceIDs");
        if (ndev > 64)
            ndev = 64;
        for (d = 0; d < ndev; ++d, ++index) {
            char name[512] = "", pname[256] = "";
            cl_device_type type = 0;
            mdp_cl_check(clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof name - 1, name, NULL), "clGetDeviceInfo");
            mdp_cl_check(clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL),
                         "clGetPlatformInfo");
            mdp_cl_check(clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof type, &type, NULL), "clGetDeviceInfo");
            if (!first)
                first = devs[d];
            if (!first_gpu && (type & CL_DEVICE_TYPE_GPU))
                first_gpu = devs[d];
            if (!chosen && want && *want
                && (want_index >= 0 ? index == want_index : mdp_cl_contains(name, want) || mdp_cl_contains(pname, want)))
                chosen = devs[d];
            if (want && *want && getenv("MDPOLY_OPENCL_VERBOSE"))
                fprintf(stderr, "mdpoly: OpenCL device %d: %s (%s)\n", index, name, pname);
        }
    }
    free(plats);
    if (want && *want && !chosen) {
        fprintf(stderr, "mdpoly: OpenCL error: no OpenCL device matches MDPOLY_OPENCL_DEVICE=\"%s\" "
                "(%d device(s) found; give an index or part of a device or platform name)\n", want, index);
        exit(1);
    }
    if (!chosen)
        chosen = first_gpu ? first_gpu : first;
    if (!chosen) {
        fprintf(stderr, "mdpoly: OpenCL error: no OpenCL device found on any platform\n");
        exit(1);
    }
    mdp_cl_device = chosen;
    mdp_cl_context = clCreateContext(NULL, 1, &chosen, NULL, NULL, &err);
    mdp_cl_check(err, "clCreateContext");
    want = getenv("MDPOLY_PROFILE");
    mdp_cl_profile = want && *want && strcmp(want, "0") != 0;
    mdp_cl_queue = clCreateCommandQueue(mdp_cl_context, chosen, mdp_cl_profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    mdp_cl_check(err, "clCreateCommandQueue");
    atexit(mdp_cl_release);
    if (mdp_cl_profile)
        atexit(mdp_cl_profile_report);
}

static cl_kernel mdp_cl_kernel(const char *source, const char *nest, const char *kernel)
{
    static cl_program last_program;
    static const char *last_source;
    cl_program prog;
    cl_kernel k;
    cl_int err;
    mdp_cl_init();
    if (last_source == source) {
        prog = last_program;
    } else {
        prog = clCreateProgramWithSource(mdp_cl_context, 1, &source, NULL, &err);
        mdp_cl_check(err, "clCreateProgramWithSource");
        err = clBuildProgram(prog, 1, &mdp_cl_device, "", NULL, NULL);
        if (err != CL_SUCCESS) {
            size_t size = 0;
            char *log;
            clGetProgramBuildInfo(prog, mdp_cl_device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
            log = (char *)malloc(size + 1);
            if (log) {
                log[0] = '\0';
                clGetProgramBuildInfo(prog, mdp_cl_device, CL_PROGRAM_BUILD_LOG, size, log, NULL);
                log[size] = '\0';
            }
            fprintf(stderr, "mdpoly: OpenCL error: clBuildProgram failed with error %d (%s) for the kernels of "
                    "'%s'; build log:\n%s\n", (int)err, mdp_cl_error_name(err), nest, log ? log : "(none)");
            free(log);
            exit(1);
        }
        if (mdp_cl_nprograms == MDP_CL_MAX_OBJECTS)
            mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_cl_kernel (too many programs)");
        mdp_cl_programs[mdp_cl_nprograms++] = prog;
        last_program = prog;
        last_source = source;
    }
    k = clCreateKernel(prog, kernel, &err);
    mdp_cl_check(err, "clCreateKernel");
    if (mdp_cl_nkernels == MDP_CL_MAX_OBJECTS)
        mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_cl_kernel (too many kernels)");
    mdp_cl_kernels[mdp_cl_nkernels++] = k;
    return k;
}

/* Whether kernel 'k' can run work-groups of 'n' dims of 'local' work-items on the device, from what
   the compiled kernel allows (CL_KERNEL_WORK_GROUP_SIZE: its registers and private memory decide
   it; CL_KERNEL_LOCAL_MEM_SIZE against the device's local memory; the device's per-dim limits).
   When it cannot: with 'fatal', says why and exits with status 3 before the launch (a tuner counts
   the configuration as one the device cannot launch, not as a crash); without, says why the
   original code runs instead (the call site's <nest>_fits check, code planned for a larger device)
   and returns 0. Returns 1 when it can. */
static int mdp_cl_check_launch(cl_kernel k, const char *kernel, cl_uint n, const size_t *local, int fatal)
{
    const char *head = fatal ? "mdpoly: launch refused:" : "mdpoly: note: the original code runs instead of";
    size_t limit = 0, items = 1, dims[3] = {0, 0, 0};
    cl_ulong used = 0, avail = 0;
    cl_uint i;
    for (i = 0; i < n; ++i)
        items *= local[i];
    mdp_cl_check(clGetKernelWorkGroupInfo(k, mdp_cl_device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL),
                 "clGetKernelWorkGroupInfo");
    mdp_cl_check(clGetKernelWorkGroupInfo(k, mdp_cl_device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof used, &used, NULL),
                 "clGetKernelWorkGroupInfo");
    mdp_cl_check(clGetDeviceInfo(mdp_cl_device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof avail, &avail, NULL), "clGetDeviceInfo");
    mdp_cl_check(clGetDeviceInfo(mdp_cl_device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof dims, dims, NULL), "clGetDeviceInfo");
    for (i = 0; i < n && i < 3; ++i)
        if (local[i] > dims[i]) {
            fprintf(stderr, "%s kernel '%s': %zu work-items along dim %u exceed the device's limit of %zu\n", head,
                    kernel, local[i], (unsigned)i, dims[i]);
            if (fatal)
                exit(3);
            return 0;
        }
    if (items > limit || used > avail) {
        fprintf(stderr, "%s kernel '%s': a work-group of %zu work-items and %lu bytes of local memory; the compiled "
                "kernel allows at most %zu work-items, the device %lu bytes\n", head, kernel, items,
                (unsigned long)used, limit, (unsigned long)avail);
        if (fatal)
            exit(3);
        return 0;
    }
    return 1;
}

static int mdp_cl_launchable(cl_kernel k, const char *kernel, cl_uint n, const size_t *local)
{
    return mdp_cl_check_launch(k, kernel, n, local, 1);
}

/* A nest's device buffer, kept across its calls: (re)created only when 'bytes' exceeds its
   capacity '*cap'; released at exit. Returns 1 when the buffer object changed. */
static int mdp_cl_buffer(cl_mem *mem, size_t *cap, size_t bytes, cl_mem_flags flags)
{
    cl_int err;
    if (bytes == 0)
        bytes = 1;
    if (*mem && bytes <= *cap)
        return 0;
    if (*mem) {
        mdp_cl_check(clReleaseMemObject(*mem), "clReleaseMemObject");
    } else {
        if (mdp_cl_nbuffers == 4 * MDP_CL_MAX_OBJECTS)
            mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_cl_buffer (too many buffers)");
        mdp_cl_buffers[mdp_cl_nbuffers++] = mem;
    }
    *mem = NULL;
    *cap = 0;
    *mem = clCreateBuffer(mdp_cl_context, flags, bytes, NULL, &err);
    mdp_cl_check(err, "clCreateBuffer");
    *cap = bytes;
    return 1;
}

/* Sets kernel argument 'index' unless it holds these 'size' bytes already ('last': the bytes
   set before, 'valid': whether there were any). */
static void mdp_cl_arg(cl_kernel k, cl_uint index, size_t size, const void *value, unsigned char *last, char *valid)
{
    if (*valid && size <= 8 && memcmp(last, value, size) == 0)
        return;
    mdp_cl_check(clSetKernelArg(k, index, size, value), "clSetKernelArg");
    if (size <= 8) {
        memcpy(last, value, size);
        *valid = 1;
    }
}

/* Device residency over a host loop (mdpoly.residency): each array registered here by
   mdp_cl_resident_enter has one device buffer for the whole loop; the nests' functions find it by
   the host address they are given (mdp_cl_resident_find) and then neither copy it in nor out;
   mdp_cl_resident_exit copies the written ones back once and releases them. */
#define MDP_CL_MAX_RESIDENT 64
#if defined(__GNUC__) || defined(__clang__)
#define MDP_CL_MAYBE_UNUSED __attribute__((unused))   /* called only where a region is generated */
#else
#define MDP_CL_MAYBE_UNUSED
#endif
static struct { const char *name; const void *host; size_t bytes; cl_mem mem; int download; } mdp_cl_res[MDP_CL_MAX_RESIDENT];
static int mdp_cl_nres;
static long mdp_cl_res_uploads, mdp_cl_res_downloads;   /* MDPOLY_PROFILE: the regions' copies */
static unsigned long long mdp_cl_res_up_bytes, mdp_cl_res_down_bytes;
static double mdp_cl_res_ns;

static void mdp_cl_res_profile(cl_event ev)
{
    cl_ulong first = 0, last = 0;
    mdp_cl_res_ns += mdp_cl_event_ns(ev, &first, &last);
}

static void mdp_cl_resident_report(void)
{
    fprintf(stderr, "mdpoly-profile: resident uploads=%ld downloads=%ld transfer_ms=%.6f upload_bytes=%llu "
            "download_bytes=%llu\n", mdp_cl_res_uploads, mdp_cl_res_downloads, mdp_cl_res_ns * 1e-6,
            mdp_cl_res_up_bytes, mdp_cl_res_down_bytes);
    fflush(stderr);
}

/* Copies bytes [from, to) of resident array 'i' back to the host ('to_host') or to the device. */
static void mdp_cl_resident_copy(int i, size_t from, size_t to, int to_host)
{
    cl_event ev;
    char *host = (char *)mdp_cl_res[i].host;
    if (to > mdp_cl_res[i].bytes)
        to = mdp_cl_res[i].bytes;
    if (from >= to)
        return;
    if (to_host)
        mdp_cl_check(clEnqueueReadBuffer(mdp_cl_queue, mdp_cl_res[i].mem, CL_TRUE, from, to - from, host + from, 0,
                                         NULL, mdp_cl_profile ? &ev : NULL), "clEnqueueReadBuffer");
    else
        mdp_cl_check(clEnqueueWriteBuffer(mdp_cl_queue, mdp_cl_res[i].mem, CL_TRUE, from, to - from, host + from, 0,
                                          NULL, mdp_cl_profile ? &ev : NULL), "clEnqueueWriteBuffer");
    if (mdp_cl_profile) {
        mdp_cl_res_profile(ev);
        if (to_host) {
            ++mdp_cl_res_downloads;
            mdp_cl_res_down_bytes += to - from;
        } else {
            ++mdp_cl_res_uploads;
            mdp_cl_res_up_bytes += to - from;
        }
        mdp_cl_count(mdp_cl_res[i].name, !to_host, to - from);
    }
}

/* Registers array 'name' ('bytes' bytes at 'host') for the data region starting now: one device
   buffer, copied in now when 'upload', back at mdp_cl_resident_exit when 'download'. */
MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_enter_named(const char *name, const void *host, size_t bytes,
                                                            int upload, int download)
{
    static int reported;
    cl_int err;
    mdp_cl_init();
    if (mdp_cl_profile && !reported) {
        reported = 1;
        atexit(mdp_cl_resident_report);
    }
    if (mdp_cl_nres == MDP_CL_MAX_RESIDENT)
        mdp_cl_check(CL_OUT_OF_HOST_MEMORY, "mdp_cl_resident_enter (too many arrays)");
    mdp_cl_res[mdp_cl_nres].name = name;
    mdp_cl_res[mdp_cl_nres].host = host;
    mdp_cl_res[mdp_cl_nres].bytes = bytes;
    mdp_cl_res[mdp_cl_nres].download = download;
    mdp_cl_res[mdp_cl_nres].mem = clCreateBuffer(mdp_cl_context, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &err);
    mdp_cl_check(err, "clCreateBuffer");
    ++mdp_cl_nres;
    if (upload)
        mdp_cl_resident_copy(mdp_cl_nres - 1, 0, bytes, 0);
}

MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_enter(const void *host, size_t bytes, int upload, int download)
{
    static const char unnamed[] = "(unnamed)";
    mdp_cl_resident_enter_named(unnamed, host, bytes, upload, download);
}

/* The resident buffer of the 'bytes' bytes at 'host' (1 and '*mem' set), or 0 when there is none. */
MDP_CL_MAYBE_UNUSED static int mdp_cl_resident_find(const void *host, size_t bytes, cl_mem *mem)
{
    int i;
    for (i = 0; i < mdp_cl_nres; ++i) {
        const char *lo = (const char *)mdp_cl_res[i].host, *p = (const char *)host;
        if (p == lo && bytes <= mdp_cl_res[i].bytes) {
            *mem = mdp_cl_res[i].mem;
            return 1;
        }
        if (p < lo + mdp_cl_res[i].bytes && lo < p + bytes) {
            fprintf(stderr, "mdpoly: internal error: a nest's buffer overlaps a resident array in part\n");
            exit(1);
        }
    }
    return 0;
}

static void mdp_cl_kept_stale(const char *host, size_t bytes);

MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_exit(void)
{
    for (; mdp_cl_nres > 0; --mdp_cl_nres) {
        int i = mdp_cl_nres - 1;
        if (mdp_cl_res[i].download)
            mdp_cl_resident_copy(i, 0, mdp_cl_res[i].bytes, 1);
        mdp_cl_kept_stale((const char *)mdp_cl_res[i].host, mdp_cl_res[i].bytes);   /* the loop may have changed it */
        mdp_cl_check(clReleaseMemObject(mdp_cl_res[i].mem), "clReleaseMemObject");
    }
}

/* The resident array at 'host' (a statement of the loop uses it on the host). */
static int mdp_cl_resident_slot(const void *host)
{
    int i;
    for (i = 0; i < mdp_cl_nres; ++i)
        if (mdp_cl_res[i].host == host)
            return i;
    fprintf(stderr, "mdpoly: internal error: no resident array at %p\n", host);
    exit(1);
}

/* Copies a resident array back to the host, whole (before a statement of the loop uses it). */
MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_download(const void *host)
{
    int i = mdp_cl_resident_slot(host);
    mdp_cl_resident_copy(i, 0, mdp_cl_res[i].bytes, 1);
}

/* Copies a resident array to the device again, whole (after a statement of the loop wrote it). */
MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_upload(const void *host)
{
    int i = mdp_cl_resident_slot(host);
    mdp_cl_resident_copy(i, 0, mdp_cl_res[i].bytes, 0);
}

/* Bytes [from, to) of a resident array, back to the host or to the device (clamped to the array). */
MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_download_range(const void *host, long long from, long long to)
{
    if (to > from)
        mdp_cl_resident_copy(mdp_cl_resident_slot(host), from < 0 ? 0 : (size_t)from, (size_t)to, 1);
}

MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_upload_range(const void *host, long long from, long long to)
{
    if (to > from)
        mdp_cl_resident_copy(mdp_cl_resident_slot(host), from < 0 ? 0 : (size_t)from, (size_t)to, 0);
}

/* The footprint of a host statement on one array, as rows [row_lo, row_hi] (the first subscript;
   'pitch': the bytes of one row) and bytes [from, to) within a row (the other subscripts): the
   bounding box of its accesses (one mdp_cl_span_add per access, empty ones ignored). Copied as one
   range when it is contiguous (or its bytes leave the row), else as a rectangle; the whole array
   when mdp_cl_span_reset was told the subscripts do not name its elements. */
static long long mdp_cl_span_pitch, mdp_cl_span_row_lo, mdp_cl_span_row_hi, mdp_cl_span_from, mdp_cl_span_to;
static int mdp_cl_span_whole, mdp_cl_span_empty;

MDP_CL_MAYBE_UNUSED static void mdp_cl_span_reset(int exact, long long pitch)
{
    mdp_cl_span_whole = !exact;
    mdp_cl_span_empty = 1;
    mdp_cl_span_pitch = pitch;
}

MDP_CL_MAYBE_UNUSED static void mdp_cl_span_add(long long row_lo, long long row_hi, long long from, long long to)
{
    if (row_hi < row_lo || to <= from)
        return;
    if (mdp_cl_span_empty) {
        mdp_cl_span_empty = 0;
        mdp_cl_span_row_lo = row_lo;
        mdp_cl_span_row_hi = row_hi;
        mdp_cl_span_from = from;
        mdp_cl_span_to = to;
        return;
    }
    mdp_cl_span_row_lo = row_lo < mdp_cl_span_row_lo ? row_lo : mdp_cl_span_row_lo;
    mdp_cl_span_row_hi = row_hi > mdp_cl_span_row_hi ? row_hi : mdp_cl_span_row_hi;
    mdp_cl_span_from = from < mdp_cl_span_from ? from : mdp_cl_span_from;
    mdp_cl_span_to = to > mdp_cl_span_to ? to : mdp_cl_span_to;
}

static void mdp_cl_resident_span(const void *host, int to_host)
{
    int i;
    long long pitch = mdp_cl_span_pitch, row_lo = mdp_cl_span_row_lo, row_hi = mdp_cl_span_row_hi;
    long long from = mdp_cl_span_from, to = mdp_cl_span_to;
    if (mdp_cl_span_whole) {
        if (to_host)
            mdp_cl_resident_download(host);
        else
            mdp_cl_resident_upload(host);
        return;
    }
    if (mdp_cl_span_empty)
        return;
    i = mdp_cl_resident_slot(host);
    if (pitch <= 0 || row_lo == row_hi || from < 0 || to > pitch || (from == 0 && to == pitch)) {
        /* one range, from the lowest element to the highest (whatever the subscripts' ranges) */
        long long a = pitch > 0 ? row_lo * pitch + from : from, b = pitch > 0 ? row_hi * pitch + to : to;
        if (a < 0)
            a = 0;
        if (b > a)
            mdp_cl_resident_copy(i, (size_t)a, (size_t)b, to_host);
        return;
    }
    /* a rectangle: rows within the array, the same bytes of each */
    if (row_lo < 0)
        row_lo = 0;
    if ((row_hi + 1) * pitch > (long long)mdp_cl_res[i].bytes)
        row_hi = (long long)mdp_cl_res[i].bytes / pitch - 1;
    if (row_hi < row_lo)
        return;
    {
        size_t origin[3], region[3];
        cl_event ev;
        origin[0] = (size_t)from;
        origin[1] = (size_t)row_lo;
        origin[2] = 0;
        region[0] = (size_t)(to - from);
        region[1] = (size_t)(row_hi - row_lo + 1);
        region[2] = 1;
        if (to_host)
            mdp_cl_check(clEnqueueReadBufferRect(mdp_cl_queue, mdp_cl_res[i].mem, CL_TRUE, origin, origin, region,
                                                 (size_t)pitch, 0, (size_t)pitch, 0, (void *)mdp_cl_res[i].host, 0,
                                                 NULL, mdp_cl_profile ? &ev : NULL), "clEnqueueReadBufferRect");
        else
            mdp_cl_check(clEnqueueWriteBufferRect(mdp_cl_queue, mdp_cl_res[i].mem, CL_TRUE, origin, origin, region,
                                                  (size_t)pitch, 0, (size_t)pitch, 0, mdp_cl_res[i].host, 0, NULL,
                                                  mdp_cl_profile ? &ev : NULL), "clEnqueueWriteBufferRect");
        if (mdp_cl_profile)
            mdp_cl_res_profile(ev);
        if (mdp_cl_profile) {
            unsigned long long moved = (unsigned long long)(to - from) * (unsigned long long)(row_hi - row_lo + 1);
            if (to_host) {
                ++mdp_cl_res_downloads;
                mdp_cl_res_down_bytes += moved;
            } else {
                ++mdp_cl_res_uploads;
                mdp_cl_res_up_bytes += moved;
            }
            mdp_cl_count(mdp_cl_res[i].name, !to_host, (size_t)moved);
        }
    }
}

MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_download_span(const void *host)
{
    mdp_cl_resident_span(host, 1);
}

MDP_CL_MAYBE_UNUSED static void mdp_cl_resident_upload_span(const void *host)
{
    mdp_cl_resident_span(host, 0);
}

/* Residency across calls (the user's mdp_resident_keep): an array kept here has one device copy
   that every nest's call reading it uses, copied in at the first such call and again only after
   mdp_resident_invalidate. The contract: while an array is kept, the program does not change its
   host copy, or calls mdp_resident_invalidate after changing it. A nest that writes a kept array
   copies it as usual and invalidates the kept copy. */
#define MDP_CL_MAX_KEPT 256
static struct { const void *host; size_t bytes; cl_mem mem; int valid; } mdp_cl_kept[MDP_CL_MAX_KEPT];
static int mdp_cl_nkept;

static int mdp_cl_kept_slot(const void *host)
{
    int i;
    for (i = 0; i < mdp_cl_nkept; ++i)
        if (mdp_cl_kept[i].host == host)
            return i;
    return -1;
}

/* Every kept copy that overlaps the 'bytes' at 'host' is stale: the host copy changed there. */
static void mdp_cl_kept_stale(const char *host, size_t bytes)
{
    int i;
    for (i = 0; i < mdp_cl_nkept; ++i) {
        const char *lo = (const char *)mdp_cl_kept[i].host;
        if (host < lo + mdp_cl_kept[i].bytes && lo < host + bytes)
            mdp_cl_kept[i].valid = 0;
    }
}

MDP_CL_MAYBE_UNUSED static void mdp_cl_kept_release(void)
{
    for (; mdp_cl_nkept > 0; --mdp_cl_nkept)
        if (mdp_cl_kept[mdp_cl_nkept - 1].mem)
            clReleaseMemObject(mdp_cl_kept[mdp_cl_nkept - 1].mem);
}

/* Keeps the 'bytes' bytes at 'host' on the device between the nests' calls (see above). */
static void mdp_cl_kept_add(const void *host, size_t bytes)
{
    int i;
    mdp_cl_init();
    i = mdp_cl_kept_slot(host);
    if (i >= 0 && mdp_cl_kept[i].bytes >= bytes)
        return;
    if (i < 0) {
        if (mdp_cl_nkept == MDP_CL_MAX_KEPT)
            return;   /* too many: the array is copied at each call, as without keeping */
        if (mdp_cl_nkept == 0)
            atexit(mdp_cl_kept_release);
        i = mdp_cl_nkept++;
    } else if (mdp_cl_kept[i].mem) {
        clReleaseMemObject(mdp_cl_kept[i].mem);
    }
    mdp_cl_kept[i].host = host;
    mdp_cl_kept[i].bytes = bytes;
    mdp_cl_kept[i].mem = NULL;
    mdp_cl_kept[i].valid = 0;
}

/* For a nest's buffer of 'bytes' bytes at 'host' named 'name': the kept device copy (copied in
   first when not valid), 1 and '*mem' set; 0 when the array is not kept (or the nest 'written' it).
   'add': keep it from now on if it is not yet (#pragma mdh resident). */
MDP_CL_MAYBE_UNUSED static int mdp_cl_kept_find(const char *name, const void *host, size_t bytes, int written, int add, cl_mem *mem)
{
    cl_int err;
    int i = mdp_cl_nkept ? mdp_cl_kept_slot(host) : -1;
    if (written && mdp_cl_nkept) {   /* copied as usual; the kept copies of what it writes are stale */
        mdp_cl_kept_stale((const char *)host, bytes);
        return 0;
    }
    if (i < 0 && add) {   /* #pragma mdh resident: kept from its first use */
        mdp_cl_kept_add(host, bytes);
        i = mdp_cl_kept_slot(host);
    }
    if (i < 0 || written || bytes > mdp_cl_kept[i].bytes)
        return 0;
    if (!mdp_cl_kept[i].mem) {
        mdp_cl_kept[i].mem = clCreateBuffer(mdp_cl_context, CL_MEM_READ_WRITE, mdp_cl_kept[i].bytes, NULL, &err);
        mdp_cl_check(err, "clCreateBuffer");
    }
    if (!mdp_cl_kept[i].valid) {
        mdp_cl_check(clEnqueueWriteBuffer(mdp_cl_queue, mdp_cl_kept[i].mem, CL_TRUE, 0, mdp_cl_kept[i].bytes, host, 0,
                                          NULL, NULL), "clEnqueueWriteBuffer");
        mdp_cl_count(name, 1, mdp_cl_kept[i].bytes);
        mdp_cl_kept[i].valid = 1;
    }
    *mem = mdp_cl_kept[i].mem;
    return 1;
}

#ifndef MDP_RESIDENT_API
#define MDP_RESIDENT_API 1
/* The program's calls (README: residency across calls): keep, invalidate, release. */
MDP_CL_MAYBE_UNUSED static void mdp_resident_keep(const void *host, size_t bytes)
{
    mdp_cl_kept_add(host, bytes);
}

/* The host copy at 'host' changed: the next call that reads it copies it in again. */
MDP_CL_MAYBE_UNUSED static void mdp_resident_invalidate(const void *host)
{
    int i = mdp_cl_kept_slot(host);
    if (i >= 0)
        mdp_cl_kept[i].valid = 0;
}

/* No longer kept: the device copy is released, the calls copy the array again. */
MDP_CL_MAYBE_UNUSED static void mdp_resident_release(const void *host)
{
    int i = mdp_cl_kept_slot(host);
    if (i < 0)
        return;
    if (mdp_cl_kept[i].mem)
        clReleaseMemObject(mdp_cl_kept[i].mem);
    mdp_cl_kept[i] = mdp_cl_kept[--mdp_cl_nkept];
}
#endif
#endif /* MDP_OPENCL_RUNTIME */
