"""Polyhedral model extraction: pycparser AST -> ``Candidate`` nests, each a ``Scop`` or a reason.

Which ``for`` statements are candidates (``find_candidates``): the outermost ``for``s between
``#pragma scop``/``#pragma endscop``; a ``for`` directly preceded by ``#pragma mdh(...)``; and,
when the file has neither kind of marker (or ``--all-nests``), every outermost ``for`` of every
function. Only nests of the main input file are considered, never those of headers.

``NestBuilder`` turns one candidate into a ``Scop``. It is a ``NodeVisitor`` with one method
per accepted statement kind; ``generic_visit`` raises ``UnsupportedInput``, so nothing inside a
candidate nest is skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import partial

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.bound_products import exact_signed
from mdpoly.frontend.delinearize import Delinearizer, Layout, Refuted, Relayout, may_wrap, row_elements
from mdpoly.frontend.expr_types import expr_type, involves_unsigned
from mdpoly.frontend.guarded_reads import bounds_of, guarded, mark_lazy
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.loop_types import BoundSide, HeaderChecker, HeaderMismatch, math_text
from mdpoly.frontend.normalize import normalize_candidate
from mdpoly.frontend.openmp import belongs_to_loop, functions_under_openmp, is_mdh, loop_directive, omp_kind
from mdpoly.frontend.parse import ParsedFile, pragma_text
from mdpoly.frontend.symbols import (
    FUNC_DECLS,
    SymbolTable,
    add_local_decl,
    c_text,
    symbols_for,
)
from mdpoly.ir.c_types import CType, parse_type
from mdpoly.ir.mdh import Access, Affine, Precondition
from mdpoly.ir.scop import (
    Binary,
    Call,
    Cast,
    Cond,
    Const,
    Expr,
    Loop,
    Ref,
    Scop,
    Statement,
    Unary,
    Var,
    Variable,
    expr_names,
    expr_refs,
)
from mdpoly.options import Options

# Side-effect-free math functions a statement may call.
PURE_FUNCTIONS = frozenset(
    [f + s for f in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "fabs", "pow", "sin", "cos",
                     "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                     "fmax", "fmin", "floor", "ceil", "round", "trunc", "fmod", "cbrt", "hypot", "erf", "erfc",
                     "fma", "copysign", "rint", "nearbyint", "fdim")
     for s in ("", "f", "l")] + ["abs", "labs", "llabs"]
)
# What <math.h> macros expand to under -std=c99 (INFINITY, HUGE_VAL, NAN, fabs...).
PURE_FUNCTIONS = PURE_FUNCTIONS | {f"__builtin_{f}" for f in PURE_FUNCTIONS} | {
    f"__builtin_{f}{s}" for f in ("inf", "huge_val", "nan") for s in ("", "f", "l")}

_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})
_BINARY_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^",
                         "&&", "||"})


def loc_of(node: c_ast.Node, fallback: SourceLoc | None = None) -> SourceLoc:
    c = node.coord
    if c is None or c.line is None:
        if fallback is None:
            return SourceLoc("<unknown>", 0, 0)
        return fallback
    return SourceLoc(c.file, c.line, c.column or 1)


# {{{ candidates


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate nest: the ``For`` node, where it lives, and how it was marked."""

    node: c_ast.For
    func: c_ast.FuncDef
    marked: bool
    pragma: c_ast.Pragma | None  # a ``#pragma mdh(...)`` among the loop's own pragmas
    omp_pragma: c_ast.Pragma | None = None  # the user's OpenMP directive sharing the loop among threads
    #: a band of a larger nest (``mdpoly.frontend.schedule``; ``node`` may be a new ``For`` over part of
    #: a loop's body): ``scope`` is the outermost nest, whose declarations are not visible around
    #: the band except ``host_decls`` (iterators and locals of the enclosing host loops).
    scope: c_ast.Node | None = None
    host_decls: tuple[c_ast.Decl, ...] = ()
    #: the pragmas directly before the loop that apply to it (``#pragma mdh``, OpenMP loop
    #: directives, ``GCC unroll``...; ``mdpoly.frontend.openmp.belongs_to_loop``): replaced with it
    pragmas: tuple[c_ast.Pragma, ...] = ()
    #: the innermost user OpenMP construct (``#pragma omp parallel``, ``single``...) around the nest
    omp_region: c_ast.Pragma | None = None

    @property
    def loc(self) -> SourceLoc:
        return loc_of(self.node)

    @property
    def function(self) -> str:
        return str(self.func.decl.name)


def _is_mdh(p: c_ast.Node) -> bool:
    return isinstance(p, c_ast.Pragma) and is_mdh(pragma_text(p))


def _is_marker(p: c_ast.Node) -> bool:
    return isinstance(p, c_ast.Pragma) and (pragma_text(p) in ("scop", "endscop") or _is_mdh(p))


