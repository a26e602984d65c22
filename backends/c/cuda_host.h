/* cuda_host.h: the C host runtime of mdpoly's CUDA output (driver API + NVRTC), once per file.
 *
 * Device MDPOLY_CUDA_DEVICE (default 0) and its primary context, NVRTC compilation for the
 * device's architecture with a disk cache of modules, error checks that name the failed call,
 * each nest's device buffers kept across calls (mdp_cu_buffer), and MDPOLY_PROFILE: events around
 * copies and launches, each nest's sums printed at exit, the last call's profile in mdp_cu_last
 * (read by the tuner). The push_macro/pop_macro pairs keep a user's size macros (#define N 500)
 * out of cuda.h and nvrtc.h, which splicing places after them; the list is
 * mdpoly.backends.cuda_host.HEADER_IDENTIFIERS. Spliced into out.c by mdpoly.backends.cuda_host;
 * compiles on its own (tests/backends/test_c_files.py).
 */
#ifndef MDP_CUDA_RUNTIME
#define MDP_CUDA_RUNTIME
#pragma push_macro("C")
#undef C
#pragma push_macro("N")
#undef N
#pragma push_macro("T")
#undef T
#pragma push_macro("LTOIR")
#undef LTOIR
#pragma push_macro("UNDNAME_NAME_ONLY")
#undef UNDNAME_NAME_ONLY
#pragma push_macro("UNDNAME_NO_ARGUMENTS")
#undef UNDNAME_NO_ARGUMENTS
#pragma push_macro("RESOURCE_ABI_EXTERNAL_BYTES")
#undef RESOURCE_ABI_EXTERNAL_BYTES
#pragma push_macro("RESOURCE_ABI_VERSION")
#undef RESOURCE_ABI_VERSION
#include <cuda.h>
#include <nvrtc.h>
#pragma pop_macro("C")
#pragma pop_macro("N")
#pragma pop_macro("T")
#pragma pop_macro("LTOIR")
#pragma pop_macro("UNDNAME_NAME_ONLY")
#pragma pop_macro("UNDNAME_NO_ARGUMENTS")
#pragma pop_macro("RESOURCE_ABI_EXTERNAL_BYTES")
#pragma pop_macro("RESOURCE_ABI_VERSION")
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#define MDP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MDP_CDIV(a, b) (((a) + (b) - 1) / (b))
#ifndef MDP_FITS_FN
#if defined(__GNUC__) || defined(__clang__)
#define MDP_FITS_FN __attribute__((unused)) static int   /* a nest's launch check, called at its call site */
#else
#define MDP_FITS_FN static int
#endif
#endif
#define MDP_CU_MAX_MODULES 256
static CUdevice mdp_cu_device;
static CUcontext mdp_cu_context;
static int mdp_cu_ready;
static CUmodule mdp_cu_modules[MDP_CU_MAX_MODULES];
static int mdp_cu_nmodules;
static int mdp_cu_profile;   /* MDPOLY_PROFILE set (read once, in mdp_cu_init) */
/* events 0-1: copies in; 5-2: the launches (5 recorded behind the gate, see mdp_cu_gate_hold); 3-4: copies out */
static CUevent mdp_cu_ev[6];
static struct { const char *nest; long calls; double kernel_ms, transfer_ms, host_ms; } mdp_cu_prof[MDP_CU_MAX_MODULES];
/* MDPOLY_PROFILE: the stream waits on this host-mapped word (cuStreamWaitValue32) until the call's
   launches and their events are all queued, so that the kernel events time the kernels alone, not
   the host's launch calls between them (0 where the device cannot wait on a value: then the
   events are recorded as they are queued and include the launch latency) */
static volatile unsigned int *mdp_cu_gate;
static CUdeviceptr mdp_cu_gate_dev;
static unsigned int mdp_cu_gate_seq;
static int mdp_cu_gated;
static int mdp_cu_nprof;
/* MDPOLY_PROFILE: the last call's kernel and transfer device time, and the device time from
   before its copies in to after its copies out (the whole call); a tuner reads it back. */
