"""The user's OpenMP at a candidate nest: pragma text -> its kind; ``Candidate`` -> whether mdpoly may touch it.

A nest the user already parallelized is left alone by default: a ``#pragma omp parallel for``
(``for``, ``loop``, ``taskloop``, ``distribute``, their combined forms) on its outermost loop
makes it *already parallel* (code ``already-parallel``); a nest inside a user's OpenMP construct
(``#pragma omp parallel { ... }``, ``single``, ``task``, ``critical``...) runs inside a team
already, and mdpoly does not open a parallel region inside another (``in-omp-region``) -- so
does a nest of a function called there (``functions_under_openmp``, through the file's calls); a nest
with OpenMP directives inside (an inner ``omp parallel for``, an ``atomic`` or ``critical`` that
says the code runs in a parallel context) is kept too (``openmp-inside``), and its inner nests
are analysed on their own. ``omp simd`` (and OpenMP 5.1's ``tile``/``unroll``) only shape one
thread's loop: such a nest is analysed as usual, mdpoly's code (parallel, with its own SIMD
dimension) replaces it together with the pragma.

``--replace-omp`` (``Options.replace_omp``), or a ``#pragma mdh`` on the loop, lets mdpoly
replace a user's ``omp parallel for`` (``parallel for simd``, ``parallel loop``) -- and a nest
with OpenMP inside -- by its own code where its analysis proves the loop parallel; otherwise the
nest stays as written, pragma included, with the reason.
"""

from __future__ import annotations

import re
from typing import Literal

from pycparser import c_ast

from mdpoly.frontend.parse import pragma_text

OmpKind = Literal["loop", "vector", "construct", "standalone"]

#: Directive-name words of OpenMP (clauses begin at the first other word).
_DIRECTIVE_WORDS = frozenset({
    "parallel", "for", "do", "simd", "loop", "taskloop", "distribute", "teams", "target", "sections", "section",
    "single", "master", "masked", "critical", "task", "taskgroup", "ordered", "atomic", "barrier", "flush",
    "taskwait", "taskyield", "cancel", "cancellation", "point", "declare", "threadprivate", "requires", "scan",
    "depobj", "tile", "unroll", "scope", "metadirective", "allocate", "assume", "assumes", "nothing", "error",
    "interop", "dispatch", "end", "data", "update", "enter", "exit", "workshare",
})
_STANDALONE_FIRST = frozenset({
    "barrier", "flush", "taskwait", "taskyield", "cancel", "cancellation", "threadprivate", "declare", "requires",
    "depobj", "scan", "error", "nothing", "end", "allocate", "interop", "assumes",
})
_THREAD_LOOP = frozenset({"for", "do", "loop", "taskloop", "distribute"})
_VECTOR_LOOP = frozenset({"simd", "tile", "unroll"})
#: A user's directive mdpoly may replace by its own parallel loop (``--replace-omp``).
_REPLACEABLE = (("parallel", "for"), ("parallel", "loop"), ("parallel", "do"))
#: Pragmas of other compilers that apply to the loop after them (they go with it when it is replaced).
_LOOP_HINTS = re.compile(r"^(?:GCC\s+(?:ivdep|unroll|novector)|clang\s+loop|unroll|nounroll|ivdep|vector|novector|"
                         r"loop_count|nofusion|distribute_point)\b")
_WORD = re.compile(r"[A-Za-z_]\w*|\S")


def omp_words(text: str) -> tuple[str, ...] | None:
    """The directive-name words of ``#pragma omp <text>`` (``("parallel", "for")``), or ``None``
    when the pragma is not OpenMP."""
    words = _WORD.findall(text)
    if words[:1] != ["omp"]:
        return None
    out: list[str] = []
    for w in words[1:]:
        if w not in _DIRECTIVE_WORDS:
            break
        out.append(w)
    return tuple(out)


