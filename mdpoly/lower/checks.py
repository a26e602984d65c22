"""Checks run on every Plan before a backend sees it: ``check_plan(plan)`` and its parts.

A failed check is a bug in mdpoly's lowering, raised as ``CompilerBug`` with the Plan's
parameters. Each property is one function:

* ``check_parallel_dims_carry_no_dependence`` -- parallel loops walk concat dims only; a loop
  shared by a thread team walks a reduction dim and writes only thread-private storage; SIMD
  loops over reduction dims reduce only into their declared reduction variables.
* ``check_combine_operator_matches_reduction`` -- every combine is the MDH's reduction operator.
* ``check_tiles_cover_domain`` -- the points the scalar phase visits are exactly the MDH domain
  (by isl, for symbolic sizes too): the box of the dims, cut by ``MdhExpr.domain`` when the nest
  is not rectangular (clipped loop bounds and guards on the way count); with register blocks
  the micro-kernel's and the remainder nests' point sets are disjoint and together the domain.
* ``check_buffers_touched_in_domain`` -- in a non-rectangular nest, every other statement that
  reads or writes a buffer of the user's (start values, stores) runs only at concat points that
  satisfy the constraints naming concat iterators alone.
* ``check_team_form`` -- a split reduction's form for an enclosing region (``Plan.team``): every
  thread writes only its own locals and its own slot of the shared partials, its shared loops walk
  reduction dims, a barrier ends its part, its scalar phase covers the domain, and the combining
  part (one thread) shares no loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import islpy as isl

from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.mdh import Affine, Combine
from mdpoly.ir.plan import (
    REGISTER_LAYER,
    Apply,
    Assign,
    Barrier,
    Block,
    BlockEnd,
    Declare,
    FExpr,
    Guard,
    Loop,
    ParallelRegion,
    Plan,
    Ref,
    Stmt,
    TeamThreads,
    Value,
    Var,
    walk,
)

#: The loops and guards around a statement, outermost first.
LoopPath = tuple[Loop | Guard, ...]


def _bug(plan: Plan, what: str) -> CompilerBug:
    return CompilerBug(f"plan check failed for '{plan.name}': {what} [{plan.tuning!r}]", plan.loc)


def _declared(stmts: tuple[Stmt, ...]) -> set[str]:
    names = {s.name for s in walk(stmts) if isinstance(s, Declare)}
    names |= {s.var for s in walk(stmts) if isinstance(s, Loop)}
    return names


def _targets(stmts: tuple[Stmt, ...]) -> list[Ref | Var]:
    return [s.target for s in walk(stmts) if isinstance(s, Assign)]


def _name(t: Ref | Var) -> str:
    return t.name


def check_parallel_dims_carry_no_dependence(plan: Plan) -> None:
    dims = plan.mdh.dims
    for s in walk(plan.body):
        if isinstance(s, Loop) and s.schedule == "parallel":
            chain: list[Loop] = [s]
            while len(chain) < s.collapse:
                inner = chain[-1].body
                if len(inner) != 1 or not isinstance(inner[0], Loop):
                    raise _bug(plan, f"collapse({s.collapse}) over loops that are not perfectly nested")
                chain.append(inner[0])
            for lp in chain:
                if lp.dim < 0 or dims[lp.dim].combine.is_reduction:
                    raise _bug(plan, f"parallel loop '{lp.var}' walks a reduction or no dimension")
        if isinstance(s, ParallelRegion):
            private = _declared(s.body)
            for t in _targets(s.body):
                if _name(t) in private:
                    continue
                if isinstance(t, Ref) and t.index and t.index[0] == Affine.of({s.thread_var: 1}):
                    continue
                raise _bug(plan, f"thread team writes shared '{_name(t)}' outside its own slot")
            shared = [x for x in walk(s.body) if isinstance(x, Loop) and x.schedule == "thread_for"]
            for lp in shared:
                if lp.dim < 0 or not dims[lp.dim].combine.is_reduction:
                    raise _bug(plan, f"shared loop '{lp.var}' must walk a split reduction dimension")
        if isinstance(s, Loop) and s.schedule == "simd" and s.dim >= 0 and dims[s.dim].combine.is_reduction:
            allowed = {v for _, v in s.reductions} | _declared(s.body)
            for t in _targets(s.body):
                if _name(t) not in allowed:
                    raise _bug(plan, f"simd loop over reduction '{s.var}' writes '{_name(t)}'")


def _applies(v: Value) -> list[Apply]:
    if isinstance(v, Apply):
        return [v, *_applies(v.a), *_applies(v.b)]
    if isinstance(v, FExpr):
        return [a for _, b in v.bindings for a in _applies(b)]
    return []


def check_combine_operator_matches_reduction(plan: Plan) -> None:
    op = plan.mdh.reduction_op
    for s in walk(plan.body):
        values: list[Value] = []
        if isinstance(s, Assign):
            values.append(s.value)
        if isinstance(s, Declare) and s.init is not None:
            values.append(s.init)
        for v in values:
            for a in _applies(v):
                if a.op is not op:
                    raise _bug(plan, f"combine '{a.op.value}' differs from the reduction operator")
        if isinstance(s, Loop):
            for rop, _ in s.reductions:
                if rop is not op or rop is Combine.CONCAT:
                    raise _bug(plan, f"simd reduction '{rop.value}' differs from the reduction operator")


def _paths(stmts: tuple[Stmt, ...], want: Callable[[Assign | Declare], bool], path: LoopPath = (), out: list[LoopPath] | None = None,
           orelse: bool = False) -> list[LoopPath]:
    """The paths enclosing the statements ``want(stmt)`` selects, each once; ``orelse``: also
    those in a guard's ``else`` branch (as if unguarded, which over-approximates)."""
    found: list[LoopPath] = [] if out is None else out
    for s in stmts:
        if isinstance(s, (Assign, Declare)) and want(s) and not any(p == path for p in found):
            found.append(path)
        if isinstance(s, Loop):
            _paths(s.body, want, (*path, s), found, orelse)
        if isinstance(s, Guard):
            _paths(s.body, want, (*path, s), found, orelse)
            _paths(s.orelse, want, path if orelse else (*path, _NEVER), found, orelse)
        if isinstance(s, (Block, ParallelRegion)):
            _paths(s.body, want, path, found, orelse)
    return found