static struct { double kernel_ms, transfer_ms, call_ms; } mdp_cu_last;
static CUdeviceptr *mdp_cu_buffers[4 * MDP_CU_MAX_MODULES];   /* each nest's kept device buffers */
static int mdp_cu_nbuffers;

static void mdp_cu_check(CUresult err, const char *call)
{
    if (err != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        cuGetErrorName(err, &name);
        cuGetErrorString(err, &text);
        fprintf(stderr, "mdpoly: CUDA error: %s failed with error %d (%s: %s)\n", call, (int)err,
                name ? name : "unknown error", text ? text : "no description");
        exit(1);
    }
}

static void mdp_nvrtc_check(nvrtcResult err, const char *call)
{
    if (err != NVRTC_SUCCESS) {
        fprintf(stderr, "mdpoly: NVRTC error: %s failed with error %d (%s)\n", call, (int)err,
                nvrtcGetErrorString(err));
        exit(1);
    }
}

static void mdp_cu_release(void)
{
    int i;
    if (mdp_cu_gated) {   /* an exit between a call's gate and its opening (a failed launch): let the stream go */
        *mdp_cu_gate = mdp_cu_gate_seq;
        __sync_synchronize();
    }
    for (i = 0; i < mdp_cu_nmodules; ++i)
        cuModuleUnload(mdp_cu_modules[i]);
    mdp_cu_nmodules = 0;
    for (i = 0; i < mdp_cu_nbuffers; ++i)
        if (*mdp_cu_buffers[i])
            cuMemFree(*mdp_cu_buffers[i]);
    mdp_cu_nbuffers = 0;
    for (i = 0; i < 6; ++i)
        if (mdp_cu_ev[i])
            cuEventDestroy(mdp_cu_ev[i]);
    if (mdp_cu_gate)
        cuMemFreeHost((void *)mdp_cu_gate);
    mdp_cu_gate = NULL;
    mdp_cu_gated = 0;
    if (mdp_cu_ready)
        cuDevicePrimaryCtxRelease(mdp_cu_device);
    mdp_cu_ready = 0;
}

/* MDPOLY_PROFILE: each nest's device time between its events, summed over its calls, printed at exit. */
static float mdp_cu_elapsed(int from, int to)
{
    float ms = 0.0f;
    mdp_cu_check(cuEventElapsedTime(&ms, mdp_cu_ev[from], mdp_cu_ev[to]), "cuEventElapsedTime");
    return ms;
}

static void mdp_cu_profile_record(int which)
{
    mdp_cu_check(cuEventRecord(mdp_cu_ev[which], NULL), "cuEventRecord");
}

/* MDPOLY_PROFILE: the host's monotonic clock in milliseconds (POSIX; C11 without it; else processor time). */
static double mdp_cu_now_ms(void)
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

/* MDPOLY_PROFILE, before a call's launches: the stream waits until mdp_cu_gate_open (after the
   launches and the event behind them are queued), then records event 5 and runs the kernels back to
   back; without the gate, event 5 is recorded now. */
static void mdp_cu_gate_hold(void)
{
    if (mdp_cu_gated && cuStreamWaitValue32(NULL, mdp_cu_gate_dev, ++mdp_cu_gate_seq, CU_STREAM_WAIT_VALUE_GEQ)
                            != CUDA_SUCCESS)
        mdp_cu_gated = 0;   /* not supported here: events as queued */
    mdp_cu_profile_record(5);
}

static void mdp_cu_gate_open(void)
{
    mdp_cu_profile_record(2);
    if (mdp_cu_gated) {
        *mdp_cu_gate = mdp_cu_gate_seq;
        __sync_synchronize();   /* the store leaves the CPU now, for the device's next poll */
    }
}

