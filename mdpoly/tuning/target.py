"""``TuningTarget``: what the tuner needs from one target, behind one interface.

The search driver (``mdpoly.tuning.tune``) and the cost function (``mdpoly.tuning.evaluate``)
know nothing about OpenMP or OpenCL: a target plugs in

* its parameter type ``P`` (``TuningParams`` for OpenMP, ``GpuParams`` for OpenCL/CUDA) with
  ``default``, ``violations``, ``describe``, ``to_dict``/``from_dict`` (the cache's JSON);
* its search space, ``space(mdh, sizes)`` -> ``TargetSpace`` (flat ``ParamSpec``s for pyATF and
  ``to_params(config) -> P``), and ``neighbours`` for the local refinement around the default;
* its candidates, ``candidate(mdh, params, sizes, args) -> Candidate``: a ``BuildRequest`` for
  ``runner`` -- the generated code as the output file gets it, with an exported entry (and, for
  GPU targets, a timing export over the host code's own profile) -- plain data that pickles;
* its ``runner`` (measures candidates), ``identity()`` (device + compiler, in the cache key) and
  ``calibrate_from_default`` (GPU kernels are timed by repetitions sized on the default's time,
  not on the sequential reference's).

The reference outputs come from the original nest compiled for the host CPU (the evaluator's
reference runner, an ``OpenMPRunner``); a device target may instead take its default
configuration's outputs when the original is too slow, cross-checked against it
(``mdpoly.tuning.evaluate``). ``OpenMPTarget`` here keeps the OpenMP
tuning exactly as it was; the work-group targets are in ``mdpoly.tuning.gpu``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from mdpoly.backends.base import Backend
from mdpoly.backends.entry import entry_function
from mdpoly.diagnostics import MdpolyError
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower import check_plan, default_params, lower, violations
from mdpoly.lower.params import TuningParams, params_from_dict, params_to_dict
from mdpoly.runtime.base import ArgSpec, BuildRequest, Runner
from mdpoly.tuning.atf import Config, ParamSpec

P = TypeVar("P")
#: a ``TargetSpace`` only produces parameter sets, so it is covariant in their type
P_co = TypeVar("P_co", covariant=True)

#: Exported symbol of an OpenMP candidate (``mdpoly.backends.entry``).
ENTRY = "mdpoly_entry"


class Rejected(Exception):
    """A candidate that cannot be used; ``kind`` says why in one word."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(f"{kind}: {why}")
        self.kind = kind
        self.why = why


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the runner builds and runs for one parameter set: plain data that pickles. ``inputs``
    are arguments beyond the nest's own buffers; ``function`` is the generated function as the
    output file gets it (the tuning log records its SHA-256, so a tuned ``out.c`` can be matched
    with the candidate that was measured)."""

    request: BuildRequest
    inputs: dict[str, np.ndarray] = field(default_factory=dict, hash=False, compare=False)
    function: str = ""


class TargetSpace(Protocol[P_co]):
    specs: tuple[ParamSpec, ...]

    def to_params(self, cfg: Config) -> P_co: ...


class TuningTarget(Protocol[P]):
    """One target's side of tuning (see the module docstring)."""

    name: str
    caps: TargetCaps
    runner: Runner
    space_version: int
    calibrate_from_default: bool

    def default(self, mdh: MdhExpr) -> P: ...

    def space(self, mdh: MdhExpr, sizes: dict[str, int]) -> TargetSpace[P]: ...

    def neighbours(self, space: TargetSpace[P], params: P) -> list[P]: ...

    def violations(self, mdh: MdhExpr, params: P) -> list[str]: ...

    def candidate(self, mdh: MdhExpr, params: P, sizes: dict[str, int], args: tuple[ArgSpec, ...]) -> Candidate: ...

    def describe(self, mdh: MdhExpr, params: P) -> str: ...

    def to_dict(self, params: P) -> dict[str, Any]: ...

    def from_dict(self, data: dict[str, Any]) -> P: ...

    def identity(self) -> dict[str, str]: ...


# {{{ OpenMP


class OpenMPTarget:
    """The OpenMP lowering (``TuningParams``, ``mdpoly.tuning.space``) measured by ``OpenMPRunner``.

    ``render`` replaces the candidate's C source generator (tests inject broken candidates).
    """

    name = "openmp"
    #: 2: packed panels (``PACK``) joined the space; results tuned without them are not reused;
    #: 3: ``PREFETCH`` joined it (and the packed default's cache tiles changed)
    space_version = 3
    calibrate_from_default = False

    def __init__(self, backend: Backend, runner: Any, strict_fp: bool = False,
                 render: Callable[[TuningParams], str] | None = None) -> None:
        self.backend = backend
        self.caps = backend.caps
        self.runner = runner
        self.strict_fp = strict_fp
        self.render = render

    def default(self, mdh: MdhExpr) -> TuningParams:
        return default_params(mdh, self.caps, self.strict_fp)

    def space(self, mdh: MdhExpr, sizes: dict[str, int]) -> Any:
        from mdpoly.tuning.space import build_space
        return build_space(mdh, sizes, self.caps, self.strict_fp)

    def neighbours(self, space: Any, params: TuningParams) -> list[TuningParams]:
        from mdpoly.tuning.space import neighbours
        return neighbours(space, params, self.caps)

    def violations(self, mdh: MdhExpr, params: TuningParams) -> list[str]:
        return violations(mdh, params)

    def source(self, mdh: MdhExpr, params: TuningParams) -> str:
        """The candidate's C source: preamble, generated function, ``mdpoly_entry``.

        :raises Rejected: (``constraint``) when lowering or the plan checks refuse ``params``.
        """
        bad = violations(mdh, params)
        if bad:
            raise Rejected("constraint", ", ".join(bad))
        try:
            plan = lower(mdh, params)
            check_plan(plan)
            code = self.backend.render(plan)
        except MdpolyError as exc:
            raise Rejected("constraint", f"{type(exc).__name__}: {exc}") from exc
        return code.preamble + code.definition + entry_function(ENTRY, plan.params, plan.name)

    def candidate(self, mdh: MdhExpr, params: TuningParams, sizes: dict[str, int],
                  args: tuple[ArgSpec, ...]) -> Candidate:
        src = self.render(params) if self.render is not None else self.source(mdh, params)
        return Candidate(BuildRequest(src, ENTRY, args))

    def describe(self, mdh: MdhExpr, params: TuningParams) -> str:
        return params.describe(mdh)

    def to_dict(self, params: TuningParams) -> dict[str, Any]:
        return params_to_dict(params)

    def from_dict(self, data: dict[str, Any]) -> TuningParams:
        return params_from_dict(data)

    def identity(self) -> dict[str, str]:
        return {"device": self.runner.device_identity(), "compiler": self.runner.compiler_identity()}

# }}}
