"""Per-nest analysis outcome shared by the driver, the splicer and the report.

``NestAnalysis`` is what the front end hands over for every candidate loop nest: where it is in
the original text, what each loop was classified as, and either an ``MdhExpr`` or the reason the
nest is kept as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from mdpoly.diagnostics import Diagnostic, SourceLoc
from mdpoly.ir.mdh import AliasCheck, Combine, MdhExpr, Precondition
from mdpoly.ir.scop import Variable

#: A statement a backend's call text may contain (the fallback branch of a run-time alias
#: check); ``mdpoly.splice`` replaces it by the nest's original text, verbatim.
ORIGINAL_NEST = "MDPOLY_ORIGINAL_NEST;"


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """A range of the original file: from ``start`` to ``end_line:end_column`` inclusive.

    ``first_line`` is where replacement text begins; it is before ``start.line`` when a
    ``#pragma mdh`` line directly precedes the nest and belongs to it.
    """

    start: SourceLoc
    end_line: int
    end_column: int
    first_line: int


@dataclass(frozen=True, slots=True)
class LoopSummary:
    iterator: str
    extent: str
    combine: Combine


@dataclass(frozen=True, slots=True)
class NestAnalysis:
    """One candidate nest. ``mdh`` is None when the nest is kept; then ``kept`` says why.

    ``reference_c`` is the nest as written, printed from its AST after preprocessing (macros
    expanded, so self-contained): the tuner compiles it as the reference of correctness.
    """

    loc: SourceLoc
    span: SourceSpan
    function: str
    function_line: int
    loops: tuple[LoopSummary, ...]
    mdh: MdhExpr | None
    kept: Diagnostic | None = None
    marked: bool = False
    #: a ``#pragma mdh`` asks for this nest: transformed even when it looks too small to pay off
    requested: bool = False
    reference_c: str = ""
    #: why the temporaries of a kept nest could not be made private to its outer loops'
    #: iterations (``mdpoly.frontend.privatize``; ``""`` when not tried or not needed)
    privatization: str = ""
    #: why no band of a kept nest runs as a tiled wavefront (``mdpoly.frontend.wavefront``; ``""``
    #: when not tried or not needed)
    wavefront: str = ""
    #: why the outer loop of a kept nest cannot run in parallel around its inner loops whose bounds
    #: are read from memory (``mdpoly.frontend.data_bounds``; ``""`` when not tried or not needed)
    data_bounds: str = ""
    #: when the nest as a whole is kept: the loops that stay sequential in the host code and the
    #: bands inside them that are MDH computations of their own (``None``: nothing to schedule)
    schedule: tuple[ScheduleItem, ...] | None = None
    #: hand-blocked loops the model runs over their whole ranges (``mdpoly.frontend.untile``): the
    #: block and point loops (``""``: none)
    untiled: str = ""
    #: hand-blocked loops kept blocked: the loops and why un-tiling them would change the result
    #: (``""`` when there are none or they were un-tiled)
    blocked: str = ""
    #: the user's OpenMP directive on the loop (``omp parallel for``) that mdpoly's code replaces
    #: (``--replace-omp``): when the nest is kept after all, it stays, and the nest is already parallel
    openmp: str = ""
    #: the arrays its function's ``#pragma mdh resident(...)`` keeps on the GPU between calls
    keep: tuple[str, ...] = ()
    #: a scheduled nest: the values its host loops' bounds take at every call site (names of the
    #: function's parameters and never-reassigned locals, ``mdpoly.frontend.call_sizes``), for
    #: the cost model's estimate of the host loops' trip counts
    host_sizes: tuple[tuple[str, int], ...] = ()
    #: a scheduled nest: the declarations of the names it mentions that are declared outside it
    #: (``mdpoly.frontend.device_symbols``), for translating its items to device code
    symbols: tuple[Variable, ...] = ()
    #: the values the file pins for the read-only scalars its computation reads (model name ->
    #: C literal, ``mdpoly.frontend.pinned_values``): the generated function gets a copy
    #: specialised to them, run when the call's values match
    pinned: tuple[tuple[str, str], ...] = ()
    #: the read-only floating scalars whose being ``>= 0`` proves every square root of its
    #: computation non-negative (``mdpoly.frontend.sqrt_domains``): the generated function gets a
    #: copy, run when they are, in which the compiler knows it (no errno path: vector square roots)
    nonnegative: tuple[str, ...] = ()


#: The reason code of a nest the user's OpenMP already runs in parallel; its status in the report.
ALREADY_PARALLEL = "already-parallel"


def kept_status(code: str | None) -> str:
    """The report's status of a nest kept for ``code``: ``already-parallel`` or ``kept``."""
    return ALREADY_PARALLEL if code == ALREADY_PARALLEL else "kept"


