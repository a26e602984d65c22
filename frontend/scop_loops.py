"""Loop headers of a nest: ``for`` statements -> ``Loop``s of the model (bounds, steps, induction variables).

``LoopHeaders`` is the loop-header part of ``mdpoly.frontend.scop.NestBuilder``: a mixin over the
shared state of ``mdpoly.frontend.scop_state.NestState`` that uses the expression part
(``mdpoly.frontend.scop_exprs.NestExprs``) for bounds; ``visit_For`` pushes a loop and visits its
body with whatever visitor the builder is (``NestBuilder`` visits statements with
``mdpoly.frontend.scop_statements.NestStatements``).
"""

from __future__ import annotations

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.bound_products import LLONG_MAX, bound_magnitude
from mdpoly.frontend.expr_types import expr_type, involves_unsigned
from mdpoly.frontend.liveness import live_after
from mdpoly.frontend.loop_types import BoundSide, HeaderChecker, HeaderMismatch, math_text
from mdpoly.frontend.scop_exprs import NestExprs, _add, _combine, _scale
from mdpoly.frontend.scop_state import _int_constant, _names_in, _NotAffine
from mdpoly.frontend.symbols import c_text
from mdpoly.ir.c_types import CType, parse_type
from mdpoly.ir.mdh import Affine, Precondition
from mdpoly.ir.scop import Binary, Cast, Const, Expr, Loop, Var, Variable


