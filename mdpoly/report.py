"""Per-nest diagnostics and the ``--report`` JSON: ``NestOutcome``s -> remarks/notes and a dict.

Remarks are printed in clang's shape through a ``DiagnosticSink``
(``in.c:12:5: remark: loop nest parallelized: i:++ j:++ k:+``); the JSON schema is stable::

    {"nests": [{"file", "line", "column", "status": "transformed"|"kept", "reason", "code",
                "loops": [{"iterator", "extent", "combine"}], "mdh": <dsl string or null>, "target",
                "tuning": {"params", "config", "tuned_seconds", "default_seconds", "evaluations",
                           "from_cache", "technique", ...} or null}]}

``line``/``column`` locate the outermost ``for`` of the nest.
"""

from __future__ import annotations

import json
from typing import Any

from mdpoly.diagnostics import Diagnostic, DiagnosticSink, Severity
from mdpoly.ir.nest import FileAnalysis, NestOutcome
from mdpoly.output_files import write_files_atomically


def outcomes_from_analysis(analysis: FileAnalysis, target: str | None = None) -> tuple[NestOutcome, ...]:
    """Outcomes from the analysis alone (``--emit mdh``): transformed exactly when an MDH exists."""
    out: list[NestOutcome] = []
    for n in analysis.nests:
        if n.mdh is not None:
            out.append(NestOutcome(n, "transformed", None, None, target))
        else:
            kept = n.kept
            out.append(NestOutcome(n, "kept", kept.message if kept else "not analysed",
                                   kept.code if kept else "unsupported", None))
    return tuple(out)


def outcome_diagnostic(o: NestOutcome) -> Diagnostic:
    """The remark (transformed) or note/warning (kept) for one nest."""
    n = o.nest
    if o.status == "transformed":
        loops = " ".join(f"{lp.iterator}:{lp.combine.value}" for lp in n.loops)
        return Diagnostic(Severity.REMARK, "", n.loc, f"loop nest parallelized: {loops}")
    loc = n.kept.loc if n.kept is not None and n.kept.code == o.code and n.kept.loc else n.loc
    severity = n.kept.severity if n.kept is not None and n.kept.code == o.code else Severity.NOTE
    return Diagnostic(severity, o.code or "", loc, f"loop nest kept sequential: {o.reason or 'unknown reason'}")


def emit_outcomes(outcomes: tuple[NestOutcome, ...], sink: DiagnosticSink) -> None:
    for o in outcomes:
        sink.emit(outcome_diagnostic(o))


def report_dict(outcomes: tuple[NestOutcome, ...]) -> dict[str, Any]:
    nests = []
    for o in outcomes:
        n = o.nest
        nests.append({
            "file": n.loc.file,
            "line": n.loc.line,
            "column": n.loc.column,
            "status": o.status,
            "reason": o.reason,
            "code": o.code,
            "loops": [{"iterator": lp.iterator, "extent": lp.extent, "combine": lp.combine.value} for lp in n.loops],
            "mdh": n.mdh.to_dsl() if n.mdh is not None else None,
            "target": o.target,
            "tuning": o.tuning,
        })
    return {"nests": nests}


def write_text_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (``mdpoly.output_files``); bytes that came into the
    text through ``surrogateescape`` go out unchanged."""
    write_files_atomically([(path, text.encode("utf-8", "surrogateescape"))])


def write_report(path: str, outcomes: tuple[NestOutcome, ...]) -> None:
    write_text_atomically(path, json.dumps(report_dict(outcomes), indent=2) + "\n")