@dataclass(frozen=True, slots=True)
class HostLoop:
    """A loop of a nest that stays as written in the host code, around ``body``.

    ``header`` is its ``for (...)`` text; ``reason`` says why it is not part of a computation;
    ``declares``: the header declares the iterator (``for (int t = 0; ...)``).
    """

    iterator: str
    header: str
    loc: SourceLoc
    reason: str
    body: tuple[ScheduleItem, ...]
    declares: bool = False


@dataclass(frozen=True, slots=True)
class HostStatement:
    """A statement that stays as written (``text``: its C, macros expanded); ``declares``: it
    is a declaration."""

    text: str
    loc: SourceLoc
    declares: bool = False


@dataclass(frozen=True, slots=True)
class Computation:
    """A band of the nest analysed as a nest of its own: ``nest.mdh`` set, or ``nest.kept``.

    ``nest.reference_c`` is its text as written (what runs when it is kept or a run-time check
    fails); ``distributed`` tells that its outermost loop was split off a loop with more statements.
    """

    nest: NestAnalysis
    distributed: bool = False


@dataclass(frozen=True, slots=True)
class PrivateCopy:
    """A temporary ``name`` given one copy per thread (``private``, declared by ``decl``);
    ``copy_in`` fills the copy from the user's object over the elements the nest writes,
    ``copy_out`` writes them back (the last iteration's values)."""

    name: str
    private: str
    decl: str
    copy_in: str
    copy_out: str


#: A loop with scattered reductions runs in parallel only when its statement instances exceed
#: this many per element of the threads' copies times the team size: each thread zeroes a copy
#: and the team combines them one after the other (``mdpoly.cost_model.guard_private_loops``).
SCATTER_WORK_PER_ELEMENT = 4


@dataclass(frozen=True, slots=True)
class ScatterReduction:
    """An array ``name`` a parallel loop updates at indices read from memory (``h[px[i]]++``,
    ``mdpoly.frontend.scatter``): an OpenMP array reduction with identifier ``op`` over the
    section of ``length`` elements from ``start`` (C expressions over the inspection's results,
    ``mdpoly.frontend.inspector``); ``whole``: a declared array reduced as a whole (``start`` 0,
    ``length`` its element count). Each thread of the team reduces into a copy of its own."""

    name: str
    op: str
    start: str
    length: str
    whole: bool = False


