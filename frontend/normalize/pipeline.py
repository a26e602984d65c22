"""The normalization driver: ``Candidate`` + ``SymbolTable`` -> ``Normalized`` (a rewritten copy).

The passes edit a deep copy of the candidate's function (so the copy of the nest sits where the
nest sits, for the liveness questions the extractor asks about the code around it); the parse
tree the splicer and the reference text come from is never touched, so the nest as written stays
the fallback. The order matters: member reads become names before local pointers are resolved
(``float *q = s->q + h*hs``), and pointers before index temporaries are substituted into the
subscripts they produce; periodic remainders (``(i + 1) % n``) become selects, and selects come
last, once subscripts are expressions of their own. First of
all, loops that count down in their test (``for (size_t i = n; i-- > 0;)``) step in their header
(``down_loops``), loops over pointers get integer iterators (``pointer_loops``), locals that hold a constant
are read as it (``constant_locals``: ``const int B = 32; i0 += B`` steps by 32), loops with a
run-time step count their trips (``runtime_steps``), ``memset``/``memcpy`` of
whole elements become element loops (``mem_calls``), struct values (``cpx acc = {0, 0}``, ``out[k] = acc``, ``z = cmul(a, w)``) become scalars,
member-wise assignments and calls of scalar functions (``struct_values``, ``struct_calls``), and scalars declared without a value move to their first
assignment (``first_assignments``), so that the later passes see ``T x = e;``; an argmax through its
own index (``if (a[i] > a[best]) best = i;``) compares with a value temporary instead
(``own_index_args``, in an MDH computation's model only; the per-row form, ``best`` declared in
each row, in the model a parallel loop around the nest's own text is checked on); then calls of helpers with loops are expanded into
statements (``loop_helpers``), and calls of pure helper functions into expressions
(``inline_calls``): their arguments may hold members; short loops that pick by their iterator
(``for (v = 0; v < rotn; v++) { float *vec = v == 0 ? s->q : s->k; ... }``) are written out, one
copy per trip (``short_loops``), before members are hoisted and local pointers resolved. Counters and bumped pointers the bodies
step (``out[idx++]``, ``src += stride``) become closed forms of the iterators (``inductions``)
before local pointers are resolved (a pointer declared in the nest and bumped there is then set
once) and index temporaries substituted (one read from a counter is then a value of the
iterators); that pass runs before member reads become names (``p->x`` of a bumped ``p`` is then
the element ``p[k].x``) and again after (``idx += s->n`` then steps by a name). Only a model
that becomes code drops the steps (``privatize``): a model of the nest's own text keeps them.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names
from mdpoly.frontend.normalize.break_loops import breaking_loops_as_whiles
from mdpoly.frontend.normalize.constant_locals import substitute_constant_locals
from mdpoly.frontend.normalize.down_loops import count_down_in_headers, counts_down_in_condition
from mdpoly.frontend.normalize.first_assignments import declare_at_first_assignments
from mdpoly.frontend.normalize.index_temps import substitute_index_temps
from mdpoly.frontend.normalize.inductions import Induction, Inductions, close_inductions
from mdpoly.frontend.normalize.inline_calls import inline_pure_calls
from mdpoly.frontend.normalize.local_pointers import resolve_local_pointers
from mdpoly.frontend.normalize.loop_helpers import inline_loop_helpers, inline_procedures
from mdpoly.frontend.normalize.mem_calls import expand_mem_calls
from mdpoly.frontend.normalize.members import PREFIX, hoist_members
from mdpoly.frontend.normalize.own_index_args import own_index_args, own_index_rows
from mdpoly.frontend.normalize.pointer_loops import integer_iterators
from mdpoly.frontend.normalize.pointer_tests import hoist_pointer_tests
from mdpoly.frontend.normalize.runtime_steps import counted_loops
from mdpoly.frontend.normalize.selects import split_selects
from mdpoly.frontend.normalize.short_loops import unroll_short_loops
from mdpoly.frontend.normalize.struct_calls import scalarize_with_calls, spelled_member_calls
from mdpoly.frontend.normalize.struct_types import MemberTypes
from mdpoly.frontend.normalize.wraps import rewrite_periodic_wraps
from mdpoly.frontend.struct_fields import FieldView, spelled_views, view_variable
from mdpoly.frontend.symbols import SymbolTable
from mdpoly.ir.fields import view_member
from mdpoly.ir.mdh import ExitValue
from mdpoly.ir.scop import AliasClass, Scop, Variable

if TYPE_CHECKING:
    from mdpoly.frontend.parse import ParsedFile
    from mdpoly.frontend.scop import Candidate


@dataclass(frozen=True, slots=True)
class Normalized:
    """The candidate to extract (its ``node`` and ``func`` rewritten copies, or the originals when
    no pass applied), the symbols it sees, and the values of the names the passes introduced."""

    cand: Candidate
    symbols: SymbolTable
    #: hoisted name -> the C expression the call site passes for it (``p->dim``)
    values: tuple[tuple[str, str], ...] = ()
    #: hoisted scalars: objects a written pointer may overlap (checked at run time)
    objects: frozenset[str] = frozenset()
    #: array-of-structs field views (``mdpoly.frontend.struct_fields``)
    views: tuple[FieldView, ...] = ()
    #: functions of the file the nest still calls, and why each is no pure helper (``inline_calls``)
    refused_calls: tuple[tuple[str, str], ...] = ()
    #: variables the nest steps that stay as written, and why (``inductions``)
    refused_inductions: tuple[Induction, ...] = ()
    #: closed forms of stepped variables -> the user's text they replaced (``inductions``)
    closed_forms: tuple[tuple[str, str], ...] = ()
    #: stepped variables read after the nest -> their exit values (``inductions``)
    exits: tuple[tuple[str, str], ...] = ()

    def spelled(self, text: str) -> str:
        """``text`` with the hoisted names spelled as the member expressions they stand for."""
        return _spelled(spelled_views(text, self.views), self.values)

    def explained(self, e: UnsupportedInput) -> UnsupportedInput:
        """``e`` as the user reads it: its message over the user's names, a call that may have
        side effects with the reason the function is no pure helper."""
        e = _call_reason(e, self.refused_calls)
        e = _induction_reason(e, self.refused_inductions)
        e = UnsupportedInput(spelled_member_calls(_unclosed(str(e.message), self.closed_forms)), e.loc, e.code)
        if self.views:
            e = UnsupportedInput(spelled_views(str(e.message), self.views), e.loc, e.code)
        return _explained(e, self.values)

    def finish(self, scop: Scop) -> Scop:
        """``scop`` with the hoisted variables' ``c_value`` (and alias class) set, and the field
        views passed as the user's arrays of structs."""
        if not self.values and not self.views and not self.closed_forms and not self.exits:
            return scop
        values, spelled = dict(self.values), self.spelled
        views = {fv.name: fv for fv in self.views}
        variables = tuple(view_variable(v, views[v.name], spelled) if v.name in views
                          else replace(v, c_value=values[v.name], alias=_hoisted_alias(v, v.name in self.objects))
                          if v.name in values else replace(v, c_value=spelled(v.c_value)) if v.c_value else v
                          for v in scop.variables)
        closed = self.closed_forms   # closed forms as the user's reads: in messages only, never in code
        pre = tuple(replace(p, c_expr=spelled(p.c_expr), reason=_unclosed(spelled(p.reason), closed))
                    for p in scop.preconditions)
        statements = tuple(replace(st, text=_unclosed(spelled(st.text), closed))  # for messages
                           for st in scop.statements)
        exits = tuple(ExitValue(name, spelled(text)) for name, text in self.exits)  # the call site's names
        return replace(scop, variables=variables, preconditions=pre, statements=statements, exits=exits)


