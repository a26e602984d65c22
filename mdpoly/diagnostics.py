"""Located diagnostics and the error hierarchy: ``SourceLoc``, ``Diagnostic``, ``MdpolyError``.

Every message mdpoly prints about the user's program carries a ``file:line:col`` location and is
rendered in clang's shape (``in.c:12:5: remark: ...``) followed by the source line and a caret.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import TextIO


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in the user's original source file (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


#: Control characters, which an echoed source line shows as ``?`` (a terminal would act on them).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One message about the user's program. ``code`` is a stable, silenceable identifier."""

    severity: Severity
    code: str
    loc: SourceLoc | None
    message: str

    def render(self, source_line: str | None = None) -> str:
        head = f"{self.loc}: " if self.loc else "mdpoly: "
        text = f"{head}{self.severity.value}: {self.message}"
        if self.code:
            text += f" [{self.code}]"
        if source_line is not None and self.loc is not None:
            line = _CONTROL.sub("?", source_line.rstrip("\n").expandtabs(1))
            caret = " " * max(self.loc.column - 1, 0) + "^"
            text += f"\n{line}\n{caret}"
        return text


class DiagnosticSink:
    """Collects diagnostics and prints them to a stream with source context."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.emitted: list[Diagnostic] = []
        self._lines: dict[str, list[str] | None] = {}

    def _source_line(self, loc: SourceLoc | None) -> str | None:
        if loc is None:
            return None
        if loc.file not in self._lines:
            try:
                with open(loc.file, encoding="utf-8", errors="replace") as fh:
                    self._lines[loc.file] = [ln.rstrip("\r") for ln in fh.read().split("\n")]
            except OSError:
                self._lines[loc.file] = None
        lines = self._lines[loc.file]
        if lines is None or not 1 <= loc.line <= len(lines):
            return None
        return lines[loc.line - 1]

    def emit(self, diag: Diagnostic) -> None:
        self.emitted.append(diag)
        if self.quiet and diag.severity in (Severity.REMARK, Severity.NOTE):
            return
        print(diag.render(self._source_line(diag.loc)), file=self.stream)


class MdpolyError(Exception):
    """Root of mdpoly's errors. ``loc`` locates the problem in the user's source when known."""

    code = "error"

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc

    def to_diagnostic(self) -> Diagnostic:
        return Diagnostic(Severity.ERROR, self.code, self.loc, self.message)

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}" if self.loc else self.message


class InputError(MdpolyError):
    """The input file cannot be read, preprocessed or parsed."""

    code = "bad-input"


class EnvironmentFailure(MdpolyError):
    """Something mdpoly needs outside the input is missing or broken (the preprocessor cannot
    run, no code generator): not the input's fault (the CLI's exit status 3)."""

    code = "environment"


class UnsupportedInput(MdpolyError):
    """A loop nest uses a construct mdpoly cannot model; the nest is kept as written.

    ``code`` names the reason (``non-affine-subscript``, ``side-effect-call``, ...).
    """

    def __init__(self, message: str, loc: SourceLoc | None = None, code: str = "unsupported") -> None:
        super().__init__(message, loc)
        self.code = code


class DependenceError(MdpolyError):
    """A ``#pragma mdh`` annotation contradicts the dependence analysis."""

    code = "annotation-mismatch"


class CompilerBug(MdpolyError):
    """An internal check failed on mdpoly's own IR: a bug in mdpoly, reported with the IR."""

    code = "internal"
