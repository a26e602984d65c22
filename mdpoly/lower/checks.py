"""Checks run on every Plan before a backend sees it: ``check_plan(plan)`` and its parts.

A failed check is a bug in mdpoly's lowering, raised as ``CompilerBug`` with the Plan's
parameters. Each property is one function:

* ``check_parallel_dims_carry_no_dependence`` -- parallel loops walk concat dims only; a loop
  shared by a thread team walks a reduction dim and writes only thread-private storage; SIMD
  loops over reduction dims reduce only into their declared reduction variables.
* ``check_combine_operator_matches_reduction`` -- every combine is the MDH's reduction operator.
* ``check_tiles_cover_domain`` -- the points the scalar phase visits are exactly the MDH domain
  (by isl, for symbolic sizes too); with register blocks the micro-kernel's and the remainder
  nests' point sets are disjoint and together the domain.
"""

from __future__ import annotations

import islpy as isl

from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.mdh import Affine, Combine
from mdpoly.ir.plan import (
    REGISTER_LAYER, Apply, Assign, Block, BlockEnd, Declare, FExpr, Loop, ParallelRegion, Plan, Ref, Stmt, Value,
    Var, walk,
)


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


def _compute_paths(stmts: tuple[Stmt, ...], path: tuple[Loop, ...] = (),
                   out: list[tuple[Loop, ...]] | None = None) -> list[tuple[Loop, ...]]:
    """The loop paths enclosing the scalar phases (statements evaluating ``f``), each once: the
    plain nest, or with register blocks the micro-kernel and each remainder nest."""
    found: list[tuple[Loop, ...]] = [] if out is None else out
    for s in stmts:
        if isinstance(s, (Assign, Declare)):
            v = s.value if isinstance(s, Assign) else s.init
            if v is not None and _evaluates_f(v) and not any(p == path for p in found):
                found.append(path)
        if isinstance(s, Loop):
            _compute_paths(s.body, path + (s,), found)
        if isinstance(s, (Block, ParallelRegion)):
            _compute_paths(s.body, path, found)
    return found


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


def _covered(plan: Plan, loops: tuple[Loop, ...], head: str, its: list[str],
             ends: dict[str, BlockEnd]) -> isl.Set:
    """The points of the MDH domain one scalar-phase path visits, as an isl set over ``its``."""
    mdh = plan.mdh
    walked = sorted([lp.var for lp in loops if lp.layer == 0 and lp.dim >= 0]
                    + [its[lp.dim] for lp in loops if lp.layer == REGISTER_LAYER])
    if walked != sorted(its):
        raise _bug(plan, f"scalar phase loops {walked} do not walk the dims {its}")
    exist = [lp.var for lp in loops if lp.layer > 0]
    cons: list[str] = []
    used: set[str] = set()
    for n, lp in enumerate(loops):
        if lp.dim < 0:
            continue
        v, lo = lp.var, _isl(lp.lower)
        cons.append(f"{v} >= {lo}")
        cons += [f"{v} < {_isl(u)}" for u in lp.upper]
        used |= lp.lower.names() | {x for u in lp.upper for x in u.names()}
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
    if not exist:
        return isl.Set(f"{head}{{ [{', '.join(its)}] : {' and '.join(cons)} }}")
    return isl.Set(f"{head}{{ [{', '.join(its)}] : exists ({', '.join(exist)} : {' and '.join(cons)}) }}")


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
    for loops in paths:
        for lp in loops:
            names |= lp.lower.names()
            for u in lp.upper:
                names |= u.names()
    for be in ends.values():
        names |= be.lower.names() | {x for u in be.upper for x in u.names()}
    tile_vars = {lp.var for loops in paths for lp in loops if lp.layer > 0}
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
    domain = isl.Set(f"{head}{{ [{', '.join(its)}] : {' and '.join(dom_cons)} }}")
    if not covered.is_equal(domain):
        raise _bug(plan, f"tiles cover {covered}, domain is {domain}")


def check_plan(plan: Plan) -> None:
    """Run every check; raise ``CompilerBug`` on the first failure."""
    check_parallel_dims_carry_no_dependence(plan)
    check_combine_operator_matches_reduction(plan)
    check_tiles_cover_domain(plan)
