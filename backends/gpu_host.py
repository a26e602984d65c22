"""The host function that runs a ``KernelPlan`` on a GPU API, independent of the API: ``HostWriter``.

``HostWriter.function(source)`` returns the kernel source string and ``static void <name>(params)``
whose body has one structure whatever the API: kernel handles (created on first use), each
dimension's lower bound and extent, the device buffers kept across calls (``mdp_mem_<buf>`` with its
capacity ``mdp_cap_<buf>`` and this call's size ``mdp_bytes_<buf>``; ``mdp_mem_part<n>`` for the
partial results of a reduction over work-groups), the early return when a concat dimension is
empty, the work-group counts ``mdp_nwg_<dim>``, the launch shape, allocation and copies in of what
the nest reads or writes only in part, the launches (main kernel, then the combine kernel with
partials), the copies out of what it writes, and the per-call profile sum. The kernel arguments
follow ``KernelWriter.params()``: buffers, each dimension's lower bound and extent, the concat
work-group counts, the partial buffers. Everything about the launches -- bounds, work-group
counts, arguments, scratch buffers, the launches and their sizes -- is read from the plan's
``LaunchSpec`` (``mdpoly.ir.launch``); the writers compute none of it.

Subclasses (``mdpoly.backends.opencl_host.OpenCLHostWriter``, ``mdpoly.backends.cuda_host.CudaHostWriter``) give
only the API's spellings: type names, allocation, copy, launch, synchronization and profiling calls,
in the order that API wants them.

The C runtime each API's host functions call (written once per output file) is a C file of its
own, ``backends/c/<api>_host.h`` (``mdpoly.backends.c_files``).
"""

from __future__ import annotations

from typing import NamedTuple

from pycparser import c_ast, c_generator

from mdpoly.backends.c_emit import affine, param_decl
from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.launch import Count, LaunchSpec, Scratch
from mdpoly.ir.mdh import NULL_TEST_PREFIX, Affine


def c_string(text: str) -> str:
    """``text`` as the lines of a C string literal (one ``"...\\n"`` per line, indented)."""
    out: list[str] = []
    for line in text.splitlines():
        esc = line.replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'    "{esc}\\n"')
    return "\n".join(out) or '    ""'


def host_affine(a: Affine) -> str:
    """``a`` in host scope, its names (size parameters) widened before any arithmetic."""
    return str(c_generator.CGenerator(reduce_parentheses=True).visit(affine(a, a.names())))


def count_c(c: Count, ctype: str) -> str:
    """``c`` as C text in ``ctype`` arithmetic (``MDP_CDIV`` for a rounded-up quotient)."""
    terms = [f"({ctype}){v}" for v in c.values]
    if c.constant != 1 or not terms:
        terms.append(f"({ctype}){c.constant}")
    prod = " * ".join(terms)
    return f"MDP_CDIV({prod}, ({ctype}){c.divisor})" if c.divisor != 1 else prod


def launch_of(plan: KernelPlan) -> LaunchSpec:
    """``plan.launch``, which lowering always sets.

    :raises CompilerBug: for a plan made without it."""
    if plan.launch is None:
        raise CompilerBug(f"the plan of '{plan.name}' has no LaunchSpec", plan.loc)
    return plan.launch


class KernelArg(NamedTuple):
    """One kernel argument: the host variable passed by address, the operand of its ``sizeof``,
    and whether it is one of the user's scalar parameters (passed as is) rather than ours."""

    var: str
    size_of: str
    user_scalar: bool


