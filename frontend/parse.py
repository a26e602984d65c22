"""Preprocess and parse one C file: path + ``Options`` -> ``ParsedFile`` (pycparser ``FileAST``).

The preprocessor is ``Options.preprocessor`` when set (``mdpoly-cc`` hands over the real
compiler's ``cc -E`` with the command line's flags, the ``mdpoly`` command ``$MDPOLY_CC -E`` with
the target's compile flags, so mdpoly parses what the compiler compiles), else ``Options.cc``
with ``-E`` (the compiler's default mode, GNU C for gcc and clang); it keeps its line markers,
so every node's ``coord`` points into the user's original file (or into the header it came
from). Failures of the preprocessor and of the parser become located ``InputError``s; a parse
error that another language mode avoids (``-std=gnu17`` for strict C, ``-std=c17`` for GNU C,
which predefines ``linux`` and ``unix``) says so, with the ``--preprocessor`` that works.

C sources are bytes, not necessarily UTF-8: the file and the preprocessor's output are decoded
with ``surrogateescape`` (:func:`decode_source`), so every byte that is not UTF-8 (a Latin-1
string literal, stray garbage) survives as a lone surrogate and :func:`encode_source` turns the
spliced text back into exactly the same bytes. Line endings are kept as written.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass

from pycparser import c_ast
from pycparser.c_parser import ParseError

from mdpoly.diagnostics import EnvironmentFailure, InputError, MdpolyError, SourceLoc
from mdpoly.frontend.assertions import structure_assertions
from mdpoly.frontend.bumped_pointers import count_bumped_loops
from mdpoly.frontend.continues import structure_continues
from mdpoly.frontend.do_once import unwrap_do_once
from mdpoly.frontend.switches import structure_switches
from mdpoly.frontend.syntax_errors import ExplainingParser, show_bytes, syntax_error
from mdpoly.options import Options

# glibc's headers use the TS 18661-3 types that pycparser does not know; the text cpp returns
# begins with a line marker, so a prepended line does not shift any coordinate.
# GNU imaginary constants (``1.0iF``, what <complex.h>'s ``I`` expands to) become names of the
# same length declared here, volatile so that no nest reading one is modelled.
_IMAGINARY_LENGTHS = range(2, 41)


def _imaginary_name(length: int) -> str:
    """The name standing for an imaginary constant of ``length`` characters."""
    return "_Imag"[:length] if length <= 5 else "_Imag" + "_" * (length - 5)


_GLIBC_PRELUDE = (
    "typedef float _Float32; typedef double _Float64; typedef double _Float32x; "
    "typedef long double _Float64x; typedef long double _Float128; typedef long double __float128; "
    "extern volatile const long double _Complex "
    + ", ".join(_imaginary_name(k) for k in _IMAGINARY_LENGTHS) + ";\n"
)

# GNU C that the parser does not know, in the compiler's default mode: ``__extension__`` before
# an expression (it only silences -pedantic) goes, ``__builtin_offsetof`` (<stddef.h>'s
# ``offsetof``) is spelled ``offsetof``; string and character literals stay untouched, and every
# replacement is as long as what it replaces, so no column moves. An imaginary constant becomes a
# name declared in the prelude (``_imaginary_name``).
_IMAGINARY = r"(?:\b\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:[fFlL]?[iIjJ]|[iIjJ][fFlL]?)\b"
_GNU_WORDS = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|\b__extension__\b|\b__builtin_offsetof\b|"
                        + _IMAGINARY)


def _gnu_compat(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        word = m[0]
        if word == "__extension__":
            return " " * len(word)
        if word == "__builtin_offsetof":
            return "offsetof".ljust(len(word))
        if word[0] in "0123456789." and len(word) in _IMAGINARY_LENGTHS:
            return _imaginary_name(len(word))
        return word
    return _GNU_WORDS.sub(sub, text)

_CPP_DIAG = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?:fatal )?error:\s*(?P<msg>.*)$",
                       re.MULTILINE)


# Decoding C bytes to text and back without losing any byte (see the module docstring).
SOURCE_ENCODING = "utf-8"
SOURCE_ERRORS = "surrogateescape"


def decode_source(data: bytes) -> str:
    """The text of C source bytes; bytes that are not UTF-8 become lone surrogates."""
    return data.decode(SOURCE_ENCODING, SOURCE_ERRORS)


def encode_source(text: str) -> bytes:
    """The inverse of :func:`decode_source`: the original bytes, byte for byte."""
    return text.encode(SOURCE_ENCODING, SOURCE_ERRORS)


#: Bytes that never occur in C text (C0 controls but tab, line feed, vertical tab, form feed,
#: carriage return and escape; DEL): a file with a NUL, or where they are common, is not C.
#: Bytes that are not UTF-8 do not count: a source in Latin-1 or another 8-bit encoding is text.
_NON_TEXT = frozenset(range(0x20)) - {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1B} | {0x7F}
#: How much of a file is looked at, and how many such bytes (at least, and as a share) make it binary.
_SNIFF_BYTES = 8192
_NON_TEXT_COUNT = 8
_NON_TEXT_SHARE = 0.02


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` is not C source text (a NUL byte, or many control characters), with no byte
    of it quoted; ``None`` for text."""
    nul = data.find(b"\0")
    if nul >= 0:
        return f"it holds binary data (a NUL byte at offset {nul})"
    head = data[:_SNIFF_BYTES]
    controls = sum(1 for b in head if b in _NON_TEXT)
    if controls >= max(_NON_TEXT_COUNT, _NON_TEXT_SHARE * len(head)):
        return f"it holds binary data ({controls} control characters in its first {len(head)} bytes)"
    return None


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """The user's file: its original text, the name cpp used for it, and the AST."""

    path: str
    source_text: str
    ast: c_ast.FileAST


