"""``--devices``: one computation split over several local GPUs (or OpenCL devices): ``render_for_devices``.

Input: the ``KernelPlan`` of a split computation's per-part MDH (``RankSplit.sliced`` of
``mdpoly.lower.split``, the model ``--mpi`` uses: the split dimension runs over the parameters
``LO``/``EXTENT``), the ``RankSplit`` and the ``--devices`` value. Output: a ``GeneratedCode``
with

* ``static void <name>_rank(int mdp_dev, int mdp_phase, <params>)``: the target's host function
  with everything it keeps across calls (kernel handles, device buffers, events) kept per device
  slot, run on slot ``mdp_dev``'s context and queue/stream. Phase 0 allocates, copies in and
  launches without waiting (OpenCL: non-blocking reads of the results are enqueued too); phase 1
  waits for the slot and (CUDA) copies the results back, and adds the slot's profile. So the
  wrapper starts every slot before it waits for any: the devices compute concurrently.
* with ``plain`` (the whole computation's plan under a name of its own and the code the target
  renders for it without ``--devices``): that code, called by the wrapper, and nothing else,
  when the run-time list has one slot on the device that code uses (``mdp_md_cl_plain``,
  ``mdp_md_cu_plain``);
* ``static void <name>(<params>)``, called where the single-device function was: it takes the
  slots (``MDPOLY_DEVICES`` at run time, else the ``--devices`` value compiled in), cuts the split
  dimension's range into one block per slot (``mdp_md_block``: equal shares, or weighted), runs
  phase 0 then phase 1 on every slot, and assembles the results:

  - a concatenation split whose output is whole rows of the split iterator (``Gather.rows``, or
    a later subscript after fixed ones, ``_contiguous_block``): each slot copies back exactly its
    rows, straight into the user's array;
  - another concatenation split: each slot copies its output buffer to a host staging buffer,
    from which the wrapper takes the points of the slot's block;
  - a reduction split: each slot's outputs are plain partial results over its block (staged
    likewise); the wrapper combines them in slot order with the dimension's operator, then applies
    the start values and finishing expressions once, as ``--mpi`` does.

Copies in: a buffer whose every access (at most two) subscripts whole rows of its outermost
dimension gets only the rows the slot's block reads or updates (the least and greatest first
subscript over the block's box, ``_footprints``); any other buffer is copied in whole. The C runtime is
``backends/c/multi_device.h`` plus its API part (``multi_device_opencl.h``,
``multi_device_cuda.h``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pycparser import c_ast, c_generator

from mdpoly.backends.base import GeneratedCode
from mdpoly.backends.c_emit import CEmitter, param_decl
from mdpoly.backends.c_files import c_file
from mdpoly.backends.cuda import kernel_source as cuda_kernel_source
from mdpoly.backends.cuda_host import CudaHostWriter, contracts_fma
from mdpoly.backends.cuda_host import host_preamble as cuda_preamble
from mdpoly.backends.gpu_host import HostWriter, c_string, count_c, host_affine
from mdpoly.backends.opencl import kernel_source as opencl_kernel_source
from mdpoly.backends.opencl_host import OpenCLHostWriter
from mdpoly.backends.opencl_host import host_preamble as opencl_preamble
from mdpoly.backends.split_c import NoPragmas, SplitWrapper, affine_sum, c_call, c_decl, c_id, output_ref, split_points
from mdpoly.diagnostics import UnsupportedInput
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.launch import Count
from mdpoly.ir.mdh import Access, Affine
from mdpoly.ir.plan import Apply, Assign, Const, Ref, Stmt
from mdpoly.ir.ranks import EXTENT, LO, RankRefusal, RankSplit
from mdpoly.lower.split import row_elems

#: The targets whose host code can run a computation on several devices.
DEVICE_TARGETS = ("opencl", "cuda")


def devices_note(split: RankSplit | RankRefusal) -> str:
    """The report's words on how a computation was split over the devices, or why it was not."""
    if isinstance(split, RankRefusal):
        code = split.code.replace("mpi-", "devices-", 1)
        return f"not split over devices: {split.message.replace('per rank', 'per device')} [{code}]"
    d = split.original.dims[split.dim]
    if split.kind == "reduction":
        op = split.op.value if split.op else "?"
        how = f"partial results combined with '{op}' on the host"
    elif all(g.rows or _contiguous_block(split, g.output) is not None for g in split.gathers):
        how = "each device copies back its rows of the output"
    else:
        how = "each device's output points gathered on the host"
    return f"dimension '{d.iterator}' ({d.combine.value}) split over the devices; {how}"


