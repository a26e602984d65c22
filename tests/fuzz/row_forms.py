"""Real-C kernel shapes of the per-row forms: ``shape(gen) -> list[Stmt]`` for :mod:`generator`.

The forms that mdpoly's normalization passes rewrite (``frontend/normalize/``): procedures called
per row (``for (b...) row_f(y + b*C, x + b*C, k, C);``, ``loop_helpers.inline_procedures``), C89
locals that are the iterators of sibling loops (``int t, e;``, ``first_assignments``), counters and
bumped pointers read after their nest (``out[m++]``, ``p += m``, ``inductions``), the per-row
argmax through its own index (``own_index_args``), loops that count down in their test
(``for (size_t i = n; i-- > 0;)``, ``down_loops``), short loops that pick by their iterator
(llama2.c's RoPE, ``short_loops``) and start values read from arrays (``float v = b ? b[o] :
0.0f;``, ``mdpoly/lower/start_values.py``). Each shape draws from the generator's own random
number generator, makes its arrays and sizes through it, and adds its tags; every program stays
free of undefined behaviour and exact (see :mod:`generator`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .cast import (
    Array,
    Assign,
    Bin,
    Call,
    Cast,
    Cond,
    Decl,
    Dim,
    Expr,
    ExprStmt,
    For,
    If,
    Index,
    Lit,
    Name,
    Param,
    Return,
    SizeRef,
    Stmt,
    Un,
)
from .generator import FP, ITERS_CAP, _fsuffix, _prod

if TYPE_CHECKING:
    from .generator import _Gen

#: every tag these shapes put on a kernel
TAGS = frozenset({"procedure", "procedure-overlap", "overlap", "procedure-names", "procedure-bump",
                  "procedure-early-return", "procedure-arg-read", "c89-siblings", "counter-exit", "bumped-pointer",
                  "counter-value", "counter-cond", "counter-triangle", "counter-bound", "counter-overlap",
                  "empty-loop", "own-index", "own-index-1d", "down-loop", "down-read-after", "down-value",
                  "down-triangle", "down-overlap", "short-loop", "start-value", "null-start", "start-max",
                  "start-self"})
#: the tags of the forms themselves (one per shape, and the null start of the GPU targets)
FORM_TAGS = frozenset({"procedure", "c89-siblings", "counter-exit", "bumped-pointer", "own-index", "down-loop",
                       "short-loop", "start-value", "null-start"})


def _ctype(g: _Gen) -> str:
    """An element type whose values stay small and exact in every form here."""
    return g.pick({"float": 0.45, "double": 0.2, "int": 0.25, "long": 0.1})


def _kind(ctype: str) -> str:
    return "frac" if ctype in FP else "small"


def _lit(ctype: str, fp_text: str, int_text: str) -> str:
    return fp_text + _fsuffix(ctype) if ctype in FP else int_text


def _coef(g: _Gen, ctype: str) -> str:
    return _lit(ctype, g.rng.choice(("0.5", "0.25", "2.0", "1.5")), g.rng.choice(("2", "3", "-1")))


def _size(g: _Gen, value: int, *, empty: float = 0.0) -> tuple[str, int]:
    """A run-time size of ``value`` (0 with probability ``empty``: an empty loop)."""
    if empty and g.rng.random() < empty:
        value = 0
        g.tags.add("empty-loop")
    return g.rt_size(value), value


def _it(g: _Gen, var: str) -> str | None:
    """The declaration type of ``var`` in a loop header (None: declared at the kernel's top)."""
    ctype = g.iter_type(var)
    return None if g.c89 else ctype


def _rows(g: _Gen, var: str, size: str, body: tuple[Stmt, ...]) -> For:
    """``for (var = 0; var < size; var++) body`` (a size that may be 0 needs ``<``, never ``<= n - 1``)."""
    return For(var, _it(g, var), Lit("0"), "<", SizeRef(size), 1, body)


def _flat(g: _Gen, ctype: str, count: int, init: str, *, passing: str | None = None) -> str:
    name = g.flat_array(ctype, count, init, passing=passing)
    if init == "zero" or passing == "global":
        g.dumps.append(name)
    return name


def _pointer_pair(g: _Gen, ctype: str, count: int, *, const_x: bool = True) -> tuple[str, str, bool]:
    """Two pointer parameters ``y`` (written) and ``x`` that the call may make overlap (tag
    ``overlap``), and whether one is the other shifted by an element."""
    name, other = f"a{len(g.arrays)}", f"a{len(g.arrays) + 1}"
    g.arrays.append(Array(name, ctype, (Dim(None, pad=count),), _kind(ctype)))
    g.arrays.append(Array(other, ctype, (Dim(None, pad=count),), _kind(ctype)))
    g.dumps += [name, other]
    u = g.acc_count
    g.acc_count += 1
    y, x = f"y{u}", f"x{u}"
    args = g.rng.choice(((name, other), (other, name), (name, name), (f"{name} + 1", name), (name, f"{name} + 1")))
    if args[0].split(" ")[0] == args[1].split(" ")[0]:
        g.tags.add("overlap")
    g.extra_params += [Param(y, f"{ctype} *{y}"), Param(x, f"{'const ' if const_x else ''}{ctype} *{x}")]
    g.extra_args += list(args)
    return y, x, "+" in args[0] + args[1]


# {{{ procedures called per row


def _procedure_text(g: _Gen, name: str, ctype: str, form: str, caller: tuple[str, ...]) -> str:
    """A ``static void`` function over one row of ``form`` (``map``, ``sum``, ``inplace``, ``swap``,
    ``scaled``, ``bump``); its parameters are at times named as the caller's variables
    (``caller``: its iterator, pointers and sizes), which the expansion must keep apart."""
    k = _coef(g, ctype)
    c89 = g.rng.random() < 0.5
    taken = {"j", "s", "t"}

    def param(default: str) -> str:
        choice = default
        if g.rng.random() < 0.3:
            choice = g.rng.choice(caller)
            g.tags.add("procedure-names")
        if choice in taken:
            choice = default
        taken.add(choice)
        return choice

    out, inp, n = param("out"), param("in"), param("n")
    j = "j" if c89 else "int j"
    zero = _lit(ctype, "0.0", "0")
    loop = f"for ({j} = 0; j < {n}; j++)"
    if form == "swap":
        head = f"static void {name}({ctype} *{out}, {ctype} *{inp}, int {n})"
        lines = [loop + " {", f"    {ctype} t = {out}[j];", f"    {out}[j] = {inp}[j];", f"    {inp}[j] = t;", "}"]
    elif form == "scaled":
        w = param("w")
        head = f"static void {name}({ctype} *{out}, const {ctype} *{inp}, {ctype} {w}, int {n})"
        lines = [loop, f"    {out}[j] = {inp}[j] * {w};"]
    elif form == "inplace":
        head = f"static void {name}({ctype} *{out}, int {n})"
        lines = [loop, f"    {out}[j] = {out}[j] * {k} + {_lit(ctype, '0.25', '1')};"]
    elif form in ("map", "bump"):
        head = f"static void {name}({ctype} *{out}, const {ctype} *{inp}, int {n})"
        # the call may pass in = out - 1: each element then depends on the last, so |k| = 1
        k = g.rng.choice(("", "-"))
        if form == "bump":
            g.tags.add("procedure-bump")
            lines = [loop, f"    *{out}++ = {k}*{inp}++ - {_lit(ctype, '0.5', '2')};"]
        else:
            lines = [loop, f"    {out}[j] = {k}{inp}[j] - {_lit(ctype, '0.5', '2')};"]
    else:   # two sibling loops over one C89 iterator: a row sum, then the row
        head = f"static void {name}({ctype} *{out}, const {ctype} *{inp}, int {n})"
        k = g.rng.choice(("1", "-1"))     # a row's sum may read the last row's output: no growth
        lines = [f"{ctype} s = {zero};", loop, f"    s += {inp}[j];", loop, f"    {out}[j] = {inp}[j] * {k} + s;"]
    if g.rng.random() < 0.1:   # a return before the end: mdpoly keeps the call (not expanded)
        g.tags.add("procedure-early-return")
        lines.insert(0, f"if ({n} < 2) return;")
    if c89:
        g.tags.add("c89-siblings")
        lines.insert(0, "int j;")
    if g.rng.random() < 0.3:
        lines.append("return;")
    return "\n".join([head, "{", *("    " + x for x in lines), "}"])


def shape_procedure(g: _Gen) -> list[Stmt]:
    """``for (b = 0; b < B; b++) row_f(y + b*C, x + b*C, n_b);`` with ``row_f`` a ``static void``
    function with loops; rows of size ``C``, ``C + 1`` (overlapping the next one) or ``b + 1``,
    through pointers the call may make overlap."""
    g.tags.add("procedure")
    ctype = _ctype(g)
    rows, cols = (max(1, v) for v in g.sizes_for(2, ITERS_CAP // 2))
    rsize, rows = _size(g, rows, empty=0.1)
    csize, cols = _size(g, cols)
    y, x, _ = _pointer_pair(g, ctype, rows * cols + 2 * cols + 8)
    form = g.pick({"map": 0.25, "sum": 0.2, "inplace": 0.15, "swap": 0.1, "scaled": 0.15, "bump": 0.15})
    u = g.acc_count
    g.acc_count += 1
    fname = f"row_{g.kname}_{u}"
    g.decls.append(_procedure_text(g, fname, ctype, form, ("b", y, x, rsize, csize)))
    b = Name("b")
    stride = SizeRef(csize)
    width = g.pick({"row": 0.5, "overlap": 0.25, "triangle": 0.25})
    n: Expr = stride
    if width == "overlap":
        g.tags.add("procedure-overlap")
        n = Bin("+", stride, Lit("1"))
    elif width == "triangle":
        n = Cond(Bin("<", b, stride), Bin("+", b, Lit("1")), stride)

    def at(p: str) -> Expr:
        offset = Bin("*", b, stride)
        return Bin("+", Name(p), offset) if g.rng.random() < 0.6 else Un("&", Index(p, (offset,)))

    args: tuple[Expr, ...] = (at(y), n) if form == "inplace" else (at(y), at(x), n)
    if form == "swap":
        args = (at(y), at(y) if g.rng.random() < 0.3 else Bin("+", Name(y), Bin("*", b, stride)), n)
        # the second row is the one after (or the same row): rows swap along the array
        args = (at(y), Bin("+", Name(y), Bin("*", Bin("+", b, Lit("1")), stride)), n) if g.rng.random() < 0.5 else args
    elif form == "scaled":
        w = _flat(g, ctype, rows + 3, "sign")     # |w| = 1: x = y - 1 chains every element
        scale: Expr = Index(w, (b,))
        if g.rng.random() < 0.3:     # read from the row the call writes: evaluated once, before it
            g.tags.add("procedure-arg-read")
            scale = Index(y, (Bin("*", b, stride),))
            ctype_one = _lit(ctype, "1.0", "1")
            scale = Cond(Bin(">", scale, Lit("0")), Lit(ctype_one), Un("-", Lit(ctype_one)))
        args = (at(y), at(x), scale, n)
    return [_rows(g, "b", rsize, (ExprStmt(Call(fname, args)),))]


def shape_c89_siblings(g: _Gen) -> list[Stmt]:
    """A row loop whose block starts with ``int t, e;``, each the iterator of sibling loops (a row
    sum, then the row scaled and shifted by it, its inner loop over ``e``), as llama2.c's heads."""
    g.tags.add("c89-siblings")
    ctype = _ctype(g)
    heads, width = g.sizes_for(2, ITERS_CAP // 2)
    hsize, heads = _size(g, heads, empty=0.1)
    wsize, width = _size(g, width)
    src = _flat(g, ctype, heads * width + 3, _kind(ctype))
    dst = _flat(g, ctype, heads * width * 2 + 3, "zero")
    u = g.acc_count
    g.acc_count += 1
    h, t, e, s = Name("h"), Name("t"), Name("e"), f"s{u}"
    w = SizeRef(wsize)
    row = Bin("+", Bin("*", h, w), t)
    first = For("t", None, Lit("0"), "<", w, 1, (Assign(Name(s), "+=", Index(src, (row,))),))
    out = Index(dst, (Bin("+", Bin("*", Lit("2"), row), e),))
    inner = For("e", None, Lit("0"), "<", Lit("2"), 1,
                (Assign(out, "=", Bin("+", Bin("*", Index(src, (row,)), Lit(_coef(g, ctype))), Name(s))),))
    second = For("t", None, Lit("0"), "<", w, 1, (inner,))
    decls = [Decl("int", "t, e"), Decl(ctype, s, Lit(_lit(ctype, "0.0", "0")))]
    if g.rng.random() < 0.5:
        decls = [Decl("int", "t"), Decl("int", "e"), decls[1]]
    return [_rows(g, "h", hsize, (*decls, first, second))]


# }}}

# {{{ counters, bumped pointers, argmax through its own index


def shape_counter(g: _Gen) -> list[Stmt]:
    """``out[m++] = e;`` (or ``out[m + j]`` then ``m += M``, or a bumped pointer ``p[j]``/``*p++``
    then ``p += M``) over rows and columns that may be empty, upward or downward, at times run
    twice by a loop around; the counter (``m``, ``p - out``) is read after the nest."""
    g.tags.add("counter-exit")
    ctype = _ctype(g)
    rows, cols = g.sizes_for(2, ITERS_CAP // 4)
    rsize, rows = _size(g, rows, empty=0.12)
    csize, cols = _size(g, cols, empty=0.12)
    reps = g.rng.choice((1, 1, 1, 2))
    start = g.rng.choice((0, 0, 1, 3))
    step = g.rng.choice((1, 1, 1, 2))
    form = g.pick({"post": 0.2, "split": 0.1, "rows": 0.15, "pointer": 0.15, "star": 0.1, "value": 0.1,
                   "triangle": 0.1, "cond": 0.1, "bound": 0.1})
    if form == "bound":      # for (j = 0; j < m; j++) out[i*W + j] = ...; m++;  (m = start + i)
        cols, reps = start + rows, 1
    if form == "triangle":   # inner loop j <= i over the rows: rows*(rows+1)/2 elements
        cols, csize = rows, rsize
    pair = form not in ("pointer", "star") and g.rng.random() < 0.35
    if pair:    # out and src through pointers the call may make overlap: the run-time check's fallback
        g.tags.add("counter-overlap")
        out, src, _ = _pointer_pair(g, ctype, start + reps * step * rows * cols + rows * cols + 6)
    else:
        out = _flat(g, ctype, start + reps * step * rows * cols + 3, "zero")
        src = _flat(g, ctype, rows * cols + 3, _kind(ctype))
    u = g.acc_count
    g.acc_count += 1
    m, p = f"m{u}", f"p{u}"
    iv, jv = f"i{u}", f"j{u}"
    i, j = Name(iv), Name(jv)
    cw = SizeRef(csize)
    # src may be out shifted: each store then feeds a later one, so |k| = 1
    k = Lit(_coef(g, ctype) if not pair else _lit(ctype, g.rng.choice(("1.0", "-1.0")), g.rng.choice(("1", "-1"))))
    value = Bin("+", Bin("*", k, Index(src, (Bin("+", Bin("*", i, cw), j),))), Lit(_lit(ctype, "0.25", "1")))
    ctr_type = g.pick({"int": 0.7, "long": 0.3})
    after: list[Stmt] = []
    if form in ("pointer", "star"):
        g.tags.add("bumped-pointer")
        g.locals.append(Decl(f"{ctype} *", p, Bin("+", Name(out), Lit(str(start)))))
        if form == "star":
            read = value
            if reps == 1 and g.rng.random() < 0.4:   # the source through a bumped pointer too
                g.locals.append(Decl(f"const {ctype} *", f"q{u}", Name(src)))
                read = Bin("+", Bin("*", k, Un("*", Name(f"q{u}++"))), Lit(_lit(ctype, "0.25", "1")))
            inner_body: tuple[Stmt, ...] = (Assign(Un("*", Name(f"{p}++")), "=", read),)
            row_after: tuple[Stmt, ...] = ()
        else:
            inner_body = (Assign(Index(p, (j,)), "=", value),)
            row_after = (Assign(Name(p), "+=", cw),)
        reader: Expr = Cast("long", Bin("-", Name(p), Name(out)))
    else:
        g.locals.append(Decl(ctr_type, m, Lit(str(start))))
        if g.rng.random() < 0.25:   # the start known at run time only
            g.locals[-1] = Decl(ctr_type, m, SizeRef(g.rt_size(start)))
        if form in ("post", "triangle"):
            inner_body = (Assign(Index(out, (Name(f"{m}++"),)), "=", value),)
            if step == 2:
                inner_body = (Assign(Index(out, (Name(m),)), "=", value), Assign(Name(m), "+=", Lit("2")))
            row_after = ()
        elif form == "value":
            g.tags.add("counter-value")
            inner_body = (Assign(Index(out, (Name(m),)), "=", Bin("+", value, Cast(ctype, Name(m)))),
                          Assign(Name(m), "+=", Lit(str(step))))
            row_after = ()
        elif form == "cond":
            g.tags.add("counter-cond")
            inner_body = (If(Bin(">", Index(src, (Bin("+", Bin("*", i, cw), j),)), Lit("0")),
                             (Assign(Index(out, (Name(f"{m}++"),)), "=", value),)),)
            row_after = ()
        elif form == "bound":
            g.tags.add("counter-bound")
            w = SizeRef(g.rt_size(cols))
            inner_body = (Assign(Index(out, (Bin("+", Bin("*", i, w), j),)), "=",
                                 Bin("+", Bin("*", k, Index(src, (Bin("+", Bin("*", i, w), j),))), Cast(ctype, Name(m)))),)
            row_after = (Assign(Name(m), "+=", Lit("1")),)
        elif form == "split":
            inner_body = (Assign(Index(out, (Name(m),)), "=", value), Assign(Name(m), "+=", Lit("1")))
            row_after = ()
        else:
            inner_body = (Assign(Index(out, (Bin("+", Name(m), j),)), "=", value),)
            row_after = (Assign(Name(m), "+=", cw),)
        reader = Name(m)
    inner = For(jv, "int", Lit("0"), "<", cw, 1, inner_body)
    if form == "bound":
        inner = For(jv, "int", Lit("0"), "<", Name(m), 1, inner_body)
    if form == "triangle":
        g.tags.add("counter-triangle")
        inner = For(jv, "int", Lit("0"), "<=", i, 1, inner_body)
    if g.rng.random() < 0.25:
        outer = For(iv, "int", Bin("-", SizeRef(rsize), Lit("1")), ">=", Lit("0"), -1, (inner, *row_after))
    else:
        outer = For(iv, "int", Lit("0"), "<", SizeRef(rsize), 1, (inner, *row_after))
    nest: Stmt = outer
    if reps > 1:
        nest = For(f"r{u}", "int", Lit("0"), "<", Lit(str(reps)), 1, (outer,))
    if g.ret == "void" and g.rng.random() < 0.4:
        g.ret = "long"
        after.append(Return(reader))
    else:
        cnt = _flat(g, "long", 1, "zero", passing="global")
        after.append(Assign(Index(cnt, (Lit("0"),)), "=", reader))
    return [nest, *after]


def shape_own_index(g: _Gen) -> list[Stmt]:
    """Per row, ``if (l[r*C + c] > l[r*C + best]) best = c;`` (any comparison), ``best`` declared
    in the row or assigned there, then stored; or the whole loop over one array, returned."""
    g.tags.add("own-index")
    ctype = g.pick({"float": 0.4, "int": 0.6})
    rows, cols = g.sizes_for(2, ITERS_CAP)
    rsize, rows = _size(g, rows, empty=0.1)
    csize, cols = _size(g, cols, empty=0.1)
    logits = _flat(g, ctype, rows * cols + 3, _kind(ctype))
    pred = _flat(g, "int", rows + 3, "zero")
    u = g.acc_count
    g.acc_count += 1
    best = f"best{u}"
    cmp = g.pick({">": 0.4, "<": 0.3, ">=": 0.15, "<=": 0.15})
    r, c = Name("r"), Name("c")
    w = SizeRef(csize)
    test = Bin(cmp, Index(logits, (Bin("+", Bin("*", r, w), c),)), Index(logits, (Bin("+", Bin("*", r, w), Name(best)),)))
    scan = For("c", _it(g, "c"), Lit("1"), "<", w, 1, (If(test, (Assign(Name(best), "=", c),)),))
    if g.rng.random() < 0.25:   # the whole nest: one array's argmax, read after it
        g.tags.add("own-index-1d")
        i = Name("i")
        one = For("i", _it(g, "i"), Lit("1"), "<", w, 1,
                  (If(Bin(cmp, Index(logits, (i,)), Index(logits, (Name(best),))), (Assign(Name(best), "=", i),)),))
        return [Decl("int", best, Lit(str(g.rng.choice((0, 0, 1))) if cols > 1 else "0")), one,
                Assign(Index(pred, (Lit("0"),)), "=", Name(best))]
    if g.rng.random() < 0.6:
        head: tuple[Stmt, ...] = (Decl("int", best, Lit("0")),)
    else:
        g.locals.append(Decl("int", best, Lit("0")))
        head = (Assign(Name(best), "=", Lit("0")),)
    return [_rows(g, "r", rsize, (*head, scan, Assign(Index(pred, (r,)), "=", Name(best))))]


# }}}

# {{{ downward loops, short selecting loops, start values


def shape_down_loop(g: _Gen) -> list[Stmt]:
    """``for (size_t i = n; i-- > 0;)`` around a map, a running sum from the end, rows of a
    matrix or a row sum; at times (C89) the iterator is declared before and read after the loop
    (mdpoly must keep that nest)."""
    g.tags.add("down-loop")
    ctype = _ctype(g)
    form = g.pick({"map": 0.25, "suffix": 0.15, "rows": 0.2, "rowsum": 0.2, "triangle": 0.2})
    two = form in ("rows", "rowsum", "triangle")
    vals = g.sizes_for(2 if two else 1, ITERS_CAP)
    sizes = [_size(g, v, empty=0.1) for v in vals]
    vals = [v for _, v in sizes]
    count = max(_prod(vals), vals[0]) + 3
    src = _flat(g, ctype, count, _kind(ctype))
    u = g.acc_count
    g.acc_count += 1
    iv, jv = f"di{u}", f"dj{u}"
    i, j = Name(iv), Name(jv)
    c89 = g.c89 and g.rng.random() < 0.7
    for var in (iv, jv):
        g.iter_types.setdefault(var, "size_t")
    decl = None if c89 else "size_t"
    k = Lit(_coef(g, ctype))
    test = g.pick({"-->": 0.6, "--!=": 0.2, "<--": 0.2})
    low = "0" if test == "--!=" else g.rng.choice(("0", "0", "0", "1", "2"))

    def down(var: str, size: str, body: tuple[Stmt, ...]) -> For:
        return For(var, decl, SizeRef(size), test, Lit(low), -1, body)

    stmts: list[Stmt] = []
    if form == "map":
        dst = _flat(g, ctype, count, "zero")
        if g.rng.random() < 0.35:
            g.tags.add("down-overlap")
            dst, src, _ = _pointer_pair(g, ctype, count + 2)
            k = Lit(_lit(ctype, g.rng.choice(("1.0", "-1.0")), g.rng.choice(("1", "-1"))))
        value: Expr = Bin("-", Bin("*", k, Index(src, (i,))), Lit("1"))
        if g.rng.random() < 0.4:
            g.tags.add("down-value")
            value = Bin("+", value, Cast(ctype if ctype in FP else "int", i))
        body: tuple[Stmt, ...] = (Assign(Index(dst, (i,)), "=", value),)
        stmts.append(down(iv, sizes[0][0], body))
    elif form == "suffix":
        dst = _flat(g, ctype, count + 1, "zero")
        body = (Assign(Index(dst, (i,)), "=", Bin("+", Index(dst, (Bin("+", i, Lit("1")),)), Index(src, (i,)))),)
        stmts.append(down(iv, sizes[0][0], body))
    elif form == "triangle":   # for (i = 0; i < n; i++) for (size_t j = i; j-- > low;) out[i*m + j] (m >= n)
        g.tags.add("down-triangle")
        w = SizeRef(sizes[1][0])
        dst = _flat(g, ctype, vals[0] * max(vals) + 3, "zero")
        wide = SizeRef(sizes[0][0]) if vals[0] >= vals[1] else w
        flat = Bin("+", Bin("*", i, wide), j)
        inner: Stmt = For(jv, decl, Cast("size_t", i) if decl is None else i, test, Lit(low), -1,
                    (Assign(Index(dst, (flat,)), "=", Bin("+", Bin("*", k, Index(src, (j,))), Lit("1"))),))
        it = g.iter_type(iv) if decl is None else "int"
        stmts.append(For(iv, None if decl is None else it, Lit("0"), "<", SizeRef(sizes[0][0]), 1, (inner,)))
    else:
        w = SizeRef(sizes[1][0])
        flat = Bin("+", Bin("*", i, w), j)
        if form == "rows":
            dst = _flat(g, ctype, count, "zero")
            inner = down(jv, sizes[1][0], (Assign(Index(dst, (flat,)), "=", Bin("*", k, Index(src, (flat,)))),))
            body = (inner,)
        else:
            dst = _flat(g, ctype, vals[0] + 3, "zero")
            s = f"s{u}"
            inner = down(jv, sizes[1][0], (Assign(Name(s), "+=", Index(src, (flat,))),))
            body = (Decl(ctype, s, Lit(_lit(ctype, "0.0", "0"))), inner, Assign(Index(dst, (i,)), "=", Name(s)))
        stmts.append(down(iv, sizes[0][0], body))
    if c89 and g.rng.random() < 0.3:
        g.tags.add("down-read-after")
        seen = _flat(g, "long", 1, "zero", passing="global")
        stmts.append(Assign(Index(seen, (Lit("0"),)), "=", Cast("long", Bin("-", i, Lit(low)))))
    return stmts


def shape_short_loop(g: _Gen) -> list[Stmt]:
    """llama2.c's RoPE: ``int rotn = i < kv ? 2 : 1; for (v = 0; v < rotn; v++) { T *vec = v == 0 ?
    q : k; ... }`` rotating pairs through pointers the call may make overlap; or a loop of 2-3
    trips whose body tests its iterator against constants."""
    g.tags.add("short-loop")
    ctype = g.pick({"float": 0.5, "double": 0.25, "int": 0.25})
    dim = max(2, g.sizes_for(1, 200)[0])
    q, kp, shifted = _pointer_pair(g, ctype, dim + 6, const_x=False)
    if shifted:   # q = k + 1: each rotation feeds the next pair, so |c| = 1 and a short chain
        dim = min(dim, 16)
    dsize = g.rt_size(dim)
    kv = g.rng.randint(0, dim)
    ksize = g.rt_size(kv)
    u = g.acc_count
    g.acc_count += 1
    iv, vv = f"i{u}", f"v{u}"
    i, v = Name(iv), Name(vv)
    c0, c1 = (Lit(_coef(g, ctype) if not shifted else _lit(ctype, g.rng.choice(("1.0", "-1.0")),
                                                             g.rng.choice(("1", "-1")))) for _ in range(2))
    rotn, vec, a, b = f"rotn{u}", f"vec{u}", f"v0_{u}", f"v1_{u}"
    three = g.rng.random() < 0.2
    if three:   # a third vector, 'v == 1 ? k : r', and three trips where i < kv
        third = _flat(g, ctype, dim + 6, _kind(ctype), passing="global")
    if g.rng.random() < 0.75:
        pick: Expr = Cond(Bin("==", v, Lit("0")), Name(q), Name(kp))
        if three:
            pick = Cond(Bin("==", v, Lit("0")), Name(q), Cond(Bin("==", v, Lit("1")), Name(kp), Name(third)))
        body: tuple[Stmt, ...] = (
            Decl(f"{ctype} *", vec, pick),
            Decl(ctype, a, Index(vec, (i,))), Decl(ctype, b, Index(vec, (Bin("+", i, Lit("1")),))),
            Assign(Index(vec, (i,)), "=", Bin("-", Bin("*", Name(a), c0), Bin("*", Name(b), c1))),
            Assign(Index(vec, (Bin("+", i, Lit("1")),)), "=", Bin("+", Bin("*", Name(a), c1), Bin("*", Name(b), c0))))
    else:
        other = _flat(g, ctype, dim + 6, "zero")
        body = (If(Bin("==", v, Lit("0")), (Assign(Index(q, (i,)), "=", Bin("*", Index(kp, (i,)), c0)),),
                   (Assign(Index(other, (Bin("+", i, v),)), "+=", Bin("*", Index(kp, (i,)), c1)),)),)
    bound_form = g.pick({"local": 0.5, "inline": 0.25, "const": 0.25})
    sel = Cond(Bin("<", i, SizeRef(ksize)), Lit("3" if three else "2"), Lit("1"))
    head: tuple[Stmt, ...] = ()
    if bound_form == "local":
        head = (Decl("int", rotn, sel),)
        bound: Expr = Name(rotn)
    elif bound_form == "inline":
        bound = sel
    else:
        bound = Lit("3" if three else "2")
    short = For(vv, "int", Lit("0"), "<", bound, 1, body)
    return [For(iv, "int", Lit("0"), "<", SizeRef(dsize), 2, (*head, short))]


def shape_start_value(g: _Gen) -> list[Stmt]:
    """``T val = bias ? bias[o] : 0; for (i...) val += w[o*I + i] * x[i]; out[o] = val;`` with
    ``bias`` a pointer parameter the call passes as an array or ``NULL``, or a plain array read."""
    g.tags.add("start-value")
    ctype = g.pick({"float": 0.5, "double": 0.2, "int": 0.3})
    outs, ins = g.sizes_for(2, ITERS_CAP)
    osize, outs = _size(g, outs, empty=0.05)
    isize, ins = _size(g, ins, empty=0.1)
    passing = "ptr" if g.target != "openmp" else None
    w = _flat(g, ctype, outs * ins + 3, _kind(ctype), passing=passing)
    x = _flat(g, ctype, ins + 3, _kind(ctype), passing=passing)
    out = _flat(g, ctype, outs + 3, "zero", passing=passing)
    u = g.acc_count
    g.acc_count += 1
    o, i, val = Name("o"), Name("i"), f"val{u}"
    zero = Lit(_lit(ctype, "0.0", "0"))
    form = g.pick({"null": 0.45, "array": 0.25, "scaled": 0.15, "self": 0.15})
    if form == "null":
        bp = f"bias{u}"
        arr = _flat(g, ctype, outs + 3, _kind(ctype), passing="global")
        g.extra_params.append(Param(bp, f"const {ctype} *{bp}"))
        g.extra_args.append(arr if g.rng.random() < 0.6 else "NULL")
        g.tags.add("null-start")
        test: Expr = Name(bp) if g.rng.random() < 0.5 else Bin("!=", Name(bp), Name("NULL"))
        start: Expr = Cond(test, Index(bp, (o,)), zero)
    elif form == "self":     # float val = y[o]; ... y[o] = val;
        g.tags.add("start-self")
        g.arrays[-1] = dataclasses.replace(g.arrays[-1], init=_kind(ctype))
        start = Index(out, (o,))
    else:
        arr = _flat(g, ctype, outs + 3, _kind(ctype), passing=passing)
        start = Index(arr, (o,))
        if form == "scaled":
            start = Bin("*", start, Lit(_coef(g, ctype)))
    term = Bin("*", Index(w, (Bin("+", Bin("*", o, SizeRef(isize)), i),)), Index(x, (i,)))
    r = g.rng.random()
    if r < 0.5:
        red = Assign(Name(val), "+=", term)
    elif r < 0.75:
        red = Assign(Name(val), "=", Bin("+", Name(val), term))
    else:
        g.tags.add("start-max")
        red = Assign(Name(val), "=", Cond(Bin(">", term, Name(val)), term, Name(val)))
    inner = For("i", _it(g, "i"), Lit("0"), "<", SizeRef(isize), 1, (red,))
    return [_rows(g, "o", osize, (Decl(ctype, val, start), inner, Assign(Index(out, (o,)), "=", Name(val))))]


# }}}

#: shape -> weight among the real-C forms
SHAPES = {shape_procedure: 3, shape_c89_siblings: 1.5, shape_counter: 3, shape_own_index: 1.5,
          shape_down_loop: 2.5, shape_short_loop: 2, shape_start_value: 2.5}
