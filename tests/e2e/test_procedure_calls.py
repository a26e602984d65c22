"""Procedures called per row (``frontend/normalize/loop_helpers.inline_procedures``): a loop
calling a ``static void`` function with loops on each row -- ``for (b...) layernorm_row(y + b * C,
x + b * C, w, bias, C);``, ``for (b...) softmax(att + b * T, n);`` -- was refused ('call to
'layernorm_row': it has a loop'), so only the function's own small nests were parallel, each
below the cost model's threshold at row sizes. The call is now the function's body in place (its
parameters locals set to the arguments), and the loop over rows runs in parallel.

What must stay: rows that overlap (a procedure writing ``n + 1`` elements of rows ``n`` apart)
carry a dependence, and a procedure with an early ``return`` is no body in place (each nest keeps
its reason). Outputs equal the original's at 1 and 3 threads; inside the parallel loop over rows
the function's own transformed nests see a team of one (``mdp_team()`` under an active region) and
run as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_program, run_step

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void softmax(float *x, int size)
{
    float max_val = x[0], sum = 0.0f;
    for (int i = 1; i < size; i++)
        if (x[i] > max_val)
            max_val = x[i];
    for (int i = 0; i < size; i++) {
        x[i] = expf(x[i] - max_val);
        sum += x[i];
    }
    for (int i = 0; i < size; i++)
        x[i] /= sum;
}

static void layernorm_row(float *out, const float *inp, const float *w, const float *b, int C)
{
    float mean = 0.0f;
    for (int i = 0; i < C; i++)
        mean += inp[i];
    mean /= C;
    float var = 0.0f;
    for (int i = 0; i < C; i++) {
        float d = inp[i] - mean;
        var += d * d;
    }
    var /= C;
    float rs = 1.0f / sqrtf(var + 1e-5f);
    for (int i = 0; i < C; i++)
        out[i] = (inp[i] - mean) * rs * w[i] + b[i];
}

/* writes n + 1 elements: rows n apart overlap by one */
static void smear(float *row, int n)
{
    for (int i = 0; i < n; i++)
        row[i + 1] += 0.5f * row[i];
}

/* an early return: no body in place */
static void clip_until_negative(float *row, int n)
{
    for (int i = 0; i < n; i++) {
        if (row[i] < -0.9f)
            return;
        row[i] = row[i] > 0.8f ? 0.8f : row[i];
    }
}

int main(int argc, char **argv)
{
    int B = argc > 1 ? atoi(argv[1]) : 300, C = argc > 2 ? atoi(argv[2]) : 257;
    float *x = malloc(sizeof(float) * (B * C + 1)), *y = malloc(sizeof(float) * B * C);
    float *w = malloc(sizeof(float) * C), *bb = malloc(sizeof(float) * C);
    for (int i = 0; i < B * C + 1; i++) x[i] = (float)((i * 7) % 23) / 11.0f - 1.0f;
    for (int i = 0; i < C; i++) { w[i] = 1.0f + 0.001f * i; bb[i] = 0.01f * (i % 5); }
    for (int b = 0; b < B; b++)                                        /* MARK layernorm */
        layernorm_row(y + b * C, x + b * C, w, bb, C);
    for (int b = 0; b < B; b++)                                        /* MARK softmax */
        softmax(y + (size_t)b * C, C);
    for (int b = 0; b < B; b++)                                        /* MARK smear */
        smear(x + b * C, C);
    for (int b = 0; b < B; b++)                                        /* MARK clip */
        clip_until_negative(x + b * C, C);
    double s = 0, t = 0;
    for (int i = 0; i < B * C; i++) { s += y[i] * (1 + i % 7); t += x[i] * (1 + i % 5); }
    printf("%.6e %.6e %.6f\n", s, t, x[B * C]);
    free(x); free(y); free(w); free(bb);
    return 0;
}
"""


def _mark(name: str) -> int:
    return 1 + next(k for k, line in enumerate(PROGRAM.lstrip("\n").splitlines()) if f"MARK {name}" in line)


def test_per_row_procedures_run_in_parallel(tmp_path: Path) -> None:
    src = tmp_path / "rows.c"
    src.write_text(PROGRAM.lstrip("\n"))
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune", "--report", str(report)],
                    env=child_env())
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    for name in ("layernorm", "softmax"):
        nest = nests[_mark(name)]
        assert nest["status"] == "transformed", (name, nest)
        assert f"rows.c:{_mark(name)}:5: remark: loop nest scheduled: [b:++ private-body]" in proc.stderr, proc.stderr
    assert nests[_mark("smear")]["status"] != "transformed", nests[_mark("smear")]
    # kept with its reason: the rows' flat subscripts do not stay within rows of C (i + 1 reaches C)
    assert nests[_mark("smear")]["code"] in ("non-affine-subscript", "sequential-dependence"), nests[_mark("smear")]
    assert f"rows.c:{_mark('clip') + 1}:9: note: loop nest kept sequential: call to 'clip_until_negative'" in proc.stderr
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False), cwd=tmp_path)
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for args in ((), ("1", "5"), ("64", "3000")):
        ref = reference if not args else run_step([str(tmp_path / "orig"), *args]).stdout
        for threads in (1, 3):
            got = run_step([str(parallel), *args], env=child_env(OMP_NUM_THREADS=str(threads))).stdout
            mismatch = compare_outputs(ref, got, rtol=1e-5, atol=1e-6)
            assert mismatch is None, f"args {args}, {threads} threads (out.c in {tmp_path}): {mismatch}"


