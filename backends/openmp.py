"""``OpenMPBackend``: renders a Plan as C99 + OpenMP (``parallel for``, ``simd``, thread teams)."""

from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from mdpoly.backends.base import Backend, GeneratedCode, TeamCode
from mdpoly.backends.c_emit import CEmitter
from mdpoly.backends.c_files import c_file
from mdpoly.ir.mdh import Buffer
from mdpoly.ir.plan import Assume, Block, Declare, Guard, Loop, ParallelRegion, Plan, Stmt, TeamForm, ThreadCount
from mdpoly.ir.target import TargetCaps

OPENMP_CAPS = TargetCaps(name="openmp", parallel_layers=1, simd=True, cores=2, vector_bytes=32,
                         l1_bytes=32 * 1024, l2_bytes=1024 * 1024, max_local_bytes=256 * 1024)


#: ``Loop.distribution`` as an OpenMP schedule clause.
_SCHEDULES = {"block": "schedule(static)", "cyclic": "schedule(static, 1)", "dynamic": "schedule(dynamic)"}


class _OpenMPDialect:
    """``parallel_if``: the plan's run-time condition for running on more than one thread
    (``Plan.parallel_if``): an ``if`` clause on parallel loops, a thread count of 1 for regions.
    Every team's size is chosen at run time (``mdp_team()``, the preamble's helper: no more
    threads than free cores); arrays of per-thread slots are sized for the largest team."""

    def __init__(self, parallel_if: str = "", regions: frozenset[str] = frozenset()) -> None:
        self.parallel_if = parallel_if
        self.regions = regions   # the ``nthreads_var`` of the plan's parallel regions

    def loop_pragmas(self, loop: Loop) -> list[str]:
        if loop.schedule == "parallel":
            clauses = ["omp parallel for"]
            if loop.collapse > 1:
                clauses.append(f"collapse({loop.collapse})")
            clauses.append(_SCHEDULES[loop.distribution])
            clauses.append(f"num_threads({_team(loop.num_threads)})")
            if self.parallel_if:
                clauses.append(f"if({self.parallel_if})")
            return [" ".join(clauses)]
        if loop.schedule == "thread_for":
            return [f"omp for {_SCHEDULES[loop.distribution]} nowait"]
        if loop.schedule == "simd":
            red = "".join(f" reduction({op.value}:{var})" for op, var in loop.reductions)
            return ["omp simd" + red]
        return []

    def share_team(self, loop: Loop) -> c_ast.Node:
        """The team a parallel tile loop's run-time step (``Loop.share``) is chosen for."""
        return c_ast.ID(_team(loop.num_threads))

    def thread_count(self, stmt: ThreadCount) -> c_ast.Node:
        # a region's team: chosen at run time (``mdp_team``); per-thread slots of a parallel
        # loop's team: its largest size, as the loop chooses its team itself
        count: c_ast.Node
        if stmt.var in self.regions:
            count = c_ast.ID(_team(stmt.fixed))
        else:
            count = (c_ast.Constant("int", str(stmt.fixed)) if stmt.fixed > 0
                     else c_ast.FuncCall(c_ast.ID("omp_get_max_threads"), None))
        if self.parallel_if:
            return c_ast.TernaryOp(c_ast.ID(f"({self.parallel_if})"), count, c_ast.Constant("int", "1"))
        return count

    def region_pragmas(self, region: ParallelRegion) -> list[str]:
        return [f"omp parallel num_threads({region.nthreads_var})"]

    def thread_id(self) -> c_ast.Node:
        return c_ast.FuncCall(c_ast.ID("omp_get_thread_num"), None)


class _TeamDialect(_OpenMPDialect):
    """Spellings of a function called by every thread of an enclosing region: its parallel loops
    are orphaned worksharing loops (``omp for``, which end with a barrier)."""

    def team_size(self) -> c_ast.Node:
        return c_ast.FuncCall(c_ast.ID("omp_get_num_threads"), None)

    def share_team(self, loop: Loop) -> c_ast.Node:
        return self.team_size()

    def barrier_pragmas(self) -> list[str]:
        return ["omp barrier"]

    def loop_pragmas(self, loop: Loop) -> list[str]:
        if loop.schedule == "parallel":
            clauses = ["omp for"]
            if loop.collapse > 1:
                clauses.append(f"collapse({loop.collapse})")
            return [" ".join([*clauses, _SCHEDULES[loop.distribution]])]
        return super().loop_pragmas(loop)


def _team(fixed: int) -> str:
    """The run-time team size of a parallel loop or region (``fixed``: the tuned size, 0: any)."""
    return f"mdp_team_upto({fixed})" if fixed > 0 else "mdp_team()"