#: Stands on a path into a guard's ``else`` branch, where no scalar phase may be (``_covered``
#: refuses it).
_NEVER = Guard((), ())


def _stmt_value(s: Assign | Declare) -> Value | None:
    return s.value if isinstance(s, Assign) else s.init


def _compute_paths(stmts: tuple[Stmt, ...]) -> list[LoopPath]:
    """The paths enclosing the scalar phases (statements evaluating ``f``), each once: the
    plain nest, or with register blocks the micro-kernel and each remainder nest."""
    def want(s: Assign | Declare) -> bool:
        v = _stmt_value(s)
        return v is not None and _evaluates_f(v)
    return _paths(stmts, want)


def _evaluates_f(v: Value) -> bool:
    if isinstance(v, FExpr):
        return v.role == "f"
    if isinstance(v, Apply):
        return _evaluates_f(v.a) or _evaluates_f(v.b)
    return False


def _isl(a: Affine) -> str:
    return a.to_c().replace(" * ", "*")


def _block_ends(plan: Plan) -> dict[str, BlockEnd]:
    return {s.name: s.init for s in walk(plan.body) if isinstance(s, Declare) and isinstance(s.init, BlockEnd)}


def _covered(plan: Plan, path: LoopPath, head: str, its: list[str],
             ends: dict[str, BlockEnd]) -> isl.Set:
    """The points of the MDH domain one scalar-phase path visits, as an isl set over ``its``."""
    if any(g is _NEVER for g in path):
        raise _bug(plan, "f is evaluated in a guard's else branch")
    loops = tuple(x for x in path if isinstance(x, Loop))
    walked = sorted([lp.var for lp in loops if lp.layer == 0 and lp.dim >= 0]
                    + [its[lp.dim] for lp in loops if lp.layer == REGISTER_LAYER])
    if walked != sorted(its):
        raise _bug(plan, f"scalar phase loops {walked} do not walk the dims {its}")
    return _path_set(path, head, its, ends)


def _fix(a: Affine, fixed: dict[str, int]) -> Affine:
    """``a`` with each name of ``fixed`` replaced by its value."""
    terms = {n: c for n, c in a.terms if n not in fixed}
    return Affine.of(terms, a.constant + sum(c * fixed[n] for n, c in a.terms if n in fixed))


def _fix_shares(lp: Loop, fixed: dict[str, int]) -> Loop:
    return replace(lp, lower=_fix(lp.lower, fixed), upper=tuple(_fix(u, fixed) for u in lp.upper),
                   more_lower=tuple(_fix(e, fixed) for e in lp.more_lower), share=None)


