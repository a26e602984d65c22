"""C host code for ``OpenCLBackend`` (OpenCL 1.2 API): ``host_preamble()`` and ``host_function(plan, src)``.

The preamble (once per file) holds the process-wide state and helpers: device choice
(``MDPOLY_OPENCL_DEVICE`` = index or name substring, else the first GPU, else the first device),
one context and in-order queue, program building with the build log on failure, error checks that
name the failed call and its code and ``exit(1)``, and an ``atexit`` release of everything.
Each nest's function embeds its kernel source as a string, builds it and creates its kernel
objects on first use, keeps its device buffers across calls (``mdp_cl_buffer``: created on first
use, recreated only when a call needs more bytes, released at exit), copies in what the nest
reads or writes only in part, sets the kernel arguments whose values changed since its last call
(``mdp_cl_arg``), launches the main kernel (and the combine kernel when the plan has partials),
and copies back what it writes. Nothing here is specific to one OpenCL implementation.

Profiling: when ``MDPOLY_PROFILE`` is set (and not ``0``; read once, at initialization) the queue
is created with ``CL_QUEUE_PROFILING_ENABLE``, every command of a nest gets an event, and each
call adds its kernels' and its transfers' ``CL_PROFILING_COMMAND_START..END`` to the nest's sums;
at exit one line per nest goes to stderr::

    mdpoly-profile: <nest> calls=<n> kernel_ms=<total> transfer_ms=<total>

Unset, no events are requested (the commands get ``NULL``) and the queue is an ordinary one.
"""

from __future__ import annotations

from mdpoly.backends.gpu_host import HostWriter, RuntimeSpelling, count_c, runtime_preamble
from mdpoly.ir.kernel import KernelPlan

_PREAMBLE = r"""#ifndef MDP_OPENCL_RUNTIME
#define MDP_OPENCL_RUNTIME
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#define MDP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MDP_CDIV(a, b) (((a) + (b) - 1) / (b))
#define MDP_CL_MAX_OBJECTS 256
static cl_device_id mdp_cl_device;
static cl_context mdp_cl_context;
static cl_command_queue mdp_cl_queue;
static cl_program mdp_cl_programs[MDP_CL_MAX_OBJECTS];
static cl_kernel mdp_cl_kernels[MDP_CL_MAX_OBJECTS];
static int mdp_cl_nprograms, mdp_cl_nkernels;
static int mdp_cl_profile;   /* MDPOLY_PROFILE set (read once, in mdp_cl_init) */
static struct { const char *nest; long calls; double kernel_ns, transfer_ns; } mdp_cl_prof[MDP_CL_MAX_OBJECTS];
static int mdp_cl_nprof;
/* MDPOLY_PROFILE: the last call's kernel and transfer device time, and the device time from its
   first command's start to its last command's end (the whole call); a tuner reads it back. */
static struct { double kernel_ms, transfer_ms, call_ms; } mdp_cl_last;
@KEPT_STATE@

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
@KEPT_RELEASE@
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
@PROFILE_SLOT@
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

@PROFILE_REPORT@

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

/* A nest's device buffer, kept across its calls: (re)created only when 'bytes' exceeds its
   capacity '*cap'; released at exit. Returns 1 when the buffer object changed. */
static int mdp_cl_buffer(cl_mem *mem, size_t *cap, size_t bytes, cl_mem_flags flags)
{
    cl_int err;
@KEPT_BUFFER@
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
#endif /* MDP_OPENCL_RUNTIME */
"""


_SPELLING = RuntimeSpelling(prefix="mdp_cl", max_objects="MDP_CL_MAX_OBJECTS", out_of_memory="CL_OUT_OF_HOST_MEMORY",
                            mem_type="cl_mem", null_mem="NULL", free="clReleaseMemObject", unchanged=" 0",
                            kernel_ms="kernel_ns * 1e-6", transfer_ms="transfer_ns * 1e-6")


def host_preamble() -> str:
    """The shared host runtime: includes, static OpenCL state and helpers (guarded, once per file)."""
    return runtime_preamble(_PREAMBLE, _SPELLING)


