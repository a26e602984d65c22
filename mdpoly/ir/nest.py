"""Per-nest analysis outcome shared by the driver, the splicer and the report.

``NestAnalysis`` is what the front end hands over for every candidate loop nest: where it is in
the original text, what each loop was classified as, and either an ``MdhExpr`` or the reason the
nest is kept as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdpoly.diagnostics import Diagnostic, SourceLoc
from mdpoly.ir.mdh import Combine, MdhExpr


#: A statement a backend's call text may contain (the fallback branch of a run-time alias
#: check); ``mdpoly.splice`` replaces it by the nest's original text, verbatim.
ORIGINAL_NEST = "MDPOLY_ORIGINAL_NEST;"


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """A range of the original file: from ``start`` to ``end_line:end_column`` inclusive.

    ``first_line`` is where replacement text begins; it is before ``start.line`` when a
    ``#pragma mdh`` line directly precedes the nest and belongs to it.
    """

    start: SourceLoc
    end_line: int
    end_column: int
    first_line: int


@dataclass(frozen=True, slots=True)
class LoopSummary:
    iterator: str
    extent: str
    combine: Combine


@dataclass(frozen=True, slots=True)
class NestAnalysis:
    """One candidate nest. ``mdh`` is None when the nest is kept; then ``kept`` says why.

    ``reference_c`` is the nest as written, printed from its AST after preprocessing (macros
    expanded, so self-contained): the tuner compiles it as the reference of correctness.
    """

    loc: SourceLoc
    span: SourceSpan
    function: str
    function_line: int
    loops: tuple[LoopSummary, ...]
    mdh: MdhExpr | None
    kept: Diagnostic | None = None
    marked: bool = False
    reference_c: str = ""


@dataclass(frozen=True, slots=True)
class NestOutcome:
    """What the driver did with one nest: the report's and the diagnostics' source of truth."""

    nest: NestAnalysis
    status: str          # "transformed" | "kept"
    reason: str | None   # why kept (None when transformed)
    code: str | None     # stable reason code, e.g. "too-little-work", "non-affine-subscript"
    target: str | None   # backend used when transformed
    tuning: dict[str, object] | None = None   # the report's "tuning" object; None when untuned


@dataclass(frozen=True, slots=True)
class FileAnalysis:
    """The front end's result for one file: its original text and every candidate nest."""

    path: str
    source_text: str
    nests: tuple[NestAnalysis, ...]