def omp_kind(text: str) -> OmpKind | None:
    """``loop``: shares a loop among threads (``parallel for``, ``for``, ``taskloop``...);
    ``vector``: shapes one thread's loop (``simd``, ``tile``, ``unroll``); ``standalone``: no
    statement belongs to it (``barrier``, ``flush``, ``target update``...); ``construct``: the
    statement after it runs under it (``parallel``, ``single``, ``task``, ``critical``...);
    ``None``: not OpenMP."""
    words = omp_words(text)
    if words is None:
        return None
    if not words or words[0] in _STANDALONE_FIRST or (words[0] == "target" and words[1:2] in (("update",), ("enter",),
                                                                                              ("exit",))):
        return "standalone"
    if _THREAD_LOOP & set(words):
        return "loop"
    if _VECTOR_LOOP & set(words) and not {"parallel", "teams", "target"} & set(words):
        return "vector"
    return "construct"


def is_mdh(text: str) -> bool:
    return text == "mdh" or text.startswith(("mdh(", "mdh ("))


def belongs_to_loop(p: c_ast.Pragma) -> bool:
    """Whether the pragma applies to the loop right after it (``#pragma mdh``, an OpenMP loop
    directive, ``GCC unroll``...): it goes with the loop when mdpoly replaces the loop."""
    text = pragma_text(p)
    return is_mdh(text) or omp_kind(text) in ("loop", "vector") or bool(_LOOP_HINTS.match(text))


def loop_directive(pragmas: tuple[c_ast.Pragma, ...]) -> c_ast.Pragma | None:
    """The OpenMP directive among a loop's own pragmas that shares it among threads, if any."""
    return next((p for p in pragmas if omp_kind(pragma_text(p)) == "loop"), None)


def replaceable(p: c_ast.Pragma) -> bool:
    """Whether mdpoly may replace the user's ``p`` (``--replace-omp``): a combined ``parallel for``
    (``parallel for simd``, ``parallel loop``) opens its own team; an orphaned ``omp for`` or a
    ``target``/``teams`` one runs in a team or on a device mdpoly does not see."""
    words = omp_words(pragma_text(p)) or ()
    return words[:2] in _REPLACEABLE


class _Directives(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[c_ast.Pragma] = []

    def visit_Pragma(self, node: c_ast.Pragma) -> None:
        if omp_kind(pragma_text(node)) in ("loop", "construct", "standalone"):
            self.found.append(node)


def openmp_inside(node: c_ast.Node) -> list[c_ast.Pragma]:
    """The OpenMP directives inside ``node`` other than ``simd``-like ones, in order."""
    v = _Directives()
    v.visit(node)
    return v.found


class _Calls(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if isinstance(node.name, c_ast.ID):
            self.names.add(node.name.name)
        self.generic_visit(node)


def called_names(node: c_ast.Node) -> set[str]:
    """The names of the functions ``node`` calls directly."""
    v = _Calls()
    v.visit(node)
    return v.names


class _UnderOpenMP(c_ast.NodeVisitor):
    """The functions called in statements under a user's OpenMP construct or loop directive."""

    def __init__(self) -> None:
        self.called: dict[str, c_ast.Pragma] = {}

    def visit_Compound(self, node: c_ast.Compound) -> None:
        under: c_ast.Pragma | None = None
        for item in node.block_items or []:
            if isinstance(item, c_ast.Pragma):
                if under is None and omp_kind(pragma_text(item)) in ("construct", "loop"):
                    under = item
                continue
            if under is not None:
                for name in sorted(called_names(item)):
                    self.called.setdefault(name, under)
            under = None
            self.visit(item)


def functions_under_openmp(funcs: list[c_ast.FuncDef]) -> dict[str, c_ast.Pragma]:
    """Functions of ``funcs`` that run inside a user's OpenMP construct (called in a statement
    under one, or from such a function): name -> that construct's pragma. Their nests run in a
    team already, as a nest inside the construct itself does."""
    v = _UnderOpenMP()
    for f in funcs:
        v.visit(f.body)
    graph = {str(f.decl.name): called_names(f.body) for f in funcs}
    under = dict(v.called)
    todo = list(under)
    while todo:
        name = todo.pop()
        for callee in sorted(graph.get(name, ())):
            if callee not in under:
                under[callee] = under[name]
                todo.append(callee)
    return {name: p for name, p in under.items() if name in graph}
