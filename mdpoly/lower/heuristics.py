"""Default tuning parameters without search: ``default_params(mdh, caps, strict_fp) -> TuningParams``.

The rules, in order:

1. SIMD dim: the dim whose iterator has coefficient 1 in the last subscript of most accesses
   (outputs count for concat dims; a subscript other than the last one counts against), ties to
   concat dims, then to inner dims. A reduction dim becomes a ``simd reduction`` loop, which
   reassociates, so ``strict_fp`` restricts the choice to concat dims.
2. Point-loop order: concat dims, then reduction dims, in nest order, the SIMD dim last --
   except small constant reduction loops, which go inside a concat SIMD loop (outer-loop
   vectorisation with the accumulator in a register, e.g. a 5x5 convolution filter).
3. Result tile (nests that reduce): the SIMD concat dim gets ``VECTOR_TILE_BYTES`` of elements,
   the other concat dims share what is left of half the L1 cache, at most ``CONCAT_TILE`` each.
   Reduction dims get ``REDUCTION_TILE`` (the SIMD one stays whole); concat-only nests tile the
   non-SIMD dims by ``CONCAT_TILE`` for the parallel loop and leave the SIMD dim whole.
4. Parallel dims: the concat dims with most tiles until there are ``PAR_SLACK * caps.cores``
   tiles, shrinking tiles when there are too few; every tiled concat dim whose extent is known
   only at run time, all collapsed: any one of them may be short (``nz = 8`` planes of a 3-D
   stencil under a tile of 64, a batch of 2), one parallel loop over it alone a single chunk; if the concat tiles still cannot feed
   ``caps.cores`` threads and the concat domain is small and static, split the largest reduction
   dim over the threads instead (not under ``strict_fp``); of run-time extent, with other dims
   inside, in chunks of one point (a plane of a 3-D sum).
5. Register block (nests that reduce, not split, ``f`` not using indices): with a concat SIMD
   dim, ``REGISTER_VECTORS`` vectors of ``caps.vector_bytes`` along it times ``REGISTER_ROWS``
   points of the innermost other concat dim (whose tile is rounded down to a multiple of them);
   with a reduction SIMD dim, ``REGISTER_ROWS`` x ``REGISTER_VECTORS`` points of the two innermost
   other concat dims, each accumulator a vector of partial sums. At most 12 accumulators, so
   16 vector registers (AVX2) hold them with the operands.
6. Non-rectangular domains (``MdhExpr.domain``): no register block (the lowering clips point
   loops to the domain instead); ``DOMAIN_SLACK`` times more parallel tiles, handed out
   ``cyclic``-ally, so that the unequal tiles of a triangle even out over the threads.
7. Packed panels (``pack_b``), for matmul-like nests (a concat SIMD dim blocked in registers,
   one reduction dim, an input along the SIMD dim to copy) of at least ``PACK_MIN_WORK`` points:
   cache tiles from the cache sizes -- the reduction tile makes one sliver of the copied panel
   take ``1 / PACK_SLIVER_SHARE`` of L1, the SIMD dim's tile makes the panel take
   ``1 / PACK_PANEL_SHARE`` of L2, and the row
   dim's tile is a thread's share of the rows in as few tiles as the result tile holds, so that
   each thread copies a panel as few times as possible -- and every tiled concat dim parallel.
   Extents known only at run time are planned as large ones, at any size (a call too small for
   threads runs the nest as written, by the run-time guard): the row tile is as many rows as the
   result tile holds, which the parallel loop's run-time step shares out over the team.
"""

from __future__ import annotations

import math
from dataclasses import replace

from mdpoly.ir.mdh import Access, MdhExpr
from mdpoly.ir.plan import Distribution
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.neutral import base_type
from mdpoly.lower.params import MAX_INNER_UNROLL, MAX_RESULT_ELEMS, TuningParams, packable_inputs, violations

VECTOR_TILE_BYTES = 1024
CONCAT_TILE = 64
REDUCTION_TILE = 256
PAR_SLACK = 4
DOMAIN_SLACK = 4
SPLIT_MIN_WORK = 1 << 15
MIN_VECTOR_EXTENT = 8
REGISTER_ROWS = 6
REGISTER_VECTORS = 2
PACK_MIN_WORK = 1 << 24
#: One sliver of the packed panel (reduction tile x the SIMD dim's register block) takes this
#: fraction of the L1 cache (the rest: the other operand's rows and the accumulators' lines).
PACK_SLIVER_SHARE = 2
#: The packed panel (reduction tile x SIMD tile) takes at most this fraction of the L2 cache, which
#: also holds the result tile (up to ``max_local_bytes``) and the rows of the other operand.
PACK_PANEL_SHARE = 8

