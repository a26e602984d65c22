"""Quick timing of mdpoly's default plans vs gcc -O3 sequential and a plain ``parallel for``.

Not a test: prints GFLOP/s (or ms) per workload. Usage: python scripts/time_core.py [names...]
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "tests/core")]

import mdh_examples as E  # noqa: E402

from mdpoly.backends.openmp import OpenMPBackend  # noqa: E402
from mdpoly.lower import check_plan, default_params, lower  # noqa: E402

FLAGS = ["-O3", "-march=native", "-fopenmp"]

MCC_LOOP = ("for (long n = 0; n < {N}; n++) {par}for (long p = 0; p < {P}; p++) for (long q = 0; q < {Q}; q++)"
            " for (long k = 0; k < {K}; k++) for (long r = 0; r < {R}; r++) for (long s = 0; s < {S}; s++)"
            " for (long c = 0; c < {C}; c++) out[n][p][q][k] += in[n][p+r][q+s][c] * w[k][r][s][c];")


def workloads() -> dict[str, tuple]:
    mm = "{par}for (long i = 0; i < 1024; i++) for (long j = 0; j < 1024; j++) for (long k = 0; k < 1024; k++) C[i][j] += A[i][k] * B[k][j];"
    rw = dict(N=1, P=7, Q=7, K=512, C=512, R=3, S=3)
    pc = dict(N=1, P=4092, Q=4092, K=1, C=1, R=5, S=5)

    def mcc(d):
        return (E.mcc(d["N"], d["P"], d["Q"], d["K"], d["C"], d["R"], d["S"]),
                MCC_LOOP.replace("{par}for (long p", "for (long p").format(par="", **d),
                MCC_LOOP.format(par="", **d).replace("for (long n", "_Pragma(\"omp parallel for\") for (long n", 1)
                if d["N"] > 1 else MCC_LOOP.format(par="", **d).replace("for (long p", "_Pragma(\"omp parallel for\") for (long p", 1),
                {"in": (d["N"], d["P"] + d["R"] - 1, d["Q"] + d["S"] - 1, d["C"]), "w": (d["K"], d["R"], d["S"], d["C"]),
                 "out": (d["N"], d["P"], d["Q"], d["K"])},
                2 * math.prod(d.values()))

    jac = ("{par}for (long i = 1; i < 4095; i++) for (long j = 1; j < 4095; j++)"
           " B[i][j] = 0.2f * (A[i][j] + A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]);")
    mv = "{par}for (long i = 0; i < 4096; i++) {{ y[i] = 0; for (long j = 0; j < 4096; j++) y[i] += M[i][j] * x[j]; }}"
    dt = "{par}for (long i = 0; i < 16777216; i++) *s += x[i] * y[i];"
    P = '_Pragma("omp parallel for") '
    return {
        "sgemm1024": (E.matmul(1024, 1024, 1024), mm.format(par=""), mm.format(par=P),
                      {"A": (1024, 1024), "B": (1024, 1024), "C": (1024, 1024)}, 2 * 1024**3),
        "mcc_rw": mcc(rw),
        "mcc_pc": mcc(pc),
        "jacobi4096": (E.jacobi2d(4096), jac.format(par=""), jac.format(par=P),
                       {"A": (4096, 4096), "B": (4096, 4096)}, 6 * 4094**2),
        "matvec4096": (E.matvec(4096, 4096), mv.format(par=""), mv.format(par=P),
                       {"M": (4096, 4096), "x": (4096,), "y": (4096,)}, 2 * 4096**2),
        "dot16M": (E.dot(16777216, "float"), dt.format(par=""),
                   dt.format(par='_Pragma("omp parallel for reduction(+:s[0])") '),
                   {"x": (16777216,), "y": (16777216,)}, 2 * 16777216),
    }


def program(plan, code, body: str, shapes, variant: str) -> str:
    sig = code.definition.split("{", 1)[0]
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "#include <omp.h>", "#include <math.h>", "#include <limits.h>"]
    if variant == "mdpoly":
        lines.append(code.definition)
    else:
        lines.append(sig + "{\n" + body + "\n}")
    lines += ["int main(void) {", "  unsigned long h = 1;"]
    args = []
    for b in plan.params:
        t = b.elem_type
        if b.kind == "scalar":
            lines.append(f"  {t} {b.name}_v = 0;")
            args.append(("&" if b.written else "") + f"{b.name}_v")
            continue
        dims = shapes[b.name]
        inner = "".join(f"[{d}]" for d in dims[1:])
        lines.append(f"  {t} (*{b.name}_v){inner} = malloc(sizeof({t}) * {math.prod(dims)}L);")
        lines.append(f"  for (long e = 0; e < {math.prod(dims)}L; e++) {{ h = h * 6364136223846793005ul + 1; "
                     f"(({t} *){b.name}_v)[e] = ({t})((h >> 33) % 100) / 100; }}")
        args.append(f"{b.name}_v")
    keep = [(f"(double){b.name}_v" if b.kind == "scalar" else f"(double)(({b.elem_type} *){b.name}_v)[0]")
            for b in plan.params if b.written]
    lines += ["  double best = 1e30;", "  for (int rep = 0; rep < 5; rep++) {", "    double t0 = omp_get_wtime();",
              f"    {plan.name}({', '.join(args)});", "    double t = omp_get_wtime() - t0; if (t < best) best = t;",
              "  }", '  printf("%g\\n", best);', *(f'  fprintf(stderr, "%g\\n", {k});' for k in keep), "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    names = sys.argv[1:]
    be = OpenMPBackend()
    tmp = Path(tempfile.mkdtemp())
    for name, (mdh, seq, par, shapes, flops) in workloads().items():
        if names and name not in names:
            continue
        params = default_params(mdh, be.caps)
        plan = lower(mdh, params)
        check_plan(plan)
        code = be.render(plan)
        print(f"{name}: {params.describe(mdh)}")
        for variant, body in (("seq", seq), ("parfor", par), ("mdpoly", "")):
            src = tmp / f"{name}_{variant}.c"
            src.write_text(program(plan, code, body, shapes, variant))
            exe = tmp / f"{name}_{variant}"
            subprocess.run(["gcc", *FLAGS, "-o", str(exe), str(src), "-lm"], check=True)
            env = dict(os.environ, OMP_NUM_THREADS="1" if variant == "seq" else os.environ.get("OMP_NUM_THREADS", "2"))
            t = float(subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=True).stdout)
            print(f"  {variant:7s} {t * 1e3:9.2f} ms  {flops / t / 1e9:7.2f} GFLOP/s")


if __name__ == "__main__":
    main()
