"""Struct values and nested members (``frontend/normalize/struct_values.py``,
``frontend/struct_fields.py``): complex numbers as ``cpx acc = {0, 0}; ...; out[k] = acc;``,
particles as ``p[i].vel.z -= g * dt`` and ``vec3 v = p[i].vel``, compound literals, and copies of
whole elements (``dst[i] = src[i]``) are modelled member by member and run in parallel; what the
pass cannot split (a local whose address is taken, a struct with a pointer member) stays as
written with its reason. Outputs must equal the sequential original's at 1 and 3 threads, also
when the copy's source and destination overlap (the run-time checks then run the nest as written).
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
#include <stdio.h>
#include <stdlib.h>
typedef struct { double re, im; } cpx;
typedef struct { float x, y, z; } vec3;
typedef struct { vec3 pos, vel; float mass; } particle;
typedef struct { double *w; double scale; } weighted;

static void dft(const cpx *in, cpx *out, int n)
{
    for (int k = 0; k < n; k++) {                                   /* MARK dft */
        cpx acc = {0.0, 0.0};
        for (int t = 0; t < n; t++) {
            double ang = -2.0 * 3.14159265358979 * (double)((t * k) % n) / (double)n;
            cpx w = { cos(ang), sin(ang) };
            acc.re += in[t].re * w.re - in[t].im * w.im;
            acc.im += in[t].re * w.im + in[t].im * w.re;
        }
        out[k] = acc;
    }
}

static void scaled(const cpx *a, cpx *b, double s, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK scaled */
        b[i] = (cpx){ a[i].re * s, -a[i].im * s };
}

static void step(particle *p, int n, float dt, float g)
{
    for (int i = 0; i < n; i++) {                                   /* MARK step */
        p[i].vel.z -= g * dt;
        p[i].pos.x += p[i].vel.x * dt;
        p[i].pos.y += p[i].vel.y * dt;
        p[i].pos.z += p[i].vel.z * dt;
    }
}

static double energy(const particle *p, int n, float g)
{
    double e = 0.0;
    for (int i = 0; i < n; i++) {                                   /* MARK energy */
        vec3 v = p[i].vel;
        e += 0.5 * p[i].mass * (v.x * v.x + v.y * v.y + v.z * v.z) + p[i].mass * g * p[i].pos.z;
    }
    return e;
}

static void copy_all(const particle *src, particle *dst, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK copy */
        dst[i] = src[i];
}

static void keep_address(cpx *v, int n)
{
    for (int i = 0; i < n; i++) {                                   /* MARK address */
        cpx t = v[i];
        double *re = &t.re;
        *re *= 2.0;
        v[i] = t;
    }
}

static void keep_pointer_member(weighted *ws, const weighted *src, int n)
{
    for (int i = 0; i < n; i++) {                                   /* MARK pointer */
        ws[i] = src[i];
        ws[i].scale *= 2.0;
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]), overlap = argc > 2;
    cpx *a = malloc(sizeof(cpx) * n), *b = malloc(sizeof(cpx) * n), *c = malloc(sizeof(cpx) * n);
    for (int i = 0; i < n; i++) { a[i].re = sin(0.01 * i); a[i].im = cos(0.03 * i); }
    int m = n < 1500 ? n : 1500;
    dft(a, b, m);
    scaled(b, c, 0.5, m);
    particle *p = malloc(sizeof(particle) * (n + 1));
    for (int i = 0; i < n + 1; i++) {
        p[i].pos.x = i % 100; p[i].pos.y = i % 37; p[i].pos.z = 10 + i % 11;
        p[i].vel.x = 1; p[i].vel.y = -1; p[i].vel.z = (i % 5) - 2; p[i].mass = 1 + i % 3;
    }
    for (int s = 0; s < 5; s++) step(p, n, 0.01f, 9.81f);
    double e = energy(p, n, 9.81f);
    particle *q = overlap ? p + 1 : malloc(sizeof(particle) * n);
    copy_all(p, q, n);
    keep_address(c, m);
    weighted *ws = malloc(sizeof(weighted) * n), *wsrc = malloc(sizeof(weighted) * n);
    for (int i = 0; i < n; i++) { wsrc[i].w = &b[0].re; wsrc[i].scale = i; }
    keep_pointer_member(ws, wsrc, n);
    double sc = 0, sp = 0;
    for (int i = 0; i < m; i++) sc += c[i].re - c[i].im + b[i].re;
    for (int i = 0; i < n; i++) sp += q[i].pos.x + q[i].vel.z + q[i].mass + ws[i].scale;
    printf("%.12e %.12e %.12e\n", sc, sp, e);
    return 0;
}
"""


