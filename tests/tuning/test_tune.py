"""Tuning end to end: a small budget gives correct code; broken candidates are discarded."""

import json
import subprocess
import sys
from pathlib import Path

from test_space import MATMUL, SYMBOLIC

from mdpoly.backends.entry import entry_function
from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.lower import check_plan, lower
from mdpoly.tuning.evaluate import ENTRY
from mdpoly.tuning.tune import TuneSettings, tune_nest

REPO = Path(__file__).resolve().parents[2]
MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


def _cc(src: Path, exe: Path) -> str:
    subprocess.run(["cc", "-O2", "-fopenmp", str(src), "-o", str(exe), "-lm"], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


def test_cli_tunes_with_small_budget_and_caches(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "MDPOLY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    src = REPO / "c_examples" / "matmul.c"
    # --all-nests: matmul.c's default sizes (240,000 operations) are too small for the cost model
    cmd = [*MDPOLY, str(src), "-o", str(tmp_path / "out.c"), "--tune-evals", "4", "--all-nests",
           "--report", str(tmp_path / "r.json")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "remark: tuned (" in proc.stderr
    nest = json.loads((tmp_path / "r.json").read_text())["nests"][0]
    t = nest["tuning"]
    assert t["from_cache"] is False and 1 <= t["evaluations"] <= 4 and t["technique"] == "auc_bandit"
    assert t["tuned_seconds"] <= t["default_seconds"]
    assert _cc(tmp_path / "out.c", tmp_path / "tuned") == _cc(src, tmp_path / "orig")
    log = [json.loads(line) for line in Path(t["log"]).read_text().splitlines()]
    assert log[0]["event"] == "start" and any(r["event"] == "candidate" for r in log)

    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "from the tuning cache" in proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["nests"][0]["tuning"]["from_cache"] is True
    proc = subprocess.run([*cmd, "--no-tune"], env=env, capture_output=True, text=True, timeout=300)
    assert json.loads((tmp_path / "r.json").read_text())["nests"][0]["tuning"] is None


def test_unknown_size_is_not_tuned(tmp_path):
    (tmp_path / "in.c").write_text(SYMBOLIC)
    env = {"PATH": "/usr/bin:/bin", "MDPOLY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([*MDPOLY, "in.c", "-o", "out.c", "--all-nests", "--tune-evals", "2"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "not tuned: size of 'n' unknown (use --size n=VALUE)" in proc.stderr


CRASH = "void %s(void **args) { *(volatile int *)0 = 1; }\n" % ENTRY
WRONG = "#include <string.h>\nvoid %s(void **args) { }\n" % ENTRY


def test_broken_candidates_are_discarded(analyze, tmp_path):
    nest = analyze(MATMUL, M=24, N=32, K=16)
    seen: list[str] = []

    def render(params):
        seen.append(params.describe(nest.mdh))
        k = len(seen)
        if k == 2:
            return CRASH
        if k == 3:
            return WRONG
        if k == 4:
            return "this is not C"
        return _real(params)

    def _real(params):
        plan = lower(nest.mdh, params)
        check_plan(plan)
        code = OpenMPBackend().render(plan)
        return code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)

    settings = TuneSettings(seconds=None, evaluations=8, cache_dir=tmp_path, progress=False)
    result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings, render=render)
    assert result.tuned_seconds < float("inf") and result.evaluations >= 4
    log = [json.loads(line) for line in Path(result.log_path).read_text().splitlines()]
    kinds = [r["status"] for r in log if r["event"] == "candidate"]
    assert kinds[0] == "ok" and {"crash", "wrong", "build"} <= set(kinds)
    wrong = next(r for r in log if r.get("status") == "wrong")
    assert "'C' differs" in wrong["why"]
