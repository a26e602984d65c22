"""Preprocess and parse one C file: path + ``Options`` -> ``ParsedFile`` (pycparser ``FileAST``).

The system ``cpp`` runs with ``-std=c99`` and keeps its line markers, so every node's ``coord``
points into the user's original file (or into the header it came from). Failures of ``cpp`` and
of the parser become located ``InputError``s.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from pycparser import c_ast
from pycparser.c_parser import ParseError
from pycparserext.ext_c_parser import GnuCParser

from mdpoly.diagnostics import InputError, SourceLoc
from mdpoly.options import Options

# glibc's headers use the TS 18661-3 types that pycparser does not know; the text cpp returns
# begins with a line marker, so a prepended line does not shift any coordinate.
_GLIBC_PRELUDE = (
    "typedef float _Float32; typedef double _Float64; typedef double _Float32x; "
    "typedef long double _Float64x; typedef long double _Float128;\n"
)

_CPP_DIAG = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.*)$",
                       re.MULTILINE)
_PARSE_LOC = re.compile(r"^(?P<file>[^:\n]*):(?P<line>\d+):(?P<col>\d+):\s*(?P<msg>.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """The user's file: its original text, the name cpp used for it, and the AST."""

    path: str
    source_text: str
    ast: c_ast.FileAST


def cpp_command(path: str, options: Options) -> list[str]:
    cmd = [options.cpp, "-std=c99"]
    cmd += [f"-I{d}" for d in options.include_dirs]
    cmd += [f"-D{d}" for d in options.defines]
    cmd += [f"-U{u}" for u in options.undefines]
    cmd.append(path)
    return cmd


def preprocess(path: str, options: Options) -> str:
    """Run cpp on ``path``; raise ``InputError`` located at cpp's first error."""
    cmd = cpp_command(path, options)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise InputError(f"cannot run the preprocessor '{options.cpp}': {e.strerror}") from e
    if proc.returncode != 0:
        m = _CPP_DIAG.search(proc.stderr)
        if m:
            loc = SourceLoc(m["file"], int(m["line"]), int(m["col"] or 1))
            raise InputError(m["msg"].strip(), loc)
        msg = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else "preprocessing failed"
        raise InputError(msg, SourceLoc(path, 1, 1))
    return proc.stdout


def parse_c(path: str, options: Options) -> ParsedFile:
    """Read, preprocess and parse ``path``.

    :raises InputError: the file cannot be read, a header is missing, or the C does not parse.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            source = fh.read()
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror}", SourceLoc(path, 1, 1)) from e
    text = preprocess(path, options)
    parser = GnuCParser()
    try:
        ast = parser.parse(_GLIBC_PRELUDE + text, path)
    except ParseError as e:
        m = _PARSE_LOC.match(str(e))
        if m:
            raise InputError(m["msg"].strip(), SourceLoc(m["file"] or path, int(m["line"]), int(m["col"]))) from e
        raise _unlocated_parse_error(parser, str(e), path) from e
    return ParsedFile(path, source, ast)


def _unlocated_parse_error(parser: GnuCParser, message: str, path: str) -> InputError:
    """Some pycparser errors name only the file; locate them at the parser's next token."""
    msg = message.split(": ", 1)[1] if ": " in message else message
    tok = None
    try:
        tok = parser._peek()  # noqa: SLF001 -- pycparser keeps the position only there
    except Exception:  # noqa: BLE001 -- best effort, the message is still reported
        tok = None
    if tok is None:
        return InputError(f"{msg} at end of input", SourceLoc(path, 1, 1))
    file = getattr(parser.clex, "filename", None) or path
    return InputError(f"{msg} before '{tok.value}'", SourceLoc(file, int(tok.lineno), int(tok.column or 1)))


def pragma_text(p: c_ast.Pragma) -> str:
    """The text of ``#pragma X`` or ``_Pragma("X")`` (whose ``string`` is a ``Constant``)."""
    s = p.string
    if isinstance(s, c_ast.Constant):
        s = s.value.strip('"')
    return str(s or "").strip()
