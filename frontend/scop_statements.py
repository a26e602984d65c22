"""Statements of a nest: pycparser statements -> ``Statement``s of the model (with guards and predicates).

``NestStatements`` is the statement part of ``mdpoly.frontend.scop.NestBuilder``: a mixin over the
shared state of ``mdpoly.frontend.scop_state.NestState`` that uses the expression part
(``mdpoly.frontend.scop_exprs.NestExprs``). It has one ``visit_`` method per accepted statement
kind (``if``, assignments, ``++``/``--``, declarations of temporaries and local accumulators);
``generic_visit`` raises ``UnsupportedInput``, so nothing inside a candidate nest is skipped
silently. ``for`` statements are ``mdpoly.frontend.scop_loops.LoopHeaders.visit_For``.
"""

from __future__ import annotations

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.assertions import check_of
from mdpoly.frontend.implied_bounds import implied_by_condition
from mdpoly.frontend.normalize.ast_util import walk_nodes
from mdpoly.frontend.scatter import ScatterUpdate, scatter_access
from mdpoly.frontend.scop_exprs import NestExprs, _add, _combine, _scale
from mdpoly.frontend.scop_state import _base_name, _names_in, _NotAffine, _NotPrivate, _Stale
from mdpoly.frontend.symbols import c_text
from mdpoly.ir.mdh import Access, Affine
from mdpoly.ir.scop import Binary, Cast, Cond, Const, Expr, Ref, Statement, Unary, Variable, expr_names, expr_refs

_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="})


def _single(branch: c_ast.Node) -> c_ast.Node:
    """A branch's one statement (``{ s; }`` -> ``s``), else the branch itself."""
    return branch.block_items[0] if isinstance(branch, c_ast.Compound) and len(branch.block_items or []) == 1 else branch


