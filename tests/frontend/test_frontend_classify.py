"""Loop classification and MDH construction for the standard kernels."""

from __future__ import annotations

from mdpoly.ir.mdh import Affine, Combine


def ops(nest):
    return [lp.combine.value for lp in nest.loops]


def test_matvec_annotated_listing39(analyze):
    fa = analyze("""
void matvec(int I, int K, float w[I], float M[I][K], float v[K]) {
#pragma mdh(w[i] : ++, +)
  for (int i = 0; i < I; ++i)
    for (int k = 0; k < K; ++k)
    {
      w[i] += M[i][k] * v[k];
    }
}
""")
    (n,) = fa.nests
    assert n.marked and n.kept is None
    assert ops(n) == ["++", "+"]
    m = n.mdh
    assert [d.iterator for d in m.dims] == ["i", "k"]
    assert m.dims[0].extent == Affine.of({"I": 1})
    assert [a.to_c() for a in m.inputs] == ["M[i][k]", "v[k]"]
    assert m.outputs[0].access.to_c() == "w[i]" and m.outputs[0].update == "accumulate"
    assert m.f.results == ("M_i_k * v_k",)
    assert m.reassociates_fp
    assert n.span.first_line == 3 and n.span.start.line == 4 and n.span.end_line == 8
    assert m.params == (("I", None), ("K", None))
    assert {b.name for b in m.buffers} == {"I", "K", "w", "M", "v"}
    assert m.buffer("w").written and not m.buffer("M").written


MATMUL = """
#define N 32
void mm(float A[N][N], float B[N][N], float C[N][N]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""


def test_matmul_perfect(analyze):
    (n,) = analyze(MATMUL).nests
    assert ops(n) == ["++", "++", "+"]
    m = n.mdh
    assert m.outputs[0].update == "accumulate" and m.outputs[0].init is None
    assert m.dims[2].static_extent == 32
    assert "md_hom<I=32,J=32,K=32>( f, (++,++,+) )" in m.to_dsl()


def test_matmul_imperfect_init(analyze):
    (n,) = analyze("""
void mm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++) {
        double t = A[i][k] * B[k][j];
        C[i][j] += t;
      }
    }
}
""").nests
    assert ops(n) == ["++", "++", "+"]
    o = n.mdh.outputs[0]
    assert o.update == "assign" and o.init == "0.0"
    assert [a.to_c() for a in n.mdh.inputs] == ["A[i][k]", "B[k][j]"]


def test_conv_seven_deep(analyze):
    (n,) = analyze("""
void mcc(float out[2][8][14][14], float in[2][4][16][16], float w[8][4][3][3]) {
  for (int b = 0; b < 2; b++)
    for (int k = 0; k < 8; k++)
      for (int p = 0; p < 14; p++)
        for (int q = 0; q < 14; q++)
          for (int c = 0; c < 4; c++)
            for (int r = 0; r < 3; r++)
              for (int s = 0; s < 3; s++)
                out[b][k][p][q] += in[b][c][p + r][q + s] * w[k][c][r][s];
}
""").nests
    assert ops(n) == ["++"] * 4 + ["+"] * 3
    assert n.mdh.inputs[0].to_c() == "in[b][c][p + r][q + s]"


def test_jacobi_interior(analyze):
    (n,) = analyze("""
void jacobi(int N, float A[N][N], float B[N][N]) {
  for (int i = 1; i <= N - 2; i++)
    for (int j = 1; j < N - 1; j++)
      B[i][j] = 0.2f * (A[i][j] + A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]);
}
""").nests
    assert ops(n) == ["++", "++"]
    d = n.mdh.dims[0]
    assert d.lower == Affine.of(constant=1) and d.extent == Affine.of({"N": 1}, -2)
    assert n.mdh.outputs[0].update == "assign" and len(n.mdh.inputs) == 5
    assert not n.mdh.reassociates_fp


def test_dot_scalar_accumulator(analyze):
    (n,) = analyze("""
float dot(int n, const float *x, const float *y) {
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}
""").nests
    assert ops(n) == ["+"]
    o = n.mdh.outputs[0]
    assert o.access.to_c() == "s" and o.update == "accumulate"
    b = n.mdh.buffer("s")
    assert b.kind == "scalar" and b.written
    assert n.mdh.buffer("x").kind == "pointer"


def test_column_max_both_forms(analyze):
    fa = analyze("""
