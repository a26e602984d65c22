"""Candidate nests: pycparser AST of the main file -> the ``Candidate`` ``for`` statements to model.

Which ``for`` statements are candidates (``find_candidates``): the outermost ``for``s between
``#pragma scop``/``#pragma endscop``; a ``for`` directly preceded by ``#pragma mdh(...)``; and,
when the file has neither kind of marker (or ``--all-nests``), every outermost ``for`` of every
function. Only nests of the main input file are considered, never those of headers. Also the
nests inside a kept one (``inner_candidates``) and where things are in the source (``loc_of``,
``holds``, ``return_type_loc``). ``mdpoly.frontend.scop`` re-exports all of these.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc
from mdpoly.frontend.openmp import belongs_to_loop, functions_under_openmp, is_mdh, loop_directive, omp_kind
from mdpoly.frontend.parse import ParsedFile, pragma_text
from mdpoly.frontend.symbols import FUNC_DECLS
from mdpoly.options import Options


def loc_of(node: c_ast.Node, fallback: SourceLoc | None = None) -> SourceLoc:
    c = node.coord
    if c is None or c.line is None:
        if fallback is None:
            return SourceLoc("<unknown>", 0, 0)
        return fallback
    return SourceLoc(c.file, c.line, c.column or 1)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate nest: the ``For`` node, where it lives, and how it was marked."""

    node: c_ast.For
    func: c_ast.FuncDef
    marked: bool
    pragma: c_ast.Pragma | None  # a ``#pragma mdh(...)`` among the loop's own pragmas
    omp_pragma: c_ast.Pragma | None = None  # the user's OpenMP directive sharing the loop among threads
    #: a band of a larger nest (``mdpoly.frontend.schedule``; ``node`` may be a new ``For`` over part of
    #: a loop's body): ``scope`` is the outermost nest, whose declarations are not visible around
    #: the band except ``host_decls`` (iterators and locals of the enclosing host loops).
    scope: c_ast.Node | None = None
    host_decls: tuple[c_ast.Decl, ...] = ()
    #: the pragmas directly before the loop that apply to it (``#pragma mdh``, OpenMP loop
    #: directives, ``GCC unroll``...; ``mdpoly.frontend.openmp.belongs_to_loop``): replaced with it
    pragmas: tuple[c_ast.Pragma, ...] = ()
    #: the innermost user OpenMP construct (``#pragma omp parallel``, ``single``...) around the nest
    omp_region: c_ast.Pragma | None = None

    @property
    def loc(self) -> SourceLoc:
        return loc_of(self.node)

    @property
    def function(self) -> str:
        return str(self.func.decl.name)


def _is_mdh(p: c_ast.Node) -> bool:
    return isinstance(p, c_ast.Pragma) and is_mdh(pragma_text(p))


def _is_marker(p: c_ast.Node) -> bool:
    return isinstance(p, c_ast.Pragma) and (pragma_text(p) in ("scop", "endscop") or _is_mdh(p))


