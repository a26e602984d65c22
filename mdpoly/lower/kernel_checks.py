"""Checks run on every ``KernelPlan`` before a backend sees it: ``check_kernel_plan(plan, caps)``.

The work-group counterpart of ``mdpoly.lower.checks``: a failure is a bug in mdpoly's work-group
lowering (or in a tuning candidate's parameters that slipped past the constraints), raised as
``CompilerBug`` with the plan's parameters, never an ``assert``. Each property is one function:

* ``check_dims_match_mdh`` -- one ``KDim`` per MDH dim, in order, with the MDH dim's iterator,
  bounds and combine operator.
* ``check_grid_axes_partition_dims`` -- the grid axes (at most three) partition the dims.
* ``check_points_covered_once`` -- for every dim, the points that work-groups x work-items x
  private points (concat dims) or work-groups x reduction tiles x work-items (reduction dims)
  visit, by the formulas of ``KDim``, are each point of ``[0, extent)`` exactly once, for every
  extent (decided by isl with the extent as a parameter, so symbolic sizes are covered too).
* ``check_reductions_combined`` -- a reduction spread over several work-items is combined inside
  the group (``local_combine``), one spread over several work-groups by the combine kernel
  (``partials``), and a plan with partials has a reduction operator.
* ``check_copies_cover_boxes`` -- a cached input's copy walks its whole box: with vector loads
  (``KInput.gvec``), the box row is a multiple of the width, the element type has a vector type
  and a vector store (``vstore``) lands on an aligned, contiguous run of the ``__local`` copy.
* ``check_warp_tile_renumbers`` -- a warp tile (``warp_tile``) renumbers the work-items of the two dims
  on grid axes 0 and 1 one-to-one (isl: the map from the hardware local ids to the renumbered ones is
  a bijection of the work-group), so that with ``check_points_covered_once`` every point is still
  computed, and every output written, exactly once.
* ``check_warp_reduce_lanes`` -- a warp-shuffle combine (``warp_reduce``) has a target with 32-wide
  warp shuffles, whole warps, and a lane stride that puts each warp's lanes of one concat item on
  its reduction items only.
* ``check_fits_caps`` -- work-group size, per-axis work-item counts and ``__local`` memory (the
  combine scratch plus the cached inputs' copies, two of each when double-buffered by
  ``async_copy`` or ``prefetch_buffers`` 2) within the target's ``TargetCaps``; launch bounds (``min_groups``) only where the
  target has them, within a compute unit's work-items; asynchronous copies only where the target
  has them, in a tiled kernel with a cached input and without the one-buffer register prefetch.
"""

from __future__ import annotations

import math

import islpy as isl

from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.kernel import KDim, KernelPlan
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu_params import MAX_RESIDENT_ITEMS, async_buffer_elems

#: Bytes of the kernels' element types (the device spellings ``mdpoly.lower.gpu`` writes); an
#: unknown spelling counts 8 bytes, so that the memory check never undercounts.
DEVICE_TYPE_BYTES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "float": 4,
                     "long": 8, "ulong": 8, "double": 8}


def _bug(plan: KernelPlan, what: str) -> CompilerBug:
    return CompilerBug(f"kernel plan check failed for '{plan.name}': {what} [{plan.tuning!r}]", plan.loc)


def check_dims_match_mdh(plan: KernelPlan) -> None:
    """One ``KDim`` per MDH dim, in MDH order, with that dim's iterator, bounds and operator."""
    mdims = plan.mdh.dims
    if len(plan.dims) != len(mdims):
        raise _bug(plan, f"{len(plan.dims)} kernel dims for {len(mdims)} MDH dims")
    for k, (d, m) in enumerate(zip(plan.dims, mdims)):
        if (d.index, d.iterator, d.lower, d.extent, d.combine) != (k, m.iterator, m.lower, m.extent, m.combine):
            raise _bug(plan, f"kernel dim {k} ('{d.iterator}') is not MDH dim {k} ('{m.iterator}')")


def check_grid_axes_partition_dims(plan: KernelPlan) -> None:
    """The grid axes are 1..3 non-empty groups that together hold every dim exactly once."""
    flat = [d for axis in plan.grid_axes for d in axis]
    if not 1 <= len(plan.grid_axes) <= 3 or not all(plan.grid_axes):
        raise _bug(plan, f"{len(plan.grid_axes)} grid axes (1 to 3 non-empty ones allowed)")
    if sorted(flat) != list(range(len(plan.dims))):
        raise _bug(plan, f"grid axes {plan.grid_axes} do not partition the dims 0..{len(plan.dims) - 1}")


