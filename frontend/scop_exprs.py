"""Expressions of a nest: pycparser expressions -> ``Affine`` subscripts and bounds, ``Access``es, ``Expr``s.

``NestExprs`` is the expression part of ``mdpoly.frontend.scop.NestBuilder``: a mixin over the
shared state of ``mdpoly.frontend.scop_state.NestState`` (it reads the loops, strided loops,
induction variables and temporaries in scope and adds size parameters and variables to it).
``_ExprBuilder`` turns a right-hand side into an ``Expr``; ``_scale``, ``_combine`` and ``_add``
are the affine arithmetic the other parts use.
"""

from __future__ import annotations

import re
from functools import partial

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.bound_products import exact_signed, product_fits_long_long
from mdpoly.frontend.delinearize import may_wrap
from mdpoly.frontend.expr_types import expr_type, involves_unsigned
from mdpoly.frontend.guarded_reads import bounds_of, guarded
from mdpoly.frontend.opaque_reads import OpaqueRead, opaque_access, written_in_subscripts
from mdpoly.frontend.scatter import ScatterUpdate, scatter_access
from mdpoly.frontend.scop_state import NestState, _int_constant, _names_in, _NotAffine, _NotPrivate, _NotRebound, _Stale
from mdpoly.frontend.symbols import c_text
from mdpoly.ir.c_types import CType, parse_type
from mdpoly.ir.mdh import Access, Affine, Precondition
from mdpoly.ir.scop import Binary, Call, Cast, Cond, Const, Expr, Ref, Unary, Var, Variable, expr_refs

# Side-effect-free math functions a statement may call.
PURE_FUNCTIONS = frozenset(
    [f + s for f in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "fabs", "pow", "sin", "cos",
                     "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                     "fmax", "fmin", "floor", "ceil", "round", "trunc", "fmod", "cbrt", "hypot", "erf", "erfc",
                     "fma", "copysign", "rint", "nearbyint", "fdim")
     for s in ("", "f", "l")] + ["abs", "labs", "llabs"]
    + [f + s for f in ("lrint", "lround", "llrint", "llround") for s in ("", "f", "l")]
    # <complex.h>
    + [f + s for f in ("creal", "cimag", "cabs", "carg", "conj", "cproj", "cexp", "clog", "csqrt", "cpow", "csin",
                       "ccos", "ctan", "csinh", "ccosh", "ctanh") for s in ("", "f", "l")]
)
# What <math.h> macros expand to under -std=c99 (INFINITY, HUGE_VAL, NAN, fabs...).
PURE_FUNCTIONS = PURE_FUNCTIONS | {f"__builtin_{f}" for f in PURE_FUNCTIONS} | {
    f"__builtin_{f}{s}" for f in ("inf", "huge_val", "nan") for s in ("", "f", "l")}

#: ``Call`` of a gather whose subscripts read the nest's temporaries: its first argument is the
#: (opaque) read, the others the subscripts that read something (for the dependences only; such
#: a model is never rendered, ``mdpoly.frontend.opaque_reads``)
OPAQUE_READ = "mdp_opaque_read"

_BINARY_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^",
                         "&&", "||"})


