"""A gather's subscript may read an array the loop writes (``px[i] = lut[px[i]]``) where no read
of it takes its value from a write of the loop (``Scop.index_arrays_written``)."""

from __future__ import annotations

from pathlib import Path

from mdpoly.frontend.parse import parse_c
from mdpoly.frontend.privatize import privatize_nest
from mdpoly.frontend.scop import find_candidates
from mdpoly.ir.nest import PrivateLoop
from mdpoly.options import Options


def plain(tmp_path: Path, body: str) -> PrivateLoop | str | None:
    path = tmp_path / "k.c"
    path.write_text(f"void k(int n, int *a, const int *b, const int *t, int *y)\n{{\n  for (int i = 0; i < n; i++) {{\n"
                    f"    {body}\n  }}\n}}\n")
    parsed = parse_c(str(path), Options())
    (cand,) = find_candidates(parsed, Options())
    return privatize_nest(parsed, cand, plain=True)


def test_a_table_applied_in_place_is_inspected(tmp_path: Path) -> None:
    loop = plain(tmp_path, "a[i] = t[a[i]];")
    assert isinstance(loop, PrivateLoop) and "mdp_ins_lo_t" in loop.inspector and "a[i]" in loop.inspector


def test_an_index_written_before_it_is_read_refuses(tmp_path: Path) -> None:
    why = plain(tmp_path, "a[i] = b[i] & 255; y[i] = t[a[i]];")
    assert isinstance(why, str) and "reads 'a', whose elements the nest writes before reading them" in why


def test_an_index_another_iteration_writes_refuses(tmp_path: Path) -> None:
    assert not isinstance(plain(tmp_path, "a[i] = t[a[i + 1] & 255];"), PrivateLoop)