_SIZES = {"char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2, "int": 4,
          "unsigned": 4, "unsigned int": 4, "float": 4, "double": 8, "long": 8, "unsigned long": 8,
          "long long": 8, "unsigned long long": 8, "long double": 16}


def elem_bytes(mdh: MdhExpr) -> int:
    """Largest element size among the nest's inputs and outputs (8 for unknown types)."""
    types = [o.elem_type for o in mdh.outputs] + [mdh.buffer(a.buffer).elem_type for a in mdh.inputs]
    return max((_SIZES.get(base_type(t), 8) for t in types), default=8)


def _element_strides(mdh: MdhExpr, acc: Access) -> list[int | None]:
    """Element stride of each subscript of ``acc`` from the buffer's declared shape (None: unknown)."""
    shape = mdh.buffer(acc.buffer).shape
    strides: list[int | None] = [1] * len(acc.index)
    run: int | None = 1
    for pos in range(len(acc.index) - 1, -1, -1):
        strides[pos] = run
        ext = shape[pos].strip() if pos < len(shape) else ""
        run = run * int(ext) if run is not None and ext.isdigit() else None
    return strides


def _stride_score(mdh: MdhExpr, d: int) -> float:
    """How many accesses walk memory with unit stride along dim ``d``, minus strided ones."""
    it = mdh.dims[d].iterator
    ext = mdh.dims[d].static_extent
    if ext is not None and ext < MIN_VECTOR_EXTENT:
        return -math.inf if ext <= 1 else -100.0 + ext
    accs: list[Access] = list(mdh.inputs)
    if not mdh.dims[d].combine.is_reduction:
        accs += [o.access for o in mdh.outputs]
    score = 0.0
    for a in accs:
        if not a.index:
            continue
        stride: int | None = 0
        for e, st in zip(a.index, _element_strides(mdh, a)):
            c = e.coeff(it)
            if c:
                stride = None if st is None or stride is None else stride + c * st
        if stride is None:
            stride = 1 if a.index[-1].coeff(it) == 1 and not any(e.coeff(it) for e in a.index[:-1]) else 2
        if stride == 1:
            score += 1
        elif stride != 0:
            score -= 0.5
    return score


def choose_vector_dim(mdh: MdhExpr, strict_fp: bool) -> int | None:
    allowed = [d for d, dim in enumerate(mdh.dims) if not (strict_fp and dim.combine.is_reduction)]
    if not allowed:
        return None
    return max(allowed, key=lambda d: (_stride_score(mdh, d), not mdh.dims[d].combine.is_reduction, d))


def _count(ext: int | None, tile: tuple[int, ...]) -> float:
    if not tile:
        return 1
    if ext is None:
        return math.inf
    return math.ceil(ext / tile[0])


