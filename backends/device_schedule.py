"""Schedule items that are no MDH computation, on a GPU: ``PrivateLoop`` -> ``ItemCode`` | reason.

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

from dataclasses import dataclass, replace
from typing import cast

from pycparser import c_ast

from mdpoly.backends.c_emit import CEmitter, Dialect
from mdpoly.backends.device_body import DeviceBody, Refused, translate
from mdpoly.backends.device_item import ItemCode, render_item
from mdpoly.backends.residency import plan_region
from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.nest import ORIGINAL_NEST, HostLoop, HostStatement, NestAnalysis, PrivateLoop, schedule_items_of
from mdpoly.ir.residency import DeviceData
from mdpoly.ir.scop import Variable


def _disjoint(body: DeviceBody) -> str:
    """A C condition: no two arrays the item copies whole overlap (``"1"`` for fewer than two)."""
    size = {a.name: f"{a.count()} * sizeof({a.host_type})" for a in body.arrays}
    tests = [f"((const char *){x.name} + {size[x.name]} <= (const char *){y.name} || "
             f"(const char *){y.name} + {size[y.name]} <= (const char *){x.name})"
             for k, x in enumerate(body.arrays) for y in body.arrays[k + 1:]]
    return " && ".join(tests) or "1"


def private_loop_body(loop: PrivateLoop, symbols: tuple[Variable, ...]) -> DeviceBody | str:
    """``loop``'s body for one device thread per band iteration, or why it cannot run so."""
    if loop.lastprivate:
        return (f"the iterator '{loop.lastprivate[0]}' of an inner loop is read after the loop, and only the "
                "sequentially last iteration's value may come back")
    if loop.blocked:
        return "the loop is blocked inside its inner loops"
    table = {v.name: v for v in symbols}
    try:
        return translate(loop.text, table, loop.iterators, tuple(c.decl for c in loop.copies), loop.private,
                         "\n".join(c.copy_out for c in loop.copies), frozenset(c.name for c in loop.copies))
    except Refused as err:
        return str(err)


def device_private_loop(loop: PrivateLoop, symbols: tuple[Variable, ...], api: str, name: str) -> ItemCode | str:
    """``loop`` as a kernel ``name`` for ``api`` (``opencl``/``cuda``) with its guarded call, or
    why it stays on the host."""
    body = private_loop_body(loop, symbols)
    if isinstance(body, str):
        return body
    code = render_item(body, name, api)
    run = code.call + ("\n" + loop.exits if loop.exits else "")
    text = f"if ({_disjoint(body)}) {{\n{_indent(run)}\n}} else {{\n{_indent(loop.original.rstrip())}\n}}"
    if loop.checks or loop.preconditions:
        marker = "mdp_device_item_body"
        emitter = CEmitter(cast(Dialect, None), wide=loop.params)
        guarded = emitter.guarded(loop.checks, c_ast.ID(marker), loop.preconditions)
        guarded = guarded.replace(ORIGINAL_NEST.rstrip(";") + ";", loop.original.rstrip())
        text = guarded.replace(marker + ";", "{\n" + _indent(text) + "\n}")
    check = f"mdp_alias_ok = {_disjoint(body)};"
    if loop.checks or loop.preconditions:   # the statement a data region evaluates once before its loop
        emitter = CEmitter(cast(Dialect, None), wide=loop.params)
        marker = "mdp_device_item_ok"
        guarded = emitter.guarded(loop.checks, c_ast.ID(marker), loop.preconditions)
        check = guarded.replace(marker + ";", check).replace(ORIGINAL_NEST, "mdp_alias_ok = 0;")
    data = replace(code.device_data, check=check, overlap_only=not (loop.checks or loop.preconditions))
    return ItemCode(code.definition, "{\n" + _indent(text) + "\n}", code.preamble, data)


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


