"""mdpoly's intermediate representations; every type is a frozen dataclass."""

from mdpoly.ir.mdh import (
    Access,
    Affine,
    Buffer,
    Combine,
    Dim,
    MdhExpr,
    OutputWrite,
    ScalarFunction,
)
from mdpoly.ir.nest import (
    FileAnalysis,
    LoopSummary,
    NestAnalysis,
    NestOutcome,
    SourceSpan,
)

__all__ = [
    "Access", "Affine", "Buffer", "Combine", "Dim", "FileAnalysis", "LoopSummary", "MdhExpr", "NestAnalysis", "NestOutcome",
    "OutputWrite", "ScalarFunction", "SourceSpan",
]