def default_params(mdh: MdhExpr, caps: TargetCaps, strict_fp: bool = False) -> TuningParams:
    """A good untuned parameter set for ``mdh`` on ``caps`` (see the module docstring)."""
    dims = mdh.dims
    concat = [d for d, x in enumerate(dims) if not x.combine.is_reduction]
    reds = [d for d, x in enumerate(dims) if x.combine.is_reduction]
    v = choose_vector_dim(mdh, strict_fp)
    small = [d for d in reds if d != v and v in concat and (unrolled := dims[d].static_extent) is not None
             and unrolled <= MAX_INNER_UNROLL]
    order = ([d for d in concat if d != v] + [d for d in reds if d != v and d not in small]
             + ([v] if v is not None else []) + small)
    esz = elem_bytes(mdh)
    ext = [x.static_extent for x in dims]

    def cap(d: int, t: int) -> tuple[int, ...]:
        """Tile ``d`` by ``t``; a tile spanning the whole static extent is no tile at all."""
        e = ext[d]
        if e is not None and t >= e:
            return ()
        return (max(1, t),)

    tiles: list[tuple[int, ...]] = [() for _ in dims]

    def eff(d: int) -> int:
        """Current layer-1 tile size of ``d`` (its extent when untiled)."""
        t, e = tiles[d], ext[d]
        return t[0] if t else (max(1, e) if e is not None else 1)

    if reds:
        budget = max(1, caps.l1_bytes // 2 // esz)
        if v in concat:
            tiles[v] = cap(v, max(1, VECTOR_TILE_BYTES // esz))
            budget = max(1, budget // eff(v))
        for d in reversed(concat):
            if d == v:
                continue
            tiles[d] = cap(d, min(CONCAT_TILE, budget))
            budget = max(1, budget // eff(d))
        for d in reds:
            if d != v and d not in small:
                tiles[d] = cap(d, REDUCTION_TILE)
    else:
        for d in concat:
            if d != v:
                tiles[d] = cap(d, CONCAT_TILE)
        if v is not None and len(concat) == 1:
            tiles[v] = cap(v, max(1, 4 * VECTOR_TILE_BYTES // esz))

    want = PAR_SLACK * caps.cores * (DOMAIN_SLACK if mdh.domain else 1)

    def par_pick() -> tuple[list[int], float]:
        cands = sorted((d for d in concat if tiles[d] and _count(ext[d], tiles[d]) > 1),
                       key=lambda d: -_count(ext[d], tiles[d]))
        chosen: list[int] = []
        n: float = 1
        for d in cands:
            if n >= want and not (math.isinf(n) and ext[d] is None):
                break
            chosen.append(d)
            n *= _count(ext[d], tiles[d])
        return sorted(chosen), n

    par, n = par_pick()
    while n < want:
        shrinkable = [d for d in concat if d != v and eff(d) > 1]
        if not shrinkable and v in concat and eff(v) > 2 * caps.vector_bytes // esz:
            shrinkable = [v]
        if not shrinkable:
            break
        d = max(shrinkable, key=eff)
        tiles[d] = (max(1, eff(d) // 2),)
        par, n = par_pick()

    reg, lanes = _register_block(mdh, caps, order, v, tiles, ext, esz, strict_fp)

    split: int | None = None
    concat_elems = math.prod(e if e is not None else math.inf for e in (ext[d] for d in concat))
    red_work = math.prod(e if e is not None else math.inf for e in (ext[d] for d in reds)) if reds else 0
    if (n < caps.cores and reds and not strict_fp and concat_elems <= MAX_RESULT_ELEMS
            and red_work >= SPLIT_MIN_WORK):
        split = max(reds, key=lambda d: e if (e := ext[d]) is not None else math.inf)
        e = ext[split]
        # an unknown extent (often a host loop's iterator: a triangle's row) gets small chunks, shared
        # out contiguously by the static schedule: one chunk of a short row would leave a thread idle
        chunk = max(256, math.ceil(e / (PAR_SLACK * caps.cores))) if e is not None else 256
        if e is None and split != v and len(dims) > 1:
            # a point of it is a whole loop nest of its own (a plane of a 3-D sum): one per
            # chunk, as the extent may be short (8 planes under chunks of 256 were one chunk)
            chunk = 1
        tiles[split] = (chunk,) if e is None else (min(chunk, e),)
        for d in concat:
            tiles[d] = ()
        par = []

    if split is not None:
        reg, lanes = (), 0
    dist: Distribution = "cyclic" if mdh.domain and (par or split is not None) else "block"
    params = TuningParams(tiles=tuple(tiles), parallel_dims=tuple(par), loop_order=tuple(order), vector_dim=v,
                          split_dim=split, num_threads=0, register_tile=reg, simd_lanes=lanes, distribution=dist)
    if split is None:
        packed = _packed(mdh, params, ext, caps)
        if packed is not None:
            # every tiled concat dim in the collapsed loop: the row tiles are per-thread shares
            par = [d for d in concat if packed.tiles[d] and _count(ext[d], packed.tiles[d]) > 1]
            packed = replace(packed, parallel_dims=tuple(par))
            if not violations(mdh, packed):
                return packed
    return params


def _packed(mdh: MdhExpr, p: TuningParams, ext: list[int | None], caps: TargetCaps) -> TuningParams | None:
    """Rule 7: ``p`` with packed panels and cache tiles from the cache sizes, or ``None`` where the
    nest is not matmul-like or too small.

    The reduction tile ``kc`` makes one sliver of the packed panel (``kc`` x the SIMD dim's
    register block) take ``1 / PACK_SLIVER_SHARE`` of the L1 cache; the SIMD dim's tile ``nc``
    makes the panel (``kc`` x ``nc``) take ``1 / PACK_PANEL_SHARE`` of the L2 cache; the row dim's tile is a thread's share of the
    rows in as few nearly equal tiles as the result tile allows (``caps.max_local_bytes``), so
    that each thread copies a panel as few times as possible (once, when its share fits)."""
    v = p.vector_dim
    reds = [d for d, x in enumerate(mdh.dims) if x.combine.is_reduction]
    if v is None or len(reds) != 1 or not p.register_blocked:
        return None
    runtime = any(e is None for e in ext)
    if (not runtime and math.prod(e or 1 for e in ext) < PACK_MIN_WORK) or v not in packable_inputs(mdh, p).values():
        return None
    esz = elem_bytes(mdh)
    # an extent known only at run time plans as a large one: its tiles stay, its row tile is the
    # result tile's rows (the run-time step shares them out, ``TileShare``)
    full = [e if e is not None else 1 << 30 for e in ext]
    tiles = list(p.tiles)
    red, lanes = reds[0], p.register_tile[v]
    kc = min(full[red], max(1, caps.l1_bytes // PACK_SLIVER_SHARE // (lanes * esz)))
    tiles[red] = (kc,) if kc < full[red] else ()
    nc = max(lanes, caps.l2_bytes // PACK_PANEL_SHARE // (kc * esz) // lanes * lanes)
    tiles[v] = (nc,) if nc < full[v] else ()
    elems = min(MAX_RESULT_ELEMS, caps.max_local_bytes // esz)
    for d, r in enumerate(p.register_tile):
        if d == v or r < 2 or len(tiles[d]) > 1 or mdh.dims[d].combine.is_reduction:
            continue
        others = math.prod(t[-1] if t else full[c] for c, t in enumerate(tiles)
                           if c != d and not mdh.dims[c].combine.is_reduction)
        most = elems // max(1, others)                          # rows the result tile holds
        if most < r:
            return None
        share = math.ceil(full[d] / max(1, caps.cores)) if ext[d] is not None else most
        rows = math.ceil(share / math.ceil(share / most))       # in nearly equal tiles
        whole = math.ceil(rows / r) * r                         # whole register blocks, if they fit
        rows = whole if whole <= most else rows
        tiles[d] = (rows,) if rows < full[d] else ()
    q = replace(p, tiles=tuple(tiles), pack_b=True)
    return None if violations(mdh, replace(q, parallel_dims=())) else q


def _register_block(mdh: MdhExpr, caps: TargetCaps, order: list[int], v: int | None, tiles: list[tuple[int, ...]],
                    ext: list[int | None], esz: int, strict_fp: bool) -> tuple[tuple[int, ...], int]:
    """Rule 5: the register tile and SIMD lanes; may round a tile in ``tiles`` down to a block multiple."""
    dims = mdh.dims
    if mdh.f.uses_indices or not any(d.combine.is_reduction for d in dims) or v is None or mdh.domain:
        return (), 0

    def size(d: int) -> int:
        t, e = tiles[d], ext[d]
        if t:
            return t[-1] if e is None else min(t[-1], e)
        return e if e is not None else 1 << 30

    others = [d for d in order if not dims[d].combine.is_reduction and d != v and size(d) >= 2]
    reg = [1] * len(dims)
    lanes = 0
    if not dims[v].combine.is_reduction:
        if not others:
            return (), 0
        lanes = max(1, caps.vector_bytes // esz)
        if size(v) < REGISTER_VECTORS * lanes:
            return (), 0
        reg[v] = REGISTER_VECTORS * lanes
        rows = [others[-1]]
        counts = [REGISTER_ROWS]
    else:
        rows = others[-2:]
        counts = [REGISTER_ROWS, REGISTER_VECTORS][-len(rows):] if rows else []
        if not rows:
            return (), 0
    for d, n in zip(rows, counts):
        n = min(n, size(d))
        reg[d] = n
        t, full = tiles[d], ext[d]
        if t and len(t) == 1 and t[0] > n and t[0] % n and (full is None or t[0] < full):
            tiles[d] = (t[0] // n * n,)
    if all(r == 1 for r in reg):
        return (), 0
    return tuple(reg), lanes
