"""Schedule items that are no MDH computation, on a GPU: ``PrivateLoop``, ``Wavefront`` -> ``ItemCode`` | reason.

A ``Wavefront`` becomes a launch per wavefront (``mdpoly.backends.device_wavefront``).
``device_private_loop`` gives a ``PrivateLoop`` (a parallel band around a body run as written)
one device thread per iteration of its band (``mdpoly.backends.device_body`` translates the
body, ``mdpoly.backends.device_item`` renders it). The call runs under the loop's run-time
checks and preconditions and a check that the arrays it copies whole do not overlap; when one
fails, the nest as written runs. Each thread's private copies of temporaries are thread locals;
the thread of the sequentially last iteration writes them back (scalars through one-element
buffers), as OpenMP's ``lastprivate`` does; the band's iterators are then left at their exit
values on the host (``PrivateLoop.exits``). A loop whose inner iterators are read after it
(``lastprivate``) is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from pycparser import c_ast

from mdpoly.backends.device_body import DeviceBody, Refused, device_type, translate
from mdpoly.backends.device_item import ItemCode, render_item
from mdpoly.backends.device_wavefront import device_wavefront, wavefront_arrays, wavefront_bodies
from mdpoly.backends.host_schedule import _check_emitter
from mdpoly.backends.residency import plan_region
from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.mdh import Combine
from mdpoly.ir.nest import (
    ORIGINAL_NEST,
    Computation,
    HostLoop,
    HostStatement,
    NestAnalysis,
    PrivateLoop,
    ScheduleItem,
    Wavefront,
    schedule_computations,
    schedule_items_of,
)
from mdpoly.ir.residency import DeviceData
from mdpoly.ir.scop import Variable


def _header_symbols(items: tuple[ScheduleItem, ...]) -> list[Variable]:
    """The iterators that host loops declare in their headers (``for (int k = 0; ...)``), which
    the items inside read: declared inside the nest, so not among its symbols."""
    out: list[Variable] = []
    for it in items:
        if isinstance(it, HostLoop):
            m = re.match(rf"\s*for\s*\(\s*([A-Za-z_][\w\s]*?)\s+{re.escape(it.iterator)}\s*=", it.header)
            if it.declares and m and device_type(m.group(1)) not in (None, "float", "double"):
                out.append(Variable(it.iterator, m.group(1), (), "scalar", m.group(1)))
            out += _header_symbols(it.body)
    return out


def _symbols(nest: NestAnalysis) -> tuple[Variable, ...]:
    """``nest``'s symbols with the iterators its host loops declare."""
    return (*nest.symbols, *_header_symbols(nest.schedule or ()))


def _disjoint(body: DeviceBody) -> str:
    """A C condition: no two arrays the item copies whole overlap (``"1"`` for fewer than two)."""
    # ``sizeof`` of the array type: no multiplication, which a region would read as a dereference
    size = {a.name: f"sizeof({a.host_type}{''.join(f'[{e}]' for e in a.extents)})" for a in body.arrays}
    tests = [f"((const char *){x.name} + {size[x.name]} <= (const char *){y.name} || "
             f"(const char *){y.name} + {size[y.name]} <= (const char *){x.name})"
             for k, x in enumerate(body.arrays) for y in body.arrays[k + 1:]]
    return " && ".join(tests) or "1"


def private_loop_body(loop: PrivateLoop, symbols: tuple[Variable, ...]) -> DeviceBody | str:
    """``loop``'s body for one device thread per band iteration, or why it cannot run so."""
    if loop.scattered:
        return (f"it updates {', '.join(repr(r.name) for r in loop.scattered)} at indices read from memory, a "
                "reduction into copies per thread that only the OpenMP target makes")
    if loop.lastprivate:
        return (f"the iterator '{loop.lastprivate[0]}' of an inner loop is read after the loop, and only the "
                "sequentially last iteration's value may come back")
    if loop.blocked and loop.copies:
        return "the loop is blocked inside its inner loops"
    table = {v.name: v for v in symbols}
    for name, extent in loop.extents:   # a flat pointer's extent: as far as the loop reaches
        v = table.get(name)
        if v is not None and len(v.shape) == 1 and not v.shape[0].strip():
            table[name] = replace(v, shape=(extent, *v.shape[1:]))
    try:   # a blocked loop without copies: its text as written (each thread takes one iteration)
        return translate(loop.original if loop.blocked else loop.text, table, loop.iterators, tuple(c.decl for c in loop.copies), loop.private,
                         "\n".join(c.copy_out for c in loop.copies), frozenset(c.name for c in loop.copies))
    except Refused as err:
        return str(err)


