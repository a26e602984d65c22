"""The OpenMP tuning parameters as data: ``TuningParams``, the ``PARAMETERS`` table, ``CONSTRAINTS``.

This is the CPU slice of the MDH parameters (mdh-formalism.md §5): ``#PRT`` as tile sizes per
dimension and layer, ``↔-ass`` as which dimensions are parallel (concat dims, or one reduction dim
split across threads with private partials), ``σ-ord`` as the point-loop order, plus the SIMD
dimension and the thread count. D1=S1=R1 and D2=S2=R2 (one fused nest, §5.6); memory-region
parameters have no effect on OpenMP and are absent.

Everything the tuner needs is declared once here: ``PARAMETERS`` names each parameter, says what
it means and yields its candidate values for an ``MdhExpr`` on a ``TargetCaps``; ``CONSTRAINTS``
are named predicates; ``violations(mdh, params)`` lists the ones a candidate breaks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.plan import Distribution
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.param_table import Constraint, ParamSpec

MAX_TILE_LAYERS = 2
#: The caps ``violations`` passes its constraints when given none (they do not read them).
_ANY_CAPS = TargetCaps(name="any")
#: Register block sizes the table offers per concat dim (the vector dim's are multiples of lanes).
REGISTER_TILE_CANDIDATES = (1, 2, 3, 4, 6, 8, 16, 32, 64)


@dataclass(frozen=True, slots=True)
class TuningParams:
    """One point of the search space.

    ``tiles[d]``: tile sizes of dim ``d``, outer layer first: ``()`` untiled, ``(T1,)`` or
    ``(T1, T2)`` with ``T2`` dividing ``T1``. Sizes need not divide the extent (remainder tiles
    use ``min`` bounds). The innermost tile of the concat dims is the private result tile.
    ``parallel_dims``: concat dims whose layer-1 tile loops form the collapsed parallel loop,
    outermost first. ``split_dim``: a reduction dim whose layer-1 tile loop is shared among
    threads, each keeping private partials combined after the loop (then ``parallel_dims == ()``).
    ``num_threads``: 0 = runtime default. ``loop_order``: permutation of all dims for the point
    loops, outermost first. ``vector_dim``: the SIMD loop, ``None``, ``loop_order[-1]``, or a concat dim followed only by
    small untiled reduction dims (see ``MAX_INNER_UNROLL``).

    ``register_tile[d]`` (``()`` = none): points of concat dim ``d`` per register block, 1 = not
    blocked. Inside the innermost tile, the blocked dims are unrolled and jammed: one scalar
    accumulator per block point, loaded from the result tile before the reduction point loops and
    stored after them (once per reduction tile); points past the last full block run the plain
    point loops. A concat ``vector_dim`` must be blocked, by a multiple of ``simd_lanes``: the
    block's SIMD loop runs ``simd_lanes`` lanes wide around the reduction loops (outer-loop
    vectorisation), each accumulator one vector register.

    ``distribution``: how the parallel loop (or the split reduction's shared loop) hands its
    layer-1 tiles to the threads -- ``block`` (static, contiguous shares), ``cyclic`` (static,
    round robin: balances a triangular domain, whose tiles hold unequal work), ``dynamic``
    (first come, first served; not for a split reduction, whose partials must not depend on
    timing).

    ``pack_b``: packed panels, as BLIS packs B. Per register-blocked tile and reduction tile,
    every input that ``packable_inputs`` names (its subscripts read the SIMD dim and none of the
    other register-blocked dims, like ``B[k][j]`` of a matmul) is copied into a 64-byte-aligned
    per-thread heap buffer in the micro-kernel's order -- one ``register_tile[v]``-wide sliver
    per block of the SIMD dim ``v``, reduction points in ``loop_order`` inside it -- and the
    micro-kernel reads the copy with unit stride. ``pack_a``: the same for the inputs that read
    one other register-blocked dim ``d`` and not ``v`` (``A[i][k]``): slivers of
    ``register_tile[d]`` points, so the micro-kernel's broadcasts read consecutive elements; the
    register blocks then run in BLIS's order, the SIMD dim's blocks outermost (one sliver of
    the SIMD-dim panel stays in L1 while the row panels stream).

    ``pack_prefetch`` (with ``pack_b``): where the copy walks its input row by row, each sliver's
    line ``PACK_PREFETCH_AHEAD`` rows ahead is prefetched (``__builtin_prefetch``), for panels
    read from memory rather than the caches (sgemm 2048^3: +15 % per core; at 1024^3, 2 threads,
    -6 %, so it is off by default).
    """

    tiles: tuple[tuple[int, ...], ...]
    parallel_dims: tuple[int, ...]
    loop_order: tuple[int, ...]
    vector_dim: int | None = None
    split_dim: int | None = None
    num_threads: int = 0
    register_tile: tuple[int, ...] = ()
    simd_lanes: int = 0
    distribution: Distribution = "block"
    pack_b: bool = False
    pack_a: bool = False
    pack_prefetch: bool = False

    @property
    def register_blocked(self) -> bool:
        return any(r > 1 for r in self.register_tile)

    def describe(self, mdh: MdhExpr) -> str:
        its = [d.iterator for d in mdh.dims]
        tiles = ",".join(f"{its[d]}:{'x'.join(map(str, t)) or '-'}" for d, t in enumerate(self.tiles))
        par = ",".join(its[d] for d in self.parallel_dims) or "-"
        split = its[self.split_dim] if self.split_dim is not None else "-"
        vec = its[self.vector_dim] if self.vector_dim is not None else "-"
        order = ",".join(its[d] for d in self.loop_order)
        text = f"tiles={tiles} parallel={par} split={split} order={order} simd={vec} threads={self.num_threads}"
        if self.register_blocked:
            reg = ",".join(f"{its[d]}:{r}" for d, r in enumerate(self.register_tile) if r > 1)
            text += f" reg={reg} lanes={self.simd_lanes}"
        if self.distribution != "block":
            text += f" dist={self.distribution}"
        if self.pack_a or self.pack_b:
            text += " pack=" + "a" * self.pack_a + "b" * self.pack_b + "+prefetch" * self.pack_prefetch
        return text


# {{{ the tuning cache's form


def params_to_dict(p: TuningParams) -> dict[str, Any]:
    return {"tiles": [list(t) for t in p.tiles], "parallel_dims": list(p.parallel_dims),
            "loop_order": list(p.loop_order), "vector_dim": p.vector_dim, "split_dim": p.split_dim,
            "num_threads": p.num_threads, "register_tile": list(p.register_tile), "simd_lanes": p.simd_lanes,
            "distribution": p.distribution, "pack_b": int(p.pack_b), "pack_a": int(p.pack_a),
            "pack_prefetch": int(p.pack_prefetch)}


def params_from_dict(d: dict[str, Any]) -> TuningParams:
    return TuningParams(tiles=tuple(tuple(int(x) for x in t) for t in d["tiles"]),
                        parallel_dims=tuple(d["parallel_dims"]), loop_order=tuple(d["loop_order"]),
                        vector_dim=d["vector_dim"], split_dim=d["split_dim"], num_threads=int(d["num_threads"]),
                        register_tile=tuple(int(x) for x in d.get("register_tile", ())),
                        simd_lanes=int(d.get("simd_lanes", 0)), distribution=d.get("distribution", "block"),
                        pack_b=bool(d.get("pack_b", 0)), pack_a=bool(d.get("pack_a", 0)),
                        pack_prefetch=bool(d.get("pack_prefetch", 0)))

# }}}

# {{{ parameter table


def _tile_candidates(extent: int | None) -> list[int]:
    top = extent if extent is not None else 4096
    vals = sorted({v for v in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048) if v <= top} | {top})
    return vals


def _tiles_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[tuple[tuple[int, ...], ...]]:
    per_dim: list[list[tuple[int, ...]]] = []
    for d in mdh.dims:
        vals = _tile_candidates(d.static_extent)
        opts: list[tuple[int, ...]] = [()]
        opts += [(t,) for t in vals]
        opts += [(t1, t2) for t1 in vals for t2 in vals if t2 < t1 and t1 % t2 == 0]
        per_dim.append(opts)
    return iter(itertools.product(*per_dim))


def _parallel_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[tuple[int, ...]]:
    concat = [i for i, d in enumerate(mdh.dims) if not d.combine.is_reduction]
    for n in range(len(concat) + 1):
        yield from itertools.permutations(concat, n)


def _split_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[int | None]:
    yield None
    yield from (i for i, d in enumerate(mdh.dims) if d.combine.is_reduction)


def _threads_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[int]:
    yield 0
    yield from range(1, 2 * caps.cores + 1)


def _order_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[tuple[int, ...]]:
    return iter(itertools.permutations(range(len(mdh.dims))))


def _vector_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[int | None]:
    yield None
    yield from range(len(mdh.dims))


def _register_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[tuple[int, ...]]:
    yield ()
    per_dim = [(1,) if d.combine.is_reduction else REGISTER_TILE_CANDIDATES for d in mdh.dims]
    yield from itertools.product(*per_dim)


def _lanes_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[int]:
    yield from (0, 4, 8, 16)


DISTRIBUTIONS: tuple[Distribution, ...] = ("block", "cyclic", "dynamic")


def _distribution_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[Distribution]:
    yield from DISTRIBUTIONS


def _pack_values(mdh: MdhExpr, caps: TargetCaps) -> Iterator[bool]:
    yield from (False, True)


PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec("tiles", "#PRT", "tile sizes per dim and layer (1-2 layers); innermost concat tile = result tile",
              _tiles_values),
    ParamSpec("parallel_dims", "D2/S2/R2", "concat dims whose layer-1 tiles are spread over threads (collapsed)",
              _parallel_values),
    ParamSpec("split_dim", "D2/R2 (reduction)", "reduction dim split over threads with private partials",
              _split_values),
    ParamSpec("num_threads", "#PRT(COR)", "threads of the team, 0 = runtime default", _threads_values),
    ParamSpec("loop_order", "D1/S1/R1", "order of the point loops, outermost first", _order_values),
    ParamSpec("vector_dim", "SIMD layer", "dim of the innermost `omp simd` loop, or none", _vector_values),
    ParamSpec("register_tile", "#PRT(REG)", "points per register block (unroll-and-jam) per concat dim, 1 = none",
              _register_values),
    ParamSpec("simd_lanes", "SIMD layer width", "lanes of a register block's SIMD loop along a concat vector dim",
              _lanes_values),
    ParamSpec("distribution", "D2/S2/R2 schedule", "how the threads share the parallel tiles: block, cyclic, dynamic",
              _distribution_values),
    ParamSpec("pack_b", "memory layer (CPU)", "copy the SIMD dim's input panels into aligned per-thread buffers "
              "in the micro-kernel's order (BLIS packing)", _pack_values),
    ParamSpec("pack_a", "memory layer (CPU)", "copy the inputs read along one other register-blocked dim "
              "(not the SIMD dim) into aligned per-thread buffers in the micro-kernel's order", _pack_values),
    ParamSpec("pack_prefetch", "memory layer (CPU)", "prefetch the rows a row-wise pack_b copy reads a few "
              "reduction points ahead", _pack_values),
)

# }}}

# {{{ constraints

#: Upper bound on the elements of one private result tile (per output), and on the per-thread
#: partials of a split reduction: they live on the stack.
MAX_RESULT_ELEMS = 1 << 16


def _result_elems(mdh: MdhExpr, p: TuningParams) -> int | None:
    """Elements of the private result tile, ``None`` when some size is not static."""
    n = 1
    for i, d in enumerate(mdh.dims):
        if d.combine.is_reduction:
            continue
        t = p.tiles[i] if p.split_dim is None else ()
        ext = d.static_extent
        if t:
            size = t[-1] if ext is None else min(t[-1], max(ext, 1))
        elif ext is not None:
            size = max(ext, 1)
        else:
            return None
        n *= size
    return n


def _has_reduction(mdh: MdhExpr) -> bool:
    return any(d.combine.is_reduction for d in mdh.dims)


def _shape_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    return len(p.tiles) == len(m.dims) and all(
        len(t) <= MAX_TILE_LAYERS and all(v >= 1 for v in t) for t in p.tiles)


def _chain_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    return all(len(t) < 2 or (t[1] < t[0] and t[0] % t[1] == 0) for t in p.tiles)


def _parallel_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    return len(set(p.parallel_dims)) == len(p.parallel_dims) and all(
        0 <= d < len(m.dims) and not m.dims[d].combine.is_reduction and len(p.tiles[d]) >= 1
        for d in p.parallel_dims)


def _split_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    if p.split_dim is None:
        return True
    d = p.split_dim
    if not (0 <= d < len(m.dims) and m.dims[d].combine.is_reduction and p.tiles[d]):
        return False
    n = _result_elems(m, p)
    return not p.parallel_dims and n is not None and n <= MAX_RESULT_ELEMS


def _result_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    if not _has_reduction(m):
        return True
    n = _result_elems(m, p)
    return n is not None and n <= MAX_RESULT_ELEMS


def _order_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    return sorted(p.loop_order) == list(range(len(m.dims)))


#: Reduction loops of at most this static trip count may sit inside a concat SIMD loop (the
#: compiler unrolls them and vectorises the outer loop, keeping the accumulator in a register).
MAX_INNER_UNROLL = 16


def _vector_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    v = p.vector_dim
    if v is None:
        return True
    if v not in p.loop_order:
        return False
    inner = p.loop_order[p.loop_order.index(v) + 1:]
    if not inner:
        return True
    if m.dims[v].combine.is_reduction:
        return False
    return all(m.dims[d].combine.is_reduction and not p.tiles[d]
               and (m.dims[d].static_extent or MAX_INNER_UNROLL + 1) <= MAX_INNER_UNROLL for d in inner)


#: Register accumulators (vectors along a concat SIMD dim, else scalars or vector partials of a
#: reduction SIMD dim) one block may hold: the 32 vector registers of AVX-512; more would spill.
MAX_REGISTER_ACCUMULATORS = 32


def register_accumulators(m: MdhExpr, p: TuningParams) -> int:
    """Accumulators of one register block (all outputs)."""
    n = len(m.outputs) * math.prod(p.register_tile) if p.register_tile else 0
    v = p.vector_dim
    if v is not None and not m.dims[v].combine.is_reduction and p.simd_lanes > 0:
        n //= p.simd_lanes
    return n


def _register_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    r = p.register_tile
    if not r:
        return True
    if len(r) != len(m.dims) or any(x < 1 for x in r):
        return False
    if any(x > 1 for d, x in zip(m.dims, r) if d.combine.is_reduction):
        return False
    if not p.register_blocked:
        return True
    if not _has_reduction(m) or p.split_dim is not None or m.f.uses_indices or m.domain:
        return False
    v = p.vector_dim
    if v is not None and not m.dims[v].combine.is_reduction:
        lanes = p.simd_lanes
        if lanes < 1 or r[v] < 2 or r[v] % lanes:
            return False
        if p.loop_order[-1] != v and any(not m.dims[d].combine.is_reduction
                                         for d in p.loop_order[p.loop_order.index(v) + 1:]):
            return False
    return register_accumulators(m, p) <= MAX_REGISTER_ACCUMULATORS


def _threads_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    return p.num_threads >= 0


#: Elements of one thread's packed panels (all packed inputs together), on the heap: 2 MiB of floats.
MAX_PACK_ELEMS = 1 << 19
#: A row-wise ``pack_b`` copy with ``pack_prefetch`` prefetches the line this many rows ahead.
PACK_PREFETCH_AHEAD = 4
#: A thread's slice of a packed buffer is a multiple of this many elements (64 bytes of floats),
#: so every slice starts 64-byte aligned.
PACK_ALIGN_ELEMS = 16


def packable_inputs(m: MdhExpr, p: TuningParams) -> dict[int, int]:
    """The inputs the micro-kernel can read from packed panels, each with the register-blocked dim
    its panel is sliced along: read-only buffers whose subscripts name exactly one blocked dim
    (every block point along the others then reuses one sliver). Needs a register-blocked concat
    SIMD dim; which of them ``pack_b``/``pack_a`` copy is ``packed_inputs``."""
    v = p.vector_dim
    if v is None or m.dims[v].combine.is_reduction or not p.register_tile or p.register_tile[v] < 2:
        return {}
    blocked = {m.dims[d].iterator: d for d, r in enumerate(p.register_tile) if r > 1}
    out = {}
    for n, acc in enumerate(m.inputs):
        buf = m.buffer(acc.buffer)
        names = set().union(*(e.names() for e in acc.index)) if acc.index else set()
        along = [blocked[x] for x in names if x in blocked]
        if buf.kind != "scalar" and not buf.written and not buf.lazy and len(along) == 1:
            out[n] = along[0]
    return out


def packed_inputs(m: MdhExpr, p: TuningParams) -> dict[int, int]:
    """``packable_inputs`` that ``p`` packs: along the SIMD dim with ``pack_b``, along another
    blocked dim with ``pack_a``."""
    return {n: d for n, d in packable_inputs(m, p).items() if (p.pack_b if d == p.vector_dim else p.pack_a)}


def reduction_box(m: MdhExpr, p: TuningParams) -> list[int] | None:
    """Points of each reduction dim in one reduction tile (``loop_order`` order), ``None`` when
    one is not static."""
    out = []
    for d in p.loop_order:
        if not m.dims[d].combine.is_reduction:
            continue
        t, ext = p.tiles[d], m.dims[d].static_extent
        if t:
            out.append(t[-1] if ext is None else max(1, min(t[-1], ext)))
        elif ext is not None:
            out.append(max(ext, 1))
        else:
            return None
    return out


def pack_elems(m: MdhExpr, p: TuningParams, d: int) -> int | None:
    """Elements of one thread's slice of a panel sliced along blocked dim ``d``: ``d``'s full
    register blocks in its tile times the reduction tile, rounded up to ``PACK_ALIGN_ELEMS``;
    ``None`` when not static."""
    box = reduction_box(m, p)
    if box is None:
        return None
    t, ext, r = p.tiles[d], m.dims[d].static_extent, p.register_tile[d]
    span = (t[-1] if ext is None else min(t[-1], ext)) if t else ext
    if span is None:
        return None
    n = max(1, span // r) * r * math.prod(box)
    return -(-n // PACK_ALIGN_ELEMS) * PACK_ALIGN_ELEMS


def _pack_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    if p.pack_prefetch and not p.pack_b:
        return False
    if not (p.pack_a or p.pack_b):
        return True
    if not p.register_blocked or p.split_dim is not None or m.domain or p.simd_lanes < 1:
        return False
    packed = packed_inputs(m, p)
    v = p.vector_dim
    if (p.pack_b and v not in packed.values()) or (p.pack_a and not any(d != v for d in packed.values())):
        return False
    sizes = [pack_elems(m, p, d) for d in packed.values()]
    return all(n is not None for n in sizes) and sum(n or 0 for n in sizes) <= MAX_PACK_ELEMS


def _distribution_ok(m: MdhExpr, p: TuningParams, c: TargetCaps) -> bool:
    return p.distribution in DISTRIBUTIONS and not (p.distribution == "dynamic" and p.split_dim is not None)


CONSTRAINTS: tuple[Constraint[TuningParams], ...] = (
    Constraint("tile-shape", "one entry per dim, at most 2 layers, sizes >= 1", _shape_ok),
    Constraint("tile-chain-divides", "an inner tile size divides (and is less than) the outer one", _chain_ok),
    Constraint("parallel-dims-are-concat", "parallel dims are distinct, tiled concat dims", _parallel_ok),
    Constraint("split-dim-is-reduction",
               "a split dim is a tiled reduction dim; no parallel concat dims then; partials fit",
               _split_ok),
    Constraint("result-tile-fits", "the private result tile has static size <= MAX_RESULT_ELEMS", _result_ok),
    Constraint("loop-order-permutation", "loop_order is a permutation of the dims", _order_ok),
    Constraint("vector-dim-innermost",
               "the SIMD dim is the innermost point loop, or a concat dim with only small untiled "
               "reduction loops (static trip count <= MAX_INNER_UNROLL) inside it", _vector_ok),
    Constraint("threads-nonnegative", "num_threads >= 0", _threads_ok),
    Constraint("register-tile",
               "one entry per dim (or none), 1 on reduction dims; blocking needs a reduction, no split and "
               "no index use in f and a rectangular domain; a blocked concat SIMD dim is a multiple (>= 2) of "
               "simd_lanes; at most MAX_REGISTER_ACCUMULATORS accumulators", _register_ok),
    Constraint("distribution", "block, cyclic or dynamic; a split reduction's shared loop is not dynamic",
               _distribution_ok),
    Constraint("pack",
               "packed panels need a register-blocked concat SIMD dim, an input each option applies to "
               "(packed_inputs), static reduction tiles and at most MAX_PACK_ELEMS elements per thread; "
               "pack_prefetch needs pack_b",
               _pack_ok),
)


def violations(mdh: MdhExpr, params: TuningParams, caps: TargetCaps | None = None) -> list[str]:
    """Names of the constraints ``params`` breaks for ``mdh`` (empty when valid); no OpenMP
    constraint reads ``caps`` (the argument makes the signature every target's).

    Shape constraints are checked first; later ones assume them.
    """
    out: list[str] = []
    for c in CONSTRAINTS:
        if out and c.name != "threads-nonnegative" and out[0] == "tile-shape":
            break
        if not c.holds(mdh, params, caps or _ANY_CAPS):
            out.append(c.name)
    return out

# }}}