class NestExprs(NestState):
    """Affine and polynomial expressions, accesses and right-hand sides of the statements."""

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
            if not b.is_constant and not (a.names() | b.names()) & set(self._iterators()):
                return Affine.of({self._quotient_parameter(node, guarded=True): 1})
            if not b.is_constant or b.constant == 0:
                raise _NotAffine
            if not a.is_constant and not a.names() & set(self._iterators()):
                return Affine.of({self._quotient_parameter(node): 1})
            if not a.is_constant:
                poly = self._exact_quotient(node, _poly_of(a), b.constant)
                if any(len(m) > 1 for m in poly):
                    raise _NotAffine
                return Affine.of({m[0]: c for m, c in poly.items() if m}, poly.get((), 0))
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
        an unsigned one wraps, and stays non-affine -- except in a loop bound (``in_loop_bound``),
        whose C value the generated code compares with the model before it runs, where the
        product's factors need only fit ``long long`` (``t < (size_t) nq * n``)."""
        its = set(self._iterators())
        e = self.expr(node)
        if (a.names() | b.names()) & its:
            raise _NotAffine
        wraps = involves_unsigned(e, self.name_type) and not exact_signed(e, self.name_type)  # (long) n * m is exact
        if wraps and not self.in_loop_bound:
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
                if wraps and len(factors) > 1:
                    if not product_fits_long_long(factors, self.name_type):
                        raise _NotAffine  # the model's own product could overflow
                    self.wrapping_products.add(name)
                if len(factors) > 1 and name not in self.products:
                    self.products[name] = factors
                    value = " * ".join(f"(long long) {self._c_value(f)}" for f in factors)
                    self.variables[name] = Variable(name, "long long", (), "scalar", "long long", "", "private",
                                                    c_value=value)
                    self.params.append(name)
                out[name] = out.get(name, 0) + cx * cy
        constant = out.pop("", 0)
        return Affine.of({n: c for n, c in out.items() if c}, constant)

    def _c_value(self, name: str) -> str:
        """The C text a size parameter stands for at the call site: its ``c_value`` where the model
        made it (``mdp_d_OH_2`` is ``(OH) / 2``), else its own name."""
        var = self.variables.get(name)
        return f"({var.c_value})" if var is not None and var.c_value else name

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

    def _check_not_volatile(self, name: str, node: c_ast.Node) -> None:
        if self.sym.is_volatile(name) and name.startswith("_Imag"):   # frontend.parse: an imaginary constant
            raise self._fail(node, "unsupported-statement",
                             "an imaginary constant (<complex.h>'s 'I', '1.0i') is not modelled")
        if self.sym.is_volatile(name):
            raise self._fail(node, "volatile-access",
                             f"'{name}' is volatile: every access to it is an observable side effect that must "
                             "happen as written")

    def _lookup(self, name: str, node: c_ast.Node) -> Variable:
        if name.startswith("mdp_") and name in self.variables:   # a size parameter the model made (mdp_d_OH_2)
            return self.variables[name]
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
            local = self.local_array_ref(node)
            return local[0] if local is not None else self.array_ref(node)
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            raise self._fail(stmt or node, "pointer-arithmetic", f"write through pointer dereference '{c_text(node)}'")
        raise self._fail(node, "unsupported-statement", f"cannot model the assignment target '{c_text(node)}'")

    def local_array_ref(self, node: c_ast.ArrayRef) -> tuple[Access, list[Expr]] | None:
        """``f[q]``, ``f[opp[q]]`` of an array declared in the nest (``local_arrays``): its
        access (the whole array, one cell per iteration around its declaration) and its
        subscripts' expressions (what they read takes part in dependences); else ``None``."""
        subs: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID) or base.name not in self.local_arrays:
            return None
        return self.local_arrays[base.name], [self.expr(x) for x in reversed(subs)]

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

    def opaque_read(self, node: c_ast.ArrayRef, err: UnsupportedInput) -> Expr | None:
        """``node``, refused with ``err``, as a read the model does not locate, where this model
        allows them (``mdpoly.frontend.opaque_reads``); else ``None``. What its subscripts read
        stays in the expression (the nest's temporaries they name take part in dependences)."""
        if not self.opaque_ok or err.code != "non-affine-subscript":
            return None
        found = self._named_base(node)
        if found is None:
            return None
        base, subs = found
        try:
            exprs: list[Expr] | None = [self.expr(s) for s in subs]
        except UnsupportedInput:
            exprs = None
        var = self.variables.get(base.name) or self.sym.variable(base.name)
        own = frozenset(self.nest_locals) | frozenset(self.local_accs) | self.opaque_temps
        if base.name in self.written:   # the accumulator of a scatter update, or refused (``frontend.scatter``)
            scattered = scatter_access(var, exprs, self.written, set(self._iterators()), own)
            if scattered is None or var is None:
                return None
            self.variables.setdefault(base.name, var)
            self.scatter.append(ScatterUpdate(base.name, err.loc or self.cand.loc, str(err.message), c_text(node)))
            return Ref(scattered)
        access = opaque_access(node, var, exprs, self.written, set(self._iterators()), own)
        if access is None or var is None or exprs is None:
            return None
        self.index_arrays_written |= written_in_subscripts(exprs, self.written, own)
        self.variables.setdefault(base.name, var)
        self.opaque.append(OpaqueRead(base.name, err.loc or self.cand.loc, str(err.message)))
        reads = [e for e in exprs if expr_refs(e)]
        return Call(OPAQUE_READ, (Ref(access), *reads)) if reads else Ref(access)

    def _named_base(self, node: c_ast.ArrayRef) -> tuple[c_ast.ID, list[c_ast.Node]] | None:
        """The variable ``node`` subscripts and its subscripts, outermost first; ``None`` when its
        base is no named variable or is declared inside the nest (an opaque access stands for the
        whole of an object that outlives the nest's iterations)."""
        subs: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID) or base.name in self.nest_locals:
            return None
        return base, subs[::-1]

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
        index = self.delin.access(name, poly, self._iterators(), partial(_product_name, self), extents,
                                  domain=self.guards + self.predicate_bounds)
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
        if isinstance(node, c_ast.BinaryOp) and node.op == "/":
            divisor = self.affine(node.right)
            if not divisor.is_constant:
                dividend_names = {n for m in self.polynomial(node.left) for n in m}
                if (dividend_names | divisor.names()) & set(self._iterators()):
                    raise _NotAffine
                return {(self._quotient_parameter(node, guarded=True),): 1}
            if divisor.constant == 0:
                raise _NotAffine
            dividend = self.polynomial(node.left)
            if not any(n in self._iterators() for m in dividend for n in m):
                return {(self._quotient_parameter(node),): 1}
            return self._exact_quotient(node, dividend, divisor.constant)
        if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*"):
            a, b = self.polynomial(node.left), self.polynomial(node.right)
            out: dict[tuple[str, ...], int] = {}
            if node.op == "*" and self.sum_strides:
                a, b = self._sum_stride(node.left, a, b), self._sum_stride(node.right, b, a)
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

    def _sum_stride(self, node: c_ast.Node, poly: dict[tuple[str, ...], int],
                    other: dict[tuple[str, ...], int]) -> dict[tuple[str, ...], int]:
        """``poly`` (of the factor ``node``), or -- where it is a sum of size parameters and
        constants, ``nx + 2``, multiplying iterators (``other``) -- a size parameter of its own
        standing for it (``mdp_sum_nxp2``): ``j * (nx + 2) + i`` is the element ``[j][i]`` of rows of
        ``nx + 2``, as a padded grid with halo cells lays out, where its expansion
        ``j*nx + 2*j + i`` would be the element ``[j][2*j + i]`` of rows of ``nx``."""
        its = set(self._iterators())
        if len(poly) < 2 or any(len(m) > 1 or set(m) & its for m in poly) \
                or not any(set(m) & its for m in other):
            return poly   # (h - 1) * w of a clamped row stays expanded: its bounds are decided as such
        text = c_text(node)
        name = "mdp_sum_" + "".join(ch if ch.isalnum() or ch == "_" else _SUM_SPELLING.get(ch, "") for ch in text)
        value = " + ".join(f"{c} * {self._c_value(m[0])}" if m and c != 1 else self._c_value(m[0]) if m else str(c)
                           for m, c in sorted(poly.items()))
        _declare_value(self, name, f"(long long) ({value})")
        self.sum_parameters.add(name)
        self.delin.sums[name] = Affine.of({m[0]: c for m, c in poly.items() if m}, poly.get((), 0))
        return {(name,): 1}

    def _quotient_parameter(self, node: c_ast.BinaryOp, guarded: bool = False) -> str:
        """``n / 2`` of size parameters: a size parameter of its own, whose value the call site
        computes as the nest does (C's division, the same operands). A divisor that is itself a
        parameter (``g < n / gs``, groups of a quantized vector) is ``guarded``: the call site
        computes the quotient before the nest, also where the original never evaluates it (an
        inner loop's bound under an outer loop that runs no iteration), so a zero divisor gives 0
        there instead of a trap; where the original evaluates it, it divides by zero itself."""
        base = "mdp_d_" + "_".join(_IDENT_OR_NUMBER.findall(c_text(node)))
        value = c_text(node)
        if guarded:
            value = f"(({c_text(node.right)}) != 0 ? ({c_text(node.left)}) / ({c_text(node.right)}) : 0)"
        name, k = base, 1
        while name in self.variables and self.variables[name].c_value != _expanded_value(self, value):
            k += 1   # (n - 1) / 2 and (n + 1) / 2 are spelled alike
            name = f"{base}_v{k}"
        _declare_value(self, name, value)
        return name

    def _exact_quotient(self, node: c_ast.BinaryOp, poly: dict[tuple[str, ...], int],
                        divisor: int) -> dict[tuple[str, ...], int]:
        """``poly / divisor`` where it divides exactly, so that C's truncating division is the
        exact quotient whatever the signs: a monomial's coefficient divisible by ``divisor``, or a
        monomial holding a size parameter ``p`` the nest does not change, read as ``p / divisor``
        (a parameter of its own, ``mdp_d_p_divisor``) under the run-time precondition
        ``p % divisor == 0`` -- the row index ``(i*n + j) / GS`` of a quantized matrix's scales,
        with ``j`` a multiple of ``GS``. Anything else raises ``_NotAffine``."""
        if divisor < 0:
            poly, divisor = {m: -c for m, c in poly.items()}, -divisor
        its = set(self._iterators())
        out: dict[tuple[str, ...], int] = {}
        for mono, c in poly.items():
            if c % divisor == 0:
                out[mono] = out.get(mono, 0) + c // divisor
                continue
            size = next((n for n in mono if n not in its and n in self.params and not n.startswith("mdp_p_")
                         and n not in self.products), None)
            if size is None or self.name_type(size) is None:
                raise _NotAffine
            name = f"mdp_d_{size}_{divisor}"
            _declare_value(self, name, f"({size}) / {divisor}")
            pre = Precondition(f"{size} % {divisor} == 0",
                               f"'{size}' is a multiple of {divisor}: '{c_text(node)}' divides exactly")
            if pre not in self.preconditions:
                self.preconditions.append(pre)
            rest = list(mono)
            rest.remove(size)
            m = tuple(sorted([*rest, name]))
            out[m] = out.get(m, 0) + c
        return {m: c for m, c in out.items() if c}


