"""Splicing: ``splice(source_text, replacements, path) -> str``, the user's file with nests replaced.

Each ``Replacement`` swaps the lines of one nest's ``SourceSpan`` for a call, keeping the text
before the nest on its first line and after it on its last line; the generated functions go
before the line of the function containing the nest, the preambles (headers) before the first of
those. Everything else is byte-identical. ``#line`` directives after every insertion keep the
user's compiler messages pointing at the original lines; generated code reads as
``<mdpoly generated>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mdpoly.diagnostics import CompilerBug
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


def _line_directive(line: int, path: str) -> str:
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {line} "{escaped}"\n'


def _ensure_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def original_text(lines: list[str], span: SourceSpan) -> str:
    """The nest's text as written, from its ``for`` to its last character (no ``#pragma mdh``)."""
    if span.end_line == span.start.line:
        return lines[span.end_line - 1][span.start.column - 1: span.end_column]
    body = [lines[span.start.line - 1][span.start.column - 1:], *lines[span.start.line: span.end_line - 1],
            lines[span.end_line - 1][: span.end_column]]
    return "".join(body)


def splice(source_text: str, replacements: tuple[Replacement, ...] | list[Replacement], path: str = "<input>") -> str:
    """Return ``source_text`` with every replacement applied (see the module docstring).

    :raises CompilerBug: when two spans overlap or a span lies outside the text.
    """
    if not replacements:
        return source_text
    lines = source_text.splitlines(keepends=True)
    reps = sorted(replacements, key=lambda r: r.span.first_line)
    for a, b in zip(reps, reps[1:]):
        if b.span.first_line <= a.span.end_line:
            raise CompilerBug(f"nests at lines {a.span.first_line} and {b.span.first_line} overlap")
    for r in reps:
        if not 1 <= r.span.first_line <= r.span.end_line <= len(lines) or r.function_line > r.span.first_line:
            raise CompilerBug(f"span {r.span} of function at line {r.function_line} lies outside the file")

    before: dict[int, list[str]] = {}
    first_fn = min(r.function_line for r in reps)
    preambles: list[str] = []
    for r in reps:
        if r.preamble and r.preamble not in preambles:
            preambles.append(r.preamble)
    if preambles:
        before.setdefault(first_fn, []).extend(_ensure_newline(p) for p in preambles)
    for r in reps:
        before.setdefault(r.function_line, []).append(_ensure_newline(r.definition))
    starts = {r.span.first_line: r for r in reps}

    out: list[str] = []
    n = 1
    while n <= len(lines):
        if n in before:
            out.append(_line_directive(1, GENERATED_FILE))
            out.extend(before[n])
            out.append(_line_directive(n, path))
        r = starts.get(n)
        if r is None:
            out.append(lines[n - 1])
            n += 1
            continue
        sp = r.span
        first = lines[sp.first_line - 1]
        if sp.first_line == sp.start.line:
            prefix = first[: sp.start.column - 1]
        else:
            prefix = first[: len(first) - len(first.lstrip(" \t"))]
        last = lines[sp.end_line - 1]
        suffix = last[sp.end_column:]
        call = r.call
        if ORIGINAL_NEST in call:
            nest = _line_directive(sp.start.line, path) + " " * (sp.start.column - 1) + original_text(lines, sp)
            call = re.sub(r"[ \t]*" + re.escape(ORIGINAL_NEST), lambda _m: nest, call)
        out.append(_ensure_newline(prefix + call + suffix))
        n = sp.end_line + 1
        if (sp.end_line > sp.first_line or "\n" in call) and n <= len(lines):
            out.append(_line_directive(n, path))
    text = "".join(out)
    if not source_text.endswith("\n") and text.endswith("\n") and not lines[-1].endswith("\n"):
        last_rep = reps[-1]
        if last_rep.span.end_line == len(lines):
            text = text[:-1]
    return text
