"""Differential C harness for tests: generated function vs a hand-written reference loop.

``run_differential`` writes one C program holding the generated function, a reference function
``ref`` with the same parameters and the given body, and a ``main`` that fills two copies of every
buffer with the same pseudo-random data, calls both, and compares the written buffers: exactly for
integer types and concat-only nests, within a relative tolerance for float reductions. It compiles
with ``cc -O2 -fopenmp`` and runs under several ``OMP_NUM_THREADS``.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

from mdpoly.backends.base import GeneratedCode
from mdpoly.backends.openmp import preamble
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.plan import Plan

CC = os.environ.get("CC") or shutil.which("cc") or "gcc"

_FLOAT_TOL = {"float": 1e-4, "double": 1e-10}


def _elem(t: str) -> str:
    return " ".join(w for w in t.split() if w != "const")


def program(plan: Plan, code: GeneratedCode, ref_body: str, shapes: dict[str, tuple[int, ...]],
            scalars: dict[str, str], tol: float) -> str:
    mdh: MdhExpr = plan.mdh
    sig = code.definition.split("{", 1)[0].replace(plan.name, "ref", 1)
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>", "#include <math.h>"]
    lines += [preamble(code.headers)]  # the includes and mdp_team(), as spliced files get them
    lines += [code.definition, sig + "{\n" + ref_body + "\n}", "int main(void) {",
              "  unsigned long h = 12345u; int bad = 0;"]
    for b in plan.params:
        t = _elem(b.elem_type)
        if b.kind == "scalar":
            lines.append(f"  {t} {b.name}_a = {scalars[b.name]}, {b.name}_b = {scalars[b.name]};")
            continue
        dims = shapes[b.name]
        total = math.prod(dims)
        inner = "".join(f"[{d}]" for d in dims[1:])
        for copy in "ab":
            lines.append(f"  {t} (*{b.name}_{copy}){inner} = malloc(sizeof({t}) * {total});")
        lines.append(f"  for (long e = 0; e < {total}; e++) {{ h = h * 6364136223846793005ul + 1442695040888963407ul;"
                     f" (({t} *){b.name}_a)[e] = ({t})((long)((h >> 33) % 17) - 8) / {'4' if 'int' not in t else '1'};"
                     f" (({t} *){b.name}_b)[e] = (({t} *){b.name}_a)[e]; }}")
    args = {c: ", ".join(("&" if b.kind == "scalar" and b.written else "") + f"{b.name}_{c}" for b in plan.params)
            for c in "ab"}
    lines += [f"  ref({args['a']});", f"  {plan.name}({args['b']});"]
    for b in plan.params:
        if not b.written:
            continue
        if b.kind == "scalar":
            pa, pb, total = f"(&{b.name}_a)", f"(&{b.name}_b)", 1
        else:
            pa, pb, total = f"(({_elem(b.elem_type)} *){b.name}_a)", f"(({_elem(b.elem_type)} *){b.name}_b)", \
                math.prod(shapes[b.name])
        lines.append(
            f"  for (long e = 0; e < {total}; e++) {{ double x = (double){pa}[e], y = (double){pb}[e];"
            f" if (!(fabs(x - y) <= {tol!r} * fmax(1.0, fabs(x)))) {{ if (bad < 5) printf(\"{b.name}[%ld]: ref %g got %g\\n\", e, x, y); bad++; }} }}")
    lines += ["  if (bad) { printf(\"%d mismatches\\n\", bad); return 1; }", "  printf(\"OK\\n\");", "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def tolerance(mdh: MdhExpr) -> float:
    """0 for integers and concat-only nests; else a relative tolerance by float type."""
    if not any(d.combine.is_reduction for d in mdh.dims):
        return 0.0
    worst = 0.0
    for o in mdh.outputs:
        worst = max(worst, _FLOAT_TOL.get(_elem(o.elem_type), 0.0))
    return worst


def run_differential(tmp: Path, plan: Plan, code: GeneratedCode, ref_body: str,
                     shapes: dict[str, tuple[int, ...]], scalars: dict[str, str] | None = None,
                     threads: tuple[int, ...] = (1, 2, 3)) -> None:
    src = tmp / "prog.c"
    exe = tmp / "prog"
    src.write_text(program(plan, code, ref_body, shapes, scalars or {}, tolerance(plan.mdh)))
    cmd = [CC, "-O2", "-fopenmp", "-std=gnu11", "-Wall", "-Wno-unused-variable", "-o", str(exe), str(src), "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"compile failed:\n{res.stderr}\n{src.read_text()}"
    for n in threads:
        env = dict(os.environ, OMP_NUM_THREADS=str(n))
        run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
        assert run.returncode == 0 and "OK" in run.stdout, \
            f"OMP_NUM_THREADS={n}: {run.stdout}{run.stderr}\n{plan.tuning}"
