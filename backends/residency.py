"""Which arrays stay on the GPU over a sequential host loop (``plan_region``), and the schedule's
host code with those loops as data regions (``render_resident``).

For ``--target opencl|cuda``, an outermost host loop of a schedule whose GPU computations share
arrays becomes a ``DataRegion`` (``mdpoly.ir.residency``): each array that only the transformed
computations touch inside the loop is copied to the device once before it and back once after
it (when written inside); the computations' generated functions find the region's device buffer
by the host address and copy nothing (``backends/c/<api>_host.h``).

The loop keeps one consistent path. Its computations' run-time checks (alias checks,
preconditions) are evaluated once before it when nothing in the loop can change what they read
(the same analysis as the OpenMP region's, ``mdpoly.backends.host_schedule._invariant``), together with
checks that the resident arrays overlap neither each other nor the computations' other arrays;
when one fails, the loop runs as written before, with per-call copies and each computation's
own fallback. A host statement of the loop, or a computation kept on the host, that uses
resident arrays only by their elements (``probe += B[t]``, ``A[0] = A[1]``) gets them copied
back before it (those a device computation of the loop writes) and, when it writes them
(pycparser finds its assignments), in again after it (``HostSync``): only the elements it
touches where its subscripts allow (``mdpoly.backends.footprint``), and around a loop of such
statements once, over the loop's range; an array that the host uses otherwise (its address, a
loop header) is not resident: its per-call copies stay. A region is refused when a check reads what the loop changes, when the loop calls a
function or jumps, when an array's size changes inside it, or when a computation's array or
scalar is declared inside it (the checks before the loop cannot name it).
"""

from __future__ import annotations

import re
from dataclasses import replace

from pycparser import c_ast, c_parser

