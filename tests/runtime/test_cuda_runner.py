"""``mdpoly.runtime.cuda``: imports without a driver, says why it cannot run, compiles with NVRTC anywhere,
and (``-m gpu``) runs and times a CUDA candidate's shipped host code on a CUDA device."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

import numpy as np
import pytest

from mdpoly.runtime.base import ArgSpec
from mdpoly.runtime.cuda import CudaDevice, NoCudaDevice, compile_cuda

HAVE_BINDINGS = importlib.util.find_spec("cuda") is not None


def _device_reason() -> str | None:
    if shutil.which("nvidia-smi") is None:
        return "no CUDA device: nvidia-smi not found (no NVIDIA driver)"
    proc = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    if proc.returncode != 0 or "GPU" not in proc.stdout:
        return "no CUDA device: nvidia-smi -L lists no GPU"
    if not HAVE_BINDINGS:
        return "cuda-python is not installed (pip install 'mdpoly[cuda]')"
    return None


SAXPY = r"""
extern "C" __global__ void saxpy(float *y, const float *x, const float a, const long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""


@pytest.mark.skipif(_device_reason() is None, reason="a CUDA device is present")
def test_runner_without_a_device_raises_a_clear_error() -> None:
    with pytest.raises(NoCudaDevice, match="cuda-python is not installed|no CUDA driver|cuInit|CUDA device"):
        CudaDevice()


@pytest.mark.skipif(not HAVE_BINDINGS, reason="cuda-python is not installed (pip install 'mdpoly[cuda]')")
def test_nvrtc_compiles_without_a_gpu() -> None:
    cubin = compile_cuda(SAXPY, ["--gpu-architecture=sm_90"], True)
    assert cubin[:4] == b"\x7fELF"
    ptx = compile_cuda(SAXPY, ["--gpu-architecture=compute_90"], False)
    assert b".entry saxpy" in ptx and ptx.endswith(b"\0")
    from mdpoly.runtime.base import BuildFailed
    with pytest.raises(BuildFailed, match="NVRTC compilation failed"):
        compile_cuda("this is not CUDA", ["--gpu-architecture=sm_90"], True)


@pytest.mark.gpu
@pytest.mark.skipif(_device_reason() is not None, reason=str(_device_reason()))
def test_shipped_host_code_runs_and_times_on_the_gpu() -> None:
    """A CUDA candidate -- the host code with its kernels, compiled by NVRTC in its first call --
    runs through the host-code runner; its times come from the host code's own events."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
    import mdh_examples as ex

    from mdpoly.lower.lower import function_params
    from mdpoly.tuning.gpu import cuda_target
    target = cuda_target()
    assert "CUDA |" in target.device.device_identity()
    limits = target.device.device_limits()
    assert limits["max_work_group_size"] >= 1024 and limits["local_mem_size"] >= 48 * 1024
    n = 100_003
    mdh = ex.dot(n)
    rng = np.random.default_rng(1)
    inputs = {"x": rng.standard_normal(n), "y": rng.standard_normal(n), "s": np.array([0.5])}
    args = tuple(ArgSpec(b.name, "float64", inputs[b.name].shape, b.written) for b in function_params(mdh))
    cand = target.candidate(mdh, target.default(mdh), {}, args)
    m = target.runner.run(target.runner.build(cand.request), inputs, repeats=3)
    assert len(m.times) == 3 and all(0 < t <= c for t, c in zip(m.times, m.call_times))
    assert np.allclose(m.outputs["s"][0], 0.5 + inputs["x"] @ inputs["y"], rtol=1e-10, atol=1e-9)
