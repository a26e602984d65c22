"""C host code for ``CudaBackend`` (CUDA driver API + NVRTC): ``host_preamble()`` and ``host_function(plan, src)``.

The preamble (once per file) holds the process-wide state and helpers:

* device: ``cuInit``, then ``MDPOLY_CUDA_DEVICE`` (a device index, default 0); the device's
  primary context (``cuDevicePrimaryCtxRetain`` + ``cuCtxSetCurrent``, the same call sequence
  under CUDA 12 and 13, unlike ``cuCtxCreate``);
* compilation at first call: NVRTC for the device's compute capability, ``sm_XY`` CUBIN when
  NVRTC knows the architecture, else PTX for the newest ``compute_XY`` it knows that is not newer
  than the device (the driver JIT-compiles it); ``--fmad=false`` so that float results round as
  the sequential C program's do, unless the nest reassociates a float reduction anyway
  (``MdhExpr.reassociates_fp``, not ``--strict-fp``): then ``--fmad=true`` (multiply-adds contract
  as OpenCL C's default ``FP_CONTRACT`` allows); the compile log on failure;
* a disk cache of compiled modules: ``$MDPOLY_CACHE_DIR/cuda``, else
  ``$XDG_CACHE_HOME/mdpoly/cuda``, else ``$HOME/.cache/mdpoly/cuda``, one file
  ``<hash>-<arch>.cubin`` (or ``.ptx``) per kernel source, NVRTC version and options (FNV-1a),
  written atomically (temporary file + ``rename``); ``MDPOLY_CUDA_NO_CACHE=1`` disables it, and a
  cache that cannot be written is skipped silently;
* error checks naming the failed call and ``cuGetErrorName``/``cuGetErrorString`` (or
  ``nvrtcGetErrorString``), then ``exit(1)``; an ``atexit`` handler unloads the modules and
  releases the primary context.

Each nest's function embeds its kernel source as a string, loads its module and looks up its
kernels on first use, keeps its device buffers across calls (``mdp_cu_buffer``: allocated on
first use, reallocated only when a call needs more bytes, freed at exit), copies in what the nest
reads or writes only in part and out what it writes, launches the main kernel (one-dimensional
grid of all blocks; the kernel decodes the group indices) and, with partials, the combine kernel,
and synchronizes.

Profiling: when ``MDPOLY_PROFILE`` is set (and not ``0``; read once, in ``mdp_cu_init``), five
events (created once) are recorded on the default stream around each call's copies in, its
launches and its copies out; the nest's sums of ``cuEventElapsedTime`` (kernels: from before the
first launch to after the last, so a few microseconds of launch latency are included; transfers:
the two copy intervals) go to stderr at exit, one line per nest::

    mdpoly-profile: <nest> calls=<n> kernel_ms=<total> transfer_ms=<total>

Unset, each call only tests the flag.
"""

from __future__ import annotations

from mdpoly.backends.gpu_host import HostWriter, RuntimeSpelling, count_c, runtime_preamble
from mdpoly.ir.kernel import KernelPlan

#: Upper-case identifiers that ``cuda.h``/``nvrtc.h`` use outside directives (parameter names such
#: as ``N`` in ``cuMemsetD8``, enumerators): a user's size macro of that name (``#define N 500``)
#: would break the headers, which splicing places after the user's macros, so the preamble
#: suspends them around the includes (``push_macro``/``pop_macro``, GCC and Clang).
#: ``tests/backends/test_cuda_render.py`` recomputes the list from the installed headers.
HEADER_IDENTIFIERS = ("C", "N", "T", "LTOIR", "UNDNAME_NAME_ONLY", "UNDNAME_NO_ARGUMENTS",
                      "RESOURCE_ABI_EXTERNAL_BYTES", "RESOURCE_ABI_VERSION")

_SUSPEND = "".join(f'#pragma push_macro("{n}")\n#undef {n}\n' for n in HEADER_IDENTIFIERS)
_RESTORE = "".join(f'#pragma pop_macro("{n}")\n' for n in HEADER_IDENTIFIERS)