class OpenCLHostWriter(HostWriter):
    """``HostWriter`` in OpenCL 1.2 spellings: buffers, enqueued copies and launches, events."""

    kernel_type = "cl_kernel"
    mem_type = "cl_mem"
    ix = "cl_long"
    extent_quals = "const "

    def declarations(self) -> None:
        # MDPOLY_PROFILE: one event per command, requested only when profiling (NULL otherwise)
        ntransfers = sum(1 for b in self.globals if b.copy_in) + sum(1 for b in self.globals if b.copy_out)
        self.w(f"cl_event mdp_kev[{len(self.spec.launches)}], mdp_tev[{max(ntransfers, 1)}];")
        self.w("int mdp_nk = 0, mdp_nt = 0;")
        self.extents()
        self.kept_buffers()
        for k, ln in enumerate(self.spec.launches):
            if ln.items is None:
                n = len(ln.groups)
                self.w(f"size_t mdp_local{_suffix(k)}[{n}], mdp_global{_suffix(k)}[{n}];")
        self.group_counts()

    def load_kernels(self) -> None:
        name = self.name
        for var, kernel in self.kernels():
            self.w(f"if (!{var})")
            self.w(f'    {var} = mdp_cl_kernel(mdp_src_{name}, "{name}", "{kernel}");')

    def launch_shape(self) -> None:
        for k, ln in enumerate(self.spec.launches):
            if ln.items is not None:
                continue
            for g, (groups, size) in enumerate(zip(ln.groups, ln.group_size)):
                self.w(f"mdp_local{_suffix(k)}[{g}] = {size};")
                self.w(f"mdp_global{_suffix(k)}[{g}] = {count_c(groups, 'size_t')} * mdp_local{_suffix(k)}[{g}];")

    def buffers_in(self) -> None:
        for b in self.globals:
            flags = "CL_MEM_READ_WRITE" if b.written else "CL_MEM_READ_ONLY"
            self.w(f"mdp_cl_buffer(&mdp_mem_{b.name}, &mdp_cap_{b.name}, mdp_bytes_{b.name}, {flags});")
            if b.copy_in:
                self.copy_in(b.name)
        for s in self.spec.scratch:
            self.w(f"mdp_cl_buffer(&mdp_mem_{s.name}, &mdp_cap_{s.name}, {self.scratch_bytes(s)}, CL_MEM_READ_WRITE);")

    def copy_in_call(self, name: str) -> str:
        return (f"mdp_cl_check(clEnqueueWriteBuffer(mdp_cl_queue, mdp_mem_{name}, CL_FALSE, 0, mdp_bytes_{name}, "
                f'(const void *){name}, 0, NULL, mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL), "clEnqueueWriteBuffer");')

    def launch(self) -> None:
        # arguments: set again only where a value (a buffer object, an extent) changed since the last call
        args = self.kernel_args()
        nargs = len(args)
        kernels = self.kernels()
        for var, _ in kernels:
            self.w(f"{{ static unsigned char mdp_last[{nargs}][8];")
            self.w(f"  static char mdp_valid[{nargs}];")
            for a, arg in enumerate(args):
                self.w(f"  mdp_cl_arg({var}, {a}, sizeof({arg.size_of}), &{arg.var}, mdp_last[{a}], &mdp_valid[{a}]);")
            self.w("}")
        event = 'mdp_cl_profile ? &mdp_kev[mdp_nk++] : NULL), "clEnqueueNDRangeKernel");'
        for k, ((var, _), ln) in enumerate(zip(kernels, self.spec.launches)):
            if ln.items is None:
                self.w(f"mdp_cl_check(clEnqueueNDRangeKernel(mdp_cl_queue, {var}, {len(ln.groups)}, NULL, "
                       f"mdp_global{_suffix(k)}, mdp_local{_suffix(k)}, 0, NULL, {event}")
                continue
            # exactly the working items, in work-groups of the implementation's choice
            self.w("{")
            self.w(f"    size_t mdp_items = {count_c(ln.items, 'size_t')};")
            self.w(f"    mdp_cl_check(clEnqueueNDRangeKernel(mdp_cl_queue, {var}, 1, NULL, &mdp_items, NULL, 0, "
                   f"NULL, {event}")
            self.w("}")

    def copy_out(self, name: str) -> str:
        return (f"mdp_cl_check(clEnqueueReadBuffer(mdp_cl_queue, mdp_mem_{name}, CL_TRUE, 0, mdp_bytes_{name}, "
                f'(void *){name}, 0, NULL, mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL), "clEnqueueReadBuffer");')

    def finish(self) -> None:
        self.w('mdp_cl_check(clFinish(mdp_cl_queue), "clFinish");')
        self.w("if (mdp_cl_profile)")
        self.w(f'    mdp_cl_profile_add("{self.name}", mdp_kev, mdp_nk, mdp_tev, mdp_nt);')


#: The preamble's struct of the last call's profile (``mdpoly.backends.entry.timing_function``).
LAST_CALL = "mdp_cl_last"


def _suffix(k: int) -> str:
    """The name suffix of launch ``k``'s size arrays (none for the main kernel)."""
    return f"_{k}" if k else ""


def host_function(plan: KernelPlan, source: str) -> str:
    """The kernel source string and ``static void <name>(params)`` that runs ``plan``."""
    return OpenCLHostWriter(plan).function(source)
