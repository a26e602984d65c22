"""The search space of one nest: ``MdhExpr`` + sizes + ``TargetCaps`` -> flat ``ParamSpec``s, and back.

``build_space`` flattens ``TuningParams`` (mdpoly/lower/params.py) into pyATF-friendly parameters,
each with a closed-form candidate ``Set`` and a predicate over parameters defined before it:

* ``SPLIT``: ``-1`` or a reduction dim split over threads (only when the concat domain is static
  and fits the result bound, and the dim is large);
* ``T1_<d>``: layer-1 tile of dim ``d``, powers of two below the extent plus the extent itself
  (the extent means "untiled", except for a parallel dim, where it is one tile); small
  reduction dims (extent <= ``MAX_INNER_UNROLL``) stay untiled;
* ``T2_<d>``: layer-2 tile, ``0`` (none) or a power of two dividing ``T1_<d>``; the predicate
  also keeps the running product of the innermost concat tiles under the result bound, so a
  too-large result tile is pruned as soon as its prefix is;
* ``PAR``: the parallel concat dims (a sorted tuple of dims with more than one layer-1 tile);
* ``VEC``: the SIMD dim or ``-1``; ``ORDER``: a point-loop order from a reduced candidate list
  (every permutation of the dims that matter when there are at most ``FULL_PERMUTATIONS`` of
  them, else the heuristic order, its rotations and the reductions-first variants);
* ``THREADS``: ``0`` (the runtime default, all cores) or fewer threads;
* ``REG``: the register block as ``(rows, vectors, lanes)``, ``(0, 0, 0)`` for none, placed by
  ``register_tile_for`` on the chosen SIMD dim and order (a block the lowering rejects is dropped);
* ``DIST``: how the threads share the parallel tiles (``block``, ``cyclic``, ``dynamic``; not
  ``dynamic`` under ``SPLIT``), offered for non-rectangular domains, whose tiles hold unequal
  work (rectangular ones keep ``block``);
* ``PACK``: packed panels as ``(pack_b, pack_a)`` flags, offered where register blocks are; a
  combination the lowering rejects for the chosen block and tiles (``pack`` constraint) is
  dropped by ``to_params``, as a rejected ``REG`` is; ``PREFETCH`` (0/1, with ``PACK``): the
  ``pack_b`` copy prefetches rows ahead (dropped without ``pack_b``).

Under ``SPLIT`` the concat tiles and ``PAR`` are ignored by ``to_params`` (the split lowering
keeps whole-domain partials); equal ``TuningParams`` then come from different configurations,
which the evaluator memoises. Groups that do not read each other stay independent trees, so
the space of a 7-deep MCC is generated in milliseconds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.heuristics import (
    MIN_VECTOR_EXTENT,
    REGISTER_ROWS,
    REGISTER_VECTORS,
    choose_vector_dim,
    default_params,
    elem_bytes,
)
from mdpoly.lower.params import (
    DISTRIBUTIONS,
    MAX_INNER_UNROLL,
    MAX_REGISTER_ACCUMULATORS,
    MAX_RESULT_ELEMS,
    TuningParams,
    violations,
)
from mdpoly.tuning.atf import Config, ParamSpec

#: Orders of at most this many non-trivial dims are enumerated completely (4! = 24).
FULL_PERMUTATIONS = 4
#: A split reduction dim needs at least this many iterations to be worth sharing.
MIN_SPLIT_EXTENT = 2 * MAX_INNER_UNROLL
NONE = -1
#: ``PACK`` values: (pack_b, pack_a).
PACK_FLAGS = ((0, 0), (1, 0), (1, 1), (0, 1))


@dataclass(frozen=True, slots=True)
class NestSpace:
    """The flat parameters of one nest and what ``to_params`` needs to map a config back."""

    mdh: MdhExpr
    extents: tuple[int, ...]
    specs: tuple[ParamSpec, ...]

    def to_params(self, cfg: Config) -> TuningParams:
        """The ``TuningParams`` of a flat configuration (see the module docstring)."""
        dims = self.mdh.dims
        split = cfg["SPLIT"] if cfg["SPLIT"] != NONE else None
        par: tuple[int, ...] = () if split is not None else tuple(cfg["PAR"])
        tiles: list[tuple[int, ...]] = []
        for d, dim in enumerate(dims):
            t1, t2, ext = cfg[f"T1_{d}"], cfg[f"T2_{d}"], self.extents[d]
            if (split is not None and not dim.combine.is_reduction) or (t1 >= ext and d not in par and d != split):
                tiles.append(())
            else:
                tiles.append((t1, t2) if t2 else (t1,))
        vec = cfg["VEC"] if cfg["VEC"] != NONE else None
        p = TuningParams(tiles=tuple(tiles), parallel_dims=par, loop_order=tuple(cfg["ORDER"]),
                         vector_dim=vec, split_dim=split, num_threads=cfg["THREADS"],
                         distribution=cfg.get("DIST", "block"))
        reg, lanes = register_tile_for(self.mdh, self.extents, p, cfg.get("REG", (0, 0, 0)))
        q = replace(p, register_tile=reg, simd_lanes=lanes)
        if violations(self.mdh, q):
            return p
        pack_b, pack_a = cfg.get("PACK", (0, 0))
        packed = replace(q, pack_b=bool(pack_b), pack_a=bool(pack_a),
                         pack_prefetch=bool(pack_b) and bool(cfg.get("PREFETCH", 0)))
        return q if violations(self.mdh, packed) else packed


def register_tile_for(mdh: MdhExpr, ext: tuple[int, ...], p: TuningParams,
                      shape: tuple[int, int, int]) -> tuple[tuple[int, ...], int]:
    """``(register_tile, simd_lanes)`` of a ``REG`` value ``(rows, vectors, lanes)`` under ``p``: a
    concat SIMD dim gets ``vectors * lanes`` points and the innermost other concat dim ``rows``;
    a reduction SIMD dim leaves ``rows`` and ``vectors`` to the two innermost other concat dims."""
    rows, vectors, lanes = shape
    v = p.vector_dim
    if not rows or v is None:
        return (), 0
    dims = mdh.dims
    others = [d for d in p.loop_order if not dims[d].combine.is_reduction and d != v and ext[d] >= 2]
    reg = [1] * len(dims)
    if not dims[v].combine.is_reduction:
        if not others:
            return (), 0
        reg[v], reg[others[-1]] = vectors * lanes, rows
        return tuple(reg), lanes
    for d, n in zip(others[-2:], (rows, vectors)[-len(others[-2:]):] if others else ()):
        reg[d] = n
    return tuple(reg), 0


def concrete_extents(mdh: MdhExpr, sizes: dict[str, int]) -> tuple[int, ...]:
    """Each dim's extent under ``sizes``.

    :raises KeyError: naming the first size parameter that has no value.
    """
    out = []
    for d in mdh.dims:
        out.append(d.extent.constant + sum(c * sizes[n] for n, c in d.extent.terms))
    return tuple(out)


def _pow2_below(n: int) -> list[int]:
    return [1 << k for k in range(max(n, 1).bit_length()) if (1 << k) < n]


def tile_candidates(extent: int) -> tuple[int, ...]:
    """Layer-1 tile sizes for a dim: powers of two below ``extent``, then ``extent`` (untiled)."""
    return (*_pow2_below(extent), max(extent, 1))


def _result_bound(mdh: MdhExpr, caps: TargetCaps) -> int:
    return max(1, min(MAX_RESULT_ELEMS, caps.max_local_bytes // elem_bytes(mdh)))


def _orders(mdh: MdhExpr, ext: tuple[int, ...], vec: int | None) -> Iterable[tuple[int, ...]]:
    """Point-loop orders that keep ``vec`` innermost (small reductions may follow a concat ``vec``)."""
    dims = mdh.dims
    rest = [d for d in range(len(dims)) if d != vec]
    trivial = [d for d in rest if ext[d] == 1]
    small = [d for d in rest if vec is not None and not dims[vec].combine.is_reduction
             and dims[d].combine.is_reduction and 1 < ext[d] <= MAX_INNER_UNROLL]
    tails: list[list[int]] = [[]]
    if vec is not None:
        tails = [[vec, *small]] + ([[vec]] if small else [])
    for tail in tails:
        outer = [d for d in rest if d not in trivial and d not in tail]
        concat = [d for d in outer if not dims[d].combine.is_reduction]
        reds = [d for d in outer if dims[d].combine.is_reduction]
        if len(outer) <= FULL_PERMUTATIONS:
            heads: Iterable[tuple[int, ...]] = itertools.permutations(outer)
        else:
            base, flipped = concat + reds, reds + concat
            heads = [tuple(b[k:] + b[:k]) for b in (base, flipped) for k in range(len(b))]
        for head in heads:
            yield tuple(trivial) + tuple(head) + tuple(tail)


def _vector_candidates(mdh: MdhExpr, ext: tuple[int, ...], strict_fp: bool) -> list[int]:
    chosen = choose_vector_dim(mdh, strict_fp)
    out = [NONE]
    for d, dim in enumerate(mdh.dims):
        if strict_fp and dim.combine.is_reduction:
            continue
        if ext[d] >= MIN_VECTOR_EXTENT or d == chosen:
            out.append(d)
    return out


def build_space(mdh: MdhExpr, sizes: dict[str, int], caps: TargetCaps, strict_fp: bool = False) -> NestSpace:
    """The flat search space of ``mdh`` at ``sizes`` (every size parameter must have a value).

    :raises KeyError: when a size parameter has no value.
    """
    ext = concrete_extents(mdh, sizes)
    dims = mdh.dims
    concat = [d for d, x in enumerate(dims) if not x.combine.is_reduction]
    reds = [d for d, x in enumerate(dims) if x.combine.is_reduction]
    bound = _result_bound(mdh, caps)
    specs: list[ParamSpec] = []

    # {{{ split

    split_vals = [NONE]
    if reds and not strict_fp and math.prod(ext[d] for d in concat) <= bound:
        split_vals += [d for d in reds if ext[d] >= MIN_SPLIT_EXTENT]
    t1_red = tuple(f"T1_{d}" for d in reds)

    def split_ok(c: Config) -> bool:
        s = c["SPLIT"]
        return s == NONE or c[f"T1_{s}"] < ext[s]

    # }}}

    # {{{ tiles (reduction dims first: SPLIT reads them)

    for d in reds:
        vals = (ext[d],) if ext[d] <= MAX_INNER_UNROLL else tile_candidates(ext[d])
        specs.append(ParamSpec(f"T1_{d}", vals, doc=f"layer-1 tile of {dims[d].iterator}"))
        specs.append(_t2_spec(d, ext[d], vals, (), None))
    specs.append(ParamSpec("SPLIT", tuple(split_vals), split_ok if len(split_vals) > 1 else None,
                           t1_red if len(split_vals) > 1 else (), doc="reduction dim split over threads"))
    exts = dict(enumerate(ext))
    for k, d in enumerate(concat):
        vals = tile_candidates(ext[d])
        specs.append(ParamSpec(f"T1_{d}", vals, doc=f"layer-1 tile of {dims[d].iterator}"))
        specs.append(_t2_spec(d, exts, vals, tuple(concat[:k]), bound if reds else None))

    # }}}

    # {{{ parallel dims

    splittable = [d for d in concat if ext[d] > 1]
    par_vals: list[tuple[int, ...]] = [()]
    for n in range(1, len(splittable) + 1):
        par_vals += list(itertools.combinations(splittable, n))
    t1_concat = tuple(f"T1_{d}" for d in concat)

    def par_ok(c: Config) -> bool:
        return all(c[f"T1_{d}"] < ext[d] for d in c["PAR"])

    specs.append(ParamSpec("PAR", tuple(par_vals), par_ok, t1_concat, doc="parallel concat dims (collapsed)"))

    # }}}

    # {{{ simd dim and loop order

    vecs = _vector_candidates(mdh, ext, strict_fp)
    orders: list[tuple[int, ...]] = []
    for v in vecs:
        for o in _orders(mdh, ext, None if v == NONE else v):
            if o not in orders:
                orders.append(o)
    default = default_params(mdh, caps, strict_fp).loop_order
    if default not in orders:
        orders.insert(0, default)
    specs.append(ParamSpec("VEC", tuple(vecs), doc="SIMD dim, -1 for none"))

    def order_ok(c: Config) -> bool:
        v, o = c["VEC"], c["ORDER"]
        if v == NONE:
            return True
        inner = o[o.index(v) + 1:]
        if not inner:
            return True
        return not dims[v].combine.is_reduction and all(
            dims[d].combine.is_reduction and ext[d] <= MAX_INNER_UNROLL for d in inner)

    specs.append(ParamSpec("ORDER", tuple(orders), order_ok, ("VEC",), doc="point-loop order, outermost first"))

    # }}}

    threads = [0] + [t for t in sorted({max(1, caps.cores // 2), caps.cores - 1}) if 0 < t < caps.cores]
    specs.append(ParamSpec("THREADS", tuple(threads), doc="team size, 0 = all cores"))
    specs.append(ParamSpec("REG", _register_shapes(mdh, caps), doc="register block (rows, vectors, lanes)"))
    if mdh.domain:
        def dist_ok(c: Config) -> bool:
            return not (c["DIST"] == "dynamic" and c["SPLIT"] != NONE)

        specs.append(ParamSpec("DIST", DISTRIBUTIONS, dist_ok, ("SPLIT",),
                               doc="how the threads share the parallel tiles"))
    if len(_register_shapes(mdh, caps)) > 1:
        specs.append(ParamSpec("PACK", PACK_FLAGS, doc="packed panels (pack_b, pack_a)"))
        specs.append(ParamSpec("PREFETCH", (0, 1), doc="the pack_b copy prefetches rows ahead"))
    return NestSpace(mdh=mdh, extents=ext, specs=tuple(specs))


def _register_shapes(mdh: MdhExpr, caps: TargetCaps) -> tuple[tuple[int, int, int], ...]:
    """``REG`` values: none, the heuristic's shape, then rows x vectors of the caps' vector width
    and of twice it (wider registers than the caps claim), within the accumulator budget."""
    if not any(d.combine.is_reduction for d in mdh.dims) or mdh.f.uses_indices or mdh.domain:
        return ((0, 0, 0),)
    lanes = max(1, caps.vector_bytes // elem_bytes(mdh))
    out = [(0, 0, 0), (REGISTER_ROWS, REGISTER_VECTORS, lanes)]
    for w in (lanes, 2 * lanes):
        for rows in (2, 4, 6, 8):
            for vectors in (1, 2, 3, 4):
                if rows * vectors <= MAX_REGISTER_ACCUMULATORS and (rows, vectors, w) not in out:
                    out.append((rows, vectors, w))
    return tuple(out)


def _t2_spec(d: int, ext: dict[int, int] | int, t1_vals: tuple[int, ...], earlier: tuple[int, ...],
             bound: int | None) -> ParamSpec:
    """``T2_<d>`` (0 = no layer 2), a power of two below and dividing ``T1_<d>``, none when T1 is
    the whole extent. With ``bound`` (nests that reduce) it also keeps the product of the innermost
    tiles of ``earlier`` concat dims and ``d`` -- the private result tile -- within ``bound``."""
    exts = ext if isinstance(ext, dict) else {d: ext}
    vals = (0, *_pow2_below(max(t1_vals)))
    name = f"T2_{d}"
    dims = (*earlier, d) if bound is not None else (d,)

    def ok(c: Config) -> bool:
        a, b, e = c[f"T1_{d}"], c[name], exts[d]
        if b and (a >= e or b >= a or a % b):
            return False
        if bound is None:
            return True
        return math.prod(min(c[f"T2_{x}"] or c[f"T1_{x}"], exts[x]) for x in dims) <= bound

    reads = tuple(n for x in dims for n in (f"T1_{x}", f"T2_{x}"))
    return ParamSpec(name, vals, ok, reads, doc=f"layer-2 tile of dim {d}, 0 for none")


# {{{ neighbourhood (local search around the heuristic default)


def _tile_moves(t: tuple[int, ...], ext: int, keep_tiled: bool) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    if not t:
        half = 1 << max(0, (ext - 1).bit_length() - 1)
        if 1 <= half < ext:
            out.append((half,))
        return out
    t1 = t[0]
    if 2 * t1 < ext:
        out.append((2 * t1, *t[1:]) if len(t) < 2 or (2 * t1) % t[1] == 0 else (2 * t1,))
    if t1 > 1:
        half = max(1, t1 // 2)
        out.append((half,) if len(t) > 1 and t[1] >= half else (half, *t[1:]))
    if len(t) == 1 and t1 >= 4 and t1 % 4 == 0:
        out.append((t1, t1 // 4))
    if len(t) == 2:
        out.append((t1,))
        if t[1] * 2 < t1 and t1 % (t[1] * 2) == 0:
            out.append((t1, t[1] * 2))
        if t[1] > 1:
            out.append((t1, t[1] // 2))
    if not keep_tiled:
        out.append(())
    return out


def neighbours(space: NestSpace, p: TuningParams, caps: TargetCaps) -> list[TuningParams]:
    """Valid parameter sets one small step from ``p`` (a tile halved/doubled, a layer added or
    dropped, a parallel dim added or removed, adjacent point loops swapped, another SIMD dim, another
    thread count), without duplicates; used to refine the default before the global search."""
    mdh, ext = space.mdh, space.extents
    dims = mdh.dims
    out: list[TuningParams] = []

    def add(q: TuningParams) -> None:
        if q != p and q not in out and not violations(mdh, q):
            out.append(q)

    for d in range(len(dims)):
        keep = d in p.parallel_dims or d == p.split_dim
        for t in _tile_moves(p.tiles[d], ext[d], keep):
            tiles = (*p.tiles[:d], t, *p.tiles[d + 1:])
            add(replace(p, tiles=tiles))
    if p.split_dim is None:
        for d, dim in enumerate(dims):
            if dim.combine.is_reduction or ext[d] <= 1:
                continue
            if d in p.parallel_dims:
                add(replace(p, parallel_dims=tuple(x for x in p.parallel_dims if x != d)))
            elif p.tiles[d] and p.tiles[d][0] < ext[d]:
                add(replace(p, parallel_dims=tuple(sorted((*p.parallel_dims, d)))))
    order = list(p.loop_order)
    for k in range(len(order) - 1):
        swapped = [*order[:k], order[k + 1], order[k], *order[k + 2:]]
        add(replace(p, loop_order=tuple(swapped)))
    for v in _vector_candidates(mdh, ext, False):
        vv = None if v == NONE else v
        if vv == p.vector_dim:
            continue
        moved = tuple(x for x in p.loop_order if x != vv) + ((vv,) if vv is not None else ())
        add(replace(p, vector_dim=vv, loop_order=moved))
        add(replace(p, vector_dim=vv))
    for th in (0, caps.cores - 1, caps.cores // 2):
        if th >= 0:
            add(replace(p, num_threads=th))
    for shape in _register_shapes(mdh, caps):
        reg, lanes = register_tile_for(mdh, ext, p, shape)
        add(replace(p, register_tile=reg, simd_lanes=lanes))
    if mdh.domain:
        for dist in DISTRIBUTIONS:
            add(replace(p, distribution=dist))
    for pack_b, pack_a in PACK_FLAGS:
        add(replace(p, pack_b=bool(pack_b), pack_a=bool(pack_a), pack_prefetch=p.pack_prefetch and bool(pack_b)))
    if p.pack_b:
        add(replace(p, pack_prefetch=not p.pack_prefetch))
    return out

# }}}