/* Adds one call of 'nest' once its last event (after the copies out) has completed; 'copied': whether
   the call copied anything (else its transfer time is 0, not the empty intervals between the events);
   'host_start': the host clock (mdp_cu_now_ms) when the call's device work began to be set up: the
   call's host overhead is its host time since then less its kernel and transfer time. */
static void mdp_cu_profile_add(const char *nest, int copied, double host_start)
{
    int slot;
    double host;
    mdp_cu_check(cuEventSynchronize(mdp_cu_ev[4]), "cuEventSynchronize");
    for (slot = 0; slot < mdp_cu_nprof && strcmp(mdp_cu_prof[slot].nest, nest) != 0; ++slot)
        ;
    if (slot == MDP_CU_MAX_MODULES)
        mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "mdp_cu_profile_add (too many nests)");
    if (slot == mdp_cu_nprof) {
        mdp_cu_prof[slot].nest = nest;
        ++mdp_cu_nprof;
    }
    mdp_cu_prof[slot].calls++;
    mdp_cu_last.kernel_ms = mdp_cu_elapsed(5, 2);
    mdp_cu_last.transfer_ms = copied ? mdp_cu_elapsed(0, 1) + mdp_cu_elapsed(3, 4) : 0.0;
    mdp_cu_last.call_ms = mdp_cu_elapsed(0, 4);
    host = mdp_cu_now_ms() - host_start - mdp_cu_last.kernel_ms - mdp_cu_last.transfer_ms;
    mdp_cu_prof[slot].kernel_ms += mdp_cu_last.kernel_ms;
    mdp_cu_prof[slot].transfer_ms += mdp_cu_last.transfer_ms;
    mdp_cu_prof[slot].host_ms += host > 0.0 ? host : 0.0;
}

static void mdp_cu_profile_report(void)
{
    int i;
    for (i = 0; i < mdp_cu_nprof; ++i)
        fprintf(stderr, "mdpoly-profile: %s calls=%ld kernel_ms=%.6f transfer_ms=%.6f host_ms=%.6f\n",
                mdp_cu_prof[i].nest, mdp_cu_prof[i].calls, mdp_cu_prof[i].kernel_ms, mdp_cu_prof[i].transfer_ms,
                mdp_cu_prof[i].host_ms);
    fflush(stderr);
}

