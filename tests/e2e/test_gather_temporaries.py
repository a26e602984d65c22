"""Index temporaries that read memory (``int src = col[e]; s += pr[src] / outdeg[src];``) run
in parallel wherever the direct subscripts do (``frontend/inspector.py``): a PageRank step over a
CSR graph, a permutation gather through ``const int j = perm[i]`` (and C89's ``int j;`` before the
loop, private to each iteration), blocks of three through
``int c = idx[i] * 3 + k``, a histogram through ``int bin = key[i]``. A PageRank step in place
(the rank it writes is the one it gathers) runs as written, found at run time; pointer jumping
(the nest writes its index array), a chain walk and a lagged gather (the temporary carries from
one iteration to the next) stay as written. An argmax/argmin through its own index (``if (a[i] > a[best]) best =
i;``, ``frontend/normalize/own_index_args.py``) is an argmax reduction, with the original's tie
rule (``>``: the first, ``>=``: the last) on data full of ties, and at n = 0 (a null array) and 1.
Outputs equal the original's at 1 and 3 threads; a preloaded counter of ``GOMP_parallel`` tells
which side ran (the inspection of the gathered indices is a parallel region of its own)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_cost_guard import NO_LOADAVG, _counter

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pagerank_step(int n, const int *rowptr, const int *col, const int *outdeg, const double *pr,
                          double *npr, double d)
{
    for (int i = 0; i < n; i++) {                                   /* MARK pagerank */
        double s = 0.0;
        for (int e = rowptr[i]; e < rowptr[i + 1]; e++) {
            int src = col[e];
            s += pr[src] / outdeg[src];
        }
        npr[i] = (1.0 - d) / n + d * s;
    }
}

static void permute(int n, const int *perm, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {                                   /* MARK permute */
        const int j = perm[i];
        y[i] = x[j];
    }
}

static void permute_c89(int n, const int *perm, const double *x, double *y)
{
    int i, j;
    for (i = 0; i < n; i++) {                                       /* MARK permute_c89 */
        j = perm[i];
        y[i] = x[j];
    }
}

static void lagged(int n, const int *perm, const double *x, double *y)
{
    int j = 0;
    for (int i = 0; i < n; i++) {                                   /* MARK lagged */
        y[i] = x[j];
        j = perm[i];
    }
}

static void blocks3(int n, const int *idx, const double *x, double *y)
{
    for (int i = 0; i < n; i++)                                     /* MARK blocks3 */
        for (int k = 0; k < 3; k++) {
            int c = idx[i] * 3 + k;
            y[3 * i + k] = x[c];
        }
}

static void histogram(int n, const int *key, const double *w, double *hist)
{
    for (int i = 0; i < n; i++) {                                   /* MARK histogram */
        int bin = key[i];
        hist[bin] += w[i];
    }
}

static void jump(int n, int *next)
{
    for (int i = 0; i < n; i++) {                                   /* MARK jump */
        int j = next[i];
        next[i] = next[j];
    }
}

static void chain(int n, int start, const int *next, const double *x, double *out)
{
    int cur = start;
    for (int i = 0; i < n; i++) {                                   /* MARK chain */
        out[i] = x[cur];
        cur = next[cur];
    }
}

static int argmax_first(int n, const double *a)
{
    int best = 0;
    for (int i = 1; i < n; i++)                                     /* MARK argmax */
        if (a[i] > a[best])
            best = i;
    return best;
}

static int argmax_last(int n, const double *a)
{
    int best = 0;
    for (int i = 1; i < n; i++)                                     /* MARK argmax_last */
        if (a[best] <= a[i])
            best = i;
    return best;
}

static long argmin_first(long n, const int *a)
{
    long best = 0;
    for (long i = 0; i < n; i++) {                                  /* MARK argmin */
        if (a[i] < a[best]) {
            best = i;
        }
    }
    return best;
}

static int argmin_last(int n, const float *a)
{
    int best = n - 1;
    for (int i = 0; i < n; i++)                                     /* MARK argmin_last */
        if (a[i] <= a[best])
            best = i;
    return best;
}

static unsigned hash(unsigned x) { x ^= x >> 16; x *= 0x45d9f3bu; x ^= x >> 16; return x; }

int main(int argc, char **argv)
{
    const char *mode = argv[1];
    int n = atoi(argv[2]), run = getenv("GT_SKIP") == NULL;   /* GT_SKIP: the program around the kernels alone */
    if (!strcmp(mode, "pagerank") || !strcmp(mode, "inplace")) {
        int deg = 8, m = n * deg;
        int *rowptr = malloc(sizeof(int) * (n + 1)), *col = malloc(sizeof(int) * (m + 1));
        int *outdeg = calloc(n + 1, sizeof(int));
        double *pr = malloc(sizeof(double) * (n + 1)), *npr = malloc(sizeof(double) * (n + 1));
        int e = 0;
        for (int i = 0; i < n; i++) {
            rowptr[i] = e;
            int k = (int)(hash(i) % (2 * deg));   /* uneven rows, some empty */
            for (int t = 0; t < k && e < m; t++) { col[e] = (int)(hash(i * 31 + t) % n); outdeg[col[e]]++; e++; }
        }
        rowptr[n] = e;
        for (int i = 0; i < n; i++) { if (!outdeg[i]) outdeg[i] = 1; pr[i] = 1.0 / n; }
        for (int it = 0; it < 5; it++) {
            if (!run) {
            } else if (!strcmp(mode, "inplace")) {
                pagerank_step(n, rowptr, col, outdeg, pr, pr, 0.85);
            } else {
                pagerank_step(n, rowptr, col, outdeg, pr, npr, 0.85);
                double *t = pr; pr = npr; npr = t;
            }
        }
        double sum = 0.0, wsum = 0.0;
        for (int i = 0; i < n; i++) { sum += pr[i]; wsum += pr[i] * (i % 7 + 1); }
        printf("%.17g %.17g\n", sum, wsum);
    } else if (!strcmp(mode, "gathers")) {
        int *perm = malloc(sizeof(int) * (n + 1)), *key = malloc(sizeof(int) * (n + 1));
        double *x = malloc(sizeof(double) * (3 * n + 3)), *y = malloc(sizeof(double) * (3 * n + 3));
        double *w = malloc(sizeof(double) * (n + 1)), hist[64] = {0};
        for (int i = 0; i < n; i++) perm[i] = i;
        for (int i = n - 1; i > 0; i--) { int j = (int)(hash(i) % (i + 1)), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
        for (int i = 0; i < 3 * n; i++) x[i] = (double)(hash(i + 7) % 1000) / 8.0;
        for (int i = 0; i < n; i++) { key[i] = (int)(hash(i + 3) % 64); w[i] = (double)(i % 5); }
        if (run) permute(n, perm, x, y);
        double s1 = 0.0;
        for (int i = 0; i < n; i++) s1 += y[i] * (i % 3 + 1);
        if (run) permute_c89(n, perm, x, y);
        for (int i = 0; i < n; i++) s1 += y[i] * (i % 7 + 1);
        if (run) blocks3(n, perm, x, y);
        double s2 = 0.0;
        for (int i = 0; i < 3 * n; i++) s2 += y[i] * (i % 5 + 1);
        if (run) histogram(n, key, w, hist);
        double s3 = 0.0;
        for (int b = 0; b < 64; b++) s3 += hist[b] * (b + 1);
        printf("%.17g %.17g %.17g\n", s1, s2, s3);
    } else if (!strcmp(mode, "stay")) {
        int *next = malloc(sizeof(int) * (n + 1));
        double *x = malloc(sizeof(double) * (n + 1)), *out = calloc(n + 1, sizeof(double)), t = 0.0;
        for (int i = 0; i < n; i++) { next[i] = (int)(hash(i) % n); x[i] = (double)(i % 11); }
        if (run) lagged(n, next, x, out);
        for (int i = 0; i < n; i++) t += out[i] * (i % 6 + 1);
        if (run) {
            chain(n, n / 2, next, x, out);
            jump(n, next);
        }
        long s = 0;
        for (int i = 0; i < n; i++) { s += (long)next[i] * (i % 3 + 1); t += out[i] * (i % 4 + 1); }
        printf("%ld %.17g\n", s, t);
    } else {   /* args: ties every 'period' elements repeat the values */
        int period = atoi(argv[3]);
        double *a = n ? malloc(sizeof(double) * n) : NULL;
        float *f = n ? malloc(sizeof(float) * n) : NULL;
        int *v = n ? malloc(sizeof(int) * n) : NULL;
        for (int i = 0; i < n; i++) {
            unsigned h = hash((unsigned)(i % period));
            a[i] = (double)(h % 1000) - 500.0;
            f[i] = (float)(h % 997) * 0.5f;
            v[i] = (int)(h % 1013) - 7;
        }
        if (run)
            printf("%d %d %ld %d\n", argmax_first(n, a), argmax_last(n, a), argmin_first(n, v), argmin_last(n, f));
    }
    return 0;
}
"""

