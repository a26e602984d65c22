"""Tiled wavefronts (``mdpoly.frontend.wavefront``): the skew search and the isl legality check.

The skew must make every component of every distance non-negative with the smallest factors
(Gauss--Seidel's ``(1, -1)`` needs ``j + i``; ``(1, -2)`` needs ``j + 2i``); the legality check
must reject a tiling that a dependence crosses backwards or between two tiles of one wavefront
(the 9-point stencil tiled without its skew), and accept the same tiling once skewed.
"""

from __future__ import annotations

import islpy as isl
import pytest

from mdpoly.frontend import wavefront as W
from mdpoly.ir.nest import Wavefront


def test_smallest_skew() -> None:
    names = ["i", "j"]
    assert W._skew([(1, 0), (0, 1)], names) == [(), (0,)]
    assert W._skew([(1, -1), (0, 1), (1, 0)], names) == [(), (1,)]
    assert W._skew([(1, -2), (0, 1)], names) == [(), (2,)]
    # (0, 1, -1) needs k + j; (1, -1, 0) and (1, 0, -1) need j + i and k + i
    assert W._skew([(0, 1, -1), (1, -1, 0), (1, 0, -1)], ["t", "j", "k"]) == [(), (1,), (1, 1)]


def test_no_small_skew_is_refused() -> None:
    with pytest.raises(W._Refused, match="no skew"):
        W._skew([(1, -(W.MAX_SKEW + 1))], ["i", "j"])


def _tiling(skew: int) -> isl.Map:
    """(w, T0, T1, x0, x1) of 4x4 tiles of the band ``0 <= i, j < 12`` skewed ``j + skew*i``."""
    return isl.Map(f"{{ B[x0, x1] -> [w, T0, T1, y0, y1] : y0 = x0 and y1 = x1 and 4T0 <= x0 <= 4T0 + 3 and "
                   f"4T1 <= x1 + {skew} * x0 <= 4T1 + 3 and w = T0 + T1 and 0 <= x0 < 12 and 0 <= x1 < 12 }}")


def test_legality_check_rejects_an_unskewed_nine_point_tiling() -> None:
    # the 9-point stencil's distances (1, -1), (1, 0), (1, 1), (0, 1) between band points
    deps = isl.Map("{ B[i, j] -> B[i', j'] : 0 <= i, i', j, j' < 12 and "
                   "((i' = i + 1 and -1 <= j' - j <= 1) or (i' = i and j' = j + 1)) }")
    with pytest.raises(W._Refused, match="could not prove"):
        W._check(deps, _tiling(0), 2, "", ["i", "j"])
    W._check(deps, _tiling(1), 2, "", ["i", "j"])  # j + i: every distance non-negative, legal


def test_wavefront_item_describes_itself() -> None:
    from mdpoly.diagnostics import SourceLoc
    w = Wavefront(("t", "i", "j"), ("t", "i+t", "j+2*t+i"), (16, 16, 16), SourceLoc("in.c", 3, 3), "", "", (),
                  "", (), (), ())
    assert w.describe() == "wavefront t,i,j skew i+t,j+2*t+i tiles 16x16x16"
    assert "skew" not in Wavefront(("i", "j"), ("i", "j"), (64, 64), SourceLoc("in.c", 3, 3), "", "", (), "", (),
                                   (), ()).describe()