@dataclass(frozen=True, slots=True)
class _Copy:
    """How a slot copies output buffer ``buffer`` back: ``rows`` (byte offset and length, C text
    over the per-slot parameters) straight into the user's array, else whole into staging buffer
    ``stage`` (the output's index)."""

    buffer: str
    stage: int
    rows: bool
    offset: str = "0"
    length: str = "0"


def _copies(plan: KernelPlan, split: RankSplit) -> dict[str, _Copy]:
    """The copy back of every buffer the plan copies out.

    :raises UnsupportedInput: for a written buffer that is not one of the computation's outputs."""
    m = split.original
    out: dict[str, _Copy] = {}
    rows = {g.output: g for g in split.gathers if g.rows} if split.kind == "concat" else {}
    for b in plan.buffers:
        if b.role != "global" or not b.copy_out:
            continue
        o = next((k for k, w in enumerate(m.outputs) if w.access.buffer == b.name), None)
        if o is None:
            raise UnsupportedInput(f"'{b.name}' is written but not an output of the split computation", plan.loc,
                                   code="devices-unsupported")
        g = rows.get(o)
        if g is None:
            block = _contiguous_block(split, o) if split.kind == "concat" else None
            out[b.name] = _Copy(b.name, o, False) if block is None else _Copy(b.name, o, True, *block)
            continue
        size = f"(long long)sizeof({m.outputs[o].elem_type})"
        first = host_affine(affine_sum(g.row0, Affine.of({LO: 1})))
        out[b.name] = _Copy(b.name, o, True, f"({first}) * ({g.row_elems}) * {size}",
                            f"(long long)({EXTENT}) * ({g.row_elems}) * {size}")
    return out


def _substitute(a: Affine, values: dict[str, Affine]) -> Affine:
    """``a`` with each name of ``values`` replaced by its value."""
    out = Affine.of({n: c for n, c in a.terms if n not in values}, a.constant)
    for n, c in a.terms:
        if n in values:
            v = values[n]
            out = affine_sum(out, Affine.of({m: c * k for m, k in v.terms}, c * v.constant))
    return out


def _contiguous_block(split: RankSplit, o: int) -> tuple[str, str] | None:
    """Byte offset and length (C text over the per-slot parameters) of output ``o``'s points of a
    slot's block when they are whole rows of one subscript: the subscripts before it are constant
    over the block (only iterators of one point, e.g. a batch of 1), it is the split iterator plus
    constants, and no later subscript names the split iterator (``out[n][p][q][k]`` split along
    ``p`` with one ``n``). ``None`` otherwise (the output is staged)."""
    m = split.original
    w = m.outputs[o]
    buf = m.buffer(w.access.buffer)
    idx = w.access.index
    it = m.dims[split.dim].iterator
    single = {d.iterator: d.lower for d in m.dims if d.static_extent == 1}
    iters = {d.iterator for d in m.dims}
    t = next((k for k, e in enumerate(idx) if e.coeff(it)), None)
    if (t is None or t == 0 or buf.kind != "array" or len(buf.shape) != len(idx)
            or any(not x.strip() for x in buf.shape[1:]) or idx[t].coeff(it) != 1
            or idx[t].names() & (iters - {it}) or any(e.coeff(it) for e in idx[t + 1:])
            or any(e.names() & (iters - set(single)) for e in idx[:t])):
        return None
    at = [host_affine(_substitute(e, single)) for e in idx[:t]]
    at.append(host_affine(_substitute(idx[t], {it: Affine.of({LO: 1})})))
    at += ["0"] * (len(idx) - t - 1)
    row = " * ".join(["1", *(f"(long long)({x})" for x in buf.shape[t + 1:])])
    first = f"(long long)((char *)&{buf.name}{''.join(f'[{x}]' for x in at)} - (char *){buf.name})"
    return first, f"(long long)({EXTENT}) * {row} * (long long)sizeof({w.elem_type})"


def _bound(a: Affine, dims: dict[str, tuple[Affine, Affine]], low: bool) -> str:
    """C text: the least (``low``) or greatest value of ``a`` over the box of ``dims`` (iterator ->
    lower bound, extent); other names are the host function's parameters."""
    parts = [str(a.constant)]
    for n, c in a.terms:
        if n not in dims:
            parts.append(f"{c} * (long long)({n})")
            continue
        lo, ext = dims[n]
        at_lo = (c > 0) == low
        point = host_affine(lo) if at_lo else f"({host_affine(lo)}) + ({host_affine(ext)}) - 1"
        parts.append(f"{c} * (long long)({point})")
    return "(" + " + ".join(parts) + ")"


