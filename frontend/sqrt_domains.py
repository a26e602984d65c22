"""Square roots whose argument is non-negative once a read-only scalar is: ``1/sqrtf(d2 + soft2)``.

Under C's default ``-fmath-errno``, ``sqrtf(x)`` must set ``errno`` for ``x < 0``, so gcc keeps a
library call on that path and a loop around it is not vectorized. gcc 13 drops the call where
its value ranges prove ``x >= 0`` (``dx*dx + dy*dy + dz*dz + soft2`` with the literal ``soft2``
of the caller inlined into it), but the parallel code mdpoly generates receives ``soft2`` as a
parameter of an outlined function, where that proof is lost: an n-body force loop ran 5x slower
per thread than the program as written (one 8-wide vector loop against scalar code).

``nonnegative_needs`` finds the read-only scalars whose being ``>= 0`` proves every square root of
the scalar function non-negative, by the rules a compiler's value ranges follow: literals ``>= 0``,
squares ``a * a``, and sums, products and quotients of non-negative terms. The generated code
then has a copy, run when those scalars are ``>= 0``, that tells the compiler so inside its
parallel loops (``Plan.nonnegative``); otherwise the generic copy runs. A square root whose
argument needs no scalar is left alone (the compiler proves it itself); one that cannot be
proven at all leaves the whole function alone (its call stays in the loop).
"""

from __future__ import annotations

from pycparser import c_ast, c_generator

from mdpoly.ir.expr_text import parse_expr
from mdpoly.ir.mdh import MdhExpr

#: C's square roots (``math.h`` and gcc's builtins).
SQRT_FUNCTIONS = frozenset({"sqrt", "sqrtf", "sqrtl", "__builtin_sqrt", "__builtin_sqrtf", "__builtin_sqrtl"})

_FLOATING = frozenset({"float", "double", "long double"})


def nonnegative_needs(mdh: MdhExpr) -> tuple[str, ...]:
    """The read-only floating scalars of ``mdh`` that must be ``>= 0`` for every square root of
    its scalar function to have a provably non-negative argument; ``()`` when none is needed,
    when some square root cannot be proven so, or when the function takes none."""
    scalars = {b.name for b in mdh.buffers
               if b.kind == "scalar" and not b.written and _floating(b.elem_type)}
    needs: set[str] = set()
    for text in mdh.f.results:
        expr = parse_expr(text)
        if expr is None:
            return ()
        for arg in _sqrt_arguments(expr):
            need = _nonnegative(arg, scalars)
            if need is None:
                return ()
            needs |= need
    return tuple(sorted(needs))


def _floating(elem_type: str) -> bool:
    words = [w for w in elem_type.split() if w not in ("const", "volatile")]
    return " ".join(words) in _FLOATING


class _SqrtCalls(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.args: list[c_ast.Node] = []

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if isinstance(node.name, c_ast.ID) and node.name.name in SQRT_FUNCTIONS and node.args is not None \
                and len(node.args.exprs) == 1:
            self.args.append(node.args.exprs[0])
        self.generic_visit(node)


def _sqrt_arguments(expr: c_ast.Node) -> list[c_ast.Node]:
    calls = _SqrtCalls()
    calls.visit(expr)
    return calls.args


def _nonnegative(e: c_ast.Node, scalars: set[str]) -> set[str] | None:
    """The scalars that must be ``>= 0`` for ``e >= 0`` (or NaN) to follow, ``None``: not provable."""
    if isinstance(e, c_ast.Constant):
        try:
            value = float(e.value.rstrip("fFlL")) if e.type in ("float", "double") else int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
        return set() if value >= 0 else None
    if isinstance(e, c_ast.ID):
        return {e.name} if e.name in scalars else None
    if isinstance(e, c_ast.Cast):
        return _nonnegative(e.expr, scalars)
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "*", "/"):
        if e.op == "*" and _same(e.left, e.right):
            return set()   # a square
        left, right = _nonnegative(e.left, scalars), _nonnegative(e.right, scalars)
        return None if left is None or right is None else left | right
    if isinstance(e, c_ast.TernaryOp):
        yes, no = _nonnegative(e.iftrue, scalars), _nonnegative(e.iffalse, scalars)
        return None if yes is None or no is None else yes | no
    return None


def _same(a: c_ast.Node, b: c_ast.Node) -> bool:
    """``a`` and ``b`` are one value, apart from conversions to floating types (``(double) d * d``
    converts both operands)."""
    gen = c_generator.CGenerator()
    return bool(gen.visit(_value(a)) == gen.visit(_value(b)))


def _value(e: c_ast.Node) -> c_ast.Node:
    while isinstance(e, c_ast.Cast) and _floating(" ".join(e.to_type.type.type.names)
                                                  if isinstance(e.to_type.type, c_ast.TypeDecl)
                                                  and isinstance(e.to_type.type.type, c_ast.IdentifierType) else ""):
        e = e.expr
    return e
