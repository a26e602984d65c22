"""OpenMPBackend output: reparses with pycparser, carries the planned pragmas and signatures."""

from __future__ import annotations

import re

import mdh_examples as E
from pycparser import c_ast, c_parser

from mdpoly.backends.c_emit import CEmitter
from mdpoly.backends.openmp import OpenMPBackend, _OpenMPDialect
from mdpoly.ir.plan import FExpr, Ref
from mdpoly.lower import TuningParams, check_plan, default_params, lower

BACKEND = OpenMPBackend()


def _render(mdh, params=None):  # type: ignore[no-untyped-def]
    plan = lower(mdh, params or default_params(mdh, BACKEND.caps))
    check_plan(plan)
    return BACKEND.render(plan)


def _unshielded(definition: str) -> str:
    """The definition without the push_macro/#undef/pop_macro lines around it."""
    return "".join(line for line in definition.splitlines(keepends=True)
                   if not line.startswith(("#pragma push_macro", "#pragma pop_macro", "#undef")))


def _reparse(definition: str) -> c_ast.FileAST:
    text = "\n".join(line for line in definition.splitlines() if not line.strip().startswith("#"))
    return c_parser.CParser().parse("typedef int omp_dummy_t;\n" + text)


def test_matmul_reparses_and_has_collapse_and_simd() -> None:
    p = TuningParams(tiles=((16,), (64,), (32,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                     num_threads=3)
    code = _render(E.matmul(100, 100, 100), p)
    ast = _reparse(code.definition)
    fdef = ast.ext[-1]
    assert isinstance(fdef, c_ast.FuncDef) and fdef.decl.name == "mdp_matmul"
    assert fdef.decl.storage == ["static"]
    assert "#pragma omp parallel for collapse(2) schedule(static) num_threads(mdp_team_upto(3))" in code.definition
    assert code.definition.count("#pragma omp simd") == 3
    assert "atomic" not in code.definition and "critical" not in code.definition
    assert code.call == "mdp_matmul(A, B, C);"
    assert code.flags == ("-fopenmp",)


def test_scalar_kinds_and_split_reduction() -> None:
    code = _render(E.dot(1 << 20))
    assert _unshielded(code.definition).startswith("static void mdp_dot(double x[1048576], double y[1048576], double *s)")
    assert code.call == "mdp_dot(x, y, &s);"
    assert "#pragma omp for schedule(static) nowait" in code.definition
    assert "reduction(+:mdp_acc0)" in code.definition
    assert "*s = mdp_r0;" in code.definition
    _reparse(code.definition)


def test_read_scalars_first_and_by_value() -> None:
    code = _render(E.elementwise_indices(64, 512))
    assert _unshielded(code.definition).startswith("static void mdp_ew(int alpha, int X[64][512], int Y[64][512])")
    # the user's expression sees the iterators in their declared type (int), not as the loops' long
    assert "Y[i][j] = alpha * X[i][j] + ((int) i) * 3 - ((int) j);" in code.definition


def test_max_uses_neutral_and_headers() -> None:
    code = _render(E.colmax(1000, 3, "float"), TuningParams(tiles=((100,), ()), parallel_dims=(), loop_order=(1, 0),
                                                            vector_dim=0, split_dim=0))
    assert "-INFINITY" in code.definition and "math.h" in code.headers
    assert "reduction(max:mdp_acc0)" in code.definition
    code = _render(E.colmax(1000, 3, "int"), TuningParams(tiles=((100,), ()), parallel_dims=(), loop_order=(1, 0),
                                                          vector_dim=0, split_dim=0))
    assert "INT_MIN" in code.definition and "limits.h" in code.headers
    assert "#include <limits.h>" in code.preamble and "#if defined(_OPENMP)" in code.preamble


def test_symbolic_vla_signature() -> None:
    code = _render(E.matmul_symbolic())
    assert _unshielded(code.definition).startswith("static void mdp_mm_sym(int n, int m, int l, double A[][l], double B[][m], "
                                      "double C[][m])")
    # size parameters are widened before any index arithmetic
    assert re.search(r"mdp_i_t1 < \(\(long\) n\);", code.definition)


def test_fexpr_substitution_respects_fields_and_calls() -> None:
    em = CEmitter(_OpenMPDialect())
    v = FExpr("sqrtf(a) + s.a + p->a + a", (("a", Ref("X", ())),))
    out = em.gen.visit(em.value(v))
    assert out == "(sqrtf(X) + s.a) + p->a + X" or out == "sqrtf(X) + s.a + p->a + X"
    # a typedef cast parses as a cast, not as a call of the type name
    v = FExpr("(real_t) a * b", (("a", Ref("X", ())), ("b", Ref("Y", ()))))
    assert em.gen.visit(em.value(v)) == "((real_t) X) * Y"
