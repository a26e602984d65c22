"""Seeded generator of valid, deterministic C programs: ``generate(seed) -> Program``.

Each program has a few kernel functions, each with its own global arrays; main fills the arrays
from an LCG, calls every kernel once and prints an exact digest of every array the kernel
touched (see ``fuzz_prelude.h``). Kernels are drawn from shapes (maps, array and scalar
reductions in every written form, imperfect nests, local accumulators, loop-carried
dependences, aliasing pointer calls, and the forms of known bugs, see :mod:`known`) over loops
with constant, macro and run-time sizes, offsets, transposes, triangular bounds, non-unit and
downward steps, ``int``/``unsigned``/``long`` iterators, C89 or C99 declarations, and arrays
passed as globals, fixed and open arrays, VLAs and linearized pointers.

No program has undefined behaviour: every subscript stays inside its array (checked by the
sanitizer test), signed integers stay far from overflow, and floating-point values are
multiples of 2^-g small enough that every partial sum is exact in any order (``_Exact``), so
outputs compare bit for bit.

.. autofunction:: generate
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .cast import (
    Array,
    Assign,
    Bin,
    Break,
    Call,
    Cast,
    Cond,
    Continue,
    Decl,
    Dim,
    Expr,
    For,
    If,
    Index,
    Kernel,
    Lit,
    Name,
    OneLine,
    Param,
    Pragma,
    Program,
    Return,
    Size,
    SizeRef,
    Stmt,
    Switch,
    Un,
    While,
)

FP = ("float", "double")
#: every floating-point value stays below 2^FP_BITS ulps of its granularity: exact in a float.
FP_BITS = 22
INT_LIMIT = 1 << 28
SIZE_POOL = (1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 32, 33, 64, 65, 100, 127)
ITERS_CAP = 6000          # iterations of one nest (keeps a program fast)
PROD_CAP = 48             # iterations of a '*' reduction (2^48 fits every float)
BodyEdit = Callable[[tuple[Stmt, ...]], tuple[Stmt, ...]]


@dataclass(frozen=True)
class Loop:
    """A loop to be: its variable takes values in [vmin, size + hi_off] (a subset, with steps)."""

    var: str
    size: str
    value: int            # the size's value
    lo: int
    hi_off: int
    vmin: int
    step: int
    ctype: str
    tri: tuple[str, str] | None = None   # (outer variable, 'le' | 'lt' | 'ge')

    @property
    def trips(self) -> int:
        return self.value


@dataclass(frozen=True)
class Val:
    """A generated expression and what bounds its value: ``|v| <= mag``, ``v * 2^gran`` integral."""

    expr: Expr
    fp: bool
    gran: int
    mag: float
    unsigned: bool = False


def _exact(v: Val, terms: int = 1, start: float = 0.0) -> bool:
    total = start + v.mag * terms
    if v.fp:
        return total * 2 ** v.gran < 2 ** FP_BITS
    return v.unsigned or total < INT_LIMIT


def _fsuffix(ctype: str) -> str:
    return "f" if ctype == "float" else ""


class _Gen:
    def __init__(self, rng: random.Random, target: str, real_c: float = 0.0, control: float = 0.0) -> None:
        self.rng = rng
        self.target = target
        self.real_c = real_c
        self.control = control
        self.decls: list[str] = []
        self.kname = ""
        self.setup: list[str] = []
        self.dumps: list[str] = []
        self.sizes: list[Size] = []
        self.arrays: list[Array] = []
        self.kernels: list[Kernel] = []
        self.typedefs: list[tuple[str, str]] = []
        # per kernel
        self.tags: set[str] = set()
        self.c89 = False
        self.iter_types: dict[str, str] = {}
        self.locals: list[Decl] = []
        self.acc_count = 0
        self.ret: str = "void"

    # {{{ names, sizes, arrays

    def pick(self, weighted: dict[str, float]) -> str:
        keys = list(weighted)
        return self.rng.choices(keys, [weighted[k] for k in keys])[0]

    def new_size(self, value: int) -> str:
        name = f"n{len(self.sizes)}"
        mode = self.pick({"literal": 0.45, "macro": 0.2, "param": 0.35})
        self.sizes.append(Size(name, value, mode))
        return name

    def new_array(self, ctype: str, dims: tuple[Dim, ...], init: str, *, written: bool) -> str:
        name = f"a{len(self.arrays)}"
        passing = self.pick({"global": 0.35, "fixed": 0.15, "open": 0.15, "vla": 0.15, "ptr": 0.2})
        const = not written and (passing == "ptr" or (len(dims) == 1 and passing != "global")) \
            and self.rng.random() < 0.3
        self.arrays.append(Array(name, ctype, dims, init, passing, const))
        return name

    def elem_type(self, fp: bool) -> str:
        if fp:
            return self.pick({"float": 0.7, "double": 0.3})
        return self.pick({"int": 0.6, "unsigned": 0.12, "char": 0.12, "short": 0.06, "long": 0.1})

    # }}}

    # {{{ loops

    def sizes_for(self, n: int, cap: int) -> list[int]:
        vals = [self.rng.choice(SIZE_POOL) for _ in range(n)]
        while _prod(vals) > cap:
            i = max(range(n), key=lambda x: vals[x])
            vals[i] = max(1, vals[i] // 2 - (vals[i] // 2) % 2 + self.rng.choice((0, 1)))
        return vals

    def iter_type(self, var: str) -> str:
        if self.c89 and var in self.iter_types:
            return self.iter_types[var]
        t = self.pick({"int": 0.75, "unsigned": 0.15, "long": 0.1})
        self.iter_types.setdefault(var, t)
        return t

    def loops(self, names: list[str], values: list[int], *, simple: bool = False) -> list[Loop]:
        out: list[Loop] = []
        for n, (var, value) in enumerate(zip(names, values)):
            ctype = self.iter_type(var)
            r = self.rng.random()
            if not simple and n > 0 and r < 0.12:
                outer = self.rng.choice(out)
                kind = self.pick({"le": 0.45, "lt": 0.2, "ge": 0.35})
                vmin = outer.vmin if kind == "ge" else 0
                out.append(Loop(var, outer.size, outer.value, 0, outer.hi_off, vmin, 1, ctype, (outer.var, kind)))
                continue
            lo = self.rng.choice((0, 0, 0, 1, 2))
            step = 1
            if not simple:
                step = self.rng.choices((1, -1, 2, -2), (0.75, 0.13, 0.08, 0.04))[0]
            if step < 0 and ctype == "unsigned":     # i >= lo must become false before i wraps
                step, lo = -1, max(lo, 1)
            out.append(Loop(var, self.new_size(value), value, lo, lo - 1, lo, step, ctype))
        return out

    def for_stmt(self, lp: Loop, body: tuple[Stmt, ...], loops: list[Loop]) -> For:
        ctype = None if self.c89 else lp.ctype
        size = SizeRef(lp.size)
        if lp.tri is not None:
            outer = next(x for x in loops if x.var == lp.tri[0])
            if lp.tri[1] == "ge":
                return For(lp.var, ctype, Name(outer.var), "<", _plus(size, outer.hi_off + 1), 1, body)
            return For(lp.var, ctype, Lit("0"), "<=" if lp.tri[1] == "le" else "<", Name(outer.var), 1, body)
        last = _plus(size, lp.hi_off)
        if lp.step > 0:
            if self.rng.random() < 0.7:
                return For(lp.var, ctype, Lit(str(lp.lo)), "<", _plus(size, lp.lo), lp.step, body)
            return For(lp.var, ctype, Lit(str(lp.lo)), "<=", last, lp.step, body)
        if lp.lo >= 1 and self.rng.random() < 0.4:
            return For(lp.var, ctype, last, ">", Lit(str(lp.lo - 1)), lp.step, body)
        return For(lp.var, ctype, last, ">=", Lit(str(lp.lo)), lp.step, body)

    def nest(self, loops: list[Loop], inner: list[Stmt], pre: dict[int, list[Stmt]] | None = None,
             post: dict[int, list[Stmt]] | None = None, edits: dict[int, BodyEdit] | None = None) -> For:
        """The nest of ``loops`` around ``inner``; ``pre[d]``/``post[d]`` stand in loop ``d``'s body
        before/after loop ``d + 1``; ``edits[d]`` rewrites loop ``d``'s body (see :meth:`guards`)."""
        pre, post, edits = pre or {}, post or {}, edits or {}
        body: tuple[Stmt, ...] = tuple(inner)
        for depth in range(len(loops) - 1, -1, -1):
            if depth in edits:
                body = edits[depth](body)
            f = self.for_stmt(loops[depth], body, loops)
            body = (*pre.get(depth - 1, ()), f, *post.get(depth - 1, ()))
        assert len(body) == 1 and isinstance(body[0], For), "statements outside the outermost loop"
        return body[0]

    # }}}

    # {{{ subscripts and expressions

    def subscript(self, lp: Loop, *, write: bool) -> tuple[Expr, Dim]:
        coef = 1 if write or self.rng.random() < 0.85 else 2
        dim = Dim(lp.size, coef, lp.hi_off, 3)
        if self.rng.random() < 0.1:     # reversed: coef * (last - v) + off
            off = self.rng.choice((0, 0, 1, 2))
            e: Expr = Bin("-", _plus(SizeRef(lp.size), lp.hi_off), Name(lp.var))
            e = _scale(coef, e)
            return (_plus(e, off), dim)
        off = self.rng.choice([0, 0, 0, 1, 2] + ([-1] if coef * lp.vmin >= 1 else []))
        return (_plus(_scale(coef, Name(lp.var)), off), dim)

    def access(self, ctype: str, init: str, loops: list[Loop], *, written: bool = False,
               all_loops: bool = False) -> Index:
        """A new array of ``ctype`` read (or written) at a subscript over some of ``loops``."""
        chosen = list(loops)
        if not all_loops and chosen:
            k = self.rng.randint(1, len(chosen))
            chosen = self.rng.sample(chosen, k)
        elif not written:
            self.rng.shuffle(chosen)
        subs: list[Expr] = []
        dims: list[Dim] = []
        for lp in chosen:
            s, d = self.subscript(lp, write=written)
            subs.append(s)
            dims.append(d)
        if not subs or (not written and self.rng.random() < 0.08):
            pos = self.rng.randrange(len(subs) + 1)
            subs.insert(pos, Lit(str(self.rng.randrange(3))))
            dims.insert(pos, Dim(None, pad=3))
        name = self.new_array(ctype, tuple(dims), init, written=written)
        return Index(name, tuple(subs))

    def output(self, ctype: str, init: str, loops: list[Loop]) -> Index:
        """A new array written at an injective subscript of ``loops`` (transposed at times)."""
        order = list(loops)
        if self.rng.random() < 0.3:
            self.rng.shuffle(order)
        return self.access(ctype, init, order, written=True, all_loops=True)

    def leaf(self, ctype: str, loops: list[Loop]) -> Val:
        fp = ctype in FP
        r = self.rng.random()
        if r < 0.7 or not loops:
            if fp:
                t = self.pick({"float": 0.6, "double": 0.15, "int": 0.15, "char": 0.05, "short": 0.05})
            elif ctype == "unsigned":
                t = self.pick({"unsigned": 0.5, "int": 0.3, "char": 0.2})
            else:
                t = self.pick({"int": 0.6, "char": 0.2, "short": 0.1, "unsigned": 0.1})
            if t in FP:
                return Val(self.access(t, "frac", loops), True, 2, 2.0)
            return Val(self.access(t, "small", loops), fp, 0, 8.0, t == "unsigned")
        if r < 0.85:
            if fp:
                c = self.rng.choice(("0.5", "0.25", "2.0", "1.5", "3.0"))
                return Val(Lit(c + _fsuffix(ctype)), True, 2, 3.0)
            c = self.rng.choice(("2", "3", "-1", "5"))
            return Val(Lit(c + ("u" if ctype == "unsigned" and c[0] != "-" else "")), False, 0, 5.0,
                       ctype == "unsigned")
        lp = self.rng.choice(loops)
        top = lp.value + lp.hi_off
        e: Expr = Name(lp.var)
        # an unsigned iterator left bare would make ``i + a[k]`` unsigned (a negative ``a[k]`` wraps
        # to ~2^32: no longer exact in floating point)
        if (fp and self.rng.random() < 0.6) or lp.ctype != "int":
            e = Cast(ctype if fp else "int", e)
        return Val(e, fp, 0, float(top))

    def value(self, ctype: str, loops: list[Loop], depth: int = 2) -> Val:
        """An expression of ``ctype`` over ``loops`` that is exact (or free of overflow)."""
        for _ in range(20):
            v = self._value(ctype, loops, depth)
            if _exact(v):
                return v
        return self.leaf(ctype, [])

    def _value(self, ctype: str, loops: list[Loop], depth: int) -> Val:
        if depth == 0 or self.rng.random() < 0.35:
            return self.leaf(ctype, loops)
        a = self._value(ctype, loops, depth - 1)
        b = self._value(ctype, loops, depth - 1)
        op = self.pick({"+": 0.4, "-": 0.25, "*": 0.35})
        fp = a.fp or b.fp
        uns = (a.unsigned or b.unsigned) and not fp
        if op == "*":
            return Val(Bin("*", a.expr, b.expr), fp, a.gran + b.gran, a.mag * b.mag, uns)
        return Val(Bin(op, a.expr, b.expr), fp, max(a.gran, b.gran), a.mag + b.mag, uns)

    # }}}

    # {{{ reductions

    def red_stmt(self, op: str, x: Expr, e: Expr, ctype: str) -> Stmt:
        """``x = x op e`` in one of its written forms."""
        fp = ctype in FP
        if op == "+":
            form = self.rng.randrange(6)
            return [Assign(x, "+=", e), Assign(x, "=", Bin("+", x, e)), Assign(x, "=", Bin("+", e, x)),
                    Assign(x, "-=", e), Assign(x, "=", Bin("-", x, e)), Assign(x, "+=", e)][form]
        if op == "*":
            form = self.rng.randrange(3)
            return [Assign(x, "*=", e), Assign(x, "=", Bin("*", x, e)), Assign(x, "=", Bin("*", e, x))][form]
        gt = ">" if op == "max" else "<"
        lt = "<" if op == "max" else ">"
        forms: list[Stmt] = [
            Assign(x, "=", Cond(Bin(gt, e, x), e, x)),
            Assign(x, "=", Cond(Bin(gt, x, e), x, e)),
            Assign(x, "=", Cond(Bin(lt, x, e), e, x)),
            If(Bin(gt, e, x), (Assign(x, "=", e),)),
            If(Bin(lt, x, e), (Assign(x, "=", e),)),
        ]
        if fp:
            fn = ("fmax" if op == "max" else "fmin") + ("f" if ctype == "float" and self.rng.random() < 0.8 else "")
            forms += [Assign(x, "=", Call(fn, (x, e))), Assign(x, "=", Call(fn, (e, x)))] * 2
        return self.rng.choice(forms)

    def addend(self, op: str, acc: str, loops: list[Loop], terms: int, start: float) -> Val:
        """The value folded into an accumulator of type ``acc``, exact over ``terms`` steps."""
        fp = acc in FP
        if op == "*":
            if fp:
                return Val(self.access(self.elem_type(True), "pow2", loops), True, 1, 2.0)
            kind = "small" if acc == "unsigned" else "sign"
            return Val(self.access(acc if acc != "long" else "int", kind, loops), False, 0, 1.0, acc == "unsigned")
        if acc in ("int", "long") and op == "+" and self.rng.random() < 0.3:
            self.tags.add("int-acc-float-addend")
            return Val(self.access("float", "frac", loops), True, 2, 2.0)
        for _ in range(20):
            v = self.value(acc, loops, self.rng.choice((0, 1, 1, 2)))
            narrow = {"char": 100.0, "short": 30000.0}.get(acc)
            if op in ("max", "min") and narrow is not None and (v.mag > narrow or v.unsigned):
                continue                     # a max of values the accumulator cannot hold
            if op != "+" or _exact(v, terms, start):
                return v
        return Val(self.access(acc, "frac" if fp else "small", loops), fp, 2 if fp else 0, 2.0 if fp else 8.0)

    def neutral(self, op: str, ctype: str) -> Expr:
        fp = ctype in FP
        if op == "+":
            return Lit("0" if not fp else "0.0" + _fsuffix(ctype))
        if op == "*":
            return Lit("1" if not fp else "1.0" + _fsuffix(ctype))
        if fp and self.rng.random() < 0.5:
            return Un("-", Name("INFINITY")) if op == "max" else Name("INFINITY")
        lows = {"char": ("-128", "127"), "short": ("-30000", "30000"), "unsigned": ("0u", "4000000000u")}
        low, high = lows.get(ctype, ("-100000", "100000"))
        return Lit(low if op == "max" else high)

    def red_op(self) -> str:
        return self.pick({"+": 0.5, "*": 0.12, "max": 0.19, "min": 0.19})

    def split_loops(self, n_par: int, n_red: int, op: str) -> tuple[list[Loop], list[Loop]]:
        names = ["i", "j", "k", "l", "p"][: n_par + n_red]
        cap_red = PROD_CAP if op == "*" else ITERS_CAP
        red_vals = self.sizes_for(n_red, cap_red)
        par_vals = self.sizes_for(n_par, max(1, ITERS_CAP // max(1, _prod(red_vals))))
        loops = self.loops(names, par_vals + red_vals)
        return loops[:n_par], loops[n_par:]

    # }}}

    # {{{ shapes

    def shape_map(self) -> list[Stmt]:
        depth = self.rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5))
        loops = self.loops(["i", "j", "k", "l", "p"][:depth], self.sizes_for(depth, ITERS_CAP))
        stmts: list[Stmt] = []
        prev: tuple[Index, Val] | None = None
        edits = self.guards(loops)
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            ctype = self.elem_type(self.rng.random() < 0.6)
            target = self.output(ctype, "frac" if ctype in FP else "small", loops)
            v = self.value(ctype, loops)
            # a guarded statement may leave its target as main set it: no bound on it to chain from
            if prev is not None and not edits and self.rng.random() < 0.4 and \
                    (ctype in FP or ctype in ("int", "long") or not prev[1].fp):
                both = Val(Bin("+", v.expr, prev[0]), v.fp or prev[1].fp, max(v.gran, prev[1].gran),
                           v.mag + prev[1].mag)
                if _exact(both):
                    v = both
            if self.rng.random() < 0.2 and _exact(v, 1, 8.0):
                stmts.append(Assign(target, "+=", v.expr))
                v = Val(target, v.fp, max(v.gran, 2), v.mag + 8.0)
            else:
                stmts.append(Assign(target, "=", v.expr))
            if ctype in ("float", "double", "int", "long"):
                prev = (target, Val(target, ctype in FP, v.gran if ctype in FP else 0, v.mag))
            else:
                prev = None
        return [self.nest(loops, stmts, edits=edits)]

    def shape_reduce_array(self) -> list[Stmt]:
        op = self.red_op()
        n_par = self.rng.choice((0, 1, 1, 2, 2, 3))
        n_red = self.rng.choice((1, 1, 2, 2, 3)) if n_par < 3 else self.rng.choice((1, 2))
        par, red = self.split_loops(n_par, n_red, op)
        loops = par + red
        if self.rng.random() < 0.3 and not any(lp.tri for lp in loops):
            self.rng.shuffle(loops)
        acc = self.elem_type(self.rng.random() < 0.6)
        init = {"+": "frac", "*": "pow2", "max": "frac", "min": "frac"}[op] if acc in FP else \
            ("sign" if op == "*" and acc != "unsigned" else "small")
        x = self.output(acc, init, par) if par else Index(self.new_array(acc, (Dim(None, pad=1),), init,
                                                                          written=True), (Lit("0"),))
        e = self.addend(op, acc, loops, _prod([lp.trips for lp in red]), 2.0 if acc in FP else 8.0)
        return [self.nest(loops, [self.red_stmt(op, x, e.expr, acc)], edits=self.guards(loops))]

    def shape_imperfect(self) -> list[Stmt]:
        op = self.pick({"+": 0.65, "max": 0.15, "min": 0.1, "*": 0.1})
        n_par = self.rng.choice((1, 1, 2, 2, 3))
        n_red = self.rng.choice((1, 1, 2)) if n_par < 3 else 1
        par, red = self.split_loops(n_par, n_red, op)
        acc = self.elem_type(self.rng.random() < 0.7)
        fp = acc in FP
        kind = "frac" if fp else "small"
        x = self.output(acc, kind, par)
        first = self.rng.random()
        start = 2.0 if fp else 8.0
        if op == "*" or first < 0.45:
            init: Stmt = Assign(x, "=", self.neutral(op, acc) if op in ("+", "*") else self.access(acc, kind, par))
        elif first < 0.7 and op == "+":
            init = Assign(x, "*=", Lit("0.5" + _fsuffix(acc)) if fp else Lit("2"))
            start = 16.0
        else:
            init = Assign(x, "=", self.access(acc, kind, par))
        with_post = op != "*" and self.rng.random() < 0.3
        terms = _prod([lp.trips for lp in red])
        e = self.addend(op, acc, par + red, 2 * terms + 2 if with_post else terms, 2 * start if with_post else start)
        post: list[Stmt] = []
        if with_post:
            if self.rng.random() < 0.5:
                two = Lit("2" + (".0" + _fsuffix(acc) if fp else ""))
                post.append(Assign(x, "=", Bin("+", Bin("*", x, two), self.access(acc, kind, par))))
            else:
                post.append(Assign(self.output(acc, "zero", par), "=", Bin("-", x, Lit("1"))))
        return [self.nest(par + red, [self.red_stmt(op, x, e.expr, acc)], {len(par) - 1: [init]},
                          {len(par) - 1: post}, self.guards(par + red))]

    def shape_local_acc(self) -> list[Stmt]:
        op = self.red_op()
        n_par = self.rng.choice((0, 1, 1, 2, 2, 3))
        n_red = self.rng.choice((1, 1, 2, 3)) if n_par < 3 else self.rng.choice((1, 2))
        par, red = self.split_loops(n_par, n_red, op)
        out_t = self.elem_type(self.rng.random() < 0.65)
        acc = out_t
        if self.rng.random() < 0.25:
            acc = {"float": "double", "double": "double", "int": "long", "char": "int", "short": "int",
                   "unsigned": "unsigned", "long": "long"}[out_t]
        name = f"s{self.acc_count}"
        self.acc_count += 1
        outside = self.rng.random() < 0.3
        start = self.neutral(op, acc)
        scaled = op == "+" and self.rng.random() < 0.25
        terms = _prod([lp.trips for lp in red])
        e = self.addend(op, acc, par + red, 2 * terms if scaled else terms, 0.0)
        stmt = self.red_stmt(op, Name(name), e.expr, acc)
        value: Expr = Name(name)
        if scaled:
            value = Bin("*", value, Lit("2"))
            if outside:
                self.tags.add("acc-outside-scaled")
        if not par and self.ret == "void" and self.rng.random() < 0.4:
            self.ret = acc
            self.locals.append(Decl(acc, name, start))
            return [self.nest(red, [stmt], edits=self.guards(red)), Return(value)]
        target = self.output(out_t, "zero", par) if par else \
            Index(self.new_array(out_t, (Dim(None, pad=1),), "zero", written=True), (Lit("0"),))
        if outside:
            self.locals.append(Decl(acc, name, None))
            pre: list[Stmt] = [Assign(Name(name), "=", start)]
        else:
            pre = [Decl(acc, name, start)]
        if not par:
            return [*pre, self.nest(red, [stmt], edits=self.guards(red)), Assign(target, "=", value)]
        return [self.nest(par + red, [stmt], {len(par) - 1: pre}, {len(par) - 1: [Assign(target, "=", value)]},
                          self.guards(par + red))]

    def kernels_returning(self) -> bool:
        return self.ret != "void"

    def shape_running_scalar(self) -> list[Stmt]:
        """``for i { for j: s = s + A[i][j]; B[i] = s * 2; }`` with ``s`` declared outside."""
        self.tags.add("running-scalar")
        par, red = self.split_loops(1, 1, "+")
        acc = self.elem_type(self.rng.random() < 0.6)
        name = f"s{self.acc_count}"
        self.acc_count += 1
        self.locals.append(Decl(acc, name, self.neutral("+", acc)))
        e = self.addend("+", acc, par + red, par[0].trips * red[0].trips, 0.0)
        target = self.output(acc, "zero", par)
        reset = [Assign(Name(name), "=", self.neutral("+", acc))] if self.rng.random() < 0.5 else []
        return [self.nest(par + red, [Assign(Name(name), "=", Bin("+", Name(name), e.expr))],
                          {0: reset}, {0: [Assign(target, "=", Bin("*", Name(name), Lit("2")))]})]

    def shape_sequential(self) -> list[Stmt]:
        """A loop-carried dependence that must stay sequential (``a[i] = a[i-1] + ...``)."""
        depth = self.rng.choice((1, 1, 2, 2, 3))
        vals = self.sizes_for(depth, ITERS_CAP)
        loops = self.loops(["i", "j", "k"][:depth], vals, simple=True)
        at = self.rng.randrange(depth)
        lp = loops[at]
        step = -1 if self.rng.random() < 0.3 else 1
        lo = max(lp.lo, 1)
        if step < 0 and lp.ctype == "unsigned":
            lo = max(lo, 2)
        lp = loops[at] = Loop(lp.var, lp.size, lp.value, lo, lo - 1, lo, step, lp.ctype)
        order = list(loops)
        if self.rng.random() < 0.3:
            self.rng.shuffle(order)
        ctype = self.elem_type(self.rng.random() < 0.6)
        name = self.new_array(ctype, tuple(Dim(x.size, 1, x.hi_off, 3) for x in order),
                              "frac" if ctype in FP else "small", written=True)
        target = Index(name, tuple(Name(x.var) for x in order))
        delta = self.rng.choice((-1, 1))
        read = Index(name, tuple(_plus(Name(x.var), delta) if x.var == lp.var else Name(x.var) for x in order))
        v = self.value(ctype, loops, 1)
        if not _exact(v, vals[at] + 1, 8.0):
            v = Val(Lit("1"), ctype in FP, 0, 1.0)
        value = self.rng.choice([Bin("+", read, v.expr), Bin("-", v.expr, read), Bin("+", v.expr, read)])
        return [self.nest(loops, [Assign(target, "=", value)], edits=self.guards(loops))]

    def shape_alias(self) -> list[Stmt]:
        """Pointer parameters that the call makes overlap (``f(a, a)``, ``f(a + 1, a)``)."""
        ctype = self.elem_type(self.rng.random() < 0.6)
        value = self.sizes_for(1, ITERS_CAP)[0]
        size = self.new_size(value)
        name = f"a{len(self.arrays)}"
        self.arrays.append(Array(name, ctype, (Dim(size, 1, 0, 3),), "frac" if ctype in FP else "small"))
        lp = Loop("i", size, value, 0, -1, 0, 1, self.iter_type("i"))
        y, x = f"y{self.acc_count}", f"x{self.acc_count}"
        self.acc_count += 1
        args = self.rng.choice(((name, name), (f"{name} + 1", name), (name, f"{name} + 1"), (f"{name} + 2", name)))
        const = "const " if self.rng.random() < 0.5 else ""
        self.extra_params += [Param(y, f"{ctype} *{y}"), Param(x, f"{const}{ctype} *{x}")]
        self.extra_args += list(args)
        i = Name("i")
        xi, yi = Index(x, (i,)), Index(y, (i,))
        stmt = self.rng.choice([Assign(yi, "=", Bin("-", xi, yi)),
                                Assign(yi, "=", Bin("+", xi, Index(x, (Bin("+", i, Lit("1")),)))),
                                Assign(yi, "+=", xi)])
        if args[0] == f"{name} + 2" and value > {"int": 36, "long": 80}.get(ctype, 1 << 30) and \
                isinstance(stmt.value, Bin) and stmt.value.op == "+":
            # a[i + 2] = a[i] + a[i + 1] is Fibonacci's recurrence: it overflows an int by i = 42
            stmt = Assign(yi, "+=", xi)
        self.tags.add("alias")
        if self.control > 0 and self.rng.random() < self.control:
            # a condition on the pointer that is never written, which the call makes alias the one
            # that is: not data the nest leaves alone
            self.tags.add("alias-cond")
            test: Expr = Bin(self.pick({">": 0.4, "<": 0.3, "!=": 0.3}),
                             Index(x, (_plus(i, self.rng.choice((0, 1, 2))),)), Lit(self.rng.choice(("0", "1"))))
            if self.rng.random() < 0.5:
                return [self.nest([lp], [If(test, (Continue(),)), stmt])]
            return [self.nest([lp], [If(test, (stmt,))])]
        return [self.nest([lp], [stmt])]

    def shape_gather_wrap(self) -> list[Stmt]:
        """A gather at a wrapped neighbour through pointer parameters that the call may make
        overlap (``y[i] = x[w] * k`` with ``int w = i + s; w = w >= n ? w - n : w;`` or
        ``x[(i + s) % n]``), as periodic stencils write it: the generated code inspects the
        gathered elements at run time and runs the loop as written where they overlap ``y``."""
        ctype = self.elem_type(self.rng.random() < 0.6)
        value = self.sizes_for(1, ITERS_CAP)[0]
        size = self.new_size(value)
        kind = "frac" if ctype in FP else "small"
        name, other = f"a{len(self.arrays)}", f"a{len(self.arrays) + 1}"
        self.arrays.append(Array(name, ctype, (Dim(size, 1, 0, 3),), kind))
        self.arrays.append(Array(other, ctype, (Dim(size, 1, 0, 3),), kind))
        lp = Loop("i", size, value, 0, -1, 0, 1, self.iter_type("i"))
        u = self.acc_count
        self.acc_count += 1
        y, x, w = f"y{u}", f"x{u}", f"w{u}"
        args = self.rng.choice(((name, other), (other, name), (name, name), (f"{name} + 1", name), (name, f"{name} + 1")))
        self.extra_params += [Param(y, f"{ctype} *{y}"), Param(x, f"const {ctype} *{x}")]
        self.extra_args += list(args)
        i, n = Name("i"), SizeRef(size)
        shift = Lit(str(self.rng.choice((1, 2, 3))))
        k = self.coef(ctype in FP, ctype)
        self.tags.add("gather-wrap")
        if self.rng.random() < 0.5:
            read = Index(x, (Bin("%", Bin("+", i, shift), n),))
            return [self.nest([lp], [Assign(Index(y, (i,)), "=", Bin("*", k.expr, read))])]
        body: list[Stmt] = [Decl("int", w, Bin("+", i, shift)),
                            Assign(Name(w), "=", Cond(Bin(">=", Name(w), n), Bin("-", Name(w), n), Name(w))),
                            Assign(Index(y, (i,)), self.rng.choice(("=", "+=")), Bin("*", k.expr, Index(x, (Name(w),))))]
        return [self.nest([lp], body)]

    def shape_table_in_place(self) -> list[Stmt]:
        """A table applied in place through pointer parameters that the call may make overlap
        (``y[i] = x[((y[i] % n) + n) % n] + k``: the subscript reads the element the statement
        writes, before it writes it): the generated code inspects the table's elements at run
        time and runs the loop as written where they overlap ``y``."""
        value = self.sizes_for(1, ITERS_CAP)[0]
        size = self.new_size(value)
        name, other = f"a{len(self.arrays)}", f"a{len(self.arrays) + 1}"
        self.arrays.append(Array(name, "int", (Dim(size, 1, 0, 3),), "small"))
        self.arrays.append(Array(other, "int", (Dim(size, 1, 0, 3),), "small"))
        lp = Loop("i", size, value, 0, -1, 0, 1, self.iter_type("i"))
        u = self.acc_count
        self.acc_count += 1
        y, x = f"y{u}", f"x{u}"
        args = self.rng.choice(((name, other), (other, name), (name, name), (f"{name} + 1", name), (name, f"{name} + 1")))
        self.extra_params += [Param(y, f"int *{y}"), Param(x, f"const int *{x}")]
        self.extra_args += list(args)
        i, n = Name("i"), SizeRef(size)
        index = Bin("%", Bin("+", Bin("%", Index(y, (i,)), n), n), n)
        self.tags.add("table-in-place")
        stmt = Assign(Index(y, (i,)), "=", Bin("+", Index(x, (index,)), Lit(str(self.rng.choice((0, 1, 3))))))
        return [self.nest([lp], [stmt])]

    def shape_escape(self) -> list[Stmt]:
        """A ``while`` loop per element, its trips decided by the data (Collatz steps of a small
        integer, at most 30): ``int v = a[i] + s; int c = 0; while (v > 1 && c < 30) { v = v % 2
        == 0 ? v / 2 : 3 * v + 1; c += 1; } out[i] = c;``, at times also bumping the element of
        another output in every trip (one element however often the loop runs)."""
        depth = self.rng.choice((1, 1, 2))
        loops = self.loops(["i", "j"][:depth], self.sizes_for(depth, ITERS_CAP // 8), simple=True)
        u = self.acc_count
        self.acc_count += 1
        v, c = Name(f"v{u}"), Name(f"c{u}")
        src = self.access("int", "pos", loops)
        step = Cond(Bin("==", Bin("%", v, Lit("2")), Lit("0")), Bin("/", v, Lit("2")), Bin("+", Bin("*", Lit("3"), v), Lit("1")))
        trip: list[Stmt] = [Assign(v, "=", step), Assign(c, "+=", Lit("1"))]
        after: list[Stmt] = []
        if self.rng.random() < 0.4:
            bumped = self.output("int", "zero", loops)
            trip.append(Assign(bumped, "+=", Lit("1")))
        out = self.output("int", "zero", loops)
        after.append(Assign(out, "=", Bin("+", c, Bin("*", Lit("100"), v))))
        body: list[Stmt] = [Decl("int", v.name, Bin("+", src, Lit(str(self.rng.choice((0, 5, 17)))))),
                            Decl("int", c.name, Lit("0")),
                            While(Bin("&&", Bin(">", v, Lit("1")), Bin("<", c, Lit("30"))), tuple(trip)), *after]
        self.tags.add("while-body")
        return [self.nest(loops, body)]

    def shape_torus(self) -> list[Stmt]:
        """A stencil on a torus: ``out[i][j] = in[(i + H - 1) % H][(j + 1) % W] + ...`` (periodic
        neighbours by remainders, over arrays passed in every way, flat pointers included)."""
        h, w = self.sizes_for(2, ITERS_CAP)
        hs, ws = self.new_size(h), self.new_size(w)
        ctype = self.elem_type(self.rng.random() < 0.5)
        kind = "frac" if ctype in FP else "small"
        src = self.new_array(ctype, (Dim(hs, 1, 0, 3), Dim(ws, 1, 0, 3)), kind, written=False)
        dst = self.new_array(ctype, (Dim(hs, 1, 0, 3), Dim(ws, 1, 0, 3)), "zero", written=True)
        i, j, hh, ww = Name("i"), Name("j"), SizeRef(hs), SizeRef(ws)
        wraps_i = [i, Bin("%", Bin("+", i, Lit("1")), hh), Bin("%", Bin("-", Bin("+", i, hh), Lit("1")), hh),
                   Bin("%", Bin("+", Bin("-", i, Lit("1")), hh), hh)]
        wraps_j = [j, Bin("%", Bin("+", j, Lit("1")), ww), Bin("%", Bin("-", Bin("+", j, ww), Lit("1")), ww),
                   Bin("%", Bin("+", Lit("1"), j), ww)]
        terms = [Index(src, (self.rng.choice(wraps_i), self.rng.choice(wraps_j))) for _ in range(self.rng.choice((2, 3, 4)))]
        value: Expr = terms[0]
        for t in terms[1:]:
            value = Bin("+", value, t)
        ti, tj = self.iter_type("i"), self.iter_type("j")
        inner = For("j", None if self.c89 else tj, Lit("0"), "<", ww, 1, (Assign(Index(dst, (i, j)), "=", value),))
        self.tags.add("torus")
        return [For("i", None if self.c89 else ti, Lit("0"), "<", hh, 1, (inner,))]

    def shape_switch(self) -> list[Stmt]:
        """A ``switch`` on a selector read per element: groups that each end with a ``break``
        (labels sharing a group, ``default`` anywhere), which become an ``if`` chain, or at times
        one that falls into the next, which keeps the ``switch`` as written."""
        value = self.sizes_for(1, ITERS_CAP)[0]
        loops = self.loops(["i"], [value], simple=True)
        ctype = self.elem_type(self.rng.random() < 0.5)
        sel = self.access("int", "pos", loops)
        out = self.output(ctype, "zero", loops)
        k = self.rng.choice((3, 4, 5))
        labels = list(range(k))
        self.rng.shuffle(labels)
        groups: list[tuple[tuple[int, ...], tuple[Stmt, ...], bool]] = []
        while labels:
            take = self.rng.choice((1, 1, 2))
            values, labels = tuple(sorted(labels[:take])), labels[take:]
            groups.append((values, (Assign(out, self.rng.choice(("=", "+=")), self.value(ctype, loops, 1).expr),), True))
        if self.rng.random() < 0.7:
            groups.insert(self.rng.randrange(len(groups) + 1), ((), (Assign(out, "=", self.value(ctype, loops, 1).expr),), True))
        if self.rng.random() < 0.2 and len(groups) > 1:   # one group falls into the next
            j = self.rng.randrange(len(groups) - 1)
            groups[j] = (groups[j][0], groups[j][1], False)
        groups[-1] = (groups[-1][0], groups[-1][1], self.rng.random() < 0.5)
        test = Bin("%", sel, Lit(str(k + self.rng.choice((0, 1)))))
        self.tags.add("switch")
        return [self.nest(loops, [Switch(test, tuple(groups))])]

    def shape_struct_value(self) -> list[Stmt]:
        """A struct local accumulated over an inner loop, filled member by member each trip and
        copied whole after it: ``C acc = {0, 0}; for (k) { C w; w.re = ..; w.im = ..; acc.re +=
        w.re - w.im; acc.im += w.im * c; } C t = acc; out[i] = t.re + 2 * t.im;``."""
        vi, vk = self.sizes_for(2, ITERS_CAP)
        loops = self.loops(["i", "k"], [vi, vk], simple=True)
        ctype = self.elem_type(self.rng.random() < 0.6)
        tname, _inst = self.struct_type([f"{ctype} re", f"{ctype} im"])
        u = self.acc_count
        self.acc_count += 1
        acc, w, t = f"acc{u}", f"w{u}", f"t{u}"
        kind = "frac" if ctype in FP else "small"
        a, b = self.access(ctype, kind, loops), self.access(ctype, kind, loops)
        inner: list[Stmt] = [Decl(tname, w, None), Assign(Name(f"{w}.re"), "=", a), Assign(Name(f"{w}.im"), "=", b),
                             Assign(Name(f"{acc}.re"), "+=", Bin("-", Name(f"{w}.re"), Name(f"{w}.im"))),
                             Assign(Name(f"{acc}.im"), "+=", Bin("*", Name(f"{w}.im"), Lit("2")))]
        out = self.output(ctype, "zero", loops[:1])
        after: list[Stmt] = [Decl(tname, t, Name(acc)),
                             Assign(out, "=", Bin("+", Name(f"{t}.re"), Bin("*", Lit("2"), Name(f"{t}.im"))))]
        self.tags.add("struct-value")
        return [self.nest(loops, inner, pre={0: [Decl(tname, acc, Name("{0, 0}"))]}, post={0: after})]

    def shape_search(self) -> list[Stmt]:
        """A search per element that stops at its first hit: ``int p = -1; for (k) if (keys[k] ==
        q[i] % m) { p = k; break; } out[i] = p;`` (keys of another type at times)."""
        vi, vk = self.sizes_for(2, ITERS_CAP // 4)
        outer = self.loops(["i"], [vi], simple=True)
        inner = self.loops(["k"], [vk], simple=True)
        u = self.acc_count
        self.acc_count += 1
        p = f"p{u}"
        keys = self.access(self.pick({"int": 0.6, "short": 0.4}), "small", inner)
        q = self.access("int", "small", outer)
        out = self.output("int", "zero", outer)
        hit = If(Bin("==", keys, q), (Assign(Name(p), "=", Name("k")), Break()))
        search = self.nest(inner, [hit])
        body: list[Stmt] = [Decl("int", p, Lit("-1")), search, Assign(out, "=", Bin("+", Name(p), q))]
        self.tags.add("search")
        return [self.nest(outer, body)]

    def shape_runtime_step(self) -> list[Stmt]:
        """A loop stepping by a size known only at run time, alone (``for (i = 0; i < n; i += s)
        y[i] = ...``) or over blocks like an FFT stage (``for (k = 0; k < s; k++) y[i + k] = ...
        x[i + k] ...``, the arrays padded by a block)."""
        n, step = self.sizes_for(1, ITERS_CAP)[0], self.rng.choice((1, 2, 3, 5, 8))
        ns, ss = self.rt_size(n), self.rt_size(step)
        ctype = self.elem_type(self.rng.random() < 0.5)
        kind = "frac" if ctype in FP else "small"
        src = self.flat_array(ctype, n + step, kind)
        dst = self.flat_array(ctype, n + step, "zero")
        self.dumps.append(dst)
        i = Name("i")
        ti, tk = self.iter_type("i"), self.iter_type("k")   # C89: declared at the kernel's top
        it = None if self.c89 else ti
        if self.rng.random() < 0.5:
            body: tuple[Stmt, ...] = (Assign(Index(dst, (i,)), self.rng.choice(("=", "+=")),
                                             Bin("+", Bin("*", Lit("2"), Index(src, (i,))), Lit("1"))),)
        else:
            ik = Bin("+", i, Name("k"))
            inner = For("k", None if self.c89 else tk, Lit("0"), "<", SizeRef(ss), 1,
                        (Assign(Index(dst, (ik,)), "=", Bin("-", Index(src, (ik,)), Name("k"))),))
            body = (inner,)
        self.tags.add("runtime-step")
        return [For("i", it, Lit(str(self.rng.choice((0, 0, 1)))), self.rng.choice(("<", "<=")), SizeRef(ns), 1, body,
                    step_expr=SizeRef(ss))]

    def shape_one_line(self) -> list[Stmt]:
        self.tags.add("one-line")
        value = self.sizes_for(1, ITERS_CAP)[0]
        lp = self.loops(["i"], [value], simple=True)
        lp2 = self.loops(["j"], [value], simple=True)
        ctype = self.elem_type(self.rng.random() < 0.5)
        a = self.output(ctype, "zero", lp)
        first = self.nest(lp, [Assign(a, "=", Bin("+", Name("i"), Lit("1")))])
        b = self.output(ctype, "zero", lp2)
        second = self.nest(lp2, [Assign(b, "=", Bin("*", self.access(ctype, "small", lp2), Lit("2")))])
        return [OneLine((first, second))]

    def shape_signed_unsigned(self) -> list[Stmt]:
        """``for (int i = -5; i < 40u; i++)``: runs zero times in C."""
        self.tags.add("signed-unsigned-cond")
        size = self.new_size(40)
        name = self.new_array("int", (Dim(size, 1, 5, 3),), "zero", written=True)
        self.iter_types.setdefault("i", "int")
        body = Assign(Index(name, (Bin("+", Name("i"), Lit("5")),)), "=", Bin("+", Name("i"), Lit("1")))
        return [For("i", None if self.c89 else "int", Lit("-5"), "<", Lit("40u"), 1, (body,))]

    def shape_typedef_cast(self) -> list[Stmt]:
        self.tags.add("typedef-cast")
        if ("base", "char") not in self.typedefs:
            self.typedefs.append(("base", "char"))
        loops = self.loops(["i"], self.sizes_for(1, ITERS_CAP), simple=True)
        a = self.output("char", "zero", loops)
        return [self.nest(loops, [Assign(a, "=", Cast("base", Bin("%", Bin("+", Name("i"), Lit("1")), Lit("4"))))])]

    def shape_iter_type(self) -> list[Stmt]:
        """Expressions that see the iterator's C type: ``(i - 10u) >> 28``, ``sizeof(i)``."""
        self.tags.add("iter-type")
        loops = self.loops(["i"], self.sizes_for(1, ITERS_CAP), simple=True)
        i = Name("i")
        form = self.rng.randrange(4)
        if form == 0:
            a = self.output("unsigned", "zero", loops)
            e: Expr = Bin(">>", Bin("-", i, Lit("10u")), Lit("28"))
        elif form == 1:
            a = self.output("float", "zero", loops)
            e = Cast("float", Bin(">>", Bin("-", i, Lit("10u")), Lit("28")))
        elif form == 2:
            a = self.output("int", "zero", loops)
            e = Bin("*", Cast("int", Call("sizeof", (i,))), self.access("int", "small", loops))
        else:
            a = self.output("int", "zero", loops)
            e = Bin("/", Bin("-", i, Lit("3")), Lit("8"))
        return [self.nest(loops, [Assign(a, "=", e)])]

    def shape_not_equal(self) -> list[Stmt]:
        """``if (i != j)`` (or ``||``/``!`` of comparisons, or ``(i + j) % 2 == 0``) around a map
        or a row reduction: a domain that is a union of basic sets, or no set at all."""
        self.tags.add("union-guard")
        loops = self.loops(["i", "j"], self.sizes_for(2, ITERS_CAP), simple=True)
        i, j = Name(loops[0].var), Name(loops[1].var)
        test = self.rng.choice([Bin("!=", i, j), Bin("!=", j, i), Un("!", Bin("==", i, j)),
                                Bin("||", Bin("<", i, j), Bin(">", i, Bin("+", j, Lit("1")))),
                                Bin("==", Bin("%", Bin("+", i, j), Lit("2")), Lit("0"))])
        ctype = self.elem_type(self.rng.random() < 0.6)
        fp = ctype in FP
        if self.rng.random() < 0.5:
            stmt = Assign(self.output(ctype, "frac" if fp else "small", loops), "=", self.value(ctype, loops).expr)
        else:
            x = self.output(ctype, "frac" if fp else "small", loops[:1])
            stmt = Assign(x, "+=", self.addend("+", ctype, loops, loops[1].trips, 2.0 if fp else 8.0).expr)
        return [self.nest(loops, [If(test, (stmt,))], edits=self.guards(loops))]

    def shape_argmax(self) -> list[Stmt]:
        """``if (a[i] > best) { best = a[i]; idx = i; }`` (any comparison, either order, or the
        ternary pair), then both stored: an argmax/argmin; small values give many ties."""
        self.tags.add("argmax")
        loops = self.loops(["i"], self.sizes_for(1, ITERS_CAP), simple=True)
        ctype = self.elem_type(self.rng.random() < 0.5)
        a = self.access(ctype, "frac" if ctype in FP else "small", loops, all_loops=True)
        best, idx = Name(f"b{self.acc_count}"), Name(f"x{self.acc_count}")
        self.acc_count += 1
        cmp = self.pick({">": 0.35, ">=": 0.15, "<": 0.35, "<=": 0.15})
        self.locals += [Decl(ctype, best.name, self.neutral("max" if ">" in cmp else "min", ctype)),
                        Decl(self.pick({"int": 0.8, "long": 0.2}), idx.name, Lit("-1"))]
        flip = {">": "<", ">=": "<=", "<": ">", "<=": ">="}
        test = Bin(cmp, a, best) if self.rng.random() < 0.6 else Bin(flip[cmp], best, a)
        it = Name(loops[0].var)
        form = self.rng.randrange(3)
        if form == 0:
            body: list[Stmt] = [If(test, (Assign(best, "=", a), Assign(idx, "=", it)))]
        elif form == 1:
            body = [If(test, (Assign(idx, "=", it), Assign(best, "=", a)))]
        else:
            body = [Assign(idx, "=", Cond(test, it, idx)), Assign(best, "=", Cond(test, a, best))]
        out = Index(self.new_array(ctype, (Dim(None, pad=1),), "zero", written=True), (Lit("0"),))
        where = Index(self.new_array("long", (Dim(None, pad=1),), "zero", written=True), (Lit("0"),))
        return [self.nest(loops, body, edits=self.guards(loops)), Assign(out, "=", best), Assign(where, "=", idx)]

    # }}}

    # {{{ control flow: early ``continue`` and conditions that read arrays

    def guards(self, loops: list[Loop]) -> dict[int, BodyEdit]:
        """With probability ``control``, edits of one or two loop bodies of a nest of ``loops``
        (see :meth:`guard`, at times two of them on one body); none (and no random number drawn)
        when ``control`` is 0."""
        if not loops or self.control <= 0 or self.rng.random() >= self.control:
            return {}
        count = 2 if len(loops) > 1 and self.rng.random() < 0.25 else 1
        depths = self.rng.sample(range(len(loops)), count)
        twice = self.rng.random() < 0.2
        return {d: (lambda body, scope=loops[:d + 1]: self.guard(scope, self.guard(scope, body) if twice else body))
                for d in depths}

    def guard(self, scope: list[Loop], body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """``body`` (of the innermost loop of ``scope``) with an early ``continue`` (see
        :meth:`early_continue`), or with all or one of its statements under ``if (c)`` (with or
        without ``else``). ``c`` tests iterators (affine, ``||``, ``%``), arrays nothing writes,
        or what the nest writes (an element or an accumulator readable there): a condition of
        that last kind must be refused or kept exact."""
        names = {lp.var for lp in scope}
        written = _readable_written(body, names)
        reads = [e for e in _indexes(tuple(_stmts(body))) if _names(e.subs) <= names and e not in written]
        if self.rng.random() < 0.5:
            return self.early_continue(scope, body, written, reads)
        self.tags.add("guard-if")
        test = self.condition(scope, written, reads, data=self.rng.random() < 0.8)
        spots = [n for n, s in enumerate(body) if isinstance(s, (Assign, For, If)) and not _is_reset(s)]
        if not spots or len(body) == 1 or self.rng.random() < 0.35:
            lo, hi = 0, len(body)
        else:
            lo = self.rng.choice(spots)
            hi = lo + 1
        part = body[lo:hi]
        orelse: tuple[Stmt, ...] = ()
        r = self.rng.random()
        if r < 0.25:
            orelse = (self.side_store(scope),)
        elif r < 0.45 and len(part) == 1 and isinstance(part[0], Assign) and part[0].op in ("+=", "-="):
            a = part[0]                      # the same term, subtracted: as many terms as before
            orelse = (Assign(a.target, "-=" if a.op == "+=" else "+=", a.value),)
        elif r < 0.5:
            self.tags.add("continue-else")   # if (c) { T } else continue;  (the rest is skipped too)
            orelse = (Continue(),)
        temp, test = self.hoist(test)
        return (*body[:lo], *temp, If(test, part, orelse), *body[hi:])

    def early_continue(self, scope: list[Loop], body: tuple[Stmt, ...], written: list[Expr],
                       reads: list[Index]) -> tuple[Stmt, ...]:
        """``if (c) continue;`` or ``if (c) { S; continue; }`` in ``body``, in front of it (mostly)
        or after some of its statements; ``S``: a store into a new array, ``body``'s first
        statement or one of its inner loops (then not run twice), or a written value restarted at
        0 or 1. At times the
        ``continue`` is under an inner ``if`` (``if (c) { if (d) continue; S }``), a form that
        is not an early ``continue`` of the loop body and must be refused or kept exact."""
        self.tags.add("continue")
        test = self.condition(scope, written, reads, data=self.rng.random() < 0.5)
        at = 0 if len(body) == 1 or self.rng.random() < 0.7 else self.rng.randint(1, len(body))
        then: list[Stmt] = []
        r = self.rng.random()
        if r < 0.3:
            then.append(self.side_store(scope))
        elif r < 0.45 and at == 0 and isinstance(body[0], Assign):
            then.append(body[0])        # runs once per iteration either way: bounds hold
        elif r < 0.6 and written:
            # a written value restarted (0 or 1): every sum, product, max or min then covers a part
            # of its terms only, within the bounds of all of them
            then.append(Assign(self.rng.choice(written), "=", Lit(self.rng.choice(("0", "1")))))
        elif r < 0.75 and at == 0 and not any(isinstance(x, Decl) for x in _stmts(body)):
            # an inner loop of the body run in its place (once per iteration either way)
            loops = [x for x in body if isinstance(x, For)]
            if loops:
                then.append(self.rng.choice(loops))
        if self.rng.random() < 0.1:
            self.tags.add("nested-continue")
            inner = If(self.condition(scope, written, reads, data=self.rng.random() < 0.5), (Continue(),))
            guard = If(test, (inner, *then)) if then else If(test, (inner,))
        else:
            guard = If(test, (*then, Continue()))
        temp, test = self.hoist(guard.test)
        return (*body[:at], *temp, dataclasses.replace(guard, test=test), *body[at:])

    def hoist(self, test: Expr) -> tuple[tuple[Decl, ...], Expr]:
        """At times ``a[...] op x`` as ``T v = a[...];`` before the ``if`` and ``v op x`` in it."""
        if not (isinstance(test, Bin) and isinstance(test.left, Index)) or self.rng.random() >= 0.25:
            return (), test
        arr = self.prog_array(test.left.base)
        if arr is None:
            return (), test
        self.tags.add("temp-cond")
        name = f"v{self.acc_count}"
        self.acc_count += 1
        return (Decl(arr.ctype, name, test.left),), Bin(test.op, Name(name), test.right)

    def prog_array(self, name: str) -> Array | None:
        return next((a for a in self.arrays if a.name == name), None)

    def side_store(self, scope: list[Loop]) -> Assign:
        """``t[...] = value`` into a new array, one element per iteration of ``scope``."""
        ctype = self.elem_type(self.rng.random() < 0.6)
        return Assign(self.output(ctype, "zero", scope), "=", self.value(ctype, scope, 1).expr)

    def condition(self, scope: list[Loop], written: list[Expr], reads: Sequence[Index] = (), *,
                  data: bool) -> Expr:
        """A test over the iterators of ``scope`` or (``data``) one that reads arrays: new
        read-only arrays, ``reads`` (elements the body reads: ``if (a[i] > 0) s += a[i];``), or
        ``written``, values the nest writes."""
        if not data:
            self.tags.add("iter-cond")
            return self.iter_condition(scope)
        if written and self.rng.random() < 0.4:
            self.tags.add("written-cond")
            e = self.rng.choice(written)
            arr = self.prog_array(e.base) if isinstance(e, Index) else None
            if arr is not None and self.rng.random() < 0.3:
                # another element of the written array, one some iteration may write
                e = Index(arr.name, tuple(Lit(str(self.rng.randrange(min(d.pad, 3)))) for d in arr.dims))
            test: Expr = Bin(self.pick({">": 0.4, "<": 0.3, "!=": 0.3}), e, Lit(self.rng.choice(("0", "1", "3"))))
        elif reads and self.rng.random() < 0.4:
            self.tags.add("data-cond")
            e = self.rng.choice(reads)
            test = Bin(self.pick({">": 0.4, "<": 0.2, ">=": 0.1, "!=": 0.3}), e, Lit(self.rng.choice(("0", "1"))))
        else:
            self.tags.add("data-cond")
            test = self.data_test(scope)
            if self.rng.random() < 0.2:
                test = Bin(self.rng.choice(("&&", "||")), test, self.data_test(scope))
        r = self.rng.random()
        if r < 0.15:
            return Bin("||", test, self.iter_condition(scope))
        if r < 0.25:
            return Bin("&&", self.iter_condition(scope), test)
        if r < 0.33:
            return Un("!", test)
        return test

    def data_test(self, scope: list[Loop]) -> Expr:
        """``a[...] op x`` over new arrays nothing writes: ``x`` a literal, another such array, or
        a scalar nothing writes (a kernel parameter or a local set before the nest); ``a``
        subscripted by the iterators, at times ``a[i % 3]`` or ``a[idx[i]]`` (``counts[c]``)."""
        ctype = self.pick({"float": 0.3, "double": 0.1, "int": 0.35, "char": 0.15, "unsigned": 0.1})
        fp = ctype in FP
        kind = "frac" if fp else "small"
        r = self.rng.random()
        if r < 0.1:
            self.tags.add("indirect-cond")
            lp = self.rng.choice(scope)
            a: Expr = Index(self.new_array(ctype, (Dim(None, pad=3),), kind, written=False),
                            (Bin("%", Name(lp.var), Lit("3")),))
        elif r < 0.2:
            self.tags.add("indirect-cond")
            idx = self.access("int", "pos", scope)         # 1..8
            a = Index(self.new_array(ctype, (Dim(None, pad=9),), kind, written=False), (idx,))
        else:
            a = self.access(ctype, kind, scope)
        op = self.pick({">": 0.3, ">=": 0.1, "<": 0.2, "==": 0.15, "!=": 0.25})
        r = self.rng.random()
        if r < 0.15:
            return Bin(op, a, self.access(ctype, kind, scope))
        if fp:
            lit = self.rng.choice(("0", "0.0", "0.5", "-0.25", "1.0"))
            lit += _fsuffix(ctype) if "." in lit else ""
        else:
            lit = self.rng.choice(("0", "2", "-1", "4")) if ctype != "unsigned" else self.rng.choice(("0u", "3u"))
        if r < 0.35:
            return Bin(op, a, self.threshold(ctype, lit))
        return Bin(op, a, Lit(lit))

    def threshold(self, ctype: str, value: str) -> Name:
        """A scalar of ``ctype`` holding ``value`` that nothing writes: a kernel parameter (main
        passes ``value``) or a local of the kernel initialised before its nests."""
        self.tags.add("scalar-cond")
        name = f"t{self.acc_count}"
        self.acc_count += 1
        if self.rng.random() < 0.6:
            self.extra_params.append(Param(name, f"{ctype} {name}"))
            self.extra_args.append(value)
        else:
            self.locals.append(Decl(ctype, name, Lit(value)))
        return Name(name)

    def iter_condition(self, scope: list[Loop]) -> Expr:
        """An affine (or ``%``) test of the iterators of ``scope``; no subtraction (an unsigned
        iterator would wrap) and no negative constant."""
        lp = self.rng.choice(scope)
        v = Name(lp.var)
        top = max(lp.vmin, lp.value + lp.hi_off)
        k = Lit(str(self.rng.randint(lp.vmin, top)))
        forms: list[Expr] = [Bin("==", v, k), Bin("<", v, k), Bin(">", v, k), Bin("!=", v, k),
                             Bin("==", Bin("%", v, Lit("2")), Lit("0")), Bin("==", Bin("%", v, Lit("3")), Lit("1")),
                             Bin(">=", v, _plus(SizeRef(lp.size), lp.hi_off)),
                             Bin("||", Bin("<", v, k), Bin(">", Bin("+", v, Lit("1")), _plus(SizeRef(lp.size), lp.hi_off))),
                             Bin("||", Bin("==", v, Lit(str(lp.vmin))), Bin("==", v, k))]
        others = [x for x in scope if x.var != lp.var and x.ctype == lp.ctype]
        if others:
            w = Name(self.rng.choice(others).var)
            forms += [Bin("==", v, w), Bin("<", w, v), Bin("||", Bin("==", v, w), Bin(">", w, k)),
                      Bin("==", Bin("%", Bin("+", v, w), Lit("2")), Lit("1"))]
        return self.rng.choice(forms)

    # }}}

    # {{{ real-C forms (issue 21): flat subscripts with run-time sizes, index temporaries,
    # ternary subscripts, struct members and bounds, local pointers, the user's OpenMP

    def rt_size(self, value: int) -> str:
        """A size known only at run time (a parameter computed from ``argc``)."""
        name = f"n{len(self.sizes)}"
        self.sizes.append(Size(name, value, "param"))
        return name

    def rt_loops(self, names: list[str], values: list[int]) -> list[Loop]:
        return [Loop(v, self.rt_size(n), n, 0, -1, 0, 1, self.iter_type(v)) for v, n in zip(names, values)]

    def flat_array(self, ctype: str, count: int, init: str, *, passing: str | None = None) -> str:
        name = f"a{len(self.arrays)}"
        self.arrays.append(Array(name, ctype, (Dim(None, pad=count),), init,
                                 passing or self.pick({"ptr": 0.7, "global": 0.3})))
        return name

    def user_omp(self, loops: list[Loop]) -> Pragma:
        """``#pragma omp parallel for`` on the outermost of ``loops`` (inner iterators declared
        before the nest must be private)."""
        inner = [lp.var for lp in loops[1:]]
        return Pragma("omp parallel for" + (f" private({', '.join(inner)})" if self.c89 and inner else ""))

    def coef(self, fp: bool, ctype: str) -> Val:
        if fp:
            return Val(Lit(self.rng.choice(("0.5", "0.25", "2.0", "1.5")) + _fsuffix(ctype)), True, 2, 2.0)
        return Val(Lit(self.rng.choice(("2", "3", "-1", "1"))), False, 0, 3.0)

    def shape_flat_stencil(self) -> list[Stmt]:
        """``int c = x + y*nx + z*nx*ny; int w = (x == 0) ? c : c - 1; out[c] = ... in[w] ...`` over
        run-time sizes (or the subscripts inline, or ``in[z][y == 0 ? y : y - 1][x]``)."""
        dims = self.rng.choice((2, 3, 3))
        vals = [max(2, v) for v in self.sizes_for(dims, ITERS_CAP)]
        loops = self.rt_loops(["z", "y", "x"][3 - dims:], vals)
        u = self.acc_count
        self.acc_count += 1
        ctype = self.elem_type(self.rng.random() < 0.65)
        fp = ctype in FP
        kind = "frac" if fp else "small"
        count = _prod(vals)
        # strides, innermost (x) first
        strides: list[Expr] = []
        acc: Expr | None = None
        for lp in reversed(loops):
            strides.append(acc if acc is not None else Lit("1"))
            acc = SizeRef(lp.size) if acc is None else Bin("*", acc, SizeRef(lp.size))
        strides.reverse()
        linear: Expr = Name(loops[-1].var)
        for lp, st in zip(reversed(loops[:-1]), reversed(strides[:-1])):
            linear = Bin("+", linear, Bin("*", Name(lp.var), st))
        mode = self.pick({"temps": 0.5, "inline": 0.25, "array": 0.25})
        self.tags.add("flat3d" if mode != "array" else "ternary-subscript")
        neighbours = [(n, side) for n in range(dims) for side in (-1, 1)]
        chosen = self.rng.sample(neighbours, self.rng.randint(1, len(neighbours)))
        body: list[Stmt] = []
        terms: list[Val] = []
        if mode == "array":
            passing = self.pick({"global": 0.3, "vla": 0.3, "fixed": 0.2, "ptr": 0.2})
            src = f"a{len(self.arrays)}"
            self.arrays.append(Array(src, ctype, tuple(Dim(lp.size, 1, 0, 0) for lp in loops), kind, passing))
            dst = f"a{len(self.arrays)}"
            self.arrays.append(Array(dst, ctype, tuple(Dim(lp.size, 1, 0, 0) for lp in loops), "zero",
                                     self.pick({"global": 0.4, "vla": 0.3, "ptr": 0.3})))
            centre: tuple[Expr, ...] = tuple(Name(lp.var) for lp in loops)
            terms.append(Val(Index(src, centre), fp, 2 if fp else 0, 2.0 if fp else 8.0))
            for n, side in chosen:
                lp = loops[n]
                v = Name(lp.var)
                edge: Expr = Lit("0") if side < 0 else _plus(SizeRef(lp.size), -1)
                clamped: Expr = Cond(Bin("==", v, edge), v, _plus(v, side))
                subs: tuple[Expr, ...] = (*centre[:n], clamped, *centre[n + 1:])
                terms.append(Val(Index(src, subs), fp, 2 if fp else 0, 2.0 if fp else 8.0))
            target = Index(dst, centre)
        else:
            src = self.flat_array(ctype, count, kind)
            dst = self.flat_array(ctype, count, "zero")
            c = f"c{u}"
            if mode == "temps":
                self.tags.add("index-temp")
                body.append(Decl("int", c, linear))
                centre_e: Expr = Name(c)
            else:
                centre_e = linear
            terms.append(Val(Index(src, (centre_e,)), fp, 2 if fp else 0, 2.0 if fp else 8.0))
            for n, side in chosen:
                lp = loops[n]
                v = Name(lp.var)
                edge = Lit("0") if side < 0 else _plus(SizeRef(lp.size), -1)
                if mode == "temps":
                    temp = f"{('we', 'ns', 'bt')[dims - 1 - n][side > 0]}_{u}"
                    step = Bin("-" if side < 0 else "+", Name(c), strides[n])
                    body.append(Decl("int", temp, Cond(Bin("==", v, edge), Name(c), step)))
                    sub: Expr = Name(temp)
                else:
                    self.tags.add("ternary-subscript")
                    moved = Cond(Bin("==", v, edge), v, _plus(v, side))
                    sub = _sub_var(linear, lp.var, moved)
                terms.append(Val(Index(src, (sub,)), fp, 2 if fp else 0, 2.0 if fp else 8.0))
            target = Index(dst, (centre_e,))
        value: Val | None = None
        for tv in terms:
            k = self.coef(fp, ctype)
            term = Val(Bin("*", k.expr, tv.expr), fp, tv.gran + k.gran, tv.mag * k.mag)
            value = term if value is None else Val(Bin("+", value.expr, term.expr), fp, max(value.gran, term.gran),
                                                   value.mag + term.mag)
        assert value is not None
        if self.rng.random() < 0.3:
            extra = self.value(ctype, loops, 1)
            both = Val(Bin("+", value.expr, extra.expr), fp, max(value.gran, extra.gran), value.mag + extra.mag)
            value = both if _exact(both) else value
        body.append(Assign(target, "=", value.expr))
        nest = self.nest(loops, [])
        nest = self.nest(loops, body) if len(body) == 1 else _with_body(nest, tuple(body))
        if self.rng.random() < 0.3:
            self.tags.add("user-omp")
            return [self.user_omp(loops), nest]
        return [nest]

    def struct_type(self, fields: list[str]) -> tuple[str, str]:
        """A new struct type with ``fields`` and a static instance of it: (type, instance)."""
        u = len(self.decls)
        tname, inst = f"S{u}", f"g{u}"
        self.decls += [f"typedef struct {{ {' '.join(f + ';' for f in fields)} }} {tname};", f"static {tname} {inst};"]
        return tname, inst

    def shape_struct(self) -> list[Stmt]:
        """Loops bounded by ``p->n`` over arrays reached through struct members (``p->out[i] =``,
        ``x[i] += p->in[i]``, ``p->out[i*p->m + j]``, row sums), or an array of structs."""
        self.tags.add("struct")
        ctype = self.elem_type(self.rng.random() < 0.65)
        fp = ctype in FP
        kind = "frac" if fp else "small"
        u = self.acc_count
        self.acc_count += 1
        mode = self.pick({"map": 0.25, "plus": 0.2, "flat2d": 0.2, "rowsum": 0.2, "aos": 0.15})
        p = f"prm{u}"
        if mode == "aos":
            self.tags.add("aos")
            value = self.sizes_for(1, ITERS_CAP)[0]
            tname, inst = self.struct_type([f"{ctype} v", f"{ctype} w"])
            self.decls[-1] = f"static {tname} {inst}[{value}];"
            loops = self.rt_loops(["i"], [value])
            q = f"q{u}"
            scale = "0.25" + _fsuffix(ctype) if fp else "1"
            self.setup.append(f"for (int {q} = 0; {q} < {value}; {q}++) {{ {inst}[{q}].v = ({q} % 9 - 4) * {scale}; "
                              f"{inst}[{q}].w = ({q} % 5 - 2) * {scale}; }}")
            self.extra_params.append(Param(p, f"const {tname} *{p}"))
            self.extra_args.append(inst)
            i = Name("i")
            v, w = Name(f"{p}[i].v"), Name(f"{p}[i].w")
            out = self.output(ctype, "zero", loops)
            e: Expr = self.rng.choice([Bin("+", Bin("*", v, w), v), Bin("-", w, v), Bin("*", v, Lit("2"))])
            return [self.nest(loops, [Assign(out, "=", Bin("+", e, self.value(ctype, loops, 1).expr))])]
        two = mode in ("flat2d", "rowsum")
        vals = self.sizes_for(2 if two else 1, ITERS_CAP)
        count = _prod(vals)
        in_t = ctype if self.rng.random() < 0.8 else ("int" if fp else ctype)
        src = self.flat_array(in_t, count + 2, "frac" if in_t in FP else "small", passing="global")
        dst = self.flat_array(ctype, count + 2, "zero" if mode != "plus" else kind, passing="global")
        tname, inst = self.struct_type(["int n", "int m", f"{ctype} k", f"{ctype} *out", f"const {in_t} *in"])
        factor = self.rng.choice(("0.5", "2.0", "-1.5")) + _fsuffix(ctype) if fp else self.rng.choice(("2", "-1", "3"))
        self.setup += [f"{inst}.n = argc + {vals[0] - 1};", f"{inst}.m = argc + {vals[-1] - 1};",
                       f"{inst}.k = {factor};", f"{inst}.out = {dst};", f"{inst}.in = {src};"]
        self.dumps.append(dst)
        self.extra_params.append(Param(p, f"const {tname} *{p}"))
        self.extra_args.append(f"&{inst}")
        loops = [Loop(v, self.new_size(n), n, 0, -1, 0, 1, self.iter_type(v)) for v, n in zip(["i", "j"], vals)]
        bounds = [Name(f"{p}->n"), Name(f"{p}->m")]
        i = Name("i")
        inp = lambda sub: Index(f"{p}->in", (sub,))   # noqa: E731 -- a one-line helper
        outp = lambda sub: Index(f"{p}->out", (sub,))  # noqa: E731
        if mode == "map":
            body: list[Stmt] = [Assign(outp(i), "=", Bin("+", Bin("*", inp(i), Name(f"{p}->k")),
                                                        self.value(ctype, loops, 1).expr))]
        elif mode == "plus":
            body = [Assign(outp(i), "+=", inp(i))]
        elif mode == "flat2d":
            j = Name("j")
            body = [Assign(outp(Bin("+", Bin("*", i, Name(f"{p}->m")), j)), "=",
                           Bin("-", inp(Bin("+", Bin("*", j, Name(f"{p}->n")), i)), self.value(ctype, loops, 1).expr))]
        else:
            acc = f"s{u}"
            inner = For("j", None if self.c89 else loops[1].ctype, Lit("0"), "<", bounds[1], 1,
                        (Assign(Name(acc), "+=", inp(Bin("+", Bin("*", i, Name(f"{p}->m")), Name("j")))),))
            outer = For("i", None if self.c89 else loops[0].ctype, Lit("0"), "<", bounds[0], 1,
                        (Decl(ctype, acc, self.neutral("+", ctype)), inner, Assign(outp(i), "=", Name(acc))))
            return [outer]
        stmt: Stmt = body[0]
        for lp, bound in reversed(list(zip(loops, bounds))):
            stmt = For(lp.var, None if self.c89 else lp.ctype, Lit("0"), "<", bound, 1, (stmt,))
        return [stmt]

    def shape_local_ptr(self) -> list[Stmt]:
        """``const T *row = in + i * m; T *dst = out + i * m;`` in the outer loop, the inner loop
        through them (a row map, or a row dot product into ``out[i]``)."""
        self.tags.add("local-ptr")
        vals = self.sizes_for(2, ITERS_CAP)
        loops = self.rt_loops(["i", "j"], vals)
        ctype = self.elem_type(self.rng.random() < 0.65)
        fp = ctype in FP
        kind = "frac" if fp else "small"
        u = self.acc_count
        self.acc_count += 1
        src = self.flat_array(ctype, _prod(vals), kind, passing="global")
        i, j = Name("i"), Name("j")
        m = SizeRef(loops[1].size)
        row, dst, acc = f"r{u}", f"d{u}", f"s{u}"
        vec = self.access(ctype, kind, loops[1:], all_loops=True)
        if self.rng.random() < 0.5:
            out = self.flat_array(ctype, _prod(vals), "zero", passing="global")
            self.dumps.append(out)
            pre: list[Stmt] = [Decl(f"const {ctype} *", row, Bin("+", Name(src), Bin("*", i, m))),
                               Decl(f"{ctype} *", dst, Bin("+", Name(out), Bin("*", i, m)))]
            k = self.coef(fp, ctype)
            inner_body: list[Stmt] = [Assign(Index(dst, (j,)), "=", Bin("+", Bin("*", k.expr, Index(row, (j,))), vec))]
            post: list[Stmt] = []
        else:
            out_i = self.output(ctype, "zero", loops[:1])
            pre = [Decl(f"const {ctype} *", row, Bin("+", Name(src), Bin("*", i, m))),
                   Decl(ctype, acc, self.neutral("+", ctype))]
            inner_body = [Assign(Name(acc), "+=", Bin("*", Index(row, (j,)), vec))]
            post = [Assign(out_i, "=", Name(acc))]
        inner = self.for_stmt(loops[1], tuple(inner_body), loops)
        outer = self.for_stmt(loops[0], (*pre, inner, *post), loops)
        if self.rng.random() < 0.3:
            self.tags.add("user-omp")
            return [self.user_omp(loops), outer]
        return [outer]

    def shape_heads(self) -> list[Stmt]:
        """Per-head attention scores through pointers into flat buffers, as inference code has
        them: ``const T *q = qb + h*hs;`` in the head loop, ``const T *k = kb + t*kv + h*hs;`` in
        the position loop, a dot product over the head into ``att[h*T + t]``."""
        self.tags.add("local-ptr")
        vals = self.sizes_for(3, ITERS_CAP)
        loops = self.rt_loops(["h", "t", "e"], vals)
        heads, positions, width = (SizeRef(lp.size) for lp in loops)
        ctype = self.elem_type(self.rng.random() < 0.7)
        kind = "frac" if ctype in FP else "small"
        u = self.acc_count
        self.acc_count += 1
        qb = self.flat_array(ctype, vals[0] * vals[2], kind, passing="global")
        kb = self.flat_array(ctype, vals[1] * vals[0] * vals[2], kind, passing="global")
        att = self.flat_array(ctype, vals[0] * vals[1], "zero", passing="global")
        self.dumps.append(att)
        h, t, e = Name("h"), Name("t"), Name("e")
        q, k, acc = f"q{u}", f"k{u}", f"s{u}"
        inner = self.for_stmt(loops[2], (Assign(Name(acc), "+=", Bin("*", Index(q, (e,)), Index(k, (e,)))),), loops)
        key = Bin("+", Name(kb), Bin("+", Bin("*", t, Bin("*", heads, width)), Bin("*", h, width)))
        mid = self.for_stmt(loops[1], (Decl(f"const {ctype} *", k, key), Decl(ctype, acc, self.neutral("+", ctype)),
                                       inner, Assign(Index(att, (Bin("+", Bin("*", h, positions), t),)), "=",
                                                     Name(acc))), loops)
        outer = self.for_stmt(loops[0], (Decl(f"const {ctype} *", q, Bin("+", Name(qb), Bin("*", h, width))), mid),
                              loops)
        if self.rng.random() < 0.3:
            self.tags.add("user-omp")
            return [self.user_omp(loops), outer]
        return [outer]

    def shape_user_omp(self) -> list[Stmt]:
        """A parallel map under the user's ``#pragma omp parallel for``, with or without a
        ``#pragma mdh(out[i][j] : ++, ++)`` before or after it."""
        self.tags.add("user-omp")
        depth = self.rng.choice((1, 2, 2, 3))
        loops = self.loops(["i", "j", "k"][:depth], self.sizes_for(depth, ITERS_CAP), simple=True)
        ctype = self.elem_type(self.rng.random() < 0.6)
        name = f"a{len(self.arrays)}"
        offs = [self.rng.choice((0, 0, 1)) for _ in loops]
        self.arrays.append(Array(name, ctype, tuple(Dim(lp.size, 1, lp.hi_off, 3) for lp in loops), "zero",
                                 self.pick({"global": 0.5, "fixed": 0.2, "vla": 0.3})))
        target = Index(name, tuple(_plus(Name(lp.var), o) for lp, o in zip(loops, offs)))
        nest = self.nest(loops, [Assign(target, "=", self.value(ctype, loops).expr)])
        omp = self.user_omp(loops)
        order = self.pick({"omp": 0.4, "omp-mdh": 0.3, "mdh-omp": 0.3})
        if order == "omp":
            return [omp, nest]
        self.tags.add("omp-before-mdh" if order == "omp-mdh" else "mdh-before-omp")
        subs = "".join(f"[{lp.var}{f' + {o}' if o else ''}]" for lp, o in zip(loops, offs))
        mdh = Pragma(f"mdh({name}{subs} : {', '.join(['++'] * depth)})")
        return [omp, mdh, nest] if order == "omp-mdh" else [mdh, omp, nest]

    # }}}

    def kernel(self, name: str, *, avoid: frozenset[str]) -> None:
        self.tags = set()
        self.c89 = self.rng.random() < 0.25
        self.iter_types = {}
        self.locals = []
        self.acc_count = 0
        self.ret = "void"
        self.extra_params: list[Param] = []
        self.extra_args: list[str] = []
        self.kname = name
        self.setup = []
        self.dumps = []
        real: dict[Callable[[], list[Stmt]], float] = {self.shape_flat_stencil: 4, self.shape_struct: 3, self.shape_local_ptr: 2, self.shape_heads: 1,
                self.shape_user_omp: 2, self.shape_gather_wrap: 2, self.shape_table_in_place: 1,
                self.shape_escape: 2, self.shape_torus: 2, self.shape_switch: 2, self.shape_struct_value: 2,
                self.shape_search: 2, self.shape_runtime_step: 2}
        from .row_forms import SHAPES as ROW_SHAPES  # the per-row forms (they import this module)
        real.update({functools.partial(fn, self): w for fn, w in ROW_SHAPES.items()})
        shapes = {self.shape_map: 20, self.shape_reduce_array: 20, self.shape_imperfect: 16,
                  self.shape_local_acc: 16, self.shape_sequential: 7, self.shape_alias: 7,
                  self.shape_running_scalar: 3, self.shape_one_line: 2, self.shape_signed_unsigned: 1.5,
                  self.shape_typedef_cast: 2, self.shape_iter_type: 3, self.shape_not_equal: 4,
                  self.shape_argmax: 4}
        if self.c89 and self.target != "openmp":
            self.tags.add("c89-gpu")
        body: list[Stmt] = []
        for _ in range(self.rng.choice((1, 1, 1, 2))):
            # the real-C forms draw no random number unless asked for: existing seeds are unchanged
            pool = real if self.real_c > 0 and self.rng.random() < self.real_c else shapes
            fn = self.rng.choices(list(pool), list(pool.values()))[0]
            if fn in (self.shape_alias, self.shape_gather_wrap, self.shape_table_in_place) and self.extra_params:
                fn = self.shape_map
            saved = (set(self.tags), len(self.arrays), len(self.sizes), len(self.locals), len(self.typedefs),
                     self.ret, len(self.extra_params), len(self.extra_args), len(self.decls), len(self.setup),
                     len(self.dumps))
            part = fn()
            if (self.tags - saved[0]) & avoid:      # a known bug's form that was asked to be left out
                self.tags, self.ret = saved[0], saved[5]
                del self.arrays[saved[1]:], self.sizes[saved[2]:], self.locals[saved[3]:]
                del self.typedefs[saved[4]:], self.extra_params[saved[6]:], self.extra_args[saved[7]:]
                del self.decls[saved[8]:], self.setup[saved[9]:], self.dumps[saved[10]:]
                continue
            returns = [s for s in body + part if isinstance(s, Return)]
            body = [s for s in body + part if not isinstance(s, Return)] + returns
        if not body:
            body = self.shape_map()
        if "c89-gpu" in self.tags and "c89-gpu" in avoid:
            self.c89 = False
            self.tags.discard("c89-gpu")
            body = [_declare_iterators(s, dict(self.iter_types)) for s in body]
        self.kernels.append(Kernel(name, tuple(body), self.ret, tuple(self.extra_params), tuple(self.extra_args),
                                   frozenset(self.tags), self.c89,
                                   tuple(sorted(self.iter_types.items())) if self.c89 else (), tuple(self.locals),
                                   tuple(self.setup), tuple(self.dumps)))

def generate(seed: int, *, target: str = "openmp", kernels: int | None = None,
             avoid: frozenset[str] = frozenset(), real_c: float = 0.0, control: float = 0.0,
             pinned: float = 0.0) -> Program:
    """A random valid C program, the same for the same arguments.

    :arg seed: seeds ``random.Random``.
    :arg target: the target it will be translated for (tags such as ``c89-gpu`` depend on it).
    :arg kernels: how many kernel functions (default 3 to 5).
    :arg avoid: feature tags (see :mod:`known`) whose forms are not generated.
    :arg real_c: the probability that a kernel's shape is one of the real-C forms of issue 21
        (flat subscripts over run-time sizes with index temporaries or ternaries, struct members
        and bounds, arrays of structs, local row pointers, the user's ``#pragma omp parallel
        for`` with or without ``#pragma mdh``); 0 (the default) generates what it always did.
    :arg control: the probability that a nest of the classic shapes (maps, reductions, imperfect
        nests, local accumulators, loop-carried dependences, ``if (i != j)`` guards) gets an early
        ``continue`` (``if (c) continue;``, ``if (c) { S; continue; }``) or an ``if`` (with or
        without ``else``) around its body or one of its statements or inner loops, at one or two
        of its loops; ``c`` tests iterators, arrays nothing writes, or values the nest writes.
        0 (the default) draws no extra random number: every existing seed is unchanged.
    :arg pinned: the probability that a size known only at run time is instead a constant local
        of ``main`` (``int n4 = 5;``), the same at the kernel's only call: mdpoly pins it
        (``mdpoly.frontend.pinned_values``) and a size up to 64 gets a specialised copy of the
        generated code. Drawn from a generator of its own: the program is otherwise unchanged.
    """
    rng = random.Random(seed)
    g = _Gen(rng, target, real_c, control)
    for n in range(kernels if kernels is not None else rng.randint(3, 5)):
        g.kernel(f"k{n}", avoid=avoid)
    sizes = tuple(g.sizes)
    if pinned > 0.0:
        pins = random.Random(seed * 7919 + 17)
        sizes = tuple(Size(s.name, s.value, "pinned") if s.mode == "param" and pins.random() < pinned else s
                      for s in sizes)
    return Program(seed, sizes, tuple(g.arrays), tuple(g.kernels), tuple(g.typedefs), tuple(g.decls))


# {{{ helpers


def _prod(values: list[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def _plus(e: Expr, k: int) -> Expr:
    if k == 0:
        return e
    return Bin("+" if k > 0 else "-", e, Lit(str(abs(k))))


def _scale(c: int, e: Expr) -> Expr:
    return e if c == 1 else Bin("*", Lit(str(c)), e)


def _sub_var(e: Expr, var: str, by: Expr) -> Expr:
    """``e`` with the variable ``var`` replaced by ``by``."""
    match e:
        case Name(name):
            return by if name == var else e
        case Bin(op, left, right):
            return Bin(op, _sub_var(left, var, by), _sub_var(right, var, by))
        case _:
            return e


def _names(x: object) -> set[str]:
    """The variables (``Name``) that an expression or statement mentions."""
    if isinstance(x, Name):
        return {x.name}
    out: set[str] = set()
    if isinstance(x, tuple):
        for y in x:
            out |= _names(y)
    elif hasattr(x, "__dataclass_fields__"):
        for f in x.__dataclass_fields__:  # type: ignore[attr-defined]
            out |= _names(getattr(x, f))
    return out


def _indexes(x: object) -> list[Index]:
    """The array elements (``Index``) that ``x`` mentions, outermost first, in order."""
    if isinstance(x, Index):
        return [x, *_indexes(x.subs)]
    out: list[Index] = []
    if isinstance(x, tuple):
        for y in x:
            out += _indexes(y)
    elif hasattr(x, "__dataclass_fields__") and not isinstance(x, For | If | OneLine):
        for f in x.__dataclass_fields__:  # type: ignore[attr-defined]
            out += _indexes(getattr(x, f))
    return out


def _stmts(body: tuple[Stmt, ...]) -> list[Stmt]:
    """Every statement of ``body``, nested ones included."""
    out: list[Stmt] = []
    for s in body:
        out.append(s)
        if isinstance(s, For):
            out += _stmts(s.body)
        elif isinstance(s, If):
            out += _stmts(s.body) + _stmts(s.orelse)
        elif isinstance(s, OneLine):
            out += _stmts(s.body)
    return out


def _is_reset(s: Stmt) -> bool:
    """``x = v`` into a scalar, ``v`` not reading ``x``: an accumulator's start (under an ``if``
    it could be left unset)."""
    return isinstance(s, Assign) and isinstance(s.target, Name) and s.op == "=" and \
        s.target.name not in _names(s.value)


def _readable_written(body: tuple[Stmt, ...], scope: set[str]) -> list[Expr]:
    """What ``body`` writes that can be read before it, at the top of the loop body: array
    elements subscripted by ``scope``'s iterators alone, and scalars neither declared nor
    started (:func:`_is_reset`) in ``body``."""
    stmts = _stmts(body)
    declared = {s.name for s in stmts if isinstance(s, Decl)} | \
        {s.target.name for s in stmts if _is_reset(s) and isinstance(s, Assign) and isinstance(s.target, Name)}
    out: list[Expr] = []
    for s in stmts:
        if not isinstance(s, Assign) or s.target in out:
            continue
        t = s.target
        if (isinstance(t, Index) and _names(t.subs) <= scope) or (isinstance(t, Name) and t.name not in declared):
            out.append(t)
    return out


def _with_body(f: For, body: tuple[Stmt, ...]) -> For:
    """``f`` (a perfect nest) with ``body`` as its innermost loop's body."""
    if f.body and isinstance(f.body[0], For) and len(f.body) == 1:
        return For(f.var, f.ctype, f.start, f.cond, f.bound, f.step, (_with_body(f.body[0], body),))
    return For(f.var, f.ctype, f.start, f.cond, f.bound, f.step, body)


def _declare_iterators(s: Stmt, types: dict[str, str]) -> Stmt:
    """``s`` with every loop declaring its iterator in its header (C99 style)."""
    if isinstance(s, For):
        return For(s.var, s.ctype or types.get(s.var, "int"), s.start, s.cond, s.bound, s.step,
                   tuple(_declare_iterators(b, types) for b in s.body))
    if isinstance(s, OneLine):
        return OneLine(tuple(_declare_iterators(b, types) for b in s.body))
    if isinstance(s, If):
        return If(s.test, tuple(_declare_iterators(b, types) for b in s.body),
                  tuple(_declare_iterators(b, types) for b in s.orelse))
    return s

# }}}
