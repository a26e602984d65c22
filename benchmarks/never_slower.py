"""Never-slower benchmark (issue 22): suite kernels -> speedup tables at 1, 2 and N threads, quiet and loaded.

For every kernel of ``benchmarks/kernels/suite/`` it builds the original with ``gcc -O3
-march=native`` (``seq``) and mdpoly's ``--no-tune`` output (``mdpoly``; with ``--before ROOT``
also ``before``: the same with the mdpoly checkout at ROOT, e.g. an older commit unpacked by ``git
archive``). Each thread count T runs on the first T cores (``taskset``); under ``busy`` load one
competing busy process (started here, ``yes > /dev/null``) is pinned to the last of those cores,
and ``seq`` is timed on the same cores under the same load, so each cell is "seq time / variant
time under the same conditions". Runs are interleaved (seq, mdpoly, before, seq, ...), medians
of ``--reps``. A run slower than ``--cap`` times seq (at least 2 s) is stopped there and shown as
``<x``. Checksums are compared with ``seq`` (``WRONG`` on a mismatch).

Run from the repository root::

    python benchmarks/never_slower.py --size medium --kernels durbin,trisolv,cholesky,lu,gemm
    python benchmarks/never_slower.py --size full --threads 1,2,16 --reps 3 --budget 3600   # whole suite

Writes ``benchmarks/results/never_slower_<date>_<size>[_<tag>].md`` and ``.json`` (or ``--out``).
Exit status 1 when a variant is WRONG or fails to build.

``--calibrate`` instead measures the cost model's constants (``mdpoly/cost_model.py``,
``Calibration``) with ``benchmarks/kernels/calibrate/sync_costs.c`` at each thread count, quiet
and busy: a fork/join per call, a region's step (barrier) and the sequential time, per call,
for calls of 1 to 1,000,000 elements; writes ``calibrate_<date>[_<tag>].md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite  # the kernel list, building, checksums

SIZES = {"small": ["-DSMALL"], "medium": ["-DMEDIUM"], "full": []}


def _mdpoly(src: Path, out_c: Path, report: Path, defines: list[str], root: Path) -> str:
    cmd = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())",
           str(src), "-o", str(out_c), "--report", str(report), "--no-tune", *[a for d in defines for a in ("-D", d[2:])]]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=suite.MDPOLY_TIMEOUT_S, check=False,
                          env=env, cwd=root)   # ``-c`` puts the working directory first on sys.path
    if proc.returncode != 0:
        raise RuntimeError(f"mdpoly exited {proc.returncode}: {proc.stderr[-1500:]}")
    return proc.stderr


def build_all(kernel: str, size: str, before: Path | None) -> dict[str, Path | str]:
    """Executables by variant (a string: why the variant failed to build)."""
    src = suite.KERNEL_DIR / f"{kernel}.c"
    out_dir = suite.BUILD_DIR / f"never_slower_{size}" / kernel
    out_dir.mkdir(parents=True, exist_ok=True)
    defines = SIZES[size]
    out: dict[str, Path | str] = {}
    roots = [("mdpoly", suite.REPO)] + ([("before", before)] if before is not None else [])
    try:
        suite.build(src, out_dir / "seq", defines, openmp=False)
        out["seq"] = out_dir / "seq"
    except (RuntimeError, OSError) as exc:
        return {"seq": str(exc)}
    for name, root in roots:
        try:
            _mdpoly(src, out_dir / f"{name}.c", out_dir / f"{name}.json", defines, root)
            suite.build(out_dir / f"{name}.c", out_dir / name, defines, openmp=True)
            out[name] = out_dir / name
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            out[name] = str(exc)
    return out


class Busy:
    """One competing busy process pinned to ``cpu`` while the ``with`` block runs (none: no-op)."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu, self.proc = cpu, None   # type: ignore[var-annotated]

    def __enter__(self) -> Busy:
        if self.cpu is not None:
            self.proc = subprocess.Popen(["taskset", "-c", str(self.cpu), "yes"], stdout=subprocess.DEVNULL)
            time.sleep(0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait()


def run_once(exe: Path, cpus: str, threads: int | None, timeout: float) -> suite.Output | None:
    """One run on ``cpus``; ``None`` when it ran past ``timeout`` seconds."""
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    try:
        proc = subprocess.run(["taskset", "-c", cpus, str(exe)], env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{exe} exited {proc.returncode}: {proc.stderr[-500:]}")
    return suite.parse_output(proc.stdout)


def measure_cell(exes: dict[str, Path], threads: int, busy: bool, reps: int, cap: float,
                 rtol: float) -> dict[str, Any]:
    """Medians of every variant on the first ``threads`` cores, with or without the busy process."""
    ncpu = os.cpu_count() or 1
    cpus = f"0-{min(threads, ncpu) - 1}"
    times: dict[str, list[float]] = {n: [] for n in exes}
    capped: dict[str, float] = {}
    status: dict[str, str] = {n: "ok" for n in exes}
    with Busy(min(threads, ncpu) - 1 if busy else None):
        ref = run_once(exes["seq"], cpus, None, suite.RUN_TIMEOUT_S)
        if ref is None:
            return {"error": "seq timed out"}
        limit = max(cap * ref.seconds, 2.0)
        for _ in range(reps):
            for name, exe in exes.items():
                if name in capped:
                    continue
                got = run_once(exe, cpus, None if name == "seq" else threads, limit + 1.0)
                if got is None:
                    capped[name] = limit
                    continue
                if name != "seq":
                    ok, _, detail = suite.compare(got, ref, rtol)
                    if not ok:
                        status[name] = f"WRONG: {detail}"
                times[name].append(got.seconds)
    seq = statistics.median(times["seq"])
    cell: dict[str, Any] = {"seq_s": seq}
    for name in exes:
        if name == "seq":
            continue
        if name in capped:
            cell[name] = {"status": status[name], "capped_s": capped[name], "speedup_below": seq / capped[name]}
        else:
            med = statistics.median(times[name])
            cell[name] = {"status": status[name], "median_s": med, "speedup": seq / med, "times": times[name]}
    return cell


def _fmt(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "n/a"
    if entry.get("status", "ok") != "ok":
        return "WRONG"
    if "speedup_below" in entry:
        return f"<{entry['speedup_below']:.2f}"
    return f"{entry['speedup']:.2f}"


def markdown(doc: dict[str, Any]) -> str:
    meta, rows = doc["meta"], doc["rows"]
    variants = meta["variants"]
    cols = [(t, b) for t in meta["threads"] for b in meta["loads"]]
    head = "| kernel | variant | " + " | ".join(f"T={t} {'busy' if b else 'quiet'}" for t, b in cols) + " |"
    lines = [f"# Never slower: mdpoly --no-tune vs gcc -O3 sequential ({meta['size']} sizes)", "",
             f"{meta['date']}, {meta['machine']['cpu']} ({meta['machine']['nproc']} cores), {meta['machine']['compiler']}, "
             f"commit {meta['machine']['mdpoly_commit']}. Speedup = seq median / variant median on the same T cores "
             f"under the same load (busy: one `yes` pinned to the last of them); medians of {meta['reps']} runs; "
             f"`<x`: stopped at {meta['cap']}x seq.", "", head, "|" + "---|" * (len(cols) + 2)]
    geo: dict[tuple[str, int, bool], list[float]] = {}
    for r in rows:
        for v in variants:
            cells = []
            for t, b in cols:
                cell = r["cells"].get(f"{t}_{'busy' if b else 'quiet'}", {})
                e = cell.get(v)
                cells.append(_fmt(e))
                if e and e.get("status") == "ok":
                    geo.setdefault((v, t, b), []).append(e.get("speedup", e.get("speedup_below", 0.0)))
            lines.append(f"| {r['kernel']} | {v} | " + " | ".join(cells) + " |")
    for v in variants:
        gm = [geo.get((v, t, b)) for t, b in cols]
        lines.append(f"| geomean | {v} | " + " | ".join(
            f"{math.exp(sum(map(math.log, g)) / len(g)):.2f}" if g else "n/a" for g in gm) + " |")
    worst = [(r["kernel"], v, k, e) for r in rows for k, c in r["cells"].items() for v in variants
             if (e := c.get(v)) and e.get("status") == "ok"]
    slow = [f"{k} {v} {c}: {_fmt(e)}" for k, v, c, e in worst if e.get("speedup", e.get("speedup_below", 1)) < 0.95]
    lines += ["", "Cells below 0.95x: " + ("; ".join(slow) if slow else "none"), ""]
    return "\n".join(lines)


CALIBRATE_SRC = suite.HERE / "kernels" / "calibrate" / "sync_costs.c"
CALIBRATE_POINTS = ((4000, 1), (2000, 10_000), (500, 100_000), (100, 1_000_000))


def calibrate(threads: list[int], loads: list[bool], out: Path) -> int:
    """The synchronization costs as a markdown table (see the module docstring)."""
    exe = suite.BUILD_DIR / "sync_costs"
    exe.parent.mkdir(parents=True, exist_ok=True)
    suite._step([suite.CC, *suite.OPT_FLAGS, "-fopenmp", str(CALIBRATE_SRC), "-o", str(exe)], 300)
    ncpu = os.cpu_count() or 1
    lines = ["# Synchronization costs (sync_costs.c)", "", f"{suite.machine()['cpu']}, {ncpu} cores", "",
             "| threads | load | elements | fork/join us | region step us | sequential us | seq ns/element |",
             "|---|---|---|---|---|---|---|"]
    for t in threads:
        cpus = f"0-{min(t, ncpu) - 1}"
        for b in loads:
            with Busy(min(t, ncpu) - 1 if b else None):
                for calls, n in CALIBRATE_POINTS:
                    env = {**os.environ, "OMP_NUM_THREADS": str(t)}
                    text = subprocess.run(["taskset", "-c", cpus, str(exe), str(calls), str(n)], env=env,
                                          capture_output=True, text=True, timeout=600, check=True).stdout.split()
                    v = dict(zip(text[0::2], text[1::2]))
                    lines.append(f"| {t} | {'busy' if b else 'quiet'} | {n} | {v['forkjoin_us']} | "
                                 f"{v['region_step_us']} | {v['seq_us']} | {v['seq_ns_per_element']} |")
                    print(lines[-1], file=sys.stderr, flush=True)
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(out.with_suffix(".md").read_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="medium", help="kernel sizes (-DSMALL, -DMEDIUM or the full size)")
    ap.add_argument("--threads", default=f"1,2,{os.cpu_count() or 1}", help="comma-separated thread counts (default 1,2,nproc)")
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--loads", default="quiet,busy", help="quiet, busy or both (default quiet,busy)")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per variant and cell (median; default 3)")
    ap.add_argument("--cap", type=float, default=20.0, help="stop a run at this many times seq (default 20)")
    ap.add_argument("--budget", type=float, default=None, help="seconds; kernels not started by then are skipped")
    ap.add_argument("--before", help="root of another mdpoly checkout to compare (variant 'before')")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--tag", default="", help="suffix of the output file names")
    ap.add_argument("--out", help="output path without extension")
    ap.add_argument("--calibrate", action="store_true", help="measure the synchronization costs instead")
    args = ap.parse_args(argv)
    kernels = args.kernels.split(",") if args.kernels else [k.name for k in suite.KERNELS]
    threads = [int(t) for t in args.threads.split(",")]
    loads = [b == "busy" for b in args.loads.split(",")]
    before = Path(args.before).resolve() if args.before else None
    if args.calibrate:
        date = datetime.date.today().isoformat()
        return calibrate(threads, loads, Path(args.out) if args.out else
                         suite.RESULTS_DIR / f"calibrate_{date}{'_' + args.tag if args.tag else ''}")
    variants = ["mdpoly"] + (["before"] if before else [])
    t0 = time.monotonic()
    rows: list[dict[str, Any]] = []
    failed = False
    for k in kernels:
        if args.budget is not None and time.monotonic() - t0 > args.budget:
            rows.append({"kernel": k, "cells": {}, "skipped": "time budget"})
            continue
        built = build_all(k, args.size, before)
        errors = {n: e for n, e in built.items() if isinstance(e, str)}
        exes = {n: e for n, e in built.items() if isinstance(e, Path)}
        row: dict[str, Any] = {"kernel": k, "cells": {}, "build_errors": errors}
        failed |= bool(errors)
        if "seq" in exes:
            for t in threads:
                for b in loads:
                    cell = measure_cell(exes, t, b, args.reps, args.cap, args.rtol)
                    row["cells"][f"{t}_{'busy' if b else 'quiet'}"] = cell
                    failed |= any(isinstance(e, dict) and e.get("status", "ok") != "ok" for e in cell.values())
                    print(f"{k} T={t} {'busy' if b else 'quiet'}: " + ", ".join(
                        f"{v} {_fmt(cell.get(v))}" for v in variants), file=sys.stderr, flush=True)
        rows.append(row)
    date = datetime.date.today().isoformat()
    meta = {"date": date, "size": args.size, "threads": threads, "loads": loads, "reps": args.reps, "cap": args.cap,
            "variants": variants, "machine": suite.machine(), "before": str(before) if before else None}
    doc = {"meta": meta, "rows": rows}
    out = Path(args.out) if args.out else suite.RESULTS_DIR / f"never_slower_{date}_{args.size}{'_' + args.tag if args.tag else ''}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(doc))
    print(out.with_suffix(".md").read_text())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
