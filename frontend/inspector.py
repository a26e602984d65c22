"""Run-time footprints of gathers: a nest's parallel loop -> C that runs its index computations
alone and finds the smallest and largest element it reads of each gathered pointer.

``f[q] = fin[(ys*nx + xs)*Q + q]`` with ``xs``/``ys`` wrapped around the grid, or
``src->px[(y0*src->w + x0)*c + ch]`` with ``y0`` clamped: the model does not locate these reads
(``mdpoly.frontend.opaque_reads``), so without ``restrict`` nothing proves that the arrays the
nest writes stay clear of them. The *inspector* is the nest reduced to what computes those
subscripts: loop headers, the temporaries the subscripts depend on, and for every gathered read
``A[e]`` a record of ``e`` into ``mdp_ins_lo_A``/``mdp_ins_hi_A`` (an OpenMP ``min``/``max``
reduction over the parallel loop). The run-time alias checks then compare ``A + lo .. A + hi``
with every written range (``mdpoly.frontend.alias``); when they overlap, the nest runs as written.

It is exact where it matters: a temporary is *pure* when every assignment to it reads only the
iterators, scalars and struct members the nest does not write, ``const`` tables (``static const
int cx[9] = {...}``), arrays the nest reads at located subscripts and never writes (``idx`` in
``src[idx[i]]``: the run-time checks keep every write off them), side-effect-free math functions
and other pure temporaries, under conditions and loop headers that are pure as well (a condition
around a temporary's declaration does not count: nothing outside it reads that temporary). Where
the checks pass, pure values are the ones the nest computes, so the inspector reads exactly the
subscripts the nest will, and nothing else. A gathered read under a condition that is not pure
is recorded unconditionally (a larger range: the check may fail, never pass wrongly), provided
its subscript reads no memory and divides by nothing, so evaluating it where the nest would not
is harmless. A gathered pointer that the caller lists as ``readable`` (``ci`` in CSR's
``x[ci[p]]`` or ``if (ci[p] == r)``) may be read too: every element of it the inspection reads
is recorded in its own range (a pure condition's gathered reads as well; a pure loop header
must read none), so where the checks keep every write off that range, the inspection read the
values the nest reads -- by induction along the inspection's reads, each of which is of a
constant table, of a located range the checks cover, or of an element recorded and checked.
Anything else -- a subscript that depends on memory the nest may write, a gather of a gather
the caller does not list, ``goto`` -- refuses, and the nest keeps its reason.

Index temporaries that read memory (``int src = col[e]; s += pr[src] / outdeg[src];``, ``const int
j = perm[i]``, ``int bin = key[i]``) need no rewriting: the nest runs as written, so each use sees
the value its definition read, and the inspection replays the definition. A pointer read in the
value of a scalar that a subscript or a loop header reads (or a condition, where the nest declares
the scalar an integer), through any chain of such scalars, counts as read where that scalar is
(``index_and_control_arrays``), so the caller lists it as readable exactly as it does ``col`` in
``pr[col[e]]``, and the induction above is unchanged: the inspection's read of ``col[e]`` is
recorded in ``col``'s range, which the checks compare with every range the nest writes through a
pointer of ``col``'s type (a store of another type cannot change an ``int``: C's aliasing rule,
as for the direct subscript); where they pass, no store of the nest reaches what the definition
reads, so the inspection's temporary equals the nest's at every use, however many stores lie
between the definition and the uses. A temporary assigned again (``if (c >= n) c = n - 1;``) is
replayed with its assignments; one whose value flows from one iteration of the parallel loop to
the next is a dependence the model refuses, and one whose array the nest writes is no readable
pointer (the model refuses a gather of an array the nest writes, and a data-bounded loop that
writes it).
"""

from __future__ import annotations

import copy

from pycparser import c_ast

