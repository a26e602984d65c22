"""Start values read from arrays on the GPU targets (``mdpoly.lower.start_values``): llm.c's
``float val = (bias != NULL) ? bias[o] : 0.0f; for (i...) val += inp[..] * weight[..];`` was kept
on the host ('an initial value read from an array is not supported in GPU kernels yet'). A GPU
kernel reduces from the neutral element and adds the start value after reducing, as a finishing
expression whose reads are copied like any other input.

The program: the matmul with its bias and without (NULL), ``C = D + A B`` with ``C[i][j] =
D[i][j]`` before the reduction, a local accumulator starting at ``b0[o]`` and stored through
``tanhf(s) * scale[o]`` (start value and finishing reads together), a product starting at
``a0[i]``; and a ``max`` starting at an element (``fmaxf`` of a start value is not rewritten:
that nest stays on the host, with its reason). Every nest is forced onto the device (``--all-nests``
and ``gpu_min_speedup=0``), the second matmul's null bias too (nothing of it is copied); the
OpenCL output runs on the machine's OpenCL device (PoCL) at 1 and 3 OpenMP threads and prints
what the original prints; the CUDA output's kernels compile where a toolkit is installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_harness import build_c, c_compiler, child_env, mdpoly_available, mdpoly_command, run_program, run_step
from test_opencl_examples import build_opencl, opencl_unavailable

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

void matmul_forward(float *out, const float *inp, const float *weight, const float *bias, int B, int C, int OC)
{
    for (int b = 0; b < B; b++)
        for (int o = 0; o < OC; o++) {
            float val = (bias != NULL) ? bias[o] : 0.0f;
            for (int i = 0; i < C; i++)
                val += inp[b * C + i] * weight[o * C + i];
            out[b * OC + o] = val;
        }
}

void gemm_plus(int n, int m, int K, double C[n][m], double D[n][m], double A[n][K], double Bm[K][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            C[i][j] = D[i][j];
            for (int k = 0; k < K; k++)
                C[i][j] += A[i][k] * Bm[k][j];
        }
}

void dense_tanh(int O, int N, const float *w, const float *x, const float *b0, const float *scale, float *y)
{
    for (int o = 0; o < O; o++) {
        float s = b0[o];
        for (int i = 0; i < N; i++)
            s += w[o * N + i] * x[i];
        y[o] = tanhf(s) * scale[o];
    }
}

void row_products(int n, int K, const double *a0, const double *m, double *p)
{
    for (int i = 0; i < n; i++) {
        double q = a0[i];
        for (int k = 0; k < K; k++)
            q *= m[i * K + k];
        p[i] = q;
    }
}

void row_max(int n, int K, const float *x, float *mx)
{
    for (int i = 0; i < n; i++) {
        float v = x[i * K];
        for (int k = 1; k < K; k++)
            v = fmaxf(v, x[i * K + k]);
        mx[i] = v;
    }
}

int main(void)
{
    int B = 37, C = 53, OC = 29, n = 41, m = 23, K = 19, O = 67, N = 45;
    float *inp = malloc(sizeof(float) * B * C), *weight = malloc(sizeof(float) * OC * C);
    float *bias = malloc(sizeof(float) * OC), *out1 = malloc(sizeof(float) * B * OC), *out2 = malloc(sizeof(float) * B * OC);
    double (*Cm)[m] = malloc(sizeof(double) * n * m), (*D)[m] = malloc(sizeof(double) * n * m);
    double (*A)[K] = malloc(sizeof(double) * n * K), (*Bm)[m] = malloc(sizeof(double) * K * m);
    float *w = malloc(sizeof(float) * O * N), *x = malloc(sizeof(float) * N), *b0 = malloc(sizeof(float) * O);
    float *scale = malloc(sizeof(float) * O), *y = malloc(sizeof(float) * O);
    double *a0 = malloc(sizeof(double) * n), *pm = malloc(sizeof(double) * n * K), *p = malloc(sizeof(double) * n);
    float *xs = malloc(sizeof(float) * n * K), *mx = malloc(sizeof(float) * n);
    for (int i = 0; i < B * C; i++) inp[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    for (int i = 0; i < OC * C; i++) weight[i] = (float)((i * 5) % 13) / 13.0f - 0.4f;
    for (int i = 0; i < OC; i++) bias[i] = 0.25f * (float)(i % 5);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) D[i][j] = (double)((i + 3 * j) % 7) - 2.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) A[i][k] = (double)((i * k) % 5) * 0.5;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < m; j++) Bm[k][j] = (double)((k + j) % 3) - 1.0;
    for (int i = 0; i < O * N; i++) w[i] = (float)((i * 3) % 17) / 17.0f - 0.5f;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 9) / 9.0f;
    for (int o = 0; o < O; o++) { b0[o] = 0.1f * (float)(o % 4) - 0.15f; scale[o] = 1.0f + 0.01f * (float)o; }
    for (int i = 0; i < n; i++) a0[i] = 1.0 + 0.125 * (i % 3);
    for (int i = 0; i < n * K; i++) pm[i] = 0.75 + 0.0625 * (i % 9);
    for (int i = 0; i < n * K; i++) xs[i] = (float)((i * 13) % 29) - 14.0f;

    matmul_forward(out1, inp, weight, bias, B, C, OC);
    matmul_forward(out2, inp, weight, NULL, B, C, OC);
    gemm_plus(n, m, K, Cm, D, A, Bm);
    dense_tanh(O, N, w, x, b0, scale, y);
    row_products(n, K, a0, pm, p);
    row_max(n, K, xs, mx);

    double s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0;
    for (int i = 0; i < B * OC; i++) { s1 += out1[i] * (1 + i % 7); s2 += out2[i] * (1 + i % 5); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) s3 += Cm[i][j] * (1 + (i + j) % 3);
    for (int o = 0; o < O; o++) s4 += y[o] * (1 + o % 4);
    for (int i = 0; i < n; i++) { s5 += p[i] * (1 + i % 2); s6 += mx[i] * (1 + i % 3); }
    printf("%.6f %.6f %.6f %.6f %.6f %.6f\n", s1, s2, s3, s4, s5, s6);
    return 0;
}
"""

