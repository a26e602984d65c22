"""Every reason code a kept nest can carry, with its file:line:col."""

from __future__ import annotations

import pytest

CASES = [
    ("non-affine-subscript", "  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n      B[i] = A[i * j];\n",
     (5, 14)),
    ("non-affine-bound", "  for (int i = 0; i < n % 2; i++)\n    B[i] = A[i];\n", (3, 23)),
    ("side-effect-call", "  for (int i = 0; i < n; i++)\n    printf(\"%f\", A[i]);\n", (4, 5)),
    ("side-effect-call", "  for (int i = 0; i < n; i++)\n    B[i] = rand() + A[i];\n", (4, 12)),
    ("goto", "  for (int i = 0; i < n; i++) {\n    B[i] = A[i];\n    goto out;\n  }\nout:;\n", (5, 5)),
    ("break", "  for (int i = 0; i < n; i++) {\n    B[i] = A[i];\n    break;\n  }\n", (5, 5)),
    ("while-loop", "  for (int i = 0; i < n; i++) {\n    while (B[i] < 0) B[i] += 1;\n  }\n", (4, 5)),
    ("non-unit-stride", "  for (int i = n; i > 0; i -= 2)\n    B[i] = A[i];\n", (3, 3)),
    ("non-rectangular-domain", "  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++) {\n      float t = A[j];\n"
     "      if (j < i) B[i] += t;\n      C[i] += t;\n    }\n", (7, 7)),
    ("data-dependent-condition", "  for (int i = 0; i < n; i++)\n    if (B[n - 1 - i] > 0) B[i] = A[i];\n", (4, 5)),
    ("pointer-arithmetic", "  for (int i = 0; i < n; i++)\n    *(B + i) = A[i];\n", (4, 7)),
    ("sequential-dependence", "  for (int i = 1; i < n; i++)\n    B[i] = B[i - 1] * A[i];\n", (3, 3)),
    ("sequential-dependence", "  for (int i = 0; i < n; i++) {\n    s += A[i];\n    B[i] = s;\n  }\n", (3, 3)),
    ("unsupported-statement", "  for (int i = 0; i < n; i++)\n    switch (i) { case 0: B[i] = 1; default: B[i] = 0; }\n",
     (4, 5)),
    ("intra-iteration-flow", "  for (int i = 0; i < n; i++) {\n    B[i] = A[i];\n    C[i] = B[i] + 1;\n  }\n", (5, 5)),
]


@pytest.mark.parametrize("code,body,where", CASES, ids=[c[0] + str(k) for k, c in enumerate(CASES)])
def test_reason_code_location(analyze, code, body, where):
    src = ("#include <stdio.h>\n#include <stdlib.h>\nvoid f(int n, float *A, float *B, float *C, float s) {\n"
           + body + "}\n")
    (n,) = analyze(src).nests
    assert n.mdh is None
    assert n.kept.code == code, n.kept
    line, col = where
    assert (n.kept.loc.file, n.kept.loc.line, n.kept.loc.column) == ("in.c", line + 1, col), n.kept
    assert (n.loc.line, n.loc.column) == (4, 3)
