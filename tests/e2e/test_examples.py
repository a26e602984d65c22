"""Differential tests: every ``c_examples/*.c`` built as is and through mdpoly, outputs compared.

For each example and size set: build the original with ``cc -O2``, run
``mdpoly --all-nests -D <sizes>`` (so that even tiny sizes get transformed), build ``out.c`` with
``cc -O2 -fopenmp``, run it with ``OMP_NUM_THREADS`` 1, 2 and 3, and compare every printed value
with :func:`mdpoly.differential.compare_outputs` at the example's stated tolerance. Integer and
concatenation-only (``++``) programs must match exactly; float reductions may reassociate.
The README's quick test command runs each example at its ``primes`` sizes (remainder tiles
everywhere); the other size sets are marked ``campaign`` (``pytest -m campaign``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from e2e_harness import EXAMPLES_DIR, THREAD_COUNTS, build_c, mdpoly_available, run_mdpoly, run_program

from mdpoly.differential import compare_outputs


@dataclass(frozen=True)
class Example:
    """One example program: its size sets (``-D`` values) and comparison tolerances."""

    name: str
    size_sets: dict[str, dict[str, int]]
    rtol: float = 0.0          # 0 means exact: integers, ++-only, max/min
    atol: float = 0.0
    parallelizable: bool = True
    notes: str = field(default="", compare=False)

    @property
    def source(self) -> Path:
        return EXAMPLES_DIR / f"{self.name}.c"


FLOAT_SUM = dict(rtol=1e-4, atol=1e-5)     # float reductions, reassociated by the parallel code
DOUBLE_SUM = dict(rtol=1e-10, atol=1e-12)  # double reductions

EXAMPLES = [
    Example("matvec", {"default": {}, "primes": {"I": 37, "K": 101}, "small": {"I": 3, "K": 5},
                       "one": {"I": 1, "K": 1}}, **FLOAT_SUM),
    Example("matmul", {"default": {}, "primes": {"M": 37, "N": 53, "K": 101},
                       "small": {"M": 3, "N": 5, "K": 3}, "one": {"M": 1, "N": 1, "K": 1}}, **FLOAT_SUM),
    Example("mcc", {"default": {},
                    "primes": {"N": 2, "P": 5, "Q": 7, "K": 13, "C": 11, "R": 3, "S": 2},
                    "small": {"N": 1, "P": 3, "Q": 5, "K": 3, "C": 5, "R": 2, "S": 3},
                    "one": {"N": 1, "P": 1, "Q": 1, "K": 1, "C": 1, "R": 1, "S": 1}}, **FLOAT_SUM),
    Example("jacobi2d", {"default": {}, "primes": {"N": 37, "M": 53}, "small": {"N": 3, "M": 5},
                         "one": {"N": 1, "M": 1}}),
    Example("dot", {"default": {}, "primes": {"N": 101}, "small": {"N": 3}, "one": {"N": 1},
                    "large_prime": {"N": 1000003}}, **DOUBLE_SUM),
    Example("colmax", {"default": {}, "primes": {"N": 37, "M": 53}, "small": {"N": 5, "M": 3},
                       "one": {"N": 1, "M": 1}}),
    Example("prefix_sum", {"default": {}, "primes": {"N": 101}, "small": {"N": 3}, "one": {"N": 1}},
            parallelizable=False),
    Example("tensor_contraction",
            {"default": {}, "primes": {"NA": 5, "NB": 7, "NC": 11, "ND": 13, "NE": 3},
             "small": {"NA": 3, "NB": 5, "NC": 3, "ND": 5, "NE": 3},
             "one": {"NA": 1, "NB": 1, "NC": 1, "ND": 1, "NE": 1}}, **FLOAT_SUM),
    Example("intsum", {"default": {}, "primes": {"N": 37, "M": 101}, "small": {"N": 3, "M": 5},
                       "one": {"N": 1, "M": 1}}),
    Example("saxpy_scalar", {"default": {}, "primes": {"N": 101}, "small": {"N": 3}, "one": {"N": 1}}),
]

#: the size set of each example in the quick set (README.md "Run the tests"); the others are a campaign
QUICK_SIZES = "primes"
CASES = [pytest.param(ex, size_id, id=f"{ex.name}-{size_id}",
                      marks=() if size_id == QUICK_SIZES else pytest.mark.campaign)
         for ex in EXAMPLES for size_id in ex.size_sets]

needs_mdpoly = pytest.mark.skipif(not mdpoly_available(),
                                  reason="mdpoly code generation (mdpoly.cli + mdpoly.driver) is not in this checkout")


def test_every_example_is_covered() -> None:
    on_disk = {p.stem for p in EXAMPLES_DIR.glob("*.c")}
    assert on_disk == {ex.name for ex in EXAMPLES}


@needs_mdpoly
@pytest.mark.parametrize(("example", "size_id"), CASES)
def test_example_matches_original(example: Example, size_id: str, tmp_path: Path) -> None:
    sizes = example.size_sets[size_id]
    reference = run_program(build_c(example.source, tmp_path / "orig", sizes, openmp=False))

    out_c = tmp_path / "out.c"
    run_mdpoly(example.source, out_c, sizes, extra=["-q"])
    parallel = build_c(out_c, tmp_path / "par", sizes, openmp=True)

    failures = []
    for threads in THREAD_COUNTS:
        mismatch = compare_outputs(reference, run_program(parallel, threads=threads),
                                   rtol=example.rtol, atol=example.atol)
        if mismatch is not None:
            failures.append(f"OMP_NUM_THREADS={threads}: {mismatch}")
    assert not failures, f"{example.name} {sizes or 'default sizes'} (out.c kept in {tmp_path}):\n" + "\n".join(failures)


@needs_mdpoly
@pytest.mark.parametrize("example", [pytest.param(ex, id=ex.name) for ex in EXAMPLES if ex.parallelizable])
def test_example_kernel_is_parallelized(example: Example, tmp_path: Path) -> None:
    """At default sizes the kernel nest must actually become OpenMP code, not stay as it was."""
    out_c = tmp_path / "out.c"
    run_mdpoly(example.source, out_c, {}, extra=["-q"])
    assert "#pragma omp" in out_c.read_text(), f"{example.name}: no OpenMP code in {out_c}"


@needs_mdpoly
def test_prefix_sum_is_kept_sequential(tmp_path: Path) -> None:
    """prefix_sum has a distance-1 flow dependence and no parallel nest: it must be left alone."""
    source = EXAMPLES_DIR / "prefix_sum.c"
    out_c, report = tmp_path / "out.c", tmp_path / "report.txt"
    run_mdpoly(source, out_c, {}, extra=["--report", str(report)])
    nests = json.loads(report.read_text())["nests"]
    assert nests, "the report lists no nest at all: the prefix-sum loop was not even considered"
    assert all(nest["status"] == "kept" for nest in nests), nests
    out_text = out_c.read_text()
    assert out_text == source.read_text() or "#pragma omp" not in out_text, f"prefix_sum was parallelized: {out_c}"
