"""Register blocks (``TuningParams.register_tile``): unroll-and-jam of concat dims inside the
innermost tile, run against reference loops with prime and non-divisible sizes.

Each program runs with OMP_NUM_THREADS = 1, 2, 3 (see ``harness.run_differential``); every
Plan passes ``check_plan``, whose isl coverage check sees the micro-kernel and the remainder
nests as disjoint parts of the domain.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mdh_examples as E
import pytest
from harness import run_differential

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.mdh import Combine, MdhExpr
from mdpoly.ir.plan import REGISTER_LAYER, Loop, walk
from mdpoly.lower import TuningParams, check_plan, default_params, lower, violations

BACKEND = OpenMPBackend()

MATMUL_REF = ("for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) for (long k = 0; k < {k}; k++)"
              " C[i][j] += A[i][k] * B[k][j];")
MCC_REF = ("for (long n = 0; n < {n}; n++) for (long p = 0; p < {p}; p++) for (long q = 0; q < {q}; q++)"
           " for (long k = 0; k < {k}; k++) for (long r = 0; r < {r}; r++) for (long s = 0; s < {s}; s++)"
           " for (long c = 0; c < {c}; c++) out[n][p][q][k] += in[n][p+r][q+s][c] * w[k][r][s][c];")
TC_REF = ("for (long a = 0; a < {a}; a++) for (long b = 0; b < {b}; b++) for (long c = 0; c < {c}; c++)"
          " for (long d = 0; d < {d}; d++) for (long e = 0; e < {e}; e++) C[a][b][c] += A[a][e][b][d] * B[d][e][c];")


def _go(tmp: Path, mdh: MdhExpr, ref: str, shapes: dict[str, tuple[int, ...]], params: TuningParams) -> None:
    assert not violations(mdh, params), violations(mdh, params)
    plan = lower(mdh, params)
    check_plan(plan)
    assert any(isinstance(s, Loop) and s.layer == REGISTER_LAYER for s in walk(plan.body)) == params.register_blocked
    run_differential(tmp, plan, BACKEND.render(plan), ref, shapes)


MATMUL_PARAMS = [
    # j SIMD (concat): 3 x (2 vectors of 8) accumulators, tiles not multiples of the block
    TuningParams(tiles=((16,), (32,), (8,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                 register_tile=(3, 16, 1), simd_lanes=8),
    # two tile layers, block larger than some remainder tiles, 2 threads fixed
    TuningParams(tiles=((20, 10), (48, 24), (7,)), parallel_dims=(0,), loop_order=(2, 0, 1), vector_dim=1,
                 register_tile=(4, 8, 1), simd_lanes=4, num_threads=2),
    # k SIMD (reduction): 2 x 5 vector partial sums
    TuningParams(tiles=((9,), (11,), (16,)), parallel_dims=(1,), loop_order=(0, 1, 2), vector_dim=2,
                 register_tile=(2, 5, 1)),
    # no SIMD loop: scalar accumulators, untiled k
    TuningParams(tiles=((8,), (13,), ()), parallel_dims=(0, 1), loop_order=(0, 1, 2), vector_dim=None,
                 register_tile=(3, 2, 1)),
    # only j blocked
    TuningParams(tiles=((5,), (64,), (10,)), parallel_dims=(0,), loop_order=(0, 2, 1), vector_dim=1,
                 register_tile=(1, 24, 1), simd_lanes=8),
]


@pytest.mark.parametrize("params", MATMUL_PARAMS, ids=lambda p: p.describe(E.matmul(1, 1, 1)))
@pytest.mark.parametrize("m,n,k", [(37, 43, 31), (61, 101, 29), (2, 3, 5)])
def test_matmul_register_tile(tmp_path: Path, params: TuningParams, m: int, n: int, k: int) -> None:
    _go(tmp_path, E.matmul(m, n, k), MATMUL_REF.format(m=m, n=n, k=k), {"A": (m, k), "B": (k, n), "C": (m, n)},
        params)


def test_matmul_register_tile_double_init(tmp_path: Path) -> None:
    m, n, k = 23, 47, 19
    ref = (f"for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) {{ C[i][j] = 1.5;"
           f" for (long k = 0; k < {k}; k++) C[i][j] += A[i][k] * B[k][j]; }}")
    params = TuningParams(tiles=((12,), (40,), (8,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                          register_tile=(4, 8, 1), simd_lanes=4)
    _go(tmp_path, E.matmul(m, n, k, "double", "assign", "1.5"), ref, {"A": (m, k), "B": (k, n), "C": (m, n)}, params)


@pytest.mark.parametrize("ty,m,n", [("float", 31, 53), ("int", 17, 29)])
def test_column_max_blocked_reduction_simd(tmp_path: Path, ty: str, m: int, n: int) -> None:
    """max as the operator; the reduction dim is the SIMD dim, the concat dim blocked by 3."""
    ref = (f"for (long j = 0; j < {n}; j++) {{ mx[j] = A[0][j];"
           f" for (long i = 1; i < {m}; i++) mx[j] = A[i][j] > mx[j] ? A[i][j] : mx[j]; }}")
    mdh = E.colmax(m, n, ty)
    mdh = replace(mdh, outputs=(replace(mdh.outputs[0], update="accumulate"),))
    ref = f"for (long j = 0; j < {n}; j++) for (long i = 0; i < {m}; i++) mx[j] = A[i][j] > mx[j] ? A[i][j] : mx[j];"
    params = TuningParams(tiles=((8,), (10,)), parallel_dims=(1,), loop_order=(1, 0), vector_dim=0,
                          register_tile=(1, 3))
    _go(tmp_path, mdh, ref, {"A": (m, n), "mx": (n,)}, params)


MCC_SIZES = (1, 5, 7, 19, 13, 3, 3)
MCC_PARAMS = [
    # c SIMD (reduction): q x k = 3 x 4 blocks of vector partials
    TuningParams(tiles=((), (), (), (8,), (), (), (8,)), parallel_dims=(3,), loop_order=(0, 1, 2, 3, 4, 5, 6),
                 vector_dim=6, register_tile=(1, 1, 3, 4, 1, 1, 1)),
    # k SIMD (concat): p x k = 2 x (2 vectors of 4), c innermost reduction
    TuningParams(tiles=((), (4,), (), (16,), (), (), ()), parallel_dims=(1, 3), loop_order=(0, 1, 2, 4, 5, 6, 3),
                 vector_dim=3, register_tile=(1, 2, 1, 8, 1, 1, 1), simd_lanes=4),
    # all four concat dims blocked (n by 1), prime-sized remainders everywhere, no SIMD
    TuningParams(tiles=((), (3,), (5,), (6,), (), (), (4,)), parallel_dims=(2,), loop_order=(3, 2, 1, 0, 4, 5, 6),
                 vector_dim=None, register_tile=(1, 2, 2, 3, 1, 1, 1)),
]


@pytest.mark.parametrize("params", MCC_PARAMS, ids=lambda p: p.describe(E.mcc(*MCC_SIZES)))
def test_mcc_register_tile(tmp_path: Path, params: TuningParams) -> None:
    n, p, q, k, c, r, s = MCC_SIZES
    shapes = {"in": (n, p + r - 1, q + s - 1, c), "w": (k, r, s, c), "out": (n, p, q, k)}
    _go(tmp_path, E.mcc(n, p, q, k, c, r, s), MCC_REF.format(n=n, p=p, q=q, k=k, c=c, r=r, s=s), shapes, params)


TC_SIZES = (5, 7, 37, 3, 11)
TC_PARAMS = [
    TuningParams(tiles=((), (4,), (16,), (), ()), parallel_dims=(1, 2), loop_order=(0, 1, 3, 4, 2), vector_dim=2,
                 register_tile=(2, 3, 16, 1, 1), simd_lanes=8),
    TuningParams(tiles=((2,), (), (), (), ()), parallel_dims=(0,), loop_order=(0, 2, 1, 3, 4), vector_dim=4,
                 register_tile=(1, 3, 5, 1, 1)),
]


@pytest.mark.parametrize("params", TC_PARAMS, ids=lambda p: p.describe(E.contraction(*TC_SIZES)))
def test_contraction_register_tile(tmp_path: Path, params: TuningParams) -> None:
    a, b, c, d, e = TC_SIZES
    shapes = {"A": (a, e, b, d), "B": (d, e, c), "C": (a, b, c)}
    _go(tmp_path, E.contraction(*TC_SIZES), TC_REF.format(a=a, b=b, c=c, d=d, e=e), shapes, params)


@pytest.mark.parametrize("mdh,ref,shapes", [
    (E.matmul(67, 131, 41), MATMUL_REF.format(m=67, n=131, k=41), {"A": (67, 41), "B": (41, 131), "C": (67, 131)}),
    (E.contraction(*TC_SIZES), TC_REF.format(a=5, b=7, c=37, d=3, e=11), {"A": (5, 11, 7, 3), "B": (3, 11, 37),
                                                                          "C": (5, 7, 37)}),
])
def test_default_params_block_matmul_like(tmp_path: Path, mdh: MdhExpr, ref: str,
                                          shapes: dict[str, tuple[int, ...]]) -> None:
    params = default_params(mdh, BACKEND.caps)
    assert params.register_blocked
    _go(tmp_path, mdh, ref, shapes, params)


def test_register_tile_constraints() -> None:
    mdh = E.matmul(64, 64, 64)
    base = TuningParams(tiles=((16,), (32,), (8,)), parallel_dims=(0,), loop_order=(0, 2, 1), vector_dim=1,
                        register_tile=(4, 16, 1), simd_lanes=8)
    assert not violations(mdh, base)
    bad = [
        replace(base, register_tile=(4, 16, 2)),            # reduction dim blocked
        replace(base, register_tile=(4, 12, 1)),            # not a multiple of the lanes
        replace(base, register_tile=(4, 1, 1)),             # concat SIMD dim not blocked
        replace(base, register_tile=(12, 32, 1)),           # 48 accumulators
        replace(base, register_tile=(4, 16)),               # wrong length
    ]
    for p in bad:
        assert "register-tile" in violations(mdh, p), p
        with pytest.raises(CompilerBug):
            lower(mdh, p)
    assert "register-tile" in violations(E.elementwise_indices(8, 8), TuningParams(
        tiles=((), ()), parallel_dims=(), loop_order=(0, 1), register_tile=(2, 1)))
    assert E.matmul(4, 4, 4).dims[2].combine is Combine.ADD