def device_schedule_items(nest: NestAnalysis, api: str, used_names: set[str]) -> DeviceItems:
    """Every ``PrivateLoop`` of ``nest``'s schedule as a kernel for ``api`` (``opencl``/``cuda``;
    any other: none), named afresh (``used_names`` grows), or why it stays on the host."""
    codes: dict[int, ItemCode] = {}
    notes: list[tuple[SourceLoc, str]] = []
    refusals: list[tuple[SourceLoc, str]] = []
    if api not in ("opencl", "cuda") or nest.schedule is None:
        return DeviceItems(codes, (), ())
    for loop in schedule_items_of(nest.schedule, PrivateLoop):
        name, k = f"mdpoly_{nest.function}_{loop.loc.line}_dev", 1
        while name in used_names:
            k += 1
            name = f"mdpoly_{nest.function}_{loop.loc.line}_dev{k}"
        code = device_private_loop(loop, nest.symbols, api, name)
        if isinstance(code, str):
            refusals.append((loop.loc, code))
            continue
        used_names.add(name)
        codes[id(loop)] = code
        band = ",".join(loop.iterators)
        notes.append((loop.loc, f"the parallel loop at line {loop.loc.line} runs on the device, one thread per "
                                f"iteration of '{band}' (its body as written)"))
    return DeviceItems(codes, tuple(notes), tuple(refusals))


def statement_body(st: HostStatement, symbols: tuple[Variable, ...]) -> DeviceBody | str:
    """Host statement ``st`` for one device thread, or why it cannot run so (it declares a
    name, writes a scalar the host reads later, calls a function...)."""
    if st.declares:
        return "it declares a name the host code uses"
    try:
        return translate(st.text, {v.name: v for v in symbols})
    except Refused as err:
        return str(err)


def device_statements(nest: NestAnalysis, api: str, calls: dict[int, str], data: dict[int, DeviceData],
                      used_names: set[str]) -> DeviceItems:
    """The host statements of ``nest``'s outermost host loops that get their resident arrays
    copied back and in around them (``HostSync``), as one-thread kernels on the region's
    buffers instead: each only where it translates exactly (``statement_body``) and every array
    it uses stays on the device over the loop. ``calls`` and ``data`` (the device work planned
    so far, by ``id``) are not changed; the result's codes are to be added to them."""
    codes: dict[int, ItemCode] = {}
    notes: list[tuple[SourceLoc, str]] = []
    refusals: list[tuple[SourceLoc, str]] = []
    if api not in ("opencl", "cuda") or nest.schedule is None:
        return DeviceItems(codes, (), ())
    for loop in nest.schedule:
        if not isinstance(loop, HostLoop):
            continue
        region = plan_region(loop, calls, data)
        if isinstance(region, str) or not region.syncs:
            continue
        synced = {s.loc for s in region.syncs}
        resident = {a.name for a in region.arrays}
        mine: dict[int, ItemCode] = {}
        for st in schedule_items_of(loop.body, HostStatement):
            if st.loc not in synced:
                continue
            body = statement_body(st, nest.symbols)
            if isinstance(body, str):
                refusals.append((st.loc, body))
                continue
            if any(a.name not in resident for a in body.arrays):
                refusals.append((st.loc, "it uses an array that does not stay on the device"))
                continue
            name, k = f"mdpoly_{nest.function}_{st.loc.line}_stmt", 1
            while name in used_names:
                k += 1
                name = f"mdpoly_{nest.function}_{st.loc.line}_stmt{k}"
            used_names.add(name)
            code = render_item(body, name, api)
            guarded = (f"if ({_disjoint(body)}) {{\n{_indent(code.call)}\n}} else {{\n{_indent(st.text.rstrip())}\n}}"
                       if len(body.arrays) > 1 else code.call)
            check = f"mdp_alias_ok = {_disjoint(body)};"
            mine[id(st)] = ItemCode(code.definition, guarded, code.preamble, replace(code.device_data, check=check))
            notes.append((st.loc, f"the statement at line {st.loc.line} runs on the device (one thread) "
                                  "on the resident arrays"))
        if not mine:
            continue
        # the region again, with those statements as device work: it must keep every array they use
        again = plan_region(loop, {**calls, **{k: c.call for k, c in mine.items()}},
                            {**data, **{k: c.device_data for k, c in mine.items()}})
        kept = set() if isinstance(again, str) else {a.name for a in again.arrays}
        if all({a.name for a in c.device_data.uses} <= kept for c in mine.values()):
            codes.update(mine)
        else:
            notes = [n for n in notes if n[0] not in {st.loc for st in schedule_items_of(loop.body, HostStatement)}]
    return DeviceItems(codes, tuple(notes), tuple(refusals))