static void mdp_cu_init(void)
{
    const char *want = getenv("MDPOLY_CUDA_DEVICE");
    int index = 0, count = 0;
    CUresult err;
    if (mdp_cu_ready)
        return;
    if (want && *want) {
        const char *c = want;
        while (isdigit((unsigned char)*c))
            ++c;
        if (*c != '\0') {
            fprintf(stderr, "mdpoly: CUDA error: MDPOLY_CUDA_DEVICE=\"%s\" is not a device index\n", want);
            exit(1);
        }
        index = atoi(want);
    }
    err = cuInit(0);
    if (err != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        cuGetErrorName(err, &name);
        cuGetErrorString(err, &text);
        fprintf(stderr, "mdpoly: CUDA error: cuInit failed with error %d (%s: %s); is an NVIDIA driver "
                "installed and a GPU visible?\n", (int)err, name ? name : "unknown error",
                text ? text : "no description");
        exit(1);
    }
    mdp_cu_check(cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (index >= count) {
        fprintf(stderr, "mdpoly: CUDA error: MDPOLY_CUDA_DEVICE=%d but %d CUDA device(s) found\n", index, count);
        exit(1);
    }
    mdp_cu_check(cuDeviceGet(&mdp_cu_device, index), "cuDeviceGet");
    mdp_cu_check(cuDevicePrimaryCtxRetain(&mdp_cu_context, mdp_cu_device), "cuDevicePrimaryCtxRetain");
    mdp_cu_ready = 1;
    atexit(mdp_cu_release);
    mdp_cu_check(cuCtxSetCurrent(mdp_cu_context), "cuCtxSetCurrent");
    want = getenv("MDPOLY_PROFILE");
    mdp_cu_profile = want && *want && strcmp(want, "0") != 0;
    if (mdp_cu_profile) {
        int i;
        for (i = 0; i < 6; ++i)
            mdp_cu_check(cuEventCreate(&mdp_cu_ev[i], CU_EVENT_DEFAULT), "cuEventCreate");
        if (cuMemHostAlloc((void **)&mdp_cu_gate, sizeof *mdp_cu_gate, CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS) {
            *mdp_cu_gate = 0;
            mdp_cu_gated = cuMemHostGetDevicePointer(&mdp_cu_gate_dev, (void *)mdp_cu_gate, 0) == CUDA_SUCCESS;
        }
        atexit(mdp_cu_profile_report);
    }
}

/* FNV-1a, 64 bits: the cache key of a kernel source, its options and the NVRTC version. */
static unsigned long long mdp_cu_hash(unsigned long long h, const char *s)
{
    if (!h)
        h = 1469598103934665603ULL;
    for (; *s; ++s) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static int mdp_cu_cache_dir(char *dir, size_t size)
{
    const char *base = getenv("MDPOLY_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *off = getenv("MDPOLY_CUDA_NO_CACHE");
    int n;
    char *p;
    if (off && *off && strcmp(off, "0") != 0)
        return 0;
    if (base && *base)
        n = snprintf(dir, size, "%s/cuda", base);
    else if (xdg && *xdg)
        n = snprintf(dir, size, "%s/mdpoly/cuda", xdg);
    else if (home && *home)
        n = snprintf(dir, size, "%s/.cache/mdpoly/cuda", home);
    else
        return 0;
    if (n <= 0 || (size_t)n >= size)
        return 0;
    for (p = dir + 1; *p; ++p) {   /* mkdir -p */
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                return 0;
            *p = '/';
        }
    }
    return mkdir(dir, 0777) == 0 || errno == EEXIST;
}

static char *mdp_cu_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    data = (char *)malloc((size_t)n + 1);
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    if (data) {
        data[n] = '\0';
        *size = (size_t)n;
    }
    return data;
}

static void mdp_cu_write_file(const char *path, const char *data, size_t size)
{
    char tmp[4200];
    FILE *f;
    int ok;
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
        return;
    f = fopen(tmp, "wb");
    if (!f)
        return;
    ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0)
        remove(tmp);
}

/* The device's architecture for NVRTC: sm_XY when NVRTC supports it (CUBIN), else the newest
   compute_XY it supports below the device (PTX, JIT-compiled by the driver). */
static int mdp_cu_arch(int *cubin)
{
    int major = 0, minor = 0, n = 0, i, best = 0, dev;
    int archs[128];
    mdp_cu_check(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, mdp_cu_device),
                 "cuDeviceGetAttribute");
    mdp_cu_check(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, mdp_cu_device),
                 "cuDeviceGetAttribute");
    dev = major * 10 + minor;
    mdp_nvrtc_check(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
    if (n > 128)
        n = 128;
    mdp_nvrtc_check(nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs");
    for (i = 0; i < n; ++i) {
        if (archs[i] == dev) {
            *cubin = 1;
            return dev;
        }
        if (archs[i] < dev && archs[i] > best)
            best = archs[i];
    }
    if (!best) {
        fprintf(stderr, "mdpoly: NVRTC error: this NVRTC cannot compile for compute capability %d.%d\n", major, minor);
        exit(1);
    }
    *cubin = 0;
    return best;
}

static char *mdp_cu_compile(const char *source, const char *nest, const char *arch_opt, int cubin, int fmad,
                            size_t *size)
{
    nvrtcProgram prog;
    nvrtcResult err;
    const char *opts[2];
    char *image;
    opts[0] = arch_opt;
    opts[1] = fmad ? "--fmad=true" : "--fmad=false";
    mdp_nvrtc_check(nvrtcCreateProgram(&prog, source, nest, 0, NULL, NULL), "nvrtcCreateProgram");
    err = nvrtcCompileProgram(prog, 2, opts);
    if (err != NVRTC_SUCCESS) {
        size_t n = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && (log = (char *)malloc(n + 1)) != NULL) {
            log[0] = '\0';
            nvrtcGetProgramLog(prog, log);
            log[n] = '\0';
        }
        fprintf(stderr, "mdpoly: NVRTC error: nvrtcCompileProgram failed with error %d (%s) for the kernels of "
                "'%s' (%s); log:\n%s\n", (int)err, nvrtcGetErrorString(err), nest, arch_opt, log ? log : "(none)");
        free(log);
        exit(1);
    }
    if (cubin) {
        mdp_nvrtc_check(nvrtcGetCUBINSize(prog, size), "nvrtcGetCUBINSize");
        image = (char *)malloc(*size + 1);
        if (!image)
            mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "malloc");
        mdp_nvrtc_check(nvrtcGetCUBIN(prog, image), "nvrtcGetCUBIN");
    } else {
        mdp_nvrtc_check(nvrtcGetPTXSize(prog, size), "nvrtcGetPTXSize");
        image = (char *)malloc(*size + 1);
        if (!image)
            mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "malloc");
        mdp_nvrtc_check(nvrtcGetPTX(prog, image), "nvrtcGetPTX");
    }
    image[*size] = '\0';
    mdp_nvrtc_check(nvrtcDestroyProgram(&prog), "nvrtcDestroyProgram");
    return image;
}

