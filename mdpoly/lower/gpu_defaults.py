"""Untuned work-group parameters: ``default_gpu_params(mdh, caps)`` picks the ``GpuParams``
(``mdpoly.lower.gpu_params``) a target compiles with when nothing was tuned.

``tiled_gpu_params`` gives the tiled kernel (register tiles, reduction tiles, ``__local`` input
copies, a one-kernel rule for GEMV-like nests on a GPU), ``untiled_gpu_params`` the untiled one;
``default_gpu_params`` takes the tiled parameters where they hold on ``caps``, else the untiled.
``default_ocl_groups`` is the default partition of the MDH dims into NDRange dims.

Parameters left off by default and searched by the tuner:

* ``async_copy`` -- on an H200 the register prefetch ran faster (sgemm 1024^3 0.068 ms vs 0.087 ms,
  4096^3 3.26 vs 4.52 ms; benchmarks/results/gpu_2026-11-25_h200_async.md);
* ``warp_tile`` -- H200: 4 x 8 within 1 % of hardware order on sgemm, 8 x 4 slower.
"""

from __future__ import annotations

import math
from dataclasses import replace

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu_params import (
    MAX_RESIDENT_ITEMS,
    GpuParams,
    cacheable,
    gpu_violations,
    gvec_applies,
    input_box,
    local_bytes,
    prefetch_fits,
)

#: Work-groups a tiled kernel wants at least, whatever ``compute_units`` says (the OpenCL
#: target's portable caps guess 8; a GPU has ~100 multiprocessors, a CPU loses little).
MIN_GROUPS = 64
#: Most points of a reduction window (the product of several reduction dims of at most 16 points each)
#: that the default tiles as a whole (``_tiled_for``).
MAX_WINDOW = 512
#: Work-groups a symbolic-size dim is planned for.
SYMBOLIC_EXTENT = 4096
#: Private tiles of at least this many accumulators hold 130-180 registers per work-item on a GPU, so
#: one work-group of 256 items is resident per multiprocessor (H200, sgemm 8 x 8: 129-183 registers)
#: unless launch bounds cap them at 128 (``min_blocks`` 2): the default asks for those and splits the
#: reduction so that the work-groups fill whole waves (``_wave_split``).
WAVE_TILE_ELEMS = 64
#: GEMV-like nests on a GPU (``_gemv_params``): points of the output dim per work-group, the
#: work-items of a group, and the shortest reduction the rule applies to.
GEMV_OUTPUT_ITEMS = 8
GEMV_GROUP_ITEMS = 1024
GEMV_MIN_REDUCTION = 1024


