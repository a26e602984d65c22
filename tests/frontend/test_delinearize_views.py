"""``mdpoly.frontend.delinearize``: a flat subscript's monomials -> the view's strides, the
per-dimension subscripts, and the views the front end builds for whole nests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdpoly.frontend import analyze_file
from mdpoly.frontend.delinearize import Delinearizer, Layout, Relayout, choose_layout, split, strides_of
from mdpoly.ir.mdh import Affine
from mdpoly.options import Options

ITS = ["z", "y", "x"]
# x + y*nx + z*nx*ny - nx*ny - 1: the -1 stays in the row, the -nx*ny is the plane before
STENCIL = {("x",): 1, ("nx", "y"): 1, ("nx", "ny", "z"): 1, ("nx", "ny"): -1, (): -1}


def test_strides_by_divisibility_and_offsets_in_the_dimension_they_divide() -> None:
    strides = strides_of(STENCIL, ITS)
    assert strides is not None
    layout = choose_layout(strides)
    assert layout == Layout(((), ("nx",), ("nx", "ny")))
    assert split(STENCIL, layout, ITS) == [{("x",): 1, (): -1}, {("y",): 1}, {("z",): 1, (): -1}]


def test_strides_that_do_not_divide_follow_the_loops_they_multiply() -> None:
    # A[t*kv + h*hs + i] in for t: for h: for i -- kv is the outer stride
    layout = choose_layout(strides_of({("kv", "t"): 1, ("h", "hs"): 1, ("i",): 1}, ["t", "h", "i"]) or {})
    assert layout.strides == ((), ("hs",), ("kv",))
    # for h: for t: for i < hs -- the loop order says hs is the outer stride, but i < hs fills a row of hs
    kv_by_t = strides_of({("dim", "t"): 1, ("h", "hs"): 1, ("i",): 1}, ["h", "t", "i"]) or {}
    assert choose_layout(kv_by_t).strides == ((), ("dim",), ("hs",))
    assert choose_layout(kv_by_t, {(): frozenset({("hs",)})}).strides == ((), ("hs",), ("dim",))
    # B[x*ny*nz + y*nz + z] in for z: for y: for x -- divisibility wins over the loop order
    layout = choose_layout(strides_of({("ny", "nz", "x"): 1, ("nz", "y"): 1, ("z",): 1}, ITS) or {})
    assert layout.strides == ((), ("nz",), ("ny", "nz"))


def test_a_product_of_iterators_has_no_view() -> None:
    assert strides_of({("i", "j"): 1, ("n",): 1}, ["i", "j"]) is None


def test_an_access_needing_more_dimensions_rebuilds_the_model() -> None:
    d = Delinearizer()
    assert d.access("A", {("x",): 1, ("nx", "y"): 1}, ITS, lambda m: None) == (Affine.of({"y": 1}), Affine.of({"x": 1}))
    with pytest.raises(Relayout) as e:
        d.access("A", {("x",): 1, ("nx", "y"): 1, ("nx", "ny", "z"): 1}, ITS, lambda m: None)
    assert e.value.layouts == {"A": Layout(((), ("nx",), ("nx", "ny")))}
    again = Delinearizer(e.value.layouts)
    assert again.access("A", {("x",): 1, ("nx", "y"): 1}, ITS, lambda m: None) == (
        Affine.of(), Affine.of({"y": 1}), Affine.of({"x": 1}))


KERNELS = """
void kv(int T, int H, int hs, int kv, const float *q, const float *A, float *att) {
  for (int t = 0; t < T; t++)
    for (int h = 0; h < H; h++) {
      float s = 0;
      for (int i = 0; i < hs; i++)
        s += q[i] * A[t*kv + h*hs + i];
      att[h*T + t] = s;
    }
}
void narrow(unsigned nx, unsigned ny, int nz, const float *in, float *out) {
  for (int z = 0; z < nz; z++)
    for (int y = 0; y < (int)ny; y++)
      for (int x = 0; x < (int)nx; x++)
        out[x + y*nx + z*nx*ny] = in[x + y*nx + z*nx*ny];
}
void outside(int n, int m, float *A) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      A[i*m + j + m] = 0;
}
void past(int n, int m, float *A) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      A[i*m + j + 1] = A[i*m + j];
}
"""


def _nests(tmp_path: Path) -> dict[int, object]:
    (tmp_path / "k.c").write_text(KERNELS)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return {n.loc.line: n for n in analyze_file("k.c", Options()).nests}
    finally:
        os.chdir(cwd)


def test_views_of_whole_nests(tmp_path: Path) -> None:
    nests = _nests(tmp_path)
    kv = nests[3].mdh  # type: ignore[attr-defined]
    assert kv.buffer("A").shape == ("", "mdp_q_kv_by_hs", "hs") and kv.buffer("att").shape == ("", "T")
    assert [p.c_expr for p in kv.preconditions] == [
        "(long long)hs > 0 && (long long)kv % ((long long)hs) == 0",
        "(long long)hs > 0 && (long long)H <= (long long)kv / ((long long)hs)"]
    # unsigned int arithmetic wraps at 2^32 where the address does not: kept
    assert nests[12].kept.code == "non-affine-subscript"  # type: ignore[attr-defined]
    assert "narrow unsigned type" in nests[12].kept.message  # type: ignore[attr-defined]
    # j + m is row i + 1, column j: within the row for every size, no check
    outside = nests[18].mdh  # type: ignore[attr-defined]
    assert not outside.preconditions and outside.outputs[0].access.index == (Affine.of({"i": 1}, 1), Affine.of({"j": 1}))
    # j + 1 leaves the row at j = m - 1 whatever m is: the view is refuted, the nest kept
    assert nests[23].kept.code == "non-affine-subscript"  # type: ignore[attr-defined]
    assert "j + 1 in [0, m)" in nests[23].kept.message  # type: ignore[attr-defined]
