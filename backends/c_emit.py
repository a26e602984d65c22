"""Structured C emission: Plan nodes -> pycparser ``c_ast`` -> text via ``CGenerator``.

``CEmitter`` turns Plan statements, values and ``Affine`` expressions into ``c_ast`` nodes; the
target-specific spellings (loop pragmas, thread builtins) come from a ``Dialect`` the backend
supplies. All C text of generated loops and declarations is printed by pycparser's
``CGenerator(reduce_parentheses=True)``; nothing here decides what the code does.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Mapping
from typing import Protocol, runtime_checkable

from pycparser import c_ast, c_generator

from mdpoly.backends.shared_temps import TemporaryNames, clone, share_in_block
from mdpoly.ir.expr_text import parse_expr
from mdpoly.ir.fields import struct_rows_type, view_member
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.mdh import (
    AddressRange,
    Affine,
    AliasCheck,
    Buffer,
    Combine,
    ExitValue,
    Precondition,
    with_c_values,
)
from mdpoly.ir.nest import ORIGINAL_NEST
from mdpoly.ir.plan import (
    Apply,
    Assign,
    Assume,
    AsType,
    Barrier,
    Block,
    BlockEnd,
    Const,
    Declare,
    FExpr,
    Guard,
    Iterator,
    Loop,
    ParallelRegion,
    Plan,
    Prefetch,
    Ref,
    Stmt,
    TeamThreads,
    ThreadCount,
    ThreadNum,
    Value,
    Var,
)

_QUALS = ("const", "volatile", "restrict")
#: The type of generated loop variables and index arithmetic (signed, 64-bit on LP64): the user's
#: iterators are seen in their own types only through ``AsType`` bindings.
INDEX_TYPE = "long"


class Dialect(Protocol):
    """Target spellings the emitter asks for."""

    def loop_pragmas(self, loop: Loop) -> list[str]: ...

    def thread_count(self, stmt: ThreadCount) -> c_ast.Node: ...

    def region_pragmas(self, region: ParallelRegion) -> list[str]: ...

    def thread_id(self) -> c_ast.Node: ...


@runtime_checkable
class TeamSpellings(Protocol):
    """Spellings of a dialect whose functions may be called by every thread of an enclosing team
    (``TeamThreads``, ``Barrier``); the others refuse those statements."""

    def team_size(self) -> c_ast.Node: ...

    def barrier_pragmas(self) -> list[str]: ...


# {{{ types and declarations


def _type_decl(name: str | None, elem_type: str) -> c_ast.TypeDecl:
    words = elem_type.split()
    quals = [w for w in words if w in _QUALS]
    names = [w for w in words if w not in _QUALS]
    return c_ast.TypeDecl(name, quals, None, c_ast.IdentifierType(names))


def _decl(name: str, type_: c_ast.Node, init: c_ast.Node | None = None,
          storage: list[str] | None = None) -> c_ast.Decl:
    return c_ast.Decl(name, [], [], storage or [], [], type_, init, None)


def param_decl(buf: Buffer) -> c_ast.Node:
    """The function parameter for ``buf`` (see ``Buffer.kind``); ``Buffer.c_decl`` verbatim when set
    (the front end printed it from the user's declaration, so it may hold typedef names)."""
    if buf.c_decl and buf.kind != "scalar":
        return c_ast.ID(buf.c_decl)
    if buf.kind == "scalar":
        base = _type_decl(buf.name, buf.elem_type)
        return _decl(buf.name, c_ast.PtrDecl([], base) if buf.written else base)
    if buf.kind == "pointer":
        return _decl(buf.name, c_ast.PtrDecl([], _type_decl(buf.name, buf.elem_type)))
    t: c_ast.Node = _type_decl(buf.name, buf.elem_type)
    for dim in reversed(buf.shape):
        t = c_ast.ArrayDecl(t, c_ast.ID(dim) if dim.strip() else None, [])
    return _decl(buf.name, t)

# }}}


def _rows_view(b: Buffer, values: Mapping[str, str]) -> c_ast.Node:
    """``(T (*)[d2][d1])A``: the user's flat pointer as the array the generated function takes
    (its inner extents ``b.shape[1:]``; a name the front end introduced is its C expression ``values``)."""
    name = _valued(b.name, values)
    base = c_ast.ID(f"({name} + {_valued(b.base_offset, values)})" if b.base_offset else name)
    if view_member(b.name) and b.c_decl:   # rows of the user's structs (frontend.struct_fields.view_variable)
        rows = "".join(f"[{_valued(d, values)}]" for d in b.shape[1:])
        return c_ast.ID(f"(({struct_rows_type(b.c_decl, b.name)} (*){rows}) ({base.name}))")
    t: c_ast.Node = _type_decl(None, b.elem_type)
    for dim in reversed(b.shape[1:]):
        t = c_ast.ArrayDecl(t, c_ast.ID(_valued(dim, values)), [])
    return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl([], t)), base)


