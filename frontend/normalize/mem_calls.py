"""``memset``/``memcpy`` of whole elements as loops: nest copy -> the nest with element loops.

Real loop bodies clear or copy a row with the C library (``memset(hr, 0, 256 * sizeof(int))``,
``memcpy(dst + y*w, src + y*w, w * sizeof(float))``); the extractor refuses the call
(``side-effect-call``). When the byte count is a whole number of elements of the pointers' one
arithmetic element type (``e * sizeof(T)``, ``sizeof(T) * e``, ``e * sizeof *p``,
``e * sizeof(p[0])``), the call is the loop ``for (k = 0; k < e; k++) p[k] = 0;`` (all bytes
zero is the value 0 of every arithmetic type C compilers target, IEEE floating point included),
or ``d[k] = s[k]`` (``memcpy``'s regions may not overlap, so the copy order does not matter).
The loop's iterator is ``mdp_memN_k``. Anything else -- another byte value, a count that is no
such product, pointers of other or different types, a call whose value is used -- stays a call.
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import child_slots, put_child
from mdpoly.frontend.normalize.struct_types import MemberTypes

PREFIX = "mdp_mem"
_ARITHMETIC = frozenset({"char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
                         "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
                         "uint64_t"})


def _words(t: c_ast.Node | None, types: MemberTypes) -> tuple[str, ...] | None:
    """The type names of an arithmetic type node (typedefs resolved), or None."""
    t = types.unalias(t)
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        names = tuple(t.type.names)
        return names if all(n in _ARITHMETIC for n in names) else None
    if isinstance(t, c_ast.Typename):
        return _words(t.type, types)
    return None


class _Pointers:
    def __init__(self, types: MemberTypes, local_decls: dict[str, c_ast.Node]) -> None:
        self.types = types
        self.local_decls = local_decls

    def decl(self, name: str) -> c_ast.Node | None:
        return self.local_decls.get(name, self.types.symbols.decls.get(name))

    def element(self, p: c_ast.Node) -> tuple[c_ast.Node, c_ast.Node | None, tuple[str, ...]] | None:
        """``p`` (a pointer expression) as (array, first subscript or None, element type words):
        ``a`` -> (a, None), ``a + e`` / ``e + a`` -> (a, e), ``&a[e]`` -> (a, e)."""
        if isinstance(p, c_ast.Cast):
            return None
        if isinstance(p, c_ast.UnaryOp) and p.op == "&" and isinstance(p.expr, c_ast.ArrayRef) \
                and isinstance(p.expr.name, c_ast.ID):
            base, sub = p.expr.name, p.expr.subscript
        elif isinstance(p, c_ast.BinaryOp) and p.op == "+":
            if isinstance(p.left, c_ast.ID) and self._pointer(p.left.name):
                base, sub = p.left, p.right
            elif isinstance(p.right, c_ast.ID) and self._pointer(p.right.name):
                base, sub = p.right, p.left
            else:
                return None
        elif isinstance(p, c_ast.ID):
            base, sub = p, None
        else:
            return None
        t = self.types.unalias(self.decl(base.name))
        if not isinstance(t, c_ast.PtrDecl | c_ast.ArrayDecl):
            return None
        words = _words(t.type, self.types)
        return (base, sub, words) if words is not None else None

    def _pointer(self, name: str) -> bool:
        return isinstance(self.types.unalias(self.decl(name)), c_ast.PtrDecl | c_ast.ArrayDecl)

    def count(self, size: c_ast.Node, words: tuple[str, ...], ptrs: list[c_ast.Node]) -> c_ast.Node | None:
        """The element count ``e`` of a byte count ``e * sizeof(...)`` whose ``sizeof`` is one
        element of type ``words`` (or of one of ``ptrs``), else None."""
        if not (isinstance(size, c_ast.BinaryOp) and size.op == "*"):
            return None
        for one, other in ((size.right, size.left), (size.left, size.right)):
            if self._one_element(one, words, ptrs):
                return other
        return None

    def _one_element(self, n: c_ast.Node, words: tuple[str, ...], ptrs: list[c_ast.Node]) -> bool:
        if not (isinstance(n, c_ast.UnaryOp) and n.op == "sizeof"):
            return False
        e = n.expr
        if isinstance(e, c_ast.Typename):
            return _words(e.type, self.types) == words
        if isinstance(e, c_ast.UnaryOp) and e.op == "*":
            e = c_ast.ArrayRef(e.expr, c_ast.Constant("int", "0"))
        if isinstance(e, c_ast.ArrayRef):
            found = self.element(e.name)
            return found is not None and found[2] == words
        return False


def _at(base: c_ast.ID, sub: c_ast.Node | None, k: str) -> c_ast.ArrayRef:
    index: c_ast.Node = c_ast.ID(k)
    if sub is not None:
        index = c_ast.BinaryOp("+", copy.deepcopy(sub), index)
    return c_ast.ArrayRef(copy.deepcopy(base), index, coord=base.coord)


def _loop(k: str, count: c_ast.Node, body: c_ast.Node, coord: object) -> c_ast.For:
    decl = c_ast.Decl(k, [], [], [], [], c_ast.TypeDecl(k, [], None, c_ast.IdentifierType(["long"])),
                      c_ast.Constant("int", "0"), None)
    return c_ast.For(c_ast.DeclList([decl]), c_ast.BinaryOp("<", c_ast.ID(k), copy.deepcopy(count)),
                     c_ast.UnaryOp("p++", c_ast.ID(k)), body, coord=coord)


def expand_mem_calls(nest: c_ast.Node, types: MemberTypes, taken: set[str]) -> int:
    """Replace, in ``nest`` (a copy, edited in place), each statement ``memset``/``memcpy`` of the
    form above by its element loop; ``taken``: names the iterators must not shadow. Returns how many."""
    local_decls: dict[str, c_ast.Node] = {}
    stack = [nest]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.Decl) and n.name:
            local_decls[n.name] = n.type
        stack.extend(child for _name, child in n.children())
    ptrs = _Pointers(types, local_decls)
    count = 0

    def fresh() -> str:
        nonlocal count
        while True:
            count += 1
            name = f"{PREFIX}{count}_k"
            if name not in taken:
                return name

    def as_loop(call: c_ast.Node) -> c_ast.For | None:
        if not (isinstance(call, c_ast.FuncCall) and isinstance(call.name, c_ast.ID) and call.args is not None
                and call.name.name in ("memset", "memcpy", "__builtin_memset", "__builtin_memcpy")
                and len(call.args.exprs) == 3):
            return None
        dst, mid, size = call.args.exprs
        d = ptrs.element(dst)
        if d is None:
            return None
        if call.name.name.endswith("memset"):
            if not (isinstance(mid, c_ast.Constant) and mid.value in ("0", "0x0", "00")):
                return None
            e = ptrs.count(size, d[2], [dst])
            if e is None:
                return None
            k = fresh()
            return _loop(k, e, c_ast.Assignment("=", _at(d[0], d[1], k), c_ast.Constant("int", "0")), call.coord)
        s = ptrs.element(mid)
        if s is None or s[2] != d[2]:
            return None
        e = ptrs.count(size, d[2], [dst, mid])
        if e is None:
            return None
        k = fresh()
        return _loop(k, e, c_ast.Assignment("=", _at(d[0], d[1], k), _at(s[0], s[1], k)), call.coord)

    done = 0
    stack = [nest]
    while stack:
        node = stack.pop()
        for attr, j, child in child_slots(node):
            statement_slot = attr == "block_items" or (isinstance(node, c_ast.If | c_ast.For | c_ast.While)
                                                      and attr in ("iftrue", "iffalse", "stmt"))
            loop = as_loop(child) if statement_slot else None
            if loop is not None:
                put_child(node, attr, j, loop)
                done += 1
            else:
                stack.append(child)
    return done
