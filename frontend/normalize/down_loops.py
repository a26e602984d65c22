"""Loops that count down in their condition: nest copy -> the nest with ``for (i = n; i > 0; i--)``.

Code over unsigned sizes counts down with the decrement in the test, the one way to reach index
0 without a comparison that is always true (``i >= 0`` of a ``size_t``)::

    for (size_t i = n; i-- > 0;)
        y[i] = y[i + 1] + x[i];

Each test compares the iterator's value before the decrement, and the body sees it after. That
is the loop ``for (size_t i = n; i > 0; i--)`` whose body reads ``(i - 1)`` wherever it read
``i``: the state before each test is the same in both, so the tests, and the values the body
reads, are the same. The conditions recognised are ``i-- > B`` (``B < i--``), ``i-- != B``
(``B != i--``) and ``i--`` alone (``i-- != 0``), in a header with no step; ``i-- >= B`` is left
alone (with an unsigned ``i`` and ``B == 0`` it never ends). ``i - 1`` does not wrap: the test
just passed says ``i > B`` (or ``i != B``, ``i != 0``), so ``i`` is above its type's minimum
where the decrement made no wrap, and where the original decrement wrapped (an unsigned ``i``
equal to 0 tested against a ``B`` above it: ``i-- != B`` from below) the rewritten test is the
same ``i != B``, which the extractor judges as it judges any such loop.

Only the exit value differs: the original leaves ``i`` one below where the rewritten loop
leaves it (``SIZE_MAX`` for an unsigned ``i`` that reached 0). So the loop is rewritten when
``i`` is declared in its header or never read after it (``liveness.live_after``); otherwise the
nest is refused, located at the loop. The body must not assign ``i``, take its address or
declare another ``i``, and the bound must not read ``i``; such loops stay as written (the
extractor then names their header).
"""

from __future__ import annotations

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, loc_of, names_in, replace_top_down
from mdpoly.frontend.symbols import c_text

_FLIPPED = {">": "<", "!=": "!="}


def _decremented(node: c_ast.Node | None) -> str | None:
    """``i`` of ``i--`` (the postfix decrement of a name), else None."""
    if isinstance(node, c_ast.UnaryOp) and node.op == "p--" and isinstance(node.expr, c_ast.ID):
        return str(node.expr.name)
    return None


def _post_decrement_test(cond: c_ast.Node | None) -> tuple[str, str, c_ast.Node] | None:
    """``(i, op, B)`` of a condition ``i-- op B`` with ``op`` ``>`` or ``!=`` (either side, and
    ``i--`` alone as ``i-- != 0``), else None."""
    it = _decremented(cond)
    if it is not None:
        assert cond is not None
        return it, "!=", c_ast.Constant("int", "0", coord=cond.coord)
    if not isinstance(cond, c_ast.BinaryOp):
        return None
    it = _decremented(cond.left)
    if it is not None and cond.op in _FLIPPED:
        return it, cond.op, cond.right
    it = _decremented(cond.right)
    if it is not None and cond.op in _FLIPPED.values():
        return it, {"<": ">", "!=": "!="}[cond.op], cond.left
    return None


def counts_down_in_condition(loop: c_ast.Node) -> bool:
    """Whether ``loop`` is a ``for`` whose condition is one this pass rewrites (``i-- > 0``)."""
    return isinstance(loop, c_ast.For) and loop.next is None and _post_decrement_test(loop.cond) is not None


def _header_declares(loop: c_ast.For, it: str) -> bool:
    return isinstance(loop.init, c_ast.DeclList) and any(d.name == it for d in loop.init.decls)


def _sets_iterator(loop: c_ast.For, it: str) -> bool:
    """Whether the header's initialisation gives ``it`` its first value (``T i = n`` or ``i = n``)."""
    init = loop.init
    if isinstance(init, c_ast.DeclList):
        return any(d.name == it and d.init is not None for d in init.decls)
    return isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID) \
        and init.lvalue.name == it


def _rewrite(loop: c_ast.For, it: str, op: str, bound: c_ast.Node) -> None:
    coord = loop.cond.coord if loop.cond is not None else loop.coord
    loop.cond = c_ast.BinaryOp(op, c_ast.ID(it, coord=coord), bound, coord=coord)
    loop.next = c_ast.UnaryOp("p--", c_ast.ID(it, coord=coord), coord=coord)

    def before(n: c_ast.Node) -> c_ast.Node | None:
        if isinstance(n, c_ast.ID) and n.name == it:
            return c_ast.BinaryOp("-", c_ast.ID(it, coord=n.coord), c_ast.Constant("int", "1", coord=n.coord),
                                  coord=n.coord)
        if isinstance(n, c_ast.StructRef):   # the member of ``s.i`` is no name
            new = before(n.name)
            if new is not None:
                n.name = new
            else:
                replace_top_down(n.name, before)
            return n
        return None

    holder = c_ast.Compound([loop.stmt])
    replace_top_down(holder, before)
    loop.stmt = holder.block_items[0]


def count_down_in_headers(nest: c_ast.For, func: c_ast.FuncDef, fallback: SourceLoc) -> int:
    """Rewrite, in ``nest`` (a copy inside ``func``'s copy, edited in place; its own header too),
    each loop that counts down in its condition (see the module's text). Returns how many.

    :raises UnsupportedInput: such a loop whose iterator, declared before it, is read after it
        (its exit value would change), located at the loop.
    """
    done = 0
    stack: list[c_ast.Node] = [nest]
    loops: list[c_ast.For] = []
    while stack:
        n = stack.pop()
        if counts_down_in_condition(n):
            assert isinstance(n, c_ast.For)
            loops.append(n)
        stack.extend(child for _name, child in n.children())
    for loop in loops:
        found = _post_decrement_test(loop.cond)
        assert found is not None
        it, op, bound = found
        body = loop.stmt
        if not _sets_iterator(loop, it) or it in names_in(bound) or it in assigned_names(body) \
                or it in declared_names(body):
            continue
        if not _header_declares(loop, it) and live_after(func.body, loop, {it}):
            raise UnsupportedInput(f"loop '{it}' counts down in its condition ('{c_text(loop.cond)}') and '{it}' is "
                                   "read after it; its exit value, one below where the loop ends, is not modelled",
                                   loc_of(loop, fallback), "unsupported-statement")
        _rewrite(loop, it, op, bound)
        done += 1
    return done