_valued = with_c_values


def _index_cast(node: c_ast.Node, c_type: str = INDEX_TYPE) -> c_ast.Cast:
    return c_ast.Cast(c_ast.Typename(None, [], None, _type_decl(None, c_type)), node)


def affine(a: Affine, wide: Collection[str] = (), values: Mapping[str, str] | None = None) -> c_ast.Node:
    """``Affine`` as a c_ast expression (terms in order, then the constant).

    Names in ``wide`` (size parameters, which the user may have declared ``unsigned`` or
    narrower) are converted to ``INDEX_TYPE`` before any arithmetic, so ``n - lo`` cannot wrap.
    """
    expr: c_ast.Node | None = None
    for name, c in sorted(a.terms, key=lambda t: t[1] < 0):
        base = c_ast.ID(f"({values[name]})") if values and name in values else c_ast.ID(name)
        term: c_ast.Node = _index_cast(base) if name in wide else base
        if abs(c) != 1:
            term = c_ast.BinaryOp("*", c_ast.Constant("int", str(abs(c))), term)
        if expr is None:
            expr = term if c > 0 else c_ast.UnaryOp("-", term)
        else:
            expr = c_ast.BinaryOp("+" if c > 0 else "-", expr, term)
    if expr is None:
        return c_ast.Constant("int", str(a.constant)) if a.constant >= 0 else c_ast.UnaryOp(
            "-", c_ast.Constant("int", str(-a.constant)))
    if a.constant:
        expr = c_ast.BinaryOp("+" if a.constant > 0 else "-", expr, c_ast.Constant("int", str(abs(a.constant))))
    return expr


def _min(values: list[c_ast.Node], cmp: str = "<") -> c_ast.Node:
    out = values[0]
    for v in values[1:]:
        out = c_ast.TernaryOp(c_ast.BinaryOp(cmp, out, v), out, v)
    return out


def _max(values: list[c_ast.Node]) -> c_ast.Node:
    return _min(values, ">")


_ASSIGN_OPS = {Combine.ADD: "+=", Combine.MUL: "*=", Combine.BAND: "&=", Combine.BOR: "|=", Combine.BXOR: "^="}
_BIN_OPS = {Combine.ADD: "+", Combine.MUL: "*", Combine.BAND: "&", Combine.BOR: "|", Combine.BXOR: "^"}


