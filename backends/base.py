"""The backend interface: ``Backend`` renders a ``Plan`` to ``GeneratedCode``; ``TargetCaps`` is data.

A backend only chooses spellings (pragmas, thread builtins, qualifiers); every decision about
loops, tiles, parallelism and memory is already in the Plan.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, TypeVar

from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.plan import Plan
from mdpoly.ir.residency import DeviceData
from mdpoly.ir.target import TargetCaps

#: What lowering produces for some target: a loop-tree ``Plan`` (OpenMP) or a ``KernelPlan``
#: (work-group targets); a backend renders one kind.
LoweredPlan = Plan | KernelPlan
PlanT = TypeVar("PlanT", bound=LoweredPlan)

__all__ = ["Backend", "GeneratedCode", "TargetCaps", "TeamCode"]


@dataclass(frozen=True, slots=True)
class GeneratedCode:
    """What splicing needs for one nest.

    ``definition``: the generated function(s) as C text; ``call``: the statement replacing the
    nest; ``headers``: system headers the definition needs (``"omp.h"``); ``flags``: compiler
    flags the user's build needs (``"-fopenmp"``); ``device_sources``: kernels compiled apart
    (empty for host-only targets).
    """

    name: str
    definition: str
    call: str
    headers: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    device_sources: tuple[tuple[str, str], ...] = ()
    preamble: str = ""
    #: the computation as run by every thread of a parallel region around it (OpenMP; ``None``
    #: where the target or the plan has none)
    team: TeamCode | None = None
    #: a GPU computation's device buffers and run-time checks, for keeping its arrays on the
    #: device over a host loop around it (``mdpoly.backends.residency``; ``None``: it cannot take part)
    device_data: DeviceData | None = None


@dataclass(frozen=True, slots=True)
class TeamCode:
    """A computation called by every thread of an enclosing parallel region, so that a sequential
    host loop around it runs inside one region instead of starting a team per iteration.

    ``kind``: ``"shared"`` -- ``definition`` is a function whose parallel loops are orphaned
    worksharing loops (each ends with a barrier), called by every thread; ``"single"`` -- the plan
    has no parallel loop: one thread calls the ordinary function. ``call`` is the call statement,
    ``exit_values`` assigns the live iterators (one thread runs it), ``check`` sets ``int``
    ``mdp_alias_ok`` to the run-time checks (``""``: there are none).

    A split reduction (``mdpoly.ir.plan.TeamForm``) is ``"shared"`` too: ``call`` leaves each
    thread's partials in the shared arrays that ``partials`` declares (C text, placed before the
    region, which then has at most ``max_threads`` threads) and ends with a barrier; ``finish``,
    run by one thread afterwards, combines them and stores the outputs.
    """

    kind: str
    definition: str
    call: str
    exit_values: str
    check: str
    finish: str = ""
    partials: str = ""
    max_threads: int = 0


class Backend(ABC, Generic[PlanT]):
    """A code generator for one target."""

    name: str
    caps: TargetCaps

    @abstractmethod
    def render(self, plan: PlanT) -> GeneratedCode:
        """Render ``plan`` (already checked) as C text for this target."""
