"""Lower hand-built MDH expressions, render with OpenMP, run against reference loops.

Float reductions compare within a relative tolerance (1e-4 float, 1e-10 double; see
``harness.tolerance``), integer and concat-only nests exactly. Each program runs with
OMP_NUM_THREADS = 1, 2, 3.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mdh_examples as E
import pytest
from harness import run_differential

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.ir.mdh import MdhExpr
from mdpoly.lower import TuningParams, check_plan, default_params, lower

BACKEND = OpenMPBackend()

MATMUL_REF = "for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) for (long k = 0; k < {k}; k++) C[i][j] += A[i][k] * B[k][j];"


def _go(tmp: Path, mdh: MdhExpr, ref: str, shapes: dict[str, tuple[int, ...]], params: TuningParams | None = None,
        scalars: dict[str, str] | None = None) -> None:
    p = params if params is not None else default_params(mdh, BACKEND.caps)
    plan = lower(mdh, p)
    check_plan(plan)
    run_differential(tmp, plan, BACKEND.render(plan), ref, shapes, scalars)


@pytest.mark.parametrize("m,n,k", [(37, 101, 53), (5, 3, 2), (64, 256, 64), (1, 1, 1)])
def test_matmul_accumulate(tmp_path: Path, m: int, n: int, k: int) -> None:
    _go(tmp_path, E.matmul(m, n, k), MATMUL_REF.format(m=m, n=n, k=k), {"A": (m, k), "B": (k, n), "C": (m, n)})


def test_matmul_init_double(tmp_path: Path) -> None:
    m, n, k = 41, 29, 67
    ref = (f"for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) {{ C[i][j] = 1.5;"
           f" for (long k = 0; k < {k}; k++) C[i][j] += A[i][k] * B[k][j]; }}")
    _go(tmp_path, E.matmul(m, n, k, "double", "assign", "1.5"), ref, {"A": (m, k), "B": (k, n), "C": (m, n)})


TILINGS = [
    TuningParams(tiles=((16, 4), (32, 8), (8,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1),
    TuningParams(tiles=((5,), (7,), (3,)), parallel_dims=(1,), loop_order=(2, 0, 1), vector_dim=1, num_threads=2),
    TuningParams(tiles=((), (), (8, 2)), parallel_dims=(), loop_order=(0, 1, 2), vector_dim=2, split_dim=2),
    TuningParams(tiles=((), (64,), (10,)), parallel_dims=(1,), loop_order=(1, 2, 0), vector_dim=None),
]


@pytest.mark.parametrize("params", TILINGS, ids=lambda p: p.describe(E.matmul(1, 1, 1)))
def test_matmul_tilings(tmp_path: Path, params: TuningParams) -> None:
    m, n, k = 37, 43, 31
    _go(tmp_path, E.matmul(m, n, k), MATMUL_REF.format(m=m, n=n, k=k), {"A": (m, k), "B": (k, n), "C": (m, n)},
        params)


@pytest.mark.parametrize("m,n", [(101, 37), (3, 100003), (7, 5)])
def test_matvec(tmp_path: Path, m: int, n: int) -> None:
    ref = f"for (long i = 0; i < {m}; i++) {{ y[i] = 0; for (long j = 0; j < {n}; j++) y[i] += M[i][j] * x[j]; }}"
    _go(tmp_path, E.matvec(m, n), ref, {"M": (m, n), "x": (n,), "y": (m,)})


@pytest.mark.parametrize("n", [1, 37, 100003])
def test_dot_split(tmp_path: Path, n: int) -> None:
    mdh = E.dot(n)
    ref = f"for (long i = 0; i < {n}; i++) *s += x[i] * y[i];"
    _go(tmp_path, mdh, ref, {"x": (n,), "y": (n,)}, scalars={"s": "0.5"})
    forced = TuningParams(tiles=((7,),), parallel_dims=(), loop_order=(0,), vector_dim=0, split_dim=0)
    _go(tmp_path, mdh, ref, {"x": (n,), "y": (n,)}, forced, scalars={"s": "0.5"})


def test_dot_default_splits() -> None:
    assert default_params(E.dot(1 << 20), BACKEND.caps).split_dim == 0
    assert default_params(E.dot(1 << 20), BACKEND.caps, strict_fp=True).split_dim is None


@pytest.mark.parametrize("ty", ["float", "int", "double"])
@pytest.mark.parametrize("m,n", [(101, 37), (1000, 3)])
def test_column_max(tmp_path: Path, ty: str, m: int, n: int) -> None:
    lowest = "INT_MIN" if ty == "int" else "-INFINITY"
    ref = (f"for (long j = 0; j < {n}; j++) {{ mx[j] = {lowest}; for (long i = 0; i < {m}; i++)"
           f" if (A[i][j] > mx[j]) mx[j] = A[i][j]; }}")
    _go(tmp_path, E.colmax(m, n, ty), ref, {"A": (m, n), "mx": (n,)})


def test_column_max_split(tmp_path: Path) -> None:
    m, n = 1001, 3
    ref = (f"for (long j = 0; j < {n}; j++) {{ mx[j] = INT_MIN; for (long i = 0; i < {m}; i++)"
           f" if (A[i][j] > mx[j]) mx[j] = A[i][j]; }}")
    p = TuningParams(tiles=((100,), ()), parallel_dims=(), loop_order=(1, 0), vector_dim=0, split_dim=0)
    _go(tmp_path, E.colmax(m, n, "int"), ref, {"A": (m, n), "mx": (n,)}, p)


@pytest.mark.parametrize("n", [3, 37, 130])
def test_jacobi2d(tmp_path: Path, n: int) -> None:
    ref = (f"for (long i = 1; i < {n - 1}; i++) for (long j = 1; j < {n - 1}; j++)"
           " B[i][j] = 0.2f * (A[i][j] + A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]);")
    _go(tmp_path, E.jacobi2d(n), ref, {"A": (n, n), "B": (n, n)})


def test_elementwise_uses_indices(tmp_path: Path) -> None:
    m, n = 29, 301
    ref = f"for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) Y[i][j] = alpha * X[i][j] + i * 3 - j;"
    _go(tmp_path, E.elementwise_indices(m, n), ref, {"X": (m, n), "Y": (m, n)}, scalars={"alpha": "3"})


def test_mcc_small(tmp_path: Path) -> None:
    n, p, q, k, c, r, s = 2, 5, 6, 19, 11, 3, 2
    mdh = E.mcc(n, p, q, k, c, r, s)
    ref = (f"for (long n = 0; n < {n}; n++) for (long p = 0; p < {p}; p++) for (long q = 0; q < {q}; q++)"
           f" for (long k = 0; k < {k}; k++) for (long r = 0; r < {r}; r++) for (long s = 0; s < {s}; s++)"
           f" for (long c = 0; c < {c}; c++) out[n][p][q][k] += in[n][p+r][q+s][c] * w[k][r][s][c];")
    shapes = {"in": (n, p + r - 1, q + s - 1, c), "w": (k, r, s, c), "out": (n, p, q, k)}
    _go(tmp_path, mdh, ref, shapes)
    alt = TuningParams(tiles=((), (2,), (4, 2), (8,), (), (), (4,)), parallel_dims=(1, 3, 2),
                       loop_order=(3, 0, 1, 2, 4, 5, 6), vector_dim=6)
    _go(tmp_path, mdh, ref, shapes, alt)


@pytest.mark.parametrize("sizes", [(37, 101, 53), (3, 2, 1), (130, 7, 300)])
def test_symbolic_extents(tmp_path: Path, sizes: tuple[int, int, int]) -> None:
    n, m, l = sizes
    ref = "for (long i = 0; i < n; i++) for (long j = 0; j < m; j++) { C[i][j] = 0.0; for (long k = 0; k < l; k++) C[i][j] += A[i][k] * B[k][j]; }"
    _go(tmp_path, E.matmul_symbolic(), ref, {"A": (n, l), "B": (l, m), "C": (n, m)},
        scalars={"n": str(n), "m": str(m), "l": str(l)})


def test_param_name_shadows_buffer(tmp_path: Path) -> None:
    mdh = E.matmul(9, 10, 11)
    mdh = replace(mdh, f=replace(mdh.f, params=("B", "A"), results=("B * A",)))
    _go(tmp_path, mdh, MATMUL_REF.format(m=9, n=10, k=11), {"A": (9, 11), "B": (11, 10), "C": (9, 10)})


def test_conv2d_small_filter_inside_simd(tmp_path: Path) -> None:
    n, p, q, k, c, r, s = 1, 37, 41, 1, 1, 5, 5
    mdh = E.mcc(n, p, q, k, c, r, s)
    params = default_params(mdh, BACKEND.caps)
    assert params.vector_dim == 2 and params.loop_order[-3:] == (4, 5, 6)
    ref = (f"for (long n = 0; n < {n}; n++) for (long p = 0; p < {p}; p++) for (long q = 0; q < {q}; q++)"
           f" for (long k = 0; k < {k}; k++) for (long r = 0; r < {r}; r++) for (long s = 0; s < {s}; s++)"
           f" for (long c = 0; c < {c}; c++) out[n][p][q][k] += in[n][p+r][q+s][c] * w[k][r][s][c];")
    shapes = {"in": (n, p + r - 1, q + s - 1, c), "w": (k, r, s, c), "out": (n, p, q, k)}
    _go(tmp_path, mdh, ref, shapes, params)
