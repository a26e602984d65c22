"""``CudaDevice``: what the CUDA target asks a device (identity, limits, NVRTC's architecture); ``compile_cuda``.

Built on NVIDIA's ``cuda-python`` bindings (``cuda.bindings.driver``, ``cuda.bindings.nvrtc``;
``pip install 'mdpoly[cuda]'``), not pycuda: pycuda is published as source only and its build
needs ``cuda.h``, cuRAND and ``libcuda.so`` at link time, so it does not install on a machine
without a driver (CI, the developers' machines); cuda-python ships binary wheels, imports
without a driver, and its NVRTC compiles without a GPU. The bindings are imported lazily: this
module imports anywhere, and ``CudaDevice()`` raises ``NoCudaDevice`` with the reason when the
bindings, the driver or a device are missing.

Nothing here launches kernels: tuning candidates are the generated host code, which compiles
with NVRTC and launches through the driver API itself (``mdpoly.runtime.host_code``).
``compile_cuda`` (NVRTC to CUBIN or PTX, no GPU needed) serves tests that check kernel sources.
"""

from __future__ import annotations

from typing import Any

from mdpoly.runtime.base import (
    BuildFailed,
    RunFailed,
)


class NoCudaDevice(RunFailed):
    """cuda-python is missing, or the driver / a CUDA device is not there."""

    kind = "no-device"


def _import_cuda() -> tuple[Any, Any]:
    try:
        from cuda.bindings import driver, nvrtc
    except ImportError as exc:  # the 'cuda' extra is not installed
        raise NoCudaDevice("cuda-python is not installed (pip install 'mdpoly[cuda]')") from exc
    return driver, nvrtc


def _code(err: Any) -> int:
    return int(getattr(err, "value", err))


class CudaDevice:
    """One CUDA device through cuda-python: its identity, its limits, NVRTC's architecture for it."""

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
            "async_copy": self.compute_capability[0] >= 8,
            "local_mem_optin": self._attr("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
            "registers_per_block": self._attr("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK"),
        }

    def device_name(self) -> str:
        raw = self._call(self._drv.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        return str(raw.split(b"\0", 1)[0].decode())

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
