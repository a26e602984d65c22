"""Work-group lowering: ``lower_gpu(mdh, params, caps) -> KernelPlan`` for OpenCL (and CUDA).

Every MDH dim is spread over work-groups x work-items (``GpuParams``); a work-item computes a
private tile of concat points and, for reduction dims, accumulates its strided share of the
reduction privately. Work-items of one group that share concat points combine in local memory;
with several work-groups along the reductions, per-group partials go to a global buffer that a
second kernel folds in group order (deterministic, no atomics). Outputs are written per their
update kind (``out = R``, ``out = init (op) R``, ``out = out (op) R``).

Tiled kernels (``GpuParams.kt``): the reductions are walked tile by tile (the work-group's
reduction tiles outer, the private tile's points inner); per tile, the work-group copies the
footprint of each cached input -- the box its affine index spans over the concat tile x the
reduction tile -- into ``__local`` memory, and each work-item reads every input once per
reduction point into registers (one value per private point the input depends on) before it
updates its ``prod PT`` accumulators.

Non-rectangular domains (``MdhExpr.domain``): the kernels walk the bounding box and evaluate
``f`` (reading its inputs) only where every constraint holds (``KernelPlan.domain``, C text over
the kernels' point indices); results are stored only at concat points that satisfy the
constraints naming concat iterators alone (``KernelPlan.store_domain``). Inputs are then read
from ``__global`` inside that guard (no ``__local`` copies, no register fragments loaded ahead:
a tile's footprint may leave the arrays where the domain does), and output buffers are always
copied in (the points outside the domain keep their values).

Buffers: flat device buffers; each access becomes a flat C index using the declared shape (the
strides may name read-only scalar parameters, which the kernel receives by value). Element counts
come from the declared shape when complete, else from the largest index the accesses reach over
the (rectangular) domain. A buffer is copied in when the nest reads it or writes only part of it,
and out when written.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from mdpoly.diagnostics import CompilerBug, UnsupportedInput
from mdpoly.ir.fields import view_member
from mdpoly.ir.kernel import (
    KAccess,
    KBuffer,
    KDim,
    KernelPlan,
    KInput,
    KOutput,
    StartKind,
)
from mdpoly.ir.launch import Bound, Count, Derived, KernelLaunch, LaunchArg, LaunchSpec, Scratch
from mdpoly.ir.mdh import Access, Affine, Buffer, Combine, MdhExpr
from mdpoly.ir.plan import FExpr, Var
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu_params import (
    GpuParams,
    const_int,
    copy_box,
    gpu_violations,
    gvec_applies,
    input_box,
    local_layout,
    warp_reduce_stride,
)
from mdpoly.lower.lower import check_exit_values, function_params, plan_iterators
from mdpoly.lower.neutral import base_type, neutral
from mdpoly.lower.start_values import init_after_reducing

#: C element types and their OpenCL C spelling (sizes agree on LP64 hosts).
DEVICE_TYPES: dict[str, str] = {
    "char": "char", "signed char": "char", "unsigned char": "uchar",
    "short": "short", "short int": "short", "signed short": "short", "unsigned short": "ushort",
    "unsigned short int": "ushort",
    "int": "int", "signed": "int", "signed int": "int", "unsigned": "uint", "unsigned int": "uint",
    "long": "long", "long int": "long", "signed long": "long", "unsigned long": "ulong",
    "unsigned long int": "ulong", "long long": "long", "long long int": "long",
    "unsigned long long": "ulong", "unsigned long long int": "ulong", "size_t": "ulong",
    "float": "float", "double": "double",
}

_IDENT = re.compile(r"[A-Za-z_]\w*")


def device_type(elem_type: str, mdh: MdhExpr) -> str:
    """The kernels' spelling of a C element type (OpenCL C's names; the CUDA prelude defines them).

    :raises UnsupportedInput: (``gpu-unsupported-type``) for types GPU kernels lack or mdpoly cannot
        size (``long double``, typedef names).
    """
    t = base_type(elem_type)
    if t not in DEVICE_TYPES:
        raise UnsupportedInput(f"type '{elem_type}' has no equivalent in GPU kernels", mdh.loc,
                               code="gpu-unsupported-type")
    return DEVICE_TYPES[t]


def _paren(text: str) -> str:
    return text if _IDENT.fullmatch(text) or text.isdigit() else f"({text})"


def _index_text(e: Affine, ix: str) -> str:
    """``e`` with every name converted to the index type ``ix`` first: the kernel binds the user's
    iterators in their own (possibly unsigned) types, and ``-3 * j`` must not wrap around."""
    widened = Affine.of({f"({ix}){n}": c for n, c in e.terms}, e.constant)
    return widened.to_c()


def _flat_index(acc: Access, buf: Buffer, wide: bool = True) -> str:
    if buf.kind == "scalar":
        return "0"
    ix = "long" if wide else "int"
    parts = [_paren(_index_text(e, ix)) for e in acc.index]
    if not parts:
        return "0"
    flat = f"(long){parts[0]}" if len(parts) > 1 and wide else parts[0]
    for k in range(1, len(parts)):
        flat = f"({flat}) * {_paren(buf.shape[k])} + {parts[k]}"
    return flat


#: Index arithmetic stays in ``int`` while every buffer and extent is below this many elements
#: (tiles reach past the domain by less than a tile, so there is room to spare).
INT_INDEX_LIMIT = 1 << 30

#: Element types read from ``__local`` memory as vectors (``float4`` etc. in OpenCL C and CUDA).
VECTOR_TYPES = frozenset({"float", "int", "uint"})

def _max_over_box(e: Affine, mdh: MdhExpr) -> str:
    """The largest value of ``e`` over the nest's rectangular domain, as C text (host scope)."""
    bounds = {d.iterator: d for d in mdh.dims}
    out: list[str] = []
    for name, c in e.terms:
        d = bounds.get(name)
        if d is None:
            out.append(f"{c} * (long){name}")
        elif c > 0:
            out.append(f"{c} * ((long)({d.lower.to_c()}) + ({d.extent.to_c()}) - 1)")
        else:
            out.append(f"{c} * (long)({d.lower.to_c()})")
    out.append(str(e.constant))
    return " + ".join(out)