def _path_set(path: LoopPath, head: str, its: list[str], ends: dict[str, BlockEnd]) -> isl.Set:
    """The iterator points (over ``its``) a path of loops and guards lets through; every other
    loop variable is existential."""
    loops = tuple(x for x in path if isinstance(x, Loop))
    # a tile step chosen at run time (``TileShare``) is checked at its largest value: the loops
    # cover their range in tiles of any size
    fixed = {lp.share.var: lp.share.most for lp in loops if lp.share is not None}
    if fixed:
        loops = tuple(_fix_shares(lp, fixed) for lp in loops)
        ends = {n: BlockEnd(_fix(e.lower, fixed), tuple(_fix(u, fixed) for u in e.upper), e.step)
                for n, e in ends.items()}
        path = tuple(_fix_shares(x, fixed) if isinstance(x, Loop) else x for x in path)
    exist = [lp.var for lp in loops if lp.var not in its]
    cons: list[str] = []
    used: set[str] = set()
    for g in path:
        if isinstance(g, Guard):
            cons += [f"{_isl(c)} >= 0" for c in g.conds]
    for n, lp in enumerate(loops):
        if lp.dim < 0:
            continue
        v, lo = lp.var, _isl(lp.lower)
        cons.append(f"{v} >= {lo}")
        cons += [f"{v} >= {_isl(e)}" for e in lp.more_lower]
        cons += [f"{v} < {_isl(u)}" for u in lp.upper]
        used |= lp.lower.names() | {x for u in lp.upper for x in u.names()}
        used |= {x for e in lp.more_lower for x in e.names()}
        if lp.step != 1:
            e = f"mdp_e{n}"
            exist.append(e)
            cons.append(f"{v} = {lo} + {lp.step}*{e}")
        if lp.layer == REGISTER_LAYER:
            it = its[lp.dim]
            cons.append(f"{v} <= {it} < {v} + {lp.step}")
    for k, (name, be) in enumerate(sorted(ends.items())):
        if name not in used:
            continue
        q = f"mdp_q{k}"
        exist += [name, q]
        lo = _isl(be.lower)
        cons.append(f"{name} = {lo} + {be.step}*{q} and {name} >= {lo}")
        cons += [f"{name} <= {_isl(u)}" for u in be.upper]
        cons.append("(" + " or ".join(f"{name} + {be.step} > {_isl(u)}" for u in be.upper) + ")")
    body = " and ".join(cons) or "true"
    if not exist:
        return isl.Set(f"{head}{{ [{', '.join(its)}] : {body} }}")
    return isl.Set(f"{head}{{ [{', '.join(its)}] : exists ({', '.join(exist)} : {body}) }}")


def check_tiles_cover_domain(plan: Plan) -> None:
    """The scalar-phase paths visit pairwise disjoint point sets whose union is the domain."""
    mdh = plan.mdh
    paths = _compute_paths(plan.body)
    if not paths:
        raise _bug(plan, "no scalar phase found")
    its = [d.iterator for d in mdh.dims]
    ends = _block_ends(plan)
    names: set[str] = set()
    for d in mdh.dims:
        names |= d.lower.names() | d.extent.names()
    for c in mdh.domain:
        names |= c.names()
    for path in paths:
        names |= _path_names(path)
    for be in ends.values():
        names |= be.lower.names() | {x for u in be.upper for x in u.names()}
    tile_vars = {lp.var for path in paths for lp in path if isinstance(lp, Loop) and lp.layer > 0}
    params = sorted(names - set(its) - tile_vars - set(ends))
    head = f"[{', '.join(params)}] -> " if params else ""
    sets = [_covered(plan, loops, head, its, ends) for loops in paths]
    for a in range(len(sets)):
        for b in range(a + 1, len(sets)):
            if not sets[a].intersect(sets[b]).is_empty():
                raise _bug(plan, f"scalar phases overlap: {sets[a].intersect(sets[b])}")
    covered = sets[0]
    for extra in sets[1:]:
        covered = covered.union(extra)
    dom_cons = [f"{_isl(d.lower)} <= {d.iterator} < {_isl(d.lower)} + {_isl(d.extent)}" for d in mdh.dims]
    dom_cons += [f"{_isl(c)} >= 0" for c in mdh.domain]
    domain = isl.Set(f"{head}{{ [{', '.join(its)}] : {' and '.join(dom_cons)} }}")
    if not covered.is_equal(domain):
        raise _bug(plan, f"tiles cover {covered}, domain is {domain}")


def _path_names(path: LoopPath) -> set[str]:
    names: set[str] = set()
    for x in path:
        if isinstance(x, Guard):
            names |= {n for c in x.conds for n in c.names()}
        else:
            names |= x.lower.names() | {n for u in x.upper for n in u.names()}
            names |= {n for e in x.more_lower for n in e.names()}
    return names


def _touches_buffer(s: Assign | Declare, buffers: set[str]) -> bool:
    """Whether ``s`` reads or writes a user buffer outside ``f`` (a start value, a store)."""
    def reads(v: Value | None) -> bool:
        if isinstance(v, Ref):
            return v.name in buffers
        if isinstance(v, Apply):
            return reads(v.a) or reads(v.b)
        if isinstance(v, FExpr):  # init/finish text may name buffers; f and combine read their bindings only
            return v.role not in ("f", "combine") or any(reads(b) for _, b in v.bindings)
        return False
    if isinstance(s, Assign) and isinstance(s.target, Ref) and s.target.name in buffers:
        return True
    v = _stmt_value(s)
    return v is not None and not _evaluates_f(v) and reads(v)


