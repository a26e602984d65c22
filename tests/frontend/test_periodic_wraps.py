"""Periodic neighbours (``mdpoly.frontend.normalize.wraps``): a remainder that wraps an enclosing
loop's iterator around the loop's bound by one becomes the select of its two affine values; any
other remainder stays as written."""

from __future__ import annotations

import pytest
from pycparser import c_ast, c_parser

from mdpoly.frontend.c_text import SourceGenerator
from mdpoly.frontend.normalize.wraps import rewrite_periodic_wraps


def _rewritten(body: str, header: str = "for (int y = 0; y < h; y++)") -> str:
    func = c_parser.CParser().parse(f"void f(int h, int w, int *o, const int *g) {{ {header} {{ {body} }} }}")
    (fdef,) = func.ext
    assert isinstance(fdef, c_ast.FuncDef)
    (loop,) = fdef.body.block_items
    rewrite_periodic_wraps(loop)
    text = "".join(SourceGenerator().visit(loop.stmt).split())
    return text.replace("(", "").replace(")", "")   # the generator's parentheses


@pytest.mark.parametrize(("expr", "select"), [
    ("(y + 1) % h", "y+1==h?0:y+1"),
    ("(1 + y) % h", "y+1==h?0:y+1"),
    ("(y + h + 1) % h", "y+1==h?0:y+1"),
    ("(y + h - 1) % h", "y==0?h-1:y-1"),
    ("(y - 1 + h) % h", "y==0?h-1:y-1"),
    ("(h + y - 1) % h", "y==0?h-1:y-1"),
    ("y % h", "y"),
    ("(y + h) % h", "y"),
])
def test_wraps_by_one_become_selects(expr: str, select: str) -> None:
    assert _rewritten(f"o[y] = g[{expr}];") == f"{{o[y]=g[{select}];}}"


@pytest.mark.parametrize("expr", [
    "(y + 2) % h",          # n >= 2 is not implied by the loop
    "(y - 1) % h",          # negative at y == 0: C's remainder is -1 there
    "(y + 1) % w",          # another bound than the loop's
    "(2 * y + 1) % h",      # not the iterator itself
    "(y + 1) % (h + 1)",
])
def test_other_remainders_stay(expr: str) -> None:
    kept = "".join(expr.split()).replace("(", "").replace(")", "")
    assert _rewritten(f"o[y] = g[{expr}];") == f"{{o[y]=g[{kept}];}}"


def test_loops_that_do_not_count_from_zero_by_one_are_not_used() -> None:
    for header in ("for (int y = 1; y < h; y++)", "for (int y = 0; y <= h; y++)", "for (int y = 0; y < h; y += 2)"):
        assert "%" in _rewritten("o[y] = g[(y + 1) % h];", header)


def test_a_body_that_changes_the_bound_or_the_iterator_keeps_the_remainder() -> None:
    assert "%" in _rewritten("h = o[y]; o[y] = g[(y + 1) % h];")
    assert "%" in _rewritten("o[y] = g[(y + 1) % h]; y += 0;")


def test_inner_loops_see_the_outer_ranges() -> None:
    text = _rewritten("int ym = (y + h - 1) % h; for (int x = 0; x < w; x++) o[y * w + x] = g[ym * w + (x + 1) % w];")
    assert "%" not in text
    assert "intym=y==0?h-1:y-1;" in text and "x+1==w?0:x+1" in text
