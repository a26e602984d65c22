"""Backends: iterators in the user's types, widened index arithmetic, preconditions, exit values,
typedef casts, and pragmas no user macro can rewrite (issue 9, items 2, 5, 8, 9).

Each test renders plans built from ``mdh_examples`` and, where it matters, compiles and runs the
generated function against a hand-written loop with ``cc -fopenmp``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import mdh_examples as E
import pytest

from mdpoly.backends.c_emit import CEmitter, parse_expr
from mdpoly.backends.openmp import OpenMPBackend, _OpenMPDialect
from mdpoly.ir.mdh import (
    Access,
    AddressRange,
    Affine,
    AliasCheck,
    Buffer,
    Combine,
    Dim,
    MdhExpr,
    OutputWrite,
    Precondition,
    ScalarFunction,
)
from mdpoly.ir.nest import ORIGINAL_NEST
from mdpoly.ir.plan import AsType, FExpr, Iterator
from mdpoly.lower import TuningParams, check_plan, default_params, lower

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")


def _omp(mdh: MdhExpr, params: TuningParams | None = None):  # type: ignore[no-untyped-def]
    plan = lower(mdh, params or default_params(mdh, OpenMPBackend().caps))
    check_plan(plan)
    return plan, OpenMPBackend().render(plan)


def _run(tmp: Path, program: str, threads: int = 3) -> str:
    src = tmp / "p.c"
    src.write_text(program)
    exe = tmp / "p"
    subprocess.run([str(CC), "-O1", "-fopenmp", str(src), "-o", str(exe), "-lm"], check=True,
                   capture_output=True, text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True,
                          env={"OMP_NUM_THREADS": str(threads)}).stdout


def _typed_iterators(it_type: str, n_type: str) -> MdhExpr:
    """``for (it_type i = lo; i < n; i++) Y[i] = (float)(i - 10u) + sizeof(i);`` with ``n_type n, lo``."""
    loc = E.LOC
    i = Affine.of({"i": 1})
    d = Dim("i", Affine.of({"lo": 1}), Affine.of({"n": 1, "lo": -1}), Combine.CONCAT, loc, it_type)
    return MdhExpr(
        name="mdp_typed", loc=loc, dims=(d,),
        buffers=(Buffer("n", n_type, (), "scalar"), Buffer("lo", "int", (), "scalar"),
                 Buffer("Y", "float", ("",), "pointer", written=True)),
        inputs=(), outputs=(OutputWrite(Access("Y", (i,)), "float"),),
        f=ScalarFunction((), ("(float)(i - 10u) + sizeof(i)",), uses_indices=True),
        params=(("n", None), ("lo", None)))


def test_user_expressions_see_the_declared_iterator_type() -> None:
    _, code = _omp(_typed_iterators("unsigned char", "unsigned int"))
    assert "(float) (((unsigned char) i) - 10u)" in code.definition
    assert "sizeof((unsigned char) i)" in code.definition
    assert "for (long i" in code.definition  # the loop itself stays wide


def test_unsigned_size_parameters_are_widened() -> None:
    _, code = _omp(_typed_iterators("int", "unsigned int"))
    assert "((long) n)" in code.definition


@needs_cc
def test_typed_iterators_and_unsigned_sizes_run_as_written(tmp_path: Path) -> None:
    plan, code = _omp(_typed_iterators("int", "unsigned int"))
    body = "\n".join(f"  {line}" for line in [
        "float got[64], want[64];",
        "unsigned int ns[3] = {3u, 20u, 64u}; int los[3] = {5, 0, 40};",
        "for (int c = 0; c < 3; c++) {",
        "  for (int e = 0; e < 64; e++) got[e] = want[e] = -1;",
        "  for (int i = los[c]; i < ns[c]; i++) want[i] = (float)(i - 10u) + sizeof(i);",
        "  mdp_typed(ns[c], los[c], got);",
        "  for (int e = 0; e < 64; e++) if (got[e] != want[e]) { printf(\"bad %d %d %g %g\\n\", c, e, got[e], want[e]); return 1; }",
        "}", "printf(\"OK\\n\"); return 0;"])
    out = _run(tmp_path, "#include <stdio.h>\n" + code.preamble + code.definition + "int main(void) {\n" + body + "\n}\n")
    assert out == "OK\n"


def test_typedef_cast_stays_a_cast() -> None:
    em = CEmitter(_OpenMPDialect())
    v = FExpr("(base)((i + 1) % 4)", (("i", AsType("int", Affine.of({"i": 1}))),))
    assert em.gen.visit(em.value(v)) == "(base) ((((int) i) + 1) % 4)"
    tree = parse_expr("(base)-x")
    assert tree is not None and type(tree).__name__ == "Cast"
    # a parenthesized call or a variable is not taken for a type
    assert type(parse_expr("f(x) + (n)")).__name__ == "BinaryOp"


# {{{ preconditions and exit values


def _with_precondition(mdh: MdhExpr) -> MdhExpr:
    return replace(mdh, preconditions=(Precondition("n <= 1000 && m > 0", "bounds compare as modelled"),))


def test_preconditions_guard_every_backends_call() -> None:
    from mdpoly.backends.cuda import CudaBackend
    from mdpoly.backends.opencl import OpenCLBackend
    from mdpoly.lower.gpu import lower_gpu
    from mdpoly.lower.gpu_defaults import default_gpu_params

    mdh = _with_precondition(E.matmul_symbolic("float"))
    _, code = _omp(mdh)
    calls = [code.call]
    for backend in (OpenCLBackend(), CudaBackend()):
        plan = lower_gpu(mdh, default_gpu_params(mdh, backend.caps), backend.caps)
        calls.append(backend.render(plan).call)
    for k, call in enumerate(calls):
        # the GPU calls also ask, last, whether the device can launch the kernels (<name>_fits())
        assert call.startswith("if (n <= 1000 && m > 0)" if k == 0 else "if (n <= 1000 && m > 0 && mdp_mm_sym_fits())"), call
        assert ORIGINAL_NEST.rstrip(";") in call.split("else", 1)[1]


def test_preconditions_join_the_alias_checks() -> None:
    mdh = replace(_with_precondition(E.matmul_symbolic("float")),
                  alias_checks=(AliasCheck(AddressRange("A", Affine.of({}, 0), Affine.of({"n": 1}, -1)),
                                           AddressRange("C", Affine.of({}, 0), Affine.of({"n": 1}, -1))),))
    _, code = _omp(mdh)
    cond = code.call.split("{", 1)[0]
    assert "n <= 1000 && m > 0" in cond and "(const char *)" in cond


@needs_cc
def test_precondition_false_runs_the_original_nest(tmp_path: Path) -> None:
    mdh = replace(_typed_iterators("int", "unsigned int"),
                  preconditions=(Precondition("lo >= 0", "no negative lower bound"),))
    plan, code = _omp(mdh)
    call = code.call.replace(ORIGINAL_NEST, 'puts("original");')
    body = (f"  float Y[64];\n  unsigned int n = 20u; int lo = 2;\n  {call}\n"
            f"  lo = -1;\n  {call}\n  printf(\"%g\\n\", Y[5]);\n  return 0;\n")
    out = _run(tmp_path, "#include <stdio.h>\n" + code.preamble + code.definition + "int main(void) {\n" + body + "}\n")
    assert out == "original\n" + f"{float(5 - 10 + 2**32) + 4:g}\n"


def test_exit_values_of_iterators_declared_outside() -> None:
    em = CEmitter(_OpenMPDialect(), wide={"n"})
    its = (Iterator("i", "int", Affine.of({}, 0), Affine.of({"n": 1}), live=True),
           Iterator("j", "unsigned int", Affine.of({}, 2), Affine.of({}, 5), live=True))
    text = "\n".join(em.gen.visit(s) for s in em.exit_values(its))
    assert "i = (int) ((((long) n) > 0) ? ((long) n) : (0))" in text
    assert "if (((long) n) > 0)" in text and "j = (unsigned int) 7" in text


# }}}


@needs_cc
def test_user_macros_cannot_rewrite_the_generated_pragmas(tmp_path: Path) -> None:
    p = TuningParams(tiles=((16,), (64,), (32,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                     num_threads=3)
    _, code = _omp(E.matmul(40, 70, 50), p)
    _, split = _omp(E.colmax(1000, 3, "float"), TuningParams(tiles=((100,), ()), parallel_dims=(), loop_order=(1, 0),
                                                              vector_dim=0, split_dim=0))
    macros = "".join(f"#define {w}(x) oops\n#define {w} oops\n".split("\n", 1)[1] if w in ("max", "min") else
                     f"#define {w}(x) oops\n" for w in ("schedule", "num_threads", "collapse", "reduction"))
    macros += "#define simd oops\n#define nowait oops\n#define parallel oops\n#define max oops\n"
    program = (macros + "#include <stdio.h>\n" + code.preamble + split.preamble + code.definition + split.definition
               + "#ifndef simd\n#error user macro lost\n#endif\nint main(void) { puts(\"built\"); return 0; }\n")
    assert _run(tmp_path, program) == "built\n"
