"""``mdp_tile_share`` (``backends/c/mdp_team.h``): the run-time step of a parallel tile loop over
an extent known only at run time, whose static schedule then hands each thread an equal share.

The helper is compiled and called over a grid of extents, tile sizes and teams; for each, the
test checks the size's bounds and the points each thread's contiguous block of tiles holds.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mdpoly.backends.openmp import preamble

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")

_PROGRAM = r"""
#include <stdio.h>
int main(int argc, char **argv) {
  long points = atol(argv[1]), most = atol(argv[2]), least = atol(argv[3]), others = atol(argv[4]);
  int team = atoi(argv[5]);
  printf("%ld\n", mdp_tile_share(points, most, least, others, team));
  return 0;
}
"""

_GRID = r"""
#include <stdio.h>
int main(void) {
  long mosts[] = {1, 6, 12, 64, 512};
  for (long points = 0; points <= 400; points += (points < 130 ? 1 : 7))
    for (int m = 0; m < 5; m++)
      for (long least = 1; least <= 6; least += 5)
        for (long others = 1; others <= 4; others++)
          for (int team = 1; team <= 17; team++)
            printf("%ld %ld %ld %ld %d %ld\n", points, mosts[m], least, others, team,
                   mdp_tile_share(points, mosts[m], least, others, team));
  return 0;
}
"""


def _build(tmp_path: Path, name: str, program: str, openmp: bool = True) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text("#include <stdlib.h>\n" + preamble(("omp.h",)) + program)
    exe = tmp_path / name
    flags = ["-fopenmp"] if openmp else []
    proc = subprocess.run(["cc", "-std=gnu99", "-O2", "-Wall", "-Werror", *flags, str(src), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return exe


def _busiest(points: int, size: int, others: int, team: int) -> int:
    """The most points one thread's static block of the collapsed loop holds: thread t takes
    tiles/team iterations, one more for the first tiles % team threads; iteration k is tile
    k // others of this loop (the others' tiles counted as equal)."""
    tiles = -(-points // size) * others
    q, r = divmod(tiles, team)
    start, most_held = 0, 0
    for t in range(team):
        n = q + (t < r)
        most_held = max(most_held, sum(min(size, points - (k // others) * size) for k in range(start, start + n)))
        start += n
    return most_held


def _bound(points: int, size: int, others: int, team: int) -> int:
    """The tiles of the busiest thread times their size."""
    return -(-(-(-points // size) * others) // team) * size


def _share(exe: Path, *args: int) -> int:
    proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_rows_split_evenly_over_the_team(tmp_path: Path) -> None:
    exe = _build(tmp_path, "share", _PROGRAM)
    assert _share(exe, 148, 64, 1, 1, 2) == 37       # 2 x 74 rows, where tiles of 64 gave 128 and 20
    assert _share(exe, 400, 64, 1, 1, 16) == 25      # 16 tiles of 25, where 7 tiles of 64 left 9 threads idle
    assert _share(exe, 1000, 64, 1, 1, 2) == 63      # 16 tiles: 8 each
    assert _share(exe, 400, 64, 6, 1, 16) == 25      # a register block of 6 rows is a floor only
    assert _share(exe, 40, 64, 6, 1, 16) == 6        # ... which holds where the rows are few
    assert _share(exe, 148, 64, 1, 1, 1) == 64       # one thread: the lowered tile
    assert _share(exe, 0, 64, 1, 1, 4) == 64         # nothing to share
    assert _share(exe, 100, 64, 1, 2, 16) == 13      # 8 tiles x 2 collapsed = 16


def test_every_share_keeps_its_bounds_and_balances_the_threads(tmp_path: Path) -> None:
    exe = _build(tmp_path, "grid", _GRID)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    checked = 0
    for line in out.splitlines():
        points, most, least, others, team, size = map(int, line.split())
        if points <= 0 or team <= 1:
            assert size == most, line
            continue
        assert min(least, most) <= size <= most, line
        # never a busier thread than the lowered tile may give, nor fewer tiles
        assert _busiest(points, size, others, team) <= _bound(points, size, others, team) \
            <= _bound(points, most, others, team), line
        assert -(-points // size) >= -(-points // most), line
        if others == 1 and size > least:
            # one loop, not held up by a register block's floor: an even share, give or take a tile
            assert _busiest(points, size, others, team) <= -(-points // team) + size, line
        checked += 1
    assert checked > 20_000


def test_without_openmp_the_step_is_the_lowered_tile(tmp_path: Path) -> None:
    exe = _build(tmp_path, "plain", _PROGRAM, openmp=False)
    assert _share(exe, 148, 64, 1, 1, 2) == 64
