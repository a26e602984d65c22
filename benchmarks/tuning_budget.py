#!/usr/bin/env python3
"""What a tuning budget buys (issue 13 item 5), and the tuner on a large shape (item 4): run on a GPU machine.

    python3 benchmarks/tuning_budget.py run --out DIR [--targets cuda,opencl] [--shapes sgemm_1024,mcc_vgg16_n1]
                                            [--budgets 12,36,108] [--deadline 420]

For each target, shape and budget (in that order, shortest budget first): ``mdpoly KERNEL.c
--target T --tune-time B --retune`` with the shape's sizes as ``-D`` and a fresh tuning cache, as a
user would tune it; from its ``--report`` and tuning log: the best kernel time found (the tuner's
confirmed median, from paired re-measurements against the default), the default configuration's
kernel time, evaluations, rejected candidates by kind (``launch``: configurations the device
cannot launch), what the reference was (the CPU original, or the default on the device
cross-checked against it) and the best time found over the run (the tuner's improvement trace).
Writes ``DIR/tuning_budget.json``, ``DIR/tuning_budget.md`` (device, driver and budgets in the
header) and ``DIR/tuning_logs.tar.gz`` (every run's tuning log). A run that would end after ``--deadline`` seconds is skipped and recorded as such.

Kernel times are the host code's own profile (CUDA events / OpenCL profiling events) of warm
calls with the inputs held on the device, as the tuner measures every candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
_VGG = {"P": 222, "Q": 222, "K": 64, "C": 3, "R": 3, "S": 3, "STR": 1, "IH": 224, "IW": 224}
_RESNET = {"P": 112, "Q": 112, "K": 64, "C": 3, "R": 7, "S": 7, "STR": 2, "IH": 230, "IW": 230}
#: name -> (kernel file, sizes); the sizes of benchmarks/gpu.py's workloads of the same name
SHAPES: dict[str, tuple[str, dict[str, int]]] = {
    "sgemm_128": ("sgemm.c", {"M": 128, "N": 128, "K": 128}),
    "sgemm_1024": ("sgemm.c", {"M": 1024, "N": 1024, "K": 1024}),
    "mm_16x4096x25088": ("sgemm.c", {"M": 16, "N": 4096, "K": 25088}),
    "mcc_vgg16_n1": ("mcc_strided.c", {"N": 1, **_VGG}),
    "mcc_resnet50_n1": ("mcc_strided.c", {"N": 1, **_RESNET}),
}
#: seconds a run takes beyond its budget (start, reference, confirmation, code generation), for the deadline
OVERHEAD_SECONDS = 25.0


def machine() -> dict[str, str]:
    out = {"host": platform.node(), "python": platform.python_version()}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False)
        out["gpu"] = smi.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out["gpu"] = "unknown (no nvidia-smi)"
    out["cpu_count"] = str(os.cpu_count())
    return out


def tune_once(target: str, shape: str, budget: float, work: Path) -> dict[str, Any]:
    kernel, sizes = SHAPES[shape]
    tag = f"{shape}.{target}.{budget:g}"
    report, out_c, cache = work / f"{tag}.report.json", work / f"{tag}.out.c", work / f"cache-{tag}"
    cmd = [sys.executable, "-m", "mdpoly", str(KERNELS / kernel), "-o", str(out_c), "--target", target,
           "--tune-time", f"{budget:g}", "--retune", "--cache-dir", str(cache), "--report", str(report),
           *(f"-D{k}={v}" for k, v in sizes.items())]
    row: dict[str, Any] = {"shape": shape, "target": target, "budget_s": budget, "sizes": sizes}
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    row["wall_s"] = round(time.perf_counter() - start, 1)
    row["remarks"] = [line.strip() for line in proc.stderr.splitlines() if "tuned" in line][:4]
    if proc.returncode != 0:
        row["error"] = f"mdpoly exit {proc.returncode}: {proc.stderr.strip()[-800:]}"
    try:
        rep = json.loads(report.read_text())
    except (OSError, ValueError) as exc:
        row.setdefault("error", f"no report: {exc}")
        return row
    tuning = next((n["tuning"] for n in rep.get("nests", []) if n.get("tuning")), None)
    if tuning is None:
        row.setdefault("error", "the nest was not tuned (see remarks)")
        return row
    row.update(tuned_s=tuning.get("tuned_seconds"), default_s=tuning.get("default_seconds"),
               evaluations=tuning.get("evaluations"), tuning_s=tuning.get("tuning_seconds"),
               params=tuning.get("params"), reference=tuning.get("reference", "the CPU original"),
               rejected=tuning.get("rejected", {}))
    log = tuning.get("log")
    if log and Path(log).exists():
        recs = [json.loads(line) for line in Path(log).read_text().splitlines()]
        res = next((r for r in recs if r.get("event") == "result"), {})
        row["improvements"] = res.get("improvements")
        row["device"] = recs[0].get("device") if recs else None
        cands = [r for r in recs if r.get("event") == "candidate"]
        row["statuses"] = {s: sum(1 for r in cands if r["status"] == s) for s in sorted({r["status"] for r in cands})}
        cal = next((r for r in recs if r.get("event") == "calibrate"), None)
        if cal:
            row["calibrated_timeout_s"] = round(cal["timeout"], 2)
            row["repeats"] = cal["repeats"]
        ref = next((r for r in recs if r.get("event") == "reference"), {})
        row["reference_source"] = ref.get("source")
        check = next((r for r in recs if r.get("event") == "cross-check"), None)
        if check:
            row["cross_check"] = check.get("status")
        whys = [r.get("why") for r in cands if r["status"] in ("launch", "crash", "timeout") and r.get("why")]
        row["failure_examples"] = [w[:300] for w in whys[:3]]
    return row


def _ms(s: Any) -> str:
    return "-" if s in (None, float("inf")) else f"{float(s) * 1e3:.4f}"


def markdown(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [f"# Tuning budget: best kernel time found vs budget ({result['date']})", "",
             f"Device: {m.get('gpu')} (name, driver, memory); host {m.get('host')}, {m.get('cpu_count')} CPUs, "
             f"Python {m.get('python')}. mdpoly commit {result.get('commit', '?')}.",
             f"Budgets (s): {', '.join(f'{b:g}' for b in result['budgets'])}, one `mdpoly --tune-time B --retune` "
             "run each (fresh cache), shortest first, one run at a time on the GPU.",
             "Kernel times: the host code's own profile (CUDA events / OpenCL profiling events) of warm calls with "
             "the inputs held on the device; 'tuned' is the tuner's confirmed median (paired re-measurements "
             "against the default). Speedup = default / tuned (higher is better).", "",
             "| shape | target | budget s | tuned kernel ms | default kernel ms | speedup | evaluations | "
             "rejected (by kind) | reference | wall s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["rows"]:
        if "tuned_s" not in r:
            lines.append(f"| {r['shape']} | {r['target']} | {r['budget_s']:g} | - | - | - | - | - | "
                         f"{r.get('error', r.get('skipped', ''))[:200]} | {r.get('wall_s', '-')} |")
            continue
        sp = f"{r['default_s'] / r['tuned_s']:.2f}x" if r.get("default_s") and r.get("tuned_s") else "-"
        rej = ", ".join(f"{k} {v}" for k, v in (r.get("rejected") or {}).items()) or "none"
        ref = r.get("reference") or "the CPU original"
        lines.append(f"| {r['shape']} | {r['target']} | {r['budget_s']:g} | {_ms(r['tuned_s'])} | "
                     f"{_ms(r['default_s'])} | {sp} | {r.get('evaluations')} | {rej} | {ref} | {r.get('wall_s')} |")
    lines += ["", "Best kernel time found during each run (seconds into the run: ms), from the tuning log:", ""]
    for r in result["rows"]:
        if r.get("improvements"):
            trace = "; ".join(f"{t:.0f} s: {s * 1e3:.4f}" for t, s in r["improvements"])
            lines.append(f"- {r['shape']} / {r['target']} / {r['budget_s']:g} s: {trace}")
    lines += ["", "Parameters chosen:", ""]
    for r in result["rows"]:
        if r.get("params"):
            lines.append(f"- {r['shape']} / {r['target']} / {r['budget_s']:g} s: {r['params']}")
    return "\n".join(lines) + "\n"


def run(out: Path, targets: list[str], shapes: list[str], budgets: list[float], deadline: float) -> int:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    commit = os.environ.get("MDPOLY_COMMIT") or subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        check=False).stdout.strip() or "?"
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "machine": machine(),
                              "budgets": budgets, "commit": commit, "rows": []}
    print(f"machine: {result['machine']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="tuning-budget-") as tmp:
        for target in targets:
            for shape in shapes:
                for budget in sorted(budgets):
                    if time.perf_counter() - t0 + budget + OVERHEAD_SECONDS > deadline:
                        row = {"shape": shape, "target": target, "budget_s": budget,
                               "skipped": f"skipped: would end after the {deadline:g} s deadline"}
                    else:
                        row = tune_once(target, shape, budget, Path(tmp))
                    result["rows"].append(row)
                    print(json.dumps({k: v for k, v in row.items() if k not in ("improvements", "sizes")}),
                          flush=True)
                    (out / "tuning_budget.json").write_text(json.dumps(result, indent=1))
                    (out / "tuning_budget.md").write_text(markdown(result))
        with tarfile.open(out / "tuning_logs.tar.gz", "w:gz") as tar:   # every run's tuning log
            for log in sorted(Path(tmp).glob("cache-*/logs/*.jsonl")):
                tar.add(log, arcname=f"{log.parent.parent.name}/{log.name}")
    print(markdown(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "tuning_budget_out")))
    r.add_argument("--targets", default="cuda")
    r.add_argument("--shapes", default="sgemm_1024,mcc_vgg16_n1")
    r.add_argument("--budgets", default="12,36,108")
    r.add_argument("--deadline", type=float, default=420.0, help="seconds the whole run may take")
    ns = p.parse_args(argv)
    return run(ns.out, ns.targets.split(","), ns.shapes.split(","), [float(b) for b in ns.budgets.split(",")],
               ns.deadline)


if __name__ == "__main__":
    sys.exit(main())