def check_buffers_touched_in_domain(plan: Plan) -> None:
    """Non-rectangular nests: start values and stores only at the domain's concat points."""
    mdh = plan.mdh
    if not mdh.domain:
        return
    buffers = {b.name for b in plan.params}
    its = [d.iterator for d in mdh.dims]
    concat = [d.iterator for d in mdh.dims if not d.combine.is_reduction]
    store_cons = [c for c in mdh.domain if (c.names() & set(its)) <= set(concat)]
    for path in _paths(plan.body, lambda s: _touches_buffer(s, buffers), orelse=True):
        walked = [x.var for x in path if isinstance(x, Loop) and x.dim >= 0 and x.var in its]
        if set(walked) - set(concat):
            raise _bug(plan, f"a start value or store inside the loop of a reduction dim ({walked})")
        dims = [d for d in mdh.dims if d.iterator in walked]
        names = _path_names(path) | {n for c in store_cons for n in c.names()}
        names |= {n for d in dims for n in d.lower.names() | d.extent.names()}
        tile_vars = {x.var for x in path if isinstance(x, Loop)} - set(walked)
        params = sorted(names - set(its) - tile_vars)
        head = f"[{', '.join(params)}] -> " if params else ""
        touched = _path_set(path, head, walked, {})
        cons = [f"{_isl(d.lower)} <= {d.iterator} < {_isl(d.lower)} + {_isl(d.extent)}" for d in dims]
        cons += [f"{_isl(c)} >= 0" for c in store_cons if c.names() & set(its) <= set(walked)]
        if any(not (c.names() & set(its)) <= set(walked) for c in store_cons):
            raise _bug(plan, f"a start value or store outside the concat point loops {walked}")
        allowed = isl.Set(f"{head}{{ [{', '.join(walked)}] : {' and '.join(cons) or 'true'} }}")
        if not touched.is_subset(allowed):
            raise _bug(plan, f"buffers touched at {touched}, outside the domain's concat points {allowed}")


def check_plan(plan: Plan) -> None:
    """Run every check; raise ``CompilerBug`` on the first failure."""
    check_parallel_dims_carry_no_dependence(plan)
    check_combine_operator_matches_reduction(plan)
    check_tiles_cover_domain(plan)
    check_buffers_touched_in_domain(plan)
    check_team_form(plan)


def check_team_form(plan: Plan) -> None:
    """See the module docstring; nothing to check without ``Plan.team``."""
    team = plan.team
    if team is None:
        return
    body = team.body
    if len(body) < 2 or not isinstance(body[0], TeamThreads) or not body[0].thread_var:
        raise _bug(plan, "a team form starts with the team's size and thread number")
    share = body[1].body if len(body) == 2 and isinstance(body[1], Guard) and not body[1].orelse else body[1:]
    if not share or not isinstance(share[-1], Barrier):
        raise _bug(plan, "a team form's shared part ends with a barrier")
    tid = body[0].thread_var
    slots = {d.name: (d.shape[0].constant // team.max_threads if d.shape and d.shape[0].is_constant else 0)
             for d in team.partials}
    private = _declared(body)
    for t in _targets(body):
        if _name(t) in private:
            continue
        if not (isinstance(t, Ref) and t.name in slots and len(t.index) == 1 and slots[t.name] > 0
                and t.index[0].coeff(tid) == slots[t.name]):
            raise _bug(plan, f"a team form's thread writes shared '{_name(t)}' outside its own slot")
    dims = plan.mdh.dims
    for s in walk(body):
        if isinstance(s, Loop) and s.schedule == "parallel":
            raise _bug(plan, "a team form starts no parallel loop of its own")
        if isinstance(s, Loop) and s.schedule == "thread_for" and (s.dim < 0 or not dims[s.dim].combine.is_reduction):
            raise _bug(plan, f"a team form's shared loop '{s.var}' must walk a reduction dimension")
    if any(isinstance(s, Loop) and s.schedule in ("parallel", "thread_for") for s in walk(team.finish)):
        raise _bug(plan, "a team form's combining part shares a loop")
    check_tiles_cover_domain(replace(plan, body=share, team=None))
    alone = [s.orelse for s in team.finish if isinstance(s, Guard) and s.orelse]
    for part in alone:  # the points too few to share, reduced by one thread
        check_tiles_cover_domain(replace(plan, body=part, team=None))
