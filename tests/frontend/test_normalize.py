"""The normalization passes (``mdpoly.frontend.normalize``): forms they open to the model, and
the forms they refuse, each with its file:line:col and reason code."""

from __future__ import annotations

import pytest

PRELUDE = """#include <math.h>
typedef struct { int dim; int n_layers; float eps; } Config;
typedef struct { float *x; float *a; float *q; float *att; } RunState;
struct cell { float prob; int index; };
"""


def _only(analysis):  # the one nest of the test's function
    (n,) = analysis.nests
    return n


ACCEPTED = [
    # index temporary, constant sizes
    ("member-free index temporary",
     "void f(float *out, const float *in) {\n  for (int y = 1; y < 63; y++)\n    for (int x = 1; x < 63; x++) {\n"
     "      int c = x + y * 64;\n      out[c] = in[c - 1] + in[c + 1] + in[c - 64] + in[c + 64];\n    }\n}\n"),
    # index temporary with one run-time stride (delinearized as rows of nx)
    ("run-time stride",
     "void f(int nx, int ny, float *out, const float *in) {\n  for (int y = 1; y < ny - 1; y++)\n"
     "    for (int x = 1; x < nx - 1; x++) {\n      int c = y * nx + x;\n"
     "      out[c] = in[c] + in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx];\n    }\n}\n"),
    # C89: declared before the nest, assigned once inside, dead after
    ("assigned temporary",
     "void f(float *out, const float *in) {\n  int x, y, c;\n  for (y = 0; y < 32; y++)\n    for (x = 0; x < 32; x++) {\n"
     "      c = y * 32 + x;\n      out[c] = 2.0f * in[c];\n    }\n}\n"),
    # a temporary as a loop bound (a triangle), and one of a wider type (converted at each use)
    ("bound temporary",
     "float T[64][64];\nvoid f(void) {\n  for (int i = 0; i < 64; i++) {\n    int lo = i + 1;\n"
     "    for (int j = lo; j < 64; j++)\n      T[i][j] = T[i][j] * 0.5f;\n  }\n}\n"),
    ("wider temporary",
     "void f(float *out, const float *in) {\n  for (int y = 0; y < 32; y++)\n    for (int x = 0; x < 32; x++) {\n"
     "      long c = y * 32 + x;\n      out[c] = in[c] + 1.0f;\n    }\n}\n"),
    # scalars declared without a value, assigned by a later statement of their block
    ("declared, then assigned",
     "void f(int n, const double *a, double *out) {\n  for (int j = 1; j < n; j++)\n"
     "    for (int i = 1; i < n - 1; i++) {\n      double dl, dr;\n      dl = a[j*n+i] - a[j*n+i-1];\n"
     "      dr = a[j*n+i+1] - a[j*n+i];\n      out[j*n+i] = dl * dr;\n    }\n}\n"),
    ("index temporary assigned after its declaration",
     "void f(float *out, const float *in) {\n  for (int y = 0; y < 32; y++)\n    for (int x = 0; x < 32; x++) {\n"
     "      int c;\n      float v;\n      c = y * 32 + x;\n      v = in[c];\n      v *= 2.0f;\n      out[c] = v;\n    }\n}\n"),
    ("iterator declared in the block around its loop",
     "void f(int n, float *out, const float *in) {\n  for (int i = 0; i < n; i++) {\n    int j;\n"
     "    for (j = 0; j < n; j++)\n      out[i * n + j] = in[j * n + i];\n  }\n}\n"),
    ("declared and never used",
     "void f(float *out, const float *in) {\n  for (int x = 0; x < 32; x++) {\n    float unused;\n"
     "    out[x] = in[x];\n  }\n}\n"),
    # selects of affine subscripts
    ("select subscript",
     "float I[8][16][16], O[8][16][16];\nvoid f(void) {\n  for (int z = 0; z < 8; z++)\n    for (int y = 0; y < 16; y++)\n"
     "      for (int x = 0; x < 16; x++)\n        O[z][y][x] = I[z][y == 0 ? y : y - 1][x] + I[z][y][x];\n}\n"),
    ("select temporaries",
     "void f(float *out, const float *in) {\n  for (int x = 0; x < 100; x++) {\n    int w = (x == 0) ? x : x - 1;\n"
     "    int e = (x == 99) ? x : x + 1;\n    out[x] = in[w] + in[x] + in[e];\n  }\n}\n"),
    # struct members: bounds, pointers, scalars, by-value structs
    ("member bound and pointers",
     "void f(RunState *s, const Config *p) {\n  for (int l = 0; l < p->n_layers; l++)\n    for (int i = 0; i < p->dim; i++)\n"
     "      s->x[i] += s->a[i] * p->eps;\n}\n"),
    ("whole struct of scalars stored member by member",
     "void f(Config *p, Config *q, Config c, float *x) {\n  for (int i = 0; i < p->dim; i++) {\n    x[i] = p->eps;\n"
     "    q[i] = c;\n  }\n}\n"),
    ("by-value struct", "void f(float *y, Config c) {\n  for (int i = 0; i < c.dim; i++)\n    y[i] *= c.eps;\n}\n"),
    # local pointers with one run-time stride
    ("local pointer",
     "void f(RunState *s, const Config *p, int hs) {\n  for (int h = 0; h < p->n_layers; h++) {\n"
     "    float *q = s->q + h * hs;\n    for (int i = 0; i < hs; i++)\n      q[i] = q[i] * 0.5f;\n  }\n}\n"),
    ("row pointer of an array",
     "float A[64][32];\nvoid f(void) {\n  for (int i = 0; i < 64; i++) {\n    float *row = A[i];\n"
     "    float *mid = &A[i][8];\n    for (int j = 0; j < 8; j++)\n      row[j] = mid[j] + 1.0f;\n  }\n}\n"),
]


