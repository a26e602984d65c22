"""The types of the tuning-parameter tables: ``ParamSpec`` (one parameter) and ``Constraint`` (one
named predicate), shared by every target's table (``mdpoly.lower.params`` for OpenMP,
``mdpoly.lower.gpu_params`` for the work-group targets).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps

P = TypeVar("P")


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One tuning parameter: its field in the target's parameter type, its name in the MDH
    formalism, what it means, and (when the table enumerates them) its candidate values for an
    ``MdhExpr`` on a ``TargetCaps``."""

    field: str
    mdh_name: str
    doc: str
    values: Callable[[MdhExpr, TargetCaps], Iterator[object]] | None = None


@dataclass(frozen=True, slots=True)
class Constraint(Generic[P]):
    """A named predicate on a parameter set ``P`` of an ``MdhExpr`` for a target's ``TargetCaps``."""

    name: str
    doc: str
    holds: Callable[[MdhExpr, P, TargetCaps], bool]
