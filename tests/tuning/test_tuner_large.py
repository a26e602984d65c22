"""The device tuner on large shapes (issue 13 item 4), behaviour on an OpenCL device (PoCL in CI).

* the reference is computed once: when the CPU original is "too slow" (forced here by a zero
  waiting share), the default configuration's outputs on the device are the reference, the
  default is measured once, and the original, run beside the search, cross-checks them (and a
  wrong default discards the tuning);
* the inputs go to the device once per candidate: the timed calls copy nothing;
* a configuration the compiled kernel cannot launch is refused by the host code before the
  launch and counted as ``launch``, not as a crash.

No timings are asserted.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mdpoly.backends.opencl import OpenCLBackend
from mdpoly.lower.gpu_defaults import default_gpu_params
from mdpoly.lower.gpu_params import GpuParams, gpu_violations
from mdpoly.lower.lower import function_params
from mdpoly.runtime.base import ArgSpec, LaunchRefused
from mdpoly.targets import CUDA as CUDA_TARGET
from mdpoly.targets import OPENCL
from mdpoly.tuning.buffers import make_buffers, numpy_dtype
from mdpoly.tuning.evaluate import NestEvaluator, Rejected, TuningLog
from mdpoly.tuning.gpu import GpuTarget, opencl_target
from mdpoly.tuning.tune import TuneSettings, tune_nest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "core"))
import mdh_examples as ex  # noqa: E402


def _target() -> GpuTarget | str:
    try:
        return opencl_target(os.environ.get("MDPOLY_OPENCL_DEVICE") or None)
    except Exception as exc:  # noqa: BLE001 - no pyopencl, no ICD, no device
        return f"no OpenCL device to tune on: {exc}"


def _cuda() -> GpuTarget | str:
    try:
        from mdpoly.tuning.gpu import cuda_target
        return cuda_target(os.environ.get("MDPOLY_CUDA_DEVICE") or None)
    except Exception as exc:  # noqa: BLE001 - no cuda-python, driver or device
        return f"no CUDA device: {exc}"


TARGET = _target()
CUDA = _cuda()
needs_device = pytest.mark.skipif(isinstance(TARGET, str), reason=str(TARGET))
#: the hold and launch tests run on every GPU target there is (CUDA on a GPU machine)
ON_EACH = pytest.mark.parametrize("target", [
    pytest.param(TARGET, id="opencl", marks=needs_device),
    pytest.param(CUDA, id="cuda", marks=pytest.mark.skipif(isinstance(CUDA, str), reason=str(CUDA)))])

M, N, K = 19, 21, 37
#: the original nest of ``ex.matmul(M, N, K)`` (C += A * B), as the driver's reference_c gives it
MATMUL_C = (f"for (int i = 0; i < {M}; i++) for (int j = 0; j < {N}; j++) for (int k = 0; k < {K}; k++) "
            "C[i][j] += A[i][k] * B[k][j];")


def _settings(tmp_path: Path, share: float, evals: int = 4) -> TuneSettings:
    return TuneSettings(seconds=None, evaluations=evals, retune=True, cache_dir=tmp_path / "cache", progress=False,
                        reference_share=share)


def _log(path: str | None) -> list[dict]:
    assert path is not None
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _args(mdh) -> tuple[dict[str, np.ndarray], tuple[ArgSpec, ...]]:
    inputs = make_buffers(mdh, {}, 0)
    args = tuple(ArgSpec(b.name, numpy_dtype(b.elem_type), tuple(inputs[b.name].shape), b.written)
                 for b in function_params(mdh))
    return inputs, args


# {{{ the reference, once


@needs_device
def test_a_too_slow_original_gives_way_to_the_default_on_the_device_then_cross_checks_it(tmp_path):
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.matmul(M, N, K)
    r = tune_nest(mdh, MATMUL_C, {}, OpenCLBackend(), _settings(tmp_path, share=0.0), target=TARGET)
    assert r.tuned_seconds < float("inf")
    log = _log(r.log_path)
    refs = [e for e in log if e["event"] == "reference"]
    assert len(refs) == 1 and refs[0]["source"] == "default plan"
    assert "cannot finish" in refs[0]["why_not_original"] or "did not finish" in refs[0]["why_not_original"]
    # the reference run is the default's measurement: the default is not run a second time
    default = TARGET.describe(mdh, TARGET.default(mdh))
    assert [e["params"] for e in log if e["event"] == "candidate"].count(default) == 1
    checks = [e for e in log if e["event"] == "cross-check"]
    assert len(checks) == 1 and checks[0]["status"] == "agrees", checks
    assert "default configuration's outputs on the device" in r.reference and "agrees" in r.reference
    assert r.to_report()["reference"] == r.reference


@pytest.mark.campaign   # a tuning run (README.md "Run the tests")
@needs_device
def test_a_default_that_differs_from_the_original_discards_the_tuning(tmp_path):
    """The original here computes twice the product: the default's outputs, the reference during the
    search, disagree with it, and the tuning ends with the reason instead of a result."""
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.matmul(M, N, K)
    wrong = MATMUL_C.replace("+= A[i][k]", "+= 2.0f * A[i][k]")
    with pytest.raises(Rejected) as info:
        tune_nest(mdh, wrong, {}, OpenCLBackend(), _settings(tmp_path, share=0.0), target=TARGET)
    assert info.value.kind == "reference" and "differ from the CPU original" in info.value.why


@needs_device
def test_an_original_that_finishes_in_time_is_the_reference(tmp_path):
    assert isinstance(TARGET, GpuTarget)
    mdh = ex.matmul(M, N, K)
    r = tune_nest(mdh, MATMUL_C, {}, OpenCLBackend(), _settings(tmp_path, share=0.1), target=TARGET)
    log = _log(r.log_path)
    assert [e["source"] for e in log if e["event"] == "reference"] == ["original nest"]
    assert not any(e["event"] == "cross-check" for e in log) and r.reference == ""

# }}}

# {{{ inputs uploaded once per candidate


@ON_EACH
def test_timed_calls_copy_nothing_once_the_inputs_are_held(target, tmp_path):
    """The candidate's hold export keeps its arrays on the device after the checked first call: the
    host code's own profile then has no transfer in any timed call; without it, every timed call
    copies (the same code), and the outputs are the same."""
    mdh = ex.matmul(M, N, K)
    inputs, args = _args(mdh)
    cand = target.candidate(mdh, target.default(mdh), {}, args)
    assert cand.request.hold
    held = target.runner.run(target.runner.build(cand.request), inputs, repeats=4, warmup=1)
    plain = target.runner.run(target.runner.build(replace(cand.request, hold="")), inputs, repeats=4, warmup=1)
    assert len(held.transfer_times) == 4 and all(t == 0.0 for t in held.transfer_times), held.transfer_times
    assert len(plain.transfer_times) == 4 and all(t > 0.0 for t in plain.transfer_times), plain.transfer_times
    assert len(held.host_times) == 4
    want = np.zeros((M, N), np.float32) + inputs["C"] + inputs["A"].astype(np.float64) @ inputs["B"]
    for m in (held, plain):
        assert np.allclose(m.outputs["C"], want, rtol=1e-4, atol=1e-4)

# }}}

# {{{ launchability


class _Roomier:
    """The device's queries, but reporting four times its work-group limits (as a driver might whose
    kernels then cannot run that wide)."""

    def __init__(self, device) -> None:
        self.device = device

    def device_limits(self) -> dict:
        limits = dict(self.device.device_limits())
        limits["max_work_group_size"] *= 4
        limits["max_work_item_sizes"] = tuple(4 * x for x in limits["max_work_item_sizes"])
        return limits

    def device_identity(self) -> str:
        return self.device.device_identity()


@ON_EACH
def test_a_work_group_the_kernel_cannot_run_is_refused_before_the_launch(target, tmp_path):
    real = target.caps.max_work_group_size
    base = {"opencl": OPENCL, "cuda": CUDA_TARGET}[target.name]
    roomy = GpuTarget(target.name, base.caps, base.backend, target.runner, _Roomier(target.device),
                      target.last_call, target.resident_enter)
    mdh = ex.matmul(64, 2 * real // 64 if real >= 64 else 2, 8)
    wide = (64, 2 * real // 64, 1) if real >= 64 else (2 * real, 1, 1)
    d = default_gpu_params(mdh, roomy.caps)   # an untiled kernel of the default's grouping, wider than the device allows
    p = GpuParams(num_wi=wide, pt=(1, 1, 1), num_wg=d.num_wg, ocl_groups=d.ocl_groups)
    assert math.prod(p.num_wi) == 2 * real and gpu_violations(mdh, p, roomy.caps) == []
    inputs, args = _args(mdh)
    cand = roomy.candidate(mdh, p, {}, args)
    with pytest.raises(LaunchRefused) as info:
        roomy.runner.run(roomy.runner.build(cand.request), inputs, repeats=1, warmup=0)
    assert info.value.kind == "launch"
    said = f"a work-group of {2 * real} work-items" if target.name == "opencl" else f"a block of {2 * real} threads"
    assert said in str(info.value) and "at most" in str(info.value), str(info.value)
    # in the evaluator: a rejection of its own kind, with the reason, in the log
    log = TuningLog(tmp_path / "log.jsonl")
    ev = NestEvaluator(mdh, "", {}, roomy, roomy.runner, log, roomy.default(mdh))
    with pytest.raises(Rejected) as rej:
        ev.evaluate(p)
    log.close()
    assert rej.value.kind == "launch" and said in rej.value.why
    rec = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()][-1]
    assert rec["event"] == "candidate" and rec["status"] == "launch"

# }}}