@pytest.mark.parametrize("what,body", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_normalized_nest_is_modelled(analyze, what, body):
    n = _only(analyze(PRELUDE + body))
    assert n.mdh is not None, n.kept
    assert all(lp.combine.value != "seq" for lp in n.loops) or what == "member bound and pointers", n.loops


def test_hoisted_members_are_parameters_with_call_site_values(analyze):
    n = _only(analyze(PRELUDE + "void f(RunState *s, const Config *p) {\n  for (int i = 0; i < p->dim; i++)\n"
                      "    s->x[i] += s->a[i] * p->eps;\n}\n"))
    values = {b.name: b.c_value for b in n.mdh.buffers}
    assert values["mdp_m_p_dim"] == "p->dim" and values["mdp_m_s_x"] == "s->x" and values["mdp_m_p_eps"] == "p->eps"
    checked = {(c.a.buffer, c.b.buffer) for c in n.mdh.alias_checks}
    # the float member may lie in the memory the nest writes: checked at run time like pointers;
    # the int member cannot (C's aliasing rule: a float store never changes an int)
    both = checked | {(b, a) for a, b in checked}
    assert ("mdp_m_p_eps", "mdp_m_s_x") in both and ("mdp_m_p_dim", "mdp_m_s_x") not in both


def test_shadowed_temporary_is_not_substituted(analyze):
    """An inner declaration of the same name is another variable: its uses keep their meaning."""
    n = _only(analyze(PRELUDE + "void f(float *a) {\n  for (int i = 0; i < 10; i++) {\n    int c = i * 2;\n"
                      "    { int c = 3; a[c + i] = 1.0f; }\n    a[c] = 2.0f;\n  }\n}\n"))
    assert n.mdh is None and n.kept.code == "non-affine-subscript", n.kept


def test_original_tree_is_not_changed(analyze):
    """The splice falls back to the nest as written: the passes work on a copy."""
    n = _only(analyze(PRELUDE + "void f(RunState *s, const Config *p, int hs) {\n  for (int h = 0; h < 4; h++) {\n"
                      "    float *q = s->q + h * hs;\n    int c = h * 2;\n    for (int i = 0; i < hs; i++)\n"
                      "      q[i] = q[i] + c;\n  }\n}\n"))
    assert n.mdh is not None, n.kept
    assert "float *q = s->q + (h * hs);" in n.reference_c and "int c = h * 2;" in n.reference_c


REFUSED = [
    ("struct-member-write", "pointer member written",
     "void f(RunState *r, float *x) {\n  for (int i = 0; i < 100; i++) {\n    x[i] = x[i] * 2.0f;\n    r->q = x;\n  }\n}\n",
     (8, 5)),
    ("struct-member-write", "member address taken",
     "void g(int *); void f(Config *p, float *x) {\n  for (int i = 0; i < 100; i++)\n    x[i] = *(&p->dim) + i;\n}\n",
     (7, 15)),
    ("struct-member-write", "struct pointer re-assigned",
     "void f(Config *p, float *x) {\n  for (int i = 0; i < 100; i++) {\n    x[i] = p->eps;\n    p = p + i;\n  }\n}\n",
     (8, 5)),
    ("struct-member-write", "whole struct with pointer members stored",
     "void f(Config *p, RunState *q, RunState c, float *x) {\n  for (int i = 0; i < p->dim; i++) {\n    x[i] = p->eps;\n"
     "    q[i] = c;\n  }\n}\n", (8, 5)),
    ("unsupported-statement", "array of structs through row pointers",
     "void f(struct cell **c, float *x) {\n  for (int i = 0; i < 100; i++)\n    x[i] = c[i][1].prob;\n}\n", (7, 12)),
    ("pointer-arithmetic", "local pointer re-assigned",
     "void f(float *a) {\n  for (int h = 0; h < 8; h++) {\n    float *q = a + h * 16;\n    for (int i = 0; i < 16; i++) {\n"
     "      *q = 0.0f;\n      q = a;\n    }\n  }\n}\n", (10, 7)),
    ("pointer-arithmetic", "local pointer passed on",
     "void g(float *); void f(float *a) {\n  for (int h = 0; h < 8; h++) {\n    float *q = a + h * 16;\n    g(q);\n  }\n}\n",
     (8, 7)),
    ("non-affine-subscript", "temporary read after the nest",
     "int f(float *a) {\n  int c = 0;\n  for (int i = 0; i < 100; i++) {\n    c = 2 * i;\n    a[c] = 1.0f;\n  }\n"
     "  return c;\n}\n", (8, 5)),
    ("non-affine-subscript", "temporary's operand changes",
     "void f(float *a, int k) {\n  for (int i = 0; i < 100; i++) {\n    int c = i + k;\n    k = k * 2;\n    a[c] = 1.0f;\n  }\n}\n",
     (7, 9)),
    ("unsupported-statement", "declared without a value, read first",
     "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    float t;\n    a[i] = t;\n    t = 1.0f;\n  }\n}\n",
     (7, 11)),
    ("unsupported-statement", "declared without a value, assigned under an if",
     "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    float t;\n    if (i > 3)\n      t = a[i];\n"
     "    a[i] = t;\n  }\n}\n", (7, 11)),
    ("unsupported-statement", "declared without a value, updated first",
     "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    float t, u;\n    u = 0.0f;\n    t += a[i];\n"
     "    a[i] = t + u;\n  }\n}\n", (7, 11)),
    ("unsupported-statement", "iterator read after its loop",
     "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    int j;\n    for (j = 0; j < 4; j++)\n"
     "      a[i] += 1.0f;\n    a[i] += j;\n  }\n}\n", (7, 9)),
    ("unsupported-statement", "iterator of two loops read after them",
     "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    int j;\n    for (j = 0; j < 4; j++)\n"
     "      a[i] += 1.0f;\n    for (j = 0; j < 2; j++)\n      a[i] *= 2.0f;\n    a[i] += j;\n  }\n}\n", (7, 9)),
    ("unsupported-statement", "iterator of two loops whose address is taken",
     "void g(int *); void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    int j;\n    for (j = 0; j < 4; j++)\n"
     "      g(&j);\n    for (j = 0; j < 2; j++)\n      a[i] *= 2.0f;\n  }\n}\n", (7, 9)),
    ("unsupported-statement", "declared without a value, assigned from itself",
     "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    float t;\n    t = t * 0.5f + a[i];\n"
     "    a[i] = t;\n  }\n}\n", (7, 11)),
]


@pytest.mark.parametrize("code,what,body,where", REFUSED, ids=[r[1] for r in REFUSED])
def test_refused_with_location(analyze, code, what, body, where):
    n = _only(analyze(PRELUDE + body))
    assert n.mdh is None
    assert n.kept.code == code, n.kept
    assert (n.kept.loc.line, n.kept.loc.column) == where, n.kept


def test_iterator_of_sibling_loops_declared_by_each(analyze):
    """C89's ``int t, e;`` at the top of a block, each the iterator of several loops and read
    nowhere else: every loop declares its own, and the nest is modelled."""
    n = _only(analyze(PRELUDE + "void f(float *a, float *b) {\n  for (int i = 0; i < 100; i++) {\n    int t, e;\n"
                      "    for (t = 0; t < 8; t++)\n      for (e = 0; e < 4; e++)\n        a[i * 32 + t * 4 + e] = 1.0f;\n"
                      "    for (t = 0; t < 8; t++)\n      b[i * 8 + t] = 2.0f;\n  }\n}\n"))
    assert n.mdh is not None or n.schedule, n.kept
    assert n.kept is None or n.kept.code != "unsupported-statement", n.kept


def test_read_before_assignment_is_named(analyze):
    """The reason names the variable and its first use."""
    n = _only(analyze(PRELUDE + "void f(float *a) {\n  for (int i = 0; i < 100; i++) {\n    double s, t;\n"
                      "    s = a[i];\n    if (s > 0.0)\n      t = s;\n    a[i] = t;\n  }\n}\n"))
    assert n.mdh is None and n.kept.code == "unsupported-statement", n.kept
    assert "'t'" in n.kept.message and "may be read before it is assigned" in n.kept.message, n.kept.message
    assert "an 'if' statement, line 9" in n.kept.message, n.kept.message


def test_messages_name_the_members_as_written(analyze):
    """A later stage's reason names the member expression, not the hoisted parameter."""
    n = _only(analyze(PRELUDE + "void f(RunState *s, const Config *p) {\n  for (int i = 1; i < p->dim; i++)\n"
                      "    s->x[i] = s->x[i - 1] * 0.5f;\n}\n"))
    assert n.kept.code == "sequential-dependence"
    assert "'(s->x)'" in n.kept.message and "mdp_m_" not in n.kept.message, n.kept.message