class CEmitter:
    """Emits one Plan as a ``static`` C function and its call, through a ``Dialect``."""

    def __init__(self, dialect: Dialect, wide: Collection[str] = ()) -> None:
        self.dialect = dialect
        self.gen = c_generator.CGenerator(reduce_parentheses=True)
        self._parsed: dict[str, c_ast.Node | None] = {}
        #: names widened to ``INDEX_TYPE`` in index arithmetic (see ``affine``)
        self.wide = frozenset(wide)
        #: names printed as C expressions (``Buffer.c_value``), set while rendering a call site
        self.values: dict[str, str] = {}
        #: locals of repeated temporaries (``mdpoly.backends.shared_temps``)
        self.temporaries = TemporaryNames()
        #: the promise of ``Plan.nonnegative`` while its copy is rendered (``_promised_body``)
        self.promise: c_ast.If | None = None

    def affine(self, a: Affine) -> c_ast.Node:
        return affine(a, self.wide, self.values)

    def _min(self, values: tuple[Affine, ...]) -> c_ast.Node:
        return _min([self.affine(u) for u in values])

    # {{{ values

    def value(self, v: Value) -> c_ast.Node:
        if isinstance(v, Ref):
            if v.deref:
                return c_ast.UnaryOp("*", c_ast.ID(v.name))
            node: c_ast.Node = c_ast.ID(v.name)
            for e in v.index:
                node = c_ast.ArrayRef(node, self.affine(e))
            member = view_member(v.name)  # an array-of-structs field: V[e].f (mdpoly.ir.fields)
            return c_ast.StructRef(node, ".", c_ast.ID(member)) if member and v.index else node
        if isinstance(v, Var):
            return c_ast.ID(v.name)
        if isinstance(v, Const):
            return c_ast.ID(v.text)
        if isinstance(v, Apply):
            a, b = self.value(v.a), self.value(v.b)
            if v.op in _BIN_OPS:
                return c_ast.BinaryOp(_BIN_OPS[v.op], a, b)
            cmp = ">" if v.op is Combine.MAX else "<"
            return c_ast.TernaryOp(c_ast.BinaryOp(cmp, a, b), a, self.value(v.b))
        if isinstance(v, FExpr):
            return self.fexpr(v)
        if isinstance(v, BlockEnd):
            lo = self.affine(v.lower)
            span = c_ast.BinaryOp("-", self._min(v.upper), self.affine(v.lower))
            step = c_ast.Constant("int", str(v.step))
            return c_ast.BinaryOp("+", lo, c_ast.BinaryOp("*", c_ast.BinaryOp("/", span, step), step))
        if isinstance(v, AsType):
            return _index_cast(self.affine(v.index), v.c_type)
        if isinstance(v, ThreadNum):
            return self.dialect.thread_id()
        raise TypeError(f"unknown value {v!r}")

    def _parse_expr(self, text: str) -> c_ast.Node | None:
        if text not in self._parsed:
            self._parsed[text] = parse_expr(text)
        return self._parsed[text]

    def _parse_plain(self, text: str) -> c_ast.Node | None:
        return parse_expr(text, rendered=False)

    def fexpr(self, v: FExpr) -> c_ast.Node:
        """The user's expression with each bound formal replaced by its value."""
        binds = {name: val for name, val in v.bindings}
        parsed = self._parse_expr(v.text)
        if parsed is not None:
            return _substitute(clone(parsed), {n: (lambda x=x: self.value(x)) for n, x in binds.items()})
        text = v.text
        for name, val in binds.items():
            rendered = "(" + self.gen.visit(self.value(val)) + ")"
            text = re.sub(rf"(?<![\w.])(?<!->){re.escape(name)}\b", _verbatim(rendered), text)
        return c_ast.ID(f"({text})")

    # }}}

    # {{{ statements

    def stmts(self, body: tuple[Stmt, ...]) -> list[c_ast.Node]:
        out: list[c_ast.Node] = []
        for s in body:
            out += self.stmt(s)
        return share_in_block(out, self.temporaries)

    def stmt(self, s: Stmt) -> list[c_ast.Node]:
        if isinstance(s, Declare) and s.heap:
            return self.heap_declare(s)
        if isinstance(s, Declare):
            t: c_ast.Node = _type_decl(s.name, s.elem_type)
            for e in reversed(s.shape):
                t = c_ast.ArrayDecl(t, self.affine(e), [])
            return [_decl(s.name, t, self.value(s.init) if s.init is not None else None)]
        if isinstance(s, Assign):
            lhs = self.value(s.target)
            v = s.value
            if isinstance(v, Apply) and v.op in _ASSIGN_OPS and v.a == s.target:
                return [c_ast.Assignment(_ASSIGN_OPS[v.op], lhs, self.value(v.b))]
            return [c_ast.Assignment("=", lhs, self.value(v))]
        if isinstance(s, Loop):
            loop = [c_ast.Pragma(p) for p in self.dialect.loop_pragmas(s)] + [self.loop(s)]
            if self.promise is not None and s.schedule in ("parallel", "thread_for"):
                loop[-1].stmt.block_items.insert(0, copy.deepcopy(self.promise))
            if s.share is None:
                return loop
            return [c_ast.Compound([_decl(s.share.var, _type_decl(s.share.var, f"const {INDEX_TYPE}"),
                                          self.share_value(s)), *loop])]
        if isinstance(s, Block):
            frees = [c_ast.FuncCall(c_ast.ID("free"), c_ast.ExprList([c_ast.ID(d.name)]))
                     for d in s.body if isinstance(d, Declare) and d.heap]
            return [c_ast.Compound(self.stmts(s.body) + frees)]
        if isinstance(s, ThreadCount):
            return [_decl(s.var, _type_decl(s.var, "int"), self.dialect.thread_count(s))]
        if isinstance(s, Guard):
            zero = c_ast.Constant("int", "0")
            cond = _all([c_ast.BinaryOp(">=", self.affine(c), zero) for c in s.conds])
            orelse = c_ast.Compound(self.stmts(s.orelse)) if s.orelse else None
            return [c_ast.If(cond, c_ast.Compound(self.stmts(s.body)), orelse)]
        if isinstance(s, Assume):
            empty = c_ast.BinaryOp(">=", self.affine(s.lower), self._min(s.upper))
            return [c_ast.If(empty, c_ast.FuncCall(c_ast.ID("__builtin_unreachable"), None), None)]
        if isinstance(s, ParallelRegion):
            tid = _decl(s.thread_var, _type_decl(s.thread_var, "int"), self.dialect.thread_id())
            promise = [copy.deepcopy(self.promise)] if self.promise is not None else []
            return [c_ast.Pragma(p) for p in self.dialect.region_pragmas(s)] + [
                c_ast.Compound([tid, *promise, *self.stmts(s.body)])]
        if isinstance(s, TeamThreads | Barrier):
            return self.team_stmt(s)
        if isinstance(s, Prefetch):
            address = c_ast.UnaryOp("&", self.value(s.ref))
            return [c_ast.FuncCall(c_ast.ID("__builtin_prefetch"), c_ast.ExprList([address]))]
        raise TypeError(f"unknown statement {s!r}")

    def team_stmt(self, s: TeamThreads | Barrier) -> list[c_ast.Node]:
        dialect = self.dialect
        if not isinstance(dialect, TeamSpellings):
            raise TypeError(f"{s!r} outside a function run by a thread team")
        if isinstance(s, Barrier):
            return [c_ast.Pragma(p) for p in dialect.barrier_pragmas()]
        out = [_decl(s.nthreads_var, _type_decl(s.nthreads_var, "int"), dialect.team_size())] if s.nthreads_var else []
        if s.thread_var:
            out.append(_decl(s.thread_var, _type_decl(s.thread_var, "int"), dialect.thread_id()))
        return out

    def declarations(self, decls: tuple[Declare, ...]) -> str:
        """``decls`` as C declaration statements, one a line."""
        return "".join(str(self.gen.visit(n)) + ";\n" for d in decls for n in self.stmt(d))

    def heap_declare(self, s: Declare) -> list[c_ast.Node]:
        """``T (*name)[s1]... = aligned_alloc(64, s0 * sizeof *name)`` (the size rounded up to
        the alignment, as C11 asks), then ``abort()`` when the allocation failed: the
        computation cannot go on without its buffer, and a wrong result is worse than none."""
        if not s.shape:
            raise TypeError(f"heap declaration of a scalar {s.name!r}")

        def rows(name: str | None) -> c_ast.Node:
            t: c_ast.Node = _type_decl(name, s.elem_type)
            for e in reversed(s.shape[1:]):
                t = c_ast.ArrayDecl(t, self.affine(e), [])
            return c_ast.PtrDecl([], t)

        size_t = c_ast.Typename(None, [], None, _type_decl(None, "size_t"))
        row = c_ast.UnaryOp("sizeof", c_ast.UnaryOp("*", c_ast.ID(s.name)))
        total = c_ast.BinaryOp("*", c_ast.Cast(size_t, self.affine(s.shape[0])), row)
        align = c_ast.Constant("int", "64")
        rounded = c_ast.BinaryOp("*", c_ast.BinaryOp("/", c_ast.BinaryOp("+", total, c_ast.Constant("int", "63")),
                                                     align), align)
        alloc = c_ast.FuncCall(c_ast.ID("aligned_alloc"), c_ast.ExprList([align, rounded]))
        init = c_ast.Cast(c_ast.Typename(None, [], None, rows(None)), alloc)
        fail = c_ast.If(c_ast.UnaryOp("!", c_ast.ID(s.name)), c_ast.FuncCall(c_ast.ID("abort"), None), None)
        return [_decl(s.name, rows(s.name), init), fail]

    def share_value(self, lp: Loop) -> c_ast.Node:
        """A parallel tile loop's run-time step (``TileShare``): ``mdp_tile_share(...)`` for the
        dialect's team, its largest value where the dialect has no thread team."""
        share = lp.share
        assert share is not None
        most = c_ast.Constant("long", str(share.most))
        team = getattr(self.dialect, "share_team", None)
        if team is None:
            return most
        points = c_ast.BinaryOp("-", self._min(lp.upper), self.affine(lp.lower))
        others: c_ast.Node = c_ast.Constant("long", "1")
        for lower, upper, tile in share.others:
            size = c_ast.Constant("long", str(tile))
            span = c_ast.BinaryOp("-", self.affine(upper), self.affine(lower))
            count = c_ast.BinaryOp("/", c_ast.BinaryOp("+", span, c_ast.Constant("long", str(tile - 1))), size)
            others = c_ast.BinaryOp("*", others, count)
        args = [points, most, c_ast.Constant("long", str(share.least)), others, team(lp)]
        return c_ast.FuncCall(c_ast.ID("mdp_tile_share"), c_ast.ExprList(args))

    def loop(self, lp: Loop) -> c_ast.For:
        var = c_ast.ID(lp.var)
        lower = _max([self.affine(e) for e in (lp.lower, *lp.more_lower)])
        init = c_ast.DeclList([_decl(lp.var, _type_decl(lp.var, INDEX_TYPE), lower)])
        cond = c_ast.BinaryOp("<", var, self._min(lp.upper))
        size: c_ast.Node = c_ast.ID(lp.share.var) if lp.share else c_ast.Constant("int", str(lp.step))
        step = (c_ast.UnaryOp("p++", c_ast.ID(lp.var)) if lp.step == 1 and not lp.share
                else c_ast.Assignment("+=", c_ast.ID(lp.var), size))
        return c_ast.For(init, cond, step, c_ast.Compound(self.stmts(lp.body)))

    # }}}

    def function(self, plan: Plan) -> str:
        """``static void name(params) { ... }`` as text."""
        self.wide = self.wide | size_params(plan.params)
        args = c_ast.ParamList([param_decl(b) for b in plan.params])
        ftype = c_ast.FuncDecl(args, _type_decl(plan.name, "void"))
        fdef = c_ast.FuncDef(_decl(plan.name, ftype, storage=["static"]), None,
                             c_ast.Compound(self._pinned_body(plan)))
        text = str(self.gen.visit(fdef))
        return "\n".join(line for line in text.splitlines() if line.strip()) + "\n"

    def _pinned_body(self, plan: Plan) -> list[c_ast.Node]:
        """The function's body; with pinned values, ``if (n == 4 && ...) { const int n = 4; ...
        body } else { body }``: the copy in which the compiler sees the constants, and the
        generic one."""
        body = self._promised_body(plan)
        if not plan.pinned:
            return body
        types = {b.name: b.elem_type for b in plan.params}
        test: c_ast.Node | None = None
        shadows: list[c_ast.Node] = []
        for name, literal in plan.pinned:
            same = c_ast.BinaryOp("==", c_ast.ID(name), c_ast.ID(f"({literal})"))
            test = same if test is None else c_ast.BinaryOp("&&", test, same)
            const = types[name] if "const" in types[name].split() else f"const {types[name]}"
            shadows.append(_decl(name, _type_decl(name, const), c_ast.ID(f"({literal})")))
        return [c_ast.If(test, c_ast.Compound(shadows + body), c_ast.Compound(self._promised_body(plan)))]

    def _promised_body(self, plan: Plan) -> list[c_ast.Node]:
        """The function's body; with ``Plan.nonnegative``, ``if (soft2 >= 0) { body promising it }
        else { body }``: the copy promises ``soft2 >= 0`` to the compiler at its start and at the
        start of every parallel loop's and region's body (the code OpenMP outlines into functions
        of their own, which do not see the test), so that it proves its square roots' arguments
        non-negative and drops their errno path."""
        body = self.stmts(plan.body)
        if not plan.nonnegative:
            return body
        zero = c_ast.Constant("int", "0")
        test = _all([c_ast.BinaryOp(">=", c_ast.ID(n), zero) for n in plan.nonnegative])
        self.promise = c_ast.If(c_ast.UnaryOp("!", test), c_ast.FuncCall(c_ast.ID("__builtin_unreachable"), None), None)
        try:
            promised = [self.promise, *self.stmts(plan.body)]
        finally:
            self.promise = None
        return [c_ast.If(test, c_ast.Compound(promised), c_ast.Compound(body))]

    def call(self, plan: Plan | KernelPlan) -> str:
        """``name(args);`` -- written scalars are passed by address -- then the exit values of the
        iterators declared outside the nest (``Plan.iterators``). With alias checks or
        preconditions: ``if (no overlap && preconditions) { call } else { <original nest> }``
        (see ``guarded``). The GPU backends pass their ``KernelPlan`` (same fields)."""
        self.wide = self.wide | size_params(plan.params)
        # at the call site, a parameter the front end introduced is its C expression
        self.values = {b.name: b.c_value for b in plan.params if b.c_value}
        try:
            args = [c_ast.UnaryOp("&", self._buffer(b.name)) if b.kind == "scalar" and b.written
                    else _rows_view(b, self.values) if b.rows_of
                    else c_ast.ID(f"({b.c_value})") if b.c_value else c_ast.ID(b.name) for b in plan.params]
            call: list[c_ast.Node] = [c_ast.FuncCall(c_ast.ID(plan.name), c_ast.ExprList(args))]
            call += self.exit_values(plan.iterators) + self.counter_exits(plan.mdh.exits)
            checks, pre = plan.mdh.alias_checks, plan.mdh.preconditions
            if not checks and not pre:
                if len(call) == 1:
                    return str(self.gen.visit(call[0])) + ";"
                return str(self.gen.visit(c_ast.Compound(call))).rstrip()
            return self.guarded(checks, c_ast.Compound(call), pre)
        finally:
            self.values = {}

    def counter_exits(self, exits: tuple[ExitValue, ...]) -> list[c_ast.Node]:
        """``name = c_expr;`` for each counter or bumped pointer the program reads after the nest
        (``MdhExpr.exits``): the generated code left it at its value on entry, which ``c_expr``
        reads, so these run after the call and never in the original nest's fallback."""
        out: list[c_ast.Node] = []
        for x in exits:
            parsed = self._parse_plain(x.c_expr)
            value = clone(parsed) if parsed is not None else c_ast.ID(f"({x.c_expr})")
            out.append(c_ast.Assignment("=", c_ast.ID(x.name), value))
        return out

    def exit_values(self, iterators: tuple[Iterator, ...]) -> list[c_ast.Node]:
        """Assignments leaving each live iterator at the value the original loops leave it:
        ``it = lower + max(extent, 0)`` when every enclosing loop ran at least once."""
        out: list[c_ast.Node] = []
        ran: list[c_ast.Node] = []
        for it in iterators:
            runs = c_ast.BinaryOp(">", self.affine(it.extent), c_ast.Constant("int", "0"))
            if it.live:
                terms = dict(it.lower.terms)
                for n, c in it.extent.terms:
                    terms[n] = terms.get(n, 0) + c
                end = Affine.of(terms, it.lower.constant + it.extent.constant)
                ran_to, start = end, it.lower
                if it.step < 0:  # a downward loop stops below its lowest value, starts at its highest
                    ran_to = Affine(it.lower.terms, it.lower.constant - 1)
                    start = Affine(end.terms, end.constant - 1)
                value: c_ast.Node = c_ast.TernaryOp(runs, self.affine(ran_to), self.affine(start))
                if it.extent.is_constant:
                    value = self.affine(ran_to if it.extent.constant > 0 else start)
                stmt: c_ast.Node = c_ast.Assignment("=", c_ast.ID(it.name), _index_cast(value, it.c_type))
                if ran:
                    stmt = c_ast.If(_all(ran), stmt, None)
                out.append(stmt)
            if not (it.extent.is_constant and it.extent.constant > 0):
                ran.append(runs)
        return out

    def guarded(self, checks: tuple[AliasCheck, ...], call: c_ast.Node,
                preconditions: tuple[Precondition, ...] = ()) -> str:
        """The call under run-time no-overlap checks and ``preconditions``; the else branch is
        ``ORIGINAL_NEST``, which the splicer replaces by the nest as written. Rows of indirect
        buffers are checked in a loop."""
        body = call if isinstance(call, c_ast.Compound) else c_ast.Compound([call])
        fallback = c_ast.Compound([c_ast.ID(ORIGINAL_NEST.rstrip(";"))])
        cond, rows = self._checks(checks, preconditions)
        if not rows:
            return str(self.gen.visit(c_ast.If(cond, body, fallback)))
        ok = c_ast.ID(f"{_GUARD}ok")
        items = [_decl(ok.name, _type_decl(ok.name, "int"), cond), *rows, c_ast.If(ok, body, fallback)]
        return str(self.gen.visit(c_ast.Compound(items))).rstrip()

    def _checks(self, checks: tuple[AliasCheck, ...],
                preconditions: tuple[Precondition, ...]) -> tuple[c_ast.Node, list[c_ast.Node]]:
        """The run-time checks as one condition and the statements that then check rows of
        indirect buffers one by one, while ``mdp_alias_ok`` holds: first the rows of each buffer
        the nest writes through its row pointers (``AliasCheck(r, r)``: in address order, their
        envelope apart from the row pointers), then the envelopes against the other ranges, then
        the rows of the other indirect buffers against what they may not overlap."""
        simple: list[c_ast.Node] = [self.precondition(p) for p in preconditions]
        row = c_ast.ID(f"{_GUARD}r")
        written = [c.a for c in checks if c.a == c.b and c.a.row_lo is not None]
        envelope = {r.buffer: (c_ast.ID(f"{_GUARD}lo{k}"), c_ast.ID(f"{_GUARD}hi{k}")) for k, r in enumerate(written)}
        after: list[c_ast.Node] = []
        per_row: list[tuple[AddressRange, c_ast.Node]] = []
        for chk in checks:
            if chk.a == chk.b:
                continue
            w = chk.a if chk.a.buffer in envelope else chk.b if chk.b.buffer in envelope else None
            if w is None:
                a, b = (chk.a, chk.b) if chk.b.row_lo is None else (chk.b, chk.a)
                simple.append(_disjoint(self._bytes(a), self._bytes(b)))
                if a.row_lo is not None:
                    per_row.append((a, _disjoint(self._row_bytes(a, row), self._bytes(b))))
                continue
            x = chk.b if w is chk.a else chk.a
            simple.append(_disjoint(self._bytes(w), self._bytes(x)))        # the row pointers, or ranges
            after.append(_disjoint(envelope[w.buffer], self._bytes(x)))      # w's rows
            if x.buffer in envelope:
                after.append(_disjoint(envelope[x.buffer], self._bytes(w)))
            if x.row_lo is not None:
                per_row.append((x, _disjoint(self._row_bytes(x, row), envelope[w.buffer])))
        ok = c_ast.ID(f"{_GUARD}ok")
        loops: list[c_ast.Node] = []
        for rng in written:
            loops += self._ordered_rows(rng, envelope[rng.buffer], ok, row)
        if after:
            loops.append(c_ast.Assignment("=", ok, _all([ok, *after])))
        for rng, test in per_row:
            assert rng.lo is not None and rng.hi is not None
            loops.append(c_ast.For(
                c_ast.DeclList([_decl(row.name, _type_decl(row.name, INDEX_TYPE), self.affine(rng.lo))]),
                c_ast.BinaryOp("&&", ok, c_ast.BinaryOp("<=", row, self.affine(rng.hi))),
                c_ast.UnaryOp("p++", row), c_ast.Assignment("=", ok, test)))
        return _all(simple) if simple else c_ast.Constant("int", "1"), loops

    def _ordered_rows(self, r: AddressRange, env: tuple[c_ast.ID, c_ast.ID], ok: c_ast.ID,
                      row: c_ast.ID) -> list[c_ast.Node]:
        """Declare ``env``, the envelope of ``r``'s rows, and test (while ``ok`` holds, and the
        range has rows) that they lie in address order up or down, each ending before the next
        starts, and apart from the row pointers: ``ok`` is then whether they are disjoint."""
        assert r.lo is not None and r.hi is not None
        up, down = c_ast.ID(f"{_GUARD}up"), c_ast.ID(f"{_GUARD}down")
        char_ptr = c_ast.PtrDecl([], c_ast.TypeDecl(None, ["const"], None, c_ast.IdentifierType(["char"])))
        decls = [c_ast.Decl(e.name, [], [], [], [], c_ast.PtrDecl([], c_ast.TypeDecl(e.name, ["const"], None,
                                                                                  c_ast.IdentifierType(["char"]))),
                            c_ast.Cast(c_ast.Typename(None, [], None, char_ptr), c_ast.Constant("int", "0")), None)
                 for e in env]
        nxt = c_ast.BinaryOp("+", row, c_ast.Constant("int", "1"))
        here, there = self._row_bytes(r, row), self._row_bytes(r, nxt)
        scan = c_ast.For(
            c_ast.DeclList([_decl(row.name, _type_decl(row.name, INDEX_TYPE), self.affine(r.lo))]),
            c_ast.BinaryOp("<", row, self.affine(r.hi)), c_ast.UnaryOp("p++", row),
            c_ast.Compound([
                c_ast.Assignment("=", up, c_ast.BinaryOp("&&", up, c_ast.BinaryOp("<=", here[1], there[0]))),
                c_ast.Assignment("=", down, c_ast.BinaryOp("&&", down, c_ast.BinaryOp("<=", there[1], here[0])))]))
        lo_row, hi_row = self._row_bytes_at(r, r.lo), self._row_bytes_at(r, r.hi)
        body = c_ast.Compound([
            _decl(up.name, _type_decl(up.name, "int"), c_ast.Constant("int", "1")),
            _decl(down.name, _type_decl(down.name, "int"), c_ast.Constant("int", "1")),
            scan,
            c_ast.Assignment("=", ok, c_ast.BinaryOp("||", up, down)),
            c_ast.Assignment("=", env[0], c_ast.TernaryOp(up, lo_row[0], hi_row[0])),
            c_ast.Assignment("=", env[1], c_ast.TernaryOp(up, hi_row[1], lo_row[1])),
            c_ast.Assignment("=", ok, c_ast.BinaryOp("&&", ok, _disjoint(env, self._bytes(r))))])
        has_rows = c_ast.BinaryOp("<=", self.affine(r.lo), self.affine(r.hi))
        return [*decls, c_ast.If(c_ast.BinaryOp("&&", ok, has_rows), body, None)]

    def team_call(self, plan: Plan, name: str) -> tuple[str, str, str]:
        """A call of ``name`` (``plan``'s function as run by every thread of an enclosing parallel
        region) in three pieces: the call, the exit values of the live iterators (``""`` when
        none), and a statement setting ``int`` ``mdp_alias_ok`` to the run-time checks and
        preconditions (``""`` when there are none)."""
        self.wide = self.wide | size_params(plan.params)
        self.values = {b.name: b.c_value for b in plan.params if b.c_value}
        try:
            args = [c_ast.UnaryOp("&", self._buffer(b.name)) if b.kind == "scalar" and b.written
                    else _rows_view(b, self.values) if b.rows_of
                    else c_ast.ID(f"({b.c_value})") if b.c_value else c_ast.ID(b.name) for b in plan.params]
            call = str(self.gen.visit(c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(args)))) + ";"
            exits = self.exit_values(plan.iterators) + self.counter_exits(plan.mdh.exits)
            exit_text = str(self.gen.visit(c_ast.Compound(exits))).rstrip() if exits else ""
            checks, pre = plan.mdh.alias_checks, plan.mdh.preconditions
            if not checks and not pre:
                return call, exit_text, ""
            cond, rows = self._checks(checks, pre)
            ok = c_ast.ID(f"{_GUARD}ok")
            check = str(self.gen.visit(c_ast.Compound([c_ast.Assignment("=", ok, cond), *rows]))).rstrip()
            return call, exit_text, check
        finally:
            self.values = {}

    def precondition(self, p: Precondition) -> c_ast.Node:
        """``p.c_expr`` as an expression (verbatim, parenthesized, when pycparser cannot parse it)."""
        text = _valued(p.c_expr, self.values)  # a front-end size parameter is its C expression here
        parsed = self._parse_plain(text)
        return clone(parsed) if parsed is not None else c_ast.ID(f"({text})")

    def _buffer(self, name: str) -> c_ast.ID:
        """A buffer at the call site: its name, or the C expression it stands for (``Buffer.c_value``)."""
        return c_ast.ID(f"({self.values[name]})") if name in self.values else c_ast.ID(name)

    def _bytes(self, r: AddressRange) -> tuple[c_ast.Node, c_ast.Node]:
        """``[first, end)`` of ``r`` as ``const char *`` (rows of the row-pointer array for indirect)."""
        buffer = _valued(r.buffer, self.values)
        base = c_ast.ID(f"({buffer} + {_valued(r.offset, self.values)})" if r.offset else buffer)
        if r.lo is None or r.hi is None:
            first: c_ast.Node = c_ast.UnaryOp("&", base)
            return _as_bytes(first), _as_bytes(c_ast.BinaryOp("+", c_ast.UnaryOp("&", self._buffer(r.buffer)),
                                                              c_ast.Constant("int", "1")))
        lo, end = self.affine(r.lo), self.affine(_plus_one(r.hi))
        if r.rows_of:  # a flat pointer viewed as rows: offsets count rows of ``rows_of`` elements
            stride = _index_cast(c_ast.ID(f"({_valued(r.rows_of, self.values)})"))  # call-site names (frontend.alias)
            lo, end = c_ast.BinaryOp("*", lo, stride), c_ast.BinaryOp("*", end, clone(stride))
        return (_as_bytes(c_ast.BinaryOp("+", base, lo)), _as_bytes(c_ast.BinaryOp("+", clone(base), end)))

    def _row_bytes(self, r: AddressRange, row: c_ast.Node) -> tuple[c_ast.Node, c_ast.Node]:
        """``[first, end)`` of the elements of row ``row`` of indirect ``r`` that the nest touches."""
        assert r.row_lo is not None and r.row_hi is not None

        def at(e: Affine) -> c_ast.Node:
            return _as_bytes(c_ast.BinaryOp("+", c_ast.ArrayRef(self._buffer(r.buffer), clone(row)),
                                            self.affine(e)))
        return at(r.row_lo), at(_plus_one(r.row_hi))

    def _row_bytes_at(self, r: AddressRange, index: Affine) -> tuple[c_ast.Node, c_ast.Node]:
        return self._row_bytes(r, self.affine(index))


