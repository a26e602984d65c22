"""``mdpoly.cost_model``: ``CostInputs`` -> ``CostDecision`` for given work, syncs and targets."""

from __future__ import annotations

import math
from dataclasses import replace

import mdh_examples as E
import pytest

from mdpoly.cost_model import (
    CALIBRATION,
    Calibration,
    CostInputs,
    cost_inputs,
    decide,
    min_phase_ops,
)

#: 16 threads, sync(16) = 1000 + 14 * 400 ns over a gain of 1/1.2 - 1/16 of the work, at 0.1 ns an operation
MIN = math.ceil(6600 / (1 / 1.2 - 1 / 16) / 0.1)


def _inputs(ops: int | None, **kw: object) -> CostInputs:
    base = CostInputs(target="openmp", ops=ops, bytes=None if ops is None else 8 * ops, points_c="(double)(n)",
                      ops_per_point=2)
    return replace(base, **kw)  # type: ignore[arg-type]


def test_min_phase_ops_is_the_quiet_bound_of_the_largest_team() -> None:
    # synchronization priced quiet (the run-time team size leaves loaded cores out)
    assert min_phase_ops(1) == MIN == 85_622
    assert min_phase_ops(3) == math.ceil(3 * 6600 / (1 / 1.2 - 1 / 16) / 0.1)
    # the 2-thread bound is lower: 1000 ns over 1/1.2 - 1/2
    assert min_phase_ops(1, Calibration(max_threads=2)) == math.ceil(1000 / (1 / 1.2 - 1 / 2) / 0.1)


def test_jacobi_steps_share_small_steps_do_not() -> None:
    assert decide(_inputs(1_200_000, in_host_loop=True)).choice == "parallel"   # jacobi_1d LARGE, a time step
    assert decide(_inputs(5_000, in_host_loop=True)).choice == "sequential"      # a durbin / trisolv step
    assert decide(_inputs(96, in_host_loop=True)).choice == "sequential"         # an rmsnorm of 48 elements


@pytest.mark.parametrize(("ops", "choice"), [(MIN - 1, "sequential"), (MIN, "parallel"), (10**9, "parallel")])
def test_known_work_is_judged_at_compile_time(ops: int, choice: str) -> None:
    d = decide(_inputs(ops))
    assert d.choice == choice and d.guard is None and d.parallel == (choice == "parallel")
    assert d.seq_ns == pytest.approx(ops * 0.1)
    assert d.par_ns == pytest.approx(ops * 0.1 / 2 + 1000)
    assert d.loaded_ns == pytest.approx(ops * 0.1 + 1000)
    if choice == "sequential":
        assert "do not repay" in d.reason and f"at least {MIN}" in d.reason


#: synchronization 10x dearer: a parallel threshold above the generated code's call margin
SLOW = Calibration(sync_ns=10_000.0, sync_per_thread_ns=4000.0)
SLOW_MIN = math.ceil(66_000 / (1 / 1.2 - 1 / 16) / 0.1)


def test_unknown_work_gets_a_run_time_guard_on_the_points() -> None:
    d = decide(_inputs(None, points_in_c="(double)(m)"), SLOW)
    assert d.choice == "guarded" and d.parallel
    # the generated code from 100000 operations (10 x a 1 us call at 0.1 ns an operation) ...
    assert d.guard == "(double)(n) >= 50000.0" and d.min_call_ops == 100_000
    # ... on more than one thread from SLOW_MIN operations, tested inside the generated function
    assert d.parallel_if == f"(double)(m) >= {math.ceil(SLOW_MIN / 2)}.0" and d.min_ops == SLOW_MIN
    pre = d.precondition()
    assert pre is not None and pre.c_expr == d.guard and "100000" in pre.reason
    assert d.text() == ("cost: run-time guard, the generated code when a call has >= 100000 operations, "
                        f"in parallel when >= {SLOW_MIN}")


def test_a_parallel_threshold_below_the_call_margin_leaves_no_one_thread_band() -> None:
    d = decide(_inputs(None, points_in_c="(double)(m)"))
    assert d.choice == "guarded" and d.parallel_if is None and d.min_ops == MIN
    assert d.guard == f"(double)(n) >= {math.ceil(MIN / 2)}.0"
    assert d.text() == f"cost: run-time guard, parallel when a call has >= {MIN} operations"


def test_forced_nests_are_transformed_and_say_what_the_model_thought() -> None:
    small = decide(_inputs(100, forced="--all-nests"))
    assert small.choice == "forced" and small.parallel and small.guard is None
    assert "requested by --all-nests" in small.reason and "do not repay" in small.reason
    unknown = decide(_inputs(None, forced="#pragma mdh"))
    assert unknown.choice == "forced" and unknown.guard is None and unknown.precondition() is None
    assert decide(_inputs(10**9, forced="--all-nests")).choice == "parallel"


def test_more_synchronizations_need_more_work() -> None:
    assert decide(_inputs(100_000)).choice == "parallel"
    assert decide(_inputs(100_000, syncs=2)).choice == "sequential"


