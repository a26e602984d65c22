"""Device residency IR: host arrays that stay on the GPU over a sequential host loop.

A GPU computation inside a host loop (``for t: { B = f(A); A = g(B); }``) would copy its inputs
to the device and its outputs back on every call. A ``DataRegion`` says instead that each of its
``arrays`` is copied to one device buffer once before the loop (``upload``), used by every
computation inside through that buffer (the generated functions find it by the host address
they are given), and copied back once after the loop (``download``: only what is written inside).

* ``DeviceUse``: what one generated GPU computation tells the planner about one of its global
  buffers (produced by the OpenCL/CUDA backends, ``GeneratedCode.device_data``);
* ``DeviceData``: all of a computation's uses plus its run-time check text;
* ``ResidentArray``/``DataRegion``: the plan (``mdpoly.backends.residency``), rendered by the host writers
  (``mdpoly.backends.resident``) without further decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdpoly.diagnostics import SourceLoc


@dataclass(frozen=True, slots=True)
class DeviceUse:
    """One global buffer of a GPU computation: the host array ``name`` (element type
    ``host_type``), ``count`` elements from its start (C text over names of the call site),
    whether the computation reads it or needs its old contents (``reads``) and writes it;
    ``direct``: the call passes the array itself (not an address, a computed value or a view),
    so that the region can name it at the call site."""

    name: str
    host_type: str
    count: str
    reads: bool
    written: bool
    direct: bool
    #: the call passes the address of the scalar ``name`` (a reduction's result, ``&sum``)
    scalar: bool = False
    #: what the call passes the address of where that is not ``name`` (a struct member the
    #: model names ``mdp_m_acc_re``: ``acc.re``); ``""``: ``name`` itself
    value: str = ""


@dataclass(frozen=True, slots=True)
class DeviceData:
    """What a generated GPU computation uses on the device: its global buffers and the statement
    that sets ``int mdp_alias_ok`` to its run-time checks (``""``: none). ``overlap_only``: the
    checks only ask that parts of its buffers (each within its ``count`` elements from the start)
    do not overlap, so whole buffers that do not overlap pass them whatever the loop changes."""

    uses: tuple[DeviceUse, ...]
    check: str
    overlap_only: bool = False


@dataclass(frozen=True, slots=True)
class ResidentArray:
    """A host array kept on the device over a region: ``counts`` (C text; the region allocates
    the largest), copied in before the loop when ``upload``, back after it when ``download``."""

    name: str
    host_type: str
    counts: tuple[str, ...]
    upload: bool
    download: bool
    #: a scalar variable (its address is what the calls pass): the region's checks use ``&name``
    scalar: bool = False
    #: the scalar's C expression where the calls pass ``&(value)`` (``DeviceUse.value``)
    value: str = ""


@dataclass(frozen=True, slots=True)
class AccessBox:
    """One access of a host statement to a resident array: the lowest and highest value of each
    subscript (C text over names the statement does not change, evaluated at run time), and
    whether the access writes."""

    low: tuple[str, ...]
    high: tuple[str, ...]
    written: bool


@dataclass(frozen=True, slots=True)
class Footprint:
    """The elements of resident array ``name`` that a host statement touches: the flattened
    range from the lowest to the highest element of its ``boxes`` (``mdpoly.backends.footprint``)."""

    name: str
    boxes: tuple[AccessBox, ...]


@dataclass(frozen=True, slots=True)
class HostSync:
    """A statement of the loop (at ``loc``; or a loop of host statements) that uses resident
    arrays on the host: ``download`` are copied back to the host before it, ``upload`` to the
    device after it (those it writes). An array with a ``footprints`` entry moves only the
    range of elements the statement touches (``upload``: of those it writes); others, whole."""

    loc: SourceLoc
    download: tuple[str, ...]
    upload: tuple[str, ...]
    footprints: tuple[Footprint, ...] = ()
    #: the statement's number among the loop's items at ``loc`` (a distributed nest's share one)
    ordinal: int = 0

    def footprint(self, name: str) -> Footprint | None:
        """The footprint of ``name``, or ``None`` (copied whole)."""
        return next((f for f in self.footprints if f.name == name), None)


@dataclass(frozen=True, slots=True)
class DataRegion:
    """A host loop (``loc``, iterator ``iterator``) whose computations share the device copies
    of ``arrays``. ``checks``: the computations' run-time check statements that the loop cannot
    change (each sets ``int mdp_alias_ok``; one per arrangement of swapped pointers), evaluated
    once before the loop; ``others``: the computations' arrays that are not resident. Before the
    loop the arrays and ``others`` are also checked not to overlap, whole, which implies every
    check that only asks for parts of them not to overlap (those are not in ``checks`` when the
    loop changes what they read). When a test fails, the loop runs as before, with per-call
    copies (and each computation's own fallback)."""

    loc: SourceLoc
    iterator: str
    arrays: tuple[ResidentArray, ...]
    checks: tuple[str, ...]
    others: tuple[ResidentArray, ...] = ()
    #: why each of ``others`` is not resident (``"'B' is used on the host inside the loop"``)
    why_not: tuple[str, ...] = ()
    #: the loop's statements that read or write resident arrays on the host, in order
    syncs: tuple[HostSync, ...] = ()

    def note(self) -> str:
        """The report's line for the region."""
        names = ", ".join(a.name for a in self.arrays)
        up = ", ".join(a.name for a in self.arrays if a.upload) or "none"
        down = ", ".join(a.name for a in self.arrays if a.download) or "none"
        rest = "".join(f"; {w}, copied at each call" for w in self.why_not)
        for s in self.syncs:
            back = ", ".join(n if s.footprint(n) is None else f"{n} (the elements it touches)" for n in s.download)
            again = ", ".join(n if s.footprint(n) is None else f"{n} (the elements it writes)" for n in s.upload)
            rest += f"; copied back for the statement at line {s.loc.line}: {back or 'nothing'}"
            rest += f", and in again after it: {again}" if s.upload else ""
        return (f"{names} stay on the device over loop '{self.iterator}' "
                f"(copied in once before it: {up}; copied back once after it: {down}){rest}")
