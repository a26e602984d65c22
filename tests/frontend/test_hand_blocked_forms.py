"""Hand-blocked loops in the front end: loop conditions that are conjunctions of bounds
(``frontend/scop_loops.py``), locals holding a constant (``frontend/normalize/constant_locals.py``)
and the un-tiling of blocked bands (``frontend/untile.py``, decided in ``frontend/analyze.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mdpoly.ir.mdh import Combine
from mdpoly.ir.nest import Computation, FileAnalysis, NestAnalysis, schedule_computations

Analyze = Callable[..., FileAnalysis]


def _one(fa: FileAnalysis) -> NestAnalysis:
    (nest,) = fa.nests
    return nest


def _dims(nest: NestAnalysis) -> str:
    return " ".join(f"{lp.iterator}:{lp.combine.value}" for lp in nest.loops)


# {{{ conjunctions of bounds


@pytest.mark.parametrize("header, domain", [
    ("for (int i = 0; i < n && i < m; i++)", "-i + m - 1 >= 0"),
    ("for (int i = 0; i < n && i <= m; i++)", "-i + m >= 0"),
    ("for (int i = 0; i <= m && i < n; i++)", "-i + n - 1 >= 0"),
    ("for (int i = 0; m > i && i < n && i < 100; i++)", "-i + 99 >= 0"),
    ("for (int i = n - 1; i >= 0 && i > n - m; i--)", "i + m - n - 1 >= 0"),
])
def test_a_conjunction_of_bounds_is_their_minimum(analyze: Analyze, header: str, domain: str) -> None:
    text = f"void k(int n, int m, float *x, const float *y)\n{{\n  {header}\n    x[i] = y[i] + 1.0f;\n}}\n"
    nest = _one(analyze(text))
    assert nest.mdh is not None, nest.kept
    assert domain in nest.mdh.to_dsl(), nest.mdh.to_dsl()


@pytest.mark.parametrize("header, message", [
    ("for (int i = 0; i < n && y[i] > 0; i++)",
     "loop condition '(i < n) && (y[i] > 0)' is not of the form 'i < bound', 'i <= bound' ('>', '>=' for a downward "
     "loop) or 'i != bound'"),
    ("for (int i = 0; i < n && i != m; i++)",
     "loop condition '(i < n) && (i != m)' has a 'i != ...' among its conjuncts"),
    ("for (int i = 0; i < n && i < u; i++)", "loop condition '(i < n) && (i < u)' compares unsigned values"),
])
def test_a_conjunction_with_another_test_keeps_the_loop(analyze: Analyze, header: str, message: str) -> None:
    nest = _one(analyze("void k(int n, int m, unsigned u, float *x, const float *y)\n{\n  "
                        f"{header}\n    x[i] = y[i] + 1.0f;\n}}\n"))
    assert nest.mdh is None and nest.kept is not None
    assert nest.kept.code == "non-affine-bound" and nest.kept.message == message, nest.kept.message


# }}}

# {{{ locals holding a constant

BLOCKED_COPY = """
void k(int n, float *x, const float *y)
{{
  {decl}
  for (int i0 = 0; i0 < n; i0 += B)
    for (int i = i0; i < i0 + B && i < n; i++)
      x[i] = y[i] * {use};
}}
"""


@pytest.mark.parametrize("decl, use", [
    ("const int B = 32;", "B"),
    ("const int B = 4 * 8;", "B"),
    ("int B = 32;", "2.0f"),
    ("enum { W = 8 }; const long B = W * 4;", "B"),
])
def test_a_constant_local_block_size_is_a_constant(analyze: Analyze, decl: str, use: str) -> None:
    nest = _one(analyze(BLOCKED_COPY.format(decl=decl, use=use)))
    assert nest.mdh is not None, nest.kept
    assert _dims(nest) == "i:++" and nest.untiled, (_dims(nest), nest.untiled)
    assert not nest.mdh.preconditions or all("B" not in p.c_expr for p in nest.mdh.preconditions)


@pytest.mark.parametrize("decl", ["int B = 32; B += n;", "int B = 32; int *p = &B; *p = 3;", "volatile int B = 32;"])
def test_a_local_written_anywhere_is_no_constant(analyze: Analyze, decl: str) -> None:
    nest = _one(analyze(BLOCKED_COPY.format(decl=decl, use="2.0f")))
    # a run-time block size: un-tiled under a run-time check, or kept; never read as 32
    assert nest.mdh is None or any(p.c_expr == "B > 0" for p in nest.mdh.preconditions), nest.mdh


# }}}

# {{{ un-tiling

MM = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
void mm(int n, int bs, const double *A, const double *B, double *C)
{{
  for (int ii = 0; ii < n; ii += bs)
    for (int kk = 0; kk < n; kk += bs)
      for (int i = ii; {cond_i}; i++)
        for (int k = kk; {cond_k}; k++)
          for (int j = 0; j < n; j++)
            C[i * n + j] += A[i * n + k] * B[k * n + j];
}}
"""