class NestStatements(NestExprs):
    """The statements of a nest, each with its domain (loops, guards) and predicate."""

    def generic_visit(self, node: c_ast.Node) -> None:
        raise self._fail(node, "unsupported-statement",
                         f"statement kind '{type(node).__name__}' is not supported in a loop nest")

    def visit_Compound(self, node: c_ast.Compound) -> None:
        self.rebound |= _rebindable(node, self.cand.node, self.write_counts) - self.not_rebound
        for item in node.block_items or []:
            self.visit(item)

    def visit_EmptyStatement(self, node: c_ast.EmptyStatement) -> None:
        return

    def visit_Pragma(self, node: c_ast.Pragma) -> None:
        return  # pragmas inside the nest (e.g. ``omp simd``) do not change its meaning

    def visit_While(self, node: c_ast.While) -> None:
        if not self.opaque_ok:
            raise self._fail(node, "while-loop", "'while' loops cannot be modelled")
        self._while_once(node, "'while'")

    def visit_DoWhile(self, node: c_ast.DoWhile) -> None:
        if not self.opaque_ok:
            raise self._fail(node, "while-loop", "'do'/'while' loops cannot be modelled")
        self._while_once(node, "'do'/'while'")

    def _while_once(self, node: c_ast.While | c_ast.DoWhile, kind: str) -> None:
        """A ``while`` (or ``do``/``while``) loop inside an iteration, in a model of the nest's own
        text (``opaque_ok``: dependences only, the nest runs as written): one iteration of its
        body under its condition as a predicate, ``if (c) body`` -- an escape-time loop per pixel,
        a Newton iteration per option, an insertion sort of a local window.

        Exact for the dependences between iterations of the loops around it where each access
        touches the same element in every trip: no subscript of an array the nest writes reads a
        scalar the loop assigns (a local array, one cell per iteration in the model, may have any
        subscript; an array the nest never writes is read without locating it, an opaque read,
        and never inspected at run time, ``while_gathered``). The scalars it assigns are locals
        of the loops around it (scalar expansion), whose reads are reads of their cells, never a
        value carried in the model; ``break`` and ``continue`` of the loop only end a trip early,
        so the model's trip (every statement of the body) touches a superset of what a real trip
        does. A ``for`` loop inside it is refused (a ``break`` there is that loop's)."""
        if any(isinstance(n, c_ast.For) for n in walk_nodes(node.stmt)):
            raise self._fail(node, "while-loop", f"a {kind} loop with a 'for' loop inside cannot be modelled")
        assigned = _assigned_scalars(node)
        for ref in (n for n in walk_nodes(node) if isinstance(n, c_ast.ArrayRef)):
            base = _array_base(ref)
            if base is None or base in self.local_arrays:
                continue
            if _names_in_subscripts(ref) & assigned:
                if base in self.written:
                    raise self._fail(ref, "while-loop", f"'{c_text(ref)}' inside a {kind} loop has a subscript that "
                                     "the loop changes from one trip to the next, in an array the nest writes")
                self.while_gathered.add(base)
        self.while_depth += 1
        try:
            self.visit_If(c_ast.If(node.cond, node.stmt, None, coord=node.coord))
        finally:
            self.while_depth -= 1

    def visit_Goto(self, node: c_ast.Goto) -> None:
        raise self._fail(node, "goto", "'goto' leaves the polyhedral model")

    def visit_Label(self, node: c_ast.Label) -> None:
        raise self._fail(node, "goto", "labels inside a loop nest cannot be modelled")

    def visit_Break(self, node: c_ast.Break) -> None:
        if self.while_depth:   # ends the modelled trip of a 'while' loop early (``_while_once``)
            return
        raise self._fail(node, "break", "'break' makes the iteration domain data-dependent")

    def visit_Continue(self, node: c_ast.Continue) -> None:
        if self.while_depth:
            return
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
        if check_of(node) is not None:
            self._check(node)
            return
        if node.iffalse is None and self._conditional_update(node):
            return
        reads_data = False
        cond: Expr | None = None
        pointer_test = ""
        try:
            cond = self.expr(node.cond)
            # a condition may read arrays the nest never writes (``if (counts[c] > 0)``): it has the
            # same value wherever the statements inside evaluate it, so it is their predicate
            reads_data = any(a.buffer in self.written for a in expr_refs(cond)) or any(
                n not in self._iterators() and n not in self.params and not self._unwritten_scalar(n)
                for n in expr_names(cond))
        except UnsupportedInput as e:
            reads_data = True
            # a null test of a pointer the nest stores through (``if (out) out[i] = v``) is not
            # hoisted (``mdpoly.frontend.normalize.pointer_tests``): the nest stays as written
            pointer_test = e.message if e.code == "pointer-arithmetic" else ""
        if reads_data or cond is None:
            if self._in_place_chain(node):
                return
            if pointer_test:
                raise self._fail(node, "pointer-arithmetic", f"condition '{c_text(node.cond)}' tests a pointer the "
                                 f"nest stores through or changes ({pointer_test})")
            if cond is None or not self.opaque_ok:
                raise self._fail(node, "data-dependent-condition",
                                 f"condition '{c_text(node.cond)}' depends on data the nest computes")
            # a model of the nest's own text (``opaque_ok``: dependences only, the nest runs as
            # written): the condition is a predicate like any other, ``x = c ? e : x`` reads all
            # that the condition and ``x`` read wherever the statement may run
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
            saved_pred, saved_bounds = self.predicate, self.predicate_bounds
            self.guards = saved + tuple(g for g in common if g not in saved)
            # a union of pieces (or nothing: the predicate is then always false); with an ``else``,
            # both branches are predicates (their statements share the nest's one domain)
            if parts is None or len(parts) != 1 or node.iffalse is not None:
                self.predicate = pred if saved_pred is None else Binary("&&", saved_pred, pred)
                implied = implied_by_condition(node.cond, branch is not node.iftrue, self._affine_side,
                                               [self.loops[k] for k in self.stack], self.guards)
                self.predicate_bounds = saved_bounds + tuple(g for g in implied if g not in saved_bounds)
            self.visit(branch)
            self.guards, self.temps, self.local_accs = saved, saved_temps, saved_accs
            self.predicate, self.predicate_bounds = saved_pred, saved_bounds

    def _check(self, node: c_ast.If) -> None:
        """An assertion, ``if (e) ; else __assert_fail(...);`` (``mdpoly.frontend.assertions``), in
        a model of the nest's own text (``opaque_ok``: the loop around the body runs it as written)
        adds no statement when ``e`` reads nothing the nest writes: then ``e`` has the same value in
        every order of the iterations, so the same iterations fail, and the first one to fail ends
        the program with the same message. Models whose code the lowering writes anew refuse it:
        they would drop the check."""
        what = f"the assertion '{c_text(node.cond)}'"
        if not self.opaque_ok:
            raise self._fail(node, "unsupported-statement", f"{what} runs in parallel only in a loop around the "
                             "body as written, and only where it reads nothing the nest writes")
        try:
            cond = self.expr(node.cond)
        except UnsupportedInput as e:
            raise self._fail(node, "unsupported-statement", f"{what} cannot be modelled: {e.message}") from None
        written = sorted({a.buffer for a in expr_refs(cond) if a.buffer in self.written}
                         | {n for n in expr_names(cond) if n not in self._iterators() and n not in self.params
                            and not self._unwritten_scalar(n)})
        if written:
            raise self._fail(node, "data-dependent-condition", f"{what} reads '{written[0]}', which the nest "
                             "writes: in another order of the iterations it could fail elsewhere")

    def _affine_side(self, node: c_ast.Node) -> Affine | None:
        try:
            return self.affine(node)
        except _NotAffine:
            return None

    def _unwritten_scalar(self, name: str) -> bool:
        """A scalar the nest never writes (its value is the same at every iteration)."""
        var = self.sym.variable(name)
        return var is not None and var.kind == "scalar" and name not in self.written and name not in self.nest_locals

    def _if_else_assign(self, node: c_ast.If, cond: Expr) -> bool:
        """``if (c) x = e1; else x = e2;`` (``op=`` too) on the same ``x``: the one statement
        ``x = c ? (x op1 e1) : (x op2 e2)``, as one output of the nest."""
        a, b = _single(node.iftrue), _single(node.iffalse)
        if not (isinstance(a, c_ast.Assignment) and isinstance(b, c_ast.Assignment)
                and c_text(a.lvalue) == c_text(b.lvalue) and a.op in _ASSIGN_OPS and b.op in _ASSIGN_OPS
                and not isinstance(a.rvalue, c_ast.Assignment) and not isinstance(b.rvalue, c_ast.Assignment)):
            return False
        rhs = Cond(cond, self._assigned_value(a), self._assigned_value(b))
        self._statement(node, a.lvalue, "=", rhs)
        return True

    def _in_place_chain(self, node: c_ast.If) -> bool:
        """``if (c1) x = e1; else if (c2) x = e2; ... [else x = en;]`` on one array element ``x`` (or
        a local variable of the body, ``float v = a[i] * s; if (v > 127) v = 127; else if ...``)
        whose conditions read, of what the nest writes, only ``x`` itself (a clamp ``if (a[i] > hi)
        a[i] = hi; else if (a[i] < lo) a[i] = lo;``): the one statement ``x = c1 ? e1 : c2 ? e2 :
        ... : x``. C evaluates each condition before the branch's assignment, and so does the
        conditional expression; ``op=`` branches read ``x`` as their statement would."""
        branches: list[tuple[c_ast.Node, c_ast.Assignment]] = []
        last: c_ast.Assignment | None = None
        cur: c_ast.If = node
        while True:
            a = _single(cur.iftrue)
            if not isinstance(a, c_ast.Assignment):
                return False
            branches.append((cur.cond, a))
            if cur.iffalse is None:
                break
            f = _single(cur.iffalse)
            if isinstance(f, c_ast.If):
                cur = f
                continue
            if not isinstance(f, c_ast.Assignment):
                return False
            last = f
            break
        assigns = [a for _, a in branches] + ([last] if last is not None else [])
        lvalue = assigns[0].lvalue
        if not (isinstance(lvalue, c_ast.ArrayRef)
                or (isinstance(lvalue, c_ast.ID) and lvalue.name in self.local_accs)) or any(
                c_text(a.lvalue) != c_text(lvalue) or a.op not in _ASSIGN_OPS or isinstance(a.rvalue, c_ast.Assignment)
                for a in assigns):
            return False
        try:
            target = self.expr(lvalue)
            if not isinstance(target, Ref):
                return False
            conds = [self.expr(c) for c, _ in branches]
        except UnsupportedInput:
            return False
        for c in conds:
            if any(r.buffer in self.written and r != target.access for r in expr_refs(c)) or any(
                    n not in self._iterators() and n not in self.params and not self._unwritten_scalar(n)
                    and n != target.access.buffer for n in expr_names(c)):
                return False
        rhs: Expr = self._assigned_value(last) if last is not None else target
        for c, (_, a) in reversed(list(zip(conds, branches, strict=True))):
            rhs = Cond(c, self._assigned_value(a), rhs)
        self._statement(node, lvalue, "=", rhs)
        return True

    def _assigned_value(self, x: c_ast.Assignment) -> Expr:
        """The value ``x`` leaves in its target: its right-hand side, or ``target op rhs`` for ``op=``."""
        e = self.expr(x.rvalue)
        return e if x.op == "=" else Binary(x.op[:-1], self.expr(x.lvalue), e)

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
        if self.opaque_ok and _fixed_local_array(node):
            self._local_array(node)
            return
        if not isinstance(node.type, c_ast.TypeDecl):
            raise self._fail(node, "unsupported-statement", f"local array or pointer '{node.name}' in a loop nest")
        if node.init is None:
            raise self._fail(node, "unsupported-statement",
                             f"local variable '{node.name}' is declared without an initialiser")
        if (node.name in self.written and node.name not in self.rebound) or node.name in self.not_rebound:
            self._local_accumulator(node)
            return
        var = self.sym._variable(node.name, node.type)
        e = self.expr(node.init)
        if node.name in self.rebound:
            self.rebound_types[node.name] = var
        if var is not None:
            e = Cast(var.elem_type, e, var.scalar_type if var.scalar_type != var.elem_type else "") \
                if not _same_type_constant(e) else e
        self.temps[node.name] = e

    def _local_array(self, node: c_ast.Decl) -> None:
        """``T f[N];`` in the nest's body: C gives it no value on entry, so no value flows into
        it across iterations of the loops around it; modelled as one cell per such iteration
        that every element access reads or writes (``local_arrays``)."""
        var = self.sym._variable(node.name, node.type)
        if var is None or var.kind != "array":
            raise self._fail(node, "unsupported-statement", f"local array '{node.name}' cannot be modelled")
        if node.name in self.variables or node.name in self.local_accs or node.name in self.local_arrays:
            raise self._fail(node, "unsupported-statement", f"local array '{node.name}' shadows another variable")
        self.variables[node.name] = Variable(node.name, var.elem_type, (), "local", var.scalar_type, "", "private")
        self.local_arrays[node.name] = Access(node.name, tuple(Affine.of({it: 1}) for it in self._iterators()))

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
        counter = _post_step_subscript(node)
        if counter is not None:   # ``v[k++] = e`` (``e`` not reading ``k``): ``v[k] = e; k++;``
            step, name = counter
            assert isinstance(lv, c_ast.ArrayRef)
            self.visit_Assignment(c_ast.Assignment(node.op, c_ast.ArrayRef(lv.name, c_ast.ID(name, coord=lv.coord),
                                                                          coord=lv.coord),
                                                   node.rvalue, coord=node.coord))
            self.visit_UnaryOp(c_ast.UnaryOp(step, c_ast.ID(name, coord=lv.coord), coord=node.coord))
            return
        if isinstance(lv, c_ast.ID) and lv.name in self.rebound and lv.name in self.temps:
            self._rebind(lv.name, node.op, self.expr(node.rvalue))
            return
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
            if isinstance(node.expr, c_ast.ID) and node.expr.name in self.rebound and node.expr.name in self.temps:
                self._rebind(node.expr.name, op, Const("1"))
                return
            self._statement(node, node.expr, op, Const("1"))
            return
        raise self._fail(node, "unsupported-statement", f"expression statement '{c_text(node)}' has no effect")

    def _rebind(self, name: str, op: str, rhs: Expr) -> None:
        """``t op= e`` on a rebound temporary: from here on ``t`` stands for the new value (in its
        declared type, as C converts it on assignment); a read of ``t`` in ``e`` is the value before."""
        var = self.rebound_types.get(name)
        value = rhs if op == "=" else Binary(op[:-1], self.expr(c_ast.ID(name)), rhs)
        if var is not None:
            value = Cast(var.elem_type, value, var.scalar_type if var.scalar_type != var.elem_type else "")
        self.temps[name] = value

    def _statement(self, node: c_ast.Node, lvalue: c_ast.Node, op: str, rhs: Expr) -> None:
        subscripts: list[Expr] = []   # of a scatter update: what they read takes part in alias checks
        try:
            target = self.lvalue(lvalue, node)
        except UnsupportedInput as err:
            scattered = self._scatter_target(node, lvalue, err)
            if scattered is None:
                raise
            target, subscripts = scattered
        local = self.local_array_ref(lvalue) if isinstance(lvalue, c_ast.ArrayRef) else None
        # a temporary is inlined where it is used: it must still hold what its reads would read there
        for name, value in list(self.temps.items()):
            if not isinstance(value, _Stale) and any(r.buffer == target.buffer for r in expr_refs(value)):
                self.temps[name] = _Stale(name, target.buffer)
        rhs = self._predicated(node, target, op, rhs)
        reads = ([target] if op != "=" else []) + _refs(rhs)
        for sub in [*(local[1] if local is not None else []), *subscripts]:   # what the subscripts read
            reads += [a for a in _refs(sub) if a not in reads]
        text = c_text(node).strip() + ";"
        self.statements.append(Statement(
            name=f"S{len(self.statements)}", loc=self._loc(node), loops=tuple(self.stack),
            position=(*self.stmt_positions, self._next_position()), write=target, op=op, rhs=rhs,
            reads=tuple(reads), text=text, guards=self.guards))


    def _scatter_target(self, node: c_ast.Node, lvalue: c_ast.Node,
                        err: UnsupportedInput) -> tuple[Access, list[Expr]] | None:
        """``A[e]`` refused with ``err`` as the target of a scatter update (``mdpoly.frontend.scatter``)
        where this model allows them: its whole-object access and its subscripts' expressions;
        else ``None``. In ``A[e] = A[e] op v`` the read of ``A[e]`` (the same text) is the update's
        accumulator, no read of its own."""
        if not self.opaque_ok or err.code != "non-affine-subscript" or not isinstance(lvalue, c_ast.ArrayRef):
            return None
        found = self._named_base(lvalue)
        if found is None:
            return None
        base, subs = found
        try:
            exprs = [self.expr(x) for x in subs]
        except UnsupportedInput:
            return None
        var = self.variables.get(base.name) or self.sym.variable(base.name)
        own = frozenset(self.nest_locals) | frozenset(self.local_accs)
        access = scatter_access(var, exprs, self.written, set(self._iterators()), own)
        if access is None or var is None:
            return None
        element = c_text(lvalue)
        # only the statements as written: an update that reads ``A`` nowhere else (``A[e] op= v``,
        # ``A[e]++``), or ``A[e] = ...`` that reads it once, at the same element; a model built
        # from an ``if`` (``x = c ? e : x``) is none (its affine reads of ``A`` would look like ``A[0]``)
        if isinstance(node, c_ast.Assignment) and not isinstance(node.rvalue, c_ast.Assignment):
            same = [r for r in _array_refs(node.rvalue) if _base_name(r) == base.name]
            if node.op == "=":
                read = next((u for u in self.scatter if not u.statement and u.array == base.name
                             and u.element == element), None)
                if len(same) != 1 or c_text(same[0]) != element or read is None:
                    return None
                self.scatter.remove(read)
            elif same:
                return None
        elif not (isinstance(node, c_ast.UnaryOp) and node.op in ("++", "p++", "--", "p--")):
            return None
        self.variables.setdefault(base.name, var)
        self.scatter.append(ScatterUpdate(base.name, err.loc or self._loc(lvalue), str(err.message), element,
                                          f"S{len(self.statements)}"))
        return access, exprs


