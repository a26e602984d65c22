"""Work-group tuning parameters as data: ``GpuParams``, ``GPU_PARAMETERS``, ``GPU_CONSTRAINTS``, defaults.

The slice of the MDH parameters (opencl-lift-teml.md §A.4, Table I) that the OpenCL (and a later
CUDA) lowering in ``mdpoly.lower.gpu`` uses:

* ``NUM_WI<d>`` -- work-items per work-group along MDH dim ``d``;
* ``PT_SIZE<d>`` -- private tile: points of a concat dim each work-item computes (its local
  tile is ``LT_SIZE<d> = PT_SIZE<d> * NUM_WI<d>``, so ``PT <= LT`` holds by construction);
* ``NUM_WG<d>`` -- work-groups along a *reduction* dim (> 1: per-group partials combined by a
  second kernel); along a concat dim it follows from the extent at run time,
  ``ceil(N_d / LT_SIZE<d>)``, so symbolic sizes work;
* ``σ_arr→ocl`` -- ``ocl_groups``: a partition of the MDH dims into at most three NDRange
  dimensions (a group of several MDH dims is decoded with div/mod, first dim slowest).

Memory-region parameters (``MEM_INP``/``MEM_RES``) are fixed: inputs stay ``__global`` (cache
blocking through the tile shape), results private, the intra-group combine in ``__local``.
``violations(mdh, params, caps)`` names the constraints a candidate breaks against ``TargetCaps``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.heuristics import elem_bytes

#: Elements of the private result tile (``prod PT_SIZE`` of the concat dims, per output).
MAX_PRIVATE_ELEMS = 64
#: Work-groups a symbolic-size dim is planned for.
SYMBOLIC_EXTENT = 4096


@dataclass(frozen=True, slots=True)
class GpuParams:
    """One point of the work-group search space; tuples are indexed by MDH dim."""

    num_wi: tuple[int, ...]
    pt: tuple[int, ...]
    num_wg: tuple[int, ...]          # reduction dims: the constant; concat dims: 0 (derived)
    ocl_groups: tuple[tuple[int, ...], ...]

    def describe(self, mdh: MdhExpr) -> str:
        its = [d.iterator for d in mdh.dims]
        wi = ",".join(f"{its[d]}:{n}" for d, n in enumerate(self.num_wi))
        pt = ",".join(f"{its[d]}:{n}" for d, n in enumerate(self.pt))
        wg = ",".join(f"{its[d]}:{n or 'auto'}" for d, n in enumerate(self.num_wg))
        groups = "|".join(",".join(its[d] for d in g) for g in self.ocl_groups)
        return f"NUM_WI={wi} PT={pt} NUM_WG={wg} ocl=({groups})"

    def wg_size(self) -> int:
        return math.prod(self.num_wi)

    def reduction_wi(self, mdh: MdhExpr) -> int:
        return math.prod(n for d, n in enumerate(self.num_wi) if mdh.dims[d].combine.is_reduction)

    def private_elems(self, mdh: MdhExpr) -> int:
        return math.prod(n for d, n in enumerate(self.pt) if not mdh.dims[d].combine.is_reduction)


# {{{ parameter table


@dataclass(frozen=True, slots=True)
class GpuParamSpec:
    field: str
    mdh_name: str
    doc: str


GPU_PARAMETERS: tuple[GpuParamSpec, ...] = (
    GpuParamSpec("num_wi", "NUM_WI<d>", "work-items per work-group along each MDH dim (powers of two)"),
    GpuParamSpec("pt", "PT_SIZE<d>", "points of a concat dim per work-item (private tile); 1 for reduction dims"),
    GpuParamSpec("num_wg", "NUM_WG<d>", "work-groups along a reduction dim (>1: partials + second kernel); "
                 "0 for concat dims, where it is ceil(N/(PT*NUM_WI)) at run time"),
    GpuParamSpec("ocl_groups", "σ_arr→ocl", "partition of the MDH dims into <= 3 NDRange dims"),
)

# }}}

# {{{ constraints


@dataclass(frozen=True, slots=True)
class GpuConstraint:
    name: str
    doc: str
    holds: Callable[[MdhExpr, GpuParams, TargetCaps], bool]


def _shape_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    n = len(m.dims)
    return (len(p.num_wi) == len(p.pt) == len(p.num_wg) == n and all(v >= 1 for v in p.num_wi + p.pt)
            and all(v >= 0 for v in p.num_wg))


def _roles_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    for d, dim in enumerate(m.dims):
        if dim.combine.is_reduction and (p.pt[d] != 1 or p.num_wg[d] < 1):
            return False
        if not dim.combine.is_reduction and p.num_wg[d] != 0:
            return False
    return True


def _groups_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    flat = [d for g in p.ocl_groups for d in g]
    return 1 <= len(p.ocl_groups) <= 3 and all(p.ocl_groups) and sorted(flat) == list(range(len(m.dims)))


def _wg_size_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return p.wg_size() <= c.max_work_group_size


def _item_sizes_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return all(math.prod(p.num_wi[d] for d in g) <= c.max_work_item_sizes[k] for k, g in enumerate(p.ocl_groups))


def _local_mem_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if p.reduction_wi(m) <= 1:
        return True
    return p.wg_size() * elem_bytes(m) * len(m.outputs) <= c.local_mem_bytes


def _private_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return p.private_elems(m) <= MAX_PRIVATE_ELEMS


GPU_CONSTRAINTS: tuple[GpuConstraint, ...] = (
    GpuConstraint("shape", "one NUM_WI, PT_SIZE and NUM_WG per dim; NUM_WI, PT >= 1", _shape_ok),
    GpuConstraint("dim-roles", "reduction dims: PT_SIZE 1, NUM_WG >= 1; concat dims: NUM_WG 0 (derived)", _roles_ok),
    GpuConstraint("ocl-partition", "ocl_groups partitions the dims into 1..3 non-empty NDRange dims", _groups_ok),
    GpuConstraint("wg-size", "prod NUM_WI <= CL_DEVICE_MAX_WORK_GROUP_SIZE", _wg_size_ok),
    GpuConstraint("item-sizes", "per NDRange dim, prod NUM_WI <= CL_DEVICE_MAX_WORK_ITEM_SIZES[k]", _item_sizes_ok),
    GpuConstraint("local-mem", "reduction scratch (wg size * elem size * outputs) <= CL_DEVICE_LOCAL_MEM_SIZE",
                  _local_mem_ok),
    GpuConstraint("private-tile", "prod PT_SIZE of the concat dims <= MAX_PRIVATE_ELEMS", _private_ok),
)


def gpu_violations(mdh: MdhExpr, params: GpuParams, caps: TargetCaps) -> list[str]:
    """Names of the constraints ``params`` breaks (empty when valid); stops at a broken shape."""
    out: list[str] = []
    for con in GPU_CONSTRAINTS:
        if not con.holds(mdh, params, caps):
            out.append(con.name)
            if con.name in ("shape", "ocl-partition"):
                break
    return out

# }}}

# {{{ defaults


def _pow2_floor(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


def default_ocl_groups(ndims: int) -> tuple[tuple[int, ...], ...]:
    """Innermost MDH dim on NDRange dim 0 (unit stride across neighbouring work-items); more than
    three dims: the two innermost get one NDRange dim each, the rest share dimension 2."""
    rev = tuple(range(ndims - 1, -1, -1))
    if ndims <= 3:
        return tuple((d,) for d in rev)
    return ((ndims - 1,), (ndims - 2,), tuple(range(ndims - 2)))


def default_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams:
    """Sane untuned parameters for a CPU (PoCL) and a GPU.

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


def caps_from_device(base: TargetCaps, info: dict[str, Any]) -> TargetCaps:
    """``base`` with the work-group limits of a queried device (``runtime.opencl.device_limits``)."""
    sizes = tuple(info.get("max_work_item_sizes", base.max_work_item_sizes))[:3]
    sizes = sizes + (1,) * (3 - len(sizes))
    return replace(
        base,
        max_work_group_size=int(info.get("max_work_group_size", base.max_work_group_size)),
        max_work_item_sizes=(int(sizes[0]), int(sizes[1]), int(sizes[2])),
        local_mem_bytes=int(info.get("local_mem_size", base.local_mem_bytes)),
        compute_units=int(info.get("max_compute_units", base.compute_units)),
        is_gpu=bool(info.get("is_gpu", base.is_gpu)),
        preferred_wg_multiple=int(info.get("preferred_wg_multiple", base.preferred_wg_multiple)),
    )

# }}}
