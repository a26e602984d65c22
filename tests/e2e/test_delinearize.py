"""Flat subscripts with several run-time sizes, delinearized (``mdpoly.frontend.delinearize``).

One program holds a 3-D stencil ``in[x + y*nx + z*nx*ny]``, a KV-cache dot product per head
``A[t*kv + h*hs + i]``, a per-layer matvec ``w[(l*dim + i)*dim + j]`` and a flat NHWC convolution
``in[((n*ih + p*STR + r)*iw + q*STR + s)*c + ch]``. It is built as written and through mdpoly; both
run (OpenMP at 1-4 threads; OpenCL on PoCL when there is a device) and must print the same text.
The values are small integers, so every sum is exact whatever order the parallel code adds in.

The versioned nests (``kv / hs`` rows of ``hs``; ``q*STR + s < iw``) are called on both sides of
their run-time check. An instrumented build -- the generated file with ``fprintf(stderr, ...)``
before each call of a generated function, which runs only when the check passes -- pins which side
ran for each call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_harness import (
    assert_same_outputs,
    build_c,
    c_compiler,
    child_env,
    mdpoly_available,
    run_mdpoly,
    run_program,
    run_step,
)
from test_opencl_examples import build_opencl, needs_opencl, opencl_unavailable

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""#include <stdio.h>
#include <stdlib.h>
#define STR 2

void stencil(int nx, int ny, int nz, const float *in, float *out) {
  for (int z = 1; z < nz - 1; z++)
    for (int y = 1; y < ny - 1; y++)
      for (int x = 1; x < nx - 1; x++)
        out[x + y*nx + z*nx*ny] = 2 * in[x + y*nx + z*nx*ny]
          + in[x + y*nx + z*nx*ny - 1] + in[x + 1 + y*nx + z*nx*ny]
          + in[x + y*nx + z*nx*ny - nx] + in[x + (y + 1)*nx + z*nx*ny]
          + in[x + (y - 1)*nx + z*nx*ny - nx*ny] + in[x + y*nx + z*nx*ny + nx*ny];
}

void heads(int T, int H, int hs, int kv, const float *q, const float *A, float *att) {
  for (int t = 0; t < T; t++)
    for (int h = 0; h < H; h++) {
      float s = 0;
      for (int i = 0; i < hs; i++)
        s += q[h*hs + i] * A[t*kv + h*hs + i];
      att[h*T + t] = s;
    }
}

void layers(int L, int dim, const float *w, const float *x, float *y) {
  for (int l = 0; l < L; l++)
    for (int i = 0; i < dim; i++) {
      float s = 0;
      for (int j = 0; j < dim; j++)
        s += w[(l*dim + i)*dim + j] * x[l*dim + j];
      y[l*dim + i] = s;
    }
}

void conv(int n_, int p_, int q_, int k_, int c_, int r_, int s_, int ih, int iw,
          const float *in, const float *w, float *out) {
  int n, p, q, k, r, s, c;
  for (n = 0; n < n_; n++)
    for (p = 0; p < p_; p++)
      for (q = 0; q < q_; q++)
        for (k = 0; k < k_; k++)
          for (r = 0; r < r_; r++)
            for (s = 0; s < s_; s++)
              for (c = 0; c < c_; c++)
                out[((n*p_ + p)*q_ + q)*k_ + k] +=
                  in[((n*ih + p*STR + r)*iw + q*STR + s)*c_ + c] * w[((k*r_ + r)*s_ + s)*c_ + c];
}

static float *filled(long n, int seed) {
  float *v = malloc(sizeof(float) * (n > 0 ? n : 1));
  for (long i = 0; i < n; i++) v[i] = (float)((i * 7 + seed) % 9 - 4);
  return v;
}
static void show(const char *name, const float *v, long n) {
  double s = 0, t = 0;
  for (long i = 0; i < n; i++) { s += v[i]; t += v[i] * (double)(i % 13 + 1); }
  printf("%s %.1f %.1f\n", name, s, t);
}

int main(void) {
  int nx = 23, ny = 17, nz = 11;
  float *a = filled((long)nx * ny * nz, 1), *b = calloc((size_t)nx * ny * nz, sizeof(float));
  stencil(nx, ny, nz, a, b);
  show("stencil", b, (long)nx * ny * nz);

  int T = 9, H = 4, hs = 8;
  float *q = filled(H * hs, 2), *A = filled(T * 40 + H * hs, 3), *att = calloc(H * T, sizeof(float));
  heads(T, H, hs, H * hs, q, A, att);       /* kv = H*hs: the check holds, the parallel code runs */
  show("heads", att, H * T);
  heads(T, H, hs, 3 * hs, q, A, att);       /* H*hs > kv: the heads overlap, the original runs */
  show("heads-overlap", att, H * T);
  heads(T, H, hs, 36, q, A, att);           /* kv not a multiple of hs: the original runs */
  show("heads-ragged", att, H * T);

  int L = 3, dim = 13;
  float *w = filled(L * dim * dim, 4), *x = filled(L * dim, 5), *y = calloc(L * dim, sizeof(float));
  layers(L, dim, w, x, y);
  show("layers", y, L * dim);

  int N = 2, P = 4, Q = 5, K = 3, C = 3, R = 3, S = 3;
  int ih = (P - 1) * STR + R + 1, iw = (Q - 1) * STR + S + 1;
  float *in = filled((long)N * ih * iw * C + 64, 6), *cw = filled(K * R * S * C, 7);
  float *out = calloc(N * P * Q * K, sizeof(float));
  conv(N, P, Q, K, C, R, S, ih, iw, in, cw, out);        /* q*STR + s < iw: parallel */
  show("conv", out, N * P * Q * K);
  conv(N, P, Q, K, C, R, S, ih, iw - 3, in, cw, out);    /* windows cross the rows: the original runs */
  show("conv-narrow", out, N * P * Q * K);
  return 0;
}
"""

