"""The fuzzer's program model: a small C AST (expressions, statements, kernels, a program) and
its printer, ``Program -> C text`` plus the line range of every kernel.

The generator (:mod:`generator`) builds these frozen values, the reducer (:mod:`reduce`) edits
them with :func:`dataclasses.replace`, and :func:`render` prints them. Sizes are named
(:class:`Size`) so that shrinking one value shrinks the loops and the arrays that use it
together; how a size is spelled in a kernel (a literal, a macro, a run-time parameter) is part
of the program, not of the expression.

.. autofunction:: render
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# {{{ expressions


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal, printed as written (``3``, ``0.25f``, ``10u``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Name:
    """A variable: an iterator, an accumulator, a parameter."""

    name: str


@dataclass(frozen=True, slots=True)
class SizeRef:
    """A named size, printed as its value, its macro or its parameter (see :class:`Size`)."""

    size: str


@dataclass(frozen=True, slots=True)
class Index:
    """``base[s0][s1]...``; an array passed as a plain pointer is linearized when printed."""

    base: str
    subs: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Bin:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Un:
    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class Call:
    fn: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Cast:
    ctype: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class Cond:
    test: Expr
    then: Expr
    other: Expr


Expr = Lit | Name | SizeRef | Index | Bin | Un | Call | Cast | Cond

# }}}

# {{{ statements


@dataclass(frozen=True, slots=True)
class Assign:
    target: Expr
    op: str          # "=", "+=", "-=", "*="
    value: Expr


@dataclass(frozen=True, slots=True)
class Decl:
    """``ctype name = init;``. ``keep``: the reducer never drops it (an accumulator's start)."""

    ctype: str
    name: str
    init: Expr | None = None
    keep: bool = True


@dataclass(frozen=True, slots=True)
class For:
    """``for (ctype var = start; var cond bound; var += step) body``; ``ctype`` None: declared
    before (C89 style)."""

    var: str
    ctype: str | None
    start: Expr
    cond: str        # "<", "<=", ">=", ">"; "-->", "--!=", "<--": ``var-- > bound``,
    #                  ``var-- != bound``, ``bound < var--`` with no increment (``size_t i = n; i-- > 0;``)
    bound: Expr
    step: int
    body: tuple[Stmt, ...]
    #: a step known only at run time (``var += step_expr``; ``step`` is then 1)
    step_expr: Expr | None = None


@dataclass(frozen=True, slots=True)
class If:
    """``if (test) body`` or, with ``orelse``, ``if (test) { body } else { orelse }``."""

    test: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@dataclass(frozen=True, slots=True)
class While:
    """``while (test) { body }``."""

    test: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class ExprStmt:
    """An expression as a statement: a procedure's call (``row_f(y + b * n, x, n);``)."""

    expr: Expr


@dataclass(frozen=True, slots=True)
class Continue:
    """``continue;``"""


@dataclass(frozen=True, slots=True)
class Break:
    """``break;``"""


@dataclass(frozen=True, slots=True)
class Switch:
    """``switch (test) { case v: ... }``: ``groups`` of (case values, or ``()`` for ``default``;
    statements, printed in braces; whether a ``break`` ends them)."""

    test: Expr
    groups: tuple[tuple[tuple[int, ...], tuple[Stmt, ...], bool], ...]


@dataclass(frozen=True, slots=True)
class OneLine:
    """Statements printed on one source line (two nests on one line)."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class Return:
    value: Expr


@dataclass(frozen=True, slots=True)
class Pragma:
    """``#pragma text`` on a line of its own (``omp parallel for``, ``mdh(out[i] : ++)``)."""

    text: str


Stmt = Assign | Decl | For | If | While | Continue | Break | Switch | OneLine | Return | Pragma | ExprStmt

# }}}

# {{{ program


@dataclass(frozen=True, slots=True)
class Size:
    """A problem size. ``mode``: ``literal`` (the number), ``macro`` (``#define``), ``param`` (a
    kernel parameter whose value main computes at run time from ``argc``), ``pinned`` (a kernel
    parameter main sets from a constant: ``generate(pinned=...)``)."""

    name: str
    value: int
    mode: str


@dataclass(frozen=True, slots=True)
class Dim:
    """One array extent: ``coef * (size + off) + pad``, or ``pad`` alone when ``size`` is None."""

    size: str | None
    coef: int = 1
    off: int = 0
    pad: int = 3


@dataclass(frozen=True, slots=True)
class Array:
    """A global array of main's. ``passing``: how kernels see it: ``global`` (by name),
    ``fixed`` (``T a[4][5]``), ``open`` (``T a[][5]``), ``vla`` (``T a[n][m + 3]``), ``ptr``
    (``T *a``, subscripts linearized). ``init``: the value kind main fills it with."""

    name: str
    ctype: str
    dims: tuple[Dim, ...]
    init: str
    passing: str = "global"
    const: bool = False


@dataclass(frozen=True, slots=True)
class Param:
    """A kernel parameter that is not an array of the table: ``decl`` is its declarator."""

    name: str
    decl: str


@dataclass(frozen=True, slots=True)
class Kernel:
    """A kernel function; its size and array parameters come from what the body uses.

    ``extra_params`` are pointer parameters (aliasing kernels), ``args`` what main passes for
    them; ``ret`` a return type (the value is dumped). ``tags`` name the features it uses (see
    :mod:`known`); ``c89``: iterators are declared at the top.
    """

    name: str
    body: tuple[Stmt, ...]
    ret: str = "void"
    extra_params: tuple[Param, ...] = ()
    args: tuple[str, ...] = ()
    tags: frozenset[str] = frozenset()
    c89: bool = False
    iter_types: tuple[tuple[str, str], ...] = ()   # (var, ctype) for C89 declarations
    locals_: tuple[Decl, ...] = ()                 # declared at the top (before any nest)
    setup: tuple[str, ...] = ()                    # C lines main runs before the call (struct fields)
    dumps: tuple[str, ...] = ()                    # arrays it reaches by name (pointers, structs): kept, dumped


@dataclass(frozen=True, slots=True)
class Program:
    seed: int
    sizes: tuple[Size, ...]
    arrays: tuple[Array, ...]
    kernels: tuple[Kernel, ...]
    typedefs: tuple[tuple[str, str], ...] = ()      # (name, ctype)
    decls: tuple[str, ...] = ()                     # lines after the arrays (struct types and instances)

    def size(self, name: str) -> Size:
        return next(s for s in self.sizes if s.name == name)

    def array(self, name: str) -> Array | None:
        return next((a for a in self.arrays if a.name == name), None)


@dataclass(frozen=True, slots=True)
class Rendered:
    """C text and, per kernel name, its first and last line (1-based)."""

    text: str
    kernel_lines: dict[str, tuple[int, int]] = field(default_factory=dict)

    def kernel_at(self, line: int) -> str | None:
        return next((k for k, (a, b) in self.kernel_lines.items() if a <= line <= b), None)

# }}}

# {{{ printing expressions

_PREC = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10, "<=": 10, ">": 10,
         ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4}
