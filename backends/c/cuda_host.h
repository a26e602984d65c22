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
static int mdp_cu_profile_calls;   /* MDPOLY_PROFILE=calls: also one stderr line per call (mdp_cu_profile_add) */
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
/* MDPOLY_PROFILE: what the gated kernel events add to the kernels they bracket (launch processing, the
   events themselves, the gaps between dependent launches): measured once at start-up around 1 and 2
   empty kernels (mdp_cu_calibrate; their own duration, MDP_CU_EMPTY_MS, left in) and taken off each
   call's kernel interval, so that the profile agrees with the kernels' device time as Nsight Compute
   and CUPTI report it. mdp_cu_floor_ms[n]: for n launches (n > 2 extrapolated); 0 where not gated. */
#ifndef MDP_CU_EMPTY_MS
#define MDP_CU_EMPTY_MS 0.0015
#endif
#define MDP_CU_CALIBRATIONS 31
static double mdp_cu_floor_ms[3];
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
    if (mdp_cu_ready || mdp_gpu_rent_ms >= 1e3 * setup_s || host_s >= setup_s)
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
MDP_RENT_FN double mdp_gpu_rent_now(void) { return mdp_cu_now_ms(); }
MDP_RENT_FN void mdp_gpu_rent_pay(double since_ms) { mdp_gpu_rent_ms += mdp_cu_now_ms() - since_ms; }
#endif /* MDP_GPU_RENT_H */

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

static int mdp_cu_cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* MDPOLY_PROFILE, at start-up: the median gated interval around n = 1 and 2 empty kernels (a PTX module
   of its own), less their own duration: mdp_cu_floor_ms[n]. Nothing where the gate is unsupported. */
static void mdp_cu_calibrate(void)
{
    static const char ptx[] = ".version 6.0\n.target sm_50\n.address_size 64\n"
                              ".visible .entry mdp_cu_empty()\n{\n\tret;\n}\n";
    CUmodule mod;
    CUfunction empty;
    float ms[MDP_CU_CALIBRATIONS];
    int n, r, k;
    if (!mdp_cu_gated || cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS)
        return;
    if (cuModuleGetFunction(&empty, mod, "mdp_cu_empty") == CUDA_SUCCESS) {
        for (n = 1; n <= 2 && mdp_cu_gated; ++n) {
            for (r = 0; r < MDP_CU_CALIBRATIONS && mdp_cu_gated; ++r) {
                mdp_cu_gate_hold();
                for (k = 0; k < n; ++k)
                    mdp_cu_check(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), "cuLaunchKernel");
                mdp_cu_gate_open();
                mdp_cu_check(cuEventSynchronize(mdp_cu_ev[2]), "cuEventSynchronize");
                ms[r] = mdp_cu_elapsed(5, 2);
            }
            if (!mdp_cu_gated)
                break;
            qsort(ms, MDP_CU_CALIBRATIONS, sizeof ms[0], mdp_cu_cmp_float);
            mdp_cu_floor_ms[n] = ms[MDP_CU_CALIBRATIONS / 2] - n * MDP_CU_EMPTY_MS;
            if (mdp_cu_floor_ms[n] < 0.0)
                mdp_cu_floor_ms[n] = 0.0;
        }
    }
    cuModuleUnload(mod);
    if (!mdp_cu_gated)
        mdp_cu_floor_ms[1] = mdp_cu_floor_ms[2] = 0.0;
}

/* What the gated events add to 'launches' kernels (mdp_cu_calibrate); 0 when not gated. */
static double mdp_cu_floor(int launches)
{
    if (!mdp_cu_gated || launches <= 0)
        return 0.0;
    if (launches <= 2)
        return mdp_cu_floor_ms[launches];
    return mdp_cu_floor_ms[1] + (launches - 1) * (mdp_cu_floor_ms[2] - mdp_cu_floor_ms[1]);
}