def respelled(e: UnsupportedInput, scop: Scop) -> UnsupportedInput:
    """``e`` (raised by a later stage about ``scop``) with hoisted names spelled as the user's
    member expressions (``'mdp_m_s_x'`` -> ``'(s->x)'``)."""
    views = [(v.name, v.c_value) for v in scop.variables if view_member(v.name) and v.c_value]
    if views:
        e = UnsupportedInput(spelled_views(str(e.message), views), e.loc, e.code)
    return _explained(e, tuple((v.name, v.c_value) for v in scop.variables
                               if v.name.startswith(PREFIX) and v.c_value))


def _spelled(text: str, values: tuple[tuple[str, str], ...]) -> str:
    if not values:
        return text
    table = dict(values)
    hoisted = re.compile(r"\b(" + "|".join(re.escape(n) for n in table) + r")\b")
    return hoisted.sub(lambda m: f"({table[m.group(1)]})", text)


def _explained(e: UnsupportedInput, values: tuple[tuple[str, str], ...]) -> UnsupportedInput:
    if not values:
        return e
    return UnsupportedInput(_spelled(str(e.message), values), e.loc, e.code)


def _call_reason(e: UnsupportedInput, refused: tuple[tuple[str, str], ...]) -> UnsupportedInput:
    """``call to 'f' may have side effects`` as ``call to 'f': it writes through pointer 'p'``."""
    if e.code != "side-effect-call":
        return e
    for name, reason in refused:
        generic = f"call to '{name}' may have side effects"
        if str(e.message) == generic:
            return UnsupportedInput(f"call to '{name}': {reason}", e.loc, e.code)
    return e


