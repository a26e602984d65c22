"""Rendered assignments -> the same assignments with their repeated temporaries computed once.

The front end forwards a statement's scalar temporaries into the expressions that use them
(``float inv = 1.0f / sqrtf(d2); fx += s * dx;`` becomes one expression per output), each
forwarded value wrapped in a cast to the temporary's declared type. Printed as is, an n-body
step evaluates ``sqrtf`` nine times where the user wrote it once, and gcc does not merge the
calls (``sqrtf`` may set ``errno``). ``share_temporaries`` gives each cast subtree that occurs
at least twice in a run of consecutive assignments one ``const`` local of the cast's type,
declared before the run, innermost first, so that later locals use earlier ones.

Only side-effect-free subtrees qualify (no assignment, increment or call other than the C math
functions) that read nothing the run writes, so the value is the same before the run as at each
use, and only those that some assignment evaluates unconditionally (outside the operands of
``?:`` and the right operand of ``&&``/``||``): a read that a condition guards (``i > 0 ?
u[i - 1] * u[i - 1] : 0.0``) is not computed ahead of its guard, where it could read out of
bounds. The locals hold exactly the value of the cast expression, so results do not change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from pycparser import c_ast, c_generator

#: functions whose calls have no side effect that matters here (the C math library; ``errno``
#: is the only state they touch, and evaluating them fewer times leaves it as one call would)
_PURE_CALLS = frozenset(
    f + s for f in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sin", "cos", "tan",
                    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "fabs", "floor", "ceil", "round",
                    "trunc", "fmin", "fmax", "fma", "cbrt", "hypot", "erf", "erfc", "copysign", "fmod", "rint")
    for s in ("", "f", "l"))

#: the smallest subtree worth a local: a cast of an expression of at least this many nodes (``a - b``)
_MIN_NODES = 3

_GEN = c_generator.CGenerator(reduce_parentheses=True)


def _nodes(node: c_ast.Node) -> Iterator[c_ast.Node]:
    yield node
    for _, child in node.children():
        yield from _nodes(child)


def _size(node: c_ast.Node) -> int:
    return sum(1 for _ in _nodes(node))


def _pure(node: c_ast.Node) -> bool:
    for n in _nodes(node):
        if isinstance(n, c_ast.Assignment):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            return False
        if isinstance(n, c_ast.FuncCall) and (not isinstance(n.name, c_ast.ID) or n.name.name not in _PURE_CALLS):
            return False
    return True


def _names(node: c_ast.Node) -> set[str]:
    out: set[str] = set()
    for n in _nodes(node):
        if isinstance(n, c_ast.ID):
            out.add(n.name)
        elif isinstance(n, c_ast.StructRef):
            out.discard(n.field.name)
    return out


def _written(node: c_ast.Assignment) -> str | None:
    target = node.lvalue
    while isinstance(target, c_ast.ArrayRef | c_ast.StructRef):
        target = target.name
    if isinstance(target, c_ast.UnaryOp) and target.op == "*":
        target = target.expr
    return target.name if isinstance(target, c_ast.ID) else None


def _scalar_type(cast: c_ast.Cast) -> list[str] | None:
    """The type names of a cast to a plain (non-pointer) type: ``(float)``, ``(unsigned int)``."""
    decl = cast.to_type.type
    if isinstance(decl, c_ast.TypeDecl) and isinstance(decl.type, c_ast.IdentifierType):
        return list(decl.type.names)
    return None


def _evaluated(node: c_ast.Node) -> Iterator[c_ast.Node]:
    """The nodes of ``node`` that C evaluates whenever it evaluates ``node``: not an operand of
    ``?:`` (only its condition) nor the right operand of ``&&`` or ``||``."""
    yield node
    if isinstance(node, c_ast.TernaryOp):
        yield from _evaluated(node.cond)
    elif isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||"):
        yield from _evaluated(node.left)
    else:
        for _, child in node.children():
            yield from _evaluated(child)


def _casts(node: c_ast.Node, blocked: frozenset[str], walk: Callable[[c_ast.Node], Iterator[c_ast.Node]] = _nodes,
           ) -> Iterator[str]:
    for n in walk(node):
        if isinstance(n, c_ast.Cast) and _scalar_type(n) and _size(n.expr) >= _MIN_NODES and _pure(n) \
                and not (_names(n.expr) & blocked):
            yield _GEN.visit(n)


def _replace(node: c_ast.Node, key: str, name: str) -> c_ast.Node:
    if isinstance(node, c_ast.Cast) and _GEN.visit(node) == key:
        return c_ast.ID(name)
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        val = getattr(node, attr)
        if isinstance(val, c_ast.Node):
            setattr(node, attr, _replace(val, key, name))
        elif isinstance(val, list):
            setattr(node, attr, [_replace(x, key, name) if isinstance(x, c_ast.Node) else x for x in val])
    return node


def _find(node: c_ast.Node, key: str) -> c_ast.Cast | None:
    for n in _nodes(node):
        if isinstance(n, c_ast.Cast) and _GEN.visit(n) == key:
            return n
    return None


class TemporaryNames:
    """Fresh local names (``mdp_tmp0``, ``mdp_tmp1``, ...) for one generated function."""

    def __init__(self) -> None:
        self.count = 0

    def fresh(self) -> str:
        self.count += 1
        return f"mdp_tmp{self.count - 1}"


def share_temporaries(run: list[c_ast.Assignment], names: TemporaryNames) -> list[c_ast.Node]:
    """``run`` (consecutive assignments of one block, modified in place) preceded by a ``const``
    local for each repeated temporary; ``run`` alone when nothing repeats."""
    written = [_written(a) for a in run]
    if any(w is None for w in written):
        return list(run)  # an assignment through something other than a named array or variable
    blocked = frozenset(w for w in written if w is not None)
    decls: list[c_ast.Decl] = []
    while True:
        exprs = [a.rvalue for a in run] + [d.init for d in decls]
        counts: Counter[str] = Counter()
        sure: set[str] = set()  # evaluated whenever the run runs: the local reads nothing more
        for e in exprs:
            counts.update(_casts(e, blocked))
            sure.update(_casts(e, blocked, _evaluated))
        repeated = [k for k, n in counts.items() if n >= 2 and k in sure]
        if not repeated:
            return [*decls, *run]
        # innermost first: the shortest repeated subtree holds no other repeated one
        key = min(repeated, key=len)
        found = next(c for c in (_find(e, key) for e in exprs) if c is not None)
        type_names = _scalar_type(found)
        assert type_names is not None
        name = names.fresh()
        init = clone(found.expr)
        for a in run:
            a.rvalue = _replace(a.rvalue, key, name)
        for d in decls:
            d.init = _replace(d.init, key, name)
        type_ = c_ast.TypeDecl(name, ["const"], None, c_ast.IdentifierType(type_names))
        decls.append(c_ast.Decl(name, ["const"], [], [], [], type_, init, None))


def clone(node: c_ast.Node) -> c_ast.Node:
    """A deep copy of a c_ast expression (nodes are mutable and get shared otherwise)."""
    cls = type(node)
    kwargs = {}
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        val = getattr(node, attr)
        if isinstance(val, c_ast.Node):
            val = clone(val)
        elif isinstance(val, list):
            val = [clone(x) if isinstance(x, c_ast.Node) else x for x in val]
        kwargs[attr] = val
    return cls(**kwargs)


def share_in_block(nodes: list[c_ast.Node], names: TemporaryNames) -> list[c_ast.Node]:
    """``nodes`` (one block's statements) with each run of consecutive assignments passed
    through ``share_temporaries``; an assignment right after a pragma (``omp atomic``) stays
    directly after it."""
    out: list[c_ast.Node] = []
    run: list[c_ast.Assignment] = []
    for node in nodes:
        if isinstance(node, c_ast.Assignment) and not (not run and out and isinstance(out[-1], c_ast.Pragma)):
            run.append(node)
            continue
        out += share_temporaries(run, names) if run else []
        run = []
        out.append(node)
    return out + (share_temporaries(run, names) if run else [])