ATTENTION = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void softmax(float *x, int size)
{
    float max_val = x[0], sum = 0.0f;
    for (int i = 1; i < size; i++)
        if (x[i] > max_val)
            max_val = x[i];
    for (int i = 0; i < size; i++) {
        x[i] = expf(x[i] - max_val);
        sum += x[i];
    }
    for (int i = 0; i < size; i++)
        x[i] /= sum;
}

/* llama2.c's attention over the cached positions, without its '#pragma omp parallel for' */
static void attention(float *q, float *att, float *xb, const float *key_cache, const float *value_cache,
                      int n_heads, int n_kv_heads, int head_size, int seq_len, int pos, int loff)
{
    int kv_dim = n_kv_heads * head_size, kv_mul = n_heads / n_kv_heads;
    int h;
    for (h = 0; h < n_heads; h++) {
        float *qh = q + h * head_size;
        float *ah = att + h * seq_len;
        float *xh = xb + h * head_size;
        int t, e;
        for (t = 0; t <= pos; t++) {
            const float *k = key_cache + loff + t * kv_dim + (h / kv_mul) * head_size;
            float score = 0.0f;
            for (e = 0; e < head_size; e++)
                score += qh[e] * k[e];
            ah[t] = score / sqrtf((float)head_size);
        }
        softmax(ah, pos + 1);
        memset(xh, 0, head_size * sizeof(float));
        for (t = 0; t <= pos; t++) {
            const float *v = value_cache + loff + t * kv_dim + (h / kv_mul) * head_size;
            float a = ah[t];
            for (e = 0; e < head_size; e++)
                xh[e] += a * v[e];
        }
    }
}

int main(int argc, char **argv)
{
    int n_heads = argc > 1 ? atoi(argv[1]) : 8, n_kv = argc > 2 ? atoi(argv[2]) : 4, hs = 24, seq = 40, layers = 2;
    int kv_dim = n_kv * hs;
    float *q = malloc(sizeof(float) * n_heads * hs), *att = calloc((size_t)n_heads * seq, sizeof(float));
    float *xb = malloc(sizeof(float) * n_heads * hs);
    float *kc = malloc(sizeof(float) * layers * seq * kv_dim), *vc = malloc(sizeof(float) * layers * seq * kv_dim);
    for (int i = 0; i < n_heads * hs; i++) q[i] = (float)((i * 7) % 13) / 13.0f - 0.4f;
    for (int i = 0; i < layers * seq * kv_dim; i++) {
        kc[i] = (float)((i * 11) % 17) / 17.0f - 0.5f;
        vc[i] = (float)((i * 5) % 19) / 19.0f - 0.3f;
    }
    double s = 0.0;
    for (int pos = 0; pos < seq; pos += 7)
        for (int l = 0; l < layers; l++) {
            attention(q, att, xb, kc, vc, n_heads, n_kv, hs, seq, pos, l * seq * kv_dim);
            for (int i = 0; i < n_heads * hs; i++)
                s += xb[i] * (1 + i % 7);
        }
    printf("%.6e %.6e\n", s, att[seq + 3]);
    return 0;
}
"""


def test_attention_heads_calling_softmax_run_in_parallel(tmp_path: Path) -> None:
    """llama2.c's heads loop without the user's pragma: 'int t, e;' at the top of each head, a
    per-head local pointer passed to softmax (a procedure) and memset: one parallel loop over the
    heads, equal outputs with grouped-query heads and without."""
    src = tmp_path / "attn.c"
    src.write_text(ATTENTION.lstrip("\n"))
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    line = 1 + next(k for k, text in enumerate(ATTENTION.lstrip("\n").splitlines()) if "for (h = 0;" in text)
    assert f"attn.c:{line}:5: remark: loop nest scheduled: [h:++ private-body]" in proc.stderr, proc.stderr
    build_c(src, tmp_path / "orig", {}, openmp=False)
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for args in (("8", "4"), ("6", "6"), ("32", "8")):
        ref = run_step([str(tmp_path / "orig"), *args]).stdout
        for threads in (1, 3):
            got = run_step([str(parallel), *args], env=child_env(OMP_NUM_THREADS=str(threads))).stdout
            mismatch = compare_outputs(ref, got, rtol=1e-5, atol=1e-6)
            assert mismatch is None, f"args {args}, {threads} threads (out.c in {tmp_path}): {mismatch}"