def _visits(d: KDim, tiled: bool) -> isl.Map:
    """The offsets from ``d.lower`` that the kernels visit, as a map from (work-group, work-item,
    private point or step) to the offset, for every extent ``N`` (a parameter), before the
    kernels' guard ``offset < N``."""
    wi, pt, wg, kt, vec = d.num_wi, d.pt, d.num_wg, d.kt, d.vec
    if not d.is_reduction:
        # work-groups: ceil(N / (pt * num_wi)), i.e. wg * pt * num_wi < N; private point
        # p = vec * c + r of work-item w sits at ((c * num_wi + w) * vec + r) in the group's block
        return isl.Map(f"[N] -> {{ [g, w, c, r] -> [x] : N >= 0 and g >= 0 and {pt * wi} * g < N and "
                       f"0 <= w < {wi} and 0 <= c and {vec} * c < {pt} and 0 <= r < {vec} and "
                       f"x = {pt * wi} * g + ({wi} * c + w) * {vec} + r }}")
    if tiled:
        # tile t = g + s * num_wg covers t * kt + [0, kt); work-item w takes w, w + num_wi, ...
        return isl.Map(f"[N] -> {{ [g, w, s, q] -> [x] : N >= 0 and 0 <= g < {wg} and s >= 0 and "
                       f"0 <= w < {wi} and q >= 0 and w + {wi} * q < {kt} and "
                       f"x = ({wg} * s + g) * {kt} + w + {wi} * q }}")
    # each work-item walks g * num_wi + w in steps of num_wg * num_wi
    return isl.Map(f"[N] -> {{ [g, w, s, z] -> [x] : N >= 0 and 0 <= g < {wg} and 0 <= w < {wi} and "
                   f"s >= 0 and z = 0 and x = {wi} * g + w + {wg * wi} * s }}")


def check_points_covered_once(plan: KernelPlan) -> None:
    """Every dim's points ``[0, extent)`` are visited exactly once, for every extent (isl)."""
    tiled = plan.tiles is not None
    for d in plan.dims:
        if d.num_wi < 1 or d.pt < 1 or d.vec < 1 or (d.is_reduction and d.pt != 1):
            raise _bug(plan, f"dim '{d.iterator}': NUM_WI {d.num_wi}, PT {d.pt}, vec {d.vec} "
                             "(all positive, PT 1 on a reduction dim)")
        domain = isl.Set("[N] -> { [x] : 0 <= x < N }")
        visits = _visits(d, tiled).intersect_range(domain)
        if not visits.is_injective():
            raise _bug(plan, f"dim '{d.iterator}' (NUM_WI {d.num_wi}, PT {d.pt}, vec {d.vec}, NUM_WG "
                             f"{d.num_wg}, KT {d.kt}): some point is visited more than once")
        if not visits.range().is_equal(domain):
            missed = domain.subtract(visits.range())
            raise _bug(plan, f"dim '{d.iterator}' (NUM_WI {d.num_wi}, PT {d.pt}, vec {d.vec}, NUM_WG "
                             f"{d.num_wg}, KT {d.kt}): points {missed} are never visited")


def check_reductions_combined(plan: KernelPlan) -> None:
    """Work-items sharing a concat point combine in the group; work-groups sharing one combine
    through partials and the combine kernel; both need the reduction operator."""
    red_wi = math.prod(d.num_wi for d in plan.reductions)
    red_wg = math.prod(d.num_wg for d in plan.reductions)
    if red_wi > 1 and not plan.local_combine:
        raise _bug(plan, f"{red_wi} work-items share each reduction but the group does not combine them")
    if red_wg > 1 and not plan.partials:
        raise _bug(plan, f"{red_wg} work-groups share each reduction without a combine kernel")
    if (plan.local_combine or plan.partials) and plan.op is None:
        raise _bug(plan, "partial results are combined without a reduction operator")


#: Element types the kernels load and store as vectors (``float4`` etc.).
VECTOR_ELEM_TYPES = frozenset({"float", "int", "uint"})