def device_private_loop(loop: PrivateLoop, symbols: tuple[Variable, ...], api: str, name: str) -> ItemCode | str:
    """``loop`` as a kernel ``name`` for ``api`` (``opencl``/``cuda``) with its guarded call, or
    why it stays on the host."""
    if loop.inspector:
        return "its gathers through pointers are checked against its writes at run time, on the host only"
    body = private_loop_body(loop, symbols)
    if isinstance(body, str):
        return body
    code = render_item(body, name, api)
    run = code.call + ("\n" + loop.exits if loop.exits else "")
    text = f"if ({_disjoint(body)}) {{\n{_indent(run)}\n}} else {{\n{_indent(loop.original.rstrip())}\n}}"
    if loop.checks or loop.preconditions:
        marker = "mdp_device_item_body"
        emitter = _check_emitter(loop)   # the model's own size parameters as their C values
        guarded = emitter.guarded(loop.checks, c_ast.ID(marker), loop.preconditions)
        guarded = guarded.replace(ORIGINAL_NEST.rstrip(";") + ";", loop.original.rstrip())
        text = guarded.replace(marker + ";", "{\n" + _indent(text) + "\n}")
    check = f"mdp_alias_ok = {_disjoint(body)};"
    if loop.checks or loop.preconditions:   # the statement a data region evaluates once before its loop
        emitter = _check_emitter(loop)
        marker = "mdp_device_item_ok"
        guarded = emitter.guarded(loop.checks, c_ast.ID(marker), loop.preconditions)
        check = guarded.replace(marker + ";", check).replace(ORIGINAL_NEST, "mdp_alias_ok = 0;")
    data = replace(code.device_data, check=check, overlap_only=not (loop.checks or loop.preconditions))
    return ItemCode(code.definition, "{\n" + _indent(text) + "\n}", code.preamble, data)


def device_loop_arrays(nest: NestAnalysis, loop: PrivateLoop) -> tuple[tuple[str, str, bool], ...] | None:
    """The arrays ``loop`` of ``nest``'s schedule uses when it runs on the device (one thread per
    band iteration, ``device_schedule_items``): ``(name, element count as C text, written)``;
    ``None`` when it stays on the host."""
    if loop.inspector:
        return None
    body = private_loop_body(loop, _symbols(nest))
    if isinstance(body, str):
        return None
    return tuple((a.name, " * ".join(f"({e})" for e in a.extents) or "1", a.written) for a in body.arrays)


def device_wavefront_arrays(nest: NestAnalysis, wave: Wavefront) -> tuple[tuple[str, str, bool], ...] | None:
    """The arrays wavefront ``wave`` of ``nest``'s schedule uses when it runs on the device (a
    launch per wavefront, ``device_schedule_items``), as ``device_loop_arrays``; ``None`` when it
    stays on the host."""
    split = wavefront_bodies(wave, _symbols(nest))
    if isinstance(split, str):
        return None
    return tuple((a.name, " * ".join(f"({e})" for e in a.extents) or "1", a.written)
                 for a in wavefront_arrays(split[1]))


