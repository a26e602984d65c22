"""``#pragma mdh(out[i][j] : ++, ++, +)``: pragma text -> ``Annotation``, checked against ``Deps``.

The annotation names the output access, then one combine operator per loop, outermost first
(``++ + * max min``). mdpoly detects operators itself; an annotation is a claim the analysis
verifies, and any contradiction is a ``DependenceError`` located at the pragma.

``#pragma mdh resident(W, b)`` anywhere in a function's body (``kept_arrays``) is no claim but
the user's promise for the GPU targets: the host copies of those arrays do not change between
the function's calls, so its computations keep them on the device (README, residency across calls).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import DependenceError, SourceLoc
from mdpoly.frontend.deps import Deps
from mdpoly.ir.mdh import Access, Affine, Combine
from mdpoly.ir.scop import Scop

_OPS = {"++": Combine.CONCAT, "+": Combine.ADD, "*": Combine.MUL, "max": Combine.MAX, "min": Combine.MIN,
        "&": Combine.BAND, "|": Combine.BOR, "^": Combine.BXOR}
_PRAGMA = re.compile(r"^mdh\s*\((?P<body>.*)\)\s*$", re.DOTALL)
_RESIDENT = re.compile(r"^mdh\s+resident\s*\((?P<names>\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*)\)\s*$")
_ACCESS = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\s*(?P<subs>(\[[^\[\]]*\]\s*)*)$")


@dataclass(frozen=True, slots=True)
class Annotation:
    output: Access
    ops: tuple[Combine, ...]
    loc: SourceLoc


def parse_annotation(text: str, loc: SourceLoc) -> Annotation:
    """Parse the text after ``#pragma``. :raises DependenceError: when it is malformed."""
    m = _PRAGMA.match(text.strip())
    if not m or ":" not in m["body"]:
        raise DependenceError(f"malformed annotation '#pragma {text}'; expected '#pragma mdh(out[i] : ++, +)'", loc)
    out_text, _, ops_text = m["body"].rpartition(":")
    ops: list[Combine] = []
    for o in ops_text.split(","):
        o = o.strip()
        if o not in _OPS:
            raise DependenceError(f"unknown combine operator '{o}' in annotation (use ++, +, *, max or min)", loc)
        ops.append(_OPS[o])
    return Annotation(_parse_access(out_text, loc), tuple(ops), loc)


def _parse_access(text: str, loc: SourceLoc) -> Access:
    m = _ACCESS.match(text)
    if not m:
        raise DependenceError(f"malformed output access '{text.strip()}' in annotation", loc)
    subs = re.findall(r"\[([^\[\]]*)\]", m["subs"])
    try:
        return Access(m["name"], tuple(_affine(ast.parse(s.strip(), mode="eval").body) for s in subs))
    except (SyntaxError, ValueError):
        raise DependenceError(f"output access '{text.strip()}' in annotation is not affine", loc) from None


def _affine(node: ast.AST) -> Affine:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return Affine.of(constant=node.value)
    if isinstance(node, ast.Name):
        return Affine.of({node.id: 1})
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        a = _affine(node.operand)
        k = -1 if isinstance(node.op, ast.USub) else 1
        return Affine.of({n: c * k for n, c in a.terms}, a.constant * k)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        a, b = _affine(node.left), _affine(node.right)
        if isinstance(node.op, ast.Mult):
            if a.is_constant:
                a, b = b, a
            if not b.is_constant:
                raise ValueError("non-affine")
            return Affine.of({n: c * b.constant for n, c in a.terms}, a.constant * b.constant)
        k = 1 if isinstance(node.op, ast.Add) else -1
        d = dict(a.terms)
        for n, c in b.terms:
            d[n] = d.get(n, 0) + k * c
        return Affine.of(d, a.constant + k * b.constant)
    raise ValueError("non-affine")


def check_annotation(ann: Annotation, scop: Scop, deps: Deps) -> None:
    """Verify ``ann`` against the analysis. :raises DependenceError: on any contradiction."""
    loops = scop.loops
    if len(ann.ops) != len(loops):
        raise DependenceError(f"annotation gives {len(ann.ops)} combine operator(s) but the nest has "
                              f"{len(loops)} loop(s) ({', '.join(lp.iterator for lp in loops)})", ann.loc)
    for lc, claimed in zip(deps.loops, ann.ops):
        it = loops[lc.loop].iterator
        found = lc.combine
        if found is Combine.SEQ:
            raise DependenceError(f"annotation claims '{claimed.value}' for loop '{it}', but {lc.reason}", ann.loc)
        if claimed is found:
            continue
        if claimed is Combine.CONCAT:
            raise DependenceError(f"annotation claims '++' for loop '{it}', but the loop carries a dependence: it is "
                                  f"a '{found.value}' reduction", ann.loc)
        if found is Combine.CONCAT:
            raise DependenceError(f"annotation claims a '{claimed.value}' reduction for loop '{it}', but the loop "
                                  "carries no dependence (its combine operator is '++')", ann.loc)
        raise DependenceError(f"annotation claims '{claimed.value}' for loop '{it}', but the loop is a "
                              f"'{found.value}' reduction", ann.loc)
    outs = _outputs(scop, deps)
    if ann.output not in outs:
        names = ", ".join(a.to_c() for a in outs) or "none"
        raise DependenceError(f"annotation names output '{ann.output.to_c()}', but the nest writes {names}", ann.loc)


def _outputs(scop: Scop, deps: Deps) -> list[Access]:
    out: list[Access] = [r.accumulator for r in deps.reductions]
    for s in scop.statements:
        if s.write not in out:
            out.append(s.write)
    return out


class _Pragmas(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Pragma(self, node: c_ast.Pragma) -> None:
        m = _RESIDENT.match(" ".join(node.string.split()))
        if m:
            self.names += [n.strip() for n in m["names"].split(",")]


def kept_arrays(func: c_ast.Node) -> tuple[str, ...]:
    """The names of every ``#pragma mdh resident(...)`` in ``func``, in order, once each."""
    v = _Pragmas()
    v.visit(func)
    return tuple(dict.fromkeys(v.names))
