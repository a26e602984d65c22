"""Helpers of several statements (``mdpoly.frontend.normalize.helper_bodies``): a body -> one
expression (early returns as conditionals, locals substituted in order, conversions kept), the
reasons a function is no helper, and the nests that call them."""

from __future__ import annotations

import pytest
from pycparser import c_ast, c_parser

from mdpoly.frontend.normalize.helper_bodies import NotAHelper, body_of
from mdpoly.frontend.normalize.inline_calls import helpers_of, inline_pure_calls
from mdpoly.frontend.symbols import c_text

PURE = frozenset({"fabs", "fmin", "copysign"})


def _body(src: str, globals_: frozenset[str] = frozenset()) -> str:
    (fd,) = c_parser.CParser().parse(src).ext
    return c_text(body_of(fd, globals_, frozenset(), PURE, frozenset()).expr)


def _refusal(src: str) -> str:
    (fd,) = c_parser.CParser().parse(src).ext
    with pytest.raises(NotAHelper) as e:
        body_of(fd, frozenset({"g"}), frozenset(), PURE, frozenset())
    return e.value.reason


def test_early_returns_are_nested_conditionals():
    assert _body("static int clampi(int v, int lo, int hi) { if (v < lo) return lo; if (v > hi) return hi; "
                 "return v; }") == "(v < lo) ? ((int) lo) : ((v > hi) ? ((int) hi) : ((int) v))"
    assert _body("static double minmod(double a, double b) { if (a * b <= 0.0) return 0.0; "
                 "return copysign(fmin(fabs(a), fabs(b)), a); }") == \
        "((a * b) <= 0.0) ? ((double) 0.0) : ((double) copysign(fmin(fabs(a), fabs(b)), a))"


def test_if_else_blocks_scope_their_locals_and_keep_guarded_reads_behind_the_condition():
    assert _body("static double f(const double *p, int k) { if (k > 0) { double v = p[k - 1]; return v * v; } "
                 "else return p[0]; }") == "(k > 0) ? ((double) (((double) p[k - 1]) * ((double) p[k - 1]))) : " \
                                           "((double) p[0])"


def test_locals_are_substituted_in_order_with_their_types():
    # 'a' is reassigned after 't' read it: the last 't' subtracts the old a + 1 from the new a
    assert _body("static double f(double a) { double t = a + 1.0; a = t * 2.0; t = a - t; return t; }") == \
        "(double) (((double) (((double) (a + 1.0)) * 2.0)) - ((double) (a + 1.0)))"
    assert _body("static unsigned long long xs(unsigned long long x) { x ^= x << 13; x ^= x >> 7; return x; }") \
        == "(unsigned long long) (((unsigned long long) (x ^ (x << 13))) ^ " \
           "(((unsigned long long) (x ^ (x << 13))) >> 7))"
    assert _body("static int f(int k) { float h = k; h += 0.5f; k++; return h * k; }") == \
        "(int) (((float) (((float) k) + 0.5f)) * ((int) (k + 1)))"


def test_pointer_reads_are_subscripts_of_the_parameter():
    assert _body("static double f(const double *p, int k) { return *(p + k) + *p; }") == "(double) (p[k] + p[0])"


def test_branches_that_only_assign_merge_into_conditionals():
    assert _body("static double f(double a, int k) { double t = a; if (k > 0) t *= 0.5; else { double s = 1.0; "
                 "t -= s; } return t + g; }", frozenset({"g"})) == \
        "(double) (((k > 0) ? ((double) (((double) a) * 0.5)) : ((double) (((double) a) - ((double) 1.0)))) + g)"


