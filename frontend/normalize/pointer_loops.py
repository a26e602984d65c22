"""Loops over pointers as loops over integers: ``for (T *p = B; p < B + n; p++)`` -> ``for (k)``.

C code walks arrays with a pointer (``for (float *p = a; p < a + n; p++) *p *= s;``,
``for (const px *q = row; q != row + w; ++q)``, an end pointer ``end = a + n`` declared before
the loop); the model needs integer iterators. Such a loop is the loop
``for (long k = 0; k < n; k++) { T *p = B + k; body }`` (``B + c*k`` with a constant step ``c``,
``k < (n + c - 1) / c``), whose local pointer ``local_pointers`` then resolves (``*p`` is
``B[k]``, ``p[1]`` is ``B[k + 1]``). Exact when ``p`` is declared in the loop's header (no exit
value to keep), the body assigns neither it nor a name of its start or bound, the bound is ``B + n``, ``B + n - m`` or ``&B[n]``
(as written, or through an end pointer declared so and never assigned) compared by ``<``,
``!=`` (step 1) or ``<=``, and the step is ``p++``, ``++p`` or ``p += c`` for a positive
constant ``c``. ``p - B`` in the body is the iteration's offset (``dst[q - src]``). The new
iterator is ``mdp_ptrN_p`` (the remark names it ``p``).
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import assigned_names, replace_top_down, walk_nodes
from mdpoly.frontend.symbols import c_text

PREFIX = "mdp_ptr"


def _step(next_: c_ast.Node | None, p: str) -> int | None:
    if isinstance(next_, c_ast.UnaryOp) and next_.op in ("p++", "++") and isinstance(next_.expr, c_ast.ID) \
            and next_.expr.name == p:
        return 1
    if isinstance(next_, c_ast.Assignment) and isinstance(next_.lvalue, c_ast.ID) and next_.lvalue.name == p:
        value = next_.rvalue
        if next_.op == "=" and isinstance(value, c_ast.BinaryOp) and value.op == "+" \
                and isinstance(value.left, c_ast.ID) and value.left.name == p:
            value = value.right
        elif next_.op != "+=":
            return None
        if isinstance(value, c_ast.Constant) and value.type == "int":
            try:
                c = int(value.value.rstrip("uUlL"), 0)
            except ValueError:
                return None
            return c if c > 0 else None
    return None


def end_count(base: c_ast.Node, end: c_ast.Node, ends: dict[str, c_ast.Node]) -> c_ast.Node | None:
    """``n`` when ``end`` is ``base + n`` (or ``n + base``, or an end pointer declared so)."""
    if isinstance(end, c_ast.ID) and end.name in ends:
        end = ends[end.name]
    text = c_text(base)
    if isinstance(end, c_ast.BinaryOp) and end.op == "+":
        if c_text(end.left) == text:
            return end.right
        if c_text(end.right) == text:
            return end.left
    if isinstance(end, c_ast.BinaryOp) and end.op == "-":   # B + n - 1
        inner = end_count(base, end.left, {})
        return None if inner is None else c_ast.BinaryOp("-", inner, end.right)
    if isinstance(end, c_ast.UnaryOp) and end.op == "&" and isinstance(end.expr, c_ast.ArrayRef) \
            and c_text(end.expr.name) == text:   # &B[n]
        return end.expr.subscript
    return None


def _differences(body: c_ast.Node, p: str, base: c_ast.Node, offset: c_ast.Node) -> None:
    """``p - B`` in ``body`` (in place) as the iteration's offset (``k``, or ``c * k``)."""
    text = c_text(base)

    def swap(n: c_ast.Node) -> c_ast.Node | None:
        if isinstance(n, c_ast.BinaryOp) and n.op == "-" and isinstance(n.left, c_ast.ID) and n.left.name == p \
                and c_text(n.right) == text:
            return copy.deepcopy(offset)
        return None

    replace_top_down(body, swap)


def end_pointers(func: c_ast.Node) -> dict[str, c_ast.Node]:
    """Pointers the function declares with an initialiser and never assigns: name -> initialiser."""
    assigned = assigned_names(func)
    out: dict[str, c_ast.Node] = {}
    seen: set[str] = set()
    for d in walk_nodes(func):
        if isinstance(d, c_ast.Decl) and d.name:
            if d.name in seen:   # declared twice: which one a use means is not looked into
                out.pop(d.name, None)
                continue
            seen.add(d.name)
            if isinstance(d.type, c_ast.PtrDecl) and d.init is not None and d.name not in assigned:
                out[d.name] = d.init
    return out


