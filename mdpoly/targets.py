"""The target registry: one frozen ``Target`` per code-generation target, looked up by name.

A ``Target`` is everything the rest of mdpoly knows about a target, as data and functions:
its names on the command line, its ``TargetCaps``, its tuning-parameter model (default,
constraints, description, the tuning cache's JSON form), ``lower`` (``MdhExpr`` -> its plan),
``check`` (run on every plan, raising ``CompilerBug``), ``render`` (the backend), its toolchain
(the flags a C build of its output needs: ``mdpoly-cc`` and the README use these) and how to get
a tuner for it. The CLI's ``--target`` choices, ``mdpoly-cc``, the tuning hook and the driver
look targets up here (``target_named``); nothing else branches on a target's name.

``TARGETS`` is the registry: ``openmp``, ``opencl`` and ``cuda`` are entered at import;
``register`` adds another (a test adds a toy target this way).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mdpoly.backends.base import Backend, GeneratedCode, LoweredPlan
from mdpoly.backends.cuda import CUDA_CAPS, CudaBackend
from mdpoly.backends.opencl import OPENCL_CAPS, OpenCLBackend
from mdpoly.backends.openmp import OPENMP_CAPS, OpenMPBackend
from mdpoly.diagnostics import MdpolyError
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.plan import Plan
from mdpoly.ir.target import TargetCaps
from mdpoly.lower import check_plan, default_params, lower, violations
from mdpoly.lower.gpu import lower_gpu
from mdpoly.lower.gpu_defaults import default_gpu_params
from mdpoly.lower.gpu_params import GpuParams, gpu_params_from_dict, gpu_params_to_dict, gpu_violations
from mdpoly.lower.kernel_checks import check_kernel_plan
from mdpoly.lower.params import TuningParams, params_from_dict, params_to_dict
from mdpoly.options import Options

P = TypeVar("P")                        # the target's tuning parameters
L = TypeVar("L", bound=LoweredPlan)     # the target's lowered plan


@dataclass(frozen=True, slots=True)
class Toolchain:
    """The flags a C compiler needs to build a file holding this target's generated code:
    ``compile_flags`` when compiling, ``link_flags`` when linking. ``locate`` (optional) finds
    them on this machine instead (CUDA's toolkit directories), returning ``None`` when it finds
    nothing, and then the fixed flags apply."""

    compile_flags: tuple[str, ...] = ()
    link_flags: tuple[str, ...] = ()
    locate: Callable[[], tuple[tuple[str, ...], tuple[str, ...]] | None] | None = None

    def flags(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(compiling, linking) flags on this machine."""
        found = self.locate() if self.locate is not None else None
        return found if found is not None else (self.compile_flags, self.link_flags)


@dataclass(frozen=True, slots=True)
class Target(Generic[P, L]):
    """One target (see the module docstring). ``P``: its tuning parameters; ``L``: its plan.

    ``word``: the target's name in prose (``"CUDA"``); ``spellings``: its ``--target`` names;
    ``device``: the device the generated host code will use, from ``Options`` (``None``: the
    host CPU); ``tuner(options)``: the tuning target (``mdpoly.tuning.target.TuningTarget``) on
    that device, or a ``str`` saying why there is none; ``None`` for the OpenMP tuner that
    ``mdpoly.tuning.tune.tune_nest`` builds around its own runner; ``limits(options)``: that
    device's name and limits (``caps_from_device``'s keys), queried at generation time, raising
    when there is no device (``mdpoly.device_limits``); ``None`` for a target planned without them.
    """

    name: str
    word: str
    spellings: tuple[str, ...]
    caps: TargetCaps
    default_params: Callable[[MdhExpr, TargetCaps, bool], P]
    violations: Callable[[MdhExpr, P, TargetCaps], list[str]]
    describe: Callable[[MdhExpr, P], str]
    to_dict: Callable[[P], dict[str, Any]]
    from_dict: Callable[[dict[str, Any]], P]
    lower: Callable[[MdhExpr, P, TargetCaps], L]
    check: Callable[[L, TargetCaps], None]
    backend: Callable[[TargetCaps], Backend[L]]
    toolchain: Toolchain
    device: Callable[[Options], str | None] = lambda options: None
    tuner: Callable[[Options], Any] | None = None
    limits: Callable[[Options], tuple[str, dict[str, Any]]] | None = None

    def render(self, plan: L, caps: TargetCaps) -> GeneratedCode:
        """``plan`` (checked) as C text, by this target's backend for ``caps``."""
        return self.backend(caps).render(plan)


# {{{ parameter models


def _omp_lower(mdh: MdhExpr, params: TuningParams, caps: TargetCaps) -> Plan:
    return lower(mdh, params)


def _omp_check(plan: Plan, caps: TargetCaps) -> None:
    check_plan(plan)


def _gpu_default(mdh: MdhExpr, caps: TargetCaps, strict_fp: bool) -> GpuParams:
    return default_gpu_params(mdh, caps)


def _describe(mdh: MdhExpr, params: TuningParams | GpuParams) -> str:
    return params.describe(mdh)

# }}}


# {{{ tuners and toolchains


def _opencl_tuner(options: Options) -> Any:
    from mdpoly.tuning.gpu import opencl_target
    return opencl_target(options.opencl_device or None)


def _cuda_tuner(options: Options) -> Any:
    from mdpoly.tuning.gpu import cuda_target
    return cuda_target(options.cuda_device or None)


def _opencl_limits(options: Options) -> tuple[str, dict[str, Any]]:
    from mdpoly.runtime.opencl import OpenCLDevice
    dev = OpenCLDevice(options.opencl_device or None)
    return str(dev.device.name).strip(), dev.device_limits()


def _cuda_limits(options: Options) -> tuple[str, dict[str, Any]]:
    from mdpoly.runtime.cuda import CudaDevice
    dev = CudaDevice(options.cuda_device or None)
    return dev.device_name(), dev.device_limits()


def _cuda_flags() -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The CUDA toolkit's ``-I``/``-L`` flags and libraries (``mdpoly.cuda_toolkit``), if found."""
    from mdpoly.cuda_toolkit import find_cuda
    kit = find_cuda()
    return None if kit is None else (kit.compile_flags(), kit.link_flags())

# }}}


OPENMP: Target[TuningParams, Plan] = Target(
    name="openmp", word="OpenMP", spellings=("openmp",), caps=OPENMP_CAPS,
    default_params=default_params, violations=violations, describe=_describe,
    to_dict=params_to_dict, from_dict=params_from_dict,
    lower=_omp_lower, check=_omp_check, backend=OpenMPBackend,
    toolchain=Toolchain(("-fopenmp",), ("-fopenmp",)))

OPENCL: Target[GpuParams, KernelPlan] = Target(
    name="opencl", word="OpenCL", spellings=("opencl",), caps=OPENCL_CAPS,
    default_params=_gpu_default, violations=gpu_violations, describe=_describe,
    to_dict=gpu_params_to_dict, from_dict=gpu_params_from_dict,
    lower=lower_gpu, check=check_kernel_plan, backend=OpenCLBackend,
    toolchain=Toolchain((), ("-lOpenCL",)),
    device=lambda options: options.opencl_device, tuner=_opencl_tuner, limits=_opencl_limits)

CUDA: Target[GpuParams, KernelPlan] = Target(
    name="cuda", word="CUDA", spellings=("cuda",), caps=CUDA_CAPS,
    default_params=_gpu_default, violations=gpu_violations, describe=_describe,
    to_dict=gpu_params_to_dict, from_dict=gpu_params_from_dict,
    lower=lower_gpu, check=check_kernel_plan, backend=CudaBackend,
    toolchain=Toolchain((), ("-lcuda", "-lnvrtc"), _cuda_flags),
    device=lambda options: options.cuda_device, tuner=_cuda_tuner, limits=_cuda_limits)

#: Every target by name. Filled here at import; ``register`` adds more.
TARGETS: dict[str, Target[Any, Any]] = {t.name: t for t in (OPENMP, OPENCL, CUDA)}


def register(target: Target[Any, Any]) -> None:
    """Add ``target`` (replacing one of the same name)."""
    TARGETS[target.name] = target


def spellings() -> tuple[str, ...]:
    """Every ``--target`` spelling, in registry order."""
    return tuple(s for t in TARGETS.values() for s in t.spellings)


def target_named(name: str) -> Target[Any, Any]:
    """The target one of whose spellings is ``name``.

    :raises MdpolyError: for a name no target has.
    """
    for t in TARGETS.values():
        if name in t.spellings:
            return t
    raise MdpolyError(f"target '{name}' is not implemented yet (known: {', '.join(spellings())})")