_PREAMBLE = r"""#ifndef MDP_CUDA_RUNTIME
#define MDP_CUDA_RUNTIME
@SUSPEND@#include <cuda.h>
#include <nvrtc.h>
@RESTORE@#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#define MDP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MDP_CDIV(a, b) (((a) + (b) - 1) / (b))
#define MDP_CU_MAX_MODULES 256
static CUdevice mdp_cu_device;
static CUcontext mdp_cu_context;
static int mdp_cu_ready;
static CUmodule mdp_cu_modules[MDP_CU_MAX_MODULES];
static int mdp_cu_nmodules;
static int mdp_cu_profile;   /* MDPOLY_PROFILE set (read once, in mdp_cu_init) */
static CUevent mdp_cu_ev[5]; /* copies in | kernels | (synchronize) | copies out */
static struct { const char *nest; long calls; double kernel_ms, transfer_ms; } mdp_cu_prof[MDP_CU_MAX_MODULES];
static int mdp_cu_nprof;
/* MDPOLY_PROFILE: the last call's kernel and transfer device time, and the device time from
   before its copies in to after its copies out (the whole call); a tuner reads it back. */
static struct { double kernel_ms, transfer_ms, call_ms; } mdp_cu_last;
@KEPT_STATE@

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
    for (i = 0; i < mdp_cu_nmodules; ++i)
        cuModuleUnload(mdp_cu_modules[i]);
    mdp_cu_nmodules = 0;
@KEPT_RELEASE@
    for (i = 0; i < 5; ++i)
        if (mdp_cu_ev[i])
            cuEventDestroy(mdp_cu_ev[i]);
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

/* Adds one call of 'nest' once its last event (after the copies out) has completed. */
static void mdp_cu_profile_add(const char *nest)
{
    int slot;
    mdp_cu_check(cuEventSynchronize(mdp_cu_ev[4]), "cuEventSynchronize");
@PROFILE_SLOT@
    mdp_cu_last.kernel_ms = mdp_cu_elapsed(1, 2);
    mdp_cu_last.transfer_ms = mdp_cu_elapsed(0, 1) + mdp_cu_elapsed(3, 4);
    mdp_cu_last.call_ms = mdp_cu_elapsed(0, 4);
    mdp_cu_prof[slot].kernel_ms += mdp_cu_last.kernel_ms;
    mdp_cu_prof[slot].transfer_ms += mdp_cu_last.transfer_ms;
}

@PROFILE_REPORT@

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
        for (i = 0; i < 5; ++i)
            mdp_cu_check(cuEventCreate(&mdp_cu_ev[i], CU_EVENT_DEFAULT), "cuEventCreate");
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
    char arch_opt[64], dir[4000], path[4200], key[64];
    int cubin = 0, arch, major = 0, minor = 0, have_dir;
    unsigned long long h;
    size_t size = 0;
    char *image;
    CUmodule mod;
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
    return mod;
}

static CUfunction mdp_cu_function(CUmodule mod, const char *kernel)
{
    CUfunction f;
    mdp_cu_check(cuModuleGetFunction(&f, mod, kernel), "cuModuleGetFunction");
    return f;
}

/* A nest's device buffer, kept across its calls: (re)allocated only when 'bytes' exceeds its
   capacity '*cap'; freed at exit. */
static void mdp_cu_buffer(CUdeviceptr *mem, size_t *cap, size_t bytes)
{
@KEPT_BUFFER@
    mdp_cu_check(cuMemAlloc(mem, bytes), "cuMemAlloc");
    *cap = bytes;
}
#endif /* MDP_CUDA_RUNTIME */
"""


_SPELLING = RuntimeSpelling(prefix="mdp_cu", max_objects="MDP_CU_MAX_MODULES", out_of_memory="CUDA_ERROR_OUT_OF_MEMORY",
                            mem_type="CUdeviceptr", null_mem="0", free="cuMemFree", unchanged="",
                            kernel_ms="kernel_ms", transfer_ms="transfer_ms")


def host_preamble() -> str:
    """The shared host runtime: includes, static CUDA state and helpers (guarded, once per file)."""
    return runtime_preamble(_PREAMBLE.replace("@SUSPEND@", _SUSPEND).replace("@RESTORE@", _RESTORE), _SPELLING)


def contracts_fma(plan: KernelPlan) -> bool:
    """Whether NVRTC compiles ``plan``'s kernels with ``--fmad=true``: only when the nest
    reassociates a float reduction anyway (``MdhExpr.reassociates_fp``); contraction rounds no
    worse than reassociation does. The host code and the tuning runner both ask this."""
    return plan.mdh.reassociates_fp


def nvrtc_flags(plan: KernelPlan) -> tuple[str, ...]:
    """The NVRTC options besides the architecture that the host code compiles ``plan`` with."""
    return ("--fmad=true" if contracts_fma(plan) else "--fmad=false",)


