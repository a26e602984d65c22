"""The user's own parallel loops that may get a team size chosen at run time: ``ParsedFile`` ->
``TeamPragma`` per directive.

A user's ``#pragma omp parallel for`` that mdpoly keeps (``already-parallel``) opens a team of
``OMP_NUM_THREADS`` threads on every call, however many cores other processes hold: when one of
them takes a core, every barrier of the loop waits for a scheduler tick, and a program of many
short parallel loops runs many times slower than sequentially (issue 22 measured 22x for an
inference loop of small matvecs). mdpoly's own regions pick their team at run time
(``mdp_team()``, ``backends/c/mdp_team.h``); this module finds the user's directives that can get
the same clause, ``num_threads(mdp_team())``, without a change in meaning:

- a combined worksharing loop (``parallel for``, ``parallel for simd``, ``parallel loop``):
  every iteration runs whatever the team size, as under a smaller ``OMP_NUM_THREADS``;
- with no ``num_threads`` clause of its own (the user chose a team);
- whose loop calls no ``omp_get_thread_num``/``omp_get_num_threads``/``omp_get_max_threads``
  (code that partitions by thread number itself, where a team smaller than planned could skip work);
- written in the file itself (not in a header, not through ``_Pragma`` or a macro), with its
  directive name on the ``#pragma`` line.

A plain ``#pragma omp parallel`` region is left alone: its body may split the work by thread
number with a thread count read before the region.
"""

from __future__ import annotations

import itertools
import re

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.candidates import loc_of, return_type_loc
from mdpoly.frontend.nest_span import function_start_line
from mdpoly.frontend.openmp import called_names, omp_words
from mdpoly.frontend.parse import ParsedFile, pragma_text
from mdpoly.ir.nest import TeamPragma

#: Combined directives whose iterations are shared out by the runtime (the team size is free).
_WORKSHARING = (("parallel", "for"), ("parallel", "loop"), ("parallel", "do"))
#: Calls that let a loop depend on its team (thread numbers, team sizes).
_TEAM_QUERIES = frozenset({"omp_get_thread_num", "omp_get_num_threads", "omp_get_max_threads",
                           "omp_get_team_size", "omp_get_ancestor_thread_num"})
_DIRECTIVE_ON_LINE = re.compile(r"^\s*#\s*pragma\s+omp\b")
_WORD = re.compile(r"\s*([A-Za-z_]\w*)")


def _clause_column(line_text: str, words: tuple[str, ...]) -> int | None:
    """0-based offset just after the directive name (``omp parallel for``) on the ``#pragma``
    line, or ``None`` when the line does not spell all of ``words`` itself."""
    m = _DIRECTIVE_ON_LINE.match(line_text)
    if m is None:
        return None
    pos = m.end()
    for w in words:
        wm = _WORD.match(line_text, pos)
        if wm is None or wm.group(1) != w:
            return None
        pos = wm.end()
    return pos


class _Finder(c_ast.NodeVisitor):
    def __init__(self, parsed: ParsedFile) -> None:
        self.parsed = parsed
        self.lines = parsed.source_text.splitlines()
        self.function_line = 0
        self.found: list[TeamPragma] = []

    def visit_FuncDef(self, node: c_ast.FuncDef) -> None:
        if node.coord is None or node.coord.file != self.parsed.path:
            return
        self.function_line = function_start_line(self.parsed.source_text, return_type_loc(node))
        self.generic_visit(node)

    def visit_Compound(self, node: c_ast.Compound) -> None:
        items = node.block_items or []
        for here, after in itertools.pairwise(items):
            if isinstance(here, c_ast.Pragma):
                self._consider(here, after)
        self.generic_visit(node)

    def _consider(self, pragma: c_ast.Pragma, statement: c_ast.Node) -> None:
        text = pragma_text(pragma)
        words = omp_words(text)
        if not words or words[:2] not in _WORKSHARING or not isinstance(statement, c_ast.For):
            return
        if "num_threads" in text or called_names(statement) & _TEAM_QUERIES:
            return
        loc = loc_of(pragma)
        if loc.file != self.parsed.path or not 1 <= loc.line <= len(self.lines):
            return
        column = _clause_column(self.lines[loc.line - 1], words)
        if column is None:   # _Pragma, a macro, or a directive name continued on the next line
            return
        self.found.append(TeamPragma(loc=SourceLoc(loc.file, loc.line, 1), directive=" ".join(words),
                                     clause_column=column, function_line=self.function_line))


def team_pragmas(parsed: ParsedFile) -> tuple[TeamPragma, ...]:
    """The file's ``parallel for`` directives that may get ``num_threads(mdp_team())`` (see the module docstring)."""
    finder = _Finder(parsed)
    finder.visit(parsed.ast)
    return tuple(finder.found)
