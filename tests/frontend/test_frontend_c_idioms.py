"""C as people write it: declared parameter types, local accumulators, alias checks, new reason codes."""

from __future__ import annotations

import pytest

HEAD = "#include <stdio.h>\ntypedef float real_t;\n"


def one(analyze, body: str):
    (n,) = analyze(HEAD + body).nests
    return n


@pytest.mark.parametrize("params,decl", [
    ("float **A", "float **A"), ("float (*A)[64]", "float (*A)[64]"), ("float A[n][m]", "float A[n][m]"),
    ("const real_t *restrict A", "const real_t *restrict A"), ("float *A[]", "float *A[]"),
])
def test_buffers_keep_declared_type(analyze, params, decl):
    a_ref = "A[i]" if "restrict" in params else "A[i][j]"
    n = one(analyze, f"void f(int n, int m, {params}, float *y) {{\n  for (int i = 0; i < n; i++)\n"
                     f"    for (int j = 0; j < 4; j++)\n      y[i] += {a_ref};\n}}\n")
    assert n.mdh is not None, n.kept
    assert n.mdh.buffer("A").c_decl == decl
    if "*A[" in params or "**" in params:
        assert n.mdh.buffer("A").kind == "indirect"
    if "[n][m]" in params:
        assert {b.name for b in n.mdh.buffers} >= {"n", "m"}


def test_local_accumulator_with_finish(analyze):
    n = one(analyze, "float A[8][8], B[8][8], C[8][8], al, be;\nvoid f(void) {\n"
                     "  for (int i = 0; i < 8; i++)\n    for (int j = 0; j < 8; j++) {\n      double s = 0;\n"
                     "      for (int k = 0; k < 8; k++)\n        s += A[i][k] * B[k][j];\n"
                     "      C[i][j] = al * s + be * C[i][j];\n    }\n}\n")
    assert n.mdh is not None, n.kept
    (o,) = n.mdh.outputs
    assert (o.access.to_c(), o.elem_type, o.update, o.init) == ("C[i][j]", "double", "assign", "0")
    assert o.finish is not None and o.finish.result in o.finish.expr
    assert [a.to_c() for a in o.finish.inputs] == ["al", "be", "C[i][j]"] or "C[i][j]" in [
        a.to_c() for a in o.finish.inputs]
    assert all(b.name != "s" for b in n.mdh.buffers)


def test_alias_checks_only_for_pointers_that_may_overlap(analyze):
    n = one(analyze, "float G[100];\nvoid f(int n, float *a, const float *b, float *restrict r) {\n"
                     "  for (int i = 0; i < n; i++)\n    a[i] = b[i + 1] + G[i] + r[i];\n}\n")
    assert n.mdh is not None, n.kept
    pairs = {frozenset((c.a.buffer, c.b.buffer)) for c in n.mdh.alias_checks}
    assert pairs == {frozenset(("a", "b")), frozenset(("a", "G"))}
    (ab,) = [c for c in n.mdh.alias_checks if {c.a.buffer, c.b.buffer} == {"a", "b"}]
    rb = ab.a if ab.a.buffer == "b" else ab.b
    assert (rb.lo.to_c(), rb.hi.to_c()) == ("1", "n")


def test_array_objects_need_no_alias_check(analyze):
    n = one(analyze, "float X[100], Y[100];\nvoid f(void) {\n  for (int i = 0; i < 100; i++)\n    X[i] = Y[i];\n}\n")
    assert n.mdh is not None and n.mdh.alias_checks == ()


CODES = [
    # rows written (1..n-1) and read (row 0) in ranges of different shapes: no one order check
    ("indirect-write", "void f(int n, float **A) {\n  for (int i = 1; i < n; i++)\n    for (int j = 0; j < n; j++)\n"
                       "      A[i][j] = A[0][j] + 1;\n}\n", (6, 7)),
    ("already-parallel", "void f(int n, float *A) {\n  #pragma omp parallel for\n  for (int i = 0; i < n; i++)\n"
                         "    A[i] = 0;\n}\n", (5, 3)),
    ("local-accumulator", "void f(int n, float *A, float *B, float *C) {\n  for (int i = 0; i < n; i++) {\n"
                          "    float s = 0;\n    for (int k = 0; k < n; k++)\n      s += A[k];\n    B[i] = s;\n"
                          "    C[i] = s;\n  }\n}\n", (9, 5)),
]


@pytest.mark.parametrize("code,body,where", CODES, ids=[c[0] for c in CODES])
def test_new_reason_codes(analyze, code, body, where):
    n = one(analyze, body)
    assert n.mdh is None and n.kept.code == code, n.kept
    assert (n.kept.loc.file, n.kept.loc.line, n.kept.loc.column) == ("in.c", *where), n.kept


def test_writes_through_row_pointers_need_their_rows_in_order(analyze):
    """``A[i][j] = ...`` through ``float **A``: accepted, with the check that A's rows lie in
    address order and apart (``AliasCheck(r, r)``), and a no-overlap check against ``B``'s rows."""
    n = one(analyze, "void f(int n, float **A, float **B) {\n  for (int i = 0; i < n; i++)\n"
                     "    for (int j = 0; j < n; j++)\n      A[i][j] = B[j][i];\n}\n")
    assert n.mdh is not None, n.kept
    own = [c for c in n.mdh.alias_checks if c.a == c.b]
    assert [c.a.buffer for c in own] == ["A"] and own[0].a.row_lo is not None
    assert any({c.a.buffer, c.b.buffer} == {"A", "B"} for c in n.mdh.alias_checks)
