"""Per call: the CUDA program's own kernel time (``MDPOLY_PROFILE=calls``) beside Nsight Compute's.

    python benchmarks/profile_ncu.py PREPARED OUT.json [--only a,b] [--reps 20]

``PREPARED`` is a directory of ``benchmarks/gpu.py prepare`` (or ``scripts/gpu_variants.py``). Each CUDA
program is built as ``gpu.py run`` builds it, run once with ``MDPOLY_PROFILE=calls`` (one line per
call: the kernels' device time between the gated events, ``mdpoly.backends.cuda_host``) and once
under ``ncu`` (``gpu__time_duration`` of every launch, clocks and caches left alone), and the two are
paired call by call (ncu's launches summed per call). Written per program: both series, their
medians over the timed calls (the first call, which builds the kernels, apart), the first call of
each, and the ratio profile / ncu. This is what the tuner reads (``mdp_cu_last``: the median of
the timed calls) against what the benchmark tables report.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu

CALL_LINE = re.compile(r"^mdpoly-profile-call: (\S+) call=(\d+) kernel_ms=([0-9.eE+-]+) transfer_ms=\S+ gated=(\d)"
                       r"(?: raw_ms=([0-9.eE+-]+) launches=(\d+))?$", re.MULTILINE)
FLOOR_LINE = re.compile(r"^mdpoly-profile-floor: gated=(\d) floor1_ms=(\S+) floor2_ms=(\S+) empty_ms=(\S+)$", re.MULTILINE)


def ncu_launches(ncu: str, exe: Path, env: dict[str, str], deadline: gpu.Deadline) -> list[float]:
    """``gpu__time_duration`` of every launch in order, in milliseconds."""
    cmd = [ncu, "--metrics", gpu.NCU_METRIC, "--clock-control", "none", "--cache-control", "none", "--csv",
           "--print-units", "base", str(exe)]
    lines = gpu.sh(cmd, deadline, env).stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"') and "Metric Value" in line)
    out = []
    for row in csv.DictReader([ln for ln in lines[start:] if ln.startswith('"')]):
        if row.get("Metric Name") == gpu.NCU_METRIC:
            out.append(float(row["Metric Value"].replace(",", "")) * gpu.NCU_UNITS[row.get("Metric Unit", "nsecond")])
    return out


def measure(entry: dict[str, Any], root: Path, flags: tuple[list[str], list[str]], ncu: str, reps: int,
            deadline: gpu.Deadline) -> dict[str, Any]:
    src = root / entry["generated"]["cuda"]
    exe = root / "build" / f"{entry['workload']}_pn"
    gpu.build(src, exe, entry["sizes"], reps, flags[0], flags[1], deadline)
    env = dict(os.environ, MDPOLY_CACHE_DIR=str(root / "build" / "cache"))
    proc = gpu.sh([str(exe)], deadline, dict(env, MDPOLY_PROFILE="calls"))
    found = CALL_LINE.findall(proc.stderr)
    calls = [(float(k), int(g)) for _, _, k, g, _, _ in found]
    raw = [float(r) if r else float(k) for _, _, k, _, r, _ in found]
    floor = FLOOR_LINE.search(proc.stderr)
    launches = ncu_launches(ncu, exe, {k: v for k, v in env.items() if k != "MDPOLY_PROFILE"}, deadline)
    per = len(launches) // max(1, len(calls))
    ncu_calls = [sum(launches[i * per:(i + 1) * per]) for i in range(len(calls))]
    prof = [k for k, _ in calls]
    med_p, med_n = statistics.median(prof[1:]), statistics.median(ncu_calls[1:])
    return {"workload": entry["workload"], "calls": len(calls), "kernels_per_call": per,
            "gated": all(g for _, g in calls), "profile_ms": prof, "ncu_ms": ncu_calls,
            "profile_median_ms": med_p, "ncu_median_ms": med_n, "ratio": med_p / med_n,
            "profile_mean_all_ms": statistics.mean(prof), "ncu_mean_all_ms": statistics.mean(ncu_calls),
            "profile_first_ms": prof[0], "ncu_first_ms": ncu_calls[0],
            "raw_ms": raw, "raw_median_ms": statistics.median(raw[1:]), "raw_ratio": statistics.median(raw[1:]) / med_n,
            "floor": dict(zip(("gated", "floor1_ms", "floor2_ms", "empty_ms"), map(float, floor.groups()))) if floor else None}


def empty_kernel_ms(ncu: str, exe: Path, env: dict[str, str], deadline: gpu.Deadline) -> list[float]:
    """ncu's ``gpu__time_duration`` of the profile's calibration kernel (``mdp_cu_empty``), in ms."""
    cmd = [ncu, "-k", "mdp_cu_empty", "--metrics", gpu.NCU_METRIC, "--clock-control", "none", "--cache-control", "none",
           "--csv", "--print-units", "base", str(exe)]
    lines = gpu.sh(cmd, deadline, dict(env, MDPOLY_PROFILE="1")).stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"') and "Metric Value" in line)
    return [float(r["Metric Value"].replace(",", "")) * gpu.NCU_UNITS[r.get("Metric Unit", "nsecond")]
            for r in csv.DictReader([ln for ln in lines[start:] if ln.startswith('"')]) if r.get("Metric Name") == gpu.NCU_METRIC]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("root", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--only", default="")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--budget", type=float, default=120.0)
    a = p.parse_args(argv)
    manifest = json.loads((a.root / "manifest.json").read_text())
    (a.root / "build").mkdir(exist_ok=True)
    cuda, ncu = gpu.find_cuda(), gpu.find_ncu()
    if cuda is None or ncu is None:
        print("no CUDA toolkit or ncu", file=sys.stderr)
        return 1
    deadline = gpu.Deadline(a.budget, 60.0)
    only = set(filter(None, a.only.split(",")))
    rows = []
    for entry in manifest["workloads"]:
        if (only and entry["workload"] not in only) or "cuda" not in entry.get("generated", {}):
            continue
        try:
            row = measure(entry, a.root, (cuda["include"], cuda["link"]), ncu, a.reps, deadline)
        except (gpu.StepError, StopIteration, ValueError, ZeroDivisionError, statistics.StatisticsError) as exc:
            row = {"workload": entry["workload"], "error": str(exc)[-500:]}
        if not rows and "ratio" in row:   # once: the calibration kernel's own duration by ncu
            exe = a.root / "build" / f"{entry['workload']}_pn"
            try:
                empty = empty_kernel_ms(ncu, exe, dict(os.environ, MDPOLY_CACHE_DIR=str(a.root / "build" / "cache")), deadline)
                row["ncu_empty_ms"] = statistics.median(empty)
                print(f"ncu: the calibration kernel {statistics.median(empty):.6f} ms (median of {len(empty)})",
                      file=sys.stderr)
            except (gpu.StepError, StopIteration, statistics.StatisticsError) as exc:
                row["ncu_empty_error"] = str(exc)[-300:]
        rows.append(row)
        shown = (f"profile {row['profile_median_ms']:.4f} ms (raw {row['raw_median_ms']:.4f}), ncu "
                 f"{row['ncu_median_ms']:.4f} ms, ratio {row['ratio']:.3f} (raw {row['raw_ratio']:.3f}), floor {row['floor']}; "
                 f"first call {row['profile_first_ms']:.4f} / {row['ncu_first_ms']:.4f}" if "ratio" in row else row["error"])
        print(f"[{entry['workload']}] {shown}", file=sys.stderr, flush=True)
    a.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