# the lines of the nests, and for each the calls on which its run-time check holds (in call order)
NESTS = {"stencil": 6, "heads": 16, "layers": 26, "conv": 38}
PARALLEL_CALLS = ["stencil", "heads", "layers", "conv"]


def _instrumented(generated: str) -> str:
    """The generated file announcing on stderr each call of a generated function (``mdpoly_<f>_<line>``)."""
    return re.sub(r"^(\s*)(mdpoly_([A-Za-z]+)_\d+\()", r'\1fprintf(stderr, "parallel \3\\n"); \2', generated,
                  flags=re.M)


def _generate(tmp_path: Path, target: str) -> tuple[Path, str, dict[str, object]]:
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    report = tmp_path / "report.json"
    run_mdpoly(src, out_c, {}, extra=["-q", "--target", target, "--report", str(report)])
    return out_c, reference, json.loads(report.read_text())


def _nest(report: dict[str, object], line: int) -> dict[str, object]:
    nests = report["nests"]
    assert isinstance(nests, list)
    (nest,) = [n for n in nests if n["line"] == line]
    return nest  # type: ignore[no-any-return]


def test_report_shows_the_views_and_their_checks(tmp_path: Path) -> None:
    _, _, report = _generate(tmp_path, "openmp")
    for name, line in NESTS.items():
        assert _nest(report, line)["status"] == "transformed", name
    heads = _nest(report, NESTS["heads"])["preconditions"]
    assert isinstance(heads, list)
    checks = [p["check"] for p in heads]
    assert "(long long)hs > 0 && (long long)kv % ((long long)hs) == 0" in checks
    assert "(long long)hs > 0 && (long long)H <= (long long)kv / ((long long)hs)" in checks
    assert any("A[][kv/hs][hs]" in p["reason"] for p in heads)
    conv = _nest(report, NESTS["conv"])["preconditions"]
    assert isinstance(conv, list)
    assert [p["check"] for p in conv] == [
        "(long long)ih - 2 * (long long)p_ - (long long)r_ + 2 >= 0",
        "(long long)iw - 2 * (long long)q_ - (long long)s_ + 2 >= 0"]
    # the stencil's neighbours and the matvec's rows are within their dimensions for every size
    assert "preconditions" not in _nest(report, NESTS["stencil"])
    assert "preconditions" not in _nest(report, NESTS["layers"])


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_openmp_matches_original_on_both_sides_of_the_checks(threads: int, tmp_path: Path) -> None:
    out_c, reference, _ = _generate(tmp_path, "openmp")
    generated = out_c.read_text()
    assert "(float (*)[ny][nx]) in" in generated and "(float (*)[ih][iw][c_]) in" in generated
    assert "(float (*)[dim][dim]) w" in generated
    probe = tmp_path / "probe.c"
    probe.write_text(_instrumented(generated))
    exe = build_c(probe, tmp_path / "par", {}, openmp=True)
    proc = run_step([str(exe)], env=child_env(OMP_NUM_THREADS=str(threads)))
    assert proc.stdout == reference, f"at {threads} threads ({out_c})"
    ran = [line.split()[1] for line in proc.stderr.splitlines() if line.split()[1:2] and line.split()[1] in NESTS]
    assert ran == PARALLEL_CALLS  # the second and third heads() and the second conv() ran the original