def _as_integer_loop(loop: c_ast.For, ends: dict[str, c_ast.Node], fresh: str) -> bool:
    init = loop.init
    if not (isinstance(init, c_ast.DeclList) and len(init.decls) == 1):
        return False
    decl = init.decls[0]
    if not (isinstance(decl, c_ast.Decl) and decl.name and isinstance(decl.type, c_ast.PtrDecl) and decl.init is not None):
        return False
    p = decl.name
    step = _step(loop.next, p)
    cond = loop.cond
    if step is None or not isinstance(cond, c_ast.BinaryOp) or not isinstance(cond.left, c_ast.ID) \
            or cond.left.name != p or cond.op not in ("<", "!=", "<=") or (cond.op == "!=" and step != 1):
        return False
    body_assigns = assigned_names(loop.stmt)
    if p in body_assigns or p in ends:
        return False
    n = end_count(decl.init, cond.right, ends)
    if n is None or any(isinstance(m, c_ast.ID) and m.name == p for m in walk_nodes(n)):
        return False
    # the start is evaluated once and the bound every trip: both must mean the same every trip
    if body_assigns & ({m.name for m in walk_nodes(decl.init) if isinstance(m, c_ast.ID)}
                       | {m.name for m in walk_nodes(n) if isinstance(m, c_ast.ID)}):
        return False
    count: c_ast.Node = copy.deepcopy(n)
    if cond.op == "<=":
        count = c_ast.BinaryOp("+", count, c_ast.Constant("int", "1"))
    elif step > 1:
        count = c_ast.BinaryOp("/", c_ast.BinaryOp("+", count, c_ast.Constant("int", str(step - 1))),
                               c_ast.Constant("int", str(step)))
    k = c_ast.ID(fresh)
    offset: c_ast.Node = k if step == 1 else c_ast.BinaryOp("*", c_ast.Constant("int", str(step)), k)
    here = c_ast.Decl(p, list(decl.quals or []), [], [], [], copy.deepcopy(decl.type),
                      c_ast.BinaryOp("+", copy.deepcopy(decl.init), offset), None, coord=decl.coord)
    it = c_ast.Decl(fresh, [], [], [], [], c_ast.TypeDecl(fresh, [], None, c_ast.IdentifierType(["long"])),
                    c_ast.Constant("int", "0"), None, coord=decl.coord)
    loop.init = c_ast.DeclList([it], coord=init.coord)
    loop.cond = c_ast.BinaryOp("<", c_ast.ID(fresh), count, coord=cond.coord)
    loop.next = c_ast.UnaryOp("p++", c_ast.ID(fresh), coord=loop.next.coord if loop.next else None)
    _differences(loop.stmt, p, decl.init, c_ast.BinaryOp("*", c_ast.Constant("int", str(step)), k) if step > 1 else k)
    body = loop.stmt.block_items if isinstance(loop.stmt, c_ast.Compound) else [loop.stmt]
    loop.stmt = c_ast.Compound([here, *(body or [])], coord=loop.stmt.coord if loop.stmt else None)
    return True


def integer_iterators(nest: c_ast.For, func: c_ast.Node, taken: set[str]) -> int:
    """Rewrite, in ``nest`` (a copy, edited in place; its own header too), every loop over a
    pointer of the form above; ``func``: the enclosing function (its end pointers); ``taken``:
    names the iterators must not shadow. Returns how many."""
    loops = [n for n in walk_nodes(nest) if isinstance(n, c_ast.For)]
    if not any(isinstance(f.init, c_ast.DeclList) and any(isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.PtrDecl)
                                                          for d in f.init.decls) for f in loops):
        return 0
    ends = end_pointers(func)
    count = 0
    for loop in loops:
        p = loop.init.decls[0].name if isinstance(loop.init, c_ast.DeclList) and loop.init.decls else None
        k = 1
        while f"{PREFIX}{k}_{p}" in taken:
            k += 1
        if p and _as_integer_loop(loop, ends, f"{PREFIX}{k}_{p}"):
            taken.add(f"{PREFIX}{k}_{p}")
            count += 1
    return count