from mdpoly.frontend.c_text import SourceGenerator
from mdpoly.frontend.normalize.ast_util import names_in, walk_nodes
from mdpoly.frontend.scop_exprs import PURE_FUNCTIONS
from mdpoly.frontend.scop_state import _names_in, _WrittenNames
from mdpoly.frontend.symbols import c_text
from mdpoly.ir.mdh import INSPECT_HI, INSPECT_LO

_T = "mdp_ins_t"
_LONG_MAX = "((long)(~0UL >> 1))"


class NotInspectable(Exception):
    """The gathers' subscripts cannot be computed ahead of the nest; the message says why."""


def const_tables(ast: c_ast.FileAST, func: c_ast.FuncDef) -> frozenset[str]:
    """Names of the arrays declared ``const`` with an initializer, at file scope or in ``func``'s
    body outside any loop: their elements are fixed for the program's life."""
    out: set[str] = set()

    def take(decl: c_ast.Node) -> None:
        if (isinstance(decl, c_ast.Decl) and isinstance(decl.type, c_ast.ArrayDecl) and decl.init is not None
                and "const" in _element_quals(decl.type)):
            out.add(decl.name)

    for ext in ast.ext:
        take(ext)
    for item in func.body.block_items or []:
        take(item)
    return frozenset(out)


def index_and_control_arrays(nest: c_ast.For) -> frozenset[str]:
    """The C text of the arrays ``nest`` reads inside a subscript (``ci`` in ``x[ci[p]]``) or a
    condition (of an ``if``, a loop, a ``?:``): the reads an inspection may need to evaluate.
    Through scalars too: an array the value of a scalar reads counts where a subscript or a loop
    header reads that scalar (``col`` in ``int src = col[e]; s += pr[src];``), or a condition
    reads it and the nest declares it an integer (``int c = ci[p]; if (c == r)``; a ``double``
    sum a condition tests is not worth computing ahead), and so on through their values."""
    out: set[str] = set()
    wanted: set[str] = set()   # scalars whose values an inspection may need
    tested: set[str] = set()   # names conditions read
    values: dict[str, list[c_ast.Node]] = {}   # scalar -> the expressions its definitions read
    integers: set[str] = set()   # declared in the nest with an integer type (every time)
    others: set[str] = set()

    def bases(e: c_ast.Node | None, names: set[str]) -> None:
        if e is None:
            return
        names.update(names_in(e))   # members (src->c) are no names
        for n in walk_nodes(e):
            if isinstance(n, c_ast.ArrayRef):
                out.add(c_text(n.name))

    class _V(c_ast.NodeVisitor):
        def visit_ArrayRef(self, node: c_ast.ArrayRef) -> None:
            bases(node.subscript, wanted)
            self.generic_visit(node)

        def visit_If(self, node: c_ast.If) -> None:
            bases(node.cond, tested)
            self.generic_visit(node)

        visit_TernaryOp = visit_If
        visit_While = visit_If
        visit_DoWhile = visit_If

        def visit_For(self, node: c_ast.For) -> None:
            for part in (node.init, node.cond, node.next):
                bases(part, wanted)
            self.generic_visit(node)

        def visit_Decl(self, node: c_ast.Decl) -> None:
            if node.name:
                (integers if _integer_scalar(node.type) else others).add(node.name)
                if node.init is not None:
                    values.setdefault(node.name, []).append(node.init)
            self.generic_visit(node)

        def visit_Assignment(self, node: c_ast.Assignment) -> None:
            if isinstance(node.lvalue, c_ast.ID):
                values.setdefault(node.lvalue.name, []).append(node.rvalue)
            self.generic_visit(node)

    _V().visit(nest)
    wanted |= tested & (integers - others)
    done: set[str] = set()
    while wanted - done:   # what the value of a scalar an index or a condition reads reads, too
        name = min(wanted - done)
        done.add(name)
        for value in values.get(name, []):
            bases(value, wanted)
    return frozenset(out)