class _GpuLowerer:
    def __init__(self, mdh: MdhExpr, p: GpuParams, caps: TargetCaps, within: MdhExpr | None = None) -> None:
        self.m = mdh = init_after_reducing(mdh)   # a start value read from an array: added after reducing
        self.within = within   # the computation ``mdh`` is a slice of (its index type holds for ``mdh``)
        self.p = p
        self.caps = caps
        self.op = mdh.reduction_op
        self.reds = [d for d in mdh.dims if d.combine.is_reduction]
        self.wide = True   # 64-bit flat indices; run() decides
        if self.reds and self.op is None:
            raise UnsupportedInput("reduction dimensions combine with different operators", mdh.loc,
                                   code="mixed-reduction-operators")

    # {{{ buffers

    def _read(self, name: str) -> bool:
        if any(a.buffer == name for a in self.m.inputs):
            return True
        for o in self.m.outputs:
            fin = getattr(o, "finish", None)
            if fin is not None and any(a.buffer == name for a in fin.inputs):
                return True
        return any(o.access.buffer == name and o.update == "accumulate" for o in self.m.outputs)

    def _covers(self, buf: Buffer) -> bool:
        """Whether the outputs on ``buf`` write every element of its declared shape (never in a
        non-rectangular domain, which leaves some unwritten)."""
        if self.m.domain:
            return False
        concat = {d.iterator: d for d in self.m.dims if not d.combine.is_reduction}
        for o in self.m.outputs:
            if o.access.buffer != buf.name or len(o.access.index) != len(buf.shape):
                continue
            ok = True
            used: set[str] = set()
            for e, ext in zip(o.access.index, buf.shape):
                # one iterator of its own per dimension: L[i][i] writes a diagonal, not the square
                if (len(e.terms) != 1 or e.constant != 0 or e.terms[0][1] != 1 or e.terms[0][0] not in concat
                        or e.terms[0][0] in used):
                    ok = False
                    break
                used.add(e.terms[0][0])
                d = concat[e.terms[0][0]]
                if not (d.lower.is_constant and d.lower.constant == 0) or d.extent.to_c() != ext.strip():
                    ok = False
                    break
            if ok:
                return True
        return False

    def _covers_when(self, buf: Buffer) -> str:
        """A C condition under which the outputs on ``buf`` write every element of its declared
        shape: each dimension indexed by its own concat iterator plus a constant (``i + c``, a
        rectangular domain), whose run-time range ``[lower + c, lower + c + extent)`` is the
        declared one ``[0, N)`` (``(n) == (N)``); ``""`` when there is none."""
        if self.m.domain or not buf.shape or not all(s.strip() for s in buf.shape):
            return ""
        concat = {d.iterator: d for d in self.m.dims if not d.combine.is_reduction}
        for o in self.m.outputs:
            if o.access.buffer != buf.name or len(o.access.index) != len(buf.shape):
                continue
            conds: list[str] = []
            seen: set[str] = set()
            for e, ext in zip(o.access.index, buf.shape):
                if len(e.terms) != 1 or e.terms[0][1] != 1 or e.terms[0][0] not in concat or e.terms[0][0] in seen:
                    break
                seen.add(e.terms[0][0])
                d = concat[e.terms[0][0]]
                if not (d.lower.is_constant and d.lower.constant + e.constant == 0):
                    conds.append(f"(long long)({d.lower.to_c()}) + {e.constant}LL == 0LL")
                if d.extent.to_c() != ext.strip():
                    conds.append(f"(long long)({d.extent.to_c()}) == (long long)({ext.strip()})")
            else:
                return " && ".join(conds) or "1"
        return ""

    def _count(self, buf: Buffer) -> str:
        if buf.kind == "scalar":
            return "1"
        if buf.shape and all(s.strip() for s in buf.shape):
            return " * ".join(_paren(s) for s in buf.shape)
        accs = [a for a in self.m.inputs if a.buffer == buf.name] + [
            o.access for o in self.m.outputs if o.access.buffer == buf.name] + [
            a for o in self.m.outputs if o.finish is not None
            for a in o.finish.inputs if a.buffer == buf.name]
        first = [_max_over_box(a.index[0], self.m) for a in accs if a.index]
        if not first:
            return "1"
        for a in accs:
            if a.index and not box_max_is_domain_max(self.m, a.index[0]):
                raise UnsupportedInput(
                    f"the size of '{buf.name}' is not declared and its accesses reach further over the bounding box "
                    "than over the non-rectangular domain", self.m.loc, code="non-rectangular-domain")
        top = first[0]
        for f in first[1:]:
            top = f"MDP_MAX({top}, {f})"
        rest = "".join(f" * {_paren(s)}" for s in buf.shape[1:])
        return f"MDP_MAX(({top}) + 1, 1){rest}"

    def buffers(self) -> tuple[KBuffer, ...]:
        out: list[KBuffer] = []
        value_names = {b.name for b in self.m.buffers if b.kind == "scalar" and not b.written}
        for b in function_params(self.m):
            if b.kind not in ("array", "pointer", "scalar"):
                raise UnsupportedInput(f"'{b.name}' is not one dense array (rows reached through pointers)",
                                       self.m.loc, code="gpu-indirect-buffer")
            if b.lazy:  # __local caches read inputs ahead (mdpoly.frontend.guarded_reads)
                raise UnsupportedInput(f"'{b.name}' is read under selects or ifs that keep some of its reads outside its "
                                       "rows; kernels may read inputs ahead of the select", self.m.loc, code="gpu-guarded-read")
            if view_member(b.name):  # the kernel source would need the struct's definition
                raise UnsupportedInput(f"'{b.c_value}[].{view_member(b.name)}' is an array-of-structs field, which "
                                       "kernels do not take (the struct type is not declared in the kernel source)",
                                       self.m.loc, code="gpu-struct-field")
            dev = device_type(b.elem_type, self.m)
            if b.kind == "scalar" and not b.written:
                out.append(KBuffer(b.name, b.elem_type, dev, "value"))
                continue
            for s in b.shape[1:]:
                missing = set(_IDENT.findall(s)) - value_names
                if missing:
                    raise UnsupportedInput(f"extent '{s}' of '{b.name}' names {', '.join(sorted(missing))}, "
                                           "which the nest does not receive", self.m.loc,
                                           code="gpu-unknown-extent")
            written = b.written
            copy_in = self._read(b.name) or (written and not self._covers(b))
            unless = self._covers_when(b) if copy_in and written and not self._read(b.name) else ""
            out.append(KBuffer(b.name, b.elem_type, dev, "global", written=written, copy_in=copy_in,
                               copy_out=written, count=self._count(b), copy_in_unless=unless))
        return tuple(out)

    # }}}

    def index_type(self) -> str:
        """``int`` when all extents, buffer sizes and partials are constants below
        ``INT_INDEX_LIMIT`` and no index names a variable other than the iterators, else ``long``;
        of the computation ``within`` when given (a slice's points are some of its points)."""
        m, p = self.within or self.m, self.p
        its = {d.iterator for d in m.dims}
        if not all(d.lower.is_constant and d.extent.is_constant for d in m.dims):
            return "long"
        if any(abs(d.lower.constant) + d.extent.constant >= INT_INDEX_LIMIT for d in m.dims):
            return "long"
        accs = list(m.inputs) + [o.access for o in m.outputs] + [
            a for o in m.outputs if o.finish is not None for a in o.finish.inputs]
        if any(name not in its for a in accs for e in a.index for name, _ in e.terms):
            return "long"
        for b in function_params(m):
            if b.kind == "scalar":
                continue
            n = const_int(self._count(b))
            if n is None or n >= INT_INDEX_LIMIT:
                return "long"
        points = 1
        for d, dim in enumerate(m.dims):
            points *= dim.extent.constant if not dim.combine.is_reduction else max(1, p.num_wg[d])
        return "int" if points < INT_INDEX_LIMIT else "long"

    def domain_text(self, cons: tuple[Affine, ...]) -> tuple[str, ...]:
        """Each constraint as C text ``e >= 0`` over the kernels' point indices ``mdp_i_<d>``
        (size parameters widened to ``long``)."""
        its = {d.iterator: n for n, d in enumerate(self.m.dims)}
        values = {b.name for b in self.m.buffers if b.kind == "scalar" and not b.written}
        out: list[str] = []
        for c in cons:
            text = ""
            for name, k in c.terms:
                if name in its:
                    var = f"mdp_i_{its[name]}"
                elif name in values:
                    var = f"(long){name}"
                else:
                    raise UnsupportedInput(f"the domain constraint '{c} >= 0' names '{name}', which the nest does "
                                           "not receive", self.m.loc, code="non-rectangular-domain")
                term = var if abs(k) == 1 else f"{abs(k)} * {var}"
                text = (term if k > 0 else f"-{term}") if not text else f"{text} {'+' if k > 0 else '-'} {term}"
            if c.constant or not text:
                text = str(c.constant) if not text else f"{text} {'+' if c.constant > 0 else '-'} {abs(c.constant)}"
            out.append(f"{text} >= 0")
        return tuple(out)

    def access(self, acc: Access) -> KAccess:
        return KAccess(acc.buffer, _flat_index(acc, self.m.buffer(acc.buffer), self.wide))

    def outputs(self) -> tuple[KOutput, ...]:
        f = self.m.f
        binds = tuple((name, Var(self.access(acc).to_c())) for name, acc in zip(f.params, self.m.inputs))
        outs: list[KOutput] = []
        for k, o in enumerate(self.m.outputs):
            start: StartKind = "none"
            neut = "0"
            if self.reds:
                assert self.op is not None
                op = self.op.value_op
                if self.op.is_arg and k == 1:  # an argmax's index: after every index in its tie rule's order
                    op = Combine.MAX if self.op.keeps_last else Combine.MIN
                neut, _ = neutral(op, o.elem_type)
                if o.update == "accumulate":
                    start = "old"
                elif o.init is not None:
                    if "[" in o.init:
                        raise UnsupportedInput("an initial value read from an array is not supported in "
                                               "GPU kernels yet", self.m.loc, code="gpu-array-init")
                    start = "init"
            elif o.update == "accumulate" or o.init is not None:
                raise UnsupportedInput("an accumulating output needs a reduction dimension to give its operator",
                                       self.m.loc, code="no-reduction-operator")
            fin = getattr(o, "finish", None)
            finish = None
            if fin is not None:
                fin_binds = ((fin.result, Var("mdp_fin")), *(
                    (name, Var(self.access(acc).to_c())) for name, acc in zip(fin.params, fin.inputs)))
                finish = FExpr(fin.expr, fin_binds)
            outs.append(KOutput(self.access(o.access), device_type(o.elem_type, self.m),
                                FExpr(f.results[k], binds), start, o.init, neut, finish))
        return tuple(outs)

    def _bound(self, e: Affine, top: bool) -> str:
        """The least (``top`` false) or largest value of ``e`` over the domain (kernel scope)."""
        its = {d.iterator: n for n, d in enumerate(self.m.dims)}
        out = [str(e.constant)]
        for name, c in e.terms:
            d = its.get(name)
            if d is None:
                out.append(f"{c} * (long){name}")
            elif (c > 0) == top:
                out.append(f"{c} * (mdp_lo_{d} + mdp_ext_{d} - 1)")
            else:
                out.append(f"{c} * mdp_lo_{d}")
        return " + ".join(out)

    def tiles(self) -> tuple[KInput, ...]:
        """Per input: the concat dims it depends on and, when cached, its ``__local`` box."""
        m, p = self.m, self.p
        its = {d.iterator: n for n, d in enumerate(m.dims)}
        cache = p.cached(len(m.inputs))
        out: list[KInput] = []
        for k, (param, acc) in enumerate(zip(m.f.params, m.inputs)):
            names = {name for e in acc.index for name, _ in e.terms}
            deps = tuple(d for d, dim in enumerate(m.dims) if not dim.combine.is_reduction and dim.iterator in names)
            buf = m.buffer(acc.buffer)
            kin = KInput(param, self.access(acc), device_type(buf.elem_type, m), deps)
            if cache[k]:
                box = input_box(m, p, k)
                strides, local_elems, vpos = local_layout(m, p, k)
                origin: list[str] = []
                local: list[str] = []
                for e in acc.index:
                    o = [str(e.constant)]
                    loc = []
                    for name, c in e.terms:
                        d = its.get(name)
                        if d is None:
                            o.append(f"{c} * (long){name}")
                            continue
                        o.append(f"{c} * mdp_tb_{d}")
                        loc.append(f"{c} * mdp_off_{d}")
                        if c < 0:   # the box starts at the tile's last point
                            o.append(f"{c} * {p.tile(m, d) - 1}")
                            loc.append(str(-c * (p.tile(m, d) - 1)))
                    origin.append(" + ".join(o))
                    local.append(" + ".join(loc) or "0")
                flat = " + ".join(_paren(t) if st == 1 else f"{_paren(t)} * {st}"
                                  for t, st in zip(local, strides) if t != "0") or "0"
                vread = self._vread(acc, deps, strides) if vpos is not None and kin.elem_type in VECTOR_TYPES else 1
                gvec = gvec_applies(m, p, k) if kin.elem_type in VECTOR_TYPES else 1
                view = _merged_rows(copy_box(m, p, k), (box, tuple(origin),
                                    tuple(self._bound(e, False) for e in acc.index),
                                    tuple(self._bound(e, True) for e in acc.index), buf.shape, strides))
                box, strides = view[0], view[5]
                vstore = (gvec > 1 and box[-1] % gvec == 0 and strides[-1] == 1
                          and all(st % gvec == 0 for st in strides[:-1]))
                kin = KInput(param, kin.access, kin.elem_type, deps, True, box, view[1], view[2], view[3],
                             view[4], flat, strides, local_elems, vread, gvec, vstore)
            out.append(kin)
        return tuple(out)

    def _vread(self, acc: Access, deps: tuple[int, ...], strides: tuple[int, ...]) -> int:
        """The vector width a work-item reads its fragment of a cached input with (1: scalar)."""
        m, p = self.m, self.p
        its = {d.iterator: n for n, d in enumerate(m.dims)}
        v = p.vec_width(deps[0])
        coeff: dict[int, int] = {}
        const = 0
        for e, st in zip(acc.index, strides):
            for name, c in e.terms:
                d = its.get(name)
                if d is None:
                    return 1  # a size parameter (or a host loop's iterator) shifts the fragment unknowably
                coeff[d] = coeff.get(d, 0) + c * st
                if c < 0:
                    const += -c * (p.tile(m, d) - 1) * st
        if coeff.get(deps[0]) != 1 or const % v:
            return 1
        return v if all(c % v == 0 for d, c in coeff.items() if d != deps[0]) else 1

    def run(self) -> KernelPlan:
        kt = self.p.kt or (0,) * len(self.m.dims)
        index_type = self.index_type()
        self.wide = index_type == "long"
        dims = tuple(KDim(k, d.iterator, d.lower, d.extent, d.combine, self.p.num_wi[k], self.p.pt[k],
                          self.p.num_wg[k], kt[k], self.p.vec_width(k), device_type(d.iterator_type, self.m))
                     for k, d in enumerate(self.m.dims))
        buffers = self.buffers()
        outputs = self.outputs()
        red_wi = 1
        red_wg = 1
        for d in dims:
            if d.is_reduction:
                red_wi *= d.num_wi
                red_wg *= d.num_wg
        fp64 = any(b.device_type == "double" for b in buffers) or "double" in self.m.f.body
        its = {d.iterator for d in self.m.dims}
        concat = {d.iterator for d in self.m.dims if not d.combine.is_reduction}
        store = tuple(c for c in self.m.domain if (c.names() & its) <= concat)
        plan = KernelPlan(
            name=self.m.name, loc=self.m.loc, mdh=self.m, params=function_params(self.m), dims=dims,
            grid_axes=self.p.ocl_groups, buffers=buffers, outputs=outputs, op=self.op,
            local_combine=red_wi > 1, partials=red_wg > 1, needs_fp64=fp64, tuning=self.p,
            tiles=self.tiles() if self.p.tiled else None, index_type=index_type,  # type: ignore[arg-type]
            prefetch=self.p.tiled and any(self.p.cache) and self.p.prefetch in (1, 2),
            prefetch_buffers=2 if self.p.prefetch == 2 else 1,
            iterators=plan_iterators(self.m), domain=self.domain_text(self.m.domain),
            store_domain=self.domain_text(store), min_groups=self.p.min_blocks,
            async_copy=self.p.tiled and any(self.p.cache) and self.p.async_copy == 1, warp_tile=self.p.warp_tile,
            warp_reduce=(warp_reduce_stride(self.m, self.p) or 0) if self.p.warp_reduce and red_wi > 1 else 0)
        return replace(plan, launch=launch_spec(plan))


