"""Polyhedral model extraction: pycparser AST -> ``Candidate`` nests, each a ``Scop`` or a reason.

Which ``for`` statements are candidates is ``mdpoly.frontend.candidates`` (``find_candidates``;
re-exported here with the other names callers import from this module).

``NestBuilder`` turns one candidate into a ``Scop``. It is a ``NodeVisitor`` composed of parts
with one job each, mixins over one shared state (``mdpoly.frontend.scop_state``): statements
(``mdpoly.frontend.scop_statements``), loop headers (``mdpoly.frontend.scop_loops``) and
expressions (``mdpoly.frontend.scop_exprs``). Its ``generic_visit`` raises ``UnsupportedInput``,
so nothing inside a candidate nest is skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.candidates import (
    Candidate,
    find_candidates,
    holds,
    inner_candidates,
    loc_of,
    return_type_loc,
    stray_mdh_pragmas,
)
from mdpoly.frontend.delinearize import Layout, Refuted, Relayout, row_elements
from mdpoly.frontend.guarded_reads import mark_lazy
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize import normalize_candidate
from mdpoly.frontend.normalize.pointer_tests import PREFIX as TEST_PREFIX
from mdpoly.frontend.opaque_reads import check_opaque
from mdpoly.frontend.parse import ParsedFile, pragma_text
from mdpoly.frontend.scatter import check_scatter
from mdpoly.frontend.scop_exprs import PURE_FUNCTIONS, _declare_value, _product_name
from mdpoly.frontend.scop_loops import LoopHeaders
from mdpoly.frontend.scop_state import _NotPrivate, _NotRebound, _WrittenNames
from mdpoly.frontend.scop_statements import NestStatements
from mdpoly.frontend.symbols import SymbolTable, add_local_decl, c_text, symbols_for
from mdpoly.ir.scop import Scop

__all__ = [
    "PURE_FUNCTIONS",
    "Candidate",
    "NestBuilder",
    "candidate_symbols",
    "extract_scop",
    "find_candidates",
    "holds",
    "inner_candidates",
    "loc_of",
    "loop_headers",
    "privatizable_scalars",
    "return_type_loc",
    "stray_mdh_pragmas",
]

_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


class NestBuilder(NestStatements, LoopHeaders):
    """Builds the ``Scop`` of one candidate; raises ``UnsupportedInput`` on anything else."""

    def build(self) -> Scop:
        if self.cand.omp_pragma is not None:
            raise self._fail(self.cand.node, "already-parallel",
                             f"the loop is already annotated '#pragma {pragma_text(self.cand.omp_pragma)}'")
        self.visit(self.cand.node)
        if not self.statements:
            raise UnsupportedInput("loop nest contains no statement", self.cand.loc, "unsupported-statement")
        # Iterators declared outside the nest stay variables of the nest only while the program may
        # read their value after it: the call site then leaves them at their exit values
        # (``mdpoly.backends.c_emit.CEmitter.exit_values``); a dead one needs nothing.
        outside = {lp.iterator for lp in self.loops if lp.iterator in self.variables}
        for name in outside - live_after(self.cand.func.body, self.cand.node, outside):
            del self.variables[name]
        strided = {n for n in self.strided_done if n in self.variables}
        live_strided = live_after(self.cand.func.body, self.cand.node, strided)
        if live_strided:
            raise self._fail(self.cand.node, "non-unit-stride", f"iterator '{sorted(live_strided)[0]}' of a loop with a "
                             "step is read after the nest; its exit value is not modelled")
        for name in strided:
            del self.variables[name]
        try:
            shapes, view_pre = self.delin.shapes(partial(_product_name, self), partial(_declare_value, self))
        except Refuted as e:
            raise self._fail(self.cand.node, "non-affine-subscript", str(e)) from None
        refused, inspected = check_opaque(self.opaque, self.statements, self.variables, set(shapes))
        if refused is not None:
            raise refused
        if inspected & self.while_gathered:   # an inspection would have to run the 'while' loop
            name = sorted(inspected & self.while_gathered)[0]
            raise self._fail(self.cand.node, "while-loop",
                             f"'{name}' is read inside a loop that may stop early (a 'while', or a 'for' with a "
                             "'break') at indices the loop changes, beside written pointers that may overlap it "
                             "('restrict' on them would rule it out)")
        refused = check_scatter(self.scatter, self.statements)
        if refused is not None:
            raise refused
        scattered = frozenset(u.array for u in self.scatter)
        # a pointer's updated elements are found at run time, like a gathered pointer's reads
        inspected |= {a for a in scattered if self.variables[a].kind == "pointer"}
        offsets = self.delin.offsets()
        for name, shape in shapes.items():
            var = self.variables[name]
            self.variables[name] = replace(var, shape=shape, kind="array", c_decl="", rows_of=row_elements(shape),
                                           base_offset=offsets.get(name, ""))
        self._add_shape_sizes()
        prag = self.cand.pragma
        scop = Scop(
            loc=self.cand.loc, function=self.cand.function, loops=tuple(self.loops),
            statements=tuple(self.statements), params=tuple(self.params),
            variables=tuple(self.variables.values()), marked=self.cand.marked,
            pragma_text=pragma_text(prag) if prag is not None else None,
            pragma_loc=loc_of(prag) if prag is not None else None,
            preconditions=tuple(self.preconditions) + tuple(p for p in view_pre if p not in self.preconditions),
            opaque=frozenset(r.array for r in self.opaque),
            inspected=inspected,
            scattered=scattered,
            index_arrays_written=self.index_arrays_written,
            products=tuple((name, *factors) for name, factors in sorted(self.products.items())
                           if len(factors) == 2 and name in self.params and all(f in self.params for f in factors)),
        )
        try:
            ranges = self.delin.preconditions(scop, shapes)
        except Refuted as e:
            raise self._fail(self.cand.node, "non-affine-subscript", f"a flat subscript cannot be delinearized: {e}") from None
        scop = mark_lazy(scop, self.delin.lazy, self.delin.lazy_rows)  # reads checked under their selects (frontend.guarded_reads)
        tested = {p.removeprefix(TEST_PREFIX) for p in scop.params if p.startswith(TEST_PREFIX)}
        scop = mark_lazy(scop, {v.name for v in scop.variables if v.name in tested and not v.lazy})  # p may be null
        return replace(scop, preconditions=scop.preconditions + tuple(p for p in ranges if p not in scop.preconditions))

    def _add_shape_sizes(self) -> None:
        """Scalars named in variable-length array types (``float A[n][m]``): the generated function
        must receive them to declare its parameter, so they become read-only scalar variables."""
        written_in_func: set[str] | None = None
        for var in list(self.variables.values()):
            if var.kind in ("scalar", "local"):
                continue
            for name in sorted({n for dim in var.shape for n in _IDENT.findall(dim)}):
                size = self.sym.variable(name)
                if size is None or name in self.sym.enums:
                    continue
                # a declared VLA type keeps the size its declaration saw: the function must never
                # change it; a delinearized view's row size is read at the call: the nest must not
                if var.rows_of:
                    written = self.written_in(self.cand.node)
                else:
                    if written_in_func is None:
                        written_in_func = self.written_in(self.cand.func.body)
                    written = written_in_func
                if size.kind != "scalar" or not size.is_integer or name in written or (
                        name not in self.sym.params and name not in self.sym.locals):
                    raise self._fail(self.cand.node, "vla-size",
                                     f"the size '{name}' in the type of '{var.name}' is not a constant, an "
                                     "unmodified parameter or an unmodified local")
                self.variables[name] = size


def extract_scop(parsed: ParsedFile, cand: Candidate, privatize: bool = True, opaque_reads: bool = False,
                 row_args: bool = False) -> Scop:
    """The ``Scop`` of one candidate. :raises UnsupportedInput: with a located reason.

    With ``privatize``, scalars that may be private to each iteration are tried as such (one
    that turns out to be read before it is defined -- its value flows in from outside the scope
    -- is shared again and the model rebuilt). Only a nest generated as one MDH computation gives
    each iteration its copy: a model for rearranging the nest's own text (distribution) must not
    privatize. With ``opaque_reads``, gathers of arrays are read without locating them where the
    nest writes no array (``mdpoly.frontend.opaque_reads``): for models of the nest's own text
    only, never an MDH computation's. ``row_args``: per-row argmax loops through their own index
    compare with value temporaries (for the model ``mdpoly.frontend.privatize`` checks a parallel
    loop around the nest's own text on). The nest is first normalized (``mdpoly.frontend.normalize``: member reads hoisted,
    local pointers and index temporaries substituted) on a copy of its AST."""
    norm = normalize_candidate(parsed, cand, candidate_symbols(parsed, cand), privatize, as_written=opaque_reads,
                               row_args=row_args)
    cand, symbols = norm.cand, norm.symbols
    private = privatizable_scalars(cand, symbols) if privatize else frozenset()
    layouts: dict[str, Layout] = {}
    rebuilds = 0
    not_rebound: frozenset[str] = frozenset()
    sum_strides = True
    while True:
        builder = NestBuilder(cand, symbols, private, layouts)
        try:
            builder.opaque_ok = opaque_reads
            builder.opaque_temps = privatizable_scalars(cand, symbols) if opaque_reads else frozenset()
            builder.not_rebound = not_rebound
            builder.sum_strides = sum_strides
            return norm.finish(builder.build())
        except _NotPrivate as e:
            private = private - {e.name}
        except _NotRebound as e:
            not_rebound = not_rebound | {e.name}
        except Relayout as e:  # an array's view grows (or loses its base offset) with each rebuild
            layouts, rebuilds = e.layouts, rebuilds + 1
            if rebuilds > 16:
                raise norm.explained(UnsupportedInput("the flat subscripts of the nest admit no common view of their "
                                                      "arrays", cand.loc, "non-affine-subscript")) from None
        except UnsupportedInput as e:
            if builder.sum_parameters and e.code == "non-affine-subscript":
                sum_strides, layouts, rebuilds = False, {}, 0   # the sums' rows fit no view: as expanded
                continue
            raise norm.explained(e) from None


def privatizable_scalars(cand: Candidate, symbols: SymbolTable) -> frozenset[str]:
    """Scalars the nest writes that are declared before it, have no address taken, are not
    volatile and whose value after the nest is never read: an iteration that assigns one before
    reading it can have its own copy (privatization, issue 11)."""
    wn = _WrittenNames()
    wn.visit(cand.node)
    names = set()
    for name in wn.written - wn.declared - wn.iterators:
        var = symbols.variable(name)
        if var is not None and var.kind == "scalar" and var.alias == "private" and not symbols.is_volatile(name):
            names.add(name)
    return frozenset(names - live_after(cand.func.body, cand.node, names))


def candidate_symbols(parsed: ParsedFile, cand: Candidate) -> SymbolTable:
    """The declarations visible at ``cand``: the function's outside the outermost nest, plus the
    host-side declarations of a band."""
    table = symbols_for(parsed.ast, cand.func, cand.scope or cand.node)
    for d in cand.host_decls:
        add_local_decl(table, d)
    return table


def loop_headers(cand: Candidate) -> tuple[tuple[str, str], ...]:
    """Best-effort ``(iterator, extent text)`` of the chain of outermost loops, for kept nests."""
    out: list[tuple[str, str]] = []
    node: c_ast.Node | None = cand.node
    while isinstance(node, c_ast.For):
        it, lo, up = "?", "0", "?"
        if isinstance(node.init, c_ast.DeclList) and node.init.decls:
            it = node.init.decls[0].name
            lo = c_text(node.init.decls[0].init) if node.init.decls[0].init is not None else "0"
        elif isinstance(node.init, c_ast.Assignment):
            it, lo = c_text(node.init.lvalue), c_text(node.init.rvalue)
        if isinstance(node.cond, c_ast.BinaryOp):
            up = c_text(node.cond.right)
            if node.cond.op == "<=":
                up = f"{up} + 1"
        out.append((it, up if lo == "0" else f"{up} - ({lo})"))
        body = node.stmt
        if isinstance(body, c_ast.Compound):
            items = [x for x in body.block_items or [] if not isinstance(x, c_ast.Pragma)]
            fors = [x for x in items if isinstance(x, c_ast.For)]
            node = fors[0] if len(fors) == 1 else None
        else:
            node = body
    return tuple(out)
