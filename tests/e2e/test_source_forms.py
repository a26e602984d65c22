"""Source forms the splicer and the driver must survive: form feeds, reserved generated names."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import build_c, mdpoly_available, run_mdpoly, run_program

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")


def test_form_feeds_do_not_shift_lines(tmp_path: Path) -> None:
    """C counts lines by newlines only; a form feed (^L, common in old sources) is no line break."""
    src = tmp_path / "in.c"
    src.write_bytes(b'#include <stdio.h>\n\x0c\nfloat a[100];\n\x0c int main(void) {\n'
                    b'  for (int i = 0; i < 100; i++) a[i] = i * 0.5f; \x0c\n'
                    b'  printf("%f\\n", a[7]); return 0; }\n')
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "in.c:5:3: remark: loop nest parallelized: i:++" in proc.stderr.replace(str(tmp_path) + "/", "")
    assert out.read_bytes().startswith(b"#include <stdio.h>\n\x0c\nfloat a[100];\n")
    assert b"\x0c int main(void) {\n  mdpoly_main_5(a); \x0c\n" in out.read_bytes()
    ref = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    assert run_program(build_c(out, tmp_path / "par", {}, openmp=True), threads=2) == ref


def test_reserved_generated_prefix_keeps_nests(tmp_path: Path) -> None:
    """Generated code names its locals and helpers mdp_*; a user macro of that name would break it."""
    src = tmp_path / "in.c"
    src.write_text('#include <stdio.h>\n#define mdp_acc0 oops\nfloat a[100];\nint main(void) {\n'
                   '  for (int i = 0; i < 100; i++) a[i] = i;\n  printf("%f\\n", a[7]); return 0; }\n')
    out = tmp_path / "out.c"
    proc = run_mdpoly(src, out, {})
    assert "[reserved-name]" in proc.stderr and "'mdp_acc0'" in proc.stderr
    assert out.read_text() == src.read_text()
