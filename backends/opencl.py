"""``OpenCLBackend``: renders a ``KernelPlan`` as OpenCL C kernels plus C host code (OpenCL 1.2 API).

Device code only spells what the plan decided: ids from ``get_group_id``/``get_local_id``
(decoded with div/mod where several MDH dims share an NDRange dimension), the private tile
loops with remainder guards, the strided reduction loops, the ``__local`` tree combine with
``barrier(CLK_LOCAL_MEM_FENCE)``, the stores, and the combine kernel over per-work-group
partials. Tuned values are ``#define`` constants. Host code is in ``mdpoly.backends.opencl_host``.
"""

from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from mdpoly.backends.base import Backend, GeneratedCode
from mdpoly.backends.c_emit import CEmitter
from mdpoly.backends.c_files import c_file
from mdpoly.backends.opencl_host import host_function, host_preamble
from mdpoly.backends.resident import device_data
from mdpoly.ir.kernel import KDim, KernelPlan, KInput, KOutput
from mdpoly.ir.mdh import Combine, Precondition
from mdpoly.ir.plan import FExpr, Loop, ParallelRegion, ThreadCount, Var
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu_params import async_buffer_elems

OPENCL_CAPS = TargetCaps(name="opencl", parallel_layers=2, simd=False, cores=8, max_work_group_size=256,
                         max_work_item_sizes=(256, 256, 256), local_mem_bytes=32 * 1024, compute_units=8,
                         preferred_wg_multiple=32, is_gpu=False)

#: C spellings the user's expressions may contain (after glibc's cpp) that OpenCL C lacks: the C
#: file ``backends/c/opencl_kernel.cl``, one line each.
COMPAT_MACROS = tuple(c_file("opencl_kernel.cl").splitlines())

#: Element types (device spellings) whose double-buffered copies (``KernelPlan.async_copy``) move as
#: 4- or 8-byte asynchronous chunks; other types are stored by the work-items themselves.
ASYNC_ELEM_TYPES = frozenset({"float", "int", "uint", "double", "long", "ulong"})


#: C's ``long long`` types in device code: OpenCL C reserves ``long long`` (PoCL computes it in
#: 128 bits, so ``(unsigned long long) x << 13`` keeps bits a host drops); its ``long`` is the
#: 64 bits a host's ``long long`` has (CUDA's prelude defines the same names)
_LONG_LONG = {"long long": "long", "long long int": "long", "signed long long": "long",
              "signed long long int": "long", "unsigned long long": "ulong", "unsigned long long int": "ulong"}


