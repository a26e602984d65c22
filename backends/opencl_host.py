"""C host code for ``OpenCLBackend`` (OpenCL 1.2 API): ``host_preamble()`` and ``host_function(plan, src)``.

The preamble (once per file; the C file ``backends/c/opencl_host.h``) holds the process-wide state and helpers: device choice
(``MDPOLY_OPENCL_DEVICE`` = index or name substring, else the first GPU, else the first device),
one context and in-order queue, program building with the build log on failure, error checks that
name the failed call and its code and ``exit(1)``, and an ``atexit`` release of everything.
Each nest's function embeds its kernel source as a string, builds it and creates its kernel
objects on first use, keeps its device buffers across calls (``mdp_cl_buffer``: created on first
use, recreated only when a call needs more bytes, released at exit), copies in what the nest
reads or writes only in part, sets the kernel arguments whose values changed since its last call
(``mdp_cl_arg``), checks once per launch site that the compiled kernel can run its work-group
size and local memory on the device (``mdp_cl_launchable``: else it says why and exits with
status 3 before launching), launches the main kernel (and the combine kernel when the plan has partials),
and copies back what it writes. A buffer that a data region around the call keeps on the device
(``mdpoly.backends.residency``; ``mdp_cl_resident_find`` by host address) is used as it is: no copy in or
out, and a call that copied nothing does not wait for the queue. Nothing here is specific to one
OpenCL implementation.

Profiling: when ``MDPOLY_PROFILE`` is set (and not ``0``; read once, at initialization) the queue
is created with ``CL_QUEUE_PROFILING_ENABLE``, every command of a nest gets an event, and each
call adds its kernels' and its transfers' ``CL_PROFILING_COMMAND_START..END`` (the device's own
execution of each command: no host work, no launch latency) to the nest's sums, and its host
overhead (the call's host clock time from its launch set-up on -- the first call's kernel build
excluded -- less its kernel and transfer time: buffer look-ups, argument set-up, enqueueing,
waiting); at exit one line per nest goes to stderr::

    mdpoly-profile: <nest> calls=<n> kernel_ms=<total> transfer_ms=<total> host_ms=<total>

Unset, no events are requested (the commands get ``NULL``) and the queue is an ordinary one.
"""

from __future__ import annotations

from mdpoly.backends.c_files import c_file
from mdpoly.backends.gpu_host import HostWriter, count_c, launch_of
from mdpoly.ir.kernel import KernelPlan