@pytest.mark.parametrize("cond_i", [
    "i < MIN(ii + bs, n)",
    "i < MIN(n, ii + bs)",
    "i < (ii + bs < n ? ii + bs : n)",
    "i < (n > ii + bs ? ii + bs : n)",
    "i < (n <= bs + ii ? n : bs + ii)",
    "i < ii + bs && i < n",
    "n > i && bs + ii > i",
])
def test_blocked_loops_run_over_their_whole_ranges(analyze: Analyze, cond_i: str) -> None:
    nest = _one(analyze(MM.format(cond_i=cond_i, cond_k="k < MIN(kk + bs, n)")))
    assert nest.mdh is not None, nest.kept
    assert _dims(nest) == "i:++ k:+ j:++"
    assert [p.c_expr for p in nest.mdh.preconditions if "bs" in p.c_expr] == ["bs > 0"]
    assert nest.untiled == ("block loops 'ii', 'kk' around point loops 'i', 'k' run over their whole ranges "
                            "(i:++ k:+: the order of the tiles changes no result), when bs > 0 (else as written)")
    assert not nest.blocked


@pytest.mark.parametrize("cond_i, cond_k", [
    ("i < MIN(ii + bs, n - 1)", "k < MIN(kk + bs, n)"),   # another end than the block loop's
    ("i < MIN(ii + bs, n)", "k < MIN(kk + 2 * bs, n)"),   # another block size
    ("i < MIN(ii + bs, n)", "k < MIN(ii + bs, n)"),       # the other block's iterator
    ("i < MAX(ii + bs, n)", "k < MIN(kk + bs, n)"),
    ("i < ii + bs || i < n", "k < MIN(kk + bs, n)"),
])
def test_other_point_loops_are_no_band(analyze: Analyze, cond_i: str, cond_k: str) -> None:
    text = "#define MAX(a,b) ((a) > (b) ? (a) : (b))\n" + MM.format(cond_i=cond_i, cond_k=cond_k)
    nest = _one(analyze(text))
    assert not nest.untiled and not nest.blocked, (nest.untiled, nest.blocked)


BAND = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
void k(int n, {bs_type} bs, int *cnt, double *x, const double *y)
{{
  for ({it_type} ii = 0; ii < n; ii += bs)
    for (int jj = 0; jj < n; jj += bs)
      for (int i = ii; i < MIN(ii + bs, n); i++) {{
        {between}
        for (int j = jj; j < MIN(jj + bs, n); j++)
          {body}
      }}
}}
"""


def _band(analyze: Analyze, between: str = "", body: str = "x[i * n + j] += y[j * n + i];", bs_type: str = "int",
          it_type: str = "int") -> NestAnalysis:
    return _one(analyze(BAND.format(between=between, body=body, bs_type=bs_type, it_type=it_type)))


def test_a_declaration_between_point_loops_runs_once_per_point(analyze: Analyze) -> None:
    nest = _band(analyze, between="double s = y[i] * 2.0;", body="x[i * n + j] += s;")
    assert nest.mdh is not None and nest.untiled, nest.kept


@pytest.mark.parametrize("kw", [
    {"between": "cnt[i] += 1;"},                                      # runs once per tile of jj
    {"between": "double s = x[i];", "body": "x[i * n + j] += s;"},    # reads what the nest writes
    {"between": "double s = y[i];", "body": "{ x[i * n + j] += s; s += 1.0; }"},
    {"body": "x[i * n + j] += ii;"},                                  # the block iterator elsewhere
    {"body": "{ x[i * n + j] += 1.0; bs = 3; }"},                     # the block size changes
    {"bs_type": "unsigned"},
    {"it_type": "long"},                                              # i is int, ii long
])
def test_blocked_bands_that_are_not_plain_tilings_stay_blocked(analyze: Analyze, kw: dict[str, str]) -> None:
    fa = analyze(BAND.format(**{"between": "", "body": "x[i * n + j] += y[j * n + i];", "bs_type": "int",
                                "it_type": "int", **kw}))
    assert all(not n.untiled for n in fa.nests), [n.untiled for n in fa.nests]


def test_a_dependence_between_tiles_keeps_the_band_blocked(analyze: Analyze) -> None:
    nest = _band(analyze, body="x[i * n + j] = x[j * n + i] + y[j];")
    assert not nest.untiled
    assert nest.blocked.startswith("block loops 'ii', 'jj' around point loops 'i', 'j': un-tiled, the nest would not "
                                   "be one computation (loop 'i' carries "), nest.blocked


SUM = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
void k(int n, int bs, const {t} *a, {t} *s)
{{
  for (int ii = 0; ii < n; ii += bs)
    for (int kk = 0; kk < n; kk += bs)
      for (int i = ii; i < MIN(ii + bs, n); i++)
        for (int k = kk; k < MIN(kk + bs, n); k++)
          s[i] += a[i * n + k];
}}
"""