/* The module of one nest's kernels: from the disk cache, else compiled by NVRTC (and cached). */
static CUmodule mdp_cu_module(const char *source, const char *nest, int fmad)
{
    static const char *last_source;   /* a nest's <nest>_fits check loads the module its function uses */
    static int last_fmad;
    static CUmodule last_mod;
    char arch_opt[64], dir[4000], path[4200], key[64];
    int cubin = 0, arch, major = 0, minor = 0, have_dir;
    unsigned long long h;
    size_t size = 0;
    char *image;
    CUmodule mod;
    if (last_source == source && last_fmad == fmad && mdp_cu_ready)
        return last_mod;
    mdp_cu_init();
    arch = mdp_cu_arch(&cubin);
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", arch);
    mdp_nvrtc_check(nvrtcVersion(&major, &minor), "nvrtcVersion");
    snprintf(key, sizeof key, "nvrtc %d.%d --fmad=%s ", major, minor, fmad ? "true" : "false");
    h = mdp_cu_hash(mdp_cu_hash(mdp_cu_hash(0, key), arch_opt), source);
    have_dir = mdp_cu_cache_dir(dir, sizeof dir);
    image = NULL;
    if (have_dir) {
        snprintf(path, sizeof path, "%s/%016llx-%s_%d.%s", dir, h, cubin ? "sm" : "compute", arch,
                 cubin ? "cubin" : "ptx");
        image = mdp_cu_read_file(path, &size);
    }
    if (!image) {
        image = mdp_cu_compile(source, nest, arch_opt, cubin, fmad, &size);
        if (have_dir)
            mdp_cu_write_file(path, image, cubin ? size : strlen(image));
    }
    mdp_cu_check(cuModuleLoadData(&mod, image), "cuModuleLoadData");
    free(image);
    if (mdp_cu_nmodules == MDP_CU_MAX_MODULES)
        mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "mdp_cu_module (too many modules)");
    mdp_cu_modules[mdp_cu_nmodules++] = mod;
    last_source = source;
    last_fmad = fmad;
    last_mod = mod;
    return mod;
}

static CUfunction mdp_cu_function(CUmodule mod, const char *kernel)
{
    CUfunction f;
    mdp_cu_check(cuModuleGetFunction(&f, mod, kernel), "cuModuleGetFunction");
    return f;
}

