"""Parallel loops around bodies as written, on the GPU targets, over flat pointers without a
declared size (``img[py*w + px]``, ``out[y*w + x]``): the device copy holds as many elements as
the loop reaches (``mdpoly.frontend.alias.first_extents``: the largest first subscript plus one,
rows times the row length for a pointer viewed as rows), so such loops are no longer kept with
"no declared size in every dimension". An escape-time loop per pixel (``while``) runs one device
thread per pixel; the image must equal the sequential original's on PoCL, forced onto the device
(``gpu_min_speedup=0``), for sizes down to one pixel.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from e2e_harness import build_c, child_env, mdpoly_available, mdpoly_command, run_step
from test_opencl_examples import build_opencl, needs_opencl

from mdpoly.differential import compare_outputs

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
static void mandel(int w, int h, int maxit, float x0, float y0, float dx, unsigned short *img)
{
    for (int py = 0; py < h; py++)
        for (int px = 0; px < w; px++) {
            float cr = x0 + px * dx, ci = y0 + py * dx, zr = 0.0f, zi = 0.0f;
            int it = 0;
            while (zr * zr + zi * zi < 4.0f && it < maxit) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                it++;
            }
            img[py * w + px] = (unsigned short)it;
        }
}
int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = atoi(argv[2]);
    unsigned short *img = malloc(sizeof *img * (size_t)w * h + 1);
    mandel(w, h, 100, -2.2f, -1.2f, 3.2f / w, img);
    long sum = 0;
    for (long i = 0; i < (long)w * h; i++) sum += img[i] * (i % 7 + 1);
    printf("%ld %d %d\n", sum, img[0], img[(long)w * h - 1]);
    return 0;
}
"""


@needs_opencl
def test_escape_time_image_on_the_device_matches(tmp_path: Path) -> None:
    src = tmp_path / "mandel.c"
    src.write_text(PROGRAM)
    out_c = tmp_path / "out.c"
    env = {**child_env(), "MDPOLY_COST_CALIBRATION": "gpu_min_speedup=0"}
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "opencl", "--no-tune"], env=env)
    assert re.search(r"mandel\.c:6:5: remark: .*the parallel loop at line 6 runs on the device", proc.stderr), \
        proc.stderr
    text = out_c.read_text()
    assert re.search(r"mdp_bytes_img = \(size_t\)\(\(h\) \* \(w\)\)", text), text
    orig = build_c(src, tmp_path / "orig", {}, openmp=False)
    dev = build_opencl(out_c, tmp_path / "dev", {})
    for w, h in (("120", "90"), ("1", "1"), ("3", "2")):
        want = run_program_args(orig, [w, h])
        got = run_program_args(dev, [w, h])
        assert compare_outputs(want, got) is None, (w, h, want, got)


def run_program_args(exe: Path, args: list[str]) -> str:
    return run_step([str(exe), *args], env={**os.environ, "OMP_NUM_THREADS": "2"}).stdout
