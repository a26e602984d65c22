"""Hand-blocked loops (``frontend/untile.py``, ``frontend/normalize/constant_locals.py``, loop
conditions that are conjunctions of bounds in ``frontend/scop_loops.py``): a blocked matrix product
with a run-time block size ``bs`` runs un-tiled as one computation ``i:++ k:+ j:++`` in one parallel
region per call (not one per tile) when ``bs > 0``, else as written; a blocked transpose with a
``const int B = 32`` block and ``i < i0 + B && i < n`` bounds runs un-tiled too. A blocked sweep
that reads its north-east neighbour (the tiles' order decides which value it reads) and a blocked
nest with a statement that runs once per tile stay blocked. Outputs equal the original's at 1 and
3 threads for block sizes that divide ``n`` and that do not, 1, larger than ``n``, and 0 or below
where the original ends (``n = 0``); a block size of 0 or below with ``n > 0`` never ends the
original, so there only the run-time check is looked at."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e_harness import build_c, c_compiler, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import COUNTER, NO_LOADAVG

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#define MIN(a,b) ((a) < (b) ? (a) : (b))

void blocked_mm(int n, int bs, const double *A, const double *B, double *C)
{
  for (int ii = 0; ii < n; ii += bs)                                       /* MARK mm */
    for (int kk = 0; kk < n; kk += bs)
      for (int jj = 0; jj < n; jj += bs)
        for (int i = ii; i < MIN(ii + bs, n); i++)
          for (int k = kk; k < MIN(kk + bs, n); k++) {
            double a = A[i * n + k];
            for (int j = jj; j < MIN(jj + bs, n); j++)
              C[i * n + j] += a * B[k * n + j];
          }
}

void blocked_transpose(int n, int m, const float *src, float *dst)
{
  const int B = 32;
  for (int i0 = 0; i0 < n; i0 += B)                                        /* MARK transpose */
    for (int j0 = 0; j0 < m; j0 += B)
      for (int i = i0; i < i0 + B && i < n; i++)
        for (int j = j0; j < j0 + B && j < m; j++)
          dst[j * n + i] = src[i * m + j];
}

/* the north-east neighbour: in row order it is new, in tile order old at a tile's right edge */
void blocked_sweep(int n, int bs, double *a)
{
  for (int ii = 1; ii < n; ii += bs)                                       /* MARK sweep */
    for (int jj = 1; jj < n - 1; jj += bs)
      for (int i = ii; i < (n < ii + bs ? n : ii + bs); i++)
        for (int j = jj; j < jj + bs && j < n - 1; j++)
          a[i * n + j] = (a[(i - 1) * n + j + 1] + a[i * n + j - 1] + a[i * n + j]) / 3.0;
}

/* cnt[i] += 1 runs once for every tile of 'jj' */
void blocked_count(int n, int bs, int *cnt, double *x)
{
  for (int ii = 0; ii < n; ii += bs)                                       /* MARK count */
    for (int jj = 0; jj < n; jj += bs)
      for (int i = ii; i < MIN(ii + bs, n); i++) {
        cnt[i] += 1;
        for (int j = jj; j < MIN(jj + bs, n); j++)
          x[i * n + j] += 1.0;
      }
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]), bs = atoi(argv[2]), only_mm = argc > 3, m = n + 3;
  double *A = malloc(sizeof(double) * n * n + 8), *B = malloc(sizeof(double) * n * n + 8);
  double *C = calloc(n * n + 1, sizeof(double)), *S = malloc(sizeof(double) * n * n + 8);
  double *X = calloc(n * n + 1, sizeof(double));
  float *src = malloc(sizeof(float) * n * m + 4), *dst = calloc(n * m + 1, sizeof(float));
  int *cnt = calloc(n + 1, sizeof(int));
  for (int i = 0; i < n * n; i++) { A[i] = (i % 7) * 0.25 - 0.5; B[i] = (i % 5) * 0.5 + 0.125; S[i] = (i % 11) * 1.5; }
  for (int i = 0; i < n * m; i++) src[i] = (float)(i % 13) * 0.5f;
  blocked_mm(n, bs, A, B, C);
  if (!only_mm) {
    blocked_transpose(n, m, src, dst);
    blocked_sweep(n, bs, S);
    blocked_count(n, bs, cnt, X);
  }
  double t[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < n * n; i++)
    { t[0] += C[i] * (i % 3 + 1); t[1] += S[i] * (i % 4 + 1); t[2] += X[i] * (i % 2 + 1); }
  for (int i = 0; i < n * m; i++) t[3] += dst[i] * (i % 5 + 1);
  for (int i = 0; i < n; i++) t[4] += cnt[i] * (i + 1);
  printf("mm %.15e\nsweep %.15e\ncount %.15e\ntranspose %.15e\ncnt %.15e\n", t[0], t[1], t[2], t[3], t[4]);
  return 0;
}
"""


