"""Splicing: ``splice(source_text, replacements, path) -> str``, the user's file with nests replaced.

Each ``Replacement`` swaps the characters of one nest's ``SourceSpan`` (from its ``for``, or its
``#pragma mdh`` line, to its last ``}`` or ``;``) for a call, so several nests on one line are
each replaced and the text around them stays; the generated functions go
before the line of the function containing the nest, the preambles (headers) before the first of
those. Everything else is byte-identical. ``#line`` directives after every insertion keep the
user's compiler messages pointing at the original lines; generated code reads as
``<mdpoly generated>``. A ``ClauseInsert`` adds text inside one line (a clause on a user's
directive, ``mdpoly.frontend.user_teams``); its preamble joins the others.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from mdpoly.diagnostics import CompilerBug
from mdpoly.frontend.nest_span import c_lines
from mdpoly.ir.nest import ORIGINAL_NEST, SourceSpan

GENERATED_FILE = "<mdpoly generated>"


@dataclass(frozen=True, slots=True)
class Replacement:
    """One transformed nest: where it is, what replaces it, and what goes before its function."""

    span: SourceSpan
    function_line: int
    call: str
    definition: str
    preamble: str = ""


_IDENT = re.compile(r"[A-Za-z_]\w*")


def source_identifiers(source_text: str) -> set[str]:
    """Every identifier-like word of the file (declarations, macros, and words in comments and
    strings too): generated function names are picked outside this set, so they cannot collide
    with anything the translation unit names."""
    return set(_IDENT.findall(source_text))


def _line_directive(line: int, path: str) -> str:
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {line} "{escaped}"\n'


def _verbatim(text: str) -> Callable[[re.Match[str]], str]:
    """A ``re.sub`` replacement that inserts ``text`` as is (a replacement string would expand its backslashes)."""
    return lambda _m: text


def _ensure_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def original_text(lines: list[str], span: SourceSpan) -> str:
    """The nest's text as written, from its ``for`` to its last character (no ``#pragma mdh``)."""
    if span.end_line == span.start.line:
        return lines[span.end_line - 1][span.start.column - 1: span.end_column]
    body = [lines[span.start.line - 1][span.start.column - 1:], *lines[span.start.line: span.end_line - 1],
            lines[span.end_line - 1][: span.end_column]]
    return "".join(body)


def _line_starts(text: str) -> list[int]:
    """Offsets of the first character of every line (1-based lines at index ``line - 1``)."""
    out = [0]
    for k, ch in enumerate(text):
        if ch == "\n":
            out.append(k + 1)
    return out


def _start_offset(lines: list[str], starts: list[int], span: SourceSpan) -> int:
    """Where a replacement begins: the nest's ``for``, or the indentation's end of its pragma line."""
    if span.first_line == span.start.line:
        return starts[span.start.line - 1] + span.start.column - 1
    first = lines[span.first_line - 1]
    return starts[span.first_line - 1] + len(first) - len(first.lstrip(" \t"))


_BEFORE_SUBSTATEMENT = re.compile(r"(?:\)|\belse|\bdo)\s*$")


def _is_substatement(source_text: str, begin: int) -> bool:
    """Whether the statement at ``begin`` is the unbraced body of an ``if``/``else``/``while``/
    ``for``/``do`` (what precedes it, comments aside, ends a header or is ``else``/``do``)."""
    before = re.sub(r"/\*.*?\*/|//[^\n]*", " ", source_text[max(0, begin - 2000):begin], flags=re.DOTALL)
    return bool(_BEFORE_SUBSTATEMENT.search(before))


@dataclass(frozen=True, slots=True)
class ClauseInsert:
    """Text added inside one line of the user's code (a clause on a user's directive), with the
    preamble it needs before the function holding it."""

    line: int
    column: int          # 0-based offset on the line
    text: str
    function_line: int
    preamble: str = ""


