"""A split reduction's team form (``Plan.team``): what lowering builds for it, what the OpenMP
backend renders, and that ``check_team_form`` refuses a thread writing outside its own slot
(hand-built MdhExprs of ``mdh_examples``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from mdh_examples import colmax, dot

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.mdh import Affine
from mdpoly.ir.plan import Assign, Barrier, Block, Guard, Loop, Plan, Ref, TeamThreads, walk
from mdpoly.lower import check_plan, default_params, lower, violations
from mdpoly.lower.lower import MAX_TEAM, MIN_TEAM_POINTS


def _split_plan(n: int = 1 << 20) -> Plan:
    mdh = dot(n)
    params = default_params(mdh, OpenMPBackend().caps)
    assert params.split_dim is not None
    return lower(mdh, params)


def test_split_reduction_has_a_team_form() -> None:
    plan = _split_plan()
    team = plan.team
    assert team is not None
    assert isinstance(team.body[0], TeamThreads) and isinstance(team.body[-1], Barrier)
    assert [d.shape for d in team.partials] == [(Affine.of({}, MAX_TEAM),)]
    assert not any(isinstance(s, TeamThreads) and s.thread_var for s in team.finish)
    assert not any(isinstance(s, Guard) for s in team.body)  # 2^20 points: always shared
    check_plan(plan)


def test_calls_with_few_points_are_reduced_by_one_thread() -> None:
    """A symbolic extent: the shared part runs from ``MIN_TEAM_POINTS`` points on; below, the
    combining part (one thread) reduces every point itself."""
    plan = _split_plan()
    mdh = replace(plan.mdh, dims=(replace(plan.mdh.dims[0], extent=Affine.of({"n": 1})),))
    params = default_params(mdh, OpenMPBackend().caps)
    team = lower(mdh, params).team
    assert team is not None
    guard = team.body[1]
    assert isinstance(guard, Guard) and guard.conds == (Affine.of({"n": 1}, -MIN_TEAM_POINTS),)
    assert isinstance(guard.body[-1], Barrier) and not guard.orelse
    alone = team.finish[1]
    assert isinstance(alone, Guard) and alone.conds == guard.conds and alone.orelse
    assert any(isinstance(s, Loop) and s.dim == 0 and s.schedule == "seq" for s in walk(alone.orelse))
    check_plan(lower(mdh, params))


def test_team_code_combines_in_thread_order() -> None:
    code = OpenMPBackend().render(_split_plan())
    assert code.team is not None and code.team.kind == "shared"
    assert code.team.max_threads == MAX_TEAM and f"[{MAX_TEAM}];" in code.team.partials
    assert "_team(" in code.team.call and "_finish(" in code.team.finish
    assert "#pragma omp barrier" in code.team.definition
    assert "omp_get_num_threads()" in code.team.definition
    assert "for (long mdp_t = 0; mdp_t < mdp_nthreads; mdp_t++)" in code.team.definition


def test_results_too_large_for_a_slot_have_no_team_form() -> None:
    mdh = colmax(1 << 14, 64)  # split along i: 64 column maxima per thread, more than a slot holds
    p = default_params(mdh, OpenMPBackend().caps)
    red = next(k for k, d in enumerate(mdh.dims) if d.combine.is_reduction)
    tiles = tuple((256,) if k == red else () for k in range(len(mdh.dims)))
    split = replace(p, split_dim=red, parallel_dims=(), tiles=tiles, register_tile=(), simd_lanes=0)
    assert not violations(mdh, split)
    assert lower(mdh, split).team is None
    narrow = colmax(1 << 14, 16)  # 16 per thread: a slot holds them
    assert lower(narrow, replace(split, loop_order=tuple(range(len(narrow.dims))))).team is not None


def test_a_thread_writing_outside_its_slot_is_a_compiler_bug() -> None:
    plan = _split_plan()
    team = plan.team
    assert team is not None

    def shift(body: tuple[object, ...]) -> tuple[object, ...]:
        out: list[object] = []
        for s in body:
            if isinstance(s, Block):
                s = Block(shift(s.body))  # type: ignore[arg-type]
            elif isinstance(s, Assign) and isinstance(s.target, Ref) and s.target.name == team.partials[0].name:
                s = Assign(Ref(s.target.name, (Affine.of({"mdp_tid": 2}),)), s.value)
            out.append(s)
        return tuple(out)

    bad = replace(plan, team=replace(team, body=shift(team.body)))  # type: ignore[arg-type]
    assert any(isinstance(s, Assign) and isinstance(s.target, Ref) and s.target.index == (Affine.of({"mdp_tid": 2}),)
               for s in walk(bad.team.body))  # type: ignore[union-attr]
    with pytest.raises(CompilerBug, match="outside its own slot"):
        check_plan(bad)
