"""``mdpoly.runtime.cuda``: imports without a driver, says why it cannot run, compiles with NVRTC anywhere,
and (``-m gpu``) builds, runs and times kernels on a CUDA device."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess

import numpy as np
import pytest

from mdpoly.runtime.base import ArgSpec
from mdpoly.runtime.cuda import (
    CudaKernelRequest,
    CudaLaunch,
    CudaRunner,
    NoCudaDevice,
    compile_cuda,
    launch_from_ndrange,
)

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


def test_launch_from_ndrange_puts_all_blocks_on_x() -> None:
    ln = launch_from_ndrange("k", (64, 8, 6), (32, 4, 2))
    assert ln.grid == (2 * 2 * 3, 1, 1) and ln.block == (32, 4, 2)
    assert launch_from_ndrange("c", (1000,), None) == CudaLaunch("c", (4, 1, 1), (256, 1, 1))


@pytest.mark.skipif(_device_reason() is None, reason="a CUDA device is present")
def test_runner_without_a_device_raises_a_clear_error() -> None:
    with pytest.raises(NoCudaDevice, match="cuda-python is not installed|no CUDA driver|cuInit|CUDA device"):
        CudaRunner()


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
def test_runner_builds_runs_and_times_on_the_gpu() -> None:
    r = CudaRunner()
    assert "CUDA |" in r.device_identity()
    limits = r.device_limits()
    assert limits["max_work_group_size"] >= 1024 and limits["local_mem_size"] >= 48 * 1024
    n = 100_003
    req = CudaKernelRequest(
        source=SAXPY, entry="saxpy", language="cuda",
        args=(ArgSpec("y", "float32", (n,), is_output=True), ArgSpec("x", "float32", (n,)),
              ArgSpec("a", "float32", ()), ArgSpec("n", "int64", ())),
        launches=(CudaLaunch("saxpy", ((n + 255) // 256, 1, 1), (256, 1, 1)),))
    built = r.build(req)
    assert r.build(req).artifact == built.artifact
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    m = r.run(built, {"y": y, "x": x, "a": np.float32(2.5), "n": np.int64(n)}, repeats=3)
    assert len(m.times) == 3 and all(t > 0 for t in m.times)
    np.testing.assert_array_equal(m.outputs["y"], np.float32(2.5) * x + y)   # --fmad=false: rounds as numpy