def _array_refs(node: c_ast.Node) -> list[c_ast.ArrayRef]:
    """Every array element ``node`` reads, those inside subscripts too."""
    out: list[c_ast.ArrayRef] = []

    class _V(c_ast.NodeVisitor):
        def visit_ArrayRef(self, n: c_ast.ArrayRef) -> None:
            out.append(n)
            self.generic_visit(n)

    _V().visit(node)
    return out


def _post_step_subscript(node: c_ast.Assignment) -> tuple[str, str] | None:
    """``("p++", "k")`` for ``v[k++] = e`` (also ``k--``) where nothing else in the statement reads
    ``k``: C then stores at ``v[k]`` and steps ``k`` once, as ``v[k] = e; k++;`` does."""
    lv = node.lvalue
    if not isinstance(lv, c_ast.ArrayRef) or not isinstance(lv.subscript, c_ast.UnaryOp):
        return None
    sub = lv.subscript
    if sub.op not in ("p++", "p--") or not isinstance(sub.expr, c_ast.ID):
        return None
    name = sub.expr.name
    others = [n for n in walk_nodes(node.rvalue) if isinstance(n, c_ast.ID) and n.name == name]
    others += [n for n in walk_nodes(lv.name) if isinstance(n, c_ast.ID) and n.name == name]
    return None if others else (sub.op, name)