def _line(marker: str) -> int:
    return next(k + 1 for k, text in enumerate(PROGRAM.splitlines()[1:]) if f"MARK {marker} " in text)


def test_struct_values_run_in_parallel_and_agree(tmp_path: Path) -> None:
    src = tmp_path / "structs.c"
    src.write_text(PROGRAM.lstrip("\n"))
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    err = proc.stderr
    for marker, form in (("dft", r"parallelized: k:\+\+ t:\+"), ("scaled", r"parallelized: i:\+\+"),
                         ("step", r"scheduled: \[i:\+\+ private-body\]"), ("energy", r"parallelized: i:\+"),
                         ("copy", r"parallelized: i:\+\+")):
        assert re.search(rf"structs\.c:{_line(marker)}:5: remark: loop nest {form}[;\n ]", err), (marker, err)
    assert re.search(rf"structs\.c:{_line('address') + 2}:\d+: note: loop nest kept sequential: .*'re'", err), err
    assert re.search(rf"structs\.c:{_line('pointer') + 1}:\d+: note: loop nest kept sequential: .*whole structs", err), \
        err
    text = out_c.read_text()
    assert "mdp_s3x1_vel_z_p[i].vel.z" in text, "a nested member prints as its path"
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    lib = _counter(tmp_path)
    for args in (["200000"], ["200000", "overlap"], ["1"], ["7", "overlap"]):
        want = _run(orig, args, None)[0]
        for threads in (1, 3):
            got, regions = _run(par, args, threads, lib)
            mismatch = compare_outputs(want, got, rtol=1e-9, atol=1e-9)   # sums in another order
            assert mismatch is None, f"{args}, {threads} threads: {mismatch}"
            if threads == 3 and args == ["200000"]:
                assert regions >= 5, f"{regions} parallel regions"


MACROS = r"""
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { float r, i; } kcpx;
#define C_MUL(m, a, b) do { (m).r = (a).r * (b).r - (a).i * (b).i; (m).i = (a).r * (b).i + (a).i * (b).r; } while (0)
#define SWAPF(a, b) do { float t_ = (a); (a) = (b); (b) = t_; } while (0)

static void twiddle(kcpx *out, const kcpx *in, const kcpx *tw, int n)
{
    for (int k = 0; k < n; k++) {                                   /* MARK twiddle */
        kcpx t;
        C_MUL(t, in[k], tw[k]);
        out[k] = t;
    }
}

static void swaps(float *a, float *b, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK swaps */
        SWAPF(a[i], b[i]);
}

static void clipped(float *a, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK clipped */
        do { if (a[i] > 100.0f) break; a[i] = a[i] * 0.5f; } while (0);
}

static void zmul(double complex *z, const double complex *a, double complex w, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK zmul */
        z[i] = a[i] * w + 1.0;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    kcpx *a = malloc(n * sizeof(kcpx)), *b = malloc(n * sizeof(kcpx)), *tw = malloc(n * sizeof(kcpx));
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    double complex *za = malloc(n * sizeof(double complex)), *zb = malloc(n * sizeof(double complex));
    for (int i = 0; i < n; i++) {
        a[i].r = i % 7; a[i].i = i % 3; tw[i].r = 0.5f; tw[i].i = -0.5f; x[i] = i % 300; y[i] = -i;
        za[i] = i % 5 + 2.0 * I;
    }
    twiddle(b, a, tw, n);
    swaps(x, y, n);
    clipped(y, n);
    zmul(zb, za, 0.5 - 0.25 * I, n);
    double s = 0;
    for (int i = 0; i < n; i++) s += b[i].r - b[i].i + x[i] + y[i] + creal(zb[i]) + cimag(zb[i]);
    printf("%.12e\n", s);
    return 0;
}
"""


