"""Index temporaries that read memory, and argmax/argmin through its own index: for the gathers'
inspection (``mdpoly.frontend.inspector``) the arrays that index temporaries read (``int src =
col[e]``) count as read by subscripts; a temporary declared before the nest (``int j; ... j =
perm[i]; y[i] = x[j];``) is one where the privatizer proves no value flows in; the own-index
argmax (``mdpoly.frontend.normalize.own_index_args``) loops over a value temporary that the call
site sets to ``a[best]`` when the loop runs, and other forms are left alone; the per-row form
(``best`` declared in each row) gets a temporary declared before its loop, and its outer loop is
a parallel loop around the nest's text."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycparser import c_ast, c_parser

from mdpoly.frontend.inspector import index_and_control_arrays
from mdpoly.frontend.normalize.own_index_args import own_index_args, own_index_rows
from mdpoly.frontend.parse import parse_c
from mdpoly.frontend.privatize import privatize_nest
from mdpoly.frontend.scop import find_candidates
from mdpoly.frontend.symbols import c_text, symbols_for
from mdpoly.ir.nest import PrivateLoop
from mdpoly.options import Options


def _rewrite(source: str) -> tuple[list[str], str]:
    """The (name, call-site value) of each temporary and the loop's text after the pass."""
    ast = c_parser.CParser().parse(source)
    func = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef))
    nest = next(s for s in func.body.block_items if isinstance(s, c_ast.For))
    symbols = symbols_for(ast, func, nest)
    found = own_index_args(nest, symbols, set(symbols.decls))
    return [f"{a.name} = {a.text}" for a in found], c_text(nest)


def test_argmax_through_its_index_gets_a_value_temporary() -> None:
    temps, text = _rewrite("int f(int n, const double *a) {\n  int best = 0;\n"
                           "  for (int i = 1; i < n; i++) if (a[i] > a[best]) best = i;\n  return best;\n}\n")
    assert temps == ["mdp_argv_best = (double){(1) < (n) ? a[best] : 0}"]
    assert "if (a[i] > mdp_argv_best)" in text and "mdp_argv_best = a[i];" in text and "best = i;" in text


def test_argmin_either_side_and_inclusive_bound() -> None:
    temps, text = _rewrite("long f(long n, const short *a) {\n  long k = n;\n"
                           "  for (long i = 0; i <= n; ++i) { if (a[k] >= a[i]) { k = i; } }\n  return k;\n}\n")
    assert temps == ["mdp_argv_k = (short){(0) <= (n) ? a[k] : 0}"]
    assert "if (mdp_argv_k >= a[i])" in text


@pytest.mark.parametrize("loop", [
    "for (int i = 1; i < n; i++) { if (a[i] > a[best]) best = i; a[i] = 0; }",   # writes a
    "for (int i = 1; i < n; i++) if (a[i] > a[best]) best = i + 1;",             # not the iterator
    "for (int i = 1; i < n; i++) if (a[i] > a[best]) best = i; else best = 0;",
    "for (int i = 1; i < n; i++) if (a[i] > a[i - 1]) best = i;",                # not the kept index
    "for (int i = 1; i < n; i += 2) if (a[i] > a[best]) best = i;",
    "for (int i = 1; i < n + best; i++) if (a[i] > a[best]) best = i;",          # the bound reads it
    "for (int i = 1; i < n; i++) if (a[idx[i]] > a[idx[best]]) best = i;",       # a subscript reads memory
    "for (int i = 1; i < n; i++) if (a[i] > a[best]) g = i;",                    # a global index
    "for (int i = 1; i < n; i++) if (a[i] > a[best]) p = i;",                    # its address is taken
    # 'best = i' converts: refused as an argmax (deps.inexact_reduction) and was kept with a reason
    # naming 'mdp_argv_best' (the fuzzer's 'for (unsigned i = 1; ...)', 'long i')
    "for (unsigned i = 1; i < n; i++) if (a[i] > a[best]) best = i;",
    "for (long i = 1; i < n; i++) if (a[i] > a[best]) best = i;",
])
def test_other_forms_are_left_as_written(loop: str) -> None:
    source = ("int g;\nint f(int n, double *a, const int *idx) {\n  int best = 0, p = 0;\n  int *q = &p;\n"
              f"  {loop}\n  return best + *q;\n}}\n")
    temps, text = _rewrite(source)
    assert temps == [] and "mdp_argv" not in text


def _rows(loop: str) -> tuple[list[str], str]:
    source = (f"int g;\nvoid f(int rows, int cols, const float *l, const int *idx, int *pred) {{\n"
              f"  int p = 0;\n  int *q = &p;\n  for (int r = 0; r < rows; r++) {{\n{loop}\n  }}\n}}\n")
    ast = c_parser.CParser().parse(source)
    func = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef))
    nest = next(s for s in func.body.block_items if isinstance(s, c_ast.For))
    symbols = symbols_for(ast, func, nest)
    return own_index_rows(nest, symbols, set(symbols.decls)), c_text(nest)


def test_per_row_argmax_through_its_index_gets_a_temporary_in_the_row() -> None:
    names, text = _rows("    int best = 0;\n    for (int c = 1; c < cols; c++)\n"
                        "      if (l[r * cols + c] > l[r * cols + best]) best = c;\n    pred[r] = best;")
    assert names == ["mdp_argv_best"]
    assert "float mdp_argv_best = (1 < cols) ? (l[(r * cols) + 0]) : (0);" in text, text
    assert "if (l[(r * cols) + c] > mdp_argv_best)" in text and "mdp_argv_best = l[(r * cols) + c];" in text


