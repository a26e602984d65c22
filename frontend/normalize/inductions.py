"""Body induction variables: nest copy -> the nest with counters and bumped pointers in closed form.

C that fills a buffer row after row steps a counter or a pointer in the loop bodies instead of
computing an index from the iterators:

    int idx = 0;                                  const float *src = a;
    for (int i = 0; i < n; i++)                   for (int i = 0; i < n; i++) {
      for (int j = 0; j < m; j++)                   for (int j = 0; j < m; j++) b[i*m + j] = src[j];
        out[idx++] = a[j * n + i];                  src += stride;
                                                  }

The value at a use is the value on entry plus the steps of all earlier iterations (trip counts of
completed inner loops times their steps per iteration) plus the steps textually earlier in the
same iteration; with those written out (``out[(int) ((long long) idx + (long long) i * m + j)]``,
``src[(long long) i * stride + j]``) the subscripts are affine, and the steps go. The variable
itself stays the base, unchanged in the nest, so no name is introduced. This module decides which
variables may be closed; ``induction_forms`` builds the forms.

Accepted: a local (or parameter) integer scalar ``x`` or pointer ``p`` that the nest changes only
by steps ``x++``, ``++x``, ``x--``, ``--x`` (also inside an expression: ``out[idx++]`` reads the
value before the step, ``out[++idx]`` after), ``x += c``, ``x -= c``, ``x = x + c``, ``x = x - c``
as statements or among a loop header's increments (``for (...; ...; i++, p += s)``: at the end of
each iteration), ``c`` an integer expression of names the nest does not change. The steps sit at the
top level of a loop body or inside inner loops ``for (j = L; j < U; j++)`` (or ``<=``; or ``j += s``,
``s`` a positive constant) whose bounds the nest does not change, so each inner loop runs ``U > L ?
U - L : 0`` trips (``(U - L + s - 1) / s``) in every iteration around it. A variable declared in the nest (``float *row = out + i*m;`` at the top of a body) is
handled the same way from its declaration to the end of its block (``local_pointers`` then
resolves it). One declared before the nest that the program reads after it, or that a loop around
the nest carries into its next run, gets its exit value there: its value on entry plus the steps
of all the nest's iterations, ``(int) ((long long) idx + (n > 0 ? (long long) n : 0) * (m > 0 ?
(long long) m : 0))`` (an empty loop adds nothing), which the call site assigns after the
generated code (``Inductions.exits``; ``mdpoly.ir.mdh.ExitValue``). The trip counts it multiplies
are those of the closed forms, so what they refuse (a triangle, a loop that is no counted loop)
the exit value refuses too.

Refused (the variable stays as written, and a later "not affine" message says why, through
``Induction`` reasons): a step under an ``if``, ``?:``, ``&&``, ``||``, ``switch`` or a loop that is
no such counted loop; ``break``, ``continue``, ``return`` or ``goto`` in the nest; any other
assignment of the variable, its address taken, ``volatile``; a statement that steps it inside an
expression and names it twice; the variable read in a loop header; an inner loop whose bounds
the nest changes (a triangle: its trip count is no product of sizes); a variable of an unsigned
type narrower than a pointer (or of a type narrower than ``int``) that reaches a subscript or
another scalar, whose wrap-around the model of the subscripts would not see; a ``_Bool`` (its steps
saturate or toggle).

Integer types: the closed form is computed in ``long long`` (``unsigned long long`` for a 64-bit
unsigned variable, whose steps wrap the same modulo 2^64) and converted to the variable's type,
as its own steps convert it; pointer offsets are ``long long``. A count of completed iterations
times the steps of one iteration is a change the original makes, so it fits where the original
does not overflow; the closed form can overflow where the original does not only if a product
of trip counts and a step exceeds 2^63 (the steps of an iteration that never completes are
computed too).
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.normalize.ast_util import assigned_names, declared_names, loc_of, names_in, walk_nodes
from mdpoly.frontend.normalize.induction_forms import Closer, InductionVar, NoClosedForm, header_steps, is_name, step_of
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.c_types import parse_type

_JUMPS = (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto, c_ast.Label)


@dataclass(frozen=True, slots=True)
class Induction:
    """A variable the nest steps whose steps were left as written, and why (for messages)."""

    name: str
    reason: str
    loc: SourceLoc


@dataclass(frozen=True, slots=True)
class Inductions:
    """What ``close_inductions`` did: the variables rewritten, the ones refused, and the closed
    forms as C text next to the user's text they replaced (for messages)."""

    closed: tuple[str, ...] = ()
    refused: tuple[Induction, ...] = ()
    spellings: tuple[tuple[str, str], ...] = ()
    #: variable -> its value after the nest (C text over its value on entry), for those the
    #: program reads after the nest or a loop around it carries to its next run
    exits: tuple[tuple[str, str], ...] = ()

    def then(self, later: Inductions) -> Inductions:
        """This run followed by ``later`` over the same nest: a variable ``later`` closed or refused
        takes its outcome from there."""
        seen = set(later.closed) | {r.name for r in later.refused}
        refused = later.refused + tuple(r for r in self.refused if r.name not in seen)
        return Inductions(self.closed + later.closed, refused, self.spellings + later.spellings,
                          self.exits + later.exits)


