"""Two program outputs (files) -> one line saying whether mdpoly's parallel program printed what the
sequential original printed; exit status 0 when it did, 1 when not, 2 on misuse.

``python -m mdpoly.compare SEQUENTIAL_OUTPUT PARALLEL_OUTPUT [--rtol R] [--atol A]`` (the README's
quick start ends with it). The comparison is :func:`mdpoly.differential.compare_outputs`: integers
and text exactly, floating-point values within ``atol + rtol * max(|e|, |a|)``; the default
tolerances (``rtol`` 1e-4, ``atol`` 1e-5) are the end-to-end tests' for float reductions, which the
parallel code reassociates.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mdpoly.differential import compare_outputs


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mdpoly.compare",
                                description="Compare a parallel program's output with its sequential original's.")
    p.add_argument("sequential", type=Path, help="output of the original (sequential) program")
    p.add_argument("parallel", type=Path, help="output of the program mdpoly made")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance for floating-point values")
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance for floating-point values")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison line; return the exit status."""
    ns = _parser().parse_args(argv)
    try:
        expected = ns.sequential.read_text(errors="replace")
        actual = ns.parallel.read_text(errors="replace")
    except OSError as e:
        print(f"python -m mdpoly.compare: {e}", file=sys.stderr)
        return 2
    head = f"parallel output ({ns.parallel}) matches sequential ({ns.sequential})"
    mismatch = compare_outputs(expected, actual, rtol=ns.rtol, atol=ns.atol)
    if mismatch is not None:
        print(f"{head}: no, {mismatch}")
        return 1
    values = sum(len(line.split()) for line in expected.splitlines())
    if values == 0:
        print(f"{head}: no, both are empty")
        return 1
    print(f"{head}: yes, {values} values (floats within rtol {ns.rtol:g}, atol {ns.atol:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
