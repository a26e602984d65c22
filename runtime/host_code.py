"""``HostCodeRunner``: a GPU candidate as it ships -- host C with its kernels -- built as a shared library and run in a worker.

A GPU tuning candidate is the text the user gets: the target's host preamble, the generated host
function (kernel source embedded as a string; it builds the kernels, keeps its device buffers,
copies, launches and profiles as in ``out.c``), ``mdpoly_entry`` (``mdpoly.backends.entry``) and
``TIMING_ENTRY``, which copies the host code's profile of its last call. The runner builds it
with ``cc -O2 -shared -fPIC`` plus the API's include and link flags (``-lOpenCL``; for CUDA the
toolkit's ``-lcuda -lnvrtc`` from ``mdpoly.cuda_toolkit``) and runs it through
``mdpoly.runtime.ctypes_worker`` in a process of its own (a crash or a hang ends that process),
with ``MDPOLY_PROFILE=1`` so that the host code records its events, and the device selection of
the target (``MDPOLY_OPENCL_DEVICE``, ``MDPOLY_CUDA_DEVICE``) in its environment. A measurement's
``times`` are the kernel times the host code measured, ``call_times`` its whole calls (first
command to last, copies included), ``wall_seconds`` the whole run. The inputs go to the device
once per candidate: after the first call (whose outputs are checked), the worker calls the
candidate's ``HOLD_ENTRY``, which keeps every array on the device, so the warm-up and timed calls
run the kernels without copies (their ``transfer_times`` are 0) and a large input (411 MB for
MatMul 16x4096x25088) is not uploaded again before each timed call. The timeout bounds the timed
calls; the worker's start and the warm-up calls before them, where the kernels are built, get
at least ``WARM_SECONDS``. Host code that refuses a launch the device cannot run (its kernel's
queried limits) exits with ``LAUNCH_REFUSED_STATUS``: a ``LaunchRefused`` failure, kind ``launch``.

The device's limits and identity come from elsewhere (``mdpoly.runtime.opencl``,
``mdpoly.runtime.cuda``): this runner only builds and runs.
"""

from __future__ import annotations

from mdpoly.runtime.openmp import OpenMPRunner

#: The exported symbol ``void mdpoly_timing(double *out)`` of a GPU candidate.
TIMING_ENTRY = "mdpoly_timing"
#: The exported symbol ``void mdpoly_hold(void **args)`` of a GPU candidate: registers its arrays as
#: device-resident (``BuildRequest.hold``), so the calls after the checked first one copy nothing.
HOLD_ENTRY = "mdpoly_hold"
#: Seconds a candidate's worker start and first (warm-up) call may take at least: the host code
#: builds its kernels in its first call (PoCL compiles again for each new work-group size).
WARM_SECONDS = 20.0


class HostCodeRunner(OpenMPRunner):
    """Builds and runs shipped GPU host code (see the module docstring).

    :arg name: the target's name (``opencl``, ``cuda``).
    :arg compile_flags: include flags of the API's headers.
    :arg libs: the libraries the host code links with.
    :arg env: environment the host code reads (device selection, caches).
    :arg device: the identity of the device that ``env`` selects (``device_identity()``).
    """

    timing = TIMING_ENTRY
    #: the worker's start and warm-up call (the host code builds its kernels there) may take this long
    warm_seconds = WARM_SECONDS

    def __init__(self, name: str, compile_flags: tuple[str, ...] = (), libs: tuple[str, ...] = (),
                 env: dict[str, str] | None = None, device: str = "", work_dir: str | None = None) -> None:
        super().__init__(work_dir)
        self.device = device
        self.compile_flags = compile_flags
        self.link_libs = libs
        self.host_env = dict(env or {})
        self.name = name
        self.flags = ("-O2", "-shared", "-fPIC", *compile_flags)
        self.libs = (*libs, "-lm")
        self.env = {**(env or {}), "MDPOLY_PROFILE": "1"}

    def device_identity(self) -> str:
        return self.device