def preprocessor_words(options: Options) -> list[str]:
    """The preprocessor command before the flags of ``options`` and the file name:
    ``Options.preprocessor`` (as given) or ``Options.cc`` with ``-E``."""
    return list(options.preprocessor) if options.preprocessor else [*options.cc, "-E"]


def cpp_command(path: str, options: Options, words: list[str] | None = None) -> list[str]:
    """The preprocessor command for ``path``: ``words`` (default :func:`preprocessor_words`),
    then the ``-I``/``-D``/``-U`` of ``options``, then ``path``."""
    cmd = list(words) if words is not None else preprocessor_words(options)
    cmd += [f"-I{d}" for d in options.include_dirs]
    cmd += [f"-D{d}" for d in options.defines]
    cmd += [f"-U{u}" for u in options.undefines]
    cmd.append(path)
    return cmd


def preprocess(path: str, options: Options, words: list[str] | None = None) -> str:
    """Run the preprocessor (``words``, see :func:`cpp_command`) on ``path``; raise
    ``InputError`` located at its first error."""
    cmd = cpp_command(path, options, words)
    try:
        proc = subprocess.run(cmd, capture_output=True, check=False)
    except OSError as e:
        raise EnvironmentFailure(f"cannot run the preprocessor '{cmd[0]}': {e.strerror}") from e
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
            data = fh.read()
    except OSError as e:
        raise InputError(f"cannot read '{path}': {e.strerror}", SourceLoc(path, 1, 1)) from e
    why = binary_reason(data)
    if why is not None:
        raise InputError(f"'{show_bytes(path)}' is not a C source file: {why}")
    source = decode_source(data)
    try:
        ast = _parse(preprocess(path, options), path)
    except InputError as e:
        hint = _mode_hint(path, options)
        if hint is None:
            raise
        raise InputError(f"{e.message}; {hint}", e.loc) from e
    unwrap_do_once(ast)        # do { S } while (0)  ->  { S }
    structure_assertions(ast)  # assert(e)'s expansion  ->  if (e) ; else __assert_fail("e", ..., "f");
    structure_switches(ast)    # switch (m) { case 0: S; break; ... }  ->  if (m == 0) { S } else ...
    count_bumped_loops(ast)    # while (x < xe) *y++ = *x++;  ->  for (k < xe - x) y[k] = x[k]; ...
    structure_continues(ast)   # if (c) { S; continue; } T  ->  if (c) { S } else { T }
    return ParsedFile(path, source, ast)


def _parse(text: str, path: str) -> c_ast.FileAST:
    """Parse preprocessed text (with the prelude); a failure is a located ``InputError`` saying
    what was expected where the parser knows it (``mdpoly.frontend.syntax_errors``)."""
    parser = ExplainingParser()
    try:
        return parser.parse(_GLIBC_PRELUDE + _gnu_compat(text), path)
    except ParseError as e:
        raise syntax_error(parser, str(e), path) from e


_STD = re.compile(r"^-std=(?P<gnu>gnu|c)(?P<version>\d\w*)$")


def other_mode(words: list[str]) -> tuple[list[str], str] | None:
    """The preprocessor command in the other language mode, and the mode's name: a strict
    ``-std=cNN`` becomes ``-std=gnuNN`` (GNU C: glibc then declares ``int8_t`` in
    ``<stdlib.h>``, and the GNU extensions of headers are visible), a ``-std=gnuNN`` or no
    ``-std=`` (the compiler's default, GNU C) becomes strict ``-std=cNN``/``-std=c17`` (no
    predefined ``linux``/``unix`` macros); ``None`` for an ``-std=`` it does not know."""
    stds = [k for k, w in enumerate(words) if w.startswith("-std=")]
    if not stds:
        return [*words, "-std=c17"], "strict ISO C (-std=c17)"
    m = _STD.match(words[stds[-1]])
    if m is None:
        return None
    gnu = m["gnu"] == "gnu"
    std = f"-std=c{m['version']}" if gnu else f"-std=gnu{m['version']}"
    mode = f"strict ISO C ({std})" if gnu else f"GNU C ({std})"
    return [*words[: stds[-1]], std, *words[stds[-1] + 1:]], mode


def _mode_hint(path: str, options: Options) -> str | None:
    """When the file parses in the other language mode (:func:`other_mode`): a hint naming the
    ``--preprocessor`` that works; else ``None``."""
    other = other_mode(preprocessor_words(options))
    if other is None:
        return None
    words, mode = other
    try:
        _parse(preprocess(path, options, words), path)
    except MdpolyError:
        return None
    return (f"it parses when preprocessed in {mode} mode: use --preprocessor {shlex.quote(shlex.join(words))} "
            "(or preprocess with the flags your compiler uses)")


def pragma_text(p: c_ast.Pragma) -> str:
    """The text of ``#pragma X`` or ``_Pragma("X")`` (whose ``string`` is a ``Constant``)."""
    s = p.string
    if isinstance(s, c_ast.Constant):
        s = s.value.strip('"')
    return str(s or "").strip()
