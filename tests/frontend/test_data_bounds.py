"""Row loops around inner loops whose bounds are read from memory (``mdpoly.frontend.data_bounds``):
parallel around their bodies as written where the inner loops only read, else kept with the reason."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mdpoly.ir.nest import FileAnalysis, PrivateLoop

CSR = "typedef struct { int n; int *rp; int *ci; double *v; } csr;\n"

SPMV = CSR + """
void spmv(const csr *A, const double *x, double *y) {
  for (int r = 0; r < A->n; r++) {
    double sum = 0.0;
    for (int p = A->rp[r]; p < A->rp[r + 1]; p++)
      sum += A->v[p] * x[A->ci[p]];
    y[r] = sum;
  }
}
"""


def test_spmv_row_loop_is_parallel_with_inspected_gathers(analyze: Callable[..., FileAnalysis]) -> None:
    nest = analyze(SPMV).nests[0]
    assert nest.kept is not None and nest.kept.code == "non-affine-bound"
    assert nest.schedule is not None and len(nest.schedule) == 1
    loop = nest.schedule[0]
    assert isinstance(loop, PrivateLoop) and loop.iterators == ("r",)
    assert loop.work is None and "A->rp[" in loop.work_c   # the nonzeros, read at run time
    assert "mdp_ins_lo_x" in loop.inspector and "mdp_ins_lo_mdp_m_A_ci" in loop.inspector
    assert {c.b.buffer for c in loop.checks} == {"y"}


def test_an_inner_loop_may_write_the_rows_own_element(analyze: Callable[..., FileAnalysis]) -> None:
    # y[r] is one element however often the inner loop runs: the row loop stays parallel
    nest = analyze(SPMV.replace("double sum = 0.0;", "y[r] = 0.0;").replace("sum +=", "y[r] +=")
                   .replace("y[r] = sum;", "")).nests[0]
    assert nest.schedule is not None, nest.kept
    loop = nest.schedule[0]
    assert isinstance(loop, PrivateLoop) and loop.iterators == ("r",) and "mdp_ins_lo_x" in loop.inspector


def test_restrict_output_needs_no_inspection(analyze: Callable[..., FileAnalysis]) -> None:
    nest = analyze(SPMV.replace("double *y", "double *restrict y")).nests[0]
    assert nest.schedule is not None
    loop = nest.schedule[0]
    assert isinstance(loop, PrivateLoop) and not loop.inspector and not loop.checks


@pytest.mark.parametrize(("body", "reason"), [
    ("for (int p = A->rp[r]; p < A->rp[r + 1]; p++) y[A->ci[p]] += A->v[p];", "writes 'y[A->ci[p]]'"),
    ("for (int p = A->rp[r]; p < A->rp[r + 1]; p++) t += A->v[p];", "writes 't'"),
    ("double s = 0.0; for (int p = A->rp[r]; p < A->rp[r + 1]; p++) { s += A->v[p]; if (s > 1.0) break; }"
     " y[r] = s;", "may stop early"),
    ("double s = y[r - 1]; for (int p = A->rp[r]; p < A->rp[r + 1]; p++) s += A->v[p]; y[r] = s;",
     "carries a dependence"),
    ("double s = 0.0; for (int p = A->rp[r]; p < A->rp[r + 1]; p++) s += x[A->ci[p]]; y[r] = s; x[r] = s;",
     "not affine"),
])
def test_rows_that_do_more_than_read_stay_sequential(analyze: Callable[..., FileAnalysis], body: str,
                                                     reason: str) -> None:
    src = CSR + ("double t;\nvoid f(const csr *A, double *x, double *y) {\n"
                 f"  for (int r = 1; r < A->n; r++) {{\n    {body}\n  }}\n}}\n")
    nest = analyze(src).nests[0]
    assert nest.schedule is None and nest.kept is not None and nest.kept.code == "non-affine-bound"
    assert reason in nest.data_bounds or reason in nest.privatization, (nest.data_bounds, nest.privatization)