def _footprints(plan: KernelPlan, split: RankSplit) -> dict[str, tuple[str, str]]:
    """The bytes of each copied-in buffer that a slot's block reads or updates, where they are
    whole rows of its outermost subscript: buffer -> (first byte, end byte), C text over the
    per-slot function's parameters (the block is ``[LO, LO + EXTENT)``). A buffer missing here is
    copied in whole."""
    m = split.sliced
    dims = {d.iterator: (d.lower, d.extent) for d in m.dims}
    accesses: dict[str, list[Access]] = {}
    for acc in (*m.inputs, *(o.access for o in m.outputs),
                *(a for o in m.outputs if o.finish is not None for a in o.finish.inputs)):
        accesses.setdefault(acc.buffer, []).append(acc)
    inits = " ".join(o.init for o in m.outputs if o.init)
    out: dict[str, tuple[str, str]] = {}
    for b in plan.buffers:
        accs = accesses.get(b.name)
        if b.role != "global" or not b.copy_in or not accs or re.search(rf"\b{re.escape(b.name)}\b", inits):
            continue
        buf = m.buffer(b.name)
        if buf.kind == "scalar" or any(not a.index for a in accs):
            continue
        elems = {row_elems(buf, len(a.index)) for a in accs}
        if len(elems) != 1 or None in elems:
            continue
        row = f"({next(iter(elems))}) * (long long)sizeof({b.host_type})"
        if len(accs) > 2:
            continue   # two accesses at most (the common pair: an input and the output it updates)
        firsts = [_bound(a.index[0], dims, True) for a in accs]
        lasts = [_bound(a.index[0], dims, False) for a in accs]
        first = firsts[0] if len(firsts) == 1 else f"MDP_MIN_LL({firsts[0]}, {firsts[1]})"
        last = lasts[0] if len(lasts) == 1 else f"MDP_MAX_LL({lasts[0]}, {lasts[1]})"
        out[b.name] = (f"({first}) * {row}", f"(({last}) + 1) * {row}")
    return out


def _signature(plan: KernelPlan) -> str:
    gen = c_generator.CGenerator(reduce_parentheses=True)
    ints = [c_ast.Decl(n, [], [], [], [], c_ast.TypeDecl(n, [], None, c_ast.IdentifierType(["int"])), None, None)
            for n in ("mdp_dev", "mdp_phase")]
    decl = c_ast.FuncDecl(c_ast.ParamList([*ints, *(param_decl(b) for b in plan.params)]),
                          c_ast.TypeDecl(plan.name, [], None, c_ast.IdentifierType(["void"])))
    return str(gen.visit(c_ast.Decl(plan.name, [], [], ["static"], [], decl, None, None)))


