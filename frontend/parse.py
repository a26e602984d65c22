"""Preprocess and parse one C file: path + ``Options`` -> ``ParsedFile`` (pycparser ``FileAST``).

The preprocessor is ``Options.preprocessor`` when set (``mdpoly-cc`` hands over the real
compiler's ``cc -E`` with the command line's flags, so mdpoly parses what the compiler compiles),
else the system ``cpp`` with ``-std=c99``; it keeps its line markers, so every node's ``coord``
points into the user's original file (or into the header it came from). Failures of the
preprocessor and of the parser become located ``InputError``s.

C sources are bytes, not necessarily UTF-8: the file and the preprocessor's output are decoded
with ``surrogateescape`` (:func:`decode_source`), so every byte that is not UTF-8 (a Latin-1
string literal, stray garbage) survives as a lone surrogate and :func:`encode_source` turns the
spliced text back into exactly the same bytes. Line endings are kept as written.
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


# Decoding C bytes to text and back without losing any byte (see the module docstring).
SOURCE_ENCODING = "utf-8"
SOURCE_ERRORS = "surrogateescape"


def decode_source(data: bytes) -> str:
    """The text of C source bytes; bytes that are not UTF-8 become lone surrogates."""
    return data.decode(SOURCE_ENCODING, SOURCE_ERRORS)


def encode_source(text: str) -> bytes:
    """The inverse of :func:`decode_source`: the original bytes, byte for byte."""
    return text.encode(SOURCE_ENCODING, SOURCE_ERRORS)


_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])|[\udc80-\udcff]")


def _show_bytes(message: str) -> str:
    """A message that may quote text holding non-UTF-8 bytes, with each such byte as ``\\xNN``
    (pycparser prints them as ``'\\udcNN'``, the escaped surrogate)."""
    return _ESCAPED_BYTE.sub(lambda m: f"\\x{m[1] if m[1] else format(ord(m[0]) - 0xDC00, '02x')}", message)


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """The user's file: its original text, the name cpp used for it, and the AST."""

    path: str
    source_text: str
    ast: c_ast.FileAST


def cpp_command(path: str, options: Options) -> list[str]:
    """The preprocessor command for ``path``: ``Options.preprocessor`` (as given, in order) or
    ``cpp -std=c99``, then the ``-I``/``-D``/``-U`` of ``options``, then ``path``."""
    cmd = list(options.preprocessor) if options.preprocessor else [options.cpp, "-std=c99"]
    cmd += [f"-I{d}" for d in options.include_dirs]
    cmd += [f"-D{d}" for d in options.defines]
    cmd += [f"-U{u}" for u in options.undefines]
    cmd.append(path)
    return cmd


def preprocess(path: str, options: Options) -> str:
    """Run cpp on ``path``; raise ``InputError`` located at cpp's first error."""
    cmd = cpp_command(path, options)
    try:
        proc = subprocess.run(cmd, capture_output=True, check=False)
    except OSError as e:
        raise InputError(f"cannot run the preprocessor '{cmd[0]}': {e.strerror}") from e
    if proc.returncode != 0:
        stderr = proc.stderr.decode(SOURCE_ENCODING, "replace")
        m = _CPP_DIAG.search(stderr)
        if m:
            loc = SourceLoc(m["file"], int(m["line"]), int(m["col"] or 1))
            raise InputError(m["msg"].strip(), loc)
        msg = stderr.strip().splitlines()[0] if stderr.strip() else "preprocessing failed"
        raise InputError(msg, SourceLoc(path, 1, 1))
    # Only the parser reads this text: line ends are normalised as cpp's own output has them.
    return decode_source(proc.stdout).replace("\r\n", "\n")


def parse_c(path: str, options: Options) -> ParsedFile:
    """Read, preprocess and parse ``path``.

    :raises InputError: the file cannot be read, a header is missing, or the C does not parse.
    """
    try:
        with open(path, "rb") as fh:
            source = decode_source(fh.read())
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror}", SourceLoc(path, 1, 1)) from e
    text = preprocess(path, options)
    parser = GnuCParser()
    try:
        ast = parser.parse(_GLIBC_PRELUDE + text, path)
    except ParseError as e:
        m = _PARSE_LOC.match(str(e))
        if m:
            raise InputError(_show_bytes(m["msg"].strip()),
                             SourceLoc(m["file"] or path, int(m["line"]), int(m["col"]))) from e
        raise _unlocated_parse_error(parser, _show_bytes(str(e)), path) from e
    return ParsedFile(path, source, ast)


def _unlocated_parse_error(parser: GnuCParser, message: str, path: str) -> InputError:
    """Some pycparser errors name only the file; locate them at the parser's next token."""
    msg = message.split(": ", 1)[1] if ": " in message else message
    tok = None
    try:
        tok = parser._peek()
    except Exception:  # noqa: BLE001 -- best effort, the message is still reported
        tok = None
    if tok is None:
        return InputError(f"{msg} at end of input", SourceLoc(path, 1, 1))
    file = getattr(parser.clex, "filename", None) or path
    return InputError(f"{msg} before '{_show_bytes(str(tok.value))}'", SourceLoc(file, int(tok.lineno), int(tok.column or 1)))


def pragma_text(p: c_ast.Pragma) -> str:
    """The text of ``#pragma X`` or ``_Pragma("X")`` (whose ``string`` is a ``Constant``)."""
    s = p.string
    if isinstance(s, c_ast.Constant):
        s = s.value.strip('"')
    return str(s or "").strip()