@dataclass(frozen=True, slots=True)
class PrivateLoop:
    """A nest whose outer loops ``iterators`` (perfectly nested, collapsed) run in parallel once
    each thread has its own ``copies`` of the temporaries that carried their only dependences
    (``mdpoly.frontend.privatize``).

    ``text`` is the nest with the copies' names, ``original`` the nest as written (what runs when
    ``checks`` or ``preconditions`` fail); ``private``: iterators of inner loops declared outside
    the nest; ``exits``: the band's headers around nothing, which leave its iterators at their
    exit values (``""`` when each header declares its own); ``params``: the size parameters;
    ``work``: how many statement instances it runs, where the sizes are known; ``lastprivate``:
    iterators of inner loops read after the nest (each iteration assigns them: they leave the
    sequentially last iteration's values); ``blocked``: when not 0, ``text`` takes the loop's
    iterations in blocks of this many, interleaved inside its inner loops (``mdpoly.frontend.blocked``).
    """

    iterators: tuple[str, ...]
    loc: SourceLoc
    text: str
    original: str
    copies: tuple[PrivateCopy, ...]
    private: tuple[str, ...]
    exits: str
    checks: tuple[AliasCheck, ...]
    preconditions: tuple[Precondition, ...]
    params: tuple[str, ...]
    work: int | None = None
    lastprivate: tuple[str, ...] = ()
    blocked: int = 0
    #: scalars the loop folds into: ``(name, OpenMP reduction identifier)`` (``reduction(+:x)``)
    reductions: tuple[tuple[str, str], ...] = ()
    #: the model's names of struct members and other C values that ``checks`` and
    #: ``preconditions`` use, with the C text they stand for (``mdp_m_km_n`` -> ``km->n``)
    values: tuple[tuple[str, str], ...] = ()
    #: where ``work`` is unknown: an estimate of it as C over the user's names (``double``), ``""``: none
    work_c: str = ""
    #: the values the file pins for the parameters and members the loop reads (name in ``text`` or
    #: in ``values`` -> C literal, ``mdpoly.frontend.pinned_values``): the region gets a copy
    #: specialised to them, run when the values match
    pinned: tuple[tuple[str, str], ...] = ()
    #: C that finds the elements the loop gathers through pointers ``checks`` compare with what it
    #: writes (``mdp_ins_lo_<name>``/``mdp_ins_hi_<name>``, ``mdpoly.frontend.inspector``); runs
    #: before the checks; ``""``: none
    inspector: str = ""
    #: arrays the loop updates at indices read from memory, reduced like ``reductions`` over
    #: the sections the inspector finds (declared arrays: whole)
    scattered: tuple[ScatterReduction, ...] = ()
    #: the body runs a ``while`` loop, whose trips the data decide: iterations differ in cost, so
    #: they are handed out in small chunks as threads finish (dynamic schedule), not in equal blocks
    uneven: bool = False
    #: pointers whose first dimension has no declared size: how far the loop reaches along it, as
    #: C over the user's names (``mdpoly.frontend.alias.first_extents``): a device copy's extent
    extents: tuple[tuple[str, str], ...] = ()
    #: how many iterations the collapsed band runs, as C (``double``) over the user's names;
    #: ``""``: not a box (the chunks of an uneven loop's schedule are then guided)
    trips_c: str = ""


#: The line of ``Wavefront.waves`` before each tile loop: where the worksharing pragma goes.
WAVEFRONT_TILES = "MDPOLY_WAVEFRONT_TILES"

#: Names ``TileWave.waves`` reads for a work-group's threads (set by the kernel: the thread's
#: index in its group and the group's size) and the statement ending each of a tile's own
#: wavefronts (a work-group barrier ordering global memory).
TILE_THREAD, TILE_THREADS, TILE_BARRIER = "mdp_lid", "mdp_lsz", "mdp_barrier();"


@dataclass(frozen=True, slots=True)
class TileWave:
    """A tiled wavefront's tiles run by a work-group each (``mdpoly.frontend.tile_wavefront``):
    inside a tile, the points along the tile's own wavefronts -- the values ``0 .. inner - 1`` of
    ``h(l) = sum coefficients[r] * l[r]`` over the tile's local skewed coordinates ``l`` -- one
    after the other, separated by a barrier of the group (``TILE_BARRIER``), and the points of one
    value shared among the group's threads (``TILE_THREAD``, ``TILE_THREADS``).

    ``waves`` is the C of the loops over wavefronts and tiles as in ``Wavefront.waves`` (the
    ``WAVEFRONT_TILES`` line before each loop shared out), each tile running that code;
    ``candidates``: the points each inner wavefront looks at (the box of the coordinates besides
    the one computed from ``h``); ``threads``: the group's size."""

    waves: str
    coefficients: tuple[int, ...]
    inner: int
    candidates: int
    threads: int