def _unclosed(text: str, closed: tuple[tuple[str, str], ...]) -> str:
    """``text`` with each closed form (``(int) ((long long) idx + j)``) as the read it replaced (``idx++``)."""
    for form, user in sorted(closed, key=lambda fu: -len(fu[0])):
        text = text.replace(form, user)
    return text


def _induction_reason(e: UnsupportedInput, refused: tuple[Induction, ...]) -> UnsupportedInput:
    """``e`` with the reason a stepped variable it names kept its steps (``'idx' is read after the nest...``)."""
    message = str(e.message)
    why = [r for r in refused if re.search(rf"\b{re.escape(r.name)}\b", message)]
    if not why:
        return e
    notes = "; ".join(f"'{r.name}' is stepped in the nest and stays as written (line {r.loc.line}: {r.reason})"
                      for r in why)
    return UnsupportedInput(f"{message}; {notes}", e.loc, e.code)


def _hoisted_alias(v: Variable, scalar: bool) -> AliasClass:
    """A hoisted scalar is an object written pointers may overlap; an array member lives in a
    struct reached through some pointer, so it may overlap another (pointer members keep theirs)."""
    if scalar:
        return "object"
    return "pointer" if v.alias == "object" else v.alias


def _worth_copying(nest: c_ast.Node) -> bool:
    """Whether some pass may apply: a member, a declaration or assignment of a name, a conditional."""
    stack = [nest]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.StructRef | c_ast.TernaryOp | c_ast.Decl | c_ast.Assignment | c_ast.FuncCall | c_ast.Break):
            return True
        if counts_down_in_condition(n):
            return True
        stack.extend(child for _name, child in n.children())
    return False


def _copy_symbols(symbols: SymbolTable) -> SymbolTable:
    return SymbolTable(dict(symbols.decls), dict(symbols.typedefs), dict(symbols.enums), dict(symbols.enum_values),
                       set(symbols.params), set(symbols.locals), set(symbols.addressed))


