"""The one runtime interface: build generated sources, run them on buffers, measure.

A ``BuildRequest`` is plain data (source text, entry symbol, argument layout, compiler flags),
so it pickles into worker processes. ``Runner.build`` returns a ``Built``; ``Runner.run`` executes
it on numpy buffers and returns a ``Measurement`` with the outputs of the first call and the
times of the timed calls. Failures are typed: ``BuildFailed`` (with command and log),
``RunFailed`` (crash, timeout, bad exit), so a tuner can discard a candidate and go on.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


class RuntimeFailure(Exception):
    """Base of runtime failures; ``kind`` is a short word for logs (build, crash, timeout)."""

    kind = "failure"


class BuildFailed(RuntimeFailure):
    kind = "build"

    def __init__(self, message: str, command: list[str], log: str) -> None:
        super().__init__(f"{message}\n$ {' '.join(command)}\n{log}")
        self.command = command
        self.log = log


class RunFailed(RuntimeFailure):
    kind = "crash"


class RunTimedOut(RunFailed):
    kind = "timeout"


#: Exit status and stderr prefix of generated host code that refuses a launch the device cannot run
#: (more work-items or ``__local``/shared memory than the compiled kernel allows, queried after its
#: compilation): the run says so before launching instead of failing in the launch.
LAUNCH_REFUSED_STATUS = 3
LAUNCH_REFUSED_MARK = "mdpoly: launch refused:"


class LaunchRefused(RunFailed):
    """The host code refused to launch a kernel the device cannot run (``LAUNCH_REFUSED_STATUS``)."""

    kind = "launch"


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """One argument of the entry point, in order.

    The entry point has the C signature ``void entry(void **args)``; ``args[k]`` points to the
    data of argument ``k`` (for a by-value scalar, to its value).
    """

    name: str
    dtype: str                 # numpy dtype name, e.g. "float32", "int32", "float64"
    shape: tuple[int, ...]     # () for a scalar
    is_output: bool = False


@dataclass(frozen=True, slots=True)
class BuildRequest:
    source: str
    entry: str
    args: tuple[ArgSpec, ...]
    language: str = "c"
    flags: tuple[str, ...] = ()
    compiler: str = "cc"
    #: GPU host code: the exported ``void hold(void **args)`` that keeps the arguments on the device
    #: for the calls after it (no copies in or out); the worker calls it once, after the checked
    #: first call, so the warm-up and timed calls copy nothing ("" : no such export).
    hold: str = ""


@dataclass(frozen=True, slots=True)
class Built:
    request: BuildRequest
    artifact: str              # path of the shared library (or binary) produced
    build_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Measurement:
    """The timed calls of one run: ``times`` is what a tuner minimises (a CPU call's wall time; a
    GPU call's kernel time as its host code's profile reports it), ``call_times`` each call's
    whole time where the code reports it separately (GPU: first command to last, transfers
    included), ``wall_seconds`` the whole run (worker start, build, warm-up and timed calls),
    ``transfer_times`` each timed call's copies where the code reports them (GPU profile),
    ``host_times`` each timed call's wall time in the worker (what the timed calls really take)."""

    times: tuple[float, ...]
    outputs: dict[str, np.ndarray] = field(default_factory=dict, hash=False, compare=False)
    call_times: tuple[float, ...] = ()
    wall_seconds: float = 0.0
    transfer_times: tuple[float, ...] = ()
    host_times: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("inf")


class Runner(Protocol):
    name: str

    def build(self, request: BuildRequest) -> Built: ...

    def run(self, built: Built, inputs: dict[str, np.ndarray], repeats: int = 5,
            warmup: int = 1, timeout: float = 30.0) -> Measurement: ...

    def device_identity(self) -> str: ...