class _SlotMixin(HostWriter):
    """What both APIs' per-slot functions share: per-slot statics shadowed by locals."""

    copies: dict[str, _Copy]

    def slot_statics(self) -> None:
        """Kernel handles and device buffers kept per slot; locals of this slot's ones."""
        for var, _ in self.kernels():
            self.w(f"static {self.kernel_type} {var}_d[MDP_MD_MAX];")
            self.w(f"{self.kernel_type} {var} = {var}_d[mdp_dev];")
        self.w("static int mdp_ran_d[MDP_MD_MAX];")
        self.w("static char mdp_pname[MDP_MD_MAX][96];")
        for b in self.globals:
            self.w(f"static {self.mem_type} mdp_mem_{b.name}_d[MDP_MD_MAX];")
            self.w(f"static size_t mdp_cap_{b.name}_d[MDP_MD_MAX];")
            self.w(f"{self.mem_type} mdp_mem_{b.name} = mdp_mem_{b.name}_d[mdp_dev];")
            self.w(f"const size_t mdp_bytes_{b.name} = (size_t)({b.count}) * sizeof({b.host_type});")
        for s in self.spec.scratch:
            self.w(f"static {self.mem_type} mdp_mem_{s.name}_d[MDP_MD_MAX];")
            self.w(f"static size_t mdp_cap_{s.name}_d[MDP_MD_MAX];")
            self.w(f"{self.mem_type} mdp_mem_{s.name} = mdp_mem_{s.name}_d[mdp_dev];")

    footprints: dict[str, tuple[str, str]]

    def ranged_copy_in(self, name: str, write: str) -> None:
        """Copies in buffer ``name``: only its footprint's bytes when it has one, else whole;
        ``write``: the API's write call with ``{mem}``, ``{src}``, ``{off}``, ``{len}`` fields."""
        if name not in self.footprints:
            self.w(f"if (mdp_bytes_{name})")
            self.w("    " + write.format(mem=f"mdp_mem_{name}", src=f"(const void *){name}", off="0",
                                         len=f"mdp_bytes_{name}"))
            return
        first, end = self.footprints[name]
        self.w("{")
        self.w(f"    long long mdp_a = {first}, mdp_b = {end};")
        self.w("    if (mdp_a < 0)")
        self.w("        mdp_a = 0;")
        self.w(f"    if (mdp_b > (long long)mdp_bytes_{name})")
        self.w(f"        mdp_b = (long long)mdp_bytes_{name};")
        self.w("    if (mdp_b > mdp_a)")
        self.w("        " + write.format(mem=f"mdp_mem_{name}", src=f"(const char *){name} + mdp_a",
                                         off="(size_t)mdp_a", len="(size_t)(mdp_b - mdp_a)"))
        self.w("}")

    def profile_name(self) -> None:
        self.w("        if (!mdp_pname[mdp_dev][0])")
        self.w(f'            snprintf(mdp_pname[mdp_dev], sizeof mdp_pname[0], "%s#%d", "{self.name}", mdp_dev);')

    def start(self) -> None:
        """The early return of an empty block, then the work-group counts."""
        self.w("mdp_ran_d[mdp_dev] = 0;")
        empty = " || ".join(f"{v} <= 0" for v in self.spec.skip_when_empty)
        if empty:
            self.w(f"if ({empty})")
            self.w("    return;")
        self.w("mdp_ran_d[mdp_dev] = 1;")
        for c in self.spec.counts:
            self.w(f"{c.name} = {self.count_text(c.count)};")

    def count_text(self, count: Count) -> str:
        return count_c(count, self.ix)

    def copy_back(self, read: str, event: str) -> None:
        """The copy back of every output; ``read``: the API's read call with ``{mem}``, ``{dst}``,
        ``{off}``, ``{len}`` fields."""
        for name, c in self.copies.items():
            if c.rows:
                self.w("{")
                self.w(f"    long long mdp_off = {c.offset}, mdp_len = {c.length};")
                self.w(f"    if (mdp_off >= 0 && mdp_len > 0 && (size_t)mdp_off < mdp_bytes_{name}) {{")
                self.w(f"        if ((size_t)mdp_len > mdp_bytes_{name} - (size_t)mdp_off)")
                self.w(f"            mdp_len = (long long)(mdp_bytes_{name} - (size_t)mdp_off);")
                self.w("        " + read.format(mem=f"mdp_mem_{name}", dst=f"(char *){name} + mdp_off",
                                                 off="(size_t)mdp_off", len="(size_t)mdp_len", event=event))
                self.w("    }")
                self.w("}")
            else:
                self.w(f"if (mdp_bytes_{name})")
                self.w("    " + read.format(mem=f"mdp_mem_{name}",
                                            dst=f"mdp_md_stage(mdp_dev, {c.stage}, mdp_bytes_{name})",
                                            off="0", len=f"mdp_bytes_{name}", event=event))


