"""Device residency in C: what a GPU computation uses (``device_data``) and the C of a data region.

``device_data(plan)`` describes a ``KernelPlan``'s global buffers for the region planner
(``mdpoly.backends.residency``) as ``DeviceData``; ``region_c(region, api, number, loop, fallback)``
renders a planned ``DataRegion``: the run-time checks once, then either the arrays registered
with the API's runtime (``mdp_cl_resident_enter``/``mdp_cu_resident_enter`` in
``backends/c/<api>_host.h``), the loop, and their release (copies back of the written ones), or
the loop as it was, with per-call copies. Nothing here decides; the region is already planned.
"""

from __future__ import annotations

from typing import cast

from mdpoly.backends.c_emit import CEmitter, Dialect
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.residency import DataRegion, DeviceData, DeviceUse, HostSync, ResidentArray

_PREFIX = {"opencl": "mdp_cl", "cuda": "mdp_cu"}


def device_data(plan: KernelPlan) -> DeviceData:
    """``plan``'s global buffers as the call site names them, and its run-time check statement."""
    params = {b.name: b for b in plan.params}
    computed = {b.name for b in plan.params if b.c_value}
    uses: list[DeviceUse] = []
    for b in plan.buffers:
        if b.role != "global":
            continue
        p = params.get(b.name)
        direct = (p is not None and p.kind in ("array", "pointer") and not p.rows_of and not p.c_value
                  and not any(name in b.count for name in computed))
        scalar = p is not None and p.kind == "scalar"
        uses.append(DeviceUse(b.name, b.host_type, b.count, b.copy_in or not b.written, b.written, direct,
                              scalar=scalar, value=p.c_value if scalar and p is not None else ""))
    # the checks of a call need no loop spellings, hence no dialect
    _, _, check = CEmitter(cast(Dialect, None)).team_call(plan, plan.name)  # type: ignore[arg-type]
    overlap_only = not plan.mdh.preconditions and all(u.direct for u in uses)
    return DeviceData(tuple(uses), check, overlap_only)


def _offset(name: str, subscripts: tuple[str, ...], first: int) -> str:
    """The byte offset of ``name[0]..[0][s_first]..[s_last]`` (the dimensions before ``first`` at
    0) as integer arithmetic: ``sizeof`` of each dimension's element, so no address is formed
    and any subscript value is defined."""
    return " + ".join(f"{s} * (long long)sizeof({name}{'[0]' * (d + 1)})"
                      for d, s in enumerate(subscripts) if d >= first) or "0LL"


def sync_c(api: str, sync: HostSync, types: dict[str, str], to_host: bool) -> str:
    """Copies of resident arrays to the host (``to_host``: ``sync.download``, before a statement
    of the loop uses them) or back to the device (``sync.upload``, after it wrote them): each
    whole, or only the bounding box of its footprint's boxes, as rows (the first subscript) and
    the bytes within a row (the others): one range where that is contiguous, else a rectangle
    (``types``: the arrays' element types, which tell that the subscripts reach elements)."""
    pre = _PREFIX[api]
    way = "download" if to_host else "upload"
    out: list[str] = []
    for name in sync.download if to_host else sync.upload:
        fp = sync.footprint(name)
        boxes = [] if fp is None else [b for b in fp.boxes if to_host or b.written]
        if not boxes:
            out.append(f"{pre}_resident_{way}((const void *){name});")
            continue
        rank = len(boxes[0].low)
        element = f"{name}{'[0]' * rank}"
        pitch = f"(long long)sizeof({name}[0])" if rank > 1 else "0LL"
        out.append(f"{pre}_span_reset(sizeof({element}) == sizeof({types[name]}), {pitch});")
        for low, high in dict.fromkeys((b.low, b.high) for b in boxes):
            rows = f"{low[0]}, {high[0]}" if rank > 1 else "0LL, 0LL"
            first = 1 if rank > 1 else 0
            out.append(f"{pre}_span_add({rows}, {_offset(name, low, first)}, "
                       f"{_offset(name, high, first)} + (long long)sizeof({element}));")
        out.append(f"{pre}_resident_{way}_span((const void *){name});")
    return "\n".join(out)


def _bytes(a: ResidentArray) -> str:
    counts = [f"(size_t)({c})" for c in a.counts]
    total = counts[0]
    for c in counts[1:]:
        total = f"MDP_MAX({total}, {c})"
    return f"{total} * sizeof({a.host_type})"


def _address(a: ResidentArray) -> str:
    """Where ``a``'s bytes start: the array (a pointer), or the scalar's address (of the
    expression the calls pass, a struct member's ``&(acc.re)``)."""
    if a.scalar and a.value:
        return f"(&({a.value}))"
    return f"(&{a.name})" if a.scalar else a.name


def _disjoint(a: str, a_bytes: str, b: str, b_bytes: str) -> str:
    return (f"((const char *){a} + {a_bytes} <= (const char *){b} || "
            f"(const char *){b} + {b_bytes} <= (const char *){a})")


def region_c(region: DataRegion, api: str, number: int, loop: str, fallback: str) -> str:
    """The C of ``region`` (the ``number``-th of the file's nest): ``loop`` runs with the arrays
    resident when every check holds and the arrays do not overlap, else ``fallback``."""
    pre = _PREFIX[api]
    ok = f"mdp_res{number}_ok"
    sizes = {a.name: f"mdp_res{number}_{a.name}" for a in (*region.arrays, *region.others)}
    lines = ["{"]   # declarations first (C89)
    for a in (*region.arrays, *region.others):
        lines.append(f"  const size_t {sizes[a.name]} = {_bytes(a)};")
    lines.append(f"  int {ok} = 1;")
    for check in region.checks:
        lines.append("  {")
        lines.append("    int mdp_alias_ok;")
        lines.extend("    " + ln for ln in check.splitlines())
        lines.append(f"    {ok} = {ok} && mdp_alias_ok;")
        lines.append("  }")
    pairs = [(x, y) for k, x in enumerate(region.arrays) for y in region.arrays[k + 1:]]
    pairs += [(x, y) for x in region.arrays for y in region.others]
    pairs += [(x, y) for k, x in enumerate(region.others) for y in region.others[k + 1:]]
    for x, y in pairs:
        lines.append(f"  {ok} = {ok} && {_disjoint(_address(x), sizes[x.name], _address(y), sizes[y.name])};")
    lines.append(f"  if ({ok}) {{")
    for a in region.arrays:
        lines.append(f'    {pre}_resident_enter_named("{a.name}", (const void *){a.name}, {sizes[a.name]}, '
                     f"{int(a.upload)}, {int(a.download)});")
    lines.extend("    " + ln if ln.strip() and not ln.startswith("#") else ln for ln in loop.splitlines())
    lines.append(f"    {pre}_resident_exit();")
    lines.append("  } else {")
    lines.extend("    " + ln if ln.strip() and not ln.startswith("#") else ln for ln in fallback.splitlines())
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines)
