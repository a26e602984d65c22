"""Square roots made provably non-negative by a read-only scalar (``mdpoly.frontend.sqrt_domains``):
which scalars the generated code's promise names, and when it names none."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdpoly.frontend import analyze_file
from mdpoly.options import Options


def needs(tmp_path: Path, body: str, params: str = "float s, double e") -> tuple[str, ...]:
    path = tmp_path / "k.c"
    path.write_text(f"#include <math.h>\nvoid k(int n, {params}, const float *x, const float *y, float *r)\n"
                    f"{{\n  for (int i = 0; i < n; i++)\n    {body}\n}}\n")
    (nest,) = analyze_file(str(path), Options()).nests
    assert nest.mdh is not None, nest.kept
    return nest.nonnegative


@pytest.mark.parametrize("body, expected", [
    ("r[i] = 1.0f / sqrtf(x[i] * x[i] + y[i] * y[i] + s);", ("s",)),       # squares plus a scalar
    ("r[i] = sqrtf((x[i] - y[i]) * (x[i] - y[i]) * s + 0.5f);", ("s",)),   # a product with the scalar
    ("r[i] = (float) sqrt(x[i] * x[i] / e + s * s);", ("e",)),            # a quotient; s * s is a square
    ("r[i] = sqrtf(x[i] * x[i] + 1e-6f);", ()),                           # the compiler proves it alone
    ("r[i] = sqrtf(x[i] + s);", ()),                                      # x[i]: any sign, no promise helps
    ("r[i] = sqrtf(x[i] * x[i] - s);", ()),                               # a difference
    ("r[i] = sqrtf(x[i] * x[i] + s) + sqrtf(y[i]);", ()),                 # one unprovable root: no copy
    ("r[i] = x[i] * s;", ()),                                             # no square root
])
def test_the_scalars_a_promise_names(tmp_path: Path, body: str, expected: tuple[str, ...]) -> None:
    assert needs(tmp_path, body) == expected


def test_integer_scalars_are_not_promised(tmp_path: Path) -> None:
    assert needs(tmp_path, "r[i] = sqrtf(x[i] * x[i] + m);", "int m, double e") == ()


def test_a_square_converted_to_double(tmp_path: Path) -> None:
    # C converts the right operand too: ((double) d) * d is a square
    assert needs(tmp_path, "r[i] = (float) sqrt((double)(x[i] - y[i]) * (x[i] - y[i]) + e);") == ("e",)
    assert needs(tmp_path, "r[i] = (float) sqrt((double)(x[i] - y[i]) * (x[i] + y[i]) + e);") == ()
