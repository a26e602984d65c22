"""Non-rectangular domains in the OpenMP lowering: clipped loops and guards, checks, parameters.

Hand-built MDH expressions with a ``domain`` (triangles, a band, a triangle whose constraint has
coefficient 2, so it becomes a guard), lowered with many parameter sets (every loop order, tiles
of one and two layers, SIMD dims, a split reduction, each distribution), checked by
``check_plan`` and run against reference loops at 1, 2 and 3 threads. The checks must reject a
plan that walks the whole box or stores outside the domain.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import mdh_examples as E
import pytest
from harness import run_differential

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.diagnostics import CompilerBug, UnsupportedInput
from mdpoly.ir.mdh import Access, Affine, Buffer, Combine, MdhExpr, OutputWrite, ScalarFunction
from mdpoly.lower import TuningParams, check_plan, default_params, lower, violations
from mdpoly.lower.checks import check_buffers_touched_in_domain, check_tiles_cover_domain
from mdpoly.tuning.space import build_space

BACKEND = OpenMPBackend()
A = Affine.of


def trmv(n: int) -> MdhExpr:
    """``y[i] = 1 + sum_{j >= i} M[i][j] * x[j]``: the reduction dim constrained."""
    return replace(E.matvec(n, n, "double"), domain=(A({"j": 1, "i": -1}),),
                   outputs=(OutputWrite(Access("y", E.idx("i")), "double", "assign", "1"),))


def syrk(n: int, m: int) -> MdhExpr:
    """``C[i][j] += A[i][k] * A[j][k]`` for ``j <= i``: a concat dim constrained."""
    return MdhExpr(
        name="mdp_syrk", loc=E.LOC,
        dims=(E.dim("i", n), E.dim("k", m, Combine.ADD), E.dim("j", n)),
        buffers=(Buffer("A", "double", (str(n), str(m)), "array"),
                 Buffer("C", "double", (str(n), str(n)), "array", written=True)),
        inputs=(Access("A", E.idx("i", "k")), Access("A", E.idx("j", "k"))),
        outputs=(OutputWrite(Access("C", E.idx("i", "j")), "double", "accumulate"),),
        f=ScalarFunction(("a", "b"), ("a * b",)),
        domain=(A({"i": 1, "j": -1}),),
    )


def half_band(n: int) -> MdhExpr:
    """``B[i][j] = A[i][j]`` where ``2j <= i + 3`` and ``j >= i - 2``: a coefficient-2 guard."""
    return MdhExpr(
        name="mdp_band", loc=E.LOC, dims=(E.dim("i", n), E.dim("j", n)),
        buffers=(Buffer("A", "int", (str(n), str(n)), "array"),
                 Buffer("B", "int", (str(n), str(n)), "array", written=True)),
        inputs=(Access("A", E.idx("i", "j")),),
        outputs=(OutputWrite(Access("B", E.idx("i", "j")), "int"),),
        f=ScalarFunction(("a",), ("a + 1",)),
        domain=(A({"i": 1, "j": -2}, 3), A({"j": 1, "i": -1}, 2)),
    )


def tri_sum(n: int) -> MdhExpr:
    """``s += A[i][j]`` over ``j > i``: every dim a reduction (split over threads)."""
    return MdhExpr(
        name="mdp_tsum", loc=E.LOC, dims=(E.dim("i", n, Combine.ADD), E.dim("j", n, Combine.ADD)),
        buffers=(Buffer("A", "long", (str(n), str(n)), "array"), Buffer("s", "long", (), "scalar", written=True)),
        inputs=(Access("A", E.idx("i", "j")),),
        outputs=(OutputWrite(Access("s", ()), "long", "accumulate"),),
        f=ScalarFunction(("a",), ("a",)),
        domain=(A({"j": 1, "i": -1}, -1),),
    )


TRMV_REF = "for (long i = 0; i < {n}; i++) {{ y[i] = 1; for (long j = i; j < {n}; j++) y[i] += M[i][j] * x[j]; }}"
SYRK_REF = ("for (long i = 0; i < {n}; i++) for (long k = 0; k < {m}; k++) for (long j = 0; j <= i; j++) "
            "C[i][j] += A[i][k] * A[j][k];")
BAND_REF = ("for (long i = 0; i < {n}; i++) for (long j = 0; j < {n}; j++) "
            "if (2 * j <= i + 3 && j >= i - 2) B[i][j] = A[i][j] + 1;")
TSUM_REF = "for (long i = 0; i < {n}; i++) for (long j = i + 1; j < {n}; j++) *s += A[i][j];"


def _params(mdh: MdhExpr, tiles: tuple[tuple[int, ...], ...], order: tuple[int, ...], vec: int | None,
            dist: str, par: tuple[int, ...] | None = None, split: int | None = None) -> TuningParams:
    concat = [d for d, x in enumerate(mdh.dims) if not x.combine.is_reduction]
    if par is None:
        par = tuple(d for d in concat[:1] if tiles[d])
    return TuningParams(tiles=tiles, parallel_dims=par, loop_order=order, vector_dim=vec, split_dim=split,
                        distribution=dist)  # type: ignore[arg-type]


def _cases() -> list[tuple[str, MdhExpr, str, dict[str, tuple[int, ...]], TuningParams]]:
    out = []
    dists = itertools.cycle(("cyclic", "block", "dynamic"))
    for n in (1, 7, 37):
        m = trmv(n)
        for order, vec, tiles in (((0, 1), 1, ((4,), ())), ((1, 0), None, ((8, 2), (16,))),
                                  ((0, 1), None, ((3,), (5,)))):
            out.append((f"trmv{n}", m, TRMV_REF.format(n=n), {"M": (n, n), "x": (n,), "y": (n,)},
                        _params(m, tiles, order, vec, next(dists))))
        out.append((f"trmv{n}-default", m, TRMV_REF.format(n=n), {"M": (n, n), "x": (n,), "y": (n,)},
                    default_params(m, BACKEND.caps)))
    for n, k in ((13, 5), (41, 17)):
        m = syrk(n, k)
        ref = SYRK_REF.format(n=n, m=k)
        shapes = {"A": (n, k), "C": (n, n)}
        for order in itertools.permutations(range(3)):
            vec = order[-1]
            out.append((f"syrk{n}-{order}", m, ref, shapes,
                        _params(m, ((4,), (3,), (8, 4)), order, vec, next(dists))))
        out.append((f"syrk{n}-par-j", m, ref, shapes, _params(m, ((4,), (), (4,)), (0, 2, 1), 1, "cyclic", (0, 2))))
        out.append((f"syrk{n}-default", m, ref, shapes, default_params(m, BACKEND.caps)))
    for n in (1, 9, 30):
        m = half_band(n)
        for order in ((0, 1), (1, 0)):
            out.append((f"band{n}-{order}", m, BAND_REF.format(n=n), {"A": (n, n), "B": (n, n)},
                        _params(m, ((4,), (4,)), order, order[-1], next(dists))))
    for n in (2, 40):
        m = tri_sum(n)
        ref = TSUM_REF.format(n=n)
        out.append((f"tsum{n}-split", m, ref, {"A": (n, n)}, _params(m, ((8,), (4,)), (0, 1), 1, "cyclic", (), 0)))
        out.append((f"tsum{n}-split-j", m, ref, {"A": (n, n)}, _params(m, ((), (3,)), (1, 0), 0, "block", (), 1)))
        out.append((f"tsum{n}-default", m, ref, {"A": (n, n)}, default_params(m, BACKEND.caps)))
    return out


CASES = _cases()


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_domain_plan_matches_reference(tmp_path: Path, case: int) -> None:
    _, mdh, ref, shapes, params = CASES[case]
    assert not violations(mdh, params), violations(mdh, params)
    plan = lower(mdh, params)
    check_plan(plan)
    scalars = {"s": "3"} if mdh.name == "mdp_tsum" else None
    run_differential(tmp_path, plan, BACKEND.render(plan), ref, shapes, scalars)


def test_clipped_bounds_and_guards_in_the_code() -> None:
    """``j >= i`` starts the j loop at ``max(tile start, i)``; a coefficient-2 constraint is a guard."""
    text = BACKEND.render(lower(trmv(64), _params(trmv(64), ((8,), ()), (0, 1), 1, "cyclic"))).definition
    assert "for (long j = (0 > i) ? (0) : (i); j < 64; j++)" in text
    assert "schedule(static, 1)" in text
    band = BACKEND.render(lower(half_band(20), _params(half_band(20), ((4,), (4,)), (0, 1), 1, "block"))).definition
    assert "if (i - 2 * j + 3 >= 0)" in band


def test_checks_reject_the_box() -> None:
    """A plan lowered for the box does not cover the domain, and stores outside it."""
    tri = syrk(16, 4)
    boxed = lower(replace(tri, domain=()), default_params(tri, BACKEND.caps))
    wrong = replace(boxed, mdh=tri)
    with pytest.raises(CompilerBug, match="tiles cover"):
        check_tiles_cover_domain(wrong)
    with pytest.raises(CompilerBug, match="outside the domain"):
        check_buffers_touched_in_domain(wrong)


def test_parameters_for_a_domain() -> None:
    """No register blocks over a domain; a cyclic default; the space offers every distribution."""
    m = syrk(256, 128)
    p = default_params(m, BACKEND.caps)
    assert p.distribution == "cyclic" and not p.register_blocked
    blocked = replace(p, register_tile=(6, 1, 8), simd_lanes=4, vector_dim=2, loop_order=(0, 1, 2))
    assert "register-tile" in violations(m, blocked)
    split = default_params(tri_sum(512), BACKEND.caps)
    assert split.split_dim is not None and split.distribution == "cyclic"
    assert "distribution" in violations(tri_sum(512), replace(split, distribution="dynamic"))
    space = build_space(m, {}, BACKEND.caps)
    dist = next(s for s in space.specs if s.name == "DIST")
    assert set(dist.values) == {"block", "cyclic", "dynamic"}
    assert all(s.name != "DIST" for s in build_space(E.matmul(64, 64, 64), {}, BACKEND.caps).specs)


def test_live_iterator_of_a_constrained_loop_is_refused() -> None:
    """``int i, j;`` before ``for i: for j <= i``: j's exit value depends on the domain."""
    m = syrk(16, 4)
    live = replace(m, buffers=m.buffers + (Buffer("j", "int", (), "scalar", written=True),))
    with pytest.raises(UnsupportedInput, match="exit value"):
        lower(live, default_params(m, BACKEND.caps))
    outer = replace(m, buffers=m.buffers + (Buffer("i", "int", (), "scalar", written=True),))
    lower(outer, default_params(m, BACKEND.caps))


def test_gpu_plan_of_a_domain() -> None:
    """Work-group lowering: guards over the point indices, no ``__local`` copies, outputs copied in."""
    from mdpoly.backends.opencl import OPENCL_CAPS, kernel_source
    from mdpoly.lower.gpu import lower_gpu
    from mdpoly.lower.gpu_defaults import default_gpu_params

    m = syrk(64, 32)
    p = default_gpu_params(m, OPENCL_CAPS)
    assert p.tiled and not any(p.cached(len(m.inputs)))
    plan = lower_gpu(m, p, OPENCL_CAPS)
    assert plan.domain == ("mdp_i_0 - mdp_i_2 >= 0",) and plan.store_domain == plan.domain
    assert all(b.copy_in for b in plan.buffers if b.name == "C")
    src = kernel_source(plan)
    assert "if ((mdp_i_0 - mdp_i_2 >= 0))" in src and "__local double mdp_l" not in src