def test_macro_blocks_and_complex_values(tmp_path: Path) -> None:
    """``do { ... } while (0)`` macro bodies are blocks (one with a ``break`` of its own stays a
    loop of one trip), a struct filled by such a macro splits into scalars, and C99 ``double complex`` code
    with ``I`` (an imaginary constant the parser does not know) is read and stays correct."""
    src = tmp_path / "macros.c"
    src.write_text(MACROS.lstrip("\n"))
    line = {m: next(k + 1 for k, t in enumerate(MACROS.lstrip("\n").splitlines()) if f"MARK {m} " in t)
            for m in ("twiddle", "swaps", "clipped", "zmul")}
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    err = proc.stderr
    assert re.search(rf"macros\.c:{line['twiddle']}:5: remark: loop nest parallelized: k:\+\+", err), err
    assert re.search(rf"macros\.c:{line['swaps']}:5: remark: loop nest (parallelized|scheduled)", err), err
    assert re.search(rf"macros\.c:{line['zmul']}:5: remark: loop nest parallelized: i:\+\+", err), err
    assert "an imaginary constant" in err, err
    # a do-while(0) with a break of its own is a loop of one trip (the while-body model)
    assert re.search(rf"macros\.c:{line['clipped']}:5: remark: loop nest scheduled: \[i:\+\+ private-body\]", err), err
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("300000", "5"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-9, atol=1e-9)
            assert mismatch is None, f"n={n}, {threads} threads: {mismatch}"


