"""The Plan IR: one lowered loop nest as an explicit tree of loops, locals and assignments.

Produced by ``mdpoly.lower.lower(mdh, params)``, checked by ``mdpoly.lower.checks``, rendered by a
backend (``mdpoly.backends.openmp.OpenMPBackend.render``). Every decision is made before a backend sees
the Plan: which loops are parallel or SIMD, tile bounds, local result buffers, where partial
results are combined. A backend only chooses spellings.

Expressions stay small: indices and loop bounds are ``Affine`` (over iterators, tile variables
and size parameters); an upper bound is the minimum of a tuple of ``Affine``. Values are a tiny
tree (``Ref``, ``Var``, ``Const``, ``Apply``, ``FExpr``, ``AsType``) that ``backends/c_emit.py``
prints. Loop variables and index arithmetic are wide and signed (size parameters are widened
before any arithmetic, even when declared ``unsigned``); the user's expressions see each iterator
in its declared type (``AsType`` bindings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.mdh import Affine, Buffer, Combine, MdhExpr

# {{{ values


@dataclass(frozen=True, slots=True)
class Ref:
    """An element of a buffer or local: ``name[i0][i1]``; ``deref`` prints ``(*name)``."""

    name: str
    index: tuple[Affine, ...] = ()
    deref: bool = False


@dataclass(frozen=True, slots=True)
class Var:
    """A local scalar variable or iterator."""

    name: str


@dataclass(frozen=True, slots=True)
class Const:
    """A C constant spelled as ``text`` (``0``, ``-INFINITY``, ``INT_MIN``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Apply:
    """``a (op) b`` for a reduction combine operator (``+ * max min``)."""

    op: Combine
    a: Value
    b: Value


@dataclass(frozen=True, slots=True)
class FExpr:
    """The user's C expression ``text``: a scalar-function result (``role`` ``f``), the start
    value of an accumulator (``init``), or what is stored instead of a reduced value (``finish``);
    or ``combine``: generated code choosing between bound values (an argmax's pair update).

    ``bindings`` maps the formals used in ``text`` to values; a backend prints the text with each
    bound name replaced (or bound in an inner scope), every other name left as written.
    """

    text: str
    bindings: tuple[tuple[str, Value], ...] = ()
    role: Literal["f", "init", "finish", "combine"] = "f"


@dataclass(frozen=True, slots=True)
class BlockEnd:
    """``lower + (min(upper) - lower) / step * step``: where the full blocks of ``step`` points
    of ``[lower, min(upper))`` end (a register-tiled range's remainder starts here)."""

    lower: Affine
    upper: tuple[Affine, ...]
    step: int


@dataclass(frozen=True, slots=True)
class AsType:
    """``(c_type)(index)``: an index expression seen in a C type of the user's.

    Generated index arithmetic is done in a wide signed type; where the user's expressions see
    an iterator, lowering binds it to its value converted to the iterator's declared type, so
    ``(float)(i - 10u)`` or ``sizeof(i)`` give what they give in the original program.
    """

    c_type: str
    index: Affine


@dataclass(frozen=True, slots=True)
class ThreadNum:
    """The number of the calling thread in the innermost thread team (``omp_get_thread_num()``):
    which slot of a per-thread buffer (``Declare.heap``) the thread uses."""


Value = Ref | Var | Const | Apply | FExpr | BlockEnd | AsType | ThreadNum

# }}}

# {{{ statements


@dataclass(frozen=True, slots=True)
class Declare:
    """A local: scalar when ``shape == ()``, else an array ``T name[s0][s1]``; optional init.

    ``heap``: the array lives on the heap, 64-byte aligned, allocated where it is declared and
    freed at the end of the enclosing ``Block`` (which holds the declaration directly); only its
    first extent may be a run-time value (a thread count: one slot per thread). Packed panels
    use it, so that large buffers never sit on a thread's stack.
    """

    name: str
    elem_type: str
    shape: tuple[Affine, ...] = ()
    init: Value | None = None
    heap: bool = False


@dataclass(frozen=True, slots=True)
class Assign:
    target: Ref | Var
    value: Value


#: ``Loop.layer`` of a register block loop (see ``Loop``).
REGISTER_LAYER = 3

LoopSchedule = Literal["seq", "parallel", "thread_for", "simd"]
#: How a worksharing loop's iterations go to the threads: ``block`` -- one contiguous share each
#: (static); ``cyclic`` -- round robin, one iteration at a time (static, chunk 1); ``dynamic`` --
#: to whichever thread is free (parallel loops only: a thread's share then varies from run to run).
Distribution = Literal["block", "cyclic", "dynamic"]


@dataclass(frozen=True, slots=True)
class TileShare:
    """The step of a parallel tile loop chosen at run time: the tiles' count a multiple of the
    team's size where their size allows, so that a static schedule hands every thread the same
    number of points (148 rows in tiles of 64 were 128 rows for one of two threads, 20 for the
    other). ``var`` holds the size: at least ``least`` (a register block) and at most ``most``
    (the tile the plan was lowered with, which sizes its local buffers), the points of the tile
    loop's range ``[lower, min(upper))`` in as few tiles as that allows, rounded up to a multiple
    of the team (``others``: the tile counts of the other loops of a collapsed parallel loop,
    whose product the count multiplies)."""

    var: str
    most: int
    least: int = 1
    others: tuple[tuple[Affine, Affine, int], ...] = ()   # (lower, upper, tile) of each


@dataclass(frozen=True, slots=True)
class Loop:
    """``for (var = max(lower, more_lower...); var < min(upper...); var += step)``.

    ``more_lower``: further lower bounds (a point loop clipped to a non-rectangular domain, e.g.
    ``j >= i``); the loop starts at the largest, and ``step`` is 1 then.
    ``schedule``: ``parallel`` -- a worksharing parallel loop over ``collapse`` perfectly nested
    loops starting here; ``thread_for`` -- a worksharing loop inside a ``ParallelRegion``
    (a static ``distribution``, so each thread's share is fixed for a thread count);
    ``distribution`` says how either hands out its iterations;
    ``simd`` -- a vector loop, reducing ``reductions`` ``(op, variable)`` pairs.
    ``num_threads`` (``parallel`` only): team size, 0 = the runtime default.
    ``dim`` is the MDH dimension the loop walks and ``layer`` its tiling layer
    (0 = point loop, 1 = outermost tile loop, 2 = inner tile loop, ``REGISTER_LAYER`` = a register
    block loop, whose body covers the points ``var .. var + step - 1`` of ``dim`` unrolled);
    ``dim == -1`` for helper loops (over thread partials, or the SIMD lanes of a register block).
    ``share``: a parallel tile loop whose step is chosen at run time (``TileShare``; ``step`` is
    then its largest value, and the point loops inside end at ``var + share.var``).
    """

    var: str
    lower: Affine
    upper: tuple[Affine, ...]
    step: int
    body: tuple[Stmt, ...]
    dim: int = -1
    layer: int = 0
    schedule: LoopSchedule = "seq"
    collapse: int = 1
    reductions: tuple[tuple[Combine, str], ...] = ()
    num_threads: int = 0
    more_lower: tuple[Affine, ...] = ()
    distribution: Distribution = "block"
    share: TileShare | None = None


@dataclass(frozen=True, slots=True)
class Guard:
    """``if (conds[0] >= 0 && conds[1] >= 0 ...) body else orelse``: the points of a
    non-rectangular domain (``MdhExpr.domain``) among those of its bounding box."""

    conds: tuple[Affine, ...]
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True, slots=True)
class Block:
    """A nested scope."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ThreadCount:
    """Declare ``int var`` = the number of threads of the coming parallel region.

    ``fixed == 0`` means the runtime default (``omp_get_max_threads()`` for OpenMP).
    """

    var: str
    fixed: int = 0


@dataclass(frozen=True, slots=True)
class ParallelRegion:
    """A team of ``nthreads_var`` threads running ``body``; ``thread_var`` is each one's number."""

    nthreads_var: str
    thread_var: str
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Assume:
    """A promise that ``[lower, min(upper))`` is not empty, for the C compiler (gcc vectorises
    an outer SIMD loop around an inner loop only when it knows the inner one runs); a backend
    may print nothing for it."""

    lower: Affine
    upper: tuple[Affine, ...]