_TYPE_CODES = {"int": 0, "unsigned": 1, "char": 2, "float": 3, "double": 4, "long": 5,
               "unsigned char": 6, "short": 7}
INIT_KINDS = {"zero": 0, "frac": 1, "small": 2, "pow2": 3, "sign": 4, "pos": 5}


def type_code(ctype: str) -> int:
    return _TYPE_CODES[ctype]


class _Printer:
    def __init__(self, prog: Program, kernel: Kernel | None) -> None:
        self.prog = prog
        self.kernel = kernel

    def size(self, name: str) -> str:
        s = self.prog.size(name)
        if s.mode == "literal" or self.kernel is None:
            return str(s.value)
        return name.upper() if s.mode == "macro" else name

    def dim(self, d: Dim, *, numeric: bool) -> str:
        if d.size is None:
            return str(d.pad)
        if numeric:
            return str(d.coef * (self.prog.size(d.size).value + d.off) + d.pad)
        inner = self.size(d.size)
        if d.off:
            inner = f"({inner} {'+' if d.off > 0 else '-'} {abs(d.off)})" if d.coef != 1 else \
                f"{inner} {'+' if d.off > 0 else '-'} {abs(d.off)}"
        text = f"{d.coef} * {inner}" if d.coef != 1 else inner
        return f"{text} + {d.pad}" if d.pad else text

    def expr(self, e: Expr, prec: int = 0) -> str:
        match e:
            case Lit(text):
                return text if not text.startswith("-") or prec < 14 else f"({text})"
            case Name(name):
                return name
            case SizeRef(size):
                return self.size(size)
            case Index(base, subs):
                arr = self.prog.array(base)
                if arr is not None and arr.passing == "ptr" and len(subs) > 1:
                    lin = self.expr(subs[0], 12)
                    for d, s in zip(arr.dims[1:], subs[1:]):
                        lin = f"({lin}) * ({self.dim(d, numeric=False)}) + {self.expr(s, 12)}"
                    return f"{base}[{lin}]"
                return base + "".join(f"[{self.expr(s)}]" for s in subs)
            case Bin(op, left, right):
                p = _PREC[op]
                text = f"{self.expr(left, p)} {op} {self.expr(right, p + 1)}"
                return f"({text})" if p < prec else text
            case Un(op, operand):
                text = f"{op}{self.expr(operand, 14)}"
                return f"({text})" if prec > 14 else text
            case Call(fn, args):
                return f"{fn}({', '.join(self.expr(a) for a in args)})"
            case Cast(ctype, operand):
                text = f"({ctype}){self.expr(operand, 14)}"
                return f"({text})" if prec > 14 else text
            case Cond(test, then, other):
                text = f"{self.expr(test, 4)} ? {self.expr(then, 3)} : {self.expr(other, 3)}"
                return f"({text})" if prec > 2 else text
        raise TypeError(f"not an expression: {e!r}")

    # {{{ statements

    def stmt(self, s: Stmt, ind: str, out: list[str]) -> None:
        match s:
            case Assign(target, op, value):
                out.append(f"{ind}{self.expr(target)} {op} {self.expr(value)};")
            case Decl(ctype, name, init):
                out.append(f"{ind}{ctype} {name}" + (f" = {self.expr(init)};" if init is not None else ";"))
            case Return(value):
                out.append(f"{ind}return {self.expr(value)};")
            case ExprStmt(value):
                out.append(f"{ind}{self.expr(value)};")
            case Pragma(text):
                out.append(f"{ind}#pragma {text}")
            case Continue():
                out.append(f"{ind}continue;")
            case Break():
                out.append(f"{ind}break;")
            case Switch(test, groups):
                out.append(f"{ind}switch ({self.expr(test)}) {{")
                for values, body, ends in groups:
                    out.append(ind + " ".join(f"case {v}:" for v in values) if values else f"{ind}default:")
                    self.block(body, ind, out, braces=True)
                    if ends:
                        out.append(f"{ind}    break;")
                out.append(f"{ind}}}")
            case If(test, body, orelse):
                out.append(f"{ind}if ({self.expr(test)})")
                # braces around the then-branch when an else follows: no dangling else
                self.block(body, ind, out, braces=bool(orelse))
                if orelse:
                    out.append(f"{ind}else")
                    self.block(orelse, ind, out)
            case While(test, body):
                out.append(f"{ind}while ({self.expr(test)})")
                self.block(body, ind, out, braces=True)
            case For():
                out.append(ind + self.for_header(s))
                self.block(s.body, ind, out)
            case OneLine(body):
                parts: list[str] = []
                for b in body:
                    sub: list[str] = []
                    self.stmt(b, "", sub)
                    parts.append(" ".join(x.strip() for x in sub))
                out.append(ind + " ".join(parts))
            case _:
                raise TypeError(f"not a statement: {s!r}")

    def for_header(self, f: For) -> str:
        init = f"{f.ctype + ' ' if f.ctype else ''}{f.var} = {self.expr(f.start)}"
        if f.cond == "-->":
            return f"for ({init}; {f.var}-- > {self.expr(f.bound, 10)};)"
        if f.cond == "--!=":
            return f"for ({init}; {f.var}-- != {self.expr(f.bound, 10)};)"
        if f.cond == "<--":
            return f"for ({init}; {self.expr(f.bound, 10)} < {f.var}--;)"
        if f.step_expr is not None:
            inc = f"{f.var} += {self.expr(f.step_expr)}"
        elif f.step == 1:
            inc = f"{f.var}++"
        elif f.step == -1:
            inc = f"{f.var}--"
        else:
            inc = f"{f.var} {'+' if f.step > 0 else '-'}= {abs(f.step)}"
        return f"for ({init}; {f.var} {f.cond} {self.expr(f.bound, 11)}; {inc})"

    def block(self, body: tuple[Stmt, ...], ind: str, out: list[str], *, braces: bool = False) -> None:
        if len(body) == 1 and not braces and not isinstance(body[0], (Decl, OneLine)):
            self.stmt(body[0], ind + "    ", out)
            return
        out.append(ind + "{")
        for b in body:
            self.stmt(b, ind + "    ", out)
        out.append(ind + "}")

    # }}}


