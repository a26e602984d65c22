"""C host code for ``CudaBackend`` (CUDA driver API + NVRTC): ``host_preamble()`` and ``host_function(plan, src)``.

The preamble (once per file; the C file ``backends/c/cuda_host.h``) holds the process-wide state and helpers:

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
kernels on first use (checking that each compiled kernel can run its block size with its registers
and shared memory, ``mdp_cu_launchable``: else it says why and exits with status 3 before a launch
that would fail with ``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES``), keeps its device buffers across calls (``mdp_cu_buffer``: allocated on
first use, reallocated only when a call needs more bytes, freed at exit), copies in what the nest
reads or writes only in part and out what it writes, launches the main kernel (one-dimensional
grid of all blocks; the kernel decodes the group indices) and, with partials, the combine kernel,
and synchronizes. A buffer that a data region around the call keeps on the device
(``mdpoly.backends.residency``; ``mdp_cu_resident_find`` by host address) is used as it is: no copy in or
out, and a call that copied nothing does not synchronize.

Profiling: when ``MDPOLY_PROFILE`` is set (and not ``0``; read once, in ``mdp_cu_init``), six
events (created once) are recorded on the default stream around each call's copies in, its
launches and its copies out. The launches' pair brackets the kernels alone: before them the stream
waits (``cuStreamWaitValue32``) on a host-mapped word that the host sets only after the launches
and the closing event are queued (``mdp_cu_gate_hold``/``mdp_cu_gate_open``), so the device runs
the opening event and the kernels back to back and the host's launch calls, argument set-up and
launch latency fall outside (where the device cannot wait on a value the events are recorded as
queued, a few microseconds of launch latency included). The nest's sums of ``cuEventElapsedTime``
(kernels; transfers: the two copy intervals, 0 for a call that copied nothing) and of the host
overhead (the call's host clock time from its launch set-up on -- the first call's kernel build
excluded -- less its kernel and transfer time: buffer look-ups, argument set-up, launch calls,
synchronization) go to stderr at exit, one line per nest::

    mdpoly-profile: <nest> calls=<n> kernel_ms=<total> transfer_ms=<total> host_ms=<total>

The gated events still add a few microseconds to the kernels they bracket (launch processing, the
events): at start-up the profile times the same gate around 1 and 2 empty kernels (``mdp_cu_calibrate``,
31 times each, the median) and takes that, less the empty kernels' own duration (``MDP_CU_EMPTY_MS``,
assumed 1.5 us), off each call's kernel interval for its number of launches. On an H200 that removes
1.35 us of the 4-7 us by which gated events exceed Nsight Compute's ``gpu__time_duration`` on
microsecond kernels (``benchmarks/results/gpu_kernels_2026-11-29_s11.md``): the rest grows with the
kernel, not the launch count, and is not removed. Kernels of 100 us and more agree within 6 %.
The gate cannot open under anything that waits for each launch to finish: ``CUDA_LAUNCH_BLOCKING=1``
turns it off (events as queued), and profilers that serialize launches (Nsight Compute) must run the
program without ``MDPOLY_PROFILE``.

``MDPOLY_PROFILE=calls`` also writes one line per call as it ends (``gated=0``: events as queued)::

    mdpoly-profile-call: <nest> call=<k> kernel_ms=<ms> transfer_ms=<ms> gated=<0|1> raw_ms=<ms> launches=<n>

Unset, each call only tests the flag.
"""

from __future__ import annotations

import re

from mdpoly.backends.c_files import c_file
from mdpoly.backends.gpu_host import HostWriter, count_c, launch_of
from mdpoly.ir.kernel import KernelPlan

#: Upper-case identifiers that ``cuda.h``/``nvrtc.h`` use outside directives (parameter names such
#: as ``N`` in ``cuMemsetD8``, enumerators): a user's size macro of that name (``#define N 500``)
#: would break the headers, which splicing places after the user's macros, so the preamble
#: suspends them around the includes (``push_macro``/``pop_macro``, GCC and Clang): the names
#: ``backends/c/cuda_host.h`` suspends, read from it.
#: ``tests/backends/test_cuda_render.py`` recomputes the list from the installed headers.
HEADER_IDENTIFIERS = tuple(re.findall(r'^#pragma push_macro\("(\w+)"\)$', c_file("cuda_host.h"), re.MULTILINE))

