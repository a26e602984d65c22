"""Loops with a run-time step: ``for (int i = L; i < U; i += s)`` -> a counted loop over ``t``.

An FFT stage (``for (i = 0; i < n; i += len)``), a loop over blocks of a run-time size
(``for (ii = 0; ii < n; ii += bs)``) and a strided walk step by a value known only at run time,
which the model's strided loops (constant steps) do not cover. Such a loop is the loop
``for (long t = 0; t < T; t++) { int i = L + t * s; body }`` with ``T = U > L ? (U - L + s - 1) / s
: 0`` (``<=``: ``U >= L ? (U - L) / s + 1 : 0``), a size parameter whose value the call site
computes (``Normalized.values``); ``index_temps`` then substitutes ``i`` into the subscripts
(``a[i + k]`` is ``a[t*s + k]``, which a flat array's view reads as row ``t`` of rows of ``s``).
Exact when ``i`` is declared in the header (no exit value to keep) and the body never assigns
it, and ``L``, ``U`` and ``s`` read no memory and nothing the nest assigns; a step ``s <= 0``
never ends the original loop (which C lets a compiler assume does not happen). The counter is
``mdp_stepN_i`` and the trip count ``mdp_tripsN_i`` (the remark names the counter ``i``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, names_in, walk_nodes
from mdpoly.frontend.normalize.index_temps import pure_index
from mdpoly.frontend.symbols import SymbolTable, c_text

PREFIX = "mdp_step"
TRIPS = "mdp_trips"


@dataclass(frozen=True, slots=True)
class TripCount:
    """The trip count ``name`` of a loop with a run-time step, which the call site sets to ``text``."""

    name: str
    text: str
    decl: c_ast.Decl


def _step(next_: c_ast.Node | None, it: str) -> c_ast.Node | None:
    """``s`` of ``it += s`` / ``it = it + s`` when ``s`` is no integer constant (those the model strides)."""
    s: c_ast.Node | None = None
    if isinstance(next_, c_ast.Assignment) and isinstance(next_.lvalue, c_ast.ID) and next_.lvalue.name == it:
        if next_.op == "+=":
            s = next_.rvalue
        elif next_.op == "=" and isinstance(next_.rvalue, c_ast.BinaryOp) and next_.rvalue.op == "+":
            a, b = next_.rvalue.left, next_.rvalue.right
            s = b if isinstance(a, c_ast.ID) and a.name == it else a if isinstance(b, c_ast.ID) and b.name == it else None
    if s is None or isinstance(s, c_ast.Constant):
        return None
    return s


def _decl(name: str, ctype: list[str], init: c_ast.Node | None, coord: object) -> c_ast.Decl:
    return c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(ctype)), init, None,
                      coord=coord)


def counted_loops(nest: c_ast.For, symbols: SymbolTable, taken: set[str]) -> list[TripCount]:
    """Rewrite, in ``nest`` (a copy, edited in place; its own header too), every loop with a
    run-time step of the form above; ``taken``: names the new ones must not shadow. Returns the
    trip counts the call site computes."""
    assigned = assigned_names(nest) | declared_names(nest)   # what the call site cannot evaluate
    out: list[TripCount] = []
    for loop in [n for n in walk_nodes(nest) if isinstance(n, c_ast.For)]:
        init = loop.init
        if not (isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and isinstance(init.decls[0], c_ast.Decl)):
            continue
        d = init.decls[0]
        if not (d.name and isinstance(d.type, c_ast.TypeDecl) and isinstance(d.type.type, c_ast.IdentifierType)
                and d.init is not None):
            continue
        it, s = d.name, _step(loop.next, d.name)
        cond = loop.cond
        if s is None or not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=")
                             and isinstance(cond.left, c_ast.ID) and cond.left.name == it):
            continue
        lo, hi = d.init, cond.right
        parts = (lo, hi, s)
        if not all(pure_index(x, symbols) for x in parts) or any(names_in(x) & (assigned | {it}) for x in parts):
            continue
        if it in assigned_names(loop.stmt):
            continue
        k = 1
        while f"{PREFIX}{k}_{it}" in taken or f"{TRIPS}{k}_{it}" in taken:
            k += 1
        t, trips = f"{PREFIX}{k}_{it}", f"{TRIPS}{k}_{it}"
        taken |= {t, trips}
        L, U, S = (f"({c_text(x)})" for x in parts)
        text = (f"({U} > {L} ? ({U} - {L} + {S} - 1) / {S} : 0)" if cond.op == "<"
                else f"({U} >= {L} ? ({U} - {L}) / {S} + 1 : 0)")
        out.append(TripCount(trips, text, _decl(trips, ["long"], None, d.coord)))
        here = c_ast.Decl(it, list(d.quals or []), [], [], [], copy.deepcopy(d.type),
                          c_ast.BinaryOp("+", copy.deepcopy(lo), c_ast.BinaryOp("*", c_ast.ID(t), copy.deepcopy(s))),
                          None, coord=d.coord)
        loop.init = c_ast.DeclList([_decl(t, ["long"], c_ast.Constant("int", "0"), d.coord)], coord=init.coord)
        loop.cond = c_ast.BinaryOp("<", c_ast.ID(t), c_ast.ID(trips), coord=cond.coord)
        loop.next = c_ast.UnaryOp("p++", c_ast.ID(t), coord=loop.next.coord if loop.next else None)
        body = loop.stmt.block_items if isinstance(loop.stmt, c_ast.Compound) else [loop.stmt]
        loop.stmt = c_ast.Compound([here, *(body or [])], coord=loop.stmt.coord if loop.stmt else None)
    return out