# }}}

# {{{ printing the program

PRELUDE = (Path(__file__).with_name("fuzz_prelude.h")).read_text()


def used_names(stmts: tuple[Stmt, ...] | tuple[Expr, ...]) -> tuple[set[str], set[str]]:
    """The sizes and array bases (names) that ``stmts`` mention."""
    sizes: set[str] = set()
    bases: set[str] = set()

    def visit(x: object) -> None:
        if isinstance(x, SizeRef):
            sizes.add(x.size)
        elif isinstance(x, Index):
            bases.add(x.base)
        if isinstance(x, tuple):
            for y in x:
                visit(y)
        elif hasattr(x, "__dataclass_fields__"):
            for name in x.__dataclass_fields__:  # type: ignore[attr-defined]
                visit(getattr(x, name))

    visit(stmts)
    return sizes, bases


def kernel_interface(prog: Program, k: Kernel) -> tuple[list[str], list[Array]]:
    """The size parameters and the array parameters of ``k``, in parameter order."""
    sizes, bases = used_names(k.body + k.locals_)
    for a in prog.arrays:
        if a.name in bases:
            for d in a.dims:
                if d.size is not None:
                    sizes.add(d.size)
    size_params = [s.name for s in prog.sizes if s.name in sizes and s.mode in ("param", "pinned")]
    arrays = [a for a in prog.arrays if a.name in bases and a.passing != "global"]
    return size_params, arrays