_IDENT_OR_NUMBER = re.compile(r"\w+")
#: how the name of a sum's size parameter spells its operators (``mdp_sum_nxp2`` for ``nx + 2``)
_SUM_SPELLING = {"+": "p", "-": "m", "*": "x"}
_MODEL_NAME = re.compile(r"\bmdp_\w+")


def _poly_of(a: Affine) -> dict[tuple[str, ...], int]:
    poly: dict[tuple[str, ...], int] = {(n,): c for n, c in a.terms}
    if a.constant:
        poly[()] = a.constant
    return poly


def _product_name(nb: NestExprs, names: tuple[str, ...]) -> str | None:
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


def _guard_side(nb: NestExprs, node: c_ast.Node) -> Affine | None:
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


def _expanded_value(nb: NestExprs, value: str) -> str:
    """``value`` with the size parameters the model made replaced by what they stand for."""
    def expanded(m: re.Match[str]) -> str:
        var = nb.variables.get(m.group(0))
        return f"({var.c_value})" if var is not None and var.c_value else m.group(0)

    return _MODEL_NAME.sub(expanded, value)


def _declare_value(nb: NestExprs, name: str, value: str) -> None:
    """Declares the size parameter ``name`` standing for the C expression ``value`` (a view's extent);
    the size parameters the model made that ``value`` names are replaced by what they stand for
    (the call site computes each parameter from the user's names only)."""
    value = _expanded_value(nb, value)
    if name not in nb.variables:
        nb.variables[name] = Variable(name, "long long", (), "scalar", "long long", "", "private", c_value=value)
        nb.params.append(name)


class _ExprBuilder(c_ast.NodeVisitor):
    """Right-hand sides: pycparser expression -> ``Expr``; raises on anything else."""

    def __init__(self, nb: NestExprs) -> None:
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
                if name in nb.rebound or (name in nb.nest_locals and name not in nb.not_rebound):
                    raise _NotRebound(name)   # rebuilt with it a local of each iteration
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
        local = self.nb.local_array_ref(node)
        if local is not None:
            acc, subs = local
            reads = [e for e in subs if expr_refs(e)]
            return Call(OPAQUE_READ, (Ref(acc), *reads)) if reads else Ref(acc)
        try:
            return Ref(self.nb.array_ref(node))
        except UnsupportedInput as err:
            read = self.nb.opaque_read(node, err)
            if read is None:
                raise
            return read

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


def _scale(a: Affine, k: int) -> Affine:
    return Affine.of({n: c * k for n, c in a.terms}, a.constant * k)


def _combine(a: Affine, b: Affine, sign: int) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) + sign * c
    return Affine.of(d, a.constant + sign * b.constant)


def _add(a: Affine, k: int) -> Affine:
    return Affine(a.terms, a.constant + k)