def _merged_rows(merged: tuple[int, ...], view: tuple[tuple[Any, ...], ...]) -> tuple[tuple[Any, ...], ...]:
    """A cached input's copy view (box, origin, lo, hi, shape, strides per index position) with its
    trailing positions merged into one row as ``copy_box`` (``merged``) does: position ``j`` and
    the next, whose extent ``S`` the row spans whole, become one position ``g_j * S + g_{j+1}``
    (its origin and bounds alike; any element between the merged bounds lies in the array)."""
    box, origin, lo, hi, shape, strides = (list(v) for v in view)
    while len(box) > len(merged):
        s = shape[-1]
        box[-2:] = [box[-2] * box[-1]]
        origin[-2:] = [f"({origin[-2]}) * {_paren(s)} + ({origin[-1]})"]
        lo[-2:] = [f"({lo[-2]}) * {_paren(s)} + ({lo[-1]})"]
        hi[-2:] = [f"({hi[-2]}) * {_paren(s)} + ({hi[-1]})"]
        shape[-2:] = [f"{_paren(shape[-2])} * {_paren(s)}" if shape[-2] else ""]
        strides[-2:] = [1]
    assert tuple(box) == merged
    return tuple(box), tuple(origin), tuple(lo), tuple(hi), tuple(shape), tuple(strides)


