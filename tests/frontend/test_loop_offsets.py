"""Loop conditions with the iterator offset by a constant (``t + 1 < n``, ``i + 4 <= n``, ``2 + i < n``):
read as ``t < n - 1`` where the iterator and the bound are signed; with an unsigned one the two
tests differ (``t + 1`` wraps where ``n - 1`` does not), so the loop keeps its reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdpoly.frontend import analyze_file
from mdpoly.options import Options


def analysed(tmp_path: Path, header: str, decls: str = "int n") -> tuple[bool, str | None]:
    path = tmp_path / "k.c"
    path.write_text(f"void k({decls}, float *x, const float *y)\n{{\n  {header}\n    x[t] = 2.0f * y[t];\n}}\n")
    (nest,) = analyze_file(str(path), Options()).nests
    return nest.mdh is not None, nest.kept.code if nest.kept is not None else None


@pytest.mark.parametrize("header", [
    "for (int t = 0; t + 1 < n; t += 2)",
    "for (int t = 0; t + 4 <= n; t++)",
    "for (int t = 0; 2 + t < n; t++)",
    "for (int t = n - 1; t - 1 >= 0; t--)",
    "for (long t = 0; n > t + 3; t++)",
])
def test_signed_offsets_are_moved_to_the_bound(tmp_path: Path, header: str) -> None:
    assert analysed(tmp_path, header) == (True, None)


@pytest.mark.parametrize("header, decls", [
    ("for (unsigned t = 0; t + 1 < n; t++)", "unsigned n"),
    ("for (int t = 0; t + 1 < n; t++)", "unsigned n"),
    ("for (int t = 0; t + k < n; t++)", "int n, int k"),
])
def test_unsigned_or_variable_offsets_keep_the_loop(tmp_path: Path, header: str, decls: str) -> None:
    transformed, code = analysed(tmp_path, header, decls)
    assert not transformed and code == "non-affine-bound", code
