"""llama2.c's rotary position embedding and loops that count down in their condition, differentially.

The RoPE loop (``frontend/normalize/short_loops.py``) rotates q, and k while ``i < kv_dim``,
with an inner loop of one or two trips that picks the vector by its iterator
(``float *vec = v == 0 ? s->q : s->k;``); it was refused twice ('loop bound ... is not affine',
'local array or pointer 'vec''). ``for (size_t i = n; i-- > 0;)`` and ``for (unsigned i = n;
i--;)`` (``frontend/normalize/down_loops.py``) were refused for their step. Now the RoPE loop
runs in parallel over ``i`` (where q and k prove disjoint at run time), and so do the downward
maps; the downward suffix sum ``y[i] = y[i + 1] + x[i]`` stays sequential, with its dependence,
and a downward loop whose iterator the function returns (its exit value wraps to ``SIZE_MAX``)
stays as written, with that reason. Outputs equal the original program's at 1 and 3 threads,
for ``kv_dim < dim`` and ``kv_dim == dim``, ``n == 0`` and ``n > 0``; a preloaded counter of
libgomp's ``GOMP_parallel`` (``test_cost_guard``) tells which kernels ran on a team.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG, _counter
from test_row_pointer_writes import _run

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float *q;     /* query (dim,) */
    float *k;     /* key (dim,), the first kv_dim rotated */
} RunState;

static void rope(RunState *s, int dim, int kv_dim, int head_size, int pos)
{
    int i;
    for (i = 0; i < dim; i += 2) {                                   /* MARK rope */
        int head_dim = i % head_size;
        float freq = 1.0f / powf(10000.0f, head_dim / (float)head_size);
        float val = pos * freq;
        float fcr = cosf(val), fci = sinf(val);
        int rotn = i < kv_dim ? 2 : 1;
        for (int v = 0; v < rotn; v++) {
            float *vec = v == 0 ? s->q : s->k;
            float v0 = vec[i], v1 = vec[i + 1];
            vec[i] = v0 * fcr - v1 * fci;
            vec[i + 1] = v0 * fci + v1 * fcr;
        }
    }
}

static void scale_down(size_t n, const float *x, float *y)
{
    for (size_t i = n; i-- > 0;)                                    /* MARK down */
        y[i] = 2.0f * x[i] + 1.0f;
}

static void axpy_down(unsigned n, float a, const float *x, float *y)
{
    for (unsigned i = n; i--;)                                      /* MARK bare */
        y[i] += a * x[i];
}

static void suffix_sum(size_t n, const float *x, float *y)
{
    y[n] = 0.0f;
    for (size_t i = n; i-- > 0;)                                    /* MARK suffix */
        y[i] = y[i + 1] + 0.5f * x[i];
}

static size_t last_below(size_t n, float t, const float *x, float *y)
{
    size_t i;
    for (i = n; i-- > 0;)                                           /* MARK live */
        y[i] = x[i] < t ? x[i] : t;
    return i;   /* SIZE_MAX: the test wrapped it */
}

static float *filled(size_t n, unsigned seed)
{
    float *a = malloc(sizeof(float) * (n + 2));
    for (size_t i = 0; i < n + 2; i++) {
        seed = seed * 1103515245u + 12345u;
        a[i] = (float)(seed >> 16 & 1023u) / 256.0f - 2.0f;
    }
    return a;
}

static double checksum(double sum, size_t n, const float *a)
{
    for (size_t i = 0; i < n; i++)
        sum = 0.999 * sum + a[i] * (double)(i % 7 + 1);
    return sum;
}

int main(int argc, char **argv)
{
    const char *which = argv[1];
    int dim = atoi(argv[2]), kv_dim = atoi(argv[3]), head_size = atoi(argv[4]);
    size_t n = (size_t)atol(argv[5]);
    double sum = 0.0;
    if (!strcmp(which, "rope")) {
        RunState s;
        s.q = filled((size_t)dim, 7u);
        s.k = filled((size_t)dim, 11u);
        for (int pos = 0; pos < 3; pos++)
            rope(&s, dim, kv_dim, head_size, pos * 5 + 1);
        sum = checksum(checksum(sum, (size_t)dim, s.q), (size_t)dim, s.k);
    } else {
        float *x = filled(n, 3u), *y = filled(n, 5u);
        if (!strcmp(which, "down"))
            scale_down(n, x, y);
        else if (!strcmp(which, "bare"))
            axpy_down((unsigned)n, 0.75f, x, y);
        else if (!strcmp(which, "suffix"))
            suffix_sum(n, x, y);
        else
            sum = (double)(last_below(n, 0.25f, x, y) == (size_t)-1);
        sum = checksum(sum, n + 1, y);
    }
    printf("%.9e\n", sum);
    return 0;
}
"""

#: kernel -> whether its nest runs on a team at the large size
KERNELS = {"rope": True, "down": True, "bare": True, "suffix": False, "live": False}


def test_rope_and_downward_loops(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "rope.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t) for k in KERNELS}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k in ("rope", "down", "bare"):
        assert re.search(rf"rope\.c:{line[k]}:5: remark: loop nest (parallelized: i:\+\+|scheduled: \[i:\+\+ "
                         r"private-body\])", err), (k, err)
    assert re.search(rf"rope\.c:{line['suffix']}:5: note: loop nest kept sequential: loop 'i' carries a flow "
                     r"dependence on 'y'", err), err
    assert re.search(rf"rope\.c:{line['live']}:5: note: loop nest kept sequential: loop 'i' counts down in its "
                     r"condition \('\(i--\) > 0'\) and 'i' is read after it", err), err
    assert "not affine" not in err and "local array or pointer" not in err, err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    cases = [(k, ["16", "16", "8", str(n)]) for k in KERNELS if k != "rope" for n in (0, 1, 37, 400000)]
    cases += [("rope", [str(dim), str(kv), str(hs), "0"])
              for dim, kv, hs in ((64, 16, 8), (64, 64, 8), (288, 96, 48), (2, 2, 2), (131072, 32768, 64),
                                  (131072, 131072, 64))]
    for which, args in cases:
        want = _run(orig, [which, *args], None)[0]
        for threads in (1, 3):
            got, regions = _run(par, [which, *args], threads, lib)
            mismatch = compare_outputs(want, got, rtol=1e-5, atol=1e-5)
            assert mismatch is None, (which, args, threads, mismatch)
            if threads == 3 and max(int(a) for a in args) >= 131072:
                assert (regions > 0) == KERNELS[which], (which, args, regions)
