"""The ``mdpoly`` command: annotations, bad input, exit codes, --emit mdh, the JSON report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from mdpoly.cli import main

MATVEC = """#include <stdio.h>
void matvec(int I, int K, float w[I], float M[I][K], float v[K]) {
#pragma mdh(%s)
  for (int i = 0; i < I; ++i)
    for (int k = 0; k < K; ++k)
      w[i] += M[i][k] * v[k];
}
"""


def run(tmp_path: Path, capsys, src: str, *args: str) -> tuple[int, str, str]:
    (tmp_path / "in.c").write_text(src)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rc = main(["in.c", *args])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    return rc, out, err


def test_annotation_accepted(tmp_path, capsys):
    rc, out, err = run(tmp_path, capsys, MATVEC % "w[i] : ++, +", "--emit", "mdh")
    assert rc == 0
    assert "in.c:4:3:\nout_view<float>( w:(i,k)->(i) ) o\nmd_hom<I=I,K=K>( f, (++,+) ) o" in out
    assert "in.c:4:3: remark: loop nest parallelized: i:++ k:+" in err


@pytest.mark.parametrize("ann,needle", [
    ("w[i] : ++, *", "annotation claims '*' for loop 'k', but the loop is a '+' reduction"),
    ("w[i] : ++, ++", "annotation claims '++' for loop 'k'"),
    ("w[i] : +, +", "annotation claims a '+' reduction for loop 'i'"),
    ("v[k] : ++, +", "annotation names output 'v[k]', but the nest writes w[i]"),
    ("w[i + 1] : ++, +", "annotation names output 'w[i + 1]'"),
    ("w[i] : ++", "annotation gives 1 combine operator(s) but the nest has 2 loop(s)"),
    ("w[i] : ++, sum", "unknown combine operator 'sum'"),
])
def test_annotation_rejected(tmp_path, capsys, ann, needle):
    rc, out, err = run(tmp_path, capsys, MATVEC % ann, "-o", "out.c")
    assert rc == 1
    assert err.startswith("in.c:3:9: error: ") and needle in err and "[annotation-mismatch]" in err
    assert not (tmp_path / "out.c").exists()


def test_annotation_on_sequential_loop(tmp_path, capsys):
    src = "void p(int n, int *B) {\n#pragma mdh(B[i] : ++)\n  for (int i = 1; i < n; i++)\n    B[i] = B[i-1] + 1;\n}\n"
    rc, _, err = run(tmp_path, capsys, src, "--emit", "mdh")
    assert rc == 1 and "in.c:2:9: error: annotation claims '++' for loop 'i', but loop 'i' carries a flow" in err


def test_syntax_error_located_no_output(tmp_path, capsys):
    rc, _, err = run(tmp_path, capsys, "int f(int x) {\n  return x +* ;\n}\n", "-o", "out.c")
    assert rc == 1
    assert err.startswith("in.c:2:15: error: ")
    assert not (tmp_path / "out.c").exists()


def test_missing_header(tmp_path, capsys):
    rc, _, err = run(tmp_path, capsys, '#include <stdio.h>\n#include "nope.h"\nint x;\n', "-o", "out.c")
    assert rc == 1 and err.startswith("in.c:2:10: error: nope.h: No such file or directory")
    assert not (tmp_path / "out.c").exists()


def test_include_dir_and_defines(tmp_path, capsys):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sizes.h").write_text("#define N 16\n")
    src = '#include "sizes.h"\nvoid f(float *a) {\n  for (int i = 0; i < N * M; i++) a[i] = 0;\n}\n'
    rc, out, _ = run(tmp_path, capsys, src, "-I", "inc", "-DM=2", "--emit", "mdh")
    assert rc == 0 and "md_hom<I=32>" in out
    rc, _, err = run(tmp_path, capsys, src, "-Iinc", "-DM=2", "-UM", "--emit", "mdh")
    assert rc == 0 and "[non-affine-bound]" in err  # M is undefined again


def test_missing_input(tmp_path, capsys):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rc = main(["absent.c", "-o", "out.c"])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("absent.c:1:1: error: cannot read 'absent.c'")


def test_output_equal_to_input_refused(tmp_path, capsys):
    rc, _, err = run(tmp_path, capsys, "int x;\n", "-o", "./in.c")
    assert rc == 2 and "is the input file" in err
    assert (tmp_path / "in.c").read_text() == "int x;\n"


def test_argument_misuse(capsys):
    assert main(["--target", "fpga", "x.c"]) == 2
    assert main(["x.c", "--size", "N"]) == 2
    assert main(["x.c"]) == 2          # no -o and no --emit
    assert main(["--version"]) == 0
    assert "mdpoly 0.1.0" in capsys.readouterr().out


def test_quiet_silences_remarks_not_errors(tmp_path, capsys):
    rc, _, err = run(tmp_path, capsys, MATVEC % "w[i] : ++, +", "--emit", "mdh", "-q")
    assert rc == 0 and err == ""
    rc, _, err = run(tmp_path, capsys, MATVEC % "w[i] : ++, *", "--emit", "mdh", "-q")
    assert rc == 1 and "error" in err


def test_report_schema(tmp_path, capsys):
    src = ("void f(int n, float *A, float *B, float *s) {\n"
           "  for (int i = 1; i < n; i++)\n    B[i] = B[i-1] + A[i];\n"
           "  for (int i = 0; i < n; i++)\n    s[0] += A[i];\n"
           "  for (int i = 0; i < n; i++)\n    B[i] = A[(int)B[i]];\n}\n")
    rc, _, err = run(tmp_path, capsys, src, "--emit", "mdh", "-o", "out.mdh", "--report", "r.json",
                     "--size", "n=1024")
    assert rc == 0
    rep = json.loads((tmp_path / "r.json").read_text())
    assert list(rep) == ["schema_version", "mdpoly_version", "options", "nests"] and len(rep["nests"]) == 3
    assert rep["schema_version"] == 3 and rep["options"]["sizes"] == [["n", 1024]]
    keys = {"file", "line", "column", "status", "reason", "code", "loops", "mdh", "target", "tuning"}
    optional = {"privatization", "wavefront",   # why a kept nest's loops were not privatized / not a wavefront
                "preconditions",  # the run-time checks of the generated code
                "schedule"}  # a nest run as parallel loops around its text (B[i] = A[(int)B[i]], inspected)
    for n in rep["nests"]:
        assert keys <= set(n) <= keys | optional, set(n)
        for lp in n["loops"]:
            assert set(lp) == {"iterator", "extent", "combine"}
            assert lp["combine"] in ("++", "+", "*", "max", "min", "seq")
    a, b, c = rep["nests"]
    assert (a["line"], a["column"], a["status"], a["code"]) == (2, 3, "kept", "sequential-dependence")
    assert a["loops"] == [{"iterator": "i", "extent": "n - 1", "combine": "seq"}] and a["mdh"] is None
    assert b["status"] == "transformed" and b["reason"] is None and b["mdh"].startswith("out_view<float>")
    # the gather's subscript reads B[i] before the loop writes it: inspected, a loop around its text
    assert c["status"] == "transformed" and c["schedule"][0]["kind"] == "private-loop"
    assert "in.c:6:3: remark: loop nest scheduled: [i:++ private-body]" in err
    assert "in.c:4:3: remark: loop nest parallelized: i:+" in err
    assert (tmp_path / "out.mdh").read_text().startswith("in.c:4:3:\n")


def test_python_dash_m(tmp_path):
    (tmp_path / "in.c").write_text("void f(int n, float *a) { for (int i = 0; i < n; i++) a[i] = 1; }\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "mdpoly", "in.c", "--emit", "mdh"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0 and "md_hom<I=n>( f, (++) )" in p.stdout


HEADERS = ["stdio.h", "stdlib.h", "math.h", "string.h", "stdint.h", "stdbool.h", "float.h", "limits.h",
           "time.h", "assert.h", "omp.h"]


def test_glibc_headers_parse(analyze):
    src = "".join(f"#include <{h}>\n" for h in HEADERS)
    src += "void f(int n, double *a) {\n  for (int i = 0; i < n; i++)\n    a[i] = sqrt(fabs(a[i])) + DBL_EPSILON + INT_MAX;\n}\n"
    fa = analyze(src)
    (n,) = fa.nests
    assert n.loc.line == len(HEADERS) + 2 and n.mdh is not None


def test_remark_names_the_run_time_preconditions(tmp_path, capsys):
    """A flat subscript's view holds only under a run-time check: the remark says so (a check
    that real inputs never pass used to be visible only in the report)."""
    src = ("void left(int h, int w, const float *a, float *b) {\n  for (int y = 0; y < h; y++)\n"
           "    for (int x = 0; x < w; x++)\n      b[y * w + x] = a[y * w + (x == 0 ? 0 : x - 1)];\n}\n")
    rc, _, err = run(tmp_path, capsys, src, "-o", "out.c", "--no-tune")
    assert rc == 0
    line = next(x for x in err.splitlines() if "remark: loop nest parallelized" in x)
    assert "; the generated code runs where " in line and ", else the nest as written" in line, line
    assert "(long long)w - 1 >= 0" in line, line


def test_remark_preconditions_name_the_users_sizes(tmp_path, capsys):
    """A size the front end introduces (the product ``nq * n`` of a loop bound) is printed in the
    user's words in the remark's run-time check, not by its internal name."""
    src = ("#include <stddef.h>\nvoid fill(int nq, int n, double *d) {\n"
           "  for (size_t t = 0; t < (size_t)nq * n; t++)\n    d[t] = 0.5 * (double)t;\n}\n")
    rc, _, err = run(tmp_path, capsys, src, "-o", "out.c", "--no-tune")
    assert rc == 0
    line = next(x for x in err.splitlines() if "remark: loop nest parallelized" in x)
    assert "the generated code runs where" in line and "mdp_p_" not in line, line
    assert "(long long) n * (long long) nq" in line, line
