"""Body induction variables (``mdpoly.frontend.normalize.inductions``): the counters and bumped
pointers replaced by closed forms of the iterators (the model then sees affine subscripts), and
the forms left as written, each with the reason the message gives."""

from __future__ import annotations

import pytest

PRELUDE = "typedef struct { float r, g; } px;\ntypedef struct { int stride; int rows; } Img;\n"


def _only(analysis):  # the one nest of the test's function
    (n,) = analysis.nests
    return n


def _index(n):
    """The written subscript as ``{name: coefficient}`` plus the constant (one output, one dimension)."""
    (out,) = n.mdh.outputs
    return [(dict(a.terms), a.constant) for a in out.access.index]


ACCEPTED = [
    ("counter over two loops",
     "void f(int n, int m, const float *a, float *out) {\n  int idx = 0;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 0; j < m; j++)\n      out[idx++] = a[j * n + i];\n}\n", 2),
    ("pre-increment",
     "void f(int n, const float *a, float *t) {\n  int k = 4;\n  for (int i = 0; i < n; i++)\n    t[++k] = a[i];\n}\n",
     1),
    ("bumped read and write pointers",
     "void f(int n, int m, int s, const float *a, float *b) {\n  const float *src = a;\n  float *dst = b;\n"
     "  for (int i = 0; i < n; i++) {\n    for (int j = 0; j < m; j++) dst[j] = src[j];\n    src += s;\n"
     "    dst = dst + m;\n  }\n}\n", 2),
    ("counter stepped by a row length",
     "void f(int n, int m, float *c) {\n  int base = 0;\n  for (int i = 0; i < n; i++) {\n"
     "    for (int j = 0; j < m; j++) c[base + j] = 1.0f;\n    base += m;\n  }\n}\n", 2),
    ("row pointer declared in the body",
     "void f(int n, int m, float *x) {\n  for (int i = 0; i < n; i++) {\n    float *row = x + i * m;\n"
     "    for (int j = 0; j < m; j++)\n      *row++ = 0.0f;\n  }\n}\n", 2),
    ("bumped struct pointer",
     "void f(int n, const px *s, float *out) {\n  const px *p = s;\n  for (int i = 0; i < n; i++) {\n"
     "    out[i] = p->r - p->g;\n    p++;\n  }\n}\n", 1),
    ("step by a member",
     "void f(const Img *im, int m, const float *a, float *b) {\n  const float *src = a;\n"
     "  for (int i = 0; i < im->rows; i++) {\n    for (int j = 0; j < m; j++) b[i * m + j] = src[j];\n"
     "    src += im->stride;\n  }\n}\n", 2),
    ("inclusive inner loop from one",
     "void f(int n, int m, float *out) {\n  long k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 1; j <= m; j++)\n      out[k++] = (float) j;\n}\n", 2),
    ("loop stepping by three",
     "void f(int n, int m, float *out) {\n  long k = 0;\n  for (int i = 1; i < n; i += 3)\n"
     "    for (int j = 0; j < m; j++)\n      out[k++] = (float) j;\n}\n", 2),
    ("downward outer loop",
     "void f(int n, int m, float *out) {\n  int k = 0;\n  for (int i = n - 1; i >= 0; i--)\n"
     "    for (int j = 0; j < m; j++)\n      out[k++] = (float) j;\n}\n", 2),
    ("counter read as a value",
     "void f(int n, int m, int *ids) {\n  int id = 100;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 0; j < m; j++)\n      ids[i * m + j] = id--;\n}\n", 2),
]