class HostWriter:
    """The API-independent host function for one plan; subclasses override the spellings.

    :arg plan: the nest's plan.
    :arg resident: look each global buffer up among the arrays a data region keeps on the device
        (``mdpoly.ir.residency``): one found there is used as it is, neither copied in nor out.
    :arg kept: then also among the arrays the program keeps on the device between calls
        (``mdp_resident_keep`` in ``backends/c/<api>_host.h``): one the nest only reads is used
        there, copied in only at its first use (or after ``mdp_resident_invalidate``).
    """

    #: the C type of a kernel handle and of a device buffer
    kernel_type = ""
    mem_type = ""
    #: the 64-bit integer type of the kernels' extent parameters (whatever the index type)
    ix = ""
    #: qualifiers of the per-call bounds and extents
    extent_quals = ""
    #: name prefix of the embedded kernel source string
    src_prefix = "mdp_src_"

    def __init__(self, plan: KernelPlan, resident: bool = False, kept: bool = False) -> None:
        self.plan = plan
        self.resident = resident
        self.kept = kept and resident
        self.spec = launch_of(plan)
        self.name = plan.name
        self.globals = [b for b in plan.buffers if b.role == "global"]
        self.lines: list[str] = []

    def w(self, text: str) -> None:
        self.lines.append("    " + text)

    # {{{ the skeleton

    def function(self, source: str) -> str:
        """The kernel source string and ``static void <name>(params)`` that runs the plan."""
        plan, name = self.plan, self.name
        gen = c_generator.CGenerator(reduce_parentheses=True)
        decl = c_ast.FuncDecl(c_ast.ParamList([param_decl(b) for b in plan.params]),
                              c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(["void"])))
        signature = str(gen.visit(c_ast.Decl(name, [], [], ["static"], [], decl, None, None)))
        self.lines = [f"static const char {self.src_prefix}{name}[] =", c_string(source) + ";", signature, "{"]
        for var, _ in self.kernels():
            self.w(f"static {self.kernel_type} {var} = NULL;")
        self.declarations()
        empty = " || ".join(f"{v} <= 0" for v in self.spec.skip_when_empty)
        if empty:
            self.w(f"if ({empty})")
            self.w("    return;")
        for c in self.spec.counts:
            self.w(f"{c.name} = {count_c(c.count, self.ix)};")
        self.load_kernels()
        self.host_clock()
        self.launch_shape()
        self.buffers_in()
        self.launch()
        self.before_copy_out()
        for b in self.globals:
            if b.copy_out:
                self.w(f"if (mdp_bytes_{b.name}{f' && !mdp_res_{b.name}' if self.resident else ''})")
                self.w("    " + self.copy_out(b.name))
        self.finish()
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    # }}}

    # {{{ shared pieces the subclasses order

    def kernels(self) -> list[tuple[str, str]]:
        """The static handle variable and the kernel name of each launch, in launch order
        (``mdp_kernel`` for the main kernel, ``mdp_combine`` for the combine kernel)."""
        return [("mdp_kernel" if k == 0 else "mdp_combine", ln.kernel) for k, ln in enumerate(self.spec.launches)]

    def extents(self) -> None:
        """Each dimension's lower bound ``mdp_lo_<d>`` and extent ``mdp_ext_<d>`` for this call."""
        for b in self.spec.bounds:
            self.w(f"{self.extent_quals}{self.ix} {b.name} = ({self.ix})({host_affine(b.value)});")

    def kept_buffers(self) -> None:
        """The device buffers kept across calls (static; grown when a call needs more; released at
        exit), and this call's byte sizes."""
        for b in self.globals:
            self.w(f"static {self.mem_type} mdp_mem_{b.name};")
            self.w(f"static size_t mdp_cap_{b.name};")
            self.w(f"const size_t mdp_bytes_{b.name} = (size_t)({b.count}) * sizeof({b.host_type});")
            if self.resident:   # the device buffer this call uses: its own or a data region's
                self.w(f"{self.mem_type} mdp_dev_{b.name} = 0;")
                self.w(f"int mdp_res_{b.name} = 0;")
        for s in self.spec.scratch:
            self.w(f"static {self.mem_type} mdp_mem_{s.name};")
            self.w(f"static size_t mdp_cap_{s.name};")

    def group_counts(self) -> None:
        """The declarations of the values computed after the empty-call check (work-group counts)."""
        for c in self.spec.counts:
            self.w(f"{self.ix} {c.name};")

    @staticmethod
    def scratch_bytes(s: Scratch) -> str:
        """The byte size of scratch buffer ``s`` for this call."""
        return f"{count_c(s.elems, 'size_t')} * sizeof({s.elem_type})"

    def copy_in(self, name: str) -> None:
        """Copies buffer ``name`` to the device when it has any bytes (and the nest does not
        overwrite all of them)."""
        self.w(f"if ({self.copy_in_when(name)})")
        self.w("    " + self.copy_in_call(name))

    def copy_in_when(self, name: str) -> str:
        """The C condition of buffer ``name``'s copy in: it has bytes, and the nest does not write
        every one of them (``KBuffer.copy_in_unless``)."""
        unless = next((b.copy_in_unless for b in self.globals if b.name == name), "")
        # a pointer the nest reads only under its null test (``bias ? bias[o] : 0``) may be null:
        # the kernel then reads none of it, and nothing is copied
        tested = any(b.name == NULL_TEST_PREFIX + name for b in self.plan.mdh.buffers)
        return f"mdp_bytes_{name}" + (f" && {name}" if tested else "") + (f" && !({unless})" if unless else "")

    def all_resident(self) -> str:
        """A C condition: every global buffer of this call is a data region's (nothing was copied,
        so the call need not wait for the device); ``"0"`` when not looked up."""
        if not self.resident or not self.globals:
            return "0"
        return " && ".join(f"mdp_res_{b.name}" for b in self.globals)

    def kernel_args(self) -> list[KernelArg]:
        """The kernel arguments of ``LaunchSpec.args`` as host variables."""
        out: list[KernelArg] = []
        for a in self.spec.args:
            if a.kind == "scalar":
                out.append(KernelArg(a.name, a.name, True))
            elif a.kind == "index":
                out.append(KernelArg(a.name, self.ix, False))
            elif self.resident and a.kind == "buffer":
                out.append(KernelArg(f"mdp_dev_{a.name}", self.mem_type, False))
            else:
                out.append(KernelArg(f"mdp_mem_{a.name}", self.mem_type, False))
        return out

    # }}}

    # {{{ the API's spellings

    def declarations(self) -> None:
        """The locals before the early return, in the API's order (``extents``, ``kept_buffers``,
        ``group_counts`` and its own)."""
        raise NotImplementedError

    def load_kernels(self) -> None:
        """Creates ``mdp_kernel`` (and ``mdp_combine``) on first use."""
        raise NotImplementedError

    def host_clock(self) -> None:
        """``MDPOLY_PROFILE``: starts the call's host clock ``mdp_host0`` (after the kernels are built)."""

    def launch_shape(self) -> None:
        """Sets the launch shape from ``plan.grid_axes``."""
        raise NotImplementedError

    def buffers_in(self) -> None:
        """Allocates the device buffers (``allocate``) and copies in (``copy_in``)."""
        raise NotImplementedError

    def copy_in_call(self, name: str) -> str:
        """The statement that copies ``mdp_bytes_<name>`` bytes of host ``name`` to the device."""
        raise NotImplementedError

    def launch(self) -> None:
        """Passes ``kernel_args()`` and launches the main kernel and, with partials, the combine."""
        raise NotImplementedError

    def before_copy_out(self) -> None:
        """What comes between the launches and the copies out."""

    def copy_out(self, name: str) -> str:
        """The statement that copies ``mdp_bytes_<name>`` bytes of device buffer ``name`` back."""
        raise NotImplementedError

    def finish(self) -> None:
        """What ends the call: completion and the profile sum."""
        raise NotImplementedError

    # }}}