def _var(name: str, typ: c_ast.Node | None, symbols: SymbolTable) -> InductionVar | None:
    """The variable ``name`` of declared type ``typ`` when it is an integer scalar or a pointer."""
    if isinstance(typ, c_ast.PtrDecl):
        pointee = typ.type
        if isinstance(pointee, c_ast.TypeDecl) and isinstance(pointee.type, c_ast.IdentifierType) \
                and symbols.resolve(" ".join(pointee.type.names)) == "void":
            return None   # no element size: p[k] is no C
        return InductionVar(name, None, "")
    if isinstance(typ, c_ast.TypeDecl) and isinstance(typ.type, c_ast.IdentifierType):
        text = symbols.resolve(" ".join(n for n in typ.type.names if n not in ("const", "volatile", "register")))
        t = parse_type(text)
        if t is not None and t.is_integer:
            return InductionVar(name, t, t.name)
    return None


def _check_variable(var: InductionVar, region: c_ast.Node, symbols: SymbolTable, typ: c_ast.Node) -> None:
    """Refuse what makes a closed form wrong: other writes, ``&x``, ``volatile``, reads in headers."""
    name = var.name
    if symbols.type_is_volatile(typ):
        raise NoClosedForm(f"'{name}' is volatile", None)
    for n in walk_nodes(region):
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and is_name(n.expr, name):
            raise NoClosedForm(f"the address of '{name}' is taken", n)
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") else None
        if is_name(target, name) and step_of(n, name) is None:
            raise NoClosedForm(f"'{name}' is assigned by '{c_text(n)}', which is no step by a fixed amount", n)
        if isinstance(n, c_ast.For):
            steps = header_steps(n, name)
            increments = [x for x in n.next.exprs if not any(x is y for y in steps)] \
                if isinstance(n.next, c_ast.ExprList) else [n.next]
            for part in (n.init, n.cond, *increments):
                if part is not None and name in names_in(part):
                    raise NoClosedForm(f"'{name}' is read or stepped in the header of the loop at line "
                                       f"{n.coord.line if n.coord else '?'}, other than as one of its increments", n)
        if isinstance(n, _JUMPS):
            raise NoClosedForm(f"the nest has a '{type(n).__name__.lower()}', so its loops may not run every iteration",
                               n)
    t = var.ctype
    if t is not None and t.is_bool:
        raise NoClosedForm(f"'{name}' is a _Bool, whose steps saturate or toggle instead of counting", None)
    if t is not None and (t.size < 4 or (not t.signed and t.size < 8)):
        for n in _index_reads(region, name):
            raise NoClosedForm(f"'{name}' is '{t.name}', whose steps wrap where a subscript computed from it would not",
                               n)