class OpenCLSlotWriter(_SlotMixin, OpenCLHostWriter):
    """The per-slot OpenCL host function (see the module docstring)."""

    def __init__(self, plan: KernelPlan, copies: dict[str, _Copy], footprints: dict[str, tuple[str, str]]) -> None:
        super().__init__(plan)
        self.copies = copies
        self.footprints = footprints

    def function(self, source: str) -> str:
        name, spec = self.name, self.spec
        self.lines = [f"static const char {self.src_prefix}{name}[] =", c_string(source) + ";",
                      _signature(self.plan), "{"]
        nk = len(spec.launches)
        nt = max(sum(1 for b in self.globals if b.copy_in) + len(self.copies), 1)
        self.slot_statics()
        self.w("cl_command_queue mdp_cl_queue = mdp_md_cl_queue[mdp_dev];")
        self.w("const int mdp_cl_profile = mdp_md_profile;")
        self.w(f"static cl_event mdp_kev_d[MDP_MD_MAX][{nk}], mdp_tev_d[MDP_MD_MAX][{nt}];")
        self.w("static int mdp_nk_d[MDP_MD_MAX], mdp_nt_d[MDP_MD_MAX];")
        self.w("cl_event *mdp_kev = mdp_kev_d[mdp_dev], *mdp_tev = mdp_tev_d[mdp_dev];")
        self.w("int mdp_nk = 0, mdp_nt = 0;")
        self.extents()
        for k, ln in enumerate(spec.launches):
            if ln.items is None:
                n = len(ln.groups)
                self.w(f"size_t mdp_local{_suffix(k)}[{n}], mdp_global{_suffix(k)}[{n}];")
        self.group_counts()
        self.w("if (mdp_phase) {")
        self.w('    mdp_cl_check(clFinish(mdp_cl_queue), "clFinish");')
        self.w("    if (mdp_cl_profile && mdp_ran_d[mdp_dev]) {")
        self.profile_name()
        self.w("        mdp_cl_profile_add(mdp_pname[mdp_dev], mdp_kev, mdp_nk_d[mdp_dev], mdp_tev, mdp_nt_d[mdp_dev]);")
        self.w("    }")
        self.w("    return;")
        self.w("}")
        self.w("mdp_nk_d[mdp_dev] = mdp_nt_d[mdp_dev] = 0;")
        self.start()
        for var, kernel in self.kernels():
            self.w(f"if (!{var})")
            self.w(f'    {var} = {var}_d[mdp_dev] = mdp_md_cl_kernel(mdp_dev, {self.src_prefix}{name}, "{name}", '
                   f'"{kernel}");')
        self.launch_shape()
        for b in self.globals:
            flags = "CL_MEM_READ_WRITE" if b.written else "CL_MEM_READ_ONLY"
            self.w(f"mdp_md_cl_buffer(mdp_dev, &mdp_mem_{b.name}_d[mdp_dev], &mdp_cap_{b.name}_d[mdp_dev], "
                   f"mdp_bytes_{b.name}, {flags});")
            self.w(f"mdp_mem_{b.name} = mdp_mem_{b.name}_d[mdp_dev];")
            if b.copy_in:
                self.ranged_copy_in(b.name, "mdp_cl_check(clEnqueueWriteBuffer(mdp_cl_queue, {mem}, CL_FALSE, {off}, "
                                    "{len}, {src}, 0, NULL, mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL), "
                                    '"clEnqueueWriteBuffer");')
        for s in spec.scratch:
            self.w(f"mdp_md_cl_buffer(mdp_dev, &mdp_mem_{s.name}_d[mdp_dev], &mdp_cap_{s.name}_d[mdp_dev], "
                   f"{self.scratch_bytes(s)}, CL_MEM_READ_WRITE);")
            self.w(f"mdp_mem_{s.name} = mdp_mem_{s.name}_d[mdp_dev];")
        self.launch()
        self.copy_back("mdp_cl_check(clEnqueueReadBuffer(mdp_cl_queue, {mem}, CL_FALSE, {off}, {len}, {dst}, 0, "
                       'NULL, {event}), "clEnqueueReadBuffer");', "mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL")
        self.w("mdp_nk_d[mdp_dev] = mdp_nk;")
        self.w("mdp_nt_d[mdp_dev] = mdp_nt;")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def launch(self) -> None:
        # every argument set on every call: the slots' kernels are distinct objects
        args = self.kernel_args()
        for var, _ in self.kernels():
            for a, arg in enumerate(args):
                self.w(f'mdp_cl_check(clSetKernelArg({var}, {a}, sizeof({arg.size_of}), &{arg.var}), "clSetKernelArg");')
        event = 'mdp_cl_profile ? &mdp_kev[mdp_nk++] : NULL), "clEnqueueNDRangeKernel");'
        for k, ((var, _), ln) in enumerate(zip(self.kernels(), self.spec.launches)):
            if ln.items is None:
                self.w(f"mdp_cl_check(clEnqueueNDRangeKernel(mdp_cl_queue, {var}, {len(ln.groups)}, NULL, "
                       f"mdp_global{_suffix(k)}, mdp_local{_suffix(k)}, 0, NULL, {event}")
                continue
            self.w("{")
            self.w(f"    size_t mdp_items = {count_c(ln.items, 'size_t')};")
            self.w(f"    mdp_cl_check(clEnqueueNDRangeKernel(mdp_cl_queue, {var}, 1, NULL, &mdp_items, NULL, 0, "
                   f"NULL, {event}")
            self.w("}")