REMARKS = {
    "pagerank": r"loop nest scheduled: \[i:\+\+ private-body\]",
    "permute": r"loop nest scheduled: \[i:\+\+ private-body\]",
    "permute_c89": r"loop nest scheduled: \[i:\+\+ with private j\]",
    "blocks3": r"loop nest scheduled: \[i:\+\+ k:\+\+ private-body\]",
    "histogram": r"loop nest scheduled: \[i:\+\+ private-body scatter-reduction\(\+:hist\)\]",
    "argmax": r"loop nest parallelized: i:argmax;",
    "argmax_last": r"loop nest parallelized: i:argmax_last;",
    "argmin": r"loop nest parallelized: i:argmin;",
    "argmin_last": r"loop nest parallelized: i:argmin_last;",
}


def _run(exe: Path, args: list[str], threads: int, lib: Path, skip: bool = False) -> tuple[str, int]:
    """stdout and the number of parallel regions that asked for more than one thread (``skip``:
    of the program without its kernels)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), LD_PRELOAD=str(lib))
    if skip:
        env["GT_SKIP"] = "1"
    else:
        env.pop("GT_SKIP", None)
    proc = run_step([str(exe), *args], env=env)
    found = re.search(r"parallel-regions (\d+)", proc.stderr)
    return proc.stdout, int(found.group(1)) if found else -1


def test_gather_temporaries_and_own_index_argmax(tmp_path: Path) -> None:
    text = PROGRAM.lstrip("\n")
    src = tmp_path / "gt.c"
    src.write_text(text)
    line = {k: next(j + 1 for j, t in enumerate(text.splitlines()) if f"MARK {k} " in t)
            for k in (*REMARKS, "jump", "chain", "lagged")}
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env()).stderr
    for k, remark in REMARKS.items():
        assert re.search(rf"gt\.c:{line[k]}:5: remark: {remark}", err), (k, err)
    # the nest writes its index array; the temporary carries across iterations (twice)
    for k in ("jump", "chain", "lagged"):
        assert not re.search(rf"gt\.c:{line[k]}:5: remark", err), (k, err)
    assert "mdp_argv" not in err, err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    # arguments, the parallel regions of the kernels at 3 threads: an inspection of the gathered
    # indices and the loop, per call where the inspected ranges clear the writes
    cases = [
        (["pagerank", "60000"], 5 * 2), (["pagerank", "7"], 0), (["pagerank", "1"], 0),
        (["inplace", "60000"], 5 * 1),   # the rank it writes is the one it gathers: inspected, then as written
        (["gathers", "200000"], 4 * 2), (["gathers", "5"], 0),
        (["stay", "100000"], 0),
        (["arg", "300000", "1000"], 4), (["arg", "300000", "7"], 4), (["arg", "300000", "300000"], 4),
        (["arg", "1", "1"], 0), (["arg", "0", "1"], 0), (["arg", "2", "1"], 0),
    ]
    for args, kernel_regions in cases:
        want = run_step([str(orig), *args], env={k: v for k, v in os.environ.items() if k != "GT_SKIP"}).stdout
        for threads in (1, 3):
            got, regions = _run(par, args, threads, lib)
            # the checksums in main are reductions mdpoly may reorder; the indices are exact
            assert compare_outputs(want, got, rtol=1e-9, atol=1e-12) is None, (args, threads, got, want)
            if args[0] == "arg":
                assert got == want, (args, threads, got, want)
            if threads == 3:   # the kernels' own parallel regions: beyond those of the code around them
                around = _run(par, args, threads, lib, skip=True)[1]
                assert regions - around == kernel_regions, (args, regions, around)


ARGMAX = r"""
#include <stdio.h>
#include <stdlib.h>

