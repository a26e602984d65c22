"""The tuner honours its time budget (issue 24): reference, default, search and confirmation together
end within the budget plus 10 % (and a small constant for this loaded machine), also when candidates
compile slowly or run slowly; and the reported tuned time is the time per call of the function that
ships, measured here separately in a fresh process."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from test_space import MATMUL

from mdpoly.backends.entry import entry_function
from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.lower import check_plan, lower
from mdpoly.runtime.base import BuildRequest
from mdpoly.runtime.openmp import OpenMPRunner
from mdpoly.tuning.evaluate import ENTRY
from mdpoly.tuning.target import Candidate, OpenMPTarget
from mdpoly.tuning.tune import TuneSettings, tune_nest

BUDGET = 6.0
SLACK = 3.0   # seconds for a loaded 2-core machine (process start-up, a worker killed late)


def _source(mdh: Any, params: Any, sleep_ns: int) -> str:
    plan = lower(mdh, params)
    check_plan(plan)
    code = OpenMPBackend().render(plan)
    real = (code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)).replace(
        f"void {ENTRY}(", "static void mdp_real_entry(")
    return ("#include <time.h>\n" + real + f"\nvoid {ENTRY}(void **args)\n{{\n"
            f"    struct timespec t = {{0, {sleep_ns}}};\n    nanosleep(&t, 0);\n    mdp_real_entry(args);\n}}\n")


class _SlowTarget(OpenMPTarget):
    """OpenMP candidates of which every third compiles slowly (a compiler that sleeps 4 s first),
    every third runs 0.3 s per call, and the rest run as generated."""

    def __init__(self, runner: OpenMPRunner, slow_cc: Path) -> None:
        super().__init__(OpenMPBackend(), runner)
        self.slow_cc = slow_cc
        self.n = 0

    def candidate(self, mdh: Any, params: Any, sizes: dict[str, int], args: Any) -> Candidate:
        self.n += 1
        if self.n == 1:   # the default: 2 ms per call
            return Candidate(BuildRequest(_source(mdh, params, 2_000_000), ENTRY, args))
        if self.n % 3 == 0:
            return Candidate(BuildRequest(_source(mdh, params, 0), ENTRY, args, compiler=str(self.slow_cc)))
        if self.n % 3 == 1:
            return Candidate(BuildRequest(_source(mdh, params, 300_000_000), ENTRY, args))
        return Candidate(BuildRequest(_source(mdh, params, 0), ENTRY, args))


def test_tune_time_is_honoured_with_slow_candidates(analyze: Any, tmp_path: Path) -> None:
    nest = analyze(MATMUL, M=48, N=64, K=32)
    slow_cc = tmp_path / "slow-cc"
    slow_cc.write_text("#!/bin/sh\nsleep 4\nexec cc \"$@\"\n")
    slow_cc.chmod(0o755)
    runner = OpenMPRunner(work_dir=str(tmp_path / "rt"))
    target = _SlowTarget(runner, slow_cc)
    settings = TuneSettings(seconds=BUDGET, cache_dir=tmp_path / "cache", progress=False)
    start = time.perf_counter()
    result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings, runner=runner, target=target)
    took = time.perf_counter() - start
    assert took <= 1.1 * BUDGET + SLACK, f"tuning took {took:.1f} s for a {BUDGET} s budget"
    assert result.tuning_seconds <= 1.1 * BUDGET + SLACK
    assert result.evaluations >= 2 and target.n >= 3   # it did search, slow candidates included
    log = [json.loads(line) for line in Path(result.log_path).read_text().splitlines()]
    kinds = {r["status"] for r in log if r["event"] == "candidate"}
    assert "ok" in kinds


def test_reported_tuned_time_is_the_shipped_functions_time_per_call(analyze: Any, tmp_path: Path) -> None:
    """The tuned seconds the report carries are what the chosen function takes per call when run
    on its own (a fresh worker, warm-up call excluded): within a factor of 20 either way on this
    shared machine (the 16.6 ms reported against 0.046 ms measured was a factor of 360)."""
    nest = analyze(MATMUL, M=96, N=96, K=96)
    settings = TuneSettings(seconds=None, evaluations=4, cache_dir=tmp_path / "cache", progress=False)
    runner = OpenMPRunner(work_dir=str(tmp_path / "rt"))
    result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings, runner=runner)
    target = OpenMPTarget(OpenMPBackend(), runner)
    from mdpoly.lower.lower import function_params
    from mdpoly.runtime.base import ArgSpec
    from mdpoly.tuning.buffers import make_buffers, numpy_dtype
    params = function_params(nest.mdh)
    inputs = make_buffers(nest.mdh, {}, 1)
    args = tuple(ArgSpec(b.name, numpy_dtype(b.elem_type), tuple(inputs[b.name].shape), b.written) for b in params)
    cand = target.candidate(nest.mdh, result.params, {}, args)
    built = runner.build(cand.request)
    times = [runner.run(built, inputs, repeats=20, warmup=1, timeout=60).median for _ in range(3)]
    shipped = statistics.median(times)
    assert shipped / 20 <= result.tuned_seconds <= 20 * shipped, (result.tuned_seconds, times)