def box_max_is_domain_max(mdh: MdhExpr, e: Affine) -> bool:
    """Whether ``e`` reaches the same largest value over the domain as over its bounding box
    (always for a rectangular nest), decided by isl for every value of the size parameters
    (where the domain is not empty)."""
    if not mdh.domain:
        return True
    import islpy as isl

    its = [d.iterator for d in mdh.dims]
    def isl_text(a: Affine) -> str:
        return a.to_c().replace(" * ", "*")
    names: set[str] = set(e.names())
    for d in mdh.dims:
        names |= d.lower.names() | d.extent.names()
    for c in mdh.domain:
        names |= c.names()
    params = sorted(names - set(its))
    head = f"[{', '.join(params)}] -> " if params else ""
    box = [f"{isl_text(d.lower)} <= {d.iterator} < {isl_text(d.lower)} + {isl_text(d.extent)}" for d in mdh.dims]
    dom = box + [f"{isl_text(c)} >= 0" for c in mdh.domain]
    value = f"{head}{{ [{', '.join(its)}] -> [{isl_text(e)}] }}"

    def top(cons: list[str]) -> isl.PwAff:
        s = isl.Set(f"{head}{{ [{', '.join(its)}] : {' and '.join(cons)} }}")
        return s.apply(isl.Map(value)).dim_max(0)

    in_domain = isl.Set(f"{head}{{ [{', '.join(its)}] : {' and '.join(dom)} }}").params()
    return top(box).intersect_domain(in_domain).is_equal(top(dom))