@dataclass(frozen=True, slots=True)
class TeamThreads:
    """Inside a function that every thread of an enclosing team calls (``Plan.team``): declare
    ``int nthreads_var`` = the team's size and ``int thread_var`` = the calling thread's number
    in it (each unless empty)."""

    nthreads_var: str
    thread_var: str = ""


@dataclass(frozen=True, slots=True)
class Barrier:
    """Every thread of the enclosing team waits here until all have arrived; their writes before
    it are visible to every thread after it."""


@dataclass(frozen=True, slots=True)
class Prefetch:
    """A hint to bring the cache line of ``ref`` in ahead of its use (``__builtin_prefetch``); it
    changes no value. ``ref`` must lie in its array (guard it): forming an address outside is
    undefined in C even when nothing is read."""

    ref: Ref


Stmt = Declare | Assign | Loop | Block | ThreadCount | ParallelRegion | Assume | Guard | TeamThreads | Barrier | Prefetch

# }}}


@dataclass(frozen=True, slots=True)
class Iterator:
    """A loop iterator of the user's nest, as the code around the generated call sees it.

    ``c_type`` is its declared type. ``live``: it is declared outside the nest, so the original
    program leaves it at its exit value, which the call site assigns after the generated code
    (``lower + max(extent, 0)`` when every enclosing loop ran, else unchanged; for a downward
    loop, ``step == -1``, ``lower - 1`` when it ran, else its start ``lower + extent - 1``).
    """

    name: str
    c_type: str
    lower: Affine
    extent: Affine
    live: bool = False
    step: int = 1


