"""``mdpoly.runtime.host_code.HostCodeRunner`` with plain C stand-ins for GPU host code (no device needed).

A stand-in exports ``mdpoly_entry`` and ``mdpoly_timing`` as a GPU candidate does: the times the
runner reports must be the ones the code's own profile export gives, the outputs those of the
first call, and its two limits (warm-up with the kernel build, then the timed calls) must hold.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace

import numpy as np
import pytest

from mdpoly.runtime.base import ArgSpec, BuildRequest, LaunchRefused, RunFailed, RunTimedOut
from mdpoly.runtime.host_code import TIMING_ENTRY, HostCodeRunner

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")

#: Doubles x in place; its "profile" says call k took k ms of kernel time and 2k ms in all.
DOUBLE = r"""
static struct { double kernel_ms, transfer_ms, call_ms; } last;
static long calls;
void mdpoly_entry(void **args)
{
    float *x = (float *)args[0];
    int i;
    for (i = 0; i < 4; ++i)
        x[i] *= 2.0f;
    ++calls;
    last.kernel_ms = (double)calls;
    last.transfer_ms = 0.5;
    last.call_ms = 2.0 * (double)calls;
    @HANG@
}
void mdpoly_timing(double *out)
{
    out[0] = last.kernel_ms;
    out[1] = last.transfer_ms;
    out[2] = last.call_ms;
}
"""

ARGS = (ArgSpec("x", "float32", (4,), True),)


def _request(hang: str = "") -> BuildRequest:
    return BuildRequest(DOUBLE.replace("@HANG@", hang), "mdpoly_entry", ARGS, language="opencl")


def test_times_are_the_host_codes_own_profile(tmp_path):
    runner = HostCodeRunner("toy", work_dir=str(tmp_path), device="toy device")
    assert runner.timing == TIMING_ENTRY and runner.device_identity() == "toy device"
    x = np.arange(4, dtype=np.float32)
    m = runner.run(runner.build(_request()), {"x": x}, repeats=3, warmup=2)
    # the first call (outputs), two warm-up calls, then calls 4, 5, 6 are timed
    assert m.times == pytest.approx((0.004, 0.005, 0.006))
    assert m.call_times == pytest.approx((0.008, 0.010, 0.012))
    assert np.array_equal(m.outputs["x"], 2 * x) and np.array_equal(x, np.arange(4, dtype=np.float32))
    assert m.wall_seconds > 0


def test_a_hanging_timed_call_is_killed_at_the_timeout(tmp_path):
    runner = HostCodeRunner("toy", work_dir=str(tmp_path))
    hang = "if (calls > 2) { volatile int spin = 1; while (spin) { } }"
    start = time.perf_counter()
    with pytest.raises(RunTimedOut, match=r"timed calls ran longer than 0\.5 s"):
        runner.run(runner.build(_request(hang)), {"x": np.zeros(4, np.float32)}, repeats=2, warmup=1, timeout=0.5)
    assert time.perf_counter() - start < runner.warm_seconds   # a bound: the call never returns


def test_a_hanging_first_call_is_killed_after_the_warm_up_allowance(tmp_path):
    runner = HostCodeRunner("toy", work_dir=str(tmp_path))
    runner.warm_seconds = 1.0
    hang = "{ volatile int spin = 1; while (spin) { } }"
    start = time.perf_counter()
    with pytest.raises(RunTimedOut, match="candidate ran longer than"):
        runner.run(runner.build(_request(hang)), {"x": np.zeros(4, np.float32)}, repeats=1, timeout=0.2)
    assert 1.0 <= time.perf_counter() - start < 30.0


def test_a_crash_is_a_failed_run(tmp_path):
    runner = HostCodeRunner("toy", work_dir=str(tmp_path))
    with pytest.raises(RunFailed) as info:
        runner.run(runner.build(_request("*(volatile int *)0 = 1;")), {"x": np.zeros(4, np.float32)}, repeats=1)
    assert info.value.kind == "crash"


def test_large_inputs_are_written_once_per_array(tmp_path):
    """A tuner passes the same inputs to every candidate: large ones go to disk once."""
    runner = HostCodeRunner("toy", work_dir=str(tmp_path))
    big = np.arange(1 << 19, dtype=np.float32)      # 2 MiB
    args = (ArgSpec("x", "float32", big.shape, True),)
    req = BuildRequest(DOUBLE.replace("@HANG@", ""), "mdpoly_entry", args)
    for _ in range(2):
        m = runner.run(runner.build(req), {"x": big}, repeats=1, warmup=0)
        assert np.array_equal(m.outputs["x"][:4], 2 * big[:4]) and np.array_equal(m.outputs["x"][4:], big[4:])
    assert len(list(tmp_path.glob("input-*.npy"))) == 1
    other = big.copy()
    runner.run(runner.build(req), {"x": other}, repeats=1, warmup=0)
    assert len(list(tmp_path.glob("input-*.npy"))) == 2


#: A stand-in whose hold export marks the buffers held: held calls "copy" nothing (transfer 0 in
#: its profile) and record the call count at which hold came.
HOLDING = r"""
#include <stdio.h>
#include <stdlib.h>
static struct { double kernel_ms, transfer_ms, call_ms; } last;
static long calls, held_at = -1, holds;
void mdpoly_entry(void **args)
{
    float *x = (float *)args[0];
    x[0] += 1.0f;
    ++calls;
    last.kernel_ms = (double)held_at;
    last.transfer_ms = held_at >= 0 ? 0.0 : 1.0;
    last.call_ms = (double)holds;
}
void mdpoly_hold(void **args)
{
    (void)args;
    held_at = calls;
    ++holds;
}
void mdpoly_timing(double *out)
{
    out[0] = last.kernel_ms;
    out[1] = last.transfer_ms;
    out[2] = last.call_ms;
}
"""


def test_the_worker_holds_the_inputs_once_after_the_checked_first_call(tmp_path):
    """With ``BuildRequest.hold`` the worker calls the export once, after the first call (whose
    outputs are checked) and before the warm-up and timed calls; without it, never."""
    runner = HostCodeRunner("toy", work_dir=str(tmp_path))
    x = np.zeros(4, np.float32)
    req = BuildRequest(HOLDING, "mdpoly_entry", ARGS, language="opencl", hold="mdpoly_hold")
    m = runner.run(runner.build(req), {"x": x}, repeats=3, warmup=2)
    assert m.times == pytest.approx((0.001,) * 3)            # held after call 1, in ms
    assert m.call_times == pytest.approx((0.001,) * 3)       # one hold
    assert m.transfer_times == (0.0, 0.0, 0.0) and len(m.host_times) == 3
    assert m.outputs["x"][0] == 1.0
    plain = runner.run(runner.build(replace(req, hold="")), {"x": x}, repeats=2, warmup=0)
    assert plain.transfer_times == pytest.approx((0.001, 0.001)) and plain.call_times == (0.0, 0.0)


@pytest.mark.parametrize("status, said, kind", [(3, "mdpoly: launch refused: kernel 'k': too wide", "launch"),
                                               (3, "something else", "crash"), (1, "mdpoly: launch refused: x",
                                                                                "crash")])
def test_a_refused_launch_is_its_own_kind(tmp_path, status, said, kind):
    """Host code that refuses a launch says so on stderr and exits with status 3: ``LaunchRefused``
    (kind ``launch``) with the reason; any other exit stays a crash."""
    runner = HostCodeRunner("toy", work_dir=str(tmp_path))
    body = f'fprintf(stderr, "{said}\\n"); exit({status});'
    src = "#include <stdio.h>\n#include <stdlib.h>\n" + DOUBLE.replace("@HANG@", body)
    with pytest.raises(RunFailed) as info:
        runner.run(runner.build(BuildRequest(src, "mdpoly_entry", ARGS)), {"x": np.zeros(4, np.float32)}, repeats=1)
    assert info.value.kind == kind
    assert isinstance(info.value, LaunchRefused) == (kind == "launch")
    if kind == "launch":
        assert str(info.value) == "kernel 'k': too wide"