class CudaSlotWriter(_SlotMixin, CudaHostWriter):
    """The per-slot CUDA host function (see the module docstring)."""

    def __init__(self, plan: KernelPlan, copies: dict[str, _Copy], footprints: dict[str, tuple[str, str]]) -> None:
        super().__init__(plan)
        self.copies = copies
        self.footprints = footprints

    def function(self, source: str) -> str:
        name, spec = self.name, self.spec
        self.lines = [f"static const char {self.src_prefix}{name}[] =", c_string(source) + ";",
                      _signature(self.plan), "{"]
        self.slot_statics()
        self.w("CUstream mdp_s = mdp_md_cu_stream[mdp_dev];")
        self.extents()
        self.group_counts()
        for k, ln in enumerate(spec.launches):
            size = ", ".join(str(x) for x in (*ln.group_size, 1, 1, 1)[:3])
            self.w(f"const unsigned int mdp_block{_suffix(k)}[3] = {{{size}}};")
            self.w(f"long long mdp_blocks{_suffix(k)};")
        self.w("mdp_md_cu_use(mdp_dev);")
        self.w("if (mdp_phase) {")
        self.w("    if (!mdp_ran_d[mdp_dev])")
        self.w("        return;")
        self.w('    mdp_cu_check(cuStreamSynchronize(mdp_s), "cuStreamSynchronize");')
        self.w("    if (mdp_cu_profile)")
        self.w("        mdp_md_cu_record(mdp_dev, 3);")
        self.copy_back('mdp_cu_check(cuMemcpyDtoHAsync({dst}, {mem} + {off}, {len}, mdp_s), "cuMemcpyDtoHAsync");',
                       "")
        self.w("    if (mdp_cu_profile) {")
        self.w("        mdp_md_cu_record(mdp_dev, 4);")
        self.profile_name()
        self.w("        mdp_md_cu_profile_add(mdp_dev, mdp_pname[mdp_dev]);")
        self.w("    }")
        self.w('    mdp_cu_check(cuStreamSynchronize(mdp_s), "cuStreamSynchronize");')
        self.w("    return;")
        self.w("}")
        self.start()
        fmad = 1 if contracts_fma(self.plan) else 0
        kernels = self.kernels()
        self.w(f"if (!{kernels[0][0]}) {{")
        self.w(f'    CUmodule mdp_mod = mdp_md_cu_module(mdp_dev, {self.src_prefix}{name}, "{name}", {fmad});')
        for var, kernel in kernels:
            self.w(f'    {var} = {var}_d[mdp_dev] = mdp_cu_function(mdp_mod, "{kernel}");')
        self.w("}")
        self.launch_shape()
        for b in self.globals:
            self.w(f"mdp_cu_buffer(&mdp_mem_{b.name}_d[mdp_dev], &mdp_cap_{b.name}_d[mdp_dev], mdp_bytes_{b.name});")
            self.w(f"mdp_mem_{b.name} = mdp_mem_{b.name}_d[mdp_dev];")
        for s in spec.scratch:
            self.w(f"mdp_cu_buffer(&mdp_mem_{s.name}_d[mdp_dev], &mdp_cap_{s.name}_d[mdp_dev], "
                   f"{self.scratch_bytes(s)});")
            self.w(f"mdp_mem_{s.name} = mdp_mem_{s.name}_d[mdp_dev];")
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_md_cu_record(mdp_dev, 0);")
        for b in self.globals:
            if b.copy_in:
                self.ranged_copy_in(b.name, 'mdp_cu_check(cuMemcpyHtoDAsync({mem} + {off}, {src}, {len}, mdp_s), '
                                    '"cuMemcpyHtoDAsync");')
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_md_cu_record(mdp_dev, 1);")
        args = [f"(void *)&{a.var}" if a.user_scalar else f"&{a.var}" for a in self.kernel_args()]
        self.w(f"{{ void *mdp_args[] = {{{', '.join(args)}}};")
        for k, (var, _) in enumerate(kernels):
            x = _suffix(k)
            self.w(f"  mdp_cu_check(cuLaunchKernel({var}, (unsigned int)mdp_blocks{x}, 1, 1, mdp_block{x}[0], "
                   f'mdp_block{x}[1], mdp_block{x}[2], 0, mdp_s, mdp_args, NULL), "cuLaunchKernel");')
        self.w("}")
        self.w("if (mdp_cu_profile)")
        self.w("    mdp_md_cu_record(mdp_dev, 2);")
        self.lines.append("}")
        return "\n".join(self.lines) + "\n"

    def copy_back(self, read: str, event: str) -> None:
        start = len(self.lines)
        super().copy_back(read, event)
        self.lines[start:] = ["    " + line for line in self.lines[start:]]


def _suffix(k: int) -> str:
    return f"_{k}" if k else ""


def _slots(name: str) -> c_ast.Decl:
    """``long long name[MDP_MD_MAX]``: one value per device slot."""
    t = c_ast.ArrayDecl(c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(["long", "long"])), c_id("MDP_MD_MAX"), [])
    return c_ast.Decl(name, [], [], [], [], t, None, None)


