"""Which arrays stay on the GPU over a sequential host loop (``plan_region``), and the schedule's
host code with those loops as data regions (``render_resident``).

For ``--target opencl|cuda``, an outermost host loop of a schedule whose GPU computations share
arrays becomes a ``DataRegion`` (``mdpoly.ir.residency``): each array that only the transformed
computations touch inside the loop is copied to the device once before it and back once after
it (when written inside); the computations' generated functions find the region's device buffer
by the host address and copy nothing (``backends/c/<api>_host.h``).

The loop keeps one consistent path. Its computations' run-time checks (alias checks,
preconditions) are evaluated once before it when nothing in the loop can change what they read
(the same analysis as the OpenMP region's, ``mdpoly.host_schedule._invariant``), together with
checks that the resident arrays overlap neither each other nor the computations' other arrays;
when one fails, the loop runs as written before, with per-call copies and each computation's
own fallback. An array that anything else in the loop names (a host statement, a kept
computation) is not resident: its per-call copies stay, so the host sees it at those points. A
region is refused when a check reads what the loop changes, when the loop calls a function or
goes through a pointer the analysis cannot see, or when an array's size changes inside it.
"""

from __future__ import annotations

from mdpoly.backends.resident import region_c
from mdpoly.diagnostics import SourceLoc
from mdpoly.host_schedule import (
    _CALLED,
    _NAME,
    _NOT_CALLS,
    _PURE,
    _assigned,
    _host_loops,
    _invariant,
    _statements,
    _texts,
    render_schedule,
)
from mdpoly.ir.nest import HostLoop, PrivateLoop, ScheduleItem, schedule_computations
from mdpoly.ir.residency import DataRegion, DeviceData, ResidentArray


def _items(loop: HostLoop) -> list[ScheduleItem]:
    out: list[ScheduleItem] = []
    for it in loop.body:
        out.append(it)
        if isinstance(it, HostLoop):
            out += _items(it)
    return out


def plan_region(loop: HostLoop, calls: dict[int, str], data: dict[int, DeviceData]) -> DataRegion | str:
    """The data region of host loop ``loop``, or why there is none (``calls``: the transformed
    computations' call text, ``data``: their ``DeviceData``; both by ``id``)."""
    comps = schedule_computations(loop.body)
    on_device = [c for c in comps if id(c) in calls and id(c) in data]
    if not on_device:
        return "no computation inside it runs on the device"
    texts = _texts(loop)
    if any(n not in _NOT_CALLS and n not in _PURE for t in texts for n in _CALLED.findall(t)):
        return "the loop calls a function, which may read or write the arrays on the host"
    written = (_assigned(texts) | {h.iterator for h in _host_loops(loop)}
               | {lp.iterator for c in comps for lp in c.nest.loops})
    # what runs on the host inside the loop: every name it mentions stays on the host
    host_texts = [h.header for h in _host_loops(loop)] + [s.text for s in _statements(loop)]
    on_ids = {id(c) for c in on_device}
    host_texts += [c.nest.reference_c for c in comps if id(c) not in on_ids]
    host_texts += [it.original for it in _items(loop) if isinstance(it, PrivateLoop)]
    on_host = {n for t in host_texts for n in _NAME.findall(t)}
    checks: list[str] = []
    for c in on_device:
        check = data[id(c)].check
        if check and not _invariant(check, texts, written, False):
            return (f"the run-time check of the computation at line {c.nest.loc.line} reads what the loop "
                    "changes, so it cannot be decided once before the loop")
        if check and check not in checks:
            checks.append(check)
    arrays: dict[str, ResidentArray] = {}
    kept: dict[str, ResidentArray] = {}
    why_not: list[str] = []
    for c in on_device:
        for u in data[id(c)].uses:
            names = set(_NAME.findall(u.count))
            resident = u.direct and u.name not in on_host and u.name not in written and not names & written
            if not resident:
                if u.name in on_host:
                    why_not.append(f"'{u.name}' is used on the host inside the loop")
                elif not u.direct or names & written or u.name in written:
                    why_not.append(f"'{u.name}' is not a fixed array over the loop")
            into = arrays if resident else kept
            old = into.get(u.name)
            if old is None:
                into[u.name] = ResidentArray(u.name, u.host_type, (u.count,), True, u.written)
            elif old.host_type != u.host_type:
                return f"'{u.name}' is used with two element types"
            else:
                counts = old.counts if u.count in old.counts else (*old.counts, u.count)
                into[u.name] = ResidentArray(u.name, u.host_type, counts, True, old.download or u.written)
    for name in set(arrays) & set(kept):
        kept.pop(name)
        arrays.pop(name)
        why_not.append(f"'{name}' is passed in a form the region cannot name")
    # every resident array is copied in, even one the computations only write: the parts they do
    # not write (or all of it, when the loop runs no step) must come back unchanged
    final = tuple(arrays.values())
    if not final:
        return "no array stays on the device: " + "; ".join(dict.fromkeys(why_not))
    others = tuple(a for a in kept.values() if all(not (set(_NAME.findall(c)) & written) for c in a.counts))
    if len(others) != len(kept):
        return "an array that is not resident changes its size inside the loop"
    return DataRegion(loop.loc, loop.iterator, final, tuple(checks), others)


def render_resident(items: tuple[ScheduleItem, ...], calls: dict[int, str], data: dict[int, DeviceData],
                    api: str, refused: str = "") -> tuple[str, tuple[tuple[SourceLoc, str], ...]]:
    """The schedule as one C compound statement with every outermost host loop that allows it a
    data region, and for each such loop its note: which arrays stay on the device, or why none
    do (``refused``: why no loop can have one, e.g. ``--devices``)."""
    lines = ["{"]
    notes: list[tuple[SourceLoc, str]] = []
    for it in items:
        text = render_schedule((it,), calls)
        body = "\n".join(text.splitlines()[1:-1])   # without the braces around the one item
        if not isinstance(it, HostLoop):
            lines.append(body)
            continue
        region = refused or plan_region(it, calls, data)
        if isinstance(region, str):
            notes.append((it.loc, f"no data stays on the device over loop '{it.iterator}': {region}"))
            lines.append(body)
            continue
        notes.append((it.loc, region.note()))
        loop = "\n".join(ln[2:] if ln.startswith("  ") else ln for ln in body.splitlines())
        lines.extend("  " + ln if ln.strip() and not ln.startswith("#") else ln
                     for ln in region_c(region, api, len(notes), loop, loop).splitlines())
    lines.append("}")
    return "\n".join(lines), tuple(notes)
