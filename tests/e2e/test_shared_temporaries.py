"""Repeated temporaries computed once (``backends/shared_temps.py``): C programs -> same output,
one evaluation of each temporary in the generated code.

An n-body force loop keeps its temporaries (``dx``, ``inv``, ``s``) as locals of the generated
loop body instead of one forwarded copy per use (nine ``sqrtf`` per interaction before).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not available")

NBODY = r"""
#include <math.h>
#include <stdio.h>
#define N 300
float x[N], y[N], m[N], ax[N], ay[N];
static void forces(float soft2)
{
    for (int i = 0; i < N; i++) {
        float fx = 0.0f, fy = 0.0f;
        for (int j = 0; j < N; j++) {
            float dx = x[j] - x[i];
            float dy = y[j] - y[i];
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + soft2);
            float s = m[j] * inv * inv * inv;
            fx += s * dx;
            fy += s * dy;
        }
        ax[i] = fx;
        ay[i] = fy;
    }
}
int main(void)
{
    for (int i = 0; i < N; i++) {
        x[i] = (float)((i * 37) % 101) / 16.0f; y[i] = (float)((i * 53) % 97) / 16.0f;
        m[i] = 1.0f + (float)(i % 7) / 8.0f;
    }
    forces(0.01f);
    double sx = 0, sy = 0;
    for (int i = 0; i < N; i++) { sx += ax[i]; sy += ay[i]; }
    printf("%.6e %.6e %.6e %.6e\n", sx, sy, (double)ax[7], (double)ay[N - 1]);
    return 0;
}
"""


def _numbers(text: str) -> list[float]:
    return [float(t) for t in text.split()]


def test_nbody_temporaries_are_computed_once(tmp_path: Path) -> None:
    src = tmp_path / "nbody.c"
    src.write_text(NBODY)
    out = tmp_path / "out.c"
    run_mdpoly(src, out, {})
    generated = out.read_text()
    body = generated[generated.index("static void mdpoly_forces"):generated.index("static void forces")]
    copies = 2 if "const float soft2 = (0.01f);" in body else 1   # the copy specialised to soft2 == 0.01f
    copies *= 2 if "if (soft2 >= 0)" in body else 1   # and the copy promising soft2 >= 0 (sqrt_domains)
    assert len(re.findall(r"\bsqrtf\s*\(", body)) == copies, body
    assert re.search(r"const float mdp_tmp\d+ = ", body)
    # its reordered loops gain nothing on one thread (sqrtf keeps gcc from vectorizing them):
    # a one-thread team runs the loop as written
    call = generated[generated.index("static void forces"):]
    assert "mdp_team() > 1" in call[:call.index("mdpoly_forces")]
    expected = _numbers(run_program(build_c(src, tmp_path / "seq", {}, openmp=False)))
    exe = build_c(out, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3):
        got = _numbers(run_program(exe, threads=threads))
        # the force sums are reassociated (no --strict-fp)
        assert got == pytest.approx(expected, rel=1e-4)
