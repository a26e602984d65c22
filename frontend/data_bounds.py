"""Inner loops whose bounds the nest reads from memory: a nest -> a surrogate the model can analyse,
for the parallel loop around the body as written (``mdpoly.frontend.privatize``, ``plain``).

A sparse matrix-vector product in CSR form runs each row's nonzeros in a loop whose bounds are
array elements::

    for (int r = 0; r < A->n; r++) {
      double sum = 0.0;
      for (int p = A->rp[r]; p < A->rp[r + 1]; p++) sum += A->v[p] * x[A->ci[p]];
      y[r] = sum;
    }

No polyhedron describes ``p``'s range, so the model refuses the nest (``non-affine-bound``). Yet
the row loop is parallel when the inner loop only *reads* memory and changes nothing but the
row's own scalars. ``surrogate_scop`` checks that (``check_read_only``) for every inner loop the
model refuses for its bounds, and replaces the loop, in a copy of the nest, by one guarded
iteration of its body, with its iterator a fresh local set to the loop's start::

    { int p = A->rp[r]; if (p < A->rp[r + 1]) sum += A->v[p] * x[A->ci[p]]; }

The surrogate is analysed instead of the nest (the nest's own text still runs); it is a sound
over-approximation of what matters to the row loop's dependences:

- every read the loop makes (its header's included) is a read of the surrogate of the same
  object; a subscript in ``p`` is no affine function, so it is an *opaque* read of the whole
  object (``mdpoly.frontend.opaque_reads``), which requires that the nest write no part of it,
  and, for a pointer, that the run-time inspection of the nest (``mdpoly.frontend.inspector``,
  run over the real loops) find the elements it reads clear of every written range;
- reads the surrogate makes once the loop may make zero or many times: reads of scalars the
  nest writes then only add dependences (a refusal, never a missed dependence);
- the loop writes only its iterator, names declared inside it and scalars declared in the nest's
  body (``check_read_only``): C gives each row loop iteration new ones, so no value flows through
  them from one row to another however often the loop runs, and ``fresh_locals`` drops exactly
  those dependences. Its iterator, when declared outside the nest, is named nowhere else in the
  nest, so a local in its place changes nothing the model sees; the parallel loop makes it
  private (and ``lastprivate`` where it is read after the nest and assigned in every iteration);
- nothing leaves the loop but by its condition: ``break``, ``continue``, ``return`` and ``goto``
  refuse, and so does a call of anything but a pure math function.

The row loop's work is unknown to the model (it counts each surrogate once per row).
``rows_work_c`` estimates it at run time where the loop runs in every row with bounds that
telescope (the end of row ``r`` is the start of row ``r + 1``, as in CSR): the number of
nonzeros ``rp[hi] - rp[lo]``, read where the first and last rows read them anyway.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.candidates import Candidate, loc_of
from mdpoly.frontend.parse import ParsedFile
from mdpoly.frontend.scop import candidate_symbols, extract_scop
from mdpoly.frontend.scop_exprs import PURE_FUNCTIONS
from mdpoly.frontend.symbols import SymbolTable, c_text
from mdpoly.ir.scop import Scop

#: How many inner loops of one nest may be replaced by surrogates.
MAX_SURROGATES = 8

_LEAVES = (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto, c_ast.Label, c_ast.Switch)


class NotSurrogate(Exception):
    """The nest's inner loops with bounds read from memory cannot be analysed as one guarded
    iteration each; the message says why."""


def surrogate_scop(parsed: ParsedFile, cand: Candidate,
                   refused: UnsupportedInput) -> tuple[Scop, tuple[c_ast.For, ...]]:
    """The model of ``cand``'s nest with each inner loop that the model refuses for its bounds
    (``refused``: the first such refusal) replaced by its surrogate, and those loops (nodes of
    ``cand.node``, in the order replaced). The model is for the parallel loop around the body as written only.

    :raises NotSurrogate: a refused loop is the outer loop, or not read-only (see the module docstring).
    :raises UnsupportedInput: the surrogate nest itself is refused (its reason).
    """
    symbols = candidate_symbols(parsed, cand)
    nest = copy.deepcopy(cand.node)
    replaced: list[c_ast.For] = []
    while True:
        loop = refused_loop(nest, refused)
        if loop is None:
            raise NotSurrogate(refused.message)
        check_read_only(nest, loop, symbols)
        _replace_child(nest, loop, _one_iteration(loop, symbols))
        replaced.append(loop)
        try:
            model = replace(cand, node=nest, scope=cand.scope or cand.node)
            scop = extract_scop(parsed, model, privatize=False, opaque_reads=True)
            return scop, tuple(_original(cand.node, loop) for loop in replaced)
        except UnsupportedInput as err:
            if err.code != "non-affine-bound" or len(replaced) >= MAX_SURROGATES:
                raise
            refused = err


def refused_loop(nest: c_ast.For, refused: UnsupportedInput) -> c_ast.For | None:
    """The innermost loop inside ``nest`` (not ``nest`` itself) whose header holds the node the
    refusal points at; ``None`` when there is none."""
    found: list[c_ast.For] = []

    class _Loops(c_ast.NodeVisitor):
        def visit_For(self, node: c_ast.For) -> None:
            if node is not nest and refused.loc is not None and any(
                    loc_of(x) == refused.loc for part in (node.init, node.cond, node.next) if part is not None
                    for x in _nodes(part)):
                found.append(node)
            self.generic_visit(node)

    _Loops().visit(nest)
    return found[-1] if found else None


def check_read_only(nest: c_ast.For, loop: c_ast.For, symbols: SymbolTable) -> None:
    """That ``loop`` (inside ``nest``) only reads memory: it assigns only its iterator, names
    declared inside it and scalars declared in ``nest``'s body, leaves only by its condition,
    calls only pure math functions, and its iterator, when declared outside the nest, is named
    nowhere else in the nest. :raises NotSurrogate: why not."""
    it = _iterator(loop)
    if it is None or loop.cond is None:
        raise NotSurrogate("an inner loop with bounds read from memory has no 'i = start' or 'int i = start' "
                           "header with a condition")
    what = f"the inner loop '{it}', whose bounds are read from memory,"
    row_scalars = _visible_scalars(nest, loop)
    own = _declared(loop) | {it}
    outer = _enclosing_iterators(nest, loop)
    for node in _nodes(loop):
        if isinstance(node, _LEAVES):
            raise NotSurrogate(f"{what} holds a '{type(node).__name__.lower()}'")
        if isinstance(node, c_ast.FuncCall) and not (isinstance(node.name, c_ast.ID)
                                                     and node.name.name in PURE_FUNCTIONS):
            raise NotSurrogate(f"{what} calls '{c_text(node.name)}'")
        target = _assigned(node)
        if target is None:
            continue
        if isinstance(target, c_ast.ArrayRef) and _row_element(target, outer, own | row_scalars, symbols):
            continue
        if not (isinstance(target, c_ast.ID) and (target.name in own or target.name in row_scalars)):
            raise NotSurrogate(f"{what} writes '{c_text(target)}': only its iterator, the scalars declared "
                               "in the row's body and elements indexed by the outer loops alone may change in it")
    if isinstance(loop.init, c_ast.Assignment):
        decl = symbols.decls.get(it)
        if not (isinstance(decl, c_ast.TypeDecl) and isinstance(decl.type, c_ast.IdentifierType)
                and not {"float", "double", "_Bool"} & set(decl.type.names)) or it in _declared(nest):
            raise NotSurrogate(f"{what} has an iterator that is not an integer declared before the nest")
        outside = sum(1 for x in _nodes(nest) if isinstance(x, c_ast.ID) and x.name == it) \
            - sum(1 for x in _nodes(loop) if isinstance(x, c_ast.ID) and x.name == it)
        if outside:
            raise NotSurrogate(f"{what} has an iterator that the nest also uses outside that loop")


def rows_work_c(nest: c_ast.For, loops: tuple[c_ast.For, ...]) -> str:
    """An estimate, as C over the user's names in ``double`` arithmetic, of the statement
    instances the data-bounded ``loops`` run over all iterations of ``nest``: per loop its body's
    statements times the nonzeros ``E(hi - 1) - S(lo)`` when its start ``S(r)`` and end ``E(r)``
    telescope (``E(r) == S(r + 1)``, as written or through the row's constant temporaries) and it
    runs in every iteration of ``nest`` (an item of its body, which nothing leaves early);
    ``""`` when some loop does not (the caller then counts it once per row: fewer operations than
    it runs, so the guard chooses the parallel loop later than it should, never wrongly)."""
    head = _outer_range(nest)
    if head is None or any(isinstance(x, _LEAVES) for x in _nodes(nest.stmt)):
        return ""
    r, lo, hi = head
    items = list(nest.stmt.block_items or []) if isinstance(nest.stmt, c_ast.Compound) else [nest.stmt]
    consts = _row_constants(nest, items)
    inside = _declared(nest.stmt)
    terms = []
    for loop in loops:
        if not any(x is loop for x in items):
            return ""
        it = _iterator(loop)
        cond = loop.cond
        start = _start(loop)
        if it is None or start is None or not (isinstance(cond, c_ast.BinaryOp) and cond.op == "<"
                                               and isinstance(cond.left, c_ast.ID) and cond.left.name == it):
            return ""
        first, end = _resolved(start, consts, inside), _resolved(cond.right, consts, inside)
        if first is None or end is None:
            return ""
        step = c_ast.BinaryOp("+", c_ast.ID(r), c_ast.Constant("int", "1"))
        if c_text(_substituted(first, r, step)) != c_text(end):
            return ""
        last_row = c_ast.BinaryOp("-", c_ast.ID(f"({hi})"), c_ast.Constant("int", "1"))
        count = (f"((double)({c_text(_substituted(end, r, last_row))}) - "
                 f"(double)({c_text(_substituted(first, r, c_ast.ID(f'({lo})')))}))")
        statements = max(1, sum(1 for x in _nodes(loop.stmt) if isinstance(x, c_ast.Assignment | c_ast.UnaryOp)
                                and _assigned(x) is not None))
        terms.append(f"{statements}.0 * (({hi}) > ({lo}) ? {count} : 0.0)")
    return " + ".join(terms)


# -- helpers


def _original(nest: c_ast.For, loop: c_ast.For) -> c_ast.For:
    """The loop of ``nest`` that ``loop`` (of a copy of it) copies: the one at its place in the text."""
    return next(x for x in _nodes(nest) if isinstance(x, c_ast.For) and x.coord is not None and loop.coord is not None
                and (x.coord.line, x.coord.column) == (loop.coord.line, loop.coord.column))


def _nodes(node: c_ast.Node) -> list[c_ast.Node]:
    out = [node]
    for _, child in node.children():
        out += _nodes(child)
    return out


def _iterator(loop: c_ast.For) -> str | None:
    init = loop.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None \
            and isinstance(init.decls[0].type, c_ast.TypeDecl):
        return str(init.decls[0].name)
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        return str(init.lvalue.name)
    return None


def _start(loop: c_ast.For) -> c_ast.Node | None:
    init = loop.init
    if isinstance(init, c_ast.DeclList):
        return init.decls[0].init
    if isinstance(init, c_ast.Assignment):
        return init.rvalue
    return None


def _assigned(node: c_ast.Node) -> c_ast.Node | None:
    """What ``node`` assigns (``x = ...``, ``x += ...``, ``x++``), else ``None``."""
    if isinstance(node, c_ast.Assignment):
        return node.lvalue
    if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
        return node.expr
    return None


def _row_element(target: c_ast.ArrayRef, outer: set[str], inner: set[str], symbols: SymbolTable) -> bool:
    """``target`` is an element of an array or pointer variable at subscripts that name only the
    loops around the data-bounded loop (``y[r]``, ``diag[r]``, ``out[r*m + c]``) and constants:
    one element for the whole inner loop, however often it runs, which the surrogate writes as
    well, so the model sees every element the row writes."""
    base: c_ast.Node = target
    subs: list[c_ast.Node] = []
    while isinstance(base, c_ast.ArrayRef):
        subs.append(base.subscript)
        base = base.name
    if not isinstance(base, c_ast.ID) or base.name in inner:
        return False
    var = symbols.variable(base.name)
    if var is None or var.kind not in ("array", "pointer"):
        return False
    for sub in subs:
        for x in _nodes(sub):
            if isinstance(x, c_ast.ID) and x.name not in outer:
                return False
            if not isinstance(x, c_ast.ID | c_ast.Constant | c_ast.BinaryOp | c_ast.UnaryOp) \
                    or (isinstance(x, c_ast.UnaryOp) and x.op not in ("-", "+")) \
                    or (isinstance(x, c_ast.BinaryOp) and x.op not in ("+", "-", "*")):
                return False
    return True


def _enclosing_iterators(nest: c_ast.For, loop: c_ast.For) -> set[str]:
    """The iterators of ``nest`` and of the loops of it around ``loop``."""
    out: set[str] = set()

    def walk(node: c_ast.Node, around: list[str]) -> bool:
        if node is loop:
            out.update(around)
            return True
        here = [*around, it] if isinstance(node, c_ast.For) and (it := _iterator(node)) else around
        return any(walk(child, here) for _, child in node.children())

    walk(nest, [])
    return out


def _declared(node: c_ast.Node) -> set[str]:
    return {str(x.name) for x in _nodes(node) if isinstance(x, c_ast.Decl) and x.name}


def _visible_scalars(nest: c_ast.For, loop: c_ast.For) -> set[str]:
    """The scalars (not ``static``) declared inside ``nest`` in scopes around ``loop``, before it:
    the names ``loop`` may assign that are new in every iteration of ``nest``."""
    out: set[str] = set()

    def take(d: c_ast.Node) -> None:
        if isinstance(d, c_ast.Decl) and d.name and isinstance(d.type, c_ast.TypeDecl) \
                and "static" not in (d.storage or []):
            out.add(str(d.name))
        elif isinstance(d, c_ast.DeclList):
            for x in d.decls:
                take(x)

    def walk(node: c_ast.Node) -> bool:
        """Whether ``loop`` is under ``node`` (collecting the declarations on the way)."""
        if node is loop:
            return True
        if isinstance(node, c_ast.Compound):
            seen: list[c_ast.Node] = []
            for item in node.block_items or []:
                if walk(item):
                    for d in seen:
                        take(d)
                    return True
                seen.append(item)
            return False
        for _, child in node.children():
            if walk(child):
                if isinstance(node, c_ast.For) and node is not nest and node.init is not None:
                    take(node.init)
                return True
        return False

    walk(nest.stmt)
    return out


def _one_iteration(loop: c_ast.For, symbols: SymbolTable) -> c_ast.Compound:
    """``{ int p = start; if (cond) body }``: the loop's surrogate (its iterator a fresh local)."""
    init = loop.init
    if isinstance(init, c_ast.DeclList):
        decl = copy.deepcopy(init.decls[0])
    else:
        assert isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID)
        name = str(init.lvalue.name)
        decl = c_ast.Decl(name, [], [], [], [], copy.deepcopy(symbols.decls[name]), copy.deepcopy(init.rvalue),
                          None, coord=init.coord)
    return c_ast.Compound([decl, c_ast.If(loop.cond, loop.stmt, None, coord=loop.coord)], coord=loop.coord)


