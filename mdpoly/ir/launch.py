"""The launch IR: ``LaunchSpec``, how one ``KernelPlan``'s kernels are launched, in host terms.

Produced by ``mdpoly.lower.gpu.launch_spec`` (and stored on the plan as ``KernelPlan.launch``);
read by the host-code writers (``mdpoly.backends.gpu_host`` and its OpenCL and CUDA spellings),
which render it and compute nothing of their own. Everything a call decides about its launches
is here, as expressions over the host function's parameters:

* ``bounds``: each dimension's lower bound ``mdp_lo_<d>`` and extent ``mdp_ext_<d>`` (``Affine``
  over the size parameters), computed first;
* ``skip_when_empty``: the values whose being ``<= 0`` makes the call do nothing (the concat
  extents: no point to compute, and no output to touch);
* ``counts``: values computed after that check (the work-groups ``mdp_nwg_<d>`` of each concat
  dimension), each a ``Count`` over earlier values;
* ``args``: the kernel arguments, in order, shared by every kernel of the plan;
* ``scratch``: device buffers of the host code's own (per-work-group partial results), with
  their element counts;
* ``launches``: the kernels in launch order, each with its work-groups per axis and work-items
  per work-group (the main kernel, then the combine kernel when the plan has partials).

``LaunchSpec.evaluate(sizes)`` gives every value for concrete sizes (what a test or a cost model
needs without rendering C).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from mdpoly.ir.mdh import Affine


@dataclass(frozen=True, slots=True)
class Count:
    """``ceil(constant * prod(values) / divisor)``: a non-negative count over earlier host values
    (named as in ``Bound.name`` and ``Derived.name``)."""

    values: tuple[str, ...] = ()
    constant: int = 1
    divisor: int = 1

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The count for the host values ``env``.

        :raises KeyError: when ``env`` lacks a value it names.
        """
        n = self.constant * math.prod(max(env[v], 0) for v in self.values)
        return -(-n // self.divisor)


@dataclass(frozen=True, slots=True)
class Bound:
    """``name = value``: a per-call integer over the host function's parameters."""

    name: str
    value: Affine


@dataclass(frozen=True, slots=True)
class Derived:
    """``name = count``, computed after the empty-call check."""

    name: str
    count: Count


@dataclass(frozen=True, slots=True)
class LaunchArg:
    """One kernel argument. ``kind``: ``buffer`` -- the device copy of the user's buffer ``name``;
    ``scalar`` -- the user's read-only scalar ``name``, by value; ``index`` -- the host value
    ``name`` (a bound or a count), as a 64-bit integer; ``scratch`` -- the scratch buffer ``name``."""

    kind: Literal["buffer", "scalar", "index", "scratch"]
    name: str


@dataclass(frozen=True, slots=True)
class Scratch:
    """A device buffer of the host code's own: ``elems`` elements of ``elem_type`` (host C type)."""

    name: str
    elem_type: str
    elems: Count


@dataclass(frozen=True, slots=True)
class KernelLaunch:
    """One launch of kernel ``kernel``: ``groups[a]`` work-groups of ``group_size[a]`` work-items
    along axis ``a``. ``items`` (one-axis launches only): the work-items that do any work when
    they do not fill whole work-groups (the kernel ignores the rest); an API that can launch
    exactly ``items`` work-items with a work-group size of its own choice may do so."""

    kernel: str
    groups: tuple[Count, ...]
    group_size: tuple[int, ...]
    items: Count | None = None


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """The launches of one plan's kernels (see the module docstring)."""

    bounds: tuple[Bound, ...]
    skip_when_empty: tuple[str, ...]
    counts: tuple[Derived, ...]
    args: tuple[LaunchArg, ...]
    scratch: tuple[Scratch, ...]
    launches: tuple[KernelLaunch, ...]

    def evaluate(self, sizes: Mapping[str, int]) -> dict[str, int]:
        """Every bound and count at the size parameters ``sizes`` (counts only when the call is
        not empty).

        :raises KeyError: when a size parameter has no value.
        """
        env: dict[str, int] = {}
        for b in self.bounds:
            env[b.name] = b.value.constant + sum(c * sizes[n] for n, c in b.value.terms)
        if any(env[v] <= 0 for v in self.skip_when_empty):
            return env
        for d in self.counts:
            env[d.name] = d.count.evaluate(env)
        return env
