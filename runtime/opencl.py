"""``OpenCLRunner``: build OpenCL C kernels with pyopencl and time them with profiling events.

A ``KernelRequest`` is a ``BuildRequest`` (``language="opencl"``, ``source`` the OpenCL C text,
``flags`` the build options) plus the launches one call makes: each ``Launch`` names a kernel of
the program and its global and local sizes; every kernel receives the arguments of ``args`` in
order (arrays as buffers, shape-``()`` specs by value with their dtype), as mdpoly's generated
kernels do (``<nest>`` and ``<nest>_combine`` share one argument list).

``run`` uploads the inputs, makes ``warmup`` untimed and ``repeats`` timed calls, each starting
from the original buffer contents, and returns the summed kernel time of each timed call from
``CL_PROFILING_COMMAND_START``/``END`` plus the outputs of the first call. OpenCL cannot stop a
running kernel, so ``timeout`` is checked between calls only. Device choice: a selector (index
or name substring), else the first GPU, else the first device -- the rule of the generated host
code. ``device_limits()`` gives the limits lowering reads (``caps_from_device``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime.base import BuildFailed, BuildRequest, Built, Measurement, RunFailed, RunTimedOut


class NoOpenCLDevice(RunFailed):
    """pyopencl is missing, or no platform/device (matching the selector) exists."""

    kind = "no-device"


@dataclass(frozen=True, slots=True)
class Launch:
    kernel: str
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class KernelRequest(BuildRequest):
    launches: tuple[Launch, ...] = ()


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


class OpenCLRunner:
    name = "opencl"

    def __init__(self, selector: str | None = None) -> None:
        cl = _import_cl()
        self._cl = cl
        self.device = choose_device(selector)
        self.context = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.context, self.device,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._programs: dict[str, Any] = {}

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
        }

    def build(self, request: BuildRequest) -> Built:
        key = hashlib.sha256((request.source + "\0" + " ".join(request.flags)).encode()).hexdigest()[:16]
        if key in self._programs:
            return Built(request, key, 0.0)
        start = time.perf_counter()
        cl = self._cl
        try:
            program = cl.Program(self.context, request.source).build(options=list(request.flags))
        except (cl.RuntimeError, cl.LogicError) as exc:
            raise BuildFailed("OpenCL build failed", ["clBuildProgram", *request.flags], str(exc)[-4000:]) from exc
        self._programs[key] = program
        return Built(request, key, time.perf_counter() - start)

    def run(self, built: Built, inputs: dict[str, np.ndarray], repeats: int = 5,
            warmup: int = 1, timeout: float = 30.0) -> Measurement:
        cl = self._cl
        req = built.request
        launches = req.launches if isinstance(req, KernelRequest) else ()
        if not launches:
            raise RunFailed("an OpenCL run needs a KernelRequest with at least one Launch")
        program = self._programs[built.artifact]
        hosts: list[np.ndarray] = []
        bufs: list[Any] = []
        for spec in req.args:
            arr = np.ascontiguousarray(inputs[spec.name], dtype=spec.dtype).reshape(spec.shape)
            hosts.append(arr)
            if spec.shape == ():
                bufs.append(arr.dtype.type(arr))
            else:
                bufs.append(cl.Buffer(self.context, cl.mem_flags.READ_WRITE, max(arr.nbytes, 1)))
        try:
            kernels = [(getattr(program, ln.kernel), ln) for ln in launches]
        except (AttributeError, cl.LogicError) as exc:
            raise RunFailed(f"kernel not in the program: {exc}") from exc
        times: list[float] = []
        outputs: dict[str, np.ndarray] = {}
        began = time.perf_counter()
        for call in range(warmup + repeats):
            try:
                for spec, arr, buf in zip(req.args, hosts, bufs):
                    if spec.shape != ():
                        cl.enqueue_copy(self.queue, buf, arr)
                events = []
                for kern, ln in kernels:
                    kern.set_args(*bufs)
                    events.append(cl.enqueue_nd_range_kernel(self.queue, kern, ln.global_size, ln.local_size))
                self.queue.finish()
            except cl.Error as exc:
                raise RunFailed(f"OpenCL run failed: {exc}") from exc
            if call == 0:
                for spec, buf, arr in zip(req.args, bufs, hosts):
                    if spec.is_output and spec.shape != ():
                        out = np.empty_like(arr)
                        cl.enqueue_copy(self.queue, out, buf)
                        outputs[spec.name] = out
            if call >= warmup:
                times.append(sum((e.profile.end - e.profile.start) for e in events) * 1e-9)
            if time.perf_counter() - began > timeout:
                raise RunTimedOut(f"candidate ran longer than {timeout:.1f} s")
        return Measurement(tuple(times), outputs)
