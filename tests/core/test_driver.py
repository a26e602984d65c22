"""``transform``: hand-built analyses -> out.c that compiles and computes what the input did."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

import mdh_examples as E
import pytest
from harness import CC

from mdpoly.diagnostics import Diagnostic, MdpolyError, Severity, SourceLoc
from mdpoly.driver import transform
from mdpoly.ir.mdh import Combine
from mdpoly.ir.nest import LoopSummary, NestAnalysis, SourceSpan, TeamPragma
from mdpoly.options import Options
from mdpoly.profitability import estimate

SRC = """#include <stdio.h>
float A[80][160], B[160][100], C[80][100];
float x[8], y[8];
int main(void) {
  for (int i = 0; i < 80; i++) for (int k = 0; k < 160; k++) A[i][k] = (i * 7 + k) % 5 - 2;
  for (int k = 0; k < 160; k++) for (int j = 0; j < 100; j++) B[k][j] = (k + 3 * j) % 7 - 3;
  for (int i = 0; i < 80; i++)
    for (int j = 0; j < 100; j++)
      for (int k = 0; k < 160; k++)
        C[i][j] += A[i][k] * B[k][j];
  for (int i = 0; i < 8; i++) y[i] = 2 * x[i];
  double s = 0; for (int i = 0; i < 80; i++) for (int j = 0; j < 100; j++) s += C[i][j] * (i + j);
  printf("%.1f %f\\n", s, y[0]);
  return 0;
}
"""


@dataclass(frozen=True)
class Analysis:
    path: str
    source_text: str
    nests: tuple[NestAnalysis, ...]
    team_pragmas: tuple[TeamPragma, ...] = ()


def _nest(mdh, line: int, col: int, end: int, end_col: int, marked: bool = False) -> NestAnalysis:  # type: ignore[no-untyped-def]
    loc = SourceLoc("in.c", line, col)
    loops = tuple(LoopSummary(d.iterator, d.extent.to_c(), d.combine) for d in mdh.dims) if mdh else ()
    return NestAnalysis(loc, SourceSpan(loc, end, end_col, line), "main", 4, loops, mdh, marked=marked)


def _analysis() -> Analysis:
    lines = SRC.splitlines()
    mm = replace(E.matmul(80, 100, 160), name="mdp_mm")
    nest_mm = _nest(mm, 7, 3, 10, len(lines[9]))
    small = E.elementwise_indices(1, 8)
    kept = NestAnalysis(SourceLoc("in.c", 12, 14), SourceSpan(SourceLoc("in.c", 12, 14), 12, 90, 12), "main", 4,
                        (LoopSummary("i", "40", Combine.SEQ),), None,
                        Diagnostic(Severity.REMARK, "non-affine-subscript", SourceLoc("in.c", 12, 14), "nope"))
    return Analysis("in.c", SRC, (nest_mm, _nest(small, 11, 3, 11, len(lines[10])), kept))


def test_transform_compiles_and_matches(tmp_path: Path) -> None:
    text, outcomes = transform(_analysis(), Options(), None)
    assert [o.status for o in outcomes] == ["transformed", "kept", "kept"]
    assert outcomes[1].code == "too-little-work" and (outcomes[1].reason or "").startswith("too little work: 32 operations")
    assert outcomes[2].code == "non-affine-subscript"
    assert outcomes[0].cost is not None and outcomes[0].cost["choice"] == "parallel"
    assert outcomes[1].cost is not None and outcomes[1].cost["choice"] == "sequential" and outcomes[2].cost is None
    assert outcomes[1].cost_text.startswith("cost: sequential: 32 operations per call do not repay")
    assert "mdp_mm(A, B, C);" in text
    results = []
    for name, src in (("orig", SRC), ("new", text)):
        (tmp_path / f"{name}.c").write_text(src)
        subprocess.run([CC, "-O2", "-fopenmp", "-o", str(tmp_path / name), str(tmp_path / f"{name}.c")], check=True)
        results.append(subprocess.run([str(tmp_path / name)], capture_output=True, text=True, check=True).stdout)
    assert results[0] == results[1]


def test_transform_all_nests_and_marked() -> None:
    _, outcomes = transform(_analysis(), Options(all_nests=True), None)
    assert [o.status for o in outcomes][:2] == ["transformed", "transformed"]
    a = _analysis()
    requested = replace(a.nests[1], marked=True, requested=True)   # #pragma mdh: the user asks for it
    _, outcomes = transform(Analysis(a.path, a.source_text, (a.nests[0], requested)), Options(), None)
    assert outcomes[1].status == "transformed"
    in_scop = replace(a.nests[1], marked=True)   # inside #pragma scop: still judged by its work
    _, outcomes = transform(Analysis(a.path, a.source_text, (a.nests[0], in_scop)), Options(), None)
    assert outcomes[1].status == "kept" and outcomes[1].code == "too-little-work"


def test_other_targets_not_implemented() -> None:
    with pytest.raises(MdpolyError, match="target 'vulkan' is not implemented yet"):
        transform(_analysis(), Options(target="vulkan"), None)  # type: ignore[arg-type]


def test_cuda_target_renders_kernels() -> None:
    text, outcomes = transform(_analysis(), Options(target="cuda", all_nests=True), None)
    assert outcomes[0].status == "transformed" and outcomes[0].target == "cuda"
    assert "cuLaunchKernel" in text and '__global__ void' in text


def test_estimate_symbolic_uses_size_hints() -> None:
    mdh = E.matmul_symbolic()
    assert estimate(mdh, Options()).ops is None
    est = estimate(mdh, Options(sizes=(("n", 10), ("m", 20), ("l", 30))))
    assert est.iterations == 6000 and est.ops == 12000