from mdpoly.backends.footprint import footprints
from mdpoly.backends.host_schedule import (
    _CALLED,
    _JUMP,
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
from mdpoly.backends.resident import region_c, sync_c
from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.nest import (
    Computation,
    HostLoop,
    HostStatement,
    PrivateLoop,
    ScheduleItem,
    Wavefront,
    schedule_computations,
)
from mdpoly.ir.residency import DataRegion, DeviceData, HostSync, ResidentArray


def _items(loop: HostLoop) -> list[ScheduleItem]:
    out: list[ScheduleItem] = []
    for it in loop.body:
        out.append(it)
        if isinstance(it, HostLoop):
            out += _items(it)
    return out


#: ``x = y;`` between two plain names (a pointer copy: one step of a swap)
_COPY = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*([A-Za-z_]\w*)\s*")


def _copies(st: HostStatement) -> list[tuple[str, str]] | None:
    """The ``(target, source)`` pairs of a statement made only of pointer copies, else ``None``."""
    parts = [p for p in st.text.split(";") if p.strip()]
    if st.declares or not st.text.rstrip().endswith(";") or not parts:
        return None
    pairs = [_COPY.fullmatch(p) for p in parts]
    return [(m.group(1), m.group(2)) for m in pairs if m] if all(pairs) else None


class _Swaps:
    """Pointers the loop swaps (``tmp = A; A = B; B = tmp;``) among arrays its computations use.

    ``names``: every name the copies touch; ``used``: those the computations use; ``statements``:
    the copy statements (by ``id``); ``views``: for each computation (by ``id``), every mapping of
    its names to the arrays they hold at some step (each name's value is one of ``used``'s
    values on entry, so the same device buffers serve every step: the swaps swap them)."""

    def __init__(self, loop: HostLoop, device_uses: dict[int, set[str]]) -> None:
        self.names: set[str] = set()
        self.used: set[str] = set()
        self.statements: set[int] = set()
        self.views: dict[int, list[dict[str, str]]] = {}
        steps: list[tuple[int, list[tuple[str, str]]]] = []
        for it in loop.body:
            pairs = _copies(it) if isinstance(it, HostStatement) else None
            if pairs is not None:
                steps.append((id(it), pairs))
                self.names |= {n for p in pairs for n in p}
            elif isinstance(it, Computation) and id(it) in device_uses:
                steps.append((id(it), []))
            elif isinstance(it, HostLoop):
                return   # copies in inner loops: not followed
        self.used = {n for uses in device_uses.values() for n in uses} & self.names
        if not self.used:
            return
        env = {n: n for n in self.names}
        at: dict[int, dict[str, str]] = {}
        for sid, pairs in steps:
            if not pairs:
                at[sid] = {n: env[n] for n in device_uses[sid] & self.names}
                if any(v not in self.used for v in at[sid].values()):
                    return self._clear()
                continue
            self.statements.add(sid)
            for dst, src in pairs:
                env[dst] = env[src]
        perm = {n: env[n] for n in self.used}
        if set(perm.values()) != self.used:
            return self._clear()
        power = {n: n for n in self.used}   # the permutation after t steps, t = 0, 1, ...
        while True:
            for sid, view in at.items():
                mapped = {n: power[v] for n, v in view.items()}
                if mapped not in self.views.setdefault(sid, []):
                    self.views[sid].append(mapped)
            power = {n: perm[power[n]] for n in self.used}
            if all(power[n] == n for n in self.used):
                break

    def _clear(self) -> None:
        self.names, self.used, self.statements, self.views = set(), set(), set(), {}


def _subscripted_only(name: str, text: str) -> bool:
    """Whether every mention of ``name`` in ``text`` is subscripted (``name[...]``): the statement
    touches the array's elements, never its address."""
    return all(re.match(r"\s*\[", text[m.end():]) for m in re.finditer(rf"\b{re.escape(name)}\b", text))


class _Lvalues(c_ast.NodeVisitor):
    """The arrays a statement assigns elements of; ``unknown`` when it assigns through anything
    but a named array or scalar."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.unknown = False

    def _target(self, node: c_ast.Node) -> None:
        while isinstance(node, c_ast.ArrayRef):
            node = node.name
        if isinstance(node, c_ast.ID):
            self.names.add(node.name)
        else:
            self.unknown = True

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        self._target(node.lvalue)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--"):
            self._target(node.expr)
        self.generic_visit(node)


class _Declared(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name:
            self.names.add(node.name)
        self.generic_visit(node)


def _declared(texts: list[str]) -> set[str]:
    """The names the declarations ``texts`` declare; every name in one pycparser cannot parse."""
    out: set[str] = set()
    for text in texts:
        try:
            ast = c_parser.CParser().parse("void mdp_f(void) {\n" + text + "\n}")
        except Exception:   # noqa: BLE001 - a typedef name or a construct pycparser lacks: any name may be one
            out.update(_NAME.findall(text))
            continue
        v = _Declared()
        v.visit(ast)
        out |= v.names - {"mdp_f"}
    return out


def _host_writes(text: str) -> set[str] | None:
    """The names a statement assigns (elements of), or ``None`` when that is not known."""
    try:
        ast = c_parser.CParser().parse("void mdp_f(void) {\n" + text + "\n}")
    except Exception:   # noqa: BLE001 - a typedef name or a construct pycparser lacks: unknown
        return None
    v = _Lvalues()
    v.visit(ast)
    return None if v.unknown else v.names


def _renamed(text: str, mapping: dict[str, str]) -> str:
    if not mapping:
        return text
    return re.sub(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b", lambda m: mapping[m.group(1)], text)


def plan_region(loop: HostLoop, calls: dict[int, str], data: dict[int, DeviceData]) -> DataRegion | str:
    """The data region of host loop ``loop``, or why there is none (``calls``: the transformed
    computations' call text, ``data``: their ``DeviceData``; both by ``id``)."""
    comps = schedule_computations(loop.body)
    # parallel loops run as kernels of their own (``mdpoly.backends.device_schedule``) take part as computations do
    device_loops = [p for p in _items(loop) if isinstance(p, PrivateLoop) and id(p) in calls and id(p) in data]
    # so do wavefronts launched per wavefront (``mdpoly.backends.device_wavefront``)
    device_waves = [w for w in _items(loop) if isinstance(w, Wavefront) and id(w) in calls and id(w) in data]
    device_statements = [s for s in _statements(loop) if id(s) in calls and id(s) in data]
    on_device: list[Computation | PrivateLoop | HostStatement | Wavefront] = [
        c for c in comps if id(c) in calls and id(c) in data]
    on_device += device_statements
    on_device += device_loops
    on_device += device_waves
    if not on_device:
        return "no computation inside it runs on the device"
    texts = _texts(loop)
    if any(n not in _NOT_CALLS and n not in _PURE for t in texts for n in _CALLED.findall(t)):
        return "the loop calls a function, which may read or write the arrays on the host"
    if any(_JUMP.search(s.text) for s in _statements(loop)):
        return "a statement in the loop jumps (return, goto, break...), which could skip the copies back"
    on_ids = {id(c) for c in on_device}
    swaps = _Swaps(loop, {id(c): {u.name for u in data[id(c)].uses if u.direct} for c in on_device})
    written = (_assigned(texts) | {h.iterator for h in _host_loops(loop)}
               | {lp.iterator for c in comps for lp in c.nest.loops}
               | {n for p in device_loops for n in (*p.iterators, *p.private)}
               | {n for w in device_waves for n in (*w.iterators, *w.private)}) - swaps.used
    if swaps.used and swaps.names & _assigned([s.text for s in _statements(loop) if id(s) not in swaps.statements]):
        return "a pointer the loop swaps is also assigned elsewhere in it"
    # what runs on the host inside the loop: every name it mentions stays on the host
    host_texts = [h.header for h in _host_loops(loop)]
    host_texts += [c.nest.reference_c for c in comps if id(c) not in on_ids and id(c) in calls]
    host_texts += [it.original for it in _items(loop) if isinstance(it, PrivateLoop | Wavefront) and id(it) not in calls]
    on_host = {n for t in host_texts for n in _NAME.findall(t)}
    # statements and kept computations the device does not run (``mdpoly.backends.device_schedule``
    # puts those it runs in ``calls``): an array they use only by its elements is copied back
    # before them (and in again after them when they write it); any other name they mention
    # stays on the host
    statements = [s for s in _statements(loop) if id(s) not in swaps.statements and id(s) not in calls]
    for text in [s.text for s in statements] + [c.nest.reference_c for c in comps if id(c) not in calls]:
        writes = _host_writes(text)
        for n in _NAME.findall(text):
            if writes is None or n in swaps.used or not _subscripted_only(n, text):
                on_host.add(n)
    checks: list[str] = []
    for c in on_device:
        check = data[id(c)].check
        if check and not _invariant(check, texts, written, False):
            # implied by the region's test that the whole arrays are apart, if they stay the same
            if data[id(c)].overlap_only and not {u.name for u in data[id(c)].uses} & written:
                continue
            return (f"the run-time check of the computation at line {(c.nest.loc if isinstance(c, Computation) else c.loc).line} reads what the loop "
                    "changes, so it cannot be decided once before the loop")
        for view in swaps.views.get(id(c), [{}]) if check else []:   # each step's arrays, when swapped
            if _renamed(check, view) not in checks:
                checks.append(_renamed(check, view))
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
                into[u.name] = ResidentArray(u.name, u.host_type, (u.count,), True, u.written, scalar=u.scalar,
                                             value=u.value)
            elif old.host_type != u.host_type:
                return f"'{u.name}' is used with two element types"
            else:
                counts = old.counts if u.count in old.counts else (*old.counts, u.count)
                into[u.name] = ResidentArray(u.name, u.host_type, counts, True, old.download or u.written,
                                             scalar=old.scalar, value=old.value)
    group = swaps.used & set(arrays)   # swapped pointers: one size, written back together
    if swaps.used and (group != swaps.used or len({arrays[n].host_type for n in group}) != 1):
        return "the pointers the loop swaps are not all arrays of one type that stay on the device"
    counts = tuple(dict.fromkeys(c for n in sorted(group) for c in arrays[n].counts))
    for n in group:
        arrays[n] = ResidentArray(n, arrays[n].host_type, counts, True, any(arrays[m].download for m in group))
    for name in set(arrays) & set(kept):
        kept.pop(name)
        arrays.pop(name)
        why_not.append(f"'{name}' is passed in a form the region cannot name")
    # the region's checks and copies run before the loop, where a variable declared in its body
    # (a scalar the computation writes through its address, a local array) does not exist
    declared = _declared([s.text for s in _statements(loop) if s.declares])
    # (a struct member the calls pass as '&(acc.re)' by the name of its struct)
    named = {n: set(_NAME.findall(a.value)) if a.value else {n} for n, a in (*arrays.items(), *kept.items())}
    inside = sorted(m for ns in named.values() for m in ns if m in declared)
    if inside:
        return f"'{inside[0]}' is declared inside the loop, so the copies and checks before it cannot name it"
    # every resident array is copied in, even one the computations only write: the parts they do
    # not write (or all of it, when the loop runs no step) must come back unchanged
    final = tuple(arrays.values())
    if not final:
        return "no array stays on the device: " + "; ".join(dict.fromkeys(why_not))
    others = tuple(a for a in kept.values() if all(not (set(_NAME.findall(c)) & written) for c in a.counts))
    if len(others) != len(kept):
        return "an array that is not resident changes its size inside the loop"
    syncs = _plan_syncs(loop.body, final, swaps.statements, calls, _ordinals(loop.body))
    return DataRegion(loop.loc, loop.iterator, final, tuple(checks), others, tuple(dict.fromkeys(why_not)),
                      tuple(syncs))


def _loc(it: ScheduleItem) -> SourceLoc | None:
    if isinstance(it, HostStatement | HostLoop):
        return it.loc
    return it.nest.loc if isinstance(it, Computation) else None


def _ordinals(items: tuple[ScheduleItem, ...]) -> dict[int, int]:
    """Each item's (by ``id``) number among the items at its location before it, in the order
    of the source (a distributed nest's computations share one location)."""
    seen: dict[SourceLoc, int] = {}
    out: dict[int, int] = {}

    def walk(its: tuple[ScheduleItem, ...]) -> None:
        for it in its:
            loc = _loc(it)
            if loc is not None:
                out[id(it)] = seen.get(loc, 0)
                seen[loc] = out[id(it)] + 1
            if isinstance(it, HostLoop):
                walk(it.body)

    walk(items)
    return out


def _host_run(it: ScheduleItem, skip: set[int], calls: dict[int, str]) -> bool:
    """Whether ``it`` runs as written on the host: a statement (none of ``skip``, none the device
    runs: those have a call), a computation without a call (kept), or a loop of those only."""
    if isinstance(it, HostLoop):
        return all(_host_run(x, skip, calls) for x in it.body)
    if isinstance(it, Computation):
        return id(it) not in calls
    return isinstance(it, HostStatement) and id(it) not in skip and id(it) not in calls


def _plan_syncs(items: tuple[ScheduleItem, ...], arrays: tuple[ResidentArray, ...], skip: set[int],
                calls: dict[int, str], ordinals: dict[int, int]) -> list[HostSync]:
    """The copies around each host statement and kept computation of ``items`` (and around each
    loop of them only: one copy over the loop's range rather than one per iteration) that uses
    ``arrays``: back before it those a computation of the loop writes (the host's copy of the
    others is current), in again after it those it writes; each only over its footprint where
    that is known (``mdpoly.backends.footprint``). ``skip``: the pointer swaps, which need none."""
    out: list[HostSync] = []
    for it in items:
        if isinstance(it, HostLoop) and not _host_run(it, skip, calls):
            out += _plan_syncs(it.body, arrays, skip, calls, ordinals)
            continue
        loc = _loc(it)
        if loc is None or not _host_run(it, skip, calls):
            continue
        text = (it.text if isinstance(it, HostStatement) else it.nest.reference_c if isinstance(it, Computation)
                else render_schedule((it,), {}))
        writes = _host_writes(text)
        if writes is None and isinstance(it, HostLoop):   # the statements one by one
            out += _plan_syncs(it.body, arrays, skip, calls, ordinals)
            continue
        used = tuple(a for a in arrays if re.search(rf"\b{re.escape(a.name)}\b", text))
        down = tuple(a.name for a in used if a.download)
        up = tuple(a.name for a in used if a.name in (writes or ()))
        if not down and not up:
            continue
        prints = footprints(text, tuple(a.name for a in used))
        out.append(HostSync(loc, down, up, tuple(prints[n] for n in dict.fromkeys((*down, *up)) if n in prints),
                            ordinals.get(id(it), 0)))
    return out


def _with_syncs(items: tuple[ScheduleItem, ...], region: DataRegion, api: str,
                ordinals: dict[int, int]) -> tuple[ScheduleItem, ...]:
    """``items`` with the region's copies around the statements, kept computations (and loops
    of those) that use resident arrays."""
    at = {(s.loc, s.ordinal): s for s in region.syncs}
    types = {a.name: a.host_type for a in region.arrays}
    out: list[ScheduleItem] = []
    for it in items:
        loc = _loc(it)
        sync = at.get((loc, ordinals.get(id(it), 0))) if loc is not None else None
        if isinstance(it, HostLoop) and sync is None:
            out.append(replace(it, body=_with_syncs(it.body, region, api, ordinals)))
            continue
        if sync is None or loc is None:
            out.append(it)
            continue
        if sync.download:
            out.append(HostStatement(sync_c(api, sync, types, to_host=True), loc))
        out.append(it)
        if sync.upload:
            out.append(HostStatement(sync_c(api, sync, types, to_host=False), loc))
    return tuple(out)


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
        synced = loop
        if region.syncs:
            inner = render_schedule((replace(it, body=_with_syncs(it.body, region, api, _ordinals(it.body))),), calls)
            synced = "\n".join(ln[2:] if ln.startswith("  ") else ln for ln in inner.splitlines()[1:-1])
        lines.extend("  " + ln if ln.strip() and not ln.startswith("#") else ln
                     for ln in region_c(region, api, len(notes), synced, loop).splitlines())
    lines.append("}")
    return "\n".join(lines), tuple(notes)