class _MarkerFinder(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Pragma(self, node: c_ast.Pragma) -> None:
        self.found = self.found or _is_marker(node)


def _own_pragmas(run: list[c_ast.Pragma]) -> tuple[tuple[c_ast.Pragma, ...], c_ast.Pragma | None]:
    """Of the pragmas directly before a statement: those that apply to it as a loop (the last
    ones that ``belongs_to_loop``), and the OpenMP construct right before those whose
    structured block the statement is (``#pragma omp parallel`` before a loop or a block)."""
    k = len(run)
    while k > 0 and belongs_to_loop(run[k - 1]):
        k -= 1
    construct = run[k - 1] if k > 0 and omp_kind(pragma_text(run[k - 1])) == "construct" else None
    return tuple(run[k:]), construct


class _CandidateFinder(c_ast.NodeVisitor):
    def __init__(self, func: c_ast.FuncDef, auto: bool, region: c_ast.Pragma | None = None) -> None:
        self.func = func
        self.auto = auto
        self.region = region  # the innermost user OpenMP construct around what is visited
        self.found: list[Candidate] = []

    def visit_Compound(self, node: c_ast.Compound) -> None:
        in_scop = False
        run: list[c_ast.Pragma] = []  # the pragmas directly before the current item
        for item in node.block_items or []:
            if isinstance(item, c_ast.Pragma):
                t = pragma_text(item)
                if t == "scop":
                    in_scop = True
                elif t == "endscop":
                    in_scop = False
                run.append(item)
                continue
            own, construct = _own_pragmas(run)
            run = []
            region = construct or self.region
            mdh = next((p for p in own if _is_mdh(p)), None)
            loop = _labelled_for(item)
            if isinstance(loop, c_ast.For) and (in_scop or self.auto or mdh is not None):
                self.found.append(Candidate(loop, self.func, in_scop or mdh is not None, mdh,
                                            loop_directive(own), pragmas=own, omp_region=region))
            else:
                outer, self.region = self.region, region
                self.visit(item)
                self.region = outer

    def _body(self, stmt: c_ast.Node | None) -> None:
        """A statement in a body's place: an unbraced loop there (``if (c) for ...``) is a nest too."""
        if stmt is None:
            return
        if isinstance(_labelled_for(stmt), c_ast.For):
            self.visit_Compound(c_ast.Compound([stmt], coord=stmt.coord))
        else:
            self.visit(stmt)

    def visit_If(self, node: c_ast.If) -> None:
        self.visit(node.cond)
        self._body(node.iftrue)
        self._body(node.iffalse)

    def visit_While(self, node: c_ast.While) -> None:
        self._body(node.stmt)

    def visit_DoWhile(self, node: c_ast.DoWhile) -> None:
        self._body(node.stmt)


def _labelled_for(item: c_ast.Node) -> c_ast.Node:
    """The statement a chain of labels (``out: for ...``) stands before; ``item`` itself otherwise."""
    while isinstance(item, c_ast.Label):
        item = item.stmt
    return item


def find_candidates(parsed: ParsedFile, options: Options) -> list[Candidate]:
    """Candidate nests of the main file, in source order."""
    funcs = [e for e in parsed.ast.ext if isinstance(e, c_ast.FuncDef) and e.coord is not None
             and e.coord.file == parsed.path]
    mf = _MarkerFinder()
    for f in funcs:
        mf.visit(f)
    auto = options.all_nests or not mf.found
    under_openmp = functions_under_openmp(funcs)   # their nests run in a user's team already
    out: list[Candidate] = []
    for f in funcs:
        cf = _CandidateFinder(f, auto, under_openmp.get(str(f.decl.name)))
        cf.visit(f.body)
        out.extend(cf.found)
    return out


def stray_mdh_pragmas(parsed: ParsedFile, candidates: list[Candidate]) -> list[c_ast.Pragma]:
    """The ``#pragma mdh`` of the main file that annotate no candidate (not directly before a ``for``)."""
    used = {id(c.pragma) for c in candidates if c.pragma is not None}

    class _Mdh(c_ast.NodeVisitor):
        def __init__(self) -> None:
            self.found: list[c_ast.Pragma] = []

        def visit_Pragma(self, node: c_ast.Pragma) -> None:
            if _is_mdh(node) and id(node) not in used:
                self.found.append(node)

    v = _Mdh()
    for e in parsed.ast.ext:
        if isinstance(e, c_ast.FuncDef) and e.coord is not None and e.coord.file == parsed.path:
            v.visit(e)
    return v.found


def inner_candidates(cand: Candidate, culprit: SourceLoc | None = None) -> list[Candidate]:
    """The outermost nests inside the loop body of ``cand`` (a nest kept as a whole), as
    candidates of their own; a nest that holds ``culprit`` (where the reason to keep ``cand``
    is) is not one -- that reason explains it -- but the nests inside it are, in the same way."""
    cf = _CandidateFinder(cand.func, True, cand.omp_region)
    cf.visit(cand.node.stmt if isinstance(cand.node.stmt, c_ast.Compound) else c_ast.Compound([cand.node.stmt]))
    out: list[Candidate] = []
    for c in cf.found:
        c = replace(c, marked=c.marked or cand.marked)
        out.extend(inner_candidates(c, culprit) if culprit is not None and holds(c.node, culprit) else [c])
    return out


def holds(node: c_ast.Node, loc: SourceLoc) -> bool:
    """Whether ``loc`` is the coordinate of ``node`` or of a node inside it."""
    c = node.coord
    if c is not None and (c.file, c.line, c.column or 1) == (loc.file, loc.line, loc.column):
        return True
    return any(holds(child, loc) for _, child in node.children())


def return_type_loc(func: c_ast.FuncDef) -> SourceLoc:
    """Where the return type's first specifier token is (e.g. ``float`` in ``static float f``)."""
    t: c_ast.Node = func.decl.type
    while isinstance(t, (*FUNC_DECLS, c_ast.PtrDecl, c_ast.TypeDecl, c_ast.ArrayDecl)):
        t = t.type
    return loc_of(t, loc_of(func.decl))


# }}}

# {{{ nest builder


class _NotAffine(Exception):
    pass


def _int_constant(node: c_ast.Constant) -> int:
    if "int" not in node.type and node.type not in ("long", "unsigned"):
        raise _NotAffine
    v = node.value.rstrip("uUlL")
    if v[:2].lower() == "0x":
        return int(v, 16)
    return int(v, 8) if len(v) > 1 and v.startswith("0") else int(v)


class _WrittenNames(c_ast.NodeVisitor):
    """Names assigned (``=``, ``op=``, ``++``/``--``) or declared anywhere inside a nest."""

    def __init__(self) -> None:
        self.written: set[str] = set()
        self.declared: set[str] = set()
        self.counts: dict[str, int] = {}  # writes per name
        self.iterators: set[str] = set()

    def _write(self, name: str) -> None:
        self.written.add(name)
        self.counts[name] = self.counts.get(name, 0) + 1

    def visit_For(self, node: c_ast.For) -> None:
        init = node.init
        if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
            self.iterators.add(init.lvalue.name)
        elif isinstance(init, c_ast.DeclList):
            self.iterators.update(d.name for d in init.decls if d.name)
        self.generic_visit(node)

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        self._write(_base_name(node.lvalue))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--"):
            self._write(_base_name(node.expr))
        self.generic_visit(node)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name:
            self.declared.add(node.name)
        self.generic_visit(node)


def _names_in(node: c_ast.Node) -> set[str]:
    """Every identifier in an expression."""
    out: set[str] = set()

    class _V(c_ast.NodeVisitor):
        def visit_ID(self, n: c_ast.ID) -> None:
            out.add(n.name)

    _V().visit(node)
    return out


def _base_name(node: c_ast.Node) -> str:
    while isinstance(node, c_ast.ArrayRef):
        node = node.name
    if isinstance(node, c_ast.UnaryOp) and node.op == "*":
        return _base_name(node.expr)
    return node.name if isinstance(node, c_ast.ID) else "<expr>"


class NestBuilder(c_ast.NodeVisitor):
    """Builds the ``Scop`` of one candidate; raises ``UnsupportedInput`` on anything else."""

    def __init__(self, cand: Candidate, symbols: SymbolTable, privatizable: frozenset[str] = frozenset(),
                 layouts: dict[str, Layout] | None = None) -> None:
        self.cand = cand
        self.sym = symbols
        wn = _WrittenNames()
        wn.visit(cand.node)
        self.written = wn.written
        self.nest_locals = wn.declared
        #: scalars declared before the nest, dead after it, that may be private to each iteration
        #: (``mdpoly.frontend.scop.privatizable_scalars``): an assignment ``s = e`` declares them
        self.privatizable = privatizable
        self.write_counts = wn.counts
        self.loops: list[Loop] = []
        self.stack: list[int] = []          # indices of the enclosing loops
        self.positions: list[int] = [0]     # next textual position at each level
        self.stmt_positions: list[int] = []  # positions of the enclosing loops
        self.statements: list[Statement] = []
        self.temps: dict[str, Expr | _Stale] = {}
        self.local_accs: dict[str, Access] = {}  # written locals in scope -> their expanded access
        self.params: list[str] = []
        self.variables: dict[str, Variable] = {}
        self.preconditions: list[Precondition] = []
        self.guards: tuple[Affine, ...] = ()  # affine conditions of the enclosing ifs, each >= 0
        #: the C condition of enclosing ``if``s whose domain is no convex set (``i != j``)
        self.predicate: Expr | None = None
        #: strided loops in scope: user iterator -> (start, step, model iterator, C type, start expression)
        self.strided: dict[str, tuple[Affine, int, str, str, Expr]] = {}
        self.strided_done: set[str] = set()
        #: size parameters standing for products of parameters (``mdp_p_m_n``): name -> factors
        self.products: dict[str, tuple[str, ...]] = {}
        #: induction variables of loop headers (``j`` in ``for (i = 0, j = n - 1; ...; i++, j--)``):
        #: name -> (affine value, C expression, C type)
        self.inductions: dict[str, tuple[Affine, Expr, str]] = {}
        #: flat arrays indexed with polynomial subscripts, viewed as multi-dimensional arrays
        #: (``mdpoly.frontend.delinearize``); ``layouts`` fix their views when the model is rebuilt
        self.delin = Delinearizer(layouts)
        self.flat_accesses: set[str] = set()  # arrays indexed with affine (one-dimensional) subscripts

    # -- entry

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
        )
        try:
            ranges = self.delin.preconditions(scop, shapes)
        except Refuted as e:
            raise self._fail(self.cand.node, "non-affine-subscript", f"a flat subscript cannot be delinearized: {e}") from None
        scop = mark_lazy(scop, self.delin.lazy)  # reads checked under their selects (frontend.guarded_reads)
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
                if written_in_func is None:
                    written_in_func = self.written_in(self.cand.func.body)
                if size.kind != "scalar" or not size.is_integer or name in written_in_func or (
                        name not in self.sym.params and name not in self.sym.locals):
                    raise self._fail(self.cand.node, "vla-size",
                                     f"the size '{name}' in the type of '{var.name}' is not a constant, an "
                                     "unmodified parameter or an unmodified local")
                self.variables[name] = size

    def _loc(self, node: c_ast.Node) -> SourceLoc:
        return loc_of(node, self.cand.loc)

    def _fail(self, node: c_ast.Node, code: str, message: str) -> UnsupportedInput:
        return UnsupportedInput(message, self._loc(node), code)

    # -- statements

    def generic_visit(self, node: c_ast.Node) -> None:
        raise self._fail(node, "unsupported-statement",
                         f"statement kind '{type(node).__name__}' is not supported in a loop nest")

    def visit_For(self, node: c_ast.For) -> None:
        extra_vars: list[tuple[str, str, c_ast.Node, int]] = []
        if _header_lists(node):
            node, extra_vars = self._split_header(node)
        it, start, it_type, start_node = self._for_init(node)
        step = self._for_next(node, it)
        if extra_vars and (step not in (1, -1) or _minmax_kind(start_node) is not None):
            raise self._fail(node, "unsupported-statement", f"loop '{it}' has several variables in its header and a "
                             "step other than 1 or a min/max start")
        if step not in (1, -1):
            self._strided_for(node, it, start, it_type, start_node, step)
            return
        bound, bound_node, inclusive, until_equal = self._for_cond(node, it, step)
        # max(a, b) as a lower or min(a, b) as an upper bound: the loop runs over the first
        # alternative's range, the others are guards of every statement inside it
        start_alts = self._minmax_alternatives(start_node, node, "max" if step == 1 else "min")
        bound_alts = self._minmax_alternatives(bound_node, node, "min" if step == 1 else "max")
        start_node, bound_node = start_alts[0], bound_alts[0]
        if len(start_alts) > 1:
            start = self._bound(start_node, node, "start")
        if len(bound_alts) > 1:
            bound = self._bound(bound_node, node, "loop")
            if until_equal:
                raise self._fail(node, "non-affine-bound", f"'{it} != ...' with a min/max bound")
        start_side = BoundSide(self.expr(start_node), c_text(start_node), start)
        bound_side = BoundSide(self.expr(bound_node), c_text(bound_node), bound)
        self._check_header(node, it, it_type, start_side, bound_side, inclusive, until_equal, step)
        extra: list[Affine] = []
        me = Affine.of({it: 1})
        for alt in start_alts[1:]:  # it >= alt (upward) / it <= alt (downward)
            a = self._bound(alt, node, "start")
            extra.append(_combine(me, a, -1) if step == 1 else _combine(a, me, -1))
        for alt in bound_alts[1:]:  # it < alt / it <= alt (upward); it > alt / it >= alt (downward)
            a = self._bound(alt, node, "loop")
            diff = _combine(a, me, -1) if step == 1 else _combine(me, a, -1)
            extra.append(diff if inclusive else _add(diff, -1))
        if step == 1:
            lower, upper = start, _add(bound, 1) if inclusive else bound
        else:  # the same set of values, visited downwards (the schedule reverses it)
            lower, upper = _add(bound, 0 if inclusive else 1), _add(start, 1)
        if it in self.written_in(node.stmt):
            raise self._fail(node, "unsupported-statement", f"loop iterator '{it}' is modified in the loop body")
        idx = len(self.loops)
        self.loops.append(Loop(it, lower, upper, self._loc(node), self.stack[-1] if self.stack else None,
                               len(self.stack) + 1, it_type, step))
        self.stmt_positions.append(self._next_position())
        self.stack.append(idx)
        self.positions.append(0)
        saved, saved_accs, saved_guards = dict(self.temps), dict(self.local_accs), self.guards
        self.guards = saved_guards + tuple(g for g in extra if g not in saved_guards)
        for name, c_type, init, v_step in extra_vars:
            self._induction(node, name, c_type, init, v_step * step, it, start, start_side.expr)
        self.visit(node.stmt)
        for name, *_rest in extra_vars:
            del self.inductions[name]
        self.temps, self.local_accs, self.guards = saved, saved_accs, saved_guards
        self.positions.pop()
        self.stack.pop()
        self.stmt_positions.pop()

    def _split_header(self, node: c_ast.For) -> tuple[c_ast.For, list[tuple[str, str, c_ast.Node, int]]]:
        """``for (i = 0, j = n - 1; i < n; i++, j--)`` and ``for (int i = 0, k = 0; ...)``: the
        loop over the iterator its condition tests, plus the other variables of its header, each
        ``(name, C type, initial value, step per iteration)`` (step 0: set once, never stepped).
        Such a variable is an induction variable of the loop (``j = n - 1 - i``), substituted
        wherever it is used; one the body writes, or that the program reads after the nest, keeps
        the nest."""
        cond = node.cond
        primary = None
        if isinstance(cond, c_ast.BinaryOp):
            primary = next((x.name for x in (cond.left, cond.right) if isinstance(x, c_ast.ID)), None)
        inits: list[tuple[str, str, c_ast.Node, c_ast.Node]] = []  # name, type, value, the init item
        init = node.init
        items = init.decls if isinstance(init, c_ast.DeclList) else init.exprs if isinstance(init, c_ast.ExprList) \
            else [init]
        for d in items:
            if isinstance(d, c_ast.Decl) and d.init is not None and d.name:
                if "volatile" in (d.quals or []) or self.sym.type_is_volatile(d.type):
                    raise self._fail(node, "volatile-access", f"loop variable '{d.name}' is volatile")
                var = self.sym._variable(d.name, d.type)
                inits.append((d.name, var.scalar_type if var is not None and var.is_integer else "", d.init, d))
            elif isinstance(d, c_ast.Assignment) and d.op == "=" and isinstance(d.lvalue, c_ast.ID):
                var = self._lookup(d.lvalue.name, d)
                inits.append((d.lvalue.name, var.scalar_type if var.is_integer else "", d.rvalue, d))
            else:
                raise self._fail(node, "unsupported-statement", f"loop initialisation '{c_text(d)}' is not "
                                 "'i = lower' or 'int i = lower'")
        steps: dict[str, c_ast.Node] = {}
        for n in (node.next.exprs if isinstance(node.next, c_ast.ExprList) else [node.next] if node.next else []):
            name = _stepped_name(n)
            if name is None or name in steps:
                raise self._fail(n, "unsupported-statement", f"loop increment '{c_text(n)}' is not a step of one "
                                 "variable")
            steps[name] = n
        names = [n for n, *_r in inits]
        if primary not in names or set(steps) - set(names) or len(set(names)) != len(names):
            raise self._fail(node, "unsupported-statement", "a loop header with several variables must test one of "
                             "them in its condition and step only those")
        body_writes = self.written_in(node.stmt)
        outside = {n for n, _t, _v, item in inits if isinstance(item, c_ast.Assignment)}
        live = live_after(self.cand.func.body, self.cand.node, outside - {primary})
        extra: list[tuple[str, str, c_ast.Node, int]] = []
        primary_item: c_ast.Node = c_ast.EmptyStatement()
        for name, c_type, value, item in inits:
            if name == primary:
                primary_item = item
                continue
            ctype = parse_type(c_type) if c_type else None
            int_type = parse_type("int")
            if ctype is None or not ctype.signed or int_type is None or ctype.rank < int_type.rank:
                raise self._fail(node, "unsupported-statement", f"loop variable '{name}' is not of a signed integer "
                                 "type of at least int's rank (its steps could wrap)")
            if name in body_writes:
                raise self._fail(node, "unsupported-statement", f"loop variable '{name}' is also modified in the body")
            if _names_in(value) & set(names):
                raise self._fail(node, "unsupported-statement", f"the initial value of loop variable '{name}' reads "
                                 "another variable of the same header")
            if name in live:
                raise self._fail(node, "unsupported-statement", f"loop variable '{name}' is read after the nest; its "
                                 "exit value is not modelled")
            step = self._for_next(c_ast.For(None, None, steps[name], None, coord=node.coord), name) \
                if name in steps else 0
            extra.append((name, c_type, value, step))
        if isinstance(primary_item, c_ast.Decl):
            first: c_ast.Node = c_ast.DeclList([primary_item], coord=init.coord)
        else:
            first = primary_item
        return c_ast.For(first, node.cond, steps.get(primary or ""), node.stmt, coord=node.coord), extra

    def _induction(self, node: c_ast.For, name: str, c_type: str, init: c_ast.Node, step: int, it: str,
                   start: Affine, start_expr: Expr) -> None:
        """Header variable ``name = init`` stepped by ``step`` per step of ``it``: ``name`` stands
        for ``init + step * (it - start)`` (in its C type) in the body."""
        try:
            value = self.affine(init)
        except _NotAffine:
            raise self._fail(init, "non-affine-bound", f"initial value '{c_text(init)}' of loop variable '{name}' "
                             "is not affine in outer iterators and size parameters") from None
        aff = _combine(value, _scale(_combine(Affine.of({it: 1}), start, -1), step), 1)
        e = Binary("+", Cast("long long", self.expr(init)),
                   Binary("*", Const(str(step)), Binary("-", Cast("long long", Var(it)), Cast("long long", start_expr))))
        self.inductions[name] = (aff, Cast(c_type, e), c_type)

    def _strided_for(self, node: c_ast.For, it: str, start: Affine, it_type: str, start_node: c_ast.Node,
                     step: int) -> None:
        """``for (i = L; i < U; i += s)`` with a constant ``s > 1``: modelled over ``k = 0 ..
        ceil((U - L) / s)`` with ``i = L + s * k`` substituted everywhere (accesses and the user's
        expressions, where ``i`` keeps its C type). The trip count is a new size parameter whose
        value the call site computes (``Variable.c_value``)."""
        if step < 0:
            raise self._fail(node, "non-unit-stride", f"loop '{it}' counts downwards by {-step}; only steps of -1 "
                             "are modelled downwards")
        bound, bound_node, inclusive, until_equal = self._for_cond(node, it, 1)
        if until_equal or _minmax_kind(bound_node) is not None or _minmax_kind(start_node) is not None:
            raise self._fail(node, "non-unit-stride", f"loop '{it}' steps by {step} with a '!=' or min/max bound")
        outer = set(self._iterators()) | set(self.strided)
        if (start.names() | bound.names()) & outer:
            raise self._fail(node, "non-unit-stride", f"loop '{it}' steps by {step} and its bounds depend on an outer "
                             "iterator")
        start_side = BoundSide(self.expr(start_node), c_text(start_node), start)
        bound_side = BoundSide(self.expr(bound_node), c_text(bound_node), bound)
        self._check_header(node, it, it_type, start_side, bound_side, inclusive, False, 1, overshoot=step - 1)
        upper = _add(bound, 1) if inclusive else bound
        k, trips = f"mdp_s_{it}", f"mdp_n_{it}"
        if it in self.written_in(node.stmt):
            raise self._fail(node, "unsupported-statement", f"loop iterator '{it}' is modified in the loop body")
        extent = _combine(upper, start, -1)
        if extent.is_constant:
            count: Affine = Affine.of(constant=max(0, -(-extent.constant // step)))
        else:
            value = f"({math_text(extent)} + {step - 1}) / {step}"
            self.variables[trips] = Variable(trips, "long long", (), "scalar", "long long", "", "private",
                                             c_value=value)
            if trips not in self.params:
                self.params.append(trips)
            count = Affine.of({trips: 1})
        self.strided[it] = (start, step, k, it_type, start_side.expr)
        idx = len(self.loops)
        self.loops.append(Loop(k, Affine.of(), count, self._loc(node), self.stack[-1] if self.stack else None,
                               len(self.stack) + 1, "long", 1))
        self.stmt_positions.append(self._next_position())
        self.stack.append(idx)
        self.positions.append(0)
        saved, saved_accs = dict(self.temps), dict(self.local_accs)
        self.visit(node.stmt)
        self.temps, self.local_accs = saved, saved_accs
        self.positions.pop()
        self.stack.pop()
        self.stmt_positions.pop()
        del self.strided[it]
        self.strided_done.add(it)

    def written_in(self, node: c_ast.Node) -> set[str]:
        wn = _WrittenNames()
        wn.visit(node)
        return wn.written

    def _next_position(self) -> int:
        p = self.positions[-1]
        self.positions[-1] += 1
        return p

    def visit_Compound(self, node: c_ast.Compound) -> None:
        for item in node.block_items or []:
            self.visit(item)

    def visit_EmptyStatement(self, node: c_ast.EmptyStatement) -> None:
        return

    def visit_Pragma(self, node: c_ast.Pragma) -> None:
        return  # pragmas inside the nest (e.g. ``omp simd``) do not change its meaning

    def visit_While(self, node: c_ast.While) -> None:
        raise self._fail(node, "while-loop", "'while' loops cannot be modelled")

    def visit_DoWhile(self, node: c_ast.DoWhile) -> None:
        raise self._fail(node, "while-loop", "'do'/'while' loops cannot be modelled")

    def visit_Goto(self, node: c_ast.Goto) -> None:
        raise self._fail(node, "goto", "'goto' leaves the polyhedral model")

    def visit_Label(self, node: c_ast.Label) -> None:
        raise self._fail(node, "goto", "labels inside a loop nest cannot be modelled")

    def visit_Break(self, node: c_ast.Break) -> None:
        raise self._fail(node, "break", "'break' makes the iteration domain data-dependent")

    def visit_Continue(self, node: c_ast.Continue) -> None:
        raise self._fail(node, "break", "'continue' makes the iteration domain data-dependent")

    def visit_Return(self, node: c_ast.Return) -> None:
        raise self._fail(node, "break", "'return' inside a loop nest makes its domain data-dependent")

    def visit_If(self, node: c_ast.If) -> None:
        """``if (e > m) m = e;`` is the update ``m = e > m ? e : m``; an affine condition guards the
        statements inside (part of their domain), its complement those of the ``else``; anything
        else is kept.

        A condition that is one conjunction of affine inequalities (``i < j && j <= n``, also
        ``==`` and negations that stay convex) is part of the statements' domain (``guards``).
        One whose domain is a union (``i != j`` is ``i < j`` or ``i > j``; ``||``), one that is
        not affine (``(i + j) % 2 == 0``: a function of the iterators and sizes all the same) and
        both branches of an ``if``/``else`` become a predicate of the statements (a union keeps
        the constraints its disjoint pieces share as guards): ``x op= e`` contributes ``op``'s neutral element where the
        condition fails (``x += c ? e : 0``), ``x = e`` writes the value ``x`` holds
        (``x = c ? e : x``). That is the MDH's own reading of a domain (a point outside it adds
        the neutral element and writes nothing new); the condition is the C text, so it is
        evaluated exactly as written."""
        if node.iffalse is None and self._conditional_update(node):
            return
        reads_data = False
        cond: Expr | None = None
        try:
            cond = self.expr(node.cond)
            reads_data = bool(expr_refs(cond)) or any(n not in self._iterators() and n not in self.params
                                                       and not self._unwritten_scalar(n) for n in expr_names(cond))
        except UnsupportedInput:
            reads_data = True
        if reads_data or cond is None:
            raise self._fail(node, "data-dependent-condition",
                             f"condition '{c_text(node.cond)}' depends on data computed at run time")
        if node.iffalse is not None and self._if_else_assign(node, cond):
            return
        pieces = self._guard_pieces(node.cond)  # None: not affine (``i % 2 == 0``), a predicate only
        branches = [(node.iftrue, pieces, cond)]
        if node.iffalse is not None:
            branches.append((node.iffalse, None if pieces is None else _complement(pieces), Unary("!", cond)))
        for branch, parts, pred in branches:
            common = [g for g in parts[0] if all(g in p for p in parts[1:])] \
                if parts and node.iffalse is None else []
            saved, saved_temps, saved_accs = self.guards, dict(self.temps), dict(self.local_accs)
            saved_pred = self.predicate
            self.guards = saved + tuple(g for g in common if g not in saved)
            # a union of pieces (or nothing: the predicate is then always false); with an ``else``,
            # both branches are predicates (their statements share the nest's one domain)
            if parts is None or len(parts) != 1 or node.iffalse is not None:
                self.predicate = pred if saved_pred is None else Binary("&&", saved_pred, pred)
            self.visit(branch)
            self.guards, self.temps, self.local_accs = saved, saved_temps, saved_accs
            self.predicate = saved_pred

    def _unwritten_scalar(self, name: str) -> bool:
        """A scalar the nest never writes (its value is the same at every iteration)."""
        var = self.sym.variable(name)
        return var is not None and var.kind == "scalar" and name not in self.written and name not in self.nest_locals

    def _if_else_assign(self, node: c_ast.If, cond: Expr) -> bool:
        """``if (c) x = e1; else x = e2;`` (``op=`` too) on the same ``x``: the one statement
        ``x = c ? (x op1 e1) : (x op2 e2)``, as one output of the nest."""
        def single(b: c_ast.Node) -> c_ast.Node:
            return b.block_items[0] if isinstance(b, c_ast.Compound) and len(b.block_items or []) == 1 else b
        a, b = single(node.iftrue), single(node.iffalse)
        if not (isinstance(a, c_ast.Assignment) and isinstance(b, c_ast.Assignment)
                and c_text(a.lvalue) == c_text(b.lvalue) and a.op in _ASSIGN_OPS and b.op in _ASSIGN_OPS
                and not isinstance(a.rvalue, c_ast.Assignment) and not isinstance(b.rvalue, c_ast.Assignment)):
            return False

        def value(x: c_ast.Assignment) -> Expr:
            e = self.expr(x.rvalue)
            return e if x.op == "=" else Binary(x.op[:-1], self.expr(x.lvalue), e)
        rhs = Cond(cond, value(a), value(b))
        self._statement(node, a.lvalue, "=", rhs)
        return True

    def _predicated(self, node: c_ast.Node, target: Access, op: str, rhs: Expr) -> Expr:
        """``rhs`` under the enclosing non-convex ``if`` conditions (``self.predicate``): the
        value of ``target op= rhs`` where they fail leaves ``target`` as it was."""
        if self.predicate is None:
            return rhs
        if op == "=":
            return Cond(self.predicate, rhs, Ref(target))
        neutral = _NEUTRAL.get(op)
        if neutral is None:
            raise self._fail(node, "non-rectangular-domain",
                             f"'{op}' has no neutral element to stand for the points outside the condition of the "
                             "enclosing 'if'")
        return Cond(self.predicate, rhs, neutral)

    def _guard_pieces(self, cond: c_ast.Node) -> list[tuple[Affine, ...]] | None:
        """``cond`` as disjoint conjunctions of affine expressions ``>= 0`` (an empty list: never
        true); ``None`` when it is not built from affine comparisons with ``&&``, ``||``, ``!``."""
        if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
            inner = self._guard_pieces(cond.expr)
            return None if inner is None else _complement(inner)
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("&&", "||"):
            a, b = self._guard_pieces(cond.left), self._guard_pieces(cond.right)
            if a is None or b is None or len(a) * max(len(b), 1) > _MAX_PIECES:
                return None
            if cond.op == "&&":
                return _intersect(a, b)
            return a + _intersect(_complement(a), b)  # a, or not a and b: disjoint
        if not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">=", "==", "!="):
            return None
        try:
            left, right = self.affine(cond.left), self.affine(cond.right)
        except _NotAffine:
            return None
        diff = _combine(right, left, -1)  # right - left
        less, greater = _add(diff, -1), _add(_scale(diff, -1), -1)
        if cond.op == "<":
            return _pieces([(less,)])
        if cond.op == "<=":
            return _pieces([(diff,)])
        if cond.op == ">":
            return _pieces([(greater,)])
        if cond.op == ">=":
            return _pieces([(_scale(diff, -1),)])
        if cond.op == "==":
            return _pieces([(diff, _scale(diff, -1))])
        return _pieces([(less,), (greater,)])

    def _conditional_update(self, node: c_ast.If) -> bool:
        """``if (e > m) m = e;`` (any comparison, either side) as the statement ``m = cond ? e : m``."""
        body = node.iftrue
        if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 2:
            return self._arg_update(node)
        if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 1:
            body = body.block_items[0]
        cond = node.cond
        if not (isinstance(body, c_ast.Assignment) and body.op == "=" and isinstance(cond, c_ast.BinaryOp)
                and cond.op in ("<", "<=", ">", ">=")):
            return False
        target, value = c_text(body.lvalue), c_text(body.rvalue)
        if {c_text(cond.left), c_text(cond.right)} != {target, value} or target == value:
            return False
        rhs = Cond(self.expr(cond), self.expr(body.rvalue), self.expr(body.lvalue))
        self._statement(body, body.lvalue, "=", rhs)
        return True

    def _arg_update(self, node: c_ast.If) -> bool:
        """``if (e > m) { m = e; idx = i; }`` (either order, any comparison) as the statements
        ``idx = e > m ? i : idx`` and then ``m = e > m ? e : m``: exactly what the branch does
        (the condition is read before either write, and reads neither ``idx`` nor anything
        ``idx = i`` writes). ``mdpoly.frontend.deps.arg_pairs`` recognises the pair as an
        argmax/argmin reduction."""
        items = node.iftrue.block_items or []
        cond = node.cond
        if not (all(isinstance(x, c_ast.Assignment) and x.op == "=" for x in items)
                and isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=")):
            return False
        operands = {c_text(cond.left), c_text(cond.right)}
        vals = [x for x in items if {c_text(x.lvalue), c_text(x.rvalue)} == operands]
        if len(vals) != 1 or c_text(vals[0].lvalue) == c_text(vals[0].rvalue):
            return False
        val = vals[0]
        (other,) = [x for x in items if x is not val]
        names = {_base_name(val.lvalue), _base_name(other.lvalue)}
        if (not isinstance(other.lvalue, c_ast.ID | c_ast.ArrayRef) or _base_name(other.lvalue) == _base_name(val.lvalue)
                or names & (_names_in(cond) - {_base_name(val.lvalue)}) or names & _names_in(other.rvalue)
                or _base_name(other.lvalue) in _names_in(val.rvalue)):
            return False
        c = self.expr(cond)
        self._statement(other, other.lvalue, "=", Cond(c, self.expr(other.rvalue), self.expr(other.lvalue)))
        self._statement(val, val.lvalue, "=", Cond(c, self.expr(val.rvalue), self.expr(val.lvalue)))
        return True

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        raise self._fail(node, "side-effect-call", f"call to '{c_text(node.name)}' may have side effects")

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if "volatile" in (node.quals or []) or self.sym.type_is_volatile(node.type):
            raise self._fail(node, "volatile-access", f"local variable '{node.name}' is volatile")
        if not isinstance(node.type, c_ast.TypeDecl):
            raise self._fail(node, "unsupported-statement", f"local array or pointer '{node.name}' in a loop nest")
        if node.init is None:
            raise self._fail(node, "unsupported-statement",
                             f"local variable '{node.name}' is declared without an initialiser")
        if node.name in self.written:
            self._local_accumulator(node)
            return
        var = self.sym._variable(node.name, node.type)
        e = self.expr(node.init)
        if var is not None:
            e = Cast(var.elem_type, e, var.scalar_type if var.scalar_type != var.elem_type else "") \
                if not _same_type_constant(e) else e
        self.temps[node.name] = e

    def _local_accumulator(self, node: c_ast.Decl) -> None:
        """``T s = init;`` later assigned in the nest: modelled as ``s[i][j..] = init`` over the
        loops around it (scalar expansion -- every iteration of them has its own ``s``)."""
        var = self.sym._variable(node.name, node.type)
        if var is None or var.kind != "scalar" or not self.stack:
            raise self._fail(node, "unsupported-statement", f"local variable '{node.name}' cannot be modelled")
        if node.name in self.variables or node.name in self.local_accs:
            raise self._fail(node, "unsupported-statement", f"local variable '{node.name}' shadows another variable")
        rhs = self.expr(node.init)
        if self.predicate is not None:  # only read under the same condition: any value will do outside it
            rhs = Cond(self.predicate, rhs, Const("0"))
        acc = Access(node.name, tuple(Affine.of({it: 1}) for it in self._iterators()))
        self.variables[node.name] = Variable(node.name, var.elem_type, (), "local", var.scalar_type, "", "private")
        self.local_accs[node.name] = acc
        self.statements.append(Statement(
            name=f"S{len(self.statements)}", loc=self._loc(node), loops=tuple(self.stack),
            position=(*self.stmt_positions, self._next_position()), write=acc, op="=", rhs=rhs,
            reads=tuple(_refs(rhs)), text=c_text(node).strip() + ";", guards=self.guards))

    def _private_definition(self, node: c_ast.Assignment, name: str) -> None:
        """``s = e`` for a privatizable scalar not yet defined in this scope: like a declaration
        ``T s = e;`` here -- a temporary when it is the nest's only write of ``s``, else a local
        accumulator. Anything else (``s += e`` first, ``e`` reading ``s``) makes ``s`` shared."""
        if node.op != "=" or isinstance(node.rvalue, c_ast.Assignment):
            raise _NotPrivate(name)
        var = self.sym.variable(name)
        if var is None:
            raise _NotPrivate(name)
        e = self.expr(node.rvalue)  # raises _NotPrivate when it reads ``s``
        if self.write_counts.get(name, 0) == 1:
            self.temps[name] = Cast(var.elem_type, e, var.scalar_type if var.scalar_type != var.elem_type else "")
            return
        if not self.stack or name in self.variables:
            raise _NotPrivate(name)  # defined in two sibling scopes: not modelled as one local
        self._declare_local(name, var, e, node)

    def _declare_local(self, name: str, var: Variable, rhs: Expr, node: c_ast.Node) -> None:
        acc = Access(name, tuple(Affine.of({it: 1}) for it in self._iterators()))
        self.variables[name] = Variable(name, var.elem_type, (), "local", var.scalar_type, "", "private")
        self.local_accs[name] = acc
        if self.predicate is not None:  # only read under the same condition: any value will do outside it
            rhs = Cond(self.predicate, rhs, Const("0"))
        self.statements.append(Statement(
            name=f"S{len(self.statements)}", loc=self._loc(node), loops=tuple(self.stack),
            position=(*self.stmt_positions, self._next_position()), write=acc, op="=", rhs=rhs,
            reads=tuple(_refs(rhs)), text=c_text(node).strip() + ";", guards=self.guards))

    def visit_DeclList(self, node: c_ast.DeclList) -> None:
        for d in node.decls:
            self.visit(d)

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        if node.op not in _ASSIGN_OPS:
            raise self._fail(node, "unsupported-statement", f"assignment operator '{node.op}'")
        lv = node.lvalue
        if (isinstance(lv, c_ast.ID) and lv.name in self.privatizable and lv.name not in self.local_accs
                and lv.name not in self.temps):
            self._private_definition(node, lv.name)
            return
        if isinstance(node.rvalue, c_ast.Assignment):
            # a = b = e: first b = e, then a = the value b now holds, i.e. (type of b) e when e does
            # not read b (no read of b in the same iteration), else b itself
            inner = node.rvalue
            self.visit_Assignment(inner)
            target = self.statements[-1].write
            value = self.statements[-1].rhs
            var = self.variables.get(target.buffer)
            if inner.op == "=" and target not in expr_refs(value) and var is not None and var.kind != "local":
                rhs: Expr = Cast(var.elem_type, value, var.scalar_type if var.scalar_type != var.elem_type else "")
            else:
                rhs = self.expr(inner.lvalue)
            self._statement(node, node.lvalue, node.op, rhs)
            return
        self._statement(node, node.lvalue, node.op, self.expr(node.rvalue))

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "p++", "--", "p--"):
            op = "+=" if "+" in node.op else "-="
            self._statement(node, node.expr, op, Const("1"))
            return
        raise self._fail(node, "unsupported-statement", f"expression statement '{c_text(node)}' has no effect")

    def _statement(self, node: c_ast.Node, lvalue: c_ast.Node, op: str, rhs: Expr) -> None:
        target = self.lvalue(lvalue, node)
        # a temporary is inlined where it is used: it must still hold what its reads would read there
        for name, value in list(self.temps.items()):
            if not isinstance(value, _Stale) and any(r.buffer == target.buffer for r in expr_refs(value)):
                self.temps[name] = _Stale(name, target.buffer)
        rhs = self._predicated(node, target, op, rhs)
        reads = ([target] if op != "=" else []) + _refs(rhs)
        text = c_text(node).strip() + ";"
        self.statements.append(Statement(
            name=f"S{len(self.statements)}", loc=self._loc(node), loops=tuple(self.stack),
            position=(*self.stmt_positions, self._next_position()), write=target, op=op, rhs=rhs,
            reads=tuple(reads), text=text, guards=self.guards))

    # -- loop headers

    def _check_header(self, node: c_ast.For, it: str, it_type: str, start: BoundSide, bound: BoundSide,
                      inclusive: bool, until_equal: bool, step: int, overshoot: int = 0) -> None:
        """The header's model under C's conversions (``mdpoly.frontend.loop_types``): adds preconditions or
        keeps the nest."""
        ctype = parse_type(it_type)
        if ctype is None or ctype.is_float:
            raise self._fail(node, "unsupported-statement", f"loop iterator '{it}' is not of an integer type")
        checker = HeaderChecker(it, ctype, self.name_type, frozenset(self._iterators()))
        try:
            if step == 1:
                found = checker.check(start, bound, inclusive, until_equal, overshoot)
            else:
                found = checker.check_down(start, bound, inclusive, until_equal)
        except HeaderMismatch as e:
            raise self._fail(node, "c-conversion", f"loop '{it}' does not run as its bounds read: {e}") from None
        self.preconditions.extend(p for p in found if p not in self.preconditions)

    def name_type(self, name: str) -> CType | None:
        """The C type of an iterator or variable visible in the nest."""
        if name in self.strided:
            return parse_type(self.strided[name][3])
        if name in self.inductions:
            return parse_type(self.inductions[name][2])
        for lp in self.loops:
            if lp.iterator == name:
                return parse_type(lp.c_type)
        var = self.variables.get(name) or self.sym.variable(name)
        if var is None:
            return None
        return parse_type(var.scalar_type) if var.kind in ("scalar", "local") else None

    def _for_init(self, node: c_ast.For) -> tuple[str, Affine, str, c_ast.Node]:
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            d = init.decls[0]
            if "volatile" in (d.quals or []) or self.sym.type_is_volatile(d.type):
                raise self._fail(node, "volatile-access", f"loop iterator '{d.name}' is volatile")
            var = self.sym._variable(d.name, d.type)
            if var is None or not var.is_integer:
                raise self._fail(node, "unsupported-statement", f"loop iterator '{d.name}' is not an integer")
            return d.name, self._bound(d.init, node, "lower"), var.scalar_type, d.init
        if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            name = init.lvalue.name
            var = self._lookup(name, node)
            if not var.is_integer:
                raise self._fail(node, "unsupported-statement", f"loop iterator '{name}' is not an integer")
            return name, self._bound(init.rvalue, node, "lower"), var.scalar_type, init.rvalue
        raise self._fail(node, "unsupported-statement",
                         "loop initialisation must be 'int i = lower' or 'i = lower'")

    def _for_cond(self, node: c_ast.For, it: str, step: int) -> tuple[Affine, c_ast.Node, bool, bool]:
        """The bound as written, its node, whether the comparison includes it (``<=``/``>=``) and
        whether it is ``!=``: ``i < B``, ``i <= B``, ``B > i``... for an upward loop, ``i >= B``,
        ``i > B``, ``B < i``... for a downward one, ``i != B`` for both."""
        c = node.cond
        if isinstance(c, c_ast.BinaryOp):
            flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
            op, other = None, None
            if _is_id(c.left, it) and c.op in flipped:
                op, other = c.op, c.right
            elif _is_id(c.right, it) and c.op in flipped:
                op, other = flipped[c.op], c.left
            wanted = ("<", "<=", "!=") if step == 1 else (">", ">=", "!=")
            if op is not None and other is not None:
                if op not in wanted:
                    raise self._fail(c, "non-affine-bound", f"loop condition '{c_text(c)}' does not end a loop that "
                                     f"{'counts upwards' if step == 1 else 'counts downwards'}")
                bound = self._bound(other, node, "loop")
                return bound, other, op in ("<=", ">="), op == "!="
        cond = c_text(c) if c is not None else "<none>"
        raise self._fail(c if c is not None else node, "non-affine-bound",
                         f"loop condition '{cond}' is not of the form '{it} < bound', '{it} <= bound' "
                         f"('>', '>=' for a downward loop) or '{it} != bound'")

    def _for_next(self, node: c_ast.For, it: str) -> int:
        """The step: a non-zero integer constant."""
        n = node.next
        step: int | None = None
        if isinstance(n, c_ast.UnaryOp) and _is_id(n.expr, it):
            step = {"++": 1, "p++": 1, "--": -1, "p--": -1}.get(n.op)
        elif isinstance(n, c_ast.Assignment) and _is_id(n.lvalue, it):
            try:
                if n.op in ("+=", "-=") and isinstance(n.rvalue, c_ast.Constant):
                    step = _int_constant(n.rvalue) * (1 if n.op == "+=" else -1)
                elif n.op == "=" and isinstance(n.rvalue, c_ast.BinaryOp) and n.rvalue.op in ("+", "-"):
                    a, b = n.rvalue.left, n.rvalue.right
                    if _is_id(a, it) and isinstance(b, c_ast.Constant):
                        step = _int_constant(b) * (1 if n.rvalue.op == "+" else -1)
                    elif n.rvalue.op == "+" and _is_id(b, it) and isinstance(a, c_ast.Constant):
                        step = _int_constant(a)
            except _NotAffine:
                step = None
            if step is None and n.op in ("+=", "-=", "="):
                raise self._fail(n, "non-unit-stride", f"loop '{it}' does not step by one ('{c_text(n)}')")
        if step is not None and step != 0:
            return step
        if step == 0:
            raise self._fail(n, "non-unit-stride", f"loop '{it}' steps by 0")
        raise self._fail(n if n is not None else node, "unsupported-statement",
                         f"loop increment of '{it}' must be '{it}++', '++{it}', '{it} += 1' or '{it} = {it} + 1'")

    def _minmax_alternatives(self, node: c_ast.Node, loop: c_ast.For, allowed: str) -> list[c_ast.Node]:
        """``node`` itself, or the operands of a ``max``/``min`` written as a conditional
        (``a > b ? a : b``, what the usual macros expand to), flattened; only ``allowed`` (a max
        for a lower bound, a min for an upper one) is a conjunction of constraints."""
        kind = _minmax_kind(node)
        if kind is None:
            return [node]
        if kind != allowed:
            raise self._fail(node, "non-affine-bound", f"bound '{c_text(node)}' is a {kind}, which makes the "
                             "iteration domain a union of sets")
        assert isinstance(node, c_ast.TernaryOp)
        out: list[c_ast.Node] = []
        for part in (node.iftrue, node.iffalse):
            for alt in self._minmax_alternatives(part, loop, allowed):
                e = self.expr(alt)
                if involves_unsigned(e, self.name_type):
                    raise self._fail(node, "non-affine-bound", f"bound '{c_text(node)}' compares unsigned values")
                out.append(alt)
        return out

    def _bound(self, node: c_ast.Node, loop: c_ast.For, which: str) -> Affine:
        if _minmax_kind(node) is not None:  # visit_For adds the other alternatives as guards
            assert isinstance(node, c_ast.TernaryOp)
            return self._bound(node.iftrue, loop, which)
        try:
            return self.affine(node)
        except _NotAffine:
            raise self._fail(node, "non-affine-bound",
                             f"{which} bound '{c_text(node)}' is not affine in outer iterators and size "
                             "parameters") from None

    # -- affine expressions

    def _iterators(self) -> list[str]:
        return [self.loops[k].iterator for k in self.stack]

    def affine(self, node: c_ast.Node) -> Affine:
        if isinstance(node, c_ast.Constant):
            return Affine.of(constant=_int_constant(node))
        if isinstance(node, c_ast.UnaryOp) and node.op == "sizeof":
            size = self._sizeof(node.expr)
            if size is None:
                raise _NotAffine
            return Affine.of(constant=size)
        if isinstance(node, c_ast.BinaryOp) and node.op == "/":
            a, b = self.affine(node.left), self.affine(node.right)
            if not (a.is_constant and b.is_constant) or b.constant == 0:
                raise _NotAffine
            q = abs(a.constant) // abs(b.constant)
            return Affine.of(constant=q if (a.constant >= 0) == (b.constant > 0) else -q)
        if isinstance(node, c_ast.ID):
            name = node.name
            if name in self.inductions:
                return self.inductions[name][0]
            if name in self.strided:
                lo, step, k, _t, _e = self.strided[name]
                return _combine(lo, Affine.of({k: step}), 1)
            if name in self._iterators():
                return Affine.of({name: 1})
            if name in self.sym.enum_values and self.sym.variable(name) is None:
                return Affine.of(constant=self.sym.enum_values[name])
            if name in self.temps or name in self.nest_locals or name in self.written:
                raise _NotAffine
            var = self.sym.variable(name)
            if var is None or var.kind != "scalar" or not var.is_integer:
                raise _NotAffine
            self._check_not_volatile(name, node)
            if name not in self.params:
                self.params.append(name)
                self.variables.setdefault(name, var)
            return Affine.of({name: 1})
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            a = self.affine(node.expr)
            return a if node.op == "+" else _scale(a, -1)
        if isinstance(node, c_ast.Cast):
            var_type = c_text(node.to_type)
            if not any(w in var_type for w in ("int", "long", "short", "size_t", "unsigned")):
                raise _NotAffine
            return self.affine(node.expr)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-"):
            a, b = self.affine(node.left), self.affine(node.right)
            return _combine(a, b, 1 if node.op == "+" else -1)
        if isinstance(node, c_ast.BinaryOp) and node.op == "*":
            a, b = self.affine(node.left), self.affine(node.right)
            if a.is_constant:
                return _scale(b, a.constant)
            if b.is_constant:
                return _scale(a, b.constant)
            return self._parameter_product(node, a, b)
        raise _NotAffine

    def _parameter_product(self, node: c_ast.BinaryOp, a: Affine, b: Affine) -> Affine:
        """``n * m`` of size parameters (``i < n * m``): each product of parameters becomes a size
        parameter of its own (``mdp_p_m_n``), whose value the call site computes in ``long long``
        (``Variable.c_value``), so the loop stays affine. Products of signed values only: their
        overflow is undefined in the original, so the model's exact product is what it computes;
        an unsigned one wraps, and stays non-affine."""
        its = set(self._iterators())
        e = self.expr(node)
        if (a.names() | b.names()) & its or (involves_unsigned(e, self.name_type)
                                             and not exact_signed(e, self.name_type)):  # (long) n * m
            raise _NotAffine
        out: dict[str, int] = {}
        for x, cx in (*a.terms, ("", a.constant)):
            for y, cy in (*b.terms, ("", b.constant)):
                if not cx * cy:
                    continue
                factors = tuple(sorted(self.products.get(x, (x,)) + self.products.get(y, (y,))))
                factors = tuple(f for f in factors if f)
                name = f"mdp_p_{'_'.join(factors)}" if len(factors) > 1 else factors[0] if factors else ""
                if self.products.get(name, factors) != factors:
                    raise _NotAffine  # two products spelled alike (``k * m_n`` and ``k * m * n``)
                if len(factors) > 1 and name not in self.products:
                    self.products[name] = factors
                    value = " * ".join(f"(long long) {f}" for f in factors)
                    self.variables[name] = Variable(name, "long long", (), "scalar", "long long", "", "private",
                                                    c_value=value)
                    self.params.append(name)
                out[name] = out.get(name, 0) + cx * cy
        constant = out.pop("", 0)
        return Affine.of({n: c for n, c in out.items() if c}, constant)

    def _sizeof(self, node: c_ast.Node) -> int | None:
        """``sizeof`` of an arithmetic type or of an array variable with constant sizes (or one of
        its rows/elements), in bytes; ``None`` otherwise."""
        if isinstance(node, c_ast.Typename):
            t = parse_type(self.sym.resolve(c_text(node)))
            return t.size if t is not None else None
        depth = 0
        while isinstance(node, c_ast.ArrayRef):
            depth += 1
            node = node.name
        if not isinstance(node, c_ast.ID):
            return None
        var = self.sym.variable(node.name)
        if var is None or var.kind not in ("array", "scalar"):
            return None
        elem = parse_type(var.scalar_type)
        if elem is None:
            return None
        size = elem.size
        for dim in var.shape[depth:]:
            try:
                size *= int(dim.rstrip("uUlL"), 0)
            except ValueError:
                return None
        return size

    # -- accesses and expressions

    def _check_not_volatile(self, name: str, node: c_ast.Node) -> None:
        if self.sym.is_volatile(name):
            raise self._fail(node, "volatile-access",
                             f"'{name}' is volatile: every access to it is an observable side effect that must "
                             "happen as written")

    def _lookup(self, name: str, node: c_ast.Node) -> Variable:
        var = self.sym.variable(name)
        if var is None:
            raise self._fail(node, "unsupported-statement", f"cannot find the declaration of '{name}'")
        self._check_not_volatile(name, node)
        self.variables.setdefault(name, var)
        return var

    def lvalue(self, node: c_ast.Node, stmt: c_ast.Node | None = None) -> Access:
        if isinstance(node, c_ast.ID):
            if node.name in self.local_accs:
                return self.local_accs[node.name]
            if node.name in self.nest_locals:
                raise self._fail(node, "unsupported-statement",
                                 f"local variable '{node.name}' is assigned after its declaration")
            if node.name in self._iterators():
                raise self._fail(node, "unsupported-statement", f"loop iterator '{node.name}' is assigned")
            if node.name in self.privatizable:
                raise _NotPrivate(node.name)  # updated before it is defined in this scope
            var = self._lookup(node.name, node)
            if var.kind != "scalar":
                raise self._fail(node, "pointer-arithmetic", f"assignment to pointer '{node.name}'")
            return Access(node.name, ())
        if isinstance(node, c_ast.ArrayRef):
            return self.array_ref(node)
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            raise self._fail(stmt or node, "pointer-arithmetic", f"write through pointer dereference '{c_text(node)}'")
        raise self._fail(node, "unsupported-statement", f"cannot model the assignment target '{c_text(node)}'")

    def array_ref(self, node: c_ast.ArrayRef) -> Access:
        subs: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        subs.reverse()
        if isinstance(base, c_ast.UnaryOp) and base.op == "*" and isinstance(base.expr, c_ast.ID):
            # (*B)[r][s] with ``T (*B)[R][S]``: the same element as B[0][r][s]
            subs.insert(0, c_ast.Constant("int", "0"))
            base = base.expr
        if not isinstance(base, c_ast.ID):
            code = "pointer-arithmetic" if isinstance(base, c_ast.BinaryOp | c_ast.UnaryOp) else "unsupported-statement"
            raise self._fail(node, code, f"array access '{c_text(node)}' has a computed base")
        var = self._lookup(base.name, node)
        if var.kind == "scalar":
            raise self._fail(node, "unsupported-statement", f"'{base.name}' is subscripted but is not an array")
        if len(subs) != len(var.shape):
            raise self._fail(node, "unsupported-statement",
                             f"'{c_text(node)}' uses {len(subs)} of the {len(var.shape)} dimensions of '{base.name}'")
        index: list[Affine] = []
        for s in subs:
            try:
                index.append(self.affine(s))
            except _NotAffine:
                rows = self._delinearized(node, base.name, var, subs)
                if rows is not None:
                    return rows
                raise self._fail(node, "non-affine-subscript",
                                 f"subscript '{c_text(node)}' is not affine") from None
        if self.delin.viewed(base.name):  # A[j] beside A[i*m + j]: A[0][j] in the same view
            rows = self._delinearized(node, base.name, var, subs)
            if rows is None:
                raise self._fail(node, "non-affine-subscript",
                                 f"'{c_text(node)}' indexes '{base.name}' as a flat array, which the nest also indexes "
                                 "as a multi-dimensional one ('A[i*m + j]'), and it does not fit that view")
            return rows
        self.flat_accesses.add(base.name)
        return Access(base.name, tuple(index))

    def _delinearized(self, node: c_ast.ArrayRef, name: str, var: Variable, subs: list[c_ast.Node]) -> Access | None:
        """``A[poly]`` on a flat (one-dimensional) array whose subscript multiplies iterators by run-time
        sizes, as a multi-dimensional access (``mdpoly.frontend.delinearize``; the view's
        preconditions are added in ``build``)."""
        if len(subs) != 1 or var.kind not in ("pointer", "array") or len(var.shape) != 1:
            return None
        try:
            poly = self.polynomial(subs[0])
        except _NotAffine:
            return None
        extents: dict[str, tuple[str, ...]] = {}  # iterators from 0 to a parameter (or a product)
        for lp in (self.loops[k] for k in self.stack):
            if lp.lower == Affine() and lp.upper.constant == 0 and [c for _, c in lp.upper.terms] == [1]:
                bound = lp.upper.terms[0][0]
                extents[lp.iterator] = tuple(sorted(self.products.get(bound, (bound,))))
        index = self.delin.access(name, poly, self._iterators(), partial(_product_name, self), extents)
        if index is None:
            return None
        if may_wrap(self.expr(subs[0]), self.name_type):
            raise self._fail(node, "non-affine-subscript",
                             f"subscript '{c_text(node)}' is computed in a narrow unsigned type, which wraps where "
                             "the address does not: it cannot be split into dimensions")
        if name in self.flat_accesses:  # an earlier A[j]: rebuilt in this view
            raise self.delin.relayout()
        return Access(name, index)

    def polynomial(self, node: c_ast.Node) -> dict[tuple[str, ...], int]:
        """An integer expression of iterators and size parameters as monomials (sorted name
        tuples) -> coefficients; raises ``_NotAffine`` for anything else."""
        if isinstance(node, c_ast.Constant):
            return {(): _int_constant(node)}
        if isinstance(node, c_ast.ID):  # an iterator, a parameter, a strided loop's L + s*k, a constant
            aff = self.affine(node)
            poly: dict[tuple[str, ...], int] = {(n,): c for n, c in aff.terms}
            if aff.constant:
                poly[()] = aff.constant
            return poly
        if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
            inner = self.polynomial(node.expr)
            return inner if node.op == "+" else {m: -c for m, c in inner.items()}
        if isinstance(node, c_ast.Cast):
            self.affine(c_ast.Cast(node.to_type, c_ast.Constant("int", "0")))  # an integer cast, else _NotAffine
            return self.polynomial(node.expr)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*"):
            a, b = self.polynomial(node.left), self.polynomial(node.right)
            out: dict[tuple[str, ...], int] = {}
            if node.op == "*":
                for ma, ca in a.items():
                    for mb, cb in b.items():
                        m = tuple(sorted(ma + mb))
                        out[m] = out.get(m, 0) + ca * cb
            else:
                out = dict(a)
                for m, c in b.items():
                    out[m] = out.get(m, 0) + (c if node.op == "+" else -c)
            return {m: c for m, c in out.items() if c != 0}
        raise _NotAffine

    def expr(self, node: c_ast.Node) -> Expr:
        return _ExprBuilder(self).visit(node)


def _product_name(nb: NestBuilder, names: tuple[str, ...]) -> str | None:
    """The size parameter standing for the product of ``names`` (``NestBuilder._parameter_product``)."""
    aff = Affine.of({names[0]: 1})
    node: c_ast.Node = c_ast.ID(names[0])
    try:
        for n in names[1:]:
            node = c_ast.BinaryOp("*", node, c_ast.ID(n))
            aff = nb._parameter_product(node, aff, Affine.of({n: 1}))
    except _NotAffine:
        return None
    ((name, _),) = aff.terms
    return name


def _guard_side(nb: NestBuilder, node: c_ast.Node) -> Affine | None:
    """A select condition's side in size parameters the nest already has (``frontend.guarded_reads``)."""
    known = set(nb.params) | set(nb._iterators()) | set(nb.sym.enum_values)
    if not _names_in(node) <= known:
        return None
    try:
        e = nb.expr(node)
        t = expr_type(e, nb.name_type)
        if t is None or not t.is_integer or not t.signed or not exact_signed(e, nb.name_type):
            return None  # an unsigned comparison wraps
        return nb.affine(node)
    except _NotAffine:
        return None


def _declare_value(nb: NestBuilder, name: str, value: str) -> None:
    """Declares the size parameter ``name`` standing for the C expression ``value`` (a view's extent)."""
    if name not in nb.variables:
        nb.variables[name] = Variable(name, "long long", (), "scalar", "long long", "", "private", c_value=value)
        nb.params.append(name)


@dataclass(frozen=True, slots=True)
class _Stale:
    """A temporary whose inputs a later statement overwrote (it cannot be inlined any more)."""

    name: str
    buffer: str


def _refs(e: Expr) -> list[Access]:
    out: list[Access] = []
    for a in expr_refs(e):
        if a not in out:
            out.append(a)
    return out


def _same_type_constant(e: Expr) -> bool:
    return isinstance(e, Const)


class _ExprBuilder(c_ast.NodeVisitor):
    """Right-hand sides: pycparser expression -> ``Expr``; raises on anything else."""

    def __init__(self, nb: NestBuilder) -> None:
        self.nb = nb

    def generic_visit(self, node: c_ast.Node) -> Expr:
        raise self.nb._fail(node, "unsupported-statement",
                            f"expression '{c_text(node)}' ({type(node).__name__}) is not supported")

    def visit_Constant(self, node: c_ast.Constant) -> Expr:
        return Const(node.value)

    def visit_ID(self, node: c_ast.ID) -> Expr:
        nb, name = self.nb, node.name
        if name in nb.inductions:
            return nb.inductions[name][1]
        if name in nb.strided:  # i = start + step * k, in i's own type
            _lo, step, k, c_type, start = nb.strided[name]
            return Cast(c_type, Binary("+", Cast("long long", start), Binary("*", Const(str(step)), Var(k))))
        if name in nb._iterators():
            return Var(name)
        if name in nb.temps:
            value = nb.temps[name]
            if isinstance(value, _Stale):
                raise nb._fail(node, "unsupported-statement",
                               f"temporary '{name}' is used after the nest overwrote '{value.buffer}', which its "
                               "value was read from")
            return value
        if name in nb.local_accs:
            return Ref(nb.local_accs[name])
        if name in nb.nest_locals:
            raise nb._fail(node, "unsupported-statement", f"local variable '{name}' is used outside its scope")
        if name in nb.privatizable:
            raise _NotPrivate(name)  # read before it is defined in this scope: its value comes from outside
        if name in nb.sym.enums and nb.sym.variable(name) is None:
            return Const(name)
        var = nb._lookup(name, node)
        if var.kind != "scalar":
            raise nb._fail(node, "pointer-arithmetic", f"array '{name}' is used as a pointer value")
        if name in nb.written:
            return Ref(Access(name, ()))
        return Var(name)

    def visit_ArrayRef(self, node: c_ast.ArrayRef) -> Expr:
        return Ref(self.nb.array_ref(node))

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> Expr:
        if node.op in ("-", "+", "!", "~"):
            return Unary(node.op, self.visit(node.expr))
        if node.op in ("*", "&"):
            raise self.nb._fail(node, "pointer-arithmetic", f"pointer operation '{c_text(node)}'")
        if node.op == "sizeof":
            return Const(c_text(node))
        raise self.nb._fail(node, "unsupported-statement", f"side effect '{c_text(node)}' inside an expression")

    def visit_BinaryOp(self, node: c_ast.BinaryOp) -> Expr:
        if node.op not in _BINARY_OPS:
            raise self.nb._fail(node, "unsupported-statement", f"operator '{node.op}'")
        return Binary(node.op, self.visit(node.left), self.visit(node.right))

    def visit_Cast(self, node: c_ast.Cast) -> Expr:
        t = c_text(node.to_type)
        if "*" in t:
            raise self.nb._fail(node, "pointer-arithmetic", f"pointer cast '{c_text(node)}'")
        resolved = self.nb.sym.resolve(t)
        return Cast(t, self.visit(node.expr), resolved if resolved != t else "")

    def visit_TernaryOp(self, node: c_ast.TernaryOp) -> Expr:
        cond, its, aff = self.visit(node.cond), set(self.nb._iterators()), partial(_guard_side, self.nb)
        with guarded(self.nb.delin.guards, bounds_of(node.cond, True, its, aff)):  # frontend.guarded_reads
            then = self.visit(node.iftrue)
        with guarded(self.nb.delin.guards, bounds_of(node.cond, False, its, aff)):
            return Cond(cond, then, self.visit(node.iffalse))

    def visit_FuncCall(self, node: c_ast.FuncCall) -> Expr:
        name = node.name.name if isinstance(node.name, c_ast.ID) else c_text(node.name)
        if name not in PURE_FUNCTIONS:
            raise self.nb._fail(node, "side-effect-call", f"call to '{name}' may have side effects")
        args = tuple(self.visit(a) for a in (node.args.exprs if node.args else []))
        return Call(name, args)

    def visit_Assignment(self, node: c_ast.Assignment) -> Expr:
        raise self.nb._fail(node, "unsupported-statement", f"assignment '{c_text(node)}' inside an expression")


def _minmax_kind(node: c_ast.Node) -> str | None:
    """``max``/``min`` for ``a > b ? a : b`` (and its <, <=, >= and swapped forms), else None."""
    if not (isinstance(node, c_ast.TernaryOp) and isinstance(node.cond, c_ast.BinaryOp)
            and node.cond.op in ("<", "<=", ">", ">=")):
        return None
    left, right = c_text(node.cond.left), c_text(node.cond.right)
    then, other = c_text(node.iftrue), c_text(node.iffalse)
    if {left, right} != {then, other} or left == right:
        return None
    picks_left_when_greater = (then == left) == (node.cond.op in (">", ">="))
    return "max" if picks_left_when_greater else "min"


def _header_lists(node: c_ast.For) -> bool:
    """Whether the header sets or steps several variables (``int i = 0, k = 0``, ``i++, j--``)."""
    init = node.init
    return (isinstance(init, c_ast.DeclList) and len(init.decls) > 1) or isinstance(init, c_ast.ExprList) \
        or isinstance(node.next, c_ast.ExprList)


def _stepped_name(n: c_ast.Node) -> str | None:
    """The variable a loop increment steps (``i++``, ``i += 2``, ``i = i + 1``), else None."""
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "p++", "--", "p--") and isinstance(n.expr, c_ast.ID):
        return str(n.expr.name)
    if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
        return str(n.lvalue.name)
    return None


def _is_id(node: c_ast.Node | None, name: str) -> bool:
    return isinstance(node, c_ast.ID) and node.name == name


def _scale(a: Affine, k: int) -> Affine:
    return Affine.of({n: c * k for n, c in a.terms}, a.constant * k)


def _combine(a: Affine, b: Affine, sign: int) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) + sign * c
    return Affine.of(d, a.constant + sign * b.constant)