class _MarkerFinder(c_ast.NodeVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Pragma(self, node: c_ast.Pragma) -> None:
        self.found = self.found or _is_marker(node)


def _own_pragmas(run: list[c_ast.Pragma]) -> tuple[tuple[c_ast.Pragma, ...], c_ast.Pragma | None]:
    """Of the pragmas directly before a statement: those that apply to it as a loop (the last
    ones that ``belongs_to_loop``), and the OpenMP construct right before those whose
    structured block the statement is (``#pragma omp parallel`` before a loop or a block)."""
    k = len(run)
    while k > 0 and belongs_to_loop(run[k - 1]):
        k -= 1
    construct = run[k - 1] if k > 0 and omp_kind(pragma_text(run[k - 1])) == "construct" else None
    return tuple(run[k:]), construct


class _CandidateFinder(c_ast.NodeVisitor):
    def __init__(self, func: c_ast.FuncDef, auto: bool, region: c_ast.Pragma | None = None) -> None:
        self.func = func
        self.auto = auto
        self.region = region  # the innermost user OpenMP construct around what is visited
        self.found: list[Candidate] = []

    def visit_Compound(self, node: c_ast.Compound) -> None:
        in_scop = False
        run: list[c_ast.Pragma] = []  # the pragmas directly before the current item
        for item in node.block_items or []:
            if isinstance(item, c_ast.Pragma):
                t = pragma_text(item)
                if t == "scop":
                    in_scop = True
                elif t == "endscop":
                    in_scop = False
                run.append(item)
                continue
            own, construct = _own_pragmas(run)
            run = []
            region = construct or self.region
            mdh = next((p for p in own if _is_mdh(p)), None)
            loop = _labelled_for(item)
            if isinstance(loop, c_ast.For) and (in_scop or self.auto or mdh is not None):
                self.found.append(Candidate(loop, self.func, in_scop or mdh is not None, mdh,
                                            loop_directive(own), pragmas=own, omp_region=region))
            else:
                outer, self.region = self.region, region
                self.visit(item)
                self.region = outer

    def _body(self, stmt: c_ast.Node | None) -> None:
        """A statement in a body's place: an unbraced loop there (``if (c) for ...``) is a nest too."""
        if stmt is None:
            return
        if isinstance(_labelled_for(stmt), c_ast.For):
            self.visit_Compound(c_ast.Compound([stmt], coord=stmt.coord))
        else:
            self.visit(stmt)

    def visit_If(self, node: c_ast.If) -> None:
        self.visit(node.cond)
        self._body(node.iftrue)
        self._body(node.iffalse)

    def visit_While(self, node: c_ast.While) -> None:
        self._body(node.stmt)

    def visit_DoWhile(self, node: c_ast.DoWhile) -> None:
        self._body(node.stmt)


def _labelled_for(item: c_ast.Node) -> c_ast.Node:
    """The statement a chain of labels (``out: for ...``) stands before; ``item`` itself otherwise."""
    while isinstance(item, c_ast.Label):
        item = item.stmt
    return item


def find_candidates(parsed: ParsedFile, options: Options) -> list[Candidate]:
    """Candidate nests of the main file, in source order."""
    funcs = [e for e in parsed.ast.ext if isinstance(e, c_ast.FuncDef) and e.coord is not None
             and e.coord.file == parsed.path]
    mf = _MarkerFinder()
    for f in funcs:
        mf.visit(f)
    auto = options.all_nests or not mf.found
    under_openmp = functions_under_openmp(funcs)   # their nests run in a user's team already
    out: list[Candidate] = []
    for f in funcs:
        cf = _CandidateFinder(f, auto, under_openmp.get(str(f.decl.name)))
        cf.visit(f.body)
        out.extend(cf.found)
    return out


def stray_mdh_pragmas(parsed: ParsedFile, candidates: list[Candidate]) -> list[c_ast.Pragma]:
    """The ``#pragma mdh`` of the main file that annotate no candidate (not directly before a ``for``)."""
    used = {id(c.pragma) for c in candidates if c.pragma is not None}

    class _Mdh(c_ast.NodeVisitor):
        def __init__(self) -> None:
            self.found: list[c_ast.Pragma] = []

        def visit_Pragma(self, node: c_ast.Pragma) -> None:
            if _is_mdh(node) and id(node) not in used:
                self.found.append(node)

    v = _Mdh()
    for e in parsed.ast.ext:
        if isinstance(e, c_ast.FuncDef) and e.coord is not None and e.coord.file == parsed.path:
            v.visit(e)
    return v.found


def inner_candidates(cand: Candidate, culprit: SourceLoc | None = None) -> list[Candidate]:
    """The outermost nests inside the loop body of ``cand`` (a nest kept as a whole), as
    candidates of their own; a nest that holds ``culprit`` (where the reason to keep ``cand``
    is) is not one -- that reason explains it -- but the nests inside it are, in the same way."""
    cf = _CandidateFinder(cand.func, True, cand.omp_region)
    cf.visit(cand.node.stmt if isinstance(cand.node.stmt, c_ast.Compound) else c_ast.Compound([cand.node.stmt]))
    out: list[Candidate] = []
    for c in cf.found:
        c = replace(c, marked=c.marked or cand.marked)
        out.extend(inner_candidates(c, culprit) if culprit is not None and holds(c.node, culprit) else [c])
    return out


def holds(node: c_ast.Node, loc: SourceLoc) -> bool:
    """Whether ``loc`` is the coordinate of ``node`` or of a node inside it."""
    c = node.coord
    if c is not None and (c.file, c.line, c.column or 1) == (loc.file, loc.line, loc.column):
        return True
    return any(holds(child, loc) for _, child in node.children())


def return_type_loc(func: c_ast.FuncDef) -> SourceLoc:
    """Where the return type's first specifier token is (e.g. ``float`` in ``static float f``)."""
    t: c_ast.Node = func.decl.type
    while isinstance(t, (*FUNC_DECLS, c_ast.PtrDecl, c_ast.TypeDecl, c_ast.ArrayDecl)):
        t = t.type
    return loc_of(t, loc_of(func.decl))