#: Work-items per work-group of the combine kernel (one work-item per concat point).
COMBINE_GROUP = 256


def launch_spec(plan: KernelPlan) -> LaunchSpec:
    """How the host code launches ``plan``'s kernels (``mdpoly.ir.launch``): per dim its bounds;
    per concat dim ``mdp_nwg_<d> = ceil(extent / (pt * num_wi))`` work-groups; the main kernel
    over ``plan.grid_axes`` (an axis's work-groups: the product of its dims' work-groups, its
    work-items: the product of their ``num_wi``); with partials, one scratch buffer per output
    (a value per concat point and reduction work-group) and the combine kernel, one work-item per
    concat point in work-groups of ``COMBINE_GROUP``. Kernel arguments follow
    ``KernelWriter.params()``: buffers, per dim lower bound and extent, per concat dim its
    work-groups, the scratch buffers."""
    bounds: list[Bound] = []
    for d in plan.dims:
        bounds += [Bound(f"mdp_lo_{d.index}", d.lower), Bound(f"mdp_ext_{d.index}", d.extent)]
    counts = tuple(Derived(f"mdp_nwg_{d.index}", Count((f"mdp_ext_{d.index}",), 1, d.pt * d.num_wi))
                   for d in plan.concat)
    args = [LaunchArg("buffer", b.name) if b.role == "global" else LaunchArg("scalar", b.name) for b in plan.buffers]
    for d in plan.dims:
        args += [LaunchArg("index", f"mdp_lo_{d.index}"), LaunchArg("index", f"mdp_ext_{d.index}")]
    args += [LaunchArg("index", c.name) for c in counts]
    points = tuple(f"mdp_ext_{d.index}" for d in plan.concat)
    red_wg = math.prod(d.num_wg for d in plan.reductions)
    scratch: tuple[Scratch, ...] = ()
    if plan.partials:
        scratch = tuple(Scratch(f"part{n}", plan.mdh.outputs[n].elem_type, Count(points, red_wg))
                        for n in range(len(plan.outputs)))
        args += [LaunchArg("scratch", s.name) for s in scratch]
    groups: list[Count] = []
    sizes: list[int] = []
    for axis in plan.grid_axes:
        dims = [plan.dims[i] for i in axis]
        groups.append(Count(tuple(f"mdp_nwg_{d.index}" for d in dims if not d.is_reduction),
                            math.prod(d.num_wg for d in dims if d.is_reduction)))
        sizes.append(math.prod(d.num_wi for d in dims))
    launches = [KernelLaunch(plan.name, tuple(groups), tuple(sizes))]
    if plan.partials:
        launches.append(KernelLaunch(f"{plan.name}_combine", (Count(points, 1, COMBINE_GROUP),), (COMBINE_GROUP,),
                                     items=Count(points)))
    return LaunchSpec(bounds=tuple(bounds), skip_when_empty=points, counts=counts, args=tuple(args),
                      scratch=scratch, launches=tuple(launches))


def lower_gpu(mdh: MdhExpr, params: GpuParams, caps: TargetCaps, within: MdhExpr | None = None) -> KernelPlan:
    """Lower ``mdh`` for a work-group target with ``params``. ``within``: the computation ``mdh``
    is a slice of (``--devices``: its split dimension runs over a run-time part of ``within``'s
    range, every other dimension and every buffer as in ``within``), whose index type it takes.

    :raises CompilerBug: when ``params`` breaks a constraint of ``mdpoly.lower.gpu_params``.
    :raises UnsupportedInput: for nests the kernel cannot express (mixed reduction operators,
        element types without an OpenCL C spelling, extents naming variables the nest lacks).
    """
    check_exit_values(mdh)
    bad = gpu_violations(mdh, params, caps)
    if bad:
        raise CompilerBug(f"invalid work-group parameters for '{mdh.name}' ({params.describe(mdh)}): "
                          + ", ".join(bad), mdh.loc)
    return _GpuLowerer(mdh, params, caps, within).run()
