"""Array-of-structs fields: ``A[e].f`` in a nest copy -> an access ``V[e]`` to a view ``V`` of its own.

``opt[i].call``, ``parts[i].x += ...`` are strided accesses: element ``e``'s member ``f`` lies at
byte ``e * sizeof(T) + offsetof(T, f)`` of ``A``. For dependences each (array, member) pair is
an array of its own, indexed by ``e``, whose elements have the member's type: two members of
one struct never overlap (different offsets of the same element), and ``A[e].f`` overlaps only
``A[e'].f`` with ``e' == e``. So the rewrite gives every pair a view name
(``mdpoly.ir.fields.view_name``: ``mdp_s4_call_opt``) declared in the nest's symbols as a
pointer to the member's type, which the extractor then models as any ``T *`` parameter.

The generated function takes each view as a pointer to the struct (``Option *mdp_s4_call_opt``,
``FieldView.c_decl``) that the call site sets to the user's array (``FieldView.base``), and every
access to it prints as ``mdp_s4_call_opt[e].call`` (``backends.c_emit``). The run-time no-overlap
checks take a view's range in whole structs of ``A`` (``(opt) + lo`` .. ``(opt) + hi + 1``); views
of the same array are not checked against each other (``mdpoly.frontend.alias``): they are the
same memory, and the dependence analysis already knows their members apart.

Only the plain forms are rewritten (``A[e].f``, ``(A + e)->f``, ``G[i][j].f`` with rows of a
known size, ``P (*G)[m]``, and member paths into nested structs, ``A[e].pos.x``): a member of
arithmetic type, an array that is
a parameter or variable of the function (or an invariant member, ``s->parts[i].x``) which the
nest does not assign. Anything else (``A[i].pos`` as a whole, ``&A[i].f``,
a store of a whole struct ``A[i] = s``) stays refused, located, by the callers.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from pycparser import c_ast, c_generator

from mdpoly.frontend.normalize.struct_types import MemberTypes
from mdpoly.ir.fields import struct_rows_type, view_member, view_name
from mdpoly.ir.scop import Variable


@dataclass(frozen=True, slots=True)
class FieldView:
    """The view ``name`` of member ``member`` of the array the C expression ``base`` denotes."""

    name: str
    base: str
    member: str
    #: the view's declaration in the nest's symbols: a pointer to the member's type
    decl: c_ast.Decl
    #: the generated function's parameter: a pointer to the struct (``Option *name``)
    c_decl: str


def _root(n: c_ast.Node) -> c_ast.ID | None:
    while isinstance(n, c_ast.StructRef):
        n = n.name
    return n if isinstance(n, c_ast.ID) else None


def _pointer_to(t: c_ast.Node, name: str, rows: list[c_ast.ArrayDecl]) -> c_ast.PtrDecl | None:
    """``t`` (a scalar or struct type node) as ``t (*name)[d1]...`` (``rows``: the inner
    dimensions of the array); None for anything else."""
    t = copy.deepcopy(t)
    if not isinstance(t, c_ast.TypeDecl):
        return None
    t.declname = name
    inner: c_ast.Node = t
    for row in reversed(rows):
        inner = c_ast.ArrayDecl(inner, copy.deepcopy(row.dim), list(row.dim_quals or []))
    return c_ast.PtrDecl([], inner)


def _member_path(node: c_ast.StructRef) -> tuple[c_ast.StructRef, list[str]]:
    """The element's own member access and the member path below it: ``A[e].pos.x`` gives
    (``A[e].pos``, ``[pos, x]``); ``A[e].f`` gives (``A[e].f``, ``[f]``)."""
    path: list[str] = []
    n: c_ast.StructRef = node
    while n.type == "." and isinstance(n.name, c_ast.StructRef) and isinstance(n.field, c_ast.ID):
        path.append(n.field.name)
        n = n.name
    path.append(n.field.name if isinstance(n.field, c_ast.ID) else "")
    return n, path[::-1]


def _leaf_type(agg: c_ast.Node | None, path: list[str], types: MemberTypes) -> tuple[c_ast.Node | None, str]:
    """The declared type of member ``path`` of the struct ``agg``, or None and why not."""
    member_t: c_ast.Node | None = None
    for k, field in enumerate(path):
        if isinstance(agg, c_ast.Union):  # the members of a union overlap
            return None, "a member of an array of unions"
        member_t = None
        for d in (agg.decls or []) if agg is not None else []:
            if isinstance(d, c_ast.Decl) and d.name == field and d.bitsize is None:
                member_t = d.type
        if member_t is None:
            return None, f"an array-of-structs field '{'.'.join(path)}' whose type is not known"
        if k + 1 < len(path):
            agg = types.aggregate(member_t)
    resolved = types.unalias(member_t)
    if not isinstance(resolved, c_ast.TypeDecl) or types.is_aggregate(resolved) \
            or "_Atomic" in (resolved.quals or []) or "volatile" in (resolved.quals or []):
        return None, f"an array-of-structs field '{'.'.join(path)}' that is not of an arithmetic type"
    return member_t, ""


def field_view(node: c_ast.StructRef, types: MemberTypes, local: set[str], assigned: set[str],
               views: dict[str, FieldView]) -> tuple[c_ast.Node | None, str]:
    """``node`` (``A[e].f``, ``(A + e)->f``, ``A[e].pos.x``) as ``V[e]``, with ``V`` recorded in
    ``views``; or None and why not."""
    own, path = _member_path(node)
    element = _element(own, types)
    if element is None or not all(path):
        return None, "a member of a computed struct"
    base, subscripts = element
    root = _root(base)
    if not isinstance(base, c_ast.ID | c_ast.StructRef) or root is None:
        return None, "a member of a computed struct"
    if root.name in local or root.name in assigned or types.symbols.decls.get(root.name) is None:
        return None, f"an array-of-structs field of '{root.name}', which the nest declares or assigns"
    if types.symbols.is_volatile(root.name):
        return None, "an array-of-structs field of a volatile object"
    arr_t = types.unalias(types.type_of(base))
    rows: list[c_ast.ArrayDecl] = []  # A[i][j].f: the row types of A's elements
    for _ in subscripts[1:]:
        row = types.unalias(arr_t.type) if isinstance(arr_t, c_ast.PtrDecl | c_ast.ArrayDecl) else None
        if not isinstance(row, c_ast.ArrayDecl) or row.dim is None:
            return None, "an array-of-structs field whose rows are not arrays of a known size"
        rows.append(row)
        arr_t = row
    if not isinstance(arr_t, c_ast.PtrDecl | c_ast.ArrayDecl) or types.aggregate(arr_t.type) is None:
        return None, "an array-of-structs field whose array type is not known"
    member_t, why = _leaf_type(types.aggregate(arr_t.type), path, types)
    if member_t is None:
        return None, why
    member = ".".join(path)
    text = c_generator.CGenerator().visit(base)
    name = view_name("_".join(text.replace("->", "_").replace(".", "_").split()), member)
    view = views.get(name)
    if view is None:
        ptr, param = _pointer_to(member_t, name, rows), _pointer_to(arr_t.type, name, rows)
        if ptr is None or param is None:
            return None, "an array-of-structs field whose types are not known"
        view = FieldView(name, text, member, c_ast.Decl(name, [], [], [], [], ptr, None, None),
                         c_generator.CGenerator().visit(c_ast.Decl(name, [], [], [], [], param, None, None)))
        views[name] = view
    elif view.base != text:
        return None, "two arrays of structs spelled alike"
    out: c_ast.Node = c_ast.ID(name, coord=node.coord)
    for sub in subscripts:
        out = c_ast.ArrayRef(out, sub, coord=node.coord)
    return out, ""


def _element(node: c_ast.StructRef, types: MemberTypes) -> tuple[c_ast.Node, list[c_ast.Node]] | None:
    """The array and the subscripts of the element whose member ``node`` reads: ``A[e].f`` and
    ``(A + e)->f`` / ``(e + A)->f`` (``A`` a pointer or array) give ``(A, [e])``, ``A[i][j].f``
    gives ``(A, [i, j])``."""
    if node.type == "." and isinstance(node.name, c_ast.ArrayRef):
        subs: list[c_ast.Node] = []
        arr: c_ast.Node = node.name
        while isinstance(arr, c_ast.ArrayRef):
            subs.append(arr.subscript)
            arr = arr.name
        return arr, subs[::-1]
    if node.type == "->" and isinstance(node.name, c_ast.BinaryOp) and node.name.op == "+":
        for base, sub in ((node.name.left, node.name.right), (node.name.right, node.name.left)):
            if isinstance(base, c_ast.ID | c_ast.StructRef) and \
                    isinstance(types.unalias(types.type_of(base)), c_ast.PtrDecl | c_ast.ArrayDecl):
                return base, [sub]
    return None


def is_field_access(node: c_ast.Node) -> bool:
    """Whether ``node`` is ``A[e].f`` or ``(A + e)->f`` (an array element's member), or a member
    path below one (``A[e].pos.x``), the forms ``field_view`` rewrites."""
    if isinstance(node, c_ast.StructRef):
        node, _path = _member_path(node)
    return isinstance(node, c_ast.StructRef) and (
        (node.type == "." and isinstance(node.name, c_ast.ArrayRef))
        or (node.type == "->" and isinstance(node.name, c_ast.BinaryOp) and node.name.op == "+"))


def view_variable(v: Variable, view: FieldView, spelled: Callable[[str], str]) -> Variable:
    """The extractor's variable of ``view`` as the generated function takes it: a pointer to the
    struct, set to the user's array at the call site, which may overlap any other pointer. A
    flat pointer viewed as rows (``p[y * w + x].f`` as ``V[y][x]``, ``Variable.rows_of``) is a
    pointer to rows of structs, ``P (*V)[w]`` (``struct_rows_type`` gives the call site's cast)."""
    c_decl = view.c_decl
    if v.rows_of:
        rows = "".join(f"[{d}]" for d in v.shape[1:])
        c_decl = f"{struct_rows_type(view.c_decl, view.name)} (*{view.name}){rows}"
    return replace(v, c_decl=c_decl, c_value=spelled(view.base), alias="pointer")



_SUBSCRIPT = r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"


def spelled_views(text: str, views: Iterable[FieldView] | Iterable[tuple[str, str]]) -> str:
    """``text`` (a message) with each ``V[e]`` of a view spelled as the user wrote it, ``A[e].f``."""
    for fv in views:
        name, base = (fv.name, fv.base) if isinstance(fv, FieldView) else fv
        member = view_member(name) or ""

        def element(m: re.Match[str], b: str = base, f: str = member) -> str:
            return f"{b}[{m.group(1)}].{f}"
        text = re.sub(rf"\b{re.escape(name)}{_SUBSCRIPT}", element, text)
        text = re.sub(rf"\b{re.escape(name)}\b", f"{base}[].{member}", text)
    return text


def same_struct_array(x: Variable, y: Variable) -> bool:
    """Whether ``x`` and ``y`` are views of different members of one array of structs: the same
    memory, whose members the dependence analysis tells apart, so no run-time check between them."""
    return bool(view_member(x.name) and view_member(y.name) and x.c_value == y.c_value
                and view_member(x.name) != view_member(y.name))