def _integer_scalar(t: c_ast.Node) -> bool:
    """A declared type is an integer scalar spelled with C's own words (``int``, ``long``,
    ``unsigned char``; a typedef name counts as no integer)."""
    words = {"char", "short", "int", "long", "signed", "unsigned"}
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and bool(t.type.names) and set(t.type.names) <= words)


def _element_quals(t: c_ast.Node) -> list[str]:
    while isinstance(t, c_ast.ArrayDecl):
        t = t.type
    return list(getattr(t, "quals", None) or [])


def inspector_code(nest: c_ast.For, gathered: dict[str, str], tables: frozenset[str],
                   readable: frozenset[str] = frozenset(), updated: frozenset[str] = frozenset()) -> str:
    """C that sets ``long mdp_ins_lo_<name>``/``mdp_ins_hi_<name>`` (declared by it) to the
    smallest and largest subscript ``nest`` reads each array of ``gathered`` (model name -> the
    C text of the array, ``fin`` or ``src->px``) at; both ``0`` when it reads none. The scalars
    the nest assigns that are declared before it are private to each thread of the inspection.
    ``readable``: the C text of the arrays the nest reads where the model locates the reads and
    never writes (``idx`` in ``src[idx[i]]``): the run-time checks keep the nest's writes off
    them, so where those pass, the inspection read the values the nest reads. ``updated``: the
    names of ``gathered`` the nest updates (``h[px[i]]++``, ``mdpoly.frontend.scatter``): their
    range is the elements it updates, left empty (``lo > hi``) when it updates none.
    :raises NotInspectable: with the reason."""
    by_text = {text: name for name, text in gathered.items()}
    purity = _Purity(nest, tables, readable)
    body = _Reducer(purity, by_text).loop(copy.deepcopy(nest))
    if body is None:
        raise NotInspectable("the loop reads no gathered element")
    inside = _WrittenNames()
    inside.visit(nest)
    assigned = sorted(purity.assigned - inside.declared)
    names = sorted(gathered)
    decls = [f"long {INSPECT_LO}{n} = {_LONG_MAX}, {INSPECT_HI}{n} = -{_LONG_MAX} - 1;" for n in names]
    clauses = [f"reduction(min:{INSPECT_LO}{n}) reduction(max:{INSPECT_HI}{n})" for n in names]
    if assigned:
        clauses.append(f"private({', '.join(assigned)})")
    words = ("omp", "parallel", "for", "reduction", "min", "max", "private", "num_threads")
    push = [f'#pragma push_macro("{w}")\n#undef {w}' for w in words]
    pop = [f'#pragma pop_macro("{w}")' for w in reversed(words)]
    empty = [f"if ({INSPECT_LO}{n} > {INSPECT_HI}{n}) {INSPECT_LO}{n} = {INSPECT_HI}{n} = 0;" for n in names
             if n not in updated]
    members: dict[str, str] = {}
    body = _finish(body, purity, members)
    hoisted = [f"__auto_type const {local} = {text};" for text, local in members.items()]
    loop = SourceGenerator().visit(body).rstrip()
    return "\n".join([*decls, *hoisted, *push,
                      "#pragma omp parallel for " + " ".join(clauses) + " num_threads(mdp_team())", loop, *pop, *empty])