def test_gpu_repays_launches_and_transfers_or_falls_back() -> None:
    # elementwise: 2 operations per 16 bytes moved -- never repays the transfers
    ew = decide(_inputs(10**8, target="cuda", bytes=8 * 10**8))
    assert ew.choice == "sequential" and "do not repay a launch" in ew.reason
    # a matrix product: many operations per byte
    mm = decide(_inputs(2 * 10**9, target="opencl", bytes=3 * 8 * 10**6))
    assert mm.choice == "parallel" and mm.par_ns == pytest.approx(10_000 + 2.4e7 * 0.1)
    guarded = decide(_inputs(None, target="cuda"))
    gpu_min = math.ceil(2 * 10_000 / 0.1)
    assert guarded.choice == "guarded" and guarded.min_ops == gpu_min and guarded.parallel_if is None
    assert guarded.guard.startswith(f"(double)(n) >= {gpu_min // 2}.0 && mdp_gpu_rent(0.2, ")
    assert guarded.guard.endswith(" * (double)(n))")   # the call's host estimate: buys at once past the set-up
    assert guarded.text() == (f"cost: run-time guard, parallel when a call has >= {gpu_min} operations; the device "
                              "once the host has spent 200 ms (the runtime's set-up) on the calls it would run, "
                              "or the runtime is up")
    # no set-up to rent: the per-call guard alone
    free = decide(_inputs(None, target="cuda"), replace(CALIBRATION, gpu_setup_ns=0.0))
    assert free.guard == f"(double)(n) >= {gpu_min // 2}.0"


def test_inputs_from_an_mdh_print_and_report() -> None:
    mdh = E.matmul_symbolic()
    unknown = cost_inputs(mdh, {}, "openmp", in_host_loop=True)
    assert unknown.ops is None and unknown.ops_per_point == 2   # a * b, plus the sum's combine
    assert unknown.points_c == "((double)(n)) * ((double)(m)) * ((double)(l))"
    assert unknown.text() == ("target=openmp ops=(((double)(n)) * ((double)(m)) * ((double)(l))) * 2 bytes=? "
                              "syncs/call=1 in_host_loop=True")
    known = cost_inputs(mdh, {"n": 100, "m": 100, "l": 200}, "openmp")
    assert known.ops == 4 * 10**6 and known.bytes == 2 * 8 * 2 * 10**4 + 8 * 10**4
    report = decide(known).to_report()
    assert report["choice"] == "parallel" and report["min_ops"] == MIN
    assert report["inputs"] == {"target": "openmp", "ops": 4 * 10**6, "bytes": 400000, "points_c": known.points_c,
                                "ops_per_point": 2, "points_in_c": known.points_c, "syncs": 1,
                                "in_host_loop": False, "forced": "", "bytes_c": "", "large_bytes_per_point": None}
    assert decide(known).text().startswith("cost: parallel: 4000000 operations per call repay 1 thread")


def test_front_end_parameters_print_as_their_c_expression() -> None:
    mdh = E.matmul_symbolic()
    bufs = tuple(replace(b, c_value="s->n") if b.name == "n" else b for b in mdh.buffers)
    inputs = cost_inputs(replace(mdh, buffers=bufs), {}, "openmp")
    assert inputs.points_c.startswith("((double)(s->n)) * ")
    assert inputs.points_in_c.startswith("((double)(n)) * ")   # inside the function: its parameter


def test_one_table_of_constants() -> None:
    assert Calibration() == CALIBRATION
    assert CALIBRATION.sync(2) == 1000 and CALIBRATION.sync(16) == 1000 + 14 * 400


def test_gpu_inside_host_loops_charges_no_transfers_and_adds_no_guard() -> None:
    looped = decide(_inputs(None, target="opencl", in_host_loop=True))
    assert looped.choice == "parallel" and looped.guard is None
    ew = decide(_inputs(10**8, target="cuda", bytes=8 * 10**8, in_host_loop=True))
    assert ew.choice == "parallel" and ew.par_ns == pytest.approx(10_000)


def test_a_triangle_counts_half_its_box() -> None:
    from mdpoly.ir.mdh import Affine
    mdh = E.matmul_symbolic()
    tri = replace(mdh, domain=(Affine.of({"i": 1, "j": -1}),))   # j <= i
    known = cost_inputs(tri, {"n": 100, "m": 100, "l": 100}, "openmp")
    assert known.ops == 10**6
    assert cost_inputs(tri, {}, "openmp").points_c == "0.5 * ((double)(n)) * ((double)(m)) * ((double)(l))"
    one = replace(mdh, domain=(Affine.of({"i": 1}, -3),))   # i >= 3 names one iterator: still the box
    assert cost_inputs(one, {"n": 100, "m": 100, "l": 100}, "openmp").ops == 2 * 10**6


def test_without_gains_on_one_thread_small_calls_run_as_written() -> None:
    d = decide(_inputs(None, points_in_c="(double)(m)"), SLOW)
    assert d.for_plan(True) == replace(d, one_thread_gain=True)
    flat = d.for_plan(False)
    assert flat.guard == f"(double)(n) >= {math.ceil(SLOW_MIN / 2)}.0" and flat.parallel_if is None
    assert flat.min_call_ops == 0
    assert flat.text() == f"cost: run-time guard, parallel when a call has >= {SLOW_MIN} operations"
    assert flat.precondition() is not None and str(SLOW_MIN) in flat.precondition().reason  # type: ignore[union-attr]
