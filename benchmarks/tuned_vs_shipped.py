"""Tuned timings against the shipped program's: does GPU tuning measure what users run?

For one example and target, ``mdpoly --tune-evals N`` tunes and writes ``out.c``; the tuning log
gives the tuner's kernel time of the winner and of the default (medians of timed calls of the
candidates' host code, as the host code's own events measured them). Then ``out.c`` and an
untuned ``out0.c`` are built with the target's toolchain (``mdpoly.targets``) and each run
``--runs`` times with ``MDPOLY_PROFILE=1``; their ``mdpoly-profile:`` lines give the shipped
programs' kernel time per call. Both are printed side by side (milliseconds), with the SHA-256
check that the tuned ``out.c`` holds the candidate the tuner chose.

    python benchmarks/tuned_vs_shipped.py --target opencl --example matmul.c -D N=256 --evals 8
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from mdpoly.targets import target_named

REPO = Path(__file__).resolve().parents[1]
PROFILE = re.compile(r"^mdpoly-profile: (\S+) calls=(\d+) kernel_ms=([0-9.eE+-]+) transfer_ms=([0-9.eE+-]+)(?: host_ms=[0-9.eE+-]+)?$",
                     re.MULTILINE)


def _mdpoly(src: Path, out: Path, target: str, defines: list[str], extra: list[str], env: dict[str, str]) -> None:
    cmd = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out), "--target", target, "--all-nests", *extra]
    for d in defines:
        cmd += ["-D", d]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"mdpoly failed:\n{proc.stderr}")


def _shipped_ms(src: Path, exe: Path, target: str, defines: list[str], runs: int,
                include: Path) -> dict[str, list[float]]:
    """Per nest, the kernel milliseconds per call of each of ``runs`` runs of the built program."""
    cflags, lflags = target_named(target).toolchain.flags()
    subprocess.run(["cc", "-O2", f"-I{include}", *[f"-D{d}" for d in defines], *cflags, str(src), "-o", str(exe), *lflags, "-lm"],
                   check=True, capture_output=True)
    out: dict[str, list[float]] = {}
    for _ in range(runs):
        proc = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                              env={**os.environ, "MDPOLY_PROFILE": "1"})
        for nest, calls, kernel_ms, _ in PROFILE.findall(proc.stderr):
            out.setdefault(nest, []).append(float(kernel_ms) / int(calls))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="opencl")
    ap.add_argument("--example", default="matmul.c", help="a file of c_examples/")
    ap.add_argument("--source", help="any C file instead (e.g. benchmarks/kernels/sgemm.c, whose main calls the "
                    "kernel once to warm up and then -DREPS times, so the shipped time is of warm calls too)")
    ap.add_argument("-D", dest="defines", action="append", default=[])
    ap.add_argument("--evals", type=int, default=8)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    src = Path(args.source).resolve() if args.source else REPO / "c_examples" / args.example
    with tempfile.TemporaryDirectory(prefix="mdpoly-tvs-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "MDPOLY_CACHE_DIR": str(work / "cache")}
        _mdpoly(src, work / "out.c", args.target, args.defines, ["--tune-evals", str(args.evals)], env)
        _mdpoly(src, work / "out0.c", args.target, args.defines, ["--no-tune"], env)
        tuned = _shipped_ms(work / "out.c", work / "tuned", args.target, args.defines, args.runs, src.parent)
        untuned = _shipped_ms(work / "out0.c", work / "untuned", args.target, args.defines, args.runs, src.parent)
        out_c = (work / "out.c").read_text()
        print(f"{src.name} {' '.join(args.defines)} --target {args.target}, {args.evals} evaluations, "
              f"{args.runs} runs of each program (kernel ms per call; shipped: median [min, max])")
        print("| nest | tuner: tuned | shipped: tuned | tuner: default | shipped: untuned | out.c is the measured winner |")
        print("| --- | --- | --- | --- | --- | --- |")
        for log_path in sorted((work / "cache" / "logs").glob("*.jsonl")):
            log = [json.loads(line) for line in log_path.read_text().splitlines()]
            nest = log[0]["nest"]
            result = next((r for r in log if r["event"] == "result" and "seconds" in r), None)
            if result is None or nest not in tuned:
                continue
            winner = {c.get("function_sha256") for c in log if c["event"] == "candidate" and c["status"] == "ok"
                      and c["params"] == result["params"]}
            start = out_c.find(f"static const char mdp_src_{nest}[] =")
            if start < 0:
                start = out_c.find(f"static const char mdp_cu_src_{nest}[] =")
            end = out_c.index("\n}\n", out_c.index(f"static void {nest}(", start)) + 3
            if out_c.startswith(f"MDP_FITS_FN {nest}_fits(void)", end):   # its launch check follows it
                end = out_c.index("\n}\n", end) + 3
            same = hashlib.sha256(out_c[start:end].encode()).hexdigest() in winner

            def cell(xs: list[float]) -> str:
                return f"{statistics.median(xs):.3f} [{min(xs):.3f}, {max(xs):.3f}]"

            print(f"| {nest} | {result['seconds'] * 1e3:.3f} | {cell(tuned[nest])} | "
                  f"{(result['default_seconds'] or float('nan')) * 1e3:.3f} | {cell(untuned.get(nest, [float('nan')]))} "
                  f"| {'yes' if same else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