def check_copies_cover_boxes(plan: KernelPlan) -> None:
    """Every cached input's copy covers its box: scalar, or vectors of ``gvec`` (1, 2 or 4) that
    divide the box row (or, at least twice as long, vectors aligned in ``__global`` memory with
    partial ends, stored per element), of a vector element type, stored whole only where the row is
    contiguous and aligned in ``__local`` memory; the copy view (merged rows) has one origin,
    bound pair, extent and stride per position and as many elements as the ``__local`` copy holds."""
    for t in plan.tiles or ():
        if not t.cached:
            if t.gvec != 1 or t.vstore:
                raise _bug(plan, f"input '{t.param}' is not cached but its copy is vectorized")
            continue
        if not len(t.box) == len(t.origin) == len(t.lo) == len(t.hi) == len(t.shape) == len(t.strides) or (
                t.local_elems and t.box_elems > t.local_elems):
            raise _bug(plan, f"input '{t.param}': copy view box {t.box} strides {t.strides} does not match its "
                             f"{t.local_elems}-element __local copy")
        if t.gvec not in (1, 2, 4):
            raise _bug(plan, f"input '{t.param}': copy vector width {t.gvec} (1, 2 or 4 allowed)")
        if t.gvec == 1:
            if t.vstore:
                raise _bug(plan, f"input '{t.param}': vector store without vector loads")
            continue
        if (not t.box or (t.box[-1] % t.gvec and t.box[-1] < 2 * t.gvec) or t.elem_type not in VECTOR_ELEM_TYPES
                or not t.strides):
            raise _bug(plan, f"input '{t.param}': box {t.box} of {t.elem_type} cannot be copied in vectors of "
                             f"{t.gvec} (the row must be a multiple of it or at least twice as long, the type "
                             "float, int or uint)")
        if t.aligned_rows and (t.vstore or plan.async_copy):
            raise _bug(plan, f"input '{t.param}': rows of {t.box[-1]} elements copied in vectors aligned in __global "
                             "memory are stored per element and not by asynchronous copies")
        if t.vstore and (t.box[-1] % t.gvec or t.strides[-1] != 1 or any(st % t.gvec for st in t.strides[:-1])):
            raise _bug(plan, f"input '{t.param}': vector stores into __local strides {t.strides} are not aligned")


def check_warp_tile_renumbers(plan: KernelPlan) -> None:
    """The warp tile's renumbering (``KernelPlan.warp_tile``) maps the work-group's local ids onto
    its work-items one-to-one."""
    if not plan.warp_tile:
        return
    if len(plan.warp_tile) != 2 or len(plan.grid_axes) < 2 or any(len(g) != 1 for g in plan.grid_axes[:2]):
        raise _bug(plan, f"warp tile {plan.warp_tile} needs one dim alone on each of grid axes 0 and 1")
    wm, wn = plan.warp_tile
    a, b = plan.dims[plan.grid_axes[0][0]], plan.dims[plan.grid_axes[1][0]]
    if any(d.num_wi != 1 for d in plan.dims if d.index not in (a.index, b.index)):
        raise _bug(plan, f"warp tile {plan.warp_tile} with work-items on a third dim")
    if wm < 1 or wn < 1 or a.num_wi % wn or b.num_wi % wm:
        raise _bug(plan, f"warp tile {wm} x {wn} does not divide the work-items {b.num_wi} x {a.num_wi}")
    nx, ny, warp, across = a.num_wi, b.num_wi, wm * wn, a.num_wi // wn
    # local ids (x, y) -> flat f = x + nx y = warp * v + lane -> (wi_a, wi_b), as the kernel writer spells it;
    # enumerated (a work-group has at most a few thousand work-items: isl's proof of the same map
    # with its existential quotients took minutes for 64 x 64)
    seen: set[tuple[int, int]] = set()
    inside = True
    for y in range(ny):
        for x in range(nx):
            v, lane = divmod(x + nx * y, warp)
            q, r = divmod(v, across)
            s, o = divmod(lane, wn)
            u, t = wn * r + o, wm * q + s
            inside = inside and 0 <= u < nx and 0 <= t < ny
            seen.add((u, t))
    if not inside or len(seen) != nx * ny:
        raise _bug(plan, f"warp tile {wm} x {wn} over {ny} x {nx} work-items does not renumber them one-to-one")