class LoopHeaders(NestExprs):
    """``for`` headers: the loop's iterator, bounds and step, checked under C's conversions."""

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
        conds = self._for_conds(node, it, step)
        bound, bound_node, inclusive, until_equal = conds[0]
        # max(a, b) as a lower or min(a, b) as an upper bound, and the bounds of a conjunction
        # (``i < a && i < n``, their minimum): the loop runs over the first alternative's range,
        # the others are guards of every statement inside it
        start_alts = self._minmax_alternatives(start_node, node, "max" if step == 1 else "min")
        bound_alts = [(alt, incl) for _b, b_node, incl, _u in conds
                      for alt in self._minmax_alternatives(b_node, node, "min" if step == 1 else "max")]
        start_node, bound_node = start_alts[0], bound_alts[0][0]
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
        for alt, alt_inclusive in bound_alts[1:]:  # it < alt / it <= alt (upward); it > alt / it >= alt (downward)
            a = self._bound(alt, node, "loop")
            diff = _combine(a, me, -1) if step == 1 else _combine(me, a, -1)
            extra.append(diff if alt_inclusive else _add(diff, -1))
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

    def _for_conds(self, node: c_ast.For, it: str, step: int) -> list[tuple[Affine, c_ast.Node, bool, bool]]:
        """The bounds of the loop's condition (``_for_cond``), one per operand of a conjunction
        ``i < a && i <= b`` (where every operand bounds the iterator the way the loop counts, and
        none is ``!=``: their minimum, or maximum downwards, ends the loop). A conjunction with any
        other test (``i < n && a[i] > 0``) is no loop bound."""
        parts = _conjuncts(node.cond)
        if len(parts) == 1:
            return [self._for_cond(node, it, step)]
        out: list[tuple[Affine, c_ast.Node, bool, bool]] = []
        for part in parts:
            found = self._cond_bound(part, node, it, step)
            if found is None:
                raise self._not_a_bound(node.cond, node, it)
            if found[3]:
                raise self._fail(part, "non-affine-bound", f"loop condition '{c_text(node.cond)}' has a "
                                 f"'{it} != ...' among its conjuncts")
            if out and not self._signed_comparison(found[1], node, it):
                raise self._fail(part, "non-affine-bound", f"loop condition '{c_text(node.cond)}' compares "
                                 "unsigned values")
            out.append(found)
        return out

    def _signed_comparison(self, bound: c_ast.Node, node: c_ast.For, it: str) -> bool:
        """Whether ``it`` compared with ``bound`` is the comparison of their mathematical values
        (both of signed integer types, no operator of ``bound`` wrapping); the first operand of a
        conjunction is the loop's bound, which ``_check_header`` checks under C's conversions."""
        e = self.expr(bound)
        it_type, bound_type = self._header_type(it, node), expr_type(e, self.name_type)
        return (it_type is not None and it_type.signed and bound_type is not None and bound_type.is_integer
                and bound_type.signed and not involves_unsigned(e, self.name_type))

    def _for_cond(self, node: c_ast.For, it: str, step: int) -> tuple[Affine, c_ast.Node, bool, bool]:
        """The bound as written, its node, whether the comparison includes it (``<=``/``>=``) and
        whether it is ``!=``: ``i < B``, ``i <= B``, ``B > i``... for an upward loop, ``i >= B``,
        ``i > B``, ``B < i``... for a downward one, ``i != B`` for both."""
        found = self._cond_bound(node.cond, node, it, step)
        if found is None:
            raise self._not_a_bound(node.cond, node, it)
        return found

    def _cond_bound(self, c: c_ast.Node | None, node: c_ast.For, it: str,
                    step: int) -> tuple[Affine, c_ast.Node, bool, bool] | None:
        """``_for_cond`` of the comparison ``c``, None when ``c`` compares no bound with ``it``."""
        if isinstance(c, c_ast.BinaryOp):
            c = self._offset_moved(c, it, node)
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
        return None

    def _not_a_bound(self, c: c_ast.Node | None, node: c_ast.For, it: str) -> UnsupportedInput:
        cond = c_text(c) if c is not None else "<none>"
        return self._fail(c if c is not None else node, "non-affine-bound",
                          f"loop condition '{cond}' is not of the form '{it} < bound', '{it} <= bound' "
                          f"('>', '>=' for a downward loop) or '{it} != bound'")

    def _offset_moved(self, c: c_ast.BinaryOp, it: str, loop: c_ast.For) -> c_ast.BinaryOp:
        """``it + K < B`` (``K + it``, ``it - K``; either side) as ``it < B - K`` for an integer
        constant ``K``, where the iterator and ``B`` are of signed types (no wrap-around: the two
        are the same test wherever C defines them), else ``c`` as it is. Unrolled and paired loops
        write ``t + 1 < n``, ``i + 4 <= n``."""
        if c.op not in ("<", "<=", ">", ">=", "!="):
            return c
        for side, other in ((c.left, c.right), (c.right, c.left)):
            if not (isinstance(side, c_ast.BinaryOp) and side.op in ("+", "-")):
                continue
            if _is_id(side.left, it) and isinstance(side.right, c_ast.Constant):
                konst, sign = side.right, (1 if side.op == "+" else -1)
            elif side.op == "+" and _is_id(side.right, it) and isinstance(side.left, c_ast.Constant):
                konst, sign = side.left, 1
            else:
                continue
            try:
                value = _int_constant(konst) * sign
                other_type = self._header_type(it, loop)
                bound_type = expr_type(self.expr(other), self.name_type)
            except (_NotAffine, UnsupportedInput):
                return c
            if other_type is None or bound_type is None or not other_type.signed or not bound_type.signed \
                    or not bound_type.is_integer:
                return c
            moved = c_ast.BinaryOp("-" if value > 0 else "+", other, c_ast.Constant("int", str(abs(value))),
                                   coord=other.coord)
            return c_ast.BinaryOp(c.op, c_ast.ID(it, coord=side.coord), moved, coord=c.coord) if side is c.left \
                else c_ast.BinaryOp(c.op, moved, c_ast.ID(it, coord=side.coord), coord=c.coord)
        return c

    def _header_type(self, it: str, loop: c_ast.For) -> CType | None:
        """The C type of ``loop``'s iterator ``it`` (declared in its header or before the nest)."""
        if isinstance(loop.init, c_ast.DeclList) and loop.init.decls[0].name == it:
            var = self.sym._variable(it, loop.init.decls[0].type)
            return parse_type(var.scalar_type) if var is not None else None
        return self.name_type(it)

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
        saved, self.in_loop_bound = self.in_loop_bound, True
        try:
            value = self.affine(node)
        except _NotAffine:
            raise self._fail(node, "non-affine-bound",
                             f"{which} bound '{c_text(node)}' is not affine in outer iterators and size "
                             "parameters") from None
        finally:
            self.in_loop_bound = saved
        self._check_wrapping_range(node, value)
        return value

    def _check_wrapping_range(self, node: c_ast.Node, value: Affine) -> None:
        """A bound with a product that may wrap (``(size_t) w * h * 3``, ``wrapping_products``): the
        generated loops compute it in ``long long``, so it must fit there; a precondition when its
        types do not prove it (the C value, compared with the model by ``_check_header``, may
        reach the unsigned type's maximum)."""
        if not value.names() & self.wrapping_products:
            return
        most = bound_magnitude(value, self.products, self.name_type)
        if most is not None and most <= LLONG_MAX:
            return
        wide = math_text(value, "__int128")
        pre = Precondition(f"{wide} <= (__int128){LLONG_MAX}LL",
                           f"'{c_text(node)}' fits 'long long', the type the generated loops compute in")
        if pre not in self.preconditions:
            self.preconditions.append(pre)


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


def _conjuncts(c: c_ast.Node | None) -> list[c_ast.Node | None]:
    """The operands of ``a && b && ...`` (``[c]`` for anything else)."""
    if isinstance(c, c_ast.BinaryOp) and c.op == "&&":
        return _conjuncts(c.left) + _conjuncts(c.right)
    return [c]


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
