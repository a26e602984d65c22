"""``while`` loops that bump pointers as counted ``for`` loops.

Older C and DSP code walks buffers by moving the pointers themselves: ``while (x < xe) *y++ += a *
*x++;``, ``while (n-- > 0) *dst++ = *src++ * g;``. Such a loop is the counted loop

    for (long mdp_bumpN_k = 0; mdp_bumpN_k < n; mdp_bumpN_k++)
        y[mdp_bumpN_k] += a * x[mdp_bumpN_k];

(``n`` of an end ``x + n``, as written or through an end pointer declared so and never assigned,
or the counter of ``n-- > 0``; ``k < n`` runs no trip where ``n <= 0``, as the original)

when the program never reads the pointers (or the counter) after the loop, every trip runs its
whole body once (no ``break``, ``continue``, ``return`` or ``goto``),
each pointer it bumps appears exactly once in it, as ``*p++`` in a place that is evaluated in
every trip (an ``if``'s condition, not its branches, nor behind ``?:``, ``&&`` or ``||``), and nothing else changes the
pointers, the end pointer or the counter (the bound is then the same in every trip). The rewrite runs
once on the parsed file, like ``continues.structure_continues``; nests mdpoly keeps stay as
written in the output (the splicer copies their source text).
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import child_slots, put_child, replace_top_down
from mdpoly.frontend.normalize.pointer_loops import end_count, end_pointers

_CONDITIONAL = (c_ast.If, c_ast.TernaryOp, c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Switch)


def _walk(n: c_ast.Node) -> list[c_ast.Node]:
    out, stack = [], [n]
    while stack:
        x = stack.pop()
        out.append(x)
        stack.extend(child for _name, child in x.children())
    return out


def _bumps(body: c_ast.Node) -> dict[str, c_ast.UnaryOp] | None:
    """The pointers ``body`` bumps (name -> its ``*p++``), or None when the body is not of the form."""
    found: dict[str, c_ast.UnaryOp] = {}
    uses: dict[str, int] = {}

    def visit(n: c_ast.Node, guarded: bool) -> bool:
        if isinstance(n, c_ast.Break | c_ast.Continue | c_ast.Return | c_ast.Goto | c_ast.Label):
            return False
        if isinstance(n, c_ast.ID):
            uses[n.name] = uses.get(n.name, 0) + 1
        if isinstance(n, c_ast.UnaryOp) and n.op == "*" and isinstance(n.expr, c_ast.UnaryOp) \
                and n.expr.op == "p++" and isinstance(n.expr.expr, c_ast.ID):
            if guarded or n.expr.expr.name in found:
                return False
            found[n.expr.expr.name] = n
        if isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||"):
            return visit(n.left, guarded) and visit(n.right, True)
        if isinstance(n, c_ast.If | c_ast.TernaryOp):   # the condition runs in every trip, the branches not
            return visit(n.cond, guarded) and all(visit(b, True) for b in (n.iftrue, n.iffalse) if b is not None)
        inner = guarded or isinstance(n, _CONDITIONAL)
        return all(visit(child, inner) for _name, child in n.children())

    if not visit(body, False) or not found:
        return None
    if any(uses.get(p, 0) != 1 for p in found):   # each pointer only in its own *p++
        return None
    return found


def _assigned(body: c_ast.Node) -> set[str]:
    out: set[str] = set()
    for n in _walk(body):
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") else None
        if isinstance(target, c_ast.ID):
            out.add(target.name)
    return out


def _id(name: str) -> c_ast.ID:
    return c_ast.ID(name)


def _long_decl(name: str, init: c_ast.Node) -> c_ast.Decl:  # a counter of the new loop
    return c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(["long"])), init, None)


def _counted(loop: c_ast.While, n: int, ends: dict[str, c_ast.Node]) -> tuple[c_ast.For, set[str]] | None:
    """The counted loop ``loop`` stands for (over a copy of its body) and the names it leaves
    changed in the original, or None."""
    if loop.stmt is None:
        return None
    body = copy.deepcopy(loop.stmt)
    bumps = _bumps(body)
    if bumps is None:
        return None
    cond = loop.cond
    k_name = f"mdp_bump{n}_k"
    assigned = _assigned(body)
    changed: set[str] = set(bumps)
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "!=") and isinstance(cond.left, c_ast.ID) \
            and cond.left.name in bumps and isinstance(cond.right, c_ast.ID | c_ast.BinaryOp):
        p = cond.left.name
        if not all(isinstance(x, c_ast.ID | c_ast.Constant | c_ast.BinaryOp) and
                   (not isinstance(x, c_ast.BinaryOp) or x.op in ("+", "-")) for x in _walk(cond.right)):
            return None   # an end read from memory the body may write
        end_names = {x.name for x in _walk(cond.right) if isinstance(x, c_ast.ID)}
        if end_names & (assigned | set(bumps)) - {p} or p in end_names:
            return None
        # the trips: n of an end 'p + n' (as written, or an end pointer declared so)
        found = end_count(c_ast.ID(p), cond.right, ends)
        if found is None or {x.name for x in _walk(found) if isinstance(x, c_ast.ID)} & (assigned | set(bumps)):
            return None
        count: c_ast.Node = copy.deepcopy(found)   # k < n runs no trip for n <= 0, as the original
    elif isinstance(cond, c_ast.BinaryOp) and cond.op == ">" and isinstance(cond.left, c_ast.UnaryOp) \
            and cond.left.op == "p--" and isinstance(cond.left.expr, c_ast.ID) \
            and isinstance(cond.right, c_ast.Constant) and cond.right.value == "0":
        counter = cond.left.expr.name
        if counter in assigned or counter in bumps:
            return None
        count = _id(counter)   # k < n runs no trip for n <= 0, as n-- > 0 does
        changed.add(counter)
    else:
        return None
    _replace_bumps(body, bumps, k_name)   # *p++ -> p[k]
    return c_ast.For(c_ast.DeclList([_long_decl(k_name, c_ast.Constant("int", "0"))]),
                     c_ast.BinaryOp("<", _id(k_name), count), c_ast.UnaryOp("p++", _id(k_name)), body,
                     coord=loop.coord), changed


def _replace_bumps(body: c_ast.Node, bumps: dict[str, c_ast.UnaryOp], k: str) -> None:
    """Each ``*p++`` of ``bumps`` in ``body`` (in place) as ``p[k]``."""
    marked = {id(u): p for p, u in bumps.items()}
    replace_top_down(body, lambda n: c_ast.ArrayRef(_id(marked[id(n)]), _id(k), coord=n.coord)
                     if id(n) in marked else None)


def count_bumped_loops(ast: c_ast.FileAST) -> int:
    """Rewrite, in place, every ``while`` loop of the form above in ``ast``; returns how many."""
    count = 0
    for fd in ast.ext:
        if isinstance(fd, c_ast.FuncDef):
            count += _in_function(fd.body, count)
    return count


def _in_function(func_body: c_ast.Node, done: int) -> int:
    ends = end_pointers(func_body)
    count = 0
    stack: list[c_ast.Node] = [func_body]
    while stack:
        node = stack.pop()
        for attr, j, child in child_slots(node):
            if isinstance(child, c_ast.While):
                found = _counted(child, done + count + 1, ends)
                if found is not None:
                    new, changed = found
                    put_child(node, attr, j, new)
                    if live_after(func_body, new, changed):   # their exit values are read: it stays
                        put_child(node, attr, j, child)
                    else:
                        count += 1
                        child = new
            stack.append(child)
    return count