@pytest.mark.parametrize("t, untiled", [("double", False), ("long", True)])
def test_strict_fp_unties_no_floating_point_sum(analyze: Analyze, t: str, untiled: bool) -> None:
    nest = _one(analyze(SUM.format(t=t), strict_fp=True))
    assert bool(nest.untiled) == untiled, (nest.untiled, nest.blocked)
    if not untiled:
        assert "which --strict-fp forbids reassociating" in nest.blocked, nest.blocked
    loose = _one(analyze(SUM.format(t=t)))
    assert loose.untiled and loose.mdh is not None and _dims(loose) == "i:++ k:+"
    assert any(lp.combine is Combine.ADD for lp in loose.loops)


def test_a_band_inside_a_sequential_loop_is_untiled_as_its_computation(analyze: Analyze) -> None:
    text = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
void k(int steps, int n, int bs, double *x, const double *y)
{
  for (int t = 0; t < steps; t++)
    for (int ii = 0; ii < n; ii += bs)
      for (int jj = 0; jj < n; jj += bs)
        for (int i = ii; i < MIN(ii + bs, n); i++)
          for (int j = jj; j < MIN(jj + bs, n); j++)
            x[i * n + j] = 0.5 * x[i * n + j] + y[j * n + i];
}
"""
    nest = _one(analyze(text))
    assert nest.schedule is not None, nest.kept
    comps = [c for c in schedule_computations(nest.schedule) if isinstance(c, Computation)]
    assert [(_dims(c.nest), bool(c.nest.untiled)) for c in comps] == [("i:++ j:++", True)]


# }}}


def test_iterators_declared_before_the_nest(analyze: Analyze) -> None:
    text = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
void k(int n, int bs, double *x, const double *y)
{
  int i, ii;
  for (ii = 0; ii < n; ii += bs)
    for (i = ii; i < MIN(ii + bs, n); i++)
      x[i] = 2.0 * y[i];
}
int later(int n, int bs, double *x, const double *y)
{
  int i, ii;
  for (ii = 0; ii < n; ii += bs)
    for (i = ii; i < MIN(ii + bs, n); i++)
      x[i] = 2.0 * y[i];
  return i;
}
"""
    fa = analyze(text)
    assert fa.nests[0].untiled and fa.nests[0].mdh is not None
    assert all(not n.untiled for n in fa.nests[1:])   # 'i' is read after the nest: its exit value differs


def test_a_pragma_on_the_block_loop_keeps_the_nest_as_written(analyze: Analyze) -> None:
    text = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
void k(int n, int bs, double *x, const double *y)
{
#pragma omp parallel for
  for (int ii = 0; ii < n; ii += bs)
    for (int i = ii; i < MIN(ii + bs, n); i++)
      x[i] = 2.0 * y[i];
}
"""
    assert all(not n.untiled for n in analyze(text).nests)


ARGMAX = """
#define MIN(a,b) ((a) < (b) ? (a) : (b))
int k(int n, int bs, const double *x)
{{
  double m = x[0];
  int at = 0;
  for (int ii = 0; ii < n; ii += bs)
    {jj}
    for (int i = ii; i < MIN(ii + bs, n); i++)
      {j}
      if (x[{at}] > m) {{ m = x[{at}]; at = {at}; }}
  return at;
}}
"""


def test_an_argmax_over_tiles_keeps_the_band_blocked(analyze: Analyze) -> None:
    """Which of equal values is the first depends on the order: tile by tile, or row by row (the
    model has an argmax over one loop only, so the un-tiled nest is no computation either)."""
    nest = analyze(ARGMAX.format(jj="for (int jj = 0; jj < n; jj += bs)",
                                 j="for (int j = jj; j < MIN(jj + bs, n); j++)", at="i * n + j")).nests[0]
    assert not nest.untiled, nest.untiled
    assert nest.blocked.startswith("block loops 'ii', 'jj' around point loops 'i', 'j': un-tiled, "), nest.blocked


def test_one_block_loop_keeps_the_order(analyze: Analyze) -> None:
    nest = analyze(ARGMAX.format(jj="", j="", at="i")).nests[0]
    assert nest.untiled and nest.mdh is not None, nest.blocked
