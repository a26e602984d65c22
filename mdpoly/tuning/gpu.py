"""Tuning the work-group targets: the ``GpuParams`` space and the OpenCL / CUDA ``TuningTarget``s.

``gpu_space(mdh, sizes, caps)`` flattens ``GpuParams`` (``mdpoly.lower.gpu_params``; Table I of
the MDH paper) into pyATF parameters with closed-form candidate sets:

* ``OCL``: the grouping of MDH dims into NDRange dims (``σ_arr→ocl``): for at most three dims
  every order of one dim per NDRange dim, plus the merges of two neighbours; for more, every
  choice of the two MDH dims on NDRange dims 0 and 1 (the rest share dim 2), plus all in one;
  dims of extent 1 never decide anything and stay in the last group; the default is always there;
* ``WI_<d>``: work-items along dim ``d``, powers of two up to the extent (rounded up for concat
  dims, down for reductions); the predicate keeps the running product within
  ``max_work_group_size``, each NDRange dim's product within ``max_work_item_sizes`` (it reads
  ``OCL``), a reduction's ``__local`` scratch within ``local_mem_bytes``, and, on a GPU, the
  work-group at least a warp when the domain allows;
* ``PT_<d>``: private tile of a concat dim, powers of two up to the extent whose product stays
  within ``MAX_PRIVATE_ELEMS`` (an independent tree: it reads no ``WI``);
* ``WG_<d>``: work-groups along a reduction dim, powers of two up to ``extent / 16``;
* ``KT_<d>``: reduction tile of a reduction dim (tiled kernel): 0 = untiled kernel (then every
  ``KT`` is 0), else 1, 4, 8, 16, 32, 64 cut to the extent; only for nests the tiled kernel
  serves (concat and reduction dims, one reduction operator);
* ``MEM_<k>``: input ``k`` copied to ``__local`` memory (1) or read from ``__global`` (0), only
  for inputs ``cacheable`` allows and only with a tiled kernel.
* ``MINB`` (targets with ``launch_bounds``: CUDA): 0 or 2 resident work-groups the compiler keeps
  registers for (``GpuParams.min_blocks``);
* ``PF``, ``PAD``, ``GVEC``: the prefetch of the next tile (0 or 1 here, 2 -- two buffers -- too in
  ``gpu_neighbours``), the padding of the copies' rows and
  the vector width of their ``__global`` loads (1 or 4 here, 2 too in ``gpu_neighbours``;
  ``gvec_applies``), with a cached input.
* ``WARP``: the warp tile (``GpuParams.warp_tile``) as its width along NDRange dim 0: 0 (hardware
  order), 4 or 8 (8 x 4 or 4 x 8 work-items per warp), where ``warp_dims`` allows it;
* ``WRED`` (targets with ``warp_shuffle``: CUDA; nests with a reduction): the work-group combine by
  warp shuffles first (``GpuParams.warp_reduce``), where ``warp_reduce_stride`` allows it;
* ``ASYNC`` (targets with ``async_copy``: CUDA): double-buffered copies filled by ``cp.async``
  (``GpuParams.async_copy``), with a cached input and ``PF`` 0; their two buffers per copy within
  the local memory.

``PT``, ``KT`` and ``MEM`` form one pyATF tree, ``OCL`` and ``WI`` another: the ``__local``
footprint of the cached inputs depends on the concat tiles ``PT * NUM_WI``, and one tree over all
of them is the product of both (millions of leaves for MCC). The trees are kept apart by a bound:
in a tileable nest, ``NUM_WI`` of a concat dim that a cacheable input depends on is at most
``TILED_WI_CAP`` (or the default's, if larger), the footprint is checked with that bound, and
against the local memory less the largest reduction scratch the ``WI`` tree allows. The bound
is sound (a smaller work-group has a smaller footprint) but excludes some valid points (wider
untiled work-groups, caches that fit only with fewer work-items); the local search around the
default (``gpu_neighbours``) checks the exact constraints and is not bounded.

The limits are the device's, queried when tuning starts (``caps_from_device`` over the runner's
``device_limits()``), so every configuration of the space passes ``gpu_violations``. The
predicates over ``PT``, ``KT`` and ``MEM`` are the constraints of ``mdpoly.lower.gpu_params``.

A candidate is the code that ships: the backend's host code and kernels for the configuration
(``backend.render``, the text ``out.c`` gets), with ``mdpoly_entry`` and a timing export, built
as a shared library and called in a worker process (``mdpoly.runtime.host_code``); its time is
the kernels' device time as the host code's own profiling measures it (OpenCL profiling events,
CUDA events), its whole-call time beside it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mdpoly.backends.base import Backend
from mdpoly.backends.entry import entry_function, hold_function, timing_function
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.gpu_caps import caps_from_device
from mdpoly.lower.gpu_defaults import default_gpu_params
from mdpoly.lower.gpu_params import (
    GPU_CONSTRAINTS,
    MAX_PREFETCH_REGS,
    MAX_PRIVATE_ELEMS,
    MAX_RESIDENT_ITEMS,
    WARP_ITEMS,
    GpuParams,
    cacheable,
    gpu_params_from_dict,
    gpu_params_to_dict,
    gpu_violations,
    input_box,
    warp_dims,
)
from mdpoly.lower.heuristics import elem_bytes
from mdpoly.lower.kernel_checks import check_kernel_plan
from mdpoly.runtime.base import ArgSpec, BuildRequest
from mdpoly.runtime.host_code import HOLD_ENTRY, TIMING_ENTRY, HostCodeRunner
from mdpoly.tuning.atf import Config, ParamSpec
from mdpoly.tuning.space import concrete_extents
from mdpoly.tuning.target import ENTRY, Candidate

#: Bumped when the GPU space or cost function changes what "best" means.
GPU_SPACE_VERSION = 4
#: Points of a reduction each work-item should reduce at least (bounds ``WG_<d>``).
MIN_POINTS_PER_ITEM = 16
MAX_WG = 1024
#: Reduction tiles tried (cut to the extent); 0 selects the untiled kernel.
KT_LADDER = (1, 4, 8, 16, 32, 64)
#: Bound on ``NUM_WI`` of a concat dim a cacheable input depends on (see the module docstring).
TILED_WI_CAP = 32

Groups = tuple[tuple[int, ...], ...]


def _pow2_ceil(n: int) -> int:
    return 1 << max(0, (max(n, 1) - 1).bit_length())


def _pow2_upto(n: int) -> list[int]:
    return [1 << k for k in range(max(n, 1).bit_length()) if (1 << k) <= n]


# {{{ the space


def ocl_candidates(ext: tuple[int, ...], default: Groups) -> list[Groups]:
    """Groupings of the MDH dims into at most three NDRange dims (see the module docstring)."""
    n = len(ext)
    live = [d for d in range(n) if ext[d] > 1]
    dead = [d for d in range(n) if ext[d] <= 1]
    out: list[Groups] = [default]

    def add(groups: list[list[int]]) -> None:
        gs = [list(g) for g in groups if g]
        if dead:
            gs = [*gs[:-1], gs[-1] + dead] if gs else [dead]
        g = tuple(tuple(x) for x in gs)
        if g and g not in out:
            out.append(g)

    if len(live) <= 3:
        for perm in itertools.permutations(live):
            add([[d] for d in perm])
            for k in range(len(perm) - 1):
                add([[d] for d in perm[:k]] + [sorted(perm[k:k + 2])] + [[d] for d in perm[k + 2:]])
    else:
        for a, b in itertools.permutations(live, 2):
            add([[a], [b], [d for d in live if d not in (a, b)]])
    add([list(live)])
    return out


@dataclass(frozen=True, slots=True)
class GpuSpace:
    """The flat parameters of one nest's work-group space; ``to_params`` maps a config back."""

    mdh: MdhExpr
    extents: tuple[int, ...]
    specs: tuple[ParamSpec, ...]
    ocl: tuple[Groups, ...]
    #: Per dim, the tiled ``KT`` values (0 excluded); all empty when the nest is not tileable.
    kt_values: tuple[tuple[int, ...], ...] = ()
    #: Inputs with a ``MEM_<k>`` parameter.
    cached_inputs: tuple[int, ...] = ()

    @property
    def tileable(self) -> bool:
        return any(self.kt_values)

    def to_params(self, cfg: Config) -> GpuParams:
        n = len(self.mdh.dims)
        p = GpuParams(num_wi=tuple(int(cfg[f"WI_{d}"]) for d in range(n)),
                      pt=tuple(int(cfg.get(f"PT_{d}", 1)) for d in range(n)),
                      num_wg=tuple(int(cfg.get(f"WG_{d}", 0)) for d in range(n)),
                      ocl_groups=self.ocl[int(cfg["OCL"])], min_blocks=int(cfg.get("MINB", 0)),
                      warp_tile=_warp_shape(int(cfg.get("WARP", 0))), warp_reduce=int(cfg.get("WRED", 0)))
        kt = tuple(int(cfg.get(f"KT_{d}", 0)) for d in range(n))
        if not any(kt):
            return p
        cache = tuple(int(cfg.get(f"MEM_{k}", 0)) for k in range(len(self.mdh.inputs)))
        return replace(p, kt=kt, cache=cache, prefetch=int(cfg.get("PF", 0)), pad=int(cfg.get("PAD", 0)),
                       gvec=int(cfg.get("GVEC", 1)), async_copy=int(cfg.get("ASYNC", 0)))


