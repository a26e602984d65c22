"""``--target opencl`` on first-layer convolutions and a GEMV, differential against the original C.

A strided NHWC/KRSC convolution (VALID padding, an input wider than the window reads, as ResNet-50's
230 x 230) and a 1 x N x K MatMul are written as C programs that print every output; each is built
as is and through ``mdpoly --target opencl`` (PoCL here) and the outputs compared. The convolutions'
default tiles hold the whole r x s x c window and copy the input's width x channel run as one row in
vectors aligned in ``__global`` memory (``mdpoly.lower.gpu_params.copy_box``). The same convolution
written on flat pointers with its sizes as parameters is delinearized (``in[][ih][iw][c]``) under
run-time checks of its window (``mdpoly.frontend.delinearize``). Skipped, with the reason, where
OpenCL programs cannot run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import build_c, run_mdpoly, run_program
from test_opencl_examples import build_opencl, needs_opencl

from mdpoly.differential import compare_outputs

CONV = r"""
#include <stdio.h>
#define IH ((P - 1) * STR + R + EXTRA)
#define IW ((Q - 1) * STR + S + EXTRA)
static float in[N][IH][IW][C];
static float w[K][R][S][C];
static float out[N][P][Q][K];
static unsigned lcg = 11u;
static float next_value(void)
{
    lcg = lcg * 1103515245u + 12345u;
    return (float)((lcg >> 8) & 0xFFFFu) / 32768.0f - 1.0f;
}
static void conv(void)
{
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    for (int r = 0; r < R; r++)
                        for (int s = 0; s < S; s++)
                            for (int c = 0; c < C; c++)
                                out[n][p][q][k] += in[n][p * STR + r][q * STR + s][c] * w[k][r][s][c];
}
int main(void)
{
    for (int n = 0; n < N; n++)
        for (int h = 0; h < IH; h++)
            for (int x = 0; x < IW; x++)
                for (int c = 0; c < C; c++)
                    in[n][h][x][c] = next_value();
    for (int k = 0; k < K; k++)
        for (int r = 0; r < R; r++)
            for (int s = 0; s < S; s++)
                for (int c = 0; c < C; c++)
                    w[k][r][s][c] = next_value();
    conv();
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < K; k++)
                    printf("%.9g\n", out[n][p][q][k]);
    return 0;
}
"""

GEMV = r"""
#include <stdio.h>
static float A[1][KK], B[KK][NN], Cm[1][NN];
int main(void)
{
    unsigned s = 3u;
    for (int k = 0; k < KK; k++) { s = s * 1103515245u + 12345u; A[0][k] = (float)((s >> 8) & 0xFFFu) / 2048.0f - 1.0f; }
    for (int k = 0; k < KK; k++)
        for (int j = 0; j < NN; j++) { s = s * 1103515245u + 12345u; B[k][j] = (float)((s >> 8) & 0xFFFu) / 2048.0f - 1.0f; }
    for (int i = 0; i < 1; i++)
        for (int j = 0; j < NN; j++)
            for (int k = 0; k < KK; k++)
                Cm[i][j] += A[i][k] * B[k][j];
    for (int j = 0; j < NN; j++)
        printf("%.9g\n", Cm[0][j]);
    return 0;
}
"""

CONVS = [  # the sizes as -D; EXTRA unread rows and columns of the input
    {"N": 2, "P": 5, "Q": 9, "K": 6, "C": 3, "R": 7, "S": 7, "STR": 2, "EXTRA": 1},   # ResNet-50-like
    {"N": 1, "P": 6, "Q": 11, "K": 5, "C": 3, "R": 3, "S": 3, "STR": 1, "EXTRA": 0},  # VGG-16-like
    {"N": 2, "P": 4, "Q": 7, "K": 9, "C": 4, "R": 3, "S": 3, "STR": 2, "EXTRA": 0},   # 4 channels, stride 2
]


def _differential(text: str, sizes: dict[str, int], tmp_path: Path) -> str:
    src = tmp_path / "prog.c"
    src.write_text(text)
    reference = run_program(build_c(src, tmp_path / "orig", sizes, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, out_c, sizes, extra=["-q", "--target", "opencl"])
    generated = out_c.read_text()
    assert "__kernel void" in generated
    got = run_program(build_opencl(out_c, tmp_path / "cl", sizes))
    mismatch = compare_outputs(reference, got, rtol=1e-4, atol=1e-4)
    assert mismatch is None, f"{sizes} (out.c kept in {tmp_path}): {mismatch}"
    return generated


@needs_opencl
@pytest.mark.parametrize("sizes", CONVS, ids=lambda s: f"r{s['R']}-c{s['C']}-str{s['STR']}")
def test_first_layer_conv_matches_original(sizes: dict[str, int], tmp_path: Path) -> None:
    generated = _differential(CONV, sizes, tmp_path)
    assert "float4" in generated           # the merged rows load vectors


@needs_opencl
def test_gemv_matches_original(tmp_path: Path) -> None:
    _differential(GEMV, {"NN": 301, "KK": 1500}, tmp_path)


FLAT_CONV = r"""
#include <stdio.h>
#include <stdlib.h>