def _wave_note(wave: Wavefront, own_region: bool, names: list[str], written: list[str], in_tile: bool = False) -> str:
    """The report's words on a wavefront that runs on the device."""
    what = ("tiled wavefront" if not wave.hyperplane else "wavefront along the hyperplane " + wave.hyperplane)
    tiles = wave.in_tile
    each = ("one work-group per tile, its points along the tile's own wavefronts (" + _inner_words(wave) +
            f", up to {tiles.threads} threads sharing each)" if in_tile and tiles is not None else
            "one thread per tile (its points in the original order)" if not wave.hyperplane else
            "one thread per point of the hyperplane" if len(wave.iterators) < 3 else
            "one thread per row of points of the hyperplane (the row's points in order)")
    count = (f" ({wave.wavefronts} launch{'' if wave.wavefronts == 1 else 'es'})" if wave.wavefronts is not None
             else "")
    where = (f"; {', '.join(names)} {'stays' if len(names) == 1 else 'stay'} on the device over the wavefronts (copied in once before them: "
             f"{', '.join(names)}; copied back once after them: {', '.join(written) or 'none'})" if own_region
             else "; its arrays are those of the host loop's data region, or copied at each launch")
    return f"the {what} at line {wave.loc.line} runs on the device: one launch per wavefront{count}, {each}{where}"


def _inner_words(wave: Wavefront) -> str:
    """The tile's own wavefronts in words, e.g. ``31 of i+j``: their number and hyperplane over the
    tile's skewed coordinates (``Wavefront.skew``)."""
    tiles = wave.in_tile
    assert tiles is not None
    terms = [c for c, k in zip(wave.skew, tiles.coefficients, strict=True) if k]
    return f"{tiles.inner} of {'+'.join(t if t.isidentifier() else f'({t})' for t in terms)}"


def _indent(text: str) -> str:
    return "\n".join("  " + ln if ln.strip() and not ln.startswith("#") else ln for ln in text.splitlines())


@dataclass(frozen=True, slots=True)
class DeviceItems:
    """A schedule's items that run on the device besides its computations: ``codes`` by ``id``,
    ``notes`` (the report's, by location) and ``refusals`` (why the others stay on the host)."""

    codes: dict[int, ItemCode]
    notes: tuple[tuple[SourceLoc, str], ...]
    refusals: tuple[tuple[SourceLoc, str], ...]

    def merged(self, other: DeviceItems) -> DeviceItems:
        """Both sets of items."""
        return DeviceItems({**self.codes, **other.codes}, self.notes + other.notes, self.refusals + other.refusals)

    def statuses(self, private: tuple[tuple[SourceLoc, str], ...]) -> tuple[tuple[SourceLoc, str], ...]:
        """The ``PrivateLoop`` statuses of a rendering with those on the device marked parallel (``""``)."""
        on = {loc for loc, _ in self.notes}
        return tuple((loc, "" if loc in on else why) for loc, why in private)


#: ``pays(work, bytes, in_host_loop)``: ``""`` when a device loop of ``work`` statement instances
#: (``None``: unknown) whose arrays hold ``bytes`` (``None``: unknown) pays on the device, else why not
Pays = Callable[[int | None, int | None, bool], str]


#: ``group(wave)``: whether a wavefront runs a work-group per tile (``Wavefront.in_tile``) rather than a thread
Group = Callable[[Wavefront], bool]