def splice(source_text: str, replacements: tuple[Replacement, ...] | list[Replacement], path: str = "<input>",
           clauses: tuple[ClauseInsert, ...] = ()) -> str:
    """Return ``source_text`` with every replacement and clause applied (see the module docstring).

    Spans are exact character ranges, so several nests on one line are each replaced.

    :raises CompilerBug: when two spans overlap or a span (or clause) lies outside the text.
    """
    if not replacements and not clauses:
        return source_text
    lines = c_lines(source_text)
    starts = _line_starts(source_text)
    for c in clauses:
        if not 1 <= c.function_line <= c.line <= len(lines) or not 0 <= c.column <= len(lines[c.line - 1].rstrip("\r\n")):
            raise CompilerBug(f"clause at {c.line}:{c.column} of function at line {c.function_line} lies outside the file")
    for r in replacements:
        sp = r.span
        if (not 1 <= sp.first_line <= sp.start.line <= sp.end_line <= len(lines)
                or r.function_line > sp.first_line or sp.end_column > len(lines[sp.end_line - 1])):
            raise CompilerBug(f"span {sp} of function at line {r.function_line} lies outside the file")
    spans = sorted(((_start_offset(lines, starts, r.span), starts[r.span.end_line - 1] + r.span.end_column, r)
                    for r in replacements), key=lambda t: t[0])
    for (_, a_end, a), (b_start, _, b) in itertools.pairwise(spans):
        if b_start < a_end:
            raise CompilerBug(f"nests at {a.span.start.line}:{a.span.start.column} and "
                              f"{b.span.start.line}:{b.span.start.column} overlap")

    # insertions at line starts: generated functions (and preambles) before the line of the function
    # holding a nest; a #line directive after the line where a multi-line replacement ends
    inserts: dict[int, list[str]] = {}
    first_fn = min([r.function_line for r in replacements] + [c.function_line for c in clauses])
    preambles: list[str] = []
    for r in [*replacements, *clauses]:
        if r.preamble and r.preamble not in preambles:
            preambles.append(r.preamble)
    defs: dict[int, list[str]] = {}
    if preambles:
        defs.setdefault(first_fn, []).extend(_ensure_newline(p) for p in preambles)
    for r in replacements:
        defs.setdefault(r.function_line, []).append(_ensure_newline(r.definition))
    for line, texts in defs.items():
        inserts.setdefault(starts[line - 1], []).append(
            _line_directive(1, GENERATED_FILE) + "".join(texts) + _line_directive(line, path))

    for c in clauses:   # inside a line: no #line needed
        inserts.setdefault(starts[c.line - 1] + c.column, []).append(c.text)

    out: list[str] = []
    pos = 0
    resync: set[int] = set()

    def copy_to(end: int) -> None:
        nonlocal pos
        for at in sorted(k for k in set(inserts) | resync if pos <= k <= end):
            out.append(source_text[pos:at])
            pos = at
            if at in resync and at < len(source_text):
                resync.discard(at)
                line = source_text.count("\n", 0, at) + 1
                out.append(_line_directive(line, path))
            out.extend(inserts.pop(at, []))
        out.append(source_text[pos:end])
        pos = end

    for begin, end, r in spans:
        copy_to(begin)
        sp = r.span
        call = r.call
        if ORIGINAL_NEST in call:
            nest = _line_directive(sp.start.line, path) + " " * (sp.start.column - 1) + original_text(lines, sp)
            call = re.sub(r"[ \t]*" + re.escape(ORIGINAL_NEST), _verbatim(nest), call)
        if _is_substatement(source_text, begin):   # ``if (c) for ...``: the call may be several statements
            call = "{ " + call + (" }" if not call.endswith("\n") else "}\n")
        out.append(call)
        pos = end
        if sp.end_line > sp.first_line or "\n" in call:
            nl = source_text.find("\n", end)
            if nl >= 0:
                resync.add(nl + 1)
    copy_to(len(source_text))
    text = "".join(out)
    if text.endswith(("\n", "\r")) or not source_text.endswith("\n"):
        return text
    return text + "\n"