class _DeviceWrapper(SplitWrapper):
    """``static void <name>(<params>)``: blocks per slot, both phases on every slot, the results."""

    def __init__(self, split: RankSplit, api: str, spec: str, staged: set[int],
                 plain: c_ast.FuncCall | None = None) -> None:
        super().__init__(split)
        self.api = api
        self.spec = spec
        self.staged_outputs = staged
        self.plain = plain

    def staged(self, o: int) -> str:
        """C text: output ``o``'s value at the current point in the staging buffer ``mdp_st``."""
        w = self.m.outputs[o]
        target = self.c(self.em.value(output_ref(self.m, w.access)))
        return f"*({w.elem_type} *)(mdp_st + ((char *)&{target} - (char *)({w.access.buffer})))"

    def per_slot(self, first: str, body: list[c_ast.Node]) -> c_ast.For:
        d = c_id("mdp_d")
        return c_ast.For(c_ast.Assignment("=", d, c_id(first)), c_ast.BinaryOp("<", d, c_id("mdp_nd")),
                         c_ast.UnaryOp("p++", d), c_ast.Compound(body))

    def stage_of(self, o: int) -> c_ast.Node:
        return c_ast.Assignment("=", c_id("mdp_st"), c_call("mdp_md_stage", c_id("mdp_d"), c_id(str(o)), c_id("0")))

    def gather_packed(self) -> list[c_ast.Node]:
        body: list[c_ast.Node] = [c_ast.Assignment("=", c_id("mdp_my_lo"), c_id("mdp_los[mdp_d]")),
                                  c_ast.Assignment("=", c_id("mdp_my_n"), c_id("mdp_ns[mdp_d]"))]
        packed = sorted(self.staged_outputs)
        if not packed:
            return []
        for o in packed:
            w = self.m.outputs[o]
            body.append(self.stage_of(o))
            body += self.stmts(split_points(self.split, self.concat, (Assign(output_ref(self.m, w.access), Const(self.staged(o))),),
                                       mine=True))
        return [self.per_slot("0", body)]

    def combine(self) -> list[c_ast.Node]:
        m, op = self.m, self.split.op
        assert op is not None
        k = (Affine.of({"mdp_k": 1}),)
        out: list[c_ast.Node] = []
        for d, first in (("0", True), ("1", False)):
            body: list[c_ast.Node] = []
            for o in range(len(m.outputs)):
                value = Const(self.staged(o))
                stmt: Stmt = (Assign(Ref(f"mdp_red{o}", k), value) if first
                              else Assign(Ref(f"mdp_red{o}", k), Apply(op, Ref(f"mdp_red{o}", k), value)))
                body += [self.stage_of(o), self.reset_k(), *self.stmts(split_points(self.split, self.concat, (stmt,),
                                                                                 mine=False))]
            if first:
                out.append(c_ast.Assignment("=", c_id("mdp_d"), c_id(d)))
                out += body
            else:
                out.append(self.per_slot(d, body))
        # the start values and finishing expressions, once
        return out + self.apply_partials()

    def function(self) -> str:
        split, m = self.split, self.m
        init = "mdp_md_cl_init" if self.api == "opencl" else "mdp_md_cu_init"
        body: list[c_ast.Node] = [
            c_decl("mdp_d", "int"), c_decl("mdp_nd", "int"), c_decl("mdp_my_lo", "long long"),
            c_decl("mdp_my_n", "long long"), _slots("mdp_los"), _slots("mdp_ns"), c_decl("mdp_t0", "double"),
            c_decl("mdp_st", "char", c_id("NULL"), pointer=True), c_decl("mdp_k", "long long", c_id("0")),
            c_call(init, c_ast.Constant("string", '"' + self.spec + '"')),
        ]
        if self.plain is not None:   # one slot on the plain code's device: the plain code, as it is
            body.append(c_ast.If(c_call(f"mdp_md_{'cl' if self.api == 'opencl' else 'cu'}_plain"), c_ast.Compound([
                c_ast.Assignment("=", c_id("mdp_t0"), c_call("mdp_md_now")), self.plain,
                c_call("mdp_md_profile_add", c_ast.Constant("string", f'"{m.name}"'),
                      c_ast.BinaryOp("-", c_call("mdp_md_now"), c_id("mdp_t0"))),
                c_ast.Return(None)]), None))
        body += [
            c_ast.Assignment("=", c_id("mdp_nd"), c_id("mdp_md_n")),
            self.per_slot("0", [c_call("mdp_md_block", c_id(LO), c_id(EXTENT), c_id("mdp_d"), c_id("&mdp_los[mdp_d]"),
                                      c_id("&mdp_ns[mdp_d]"))]),
        ]
        if split.kind == "reduction":
            body += self.reduction_before()
        body.append(c_ast.Assignment("=", c_id("mdp_t0"), c_call("mdp_md_now")))
        for phase in ("0", "1"):
            args = [c_id("mdp_d"), c_id(phase)]
            args += [c_id("mdp_los[mdp_d]" if b.name == LO else "mdp_ns[mdp_d]" if b.name == EXTENT else b.name)
                     for b in split.params]
            body.append(self.per_slot("0", [c_ast.FuncCall(c_id(split.sliced.name), c_ast.ExprList(args))]))
        if self.api == "cuda":
            body.append(c_call("mdp_md_cu_done"))
        body += self.gather_packed() if split.kind == "concat" else self.combine()
        body.append(c_call("mdp_md_profile_add", c_ast.Constant("string", f'"{m.name}"'),
                          c_ast.BinaryOp("-", c_call("mdp_md_now"), c_id("mdp_t0"))))
        body += [c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(["void"]))),
                            c_id(v)) for v in ("mdp_my_lo", "mdp_my_n", "mdp_st", "mdp_k")]
        params = c_ast.ParamList([param_decl(b) for b in split.params])
        ftype = c_ast.FuncDecl(params, c_ast.TypeDecl(m.name, [], None, c_ast.IdentifierType(["void"])))
        fdef = c_ast.FuncDef(c_ast.Decl(m.name, [], [], ["static"], [], ftype, None, None), None,
                             c_ast.Compound(body))
        return self.c(fdef)