class CudaHostWriter(HostWriter):
    """``HostWriter`` in CUDA driver API spellings: ``cuMemAlloc``, ``cuMemcpy*``, ``cuLaunchKernel``
    over a one-dimensional grid, events around the copies and launches."""

    kernel_type = "CUfunction"
    mem_type = "CUdeviceptr"
    ix = "long long"
    src_prefix = "mdp_cu_src_"

    def declarations(self) -> None:
        self.extents()
        self.kept_buffers()
        self.group_counts()
        for k, ln in enumerate(self.spec.launches):
            size = ", ".join(str(x) for x in (*ln.group_size, 1, 1, 1)[:3])
            self.w(f"const unsigned int mdp_block{_suffix(k)}[3] = {{{size}}};")
            self.w(f"long long mdp_blocks{_suffix(k)};")

    def load_kernels(self) -> None:
        name = self.name
        self.w("if (!mdp_kernel) {")
        fmad = 1 if contracts_fma(self.plan) else 0
        self.w(f'    CUmodule mdp_mod = mdp_cu_module(mdp_cu_src_{name}, "{name}", {fmad});')
        for var, kernel in self.kernels():
            self.w(f'    {var} = mdp_cu_function(mdp_mod, "{kernel}");')
        self.w("}")

    def launch_shape(self) -> None:
        # every launch is a one-dimensional grid of all its blocks (the kernels decode the axes)
        for k, ln in enumerate(self.spec.launches):
            blocks = " * ".join(f"({count_c(c, 'long long')})" for c in ln.groups) or "1LL"
            self.w(f"mdp_blocks{_suffix(k)} = {blocks};")
            self.w(f"if (mdp_blocks{_suffix(k)} > 2147483647LL) {{")
            self.w(f'    fprintf(stderr, "mdpoly: CUDA error: %lld blocks for \'{ln.kernel}\' exceed the grid limit '
                   f'(2^31 - 1)\\n", mdp_blocks{_suffix(k)});')
            self.w("    exit(1);")
            self.w("}")

    def buffers_in(self) -> None:
        for b in self.globals:
            self.w(f"mdp_cu_buffer(&mdp_mem_{b.name}, &mdp_cap_{b.name}, mdp_bytes_{b.name});")
        for s in self.spec.scratch:
            self.w(f"mdp_cu_buffer(&mdp_mem_{s.name}, &mdp_cap_{s.name}, {self.scratch_bytes(s)});")
        # MDPOLY_PROFILE: events 0-1 around the copies in, 1-2 around the launches, 3-4 around the copies out
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(0);")
        for b in self.globals:
            if b.copy_in:
                self.copy_in(b.name)
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(1);")

    def copy_in_call(self, name: str) -> str:
        return f'mdp_cu_check(cuMemcpyHtoD(mdp_mem_{name}, (const void *){name}, mdp_bytes_{name}), "cuMemcpyHtoD");'

    def launch(self) -> None:
        args = [f"(void *)&{a.var}" if a.user_scalar else f"&{a.var}" for a in self.kernel_args()]
        self.w(f"{{ void *mdp_args[] = {{{', '.join(args)}}};")
        for k, (var, _) in enumerate(self.kernels()):
            x = _suffix(k)
            self.w(f"  mdp_cu_check(cuLaunchKernel({var}, (unsigned int)mdp_blocks{x}, 1, 1, mdp_block{x}[0], "
                   f'mdp_block{x}[1], mdp_block{x}[2], 0, NULL, mdp_args, NULL), "cuLaunchKernel");')
        self.w("}")

    def before_copy_out(self) -> None:
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(2);")
        self.w('mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");')
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(3);")

    def copy_out(self, name: str) -> str:
        return f'mdp_cu_check(cuMemcpyDtoH((void *){name}, mdp_mem_{name}, mdp_bytes_{name}), "cuMemcpyDtoH");'

    def finish(self) -> None:
        self.w("if (mdp_cu_profile) {")
        self.w("    mdp_cu_profile_record(4);")
        self.w(f'    mdp_cu_profile_add("{self.name}");')
        self.w("}")


#: The preamble's struct of the last call's profile (``mdpoly.backends.entry.timing_function``).
LAST_CALL = "mdp_cu_last"


def _suffix(k: int) -> str:
    """The name suffix of launch ``k``'s block counts (none for the main kernel)."""
    return f"_{k}" if k else ""


def host_function(plan: KernelPlan, source: str) -> str:
    """The kernel source string and ``static void <name>(params)`` that runs ``plan``."""
    return CudaHostWriter(plan).function(source)