@dataclass(frozen=True, slots=True)
class Wavefront:
    """A band of perfectly nested loops ``iterators`` run as a tiled wavefront
    (``mdpoly.frontend.wavefront``): skewed to ``skew`` (one C expression per loop, e.g.
    ``j+i``), cut into tiles of ``tiles`` points per skewed dimension, the wavefronts of tiles in
    order and the tiles of one wavefront in parallel.

    ``waves`` is the C of the loops over wavefronts, tiles and points (the band's body at every
    point), with a ``WAVEFRONT_TILES`` line before each loop over the tiles of one wavefront;
    ``original`` the band as written (what runs when ``checks`` or ``preconditions`` fail);
    ``private``: the iterators declared outside that each tile needs its own copy of; ``exits``:
    the band's headers around nothing, which leave those iterators at their exit values (``""``
    when each header declares its own); ``params``: the size parameters.
    """

    iterators: tuple[str, ...]
    skew: tuple[str, ...]
    tiles: tuple[int, ...]
    loc: SourceLoc
    waves: str
    original: str
    private: tuple[str, ...]
    exits: str
    checks: tuple[AliasCheck, ...]
    preconditions: tuple[Precondition, ...]
    params: tuple[str, ...]
    #: how many statement instances it runs, where the sizes are known
    work: int | None = None
    #: not tiled: the wavefronts are the values of this affine function of the iterators (e.g.
    #: ``j-i``, every dependence goes to a larger value), their points in parallel, each point's
    #: body as written (``mdpoly.frontend.wavefront.hyperplane_band``; ``skew`` and ``tiles`` unused)
    hyperplane: str = ""
    #: size parameters the front end made, ``(name, C expression)`` (a padded row length
    #: ``mdp_sum_mp1`` = ``(long long) (1 + m)``, a hoisted member ``mdp_m_g_nx`` = ``g->nx``):
    #: declared at the start of the band's code, which prints them in bounds and checks
    derived: tuple[tuple[str, str], ...] = ()
    #: some array element is written at more than one point of the band (a time loop's sweeps):
    #: its tiles may reuse data in cache, so even one thread may run them faster than the band as
    #: written; otherwise (each point writes its own elements) a team of one runs the band as written
    revisits: bool = True
    #: where the sizes are known: how many wavefronts it runs (a GPU launch each), how many band
    #: points, and at most how many points one parallel item (a tile; a hyperplane's point, or
    #: its row of points in a deeper band) runs: the device's critical path (``mdpoly.hybrid``)
    wavefronts: int | None = None
    points: int | None = None
    item_points: int | None = None
    #: tiled: the tiles' own wavefronts, for a work-group per tile (``None``: not found)
    in_tile: TileWave | None = None
    #: tiled, where the sizes are known: at most how many tiles one parallel item runs in turn
    #: (a 3-D band's items run the time tiles of their row of tiles one after the other)
    item_tiles: int | None = None

    def describe(self) -> str:
        """The report's text, e.g. ``wavefront i,j skew j+i tiles 64x64`` (the coordinates that are
        not their loop's iterator; ``-i`` for a loop that counts downwards), or ``wavefront i,j
        hyperplane j-i``."""
        if self.hyperplane:
            return f"wavefront {','.join(self.iterators)} hyperplane {self.hyperplane}"
        changed = [s for s, it in zip(self.skew, self.iterators, strict=True) if s != it]
        skew = f" skew {','.join(changed)}" if changed else ""
        return f"wavefront {','.join(self.iterators)}{skew} tiles {'x'.join(str(t) for t in self.tiles)}"


ScheduleItem = HostLoop | HostStatement | Computation | PrivateLoop | Wavefront


_Item = TypeVar("_Item", HostLoop, HostStatement, Computation, PrivateLoop, Wavefront)


