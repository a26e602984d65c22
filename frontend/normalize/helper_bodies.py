"""Helper bodies: a ``static`` function's definition -> its value as one C expression, or the reason it has none.

A small function of straight-line code computes a value from its parameters:

.. code-block:: c

    static inline int clampi(int v, int lo, int hi) { if (v < lo) return lo; if (v > hi) return hi; return v; }
    static inline unsigned long long xorshift64(unsigned long long x) { x ^= x << 13; x ^= x >> 7; return x; }

``body_of`` runs the body symbolically, statement by statement, keeping the value of each
parameter and local as an expression over the parameters' values at entry: a declaration or an
assignment (``=``, ``op=``, ``++``) gives its name the new value converted to the name's type
(``x ^= x << 13`` is ``x = (unsigned long long) (x ^ (x << 13))``, which is what C does); a
``return e;`` is ``e`` over those values, converted to the return type; an ``if`` whose branches
return is the conditional ``c ? <then and the rest> : <else and the rest>``, so a branch not
taken is not evaluated, as in C (a read that the ``if`` guards stays behind its condition); an
``if`` whose branches only assign gives each name it changes the value ``c ? then : else``. Blocks
scope their locals. The result reads only the parameters (``ID`` nodes of their names), the
elements of pointer parameters (``p[e]``; ``*p`` is ``p[0]``), file-scope objects (``globals``)
and enumeration constants, and calls only ``pure`` functions or functions of ``statics`` (whether
those are helpers too is the caller's question, ``inline_calls``). Since nothing in the body
writes memory or calls anything with an effect, every value is the same wherever it is
evaluated: substituting a local's value for each of its uses computes what the body computes.

Anything else raises ``NotAHelper`` with the reason, phrased after ``"call to 'f': "``: ``it
writes through pointer 'p'``, ``it writes the global 'g'``, ``it has a loop``, ``it calls 'foo'``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.frontend.symbols import FUNC_DECLS, c_text

#: the largest expression (in AST nodes) a body may become: each use of a local copies its value
MAX_NODES = 3000
#: the most statements one symbolic run visits (an ``if`` that returns on one path runs the
#: statements after it once per side)
MAX_STEPS = 2000

_BINARY_OPS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^",
                         "&&", "||"})
_UNARY_OPS = frozenset({"-", "+", "!", "~"})
_STEPS = {"++": "+", "p++": "+", "--": "-", "p--": "-"}
_NO_VALUE = "it returns no value"
_FALLS_OFF = "it can reach its end without returning a value"


class NotAHelper(Exception):
    """The function is no helper; ``reason`` says why (``it writes through pointer 'p'``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter: its name, its declared type, and whether it is a pointer to elements it reads."""

    name: str
    type: c_ast.TypeDecl  # the pointee's for a pointer
    pointer: bool


@dataclass(frozen=True, slots=True)
class HelperBody:
    """A function's value: ``expr`` over its ``params``, converted to ``ret``; the ``globals`` it
    reads and the functions of the file it ``calls``."""

    params: tuple[Param, ...]
    ret: c_ast.TypeDecl
    expr: c_ast.Node
    globals: frozenset[str]
    calls: frozenset[str]


def scalar_type(t: c_ast.Node) -> bool:
    """Whether ``t`` is an arithmetic (or typedef'd) scalar type, not ``void``."""
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and t.type.names != ["void"])


def typename(t: c_ast.TypeDecl) -> c_ast.Typename:
    """``t`` as the type of a cast (``const`` dropped: a conversion yields a plain value)."""
    inner = c_ast.TypeDecl(None, [q for q in t.quals if q != "const"], None, copy.deepcopy(t.type))
    return c_ast.Typename(None, [], None, inner)


def converted(t: c_ast.TypeDecl, e: c_ast.Node) -> c_ast.Node:
    """``(t) (e)``: the value ``e`` takes when assigned to an object of type ``t`` (``e`` itself
    when it is such a conversion already)."""
    to = typename(t)
    if isinstance(e, c_ast.Cast) and c_text(e.to_type) == c_text(to):
        return e
    return c_ast.Cast(to, e)


def node_count(n: c_ast.Node) -> int:
    return 1 + sum(node_count(c) for _name, c in n.children())


def _params(fd: c_ast.FuncDef) -> tuple[Param, ...]:
    ftype = fd.decl.type
    if fd.param_decls:
        raise NotAHelper("it has an old-style parameter list")
    out: list[Param] = []
    plist = ftype.args.params if ftype.args is not None else []
    for p in plist:
        if isinstance(p, c_ast.Typename) and len(plist) == 1 and isinstance(p.type, c_ast.TypeDecl) \
                and isinstance(p.type.type, c_ast.IdentifierType) and p.type.type.names == ["void"]:
            break  # (void)
        if isinstance(p, c_ast.EllipsisParam):
            raise NotAHelper("it takes a variable number of arguments")
        if not isinstance(p, c_ast.Decl) or not p.name:
            raise NotAHelper("it has an unnamed parameter")
        t = p.type
        if isinstance(t, c_ast.PtrDecl | c_ast.ArrayDecl) and scalar_type(t.type):
            if "volatile" in t.type.quals:
                raise NotAHelper(f"its parameter '{p.name}' points to volatile data")
            out.append(Param(p.name, t.type, True))
        elif scalar_type(t):
            if "volatile" in t.quals:
                raise NotAHelper(f"its parameter '{p.name}' is volatile")
            out.append(Param(p.name, t, False))
        else:
            raise NotAHelper(f"its parameter '{p.name}' is neither an arithmetic scalar nor a pointer to one")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Leave:
    """End of a block: its locals go out of scope."""

    names: tuple[str, ...]


_UNSET = c_ast.ID("<unset>")


class _Run:
    """The symbolic run of one body (``env``: the value of each scalar in scope)."""

    def __init__(self, params: tuple[Param, ...], ret: c_ast.TypeDecl, globals_: frozenset[str],
                 volatile: frozenset[str], pure: frozenset[str], statics: frozenset[str]) -> None:
        self.pointers = {p.name for p in params if p.pointer}
        self.types = {p.name: p.type for p in params if not p.pointer}
        self.ret, self.file_globals, self.volatile = ret, globals_, volatile
        self.pure, self.statics = pure, statics
        self.read_globals: set[str] = set()
        self.calls: set[str] = set()
        self.steps = 0

    # {{{ expressions

    def value(self, e: c_ast.Node, env: dict[str, c_ast.Node]) -> c_ast.Node:
        """``e`` over the values in ``env``."""
        if isinstance(e, c_ast.Constant):
            return copy.deepcopy(e)
        if isinstance(e, c_ast.ID):
            return self._name(e.name, env)
        if isinstance(e, c_ast.ArrayRef):
            return self._element(e, env)
        if isinstance(e, c_ast.UnaryOp):
            if e.op == "*":
                return self._element(_subscripted(e.expr), env)
            if e.op in _UNARY_OPS:
                return c_ast.UnaryOp(e.op, self.value(e.expr, env))
            if e.op == "sizeof" and isinstance(e.expr, c_ast.Typename):
                return copy.deepcopy(e)
            if e.op in _STEPS:
                raise NotAHelper(f"it changes '{c_text(e.expr)}' inside an expression")
            if e.op == "&":
                raise NotAHelper(f"it takes the address '{c_text(e)}'")
            raise NotAHelper(f"it uses '{c_text(e)}'")
        if isinstance(e, c_ast.BinaryOp) and e.op in _BINARY_OPS:
            return c_ast.BinaryOp(e.op, self.value(e.left, env), self.value(e.right, env))
        if isinstance(e, c_ast.TernaryOp):
            return c_ast.TernaryOp(self.value(e.cond, env), self.value(e.iftrue, env), self.value(e.iffalse, env))
        if isinstance(e, c_ast.Cast):
            if not scalar_type(e.to_type.type):
                raise NotAHelper(f"it casts to '{c_text(e.to_type)}'")
            return c_ast.Cast(copy.deepcopy(e.to_type), self.value(e.expr, env))
        if isinstance(e, c_ast.FuncCall):
            return self._call(e, env)
        if isinstance(e, c_ast.Assignment):
            raise NotAHelper(f"it assigns '{c_text(e.lvalue)}' inside an expression")
        raise NotAHelper(f"it uses '{c_text(e)}'")

    def _name(self, name: str, env: dict[str, c_ast.Node]) -> c_ast.Node:
        if name in env:
            if env[name] is _UNSET:
                raise NotAHelper(f"it may read '{name}' before assigning it")
            return copy.deepcopy(env[name])
        if name in self.pointers:
            raise NotAHelper(f"it uses pointer '{name}' other than by reading its elements")
        if name in self.volatile:
            raise NotAHelper(f"it reads the volatile '{name}'")
        if name in self.file_globals:
            self.read_globals.add(name)
            return c_ast.ID(name)
        raise NotAHelper(f"it reads '{name}', which is no parameter, local or global object of the file")

    def _element(self, e: c_ast.ArrayRef, env: dict[str, c_ast.Node]) -> c_ast.Node:
        """``p[k]`` of a pointer parameter, or an element of a global array."""
        base = e.name
        if isinstance(base, c_ast.ID) and base.name in self.pointers:
            return c_ast.ArrayRef(c_ast.ID(base.name), self.value(e.subscript, env))
        root = base
        while isinstance(root, c_ast.ArrayRef):
            root = root.name
        if isinstance(root, c_ast.ID) and root.name not in env and root.name in self.file_globals:
            inner = self._element(base, env) if isinstance(base, c_ast.ArrayRef) else self._name(root.name, env)
            return c_ast.ArrayRef(inner, self.value(e.subscript, env))
        raise NotAHelper(f"it reads '{c_text(e)}'")

    def _call(self, e: c_ast.FuncCall, env: dict[str, c_ast.Node]) -> c_ast.Node:
        name = e.name.name if isinstance(e.name, c_ast.ID) else c_text(e.name)
        if name not in self.pure and name not in self.statics:
            raise NotAHelper(f"it calls '{name}'")
        args: list[c_ast.Node] = []
        for a in (e.args.exprs if e.args is not None else []):
            moved = self._moved_pointer(a, env) if name in self.statics else None
            if moved is not None:
                args.append(moved)  # passed on to a helper that reads its elements
            else:
                args.append(self.value(a, env))
        if name in self.statics:
            self.calls.add(name)
        return c_ast.FuncCall(c_ast.ID(name), c_ast.ExprList(args))

    def _moved_pointer(self, a: c_ast.Node, env: dict[str, c_ast.Node]) -> c_ast.Node | None:
        """``p``, ``p + e``, ``p - e`` or ``&p[e]`` of a pointer parameter ``p``, as an argument."""
        if isinstance(a, c_ast.ID) and a.name in self.pointers:
            return c_ast.ID(a.name)
        if isinstance(a, c_ast.BinaryOp) and a.op in ("+", "-") and isinstance(a.left, c_ast.ID) \
                and a.left.name in self.pointers:
            return c_ast.BinaryOp(a.op, c_ast.ID(a.left.name), self.value(a.right, env))
        if isinstance(a, c_ast.UnaryOp) and a.op == "&" and isinstance(a.expr, c_ast.ArrayRef) \
                and isinstance(a.expr.name, c_ast.ID) and a.expr.name.name in self.pointers:
            return c_ast.UnaryOp("&", self._element(a.expr, env))
        return None

    # }}}

    # {{{ statements

    def run(self, items: list[c_ast.Node | _Leave], env: dict[str, c_ast.Node]) -> c_ast.Node | dict[str, c_ast.Node]:
        """The value the function returns after ``items`` (run from ``env``), or the values at
        their end when none of them returns."""
        for k, s in enumerate(items):
            rest = items[k + 1:]
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise NotAHelper("its body is too long to inline")
            if isinstance(s, _Leave):
                for n in s.names:
                    del env[n]
            elif isinstance(s, c_ast.Return):
                if s.expr is None:
                    raise NotAHelper(_NO_VALUE)
                return converted(self.ret, self.value(s.expr, env))
            elif isinstance(s, c_ast.Decl):
                self._declare(s, env)
            elif isinstance(s, c_ast.Assignment):
                name = self._assigned(s.lvalue, env)
                rhs = self.value(s.rvalue, env)
                new = rhs if s.op == "=" else c_ast.BinaryOp(s.op[:-1], self._name(name, env), rhs)
                env[name] = _bounded(converted(self.types[name], new))
            elif isinstance(s, c_ast.UnaryOp) and s.op in _STEPS:
                name = self._assigned(s.expr, env)
                env[name] = converted(self.types[name],
                                      c_ast.BinaryOp(_STEPS[s.op], self._name(name, env), c_ast.Constant("int", "1")))
            elif isinstance(s, c_ast.Compound):
                return self.run([*(s.block_items or []), _Leave(_declared_in(s)), *rest], env)
            elif isinstance(s, c_ast.If):
                return self._branch(s, rest, env)
            elif isinstance(s, c_ast.FuncCall):
                self.value(s, env)  # a pure call's value, dropped
            elif isinstance(s, c_ast.EmptyStatement):
                pass
            elif isinstance(s, c_ast.For | c_ast.While | c_ast.DoWhile):
                raise NotAHelper("it has a loop")
            elif isinstance(s, c_ast.Switch):
                raise NotAHelper("it has a switch")
            elif isinstance(s, c_ast.Goto | c_ast.Label):
                raise NotAHelper("it uses goto")
            else:
                raise NotAHelper(f"it has the statement '{c_text(s)}'")
        return env

    def _declare(self, d: c_ast.Decl, env: dict[str, c_ast.Node]) -> None:
        if not d.name or not scalar_type(d.type):
            raise NotAHelper(f"it declares '{d.name or c_text(d)}', which is no arithmetic scalar")
        if "static" in d.storage or "extern" in d.storage:
            raise NotAHelper(f"it declares the {d.storage[0]} '{d.name}'")
        if "volatile" in d.type.quals:
            raise NotAHelper(f"it declares the volatile '{d.name}'")
        if d.name in env or d.name in self.pointers:
            raise NotAHelper(f"it declares '{d.name}' again")
        if isinstance(d.init, c_ast.InitList):
            raise NotAHelper(f"it initialises '{d.name}' with a list")
        self.types[d.name] = d.type
        env[d.name] = _UNSET if d.init is None else _bounded(converted(d.type, self.value(d.init, env)))

    def _assigned(self, lvalue: c_ast.Node, env: dict[str, c_ast.Node]) -> str:
        """The name a statement may assign: a local or by-value parameter."""
        if isinstance(lvalue, c_ast.ID) and lvalue.name in env:
            return lvalue.name
        if isinstance(lvalue, c_ast.ID) and lvalue.name in self.pointers:
            raise NotAHelper(f"it assigns pointer '{lvalue.name}'")
        root = lvalue
        while isinstance(root, c_ast.ArrayRef) or (isinstance(root, c_ast.UnaryOp) and root.op == "*"):
            root = root.name if isinstance(root, c_ast.ArrayRef) else root.expr
        if isinstance(root, c_ast.ID) and root.name in self.pointers:
            raise NotAHelper(f"it writes through pointer '{root.name}'")
        if isinstance(root, c_ast.ID) and root.name in self.file_globals:
            raise NotAHelper(f"it writes the global '{root.name}'")
        raise NotAHelper(f"it writes '{c_text(lvalue)}'")

    def _branch(self, s: c_ast.If, rest: list[c_ast.Node | _Leave],
                env: dict[str, c_ast.Node]) -> c_ast.Node | dict[str, c_ast.Node]:
        cond = self.value(s.cond, env)
        then, other = _as_items(s.iftrue), _as_items(s.iffalse)
        if not _returns(s):  # both sides fall through: merge the names they change
            t = self.run(then, dict(env))
            f = self.run(other, dict(env))
            assert isinstance(t, dict) and isinstance(f, dict)
            for name in env:
                if t[name] is _UNSET or f[name] is _UNSET:
                    env[name] = _UNSET  # assigned on one side only: reading it is refused
                elif t[name] is not f[name]:
                    env[name] = _bounded(c_ast.TernaryOp(copy.deepcopy(cond), t[name], f[name]))
            return self.run(rest, env)
        t_val = self.run([*then, *rest], dict(env))
        f_val = self.run([*other, *rest], dict(env))
        if isinstance(t_val, dict) or isinstance(f_val, dict):
            raise NotAHelper(_FALLS_OFF)
        return _bounded(c_ast.TernaryOp(cond, t_val, f_val))

    # }}}


def _subscripted(address: c_ast.Node) -> c_ast.ArrayRef:
    """``*address`` as a subscript: ``*(p + e)`` is ``p[e]``, ``*(p - e)`` is ``p[-e]``, ``*p`` is ``p[0]``."""
    if isinstance(address, c_ast.BinaryOp) and address.op == "+":
        return c_ast.ArrayRef(address.left, address.right)
    if isinstance(address, c_ast.BinaryOp) and address.op == "-":
        return c_ast.ArrayRef(address.left, c_ast.UnaryOp("-", address.right))
    return c_ast.ArrayRef(address, c_ast.Constant("int", "0"))


def _bounded(e: c_ast.Node) -> c_ast.Node:
    if node_count(e) > MAX_NODES:
        raise NotAHelper("its value is too large an expression to inline")
    return e


def _as_items(s: c_ast.Node | None) -> list[c_ast.Node | _Leave]:
    if s is None:
        return []
    if isinstance(s, c_ast.Compound):
        return [*(s.block_items or []), _Leave(_declared_in(s))]
    return [s]


def _declared_in(block: c_ast.Compound) -> tuple[str, ...]:
    return tuple(d.name for d in block.block_items or [] if isinstance(d, c_ast.Decl) and d.name)


def _returns(n: c_ast.Node) -> bool:
    return isinstance(n, c_ast.Return) or any(_returns(c) for _name, c in n.children())


def body_of(fd: c_ast.FuncDef, globals_: frozenset[str], volatile: frozenset[str], pure: frozenset[str],
            statics: frozenset[str]) -> HelperBody:
    """The value of the function ``fd`` as one expression over its parameters.

    :arg globals_: names of the file's objects and enumeration constants (a body may read them)
    :arg volatile: those of them that are volatile (a body may not)
    :arg pure: library functions without side effects
    :arg statics: the file's ``static`` functions (a body may call them)
    :raises NotAHelper: with the reason the body is no such expression.
    """
    ftype = fd.decl.type
    if not isinstance(ftype, FUNC_DECLS):
        raise NotAHelper("it is no function")
    params = _params(fd)
    valued = scalar_type(ftype.type)
    ret = ftype.type if valued else c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(["int"]))
    run = _Run(params, ret, globals_ - {p.name for p in params}, volatile, pure, statics)
    env: dict[str, c_ast.Node] = {p.name: c_ast.ID(p.name) for p in params if not p.pointer}
    try:
        result = run.run([*(fd.body.block_items or [])], env)
    except NotAHelper as e:  # a function without a value: say first what else it does
        if valued or e.reason not in (_NO_VALUE, _FALLS_OFF):
            raise
        result = env
    if not valued:
        void = isinstance(ftype.type, c_ast.TypeDecl) and isinstance(ftype.type.type, c_ast.IdentifierType) \
            and ftype.type.type.names == ["void"]
        raise NotAHelper(_NO_VALUE if void else "it returns no arithmetic scalar")
    if isinstance(result, dict):
        raise NotAHelper(_FALLS_OFF)
    return HelperBody(params, ftype.type, _bounded(result), frozenset(run.read_globals), frozenset(run.calls))