/* Adds one call of 'nest' once its last event (after the copies out) has completed; 'copied': whether
   the call copied anything (else its transfer time is 0, not the empty intervals between the events);
   'host_start': the host clock (mdp_cu_now_ms) when the call's device work began to be set up: the
   call's host overhead is its host time since then less its kernel and transfer time. */
static void mdp_cu_profile_add(const char *nest, int copied, double host_start, int launches)
{
    int slot;
    double host, raw;
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
    raw = mdp_cu_elapsed(5, 2);
    mdp_cu_last.kernel_ms = raw - mdp_cu_floor(launches);
    if (mdp_cu_last.kernel_ms < 0.0)
        mdp_cu_last.kernel_ms = 0.0;
    mdp_cu_last.transfer_ms = copied ? mdp_cu_elapsed(0, 1) + mdp_cu_elapsed(3, 4) : 0.0;
    mdp_cu_last.call_ms = mdp_cu_elapsed(0, 4);
    host = mdp_cu_now_ms() - host_start - mdp_cu_last.kernel_ms - mdp_cu_last.transfer_ms;
    mdp_cu_prof[slot].kernel_ms += mdp_cu_last.kernel_ms;
    mdp_cu_prof[slot].transfer_ms += mdp_cu_last.transfer_ms;
    mdp_cu_prof[slot].host_ms += host > 0.0 ? host : 0.0;
    if (mdp_cu_profile_calls)
        fprintf(stderr, "mdpoly-profile-call: %s call=%ld kernel_ms=%.6f transfer_ms=%.6f gated=%d raw_ms=%.6f "
                "launches=%d\n", nest, mdp_cu_prof[slot].calls, mdp_cu_last.kernel_ms, mdp_cu_last.transfer_ms,
                mdp_cu_gated, raw, launches);
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

/* MDPOLY_PINNED=1 (experimental, off by default): the host side of a copy of at least 1 MiB is
   page-locked in place (cuMemHostRegister) the first time it is seen, so that this and later
   copies of it run at the bus's full speed without a staging copy by the driver; it stays locked
   until exit. A host array freed while locked stays locked (its pages are not returned), so this
   suits programs whose large arrays live as long as the program. A failed registration is
   remembered and the copies stay as they are. */
#define MDP_CU_MAX_PINNED 256
static struct { const char *host; size_t bytes; int ok; } mdp_cu_pinned[MDP_CU_MAX_PINNED];
static int mdp_cu_npinned, mdp_cu_pin_mode = -1;

static void mdp_cu_unpin_all(void)
{
    for (; mdp_cu_npinned > 0; --mdp_cu_npinned)
        if (mdp_cu_pinned[mdp_cu_npinned - 1].ok)
            cuMemHostUnregister((void *)mdp_cu_pinned[mdp_cu_npinned - 1].host);
}

static void mdp_cu_pin(const void *host, size_t bytes)
{
    const char *p = (const char *)host;
    int i;
    if (mdp_cu_pin_mode < 0) {
        const char *want = getenv("MDPOLY_PINNED");
        mdp_cu_pin_mode = want && *want && strcmp(want, "0") != 0;
    }
    if (!mdp_cu_pin_mode || bytes < ((size_t)1 << 20))
        return;
    for (i = 0; i < mdp_cu_npinned; ++i)
        if (p < mdp_cu_pinned[i].host + mdp_cu_pinned[i].bytes && mdp_cu_pinned[i].host < p + bytes)
            return;   /* locked already (or overlapping what is: left as it is) */
    if (mdp_cu_npinned == MDP_CU_MAX_PINNED)
        return;
    if (mdp_cu_npinned == 0)
        atexit(mdp_cu_unpin_all);
    mdp_cu_pinned[mdp_cu_npinned].host = p;
    mdp_cu_pinned[mdp_cu_npinned].bytes = bytes;
    mdp_cu_pinned[mdp_cu_npinned].ok = cuMemHostRegister((void *)p, bytes, CU_MEMHOSTREGISTER_PORTABLE) == CUDA_SUCCESS;
    ++mdp_cu_npinned;
}

/* MDPOLY_PROFILE: every copy of each array (by its name in the source; a nest's own copies, a data
   region's and the kept arrays' together), counted and summed in bytes per direction, printed at exit:
       mdpoly-profile: array <name> uploads=<n> upload_bytes=<b> downloads=<n> download_bytes=<b> */
#define MDP_CU_MAX_ARRAYS 256
static struct { const char *name; long up, down; unsigned long long up_bytes, down_bytes; } mdp_cu_moved[MDP_CU_MAX_ARRAYS];
static int mdp_cu_nmoved;

static void mdp_cu_moved_report(void)
{
    int i;
    for (i = 0; i < mdp_cu_nmoved; ++i)
        fprintf(stderr, "mdpoly-profile: array %s uploads=%ld upload_bytes=%llu downloads=%ld download_bytes=%llu\n",
                mdp_cu_moved[i].name, mdp_cu_moved[i].up, mdp_cu_moved[i].up_bytes, mdp_cu_moved[i].down,
                mdp_cu_moved[i].down_bytes);
    fflush(stderr);
}

/* Counts one copy of 'bytes' bytes of array 'name' to the device ('up') or back (when profiling). */
static void mdp_cu_count(const char *name, int up, size_t bytes)
{
    int i;
    if (!mdp_cu_profile)
        return;
    for (i = 0; i < mdp_cu_nmoved && strcmp(mdp_cu_moved[i].name, name) != 0; ++i)
        ;
    if (i == MDP_CU_MAX_ARRAYS)
        return;
    if (i == mdp_cu_nmoved) {
        if (mdp_cu_nmoved == 0)
            atexit(mdp_cu_moved_report);
        mdp_cu_moved[i].name = name;
        ++mdp_cu_nmoved;
    }
    if (up) {
        mdp_cu_moved[i].up++;
        mdp_cu_moved[i].up_bytes += bytes;
    } else {
        mdp_cu_moved[i].down++;
        mdp_cu_moved[i].down_bytes += bytes;
    }
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
    mdp_cu_profile_calls = mdp_cu_profile && strcmp(want, "calls") == 0;
    if (mdp_cu_profile) {
        int i;
        for (i = 0; i < 6; ++i)
            mdp_cu_check(cuEventCreate(&mdp_cu_ev[i], CU_EVENT_DEFAULT), "cuEventCreate");
        if (cuMemHostAlloc((void **)&mdp_cu_gate, sizeof *mdp_cu_gate, CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS) {
            *mdp_cu_gate = 0;
            mdp_cu_gated = cuMemHostGetDevicePointer(&mdp_cu_gate_dev, (void *)mdp_cu_gate, 0) == CUDA_SUCCESS;
            /* launches that return only once their kernel is done would wait for a gate that opens after them */
            want = getenv("CUDA_LAUNCH_BLOCKING");
            if (want && strcmp(want, "1") == 0)
                mdp_cu_gated = 0;
        }
        atexit(mdp_cu_profile_report);
        mdp_cu_calibrate();
        if (mdp_cu_profile_calls)
            fprintf(stderr, "mdpoly-profile-floor: gated=%d floor1_ms=%.6f floor2_ms=%.6f empty_ms=%.6f\n",
                    mdp_cu_gated, mdp_cu_floor_ms[1], mdp_cu_floor_ms[2], (double)MDP_CU_EMPTY_MS);
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
    int local = 0;
    mdp_cu_check(cuModuleGetFunction(&f, mod, kernel), "cuModuleGetFunction");
    /* MDPOLY_PROFILE: a kernel with local memory (a per-thread array) may make its launch grow the
       context's local memory, which waits for the device to go idle -- behind the gate, which opens
       only after the launch returns: the program would hang. Such programs time their calls with
       events as queued (the launch latency included). */
    if (mdp_cu_gated && cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == CUDA_SUCCESS && local > 0)
        mdp_cu_gated = 0;
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
static struct { const char *name; const void *host; size_t bytes; CUdeviceptr mem; int download; } mdp_cu_res[MDP_CU_MAX_RESIDENT];
static int mdp_cu_nres;
static long mdp_cu_res_uploads, mdp_cu_res_downloads;   /* MDPOLY_PROFILE: the regions' copies */
static unsigned long long mdp_cu_res_up_bytes, mdp_cu_res_down_bytes;

static void mdp_cu_resident_report(void)
{
    fprintf(stderr, "mdpoly-profile: resident uploads=%ld downloads=%ld upload_bytes=%llu download_bytes=%llu\n",
            mdp_cu_res_uploads, mdp_cu_res_downloads, mdp_cu_res_up_bytes, mdp_cu_res_down_bytes);
    fflush(stderr);
}

/* Copies bytes [from, to) of resident array 'i' back to the host ('to_host') or to the device. */
static void mdp_cu_resident_copy(int i, size_t from, size_t to, int to_host)
{
    char *host = (char *)mdp_cu_res[i].host;
    if (to > mdp_cu_res[i].bytes)
        to = mdp_cu_res[i].bytes;
    if (from >= to)
        return;
    if (to_host) {
        mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");
        mdp_cu_check(cuMemcpyDtoH(host + from, mdp_cu_res[i].mem + from, to - from), "cuMemcpyDtoH");
        ++mdp_cu_res_downloads;
        mdp_cu_res_down_bytes += to - from;
    } else {
        mdp_cu_check(cuMemcpyHtoD(mdp_cu_res[i].mem + from, host + from, to - from), "cuMemcpyHtoD");
        ++mdp_cu_res_uploads;
        mdp_cu_res_up_bytes += to - from;
    }
    mdp_cu_count(mdp_cu_res[i].name, !to_host, to - from);
}

/* Registers array 'name' ('bytes' bytes at 'host') for the data region starting now: one device
   buffer, copied in now when 'upload', back at mdp_cu_resident_exit when 'download'. */
MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_enter_named(const char *name, const void *host, size_t bytes,
                                                            int upload, int download)
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
    mdp_cu_res[mdp_cu_nres].name = name;
    mdp_cu_res[mdp_cu_nres].host = host;
    mdp_cu_res[mdp_cu_nres].bytes = bytes;
    mdp_cu_res[mdp_cu_nres].download = download;
    mdp_cu_check(cuMemAlloc(&mdp_cu_res[mdp_cu_nres].mem, bytes ? bytes : 1), "cuMemAlloc");
    mdp_cu_pin(host, bytes);
    ++mdp_cu_nres;
    if (upload)
        mdp_cu_resident_copy(mdp_cu_nres - 1, 0, bytes, 0);
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_enter(const void *host, size_t bytes, int upload, int download)
{
    static const char unnamed[] = "(unnamed)";
    mdp_cu_resident_enter_named(unnamed, host, bytes, upload, download);
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

static void mdp_cu_kept_stale(const char *host, size_t bytes);

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_exit(void)
{
    if (mdp_cu_nres > 0)
        mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");
    for (; mdp_cu_nres > 0; --mdp_cu_nres) {
        int i = mdp_cu_nres - 1;
        if (mdp_cu_res[i].download)
            mdp_cu_resident_copy(i, 0, mdp_cu_res[i].bytes, 1);
        mdp_cu_kept_stale((const char *)mdp_cu_res[i].host, mdp_cu_res[i].bytes);   /* the loop may have changed it */
        mdp_cu_check(cuMemFree(mdp_cu_res[i].mem), "cuMemFree");
    }
}

/* The resident array at 'host' (a statement of the loop uses it on the host). */
static int mdp_cu_resident_slot(const void *host)
{
    int i;
    for (i = 0; i < mdp_cu_nres; ++i)
        if (mdp_cu_res[i].host == host)
            return i;
    fprintf(stderr, "mdpoly: internal error: no resident array at %p\n", host);
    exit(1);
}

/* Copies a resident array back to the host, whole (before a statement of the loop uses it). */
MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_download(const void *host)
{
    int i = mdp_cu_resident_slot(host);
    mdp_cu_resident_copy(i, 0, mdp_cu_res[i].bytes, 1);
}

/* Copies a resident array to the device again, whole (after a statement of the loop wrote it). */
MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_upload(const void *host)
{
    int i = mdp_cu_resident_slot(host);
    mdp_cu_resident_copy(i, 0, mdp_cu_res[i].bytes, 0);
}

/* Bytes [from, to) of a resident array, back to the host or to the device (clamped to the array). */
MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_download_range(const void *host, long long from, long long to)
{
    if (to > from)
        mdp_cu_resident_copy(mdp_cu_resident_slot(host), from < 0 ? 0 : (size_t)from, (size_t)to, 1);
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_upload_range(const void *host, long long from, long long to)
{
    if (to > from)
        mdp_cu_resident_copy(mdp_cu_resident_slot(host), from < 0 ? 0 : (size_t)from, (size_t)to, 0);
}

/* The footprint of a host statement on one array, as rows [row_lo, row_hi] (the first subscript;
   'pitch': the bytes of one row) and bytes [from, to) within a row (the other subscripts): the
   bounding box of its accesses (one mdp_cu_span_add per access, empty ones ignored). Copied as one
   range when it is contiguous (or its bytes leave the row), else as a rectangle; the whole array
   when mdp_cu_span_reset was told the subscripts do not name its elements. */
static long long mdp_cu_span_pitch, mdp_cu_span_row_lo, mdp_cu_span_row_hi, mdp_cu_span_from, mdp_cu_span_to;
static int mdp_cu_span_whole, mdp_cu_span_empty;

MDP_CU_MAYBE_UNUSED static void mdp_cu_span_reset(int exact, long long pitch)
{
    mdp_cu_span_whole = !exact;
    mdp_cu_span_empty = 1;
    mdp_cu_span_pitch = pitch;
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_span_add(long long row_lo, long long row_hi, long long from, long long to)
{
    if (row_hi < row_lo || to <= from)
        return;
    if (mdp_cu_span_empty) {
        mdp_cu_span_empty = 0;
        mdp_cu_span_row_lo = row_lo;
        mdp_cu_span_row_hi = row_hi;
        mdp_cu_span_from = from;
        mdp_cu_span_to = to;
        return;
    }
    mdp_cu_span_row_lo = row_lo < mdp_cu_span_row_lo ? row_lo : mdp_cu_span_row_lo;
    mdp_cu_span_row_hi = row_hi > mdp_cu_span_row_hi ? row_hi : mdp_cu_span_row_hi;
    mdp_cu_span_from = from < mdp_cu_span_from ? from : mdp_cu_span_from;
    mdp_cu_span_to = to > mdp_cu_span_to ? to : mdp_cu_span_to;
}

static void mdp_cu_resident_span(const void *host, int to_host)
{
    int i;
    long long pitch = mdp_cu_span_pitch, row_lo = mdp_cu_span_row_lo, row_hi = mdp_cu_span_row_hi;
    long long from = mdp_cu_span_from, to = mdp_cu_span_to;
    if (mdp_cu_span_whole) {
        if (to_host)
            mdp_cu_resident_download(host);
        else
            mdp_cu_resident_upload(host);
        return;
    }
    if (mdp_cu_span_empty)
        return;
    i = mdp_cu_resident_slot(host);
    if (pitch <= 0 || row_lo == row_hi || from < 0 || to > pitch || (from == 0 && to == pitch)) {
        /* one range, from the lowest element to the highest (whatever the subscripts' ranges) */
        long long a = pitch > 0 ? row_lo * pitch + from : from, b = pitch > 0 ? row_hi * pitch + to : to;
        if (a < 0)
            a = 0;
        if (b > a)
            mdp_cu_resident_copy(i, (size_t)a, (size_t)b, to_host);
        return;
    }
    /* a rectangle: rows within the array, the same bytes of each */
    if (row_lo < 0)
        row_lo = 0;
    if ((row_hi + 1) * pitch > (long long)mdp_cu_res[i].bytes)
        row_hi = (long long)mdp_cu_res[i].bytes / pitch - 1;
    if (row_hi < row_lo)
        return;
    {
        CUDA_MEMCPY2D c;
        memset(&c, 0, sizeof c);
        c.srcXInBytes = c.dstXInBytes = (size_t)from;
        c.srcY = c.dstY = (size_t)row_lo;
        c.srcPitch = c.dstPitch = (size_t)pitch;
        c.WidthInBytes = (size_t)(to - from);
        c.Height = (size_t)(row_hi - row_lo + 1);
        if (to_host) {
            c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
            c.srcDevice = mdp_cu_res[i].mem;
            c.dstMemoryType = CU_MEMORYTYPE_HOST;
            c.dstHost = (void *)mdp_cu_res[i].host;
            mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");
        } else {
            c.srcMemoryType = CU_MEMORYTYPE_HOST;
            c.srcHost = mdp_cu_res[i].host;
            c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
            c.dstDevice = mdp_cu_res[i].mem;
        }
        mdp_cu_check(cuMemcpy2D(&c), "cuMemcpy2D");
        if (mdp_cu_profile) {
            unsigned long long moved = (unsigned long long)(to - from) * (unsigned long long)(row_hi - row_lo + 1);
            if (to_host) {
                ++mdp_cu_res_downloads;
                mdp_cu_res_down_bytes += moved;
            } else {
                ++mdp_cu_res_uploads;
                mdp_cu_res_up_bytes += moved;
            }
            mdp_cu_count(mdp_cu_res[i].name, !to_host, (size_t)moved);
        }
    }
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_download_span(const void *host)
{
    mdp_cu_resident_span(host, 1);
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_resident_upload_span(const void *host)
{
    mdp_cu_resident_span(host, 0);
}

/* Residency across calls (the user's mdp_resident_keep): an array kept here has one device copy
   that every nest's call reading it uses, copied in at the first such call and again only after
   mdp_resident_invalidate. The contract: while an array is kept, the program does not change its
   host copy, or calls mdp_resident_invalidate after changing it. A nest that writes a kept array
   copies it as usual and invalidates the kept copy. */
#define MDP_CU_MAX_KEPT 256
static struct { const void *host; size_t bytes; CUdeviceptr mem; int valid; } mdp_cu_kept[MDP_CU_MAX_KEPT];
static int mdp_cu_nkept;

static int mdp_cu_kept_slot(const void *host)
{
    int i;
    for (i = 0; i < mdp_cu_nkept; ++i)
        if (mdp_cu_kept[i].host == host)
            return i;
    return -1;
}

/* Every kept copy that overlaps the 'bytes' at 'host' is stale: the host copy changed there. */
static void mdp_cu_kept_stale(const char *host, size_t bytes)
{
    int i;
    for (i = 0; i < mdp_cu_nkept; ++i) {
        const char *lo = (const char *)mdp_cu_kept[i].host;
        if (host < lo + mdp_cu_kept[i].bytes && lo < host + bytes)
            mdp_cu_kept[i].valid = 0;
    }
}

MDP_CU_MAYBE_UNUSED static void mdp_cu_kept_release(void)
{
    for (; mdp_cu_nkept > 0; --mdp_cu_nkept)
        if (mdp_cu_kept[mdp_cu_nkept - 1].mem && mdp_cu_ready)
            cuMemFree(mdp_cu_kept[mdp_cu_nkept - 1].mem);
}

/* Keeps the 'bytes' bytes at 'host' on the device between the nests' calls (see above). */
static void mdp_cu_kept_add(const void *host, size_t bytes)
{
    int i;
    mdp_cu_init();
    i = mdp_cu_kept_slot(host);
    if (i >= 0 && mdp_cu_kept[i].bytes >= bytes)
        return;
    if (i < 0) {
        if (mdp_cu_nkept == MDP_CU_MAX_KEPT)
            return;   /* too many: the array is copied at each call, as without keeping */
        if (mdp_cu_nkept == 0)
            atexit(mdp_cu_kept_release);
        i = mdp_cu_nkept++;
    } else if (mdp_cu_kept[i].mem) {
        cuMemFree(mdp_cu_kept[i].mem);
    }
    mdp_cu_kept[i].host = host;
    mdp_cu_kept[i].bytes = bytes;
    mdp_cu_kept[i].mem = 0;
    mdp_cu_kept[i].valid = 0;
}

/* For a nest's buffer of 'bytes' bytes at 'host' named 'name': the kept device copy (copied in
   first when not valid), 1 and '*mem' set; 0 when the array is not kept (or the nest 'written' it).
   'add': keep it from now on if it is not yet (#pragma mdh resident). */
MDP_CU_MAYBE_UNUSED static int mdp_cu_kept_find(const char *name, const void *host, size_t bytes, int written, int add, CUdeviceptr *mem)
{
    int i = mdp_cu_nkept ? mdp_cu_kept_slot(host) : -1;
    if (written && mdp_cu_nkept) {   /* copied as usual; the kept copies of what it writes are stale */
        mdp_cu_kept_stale((const char *)host, bytes);
        return 0;
    }
    if (i < 0 && add) {   /* #pragma mdh resident: kept from its first use */
        mdp_cu_kept_add(host, bytes);
        i = mdp_cu_kept_slot(host);
    }
    if (i < 0 || written || bytes > mdp_cu_kept[i].bytes)
        return 0;
    if (!mdp_cu_kept[i].mem)
        mdp_cu_check(cuMemAlloc(&mdp_cu_kept[i].mem, mdp_cu_kept[i].bytes ? mdp_cu_kept[i].bytes : 1), "cuMemAlloc");
    if (!mdp_cu_kept[i].valid) {
        if (mdp_cu_kept[i].bytes)
            mdp_cu_check(cuMemcpyHtoD(mdp_cu_kept[i].mem, host, mdp_cu_kept[i].bytes), "cuMemcpyHtoD");
        mdp_cu_count(name, 1, mdp_cu_kept[i].bytes);
        mdp_cu_kept[i].valid = 1;
    }
    *mem = mdp_cu_kept[i].mem;
    return 1;
}

#ifndef MDP_RESIDENT_API
#define MDP_RESIDENT_API 1
/* The program's calls (README: residency across calls): keep, invalidate, release. */
MDP_CU_MAYBE_UNUSED static void mdp_resident_keep(const void *host, size_t bytes)
{
    mdp_cu_kept_add(host, bytes);
}

/* The host copy at 'host' changed: the next call that reads it copies it in again. */
MDP_CU_MAYBE_UNUSED static void mdp_resident_invalidate(const void *host)
{
    int i = mdp_cu_kept_slot(host);
    if (i >= 0)
        mdp_cu_kept[i].valid = 0;
}

/* No longer kept: the device copy is freed, the calls copy the array again. */
MDP_CU_MAYBE_UNUSED static void mdp_resident_release(const void *host)
{
    int i = mdp_cu_kept_slot(host);
    if (i < 0)
        return;
    if (mdp_cu_kept[i].mem)
        cuMemFree(mdp_cu_kept[i].mem);
    mdp_cu_kept[i] = mdp_cu_kept[--mdp_cu_nkept];
}
#endif
#endif /* MDP_CUDA_RUNTIME */