class _Purity:
    """Which scalars the nest assigns, and which of them are pure (see the module docstring)."""

    def __init__(self, nest: c_ast.For, tables: frozenset[str], readable: frozenset[str] = frozenset()) -> None:
        self.tables = tables
        self.readable = readable
        self.defs: dict[str, list[c_ast.Node]] = {}   # name -> expressions its value depends on
        self.members: set[str] = set()                # struct members the nest assigns (C text)
        self.assigned: set[str] = set()
        self._collect(nest, [], {})
        self.pure = set(self.assigned)
        self.safe = self.pure   # pure, and computed without memory reads or divisions
        self._narrow(memory=True)
        self.safe = set(self.pure)
        self._narrow(memory=False)

    def _narrow(self, memory: bool) -> None:
        """Drop from ``pure`` (``safe`` without ``memory``) what some assignment makes impure."""
        names = self.pure if memory else self.safe
        changed = True
        while changed:
            changed = False
            for name in sorted(names):
                if not all(self.expr_pure(e, memory) for e in self.defs.get(name, [])):
                    names.discard(name)
                    changed = True

    def _define(self, target: c_ast.Node, deps: list[c_ast.Node]) -> None:
        if isinstance(target, c_ast.ID):
            self.assigned.add(target.name)
            self.defs.setdefault(target.name, []).extend(deps)
        elif isinstance(target, c_ast.StructRef):
            self.members.add(c_text(target))

    def _collect(self, node: c_ast.Node | None, control: list[c_ast.Node], scope: dict[str, int]) -> None:
        """Every assignment under ``node``, with the conditions that decide whether it runs.
        ``scope``: the variables declared in the nest that are visible here -> how many of
        ``control`` were around their declaration. Those conditions never matter to a value
        declared under them (no one outside reads it); the name may be declared again elsewhere
        (``for (int q = 0; ...)`` in two branches)."""
        if node is None:
            return

        def own(name: str) -> list[c_ast.Node]:
            return control[scope.get(name, 0):]

        if isinstance(node, c_ast.Decl):
            scope[node.name] = len(control)
            if node.init is not None or isinstance(node.type, c_ast.TypeDecl):
                self._define(c_ast.ID(node.name), [*([node.init] if node.init is not None else [])])
            return
        if isinstance(node, c_ast.Assignment):
            name = node.lvalue.name if isinstance(node.lvalue, c_ast.ID) else ""
            deps = [node.rvalue, *own(name)] + ([node.lvalue] if node.op != "=" else [])
            self._define(node.lvalue, deps)
            self._collect(node.rvalue, control, scope)
            return
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            name = node.expr.name if isinstance(node.expr, c_ast.ID) else ""
            self._define(node.expr, [node.expr, *own(name)])
            return
        if isinstance(node, c_ast.For):
            inner = dict(scope)
            head = [x for x in (node.cond,) if x is not None]
            self._collect(node.init, control, inner)
            self._collect(node.next, [*control, *head], inner)
            self._collect(node.stmt, [*control, *head], inner)
            return
        if isinstance(node, c_ast.Compound):
            inner = dict(scope)
            for item in node.block_items or []:
                self._collect(item, control, inner)
            return
        if isinstance(node, c_ast.While | c_ast.DoWhile):
            self._collect(node.stmt, [*control, node.cond], scope)
            return
        if isinstance(node, c_ast.If):
            self._collect(node.iftrue, [*control, node.cond], scope)
            self._collect(node.iffalse, [*control, node.cond], scope)
            return
        for _, child in node.children():
            self._collect(child, control, scope)

    def expr_pure(self, e: c_ast.Node | None, memory: bool = True) -> bool:
        """``e`` reads only pure things; with ``memory`` false, also no array element and no division."""
        if e is None or isinstance(e, c_ast.Constant | c_ast.Typename):
            return True
        if isinstance(e, c_ast.ID):
            return e.name not in self.assigned or e.name in (self.pure if memory else self.safe)
        if isinstance(e, c_ast.StructRef):
            return (memory and isinstance(e.name, c_ast.ID) and c_text(e) not in self.members
                    and (e.name.name not in self.assigned))
        if isinstance(e, c_ast.ArrayRef):
            base = e.name
            return (memory and ((isinstance(base, c_ast.ID) and base.name in self.tables
                                 and base.name not in self.assigned) or c_text(base) in self.readable)
                    and self.expr_pure(e.subscript))
        if isinstance(e, c_ast.Cast):
            return self.expr_pure(e.expr, memory)
        if isinstance(e, c_ast.UnaryOp):
            if e.op in ("-", "+", "!", "~"):
                return self.expr_pure(e.expr, memory)
            return e.op == "sizeof"
        if isinstance(e, c_ast.BinaryOp):
            if not memory and e.op in ("/", "%"):
                return False
            return self.expr_pure(e.left, memory) and self.expr_pure(e.right, memory)
        if isinstance(e, c_ast.TernaryOp):
            return all(self.expr_pure(x, memory) for x in (e.cond, e.iftrue, e.iffalse))
        if isinstance(e, c_ast.FuncCall):
            args = e.args.exprs if e.args is not None else []
            return (isinstance(e.name, c_ast.ID) and e.name.name in PURE_FUNCTIONS
                    and all(self.expr_pure(a, memory) for a in args))
        return False