def test_per_row_argmax_through_an_index_assigned_in_the_row() -> None:
    source = ("void f(int rows, int cols, const float *l, int *pred) {\n  int best = -1;\n"
              "  for (int r = 0; r < rows; r++) {\n    best = 0;\n    for (int c = 1; c < cols; c++)\n"
              "      if (l[r * cols + c] <= l[r * cols + best]) best = c;\n    pred[r] = best;\n  }\n}\n")
    ast = c_parser.CParser().parse(source)
    func = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef))
    nest = next(s for s in func.body.block_items if isinstance(s, c_ast.For))
    symbols = symbols_for(ast, func, nest)
    assert own_index_rows(nest, symbols, set(symbols.decls)) == ["mdp_argv_best"]
    assert "if (l[(r * cols) + c] <= mdp_argv_best)" in c_text(nest)


@pytest.mark.parametrize("row", [
    "int best = 0; best = 1; for (int c = 1; c < cols; c++) if (l[r * cols + c] > l[r * cols + best]) best = c;",
    "int best = idx[r]; for (int c = 1; c < cols; c++) if (l[r * cols + c] > l[r * cols + best]) best = c;",
    "int s = 0; int best = s; s = 2; for (int c = 1; c < cols; c++) if (l[r * cols + c] > l[r * cols + best]) best = c;",
    "int best = 0; for (int c = 1; c < cols; c++) { if (l[r * cols + c] > l[r * cols + best]) best = c; pred[c] = 0; }",
    "volatile int best = 0; for (int c = 1; c < cols; c++) if (l[r * cols + c] > l[r * cols + best]) best = c;",
    "int best = 0; for (int c = 1; c < cols; c++) if (l[r * cols + c] > l[r * cols + best]) p = c;",
])
def test_other_per_row_forms_are_left_as_written(row: str) -> None:
    names, text = _rows("    " + row)
    assert names == [] and "mdp_argv" not in text


def test_per_row_argmax_is_a_parallel_loop_around_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "k.c"
    path.write_text("void k(int rows, int cols, const float *l, int *pred)\n{\n  for (int r = 0; r < rows; r++) {\n"
                    "    int best = 0;\n    for (int c = 1; c < cols; c++)\n"
                    "      if (l[r * cols + c] >= l[r * cols + best]) best = c;\n    pred[r] = best;\n  }\n}\n")
    parsed = parse_c(str(path), Options())
    (cand,) = find_candidates(parsed, Options())
    loop = privatize_nest(parsed, cand, plain=True)
    assert isinstance(loop, PrivateLoop) and loop.iterators == ("r",), loop
    assert "mdp_argv" not in loop.text and "l[(r * cols) + best]" in loop.text, loop.text


@pytest.mark.parametrize(("body", "arrays"), [
    ("{ int src = col[e]; s += pr[src] / deg[src]; }", {"col"}),
    ("{ int c = idx[e] * 3 + k; s += x[c]; }", {"idx"}),
    ("{ int c = col[e]; if (c == e) s += v[e]; }", {"col"}),            # an integer a condition tests
    ("{ double t = v[e]; if (t > 0) s += t; }", set()),                 # a double: not worth computing ahead
    ("{ int c; c = col[e]; int d = c + 1; s += x[d]; }", {"col"}),      # through two temporaries
    # a member spelled like a temporary (resize_bilinear's ``src->c`` beside ``float c = src->px[...]``)
    ("{ int c = idx[e]; s += x[e * g->c + k]; }", set()),
])
def test_arrays_read_by_index_temporaries_count_for_the_inspection(body: str, arrays: set[str]) -> None:
    source = f"struct G {{ int c; }};\nvoid f(int n, int k, const int *col, const int *idx, const double *v, " \
             f"double *x, const struct G *g) {{\n  double s = 0;\n  for (int e = 0; e < n; e++) {body}\n}}\n"
    ast = c_parser.CParser().parse(source)
    func = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef))
    nest = next(s for s in func.body.block_items if isinstance(s, c_ast.For))
    assert index_and_control_arrays(nest) & {"col", "idx", "v"} == arrays


def _plain(tmp_path: Path, before: str, body: str, after: str = "") -> PrivateLoop | str | None:
    path = tmp_path / "k.c"
    path.write_text(f"int k(int n, const int *perm, const double *x, double *y)\n{{\n  {before}\n"
                    f"  for (int i = 0; i < n; i++) {{\n    {body}\n  }}\n  return {after or '0'};\n}}\n")
    parsed = parse_c(str(path), Options())
    (cand,) = find_candidates(parsed, Options())
    return privatize_nest(parsed, cand, plain=True)


def test_a_temporary_declared_before_the_nest_is_private_and_inspected(tmp_path: Path) -> None:
    loop = _plain(tmp_path, "int j;", "j = perm[i]; y[i] = x[j];")
    assert isinstance(loop, PrivateLoop) and "j" in {c.name for c in loop.copies} | set(loop.private), loop
    assert "mdp_ins_lo_x" in loop.inspector and "j = perm[i]" in loop.inspector


@pytest.mark.parametrize(("body", "after", "why"), [
    ("y[i] = x[j]; j = perm[i];", "", "read before the nest writes it"),            # the last iteration's
    ("if (perm[i] > 0) j = perm[i]; y[i] = x[j];", "", "read before the nest writes it"),
    ("j = perm[i]; y[i] = x[j];", "j", "writes before reading them"),                 # read after the nest
])
def test_a_temporary_whose_value_crosses_iterations_is_refused(tmp_path: Path, body: str, after: str, why: str) -> None:
    loop = _plain(tmp_path, "int j = 0;", body, after)
    assert isinstance(loop, str) and why in loop, loop
