"""``OpenCLDevice``: what the OpenCL target asks a device (identity, limits), through pyopencl.

Device choice is the rule of the generated host code: a selector (index or case-insensitive name
substring, ``MDPOLY_OPENCL_DEVICE`` there), else the first GPU, else the first device
(``choose_device``). ``device_limits()`` gives the limits lowering reads (``caps_from_device``).

Nothing here builds or launches kernels: tuning candidates are the generated host code, which
builds its kernels and launches them itself (``mdpoly.runtime.host_code``).
"""

from __future__ import annotations

from typing import Any

from mdpoly.runtime.base import (
    RunFailed,
)


class NoOpenCLDevice(RunFailed):
    """pyopencl is missing, or no platform/device (matching the selector) exists."""

    kind = "no-device"


def _import_cl() -> Any:
    try:
        import pyopencl as cl
    except ImportError as exc:  # the 'opencl' extra is not installed
        raise NoOpenCLDevice("pyopencl is not installed (pip install 'mdpoly[opencl]')") from exc
    return cl


def list_devices() -> list[Any]:
    """Every OpenCL device of every platform, in platform order (empty when none)."""
    cl = _import_cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    devices: list[Any] = []
    for p in platforms:
        try:
            devices += p.get_devices()
        except cl.Error:
            continue
    return devices


def choose_device(selector: str | None = None) -> Any:
    """The device for ``selector`` (index or case-insensitive name substring), else the first
    GPU, else the first device.

    :raises NoOpenCLDevice: when there is none, or none matches.
    """
    cl = _import_cl()
    devices = list_devices()
    if not devices:
        raise NoOpenCLDevice("no OpenCL platform or device found")
    if selector:
        if selector.isdigit():
            k = int(selector)
            if k < len(devices):
                return devices[k]
        else:
            for d in devices:
                if selector.lower() in f"{d.name} {d.platform.name}".lower():
                    return d
        raise NoOpenCLDevice(f"no OpenCL device matches {selector!r} ({len(devices)} found)")
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return (gpus or devices)[0]


class OpenCLDevice:
    """The OpenCL device ``selector`` picks (see ``choose_device``).

    :raises NoOpenCLDevice: without pyopencl or a (matching) device.
    """

    name = "opencl"

    def __init__(self, selector: str | None = None) -> None:
        self._cl = _import_cl()
        self.device = choose_device(selector)

    def device_identity(self) -> str:
        d = self.device
        return f"{d.platform.name} | {d.name} | {d.version} | driver {d.driver_version}"

    def device_limits(self) -> dict[str, Any]:
        """The device limits work-group lowering reads (keys of ``caps_from_device``)."""
        d = self.device
        return {
            "max_work_group_size": int(d.max_work_group_size),
            "max_work_item_sizes": tuple(int(x) for x in d.max_work_item_sizes),
            "local_mem_size": int(d.local_mem_size),
            "max_compute_units": int(d.max_compute_units),
            "is_gpu": bool(d.type & self._cl.device_type.GPU),
            "preferred_wg_multiple": self.simd_width(),
        }

    def simd_width(self) -> int:
        """The warp/wavefront width: the vendor attribute where there is one (NVIDIA's warp size,
        AMD's wavefront width), else on a GPU a trivial kernel's preferred work-group size
        multiple, else 32 (a CPU device: no warps to fill)."""
        cl, d = self._cl, self.device
        for attr in ("WARP_SIZE_NV", "WAVEFRONT_WIDTH_AMD"):
            code = getattr(cl.device_info, attr, None)
            if code is not None:
                try:
                    return int(d.get_info(code))
                except (cl.Error, cl.LogicError, ValueError):
                    pass
        if not d.type & cl.device_type.GPU:
            return 32
        try:
            ctx = cl.Context([d])
            prg = cl.Program(ctx, "__kernel void mdp_probe(__global int *a) { a[get_global_id(0)] = 0; }").build()
            return int(prg.mdp_probe.get_work_group_info(cl.kernel_work_group_info.PREFERRED_WORK_GROUP_SIZE_MULTIPLE, d))
        except Exception:  # noqa: BLE001 - a device that cannot build the probe keeps the usual width
            return 32