def _array_param(p: _Printer, a: Array) -> str:
    const = "const " if a.const else ""
    if a.passing == "ptr":
        return f"{const}{a.ctype} *{a.name}"
    if a.passing == "fixed":
        return f"{const}{a.ctype} {a.name}" + "".join(f"[{p.dim(d, numeric=True)}]" for d in a.dims)
    if a.passing == "open":
        return f"{const}{a.ctype} {a.name}[]" + "".join(f"[{p.dim(d, numeric=True)}]" for d in a.dims[1:])
    return f"{const}{a.ctype} {a.name}" + "".join(f"[{p.dim(d, numeric=False)}]" for d in a.dims)


def _count(prog: Program, a: Array) -> int:
    n = 1
    for d in a.dims:
        n *= int(_Printer(prog, None).dim(d, numeric=True))
    return n


def array_count(prog: Program, a: Array) -> int:
    return _count(prog, a)


def _array_arg(a: Array) -> str:
    if a.passing == "ptr" and len(a.dims) > 1:
        return f"&{a.name}" + "[0]" * len(a.dims)
    return a.name


def render(prog: Program, *, dump_all: bool = False) -> Rendered:
    """Print ``prog`` as a complete C program; ``dump_all`` prints every element, not a hash."""
    lines: list[str] = [f"/* mdpoly fuzz program, seed {prog.seed} */"]
    if dump_all:
        lines.append("#define FZ_PRINT_ALL 1")
    lines += PRELUDE.rstrip("\n").split("\n")
    for s in prog.sizes:
        if s.mode == "macro":
            lines.append(f"#define {s.name.upper()} {s.value}")
    for name, ctype in prog.typedefs:
        lines.append(f"typedef {ctype} {name};")
    top = _Printer(prog, None)
    for a in prog.arrays:
        lines.append(f"static {a.ctype} {a.name}" + "".join(f"[{top.dim(d, numeric=True)}]" for d in a.dims) + ";")
    lines += list(prog.decls)
    spans: dict[str, tuple[int, int]] = {}
    for k in prog.kernels:
        p = _Printer(prog, k)
        size_params, arrays = kernel_interface(prog, k)
        params = [f"int {s}" for s in size_params] + [_array_param(p, a) for a in arrays] + \
            [x.decl for x in k.extra_params]
        lines.append("")
        first = len(lines) + 1
        lines.append(f"static {k.ret} {k.name}({', '.join(params) or 'void'})")
        lines.append("{")
        if k.c89:
            by_type: dict[str, list[str]] = {}
            for var, ctype in k.iter_types:
                by_type.setdefault(ctype, []).append(var)
            for ctype, names in by_type.items():
                lines.append(f"    {ctype} {', '.join(names)};")
        for d in k.locals_:
            p.stmt(d, "    ", lines)
        for s in k.body:
            p.stmt(s, "    ", lines)
        lines.append("}")
        spans[k.name] = (first, len(lines))
    lines.append("")
    lines.append("int main(int argc, char **argv)")
    lines.append("{")
    lines.append("    (void)argv;")
    for s in prog.sizes:
        if s.mode == "param":
            lines.append(f"    int {s.name} = argc + {s.value - 1};   /* {s.value}, unknown before run time */")
        elif s.mode == "pinned":
            lines.append(f"    int {s.name} = {s.value};   /* the same constant at the kernel's call */")
    for n, a in enumerate(prog.arrays):
        lines.append(f"    fz_init({a.name}, {_count(prog, a)}, {type_code(a.ctype)}, {INIT_KINDS[a.init]}, {n + 1}u);")
    for k in prog.kernels:
        size_params, arrays = kernel_interface(prog, k)
        args = size_params + [_array_arg(a) for a in arrays] + list(k.args)
        call = f"{k.name}({', '.join(args)})"
        lines += [f"    {x}" for x in k.setup]
        if k.ret != "void":
            lines.append(f"    {{ {k.ret} r = {call}; fz_dump(\"{k.name} return\", &r, 1, {type_code(k.ret)}); }}")
        else:
            lines.append(f"    {call};")
        _, bases = used_names(k.body)
        for a in prog.arrays:
            if a.name in bases or a.name in k.dumps or \
                    any(a.name in arg.replace(" ", "").split("+") for arg in k.args):
                lines.append(f"    fz_dump(\"{k.name} {a.name}\", {a.name}, {_count(prog, a)}, {type_code(a.ctype)});")
    lines.append("    return 0;")
    lines.append("}")
    return Rendered("\n".join(lines) + "\n", spans)

# }}}