def _replace_child(root: c_ast.Node, old: c_ast.Node, new: c_ast.Node) -> None:
    for attr in root.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(root, attr, None)
        if value is old:
            setattr(root, attr, new)
            return
        if isinstance(value, list):
            for k, v in enumerate(value):
                if v is old:
                    value[k] = new
                    return
    for _, child in root.children():
        _replace_child(child, old, new)


def _outer_range(nest: c_ast.For) -> tuple[str, str, str] | None:
    """``(r, lo, hi)`` of ``for (r = lo; r < hi; r++)`` (``<=``: ``hi`` is one more), else ``None``."""
    r = _iterator(nest)
    start = _start(nest)
    cond, step = nest.cond, nest.next
    if r is None or start is None or not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=")
                                          and isinstance(cond.left, c_ast.ID) and cond.left.name == r):
        return None
    if not (isinstance(step, c_ast.UnaryOp) and step.op in ("++", "p++") and isinstance(step.expr, c_ast.ID)
            and step.expr.name == r):
        return None
    hi = c_text(cond.right) if cond.op == "<" else f"{c_text(cond.right)} + 1"
    return r, c_text(start), hi


def _row_constants(nest: c_ast.For, items: list[c_ast.Node]) -> dict[str, c_ast.Node]:
    """The scalars declared with a value as items of ``nest``'s body and never assigned in it."""
    assigned = {x.name for n in _nodes(nest) for x in [_assigned(n)] if isinstance(x, c_ast.ID)}
    out: dict[str, c_ast.Node] = {}
    for item in items:
        decls = item.decls if isinstance(item, c_ast.DeclList) else [item] if isinstance(item, c_ast.Decl) else []
        for d in decls:
            if isinstance(d, c_ast.Decl) and d.init is not None and isinstance(d.type, c_ast.TypeDecl) \
                    and d.name not in assigned:
                out[str(d.name)] = d.init
    return out