def _assigned_scalars(node: c_ast.Node) -> set[str]:
    """Names assigned (``=``, ``op=``, ``++``/``--``) or declared under ``node``."""
    out: set[str] = set()
    for n in walk_nodes(node):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "p++", "--", "p--") and isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
        elif isinstance(n, c_ast.Decl) and n.name:
            out.add(n.name)
    return out


def _array_base(ref: c_ast.ArrayRef) -> str | None:
    n: c_ast.Node = ref
    while isinstance(n, c_ast.ArrayRef):
        n = n.name
    return n.name if isinstance(n, c_ast.ID) else None


def _names_in_subscripts(ref: c_ast.ArrayRef) -> set[str]:
    out: set[str] = set()
    n: c_ast.Node = ref
    while isinstance(n, c_ast.ArrayRef):
        out |= {m.name for m in walk_nodes(n.subscript) if isinstance(m, c_ast.ID)}
        n = n.name
    return out


def _rebindable(block: c_ast.Compound, nest: c_ast.Node, write_counts: dict[str, int]) -> set[str]:
    """Scalars declared with an initialiser among ``block``'s items whose every write in the nest
    is a later item of the same block (``x = e;``, ``x op= e;``, ``x++;``): straight-line code,
    so each read sees the value of the last assignment before it, a value a temporary can carry
    (``NestState.rebound``). The name is declared once in the nest and its address is not taken."""
    items = block.block_items or []
    declared = {d.name: k for k, d in enumerate(items)
                if isinstance(d, c_ast.Decl) and d.init is not None and isinstance(d.type, c_ast.TypeDecl)
                and write_counts.get(d.name, 0) > 0}
    if not declared:
        return set()
    direct: dict[str, int] = {}
    for k, item in enumerate(items):
        target: str | None = None
        if isinstance(item, c_ast.Assignment) and item.op in _ASSIGN_OPS and isinstance(item.lvalue, c_ast.ID) \
                and not isinstance(item.rvalue, c_ast.Assignment):
            target = item.lvalue.name
        elif isinstance(item, c_ast.UnaryOp) and item.op in ("++", "p++", "--", "p--") and isinstance(item.expr, c_ast.ID):
            target = item.expr.name
        if target is not None and target in declared and k > declared[target]:
            direct[target] = direct.get(target, 0) + 1
    shadowed, addressed = _declared_twice_or_addressed(nest)
    return {n for n, count in direct.items()
            if count == write_counts.get(n, 0) and n not in shadowed and n not in addressed}