/* as people write it: C89 iterators at the top, sizes as parameters, flat NHWC / KRSC pointers
   (the stride a constant: a stride parameter times an iterator is not affine) */
void conv(int n_, int p_, int q_, int k_, int c_, int r_, int s_, int ih, int iw,
          const float *in, const float *w, float *out)
{
    int n, p, q, k, r, s, c;
#pragma scop
    for (n = 0; n < n_; n++)
        for (p = 0; p < p_; p++)
            for (q = 0; q < q_; q++)
                for (k = 0; k < k_; k++)
                    for (r = 0; r < r_; r++)
                        for (s = 0; s < s_; s++)
                            for (c = 0; c < c_; c++)
                                out[((n * p_ + p) * q_ + q) * k_ + k] +=
                                    in[((n * ih + p * STR + r) * iw + q * STR + s) * c_ + c]
                                    * w[((k * r_ + r) * s_ + s) * c_ + c];
#pragma endscop
}

int main(void)
{
    int ih = (P - 1) * STR + R + EXTRA, iw = (Q - 1) * STR + S + EXTRA;
    long i, n_in = (long)N * ih * iw * C, n_w = (long)K * R * S * C, n_out = (long)N * P * Q * K;
    float *in = malloc(n_in * sizeof *in), *w = malloc(n_w * sizeof *w), *out = calloc(n_out, sizeof *out);
    unsigned lcg = 5u;
    for (i = 0; i < n_in; i++) { lcg = lcg * 1103515245u + 12345u; in[i] = (float)((lcg >> 8) & 0xFFFu) / 2048.0f - 1.0f; }
    for (i = 0; i < n_w; i++) { lcg = lcg * 1103515245u + 12345u; w[i] = (float)((lcg >> 8) & 0xFFFu) / 2048.0f - 1.0f; }
    conv(N, P, Q, K, C, R, S, ih, iw, in, w, out);
    for (i = 0; i < n_out; i++)
        printf("%.9g\n", out[i]);
    free(in); free(w); free(out);
    return 0;
}
"""


@needs_opencl
@pytest.mark.parametrize("sizes", CONVS[:2], ids=lambda s: f"r{s['R']}-c{s['C']}-str{s['STR']}")
def test_flat_pointer_conv_is_delinearized_under_a_run_time_check(sizes: dict[str, int], tmp_path: Path) -> None:
    """The input's row length ``iw`` is a parameter of its own: the flat subscript is split into
    ``in[n][p*STR + r][q*STR + s][c]`` (``mdpoly.frontend.delinearize``) under the run-time checks
    that the window stays within the input's rows and columns (``q*STR + s < iw``); they hold here,
    so the kernel runs and computes what the original does."""
    src = tmp_path / "prog.c"
    src.write_text(FLAT_CONV)
    reference = run_program(build_c(src, tmp_path / "orig", sizes, openmp=False))
    out_c = tmp_path / "out.c"
    run_mdpoly(src, tmp_path / "prog.mdh", sizes, extra=["-q", "--target", "opencl", "--emit", "mdh"])
    stride = "" if sizes["STR"] == 1 else f"{sizes['STR']} * "
    check = f"requires (long long)iw - {stride}(long long)q_ - (long long)s_ + {sizes['STR']} >= 0"
    assert check in (tmp_path / "prog.mdh").read_text()
    run_mdpoly(src, out_c, sizes, extra=["-q", "--target", "opencl"])
    generated = out_c.read_text()
    assert "__kernel void mdpoly_conv_" in generated and "(float (*)[ih][iw][c_]) in" in generated
    got = run_program(build_opencl(out_c, tmp_path / "cl", sizes))
    assert compare_outputs(reference, got, rtol=1e-4, atol=1e-4) is None