#include <math.h>
void colmax(float A[64][32], float m[32]) {
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 32; j++)
      m[j] = fmaxf(m[j], A[i][j]);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 32; j++)
      m[j] = (A[i][j] > m[j]) ? A[i][j] : m[j];
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 32; j++)
      m[j] = m[j] < A[i][j] ? m[j] : A[i][j];
}
""")
    assert [ops(n) for n in fa.nests] == [["max", "++"], ["max", "++"], ["min", "++"]]
    assert all(not n.mdh.reassociates_fp for n in fa.nests)


def test_prefix_sum_kept_with_reason(analyze):
    (n,) = analyze("""
void prefix(int n, const int *A, int *B) {
  for (int i = 1; i < n; i++)
    B[i] = B[i-1] + A[i];
}
""").nests
    assert n.mdh is None and ops(n) == ["seq"]
    assert n.kept.code == "sequential-dependence"
    assert n.kept.message == "loop 'i' carries a flow dependence on 'B' (B[i] reads B[i - 1])"
    assert (n.kept.loc.line, n.kept.loc.column) == (3, 3)


def test_tensor_contraction(analyze):
    (n,) = analyze("""
void tc(double C[8][8][8], double A[8][8][8], double B[8][8][8]) {
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++)
      for (int c = 0; c < 8; c++)
        for (int d = 0; d < 8; d++)
          for (int e = 0; e < 8; e++)
            C[a][b][c] += A[a][d][e] * B[d][e][c];
}
""").nests
    assert ops(n) == ["++", "++", "++", "+", "+"]


def test_integer_reduction_is_exact(analyze):
    (n,) = analyze("void s(int n, int *x, long *t) { for (int i = 0; i < n; i++) t[0] += x[i]; }").nests
    assert ops(n) == ["+"] and not n.mdh.reassociates_fp


def test_strict_fp(analyze):
    src = "void s(int n, float *x, float *t) { for (int i = 0; i < n; i++) *t = 0; }"
    fa = analyze(MATMUL, strict_fp=True)
    (n,) = fa.nests
    assert ops(n) == ["++", "++", "seq"] and n.kept.code == "sequential-dependence"
    assert "--strict-fp" in n.kept.message
    # integer reductions stay parallel under --strict-fp
    (n,) = analyze("void s(int n, int *x, int *t) { for (int i = 0; i < n; i++) t[0] += x[i]; }",
                   strict_fp=True).nests
    assert ops(n) == ["+"]
    del src


def test_multiple_outputs_concat(analyze):
    (n,) = analyze("""
void two(int n, float *a, float *b, float *c, float alpha) {
  for (int i = 0; i < n; i++) {
    b[i] = alpha * a[i];
    c[i] = a[i] + 1.0f;
  }
}
""").nests
    m = n.mdh
    assert [o.access.to_c() for o in m.outputs] == ["b[i]", "c[i]"]
    assert m.f.results == ("alpha * a_i", "a_i + 1.0f")
    assert m.buffer("alpha").kind == "scalar" and not m.buffer("alpha").written


def test_uses_indices_and_minus_equals(analyze):
    (n,) = analyze("""
void f(int n, int m, float A[n][m], float *s) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s[i] -= A[i][j] * (float)j;
}
""").nests
    assert ops(n) == ["++", "+"]
    assert n.mdh.f.results == ("-(A_i_j * (float)j)",) and n.mdh.f.uses_indices


def test_mixed_reduction_operators(analyze):
    (n,) = analyze("""
#include <math.h>
void f(float A[8][8][8], float *m) {
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      m[0] = fmaxf(m[0], A[0][i][j]);
      m[1] += A[1][i][j];
    }
}
""").nests
    assert n.mdh is None and n.kept.code == "mixed-reduction-operators"


def test_function_line_and_headers_skipped(analyze):
    fa = analyze("""#include <stdio.h>
static inline
float
scale(int n, float *x) {
  for (int i = 0; i < n; i++)
    x[i] = 2.0f * x[i];
  return 0;
}
""")
    (n,) = fa.nests
    assert n.function == "scale" and n.function_line == 2
    assert n.loops[0].combine is Combine.CONCAT


def test_single_iteration_reduction_loop(analyze):
    (n,) = analyze("""
#define K 1
void mv(float w[4], float M[4][K], float v[K]) {
#pragma mdh(w[i] : ++, +)
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < K; k++)
      w[i] += M[i][k] * v[k];
}
""").nests
    assert ops(n) == ["++", "+"] and n.mdh.outputs[0].update == "accumulate"
