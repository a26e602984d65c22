"""The benchmark workloads: name -> kernel file, full and quick sizes, FLOP count, numpy reference."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

KERNELS_DIR = Path(__file__).resolve().parent / "kernels"

Sizes = Mapping[str, int]


@dataclass(frozen=True)
class Workload:
    """One benchmark: a kernel program and the sizes it runs at.

    :arg name: short name used in tables and ``--only``.
    :arg kernel: file name under ``benchmarks/kernels/``.
    :arg full: ``-D`` sizes of the full run; ``quick`` those of ``--quick``.
    :arg flops: floating-point operations of one kernel execution, from the sizes.
    :arg numpy: name of the numpy reference in ``numpy_refs.py``, or ``None`` (shown as n/a).
    """

    name: str
    kernel: str
    full: dict[str, int]
    quick: dict[str, int]
    flops: Callable[[Sizes], float]
    numpy: str | None = None

    @property
    def source(self) -> Path:
        return KERNELS_DIR / self.kernel

    def sizes(self, quick: bool) -> dict[str, int]:
        return dict(self.quick if quick else self.full)


def _mcc_flops(s: Sizes) -> float:
    return 2.0 * s["N"] * s["P"] * s["Q"] * s["K"] * s["C"] * s["R"] * s["S"]


WORKLOADS = (
    Workload("sgemm", "sgemm.c", {"M": 1024, "N": 1024, "K": 1024}, {"M": 256, "N": 256, "K": 256},
             lambda s: 2.0 * s["M"] * s["N"] * s["K"], numpy="sgemm"),
    Workload("mcc_rw", "mcc.c", {"N": 1, "P": 7, "Q": 7, "K": 512, "C": 512, "R": 3, "S": 3},
             {"N": 1, "P": 7, "Q": 7, "K": 128, "C": 128, "R": 3, "S": 3}, _mcc_flops, numpy="mcc"),
    Workload("mcc_pc", "mcc.c", {"N": 1, "P": 4092, "Q": 4092, "K": 1, "C": 1, "R": 5, "S": 5},
             {"N": 1, "P": 1020, "Q": 1020, "K": 1, "C": 1, "R": 5, "S": 5}, _mcc_flops),
    Workload("matvec", "matvec.c", {"I": 8192, "K": 8192}, {"I": 2048, "K": 2048},
             lambda s: 2.0 * s["I"] * s["K"], numpy="matvec"),
    Workload("jacobi2d", "jacobi2d.c", {"N": 4096, "M": 4096}, {"N": 1024, "M": 1024},
             lambda s: 5.0 * (s["N"] - 2) * (s["M"] - 2), numpy="jacobi2d"),
    Workload("dot", "dot.c", {"N": 1 << 24}, {"N": 1 << 20}, lambda s: 2.0 * s["N"], numpy="dot"),
)
