"""Whether a candidate nest is the user's OpenMP: ``Candidate`` + ``--replace-omp`` -> ``OmpPolicy``.

The rules are ``mdpoly.frontend.openmp``'s module docstring: a nest under the user's OpenMP is
kept as written with a located reason (``already-parallel``, ``in-omp-region``,
``openmp-inside``), unless ``--replace-omp`` or the loop's ``#pragma mdh`` lets mdpoly replace a
user's ``parallel for`` -- and then only where its analysis proves the nest one parallel
computation (``proven_parallel``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.openmp import openmp_inside, replaceable
from mdpoly.frontend.parse import pragma_text
from mdpoly.frontend.scop import Candidate, holds, loc_of
from mdpoly.ir.mdh import Combine
from mdpoly.ir.nest import NestAnalysis


@dataclass(frozen=True, slots=True)
class OmpPolicy:
    """``held``: why the nest stays as written, or ``None``; ``replaces``: the user's directives
    mdpoly's code replaces if the nest is proven parallel (it must then be, see
    ``proven_parallel``); ``on_loop``: the first of them is the loop's own."""

    held: UnsupportedInput | None = None
    replaces: tuple[c_ast.Pragma, ...] = ()
    on_loop: bool = False


def _quoted(p: c_ast.Pragma) -> str:
    return f"'#pragma {pragma_text(p)}'"


def omp_policy(cand: Candidate, replace_omp: bool) -> OmpPolicy:
    """What the user's OpenMP at ``cand`` allows (see the module docstring)."""
    if cand.omp_region is not None:
        where = f"the user's {_quoted(cand.omp_region)} at line {loc_of(cand.omp_region).line}"
        if not holds(cand.func, loc_of(cand.omp_region)):
            where += f", under which '{cand.function}' is called"
        if cand.omp_pragma is not None:
            return OmpPolicy(UnsupportedInput(f"the loop is annotated {_quoted(cand.omp_pragma)} inside {where}",
                                              cand.loc, "already-parallel"))
        return OmpPolicy(UnsupportedInput(f"it runs inside {where}; mdpoly does not open a parallel region "
                                          "inside a user's OpenMP construct", cand.loc, "in-omp-region"))
    allowed = replace_omp or cand.pragma is not None
    if cand.omp_pragma is not None:
        if allowed and replaceable(cand.omp_pragma):
            return OmpPolicy(replaces=(cand.omp_pragma, *openmp_inside(cand.node)), on_loop=True)
        hint = ("; --replace-omp lets mdpoly replace it where its analysis proves the loop parallel"
                if replaceable(cand.omp_pragma) else
                "; mdpoly replaces only a 'parallel for' (this directive shares the loop in a team or on a "
                "device mdpoly does not see)")
        return OmpPolicy(UnsupportedInput(f"the loop is annotated {_quoted(cand.omp_pragma)}{hint}",
                                          cand.loc, "already-parallel"))
    inside = openmp_inside(cand.node)
    blocking = [p for p in inside if not (allowed and replaceable(p))]
    if blocking:
        p = blocking[0]
        hint = ("; --replace-omp lets mdpoly replace it where its analysis proves the nest parallel"
                if replaceable(p) else "")
        return OmpPolicy(UnsupportedInput(f"it holds the user's {_quoted(p)} at line {loc_of(p).line}; the nests "
                                          f"inside are analysed on their own{hint}", cand.loc, "openmp-inside"))
    return OmpPolicy(replaces=tuple(inside))


def proven_parallel(policy: OmpPolicy, cand: Candidate, whole: NestAnalysis) -> UnsupportedInput | None:
    """``None`` when ``whole`` (the analysis of a nest whose user OpenMP ``policy`` replaces) is
    one MDH computation whose outermost loop is parallel; else why the user's code stays."""
    if whole.mdh is not None and whole.loops and whole.loops[0].combine != Combine.SEQ:
        return None
    why = (whole.kept.message if whole.mdh is None and whole.kept is not None else
           f"its loop '{whole.loops[0].iterator}' carries a dependence" if whole.loops else "no parallel loop")
    first = policy.replaces[0]
    code = "already-parallel" if policy.on_loop else "openmp-inside"
    return UnsupportedInput(f"the user's {_quoted(first)} at line {loc_of(first).line} stays: mdpoly's analysis "
                            f"does not prove the nest parallel ({why})", cand.loc, code)
