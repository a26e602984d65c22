"""Checks run on every Plan before a backend sees it: ``check_plan(plan)`` and its parts.

A failed check is a bug in mdpoly's lowering, raised as ``CompilerBug`` with the Plan's
parameters. Each property is one function:

* ``check_parallel_dims_carry_no_dependence`` -- parallel loops walk concat dims only; a loop
  shared by a thread team walks a reduction dim and writes only thread-private storage; SIMD
  loops over reduction dims reduce only into their declared reduction variables.
* ``check_combine_operator_matches_reduction`` -- every combine is the MDH's reduction operator.
* ``check_tiles_cover_domain`` -- the points the scalar phase visits are exactly the MDH domain
  (by isl, for symbolic sizes too).
"""

from __future__ import annotations

import islpy as isl

from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.mdh import Affine, Combine
from mdpoly.ir.plan import (
    Apply, Assign, Block, Declare, FExpr, Loop, ParallelRegion, Plan, Ref, Stmt, Value, Var, walk,
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


def _compute_path(stmts: tuple[Stmt, ...], path: tuple[Loop, ...] = ()) -> tuple[Loop, ...] | None:
    """The loops enclosing the scalar phase (the statements evaluating ``f``)."""
    for s in stmts:
        if isinstance(s, (Assign, Declare)):
            v = s.value if isinstance(s, Assign) else s.init
            if v is not None and _evaluates_f(v):
                return path
        if isinstance(s, Loop):
            found = _compute_path(s.body, path + (s,))
            if found is not None:
                return found
        if isinstance(s, (Block, ParallelRegion)):
            found = _compute_path(s.body, path)
            if found is not None:
                return found
    return None


def _evaluates_f(v: Value) -> bool:
    if isinstance(v, FExpr):
        return v.role == "f"
    if isinstance(v, Apply):
        return _evaluates_f(v.a) or _evaluates_f(v.b)
    return False


def _isl(a: Affine) -> str:
    return a.to_c().replace(" * ", "*")


def check_tiles_cover_domain(plan: Plan) -> None:
    mdh = plan.mdh
    loops = _compute_path(plan.body)
    if loops is None:
        raise _bug(plan, "no scalar phase found")
    its = [d.iterator for d in mdh.dims]
    walked = [lp.var for lp in loops if lp.layer == 0 and lp.dim >= 0]
    if sorted(walked) != sorted(its):
        raise _bug(plan, f"scalar phase loops {walked} do not walk the dims {its}")
    tile_vars = [lp.var for lp in loops if lp.layer > 0]
    cons: list[str] = []
    exist: list[str] = list(tile_vars)
    for n, lp in enumerate(loops):
        if lp.dim < 0:
            continue
        v, lo = lp.var, _isl(lp.lower)
        cons.append(f"{v} >= {lo}")
        cons += [f"{v} < {_isl(u)}" for u in lp.upper]
        if lp.step != 1:
            e = f"mdp_e{n}"
            exist.append(e)
            cons.append(f"{v} = {lo} + {lp.step}*{e}")
    names: set[str] = set()
    for d in mdh.dims:
        names |= d.lower.names() | d.extent.names()
    for lp in loops:
        names |= lp.lower.names()
        for u in lp.upper:
            names |= u.names()
    params = sorted(names - set(its) - set(tile_vars))
    head = f"[{', '.join(params)}] -> " if params else ""
    covered = isl.Set(f"{head}{{ [{', '.join(its)}] : exists ({', '.join(exist)} : {' and '.join(cons)}) }}"
                      if exist else f"{head}{{ [{', '.join(its)}] : {' and '.join(cons)} }}")
    dom_cons = [f"{_isl(d.lower)} <= {d.iterator} < {_isl(d.lower)} + {_isl(d.extent)}" for d in mdh.dims]
    domain = isl.Set(f"{head}{{ [{', '.join(its)}] : {' and '.join(dom_cons)} }}")
    if not covered.is_equal(domain):
        raise _bug(plan, f"tiles cover {covered}, domain is {domain}")


def check_plan(plan: Plan) -> None:
    """Run every check; raise ``CompilerBug`` on the first failure."""
    check_parallel_dims_carry_no_dependence(plan)
    check_combine_operator_matches_reduction(plan)
    check_tiles_cover_domain(plan)
