#!/usr/bin/env python3
"""sgemm and MCC on 1 and 2 GPUs with ``mdpoly --devices all`` (issue 15): kernel and whole-call times.

Two steps, so that the GPU machine needs no mdpoly::

    scripts/multigpu_bench.py prepare DIR   # here: for sgemm 8192^3 and MCC PC (4096^2 input,
        # 5x5 filter) and each target (cuda, opencl), mdpoly's code without --devices
        # (plain.c: today's one-device code) and with --devices all (dev.c), untuned
    scripts/multigpu_bench.py run DIR       # there (python3 stdlib, cc, CUDA toolkit + driver):
        # builds each, runs plain, dev with MDPOLY_DEVICES=1 and =2 (and, for sgemm on CUDA,
        # unequal shares MDPOLY_DEVICE_SHARES), all with MDPOLY_PROFILE=1; prints a markdown
        # table and writes DIR/results.json

Whole call: the benchmark's median host time of one call of the kernel function (copies in,
kernels, copies back, gather). Kernel: the device time of the kernels per call from the
``mdpoly-profile`` lines (OpenCL profiling events / CUDA events); with two devices the slower
slot's (the slots run concurrently). Speedup: 1 device / 2 devices; efficiency: speedup / 2.
Checksums of every run are shown: all must agree (the split does not change any output point's
order of operations).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = {
    "sgemm": ("sgemm.c", {"M": 8192, "N": 8192, "K": 8192}),
    "mcc_pc": ("mcc.c", {"N": 1, "P": 4092, "Q": 4092, "K": 1, "C": 1, "R": 5, "S": 5}),
}
TARGETS = ("cuda", "opencl")


def prepare(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    kernels = REPO / "benchmarks" / "kernels"
    shutil.copy(kernels / "bench_common.h", out / "bench_common.h")
    for name, (src, defines) in WORKLOADS.items():
        shutil.copy(kernels / src, out / src)
        for target in TARGETS:
            for variant, extra in (("plain", []), ("dev", ["--devices", "all"])):
                cmd = [sys.executable, "-m", "mdpoly", str(kernels / src), "-o", str(out / f"{name}-{target}-{variant}.c"),
                       "--target", target, "--no-tune", "-q", "-I", str(kernels),
                       *[f"-D{k}={v}" for k, v in defines.items()], *extra]
                subprocess.run(cmd, check=True, cwd=REPO)
    (out / "workloads.json").write_text(json.dumps(WORKLOADS))
    print(f"prepared {len(WORKLOADS) * len(TARGETS) * 2} programs in {out}")
    return 0


def _sh(cmd: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> tuple[int, str, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout}s"


def _profile(stdout: str, stderr: str) -> dict[str, object]:
    out: dict[str, object] = {}
    m = re.search(r"median_s ([0-9.eE+-]+)", stdout)
    out["call_ms"] = float(m.group(1)) * 1e3 if m else None
    m = re.search(r"checksum (\S+)", stdout)
    out["checksum"] = m.group(1) if m else None
    slots = []
    for m in re.finditer(r"mdpoly-profile: (\S+) calls=(\d+) kernel_ms=([0-9.]+) transfer_ms=([0-9.]+)", stderr):
        calls = int(m.group(2))
        slots.append({"nest": m.group(1), "kernel_ms": float(m.group(3)) / calls,
                      "transfer_ms": float(m.group(4)) / calls})
    out["slots"] = slots
    out["kernel_ms"] = max((s["kernel_ms"] for s in slots), default=None)
    return out


def run(out: Path) -> int:
    sys.path.insert(0, str(REPO / "scripts"))
    from gpu_check import find_cuda, setup_opencl_icd

    workloads = json.loads((out / "workloads.json").read_text())
    cuda = find_cuda()
    setup_opencl_icd(out)
    flags = {"cuda": (cuda["include"] + cuda["link"]) if cuda else [],
             "opencl": ((cuda["include"] + [f"-L{cuda['root'][0]}/lib64"]) if cuda else []) + ["-lOpenCL"]}
    smi = _sh(["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version", "--format=csv,noheader"])[1]
    print("GPUs:\n" + smi)
    results: list[dict[str, object]] = []
    cc = os.environ.get("CC", "cc")
    for name, (_, defines) in workloads.items():
        dflags = [f"-D{k}={v}" for k, v in defines.items()]
        for target in TARGETS:
            runs = [("plain", "plain", {}), ("dev", "1 device", {"MDPOLY_DEVICES": "1"}),
                    ("dev", "2 devices", {"MDPOLY_DEVICES": "2"})]
            if name == "sgemm" and target == "cuda":
                runs += [("dev", "GPU 0 listed twice", {"MDPOLY_DEVICES": "0,0"}),
                         ("dev", "2 devices, shares 3:5", {"MDPOLY_DEVICES": "2", "MDPOLY_DEVICE_SHARES": "3,5"}),
                         ("dev", "2 devices, shares 5:3", {"MDPOLY_DEVICES": "2", "MDPOLY_DEVICE_SHARES": "5,3"})]
            for variant, label, extra in runs:
                exe = out / f"{name}-{target}-{variant}"
                if not exe.exists():
                    rc, _, err = _sh([cc, "-O2", *dflags, "-I", str(out), str(out / f"{name}-{target}-{variant}.c"),
                                      "-o", str(exe), *flags[target], "-lm"])
                    if rc != 0:
                        results.append({"workload": name, "target": target, "run": label, "error": err[-500:]})
                        print(f"{name} {target} {label}: build failed\n{err[-1500:]}")
                        continue
                env = dict(os.environ, MDPOLY_PROFILE="1", MDPOLY_CACHE_DIR=str(out / "cache"), **extra)
                rc, so, se = _sh([str(exe)], env)
                row: dict[str, object] = {"workload": name, "target": target, "run": label, "rc": rc}
                row.update(_profile(so, se))
                if rc != 0:
                    row["error"] = se[-800:]
                results.append(row)
                print(json.dumps(row), flush=True)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    print("\n| workload | target | run | whole call ms | kernel ms (slowest slot) | checksum |")
    print("|---|---|---|---:|---:|---|")
    for r in results:
        k = r.get("kernel_ms")
        c = r.get("call_ms")
        print(f"| {r['workload']} | {r['target']} | {r['run']} | {c:.1f} | {k:.2f} | {r.get('checksum')} |"
              if isinstance(c, float) and isinstance(k, float)
              else f"| {r['workload']} | {r['target']} | {r['run']} | - | - | {r.get('error', '')[:80]!r} |")
    print("\n| workload | target | whole-call speedup 1->2 | efficiency | kernel speedup | efficiency |")
    print("|---|---|---:|---:|---:|---:|")
    for name in workloads:
        for target in TARGETS:
            one = next((r for r in results if r["workload"] == name and r["target"] == target
                        and r["run"] == "1 device"), None)
            two = next((r for r in results if r["workload"] == name and r["target"] == target
                        and r["run"] == "2 devices"), None)
            try:
                sc = float(one["call_ms"]) / float(two["call_ms"])  # type: ignore[index, arg-type]
                sk = float(one["kernel_ms"]) / float(two["kernel_ms"])  # type: ignore[index, arg-type]
                print(f"| {name} | {target} | {sc:.2f} | {sc / 2:.2f} | {sk:.2f} | {sk / 2:.2f} |")
            except (TypeError, ValueError, ZeroDivisionError):
                print(f"| {name} | {target} | - | - | - | - |")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("prepare", "run"))
    p.add_argument("dir", type=Path)
    ns = p.parse_args(argv)
    return prepare(ns.dir) if ns.step == "prepare" else run(ns.dir)


if __name__ == "__main__":
    sys.exit(main())
