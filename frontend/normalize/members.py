"""Invariant struct-member reads: nest copy + ``MemberTypes`` -> the nest over hoisted names.

A member the nest reads but never writes (``p->dim``, ``s->x``, ``c.n``, ``p->cfg.dim``) holds
one value during the whole nest: it becomes a new variable ``mdp_m_<path>`` of the member's
declared type, whose value the call site computes from the member expression
(``mdpoly.ir.scop.Variable.c_value``): the generated code loads it once. A pointer member
(``s->x`` in ``s->x[i]``) then is a pointer parameter like any other, with the usual run-time
no-overlap checks; a scalar member is an object the checks compare with every written pointer's
range (``&p->dim`` may lie in the memory a pointer writes). That a store through a ``float *``
cannot change a ``float *`` member is C's type rule (the object has another type).

A scalar member the nest assigns (``s->sum += v[i]``, ``st.count++``) is hoisted the same way
but as an object outside the function (``Hoisted.written``; not a local of it, so no analysis
takes it for a temporary that dies with the nest): the generated call receives its address
(``&(s->sum)``), and the run-time checks compare that address with every array the nest
accesses, as they do for a global scalar. Other members cannot change through it (distinct
members never overlap).

An array-of-structs field (``p[i].prob``, read or written) becomes an access to a view of its
own (``mdpoly.frontend.struct_fields``). Refused, located: a nest that assigns a member of pointer
or aggregate type or takes a member's address (``p->q = x``, ``&s->acc``, ``&p[i].prob``), that
assigns the struct pointer itself, a store of a whole struct, and the array-of-structs forms the
views do not cover. A function call elsewhere in the nest is
refused by the extractor.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.normalize.ast_util import (
    assignment_of,
    declared_names,
    loc_of,
    replace_top_down,
    written_roots,
)
from mdpoly.frontend.normalize.struct_types import MemberTypes
from mdpoly.frontend.struct_fields import FieldView, field_view, is_field_access
from mdpoly.frontend.symbols import c_text

PREFIX = "mdp_m_"


@dataclass(frozen=True, slots=True)
class Hoisted:
    """A member read replaced by ``name``, which the call site sets to the C expression ``text``."""

    name: str
    text: str
    decl: c_ast.Decl
    scalar: bool
    #: the nest assigns the member (``s->sum += v[i]``): a scalar object of its own, like a global
    written: bool = False


def _chain(node: c_ast.StructRef) -> tuple[c_ast.Node, list[str]]:
    """The base of a member chain and its member names (``p->a.b`` -> ``p``, ``[a, b]``)."""
    fields: list[str] = []
    n: c_ast.Node = node
    while isinstance(n, c_ast.StructRef):
        fields.append(n.field.name)
        n = n.name
    fields.reverse()
    return n, fields


def _declaration(name: str, t: c_ast.Node) -> c_ast.Decl | None:
    """``t`` (a member's type) as the declaration of ``name``; None for a function or bit-field type."""
    t = copy.deepcopy(t)
    inner: c_ast.Node = t
    while isinstance(inner, c_ast.PtrDecl | c_ast.ArrayDecl):
        inner = inner.type
    if not isinstance(inner, c_ast.TypeDecl):
        return None
    inner.declname = name
    return c_ast.Decl(name, [], [], [], [], t, None, None)


def _atomic(t: c_ast.Node) -> bool:
    """Whether a member's value is ``_Atomic`` (another thread may change it: no single load)."""
    while isinstance(t, c_ast.ArrayDecl):
        t = t.type
    return "_Atomic" in (getattr(t, "quals", None) or [])


def _member_writes(nest: c_ast.Node, fallback: SourceLoc) -> dict[str, c_ast.Node]:
    """The members the nest assigns (``s->sum += v``, ``st.count++``), by their text, each with
    its first assignment; raise at ``&`` of a member."""
    written: dict[str, c_ast.Node] = {}

    def walk(n: c_ast.Node | None) -> None:
        if n is None:
            return
        target: c_ast.Node | None = None
        what_op = n.op if isinstance(n, c_ast.UnaryOp) else ""
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            target = n.expr
        if isinstance(target, c_ast.StructRef) and not (is_field_access(target) and what_op != "&"):
            if what_op == "&":
                raise UnsupportedInput(f"the nest takes the address of the struct member '{c_text(target)}', so "
                                       "member reads cannot be loaded once before it", loc_of(n, fallback),
                                       "struct-member-write")
            written.setdefault(c_text(target), n)
        for _name, child in n.children():
            walk(child)

    walk(nest)
    return written


def hoist_members(nest: c_ast.Node, types: MemberTypes, assigned: set[str], fallback: SourceLoc,
                  views: dict[str, FieldView] | None = None) -> list[Hoisted]:
    """Replace, in ``nest`` (a copy, edited in place), every invariant member read by a new name.

    ``assigned``: the names the nest assigns (a struct pointer among them is refused).
    ``views``: where array-of-structs fields (``A[e].f``) are rewritten as accesses to views
    (``mdpoly.frontend.struct_fields``); None refuses them.
    :raises UnsupportedInput: a member written, the struct pointer assigned, an array-of-structs
        field that is not rewritten.
    """
    written = _member_writes(nest, fallback)
    local = declared_names(nest)
    by_text: dict[str, Hoisted] = {}
    taken: set[str] = set()

    def rewrite(n: c_ast.Node) -> c_ast.Node | None:
        if not isinstance(n, c_ast.StructRef):
            return None
        base, fields = _chain(n)
        if not isinstance(base, c_ast.ID):
            if views is not None and is_field_access(n):  # A[e].f: a view of its own (struct_fields)
                view, why = field_view(n, types, local, assigned, views)
                if view is not None:
                    return view
                raise UnsupportedInput(f"'{c_text(n)}' is {why}: a strided access, which is not modelled",
                                       loc_of(n, fallback), "unsupported-statement")
            kind = "an array-of-structs field" if isinstance(base, c_ast.ArrayRef) else "a member of a computed struct"
            raise UnsupportedInput(f"'{c_text(n)}' is {kind}: a strided access, which is not modelled",
                                   loc_of(n, fallback), "unsupported-statement")
        if base.name in local or types.symbols.decls.get(base.name) is None:
            return None  # a struct declared in the nest: left to the extractor
        if base.name in assigned:
            at = assignment_of(nest, base.name) or n
            raise UnsupportedInput(f"the nest assigns '{base.name}', so '{c_text(n)}' is no invariant member read",
                                   loc_of(at, fallback), "struct-member-write")
        t = types.type_of(n)
        text = c_text(n)
        if text in written and (t is None or not isinstance(types.unalias(t), c_ast.TypeDecl)):
            raise UnsupportedInput(f"the nest writes the struct member '{text}', which is no scalar",
                                   loc_of(written[text], fallback), "struct-member-write")
        if t is None or types.is_aggregate(t) or types.symbols.is_volatile(base.name) or _atomic(t):
            return None  # left to the extractor, which refuses it
        hoisted = by_text.get(text)
        if hoisted is None:
            name = PREFIX + re.sub(r"\W", "_", "_".join([base.name, *fields]))
            k = 2
            while name in taken:
                name = f"{PREFIX}{'_'.join([base.name, *fields])}_{k}"
                k += 1
            decl = _declaration(name, t)
            if decl is None:
                return None
            resolved = types.unalias(t)
            hoisted = Hoisted(name, text, decl, isinstance(resolved, c_ast.TypeDecl), text in written)
            by_text[text] = hoisted
            taken.add(name)
        return c_ast.ID(hoisted.name, coord=n.coord)

    replace_top_down(nest, rewrite)
    if by_text or views:
        _struct_stores(nest, types, fallback)
    return list(by_text.values())


def _struct_stores(nest: c_ast.Node, types: MemberTypes, fallback: SourceLoc) -> None:
    """Raise at a store of a whole struct (``q[i] = cfg``): it may overwrite a hoisted member."""
    for stmt, root in written_roots(nest):
        if not isinstance(stmt, c_ast.Assignment) or not isinstance(root, c_ast.ID):
            continue
        t = types.unalias(types.type_of(root))
        while isinstance(t, c_ast.PtrDecl | c_ast.ArrayDecl):
            t = types.unalias(t.type)
        if types.is_aggregate(t):
            raise UnsupportedInput(f"the nest stores whole structs through '{root.name}', which may overwrite the "
                                   "struct members it reads", loc_of(stmt, fallback), "struct-member-write")
