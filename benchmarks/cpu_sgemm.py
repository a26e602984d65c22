"""CPU sgemm against numpy/OpenBLAS: mdpoly's OpenMP code (untuned and tuned), gcc -O3, numpy.

Run from the repository root::

    python benchmarks/cpu_sgemm.py                          # 1024^3 and 2048^3, 2 threads, 7 runs
    python benchmarks/cpu_sgemm.py --sizes 1024 --runs 9 --tune-time 60
    python benchmarks/cpu_sgemm.py --no-tuned --no-seq      # quick look at the untuned code
    python benchmarks/cpu_sgemm.py --threads 2,1 --tag final  # also per core: 1 thread pinned to 1 CPU

Every variant runs ``--threads`` threads (``OMP_NUM_THREADS`` for the C programs,
``OPENBLAS_NUM_THREADS`` for numpy) and the whole run is pinned to as many CPUs (the first ones
this process may use; ``--no-pin`` leaves it unpinned), so a many-core host measures the same
thing as a 2-core one. A list (``--threads 2,1``) measures each thread count in turn, with its
own builds and tuning: one thread on one CPU gives the per-core ratio, which depends less on what
else runs on a shared machine. ``gcc -O3 seq`` is the original program, sequential. The variants run
interleaved: ``--runs`` rounds, each timing every variant once in a rotated order; one timing is
the median of ``--reps`` calls of the kernel (``--seq-rounds`` limits the slow sequential
original to the first rounds; numpy: ``A @ B`` in a fresh process with the same warm-up). The
table shows the median over the rounds and the fastest round, GFLOP/s (2MNK) and
``numpy / variant`` (above 1: faster than numpy). The tuned variant tunes afresh (``--retune``).
The load average before and after says how busy the machine was. Checksums of the C variants
are compared with the sequential one (or, with ``--no-seq``, with the untuned mdpoly one).

Writes ``benchmarks/results/cpu_sgemm_<date>[_TAG].md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from report import machine_description
from variants import TUNE_FLAGS, StepError, build, generate_mdpoly_source, time_program

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "kernels" / "sgemm.c"
CHECKSUM_RTOL = 1e-3

NUMPY_SNIPPET = """
import statistics, sys, time
import numpy as np
n, reps = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
a @ b
times = []
for _ in range(reps):
    t0 = time.perf_counter(); a @ b; times.append(time.perf_counter() - t0)
print("median_s", statistics.median(times))
"""


def pin(threads: int) -> str:
    """Pin this process (and so its children) to the first ``threads`` CPUs it may use."""
    allowed = sorted(os.sched_getaffinity(0))
    chosen = allowed[:threads]
    os.sched_setaffinity(0, chosen)
    return ",".join(map(str, chosen))


def build_variants(size: int, args: argparse.Namespace, workdir: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """Executables per variant (``failed`` ones left out, their reasons in the second dict)."""
    sizes = {"M": size, "N": size, "K": size}
    exes: dict[str, Path] = {}
    failed: dict[str, str] = {}
    plan = (["seq"] if args.seq else []) + ["mdpoly"] + (["mdpoly_tuned"] if args.tuned else [])
    for variant in plan:
        print(f"[{size}] building {variant} ...", file=sys.stderr, flush=True)
        try:
            if variant == "seq":
                exes[variant] = build(SOURCE, sizes, workdir / "seq", openmp=False, reps=args.reps,
                                      timeout=args.timeout)
                continue
            flags = TUNE_FLAGS["mdpoly"] if variant == "mdpoly" else ("--tune-time", str(args.tune_time), "--retune")
            report = workdir / f"{variant}.json"
            out = generate_mdpoly_source(SOURCE, sizes, workdir / f"{variant}_sgemm.c",
                                         args.timeout + 2 * args.tune_time,
                                         (*flags, "--report", str(report)))
            exes[variant] = build(out, sizes, workdir / variant, openmp=True, reps=args.reps, timeout=args.timeout)
        except StepError as exc:
            failed[variant] = str(exc)
    return exes, failed


def time_numpy(size: int, reps: int, timeout: float) -> float:
    out = subprocess.run([sys.executable, "-c", NUMPY_SNIPPET, str(size), str(reps)], capture_output=True,
                         text=True, timeout=timeout, check=True).stdout
    return float(out.split()[1])


def tuned_params(workdir: Path) -> str:
    """What the tuned nest runs with, from mdpoly's report (empty when it says nothing)."""
    try:
        nests = json.loads((workdir / "mdpoly_tuned.json").read_text())["nests"]
    except (OSError, ValueError, KeyError):
        return ""
    tuning = nests[0].get("tuning") if nests else None
    return json.dumps(tuning) if tuning else ""


