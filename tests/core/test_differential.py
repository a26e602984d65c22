"""Tests for mdpoly.differential.compare_outputs."""

from __future__ import annotations

from mdpoly.differential import compare_outputs


def test_identical_outputs_match() -> None:
    assert compare_outputs("1\n2.5\nabc\n", "1\n2.5\nabc\n") is None


def test_integers_are_exact_even_with_tolerance() -> None:
    mismatch = compare_outputs("10\n20\n", "10\n21\n", rtol=0.5, atol=5)
    assert mismatch is not None and mismatch.line == 2 and mismatch.reason == "integers differ"


def test_floats_within_tolerance_match() -> None:
    assert compare_outputs("1.00000\n", "1.00001\n", rtol=1e-4) is None
    assert compare_outputs("0\n", "1e-7\n", atol=1e-6) is None


def test_floats_outside_tolerance_report_first_mismatch() -> None:
    mismatch = compare_outputs("1.0 2.0\n3.0 4.0\n", "1.0 2.0\n3.0 4.1\n", rtol=1e-3)
    assert mismatch is not None
    assert (mismatch.line, mismatch.column, mismatch.expected, mismatch.actual) == (2, 2, "4.0", "4.1")
    assert "line 2, value 2" in str(mismatch)


def test_exact_mode_rejects_last_digit_change() -> None:
    assert compare_outputs("0.100000001\n", "0.100000002\n") is not None


def test_nan_and_inf() -> None:
    assert compare_outputs("nan\ninf\n-inf\n", "-nan\ninf\n-inf\n") is None
    assert compare_outputs("inf\n", "-inf\n", rtol=1.0) is not None
    assert compare_outputs("nan\n", "1.0\n", rtol=1.0) is not None


def test_length_difference_is_a_mismatch() -> None:
    mismatch = compare_outputs("1\n2\n3\n", "1\n2\n")
    assert mismatch is not None and mismatch.line == 3 and mismatch.actual == "<end of output>"


def test_text_tokens_are_exact() -> None:
    assert compare_outputs("sum = 3\n", "sum: 3\n") is not None


def test_compare_arrays_uses_the_output_rule() -> None:
    import numpy as np

    from mdpoly.differential import compare_arrays
    want = np.array([1.0, float("nan"), float("inf"), 100.0], dtype=np.float32)
    assert compare_arrays("x", want.copy(), want) is None
    assert compare_arrays("x", np.array([1.0, float("nan"), float("inf"), 100.5], dtype=np.float32), want,
                          rtol=1e-2) is None
    why = compare_arrays("x", np.array([1.0, 0.0, float("inf"), 100.0], dtype=np.float32), want, rtol=1e-2)
    assert why is not None and "first at (1,)" in why            # nan matches only nan
    why = compare_arrays("x", np.array([1.0, float("nan"), float("-inf"), 100.0], dtype=np.float32), want, rtol=1)
    assert why is not None and "first at (2,)" in why            # an infinity only the same one
    assert compare_arrays("n", np.array([3, 4]), np.array([3, 5])) is not None   # integers exactly
    assert "shape" in str(compare_arrays("n", np.zeros(2), np.zeros(3)))