def _resolved(e: c_ast.Node, consts: dict[str, c_ast.Node], inside: set[str]) -> c_ast.Node | None:
    """``e`` with the row's constants replaced by their values (``None`` where it still names
    something declared in the row: ``inside``)."""
    out = copy.deepcopy(e)
    for _ in range(4):
        names = {x.name for x in _nodes(out) if isinstance(x, c_ast.ID)} & inside
        if not names:
            return out
        if names - set(consts):
            return None
        for n in names:
            out = _substituted(out, n, consts[n])
    return None


def _substituted(e: c_ast.Node, name: str, value: c_ast.Node) -> c_ast.Node:
    """A copy of ``e`` with every ``name`` (not a member name) replaced by ``(value)``."""
    if isinstance(e, c_ast.ID) and e.name == name:
        return copy.deepcopy(value)
    out = copy.copy(e)
    for attr in out.__slots__:
        if attr in ("coord", "__weakref__") or (isinstance(e, c_ast.StructRef) and attr == "field"):
            continue
        v = getattr(out, attr, None)
        if isinstance(v, c_ast.Node):
            setattr(out, attr, _substituted(v, name, value))
        elif isinstance(v, list):
            setattr(out, attr, [_substituted(x, name, value) if isinstance(x, c_ast.Node) else x for x in v])
    return out