def device_schedule_items(nest: NestAnalysis, api: str, used_names: set[str], pays: Pays | None = None,
                          group: Group | None = None) -> DeviceItems:
    """Every ``PrivateLoop`` and ``Wavefront`` of ``nest``'s schedule as kernels for ``api``
    (``opencl``/``cuda``; any other: none), named afresh (``used_names`` grows), or why it stays
    on the host (among them ``pays``'s reason: the caller's cost model); each wavefront a thread
    per tile, or a work-group per tile where ``group`` (the caller's cost model) says so."""
    codes: dict[int, ItemCode] = {}
    notes: list[tuple[SourceLoc, str]] = []
    refusals: list[tuple[SourceLoc, str]] = []
    if api not in ("opencl", "cuda") or nest.schedule is None:
        return DeviceItems(codes, (), ())
    looped = {id(p) for it in nest.schedule if isinstance(it, HostLoop) for p in schedule_items_of(it.body, PrivateLoop)}
    for loop in schedule_items_of(nest.schedule, PrivateLoop):
        body = private_loop_body(loop, _symbols(nest))
        why = body if isinstance(body, str) else pays(loop.work, body.bytes(), id(loop) in looped) if pays else ""
        if why:
            refusals.append((loop.loc, why))
            continue
        name, k = f"mdpoly_{nest.function}_{loop.loc.line}_dev", 1
        while name in used_names:
            k += 1
            name = f"mdpoly_{nest.function}_{loop.loc.line}_dev{k}"
        code = device_private_loop(loop, _symbols(nest), api, name)
        if isinstance(code, str):
            refusals.append((loop.loc, code))
            continue
        used_names.add(name)
        codes[id(loop)] = code
        band = ",".join(loop.iterators)
        notes.append((loop.loc, f"the parallel loop at line {loop.loc.line} runs on the device, one thread per "
                                f"iteration of '{band}' (its body as written)"))
    top = {id(w) for w in nest.schedule if isinstance(w, Wavefront)}
    for wave in schedule_items_of(nest.schedule, Wavefront):   # the cost model weighs the nest (``mdpoly.hybrid``)
        name = _fresh(f"mdpoly_{nest.function}_{wave.loc.line}_wave", used_names)
        in_tile = group is not None and wave.in_tile is not None and group(wave)
        wcode = device_wavefront(wave, _symbols(nest), api, name, id(wave) in top, in_tile)
        if isinstance(wcode, str) and in_tile:   # the one-thread form may still translate
            in_tile = False
            wcode = device_wavefront(wave, _symbols(nest), api, name, id(wave) in top)
        if isinstance(wcode, str):
            refusals.append((wave.loc, wcode))
            continue
        used_names.update(f"{name}_{k}" for k in range(2, wcode.kernels + 1))
        codes[id(wave)] = ItemCode(wcode.definition, wcode.call, wcode.preamble, wcode.device_data)
        arrays = device_wavefront_arrays(nest, wave) or ()
        notes.append((wave.loc, _wave_note(wave, id(wave) in top, [a[0] for a in arrays], [a[0] for a in arrays if a[2]],
                                           in_tile)))
    return DeviceItems(codes, tuple(notes), tuple(refusals))


def statement_body(st: HostStatement, symbols: tuple[Variable, ...]) -> DeviceBody | str:
    """Host statement ``st`` for one device thread, or why it cannot run so (it declares a
    name, writes a scalar the host reads later, calls a function...)."""
    if st.declares:
        return "it declares a name the host code uses"
    try:
        return translate(st.text, {v.name: v for v in symbols}, own_loops=True)
    except Refused as err:
        return str(err)


def kept_body(comp: Computation, symbols: tuple[Variable, ...]) -> DeviceBody | str:
    """A computation kept as written (too little work, a reduction in a host loop) for the
    device: threads over its outermost loop where the analysis proved that loop parallel (a
    concatenation dimension, no run-time precondition), else one thread."""
    nest, table = comp.nest, {v.name: v for v in symbols}
    mdh = nest.mdh
    if mdh is not None and nest.loops and nest.loops[0].combine == Combine.CONCAT and not mdh.preconditions:
        try:
            return translate(nest.reference_c, table, (nest.loops[0].iterator,), own_loops=True)
        except Refused:
            pass
    try:
        return translate(nest.reference_c, table, own_loops=True)
    except Refused as err:
        return str(err)


def _fresh(base: str, used_names: set[str]) -> str:
    name, k = base, 1
    while name in used_names:
        k += 1
        name = f"{base}{k}"
    used_names.add(name)
    return name


def _host_item(body: DeviceBody, name: str, api: str, text: str) -> ItemCode:
    """A host item's kernel with its call (the item as written when its arrays overlap), then
    the exit values of its loops' iterators."""
    code = render_item(body, name, api)
    run = code.call + ("\n" + body.exits if body.exits else "")
    call = (f"if ({_disjoint(body)}) {{\n{_indent(run)}\n}} else {{\n{_indent(text.rstrip())}\n}}"
            if len(body.arrays) > 1 else "{\n" + _indent(run) + "\n}")
    return ItemCode(code.definition, call, code.preamble,
                    replace(code.device_data, check=f"mdp_alias_ok = {_disjoint(body)};"))


