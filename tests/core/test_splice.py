"""``splice``: nests replaced by calls, functions inserted, everything else byte-identical."""

from __future__ import annotations

import pytest

from mdpoly.diagnostics import CompilerBug, SourceLoc
from mdpoly.ir.nest import SourceSpan
from mdpoly.splice import GENERATED_FILE, Replacement, splice

SRC = """#include <stdio.h>
/* keep me */  
int g;

void f(float *a, int n) {
  int x = 1;   for (int i = 0; i < n; i++)
    a[i] = 2 * a[i]; x++;
  printf("%d\\n", x);
}

int main(void) {\r
  return 0;\r
}
"""


def _rep(first: int, col: int, end: int, end_col: int, fn: int, call: str = "mdp_f(a, n);",
         first_line: int | None = None) -> Replacement:
    span = SourceSpan(SourceLoc("in.c", first, col), end, end_col, first_line or first)
    return Replacement(span, fn, call, "static void mdp_f(float *a, int n)\n{\n}\n", "#include <math.h>\n")


def test_splice_replaces_span_and_keeps_rest() -> None:
    line6 = SRC.splitlines()[5]
    col = line6.index("for") + 1
    line7 = SRC.splitlines()[6]
    end_col = line7.index(";") + 1
    out = splice(SRC, [_rep(6, col, 7, end_col, 5)], "in.c")
    lines = out.splitlines(keepends=True)
    assert lines[:4] == SRC.splitlines(keepends=True)[:4]
    assert f'#line 1 "{GENERATED_FILE}"\n' in lines
    assert "#include <math.h>\n" in lines
    i = lines.index('#line 5 "in.c"\n')
    assert lines[i + 1] == "void f(float *a, int n) {\n"
    assert lines[i + 2] == "  int x = 1;   mdp_f(a, n); x++;\n"
    assert lines[i + 3] == '#line 8 "in.c"\n'
    rest = "".join(lines[i + 4:])
    assert rest == "".join(SRC.splitlines(keepends=True)[7:])
    # removing our insertions gives the original minus the nest lines
    assert out.count("\r\n") == SRC.count("\r\n")


def test_splice_no_replacements_is_identity() -> None:
    assert splice(SRC, []) == SRC


def test_splice_pragma_line_belongs_to_nest() -> None:
    src = "void f(void) {\n    #pragma mdh\n    for (;;) x();\n}\n"
    out = splice(src, [_rep(3, 5, 3, 17, 1, "call();", first_line=2)], "p.c")
    assert "    call();\n" in out
    assert "#pragma mdh" not in out
    assert out.endswith('#line 4 "p.c"\n}\n')


def test_splice_overlap_is_a_bug() -> None:
    with pytest.raises(CompilerBug):
        splice(SRC, [_rep(6, 16, 7, 20, 5), _rep(7, 1, 7, 5, 5)])


def test_splice_two_nests_one_function_share_one_insertion() -> None:
    src = "int main(void) {\n  for(;;) a();\n  b();\n  for(;;) c();\n}\n"
    r1 = _rep(2, 3, 2, 14, 1, "n1();")
    r2 = Replacement(SourceSpan(SourceLoc("m.c", 4, 3), 4, 14, 4), 1, "n2();", "static void n2(void) {}\n", r1.preamble)
    out = splice(src, [r2, r1], "m.c")
    assert out.count('#line 1 "<mdpoly generated>"') == 1
    assert out.count("#include <math.h>") == 1
    assert out.endswith('#line 1 "m.c"\nint main(void) {\n  n1();\n  b();\n  n2();\n}\n')


def test_splice_two_nests_on_one_line() -> None:
    src = "void f(void) {\n  for (;;) a(); for (;;) b(); x();\n}\n"
    line = src.splitlines()[1]
    first, second = line.index("for") + 1, line.rindex("for") + 1
    reps = [_rep(2, first, 2, line.index("a();") + 4, 1, "ca();"),
            _rep(2, second, 2, line.index("b();") + 4, 1, "cb();")]
    out = splice(src, reps, "t.c")
    assert "  ca(); cb(); x();\n" in out


def test_splice_multiline_call_between_two_nests_keeps_line_numbers() -> None:
    src = "void f(void) {\n  for (;;) a(); for (;;) b();\n  y();\n}\n"
    line = src.splitlines()[1]
    reps = [_rep(2, line.index("for") + 1, 2, line.index("a();") + 4, 1, "if (c) {\n  ca();\n}"),
            _rep(2, line.rindex("for") + 1, 2, len(line), 1, "cb();")]
    out = splice(src, reps, "t.c").splitlines()
    k = out.index("} cb();")
    assert out[k + 1] == '#line 3 "t.c"' and out[k + 2] == "  y();"