def check_spec(spec: str) -> str | None:
    """Why ``spec`` is not a ``--devices`` value ("all", a count, or device indices "0,1"), or ``None``."""
    if spec == "all" or (spec.isdigit() and 1 <= int(spec) <= 16):
        return None
    parts = spec[:-1].split(",") if spec.endswith(",") else spec.split(",")
    if "," in spec and all(p.isdigit() for p in parts) and len(parts) <= 16:
        return None
    return (f"expects 'all', a device count from 1 to 16, or a list of at most 16 device indices such as "
            f"'0,1' (one device: '1,'), got '{spec}'")


def render_for_devices(plan: KernelPlan, split: RankSplit, api: str, spec: str,
                       plain: tuple[KernelPlan, GeneratedCode] | None = None) -> GeneratedCode:
    """The code running ``plan`` (of ``split.sliced``) over the devices ``spec``; see the module docstring.
    ``plain``: the plan of the whole computation under a name of its own and the code the target
    renders for it without ``--devices``; when given, its function is generated too and called
    instead of the slots' when the run-time list has one slot on the device that code uses.

    :raises UnsupportedInput: when a written buffer is not an output of the computation."""
    copies = _copies(plan, split)
    footprints = _footprints(plan, split)
    writer: HostWriter
    if api == "opencl":
        source = opencl_kernel_source(plan)
        writer = OpenCLSlotWriter(plan, copies, footprints)
        preamble = opencl_preamble() + c_file("multi_device.h") + c_file("multi_device_opencl.h")
        headers: tuple[str, ...] = ("CL/cl.h", "stdio.h", "stdlib.h", "string.h")
        flags: tuple[str, ...] = ("-lOpenCL",)
        ext = ".cl"
    else:
        source = cuda_kernel_source(plan)
        writer = CudaSlotWriter(plan, copies, footprints)
        preamble = cuda_preamble() + c_file("multi_device.h") + c_file("multi_device_cuda.h")
        headers = ("cuda.h", "nvrtc.h", "stdio.h", "stdlib.h", "string.h")
        flags = ("-lcuda", "-lnvrtc")
        ext = ".cu"
    staged = {c.stage for c in copies.values() if not c.rows}
    names = {b.name for b in split.params}
    plain_call, plain_text = None, ""
    plain_sources: tuple[tuple[str, str], ...] = ()
    if plain is not None and all(b.name in names for b in plain[0].params):
        # the wrapper's parameters are the plain function's (same declarations): passed as they are
        plain_call = c_ast.FuncCall(c_id(plain[0].name), c_ast.ExprList([c_id(b.name) for b in plain[0].params]))
        plain_text, plain_sources = plain[1].definition + "\n", plain[1].device_sources
    definition = (plain_text + writer.function(source) + "\n"
                  + _DeviceWrapper(split, api, spec, staged, plain_call).function())
    call = CEmitter(NoPragmas()).call(replace(plan, name=split.original.name))
    return GeneratedCode(name=split.original.name, definition=definition, call=call, headers=headers, flags=flags,
                         device_sources=(*plain_sources, (plan.name + ext, source)), preamble=preamble)


