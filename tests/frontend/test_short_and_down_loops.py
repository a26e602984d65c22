"""Short loops that pick by their iterator (``normalize/short_loops.py``) and loops that count
down in their test (``normalize/down_loops.py``): the rewrites they make, the loops they leave
alone (the nest then keeps its old refusal), and the located refusal of a downward iterator read
after its loop."""

from __future__ import annotations

import pytest
from pycparser import c_ast, c_generator, c_parser

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.normalize.down_loops import count_down_in_headers
from mdpoly.frontend.normalize.short_loops import unroll_short_loops
from mdpoly.frontend.symbols import SymbolTable
from mdpoly.ir.nest import PrivateLoop


def _func(text: str) -> c_ast.FuncDef:
    ast = c_parser.CParser().parse("typedef unsigned long size_t;\n" + text)
    funcs = [e for e in ast.ext if isinstance(e, c_ast.FuncDef)]
    return funcs[0]


def _c(node: c_ast.Node) -> str:
    return " ".join(c_generator.CGenerator().visit(node).split())


def _params(func: c_ast.FuncDef) -> SymbolTable:
    args = func.decl.type.args.params if func.decl.type.args is not None else []
    return SymbolTable(decls={p.name: p.type for p in args}, params={p.name for p in args})


def test_down_loop_header_and_body() -> None:
    func = _func("void f(size_t n, float *y, const float *x, struct { int i; } s) {\n"
                 "  for (size_t i = n; i-- > 0;) y[i] = x[i + 1] + s.i;\n}\n")
    loop = func.body.block_items[0]
    assert count_down_in_headers(loop, func, SourceLoc("in.c", 2, 3)) == 1
    assert _c(loop) == "for (size_t i = n; i > 0; i--) y[i - 1] = x[(i - 1) + 1] + s.i;"


@pytest.mark.parametrize(("cond", "header"), [
    ("i--", "for (unsigned i = n; i != 0; i--)"),
    ("i-- != 2", "for (unsigned i = n; i != 2; i--)"),
    ("1 < i--", "for (unsigned i = n; i > 1; i--)"),
])
def test_down_loop_conditions(cond: str, header: str) -> None:
    func = _func(f"void f(unsigned n, float *y) {{\n  for (unsigned i = n; {cond};) y[i] = 0;\n}}\n")
    loop = func.body.block_items[0]
    assert count_down_in_headers(loop, func, SourceLoc("in.c", 2, 3)) == 1
    assert _c(loop) == header + " y[i - 1] = 0;"


@pytest.mark.parametrize("text", [
    "for (size_t i = n; i-- >= 1;) y[i] = 0;",          # never ends for an unsigned i and a bound of 0
    "for (size_t i = n; i-- > 0; n++) y[i] = 0;",       # a step of its own
    "for (size_t i = n; i-- > 0;) { y[i] = 0; i--; }",  # the body steps it
    "for (size_t i = n; i-- > i / 2;) y[i] = 0;",       # the bound reads it
])
def test_down_loops_left_alone(text: str) -> None:
    func = _func("void f(size_t n, float *y) {\n  " + text + "\n}\n")
    before = _c(func)
    assert count_down_in_headers(func.body.block_items[0], func, SourceLoc("in.c", 2, 3)) == 0
    assert _c(func) == before


def test_down_loop_iterator_read_after_is_refused_located(analyze) -> None:
    n = analyze("#include <stddef.h>\nsize_t f(size_t n, float *y) {\n  size_t i;\n"
                "  for (i = n; i-- > 0;)\n    y[i] = 0.0f;\n  return i;\n}\n").nests[0]
    assert n.mdh is None
    assert (n.kept.code, n.kept.loc.line, n.kept.loc.column) == ("unsupported-statement", 4, 3), n.kept
    assert "counts down in its condition" in n.kept.message and "read after it" in n.kept.message


def test_down_loop_is_a_computation(analyze) -> None:
    n = analyze("#include <stddef.h>\nvoid f(size_t n, const float *x, float *y) {\n"
                "  for (size_t i = n; i-- > 0;)\n    y[i] = 2.0f * x[i];\n}\n").nests[0]
    assert n.mdh is not None, n.kept
    assert [lp.combine.value for lp in n.loops] == ["++"]


ROPE = """typedef struct { float *q; float *k; } RunState;
void rope(RunState *s, int dim, int kv_dim, float fcr, float fci) {
  for (int i = 0; i < dim; i += 2) {
    int rotn = i < kv_dim ? 2 : 1;
    for (int v = 0; v < rotn; v++) {
      float *vec = v == 0 ? s->q : s->k;
      float v0 = vec[i], v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}
"""


def test_rope_inner_loop_is_written_out() -> None:
    func = _func(ROPE)
    outer = func.body.block_items[0]
    assert unroll_short_loops(outer, func, _params(func)) == 1
    text = _c(outer)
    assert "float *vec = s->q;" in text and "if (1 < rotn)" in text and "float *mdp_u1_vec = s->k;" in text
    assert "mdp_u1_vec[i] = (mdp_u1_v0 * fcr) - (mdp_u1_v1 * fci);" in text
    assert "for (int v" not in text and "v == 0" not in text


def test_literal_select_bound_becomes_its_test() -> None:
    func = _func("void f(int n, int kv, float *a, float *b) {\n  for (int i = 0; i < n; i++)\n"
                 "    for (long v = 0; v < (i < kv ? 2 : 1); v++) { float *p = v ? b : a; p[i] += 1.0f; }\n}\n")
    outer = func.body.block_items[0]
    assert unroll_short_loops(outer, func, _params(func)) == 1
    assert _c(outer) == ("for (int i = 0; i < n; i++) { { float *p = a; p[i] += 1.0f; } if (i < kv) "
                         "{ float *mdp_u1_p = b; mdp_u1_p[i] += 1.0f; } }")


def test_rope_runs_as_a_parallel_loop(analyze) -> None:
    n = analyze(ROPE).nests[0]
    assert n.schedule and isinstance(n.schedule[0], PrivateLoop), (n.kept, n.schedule)


@pytest.mark.parametrize("loop", [
    "for (unsigned v = 0; v < rotn; v++)",                  # an unsigned iterator
    "for (int v = 0; v < (g ? 2 : 1); v++)",                # a global the body may change
    "for (int v = 0; v < (i < kv_dim ? 5 : 1); v++)",       # more than MAX_COPIES trips
    "for (int v = 0; v < rotn; v += 2)",                    # not a step of one
])
def test_short_loops_left_alone(loop: str) -> None:
    text = ROPE.replace("for (int v = 0; v < rotn; v++)", loop).replace("typedef", "int g;\ntypedef")
    func = _func(text)
    outer = func.body.block_items[0]
    assert unroll_short_loops(outer, func, _params(func)) == 0


@pytest.mark.parametrize(("old", "new"), [
    ("    int rotn = i < kv_dim ? 2 : 1;\n", "    int rotn = i < kv_dim ? 2 : 1;\n    if (i == 4) rotn = 0;\n"),
    ("      vec[i + 1] = v0 * fci + v1 * fcr;\n", "      vec[i + 1] = v0 * fci + v1 * fcr;\n      if (v0 > 1) break;\n"),
    ("    int rotn = i < kv_dim ? 2 : 1;\n", "    unsigned char rotn = i < kv_dim ? 2 : -1;\n"),
])
def test_short_loops_left_alone_for_their_bodies_and_bounds(old: str, new: str) -> None:
    assert old in ROPE
    func = _func(ROPE.replace(old, new))
    outer = func.body.block_items[0]
    assert unroll_short_loops(outer, func, _params(func)) == 0