_WIDE_TYPES = frozenset({"long", "long int", "signed long", "signed long int", "long long", "long long int"})


def size_params(params: tuple[Buffer, ...]) -> frozenset[str]:
    """The read-only scalar parameters narrower than ``INDEX_TYPE`` or unsigned, which index
    expressions may name: widened before arithmetic."""
    return frozenset(b.name for b in params if b.kind == "scalar" and not b.written
                     and " ".join(w for w in b.elem_type.split() if w not in _QUALS) not in _WIDE_TYPES)


# {{{ the user's expressions

# }}}


# {{{ alias checks

_GUARD = "mdp_alias_"


def _as_bytes(node: c_ast.Node) -> c_ast.Node:
    t = c_ast.PtrDecl([], c_ast.TypeDecl(None, ["const"], None, c_ast.IdentifierType(["char"])))
    return c_ast.Cast(c_ast.Typename(None, [], None, t), node)


def _plus_one(a: Affine) -> Affine:
    return Affine(a.terms, a.constant + 1)


def _disjoint(a: tuple[c_ast.Node, c_ast.Node], b: tuple[c_ast.Node, c_ast.Node]) -> c_ast.Node:
    return c_ast.BinaryOp("||", c_ast.BinaryOp("<=", a[1], b[0]), c_ast.BinaryOp("<=", b[1], a[0]))


def _all(conds: list[c_ast.Node]) -> c_ast.Node:
    out = conds[0]
    for c in conds[1:]:
        out = c_ast.BinaryOp("&&", out, c)
    return out

# }}}


# {{{ expression surgery


def _verbatim(text: str) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement that inserts ``text`` as is (a replacement string would expand its backslashes)."""
    return lambda _m: text


def _substitute(node: c_ast.Node, binds: dict[str, object]) -> c_ast.Node:
    """Replace ``ID`` nodes named in ``binds`` (not struct fields or called names)."""
    if isinstance(node, c_ast.ID):
        make = binds.get(node.name)
        return make() if callable(make) else node
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        if isinstance(node, c_ast.StructRef) and attr == "field":
            continue
        if isinstance(node, c_ast.FuncCall) and attr == "name":
            continue
        val = getattr(node, attr)
        if isinstance(val, c_ast.Node):
            setattr(node, attr, _substitute(val, binds))
        elif isinstance(val, list):
            setattr(node, attr, [_substitute(x, binds) if isinstance(x, c_ast.Node) else x for x in val])
    return node

# }}}
