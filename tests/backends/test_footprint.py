"""``mdpoly.backends.footprint``: the box of elements a host statement touches, and the copies a
data region puts around host statements and loops of them (``mdpoly.backends.residency``).

The bounds are C text; each test evaluates them at chosen values of the names they read and
compares with the subscripts the statement reaches when run (enumerated here in Python).
"""

from __future__ import annotations

import re

import pytest

from mdpoly.backends.footprint import footprints
from mdpoly.backends.residency import _ordinals, _plan_syncs, _with_syncs
from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.nest import HostLoop, HostStatement
from mdpoly.ir.residency import DataRegion, Footprint, ResidentArray


def _value(text: str, env: dict[str, int]) -> int:
    py = re.sub(r"(\d+)LL\b", r"\1", text.replace("(long long)", ""))
    return int(eval(py, {}, dict(env)))   # our own generated arithmetic


def _box(fp: Footprint, env: dict[str, int], written: bool | None = None) -> list[tuple[int, int]]:
    """The bounding box (per dimension: lowest, highest) of ``fp``'s accesses at ``env``."""
    boxes = [b for b in fp.boxes if written is None or b.written == written]
    rank = len(boxes[0].low)
    return [(min(_value(b.low[d], env) for b in boxes), max(_value(b.high[d], env) for b in boxes))
            for d in range(rank)]


def test_one_element_read_and_written() -> None:
    fp = footprints("A[k][k] = sqrt(A[k][k]);", ("A",))["A"]
    assert _box(fp, {"k": 7}) == [(7, 7), (7, 7)]
    assert _box(fp, {"k": 7}, written=True) == [(7, 7), (7, 7)]


def test_row_loop_ranges_over_its_bounds() -> None:
    fp = footprints("for (j = k + 1; j < n; j++)\n  A[k][j] /= d;", ("A",))["A"]
    assert _box(fp, {"k": 3, "n": 10}) == [(3, 3), (4, 9)]


def test_triangular_nest_is_bounded_innermost_first() -> None:
    text = "for (j = 0; j < i; j++) {\n  for (k = 0; k < j; k++)\n    A[i][j] -= A[i][k] * A[k][j];\n" \
           "  A[i][j] /= A[j][j];\n}"
    fp = footprints(text, ("A",))["A"]
    i = 6
    touched = [(i, j) for j in range(i) for k in range(j)] + [(i, k) for j in range(i) for k in range(j)]
    touched += [(k, j) for j in range(i) for k in range(j)] + [(j, j) for j in range(i)] + [(i, j) for j in range(i)]
    box = _box(fp, {"i": i})
    for r, c in touched:
        assert box[0][0] <= r <= box[0][1] and box[1][0] <= c <= box[1][1]
    assert box == [(0, i), (0, i - 1)]
    assert _box(fp, {"i": i}, written=True) == [(i, i), (0, i - 1)]


@pytest.mark.parametrize("text, low, high", [
    ("for (j = n - 1; j >= 1; j--) A[j] = A[j - 1];", 0, 9),
    ("for (int j = 2; j <= n; j += 3) A[j] = 0;", 2, 10),
    ("for (j = n; j > 0; --j) B[j] = A[j + t];", 4, 13),
])
def test_loop_forms(text: str, low: int, high: int) -> None:
    fp = footprints(text, ("A",))["A"]
    assert _box(fp, {"n": 10, "t": 3}) == [(low, high)]


@pytest.mark.parametrize("text", [
    "A[B[i]] = 0;",                          # a subscript that is not affine
    "A[i * n] = 0;",
    "p = &A[i]; *p = 1;",                    # an address taken
    "i = i + 1; A[i] = 0;",                  # a subscript the statement changes
    "for (j = 0; j < n; j += s) A[j] = 0;",  # a step that is no constant
    "for (j = 0; j * j < n; j++) A[j] = 0;",  # a condition of another form
    "while (j < n) { A[j] = 0; j++; }",
    "g(A);",                                  # the array itself, not an element
])
def test_no_footprint_copies_whole(text: str) -> None:
    assert "A" not in footprints(text, ("A",))


def test_other_arrays_keep_theirs() -> None:
    prints = footprints("A[B[i]] = C[i + 1];", ("A", "C"))
    assert "A" not in prints and _box(prints["C"], {"i": 4}) == [(5, 5)]


def test_loop_of_host_statements_synced_once_around_it() -> None:
    """A loop of host statements inside the region's loop gets one copy before and after it over
    its whole range, not one per iteration."""
    loc = SourceLoc("f.c", 5, 5)
    inner = HostLoop("j", "for (j = k + 1; j < n; j++)", loc, "kept", (HostStatement("A[k][j] /= d;", SourceLoc("f.c", 6, 7)),))
    arrays = (ResidentArray("A", "double", ("n * n",), True, True),)
    syncs = _plan_syncs((inner,), arrays, set(), {}, _ordinals((inner,)))
    assert len(syncs) == 1 and syncs[0].loc == loc
    assert syncs[0].download == ("A",) and syncs[0].upload == ("A",)
    fp = syncs[0].footprint("A")
    assert fp is not None and _box(fp, {"k": 2, "n": 8}) == [(2, 2), (3, 7)]
    region = DataRegion(SourceLoc("f.c", 3, 3), "k", arrays, (), syncs=tuple(syncs))
    items = _with_syncs((inner,), region, "opencl", _ordinals((inner,)))
    assert [type(it).__name__ for it in items] == ["HostStatement", "HostLoop", "HostStatement"]
    assert isinstance(items[0], HostStatement) and "mdp_cl_resident_download_span((const void *)A);" in items[0].text
    assert isinstance(items[2], HostStatement) and "mdp_cl_resident_upload_span((const void *)A);" in items[2].text


def test_array_the_device_never_writes_is_not_copied_back() -> None:
    st = HostStatement("A[k] = B[k] + 1;", SourceLoc("f.c", 7, 5))
    arrays = (ResidentArray("A", "double", ("n",), True, False), ResidentArray("B", "double", ("n",), True, True))
    (sync,) = _plan_syncs((st,), arrays, set(), {}, _ordinals((st,)))
    assert sync.download == ("B",) and sync.upload == ("A",)
