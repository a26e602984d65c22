"""Lowering an ``MdhExpr`` to a ``Plan``: tuning parameters, defaults, the lowering, the checks."""

from mdpoly.lower.checks import check_plan
from mdpoly.lower.heuristics import default_params
from mdpoly.lower.lower import lower
from mdpoly.lower.params import CONSTRAINTS, PARAMETERS, TuningParams, violations

__all__ = ["CONSTRAINTS", "PARAMETERS", "TuningParams", "check_plan", "default_params", "lower", "violations"]