def _run(exe: Path, args: list[str], threads: int, lib: Path | None = None) -> tuple[str, int]:
    """stdout and the number of parallel regions that asked for more than one thread (-1: not counted)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if lib is not None:
        env["LD_PRELOAD"] = str(lib)
    proc = run_step([str(exe), *args], env=env)
    found = re.search(r"parallel-regions (\d+)", proc.stderr)
    return proc.stdout, int(found.group(1)) if found else -1


def _mdpoly(src: Path, out: Path, *extra: str) -> str:
    return run_step([*mdpoly_command(), str(src), "-o", str(out), "--no-tune", *extra], env=child_env()).stderr


def test_hand_blocked_loops(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "blocked.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in ("mm", "transpose", "sweep", "count")}
    out_c = tmp_path / "out.c"
    err = _mdpoly(src, out_c)
    mm, tr, sw, ct = (line[k] for k in ("mm", "transpose", "sweep", "count"))
    # one computation over the whole ranges, with the user's names, under 'bs > 0'
    assert re.search(rf"blocked\.c:{mm}:3: remark: loop nest parallelized: i:\+\+ k:\+ j:\+\+;.*the generated code "
                     r"runs where bs > 0, else the nest as written", err), err
    assert (f"blocked.c:{mm}:3: remark: hand-blocked loops un-tiled: block loops 'ii', 'kk', 'jj' around point loops "
            "'i', 'k', 'j' run over their whole ranges (i:++ k:+ j:++: the order of the tiles changes no result), "
            "when bs > 0 (else as written) [hand-blocked]") in err, err
    assert re.search(rf"blocked\.c:{tr}:3: remark: loop nest parallelized: i:\+\+ j:\+\+", err), err
    assert (f"blocked.c:{tr}:3: remark: hand-blocked loops un-tiled: block loops 'i0', 'j0' around point loops 'i', "
            "'j' run over their whole ranges (i:++ j:++: the order of the tiles changes no result) "
            "[hand-blocked]") in err
    assert "non-affine" not in err and "mdp_step" not in err, err
    # the sweep's order matters: kept blocked, and why
    assert re.search(rf"blocked\.c:{sw}:3: note: hand-blocked loops kept blocked: block loops 'ii', 'jj' around point "
                     r"loops 'i', 'j': un-tiled, the nest would not be one computation \(loop 'i' carries a flow "
                     r"dependence on 'a'.*\[hand-blocked\]", err), err
    assert not re.search(rf"blocked\.c:{sw}:3: remark: hand-blocked", err), err
    assert not re.search(rf"blocked\.c:{ct}:3: remark: (loop nest parallelized|hand-blocked)", err), err
    # bs <= 0 never ends the original loops (for n > 0): the generated code is not run then
    generated = out_c.read_text()
    call = re.search(r"if \((.*)\)\s*\{\s*mdpoly_blocked_mm\w*\(", generated)
    assert call is not None and re.search(r"(?<![\w.])bs > 0", call.group(1)), generated[-3000:]
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["67", "8"], ["64", "16"], ["50", "1"], ["40", "100"], ["97", "13"], ["1", "3"], ["0", "0"],
                 ["0", "-3"]):
        want = _run(orig, args, 1)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, args, threads)[0], rtol=1e-12, atol=1e-9)
            assert mismatch is None, (args, threads, mismatch)
    # one parallel region per call of the product, not one per tile (9 x 9 x 9 tiles at n = 67, bs = 8)
    lib = tmp_path / "libcounter.so"
    (tmp_path / "counter.c").write_text(COUNTER)
    run_step([c_compiler(), "-O2", "-shared", "-fPIC", str(tmp_path / "counter.c"), "-o", str(lib), "-ldl"])
    out, regions = _run(par, ["67", "8", "mm-only"], 3, lib)
    assert regions == 1, (regions, out)


def test_strict_fp_keeps_a_blocked_sum_blocked(tmp_path: Path) -> None:
    src = tmp_path / "blocked.c"
    src.write_text(PROGRAM.lstrip("\n"))
    out_c = tmp_path / "out.c"
    err = _mdpoly(src, out_c, "--strict-fp")
    assert re.search(r"note: hand-blocked loops kept blocked: block loops 'ii', 'kk', 'jj' around point loops 'i', "
                     r"'k', 'j': un-tiled, the nest would not be one computation \(loop 'k' carries a floating-point "
                     r"'\+' reduction into 'C\[i\]\[j\]', which --strict-fp forbids reassociating\)", err), err
    assert "'i0', 'j0' around point loops 'i', 'j' run over their whole ranges" in err, err   # no reduction
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for args in (["67", "8"], ["40", "100"]):
        want = _run(orig, args, 1)[0]
        for threads in (1, 3):
            assert _run(par, args, threads)[0] == want, (args, threads)