def host_preamble() -> str:
    """The shared host runtime: includes, static CUDA state and helpers (guarded, once per file),
    the C file ``backends/c/cuda_host.h``."""
    return c_file("cuda_host.h")


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
        for k, (var, kernel) in enumerate(self.kernels()):
            self.w(f'    {var} = mdp_cu_function(mdp_mod, "{kernel}");')
            self.w(f'    mdp_cu_launchable({var}, "{kernel}", mdp_block{_suffix(k)});')
        self.w("}")

    def host_clock(self) -> None:
        self.w("const double mdp_host0 = mdp_cu_profile ? mdp_cu_now_ms() : 0.0;")

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
            if self.resident:
                self.w(f"mdp_res_{b.name} = mdp_cu_resident_find((const void *){b.name}, mdp_bytes_{b.name}, "
                       f"&mdp_dev_{b.name});")
                if self.kept:
                    self.w(f"if (!mdp_res_{b.name})")
                    self.w(f'    mdp_res_{b.name} = mdp_cu_kept_find("{b.name}", (const void *){b.name}, '
                           f"mdp_bytes_{b.name}, {int(b.written)}, {int(b.name in self.plan.keep)}, &mdp_dev_{b.name});")
                self.w(f"if (!mdp_res_{b.name}) {{")
                self.lines.append("    " * 2 + f"mdp_cu_buffer(&mdp_mem_{b.name}, &mdp_cap_{b.name}, mdp_bytes_{b.name});")
                self.lines.append("    " * 2 + f"mdp_dev_{b.name} = mdp_mem_{b.name};")
                self.w("}")
                continue
            self.w(f"mdp_cu_buffer(&mdp_mem_{b.name}, &mdp_cap_{b.name}, mdp_bytes_{b.name});")
        for s in self.spec.scratch:
            self.w(f"mdp_cu_buffer(&mdp_mem_{s.name}, &mdp_cap_{s.name}, {self.scratch_bytes(s)});")
        # MDPOLY_PROFILE: events 0-1 around the copies in, 5-2 around the launches, 3-4 around the copies out
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(0);")
        for b in self.globals:
            if b.copy_in and self.resident:
                self.w(f"if ({self.copy_in_when(b.name)} && !mdp_res_{b.name})")
                self.w("    " + self.copy_in_call(b.name))
            elif b.copy_in:
                self.copy_in(b.name)
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(1);")

    def copy_in_call(self, name: str) -> str:
        return (f"{{ mdp_cu_pin((const void *){name}, mdp_bytes_{name}); "
                f'mdp_cu_check(cuMemcpyHtoD(mdp_mem_{name}, (const void *){name}, mdp_bytes_{name}), "cuMemcpyHtoD"); '
                f'mdp_cu_count("{name}", 1, mdp_bytes_{name}); }}')

    def launch(self) -> None:
        args = [f"(void *)&{a.var}" if a.user_scalar else f"&{a.var}" for a in self.kernel_args()]
        self.w(f"{{ void *mdp_args[] = {{{', '.join(args)}}};")
        # the kernel events go right around the launches, the device held until all are queued
        self.w("  if (mdp_cu_profile)")
        self.w("      mdp_cu_gate_hold();")
        for k, (var, _) in enumerate(self.kernels()):
            x = _suffix(k)
            self.w(f"  mdp_cu_check(cuLaunchKernel({var}, (unsigned int)mdp_blocks{x}, 1, 1, mdp_block{x}[0], "
                   f'mdp_block{x}[1], mdp_block{x}[2], 0, NULL, mdp_args, NULL), "cuLaunchKernel");')
        self.w("  if (mdp_cu_profile)")
        self.w("      mdp_cu_gate_open();")
        self.w("}")

    def before_copy_out(self) -> None:
        if self.resident:   # with all data on the device, the next launches queue behind these
            self.w(f"if (mdp_cu_profile || !({self.all_resident()}))")
            self.w('    mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");')
        else:
            self.w('mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");')
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_cu_profile_record(3);")

    def copy_out(self, name: str) -> str:
        return (f"{{ mdp_cu_pin((const void *){name}, mdp_bytes_{name}); "
                f'mdp_cu_check(cuMemcpyDtoH((void *){name}, mdp_mem_{name}, mdp_bytes_{name}), "cuMemcpyDtoH"); '
                f'mdp_cu_count("{name}", 0, mdp_bytes_{name}); }}')

    def finish(self) -> None:
        self.w("if (mdp_cu_profile) {")
        self.w("    mdp_cu_profile_record(4);")
        self.w(f'    mdp_cu_profile_add("{self.name}", !({self.all_resident()}), mdp_host0, {len(self.spec.launches)});')
        self.w("}")


#: The preamble's struct of the last call's profile (``mdpoly.backends.entry.timing_function``).
LAST_CALL = "mdp_cu_last"
#: The preamble's ``(host, bytes, upload, download)`` registration of a device-resident array.
RESIDENT_ENTER = "mdp_cu_resident_enter"


def _suffix(k: int) -> str:
    """The name suffix of launch ``k``'s block counts (none for the main kernel)."""
    return f"_{k}" if k else ""


def host_function(plan: KernelPlan, source: str) -> str:
    """The kernel source string and ``static void <name>(params)`` that runs ``plan`` (using a
    data region's device copy of a buffer, or a kept one, where there is one), then ``<name>_fits()``
    (``fits_function``)."""
    return CudaHostWriter(plan, resident=True, kept=True).function(source) + fits_function(plan)


def fits_function(plan: KernelPlan) -> str:
    """``int <name>_fits(void)``: whether this device can launch the plan's kernels with their
    block sizes, registers and shared memory (``mdp_cu_check_launch`` without exiting; asked once,
    on the module the function loads). The call site runs the original code when it cannot (code
    planned for a larger device than the one it runs on, ``--device-limits``)."""
    fmad = 1 if contracts_fma(plan) else 0
    lines = [f"MDP_FITS_FN {plan.name}_fits(void)", "{", "    static int mdp_fits = -1;", "    if (mdp_fits < 0) {",
             f'        CUmodule mdp_mod = mdp_cu_module(mdp_cu_src_{plan.name}, "{plan.name}", {fmad});',
             "        mdp_fits = 1;"]
    for k, ln in enumerate(launch_of(plan).launches):
        size = ", ".join(str(x) for x in (*ln.group_size, 1, 1, 1)[:3])
        lines.append(f"        {{ static const unsigned int mdp_b{k}[3] = {{{size}}};")
        lines.append(f'          mdp_fits = mdp_fits && mdp_cu_check_launch(mdp_cu_function(mdp_mod, "{ln.kernel}"), '
                     f'"{ln.kernel}", mdp_b{k}, 0); }}')
    lines += ["    }", "    return mdp_fits;", "}"]
    return "\n".join(lines) + "\n"