def _loop_items(loop: HostLoop, calls: dict[int, str], nest: NestAnalysis, api: str,
                used_names: set[str], only: set[SourceLoc] | None
                ) -> tuple[dict[int, ItemCode], list[tuple[SourceLoc, str]], list[tuple[SourceLoc, str]]]:
    """The host statements and kept computations of ``loop`` (those at ``only``'s locations,
    when given) as device items, with their notes and the others' refusals."""
    mine: dict[int, ItemCode] = {}
    notes: list[tuple[SourceLoc, str]] = []
    refusals: list[tuple[SourceLoc, str]] = []
    items: list[HostStatement | Computation] = [*schedule_items_of(loop.body, HostStatement),
                                                *(c for c in schedule_computations(loop.body) if id(c) not in calls)]
    for it in items:
        loc = it.loc if isinstance(it, HostStatement) else it.nest.loc
        if only is not None and loc not in only:
            continue
        symbols = _symbols(nest)
        body = statement_body(it, symbols) if isinstance(it, HostStatement) else kept_body(it, symbols)
        if isinstance(body, str):
            refusals.append((loc, body))
            continue
        if not body.arrays:
            continue   # scalars only: nothing to keep on the device
        text = it.text if isinstance(it, HostStatement) else it.nest.reference_c
        name = _fresh(f"mdpoly_{nest.function}_{loc.line}_stmt", used_names)
        mine[id(it)] = _host_item(body, name, api, text)
        what = (f"the statement at line {loc.line} runs on the device (one thread)" if isinstance(it, HostStatement)
                else f"the computation at line {loc.line} kept as written runs on the device ("
                     + (f"one thread per iteration of '{body.threads[0].iterator}'" if body.threads else "one thread")
                     + ")")
        notes.append((loc, what + " on the resident arrays"))
    return mine, notes, refusals


def device_statements(nest: NestAnalysis, api: str, calls: dict[int, str], data: dict[int, DeviceData],
                      used_names: set[str]) -> DeviceItems:
    """The host statements and kept computations of ``nest``'s outermost host loops that would
    use arrays the device work keeps resident, as kernels on the region's buffers (a statement:
    one thread; a kept computation: threads over its parallel outermost loop, else one) instead
    of copies of whole arrays around them: each only where it translates exactly
    (``statement_body``, ``kept_body``) and the region then keeps every array it uses. All of a
    loop's such items are tried first, else only the statements the region copies around.
    ``calls`` and ``data`` (the device work planned so far, by ``id``) are not changed; the
    result's codes are to be added to them."""
    codes: dict[int, ItemCode] = {}
    notes: list[tuple[SourceLoc, str]] = []
    refusals: list[tuple[SourceLoc, str]] = []
    if api not in ("opencl", "cuda") or nest.schedule is None:
        return DeviceItems(codes, (), ())
    for loop in nest.schedule:
        if not isinstance(loop, HostLoop) or not any(
                id(it) in calls and id(it) in data
                for it in (*schedule_computations(loop.body), *schedule_items_of(loop.body, PrivateLoop),
                           *schedule_items_of(loop.body, Wavefront))):
            continue
        base = plan_region(loop, calls, data)
        tries: list[set[SourceLoc] | None] = [None]
        if not isinstance(base, str) and base.syncs:
            tries.append({s.loc for s in base.syncs})
        for only in tries:
            mine, mine_notes, mine_refusals = _loop_items(loop, calls, nest, api, used_names, only)
            if not mine:
                refusals += mine_refusals
                break
            again = plan_region(loop, {**calls, **{k: c.call for k, c in mine.items()}},
                                {**data, **{k: c.device_data for k, c in mine.items()}})
            kept = set() if isinstance(again, str) else {a.name for a in again.arrays}
            if all({u.name for u in c.device_data.uses} <= kept for c in mine.values()):
                codes.update(mine)
                notes += mine_notes
                refusals += mine_refusals
                break
    return DeviceItems(codes, tuple(notes), tuple(refusals))
