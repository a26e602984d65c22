"""``assert(e)`` as the C library expands it -> ``if (e) ; else __assert_fail(...);``.

Real code checks its invariants in its loops (``assert(j >= 0 && j < n)``). The C library's
``<assert.h>`` expands the macro into an expression statement that the model cannot read:

- glibc, C: ``((void) sizeof ((e) ? 1 : 0), __extension__ ({ if (e) ; else __assert_fail (...); }))``
- glibc, older or ``-std=c89``: ``((e) ? (void) (0) : __assert_fail (...))``
- musl: ``((void)((e) || (__assert_fail(...), 0)))``

Each evaluates ``e`` once and, when it is false, calls a function that does not return. The
statement ``if (e) ; else __assert_fail(...);`` does exactly that, so the rewrite runs once on the
parsed file (like ``do_once``): every later stage sees the ``if``, which the model reads as a
check (``mdpoly.frontend.scop_statements``: a loop around its body as written may run it in any
order where ``e`` reads nothing the nest writes). ``__PRETTY_FUNCTION__``/``__func__`` among the
call's arguments become the enclosing function's name as a string literal, which is what they
are there, so that code moved into an outlined function prints the same message.
"""

from __future__ import annotations

from pycparser import c_ast

#: Functions that end the program without returning: an assertion's failure path.
NO_RETURN = frozenset({"__assert_fail", "__assert_rtn", "__assert", "_assert", "abort", "__builtin_trap",
                       "__builtin_unreachable"})

_FUNCTION_NAMES = frozenset({"__PRETTY_FUNCTION__", "__func__", "__FUNCTION__"})


def failing_call(node: c_ast.Node | None) -> c_ast.FuncCall | None:
    """``node`` when it is a call of a function in ``NO_RETURN``, else None."""
    if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and node.name.name in NO_RETURN:
        return node
    return None


def check_of(node: c_ast.If) -> c_ast.FuncCall | None:
    """The failing call of a check ``if (e) ; else fail(...);`` or ``if (e) fail(...);``, else None."""
    if node.iffalse is not None and isinstance(node.iftrue, c_ast.EmptyStatement):
        return failing_call(node.iffalse)
    if node.iffalse is None:
        return failing_call(node.iftrue)
    return None


def _is_void_zero(node: c_ast.Node) -> bool:
    return (isinstance(node, c_ast.Cast) and isinstance(node.expr, c_ast.Constant)
            and node.expr.value == "0" and "void" in _type_words(node.to_type))


def _type_words(node: c_ast.Node) -> list[str]:
    while not isinstance(node, c_ast.IdentifierType):
        node = node.type
        if node is None:
            return []
    return node.names


def _expanded_assert(stmt: c_ast.Node) -> c_ast.If | None:
    """The check an expanded ``assert`` statement performs, or None for any other statement."""
    if (isinstance(stmt, c_ast.ExprList) and len(stmt.exprs) == 2 and isinstance(stmt.exprs[0], c_ast.Cast)
            and isinstance(stmt.exprs[1], c_ast.Compound) and len(stmt.exprs[1].block_items or []) == 1):
        inner = stmt.exprs[1].block_items[0]
        if isinstance(inner, c_ast.If) and inner.iffalse is not None and check_of(inner) is not None:
            return inner
        return None
    if isinstance(stmt, c_ast.TernaryOp) and _is_void_zero(stmt.iftrue) and failing_call(stmt.iffalse):
        return c_ast.If(stmt.cond, c_ast.EmptyStatement(coord=stmt.coord), stmt.iffalse, coord=stmt.coord)
    if isinstance(stmt, c_ast.Cast) and "void" in _type_words(stmt.to_type):
        e = stmt.expr
        if (isinstance(e, c_ast.BinaryOp) and e.op == "||" and isinstance(e.right, c_ast.ExprList)
                and len(e.right.exprs) == 2 and failing_call(e.right.exprs[0]) is not None
                and isinstance(e.right.exprs[1], c_ast.Constant)):
            return c_ast.If(e.left, c_ast.EmptyStatement(coord=stmt.coord), e.right.exprs[0], coord=stmt.coord)
    return None


def _named(call: c_ast.FuncCall, function: str) -> None:
    """``call``'s function-name arguments as the string literal ``"function"``."""
    if call.args is None:
        return
    call.args.exprs = [c_ast.Constant("string", f'"{function}"', coord=a.coord)
                       if isinstance(a, c_ast.ID) and a.name in _FUNCTION_NAMES else a for a in call.args.exprs]


#: The attributes of statement nodes that hold statements (not expressions).
_STATEMENT_SLOTS = {c_ast.Compound: ("block_items",), c_ast.For: ("stmt",), c_ast.While: ("stmt",),
                    c_ast.DoWhile: ("stmt",), c_ast.If: ("iftrue", "iffalse"), c_ast.Label: ("stmt",),
                    c_ast.Case: ("stmts",), c_ast.Default: ("stmts",), c_ast.Switch: ("stmt",)}


def structure_assertions(ast: c_ast.FileAST) -> int:
    """Replace, in place, every expanded ``assert`` statement inside a function body of ``ast`` by
    its check; returns how many."""
    count = 0
    for ext in ast.ext:
        if not isinstance(ext, c_ast.FuncDef):
            continue
        stack: list[c_ast.Node] = [ext.body]
        while stack:
            node = stack.pop()
            for attr in _STATEMENT_SLOTS.get(type(node), ()):
                value = getattr(node, attr)
                items = value if isinstance(value, list) else [value]
                for k, stmt in enumerate(items):
                    if stmt is None:
                        continue
                    check = _expanded_assert(stmt)
                    if check is not None:
                        count += 1
                        call = check_of(check)
                        if call is not None:
                            _named(call, ext.decl.name)
                        if isinstance(value, list):
                            value[k] = check
                        else:
                            setattr(node, attr, check)
                        stmt = check
                    stack.append(stmt)
    return count