def _holds(names: tuple[str, ...], mdh: MdhExpr, p: GpuParams, caps: TargetCaps) -> bool:
    """Whether ``p`` meets the ``GPU_CONSTRAINTS`` called ``names``."""
    return all(c.holds(mdh, p, caps) for c in GPU_CONSTRAINTS if c.name in names)


def tileable(mdh: MdhExpr) -> bool:
    """Whether the tiled kernel serves ``mdh`` (as ``tiled_gpu_params`` decides)."""
    kinds = {d.combine.is_reduction for d in mdh.dims}
    return kinds == {True, False} and mdh.reduction_op is not None


def kt_candidates(extent: int, default: int) -> tuple[int, ...]:
    """Tiled ``KT`` values of a reduction dim of ``extent`` points: ``KT_LADDER`` cut to it."""
    return tuple(sorted({min(v, max(extent, 1)) for v in KT_LADDER} | ({default} if default else set())))


def gpu_space(mdh: MdhExpr, sizes: dict[str, int], caps: TargetCaps) -> GpuSpace:
    """The work-group search space of ``mdh`` at ``sizes`` on a device with ``caps``.

    :raises KeyError: when a size parameter has no value.
    """
    ext = concrete_extents(mdh, sizes)
    dims = mdh.dims
    n = len(dims)
    red = [dims[d].combine.is_reduction for d in range(n)]
    default = default_gpu_params(mdh, caps)
    ocl = tuple(ocl_candidates(ext, default.ocl_groups))
    group_of = [{d: k for k, g in enumerate(groups) for d in g} for groups in ocl]
    max_wg = caps.max_work_group_size
    scratch = elem_bytes(mdh) * max(len(mdh.outputs), 1)
    tiles = tileable(mdh)
    cached = tuple(k for k in range(len(mdh.inputs)) if tiles and cacheable(mdh, k))
    used = {name for k in cached for e in mdh.inputs[k].index for name, _ in e.terms}
    top_wi = [min(_pow2_upto(e)[-1] if red[d] else _pow2_ceil(e), max_wg) for d, e in enumerate(ext)]
    for d in range(n):
        if not red[d] and dims[d].iterator in used:
            top_wi[d] = min(top_wi[d], max(TILED_WI_CAP, default.num_wi[d]))
    reachable = math.prod(top_wi)
    floor = min(caps.preferred_wg_multiple, reachable, max_wg) if caps.is_gpu else 1
    specs: list[ParamSpec] = [ParamSpec("OCL", tuple(range(len(ocl))), doc="NDRange grouping (index into the candidates)")]

    for d in range(n):
        vals = sorted(set(_pow2_upto(top_wi[d])) | {default.num_wi[d]})
        name = f"WI_{d}"
        earlier = tuple(f"WI_{x}" for x in range(d))
        last = d == n - 1

        def ok(c: Config, d: int = d, last: bool = last) -> bool:
            wi = [c[f"WI_{x}"] for x in range(d + 1)]
            if math.prod(wi) > max_wg:
                return False
            gk = group_of[c["OCL"]]
            per = [1, 1, 1]
            for x, w in enumerate(wi):
                per[gk[x]] *= w
            if any(p > m for p, m in zip(per, caps.max_work_item_sizes)):
                return False
            if last:
                size = math.prod(wi)
                if size < floor:
                    return False
                red_wi = math.prod(w for x, w in enumerate(wi) if red[x])
                if red_wi > 1 and size * scratch > caps.local_mem_bytes:
                    return False
            return True

        specs.append(ParamSpec(name, tuple(vals), ok, ("OCL", *earlier), doc=f"NUM_WI of {dims[d].iterator}"))

    concat = [d for d in range(n) if not red[d]]
    for k, d in enumerate(concat):
        top = min(_pow2_ceil(ext[d]), MAX_PRIVATE_ELEMS)
        vals = sorted(set(_pow2_upto(top)) | {default.pt[d]})
        names = tuple(f"PT_{x}" for x in concat[:k])

        def pt_ok(c: Config, d: int = d, names: tuple[str, ...] = names) -> bool:
            return c[f"PT_{d}"] * math.prod(c[x] for x in names) <= MAX_PRIVATE_ELEMS

        specs.append(ParamSpec(f"PT_{d}", tuple(vals), pt_ok if names else None, names,
                               doc=f"PT_SIZE of {dims[d].iterator}"))
    for d in range(n):
        if red[d]:
            top = max(1, min(MAX_WG, ext[d] // MIN_POINTS_PER_ITEM))
            vals = sorted(set(_pow2_upto(top)) | {default.num_wg[d]})
            specs.append(ParamSpec(f"WG_{d}", tuple(vals), doc=f"NUM_WG of reduction {dims[d].iterator}"))
    kt_values = tuple(kt_candidates(ext[d], default.kt[d] if default.kt else 0) if tiles and red[d] else ()
                      for d in range(n))
    specs += _tile_specs(mdh, caps, kt_values, cached, top_wi, max_scratch(caps, red, top_wi, scratch))
    if caps.launch_bounds and max_wg * 2 <= MAX_RESIDENT_ITEMS:
        specs.append(ParamSpec("MINB", (0, 2), lambda c: True,
                               doc="launch bounds: registers kept for 2 resident work-groups per compute unit (0: none)"))
    if n >= 2:
        def warp_ok(c: Config) -> bool:
            if not c["WARP"]:
                return True
            groups = ocl[c["OCL"]]
            p = GpuParams(num_wi=tuple(c[f"WI_{d}"] for d in range(n)), pt=(1,) * n, num_wg=(0,) * n,
                          ocl_groups=groups, warp_tile=_warp_shape(c["WARP"]))
            return warp_dims(mdh, p) is not None

        specs.append(ParamSpec("WARP", (0, *WARP_WIDTHS), warp_ok, ("OCL", *(f"WI_{d}" for d in range(n))),
                               doc="warp tile: work-items of a warp along NDRange dim 0 (0: hardware order)"))
    if caps.warp_shuffle and any(red):
        def wred_ok(c: Config) -> bool:
            if not c["WRED"]:
                return True
            p = GpuParams(num_wi=tuple(c[f"WI_{d}"] for d in range(n)), pt=(1,) * n, num_wg=(0,) * n,
                          ocl_groups=ocl[c["OCL"]], warp_tile=_warp_shape(c.get("WARP", 0)), warp_reduce=1)
            return _holds(("warp-reduce",), mdh, p, caps)

        wred_reads = ("OCL", *(f"WI_{d}" for d in range(n)), *(("WARP",) if n >= 2 else ()))
        specs.append(ParamSpec("WRED", (0, 1), wred_ok, wred_reads,
                               doc="work-group combine: 1 = warp shuffles first, then one value per warp (0: __local tree)"))
    return GpuSpace(mdh=mdh, extents=ext, specs=tuple(specs), ocl=ocl, kt_values=kt_values, cached_inputs=cached)


#: Widths ``wn`` of the warp tiles in the space (``WARP``; the tile is ``WARP_ITEMS / wn`` x ``wn``).
WARP_WIDTHS = (4, 8)


def _warp_shape(wn: int) -> tuple[int, ...]:
    """``GpuParams.warp_tile`` of the ``WARP`` value ``wn`` (0: none)."""
    return (WARP_ITEMS // wn, wn) if wn else ()


def max_scratch(caps: TargetCaps, red: list[bool], top_wi: list[int], scratch: int) -> int:
    """The largest reduction scratch (``__local`` bytes) a configuration of the ``WI`` tree can use."""
    if not any(r and top_wi[d] > 1 for d, r in enumerate(red)):
        return 0
    return min(min(math.prod(top_wi), caps.max_work_group_size) * scratch, caps.local_mem_bytes)


def _tile_specs(mdh: MdhExpr, caps: TargetCaps, kt_values: tuple[tuple[int, ...], ...], cached: tuple[int, ...],
                top_wi: list[int], scratch_bound: int) -> list[ParamSpec]:
    """``KT_<d>`` and ``MEM_<k>`` (see the module docstring); the ``MEM`` predicates check the
    ``tile-local-mem`` constraint at the ``WI`` bound ``top_wi``, within the local memory less
    ``scratch_bound``."""
    dims = mdh.dims
    n = len(dims)
    reds = [d for d in range(n) if kt_values[d]]
    if not reds:
        return []
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    specs: list[ParamSpec] = []
    for k, d in enumerate(reds):
        prev = f"KT_{reds[k - 1]}" if k else None

        def kt_ok(c: Config, d: int = d, prev: str | None = prev) -> bool:
            return prev is None or (c[f"KT_{d}"] == 0) == (c[prev] == 0)

        specs.append(ParamSpec(f"KT_{d}", (0, *kt_values[d]), kt_ok if prev else None, (prev,) if prev else (),
                               doc=f"reduction tile of {dims[d].iterator} (0: untiled kernel)"))
    bound = replace(caps, local_mem_bytes=caps.local_mem_bytes - scratch_bound)
    wi = tuple(top_wi[d] if d in concat else 1 for d in range(n))
    reads = tuple(f"PT_{d}" for d in concat) + tuple(f"KT_{d}" for d in reds)
    names = ("tile-shape", "cacheable", "tile-local-mem")

    def tile_point(c: Config, cache: tuple[int, ...] | None = None, *, pad: int = 0, prefetch: int = 0,
                   gvec: int = 1, async_copy: int = 0) -> GpuParams:
        """The parameters the tile constraints read, from a (partial) configuration: work-items at
        their bound, one work-group per reduction, ``cache`` or the configuration's ``MEM`` flags."""
        return GpuParams(num_wi=wi, pt=tuple(c[f"PT_{d}"] if d in concat else 1 for d in range(n)),
                         num_wg=tuple(0 if d in concat else 1 for d in range(n)), ocl_groups=(tuple(range(n)),),
                         kt=tuple(c[f"KT_{d}"] if d in reds else 0 for d in range(n)),
                         cache=cache if cache is not None else tuple(c.get(f"MEM_{x}", 0) for x in range(len(mdh.inputs))),
                         pad=pad, prefetch=prefetch, gvec=gvec, async_copy=async_copy)
    for j, k in enumerate(cached):
        earlier = tuple(f"MEM_{x}" for x in cached[:j])

        def mem_ok(c: Config, k: int = k, earlier: tuple[str, ...] = earlier) -> bool:
            if not c[f"MEM_{k}"]:
                return True
            if c[f"KT_{reds[0]}"] == 0:
                return False
            on = {k} | {int(x[4:]) for x in earlier if c[x]}
            p = tile_point(c, tuple(1 if x in on else 0 for x in range(len(mdh.inputs))))
            return _holds(names, mdh, p, bound)

        specs.append(ParamSpec(f"MEM_{k}", (0, 1), mem_ok, (*reads, *earlier),
                               doc=f"input {mdh.inputs[k].buffer} in __local memory"))
    if cached:
        mems = tuple(f"MEM_{k}" for k in cached)
        # the exact bound needs the work-group size; the smallest one the WI specs let through
        # (the preferred multiple on a GPU) bounds the registers from above without depending on them
        floor = max(1, min(caps.preferred_wg_multiple, math.prod(top_wi), caps.max_work_group_size)
                    if caps.is_gpu else 1)

        def pf_ok(c: Config) -> bool:
            if not c["PF"]:
                return True
            if not any(c[m] for m in mems):
                return False
            p = tile_point(c)
            regs = sum(-(-math.prod(input_box(mdh, p, k)) // floor) for k in cached if c[f"MEM_{k}"])
            return regs <= MAX_PREFETCH_REGS

        specs.append(ParamSpec("PF", (0, 1), pf_ok, (*reads, *mems),
                               doc="next reduction tile's __local copies prefetched into registers"))

        def pad_ok(c: Config) -> bool:
            if not c["PAD"]:
                return True
            p = tile_point(c, pad=c["PAD"])
            return _holds(("pad", *names), mdh, p, bound)

        specs.append(ParamSpec("PAD", (0, 1), pad_ok, (*reads, *mems),
                               doc="bank-conflict padding of each __local row (elements, or vectors)"))

        def gvec_ok(c: Config) -> bool:
            if c["GVEC"] == 1:
                return True
            p = tile_point(c, gvec=c["GVEC"])
            return _holds(("gvec",), mdh, p, bound)

        # 2 only in the local search (gpu_neighbours): the space's KT values and power-of-two concat tiles give
        # box rows that are multiples of 4 or odd, and a third value would triple the cached part of the tree
        specs.append(ParamSpec("GVEC", (1, 4), gvec_ok, (*reads, *mems),
                               doc="vector width of the __global -> __local copies"))

        if caps.async_copy:
            def async_ok(c: Config) -> bool:
                if not c["ASYNC"]:
                    return True
                p = tile_point(c, pad=c["PAD"], prefetch=c["PF"], async_copy=1)
                return _holds(("async-copy", *names), mdh, p, bound)

            specs.append(ParamSpec("ASYNC", (0, 1), async_ok, (*reads, *mems, "PF", "PAD"),
                                   doc="double-buffered __local copies filled by asynchronous copies (cp.async)"))
    return specs


def gpu_neighbours(space: GpuSpace, p: GpuParams, caps: TargetCaps) -> list[GpuParams]:
    """Valid parameter sets one step from ``p``: a NUM_WI, PT_SIZE or NUM_WG doubled or halved, a
    factor two of the work-group moved between dims, the first two NDRange dims swapped; in a
    tileable nest also a KT one step along ``space.kt_values``, one input's ``__local`` copy
    switched, the prefetch (one or two buffers), the padding or the asynchronous copies switched (the prefetch off with
    them, or kept at two buffers), the
    copies' vector width set to 1, 2 or 4, the warp tile set to none, 8 x 4 or 4 x 8, the launch bounds
    switched (CUDA), and the switch between the tiled kernel (every KT at its smallest, no copies) and
    the untiled one. Checked with the exact constraints (``gpu_violations``), not the space's bound."""
    mdh, ext = space.mdh, space.extents
    n = len(mdh.dims)
    out: list[GpuParams] = []

    def add(q: GpuParams) -> None:
        if q != p and q not in out and not gpu_violations(mdh, q, caps):
            out.append(q)

    def put(t: tuple[int, ...], d: int, v: int) -> tuple[int, ...]:
        return (*t[:d], v, *t[d + 1:])

    for d in range(n):
        is_red = mdh.dims[d].combine.is_reduction
        for v in (p.num_wi[d] * 2, p.num_wi[d] // 2):
            if 1 <= v <= _pow2_ceil(ext[d]):
                add(replace(p, num_wi=put(p.num_wi, d, v)))
        if not is_red:
            for v in (p.pt[d] * 2, p.pt[d] // 2):
                if 1 <= v <= _pow2_ceil(ext[d]):
                    add(replace(p, pt=put(p.pt, d, v)))
        else:
            for v in (p.num_wg[d] * 2, p.num_wg[d] // 2):
                if 1 <= v <= max(1, ext[d] // MIN_POINTS_PER_ITEM):
                    add(replace(p, num_wg=put(p.num_wg, d, v)))
    for a, b in itertools.permutations(range(n), 2):
        if p.num_wi[a] >= 2 and p.num_wi[b] * 2 <= _pow2_ceil(ext[b]):
            add(replace(p, num_wi=put(put(p.num_wi, a, p.num_wi[a] // 2), b, p.num_wi[b] * 2)))
    if len(p.ocl_groups) >= 2:
        g = p.ocl_groups
        add(replace(p, ocl_groups=(g[1], g[0], *g[2:])))
    if space.tileable:
        if p.tiled:
            for d, vals in enumerate(space.kt_values):
                if p.kt[d] in vals:
                    i = vals.index(p.kt[d])
                    for j in (i - 1, i + 1):
                        if 0 <= j < len(vals):
                            add(replace(p, kt=put(p.kt, d, vals[j])))
            cache = p.cached(len(mdh.inputs))
            for k in space.cached_inputs:
                add(replace(p, cache=put(cache, k, 1 - cache[k])))
                add(replace(p, cache=put(cache, k, 1 - cache[k]), prefetch=0))
            add(replace(p, prefetch=1 - min(p.prefetch, 1)))
            add(replace(p, prefetch=2 if p.prefetch != 2 else 1))   # two buffers: only in the local search
            add(replace(p, pad=0 if p.pad else 1))
            add(replace(p, async_copy=1 - p.async_copy, prefetch=0))
            if p.prefetch == 2:   # B's copies asynchronous, A's through the two-buffer registers (or back)
                add(replace(p, async_copy=1 - p.async_copy))
            for v in (1, 2, 4):
                add(replace(p, gvec=v))
            add(replace(p, kt=(), cache=(), prefetch=0, pad=0, gvec=1, async_copy=0))
        else:
            kt = tuple(vals[0] if vals else 0 for vals in space.kt_values)
            add(replace(p, kt=kt, cache=(0,) * len(mdh.inputs)))
    if caps.launch_bounds:
        add(replace(p, min_blocks=0 if p.min_blocks else 2))
    for wn in (0, *WARP_WIDTHS):
        add(replace(p, warp_tile=_warp_shape(wn)))
    if caps.warp_shuffle:
        add(replace(p, warp_reduce=1 - p.warp_reduce))
        for a, b in itertools.permutations(range(n), 2):   # the work-group reshaped under the shuffle combine
            if p.num_wi[a] >= 2 and p.num_wi[b] * 2 <= _pow2_ceil(ext[b]):
                add(replace(p, num_wi=put(put(p.num_wi, a, p.num_wi[a] // 2), b, p.num_wi[b] * 2), warp_reduce=1))
    return out

# }}}

# {{{ targets


class GpuTarget:
    """A work-group target (``GpuParams``) measured on a real device through the code that ships.

    ``caps`` are ``base`` with the limits ``device`` reports (it answers ``device_limits()`` and
    ``device_identity()``, and may answer ``compiler_identity()``). A candidate is the checked plan
    rendered by ``backend(caps)`` as the driver renders it -- the host preamble and the host
    function with its kernels, the text ``out.c`` gets -- plus ``mdpoly_entry`` and the timing
    export over the host code's last-call struct ``last_call``, built and run by ``runner`` (a
    ``HostCodeRunner``); with ``resident_enter`` (the host runtime's registration of a resident
    array) also the ``HOLD_ENTRY`` export, so the inputs are copied to the device once per
    candidate, not before each timed call.
    """

    space_version = GPU_SPACE_VERSION
    calibrate_from_default = True

    def __init__(self, name: str, base: TargetCaps, backend: Callable[[TargetCaps], Backend[KernelPlan]],
                 runner: Any, device: Any, last_call: str, resident_enter: str = "") -> None:
        self.name = name
        self.runner = runner
        self.device = device
        self.last_call = last_call
        self.resident_enter = resident_enter
        self.caps = caps_from_device(base, device.device_limits())
        self.backend = backend(self.caps)

    def default(self, mdh: MdhExpr) -> GpuParams:
        return default_gpu_params(mdh, self.caps)

    def space(self, mdh: MdhExpr, sizes: dict[str, int]) -> GpuSpace:
        return gpu_space(mdh, sizes, self.caps)

    def neighbours(self, space: GpuSpace, params: GpuParams) -> list[GpuParams]:
        return gpu_neighbours(space, params, self.caps)

    def violations(self, mdh: MdhExpr, params: GpuParams) -> list[str]:
        return gpu_violations(mdh, params, self.caps)

    def candidate(self, mdh: MdhExpr, params: GpuParams, sizes: dict[str, int],
                  args: tuple[ArgSpec, ...]) -> Candidate:
        """The shipped host code of ``params`` with its exports (see the class docstring).

        :raises MdpolyError: when lowering or rendering refuses ``params``."""
        plan = lower_gpu(mdh, params, self.caps)
        check_kernel_plan(plan, self.caps)
        code = self.backend.render(plan)
        source = (code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)
                  + timing_function(TIMING_ENTRY, self.last_call))
        hold = ""
        if self.resident_enter:
            held = tuple(np.dtype(a.dtype).itemsize * math.prod(a.shape) if a.shape or a.is_output else None
                         for a in args)
            source += hold_function(HOLD_ENTRY, self.resident_enter, held)
            hold = HOLD_ENTRY
        return Candidate(BuildRequest(source, ENTRY, args, language=self.name, hold=hold), function=code.definition)

    def describe(self, mdh: MdhExpr, params: GpuParams) -> str:
        return params.describe(mdh)

    def to_dict(self, params: GpuParams) -> dict[str, Any]:
        return gpu_params_to_dict(params)

    def from_dict(self, data: dict[str, Any]) -> GpuParams:
        return gpu_params_from_dict(data)

    def identity(self) -> dict[str, str]:
        compiler = getattr(self.device, "compiler_identity", None)
        return {"device": self.device.device_identity(), "compiler": compiler() if compiler else ""}


def opencl_target(selector: str | None = None) -> GpuTarget:
    """The OpenCL target on the device the generated host code would pick (``selector`` =
    ``MDPOLY_OPENCL_DEVICE``: index or name substring, else the first GPU, else the first device).

    :raises runtime.opencl.NoOpenCLDevice: without pyopencl or a (matching) device.
    """
    from mdpoly.backends.opencl_host import LAST_CALL, RESIDENT_ENTER
    from mdpoly.runtime.opencl import OpenCLDevice
    from mdpoly.targets import OPENCL
    device = OpenCLDevice(selector)
    cflags, lflags = OPENCL.toolchain.flags()
    runner = HostCodeRunner("opencl", cflags, lflags, env={"MDPOLY_OPENCL_DEVICE": selector} if selector else {},
                            device=device.device_identity())
    return GpuTarget("opencl", OPENCL.caps, OPENCL.backend, runner, device, LAST_CALL, RESIDENT_ENTER)


def cuda_target(device: str | None = None) -> GpuTarget:
    """The CUDA target on device ``device`` (an index; default 0).

    :raises runtime.cuda.NoCudaDevice: without cuda-python, a driver or the device.
    """
    from mdpoly.runtime.cuda import CudaDevice
    return cuda_target_on(CudaDevice(device), device)


def cuda_target_on(queries: Any, device: str | None = None) -> GpuTarget:
    """The CUDA target whose device limits and identity ``queries`` answers, its candidates built
    with the registry's CUDA toolchain (the toolkit ``mdpoly.cuda_toolkit.find_cuda`` finds; its
    stub ``libcuda`` where no driver is installed: candidates then build but cannot run)."""
    from mdpoly.backends.cuda_host import LAST_CALL, RESIDENT_ENTER
    from mdpoly.targets import CUDA
    cflags, lflags = CUDA.toolchain.flags()
    runner = HostCodeRunner("cuda", cflags, lflags, env={"MDPOLY_CUDA_DEVICE": device} if device else {},
                            device=queries.device_identity())
    return GpuTarget("cuda", CUDA.caps, CUDA.backend, runner, queries, LAST_CALL, RESIDENT_ENTER)

# }}}