@dataclass(frozen=True, slots=True)
class TeamForm:
    """A split reduction (``Plan.body`` starts its own team) as run inside an enclosing parallel
    region whose threads all call it, so that a sequential host loop around it needs no team
    per iteration.

    ``body``: run by every thread -- its share of the reduction into its own slot of the shared
    partials, then a ``Barrier``; ``finish``: run by one thread afterwards -- the partials
    combined in thread order with the outputs' start values, the outputs stored. ``partials``:
    the shared per-thread arrays (one slot of ``shape[0] / max_threads`` elements per thread),
    which the region declares before it starts (a team of at most ``max_threads`` threads) and
    both functions take as pointer parameters of these names, after ``Plan.params``. Where a call
    may have too few points to share, both test it (a ``Guard``, the same in every thread): then
    ``body`` does nothing and ``finish`` reduces all points itself.
    """

    body: tuple[Stmt, ...]
    finish: tuple[Stmt, ...]
    partials: tuple[Declare, ...]
    max_threads: int


@dataclass(frozen=True, slots=True)
class Plan:
    """A lowered nest ready to render as one function ``name(params...)``.

    ``params`` lists the buffers in the order the function takes them (read-only scalars first,
    so array shapes may use them). ``params_used`` is the tuning-parameter set it was lowered
    with; ``mdh`` is kept for checks and reports, never for emission decisions.
    """

    name: str
    loc: SourceLoc
    params: tuple[Buffer, ...]
    body: tuple[Stmt, ...]
    mdh: MdhExpr
    tuning: object  # mdpoly.lower.params.TuningParams (kept untyped to keep ir free of lower)
    needs_math: bool = False
    needs_limits: bool = False
    needs_float: bool = False
    #: the user's iterators, outermost first (their types; exit values of live ones)
    iterators: tuple[Iterator, ...] = ()
    #: the plan as run by the threads of an enclosing region (split reductions; see ``TeamForm``)
    team: TeamForm | None = None
    #: a C condition over the function's parameters (the cost model's run-time guard): while it
    #: is false the parallel loops and regions run on one thread (OpenMP ``if``; ``""``: always)
    parallel_if: str = ""
    #: read-only scalar parameters and the literals the caller's file pins them to (``NestAnalysis.pinned``):
    #: the function's body runs a copy specialised to them when the arguments match
    pinned: tuple[tuple[str, str], ...] = ()
    #: read-only floating scalar parameters whose being ``>= 0`` makes every square root's
    #: argument provably non-negative (``NestAnalysis.nonnegative``): the body runs a copy that
    #: promises it to the compiler inside its parallel loops when they are
    nonnegative: tuple[str, ...] = ()


def walk(stmts: tuple[Stmt, ...]) -> list[Stmt]:
    """All statements of a tree, preorder."""
    out: list[Stmt] = []
    for s in stmts:
        out.append(s)
        if isinstance(s, (Loop, Block, ParallelRegion, Guard)):
            out.extend(walk(s.body))
        if isinstance(s, Guard):
            out.extend(walk(s.orelse))
    return out
