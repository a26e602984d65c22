"""``mdpoly.frontend.guarded_reads`` (select conditions -> iterator bounds, the narrowed box),
``mdpoly.frontend.bound_products`` (which casts keep a product exact) and ``mdpoly.ir.fields``."""

from __future__ import annotations

from pycparser import c_ast, c_parser

from mdpoly.frontend.bound_products import exact_signed
from mdpoly.frontend.box import BoxBounds
from mdpoly.frontend.guarded_reads import bounds_of, narrowed
from mdpoly.ir.c_types import CType, parse_type
from mdpoly.ir.fields import view_member, view_name
from mdpoly.ir.mdh import Affine
from mdpoly.ir.scop import Binary, Cast, Var


def _cond(text: str) -> c_ast.Node:
    fn = c_parser.CParser().parse(f"int f(void) {{ return {text}; }}").ext[0]
    return fn.body.block_items[0].expr


def _affine(n: c_ast.Node) -> Affine | None:
    if isinstance(n, c_ast.ID):
        return Affine.of({n.name: 1})
    if isinstance(n, c_ast.Constant):
        return Affine.of(constant=int(n.value))
    if isinstance(n, c_ast.BinaryOp) and n.op in ("+", "-"):
        a, b = _affine(n.left), _affine(n.right)
        if a is None or b is None:
            return None
        k = 1 if n.op == "+" else -1
        d = dict(a.terms)
        for name, c in b.terms:
            d[name] = d.get(name, 0) + k * c
        return Affine.of(d, a.constant + k * b.constant)
    return None


def _box(text: str, taken: bool) -> tuple[str, str]:
    box = {"x": BoxBounds(Affine(), Affine.of({"w": 1})), "y": BoxBounds(Affine(), Affine.of({"h": 1}))}
    got = narrowed(box, bounds_of(_cond(text), taken, {"x", "y"}, _affine))
    return got["x"].lower.to_c(), got["x"].upper.to_c()


def test_select_conditions_narrow_the_iterator_they_bound() -> None:
    assert _box("x == 0", False) == ("1", "w")          # x == 0 ? in[c] : in[c - 1]
    assert _box("x == w - 1", False) == ("0", "w - 1")  # x == w - 1 ? in[c] : in[c + 1]
    assert _box("x + 1 < w", True) == ("0", "w - 1")
    assert _box("!(x > 0)", False) == ("1", "w")
    assert _box("x > 0 && y > 0", True) == ("1", "w")


def test_conditions_that_say_nothing_sure_leave_the_box() -> None:
    assert _box("x == 3", False) == ("0", "w")       # a hole inside the row: no interval
    assert _box("x > 0 || y > 0", True) == ("0", "w")  # either may hold
    assert _box("2 * x < w", True) == ("0", "w")     # not a unit coefficient
    assert _box("x < k * w", True) == ("0", "w")     # a side that is not affine


def test_widening_casts_keep_a_product_exact_narrowing_and_unsigned_do_not() -> None:
    types = {"w": parse_type("int"), "h": parse_type("int"), "big": parse_type("long"), "u": parse_type("unsigned")}

    def name_type(n: str) -> CType | None:
        return types.get(n)
    assert exact_signed(Binary("*", Cast("long", Var("w")), Var("h")), name_type)
    assert exact_signed(Binary("*", Cast("long", Var("u")), Var("h")), name_type)  # unsigned -> wider signed
    assert not exact_signed(Binary("*", Cast("int", Var("big")), Var("h")), name_type)
    assert not exact_signed(Binary("*", Cast("unsigned long", Var("w")), Var("h")), name_type)
    assert not exact_signed(Binary("*", Cast("int", Var("u")), Var("h")), name_type)


def test_view_names_carry_their_member() -> None:
    assert view_member(view_name("parts", "vx")) == "vx"
    assert view_member(view_name("s_parts", "x_1")) == "x_1"
    assert view_member(view_name("p", "pos.x")) == "pos.x"   # a nested member's path
    assert view_member(view_name("s1_x", "vel.z_2")) == "vel.z_2"
    assert view_member("mdp_s3x9_pos_x_p") is None
    assert view_member("mdp_m_s_x") is None and view_member("mdp_s9_x_y") is None