@needs_opencl
def test_opencl_matches_original(tmp_path: Path) -> None:
    out_c, reference, report = _generate(tmp_path, "opencl")
    assert "__kernel void mdpoly_heads_16" in out_c.read_text()
    assert _nest(report, NESTS["conv"])["status"] == "transformed"
    probe = tmp_path / "probe.c"
    probe.write_text(_instrumented(out_c.read_text()))
    proc = run_step([str(build_opencl(probe, tmp_path / "cl", {}))], env=child_env())
    assert proc.stdout == reference, f"OpenCL ({out_c})"
    ran = [line.split()[1] for line in proc.stderr.splitlines() if line.split()[1:2] and line.split()[1] in NESTS]
    assert ran == PARALLEL_CALLS


def test_split_over_mpi_ranks_and_devices(tmp_path: Path) -> None:
    """The views' row lengths also size what ``--mpi`` gathers and what ``--devices`` copies back."""
    from test_mpi import _mpi_missing, check
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    if _mpi_missing() is None:
        notes = check(src, tmp_path, {}, (2, 3))
        assert "dimension 'z' (++) split over MPI ranks; outputs gathered on every rank (MPI_Allgatherv)" in notes
    if opencl_unavailable() is None:
        reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
        out_c = tmp_path / "dev.c"
        run_mdpoly(src, out_c, {}, extra=["-q", "--target", "opencl", "--devices", "0,0"])
        exe = tmp_path / "dev"
        run_step([c_compiler(), "-O2", str(out_c), "-o", str(exe), "-lOpenCL", "-lm"])
        for env in ({}, {"MDPOLY_DEVICE_SHARES": "1,3"}):
            assert run_step([str(exe)], env=child_env(**env)).stdout == reference, env
    if _mpi_missing() is not None and opencl_unavailable() is not None:
        pytest.skip("neither mpicc/mpirun nor an OpenCL device")


# {{{ views shared by several accesses, invariant offsets