def _sixty_four_bit(node: c_ast.Node) -> c_ast.Node:
    """``node`` (edited in place) with casts to ``long long`` types and ``LL`` literals spelled as
    device code's 64-bit ``long``/``ulong`` (``0x9E37ull`` as ``0x9E37ul``)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.Cast) and isinstance(n.to_type.type, c_ast.TypeDecl) \
                and isinstance(n.to_type.type.type, c_ast.IdentifierType):
            names = n.to_type.type.type
            spelled = _LONG_LONG.get(" ".join(names.names))
            if spelled is not None:
                names.names = [spelled]
        elif isinstance(n, c_ast.Constant) and n.type != "string" and n.value[-2:].lower() in ("ll", "lu") \
                and "ll" in n.value.lower():
            n.value = n.value[:-3] + n.value[-3:].replace("ll", "l").replace("LL", "L")
        stack.extend(child for _name, child in n.children())
    return node


class _NoDialect:
    """The expression printer needs no loop spellings (kernel loops are spelled here)."""

    def loop_pragmas(self, loop: Loop) -> list[str]:
        return []

    def thread_count(self, stmt: ThreadCount) -> c_ast.Node:
        raise TypeError("no thread counts in OpenCL kernels")

    def region_pragmas(self, region: ParallelRegion) -> list[str]:
        return []

    def thread_id(self) -> c_ast.Node:
        raise TypeError("no thread ids in OpenCL kernels")


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def open(self, head: str) -> None:
        self(head + " {")
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
        self("}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _combine(op: Combine, a: str, b: str) -> str:
    if op is Combine.ADD:
        return f"{a} + {b}"
    if op is Combine.MUL:
        return f"{a} * {b}"
    if op.is_bitwise:
        return f"({a}) {op.value} ({b})"
    cmp = ">" if op is Combine.MAX else "<"
    return f"(({a}) {cmp} ({b}) ? ({a}) : ({b}))"


def _arg_take(op: Combine, rule: str, va: str, ia: str, vb: str, ib: str, sentinel: str = "") -> str:
    """When an argmax/argmin pair ``(vb, ib)`` replaces ``(va, ia)``. ``seq``: the next point in
    the loop's order, under the loop's own comparison (``>``, or ``>=`` keeping the last of equal
    values); ``merge``: partial pairs of any parts of the range -- the better value, among equal
    values the smaller index (``>=``: the larger); ``start``: the merged pair ``(vb, ib)`` of the
    whole range against the start value ``(va, ia)``, which comes before every index (with
    ``>=``, only a pair some point gave: its index is not ``sentinel``). No comparison takes a
    NaN."""
    better = ">" if op.value_op is Combine.MAX else "<"
    eq = "=" if op.keeps_last else ""
    if rule == "seq":
        return f"({vb}) {better}{eq} ({va})"
    if rule == "merge":
        return f"({vb}) {better} ({va}) || (({vb}) == ({va}) && ({ib}) {'>' if op.keeps_last else '<'} ({ia}))"
    if op.keeps_last:
        return f"({vb}) {better}= ({va}) && ({ib}) != ({sentinel})"
    return f"({vb}) {better} ({va})"


def _par(text: str) -> str:
    t = text.strip()
    return t if t.isidentifier() or t.isdigit() else f"({t})"


def _pow2_ceil(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


class KernelWriter:
    """Writes the OpenCL C source of one ``KernelPlan``.

    The C-style kernel renderer shared with CUDA (``mdpoly.backends.cuda.CudaKernelWriter``): every
    spelling that differs between the two (qualifiers, ids, barrier, prelude) is a class
    attribute or one of the small methods in the ``spellings`` section.
    """

    kernel_head = "__kernel void"
    global_qual = "__global "
    local_qual = "__local"
    local_ptr_qual = "__local "
    barrier = "barrier(CLK_LOCAL_MEM_FENCE);"

    def __init__(self, plan: KernelPlan) -> None:
        self.k = plan
        self.ix = plan.index_type
        self.expr = CEmitter(_NoDialect())

    # {{{ spellings

    def local_array(self, elem_type: str, name: str, n: int, align: int) -> str:
        """A work-group array, ``align`` bytes aligned (vector reads) when above 1."""
        if align <= 1:
            return f"{self.local_qual} {elem_type} {name}[{n}];"
        return f"{self.local_qual} {elem_type} {name}[{n}] __attribute__((aligned({align})));"

    def local_vector(self, elem_type: str, width: int, name: str, base: str) -> str:
        """An aligned vector of ``width`` elements read from local array ``name`` at ``base``."""
        return f"*(const {self.local_ptr_qual}{elem_type}{width} *)({name} + {base})"

    def local_vector_lvalue(self, elem_type: str, width: int, name: str, base: str) -> str:
        """An aligned vector of ``width`` elements of local array ``name`` at ``base``, to store to."""
        return f"*({self.local_ptr_qual}{elem_type}{width} *)({name} + {base})"

    def global_vector(self, elem_type: str, width: int, ptr: str) -> str:
        """An aligned vector of ``width`` elements read from global memory at address ``ptr``."""
        return f"*(const {self.global_qual}{elem_type}{width} *)({ptr})"

    def address_bits(self, ptr: str) -> str:
        """A global address as an unsigned integer (for its alignment test)."""
        return f"(ulong)({ptr})"

    #: statements that close a group of asynchronous copies and wait for all groups but the last one
    #: (``KernelPlan.async_copy``); OpenCL copies synchronously, so both are empty
    async_commit = ""
    async_wait_prior = ""
    async_wait_all = ""

    def async_copy(self, dst: str, src: str) -> str:
        """Copy the element (or vector) at global address ``src`` to local address ``dst``, both aligned
        to its size, asynchronously where the target can (completed by ``async_wait_prior`` and a barrier)."""
        return f"*({dst}) = *({src});"

    def main_head(self) -> str:
        """The main kernel's head (OpenCL C has no spelling for ``KernelPlan.min_groups``)."""
        return self.kernel_head

    def local_id(self, g: int) -> str:
        return f"({self.ix})get_local_id({g})"

    def group_id(self, g: int) -> str:
        return f"({self.ix})get_group_id({g})"

    def global_id0(self) -> str:
        return f"({self.ix})get_global_id(0)"

    def flat_local_id(self) -> str:
        """The work-item's rank in its work-group, NDRange dim 0 fastest (hardware order)."""
        return "(int)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))"

    def prelude(self, w: _Lines) -> None:
        if self.k.needs_fp64:
            w("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        if not self.k.mdh.reassociates_fp:
            # a * b + c rounds twice in the user's C; an OpenCL compiler may contract it into one
            # fused multiply-add (NVIDIA's does), which rounds once (as CUDA's --fmad=false)
            w("#pragma OPENCL FP_CONTRACT OFF")
        for m in COMPAT_MACROS:
            w(m)

    # }}}

    # {{{ names

    @staticmethod
    def wi(d: KDim) -> str:
        return f"mdp_wi_{d.index}"

    @staticmethod
    def wg(d: KDim) -> str:
        return f"mdp_wg_{d.index}"

    @staticmethod
    def idx(d: KDim) -> str:
        return f"mdp_i_{d.index}"

    @staticmethod
    def hi(d: KDim) -> str:
        return f"(mdp_lo_{d.index} + mdp_ext_{d.index})"

    @staticmethod
    def nwg(d: KDim) -> str:
        return f"MDP_NUM_WG_{d.index}" if d.is_reduction else f"mdp_nwg_{d.index}"

    def f(self, v: FExpr) -> str:
        return str(self.expr.gen.visit(_sixty_four_bit(self.expr.fexpr(v))))

    # }}}

    def params(self) -> list[str]:
        out: list[str] = []
        for b in self.k.buffers:
            if b.role == "value":
                out.append(f"const {b.device_type} {b.name}")
            else:
                const = "" if b.written else "const "
                out.append(f"{self.global_qual}{const}{b.device_type} *{b.name}")
        out += [f"const long {n}" for n in self.extent_params()]
        if self.k.partials:
            out += [f"{self.global_qual}{o.elem_type} *mdp_part{n}" for n, o in enumerate(self.k.outputs)]
        return out

    def extent_params(self) -> list[str]:
        """Names of the extent parameters (always ``long``, the host code's ABI): per dim its
        lower bound and extent, per concat dim its number of work-groups; with 32-bit index
        arithmetic, the parameters are ``mdp_*64_<d>`` and ``narrow_extents`` declares ``int`` copies."""
        suffix = "64" if self.ix != "long" else ""
        out: list[str] = []
        for d in self.k.dims:
            out += [f"mdp_lo{suffix}_{d.index}", f"mdp_ext{suffix}_{d.index}"]
        out += [f"mdp_nwg{suffix}_{d.index}" for d in self.k.concat]
        return out

    def narrow_extents(self, w: _Lines) -> None:
        if self.ix == "long":
            return
        for name in self.extent_params():
            w(f"const {self.ix} {name.replace('64_', '_')} = ({self.ix}){name};")

    def defines(self, w: _Lines) -> None:
        k = self.k
        w(f"/* {k.name}: {k.tuning.describe(k.mdh)} */")  # type: ignore[attr-defined]
        for d in k.dims:
            w(f"#define MDP_NUM_WI_{d.index} {d.num_wi}  /* {d.iterator} ({d.combine.value}) */")
            if d.is_reduction:
                w(f"#define MDP_NUM_WG_{d.index} {d.num_wg}")
                if k.tiles is not None:
                    w(f"#define MDP_KT_{d.index} {d.kt}")
            else:
                w(f"#define MDP_PT_{d.index} {d.pt}")
        red_wi = 1
        red_wg = 1
        for d in k.reductions:
            red_wi *= d.num_wi
            red_wg *= d.num_wg
        pt_total = 1
        for d in k.concat:
            pt_total *= d.pt
        w(f"#define MDP_WG_SIZE {k.wg_size()}")
        w(f"#define MDP_RED_WI {red_wi}")
        w(f"#define MDP_RED_WI_POW2 {_pow2_ceil(red_wi)}")
        w(f"#define MDP_RED_WG {red_wg}")
        w(f"#define MDP_PT_TOTAL {pt_total}")

    def decode_ids(self, w: _Lines) -> None:
        k = self.k
        self.narrow_extents(w)
        w(f"{self.ix} mdp_l, mdp_g;")
        for d in k.dims:
            w(f"{self.ix} {self.wi(d)}, {self.wg(d)};")
        for g, group in enumerate(k.grid_axes):
            w(f"mdp_l = {self.local_id(g)};")
            w(f"mdp_g = {self.group_id(g)};")
            for d in reversed([k.dims[i] for i in group]):
                w(f"{self.wi(d)} = mdp_l % MDP_NUM_WI_{d.index};")
                w(f"mdp_l /= MDP_NUM_WI_{d.index};")
                w(f"{self.wg(d)} = mdp_g % {self.nwg(d)};")
                w(f"mdp_g /= {self.nwg(d)};")
        if k.warp_tile:
            self.warp_remap(w)

    def warp_remap(self, w: _Lines) -> None:
        """Renumber the work-items of the dims on grid axes 0 and 1 so that each warp of consecutive
        flat local ids covers a ``wm x wn`` rectangle of them (``KernelPlan.warp_tile``)."""
        k = self.k
        wm, wn = k.warp_tile
        a, b = k.dims[k.grid_axes[0][0]], k.dims[k.grid_axes[1][0]]
        across = a.num_wi // wn
        w(f"mdp_l = {self.flat_local_id()};   /* warp tile {wm} x {wn} */")
        w(f"{self.wi(a)} = (mdp_l / {wm * wn} % {across}) * {wn} + mdp_l % {wn};")
        w(f"{self.wi(b)} = (mdp_l / {wm * wn} / {across}) * {wm} + mdp_l % {wm * wn} / {wn};")

    def linear(self, dims: tuple[KDim, ...], val: str, size: str) -> str:
        expr = "0"
        for d in dims:
            v = val.format(d=d.index)
            s = size.format(d=d.index)
            expr = v if expr == "0" else f"({expr}) * {s} + {v}"
        return expr

    def open_point_loops(self, w: _Lines, unroll: bool = False) -> None:
        for d in self.k.concat:
            if unroll:
                w("#pragma unroll")
            w.open(f"for (int mdp_p_{d.index} = 0; mdp_p_{d.index} < MDP_PT_{d.index}; ++mdp_p_{d.index})")
        for d in self.k.concat:
            i = d.index
            w(f"const {self.ix} {self.idx(d)} = mdp_lo_{i} + {self.wg(d)} * (MDP_PT_{i} * MDP_NUM_WI_{i}) + "
              f"{self.point_off(d, f'mdp_p_{i}')};")
        w(f"const int mdp_pc = {self.linear(self.k.concat, 'mdp_p_{d}', 'MDP_PT_{d}')};")

    def point_off(self, d: KDim, p: str) -> str:
        """Private point ``p``'s offset in the work-group's block of dim ``d`` (``KDim.vec``)."""
        i = d.index
        if d.vec == 1:
            return f"{p} * MDP_NUM_WI_{i} + (int){self.wi(d)}"
        return f"(({p} / {d.vec}) * MDP_NUM_WI_{i} + (int){self.wi(d)}) * {d.vec} + {p} % {d.vec}"

    def close_point_loops(self, w: _Lines) -> None:
        for _ in self.k.concat:
            w.close()

    def concat_guard(self, store: bool = False) -> str:
        """The work-item's concat point lies in the box (``store``: and in ``store_domain``)."""
        conds = [f"{self.idx(d)} < {self.hi(d)}" for d in self.k.concat]
        if store:
            conds += [f"({c})" for c in self.k.store_domain]
        return " && ".join(conds) if conds else "1"

    def open_domain(self, w: _Lines) -> None:
        """``if (the point is in the domain) {`` -- around ``f``'s evaluation; nothing for a box."""
        if self.k.domain:
            w.open(f"if ({' && '.join(f'({c})' for c in self.k.domain)})")

    def close_domain(self, w: _Lines) -> None:
        if self.k.domain:
            w.close()

    def bind_iterators(self, w: _Lines, dims: tuple[KDim, ...]) -> None:
        """The user's iterators, in their declared types, at the current point."""
        for d in dims:
            self.bind_iterator(w, d, self.idx(d))

    @staticmethod
    def bind_iterator(w: _Lines, d: KDim, value: str) -> None:
        w(f"const {d.iterator_type} {d.iterator} = ({d.iterator_type})({value});")

    def store_all(self, w: _Lines, results: list[str]) -> None:
        """Every output's store of its reduced value ``results[n]``; an argmax/argmin pair is
        stored at once, against its start value."""
        op = self.k.op
        assert op is not None
        outs = self.k.outputs
        if not op.is_arg:
            for o, r in zip(outs, results):
                self.store(w, o, r)
            return
        w.open("")
        starts = []
        for n, o in enumerate(outs):
            start = o.access.to_c() if o.start == "old" else f"({o.init})" if o.start == "init" else o.neutral
            w(f"const {o.elem_type} mdp_s{n} = {start};")
            starts.append(f"mdp_s{n}")
        take = _arg_take(op, "start", starts[0], starts[1], results[0], results[1], outs[1].neutral)
        w(f"const int mdp_take = {take};")
        for n, o in enumerate(outs):
            self.store(w, replace(o, start="none"), f"(mdp_take ? ({results[n]}) : mdp_s{n})")
        w.close()

    def accumulate_all(self, w: _Lines, values: list[FExpr | None] | None = None, accs: list[str] | None = None) -> None:
        """``acc[n] (op)= value[n]`` for every output, in the loop's order; an argmax/argmin pair
        is updated at once, as the sequential loop does."""
        op = self.k.op
        assert op is not None
        outs = list(enumerate(self.k.outputs))
        vals = values or [None] * len(outs)
        names = accs or [f"mdp_a{n}" for n, _ in outs]
        if not op.is_arg:
            for n, o in outs:
                self.accumulate(w, n, o, vals[n], names[n])
            return
        w.open("")
        for n, o in outs:
            w(f"const {o.elem_type} mdp_v{n} = {self.f(vals[n] or o.value)};")
        w.open(f"if ({_arg_take(op, 'seq', names[0], names[1], 'mdp_v0', 'mdp_v1')})")
        for n, _ in outs:
            w(f"{names[n]} = mdp_v{n};")
        w.close()
        w.close()

    def merge_all(self, w: _Lines, into: list[str], other: list[str]) -> None:
        """``into[n] = into[n] (op) other[n]`` for partial results of any parts of the range."""
        op = self.k.op
        assert op is not None
        if not op.is_arg:
            for a, b in zip(into, other):
                w(f"{a} = {_combine(op, a, b)};")
            return
        w.open(f"if ({_arg_take(op, 'merge', into[0], into[1], other[0], other[1])})")
        for a, b in zip(into, other):
            w(f"{a} = {b};")
        w.close()

    def store(self, w: _Lines, o: KOutput, result: str) -> None:
        assert self.k.op is not None
        target = o.access.to_c()
        if o.start == "old":
            value = _combine(self.k.op, target, result)
        elif o.start == "init":
            value = _combine(self.k.op, "(" + str(o.init) + ")", result)
        else:
            value = result
        if o.finish is None:
            w(f"{target} = {value};")
            return
        w.open("")
        w(f"const {o.elem_type} mdp_fin = {value};")
        w(f"{target} = {self.f(o.finish)};")
        w.close()

    def accumulate(self, w: _Lines, n: int, o: KOutput, value: FExpr | None = None, acc: str = "") -> None:
        op = self.k.op
        assert op is not None
        val = self.f(value or o.value)
        a = acc or f"mdp_a{n}"
        if op is Combine.ADD:
            w(f"{a} += {val};")
        elif op is Combine.MUL:
            w(f"{a} *= {val};")
        elif op.is_bitwise:
            w(f"{a} {op.value}= {val};")
        else:
            w.open("")
            w(f"const {o.elem_type} mdp_v = {val};")
            w(f"{a} = {_combine(op, a, 'mdp_v')};")
            w.close()

    def tiled_private_phase(self, w: _Lines) -> None:
        """Reduction tiles outer: copy the cached inputs' footprints to ``__local``, barrier; per
        reduction point, read each input into its register fragment, update the register tile of
        accumulators (constant, unrolled point loops); barrier."""
        k = self.k
        assert k.tiles is not None
        outs = list(enumerate(k.outputs))
        cached = [(x, t) for x, t in enumerate(k.tiles) if t.cached]
        pf2 = k.prefetch and k.prefetch_buffers == 2 and bool(cached)
        asy = k.async_copy and bool(cached) and not pf2
        # with both: the inputs whose copies store whole vectors asynchronously, the others through registers
        acp = [(x, t) for x, t in cached if pf2 and k.async_copy and t.vstore and t.gvec > 1 and t.box[-1] % t.gvec == 0]
        rcp = [c for c in cached if c not in acp]
        for x, t in cached:
            aligned = t.vread > 1 or t.vstore
            if asy or pf2:
                w(self.local_array(t.elem_type, f"mdp_lb{x}", 2 * self.async_elems(t), 16))
                continue
            w(self.local_array(t.elem_type, f"mdp_l{x}", t.local_elems or t.box_elems, 16 if aligned else 1))
        for n, o in outs:
            w(f"{o.elem_type} mdp_acc{n}[MDP_PT_TOTAL];")
        w("#pragma unroll")
        w.open("for (int mdp_q = 0; mdp_q < MDP_PT_TOTAL; ++mdp_q)")
        for n, o in outs:
            w(f"mdp_acc{n}[mdp_q] = {o.neutral};")
        w.close()
        if cached:
            w(f"const int mdp_lid = {self.flat_local_id()};")
        for d in k.concat:
            i = d.index
            w(f"const {self.ix} mdp_tb_{i} = mdp_lo_{i} + {self.wg(d)} * (MDP_PT_{i} * MDP_NUM_WI_{i});")
        pf = k.prefetch and bool(cached)
        for d in k.reductions:
            i = d.index
            if pf and d is k.reductions[-1]:
                self.prefetch_prologue(w, d, rcp)
            if pf2 and d is k.reductions[-1]:
                self.prefetch_first_store(w, d, rcp, acp)
            if asy and d is k.reductions[-1]:
                self.async_prologue(w, d, cached)
            w.open(f"for ({self.ix} mdp_t_{i} = {self.wg(d)}; mdp_t_{i} * MDP_KT_{i} < mdp_ext_{i}; "
                   f"mdp_t_{i} += MDP_NUM_WG_{i})")
            w(f"const {self.ix} mdp_tb_{i} = mdp_lo_{i} + mdp_t_{i} * MDP_KT_{i};")
        z = k.reductions[-1].index if k.reductions else 0
        nxt = f"(mdp_t_{z} + MDP_NUM_WG_{z}) * MDP_KT_{z} < mdp_ext_{z}"
        nxt_tb = f"const {self.ix} mdp_tb_{z} = mdp_lo_{z} + (mdp_t_{z} + MDP_NUM_WG_{z}) * MDP_KT_{z};   /* the next tile */"
        if asy:
            self.async_tile_start(w, cached)
        elif pf2:   # this tile's buffer; the next tile's loads into registers, in flight while it is computed
            for x, t in cached:
                w(f"{self.local_ptr_qual}{t.elem_type} *mdp_l{x} = mdp_lb{x} + mdp_buf * {self.async_elems(t)};")
            w.open(f"if ({nxt})")
            w(nxt_tb)
            self.prefetch_copies(w, rcp, store=False)
            for x, t in acp:
                w(f"{self.local_ptr_qual}{t.elem_type} *mdp_n{x} = mdp_lb{x} + (mdp_buf ^ 1) * {self.async_elems(t)};")
            self.async_copies(w, acp)
            w.close()
        elif pf:
            self.prefetch_copies(w, cached, store=True)
            w(self.barrier)
            z = k.reductions[-1].index
            w.open(f"if ((mdp_t_{z} + MDP_NUM_WG_{z}) * MDP_KT_{z} < mdp_ext_{z})")
            w(f"const {self.ix} mdp_tb_{z} = mdp_lo_{z} + (mdp_t_{z} + MDP_NUM_WG_{z}) * MDP_KT_{z};   /* the next tile */")
            self.prefetch_copies(w, cached, store=False)
            w.close()
        else:
            for x, t in cached:
                w.open(f"for (int mdp_e = mdp_lid; mdp_e < {t.copy_vectors}; mdp_e += MDP_WG_SIZE)")
                at, cond, flat = self.copy_index(w, t)
                if t.gvec == 1:
                    w(f"mdp_l{x}[{at}] = ({cond}) ? {t.access.buffer}[{flat}] : ({t.elem_type})0;")
                else:
                    w(f"{t.elem_type}{t.gvec} mdp_gv;")
                    self.load_global_vector(w, t, "mdp_gv", flat)
                    self.store_local_vector(w, x, t, at, "mdp_gv")
                w.close()
            if cached:
                w(self.barrier)
        full = " && ".join(f"mdp_tb_{d.index} + MDP_KT_{d.index} <= {self.hi(d)}" for d in k.reductions)
        w.open(f"if ({full})")
        self.tile_points(w, guarded=False)
        w.close()
        w.open("else")
        self.tile_points(w, guarded=True)
        w.close()
        if pf2:   # the next tile into the other buffer (read by every work-item in the previous tile, before its barrier)
            w.open(f"if ({nxt})")
            w(nxt_tb)
            for x, t in rcp:
                w(f"{self.local_ptr_qual}{t.elem_type} *mdp_n{x} = mdp_lb{x} + (mdp_buf ^ 1) * {self.async_elems(t)};")
            self.prefetch_copies(w, rcp, store=True, local="mdp_n")
            w.close()
            if acp:
                for stmt in (self.async_commit, self.async_wait_all):
                    if stmt:
                        w(stmt)
        if cached:
            w(self.barrier)
        if asy or pf2:
            w("mdp_buf ^= 1;")
        for _ in k.reductions:
            w.close()

    def async_elems(self, t: KInput) -> int:
        """Elements of one of cached input ``t``'s two buffers (``KernelPlan.async_copy``)."""
        return async_buffer_elems(t.local_elems or t.box_elems)

    def async_prologue(self, w: _Lines, d: KDim, cached: list[tuple[int, KInput]]) -> None:
        """Before the tile loop of the innermost reduction dim ``d`` (``KernelPlan.async_copy``): the
        copies of this work-group's first tile (when it has one) into buffer 0, as one group."""
        i = d.index
        w("int mdp_buf = 0;")
        w.open(f"if ({self.wg(d)} * MDP_KT_{i} < mdp_ext_{i})")
        w(f"const {self.ix} mdp_tb_{i} = mdp_lo_{i} + {self.wg(d)} * MDP_KT_{i};")
        for x, t in cached:
            w(f"{self.local_ptr_qual}{t.elem_type} *mdp_n{x} = mdp_lb{x};")
        self.async_copies(w, cached)
        w.close()
        if self.async_commit:
            w(self.async_commit)

    def async_tile_start(self, w: _Lines, cached: list[tuple[int, KInput]]) -> None:
        """At the start of a tile (``KernelPlan.async_copy``): ``mdp_l<x>`` points at the current
        tile's buffer; the next tile's copies go into the other buffer (read by every work-item in
        the previous tile, which ended with a barrier) as a new group; then the wait for the
        current tile's group and the barrier that makes every work-item's copies visible."""
        k = self.k
        z = k.reductions[-1].index
        for x, t in cached:
            w(f"{self.local_ptr_qual}{t.elem_type} *mdp_l{x} = mdp_lb{x} + mdp_buf * {self.async_elems(t)};")
        w.open(f"if ((mdp_t_{z} + MDP_NUM_WG_{z}) * MDP_KT_{z} < mdp_ext_{z})")
        w(f"const {self.ix} mdp_tb_{z} = mdp_lo_{z} + (mdp_t_{z} + MDP_NUM_WG_{z}) * MDP_KT_{z};   /* the next tile */")
        for x, t in cached:
            w(f"{self.local_ptr_qual}{t.elem_type} *mdp_n{x} = mdp_lb{x} + (mdp_buf ^ 1) * {self.async_elems(t)};")
        self.async_copies(w, cached)
        w.close()
        for stmt in (self.async_commit, self.async_wait_prior):
            if stmt:
                w(stmt)
        w(self.barrier)

    def async_copies(self, w: _Lines, cached: list[tuple[int, KInput]]) -> None:
        """Each work-item's share of the cached inputs' tile into the buffers ``mdp_n<x>``: chunks
        in the array by ``async_copy`` (vectors of ``gvec`` where the row is stored contiguously and
        the global address is aligned, else elements of a type in ``ASYNC_ELEM_TYPES``), 0 outside."""
        for x, t in cached:
            if t.gvec > 1 and t.box[-1] % t.gvec:   # vectors that do not tile the row: elements
                t = replace(t, gvec=1, vstore=False)
            w.open(f"for (int mdp_e = mdp_lid; mdp_e < {t.box_elems // t.gvec}; mdp_e += MDP_WG_SIZE)")
            at, cond, flat = self.copy_index(w, t)
            src = f"{t.access.buffer} + ({flat})"
            zero = f"({t.elem_type})0"
            if t.gvec == 1:
                if t.elem_type in ASYNC_ELEM_TYPES:
                    w.open(f"if ({cond})")
                    w(self.async_copy(f"mdp_n{x} + ({at})", src))
                    w.close()
                    w(f"else mdp_n{x}[{at}] = {zero};")
                else:
                    w(f"mdp_n{x}[{at}] = ({cond}) ? {t.access.buffer}[{flat}] : {zero};")
                w.close()
                continue
            v = t.gvec
            if t.vstore:
                w.open(f"if ({self.box_cond(t, 0, v - 1)} && ({self.address_bits(src)} & {4 * v - 1}) == 0)")
                w(self.async_copy(f"({self.local_ptr_qual}{t.elem_type}{v} *)(mdp_n{x} + ({at}))",
                                  f"(const {self.global_qual}{t.elem_type}{v} *)({src})"))
                w.close()
                w.open("else")
            step = t.strides[-1]
            for u in range(v):
                lane = f"mdp_n{x} + ({at}){f' + {u * step}' if u else ''}"
                w.open(f"if ({self.box_cond(t, u, u)})")
                w(self.async_copy(lane, f"{src}{f' + {u}' if u else ''}"))
                w.close()
                w(f"else *({lane}) = {zero};")
            if t.vstore:
                w.close()
            w.close()

    def copy_index(self, w: _Lines, t: KInput) -> tuple[str, str, str]:
        """Decode ``mdp_e`` (an element of cached input ``t``'s box; with ``t.gvec`` > 1, a vector
        of ``gvec`` elements along the innermost position) into its box offsets ``mdp_r<j>`` and
        global coordinates ``mdp_g<j>``; return its (first element's) ``__local`` index, the
        condition that it lies in the array, and its flat global index. With ``aligned_rows`` the
        row's vector ``mdp_v`` starts ``mdp_sh`` elements before the row's offset ``mdp_v * gvec``
        (so ``mdp_r<last>`` may be negative), where the aligned address at or before the row's
        start is."""
        w("int mdp_rem = mdp_e;")
        last = len(t.box) - 1
        for j in reversed(range(len(t.box))):
            n = t.row_vectors if j == last else t.box[j]
            val = "mdp_rem" if j == 0 else f"mdp_rem % {n}"
            if j == last and t.aligned_rows:
                w(f"const int mdp_v = {val};")
            else:
                w(f"const int mdp_r{j} = {val if j != last or t.gvec == 1 else f'({val}) * {t.gvec}'};")
            if j:
                w(f"mdp_rem /= {n};")
            if j != last or not t.aligned_rows:
                w(f"const {self.ix} mdp_g{j} = {t.origin[j]} + mdp_r{j};")
        if t.aligned_rows:   # the flat index of the row's start, then its distance from an aligned address
            start = _par(t.origin[0]) if not last else "mdp_g0"
            for j in range(1, last + 1):
                start = f"({start}) * {_par(t.shape[j])} + {f'mdp_g{j}' if j != last else _par(t.origin[last])}"
            sh = f"(int)(({self.address_bits(f'{t.access.buffer} + ({start})')} >> 2) & {t.gvec - 1})"
            w(f"const int mdp_r{last} = mdp_v * {t.gvec} - {sh};")
            w(f"const {self.ix} mdp_g{last} = {t.origin[last]} + mdp_r{last};")
        at = " + ".join(f"mdp_r{j}" if st == 1 else f"mdp_r{j} * {st}" for j, st in enumerate(t.strides))
        if not t.strides:
            at = "mdp_e"
        flat = "mdp_g0"
        for j in range(1, len(t.box)):
            flat = f"({flat}) * {_par(t.shape[j])} + mdp_g{j}"
        return at, self.box_cond(t, 0, 0), flat

    @staticmethod
    def box_cond(t: KInput, first: int, last: int) -> str:
        """The decoded box element lies in the array, with the innermost coordinate shifted by every
        offset from ``first`` to ``last`` (the lanes of a vector)."""
        n = len(t.box) - 1
        conds = [f"mdp_g{j} >= {t.lo[j]} && mdp_g{j} <= {t.hi[j]}" for j in range(n)]
        lo = f"mdp_g{n}" if not first else f"mdp_g{n} + {first}"
        hi = f"mdp_g{n}" if not last else f"mdp_g{n} + {last}"
        conds.append(f"{lo} >= {t.lo[n]} && {hi} <= {t.hi[n]}")
        return " && ".join(conds)

    def load_global_vector(self, w: _Lines, t: KInput, dest: str, flat: str) -> None:
        """``dest`` = the ``t.gvec`` elements from ``flat`` on: one vector load when all lie in the
        array and the address is aligned, else each element (0 outside the array)."""
        v = t.gvec
        ptr = f"{t.access.buffer} + ({flat})"
        w.open(f"if ({self.box_cond(t, 0, v - 1)} && ({self.address_bits(ptr)} & {4 * v - 1}) == 0)")
        w(f"{dest} = {self.global_vector(t.elem_type, v, ptr)};")
        w.close()
        w.open("else")
        for u, lane in enumerate("xyzw"[:v]):
            at = f"{flat} + {u}" if u else flat
            w(f"{dest}.{lane} = ({self.box_cond(t, u, u)}) ? {t.access.buffer}[{at}] : ({t.elem_type})0;")
        w.close()

    def store_local_vector(self, w: _Lines, x: int, t: KInput, at: str, src: str, local: str = "mdp_l") -> None:
        """The vector ``src`` into the ``__local`` copy of input ``x`` (``<local><x>``) from index ``at`` on."""
        if t.vstore:
            w(f"{self.local_vector_lvalue(t.elem_type, t.gvec, f'{local}{x}', _par(at))} = {src};")
            return
        step = t.strides[-1]
        last = len(t.box) - 1
        for u, lane in enumerate("xyzw"[:t.gvec]):
            store = f"{local}{x}[{at}{f' + {u * step}' if u else ''}] = {src}.{lane};"
            if t.aligned_rows:   # lanes before or after the row are not the box's
                r = f"mdp_r{last} + {u}" if u else f"mdp_r{last}"
                store = f"if ({r} >= 0 && {r} < {t.box[last]}) {store}"
            w(store)

    def prefetch_regs(self, t: KInput) -> int:
        """Prefetch registers (vectors of ``t.gvec``) per work-item for cached input ``t``'s next
        tile: its box over the work-group."""
        return -(-t.copy_vectors // self.k.wg_size())

    def prefetch_prologue(self, w: _Lines, d: KDim, cached: list[tuple[int, KInput]]) -> None:
        """Before the tile loop of the innermost reduction dim ``d``: the prefetch registers, filled
        with this work-group's first tile (when it has one)."""
        i = d.index
        for x, t in cached:
            w(f"{t.elem_type}{t.gvec if t.gvec > 1 else ''} mdp_pf{x}[{self.prefetch_regs(t)}];")
        w.open(f"if ({self.wg(d)} * MDP_KT_{i} < mdp_ext_{i})")
        w(f"const {self.ix} mdp_tb_{i} = mdp_lo_{i} + {self.wg(d)} * MDP_KT_{i};")
        self.prefetch_copies(w, cached, store=False)
        w.close()

    def prefetch_first_store(self, w: _Lines, d: KDim, cached: list[tuple[int, KInput]],
                             acp: list[tuple[int, KInput]]) -> None:
        """After ``prefetch_prologue`` with two buffers (``KernelPlan.prefetch_buffers`` 2): the first
        tile's registers of ``cached`` stored into buffer 0 (the inputs ``acp`` copied there
        asynchronously, waited for), and the barrier that makes them visible."""
        i = d.index
        w("int mdp_buf = 0;")
        w.open(f"if ({self.wg(d)} * MDP_KT_{i} < mdp_ext_{i})")
        w(f"const {self.ix} mdp_tb_{i} = mdp_lo_{i} + {self.wg(d)} * MDP_KT_{i};")
        for x, t in cached + acp:
            w(f"{self.local_ptr_qual}{t.elem_type} *mdp_n{x} = mdp_lb{x};")
        self.prefetch_copies(w, cached, store=True, local="mdp_n")
        self.async_copies(w, acp)
        w.close()
        if acp:
            for stmt in (self.async_commit, self.async_wait_all):
                if stmt:
                    w(stmt)
        w(self.barrier)

    def prefetch_copies(self, w: _Lines, cached: list[tuple[int, KInput]], store: bool, local: str = "mdp_l") -> None:
        """Each work-item's share of the cached inputs' tile (elements ``mdp_lid + u * MDP_WG_SIZE``):
        loaded from ``__global`` into the prefetch registers, or (``store``) stored from them into
        the ``__local`` copies (``<local><x>``)."""
        for x, t in cached:
            if t.gvec > 1:
                w("#pragma unroll")
            w.open(f"for (int mdp_u = 0; mdp_u < {self.prefetch_regs(t)}; ++mdp_u)")
            w("const int mdp_e = mdp_lid + mdp_u * MDP_WG_SIZE;")
            w.open(f"if (mdp_e < {t.copy_vectors})")
            at, cond, flat = self.copy_index(w, t)
            if store and t.gvec > 1:
                self.store_local_vector(w, x, t, at, f"mdp_pf{x}[mdp_u]", local)
            elif store:
                w(f"{local}{x}[{at}] = mdp_pf{x}[mdp_u];")
            elif t.gvec > 1:
                self.load_global_vector(w, t, f"mdp_pf{x}[mdp_u]", flat)
            else:
                w(f"mdp_pf{x}[mdp_u] = ({cond}) ? {t.access.buffer}[{flat}] : ({t.elem_type})0;")
            w.close()
            w.close()

    def tile_points(self, w: _Lines, guarded: bool) -> None:
        """The reduction points of one tile (``guarded``: the last, partial tile)."""
        k = self.k
        assert k.tiles is not None
        outs = list(enumerate(k.outputs))
        for d in k.reductions:
            i = d.index
            start = f"(int){self.wi(d)}" if d.num_wi > 1 else "0"
            w("#pragma unroll")
            w.open(f"for (int mdp_kk_{i} = {start}; mdp_kk_{i} < MDP_KT_{i}; mdp_kk_{i} += MDP_NUM_WI_{i})")
        guard = " && ".join(f"mdp_tb_{d.index} + mdp_kk_{d.index} < {self.hi(d)}" for d in k.reductions)
        w.open(f"if ({guard if guarded else 1})")
        for d in k.reductions:
            i = d.index
            w(f"const int mdp_off_{i} = mdp_kk_{i};")
            if k.domain:
                w(f"const {self.ix} {self.idx(d)} = mdp_tb_{i} + mdp_kk_{i};")
            self.bind_iterator(w, d, f"mdp_tb_{i} + mdp_kk_{i}")
        binds: list[tuple[str, Var]] = []
        for x, t in enumerate(k.tiles):
            if k.domain:   # read in the domain guard below: the fragment's points may lie outside
                binds.append((t.param, Var(t.access.to_c())))
                continue
            deps = [k.dims[d] for d in t.deps]
            size = " * ".join(f"MDP_PT_{d.index}" for d in deps) or "1"
            q = self.linear(tuple(deps), "mdp_p_{d}", "MDP_PT_{d}")
            binds.append((t.param, Var(f"mdp_f{x}[{q}]")))
            w(f"{t.elem_type} mdp_f{x}[{size}];")
            if t.cached and t.vread > 1:
                self.vector_fragment(w, x, t.elem_type, t.vread, deps[0], t.local)
                continue
            for d in deps:
                w("#pragma unroll")
                w.open(f"for (int mdp_p_{d.index} = 0; mdp_p_{d.index} < MDP_PT_{d.index}; ++mdp_p_{d.index})")
            for d in deps:
                i = d.index
                w(f"const int mdp_off_{i} = {self.point_off(d, f'mdp_p_{i}')};")
                w(f"const {self.ix} {self.idx(d)} = mdp_tb_{i} + mdp_off_{i};")
            if t.cached:
                w(f"mdp_f{x}[{q}] = mdp_l{x}[{t.local}];")
            else:
                self.bind_iterators(w, tuple(deps))
                cond = " && ".join(f"{self.idx(d)} < {self.hi(d)}" for d in deps) or "1"
                w(f"mdp_f{x}[{q}] = ({cond}) ? {t.access.to_c()} : ({t.elem_type})0;")
            for _ in deps:
                w.close()
        self.open_point_loops(w, unroll=True)
        self.bind_iterators(w, k.concat)
        if k.domain:
            w.open(f"if ({self.concat_guard()})")
        self.open_domain(w)
        self.accumulate_all(w, [FExpr(o.value.text, tuple(binds), o.value.role) for _, o in outs],
                            [f"mdp_acc{n}[mdp_pc]" for n, _ in outs])
        self.close_domain(w)
        if k.domain:
            w.close()
        self.close_point_loops(w)
        w.close()
        for _ in k.reductions:
            w.close()

    def vector_fragment(self, w: _Lines, x: int, elem_type: str, width: int, d: KDim, local: str) -> None:
        """A cached input's fragment along ``d`` read in aligned vectors of ``width`` points."""
        i = d.index
        w("#pragma unroll")
        w.open(f"for (int mdp_c_{i} = 0; mdp_c_{i} < MDP_PT_{i} / {width}; ++mdp_c_{i})")
        w(f"const int mdp_off_{i} = (mdp_c_{i} * MDP_NUM_WI_{i} + (int){self.wi(d)}) * {width};")
        w(f"const {elem_type}{width} mdp_v = {self.local_vector(elem_type, width, f'mdp_l{x}', _par(local))};")
        for r, lane in enumerate("xyzw"[:width]):
            w(f"mdp_f{x}[mdp_c_{i} * {width} + {r}] = mdp_v.{lane};")
        w.close()

    def main_kernel(self, w: _Lines) -> None:
        k = self.k
        w.open(f"{self.main_head()} {k.name}({', '.join(self.params())})")
        self.decode_ids(w)
        outs = list(enumerate(k.outputs))
        if not k.reductions:
            self.open_point_loops(w)
            w.open(f"if ({self.concat_guard(store=True)})")
            self.open_domain(w)
            self.bind_iterators(w, k.concat)
            for _, o in outs:
                w(f"{o.access.to_c()} = {self.f(o.value)};")
            self.close_domain(w)
            w.close()
            self.close_point_loops(w)
            w.close()
            return
        if k.tiles is not None:
            self.tiled_private_phase(w)
        else:
            self.private_phase(w)
        self.group_phase(w)

    def private_phase(self, w: _Lines) -> None:
        """Each work-item's strided share of every reduction, per concat point, from ``__global``."""
        k = self.k
        outs = list(enumerate(k.outputs))
        for n, o in outs:
            w(f"{o.elem_type} mdp_acc{n}[MDP_PT_TOTAL];")
        self.open_point_loops(w)
        for n, o in outs:
            w(f"{o.elem_type} mdp_a{n} = {o.neutral};")
        w.open(f"if ({self.concat_guard()})")
        self.bind_iterators(w, k.concat)
        for d in k.reductions:
            i = d.index
            w.open(f"for ({self.ix} {self.idx(d)} = mdp_lo_{i} + {self.wg(d)} * MDP_NUM_WI_{i} + {self.wi(d)}; "
                   f"{self.idx(d)} < {self.hi(d)}; {self.idx(d)} += ({self.ix})MDP_NUM_WG_{i} * MDP_NUM_WI_{i})")
            self.bind_iterator(w, d, self.idx(d))
        self.open_domain(w)
        self.accumulate_all(w)
        self.close_domain(w)
        for _ in k.reductions:
            w.close()
        w.close()
        for n, _ in outs:
            w(f"mdp_acc{n}[mdp_pc] = mdp_a{n};")
        self.close_point_loops(w)

    def group_phase(self, w: _Lines) -> None:
        """Combine within the work-group (``__local`` tree), then store results or partials."""
        k = self.k
        outs = list(enumerate(k.outputs))
        red_rank = self.linear(k.reductions, "mdp_wi_{d}", "MDP_NUM_WI_{d}")
        w(f"const {self.ix} mdp_rw = {red_rank};")
        # work-group phase: combine the work-items that share concat points, in local memory
        if k.local_combine and k.warp_reduce:
            self.warp_combine(w)
        elif k.local_combine:
            assert k.op is not None
            cw = self.linear(k.concat, "mdp_wi_{d}", "MDP_NUM_WI_{d}")
            w(f"const {self.ix} mdp_slot = ({cw}) * MDP_RED_WI + mdp_rw;")
            for n, o in outs:
                w(f"{self.local_qual} {o.elem_type} mdp_scratch{n}[MDP_WG_SIZE];")
            if k.tiles is not None:
                w("#pragma unroll")
            w.open("for (int mdp_q = 0; mdp_q < MDP_PT_TOTAL; ++mdp_q)")
            for n, _ in outs:
                w(f"mdp_scratch{n}[mdp_slot] = mdp_acc{n}[mdp_q];")
            w(self.barrier)
            w.open("for (int mdp_s = MDP_RED_WI_POW2 / 2; mdp_s > 0; mdp_s >>= 1)")
            w.open("if (mdp_rw < mdp_s && mdp_rw + mdp_s < MDP_RED_WI)")
            self.merge_all(w, [f"mdp_scratch{n}[mdp_slot]" for n, _ in outs],
                           [f"mdp_scratch{n}[mdp_slot + mdp_s]" for n, _ in outs])
            w.close()
            w(self.barrier)
            w.close()
            for n, _ in outs:
                w(f"mdp_acc{n}[mdp_q] = mdp_scratch{n}[mdp_slot - mdp_rw];")
            w(self.barrier)
            w.close()
        # store: one work-item per concat point writes the result, or its group's partial
        w.open("if (mdp_rw == 0)")
        self.open_point_loops(w, unroll=k.tiles is not None)
        w.open(f"if ({self.concat_guard(store=not k.partials)})")
        if k.partials:
            cp = self.linear(k.concat, "(mdp_i_{d} - mdp_lo_{d})", "mdp_ext_{d}")
            ncp = " * ".join(f"mdp_ext_{d.index}" for d in k.concat) or "1"
            wgr = self.linear(k.reductions, "mdp_wg_{d}", "MDP_NUM_WG_{d}")
            w(f"const {self.ix} mdp_ncp = {ncp};")
            for n, _ in outs:
                w(f"mdp_part{n}[({wgr}) * mdp_ncp + {cp}] = mdp_acc{n}[mdp_pc];")
        else:
            self.bind_iterators(w, k.concat)
            self.store_all(w, [f"mdp_acc{n}[mdp_pc]" for n, _ in outs])
        w.close()
        self.close_point_loops(w)
        w.close()
        w.close()

    def warp_combine(self, w: _Lines) -> None:
        """The work-group combine of ``KernelPlan.warp_reduce``: per private point, shuffles within
        each warp (lane strides 16 .. the concat work-items ``c``), then lanes below ``c`` of every
        warp store into ``__local`` memory and warp 0's fold them in warp order. The result is in
        ``mdp_acc`` of the work-items with ``mdp_rw == 0`` (warp 0, lanes below ``c``)."""
        k = self.k
        outs = list(enumerate(k.outputs))
        c, warps = k.warp_reduce, k.wg_size() // 32
        w(f"const int mdp_flat = {self.flat_local_id()};")
        w("const int mdp_lane = mdp_flat & 31;")
        w("const int mdp_warp = mdp_flat >> 5;")
        if warps > 1:
            for n, o in outs:
                w(f"{self.local_qual} {o.elem_type} mdp_scratch{n}[{warps * c}];")
        self.shuffle_setup(w)
        w("#pragma unroll")
        w.open("for (int mdp_q = 0; mdp_q < MDP_PT_TOTAL; ++mdp_q)")
        for n, o in outs:
            w(f"{o.elem_type} mdp_v{n} = mdp_acc{n}[mdp_q];")
        w("#pragma unroll")
        w.open(f"for (int mdp_s = 16; mdp_s >= {c}; mdp_s >>= 1)")
        for n, o in outs:
            self.shuffle_down(w, n, o.elem_type, "mdp_s")
        self.merge_all(w, [f"mdp_v{n}" for n, _ in outs], [f"mdp_o{n}" for n, _ in outs])
        w.close()
        if warps > 1:
            w.open(f"if (mdp_lane < {c})")
            for n, _ in outs:
                w(f"mdp_scratch{n}[mdp_warp * {c} + mdp_lane] = mdp_v{n};")
            w.close()
            w(self.barrier)
            w.open(f"if (mdp_warp == 0 && mdp_lane < {c})")
            w.open(f"for (int mdp_u = 1; mdp_u < {warps}; ++mdp_u)")
            self.merge_all(w, [f"mdp_v{n}" for n, _ in outs], [f"mdp_scratch{n}[mdp_u * {c} + mdp_lane]" for n, _ in outs])
            w.close()
            w.close()
            w(self.barrier)
        for n, _ in outs:
            w(f"mdp_acc{n}[mdp_q] = mdp_v{n};")
        w.close()

    def shuffle_setup(self, w: _Lines) -> None:
        """What ``shuffle_down`` needs declared before the combine: OpenCL C has no warp shuffles (the
        sub-group extensions are optional; NVIDIA's OpenCL and PoCL lack them), so this writer
        exchanges through a ``__local`` array per output, which only tests use (a target whose
        caps claim ``warp_shuffle``): the combine's lane arithmetic checked on PoCL."""
        for n, o in enumerate(self.k.outputs):
            w(f"{self.local_qual} {o.elem_type} mdp_xch{n}[MDP_WG_SIZE];")

    def shuffle_down(self, w: _Lines, n: int, elem_type: str, delta: str) -> None:
        """``mdp_o<n>``: ``mdp_v<n>`` of the work-item ``delta`` lanes up in the same warp (its own
        value where that lane is past the warp's last, as CUDA's ``__shfl_down_sync`` gives)."""
        w(f"mdp_xch{n}[mdp_flat] = mdp_v{n};")
        w(self.barrier)
        w(f"const {elem_type} mdp_o{n} = mdp_lane + {delta} < 32 ? mdp_xch{n}[mdp_flat + {delta}] : mdp_v{n};")
        w(self.barrier)

    def combine_kernel(self, w: _Lines) -> None:
        """One work-item per concat point folds the work-groups' partials in group order."""
        k = self.k
        assert k.op is not None
        w.open(f"{self.kernel_head} {k.name}_combine({', '.join(self.params())})")
        self.narrow_extents(w)
        ncp = " * ".join(f"mdp_ext_{d.index}" for d in k.concat) or "1"
        w(f"const {self.ix} mdp_ncp = {ncp};")
        w(f"const {self.ix} mdp_cp = {self.global_id0()};")
        w("if (mdp_cp >= mdp_ncp) return;")
        w(f"{self.ix} mdp_r = mdp_cp;")
        for d in reversed(k.concat):
            w(f"const {self.ix} {self.idx(d)} = mdp_lo_{d.index} + mdp_r % mdp_ext_{d.index};")
            w(f"mdp_r /= mdp_ext_{d.index};")
        if k.store_domain:
            w(f"if (!({self.concat_guard(store=True)})) return;")
        self.bind_iterators(w, k.concat)
        outs = list(enumerate(k.outputs))
        for n, o in outs:
            w(f"{o.elem_type} mdp_t{n} = {o.neutral};")
        w.open("for (int mdp_q = 0; mdp_q < MDP_RED_WG; ++mdp_q)")
        self.merge_all(w, [f"mdp_t{n}" for n, _ in outs], [f"mdp_part{n}[mdp_q * mdp_ncp + mdp_cp]" for n, _ in outs])
        w.close()
        self.store_all(w, [f"mdp_t{n}" for n, _ in outs])
        w.close()

    def source(self) -> str:
        w = _Lines()
        self.prelude(w)
        self.defines(w)
        self.main_kernel(w)
        if self.k.partials:
            self.combine_kernel(w)
        return w.text()


def kernel_source(plan: KernelPlan) -> str:
    """The OpenCL C source of ``plan``: its main kernel and, with partials, ``<name>_combine``."""
    return KernelWriter(plan).source()


#: The reason of the call site's launch check (``<name>_fits()``, ``with_launch_check``).
LAUNCH_CHECK_REASON = "the device can launch the kernels (work-group sizes, local memory)"


def with_launch_check(plan: KernelPlan) -> KernelPlan:
    """``plan`` as its call site is written: with ``<name>_fits()`` last among its preconditions, so
    that the original code runs where the device cannot launch the kernels that were planned for a
    larger one (the host function itself refuses the launch, exit status 3, where it is called
    without the check: the tuner, data regions). Only the call site sees it; the report's
    preconditions and the residency planner see the plan as it is."""
    check = Precondition(f"{plan.name}_fits()", LAUNCH_CHECK_REASON)
    return replace(plan, mdh=replace(plan.mdh, preconditions=(*plan.mdh.preconditions, check)))


class OpenCLBackend(Backend[KernelPlan]):
    """OpenCL 1.2 kernels plus C host code; the generated file links with ``-lOpenCL``."""

    name = "opencl"

    def __init__(self, caps: TargetCaps = OPENCL_CAPS) -> None:
        self.caps = caps

    def render(self, plan: KernelPlan) -> GeneratedCode:
        source = kernel_source(plan)
        definition = host_function(plan, source)
        call = CEmitter(_NoDialect()).call(with_launch_check(plan))
        return GeneratedCode(name=plan.name, definition=definition, call=call,
                             headers=("CL/cl.h", "stdio.h", "stdlib.h", "string.h"), flags=("-lOpenCL",),
                             device_sources=((plan.name + ".cl", source),), preamble=host_preamble(),
                             device_data=device_data(plan))