/* Whether kernel 'f' can run blocks of 'block' threads, from what the compiled kernel allows
   (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its registers decide it; its static shared memory
   against the device's per-block limit). When it cannot: with 'fatal', says why and exits with
   status 3 before the launch (which would fail with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; a tuner
   counts the configuration as one the device cannot launch, not as a crash); without, says why the
   original code runs instead (the call site's <nest>_fits check) and returns 0. 1 when it can. */
static int mdp_cu_check_launch(CUfunction f, const char *kernel, const unsigned int block[3], int fatal)
{
    int limit = 0, regs = 0, shared = 0, avail = 0;
    unsigned int threads = block[0] * block[1] * block[2];
    mdp_cu_check(cuFuncGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), "cuFuncGetAttribute");
    mdp_cu_check(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f), "cuFuncGetAttribute");
    mdp_cu_check(cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f), "cuFuncGetAttribute");
    mdp_cu_check(cuDeviceGetAttribute(&avail, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, mdp_cu_device),
                 "cuDeviceGetAttribute");
    if (threads > (unsigned int)limit || shared > avail) {
        fprintf(stderr, "%s kernel '%s': a block of %u threads with %d bytes of shared memory; "
                "with %d registers per thread the compiled kernel allows at most %d threads, the device %d bytes\n",
                fatal ? "mdpoly: launch refused:" : "mdpoly: note: the original code runs instead of",
                kernel, threads, shared, regs, limit, avail);
        if (fatal)
            exit(3);
        return 0;
    }
    return 1;
}

static void mdp_cu_launchable(CUfunction f, const char *kernel, const unsigned int block[3])
{
    (void)mdp_cu_check_launch(f, kernel, block, 1);
}

/* A nest's device buffer, kept across its calls: (re)allocated only when 'bytes' exceeds its
   capacity '*cap'; freed at exit. */
static void mdp_cu_buffer(CUdeviceptr *mem, size_t *cap, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (*mem && bytes <= *cap)
        return;
    if (*mem) {
        mdp_cu_check(cuMemFree(*mem), "cuMemFree");
    } else {
        if (mdp_cu_nbuffers == 4 * MDP_CU_MAX_MODULES)
            mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "mdp_cu_buffer (too many buffers)");
        mdp_cu_buffers[mdp_cu_nbuffers++] = mem;
    }
    *mem = 0;
    *cap = 0;
    mdp_cu_check(cuMemAlloc(mem, bytes), "cuMemAlloc");
    *cap = bytes;
}

/* Device residency over a host loop (mdpoly.residency): each array registered here by
   mdp_cu_resident_enter has one device buffer for the whole loop; the nests' functions find it by
   the host address they are given (mdp_cu_resident_find) and then neither copy it in nor out;
   mdp_cu_resident_exit copies the written ones back once and frees them. */
#define MDP_CU_MAX_RESIDENT 64
#if defined(__GNUC__) || defined(__clang__)
#define MDP_CU_MAYBE_UNUSED __attribute__((unused))   /* called only where a region is generated */
#else
#define MDP_CU_MAYBE_UNUSED
#endif
static struct { const void *host; size_t bytes; CUdeviceptr mem; int download; } mdp_cu_res[MDP_CU_MAX_RESIDENT];
static int mdp_cu_nres;
static long mdp_cu_res_uploads, mdp_cu_res_downloads;   /* MDPOLY_PROFILE: the regions' copies */