def _index_reads(region: c_ast.Node, name: str) -> list[c_ast.Node]:
    """Reads of ``name`` that may reach a subscript: under a subscript or ``*``, or stored in a scalar."""
    out: list[c_ast.Node] = []
    for n in walk_nodes(region):
        parts: list[c_ast.Node | None] = []
        if isinstance(n, c_ast.ArrayRef):
            parts = [n.subscript]
        elif isinstance(n, c_ast.UnaryOp) and n.op == "*":
            parts = [n.expr]
        elif isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.TypeDecl):
            parts = [n.init]
        elif isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and n.lvalue.name != name:
            parts = [n.rvalue]
        out.extend(p for p in parts if p is not None and name in names_in(p))
    return out


def _candidates(region: c_ast.Node) -> list[str]:
    """Names stepped in ``region`` outside loop headers, sorted (a stable order of rewrites)."""
    headers: set[int] = set()
    for n in walk_nodes(region):
        if isinstance(n, c_ast.For):
            headers.update(id(x) for x in walk_nodes(n.init) if n.init is not None)
            if not isinstance(n.next, c_ast.ExprList):   # j++ alone: the iterator's own step
                headers.update(id(x) for x in walk_nodes(n.next) if n.next is not None)
    out: list[str] = []
    for n in walk_nodes(region):
        if id(n) in headers:
            continue
        target = n.lvalue if isinstance(n, c_ast.Assignment) else \
            n.expr if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") else None
        if isinstance(target, c_ast.ID) and step_of(n, target.name) is not None and target.name not in out:
            out.append(target.name)
    return sorted(out)


def _iterators(nest: c_ast.Node) -> set[str]:
    """Names a loop header sets, or steps and tests (``for (j = 0; j < m; j++, p++)``: ``j``)."""
    out: set[str] = set()
    for n in walk_nodes(nest):
        if isinstance(n, c_ast.For):
            stepped = assigned_names(n.next)
            if isinstance(n.next, c_ast.ExprList):
                stepped &= names_in(n.cond)
            out |= assigned_names(n.init) | declared_names(n.init) | stepped
    return out


def _ancestors(tree: c_ast.Node, node: c_ast.Node) -> list[c_ast.Node] | None:
    """The nodes from ``tree`` down to ``node``'s parent, or None when ``node`` is not in ``tree``."""
    if tree is node:
        return []
    for _name, child in tree.children():
        found = _ancestors(child, node)
        if found is not None:
            return [tree, *found]
    return None


def _fresh_in_each_run(name: str, body: c_ast.Node, nest: c_ast.Node) -> bool:
    """Whether every run of ``nest`` starts from a value no earlier run left: the nest is in no
    loop of ``body``, or ``name`` is declared in a block around it inside the innermost such loop
    (``live_after`` does not count the nest's own reads, which a loop around it repeats). A band
    that is a new node over part of a loop's body (``mdpoly.frontend.schedule``) is in a loop."""
    path = _ancestors(body, nest)
    if path is None:
        return False
    loops = [k for k, n in enumerate(path) if isinstance(n, c_ast.For | c_ast.While | c_ast.DoWhile)]
    if not loops:
        return True
    return any(isinstance(n, c_ast.Compound) and any(isinstance(x, c_ast.Decl) and x.name == name
                                                     for x in n.block_items or [])
               for n in path[loops[-1] + 1:])


def _loc(node: c_ast.Node | None, fallback: SourceLoc) -> SourceLoc:
    return loc_of(node, fallback) if node is not None else fallback


def close_inductions(nest: c_ast.Node, body: c_ast.Node, symbols: SymbolTable, fallback: SourceLoc) -> Inductions:
    """Rewrite, in ``nest`` (a copy inside ``body``, the function's body copy; edited in place),
    every induction variable of the form above into closed forms of the iterators; the others
    stay as written, each with its reason in the result."""
    closed: list[str] = []
    refused: list[Induction] = []
    spellings: list[tuple[str, str]] = []
    exits: list[tuple[str, str]] = []
    iterators = _iterators(nest)
    inner_decls = _inner_declarations(nest)
    for name in _candidates(nest):
        if name in iterators:
            continue
        try:
            if name in inner_decls:
                decl, block = inner_decls[name]
                done = _close_declared(name, decl, block, symbols)
            else:
                outside = _close_outside(name, nest, body, symbols)
                done = None if outside is None else outside[0]
                if outside is not None and outside[1] is not None:
                    exits.append((name, outside[1]))
        except NoClosedForm as e:
            refused.append(Induction(name, e.reason, _loc(e.node, fallback)))
            continue
        if done is not None:
            closed.append(name)
            spellings.extend(done)
    return Inductions(tuple(closed), tuple(refused), tuple(spellings), tuple(exits))


