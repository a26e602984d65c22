"""A pycparser syntax error -> a located ``InputError`` that says what was expected, where.

``ExplainingParser`` is the GNU C parser that remembers the token a failed ``_expect`` wanted (the
parser knows it: a ``;`` after a declaration, a ``)`` after an argument list). ``syntax_error``
turns the parser's ``before: printf`` into ``expected ';' before 'printf'`` and locates it at the
end of the token before the offending one, as gcc and clang do (a missing ``;`` belongs to the
line it is missing from); where no expected token is known the message stays pycparser's, put
as ``syntax error before 'X'``, at that better place. Token positions come from the token
buffer of the failed parse, whose lines follow the preprocessor's line markers, so they point
into the user's file. Quoted text shows bytes that are not UTF-8 and control characters as
``\\xNN`` (``show_bytes``): a message never carries raw bytes.
"""

from __future__ import annotations

import re
from typing import Any

from pycparserext.ext_c_parser import GnuCParser

from mdpoly.diagnostics import InputError, SourceLoc

#: How the expected tokens are named in messages (the others by their keyword).
_SPELLING = {"SEMI": "';'", "COLON": "':'", "COMMA": "','", "EQUALS": "'='", "LBRACE": "'{'", "RBRACE": "'}'",
             "LBRACKET": "'['", "RBRACKET": "']'", "LPAREN": "'('", "RPAREN": "')'", "ID": "an identifier",
             "TYPEID": "a type name", "PPHASH": "'#'"}

#: pycparser's messages that say less than they could.
_REWORDED = {"Invalid expression": "expected an expression"}

_PARSE_LOC = re.compile(r"^(?P<file>[^:\n]*):(?P<line>\d+):(?P<col>\d+):\s*(?P<msg>.*)$", re.DOTALL)
_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])|[\udc80-\udcff]|[\x00-\x08\x0b-\x1f\x7f]")


def show_bytes(message: str) -> str:
    """A message that may quote text holding non-UTF-8 bytes or control characters, with each
    such byte as ``\\xNN`` (pycparser prints a non-UTF-8 byte as ``'\\udcNN'``, the escaped
    surrogate)."""
    def show(m: re.Match[str]) -> str:
        if m[1]:
            return f"\\x{m[1]}"
        code = ord(m[0])
        return f"\\x{code - 0xDC00 if code >= 0xDC00 else code:02x}"
    return _ESCAPED_BYTE.sub(show, message)


def spelled(token_type: str) -> str:
    return _SPELLING.get(token_type, f"'{token_type.lstrip('_').lower()}'")


class ExplainingParser(GnuCParser):
    """``GnuCParser`` that records the token type a failing ``_expect`` wanted (``expected``)."""

    expected: str | None = None

    def _expect(self, token_type: str) -> Any:
        tok = self._peek()
        if tok is None or tok.type != token_type:
            self.expected = token_type     # the parse error follows at once; nothing backtracks over it
        return super()._expect(token_type)


def _tokens(parser: Any) -> list[Any]:
    """The tokens the failed parse read, in order (the parser's token buffer; ``[]`` if unknown)."""
    stream = getattr(parser, "_tokens", None)
    return [t for t in getattr(stream, "_buffer", []) if t is not None]


def _end(tok: Any, file: str) -> SourceLoc:
    """Just after ``tok`` (where a missing token goes)."""
    return SourceLoc(file, int(tok.lineno), int(tok.column or 1) + len(str(tok.value)))


def syntax_error(parser: Any, message: str, path: str) -> InputError:
    """The ``InputError`` for pycparser's ``message`` after ``parser`` failed on ``path``'s text."""
    expected = getattr(parser, "expected", None)
    tokens = _tokens(parser)
    m = _PARSE_LOC.match(message)
    if m is None:   # no line: the end of the input, or an error that names only the file
        msg = message.split(": ", 1)[1] if ": " in message else message
        file = getattr(parser.clex, "filename", None) or path
        if msg.startswith("At end of input"):
            what = f"expected {spelled(expected)} at end of input" if expected else "unexpected end of input"
            return InputError(what, _end(tokens[-1], file) if tokens else SourceLoc(path, 1, 1))
        return _at_next_token(parser, show_bytes(_REWORDED.get(msg, msg)), path)
    file, line, col, msg = m["file"] or path, int(m["line"]), int(m["col"]), m["msg"].strip()
    if not msg.startswith("before: "):
        return InputError(show_bytes(msg), SourceLoc(file, line, col))
    word = show_bytes(msg[len("before: "):])
    where = next((k for k in range(len(tokens) - 1, -1, -1)
                  if tokens[k].lineno == line and tokens[k].column == col), None)
    loc = _end(tokens[where - 1], file) if where else SourceLoc(file, line, col)
    what = f"expected {spelled(expected)}" if expected else "syntax error"
    return InputError(f"{what} before '{word}'", loc)


def _at_next_token(parser: Any, msg: str, path: str) -> InputError:
    """An error that names only the file, located at the parser's next token."""
    try:
        tok = parser._peek()
    except Exception:  # noqa: BLE001 -- best effort, the message is still reported
        tok = None
    if tok is None:
        return InputError(f"{msg} at end of input", SourceLoc(path, 1, 1))
    file = getattr(parser.clex, "filename", None) or path
    return InputError(f"{msg} before '{show_bytes(str(tok.value))}'",
                      SourceLoc(file, int(tok.lineno), int(tok.column or 1)))