def check_warp_reduce_lanes(plan: KernelPlan, caps: TargetCaps) -> None:
    """A warp-shuffle combine (``KernelPlan.warp_reduce``) runs on a target with 32-wide warp shuffles,
    over whole warps, and its lane stride is the flat-id stride of the one reduction dim with
    work-items, whose work-items lie above every concat work-item: lane ``l`` of warp ``v`` then holds
    concat item ``l % stride`` and reduction item ``v * 32 / stride + l / stride``."""
    c = plan.warp_reduce
    if not c:
        return
    if not caps.warp_shuffle or caps.preferred_wg_multiple != 32 or plan.wg_size() % 32:
        raise _bug(plan, "a warp-shuffle combine needs a target with 32-wide warp shuffles and whole warps")
    reds = [d for d in plan.reductions if d.num_wi > 1]
    cw = math.prod(d.num_wi for d in plan.concat)
    stride, below = 0, 1
    for axis in plan.grid_axes:
        for i in reversed(axis):
            if reds and i == reds[0].index:
                stride = below
            below *= plan.dims[i].num_wi
    if len(reds) != 1 or c != cw or stride != cw or cw & (cw - 1) or cw > 16:
        raise _bug(plan, f"warp-shuffle combine with lane stride {c}: needs one reduction dim with work-items, "
                         f"above the {cw} concat work-items in the flat local id (a power of two <= 16)")


def local_memory_bytes(plan: KernelPlan) -> int:
    """``__local`` bytes one work-group of ``plan`` allocates: the combine scratch (one element per
    work-item and output) and the cached inputs' copies (two buffers each with ``async_copy`` or
    ``prefetch_buffers`` 2)."""
    total = 0
    if plan.local_combine:
        total += sum(plan.wg_size() * DEVICE_TYPE_BYTES.get(o.elem_type, 8) for o in plan.outputs)
    for t in plan.tiles or ():
        if t.cached:
            elems = t.local_elems or t.box_elems
            two = plan.async_copy or (plan.prefetch and plan.prefetch_buffers == 2)
            elems = 2 * async_buffer_elems(elems) if two else elems
            total += elems * DEVICE_TYPE_BYTES.get(t.elem_type, 8)
    return total


def check_fits_caps(plan: KernelPlan, caps: TargetCaps) -> None:
    """Work-group size, work-items per grid axis and ``__local`` memory within ``caps``."""
    if plan.wg_size() > caps.max_work_group_size:
        raise _bug(plan, f"{plan.wg_size()} work-items per group, the target allows {caps.max_work_group_size}")
    for k, axis in enumerate(plan.grid_axes):
        n = math.prod(plan.dims[d].num_wi for d in axis)
        if n > caps.max_work_item_sizes[k]:
            raise _bug(plan, f"{n} work-items along grid axis {k}, the target allows {caps.max_work_item_sizes[k]}")
    if plan.min_groups and (not caps.launch_bounds or plan.min_groups * plan.wg_size() > MAX_RESIDENT_ITEMS):
        raise _bug(plan, f"launch bounds for {plan.min_groups} resident groups of {plan.wg_size()} items "
                         f"({'' if caps.launch_bounds else 'the target has none; '}at most {MAX_RESIDENT_ITEMS} items)")
    mixed = plan.prefetch and plan.prefetch_buffers == 2   # the register path for the inputs not copied whole
    if plan.async_copy and (not caps.async_copy or (plan.prefetch and not mixed) or not any(t.cached for t in plan.tiles or ())):
        raise _bug(plan, "asynchronous double-buffered copies need a target with async copies, a cached input "
                         "of a tiled kernel and no one-buffer register prefetch")
    used = local_memory_bytes(plan)
    if used > caps.local_mem_bytes:
        raise _bug(plan, f"{used} bytes of local memory per group, the target has {caps.local_mem_bytes}")


def check_kernel_plan(plan: KernelPlan, caps: TargetCaps) -> None:
    """Run every check on ``plan`` for a target with ``caps``.

    :raises CompilerBug: on the first failed check.
    """
    check_dims_match_mdh(plan)
    check_grid_axes_partition_dims(plan)
    check_points_covered_once(plan)
    check_reductions_combined(plan)
    check_copies_cover_boxes(plan)
    check_warp_tile_renumbers(plan)
    check_warp_reduce_lanes(plan, caps)
    check_fits_caps(plan, caps)