def schedule_items_of(items: tuple[ScheduleItem, ...], kind: type[_Item]) -> list[_Item]:
    """Every item of type ``kind`` in a schedule, host loops' bodies included, in textual order."""
    out: list[_Item] = []
    for it in items:
        if isinstance(it, kind):
            out.append(it)
        elif isinstance(it, HostLoop):
            out.extend(schedule_items_of(it.body, kind))
    return out


def schedule_computations(items: tuple[ScheduleItem, ...]) -> list[Computation]:
    """Every ``Computation`` of a schedule, in execution (textual) order."""
    return schedule_items_of(items, Computation)


def schedule_wavefronts(items: tuple[ScheduleItem, ...]) -> list[Wavefront]:
    """Every ``Wavefront`` of a schedule, in textual order."""
    return schedule_items_of(items, Wavefront)


@dataclass(frozen=True, slots=True)
class NestOutcome:
    """What the driver did with one nest: the report's and the diagnostics' source of truth."""

    nest: NestAnalysis
    status: str          # "transformed" | "kept" | "already-parallel" (the user's OpenMP, kept)
    reason: str | None   # why kept (None when transformed)
    code: str | None     # stable reason code, e.g. "too-little-work", "non-affine-subscript"
    target: str | None   # backend used when transformed
    tuning: dict[str, object] | None = None   # the report's "tuning" object; None when untuned
    #: a scheduled nest: the outcome of each of its computations, in schedule order
    parts: tuple[NestOutcome, ...] = ()
    #: a scheduled nest: for each outermost host loop (by its location), ``""`` when it became one
    #: parallel region around the loop (OpenMP), else why not
    regions: tuple[tuple[SourceLoc, str], ...] = ()
    #: ``--mpi``: which dimension was split over the MPI ranks, or why none was
    ranks: str | None = None
    #: ``--devices``: which dimension was split over the devices, or why none was
    devices: str | None = None
    #: a scheduled GPU nest: for each outermost host loop (by its location), which arrays stay on
    #: the device over it (``mdpoly.backends.residency``), or why none do
    resident: tuple[tuple[SourceLoc, str], ...] = ()
    #: a scheduled nest: for each ``PrivateLoop`` (by its location), ``""`` when it runs in
    #: parallel, else the reason code under which it runs as written
    private_loops: tuple[tuple[SourceLoc, str], ...] = ()
    #: the cost model's decision on a computation (``CostDecision.to_report()``) and its remark text
    cost: dict[str, object] | None = None
    cost_text: str = ""
    #: a scheduled nest that gives way to the nest as written on a one-thread team: why (``""``: it does not)
    one_thread: str = ""
    #: a GPU computation: the device limits its code was planned with (``PlanningLimits.to_report()``)
    limits: dict[str, object] | None = None
    #: a scheduled GPU nest: the items that are no computation but run on the device (by location),
    #: each with its note (``mdpoly.backends.device_schedule``)
    device_items: tuple[tuple[SourceLoc, str], ...] = ()
    #: the pinned values its code has a specialised copy for (``km->dim == 4``; OpenMP)
    pinned: tuple[str, ...] = ()
    #: the conditions its code has a copy promising to the compiler (``soft2 >= 0``, so that its
    #: square roots need no errno path; ``Plan.nonnegative``; OpenMP)
    promised: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TeamPragma:
    """A user's ``#pragma omp parallel for`` that may get ``num_threads(mdp_team())``
    (``mdpoly.frontend.user_teams``): where it is, and where on its line the clause goes."""

    loc: SourceLoc
    directive: str          # its directive name, e.g. ``parallel for``
    clause_column: int      # 0-based offset on the line just after the directive name
    function_line: int      # the first line of the function holding it


@dataclass(frozen=True, slots=True)
class FileAnalysis:
    """The front end's result for one file: its original text, every candidate nest, and the
    user's parallel loops whose team size may be chosen at run time."""

    path: str
    source_text: str
    nests: tuple[NestAnalysis, ...]
    team_pragmas: tuple[TeamPragma, ...] = ()
