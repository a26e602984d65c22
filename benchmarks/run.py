"""Benchmark runner: times the original, an OpenMP baseline, numpy and mdpoly's output side by side.

Run from the repository root::

    python benchmarks/run.py            # full sizes (a few minutes on 2 cores)
    python benchmarks/run.py --quick    # small sizes, seconds
    python benchmarks/run.py --only sgemm,dot --reps 7

Writes ``benchmarks/results/cpu_<date>[_quick].md`` and ``.json``. A variant that fails shows as
``failed: reason`` in the table; the run goes on.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import tempfile
from pathlib import Path

import numpy_refs
from report import machine_description, write_results
from variants import OPENCL_VARIANTS, Measurement, measure
from workloads import WORKLOADS

HERE = Path(__file__).resolve().parent
C_VARIANTS = ("seq", "omp_for", "mdpoly", "mdpoly_tuned")
CHECKSUM_RTOL = 1e-3


def check_against_seq(m: Measurement, seq: Measurement) -> Measurement:
    """Mark ``m`` wrong when its checksum differs from the sequential one.

    The tolerance is ``CHECKSUM_RTOL`` of the outputs' magnitude (sum of absolute values) where
    the program reports it: reassociated float reductions legitimately move every output by
    rounding errors, and a checksum with cancellation must not turn those into a false alarm.
    """
    if m.status != "ok" or seq.status != "ok" or m.checksum is None or seq.checksum is None:
        return m
    a, b = m.checksum, seq.checksum
    scale = max(m.magnitude or 0.0, seq.magnitude or 0.0)
    if math.isclose(a, b, rel_tol=CHECKSUM_RTOL, abs_tol=max(1e-6, CHECKSUM_RTOL * scale)):
        return m
    return Measurement(m.variant, "wrong", m.seconds, a, f"checksum {a:.6g} vs seq {b:.6g}", m.magnitude)


def numpy_measurement(name: str | None, sizes: dict[str, int], reps: int) -> Measurement | None:
    if name is None:
        return None
    try:
        return Measurement("numpy", "ok", numpy_refs.REFERENCES[name](sizes, reps))
    except Exception as exc:   # a failed reference is a table cell, not a crash
        return Measurement("numpy", "failed", detail=f"{type(exc).__name__}: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions per variant (median; >=5)")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per build or run step")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results")
    parser.add_argument("--build-dir", type=Path, default=HERE / "build")
    parser.add_argument("--tag", default="", help="suffix of the result files (cpu_<date>[_quick][_TAG])")
    parser.add_argument("--no-tuned", action="store_true", help="skip the mdpoly_tuned variant (tuning takes minutes)")
    parser.add_argument("--opencl", action="store_true",
                        help="also run mdpoly --target opencl (default and tuned) on this machine's OpenCL device")
    args = parser.parse_args(argv)
    reps = max(args.reps, 5)
    wanted = {w for w in args.only.split(",") if w}
    unknown = wanted - {w.name for w in WORKLOADS}
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")

    args.build_dir.mkdir(parents=True, exist_ok=True)
    build_root = Path(tempfile.mkdtemp(prefix="run-", dir=args.build_dir))
    machine = machine_description()
    rows = []
    for workload in WORKLOADS:
        if wanted and workload.name not in wanted:
            continue
        sizes = workload.sizes(args.quick)
        flops = workload.flops(sizes)
        measurements: dict[str, Measurement | None] = {}
        for variant in (*C_VARIANTS, *(OPENCL_VARIANTS if args.opencl else ())):
            if variant.endswith("_tuned") and args.no_tuned:
                continue
            print(f"[{workload.name}] {variant} ...", file=sys.stderr, flush=True)
            measurements[variant] = measure(variant, workload.source, sizes, build_root / workload.name,
                                            reps=reps, timeout=args.timeout)
        seq = measurements["seq"]
        assert seq is not None
        for variant in ("omp_for", "mdpoly", "mdpoly_tuned", *OPENCL_VARIANTS):
            m = measurements.get(variant)
            if m is not None:
                measurements[variant] = check_against_seq(m, seq)
        print(f"[{workload.name}] numpy ...", file=sys.stderr, flush=True)
        measurements["numpy"] = numpy_measurement(workload.numpy, sizes, reps)
        for variant, m in measurements.items():
            if m is not None:
                shown = f"{m.seconds * 1e3:.3f} ms" if m.status == "ok" and m.seconds else f"{m.status}: {m.detail}"
                print(f"    {variant:8s} {shown}", file=sys.stderr)
        rows.append({"workload": workload.name, "kernel": workload.kernel, "sizes": sizes, "flops": flops,
                     "measurements": measurements})

    stem = f"cpu_{datetime.date.today().isoformat()}" + ("_quick" if args.quick else "")
    stem += f"_{args.tag}" if args.tag else ""
    md_path, json_path = write_results(rows, machine, args.out_dir, stem,
                                       "quick" if args.quick else "full")
    print(md_path.read_text())
    print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