def normalize_candidate(parsed: ParsedFile, cand: Candidate, symbols: SymbolTable,
                        privatize: bool = True, as_written: bool = False, row_args: bool = False) -> Normalized:
    """Run the passes over a copy of ``cand``.

    Without ``privatize`` (a model of the nest's own text, whose statements the scheduler maps
    back to the text by location) no statement is removed that is not a declaration: an index
    temporary declared before the nest and assigned in it stays as written. With ``as_written``
    (a model of the nest's own text that never becomes code) inner ``for`` loops that ``break``
    are ``while`` loops (``break_loops``). With ``row_args`` (the model a parallel loop around the
    nest's own text is checked on) inner argmax loops through their own index compare with value
    temporaries (``own_index_args.own_index_rows``).

    :raises UnsupportedInput: a form a pass recognises but cannot rewrite exactly (a scalar
        declared without a value that may be read before it is assigned, a struct member written in the nest, a local pointer re-assigned, an index temporary read after
        the nest), located at the offending statement.
    """
    if not _worth_copying(cand.node):
        return Normalized(cand, symbols)
    memo: dict[int, object] = {}
    func = copy.deepcopy(cand.func, memo)
    found = memo.get(id(cand.node))
    node = found if isinstance(found, c_ast.For) else copy.deepcopy(cand.node, memo)
    symbols = _copy_symbols(symbols)
    # for (b = 0; b < B; b++) layernorm_row(out + b * C, ...): the procedure's body in place, first,
    # so that every pass sees it as the nest's own statements
    inline_procedures(node, parsed.ast, declared_names(func) | set(symbols.decls) | symbols.params)
    if isinstance(node, c_ast.For):
        count_down_in_headers(node, func, cand.loc)   # for (size_t i = n; i-- > 0;): i > 0; i--, reading i - 1
        # for (T *p = a; p < a + n; p++): an integer iterator
        integer_iterators(node, func, declared_names(func) | set(symbols.decls))
        substitute_constant_locals(node, func, symbols)   # const int B = 32; ... i += B: a constant step
    if as_written and isinstance(node, c_ast.For):
        breaking_loops_as_whiles(node)
    types = MemberTypes(symbols, parsed.ast)
    expand_mem_calls(node, types, declared_names(func) | set(symbols.decls))   # memset(p, 0, n * sizeof *p)
    trips = counted_loops(node, symbols, declared_names(func) | set(symbols.decls)) if isinstance(node, c_ast.For) else []
    for tc in trips:   # i += len: a counted loop whose trip count the call site computes
        symbols.decls[tc.name] = tc.decl.type
        symbols.locals.add(tc.name)
    scalars, member_functions = scalarize_with_calls(node, parsed.ast, types, declared_names(func) | set(symbols.decls))
    for name, t in scalars.items():
        symbols.decls[name] = t
        symbols.locals.add(name)
    file_ast = c_ast.FileAST(parsed.ast.ext + member_functions) if member_functions else parsed.ast
    declare_at_first_assignments(node, symbols, cand.loc)   # the user's text, before any name is hoisted
    # an argmax through its own index over a value temporary: in an MDH computation's model only
    args = own_index_args(node, symbols, declared_names(func) | set(symbols.decls)) if privatize and not as_written \
        else []
    for av in args:
        symbols.decls[av.name] = av.decl.type
        symbols.locals.add(av.name)
    if row_args:
        own_index_rows(node, symbols, declared_names(func) | set(symbols.decls))
    # helpers with loops first: their bodies may call pure helpers, which the next pass expands
    inline_loop_helpers(node, parsed.ast, symbols.locals | symbols.params | declared_names(node))
    inlined = inline_pure_calls(node, file_ast, symbols.locals | symbols.params)  # before members: arguments read them
    # for (v = 0; v < rotn; v++) { float *vec = v == 0 ? s->q : s->k; ... }: one copy per trip,
    # before members are hoisted and local pointers resolved ('vec' is then 's->q' in the first)
    unroll_short_loops(node, func, symbols)
    # bumped pointers before members: 'p->x' of a bumped 'p' is then the element 'p[k].x', no
    # member of a pointer the nest assigns; the rest again after, where 'idx += s->n' steps by a name
    steps = close_inductions(node, func.body, symbols, cand.loc) if privatize else Inductions()
    views: dict[str, FieldView] = {}
    hoisted = hoist_members(node, types, assigned_names(node, address=False), cand.loc, views)
    for h in hoisted:
        symbols.decls[h.name] = h.decl.type
        if not h.written:   # a written member is an object outside the function, like a global
            symbols.locals.add(h.name)
    for fv in views.values():
        symbols.decls[fv.name] = fv.decl.type
        symbols.locals.add(fv.name)
    values = tuple((h.name, h.text) for h in hoisted) + tuple((tc.name, tc.text) for tc in trips) \
        + tuple((av.name, av.text) for av in args)
    if steps.refused:
        steps = steps.then(close_inductions(node, func.body, symbols, cand.loc))
    refused_steps, closed_forms = steps.refused, steps.spellings
    tests = hoist_pointer_tests(node, symbols, assigned_names(node, address=False), dict(values))  # bias != NULL
    for t in tests:
        symbols.decls[t.name] = t.decl.type
        symbols.locals.add(t.name)
    values += tuple((t.name, t.text) for t in tests)
    try:
        resolve_local_pointers(node, symbols, cand.loc)
        substitute_index_temps(node, func.body, symbols, cand.loc, assignments=privatize)
    except UnsupportedInput as e:
        raise Normalized(cand, symbols, values, views=tuple(views.values()), refused_calls=inlined.refused,
                         refused_inductions=refused_steps, closed_forms=closed_forms).explained(e) from None
    rewrite_periodic_wraps(node)
    split_selects(node)
    return Normalized(replace(cand, node=node, func=func), symbols, values,
                      frozenset(h.name for h in hoisted if h.scalar), tuple(views.values()), inlined.refused,
                      refused_steps, closed_forms, steps.exits)