DEVICE = ("matmul_forward", "gemm_plus", "dense_tanh", "row_products")


def _generate(tmp_path: Path, target: str) -> tuple[Path, dict[str, dict], str]:
    src = tmp_path / "prog.c"
    src.write_text(PROGRAM)
    out_c, report = tmp_path / f"out_{target}.c", tmp_path / f"report_{target}.json"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", target, "--no-tune", "--all-nests",
                     "--report", str(report)], env=child_env(MDPOLY_COST_CALIBRATION="gpu_min_speedup=0"))
    lines = PROGRAM.splitlines()
    nests: dict[str, dict] = {}
    for nest in json.loads(report.read_text())["nests"]:
        for k in range(nest["line"] - 1, -1, -1):
            if lines[k].startswith("void "):
                nests.setdefault(lines[k].split()[1].split("(")[0], nest)
                break
    return out_c, nests, proc.stderr


def test_start_values_read_from_arrays_run_on_the_device(tmp_path: Path) -> None:
    why = opencl_unavailable()
    if why is not None:
        pytest.skip(why)
    out_c, nests, err = _generate(tmp_path, "opencl")
    for name in DEVICE:
        assert nests[name]["status"] == "transformed" and nests[name]["target"] == "opencl", (name, nests[name])
    assert nests["row_max"]["target"] == "openmp", nests["row_max"]
    assert "[gpu-array-init]" in err, err
    reference = run_program(build_c(tmp_path / "prog.c", tmp_path / "orig", {}, openmp=False))
    exe = build_opencl(out_c, tmp_path / "gpu", {})
    assert compare_outputs(reference, run_program(exe), rtol=1e-5, atol=1e-5) is None
    omp = tmp_path / "gpu_omp"
    run_step([c_compiler(), "-O2", "-fopenmp", str(out_c), "-o", str(omp), "-lOpenCL", "-lm"])
    for threads in (1, 3):
        mismatch = compare_outputs(reference, run_program(omp, threads=threads), rtol=1e-5, atol=1e-5)
        assert mismatch is None, f"{threads} threads (out.c in {tmp_path}): {mismatch}"


def test_start_values_read_from_arrays_in_cuda_kernels(tmp_path: Path) -> None:
    """The CUDA output puts the same nests on the device; its kernels compile (NVRTC's dialect,
    checked with nvcc where a toolkit is installed)."""
    from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable
    out_c, nests, _err = _generate(tmp_path, "cuda")
    for name in DEVICE:
        assert nests[name]["target"] == "cuda", (name, nests[name])
    why = nvrtc_unavailable()
    if why is not None:
        pytest.skip(why)
    sources = kernel_sources(out_c.read_text())
    assert len(sources) >= len(DEVICE), sorted(sources)
    for name, source in sources.items():
        compile_for_sm90(source, name, tmp_path)