OFFSETS = r"""#include <stdio.h>
#include <stdlib.h>

void planes(int nx, int ny, int nz, const float *in, float *out) {
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++)
        out[x + y*nx + z*nx*ny] = in[x + y*nx] + in[x + y*nx + z*nx*ny];
}

void cache(int l, int T, int H, int hs, int kv, const float *kc, float *att) {
  for (int t = 0; t < T; t++)
    for (int h = 0; h < H; h++) {
      float s = 0;
      for (int i = 0; i < hs; i++)
        s += kc[l*T*kv + t*kv + h*hs + i];
      att[h*T + t] = s;
    }
}

void mha(int T, int H, int hs, int dim, const float *q, const float *kc, float *att) {
  for (int h = 0; h < H; h++)
    for (int t = 0; t < T; t++) {
      float s = 0;
      for (int i = 0; i < hs; i++)
        s += q[h*hs + i] * kc[t*dim + h*hs + i];
      att[h*T + t] = s;
    }
}

void rowzero(int n, int m, const float *A, float *B) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      B[i*m + j] = A[i*m + j] - A[j];
}

void based(int off, int T, int hs, const float *kc, float *o) {
  for (int t = 0; t < T; t++)
    for (int i = 0; i < hs; i++)
      o[t*hs + i] = kc[off + t*hs + i] * 2;
}

void shifted(int off, int T, int hs, const float *kc, float *o) {
  for (int t = 0; t < T; t++)
    for (int i = 0; i < hs; i++)
      o[t*hs + i] = kc[off + t*hs + i] - kc[t*hs + i];
}

void layer(int loff, int T, int H, int hs, int kv, const float *kc, float *att) {
  for (int t = 0; t < T; t++)
    for (int h = 0; h < H; h++) {
      float s = 0;
      for (int i = 0; i < hs; i++)
        s += kc[loff + t*kv + h*hs + i];
      att[h*T + t] = s;
    }
}

static float *filled(long n, int seed) {
  float *v = malloc(sizeof(float) * n);
  for (long i = 0; i < n; i++) v[i] = (float)((i * 5 + seed) % 11 - 5);
  return v;
}
static void show(const char *name, const float *v, long n) {
  double t = 0;
  for (long i = 0; i < n; i++) t += v[i] * (double)(i % 17 + 1);
  printf("%s %.1f\n", name, t);
}

int main(void) {
  int nx = 19, ny = 7, nz = 5;
  float *in = filled(nx * ny * nz, 1), *out = filled(nx * ny * nz, 2);
  planes(nx, ny, nz, in, out);
  show("planes", out, nx * ny * nz);

  int T = 6, H = 3, hs = 5, kv = H * hs;
  float *kc = filled(4 * T * kv + 8, 3), *att = calloc(H * T, sizeof(float));
  cache(2, T, H, hs, kv, kc, att);      /* layer 2 of the cache: the offset is rows of kv */
  show("cache", att, H * T);
  mha(T, H, hs, kv, kc, kc, att);       /* heads outside: i < hs still makes hs the row of dim */
  show("mha", att, H * T);
  rowzero(nz, nx * ny, in, out);        /* A[j] is row 0 of the view of A[i*m + j] */
  show("rowzero", out, nx * ny * nz);
  layer(3 * T * kv + 5, T, H, hs, kv, kc, att);  /* an opaque offset: the view starts there */
  show("layer", att, H * T);
  float *o = calloc(T * hs, sizeof(float));
  based(7, T, hs, kc, o);               /* the one access starts the view at kc + 7: parallel */
  show("based", o, T * hs);
  shifted(0, T, hs, kc, o);             /* kc and kc + off: off in the row, checked: holds */
  show("shifted", o, T * hs);
  shifted(7, T, hs, kc, o);             /* 7 leaves the row of 5: the original runs */
  show("shifted-7", o, T * hs);
  return 0;
}
"""


@pytest.mark.parametrize("threads", [2, 4])
def test_shared_views_and_invariant_offsets(threads: int, tmp_path: Path) -> None:
    """``in[x + y*nx]`` beside ``in[x + y*nx + z*nx*ny]``: both in the 3-D view (the model is rebuilt
    when the second access needs more dimensions); ``l*T*kv`` is an offset in rows of ``kv``; an opaque
    ``loff``/``off`` that every access of the array adds starts the view there (the call passes
    ``kc + off``); added by one access only, it stays in the innermost dimension, where the run-time
    check decides."""
    src = tmp_path / "prog.c"
    src.write_text(OFFSETS)
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, {}, extra=["-q", "--emit", "mdh"])
    mdh = out_c.read_text()
    assert "in:(z,y,x)->(0,y,x), in:(z,y,x)->(z,y,x)" in mdh
    assert "A:(i,j)->(i,j), A:(i,j)->(0,j)" in mdh
    assert "kc:(h,t,i)->(t,h,i)" in mdh
    assert "kc:(t,h,i)->(mdp_p_T_l+t,h,i)" in mdh and "kc:(t,i)->(t,i+off), kc:(t,i)->(t,i)" in mdh
    assert "requires (long long)off >= 0" in mdh and "requires -(long long)off >= 0" in mdh
    run_mdpoly(src, out_c, {}, extra=["-q"])
    generated = out_c.read_text()
    assert "(float (*)[hs]) (kc + (long long)off)" in generated
    assert "(float (*)[(((long long)hs > 0 ? (long long)kv / ((long long)hs) : 0))][hs]) (kc + (long long)loff)" in generated
    probe = tmp_path / "probe.c"
    probe.write_text(_instrumented(generated))
    exe = build_c(probe, tmp_path / "par", {}, openmp=True)
    proc = run_step([str(exe)], env=child_env(OMP_NUM_THREADS=str(threads)))
    assert proc.stdout == reference, f"at {threads} threads ({out_c})"
    names = ("planes", "cache", "mha", "rowzero", "layer", "based", "shifted")
    ran = [line.split()[1] for line in proc.stderr.splitlines() if line.split()[1:2] and line.split()[1] in names]
    assert ran == ["planes", "cache", "mha", "rowzero", "layer", "based", "shifted"]  # not shifted(7, ...)


