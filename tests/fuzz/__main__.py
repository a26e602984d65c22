"""Command line: ``python -m tests.fuzz --fuzz N --seed S --target openmp|opencl --jobs J``.

Generates ``N`` programs from seeds ``S, S+1, ...``, checks each (:func:`runner.check_program`),
prints the counts (outcomes, kernel nests transformed, kept by reason code, failures by class)
and, for every failure, the reduced reproducer (:func:`reduce.reduce_failure`), written to
``--failures DIR`` (default ``fuzz_failures/``). Exit status 1 when a failure that is not a
known bug (:mod:`known`) was found, or any at all with ``--strict``.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .campaign import run_campaign
from .runner import REPO, opencl_unavailable


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--fuzz", type=int, default=50, metavar="N", help="number of programs (default 50)")
    ap.add_argument("--seed", type=int, default=0, metavar="S", help="first seed (default 0)")
    ap.add_argument("--target", choices=("openmp", "opencl"), default="openmp")
    ap.add_argument("--jobs", type=int, default=2, metavar="J", help="programs checked at once (default 2)")
    ap.add_argument("--kernels", type=int, default=None, help="kernels per program (default 3 to 5)")
    ap.add_argument("--real-c", type=float, default=0.0, metavar="P",
                    help="probability that a kernel uses the real-C forms of issue 21 (flat subscripts over "
                         "run-time sizes, index temporaries, ternary subscripts, structs, local pointers, "
                         "user OpenMP pragmas; default 0: the classic generator)")
    ap.add_argument("--control", type=float, default=0.3, metavar="P",
                    help="probability that a nest gets an early 'continue' or an 'if' (with or without "
                         "'else') whose condition tests iterators or reads arrays, written or not "
                         "(default 0.3; 0: the programs of the generator before these forms)")
    ap.add_argument("--pinned", type=float, default=0.0, metavar="P",
                    help="probability that a run-time size is a constant local of main instead, which mdpoly "
                         "pins and specialises for (default 0)")
    ap.add_argument("--avoid-known", action="store_true", help="do not generate the forms of known bugs")
    ap.add_argument("--strict", action="store_true", help="count known bugs as failures too")
    ap.add_argument("--no-reduce", action="store_true", help="do not reduce failures")
    ap.add_argument("--reduce-limit", type=int, default=10, metavar="K",
                    help="reduce at most K failures, one per class and known tag first (default 10)")
    ap.add_argument("--failures", type=Path, default=REPO / "fuzz_failures", metavar="DIR")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per program")
    ns = ap.parse_args(argv)
    if ns.fuzz < 1 or ns.jobs < 1:
        ap.error("--fuzz and --jobs must be positive")
    if not 0.0 <= ns.real_c <= 1.0:
        ap.error("--real-c is a probability (0 to 1)")
    if not 0.0 <= ns.control <= 1.0:
        ap.error("--control is a probability (0 to 1)")
    if not 0.0 <= ns.pinned <= 1.0:
        ap.error("--pinned is a probability (0 to 1)")
    if ns.target == "opencl":
        why = opencl_unavailable()
        if why:
            print(f"python -m tests.fuzz: error: {why}", file=sys.stderr)
            return 2
    t0 = time.monotonic()
    summary, reduced = run_campaign(range(ns.seed, ns.seed + ns.fuzz), ns.target, jobs=ns.jobs,
                                    kernels=ns.kernels, avoid_known=ns.avoid_known,
                                    reduce_limit=0 if ns.no_reduce else ns.reduce_limit,
                                    failures_dir=ns.failures, verbose=ns.verbose, pool=ThreadPoolExecutor,
                                    real_c=ns.real_c, control=ns.control, pinned=ns.pinned)
    print(summary.text())
    for o in summary.failures:
        print(f"  seed {o.seed}: {o.status}" + (f" in {o.kernel}" if o.kernel else "") +
              (f" [known: {o.known}]" if o.known else "") + f": {o.detail.splitlines()[0] if o.detail else ''}")
    for path, text in reduced:
        print(f"\n--- reproducer {path} ---\n{text}")
    print(f"time: {time.monotonic() - t0:.0f} s")
    bad = summary.failures if ns.strict else summary.unknown_failures
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
