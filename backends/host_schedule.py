"""Host code of a scheduled nest: ``ScheduleItem``s + generated calls -> the C text replacing the nest.

Host loops keep their header as written, statements their text; a computation becomes its
generated call (``calls`` maps ``id(computation)`` to it) or, when it was kept, its own text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from mdpoly.backends.base import TeamCode
from mdpoly.backends.c_emit import CEmitter, Dialect
from mdpoly.backends.wavefront_code import wavefront_in_region, wavefront_parallel
from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.mdh import INSPECT_HI, INSPECT_LO, AliasCheck, Precondition
from mdpoly.ir.nest import (
    ORIGINAL_NEST,
    Computation,
    HostLoop,
    HostStatement,
    PrivateLoop,
    ScatterReduction,
    ScheduleItem,
    Wavefront,
    schedule_computations,
    schedule_items_of,
    schedule_wavefronts,
)

_INDENT = "  "


def render_schedule(items: tuple[ScheduleItem, ...], calls: dict[int, str]) -> str:
    """The schedule as one C compound statement (``{ ... }``), without a trailing newline."""
    lines = ["{"]
    _render(items, calls, 1, lines)
    lines.append("}")
    return "\n".join(lines)


def _block(text: str, depth: int) -> list[str]:
    return [(_INDENT * depth + ln) if ln.strip() and not ln.startswith("#") else ln
            for ln in text.rstrip("\n").splitlines()]


def _render(items: tuple[ScheduleItem, ...], calls: dict[int, str], depth: int, lines: list[str],
            parallel: frozenset[int] = frozenset()) -> None:
    """``items`` as C; the ``PrivateLoop``s of ``parallel`` (by ``id``) as OpenMP parallel loops."""
    for it in items:
        if isinstance(it, HostLoop):
            lines.append(_INDENT * depth + it.header + " {")
            _render(it.body, calls, depth + 1, lines, parallel)
            lines.append(_INDENT * depth + "}")
        elif isinstance(it, HostStatement):   # a GPU target's one-thread kernel for it is among ``calls``
            lines.extend(_block(calls.get(id(it)) or it.text, depth))
        elif isinstance(it, Computation):
            call = calls.get(id(it))
            lines.extend(_block(call if call is not None else it.nest.reference_c, depth))
        elif isinstance(it, PrivateLoop):   # a GPU target's kernel for it is among ``calls``
            text = calls.get(id(it)) or (_private_loop(it) if id(it) in parallel else it.original)
            lines.extend(_block(text, depth))
        elif isinstance(it, Wavefront):   # a GPU target's launches for it are among ``calls``
            text = calls.get(id(it)) or (wavefront_parallel(it) if id(it) in parallel else it.original)
            lines.extend(_block(text, depth))


# {{{ one OpenMP parallel region around a host loop

#: Words of the region's pragmas that a user's macro could replace (set aside around it).
_REGION_WORDS = ("omp", "parallel", "private", "single", "num_threads")
_NAME = re.compile(r"[A-Za-z_]\w*")
#: ``name =``, ``name +=`` ..., ``name++``/``name--`` (not ``==``, ``<=``, ``>=``, ``!=``, a member)
_ASSIGNED = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\+\+|--)")
_INCREMENTED = re.compile(r"(?:\+\+|--)\s*([A-Za-z_]\w*)")
_SUBSCRIPTED = re.compile(r"([A-Za-z_]\w*)\s*\[")
_CALLED = re.compile(r"([A-Za-z_]\w*)\s*\(")
_JUMP = re.compile(r"\b(?:break|continue|return|goto|setjmp|longjmp)\b")
_NOT_CALLS = frozenset({"if", "for", "while", "switch", "sizeof", "_Alignof", "return"})
#: C library functions without side effects on the program's variables
_PURE = frozenset({"sqrt", "sqrtf", "exp", "expf", "log", "logf", "pow", "powf", "fabs", "fabsf", "abs",
                   "sin", "sinf", "cos", "cosf", "tan", "tanh", "floor", "ceil", "fmax", "fmin", "fmaxf", "fminf"})


@dataclass(frozen=True, slots=True)
class RenderedSchedule:
    """A schedule's host code: ``text`` (one compound statement), the extra ``definitions`` it
    calls (team functions), and for each outermost host loop ``""`` when it became one parallel
    region, else why not (``NestOutcome.regions``)."""

    text: str
    definitions: tuple[str, ...]
    regions: tuple[tuple[SourceLoc, str], ...]
    private_loops: int = 0  # how many ``PrivateLoop``s run in parallel
    small: int = 0  # how many were kept as written for too little work
    #: the ``region_only`` computations (by ``id``) that run as written: their loop is no region
    outside: frozenset[int] = frozenset()
    #: every ``PrivateLoop`` by location: ``""`` when it runs in parallel, else why not (a code)
    private: tuple[tuple[SourceLoc, str], ...] = ()
    wavefronts: int = 0  # how many ``Wavefront``s run in parallel (OpenMP: all of them)


def render_schedule_regions(items: tuple[ScheduleItem, ...], calls: dict[int, str],
                            teams: dict[int, TeamCode], openmp: bool = False, min_work: int = 0,
                            region_only: frozenset[int] = frozenset(),
                            per_call: frozenset[int] = frozenset()) -> RenderedSchedule:
    """The schedule with every outermost host loop that allows it run as one OpenMP parallel
    region (``teams``: the transformed computations' ``TeamCode``, by ``id``).

    Every thread runs the host loop (its iterators private); a computation's parallel loops are
    shared among them as orphaned worksharing loops whose implicit barriers order the steps;
    host statements, kept computations, exit values and the fallback of a failed run-time check
    run on one thread (``single``, with its barrier). A computation's run-time checks are
    evaluated once before the region when nothing in the loop can change what they read, else
    by one thread per iteration into a shared flag. Afterwards the host loops' headers run once
    more, empty, to leave their iterators at their exit values.

    With ``openmp``, a ``PrivateLoop`` (at any depth) runs in parallel unless it is known to run
    fewer than ``min_work`` operations (two per statement instance): in a region, as an orphaned
    worksharing loop (``_shared_private_loop``), elsewhere as a parallel loop of its own.

    The computations of ``region_only`` (reductions whose only parallel loops are their
    reduction loops) run in parallel only inside a region: where their host loop is none, they
    run as written (``RenderedSchedule.outside``).

    A host loop around a computation of ``per_call`` (whose work is known only at run time: the
    cost model's guard decides at each call whether it runs in parallel) is no region: a region
    would synchronize its threads at every step however little the step's work, and one thread
    that loses its core to another process would then stall every step."""
    lines = ["{"]
    definitions: list[str] = []
    notes: list[tuple[SourceLoc, str]] = []
    outside: set[int] = set()
    loops = schedule_items_of(items, PrivateLoop) if openmp else []
    parallel = frozenset(id(p) for p in loops if p.work is None or 2 * p.work >= min_work)
    status = tuple((p.loc, "" if id(p) in parallel else "too-little-work" if openmp else "sequential-body")
                   for p in schedule_items_of(items, PrivateLoop))
    # a wavefront runs in parallel wherever it is, as a ``PrivateLoop`` does, unless it is too small
    waves = frozenset(id(w) for w in schedule_wavefronts(items) if w.work is None or 2 * w.work >= min_work) \
        if openmp else frozenset()
    parallel |= waves
    for it in items:
        if isinstance(it, HostLoop):
            why = _region_refusal(it, calls, teams, parallel, per_call)
            notes.append((it.loc, why))
            if not why:
                lines.extend(_region(it, calls, teams, len(notes), definitions, parallel))
                continue
            alone = {id(c) for c in schedule_computations(it.body) if id(c) in region_only and id(c) in calls}
            if alone:
                outside |= alone
                _render((it,), {k: v for k, v in calls.items() if k not in alone}, 1, lines, parallel)
                continue
        _render((it,), calls, 1, lines, parallel)
    lines.append("}")
    return RenderedSchedule("\n".join(lines), tuple(definitions), tuple(notes), len(parallel - waves),
                            len(loops) - len(parallel - waves) + (len(schedule_wavefronts(items)) - len(waves) if openmp else 0),
                            outside=frozenset(outside),
                            private=status, wavefronts=len(waves))


def _host_loops(loop: HostLoop) -> list[HostLoop]:
    out = [loop]
    for it in loop.body:
        if isinstance(it, HostLoop):
            out += _host_loops(it)
    return out


def _statements(loop: HostLoop) -> list[HostStatement]:
    out: list[HostStatement] = []
    for it in loop.body:
        if isinstance(it, HostStatement):
            out.append(it)
        elif isinstance(it, HostLoop):
            out += _statements(it)
    return out


def _texts(loop: HostLoop) -> list[str]:
    """Every piece of C the loop runs as written: headers, statements, computations' own text,
    parallel loops' bodies."""
    return ([h.header for h in _host_loops(loop)] + [s.text for s in _statements(loop)]
            + [c.nest.reference_c for c in schedule_computations(loop.body)]
            + [p.original for p in schedule_items_of(loop.body, PrivateLoop)] + [w.original for w in schedule_wavefronts(loop.body)])


def _assigned(texts: list[str]) -> set[str]:
    out: set[str] = set()
    for t in texts:
        out.update(_ASSIGNED.findall(t))
        out.update(_INCREMENTED.findall(t))
    return out


def _region_refusal(loop: HostLoop, calls: dict[int, str], teams: dict[int, TeamCode],
                    parallel: frozenset[int] = frozenset(), per_call: frozenset[int] = frozenset()) -> str:
    """Why ``loop`` cannot run as one parallel region (``""`` when it can); ``parallel``: the
    ``PrivateLoop``s (by ``id``) that run in parallel, each then an orphaned worksharing loop;
    ``per_call``: the computations that decide at run time, per call, whether to run in parallel."""
    comps = schedule_computations(loop.body)
    for c in comps:
        if id(c) in calls and id(c) in per_call:
            return (f"the work of the computation at line {c.nest.loc.line} is known only at run time: "
                    "it decides per call whether it pays to run in parallel (cost model)")
    privates = [p for p in schedule_items_of(loop.body, PrivateLoop) if id(p) in parallel]
    for p in privates:
        if p.scattered:
            return (f"the parallel loop at line {p.loc.line} reduces into copies of the arrays it updates at indices "
                    "read from memory, whose sections and cost it finds per call")
        if any(pre.reason.startswith("cost:") for pre in p.preconditions):
            return (f"the work of the parallel loop at line {p.loc.line} is known only at run time: "
                    "it decides per call whether it pays to run in parallel (cost model)")
    waves = [w for w in schedule_wavefronts(loop.body) if id(w) in parallel]
    called = [c for c in comps if id(c) in calls]
    for c in called:
        if id(c) not in teams:
            return (f"the computation at line {c.nest.loc.line} starts a thread team of its own "
                    "(per-thread partial results of a shared reduction loop)")
    if not any(teams[id(c)].kind == "shared" for c in called) and not privates and not waves:
        return "no computation inside it runs in parallel"
    for s in _statements(loop):
        if s.declares:
            return f"the declaration at line {s.loc.line} would be private to each thread"
        if s.text.lstrip().startswith("#") or _JUMP.search(s.text):
            return f"the statement at line {s.loc.line} is a pragma or a jump"
    loops = _host_loops(loop)
    iterators = {h.iterator for h in loops}
    comp_iterators = {lp.iterator for c in comps for lp in c.nest.loops}
    comp_iterators |= {v for p in privates for v in (*p.iterators, *p.private, *p.lastprivate)}
    comp_iterators |= {v for w in waves for v in (*w.iterators, *w.private)}
    both = sorted(iterators & comp_iterators)
    if both:
        return f"'{both[0]}' is the iterator of a host loop and of a computation inside it"
    written = _assigned([s.text for s in _statements(loop)] + [p.original for p in privates]
                        + [w.original for w in waves]) | comp_iterators
    for h in loops:
        names = set(_NAME.findall(h.header)) - iterators
        if h.iterator in written or names & written or "&" in h.header:
            return f"the header of loop '{h.iterator}' reads a variable the loop body writes"
    if any("&" + h.iterator in s.text.replace(" ", "") for s in _statements(loop) for h in loops):
        return "the address of a host loop's iterator is taken"
    return ""


def _invariant(check: str, texts: list[str], written: set[str], calls_anything: bool) -> bool:
    """Whether the run-time check ``check`` reads nothing the host loop may change."""
    if calls_anything or "->" in check or "." in _strip_numbers(check):
        return False
    names = set(_NAME.findall(check))
    subscripted = {m for t in texts for m in _SUBSCRIPTED.findall(t)}
    if names & written:
        return False
    return not (set(_SUBSCRIPTED.findall(check)) & subscripted) and not re.search(r"\*\s*[A-Za-z_(]", check)


def _strip_numbers(text: str) -> str:
    return re.sub(r"\b\d[\w.]*", "0", text)


def _region(loop: HostLoop, calls: dict[int, str], teams: dict[int, TeamCode], number: int,
            definitions: list[str], parallel: frozenset[int] = frozenset()) -> list[str]:
    texts = _texts(loop)
    loops = _host_loops(loop)
    comps = schedule_computations(loop.body)
    written = _assigned(texts) | {h.iterator for h in loops} | {lp.iterator for c in comps for lp in c.nest.loops}
    calls_anything = any(n not in _NOT_CALLS and n not in _PURE for t in texts for n in _CALLED.findall(t))
    # a statement that may write through a pointer (``*p = ``, ``q->n = ``, ``&x`` passed on) could change
    # what a check reads without naming it: such loops check in every iteration
    calls_anything = calls_anything or any(re.search(r"(?<!&)&(?!&)|\*|->", st.text) for st in _statements(loop))
    flags: dict[int, tuple[str, bool]] = {}  # id(computation) -> (shared flag, checked once before)
    partials: list[str] = []  # split reductions' shared partials, declared before the region
    max_threads = 0  # the most threads those partials have room for (0: no limit)
    for c in comps:
        team = teams.get(id(c))
        if id(c) in calls and team is not None and team.kind == "shared":
            if team.definition and team.definition not in definitions:
                definitions.append(team.definition)
            if team.partials and team.partials not in partials:
                partials.append(team.partials)
            if team.max_threads:
                max_threads = min(max_threads or team.max_threads, team.max_threads)
            if team.check:
                flag = f"mdp_region{number}_ok{len(flags)}"
                flags[id(c)] = (flag, _invariant(team.check, texts, written, calls_anything))
    blocks = {cid: _check_block(teams[cid].check, flag) for cid, (flag, _) in flags.items()}
    privates = [p for p in schedule_items_of(loop.body, PrivateLoop) if id(p) in parallel]
    copies: list[str] = []  # the parallel loops' per-thread copies: shared in the region
    for p in privates:
        copies += [c.decl for c in p.copies if c.decl not in copies]
        if p.checks or p.preconditions:
            flag = f"mdp_region{number}_ok{len(flags)}"
            # an inspection reads the data of the host loop's iteration: it runs every time
            flags[id(p)] = (flag, not p.inspector and _invariant(_private_check(p), texts, written, calls_anything))
            blocks[id(p)] = _private_check_block(p, flag)
    words = _REGION_WORDS + (_LOOP_WORDS if privates else ())
    out = [_INDENT + "{"]
    push = [f'#pragma push_macro("{w}")\n#undef {w}' for w in words]
    pop = [f'#pragma pop_macro("{w}")' for w in reversed(words)]
    if flags:
        out.append(_INDENT * 2 + "int " + ", ".join(f for f, _ in flags.values()) + ";")
    out.extend(_block("\n".join(copies), 2))
    out.extend(_block("".join(partials), 2))
    threads = f"mdp_region{number}_nt"   # chosen at run time: no more threads than free cores
    out.append(_INDENT * 2 + f"int {threads} = mdp_team();")
    if max_threads:
        out.append(_INDENT * 2 + f"if ({threads} > {max_threads}) {threads} = {max_threads};")
    for cid, (_, once) in flags.items():
        if once:
            out.extend(_block(blocks[cid], 2))
    # a computation's checks that must run in every iteration run in every thread, into its own
    # copy of the flag (all threads compute the same value): no ``single``, no barrier
    each = {flag for c in comps if id(c) in flags for flag, once in (flags[id(c)],) if not once}
    private = sorted({h.iterator for h in loops if not h.declares} | each)
    out.extend("\n".join(push).splitlines())
    out.append(f"#pragma omp parallel num_threads({threads})"
               + (f" private({', '.join(private)})" if private else ""))
    out.append(_INDENT * 2 + "{")
    _render_region(loop, calls, teams, flags, 3, out, parallel)
    out.append(_INDENT * 2 + "}")
    out.extend(pop)
    if private:  # the iterators' exit values: the headers once more, with nothing inside
        out.extend(_skeleton(loop, 2))
    out.append(_INDENT + "}")
    return out


def _check_block(check: str, flag: str) -> str:
    return f"{{\n  int mdp_alias_ok;\n{_indent(check)}\n  {flag} = mdp_alias_ok;\n}}"


def _indent(text: str) -> str:
    return "\n".join(_INDENT + ln if ln.strip() and not ln.startswith("#") else ln for ln in text.splitlines())


def _single(text: str, depth: int) -> list[str]:
    body = text.rstrip("\n")
    if not body.lstrip().startswith("{"):
        body = "{\n" + _indent(body) + "\n}"
    return ["#pragma omp single", *_block(body, depth)]


def _render_region(loop: HostLoop, calls: dict[int, str], teams: dict[int, TeamCode],
                   flags: dict[int, tuple[str, bool]], depth: int, lines: list[str],
                   parallel: frozenset[int] = frozenset()) -> None:
    lines.append(_INDENT * depth + loop.header + " {")
    pending: list[str] = []  # consecutive statements for one thread: one ``single``, one barrier

    def flush() -> None:
        if pending:
            lines.extend(_single("{\n" + "\n".join(_indent(p) for p in pending) + "\n}", depth + 1))
            pending.clear()

    for it in loop.body:
        if isinstance(it, HostLoop):
            flush()
            _render_region(it, calls, teams, flags, depth + 1, lines, parallel)
        elif isinstance(it, HostStatement):
            pending.append(it.text.rstrip("\n"))
        elif isinstance(it, PrivateLoop) and id(it) in parallel:
            flush()
            if id(it) not in flags:
                lines.extend(_block(_shared_private_loop(it), depth + 1))
                continue
            flag, once = flags[id(it)]
            if not once:
                lines.extend(_single(_private_check_block(it, flag), depth + 1))
            lines.append(_INDENT * (depth + 1) + f"if ({flag}) {{")
            lines.extend(_block(_shared_private_loop(it), depth + 2))
            lines.append(_INDENT * (depth + 1) + "} else {")
            lines.extend(_single(it.original, depth + 2))
            lines.append(_INDENT * (depth + 1) + "}")
        elif isinstance(it, PrivateLoop):
            pending.append(it.original.rstrip("\n"))
        elif isinstance(it, Wavefront):
            if id(it) not in parallel:
                pending.append(it.original.rstrip("\n"))
                continue
            flush()
            lines.extend(_block(wavefront_in_region(it), depth + 1))
        else:
            call, team = calls.get(id(it)), teams.get(id(it))
            if call is None or team is None or team.kind != "shared":
                pending.append((call if call is not None else it.nest.reference_c).rstrip("\n"))
                continue
            # one thread runs what comes after the team's part (a split reduction's combine, the
            # exit values; else the computation as written) with the statements after it: one barrier
            after = "\n".join(t.rstrip("\n") for t in (team.finish, team.exit_values) if t)
            if id(it) not in flags:
                flush()
                lines.extend(_block(team.call, depth + 1))
                if after:
                    pending.append(after)
                continue
            flag, once = flags[id(it)]
            flush()  # the checks read what the statements before wrote
            if not once:
                lines.extend(_block(_check_block(team.check, flag), depth + 1))
            lines.append(_INDENT * (depth + 1) + f"if ({flag}) {{")
            lines.extend(_block(team.call, depth + 2))
            if not after:  # every thread takes the same branch: a single only where a check failed
                lines.append(_INDENT * (depth + 1) + "} else {")
                lines.extend(_single(it.nest.reference_c, depth + 2))
                lines.append(_INDENT * (depth + 1) + "}")
                continue
            lines.append(_INDENT * (depth + 1) + "}")
            orelse = "{\n" + _indent(it.nest.reference_c.rstrip("\n")) + "\n}"
            pending.append(f"if ({flag}) {{\n{_indent(after)}\n}} else {orelse}")
    flush()
    lines.append(_INDENT * depth + "}")


def _skeleton(loop: HostLoop, depth: int) -> list[str]:
    inner = [ln for it in loop.body if isinstance(it, HostLoop) for ln in _skeleton(it, depth + 1)]
    if not inner:
        return [_INDENT * depth + loop.header + " {", _INDENT * depth + "}"]
    return [_INDENT * depth + loop.header + " {", *inner, _INDENT * depth + "}"]

# }}}


# {{{ a nest whose outer loops are parallel once its temporaries are private


#: Words of a parallel loop's pragma besides the region's (set aside around it).
_LOOP_WORDS = ("for", "collapse", "schedule", "static", "dynamic", "guided", "firstprivate", "lastprivate", "reduction", "max", "min")


def _loop_clauses(loop: PrivateLoop) -> list[str]:
    """The worksharing clauses of ``loop``: its band collapsed, its schedule (``_schedule``), inner
    iterators private (lastprivate where the program reads them afterwards), the temporaries' copies first-
    and lastprivate."""
    clauses = []
    if len(loop.iterators) > 1:
        clauses.append(f"collapse({len(loop.iterators)})")
    clauses.append(_schedule(loop))
    if loop.private:
        clauses.append(f"private({', '.join(loop.private)})")
    if loop.copies:
        clauses.append(f"firstprivate({', '.join(c.private for c in loop.copies)})")
    if loop.copies or loop.lastprivate:
        clauses.append(f"lastprivate({', '.join([*(c.private for c in loop.copies), *loop.lastprivate])})")
    clauses += [f"reduction({op}:{name})" for name, op in loop.reductions]
    clauses += [_scatter_clause(r) for r in loop.scattered]
    return clauses


def _schedule(loop: PrivateLoop) -> str:
    """``schedule(static)``; for iterations of uneven cost (a ``while`` loop each) chunks of about
    1/8 of an even share to whichever thread is free: ``schedule(dynamic, n / (8 * threads) + 1)``
    (one atomic step per chunk, not per iteration: chunks of one cost 3.7x at 16 threads on
    800,000 Newton solves), ``schedule(guided)`` where the band's iteration count is no product."""
    if not loop.uneven:
        return "schedule(static)"
    if not loop.trips_c:
        return "schedule(guided)"
    return f"schedule(dynamic, (int) (({loop.trips_c}) / (8.0 * omp_get_max_threads())) + 1)"


def _scatter_clause(r: ScatterReduction) -> str:
    """``reduction(+:h[lo:len])``, or ``reduction(+:hist)`` for a whole declared array."""
    return f"reduction({r.op}:{r.name})" if r.whole else f"reduction({r.op}:{r.name}[{r.start}:{r.length}])"


def _check_emitter(loop: PrivateLoop) -> CEmitter:
    """An emitter for ``loop``'s run-time checks, which name struct members by the model's names."""
    emitter = CEmitter(cast(Dialect, None), wide=loop.params)
    emitter.values = dict(loop.values)
    return emitter


def _shared_private_loop(loop: PrivateLoop) -> str:
    """``loop`` inside a parallel region: every thread meets it, its band is an orphaned ``omp
    for`` (the implicit barrier ends it); the copies (declared before the region, so shared) are
    filled by one thread before it, and one thread writes them back and sets the band's exit
    values after it."""
    out: list[str] = []
    if loop.copies:
        out += _single("\n".join(c.copy_in for c in loop.copies), 0)
    # every thread takes the same branch: the values are shared and read only
    out += _pinned_region(["#pragma omp for " + " ".join(_loop_clauses(loop)), loop.text.rstrip()],
                          applied_pins(loop, in_region=True))
    after = [c.copy_out for c in loop.copies] + ([loop.exits] if loop.exits else [])
    if after:
        out += _single("\n".join(after), 0)
    return "\n".join(out)


def _private_check(loop: PrivateLoop) -> str:
    """A statement setting ``int mdp_private_ok`` to ``loop``'s run-time checks and preconditions."""
    return _guarded(loop, "mdp_private_ok = 1;", "mdp_private_ok = 0;")


def _private_check_block(loop: PrivateLoop, flag: str) -> str:
    return f"{{\n  int mdp_private_ok;\n{_indent(_private_check(loop))}\n  {flag} = mdp_private_ok;\n}}"


#: the model's names of struct members read in a nest (``mdpoly.frontend.normalize.members``)
_MEMBER_PREFIX = "mdp_m_"


def _hoisted_members(loop: PrivateLoop) -> tuple[list[tuple[str, str]], str]:
    """The struct members ``loop`` reads, as ``(local, member)`` (declared
    ``__auto_type const mdp_m_km_n = km->n;``), and its text reading those locals instead. The nest writes no member it reads and its run-time
    checks keep the arrays it writes off the members, so each member holds one value throughout;
    read once before the region, the struct's address stays out of the outlined body, and the
    compiler may keep the struct's fields in registers in the code around the nest (a struct
    whose address reaches a parallel region is reloaded after every store that may alias it,
    which slowed a k-means program by 1.7x at one thread, where the nest runs as written)."""
    text = loop.text
    hoisted: list[tuple[str, str]] = []
    for name, value in sorted(loop.values, key=lambda nv: -len(nv[1])):
        if not name.startswith(_MEMBER_PREFIX) or not value:
            continue
        use = re.compile(r"(?<![\w.>])" + re.escape(value) + r"(?!\s*(?:\.|->|\w|\+\+|--|=[^=]|[-+*/%&|^]=|<<=|>>=))")
        new = use.sub(name, text)
        if new != text:
            hoisted.append((name, value))
            text = new
    return hoisted, text


def applied_pins(loop: PrivateLoop, in_region: bool) -> list[tuple[str, str, str]]:
    """The pinned values (``PrivateLoop.pinned``) that ``loop``'s code specialises to: ``(name,
    literal, the C expression it stands for)``. A struct member only where the loop runs as a
    parallel loop of its own, which reads it into a local first (``_hoisted_members``); inside a
    region the loop reads the member itself, which no declaration can shadow."""
    return _pins(loop, set() if in_region else {name for name, _ in _hoisted_members(loop)[0]})


def _pins(loop: PrivateLoop, hoisted: set[str]) -> list[tuple[str, str, str]]:
    """``applied_pins`` with the names of the members read into locals (``hoisted``) known."""
    values = dict(loop.values)
    out = []
    for name, literal in loop.pinned:
        if name in values:
            if name in hoisted:
                out.append((name, literal, values[name]))
        elif re.search(r"(?<![\w.>])" + re.escape(name) + r"\b", loop.text):
            out.append((name, literal, name))
    return out


def _pinned_region(region: list[str], pins: list[tuple[str, str, str]]) -> list[str]:
    """``region`` as it is, or -- with pinned values -- ``if (dim == (4) && ...) { __typeof__(dim)
    const dim = (4); region } else { region }``: the outlined region sees the constants in the
    first copy (``mdpoly.frontend.pinned_values``)."""
    if not pins:
        return region
    test = " && ".join(f"{n} == ({lit})" for n, lit, _ in pins)
    shadows = [f"__typeof__({n}) const {n} = ({lit});" for n, lit, _ in pins]
    inner = "\n".join(_indent(r) for r in shadows + region)
    plain = "\n".join(_indent(r) for r in region)
    return [f"if ({test})\n{{\n{inner}\n}}\nelse\n{{\n{plain}\n}}"]


def _private_loop(loop: PrivateLoop) -> str:
    """``loop`` for OpenMP: each temporary's copy filled from the user's object, the band a
    worksharing loop whose threads each have their own copy (``firstprivate``: the filled
    values; ``lastprivate``: the sequentially last iteration's copy comes back), the copy written
    back, the band's iterators set to their exit values; the original nest when a run-time check
    fails."""
    clauses = ["omp parallel for", *_loop_clauses(loop), "num_threads(mdp_team())"]
    words = ("omp", "parallel", "for", "collapse", "schedule", "static", "dynamic", "guided", "private", "firstprivate", "lastprivate",
             "reduction", "max", "min", "num_threads")
    hoisted, loop_text = _hoisted_members(loop)
    body = [f"__auto_type const {name} = {value};" for name, value in hoisted]
    body += [c.decl for c in loop.copies] + [c.copy_in for c in loop.copies]
    region = [f'#pragma push_macro("{w}")\n#undef {w}' for w in words]
    region += ["#pragma " + " ".join(clauses), loop_text.rstrip()]
    region += [f'#pragma pop_macro("{w}")' for w in reversed(words)]
    body += _pinned_region(region, _pins(loop, {name for name, _ in hoisted}))
    body += [c.copy_out for c in loop.copies]
    if loop.exits:
        body.append(loop.exits)
    text = "{\n" + "\n".join(_indent(b) for b in body) + "\n}"
    if not loop.checks and not loop.preconditions:
        return text
    return _guarded(loop, text, loop.original.rstrip())


def _guarded(loop: PrivateLoop, run: str, otherwise: str) -> str:
    """``run`` under ``loop``'s run-time checks and preconditions, else ``otherwise``. Checks and
    preconditions that read the ranges the inspection finds (gathered and scattered elements)
    come after the others and after ``loop``'s inspector: the inspection costs nothing where a
    cheaper test already fails (too little work, one thread)."""
    from pycparser import c_ast
    emitter = _check_emitter(loop)
    marker = "mdp_private_loop_body"
    inspected = tuple(c for c in loop.checks if _reads_inspection(c))
    plain = tuple(c for c in loop.checks if c not in inspected)
    after = tuple(p for p in loop.preconditions if _precondition_reads_inspection(p))
    before = tuple(p for p in loop.preconditions if p not in after)
    guarded = emitter.guarded(plain, c_ast.ID(marker), before) if plain or before else marker + ";"
    if inspected or after:   # the sections' preconditions first: an empty range reads no address
        inner = emitter.guarded(inspected, c_ast.ID(marker), after)
        guarded = guarded.replace(marker + ";", "{\n" + _indent(loop.inspector) + "\n" + _indent(inner) + "\n}")
    return guarded.replace(ORIGINAL_NEST.rstrip(";") + ";", otherwise).replace(marker + ";", run)


def _reads_inspection(check: AliasCheck) -> bool:
    return any(INSPECT_LO in name for r in (check.a, check.b) if r.lo is not None for name, _ in r.lo.terms)


def _precondition_reads_inspection(p: Precondition) -> bool:
    return INSPECT_LO in p.c_expr or INSPECT_HI in p.c_expr

# }}}
