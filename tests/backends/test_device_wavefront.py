"""``mdpoly.backends.device_wavefront``: a wavefront's loops -> host loops around launches, and a
kernel per loop over the tiles of one wavefront (one thread per tile), or a refusal."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mdpoly.backends.device_body import Refused
from mdpoly.backends.device_wavefront import device_wavefront, split_waves
from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.nest import TILE_BARRIER, TILE_THREAD, TILE_THREADS, WAVEFRONT_TILES, TileWave, Wavefront
from mdpoly.ir.scop import Variable

#: isl's loops as ``frontend/wavefront.py`` prints them (a 2-D band of 64 x 64 tiles, unskewed)
WAVES = f"""for (long mdp_w = 0; mdp_w <= ((((long)n) - 1) / 32); mdp_w++) {{
{WAVEFRONT_TILES}
  for (long mdp_t0 = (0 > (mdp_w - (((long)n) - 1) / 64) ? 0 : (mdp_w - (((long)n) - 1) / 64)); mdp_t0 <= (mdp_w < (((long)n) - 1) / 64 ? mdp_w : (((long)n) - 1) / 64); mdp_t0++) {{
    for (long mdp_t1 = mdp_w - mdp_t0; mdp_t1 <= mdp_w - mdp_t0; mdp_t1++) {{
      for (i = (1 > 64 * mdp_t0 ? 1 : 64 * mdp_t0); i <= (((long)n) - 1 < 64 * mdp_t0 + 63 ? ((long)n) - 1 : 64 * mdp_t0 + 63); i++) {{
        for (j = (1 > 64 * mdp_t1 ? 1 : 64 * mdp_t1); j <= (((long)n) - 1 < 64 * mdp_t1 + 63 ? ((long)n) - 1 : 64 * mdp_t1 + 63); j++) {{
          A[i][j] = A[i - 1][j] + A[i][j - 1];
        }}
      }}
    }}
  }}
}}"""

SYMBOLS = (Variable("A", "double", ("100", "100"), "array", "double"), Variable("n", "int", (), "scalar", "int"),
           Variable("i", "int", (), "scalar", "int"), Variable("j", "int", (), "scalar", "int"))

ORIGINAL = "for (i = 1; i < n; i++)\n  for (j = 1; j < n; j++)\n    A[i][j] = A[i - 1][j] + A[i][j - 1];\n"


def _wave(waves: str = WAVES) -> Wavefront:
    return Wavefront(("i", "j"), ("i", "j"), (64, 64), SourceLoc("in.c", 3, 3), waves, ORIGINAL, ("i", "j"),
                     "for (i = 1; i < n; i++) { for (j = 1; j < n; j++) { }}", (), (), ("n",))


def test_split_keeps_the_host_loops_and_takes_the_tile_loop() -> None:
    host, loops = split_waves(WAVES)
    assert host.splitlines()[0].startswith("for (long mdp_w = 0;")
    assert host.splitlines()[1] == "  MDP_WAVEFRONT_LAUNCH_0" and len(host.splitlines()) == 3
    ((text, iterator, counters),) = loops
    assert iterator == "mdp_t0" and counters == ("mdp_w",) and text.startswith("for (long mdp_t0 =")


def test_marker_without_a_tile_loop_is_refused() -> None:
    with pytest.raises(Refused, match="not of the form isl generates"):
        split_waves(f"for (long mdp_w = 0; mdp_w < 3; mdp_w++) {{\n{WAVEFRONT_TILES}\n  x = 1;\n}}")


@pytest.mark.parametrize("api", ["opencl", "cuda"])
def test_one_kernel_launched_per_wavefront(api: str) -> None:
    code = device_wavefront(_wave(), SYMBOLS, api, "mdpoly_f_3_wave", own_region=True)
    assert not isinstance(code, str) and code.kernels == 1
    # the host loop calls the kernel's host function with the wavefront's counter and the size
    assert "mdpoly_f_3_wave((void *)A, mdp_w, n);" in code.call
    assert "resident_enter_named(\"A\"" in code.call and code.call.rstrip().endswith("}")
    assert "for (i = 1; i < n; i++) { for (j = 1; j < n; j++) { }}" in code.call   # exit values
    kernel = "__kernel void" if api == "opencl" else '__global__ void'
    assert kernel in code.definition and "const long mdp_w" in code.definition
    assert [u.name for u in code.device_data.uses] == ["A"] and code.device_data.uses[0].written


def test_a_body_the_device_cannot_run_is_refused() -> None:
    waves = WAVES.replace("A[i][j] = A[i - 1][j] + A[i][j - 1];", "A[i][j] = f(A[i - 1][j]);")
    assert device_wavefront(_wave(waves), SYMBOLS, "opencl", "k", own_region=True) == \
        "it calls 'f', which is no math function the device has"


#: the same band as one work-group per tile (``TileWave.waves``): the tile's code reads the
#: thread's index and the group's size and waits at the group's barrier
GROUP_WAVES = f"""for (long mdp_w = 0; mdp_w <= ((((long)n) - 1) / 32); mdp_w++) {{
{WAVEFRONT_TILES}
  for (long mdp_t0 = 0; mdp_t0 <= mdp_w; mdp_t0++) {{
    long mdp_T0 = mdp_t0;
    long mdp_T1 = mdp_w - mdp_t0;
    for (long mdp_s = 0; mdp_s < 127; mdp_s++) {{
      for (long mdp_q = {TILE_THREAD}; mdp_q < 64; mdp_q += {TILE_THREADS}) {{
        long mdp_l0 = mdp_q;
        long mdp_l1 = mdp_s - mdp_l0;
        if (mdp_l1 >= 0 && mdp_l1 < 64) {{
          i = 64 * mdp_T0 + mdp_l0;
          j = 64 * mdp_T1 + mdp_l1;
          if (i >= 1 && i < n && j >= 1 && j < n)
            A[i][j] = A[i - 1][j] + A[i][j - 1];
        }}
      }}
      {TILE_BARRIER}
    }}
  }}
}}"""


@pytest.mark.parametrize("api", ["opencl", "cuda"])
def test_a_work_group_per_tile(api: str) -> None:
    wave = replace(_wave(), in_tile=TileWave(GROUP_WAVES, (1, 1), 127, 64, 64))
    code = device_wavefront(wave, SYMBOLS, api, "k", own_region=True, in_tile=True)
    assert not isinstance(code, str) and code.kernels == 1
    barrier = "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);" if api == "opencl" else "__syncthreads();"
    group = "get_group_id(0)" if api == "opencl" else "blockIdx.x"
    thread = "get_local_id(0)" if api == "opencl" else "threadIdx.x"
    assert barrier in code.definition and group in code.definition and thread in code.definition
    assert TILE_BARRIER not in code.definition
    # the launch: a group per tile of the wavefront, at most 64 threads each
    launch = "&mdp_items, &mdp_group" if api == "opencl" else "(unsigned int)mdp_items, 1, 1, mdp_block[0]"
    assert launch in code.definition and "64" in code.definition


def test_no_inner_wavefront_no_work_group_form() -> None:
    assert device_wavefront(_wave(), SYMBOLS, "cuda", "k", own_region=True, in_tile=True) == \
        "no wavefront inside its tiles was found"


def test_the_barrier_only_in_a_work_group() -> None:
    """Outside a work-group's code the barrier is a call of an unknown function: refused."""
    waves = WAVES.replace("A[i][j] = A[i - 1][j] + A[i][j - 1];", TILE_BARRIER)
    assert "mdp_barrier" in str(device_wavefront(_wave(waves), SYMBOLS, "opencl", "k", own_region=True))