def host_preamble() -> str:
    """The shared host runtime: includes, static OpenCL state and helpers (guarded, once per file),
    the C file ``backends/c/opencl_host.h``."""
    return c_file("opencl_host.h")


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

    def host_clock(self) -> None:
        self.w("const double mdp_host0 = mdp_cl_profile ? mdp_cl_now_ms() : 0.0;")

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
            if self.resident:
                self.w(f"mdp_res_{b.name} = mdp_cl_resident_find((const void *){b.name}, mdp_bytes_{b.name}, "
                       f"&mdp_dev_{b.name});")
                if self.kept:
                    self.w(f"if (!mdp_res_{b.name})")
                    self.w(f'    mdp_res_{b.name} = mdp_cl_kept_find("{b.name}", (const void *){b.name}, '
                           f"mdp_bytes_{b.name}, {int(b.written)}, {int(b.name in self.plan.keep)}, &mdp_dev_{b.name});")
                self.w(f"if (!mdp_res_{b.name}) {{")
                self.lines.append("    " * 2 + f"mdp_cl_buffer(&mdp_mem_{b.name}, &mdp_cap_{b.name}, "
                                  f"mdp_bytes_{b.name}, {flags});")
                self.lines.append("    " * 2 + f"mdp_dev_{b.name} = mdp_mem_{b.name};")
                if b.copy_in:
                    self.lines.append("    " * 2 + f"if ({self.copy_in_when(b.name)})")
                    self.lines.append("    " * 3 + self.copy_in_call(b.name))
                self.w("}")
                continue
            self.w(f"mdp_cl_buffer(&mdp_mem_{b.name}, &mdp_cap_{b.name}, mdp_bytes_{b.name}, {flags});")
            if b.copy_in:
                self.copy_in(b.name)
        for s in self.spec.scratch:
            self.w(f"mdp_cl_buffer(&mdp_mem_{s.name}, &mdp_cap_{s.name}, {self.scratch_bytes(s)}, CL_MEM_READ_WRITE);")

    def copy_in_call(self, name: str) -> str:
        return (f"{{ mdp_cl_check(clEnqueueWriteBuffer(mdp_cl_queue, mdp_mem_{name}, CL_FALSE, 0, mdp_bytes_{name}, "
                f'(const void *){name}, 0, NULL, mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL), "clEnqueueWriteBuffer"); '
                f'mdp_cl_count("{name}", 1, mdp_bytes_{name}); }}')

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
                self.w(f"{{ static int mdp_ok; if (!mdp_ok) mdp_ok = mdp_cl_launchable({var}, \"{ln.kernel}\", "
                       f"{len(ln.groups)}, mdp_local{_suffix(k)}); }}")
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
        return (f"{{ mdp_cl_check(clEnqueueReadBuffer(mdp_cl_queue, mdp_mem_{name}, CL_TRUE, 0, mdp_bytes_{name}, "
                f'(void *){name}, 0, NULL, mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL), "clEnqueueReadBuffer"); '
                f'mdp_cl_count("{name}", 0, mdp_bytes_{name}); }}')

    def finish(self) -> None:
        if self.resident:   # with all data on the device, the next launches queue behind these
            self.w(f"if (mdp_cl_profile || !({self.all_resident()}))")
            self.w('    mdp_cl_check(clFinish(mdp_cl_queue), "clFinish");')
        else:
            self.w('mdp_cl_check(clFinish(mdp_cl_queue), "clFinish");')
        self.w("if (mdp_cl_profile) {")
        self.w(f'    mdp_cl_profile_add("{self.name}", mdp_kev, mdp_nk, mdp_tev, mdp_nt);')
        self.w(f'    mdp_cl_profile_host("{self.name}", mdp_host0);')
        self.w("}")


#: The preamble's struct of the last call's profile (``mdpoly.backends.entry.timing_function``).
LAST_CALL = "mdp_cl_last"
#: The preamble's ``(host, bytes, upload, download)`` registration of a device-resident array.
RESIDENT_ENTER = "mdp_cl_resident_enter"


def _suffix(k: int) -> str:
    """The name suffix of launch ``k``'s size arrays (none for the main kernel)."""
    return f"_{k}" if k else ""


def host_function(plan: KernelPlan, source: str) -> str:
    """The kernel source string and ``static void <name>(params)`` that runs ``plan`` (using a
    data region's device copy of a buffer, or a kept one, where there is one), then ``<name>_fits()``
    (``fits_function``)."""
    return OpenCLHostWriter(plan, resident=True, kept=True).function(source) + fits_function(plan)


def fits_name(plan: KernelPlan) -> str:
    """The name of ``plan``'s launch check, ``<name>_fits``."""
    return f"{plan.name}_fits"


def fits_function(plan: KernelPlan) -> str:
    """``int <name>_fits(void)``: whether this device can launch the plan's kernels with their
    work-group sizes and local memory (``mdp_cl_check_launch`` without exiting; asked once, the
    kernels built here as the function builds them). The call site runs the original code when it
    cannot (code planned for a larger device than the one it runs on, ``--device-limits``)."""
    lines = [f"MDP_FITS_FN {fits_name(plan)}(void)", "{", "    static int mdp_fits = -1;", "    if (mdp_fits < 0) {",
             "        mdp_fits = 1;"]
    for k, ln in enumerate(launch_of(plan).launches):
        if ln.items is not None:   # work-groups of the implementation's choice
            continue
        sizes = ", ".join(str(x) for x in ln.group_size)
        lines.append(f"        {{ static const size_t mdp_l{k}[{len(ln.group_size)}] = {{{sizes}}};")
        lines.append(f'          mdp_fits = mdp_fits && mdp_cl_check_launch(mdp_cl_kernel(mdp_src_{plan.name}, '
                     f'"{plan.name}", "{ln.kernel}"), "{ln.kernel}", {len(ln.group_size)}, mdp_l{k}, 0); }}')
    lines += ["    }", "    return mdp_fits;", "}"]
    return "\n".join(lines) + "\n"