def run_size(size: int, args: argparse.Namespace, root: Path) -> dict[str, object]:
    workdir = root / f"sgemm_{size}_t{args.threads}"
    workdir.mkdir(parents=True, exist_ok=True)
    exes, failed = build_variants(size, args, workdir)
    names = [*exes, "numpy"]
    times: dict[str, list[float]] = {n: [] for n in names}
    checks: dict[str, float] = {}
    magnitude = 0.0
    for r in range(args.runs):
        order = names[r % len(names):] + names[:r % len(names)]
        if r >= args.seq_rounds:
            order = [n for n in order if n != "seq"]
        for name in order:
            try:
                if name == "numpy":
                    times[name].append(time_numpy(size, args.reps, args.timeout))
                    continue
                seconds, checksum, mag = time_program(exes[name], args.timeout)
            except (StepError, subprocess.SubprocessError) as exc:
                failed[name] = str(exc)
                continue
            times[name].append(seconds)
            checks[name] = checksum
            magnitude = max(magnitude, mag or 0.0)
        print(f"[{size}] round {r + 1}/{args.runs}: "
              + ", ".join(f"{n} {times[n][-1] * 1e3:.2f} ms" for n in order if times[n]), file=sys.stderr, flush=True)
    ref = checks.get("seq", checks.get("mdpoly"))
    wrong = {n: f"checksum {c:.6g} vs {ref:.6g}" for n, c in checks.items()
             if ref is not None and not math.isclose(c, ref, rel_tol=CHECKSUM_RTOL,
                                                     abs_tol=max(1e-6, CHECKSUM_RTOL * magnitude))}
    return {"size": size, "threads": args.threads, "times": times, "failed": failed, "wrong": wrong,
            "tuned_params": tuned_params(workdir)}


def table(result: dict[str, object]) -> list[str]:
    size = int(result["size"])  # type: ignore[call-overload]
    times: dict[str, list[float]] = result["times"]  # type: ignore[assignment]
    failed: dict[str, str] = result["failed"]  # type: ignore[assignment]
    wrong: dict[str, str] = result["wrong"]  # type: ignore[assignment]
    flops = 2.0 * size ** 3
    np_med = statistics.median(times["numpy"]) if times.get("numpy") else None
    lines = [f"### sgemm {size}x{size}x{size}, {result.get('threads', '?')} thread(s)", "",
             "| variant | median ms | fastest ms | GFLOP/s (median) | numpy / variant (median) | runs |",
             "| --- | --- | --- | --- | --- | --- |"]
    labels = {"seq": "gcc -O3 seq", "mdpoly": "mdpoly untuned", "mdpoly_tuned": "mdpoly tuned", "numpy": "numpy"}
    for name, label in labels.items():
        if name in failed and not times.get(name):
            lines.append(f"| {label} | failed: {failed[name]} | | | | |")
            continue
        if not times.get(name):
            continue
        med, best = statistics.median(times[name]), min(times[name])
        ratio = f"{np_med / med:.2f}" if np_med else "n/a"
        note = f" (wrong: {wrong[name]})" if name in wrong else ""
        lines.append(f"| {label}{note} | {med * 1e3:.2f} | {best * 1e3:.2f} | {flops / med / 1e9:.1f} | {ratio} "
                     f"| {len(times[name])} |")
    if result.get("tuned_params"):
        lines += ["", f"Tuned configuration: `{result['tuned_params']}`"]
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1024,2048", help="comma-separated M=N=K values")
    parser.add_argument("--threads", default="2",
                        help="threads of every variant (and CPUs pinned); a comma-separated list runs each in turn")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the run to --threads CPUs")
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (the median over them is reported)")
    parser.add_argument("--reps", type=int, default=5, help="kernel calls per timing (their median)")
    parser.add_argument("--tune-time", type=float, default=60.0, help="mdpoly --tune-time for the tuned variant")
    parser.add_argument("--no-tuned", dest="tuned", action="store_false", help="skip mdpoly --tune-time")
    parser.add_argument("--no-seq", dest="seq", action="store_false", help="skip the sequential original")
    parser.add_argument("--seq-rounds", type=int, default=1 << 30,
                        help="time the sequential original in the first N rounds only (it is slow at 2048^3)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per build or run step")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results")
    parser.add_argument("--build-dir", type=Path, default=HERE / "build")
    parser.add_argument("--tag", default="", help="suffix of the result files")
    args = parser.parse_args(argv)

    counts = [int(t) for t in args.threads.split(",") if t]
    allowed = sorted(os.sched_getaffinity(0))
    args.build_dir.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="cpu-sgemm-", dir=args.build_dir))
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = args.threads
    machine = machine_description()
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results = []
    pinned = []
    for count in counts:
        args.threads = count
        os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(count)
        if not args.no_pin:
            os.sched_setaffinity(0, allowed)
        pinned.append(f"{count} thread(s): " + ("all" if args.no_pin else pin(count)))
        results += [run_size(int(s), args, root) for s in args.sizes.split(",") if s]
    cpus = "; ".join(pinned)
    args.threads = ",".join(map(str, counts))
    load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())

    stem = f"cpu_sgemm_{datetime.date.today().isoformat()}" + (f"_{args.tag}" if args.tag else "")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    header = [f"# CPU sgemm: mdpoly (OpenMP) vs numpy/OpenBLAS, {args.threads} threads", "",
              *(f"- {k}: {v}" for k, v in machine.items()),
              f"- threads: {args.threads} (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS); pinned to CPUs: {cpus}",
              f"- {args.runs} interleaved rounds, each timing the median of {args.reps} kernel calls; "
              f"tuned with --tune-time {args.tune_time:g}" if args.tuned else
              f"- {args.runs} interleaved rounds, each timing the median of {args.reps} kernel calls",
              f"- load average (1, 5, 15 min) before: {load_before}; after: {load_after}", ""]
    md = "\n".join(header + [line for r in results for line in table(r)])
    md_path, json_path = args.out_dir / f"{stem}.md", args.out_dir / f"{stem}.json"
    md_path.write_text(md)
    json_path.write_text(json.dumps({"machine": machine, "threads": args.threads, "cpus": cpus,
                                     "load_before": load_before, "load_after": load_after,
                                     "results": results}, indent=1, default=str))
    print(md)
    print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
