"""A winner whose confirmation fails is not kept (issue 25, item 3): the default is the result,
reported "unconfirmed" with why, no speed-up is printed, and the failed run is not cached."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_space import MATMUL

from mdpoly.backends.openmp import OPENMP_CAPS, OpenMPBackend
from mdpoly.cli import main
from mdpoly.lower import default_params
from mdpoly.tuning.evaluate import NestEvaluator, Rejected
from mdpoly.tuning.tune import TuneSettings, tune_nest

WHY = "candidate ran longer than 2.0 s (worker killed)"


@pytest.fixture
def failing_confirmation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The search sees the default 1000x slower than it is (so another configuration wins), and
    every re-measurement for the confirmation times out."""
    evaluate = NestEvaluator.evaluate

    def slow_default(self: NestEvaluator, params: Any) -> float:
        seconds = evaluate(self, params)
        return seconds * 1000 if params == self.default else seconds

    def timeout(self: NestEvaluator, params: Any) -> float:
        raise Rejected("timeout", WHY)

    monkeypatch.setattr(NestEvaluator, "evaluate", slow_default)
    monkeypatch.setattr(NestEvaluator, "remeasure", timeout)


def test_tune_nest_keeps_the_default_when_the_confirmation_fails(analyze, tmp_path: Path,
                                                                 failing_confirmation: None) -> None:
    nest = analyze(MATMUL, M=24, N=32, K=16)
    settings = TuneSettings(seconds=None, evaluations=4, cache_dir=tmp_path, progress=False)
    result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings)
    assert WHY in result.unconfirmed and "re-measuring it failed" in result.unconfirmed
    assert result.tuned_seconds == result.default_seconds
    assert result.params == default_params(nest.mdh, OPENMP_CAPS)
    assert result.to_report()["unconfirmed"] == result.unconfirmed
    log = [json.loads(line) for line in Path(str(result.log_path)).read_text().splitlines()]
    assert log[-1]["event"] == "result" and log[-1]["unconfirmed"] == result.unconfirmed
    # not cached: the next run tunes again instead of reporting the unchecked default from the cache
    again = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings)
    assert again.from_cache is False


def test_the_remark_says_unconfirmed_and_prints_no_speedup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str],
                                                           failing_confirmation: None) -> None:
    (tmp_path / "in.c").write_text(MATMUL)
    monkeypatch.chdir(tmp_path)
    status = main(["in.c", "-o", "out.c", "--all-nests", "--tune-evals", "4", "--cache-dir", "cache",
                   "--report", "r.json", "-DM=24", "-DN=32", "-DK=16"])
    err = capsys.readouterr().err
    assert status == 0, err
    remark = next(line for line in err.splitlines() if "remark: tuned (" in line)
    assert "default kept" in remark and "unconfirmed" in remark and WHY in remark
    assert "over the default" not in err
    tuning = json.loads((tmp_path / "r.json").read_text())["nests"][0]["tuning"]
    assert WHY in tuning["unconfirmed"] and tuning["tuned_seconds"] == tuning["default_seconds"]