def _pow2_floor(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


def _pow2_ceil(n: int) -> int:
    return 1 << max(0, (max(n, 1) - 1).bit_length())


def default_ocl_groups(ndims: int) -> tuple[tuple[int, ...], ...]:
    """Innermost MDH dim on NDRange dim 0 (unit stride across neighbouring work-items); more than
    three dims: the two innermost get one NDRange dim each, the rest share dimension 2."""
    rev = tuple(range(ndims - 1, -1, -1))
    if ndims <= 3:
        return tuple((d,) for d in rev)
    return ((ndims - 1,), (ndims - 2,), tuple(range(ndims - 2)))


def default_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams:
    """Sane untuned parameters for a CPU (PoCL) and a GPU: the tiled kernel
    (``tiled_gpu_params``) for a nest with concat and reduction dims when its parameters are
    valid on ``caps``, else the untiled kernel (``untiled_gpu_params``)."""
    tiled = tiled_gpu_params(mdh, caps)
    if tiled is not None and not gpu_violations(mdh, tiled, caps):
        return tiled
    return untiled_gpu_params(mdh, caps)


def tiled_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams | None:
    """Tiled-kernel parameters (register tiles, reduction tiles, ``__local`` input copies), or
    ``None`` for a nest without both concat and reduction dims.

    The two innermost concat dims of extent > 1 (the unit-stride output dim first, on NDRange
    dim 0) get the work-items -- 16 x 16, or all 256 on one dim -- and a private tile of 4 x 4
    points, both cut to the extents; 8 x 8 points when those tiles, with the
    reduction split, still give ``compute_units`` work-groups (``MIN_GROUPS`` off a GPU) and
    their inputs' copies fit unshrunk, read from ``__local`` memory as ``vec`` = 4 vectors; a further concat dim of extent <= 8 is held whole in the
    private tile (the innermost dim's points halve to keep <= 16 accumulators). The same shape on a CPU: OpenCL output is portable and most
    often runs on a GPU, and PoCL runs such work-groups well (one loop over the work-items). The longest
    reduction dim is tiled by 16 points (the others by 1). An input is copied to ``__local``
    memory when it varies along the reduction and its footprint over the tiles is at most half
    the global reads the work-group's items would make without the copy (items sharing a value,
    overlapping stencil windows); several reduction dims of at most 16 points each, ``MAX_WINDOW``
    points together (a first-layer convolution's 7 x 7 x 3 window), are one tile where its copies
    fit; tiles shrink until the copies fit. A GEMV-like nest on a GPU (one concat dim of extent > 1
    next to one long reduction) gets one kernel without partials (``_gemv_params``) where it applies. When the concat tiles give
    at most ``max(compute_units, MIN_GROUPS)`` work-groups, the longest reduction's tiles are spread
    over several work-groups (partials + combine kernel) up to twice that, each keeping at least
    two tiles (on a GPU: eight times, and four tiles of a reduction of 64 or more tiles -- skinny,
    memory-bound MatMuls gain from more loads in flight); on a GPU, register tiles of
    ``WAVE_TILE_ELEMS`` or more points get launch bounds for two resident work-groups where the
    target has them (``min_blocks``) and are split so that the work-groups fill whole waves of the
    multiprocessors (``_wave_split``).
    """
    dims = mdh.dims
    n = len(dims)
    ext = [d.static_extent if d.static_extent is not None else SYMBOLIC_EXTENT for d in dims]
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    reds = [d for d in range(n) if dims[d].combine.is_reduction]
    if not concat or not reds or mdh.reduction_op is None:
        return None
    target = min(256, caps.max_work_group_size)
    live = [d for d in reversed(concat) if ext[d] > 1][:2]
    num_wi = [1] * n
    pt = [1] * n
    per_dim = [target] if len(live) == 1 else [_pow2_floor(math.isqrt(target))] * 2
    for d, w in zip(live, per_dim):
        num_wi[d] = max(1, min(w, _pow2_ceil(ext[d])))
        pt[d] = max(1, min(4, math.ceil(ext[d] / num_wi[d])))
    fill = caps.compute_units if caps.is_gpu else max(caps.compute_units, MIN_GROUPS)
    if caps.is_gpu and len(live) == 1:
        gemv = _gemv_params(mdh, caps, live[0], ext)
        if gemv is not None:
            return gemv
    params, _ = _tiled_for(mdh, caps, live, num_wi, pt)
    if len(live) == 2 and all(ext[d] <= 1 for d in concat if d not in live):
        # 8 x 8 register tiles (more work per item between __local reads) while the work-groups,
        # with the reduction split over several where it is long, still cover the compute units
        # and the same inputs still fit in __local memory whole (H200, sgemm 1024^3, CUDA: 8 x 8
        # with the reduction split 5 ways 0.142 ms, 4 x 4 0.155 ms, 8 x 4 0.152 ms, 8 x 8 on 64
        # unsplit groups 0.227 ms; MCC PC: 8 x 4 tiles, whose halo copies shrink 8 x 8's, ran slower)
        big = list(pt)
        for d in live:
            big[d] = min(8, max(1, math.ceil(ext[d] / num_wi[d])))
        cand, shrunk = _tiled_for(mdh, caps, live, num_wi, big)
        if math.prod(big) > math.prod(pt) and cand is not None and not shrunk:
            # work-groups along the concat dims times those the reduction is split over
            groups = math.prod(math.ceil(ext[d] / (big[d] * num_wi[d])) for d in live)
            groups *= math.prod(cand.num_wg[d] for d in reds)
            if groups >= fill or (caps.is_gpu and 4 * groups >= 3 * fill):   # one wave of 3/4 of the units
                return cand
    return params


def _gemv_params(mdh: MdhExpr, caps: TargetCaps, j: int, ext: list[int]) -> GpuParams | None:
    """One kernel for a GEMV-like nest on a GPU, or ``None`` where the rule does not apply: one concat
    dim ``j`` of extent > 1, one reduction dim ``r`` of at least ``GEMV_MIN_REDUCTION`` points (static),
    every input indexed by both contiguous along ``j`` (its last position ``1 * j``), and work-groups of ``GEMV_OUTPUT_ITEMS`` points of ``j`` that fill at most two waves of the compute
    units. Each work-group is ``GEMV_OUTPUT_ITEMS`` x the rest of ``GEMV_GROUP_ITEMS`` work-items along
    ``r`` (neighbouring items read neighbouring points of ``j``: 8 floats, a whole 32-byte sector), which
    walk the whole reduction as one tile from ``__global`` memory and combine by warp shuffles where the
    target has them (``warp_reduce``), else in ``__local`` memory: split-K inside one work-group, no
    partials, no second kernel. H200, CUDA, 1x1000x2048 by ncu (benchmarks/results/gpu_kernels_2026-11-29_s11.md):
    8 x 128 items with shuffles 0.0065 ms, the same with the tree 0.0071 ms, 4 x 64 with the tree
    (the earlier default) 0.0084 ms, with shuffles 0.0083 ms; 16 x 64 and 4 x 256 with shuffles 0.0070
    ms; cuBLAS 0.0039 ms. Earlier: split 64 ways with a combine kernel 0.0112 ms, 128 ways 0.0102 ms."""
    dims = mdh.dims
    reds = [d for d, dim in enumerate(dims) if dim.combine.is_reduction]
    if len(reds) != 1 or dims[reds[0]].static_extent is None or ext[reds[0]] < GEMV_MIN_REDUCTION:
        return None
    r, n = reds[0], len(dims)
    it = dims[j].iterator
    for acc in mdh.inputs:   # the long input(s) contiguous along j: neighbouring work-items, neighbouring addresses
        names = {name for e in acc.index for name, _ in e.terms}
        if {it, dims[r].iterator} <= names and acc.index[-1].terms != ((it, 1),):
            return None
    groups = math.ceil(ext[j] / GEMV_OUTPUT_ITEMS) * math.prod(ext[d] for d in range(n) if d not in (j, r)
                                                            and not dims[d].combine.is_reduction)
    if groups > 2 * caps.compute_units:
        return None
    rest = tuple(d for d in range(n) if d != j)
    target = min(GEMV_GROUP_ITEMS, _pow2_floor(caps.max_work_group_size))
    along = min(target // GEMV_OUTPUT_ITEMS, _pow2_floor(ext[r]), _pow2_floor(caps.max_work_item_sizes[1]))
    num_wi = tuple(GEMV_OUTPUT_ITEMS if d == j else along if d == r else 1 for d in range(n))
    params = GpuParams(num_wi, (1,) * n, tuple(1 if d == r else 0 for d in range(n)), ((j,), rest),
                       tuple(ext[r] if d == r else 0 for d in range(n)), (0,) * len(mdh.inputs))
    shuffled = replace(params, warp_reduce=1)
    if caps.warp_shuffle and not gpu_violations(mdh, shuffled, caps):
        return shuffled
    return None if gpu_violations(mdh, params, caps) else params


def _tiled_for(mdh: MdhExpr, caps: TargetCaps, live: list[int], num_wi_in: list[int],
               pt_in: list[int]) -> tuple[GpuParams | None, bool]:
    """``tiled_gpu_params`` for given work-items and private tiles along the ``live`` dims: the
    parameters (``None`` when nothing fits) and whether tiles or copies had to shrink to fit."""
    dims = mdh.dims
    n = len(dims)
    ext = [d.static_extent if d.static_extent is not None else SYMBOLIC_EXTENT for d in dims]
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    reds = [d for d in range(n) if dims[d].combine.is_reduction]
    num_wi = list(num_wi_in)
    pt = list(pt_in)
    shrunk = False
    for d in concat:   # short further concat dims: whole extent in the private tile (reuse of the others)
        if d not in live and 1 < ext[d] <= 8:
            pt[d] = ext[d]
            while live and math.prod(pt) > 16 and pt[live[0]] > 1:
                pt[live[0]] = (pt[live[0]] + 1) // 2
    rest = tuple(d for d in range(n) if d not in live)
    groups = tuple(g for g in ((live[0],) if live else (), (live[1],) if len(live) > 1 else (), rest) if g)
    for k, g in enumerate(groups):
        while math.prod(num_wi[d] for d in g) > caps.max_work_item_sizes[k]:
            d = max(g, key=lambda x: num_wi[x])
            num_wi[d] //= 2
    r = max(reds, key=lambda d: ext[d])
    kt = [0] * n
    for d in reds:
        kt[d] = 1
    kt[r] = min(16, ext[r])
    tile = [kt[d] if d in reds else pt[d] * num_wi[d] for d in range(n)]
    num_wg = [0 if d in concat else 1 for d in range(n)]
    params = GpuParams(tuple(num_wi), tuple(pt), tuple(num_wg), groups, tuple(kt), (0,) * len(mdh.inputs))
    cache = []
    for k, acc in enumerate(mdh.inputs):
        names = {name for e in acc.index for name, _ in e.terms}
        # global reads per tile without the copy: each item's fragment at each reduction point
        reads = math.prod(tile[d] if dims[d].iterator in names else (num_wi[d] if d in concat else 1)
                          for d in range(n))
        varies = any(dims[d].iterator in names for d in reds)
        reuse = 2 * math.prod(input_box(mdh, params, k)) <= reads
        cache.append(1 if cacheable(mdh, k) and varies and reuse else 0)
    params = replace(params, cache=tuple(cache))
    params = replace(params, vec=_default_vec(mdh, params))
    window = [e for e in (dims[d].static_extent for d in reds) if e is not None and e <= 16]
    if len(reds) > 1 and len(window) == len(reds) and math.prod(window) <= MAX_WINDOW:
        # several tiny reduction dims (a first-layer convolution's 7 x 7 x 3 window): one tile holds the
        # whole window where its copies fit, so a work-group has two barriers, not two per (s, c) point
        whole = replace(params, kt=tuple(ext[d] if d in reds else 0 for d in range(n)))
        if local_bytes(mdh, whole) <= caps.local_mem_bytes:
            params = whole
    while local_bytes(mdh, params) > caps.local_mem_bytes:
        shrunk = True
        if params.kt[r] > 1:
            params = replace(params, kt=tuple(max(1, v // 2) if d == r else v for d, v in enumerate(params.kt)))
        elif any(params.cache):
            big = max((k for k, v in enumerate(params.cache) if v),
                      key=lambda k: math.prod(input_box(mdh, params, k)))
            params = replace(params, cache=tuple(0 if k == big else v for k, v in enumerate(params.cache)))
        else:
            return None, True
    concat_groups = math.prod(math.ceil(ext[d] / params.tile(mdh, d)) for d in concat)
    tiles = math.ceil(ext[r] / params.kt[r])
    if caps.is_gpu and params.private_elems(mdh) >= WAVE_TILE_ELEMS:
        # launch bounds keep such a tile within 128 registers: two resident work-groups per multiprocessor
        # (H200, sgemm 4096^3: 3.38 ms with, 3.69 ms without; 1024^3 split 4 ways: 0.070 ms, 0.073 ms)
        resident = 2 if caps.launch_bounds and 2 * params.wg_size() <= MAX_RESIDENT_ITEMS else 1
        params = replace(params, min_blocks=resident if resident > 1 else 0)
        if resident > 1 and params.kt[r] == 16:
            # bounded to 128 registers, reduction tiles of 8 ran faster (H200: 4096^3 3.25 ms vs 3.37 ms,
            # 1024^3 0.068 ms vs 0.070 ms): fewer prefetch registers, so fewer spills
            params = replace(params, kt=tuple(8 if d == r else v for d, v in enumerate(params.kt)))
            tiles = math.ceil(ext[r] / 8)
        wg = _wave_split(concat_groups, tiles, resident * caps.compute_units)
        params = replace(params, num_wg=tuple(wg if d == r else v for d, v in enumerate(params.num_wg)))
    else:
        # skinny, memory-bound MatMuls on a GPU: many loads in flight (8x the multiprocessors' work-groups),
        # each group walking at least 4 tiles of a long reduction (H200: 1x4096x25088 264 groups 0.105 ms,
        # 132 0.109, 66 0.169; 16x4096x25088 34 0.281 ms, 17 0.314; 16x1000x2048 33 0.012 ms, 64 0.014)
        want = (8 if caps.is_gpu else 2) * max(caps.compute_units, MIN_GROUPS)
        most = tiles // 2
        if caps.is_gpu and tiles >= 64:   # at least two groups per multiprocessor (1x1000x2048: 64 groups
            # 0.011 ms, 32 0.017 ms), beyond that each group walking >= 4 tiles
            most = min(most, max(tiles // 4, math.ceil(2 * caps.compute_units / concat_groups)))
        if 2 * concat_groups <= want and tiles >= 4:
            wg = max(1, min(math.ceil(want / concat_groups), most))
            params = replace(params, num_wg=tuple(wg if d == r else v for d, v in enumerate(params.num_wg)))
    params = replace(params, gvec=_default_gvec(mdh, params))
    if caps.is_gpu:   # PoCL: registers live across barriers become per-item arrays, compiled slowly
        params = _default_prefetch(mdh, params, ext)
    return params, shrunk


def _default_gvec(mdh: MdhExpr, p: GpuParams) -> int:
    """The widest ``gvec`` (4, else 2) some cached input's copy loads with, else 1."""
    for v in (4, 2):
        q = replace(p, gvec=v)
        if any(gvec_applies(mdh, q, k) > 1 for k in range(len(mdh.inputs))):
            return v
    return 1


def _wave_split(concat_groups: int, tiles: int, units: int) -> int:
    """Work-groups along the reduction for a register-heavy tile (one resident work-group per
    multiprocessor): the fewest whose waves per reduction tile walked, ``ceil(groups * wg /
    units) / wg``, come within 10 % of the best any split up to ``tiles // 2`` reaches (each
    group keeping at least two tiles). H200, sgemm 1024^3, 8 x 8 tiles on 64 concat groups: 2
    groups along k 0.086 ms (one wave), 5 0.110 ms (three waves), 1 0.149 ms."""
    if tiles < 4 or concat_groups >= units:
        return 1
    cands = range(1, tiles // 2 + 1)
    cost = {wg: math.ceil(concat_groups * wg / units) / wg for wg in cands}
    best = min(cost.values())
    return next(wg for wg in cands if cost[wg] <= 1.1 * best)


def _default_prefetch(mdh: MdhExpr, p: GpuParams, ext: list[int]) -> GpuParams:
    """``prefetch`` 1 when an input is cached, the next tile's registers fit ``MAX_PREFETCH_REGS``
    and a work-group walks at least two tiles of the innermost reduction loop (the last reduction
    dim), so that there is a next tile to load early (H100, MCC PC: one tile of its one channel,
    0.40 ms without the prefetch, 0.65 ms with it)."""
    z = max(d for d, dim in enumerate(mdh.dims) if dim.combine.is_reduction)
    walked = math.ceil(ext[z] / p.kt[z]) // max(1, p.num_wg[z])
    return replace(p, prefetch=1 if walked >= 2 and prefetch_fits(mdh, p) else 0)


def _default_vec(mdh: MdhExpr, p: GpuParams) -> tuple[int, ...]:
    """4 along a concat dim whose private tile holds 8 or more points, a multiple of 4, when a cached input
    depends on that dim alone, through an index position ``1 * i_d (+ c)``: its points are read
    from ``__local`` memory as vectors (``mdpoly.lower.gpu`` checks the layout); else 1."""
    dims = mdh.dims
    vec = [1] * len(dims)
    for k, acc in enumerate(mdh.inputs):
        if not p.cached(len(mdh.inputs))[k]:
            continue
        names = {name for e in acc.index for name, _ in e.terms}
        deps = [d for d, dim in enumerate(dims) if not dim.combine.is_reduction and dim.iterator in names]
        if len(deps) != 1 or p.pt[deps[0]] % 4 or p.pt[deps[0]] < 8:   # 4 x 4 tiles ran faster scalar
            continue
        it = dims[deps[0]].iterator
        if any(e.terms == ((it, 1),) for e in acc.index):
            vec[deps[0]] = 4
    return tuple(vec)


def untiled_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams:
    """Untiled-kernel parameters for a CPU (PoCL) and a GPU.

    Work-group size: ``min(256, max_work_group_size)`` on a GPU, ``min(64, ...)`` on a CPU. The
    work-items go to concat dims, innermost first, up to each dim's extent. When the concat
    points cannot fill ``compute_units`` groups of that size, the rest of the group (and, if the
    reduction is long, several work-groups) go to the longest reduction dim: a local-memory tree
    inside the group, per-group partials and a second kernel across groups.
    """
    dims = mdh.dims
    n = len(dims)
    ext = [d.static_extent if d.static_extent is not None else SYMBOLIC_EXTENT for d in dims]
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    reds = [d for d in range(n) if dims[d].combine.is_reduction]
    target = min(256 if caps.is_gpu else 64, caps.max_work_group_size)
    groups = default_ocl_groups(n)
    item_cap = {d: caps.max_work_item_sizes[k] for k, g in enumerate(groups) for d in g}
    num_wi = [1] * n
    left = target
    for d in reversed(concat):
        w = min(_pow2_floor(max(ext[d], 1)), left, _pow2_floor(item_cap[d]))
        num_wi[d] = max(1, w)
        left //= num_wi[d]
    pt = [1] * n
    num_wg = [0 if d in concat else 1 for d in range(n)]
    concat_points = math.prod(max(ext[d], 1) for d in concat)
    want_items = target * max(caps.compute_units, 1)
    if reds and concat_points < want_items:
        r = max(reds, key=lambda d: ext[d])
        room = max(1, target // math.prod(num_wi))
        num_wi[r] = max(1, min(room, _pow2_floor(ext[r]), _pow2_floor(item_cap[r])))
        groups_along_concat = math.prod(math.ceil(max(ext[d], 1) / num_wi[d]) for d in concat)
        want_groups = max(1, 4 * caps.compute_units // max(groups_along_concat, 1))
        per_item = 16  # points each work-item reduces before groups are added
        num_wg[r] = max(1, min(want_groups, ext[r] // (num_wi[r] * per_item)))
    for k, g in enumerate(groups):   # folded NDRange dims: the product must fit the item size
        while math.prod(num_wi[d] for d in g) > caps.max_work_item_sizes[k]:
            d = max(g, key=lambda x: num_wi[x])
            num_wi[d] //= 2
    params = GpuParams(tuple(num_wi), tuple(pt), tuple(num_wg), groups)
    # Larger private tiles along the innermost concat dim when there are many points per item.
    inner = concat[-1] if concat else None
    if inner is not None and concat_points >= 64 * want_items:
        params = replace(params, pt=tuple(4 if d == inner else v for d, v in enumerate(params.pt)))
    return params