@pytest.mark.parametrize("what,body,depth", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_closed_forms_are_modelled_in_parallel(analyze, what, body, depth):
    n = _only(analyze(PRELUDE + body))
    assert n.mdh is not None, n.kept
    assert [lp.combine.value for lp in n.loops] == ["++"] * depth, n.loops


def test_counter_subscript_is_its_value_on_entry_plus_the_iterations(analyze):
    n = _only(analyze(PRELUDE + "void f(float *out) {\n  int k = 3;\n  for (int i = 0; i < 10; i++) {\n"
                      "    for (int j = 0; j < 4; j++)\n      out[k++] = 1.0f;\n    k += 2;\n  }\n}\n"))
    assert n.mdh is not None, n.kept
    assert _index(n) == [({"i": 6, "j": 1, "k": 1}, 0)], _index(n)


def test_the_original_tree_keeps_its_steps(analyze):
    """The splice falls back to the nest as written: the pass rewrites a copy."""
    analysis = analyze(PRELUDE + "void f(int n, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
                       "    out[k++] = 1.0f;\n}\n")
    n = _only(analysis)
    assert n.mdh is not None and "k++" in n.reference_c, n.reference_c


REFUSED = [
    ("step under an if",
     "void f(int n, const float *a, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    if (a[i] > 0.0f) out[k++] = a[i];\n}\n", "'k' is stepped under an 'if'"),
    ("step behind ?:",
     "void f(int n, const float *a, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    out[i] = a[i] > 0.0f ? a[k++] : 0.0f;\n}\n", "'k' is stepped behind '?:'"),
    ("triangle",
     "void f(int n, const float *a, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 0; j <= i; j++)\n      out[k++] = a[i * n + j];\n}\n",
     "the trip count of the loop at line 6 depends on 'i'"),
    ("named twice in a stepping statement",
     "void f(int n, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n    out[k++] = (float) k;\n}\n",
     "a statement that steps 'k' inside an expression names it again"),
    ("other assignment",
     "void f(int n, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++) {\n    out[k++] = 1.0f;\n"
     "    if (k > 8) k = 0;\n  }\n}\n", "'k' is assigned by 'k = 0'"),
    ("narrow unsigned subscript",
     "void f(int n, float *out) {\n  unsigned k = 0;\n  for (int i = 0; i < n; i++)\n    out[k++] = 1.0f;\n}\n",
     "'k' is 'unsigned int', whose steps wrap"),
    ("step by a changing name",
     "void f(int n, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++) {\n    out[k] = 1.0f;\n    k += i;\n"
     "  }\n}\n", "'k' is stepped by 'i', which is no integer expression of names the nest leaves unchanged"),
    ("volatile",
     "void f(int n, float *out) {\n  volatile int k = 0;\n  for (int i = 0; i < n; i++)\n    out[k++] = 1.0f;\n}\n",
     "'k' is volatile"),
    ("static",
     "void f(int n, float *out) {\n  static int k = 0;\n  for (int i = 0; i < n; i++)\n    out[k++] = 1.0f;\n}\n",
     "'k' is static"),
    ("triangle read after the nest",
     "int f(int n, const float *a, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 0; j <= i; j++)\n      out[k++] = a[i * n + j];\n  return k;\n}\n",
     "the trip count of the loop at line 6 depends on 'i'"),
]


@pytest.mark.parametrize("what,body,reason", REFUSED, ids=[r[0] for r in REFUSED])
def test_left_as_written_with_the_reason(analyze, what, body, reason):
    analysis = analyze(PRELUDE + body)
    kept = [n for n in analysis.nests if n.mdh is None and n.kept is not None]
    assert kept, analysis.nests
    assert any(reason in n.kept.message for n in kept), [n.kept.message for n in kept]
    assert all("long long" not in n.kept.message for n in kept), [n.kept.message for n in kept]


EXITS = [
    ("counter read after the nest",
     "int f(int n, int m, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 0; j < m; j++)\n      out[k++] = 1.0f;\n  return k;\n}\n",
     "k", "(int) (((long long) k) + (((n > 0) ? ((long long) n) : (0)) * ((m > 0) ? ((long long) m) : (0))))"),
    ("pointer end read after the nest",
     "long f(int n, const float *a, float *buf) {\n  float *p = buf;\n  for (int i = 2; i <= n; i++) {\n"
     "    *p = a[i];\n    p += 3;\n  }\n  return p - buf;\n}\n",
     "p", "p + (((n >= 2) ? ((((long long) n) - 2) + 1) : (0)) * 3)"),
    ("loop stepping by three",
     "int f(int n, float *out) {\n  int k = 5;\n  for (int i = 1; i < n; i += 3)\n    out[k++] = 1.0f;\n"
     "  return k;\n}\n",
     "k", "(int) (((long long) k) + ((n > 1) ? (((((long long) n) - 1) + 2) / 3) : (0)))"),
    ("downward loop",
     "int f(int n, float *out) {\n  int k = 0;\n  for (int i = n; i > 2; i--)\n    out[k++] = 1.0f;\n"
     "  return k;\n}\n",
     "k", "(int) (((long long) k) + ((n > 2) ? (((long long) n) - 2) : (0)))"),
    ("loop stepping by a run-time amount, its trips computed at the call",
     "int f(int n, int s, const float *a, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
     "    for (int j = 0; j < n; j += s)\n      out[k++] = a[j];\n  return k;\n}\n",
     "k", "(n) - (0) + (s) - 1) / (s)"),
]


@pytest.mark.parametrize("what,body,name,value", EXITS, ids=[e[0] for e in EXITS])
def test_exit_value_of_a_variable_read_after_the_nest(analyze, what, body, name, value):
    """The model closes the variable as before; its value after the nest (on entry plus every
    iteration's steps, an empty loop adding nothing) is the call site's to assign."""
    nests = [n for n in analyze(PRELUDE + body).nests if n.mdh is not None and n.mdh.exits]
    assert nests, analyze(PRELUDE + body).nests
    (x,) = nests[-1].mdh.exits
    assert x.name == name and value in x.c_expr, x


def test_a_counter_dead_after_the_nest_has_no_exit_value(analyze):
    n = _only(analyze(PRELUDE + "void f(int n, float *out) {\n  int k = 0;\n  for (int i = 0; i < n; i++)\n"
                      "    out[k++] = 1.0f;\n}\n"))
    assert n.mdh is not None and n.mdh.exits == (), n.mdh