static void mdp_cu_resident_report(void)
{
    fprintf(stderr, "mdpoly-profile: resident uploads=%ld downloads=%ld\n", mdp_cu_res_uploads, mdp_cu_res_downloads);
    fflush(stderr);
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_enter(const void *host, size_t bytes, int upload, int download)
{
    static int reported;
    mdp_cu_init();
    mdp_cu_check(cuCtxSetCurrent(mdp_cu_context), "cuCtxSetCurrent");
    if (mdp_cu_profile && !reported) {
        reported = 1;
        atexit(mdp_cu_resident_report);
    }
    if (mdp_cu_nres == MDP_CU_MAX_RESIDENT)
        mdp_cu_check(CUDA_ERROR_OUT_OF_MEMORY, "mdp_cu_resident_enter (too many arrays)");
    mdp_cu_res[mdp_cu_nres].host = host;
    mdp_cu_res[mdp_cu_nres].bytes = bytes;
    mdp_cu_res[mdp_cu_nres].download = download;
    mdp_cu_check(cuMemAlloc(&mdp_cu_res[mdp_cu_nres].mem, bytes ? bytes : 1), "cuMemAlloc");
    if (upload && bytes) {
        mdp_cu_check(cuMemcpyHtoD(mdp_cu_res[mdp_cu_nres].mem, host, bytes), "cuMemcpyHtoD");
        ++mdp_cu_res_uploads;
    }
    ++mdp_cu_nres;
}

/* The resident buffer of the 'bytes' bytes at 'host' (1 and '*mem' set), or 0 when there is none. */
MDP_CU_MAYBE_UNUSED static int mdp_cu_resident_find(const void *host, size_t bytes, CUdeviceptr *mem)
{
    int i;
    for (i = 0; i < mdp_cu_nres; ++i) {
        const char *lo = (const char *)mdp_cu_res[i].host, *p = (const char *)host;
        if (p == lo && bytes <= mdp_cu_res[i].bytes) {
            *mem = mdp_cu_res[i].mem;
            return 1;
        }
        if (p < lo + mdp_cu_res[i].bytes && lo < p + bytes) {
            fprintf(stderr, "mdpoly: internal error: a nest's buffer overlaps a resident array in part\n");
            exit(1);
        }
    }
    return 0;
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_exit(void)
{
    if (mdp_cu_nres > 0)
        mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");
    for (; mdp_cu_nres > 0; --mdp_cu_nres) {
        int i = mdp_cu_nres - 1;
        if (mdp_cu_res[i].download && mdp_cu_res[i].bytes) {
            mdp_cu_check(cuMemcpyDtoH((void *)mdp_cu_res[i].host, mdp_cu_res[i].mem, mdp_cu_res[i].bytes),
                         "cuMemcpyDtoH");
            ++mdp_cu_res_downloads;
        }
        mdp_cu_check(cuMemFree(mdp_cu_res[i].mem), "cuMemFree");
    }
}

/* The resident array at 'host', whole (a statement of the loop uses it on the host). */
static int mdp_cu_resident_slot(const void *host)
{
    int i;
    for (i = 0; i < mdp_cu_nres; ++i)
        if (mdp_cu_res[i].host == host)
            return i;
    fprintf(stderr, "mdpoly: internal error: no resident array at %p\n", host);
    exit(1);
}

/* Copies a resident array back to the host (before a statement of the loop reads or writes it). */
MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_download(const void *host)
{
    int i = mdp_cu_resident_slot(host);
    if (!mdp_cu_res[i].bytes)
        return;
    mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");
    mdp_cu_check(cuMemcpyDtoH((void *)mdp_cu_res[i].host, mdp_cu_res[i].mem, mdp_cu_res[i].bytes), "cuMemcpyDtoH");
    ++mdp_cu_res_downloads;
}

/* Copies a resident array to the device again (after a statement of the loop wrote it). */
MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_upload(const void *host)
{
    int i = mdp_cu_resident_slot(host);
    if (!mdp_cu_res[i].bytes)
        return;
    mdp_cu_check(cuMemcpyHtoD(mdp_cu_res[i].mem, host, mdp_cu_res[i].bytes), "cuMemcpyHtoD");
    ++mdp_cu_res_uploads;
}
#endif /* MDP_CUDA_RUNTIME */