def _add(a: Affine, k: int) -> Affine:
    return Affine(a.terms, a.constant + k)


#: what ``x op= e`` adds where a predicate fails (``mdpoly.frontend.scop.NestBuilder._predicated``)
_NEUTRAL: dict[str, Expr] = {"+=": Const("0"), "-=": Const("0"), "|=": Const("0"), "^=": Const("0"),
                             "<<=": Const("0"), ">>=": Const("0"), "*=": Const("1"), "/=": Const("1"),
                             "&=": Unary("~", Const("0"))}

#: the most disjoint pieces a condition's domain is split into (to find the constraints they share)
_MAX_PIECES = 16


def _pieces(conj: list[tuple[Affine, ...]]) -> list[tuple[Affine, ...]]:
    """Conjunctions without constant constraints: one that cannot hold is dropped, one that
    always holds is left out of its conjunction."""
    out: list[tuple[Affine, ...]] = []
    for c in conj:
        if any(g.is_constant and g.constant < 0 for g in c):
            continue
        piece = tuple(dict.fromkeys(g for g in c if not g.is_constant))
        if piece not in out:
            out.append(piece)
    return out


def _intersect(a: list[tuple[Affine, ...]], b: list[tuple[Affine, ...]]) -> list[tuple[Affine, ...]]:
    """The pieces of ``A and B`` for disjoint pieces ``a`` of A and ``b`` of B (disjoint again)."""
    return _pieces([x + y for x in a for y in b])