# }}}


# {{{ what stays the original


KEPT = r"""#include <stdio.h>
void mixed(int n, int m, float *A) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      A[i*m + j] = A[j] + 1;
}
void twice(int n, int m, float *A) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      A[i*j] = 1;
}
"""


def test_what_stays_the_original(tmp_path: Path) -> None:
    """``A[j]`` beside ``A[i*m + j]`` is row 0 of the same view, which the write to row ``i`` then
    depends on: ``i`` stays a host loop, and with ``i`` its parameter the band ``j`` writes
    ``A[i*m + j]`` clear of the row it reads (``i * m`` is 0 or at least ``m``: what the exact
    product implies, ``frontend.deps.product_context``); ``A[i*j]`` has no view as a whole, but with
    ``i`` a host loop's iterator it is column 0 of rows of ``i`` elements (the view's row size is
    read at each call: the band does not change ``i``)."""
    src = tmp_path / "k.c"
    src.write_text(KEPT)
    proc = run_mdpoly(src, tmp_path / "out.c", {})
    assert "k.c:3:3: remark: loop nest scheduled: i:seq-in-region{ [j:++ MDH at line 4] }" in proc.stderr
    assert "k.c:8:3: remark: loop nest scheduled: i:seq-in-region{ [j:++ MDH at line 9] }" in proc.stderr


# }}}


REVERSED_ROW = r"""#include <stdio.h>
#include <stdlib.h>
void mirror(int n, int m, float *a, float *b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      b[i * m + j] = a[i * m + j] * 0.5f;
      a[i * m + j] = b[i * m + (m - 1 - j)] + 2.0f;
    }
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), m = atoi(argv[2]);
  float *a = malloc(sizeof(float) * n * m), *b = malloc(sizeof(float) * n * m);
  for (int k = 0; k < n * m; k++) { a[k] = (float)((k * 37) % 23) - 11.0f; b[k] = (float)((k * 13) % 17) - 8.0f; }
  mirror(n, m, a, b);
  mirror(n, m, a, b);
  double s = 0;
  for (int k = 0; k < n * m; k++) s += a[k] * (k % 7 + 1) + b[k];
  printf("%.8g\n", s);
  return 0;
}
"""


def test_row_read_backwards_keeps_its_dependence(tmp_path: Path) -> None:
    """``b[i*m + (m - 1 - j)]`` is row ``i`` read backwards (column ``m - 1 - j``), not column
    ``-1 - j`` of row ``i + 1``: the read of ``b`` after its write in the same row is a dependence
    along ``j``, so the two statements are not distributed into two sweeps (which read the new
    ``b`` where the original reads the old one); the row loop alone is parallel."""
    src = tmp_path / "mirror.c"
    src.write_text(REVERSED_ROW)
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "mirror.c:4:3: remark: loop nest scheduled: [i:++ private-body]" in proc.stderr, proc.stderr
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    par = build_c(out, tmp_path / "par", {}, openmp=True)
    assert_same_outputs(seq, par, (("7", "5"), ("30", "33"), ("1", "1"), ("4", "2")), (1, 3))
