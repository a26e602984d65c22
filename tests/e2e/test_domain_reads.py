"""View range checks of reads under ``if``s (``mdpoly.frontend.guarded_reads.within_domain``):
C source with a zero-padded convolution on a flat buffer -> the generated call runs for any
padding (the ``if`` keeps every evaluated read inside its rows), the original where a subscript
the ``if`` does not bound leaves its row; output equal to the sequential build at 1-4 threads
(small integer values: any summation order gives the same floats)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.e2e_harness import build_c, mdpoly_available, run_mdpoly

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly not importable")

# XGUARD: the condition on ix the source checks (the full one, or one that lets ix leave the row)
_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
long par_calls;
static void conv(float *out, const float *in, const float *filt, int H, int W, int C, int R, int S, int pad)
{
    int OH = H + 2 * pad - R + 1, OW = W + 2 * pad - S + 1;
    int oy, ox, r, s, c;
    for (oy = 0; oy < OH; oy++)
        for (ox = 0; ox < OW; ox++) {
            float acc = 0.0f;
            for (r = 0; r < R; r++)
                for (s = 0; s < S; s++) {
                    int iy = oy + r - pad, ix = ox + s - pad;
                    if (iy >= 0 && iy < H && XGUARD)
                        for (c = 0; c < C; c++)
                            acc += in[(iy * W + ix) * C + c] * filt[(r * S + s) * C + c];
                }
            out[oy * OW + ox] = acc;
        }
}
int main(int argc, char **argv)
{
    int H = 97, W = 103, C = 3, R = 3, S = 5, pad = atoi(argv[1]);
    long i, n = (long)(H + 2 * pad) * (W + 2 * pad);
    float *in = malloc((size_t)((H + 2) * W * C) * sizeof(float)), *filt = malloc(64 * sizeof(float));
    float *out = malloc((size_t)n * sizeof(float));
    for (i = 0; i < (H + 2) * W * C; i++) in[i] = (float)(i % 7) - 3.0f;
    for (i = 0; i < R * S * C; i++) filt[i] = (float)(i % 5) - 2.0f;
    conv(out, in + W * C, filt, H, W, C, R, S, pad);
    double s = 0.0;
    long m = (long)(H + 2 * pad - R + 1) * (W + 2 * pad - S + 1);
    for (i = 0; i < m; i++) s += out[i] * (double)(i % 11 + 1);
    printf("sum %.9e calls %ld\n", s, par_calls);
    return 0;
}
"""


def _build(tmp_path: Path, xguard: str) -> tuple[Path, Path]:
    src = tmp_path / "conv.c"
    src.write_text(_SOURCE.replace("XGUARD", xguard))
    seq = build_c(src, tmp_path / "seq", {}, openmp=False)
    out = tmp_path / "conv_mdp.c"
    run_mdpoly(src, out, {})
    text, n = re.subn(r"^(\s*)(mdpoly_conv_\w+\()", r"\1par_calls++; \2", out.read_text(), flags=re.M)
    assert n == 1, text
    out.write_text(text)
    return seq, build_c(out, tmp_path / "par", {}, openmp=True)


def _check(seq: Path, par: Path, pad: int, parallel: bool) -> None:
    want = _run(seq, pad).split(" calls")[0]
    for threads in (1, 2, 3, 4):
        got = _run(par, pad, threads)
        assert got.split(" calls")[0] == want, (pad, threads, got, want)
        assert got.strip().endswith("calls 1" if parallel else "calls 0"), (pad, threads, got)


def _run(exe: Path, pad: int, threads: int | None = None) -> str:
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    return subprocess.run([str(exe), str(pad)], env=env, capture_output=True, text=True, check=True).stdout


def test_padded_reads_under_their_if_run_the_call_for_any_padding(tmp_path: Path) -> None:
    seq, par = _build(tmp_path, "ix >= 0 && ix < W")
    for pad in (0, 1, 2):
        _check(seq, par, pad, parallel=True)


def test_a_subscript_the_if_does_not_bound_keeps_the_run_time_check(tmp_path: Path) -> None:
    # ix may be -pad..-1 at the left edge: in[(iy * W + ix) * C + c] then reads the previous row (the
    # buffer has a row before 'in'), which the view in[iy][ix][c] cannot express
    seq, par = _build(tmp_path, "ix < W")
    _check(seq, par, 0, parallel=True)
    for pad in (1, 2):
        _check(seq, par, pad, parallel=False)