def _inner_declarations(nest: c_ast.Node) -> dict[str, tuple[c_ast.Decl, c_ast.Compound]]:
    """Names declared once in the nest, at the top level of a block: name -> (declaration, block)."""
    seen: dict[str, int] = {}
    out: dict[str, tuple[c_ast.Decl, c_ast.Compound]] = {}
    for n in walk_nodes(nest):
        if isinstance(n, c_ast.Decl) and n.name:
            seen[n.name] = seen.get(n.name, 0) + 1
        if isinstance(n, c_ast.Compound):
            for item in n.block_items or []:
                if isinstance(item, c_ast.Decl) and item.name:
                    out[item.name] = (item, n)
    return {k: v for k, v in out.items() if seen.get(k) == 1}


def _close_outside(name: str, nest: c_ast.Node, body: c_ast.Node, symbols: SymbolTable
                   ) -> tuple[list[tuple[str, str]], str | None] | None:
    """Close ``name``, declared before ``nest``: its value on entry is the base. Returns the
    spellings and, where the program reads it after the nest or a loop around the nest runs it
    again, its exit value (C text), else None there."""
    if name in declared_names(nest):
        return None   # another variable of that name in some inner scope
    typ = symbols.decls.get(name)
    var = _var(name, typ, symbols) if typ is not None else None
    if var is None or typ is None:
        return None
    if name not in symbols.locals and name not in symbols.params:
        raise NoClosedForm(f"'{name}' is not local to the function: its value after the nest is visible elsewhere",
                           None)
    if name in symbols.addressed:
        raise NoClosedForm(f"the address of '{name}' is taken", None)
    if any(isinstance(n, c_ast.Decl) and n.name == name and set(n.storage or []) & {"static", "extern"}
           for n in walk_nodes(body)):
        raise NoClosedForm(f"'{name}' is static: its value outlives the call", None)
    _check_variable(var, nest, symbols, typ)
    # read after the nest, or carried by a loop around it into its next run: its exit value is set
    needs_exit = bool(live_after(body, nest, {name})) or not _fresh_in_each_run(name, body, nest)
    closer = Closer(var, assigned_names(nest) | declared_names(nest), symbols)
    closer.delta(nest)   # all checks before any edit
    items, end = closer.block([nest], (), frozenset())
    if len(items) != 1 or items[0] is not nest:
        raise NoClosedForm(f"'{name}' is stepped by the nest's own statement", nest)
    return closer.spellings, c_text(closer.exit_value(end)) if needs_exit else None


def _close_declared(name: str, decl: c_ast.Decl, block: c_ast.Compound, symbols: SymbolTable
                    ) -> list[tuple[str, str]] | None:
    """Close ``name``, declared in ``block`` of the nest: from its declaration to the block's end."""
    var = _var(name, decl.type, symbols)
    if var is None:
        return None
    items = block.block_items or []
    k = next(i for i, x in enumerate(items) if x is decl)
    region = c_ast.Compound(items[k + 1:])
    if decl.init is None:
        raise NoClosedForm(f"'{name}' is declared without a value", decl)
    if set(decl.storage or []) & {"static", "extern"}:
        raise NoClosedForm(f"'{name}' is static: its value outlives each run of its block", decl)
    if name in names_in(decl.init):
        return None
    _check_variable(var, region, symbols, decl.type)
    closer = Closer(var, assigned_names(region) | declared_names(region), symbols)
    closer.delta(region)
    rest, _end = closer.block(list(items[k + 1:]), (), frozenset())
    block.block_items = [*items[:k + 1], *rest]
    return closer.spellings
