"""Differential comparison: two program outputs (text), or two arrays -> the first mismatch, or ``None``.

Used by the end-to-end tests (original C program vs. mdpoly's output) and to reject wrong
tuning candidates. Outputs are compared line by line and, within a line, token by token:

- a token that parses as an integer must match exactly;
- a token that parses as a float (``nan``/``inf`` included) must satisfy
  ``|e - a| <= atol + rtol * max(|e|, |a|)``; ``nan`` matches only ``nan``, an infinity only
  the same infinity;
- any other token must match exactly.

With ``rtol = atol = 0`` every value must be printed identically, the right setting for
integer programs and programs whose parallelization only concatenates (``++``).

The tuner compares a candidate's output arrays with the reference's by the same rule
(:func:`compare_arrays`): one notion of "equal enough" for tests and tuning.

.. autoclass:: Mismatch
.. autofunction:: compare_outputs
.. autofunction:: compare_arrays
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

_INT_RE = re.compile(r"[+-]?\d+\Z")


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The first difference between an expected and an actual output.

    :arg line: 1-based line number (in both outputs).
    :arg column: 1-based token index within the line; 0 when whole lines are concerned.
    :arg expected: the expected token or line (``"<end of output>"`` past the end).
    :arg actual: the actual token or line.
    :arg reason: why they differ, in words.
    """

    line: int
    column: int
    expected: str
    actual: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", value {self.column}" if self.column else "")
        return f"{where}: expected {self.expected!r}, got {self.actual!r} ({self.reason})"


def _as_float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _compare_tokens(expected: str, actual: str, rtol: float, atol: float) -> str | None:
    """Return why two tokens differ, or ``None`` when they match."""
    if expected == actual:
        return None
    if _INT_RE.match(expected) and _INT_RE.match(actual):
        return "integers differ"
    e, a = _as_float(expected), _as_float(actual)
    if e is None or a is None:
        return "text differs"
    if math.isnan(e) or math.isnan(a):
        return None if math.isnan(e) and math.isnan(a) else "one value is nan"
    if math.isinf(e) or math.isinf(a):
        return None if e == a else "infinities differ"
    diff = abs(e - a)
    bound = atol + rtol * max(abs(e), abs(a))
    if diff <= bound:
        return None
    return f"|difference| {diff:.3g} > {bound:.3g} (rtol {rtol:g}, atol {atol:g})"


def compare_outputs(expected: str, actual: str, *, rtol: float = 0.0, atol: float = 0.0) -> Mismatch | None:
    """Compare two program outputs; return the first :class:`Mismatch` or ``None``.

    :arg expected: output of the reference (the original program).
    :arg actual: output of the program under test.
    :arg rtol: relative tolerance for floating-point values.
    :arg atol: absolute tolerance for floating-point values.
    """
    exp_lines = expected.splitlines()
    act_lines = actual.splitlines()
    for number, (exp_line, act_line) in enumerate(zip(exp_lines, act_lines), start=1):
        exp_tokens, act_tokens = exp_line.split(), act_line.split()
        if len(exp_tokens) != len(act_tokens):
            return Mismatch(number, 0, exp_line, act_line, "different number of values on the line")
        for column, (e, a) in enumerate(zip(exp_tokens, act_tokens), start=1):
            reason = _compare_tokens(e, a, rtol, atol)
            if reason is not None:
                return Mismatch(number, column, e, a, reason)
    if len(exp_lines) != len(act_lines):
        number = min(len(exp_lines), len(act_lines)) + 1
        exp_line = exp_lines[number - 1] if number <= len(exp_lines) else "<end of output>"
        act_line = act_lines[number - 1] if number <= len(act_lines) else "<end of output>"
        return Mismatch(number, 0, exp_line, act_line,
                        f"expected {len(exp_lines)} lines, got {len(act_lines)}")
    return None


def compare_arrays(name: str, got: np.ndarray, want: np.ndarray, *, rtol: float = 0.0,
                   atol: float = 0.0) -> str | None:
    """Why array ``got`` is not ``want`` (``None`` when equal enough), by the rule of
    :func:`compare_outputs`: integers exactly; floats within ``atol + rtol * max(|e|, |a|)``,
    ``nan`` only against ``nan``, an infinity only against the same infinity.

    :arg name: the array's name, for the message.
    """
    if got.shape != want.shape:
        return f"'{name}' has shape {got.shape}, expected {want.shape}"
    if want.dtype.kind in "fc":
        e = want.astype(np.float64)
        a = got.astype(np.float64)
        both_nan = np.isnan(e) & np.isnan(a)
        same_inf = np.isinf(e) & (e == a)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(e - a) <= atol + rtol * np.maximum(np.abs(e), np.abs(a))
        ok = both_nan | same_inf | (close & np.isfinite(e) & np.isfinite(a))
    else:
        ok = got == want
    if bool(np.all(ok)):
        return None
    bad = int(np.size(ok) - np.count_nonzero(ok))
    first = np.unravel_index(int(np.argmin(ok)), ok.shape) if ok.shape else ()
    return (f"'{name}' differs in {bad} of {ok.size} elements, first at {tuple(int(i) for i in first)}: "
            f"{got[first]!r} vs {want[first]!r}")