@pytest.mark.parametrize("src,reason", [
    ("static double f(double *p) { p[0] = 1.0; return 2.0; }", "it writes through pointer 'p'"),
    ("static double f(double *p) { *p += 1.0; return 2.0; }", "it writes through pointer 'p'"),
    ("static double f(double v) { g = v; return v; }", "it writes the global 'g'"),
    ("static double f(double v) { double s = 0; for (int k = 0; k < 3; k++) s += v; return s; }", "it has a loop"),
    ("static double f(double v) { return v + rand(); }", "it calls 'rand'"),
    ("static double f(double v) { if (v > 0) return v; }", "it can reach its end without returning a value"),
    ("static double f(double v) { double t; if (v > 0) t = v; return t; }", "it may read 't' before assigning it"),
    ("static double f(double v) { static double last; return v + last; }", "it declares the static 'last'"),
    ("static double f(double v) { return v + h; }", "it reads 'h', which is no parameter, local or global object of "
                                                   "the file"),
    ("static double f(const double *p) { return p ? p[0] : 0.0; }", "it uses pointer 'p' other than by reading its "
                                                                    "elements"),
    ("static void f(double *p, double v) { p[0] = v; }", "it writes through pointer 'p'"),
])
def test_refused_with_the_reason(src, reason):
    assert _refusal(src) == reason


def test_helpers_of_names_recursion_and_refused_callees():
    ast = c_parser.CParser().parse(
        "static int fact(int k) { if (k <= 1) return 1; return k * fact(k - 1); }\n"
        "static double loop(double v) { while (v > 1) v /= 2; return v; }\n"
        "static double outer(double v) { return 2.0 * loop(v); }\n"
        "double exported(double v) { return v; }\n"
        "static double ok(double v) { double w = v * v; return w + 1.0; }\n")
    found = helpers_of(ast)
    assert set(found.bodies) == {"ok"}
    assert found.refused == {"fact": "it is recursive", "loop": "it has a loop",
                             "outer": "it calls 'loop' (it has a loop)",
                             "exported": "it is not static, so another definition may replace it at link time"}


def _nest(ast: c_ast.FileAST) -> c_ast.For:
    (loop,) = [x for x in ast.ext[-1].body.block_items if isinstance(x, c_ast.For)]
    return loop


def test_pointer_arguments_become_subscripts_of_the_caller_arrays():
    ast = c_parser.CParser().parse(
        "static double sq(const double *p, const double *q) { double dx = p[0] - q[0]; double dy = p[1] - q[1];"
        " return dx * dx + dy * dy; }\n"
        "static double near(const double *p) { return sq(p, p + 2); }\n"
        "void f(double *pts, double *o, int n) { for (int i = 0; i < n; i++) o[i] = near(&pts[2 * i]) + sq(pts, o); }\n")
    nest = _nest(ast)
    done = inline_pure_calls(nest, ast, {"pts", "o", "n"})
    text = c_text(nest.stmt)
    assert done.count == 2 and done.refused == () and "sq(" not in text and "near(" not in text
    assert "pts[(2 * i) + (2 + 0)]" in text and "pts[(2 * i) + 1]" in text and "o[1]" in text, text


def test_a_local_hiding_a_global_the_helper_reads_keeps_the_call_with_its_reason():
    ast = c_parser.CParser().parse(
        "static double scale = 2.0;\nstatic double scaled(double v) { return scale * v; }\n"
        "void f(double *o, int n) { double scale = 3.0; for (int i = 0; i < n; i++) o[i] = scaled(o[i]) + scale; }\n")
    nest = _nest(ast)
    done = inline_pure_calls(nest, ast, {"scale", "o", "n"})
    assert done.count == 0 and "scaled(" in c_text(nest.stmt)
    assert done.refused == (("scaled", "it reads the global 'scale', which a local of that name hides here"),)


def test_the_nest_keeps_the_call_and_says_why(analyze):
    n = analyze("static int calls;\nstatic double counted(double v) { calls++; return v; }\n"
                "void f(double *a, double *b, int n) {\n  for (int i = 0; i < n; i++)\n    b[i] = counted(a[i]);\n}\n")
    (nest,) = n.nests
    assert nest.mdh is None and nest.kept.code == "side-effect-call"
    assert nest.kept.message == "call to 'counted': it writes the global 'calls'", nest.kept.message
    assert (nest.kept.loc.line, nest.kept.loc.column) == (5, 12)
