"""``CudaRunner``: compile CUDA C with NVRTC and time its kernels with CUDA events.

Built on NVIDIA's ``cuda-python`` bindings (``cuda.bindings.driver``, ``cuda.bindings.nvrtc``;
``pip install 'mdpoly[cuda]'``), not pycuda: pycuda is published as source only and its build
needs ``cuda.h``, cuRAND and ``libcuda.so`` at link time, so it does not install on a machine
without a driver (CI, the developers' machines); cuda-python ships binary wheels, imports
without a driver, and its NVRTC compiles without a GPU. The bindings are imported lazily: this
module imports anywhere, and ``CudaRunner()`` raises ``NoCudaDevice`` with the reason when the
bindings, the driver or a device are missing.

A ``CudaKernelRequest`` is a ``BuildRequest`` (``language="cuda"``, ``source`` the CUDA C text,
``flags`` extra NVRTC options) plus the launches one call makes: each ``CudaLaunch`` names an
``extern "C"`` kernel, its grid and block; every kernel receives the arguments of ``args`` in
order (arrays as device pointers, shape-``()`` specs by value with their dtype), as mdpoly's
generated kernels do. An OpenCL ``KernelRequest`` (global/local sizes) is accepted too and
launched with the one-dimensional grid of all blocks that mdpoly's CUDA kernels decode
(``launch_from_ndrange``).

Compilation mirrors the generated host code: ``sm_XY`` CUBIN of the device's compute capability
when NVRTC supports it, else PTX for the newest older ``compute_XY``; ``--fmad=false`` unless the
request's ``flags`` name ``--fmad`` (the tuner passes the host code's choice,
``mdpoly.backends.cuda_host.nvrtc_flags``). ``run``
uploads the inputs before every call (untimed), makes ``warmup`` untimed and ``repeats`` timed
calls, and returns per call the time between CUDA events recorded around its launches, plus
the outputs of the first call. A running kernel cannot be stopped, so ``timeout`` is checked
between calls only.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from mdpoly.runtime.base import (
    BuildFailed,
    BuildRequest,
    Built,
    Measurement,
    RunFailed,
    RunTimedOut,
)


class NoCudaDevice(RunFailed):
    """cuda-python is missing, or the driver / a CUDA device is not there."""

    kind = "no-device"


@dataclass(frozen=True, slots=True)
class CudaLaunch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int = 0


@dataclass(frozen=True, slots=True)
class CudaKernelRequest(BuildRequest):
    launches: tuple[CudaLaunch, ...] = ()


def launch_from_ndrange(kernel: str, global_size: tuple[int, ...], local_size: tuple[int, ...] | None) -> CudaLaunch:
    """The CUDA launch of an NDRange as mdpoly's CUDA kernels expect it: blocks of the local
    size, all blocks on ``gridDim.x`` (the kernels decode the group indices from ``blockIdx.x``).
    Without a local size: blocks of 256 threads along dimension 0 (one-dimensional ranges only)."""
    if local_size is None:
        if len(global_size) != 1:
            raise RunFailed("a CUDA launch of a multi-dimensional NDRange needs its local size")
        return CudaLaunch(kernel, (max(1, math.ceil(global_size[0] / 256)), 1, 1), (256, 1, 1))
    blocks = 1
    for g, loc in zip(global_size, local_size):
        blocks *= max(1, g // loc)
    block = tuple(local_size) + (1,) * (3 - len(local_size))
    return CudaLaunch(kernel, (blocks, 1, 1), (int(block[0]), int(block[1]), int(block[2])))


def _import_cuda() -> tuple[Any, Any]:
    try:
        from cuda.bindings import driver, nvrtc
    except ImportError as exc:  # the 'cuda' extra is not installed
        raise NoCudaDevice("cuda-python is not installed (pip install 'mdpoly[cuda]')") from exc
    return driver, nvrtc


def _code(err: Any) -> int:
    return int(getattr(err, "value", err))


class CudaRunner:
    name = "cuda"

    def __init__(self, device: int | str | None = None) -> None:
        driver, nvrtc = _import_cuda()
        self._drv = driver
        self._nvrtc = nvrtc
        index = int(device) if device not in (None, "") else 0
        try:
            (err,) = driver.cuInit(0)
        except Exception as exc:  # cuda-pathfinder: no libcuda.so (no driver on this machine)
            raise NoCudaDevice(f"no CUDA driver: {exc}") from exc
        if _code(err) != 0:
            raise NoCudaDevice(f"cuInit failed: {self._error(err)}")
        count = self._call(driver.cuDeviceGetCount(), "cuDeviceGetCount")
        if index >= count:
            raise NoCudaDevice(f"CUDA device {index} requested, {count} found")
        self.device = self._call(driver.cuDeviceGet(index), "cuDeviceGet")
        self.context = self._call(driver.cuDevicePrimaryCtxRetain(self.device), "cuDevicePrimaryCtxRetain")
        self._call(driver.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")
        attr = driver.CUdevice_attribute
        self.compute_capability = (
            self._call(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.device),
                       "cuDeviceGetAttribute"),
            self._call(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.device),
                       "cuDeviceGetAttribute"))
        self._modules: dict[str, Any] = {}

    # {{{ helpers

    def _error(self, err: Any) -> str:
        try:
            _, name = self._drv.cuGetErrorName(err)
            _, text = self._drv.cuGetErrorString(err)
            return f"{_code(err)} ({name.decode()}: {text.decode()})"
        except Exception:  # noqa: BLE001 - describing an error must not raise another
            return str(err)

    def _call(self, result: tuple[Any, ...], call: str) -> Any:
        """The value(s) of a driver call's ``(err, *values)`` result; ``RunFailed`` on an error."""
        err, *values = result
        if _code(err) != 0:
            raise RunFailed(f"{call} failed with error {self._error(err)}")
        return values[0] if len(values) == 1 else tuple(values)

    def _attr(self, name: str) -> int:
        a = getattr(self._drv.CUdevice_attribute, name)
        return int(self._call(self._drv.cuDeviceGetAttribute(a, self.device), "cuDeviceGetAttribute"))

    # }}}

    def device_identity(self) -> str:
        raw = self._call(self._drv.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        name = raw.split(b"\0", 1)[0].decode()
        version = self._call(self._drv.cuDriverGetVersion(), "cuDriverGetVersion")
        major, minor = self.compute_capability
        return f"CUDA | {name} | sm_{major}{minor} | driver {version // 1000}.{version % 1000 // 10}"

    def device_limits(self) -> dict[str, Any]:
        """The device limits work-group lowering reads (keys of ``caps_from_device``)."""
        return {
            "max_work_group_size": self._attr("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            "max_work_item_sizes": (self._attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X"),
                                    self._attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y"),
                                    self._attr("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z")),
            "local_mem_size": self._attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
            "max_compute_units": self._attr("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
            "is_gpu": True,
            "preferred_wg_multiple": self._attr("CU_DEVICE_ATTRIBUTE_WARP_SIZE"),
        }

    def arch(self) -> tuple[str, bool]:
        """(``sm_XY`` or ``compute_XY``, whether it is CUBIN) for this device and this NVRTC."""
        major, minor = self.compute_capability
        dev = major * 10 + minor
        err, archs = self._nvrtc.nvrtcGetSupportedArchs()
        if _code(err) != 0:
            raise BuildFailed("NVRTC failed", ["nvrtcGetSupportedArchs"], str(err))
        if dev in archs:
            return f"sm_{dev}", True
        older = [a for a in archs if a < dev]
        if not older:
            raise BuildFailed(f"this NVRTC cannot compile for compute capability {major}.{minor}",
                              ["nvrtcGetSupportedArchs"], str(archs))
        return f"compute_{max(older)}", False

    def build(self, request: BuildRequest) -> Built:
        arch, cubin = self.arch()
        fmad = [] if any(f.startswith("--fmad") for f in request.flags) else ["--fmad=false"]
        opts = [f"--gpu-architecture={arch}", *fmad, *request.flags]
        key = hashlib.sha256((request.source + "\0" + " ".join(opts)).encode()).hexdigest()[:16]
        if key in self._modules:
            return Built(request, key, 0.0)
        start = time.perf_counter()
        image = compile_cuda(request.source, opts, cubin, self._nvrtc, name=request.entry or "mdpoly")
        self._modules[key] = self._call(self._drv.cuModuleLoadData(image), "cuModuleLoadData")
        return Built(request, key, time.perf_counter() - start)

    def run(self, built: Built, inputs: dict[str, np.ndarray], repeats: int = 5,
            warmup: int = 1, timeout: float = 30.0) -> Measurement:
        drv = self._drv
        req = built.request
        launches: tuple[CudaLaunch, ...]
        if isinstance(req, CudaKernelRequest):
            launches = req.launches
        else:
            ocl = getattr(req, "launches", ())
            launches = tuple(launch_from_ndrange(ln.kernel, ln.global_size, ln.local_size) for ln in ocl)
        if not launches:
            raise RunFailed("a CUDA run needs a CudaKernelRequest with at least one CudaLaunch")
        module = self._modules[built.artifact]
        funcs = [(self._call(drv.cuModuleGetFunction(module, ln.kernel.encode()), "cuModuleGetFunction"), ln)
                 for ln in launches]
        hosts: list[np.ndarray] = []
        holders: list[np.ndarray] = []
        dptrs: list[Any] = []
        try:
            for spec in req.args:
                arr = np.ascontiguousarray(inputs[spec.name], dtype=spec.dtype).reshape(spec.shape)
                hosts.append(arr)
                if spec.shape == ():
                    holders.append(np.array([arr], dtype=spec.dtype))
                    dptrs.append(None)
                else:
                    d = self._call(drv.cuMemAlloc(max(arr.nbytes, 1)), "cuMemAlloc")
                    dptrs.append(d)
                    holders.append(np.array([int(d)], dtype=np.uint64))
            params = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
            start_ev = self._call(drv.cuEventCreate(0), "cuEventCreate")
            stop_ev = self._call(drv.cuEventCreate(0), "cuEventCreate")
            times: list[float] = []
            outputs: dict[str, np.ndarray] = {}
            began = time.perf_counter()
            for call in range(warmup + repeats):
                for arr, d in zip(hosts, dptrs):
                    if d is not None and arr.nbytes:
                        self._call(drv.cuMemcpyHtoD(d, arr.ctypes.data, arr.nbytes), "cuMemcpyHtoD")
                self._call(drv.cuEventRecord(start_ev, 0), "cuEventRecord")
                for f, ln in funcs:
                    self._call(drv.cuLaunchKernel(f, *ln.grid, *ln.block, ln.shared_bytes, 0, params.ctypes.data, 0),
                               "cuLaunchKernel")
                self._call(drv.cuEventRecord(stop_ev, 0), "cuEventRecord")
                self._call(drv.cuEventSynchronize(stop_ev), "cuEventSynchronize")
                self._call(drv.cuCtxSynchronize(), "cuCtxSynchronize")
                if call == 0:
                    for spec, arr, d in zip(req.args, hosts, dptrs):
                        if spec.is_output and d is not None:
                            out = np.empty_like(arr)
                            if out.nbytes:
                                self._call(drv.cuMemcpyDtoH(out.ctypes.data, d, out.nbytes), "cuMemcpyDtoH")
                            outputs[spec.name] = out
                if call >= warmup:
                    ms = self._call(drv.cuEventElapsedTime(start_ev, stop_ev), "cuEventElapsedTime")
                    times.append(float(ms) * 1e-3)
                if time.perf_counter() - began > timeout:
                    raise RunTimedOut(f"candidate ran longer than {timeout:.1f} s")
            drv.cuEventDestroy(start_ev)
            drv.cuEventDestroy(stop_ev)
            return Measurement(tuple(times), outputs)
        finally:
            for d in dptrs:
                if d is not None:
                    drv.cuMemFree(d)


def compile_cuda(source: str, options: list[str], cubin: bool, nvrtc: Any = None, name: str = "mdpoly") -> bytes:
    """CUDA C -> CUBIN (``cubin``) or NUL-terminated PTX with NVRTC; needs no GPU.

    :raises BuildFailed: with NVRTC's log.
    """
    if nvrtc is None:
        _, nvrtc = _import_cuda()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    if _code(err) != 0:
        raise BuildFailed("nvrtcCreateProgram failed", ["nvrtcCreateProgram"], str(err))
    try:
        opts = [o.encode() for o in options]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if _code(err) != 0:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise BuildFailed("NVRTC compilation failed", ["nvrtcCompileProgram", *options],
                              log.decode(errors="replace").rstrip("\0")[-4000:])
        if cubin:
            _, size = nvrtc.nvrtcGetCUBINSize(prog)
            image = b" " * size
            nvrtc.nvrtcGetCUBIN(prog, image)
            return image
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        image = b" " * size
        nvrtc.nvrtcGetPTX(prog, image)
        return image if image.endswith(b"\0") else image + b"\0"
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
