"""A wavefront on a GPU: ``Wavefront`` -> ``WaveCode`` (kernels, host loop, call) | reason.

The OpenMP form (``mdpoly.backends.wavefront_code``) shares the iterations of each loop marked
``WAVEFRONT_TILES`` in ``Wavefront.waves`` (isl's loops over wavefronts, tiles and points) among
a team. Here each such loop becomes a kernel launched once per wavefront, one device thread per
iteration of it: per tile of a tiled wavefront (the thread runs the tile's points in the original
order: the point loops isl generated, the band's body as written at each point), per point of a
hyperplane (or per row of points in a deeper band). Where the front end found the tiles' own
wavefronts (``Wavefront.in_tile``) and the caller's cost model prefers it, a tiled wavefront's
loop over tiles comes from ``TileWave.waves`` instead: a *work-group* per tile, whose threads
share the points of each of the tile's inner wavefronts and wait at the group's barrier between
them (``translate(..., group=True)``; the kernel spells the thread's index, the group's size and
the barrier per API, ``mdpoly.backends.device_item``). The loops around it -- over wavefronts, and
whatever isl put between -- stay on the host; the tile loop's bounds, which depend on their
counters (``mdp_w``) and on the size parameters, are computed by the kernel's host function from
its arguments. ``mdpoly.backends.device_body`` translates the tile loop (so the same refusals hold:
calls of other functions, pointers, arrays without declared sizes...), and
``mdpoly.backends.device_item`` renders each kernel for the API.

The call runs under the wavefront's run-time checks and preconditions (the nest as written runs
when one fails, as in the OpenMP form); standing on its own (``own_region``), its arrays stay on
the device over the loop over wavefronts (one ``DataRegion``, ``mdpoly.backends.resident``:
copied in once before it, back once after it when written, checked not to overlap -- else the
nest as written runs); inside a host loop they are the host loop's region's to keep (the
``device_data``), or copied at each launch where it has none. Afterwards the host runs the band's
headers around nothing (``Wavefront.exits``), as the OpenMP form does. Nothing here decides
whether it pays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mdpoly.backends.device_body import DeviceArray, DeviceBody, Refused, translate
from mdpoly.backends.device_item import render_item
from mdpoly.backends.resident import region_c
from mdpoly.backends.wavefront_code import wavefront_guarded
from mdpoly.ir.nest import WAVEFRONT_TILES, Wavefront
from mdpoly.ir.residency import DataRegion, DeviceData, DeviceUse, ResidentArray
from mdpoly.ir.scop import Variable

#: a loop counter of isl's host loops (``for (long mdp_w = ...``, a degenerate ``long mdp_t0 = ...;``)
_COUNTER = re.compile(r"\blong (mdp_\w+) = ")
_TILE_HEADER = re.compile(r"(\s*)for \(long (mdp_\w+) = ")
_CALL = "MDP_WAVEFRONT_LAUNCH_{}"


@dataclass(frozen=True, slots=True)
class WaveCode:
    """The GPU form of a wavefront: ``definition`` (the kernels' sources and host functions),
    ``call`` (the statement replacing the band), ``preamble`` (the API's runtime), its arrays for
    a host loop's region (``device_data``), and the number of kernels (``kernels``: one per loop
    over the parallel items of one wavefront that isl generated, usually one)."""

    definition: str
    call: str
    preamble: str
    device_data: DeviceData
    kernels: int


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + ln if ln.strip() and not ln.startswith("#") else ln for ln in text.splitlines())


def split_waves(waves: str) -> tuple[str, list[tuple[str, str, tuple[str, ...]]]]:
    """``waves`` with each loop over the parallel items of one wavefront replaced by a placeholder
    line (``MDP_WAVEFRONT_LAUNCH_<k>``), and those loops: ``(text, iterator, the counters of the
    host loops around it)``.

    :raises Refused: a marker not followed by a loop of isl's form.
    """
    lines = waves.splitlines()
    host: list[str] = []
    loops: list[tuple[str, str, tuple[str, ...]]] = []
    counters: list[str] = []
    k = 0
    while k < len(lines):
        ln = lines[k]
        if ln != WAVEFRONT_TILES:
            host.append(ln)
            counters += [c for c in _COUNTER.findall(ln) if c not in counters]
            k += 1
            continue
        m = _TILE_HEADER.match(lines[k + 1]) if k + 1 < len(lines) else None
        if m is None:
            raise Refused("the loop over the tiles of a wavefront is not of the form isl generates")
        pad = m.group(1)
        end = next((q for q in range(k + 2, len(lines)) if lines[q] == pad + "}"), None)
        if end is None:
            raise Refused("the loop over the tiles of a wavefront has no end the device translation finds")
        body = [ln[len(pad):] if ln.startswith(pad) else ln for ln in lines[k + 1:end + 1]]
        host.append(pad + _CALL.format(len(loops)))
        loops.append(("\n".join(body), m.group(2), tuple(counters)))
        k = end + 1
    if not loops:
        raise Refused("the wavefront has no loop over its tiles")
    return "\n".join(host), loops


def wavefront_bodies(wave: Wavefront, symbols: tuple[Variable, ...],
                     in_tile: bool = False) -> tuple[str, list[DeviceBody]] | str:
    """The host loops of ``wave`` (placeholders where the kernels run) and the device body of each
    loop over the parallel items of one wavefront (one thread per item; ``in_tile``: a work-group
    per item, its threads sharing each tile's own wavefronts, ``Wavefront.in_tile``), or why it
    cannot run so."""
    tiles = wave.in_tile if in_tile else None
    if in_tile and tiles is None:
        return "no wavefront inside its tiles was found"
    try:
        host, loops = split_waves(tiles.waves if tiles is not None else wave.waves)
        bodies = []
        for text, iterator, counters in loops:
            table = {v.name: v for v in symbols}
            table.update({c: Variable(c, "long", (), "scalar", "long") for c in counters})
            body = translate(text, table, (iterator,), private=wave.private, group=tiles is not None)
            bodies.append(replace(body, group=tiles.threads) if tiles is not None else body)
    except Refused as err:
        return str(err)
    return host, bodies


def wavefront_arrays(bodies: list[DeviceBody]) -> list[DeviceArray]:
    """The arrays the kernels use, each once (read or written by any of them)."""
    out: dict[str, DeviceArray] = {}
    for body in bodies:
        for a in body.arrays:
            old = out.get(a.name)
            out[a.name] = a if old is None else DeviceArray(a.name, a.host_type, a.device_type, a.extents,
                                                            a.read or old.read, a.written or old.written)
    return list(out.values())


def _disjoint(arrays: list[DeviceArray]) -> str:
    """A C condition: no two of the arrays overlap (``"1"`` for fewer than two)."""
    size = {a.name: f"sizeof({a.host_type}{''.join(f'[{e}]' for e in a.extents)})" for a in arrays}
    tests = [f"((const char *){x.name} + {size[x.name]} <= (const char *){y.name} || "
             f"(const char *){y.name} + {size[y.name]} <= (const char *){x.name})"
             for k, x in enumerate(arrays) for y in arrays[k + 1:]]
    return " && ".join(tests) or "1"


def device_wavefront(wave: Wavefront, symbols: tuple[Variable, ...], api: str, name: str,
                     own_region: bool, in_tile: bool = False) -> WaveCode | str:
    """``wave`` as kernels ``name``, ``name_2``... for ``api`` (``opencl``/``cuda``) with its guarded
    call (``own_region``: its arrays stay on the device over its loop over wavefronts; ``in_tile``:
    a work-group per tile, ``Wavefront.in_tile``), or why it stays on the host."""
    if wave.derived and not own_region:   # declared in the band's own block, not in the loop's region
        return (f"its loops use sizes the front end made ({', '.join(v for _, v in wave.derived)}), which a host "
                "loop's data region cannot name")
    split = wavefront_bodies(wave, symbols, in_tile)
    if isinstance(split, str):
        return split
    host, bodies = split
    definitions: list[str] = []
    preamble = ""
    for k, body in enumerate(bodies):
        code = render_item(body, name if k == 0 else f"{name}_{k + 1}", api)
        definitions.append(code.definition)
        preamble = code.preamble
        host = host.replace(_CALL.format(k), code.call)
    arrays = wavefront_arrays(bodies)
    run = host + ("\n" + wave.exits if wave.exits else "")
    if own_region:
        region = DataRegion(wave.loc, "mdp_w", tuple(ResidentArray(a.name, a.host_type, (a.count(),), True, a.written)
                                                      for a in arrays), ())
        text = region_c(region, api, wave.loc.line, host, wave.original.rstrip())
        text = text if not wave.exits else "{\n" + _indent(text) + "\n" + _indent(wave.exits) + "\n}"
    else:   # inside a host loop: its region's buffers, or copies at each launch
        text = f"if ({_disjoint(arrays)}) {{\n{_indent(run)}\n}} else {{\n{_indent(wave.original.rstrip())}\n}}"
        text = "{\n" + _indent(text) + "\n}"
    call = wavefront_guarded(wave, text, wave.original)
    check = f"mdp_alias_ok = {_disjoint(arrays)};"
    if wave.checks or wave.preconditions:   # the statement a host loop's region evaluates once before it
        check = wavefront_guarded(wave, "{\n  " + check + "\n}", "mdp_alias_ok = 0;")
    uses = tuple(DeviceUse(a.name, a.host_type, a.count(), True, a.written, True) for a in arrays)
    data = DeviceData(uses, check, overlap_only=not (wave.checks or wave.preconditions))
    return WaveCode("\n".join(definitions), call, preamble, data, len(bodies))