def _declared_twice_or_addressed(nest: c_ast.Node) -> tuple[set[str], set[str]]:
    seen: set[str] = set()
    twice: set[str] = set()
    addressed: set[str] = set()

    class _V(c_ast.NodeVisitor):
        def visit_Decl(self, n: c_ast.Decl) -> None:
            if n.name:
                (twice if n.name in seen else seen).add(n.name)
            self.generic_visit(n)

        def visit_UnaryOp(self, n: c_ast.UnaryOp) -> None:
            if n.op == "&" and isinstance(n.expr, c_ast.ID):
                addressed.add(n.expr.name)
            self.generic_visit(n)

    _V().visit(nest)
    return twice, addressed


def _refs(e: Expr) -> list[Access]:
    out: list[Access] = []
    for a in expr_refs(e):
        if a not in out:
            out.append(a)
    return out


def _fixed_local_array(node: c_ast.Decl) -> bool:
    """``T f[N]...;`` with constant dimensions, scalar elements and no initialiser."""
    t = node.type
    if not isinstance(t, c_ast.ArrayDecl) or node.init is not None or "static" in (node.storage or []):
        return False
    while isinstance(t, c_ast.ArrayDecl):
        if t.dim is None or not _constant_dim(t.dim):
            return False
        t = t.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)


def _constant_dim(e: c_ast.Node) -> bool:
    if isinstance(e, c_ast.Constant):
        return e.type == "int"
    if isinstance(e, c_ast.BinaryOp):
        return e.op in ("+", "-", "*") and _constant_dim(e.left) and _constant_dim(e.right)
    return False


def _same_type_constant(e: Expr) -> bool:
    return isinstance(e, Const)


#: what ``x op= e`` adds where a predicate fails (``mdpoly.frontend.scop_statements.NestStatements._predicated``)
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
