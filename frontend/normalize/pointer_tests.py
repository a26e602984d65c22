"""Null tests of pointers the nest does not change: nest copy -> the nest over hoisted flags.

Optional operands are pointers that may be null: ``float val = (bias != NULL) ? bias[o] : 0.0f;``
in a matmul, ``if (mask && !mask[i]) continue;``. The model has no value for a pointer, but the
test has one value during the whole nest when the nest never assigns the pointer: it becomes an
``int`` flag ``mdp_nz_<p>`` that the call site computes (``(p) != 0``), like a hoisted member.
Rewritten: ``p != NULL``, ``NULL != p``, ``p == NULL``, ``p != 0``, ``!p``, and ``p`` itself as a
condition (of ``?:``, ``if``, ``while``, or an operand of ``&&``, ``||``, ``!``).

Only pointers the nest reads through: a store under the test would be modelled as an update
that also runs where the test fails (``out[i] = c ? v : out[i]``). The reads of ``p`` stay under
the user's test: the generated code keeps a select as written (its
operands evaluated only where the condition picks them), and ``mdpoly.frontend.scop`` marks ``p``
``lazy``, so no stage reads it ahead of its evaluation (packed panels, GPU local copies), and a
null ``p`` is never dereferenced where the original does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import child_slots, put_child, written_roots
from mdpoly.frontend.symbols import SymbolTable
from mdpoly.ir.mdh import NULL_TEST_PREFIX

PREFIX = NULL_TEST_PREFIX


@dataclass(frozen=True, slots=True)
class PointerTest:
    """``name`` stands for ``text`` (``(bias) != 0``), an ``int`` the call site computes."""

    name: str
    text: str
    decl: c_ast.Decl


def _is_null(node: c_ast.Node) -> bool:
    """``0``, ``NULL`` as ``((void *) 0)``."""
    while isinstance(node, c_ast.Cast):
        node = node.expr
    return isinstance(node, c_ast.Constant) and node.type == "int" and node.value.rstrip("uUlL") in ("0", "00", "0x0")


def _int_decl(name: str) -> c_ast.Decl:
    return c_ast.Decl(name, ["const"], [], [], [], c_ast.TypeDecl(name, ["const"], None, c_ast.IdentifierType(["int"])),
                      None, None)


class _Tests:
    def __init__(self, pointers: set[str], values: dict[str, str]) -> None:
        self.pointers = pointers
        self.values = values
        self.found: dict[str, PointerTest] = {}

    def flag(self, p: str, negated: bool, coord: object) -> c_ast.Node:
        name = PREFIX + p
        if name not in self.found:
            self.found[name] = PointerTest(name, f"({self.values.get(p, p)}) != 0", _int_decl(name))
        flag: c_ast.Node = c_ast.ID(name, coord=coord)
        return c_ast.UnaryOp("!", flag, coord=coord) if negated else flag

    def pointer(self, node: c_ast.Node) -> str | None:
        return node.name if isinstance(node, c_ast.ID) and node.name in self.pointers else None

    def test(self, node: c_ast.Node) -> c_ast.Node | None:
        """The flag expression ``node`` is as a comparison of a pointer with null, else None."""
        if isinstance(node, c_ast.BinaryOp) and node.op in ("!=", "=="):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                p = self.pointer(a)
                if p is not None and _is_null(b):
                    return self.flag(p, node.op == "==", node.coord)
        if isinstance(node, c_ast.UnaryOp) and node.op == "!":
            p = self.pointer(node.expr)
            if p is not None:
                return self.flag(p, True, node.coord)
        return None

    def condition(self, node: c_ast.Node) -> c_ast.Node | None:
        """``node`` in a condition position: also a bare pointer."""
        p = self.pointer(node)
        return self.flag(p, False, node.coord) if p is not None else self.test(node)

    def walk(self, node: c_ast.Node) -> None:
        for attr, index, child in child_slots(node):
            in_condition = ((isinstance(node, c_ast.TernaryOp | c_ast.If | c_ast.While | c_ast.DoWhile) and attr == "cond")
                            or (isinstance(node, c_ast.For) and attr == "cond")
                            or (isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"))
                            or (isinstance(node, c_ast.UnaryOp) and node.op == "!"))
            new = self.condition(child) if in_condition else self.test(child)
            if new is not None:
                put_child(node, attr, index, new)
            else:
                self.walk(child)


def _stored_through(nest: c_ast.Node) -> set[str]:
    """Pointers the nest stores through (``out[i] = v``, ``*p += v``, ``q[i]++``) or takes an
    element's address of: a test of one stays as written -- a store under a flag is modelled as
    ``out[i] = c ? v : out[i]``, whose generated code would store through a null ``out``."""
    return {root.name for _stmt, root in written_roots(nest) if isinstance(root, c_ast.ID)}


def hoist_pointer_tests(nest: c_ast.Node, symbols: SymbolTable, assigned: set[str],
                        values: dict[str, str]) -> list[PointerTest]:
    """Replace, in ``nest`` (a copy, edited in place), every null test of a pointer the nest does
    not assign by its flag; ``values``: hoisted names -> the expressions they stand for."""
    stored = _stored_through(nest)
    pointers = {name for name, t in symbols.decls.items()
                if isinstance(t, c_ast.PtrDecl) and name not in assigned and name not in stored}
    tests = _Tests(pointers, values)
    tests.walk(nest)
    return list(tests.found.values())