def _complement(pieces: list[tuple[Affine, ...]]) -> list[tuple[Affine, ...]]:
    """Disjoint pieces of the complement of the union of ``pieces``: the complement of
    ``c1 and ... and cm`` is the disjoint union over ``t`` of ``c1 .. c(t-1) and not ct``, where
    ``not (e >= 0)`` is ``-e - 1 >= 0``; the complement of a union intersects those."""
    out: list[tuple[Affine, ...]] = [()]
    for conj in pieces:
        comp = [(*conj[:t], _add(_scale(g, -1), -1)) for t, g in enumerate(conj)]
        out = _intersect(out, comp)
    return out


def extract_scop(parsed: ParsedFile, cand: Candidate, privatize: bool = True) -> Scop:
    """The ``Scop`` of one candidate. :raises UnsupportedInput: with a located reason.

    With ``privatize``, scalars that may be private to each iteration are tried as such (one
    that turns out to be read before it is defined -- its value flows in from outside the scope
    -- is shared again and the model rebuilt). Only a nest generated as one MDH computation gives
    each iteration its copy: a model for rearranging the nest's own text (distribution) must not
    privatize. The nest is first normalized (``mdpoly.frontend.normalize``: member reads hoisted,
    local pointers and index temporaries substituted) on a copy of its AST."""
    norm = normalize_candidate(parsed, cand, candidate_symbols(parsed, cand), privatize)
    cand, symbols = norm.cand, norm.symbols
    private = privatizable_scalars(cand, symbols) if privatize else frozenset()
    layouts: dict[str, Layout] = {}
    rebuilds = 0
    while True:
        try:
            return norm.finish(NestBuilder(cand, symbols, private, layouts).build())
        except _NotPrivate as e:
            private = private - {e.name}
        except Relayout as e:  # an array's view grows (or loses its base offset) with each rebuild
            layouts, rebuilds = e.layouts, rebuilds + 1
            if rebuilds > 16:
                raise norm.explained(UnsupportedInput("the flat subscripts of the nest admit no common view of their "
                                                      "arrays", cand.loc, "non-affine-subscript")) from None
        except UnsupportedInput as e:
            raise norm.explained(e) from None


class _NotPrivate(Exception):
    """Scalar ``name`` cannot be private to the iterations: rebuild the model with it shared."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


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


# }}}
