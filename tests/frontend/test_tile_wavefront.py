"""A tiled wavefront's own wavefronts inside each tile (``mdpoly.frontend.tile_wavefront``).

The inner hyperplane over a tile's local skewed coordinates must grow along every dependence
whose two points lie in one tile, with the fewest inner wavefronts: the 9-point stencil skewed
``j + i`` needs both coordinates (``(1, -1)`` becomes ``(1, 0)``, ``(0, 1)`` stays), a band
whose dependences all run along ``j`` needs only ``j``; a point's code reaches every point of
its tile exactly once (checked by enumerating it in Python).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import islpy as isl

from mdpoly.frontend.tile_wavefront import group_threads, inner_coefficients, inner_shape, tile_points


def _sched(skew: int) -> isl.Map:
    """4x4 tiles of ``0 <= i, j < 12`` skewed ``j + skew*i``, as ``mdpoly.frontend.wavefront`` schedules them."""
    return isl.Map(f"{{ B[x0, x1] -> [w, T0, T1, y0, y1] : y0 = x0 and y1 = x1 and 4T0 <= y0 <= 4T0 + 3 and "
                   f"4T1 <= y1 + {skew} * y0 <= 4T1 + 3 and w = T0 + T1 and 0 <= x0 < 12 and 0 <= x1 < 12 }}")


def test_nine_point_stencil_needs_both_coordinates() -> None:
    deps = isl.Map("{ B[i, j] -> B[i', j'] : 0 <= i, i', j, j' < 12 and "
                   "((i' = i + 1 and -1 <= j' - j <= 1) or (i' = i and j' = j + 1)) }")
    assert inner_coefficients(deps, _sched(1), [(), (1,)], (4, 4), "") == (1, 1)


def test_dependences_along_one_coordinate_need_only_it() -> None:
    deps = isl.Map("{ B[i, j] -> B[i, j'] : 0 <= i, j, j' < 12 and j' = j + 1 }")
    assert inner_coefficients(deps, _sched(0), [(), (0,)], (4, 4), "") == (0, 1)
    assert inner_shape((0, 1), (4, 4)) == (4, 4, 1)   # 4 inner wavefronts of the 4 rows' points
    assert inner_shape((1, 1), (16, 16, 16)[:2]) == (31, 16, 1)
    assert group_threads(16) == 32 and group_threads(256) == 256 and group_threads(4096) == 256


def test_tile_code_reaches_each_point_once(tmp_path: Path) -> None:
    """The C of one tile compiled and run for every tile of a skewed 12x12 band on one thread
    (``mdp_lid = 0``, ``mdp_lsz = 1``, the barrier a no-op): every point of the domain once, and
    each point after its dependences' sources (``(i-1, j+1)`` and ``(i, j-1)``, which the skew
    ``j + i`` makes non-negative)."""
    lines = tile_points((1, 1), (4, 4), [(), (1,)], [1, 1], [("int ", "i"), ("int ", "j")],
                        "mdp_x0 >= 0 && mdp_x0 < 12 && mdp_x1 >= 0 && mdp_x1 < 12", "hit(i, j);", ["T0", "T1"])
    text = "\n".join(lines)
    assert "for (long mdp_s = 0; mdp_s < 7; mdp_s++)" in text and "mdp_barrier();" in text
    prog = "\n".join([
        "#include <stdio.h>",
        "static int seen[12][12], order[12][12], clock_, bad;",
        "static void hit(int i, int j) {",
        "  if (seen[i][j]++) bad = 1;",
        "  if (i > 0 && j < 11 && !seen[i - 1][j + 1]) bad = 2;",
        "  if (j > 0 && !seen[i][j - 1]) bad = 3;",
        "  order[i][j] = clock_++;",
        "}",
        "#define mdp_barrier() ((void)0)",
        "int main(void) {",
        "  const long mdp_lid = 0, mdp_lsz = 1;",
        "  for (long w = 0; w <= 8; w++) for (long T0 = 0; T0 <= 2; T0++) { long T1 = w - T0;",
        *lines,
        "  }",
        "  for (int i = 0; i < 12; i++) for (int j = 0; j < 12; j++) if (seen[i][j] != 1) bad = 4;",
        '  printf("%d\\n", bad);',
        "  return 0;",
        "}",
    ])
    src = tmp_path / "tile.c"
    src.write_text(prog)
    subprocess.run(["cc", "-O1", str(src), "-o", str(tmp_path / "tile")], check=True)
    out = subprocess.run([str(tmp_path / "tile")], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0", out
