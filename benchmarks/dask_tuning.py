"""Dask tuning with 1 vs 2 workers: the time to reach the same best (issue 14, item 3).

    python benchmarks/dask_tuning.py [--evals 24] [--sizes M=96,N=96,K=96] [--kernel matmul]
                                     [--out benchmarks/results/dask_<date>.md]

Tunes one OpenMP nest of ``c_examples/`` (``--tune-technique exhaustive``, so every run tries the
same configurations in the same order: the local refinement around the default, then the space
in index order) on a ``distributed.LocalCluster`` of 1 and then 2 worker processes (one thread
each, each declaring ``CPU=1``), with the same evaluation budget, cache off. For each run: the
whole tuning time, the evaluations, the best configuration and its time, and the seconds until
the run first measured the configuration that was best at the end of the 1-worker run ("same
best"). Every candidate also runs with ``OMP_NUM_THREADS=1``, so that two concurrent candidates
do not each ask for every core. On a 2-core machine shared with other work both workers share
those cores with the client (which lowers and renders the candidates and compares outputs), so
the speedup shown is a lower bound of what two machines give.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _nest(kernel: str, sizes: dict[str, int]):
    from mdpoly.frontend import analyze_file
    from mdpoly.options import Options
    opts = Options(defines=tuple(f"{k}={v}" for k, v in sizes.items()))
    analysis = analyze_file(str(REPO / "c_examples" / f"{kernel}.c"), opts)
    return next(n for n in analysis.nests if n.mdh is not None)


def _run(nest, workers: int, evals: int) -> dict:
    from distributed import LocalCluster

    from mdpoly.backends.openmp import OpenMPBackend
    from mdpoly.tuning.tune import TuneSettings, tune_nest

    with tempfile.TemporaryDirectory() as cache, \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, resources={"CPU": 1},
                         dashboard_address=":0", silence_logs=40) as cluster:
        settings = TuneSettings(technique="exhaustive", seconds=None, evaluations=evals, cache_dir=Path(cache),
                                progress=False, workers=cluster.scheduler_address)
        start = time.perf_counter()
        result = tune_nest(nest.mdh, nest.reference_c, {}, OpenMPBackend(), settings)
        wall = time.perf_counter() - start
        log = [json.loads(line) for line in Path(result.log_path).read_text().splitlines()]
    t0 = log[0]["t"]
    candidates = [(r["t"] - t0, r["params"], r["seconds"], r.get("worker")) for r in log if r["event"] == "candidate"]
    return {"workers": workers, "wall": wall, "tuning_seconds": result.tuning_seconds,
            "evaluations": result.evaluations, "best": result.description, "best_seconds": result.tuned_seconds,
            "default_seconds": result.default_seconds, "candidates": candidates, "by_worker": dict(result.workers)}


def _first_seen(run: dict, params: str) -> float | None:
    return next((t for t, p, s, _ in run["candidates"] if p == params and s is not None), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="matmul")
    ap.add_argument("--sizes", default="M=96,N=96,K=96")
    ap.add_argument("--evals", type=int, default=24)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / f"dask_{datetime.date.today()}.md"))
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"   # inherited by the workers' candidate processes
    sizes = {k: int(v) for k, v in (item.split("=") for item in args.sizes.split(","))}
    nest = _nest(args.kernel, sizes)
    runs = [_run(nest, w, args.evals) for w in (1, 2)]
    target = runs[0]["best"]
    lines = [f"# Dask tuning, 1 vs 2 workers ({datetime.date.today()})", "",
             f"`python benchmarks/dask_tuning.py --kernel {args.kernel} --sizes {args.sizes} --evals {args.evals}`: "
             f"{args.kernel} at {args.sizes}, `--tune-technique exhaustive`, {args.evals} evaluations, "
             "LocalCluster worker processes with one thread and `CPU=1` each, candidates with "
             "`OMP_NUM_THREADS=1`. Machine: "
             f"{os.cpu_count()} cores, shared with other engineers' builds and tests while this ran "
             "(contended: the client and both workers share the same cores, so times are noisy and "
             "2 workers cannot reach 2x here).", "",
             f"'same best' = the 1-worker run's final best: `{target}`.", "",
             "| workers | tuning wall s | evaluations | evals/s | s to first measure the same best | "
             "best found | best ms | default ms | candidates per worker |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in runs:
        seen = _first_seen(r, target)
        lines.append(f"| {r['workers']} | {r['wall']:.1f} | {r['evaluations']} | {r['evaluations'] / r['wall']:.2f} | "
                     f"{'not reached' if seen is None else f'{seen:.1f}'} | `{r['best']}` | "
                     f"{r['best_seconds'] * 1e3:.3f} | {(r['default_seconds'] or 0) * 1e3:.3f} | "
                     f"{', '.join(f'{n}' for _, n in sorted(r['by_worker'].items()))} |")
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