def _walk(body: tuple[Stmt, ...]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        out.append(s)
        if isinstance(s, Loop | Block | ParallelRegion):
            out += _walk(s.body)
        elif isinstance(s, Guard):
            out += _walk(s.body) + _walk(s.orelse)
    return out


def team_kind(plan: Plan) -> str | None:
    """How every thread of an enclosing region runs ``plan`` (see ``TeamCode.kind``): ``None``
    when it starts a thread team of its own (per-thread partials of a shared reduction loop) or
    has work outside its parallel loops that every thread would repeat."""
    if plan.team is not None:
        return "shared"  # a split reduction's team form
    stmts = _walk(plan.body)
    if any(isinstance(s, ParallelRegion | ThreadCount) for s in stmts):
        return None
    if any(b.kind == "scalar" and b.written for b in plan.params):
        return None  # a scalar result shared by the team: not this function's shape
    if not any(isinstance(s, Loop) and s.schedule in ("parallel", "thread_for") for s in stmts):
        return "single"
    if all((isinstance(s, Loop) and s.schedule == "parallel") or isinstance(s, Assume)
           or (isinstance(s, Declare) and not s.shape) for s in plan.body):
        return "shared"
    return None


class OpenMPBackend(Backend[Plan]):
    """C99 + OpenMP for multicore CPUs; the generated code needs ``-fopenmp``."""

    name = "openmp"

    def __init__(self, caps: TargetCaps = OPENMP_CAPS) -> None:
        self.caps = caps

    def render(self, plan: Plan) -> GeneratedCode:
        stmts = _walk(plan.body)
        # a region's count is chosen at run time unless a parallel loop's per-thread slots could
        # share its name (they are sized for the largest team, which the loop then chooses)
        regions = frozenset() if any(isinstance(s, Loop) and s.schedule == "parallel" for s in stmts) else \
            frozenset(s.nthreads_var for s in stmts if isinstance(s, ParallelRegion))
        emitter = CEmitter(_OpenMPDialect(plan.parallel_if, regions))
        headers = ["omp.h"]
        if plan.needs_math:
            headers.append("math.h")
        if plan.needs_limits:
            headers.append("limits.h")
        if plan.needs_float:
            headers.append("float.h")
        if any(isinstance(s, Declare) and s.heap for s in _walk(plan.body)):
            headers.append("stdlib.h")  # aligned_alloc, abort, free of packed panels
        definition = shielded(emitter.function(plan))
        return GeneratedCode(name=plan.name, definition=definition, call=emitter.call(plan),
                             headers=tuple(headers), flags=("-fopenmp",),
                             preamble=preamble(tuple(headers)), team=self.render_team(plan))

    def render_team(self, plan: Plan) -> TeamCode | None:
        """``plan`` as called by every thread of a parallel region around it (``TeamCode``)."""
        kind = team_kind(plan)
        if kind is None:
            return None
        if plan.team is not None:
            return self.render_team_form(plan, plan.team)
        name = plan.name if kind == "single" else f"{plan.name}_team"
        definition = ""
        if kind == "shared":
            definition = shielded(CEmitter(_TeamDialect()).function(replace(plan, name=name)))
        call, exits, check = CEmitter(_OpenMPDialect()).team_call(plan, name)
        return TeamCode(kind, definition, call, exits, check)

    def render_team_form(self, plan: Plan, team: TeamForm) -> TeamCode:
        """A split reduction inside a region: ``<name>_team`` (every thread: its share into its
        slot of the partials, a barrier) and ``<name>_finish`` (one thread: the partials combined
        in thread order); the partials are arrays of the region named after the plan."""
        def pointers(names: list[str]) -> tuple[Buffer, ...]:
            return tuple(Buffer(n, d.elem_type, ("",), "pointer", written=True) for n, d in zip(names, team.partials))

        own = [d.name for d in team.partials]
        shared = [f"mdp_{plan.name}_{d.name.removeprefix('mdp_')}" for d in team.partials]
        name, finish = f"{plan.name}_team", f"{plan.name}_finish"
        functions = [replace(plan, name=name, params=plan.params + pointers(own), body=team.body, team=None),
                     replace(plan, name=finish, params=plan.params + pointers(own), body=team.finish, team=None)]
        definition = shielded("".join(CEmitter(_TeamDialect()).function(f) for f in functions))
        at_call = replace(plan, params=plan.params + pointers(shared))
        emitter = CEmitter(_OpenMPDialect())
        call, exits, check = emitter.team_call(at_call, name)
        finish_call = emitter.team_call(at_call, finish)[0]
        decls = emitter.declarations(tuple(replace(d, name=n) for d, n in zip(team.partials, shared)))
        return TeamCode("shared", definition, call, exits, check, finish_call, decls, team.max_threads)


#: Every word of the generated OpenMP pragmas that a user's macro could replace (OpenMP pragmas
#: are macro-expanded): the reduction operators' names and the keywords included.
PRAGMA_WORDS = ("omp", "parallel", "for", "collapse", "schedule", "static", "dynamic", "num_threads", "nowait",
                "simd", "reduction", "max", "min")


def shielded(definition: str) -> str:
    """``definition`` with the user's macros of ``PRAGMA_WORDS`` set aside around it
    (``push_macro``/``#undef``/``pop_macro``, understood by gcc, clang and icx), so that e.g.
    ``#define schedule(x) ...`` cannot rewrite ``schedule(static)``."""
    push = [f'#pragma push_macro("{w}")\n#undef {w}\n' for w in PRAGMA_WORDS]
    pop = [f'#pragma pop_macro("{w}")\n' for w in reversed(PRAGMA_WORDS)]
    return "".join(push) + definition + "".join(pop)


def preamble(headers: tuple[str, ...]) -> str:
    """Includes for the generated code and the team-size helper ``mdp_team()`` (the C file
    ``backends/c/mdp_team.h``, include-guarded: each nest's preamble repeats it). ``omp.h`` only
    under ``_OPENMP``; without OpenMP the runtime calls fall back to one thread so the file still
    builds and runs sequentially."""
    lines = [f"#include <{h}>" for h in headers if h != "omp.h"]
    lines += ["#if defined(_OPENMP)", "#include <omp.h>", c_file("mdp_team.h").rstrip("\n"),
              "#else", "#define omp_get_max_threads() 1", "#define omp_get_thread_num() 0",
              "#define omp_get_num_threads() 1", "#ifndef MDP_TEAM_H", "#define MDP_TEAM_H",
              "#define mdp_team() 1", "#define mdp_team_upto(n) 1",
              "#define mdp_tile_share(points, most, least, others, team) ((void) (points), (void) (least), (void) (others), (void) (team), (most))", "#endif", "#endif"]
    return "\n".join(lines) + "\n"
