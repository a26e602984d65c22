"""Host code of a scheduled nest: ``ScheduleItem``s + generated calls -> the C text replacing the nest.

Host loops keep their header as written, statements their text; a computation becomes its
generated call (``calls`` maps ``id(computation)`` to it) or, when it was kept, its own text.
"""

from __future__ import annotations

from mdpoly.ir.nest import Computation, HostLoop, HostStatement, ScheduleItem

_INDENT = "  "


def render_schedule(items: tuple[ScheduleItem, ...], calls: dict[int, str]) -> str:
    """The schedule as one C compound statement (``{ ... }``), without a trailing newline."""
    lines = ["{"]
    _render(items, calls, 1, lines)
    lines.append("}")
    return "\n".join(lines)


def _block(text: str, depth: int) -> list[str]:
    return [(_INDENT * depth + ln) if ln.strip() and not ln.startswith("#") else ln
            for ln in text.rstrip("\n").splitlines()]


def _render(items: tuple[ScheduleItem, ...], calls: dict[int, str], depth: int, lines: list[str]) -> None:
    for it in items:
        if isinstance(it, HostLoop):
            lines.append(_INDENT * depth + it.header + " {")
            _render(it.body, calls, depth + 1, lines)
            lines.append(_INDENT * depth + "}")
        elif isinstance(it, HostStatement):
            lines.extend(_block(it.text, depth))
        elif isinstance(it, Computation):
            call = calls.get(id(it))
            lines.extend(_block(call if call is not None else it.nest.reference_c, depth))
