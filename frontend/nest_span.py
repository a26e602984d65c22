"""Where a loop nest ends in the original text: source text + ``for`` position -> ``SourceSpan``.

pycparser gives start coordinates only, and its coordinates come from the preprocessed text.
This module scans the user's original text with a small lexer-aware scanner (comments, string
and character literals, preprocessor lines) to find the matching end of a ``for`` statement:
its header parentheses, then a braced body or one statement (recursively for unbraced
``for``/``if``/``while``/``do``).
"""

from __future__ import annotations

import re

from mdpoly.diagnostics import InputError, SourceLoc
from mdpoly.ir.nest import SourceSpan


class _Scanner:
    """Iterates over the significant characters of C text, skipping comments and literals."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def skip_trivia(self) -> None:
        t = self.text
        while self.pos < len(t):
            c = t[self.pos]
            if c in " \t\r\n\f\v":
                self.pos += 1
            elif t.startswith("//", self.pos):
                nl = t.find("\n", self.pos)
                self.pos = len(t) if nl < 0 else nl + 1
            elif t.startswith("/*", self.pos):
                end = t.find("*/", self.pos + 2)
                self.pos = len(t) if end < 0 else end + 2
            elif c == "#" and self._at_line_start():
                self._skip_directive()
            elif c == "\\" and t.startswith("\\\n", self.pos):
                self.pos += 2
            else:
                return

    def _at_line_start(self) -> bool:
        k = self.pos - 1
        while k >= 0 and self.text[k] in " \t":
            k -= 1
        return k < 0 or self.text[k] == "\n"

    def _skip_directive(self) -> None:
        t = self.text
        while self.pos < len(t) and t[self.pos] != "\n":
            if t.startswith("\\\n", self.pos):
                self.pos += 2
            elif t.startswith("/*", self.pos):
                end = t.find("*/", self.pos + 2)
                self.pos = len(t) if end < 0 else end + 2
            else:
                self.pos += 1

    def peek_word(self) -> str:
        self.skip_trivia()
        m = re.compile(r"[A-Za-z_]\w*").match(self.text, self.pos)
        return m.group(0) if m else ""

    def next_token(self) -> str:
        """Advance over one token (a word, a literal, or one punctuation character)."""
        self.skip_trivia()
        t = self.text
        if self.pos >= len(t):
            return ""
        c = t[self.pos]
        if c in "\"'":
            k = self.pos + 1
            while k < len(t) and t[k] != c:
                k += 2 if t[k] == "\\" else 1
            self.pos = min(k + 1, len(t))
            return c
        m = re.compile(r"\w+").match(t, self.pos)
        if m:
            self.pos = m.end()
            return m.group(0)
        self.pos += 1
        return c

    def skip_balanced(self, open_: str, close: str) -> None:
        """At ``open_``: advance past its matching ``close``."""
        depth = 0
        while True:
            tok = self.next_token()
            if tok == "":
                raise ValueError("unbalanced")
            if tok == open_:
                depth += 1
            elif tok == close:
                depth -= 1
                if depth == 0:
                    return

    def skip_statement(self) -> None:
        """Advance past one C statement, ending after its ``;`` or ``}``."""
        word = self.peek_word()
        if word in ("for", "while", "switch"):
            self.next_token()
            self._expect_paren()
            self.skip_statement()
        elif word == "if":
            self.next_token()
            self._expect_paren()
            self.skip_statement()
            save = self.pos
            if self.peek_word() == "else":
                self.next_token()
                self.skip_statement()
            else:
                self.pos = save
        elif word == "do":
            self.next_token()
            self.skip_statement()
            self.next_token()  # while
            self._expect_paren()
            self._expect(";")
        else:
            self.skip_trivia()
            if self.text.startswith("{", self.pos):
                self.skip_balanced("{", "}")
                return
            depth = 0
            while True:
                tok = self.next_token()
                if tok == "":
                    raise ValueError("unterminated statement")
                if tok in "([{":
                    depth += 1
                elif tok in ")]}":
                    depth -= 1
                elif tok == ";" and depth == 0:
                    return

    def _expect_paren(self) -> None:
        self.skip_trivia()
        if not self.text.startswith("(", self.pos):
            raise ValueError("expected '('")
        self.skip_balanced("(", ")")

    def _expect(self, ch: str) -> None:
        if self.next_token() != ch:
            raise ValueError(f"expected '{ch}'")


def c_lines(text: str) -> list[str]:
    """``text`` split after each newline only, ends kept: C (and cpp's line numbers) count ``\\n``
    alone, while ``str.splitlines`` also breaks at form feeds and other separators."""
    if not text:
        return []
    parts = text.split("\n")
    return [ln + "\n" for ln in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _offset(lines: list[str], line: int, col: int) -> int:
    return sum(len(x) for x in lines[: line - 1]) + col - 1


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def find_for(source: str, loc: SourceLoc) -> int:
    """Offset of the ``for`` keyword pycparser placed at ``loc`` (columns may shift under cpp)."""
    lines = c_lines(source)
    if not 1 <= loc.line <= len(lines):
        raise InputError("loop nest location is outside the source file", loc)
    text = lines[loc.line - 1]
    hits = [m.start() for m in re.finditer(r"\bfor\b", text)]
    if not hits:   # a loop written as 'while' that the front end counts (``bumped_pointers``)
        hits = [m.start() for m in re.finditer(r"\bwhile\b", text)]
    if not hits:
        raise InputError("cannot find the 'for' keyword of this loop nest in the source", loc)
    best = min(hits, key=lambda c: abs(c - (loc.column - 1)))
    return _offset(lines, loc.line, best + 1)


def nest_span(source: str, loc: SourceLoc, pragma_line: int | None = None) -> SourceSpan:
    """The span of the ``for`` statement at ``loc`` in ``source`` (the original text).

    ``pragma_line`` is the line of a ``#pragma mdh`` directly preceding the nest; it becomes
    ``first_line``. The end is the position of the statement's last character (``}`` or ``;``).
    """
    start = find_for(source, loc)
    sc = _Scanner(source, start)
    try:
        sc.skip_statement()
    except ValueError as e:
        raise InputError(f"cannot find the end of this loop nest in the source ({e})", loc) from e
    end_line, end_col = _line_col(source, sc.pos - 1)
    s_line, s_col = _line_col(source, start)
    return SourceSpan(SourceLoc(loc.file, s_line, s_col), end_line, end_col,
                      pragma_line if pragma_line is not None else s_line)


_SPEC_WORDS = frozenset({
    "static", "inline", "__inline", "__inline__", "extern", "const", "volatile", "void", "char", "short",
    "int", "long", "float", "double", "signed", "unsigned", "_Bool", "struct", "union", "enum", "restrict",
    "__attribute__", "__attribute", "_Noreturn", "__restrict", "__restrict__", "__extension__",
})


def function_start_line(source: str, type_loc: SourceLoc) -> int:
    """Line of the first declaration-specifier token of a function definition.

    ``type_loc`` is where pycparser placed the return type's specifier (``float`` in
    ``static inline float``); walk back over storage classes, function specifiers, qualifiers
    and ``__attribute__((...))`` until anything else ends the walk.
    """
    lines = c_lines(source)
    if not 1 <= type_loc.line <= len(lines):
        return type_loc.line
    first = _offset(lines, type_loc.line, min(type_loc.column, len(lines[type_loc.line - 1])) or 1)
    k = first - 1
    while k >= 0:
        c = source[k]
        if c in " \t\r\n":
            k -= 1
            continue
        if c == ")":  # __attribute__((...))
            depth = 0
            while k >= 0:
                if source[k] == ")":
                    depth += 1
                elif source[k] == "(":
                    depth -= 1
                    if depth == 0:
                        break
                k -= 1
            k -= 1
            continue
        if c.isalnum() or c == "_":
            j = k
            while j >= 0 and (source[j].isalnum() or source[j] == "_"):
                j -= 1
            if source[j + 1: k + 1] not in _SPEC_WORDS:
                break
            first = j + 1
            k = j
            continue
        break
    return _line_col(source, first)[0]
