"""The user's OpenMP at a candidate (issue 21, item 6): directive kinds, and the located reason
each kind of user OpenMP gives a nest (``already-parallel``, ``in-omp-region``, ``openmp-inside``),
with and without ``--replace-omp``; the other language mode of a preprocessor command (item 1)."""

from __future__ import annotations

import pytest

from mdpoly.frontend.openmp import omp_kind
from mdpoly.frontend.parse import other_mode


@pytest.mark.parametrize(("text", "kind"), [
    ("omp parallel for reduction(+:s) schedule(static)", "loop"), ("omp parallel for simd", "loop"),
    ("omp for nowait", "loop"), ("omp taskloop grainsize(4)", "loop"),
    ("omp target teams distribute parallel for map(tofrom: a)", "loop"), ("omp simd safelen(8)", "vector"),
    ("omp parallel", "construct"), ("omp parallel num_threads(4)", "construct"), ("omp single", "construct"),
    ("omp critical(lock)", "construct"), ("omp atomic update", "construct"), ("omp barrier", "standalone"),
    ("omp target update to(a)", "standalone"), ("omp declare simd", "standalone"), ("mdh(a[i] : ++)", None),
    ("GCC ivdep", None),
])
def test_directive_kinds(text: str, kind: str | None) -> None:
    assert omp_kind(text) == kind


@pytest.mark.parametrize(("words", "other"), [
    (["cc", "-E"], (["cc", "-E", "-std=c17"], "strict ISO C (-std=c17)")),
    (["cpp", "-std=c99"], (["cpp", "-std=gnu99"], "GNU C (-std=gnu99)")),
    (["gcc", "-E", "-std=gnu11", "-O2"], (["gcc", "-E", "-std=c11", "-O2"], "strict ISO C (-std=c11)")),
    (["gcc", "-E", "-std=iso9899:1999"], None),
])
def test_other_language_mode(words: list[str], other: tuple[list[str], str] | None) -> None:
    assert other_mode(words) == other


HEAD = "float A[100][100], x[100];\nvoid f(int n) {\n"


def _one(analyze, body: str, **opts: object):  # type: ignore[no-untyped-def]
    nests = analyze(HEAD + body + "}\n", **opts).nests
    return [(n.loc.line, n.loc.column, n.mdh is not None, n.kept.code if n.kept else None,
             (n.kept.loc.line, n.kept.loc.column) if n.kept else None) for n in nests]


@pytest.mark.parametrize(("body", "expected"), [
    ("  #pragma omp parallel for simd\n  for (int i = 0; i < n; i++) x[i] = 1;\n",
     [(4, 3, False, "already-parallel", (4, 3))]),
    ("  #pragma omp parallel\n  for (int i = 0; i < n; i++) x[i] = 1;\n",
     [(4, 3, False, "in-omp-region", (4, 3))]),
    ("  #pragma omp parallel\n  {\n    #pragma omp for\n    for (int i = 0; i < n; i++) x[i] = 1;\n"
     "    for (int i = 0; i < n; i++) x[i] += 1;\n  }\n",
     [(6, 5, False, "already-parallel", (6, 5)), (7, 5, False, "in-omp-region", (7, 5))]),
    ("  #pragma omp barrier\n  for (int i = 0; i < n; i++) x[i] = 1;\n", [(4, 3, True, None, None)]),
    ("  #pragma omp simd\n  for (int i = 0; i < n; i++) x[i] = 1;\n", [(4, 3, True, None, None)]),
    ("  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++) {\n      #pragma omp atomic\n"
     "      A[i][j] += 1;\n    }\n", [(3, 3, False, "openmp-inside", (3, 3)), (4, 5, False, "openmp-inside", (4, 5))]),
], ids=["parallel-for-simd", "parallel-then-for", "region", "barrier-before", "simd", "atomic-inside"])
def test_user_openmp_reasons(analyze, body: str, expected: list[object]) -> None:  # type: ignore[no-untyped-def]
    assert _one(analyze, body) == expected


def test_replace_omp_needs_a_parallel_for(analyze) -> None:  # type: ignore[no-untyped-def]
    body = ("  #pragma omp target teams distribute parallel for\n  for (int i = 0; i < n; i++) x[i] = 1;\n"
            "  #pragma omp parallel for\n  for (int i = 0; i < n; i++) x[i] = 2;\n"
            "  #pragma omp parallel for\n  for (int i = 1; i < n; i++) x[i] = x[i - 1];\n")
    got = _one(analyze, body, replace_omp=True)
    assert got[0] == (4, 3, False, "already-parallel", (4, 3))
    assert got[1] == (6, 3, True, None, None)
    assert got[2] == (8, 3, False, "already-parallel", (8, 3))
    nests = analyze(HEAD + body + "}\n", replace_omp=True).nests
    assert nests[1].openmp == "omp parallel for" and nests[1].span.first_line == 5
    assert "does not prove the nest parallel" in nests[2].kept.message


def test_functions_called_under_user_openmp_run_in_its_team(analyze) -> None:  # type: ignore[no-untyped-def]
    """A nest of a function called in a user's parallel loop (directly or through another
    function) runs in that team: kept (``in-omp-region``), the caller's pragma named."""
    src = ("float A[100][100];\n"
           "static void h(int r) {\n  for (int j = 0; j < 100; j++) A[r][j] += 1;\n}\n"
           "static void g(int r) {\n  for (int j = 0; j < 100; j++) A[r][j] *= 2;\n  h(r);\n}\n"
           "void f(void) {\n  #pragma omp parallel for\n  for (int i = 0; i < 100; i++) g(i);\n}\n"
           "void k(void) {\n  for (int i = 0; i < 100; i++)\n    for (int j = 0; j < 100; j++) A[i][j] = 0;\n}\n")
    nests = analyze(src).nests
    got = [(n.function, n.loc.line, n.kept.code if n.kept else None) for n in nests]
    assert got == [("h", 3, "in-omp-region"), ("g", 6, "in-omp-region"), ("f", 11, "already-parallel"),
                   ("k", 14, None)], got
    assert nests[0].kept.message.startswith("it runs inside the user's '#pragma omp parallel for' at line 10, "
                                            "under which 'h' is called")