VECTORS = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { double re, im; } cpx;
typedef struct { double x, y, z; } vec3;
typedef struct { vec3 o, d; } ray;
static cpx cmul(cpx a, cpx b) { cpx r; r.re = a.re * b.re - a.im * b.im; r.im = a.re * b.im + a.im * b.re; return r; }
static cpx cadd(cpx a, cpx b) { return (cpx){a.re + b.re, a.im + b.im}; }
static vec3 v_sub(vec3 a, vec3 b) { return (vec3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static vec3 v_scale(vec3 a, double s) { vec3 r = {a.x * s, a.y * s, a.z * s}; return r; }
static double v_dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static vec3 v_norm(vec3 a) { double l = sqrt(v_dot(a, a)); return v_scale(a, 1.0 / l); }

static void axpy(cpx *z, const cpx *a, cpx w, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK axpy */
        z[i] = cadd(cmul(a[i], w), a[i]);
}

static void trace(const ray *rays, double *t, int n, vec3 c, double r)
{
    for (int i = 0; i < n; i++) {                                   /* MARK trace */
        vec3 d = v_norm(rays[i].d);
        vec3 oc = v_sub(rays[i].o, c);
        double b = v_dot(oc, d);
        double disc = b * b - (v_dot(oc, oc) - r * r);
        t[i] = disc < 0 ? -1.0 : -b - sqrt(disc);
    }
}

static void mask(cpx *z, const double *t, int n)
{
    for (int i = 0; i < n; i++)                                     /* MARK mask */
        z[i] = t[i] < 0 ? (cpx){0, 0} : cmul(z[i], z[i]);
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    ray *rays = malloc(sizeof(ray) * n);
    double *t = malloc(sizeof(double) * n);
    cpx *a = malloc(sizeof(cpx) * n), *z = malloc(sizeof(cpx) * n);
    for (int i = 0; i < n; i++) {
        rays[i].o = (vec3){0, 0, -5};
        rays[i].d = (vec3){(i % 97 - 48) / 97.0, (i % 89 - 44) / 89.0, 1.0};
        a[i].re = i % 7 * 0.25; a[i].im = i % 3 * 0.5;
    }
    vec3 c = {0, 0, 0};
    cpx w = {0.5, -0.25};
    axpy(z, a, w, n);
    trace(rays, t, n, c, 0.3);
    mask(z, t, n);
    double s = 0;
    for (int i = 0; i < n; i++) s += z[i].re - z[i].im + t[i];
    printf("%.12e\n", s);
    return 0;
}
"""


def test_struct_valued_helpers(tmp_path: Path) -> None:
    """Helpers that take and return small structs by value (``cmul``, ``v_norm``, ``v_dot``) are
    expanded member by member (``frontend/normalize/struct_calls.py``), also under a conditional
    of struct values, and the nests run in parallel with the original's results."""
    text = VECTORS.lstrip("\n")
    src = tmp_path / "vectors.c"
    src.write_text(text)
    line = {m: next(k + 1 for k, t in enumerate(text.splitlines()) if f"MARK {m} " in t) for m in ("axpy", "trace", "mask")}
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    for m in line:
        assert re.search(rf"vectors\.c:{line[m]}:5: remark: loop nest (parallelized|scheduled)", proc.stderr), \
            (m, proc.stderr)
    assert "mdp_c_" not in proc.stderr, proc.stderr
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("250000", "3"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            mismatch = compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-9, atol=1e-9)
            assert mismatch is None, f"n={n}, {threads} threads: {mismatch}"


FLAT_ROWS = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { double a, b; } P;
int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = w + 3;
    P *p = malloc(sizeof(P) * w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            p[y * w + x].a = x * 0.5;
            p[y * w + x].b = y;
        }
    double s = 0;
    for (int i = 0; i < w * h; i++) s += p[i].a + 3.0 * p[i].b;
    printf("%.12e\n", s);
    return 0;
}
"""


def test_flat_rows_of_structs_compile_and_agree(tmp_path: Path) -> None:
    """A flat subscript over an array of structs (``p[y * w + x].a``) is viewed as rows of structs
    (the generated function takes ``P (*V)[w]``, the call site casts the user's pointer to it), so
    both loops run in parallel and the program prints what the original does; before, the
    function took rows of the member's type and did not compile."""
    src = tmp_path / "rows.c"
    src.write_text(FLAT_ROWS.lstrip("\n"))
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    assert re.search(r"rows\.c:8:5: remark: loop nest parallelized: y:\+\+ x:\+\+", proc.stderr), proc.stderr
    assert "P (*mdp_s1_a_p)[w]" in out_c.read_text()
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("700", "2"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=0.0) is None


SELF_READS = r"""
#include <stdio.h>
#include <stdlib.h>
typedef struct { double re, im; } cpx;
static cpx cmul(cpx a, cpx b) { return (cpx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }

static void powers(cpx *z, const cpx *w, int n, int m)
{
    for (int i = 0; i < n; i++) {
        cpx p = z[i];
        for (int k = 0; k < m; k++)
            p = cmul(p, w[i]);
        z[i] = p;
    }
}

static void swap_some(cpx *a, const cpx *b, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = a[i].re > 0.0 ? b[i] : (cpx){a[i].im, a[i].re};
}

static void rotate(cpx *a, cpx w, int n)
{
    for (int i = 0; i < n; i++)
        a[i] = cmul(a[i], w);
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    cpx *z = malloc(sizeof(cpx) * n), *w = malloc(sizeof(cpx) * n), *b = malloc(sizeof(cpx) * n);
    for (int i = 0; i < n; i++) {
        z[i].re = (i % 7) * 0.25 - 0.5; z[i].im = (i % 5) * 0.5 - 1.0;
        w[i].re = 0.75; w[i].im = (i % 3) * 0.25 - 0.25;
        b[i].re = i % 11; b[i].im = -(i % 13);
    }
    powers(z, w, n, 6);
    swap_some(z, b, n);
    rotate(z, (cpx){0.5, 0.5}, n);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += z[i].re * (i % 4 + 1) - 3.0 * z[i].im;
    printf("%.12e\n", s);
    return 0;
}
"""


def test_values_that_read_what_they_store(tmp_path: Path) -> None:
    """``p = cmul(p, w)``, ``a[i] = cmul(a[i], w)`` and ``a[i] = c ? b[i] : (cpx){a[i].im, a[i].re}``
    read the members they store: each member is computed into a temporary before the first store,
    as C evaluates the whole right-hand side first."""
    src = tmp_path / "self.c"
    src.write_text(SELF_READS.lstrip("\n"))
    out_c = tmp_path / "out.c"
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--no-tune"], env=child_env())
    assert proc.stderr.count("remark: loop nest parallelized") + proc.stderr.count("remark: loop nest scheduled") >= 3, \
        proc.stderr
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    par = build_c(out_c, tmp_path / "par", NO_LOADAVG, openmp=True)
    for n in ("200000", "3"):
        want = _run(orig, [n], None)[0]
        for threads in (1, 3):
            assert compare_outputs(want, _run(par, [n], threads)[0], rtol=1e-12, atol=1e-12) is None, (n, threads)