class _Record(c_ast.ID):
    """``A[e]`` read by the nest: ``e`` goes into ``A``'s range (printed by ``_finish``)."""

    def __init__(self, array: str, subscript: c_ast.Node) -> None:
        super().__init__("")
        self.array = array
        self.subscript = subscript

    def text(self) -> str:
        lo, hi = INSPECT_LO + self.array, INSPECT_HI + self.array
        return (f"{{ long {_T} = (long)({c_text(self.subscript)}); if ({_T} < {lo}) {lo} = {_T};"
                f" if ({_T} > {hi}) {hi} = {_T}; }}")


class _Reducer:
    """The nest reduced to its index computations, with the gathered reads recorded."""

    def __init__(self, purity: _Purity, by_text: dict[str, str]) -> None:
        self.p = purity
        self.by_text = by_text

    def loop(self, node: c_ast.For) -> c_ast.For | None:
        if node.cond is None or not self.p.expr_pure(node.cond) or not self._step_pure(node.next) \
                or not self._init_pure(node.init):
            raise NotInspectable("a loop header around a gathered read depends on data the nest reads")
        self._no_gathers_in_header(node)
        body = self.stmt(node.stmt, pure_control=True)
        if not body:
            return None
        node.stmt = _block(body)
        return node

    def _no_gathers_in_header(self, node: c_ast.For) -> None:
        """A loop header reads no gathered element (its reads would need recording at every
        evaluation of the condition)."""
        if any(self.has_gather(part) for part in (node.init, node.cond, node.next)):
            raise NotInspectable("a loop header reads a gathered element")

    def has_gather(self, e: c_ast.Node | None) -> bool:
        """Whether ``e`` reads a gathered array."""
        if e is None:
            return False
        if isinstance(e, c_ast.ArrayRef) and c_text(e.name) in self.by_text:
            return True
        return any(self.has_gather(child) for _, child in e.children())

    def _init_pure(self, init: c_ast.Node | None, memory: bool = True) -> bool:
        """A loop's initialisation assigns only pure temporaries (reading no memory, dividing by
        nothing, without ``memory``)."""
        if init is None:
            return True
        if isinstance(init, c_ast.DeclList):
            return all(d.name in self.p.pure and self.p.expr_pure(d.init, memory) for d in init.decls)
        return self._step_pure(init, memory)

    def _step_pure(self, step: c_ast.Node | None, memory: bool = True) -> bool:
        """A loop's step (``x++``, ``x += 2``, ``i++, j--``) assigns only pure temporaries."""
        if step is None:
            return True
        if isinstance(step, c_ast.ExprList):
            return all(self._step_pure(x, memory) for x in step.exprs)
        if isinstance(step, c_ast.UnaryOp) and step.op in ("++", "--", "p++", "p--"):
            return isinstance(step.expr, c_ast.ID) and step.expr.name in self.p.pure
        if isinstance(step, c_ast.Assignment):
            return (isinstance(step.lvalue, c_ast.ID) and step.lvalue.name in self.p.pure
                    and self.p.expr_pure(step.rvalue, memory))
        return False

    def records(self, e: c_ast.Node | None, pure_control: bool) -> list[c_ast.Node]:
        """A record statement for every gathered read inside ``e``."""
        out: list[c_ast.Node] = []
        if e is None:
            return out
        if isinstance(e, c_ast.ArrayRef) and c_text(e.name) in self.by_text:
            if not self.p.expr_pure(e.subscript, memory=pure_control):
                raise NotInspectable(f"the subscript of '{c_text(e)}' depends on data the nest reads from memory")
            out.append(_Record(self.by_text[c_text(e.name)], e.subscript))
            return out + self.records(e.subscript, pure_control)
        for _, child in e.children():
            out += self.records(child, pure_control)
        return out

    def stmt(self, node: c_ast.Node | None, pure_control: bool) -> list[c_ast.Node]:
        """``node`` reduced: the statements that compute pure temporaries and the records of its
        gathered reads. Without ``pure_control`` the nest may not run ``node`` where the
        inspection does: what is kept must then read no memory and divide by nothing."""
        if node is None:
            return []
        m = pure_control
        if isinstance(node, c_ast.Compound):
            items = [x for it in node.block_items or [] for x in self.stmt(it, m)]
            return [c_ast.Compound(items)] if items else []
        if isinstance(node, c_ast.Decl):
            recs = self.records(node.init, m)
            if isinstance(node.type, c_ast.TypeDecl) and node.name in self.p.pure and self.p.expr_pure(node.init, m):
                return [node, *recs]
            return recs
        if isinstance(node, c_ast.Assignment):
            recs = self.records(node.rvalue, m) + self.records(node.lvalue, m)
            if isinstance(node.lvalue, c_ast.ID) and node.lvalue.name in self.p.pure \
                    and self.p.expr_pure(node.rvalue, m) and (node.op == "=" or self.p.expr_pure(node.lvalue, m)):
                return [node, *recs]
            return recs
        if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "--", "p++", "p--"):
            if isinstance(node.expr, c_ast.ID):
                return [node] if node.expr.name in self.p.pure else []
            return self.records(node.expr, m)   # an update ``h[px[i]]++``: its element recorded
        if isinstance(node, c_ast.For):
            if node.cond is not None and self._init_pure(node.init, m) and self.p.expr_pure(node.cond, m) \
                    and self._step_pure(node.next, m):
                self._no_gathers_in_header(node)
                body = self.stmt(node.stmt, m)
                if not body:
                    return []
                ends = _endpoints(node, body)
                if ends is not None:
                    return [ends]
                node.stmt = _block(body)
                return [node]
            self._no_gathers_in_header(node)
            return self._flat(node.stmt)
        if isinstance(node, c_ast.If):
            if m and self.p.expr_pure(node.cond):
                t, f = self.stmt(node.iftrue, True), self.stmt(node.iffalse, True)
                cond = self.records(node.cond, True)   # a gathered read that decides (``ci[p] == r``)
                if not t and not f:
                    return cond
                # braces around each branch: a record printed alone ends in ';', which would end the 'if'
                return [*cond, c_ast.If(node.cond, c_ast.Compound(t), c_ast.Compound(f) if f else None)]
            return [*self.records(node.cond, False), *self._flat(node.iftrue), *self._flat(node.iffalse)]
        if isinstance(node, c_ast.While | c_ast.DoWhile):
            return [*self.records(node.cond, False), *self._flat(node.stmt)]
        if isinstance(node, c_ast.Break | c_ast.Continue | c_ast.Return | c_ast.EmptyStatement):
            return []   # every path's reads recorded: a larger range, never a smaller one
        if isinstance(node, c_ast.Goto | c_ast.Label | c_ast.Switch):
            raise NotInspectable(f"'{type(node).__name__.lower()}' in the nest")
        return self.records(node, m)

    def _flat(self, node: c_ast.Node | None) -> list[c_ast.Node]:
        """``node`` run where the nest may not run it: its gathered reads recorded always."""
        return self.stmt(node, pure_control=False)


