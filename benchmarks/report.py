"""Benchmark results -> ``results/cpu_<date>.md`` and ``.json``, plus the machine description."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
from variants import CC, OPT_FLAGS, Measurement

VARIANT_TITLES = {
    "seq": "gcc -O3 seq",
    "omp_for": "omp parallel for",
    "numpy": "numpy",
    "mdpoly": "mdpoly",
    "mdpoly_tuned": "mdpoly tuned",
    "opencl": "mdpoly OpenCL",
    "opencl_tuned": "mdpoly OpenCL tuned",
}

#: Columns shown only when some row measured them (``run.py --opencl``).
OPTIONAL_VARIANTS = ("opencl", "opencl_tuned")


def machine_description() -> dict[str, str]:
    """CPU model, core count, compiler and numpy versions of this machine."""
    model = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        cc_version = subprocess.run([CC, "--version"], capture_output=True, text=True,
                                    check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        cc_version = "unknown"
    return {
        "cpu": model,
        "logical_cpus": str(os.cpu_count()),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset (all cores)"),
        "compiler": cc_version,
        "c_flags": " ".join(OPT_FLAGS),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "os": platform.platform(),
        "load_average_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def _cell(m: Measurement | None, flops: float) -> str:
    if m is None:
        return "n/a"
    if m.status != "ok" or m.seconds is None:
        detail = m.detail if len(m.detail) <= 120 else m.detail[:117] + "..."
        return f"{m.status}: {detail}".replace("|", "/")
    return f"{m.seconds * 1e3:.3f} ms ({flops / m.seconds / 1e9:.2f} GFLOP/s)"


def _ratio(base: Measurement | None, mdpoly: Measurement | None) -> str:
    if not base or not mdpoly or base.status != "ok" or mdpoly.status != "ok" or not mdpoly.seconds or not base.seconds:
        return "–"
    return f"{base.seconds / mdpoly.seconds:.2f}x"


def write_results(rows: Sequence[dict], machine: dict[str, str], out_dir: Path, stem: str, mode: str) -> tuple[Path, Path]:
    """Write the markdown table and the JSON record; return both paths.

    ``rows`` hold ``workload``, ``sizes``, ``flops`` and ``measurements`` (variant -> Measurement).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, json_path = out_dir / f"{stem}.md", out_dir / f"{stem}.json"

    lines = [f"# CPU benchmark results ({mode})", ""]
    lines += [f"- **{key}**: {value}" for key, value in machine.items()]
    lines += ["", "Median kernel time of each variant (GFLOP/s in parentheses). Ratios are speedups of "
              "mdpoly over the other variant (>1 means mdpoly is faster).", ""]
    shown = [v for v in VARIANT_TITLES
             if v not in OPTIONAL_VARIANTS or any(row["measurements"].get(v) is not None for row in rows)]
    header = ["workload", "sizes", *(VARIANT_TITLES[v] for v in shown), "mdpoly vs seq", "mdpoly vs omp for",
              "mdpoly vs numpy", "tuned vs mdpoly", "tuned vs omp for", "tuned vs numpy"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        ms: dict[str, Measurement | None] = row["measurements"]
        sizes = " ".join(f"{k}={v}" for k, v in row["sizes"].items())
        cells = [row["workload"], sizes, *(_cell(ms.get(v), row["flops"]) for v in shown),
                 _ratio(ms.get("seq"), ms.get("mdpoly")), _ratio(ms.get("omp_for"), ms.get("mdpoly")),
                 _ratio(ms.get("numpy"), ms.get("mdpoly")), _ratio(ms.get("mdpoly"), ms.get("mdpoly_tuned")),
                 _ratio(ms.get("omp_for"), ms.get("mdpoly_tuned")), _ratio(ms.get("numpy"), ms.get("mdpoly_tuned"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Notes: `omp parallel for` is the original with `#pragma omp parallel for` on the kernel's "
              "outermost loop (for `dot`, `reduction(+:s)` is added, since a plain one races); for MCC RW "
              "that loop has one iteration (N=1), as in the thesis's OpenMP baseline. numpy inputs are random, "
              "so numpy rows are not checksum-checked; C variants are checked against the sequential checksum "
              "(to 1e-3 of the outputs' magnitude, the sum of their absolute values, which each program prints: "
              "reassociated float reductions move outputs by rounding errors). Timings on a shared machine are "
              "noisy: see the load average above."]
    md_path.write_text("\n".join(lines) + "\n")

    record = {"mode": mode, "machine": machine, "rows": [
        {**{k: v for k, v in row.items() if k != "measurements"},
         "measurements": {name: (asdict(m) if m else None) for name, m in row["measurements"].items()},
         "gflops": {name: (row["flops"] / m.seconds / 1e9 if m and m.status == "ok" and m.seconds else None)
                    for name, m in row["measurements"].items()}}
        for row in rows]}
    json_path.write_text(json.dumps(record, indent=2) + "\n")
    return md_path, json_path