static int argmax_first(int n, const double *a)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (a[i] > a[best])
            best = i;
    return best;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    double *a = malloc(sizeof(double) * (n + 1));
    for (int i = 0; i < n; i++) a[i] = (double)((i * 37) % 1000);
    printf("%d\n", argmax_first(n, a));
    return 0;
}
"""


def test_own_index_argmax_is_tuned_against_the_default_plan(tmp_path: Path) -> None:
    """The tuner's reference cannot be the nest as written, which never computes the value
    temporary (and reads ``a[best]`` at whatever index the random inputs hold): every candidate
    was 'wrong'. The default plan's outputs are the reference instead, as for any nest whose
    text the tuner cannot run."""
    src = tmp_path / "am.c"
    src.write_text(ARGMAX.lstrip("\n"))
    out_c = tmp_path / "out.c"
    err = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--size", "n=200000", "--tune-evals", "3",
                    "--cache-dir", str(tmp_path / "cache")], env=child_env()).stderr
    assert re.search(r"am\.c:7:5: remark: loop nest parallelized: i:argmax;", err), err
    assert re.search(r"am\.c:7:5: remark: tuned \(", err) and "no candidate ran correctly" not in err, err
    logs = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.jsonl"))
    assert "does not compute 'mdp_argv_best'" in logs, logs
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("200000", "1", "0"):
        want = run_step([str(orig), n]).stdout
        for threads in (1, 3):
            assert run_step([str(par), n], env=dict(os.environ, OMP_NUM_THREADS=str(threads))).stdout == want, n