def _finish(node: c_ast.Node, purity: _Purity, members: dict[str, str]) -> c_ast.Node:
    """``node`` with its records printed and the struct members it reads replaced by locals
    read once before the region (``members``: C text -> local): a local struct whose address
    reached the outlined region would stay in memory in the code around it, which slowed a
    k-means program's main loop 2.5x at one thread. Every member left in the inspection is one
    the nest reads and never writes."""
    if isinstance(node, _Record):
        node.subscript = _finish(node.subscript, purity, members)
        return c_ast.ID(node.text())
    if isinstance(node, c_ast.StructRef) and purity.expr_pure(node):
        return c_ast.ID(members.setdefault(c_text(node), f"mdp_ins_m{len(members)}"))
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.Node):
            setattr(node, attr, _finish(value, purity, members))
        elif isinstance(value, list):
            setattr(node, attr, [_finish(v, purity, members) if isinstance(v, c_ast.Node) else v for v in value])
    return node


def _endpoints(loop: c_ast.For, body: list[c_ast.Node]) -> c_ast.Node | None:
    """A loop whose reduced body is records only, each subscript linear in the loop's iterator
    (``(y0*w + x0)*c + ch`` over ``ch``), as the records at its first and last iteration (a
    linear function has its extremes there): ``if (lo < hi) { int ch = lo; records; ch = hi - 1;
    records; }``. ``None`` when that does not apply."""
    if len(body) == 1 and isinstance(body[0], c_ast.Compound):
        body = list(body[0].block_items or [])
    if not body or not all(isinstance(r, _Record) for r in body):
        return None
    init, cond, step = loop.init, loop.cond, loop.next
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
        it, first = init.decls[0].name, init.decls[0].init
        start: c_ast.Node = copy.deepcopy(init.decls[0])
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        it, first, start = init.lvalue.name, init.rvalue, copy.deepcopy(init)
    else:
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and isinstance(cond.left, c_ast.ID)
            and cond.left.name == it and it not in _names_in(cond.right)):
        return None
    unit = (isinstance(step, c_ast.UnaryOp) and step.op in ("++", "p++") and isinstance(step.expr, c_ast.ID)
            and step.expr.name == it) or (isinstance(step, c_ast.Assignment) and step.op == "+="
                                          and isinstance(step.lvalue, c_ast.ID) and step.lvalue.name == it
                                          and c_text(step.rvalue) == "1")
    if not unit or not all(_linear(r.subscript, it) for r in body if isinstance(r, _Record)):
        return None
    last = cond.right if cond.op == "<=" else c_ast.BinaryOp("-", cond.right, c_ast.Constant("int", "1"))
    again = c_ast.Assignment("=", c_ast.ID(it), last)
    copies = [_Record(r.array, copy.deepcopy(r.subscript)) for r in body if isinstance(r, _Record)]
    runs = c_ast.BinaryOp(cond.op, first, cond.right)
    return c_ast.If(runs, c_ast.Compound([start, *body, again, *copies]), None)


def _linear(e: c_ast.Node, it: str) -> bool:
    """``e`` is an affine function of ``it`` (sums, differences, products with one side free
    of it, integer casts); its other names do not change while ``it`` runs."""
    if it not in _names_in(e):
        return True
    if isinstance(e, c_ast.ID):
        return True
    if isinstance(e, c_ast.Cast):
        return _linear(e.expr, it)
    if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
        return _linear(e.expr, it)
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
        return _linear(e.left, it) and _linear(e.right, it)
    if isinstance(e, c_ast.BinaryOp) and e.op == "*":
        return (it not in _names_in(e.left) and _linear(e.right, it)) or (it not in _names_in(e.right) and _linear(e.left, it))
    return False


def _block(items: list[c_ast.Node]) -> c_ast.Node:
    return items[0] if len(items) == 1 and not isinstance(items[0], c_ast.Decl) else c_ast.Compound(items)
