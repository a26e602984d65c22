"""``--size FUNC:NAME=VALUE`` scopes a size hint to one function (issue 21, item 8); a bare
``NAME=VALUE`` still sizes every function, and the scoped one wins over it in its function.

Two functions each have a loop over their own ``n``. A size below the profitability threshold
keeps a nest as written (``too-little-work``), an unknown size leaves it generic (transformed):
so the report shows which function each hint reached. The outputs build with ``-fopenmp`` and
print what the sequential original prints at 1-4 threads.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests" / "e2e"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from e2e_harness import mdpoly_available  # noqa: E402
from usability_harness import assert_same_as_sequential, mdpoly, statuses  # noqa: E402

from mdpoly.cli import build_parser, main, options_from_args  # noqa: E402
from mdpoly.options import Options, for_function  # noqa: E402

SOURCE = """\
#include <stdio.h>
#include <stdlib.h>
void f(int n, float *a) {
  for (int i = 0; i < n; i++)
    a[i] = a[i] * 2.0f + 1.0f;
}
void g(int n, float *b) {
  for (int i = 0; i < n; i++)
    b[i] = b[i] * 0.5f - 3.0f;
}
int main(void) {
  int n = 1 << 16;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = (float)(i % 9); b[i] = (float)(i % 4); }
  f(n, a); g(n, b);
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] - b[i];
  printf("%.6e %f %f\\n", s, a[n - 1], b[7]);
  free(a); free(b);
  return 0;
}
"""


def test_parsing_keeps_bare_and_scoped_hints_apart() -> None:
    parser = build_parser()
    ns = parser.parse_args(["in.c", "-o", "o.c", "--size", "n=64", "--size", "f:n=768", "--size", "g:m=0x10"])
    opts = options_from_args(parser, ns)
    assert opts.sizes == (("n", 64),) and opts.function_sizes == (("f", "n", 768), ("g", "m", 16))
    assert dict(for_function(opts, "f").sizes) == {"n": 768}
    assert dict(for_function(opts, "g").sizes) == {"n": 64, "m": 16}
    assert dict(for_function(opts, "h").sizes) == {"n": 64}
    assert for_function(Options(sizes=(("n", 3),)), "f").sizes == (("n", 3),)


@pytest.mark.parametrize(("item", "needle"), [
    ("f:n=-1", "--size expects a size >= 0, got 'f:n=-1'"),
    ("2f:n=1", "--size expects NAME=INTEGER, got '2f:n=1' (FUNCTION:NAME=INTEGER for one function)"),
    (":n=1", "--size expects NAME=INTEGER, got ':n=1'"),
    ("f:n", "--size expects NAME=INTEGER, got 'f:n'"),
])
def test_bad_scoped_sizes_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], item: str, needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.c").write_text(SOURCE)
    assert main(["in.c", "-o", "out.c", "--size", item]) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "out.c").exists()


@pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")
@pytest.mark.parametrize(("sizes", "f_status", "g_status"), [
    (["f:n=64"], "kept", "transformed"),                      # only f's n is small
    (["n=64"], "kept", "kept"),                              # a bare hint sizes every function
    (["n=64", "g:n=1000000"], "kept", "transformed"),        # the scoped one wins in g
    (["g:n=1000000", "n=64"], "kept", "transformed"),        # ... whatever the order
], ids=["scoped", "bare", "scoped-wins", "scoped-wins-any-order"])
def test_a_scoped_size_reaches_its_function_only(tmp_path: Path, sizes: list[str], f_status: str,
                                                 g_status: str) -> None:
    src = tmp_path / "two.c"
    src.write_text(SOURCE)
    out = tmp_path / "out.c"
    args = [a for s in sizes for a in ("--size", s)]
    proc = mdpoly(src, out, *args)
    assert proc.returncode == 0, proc.stderr
    got = statuses(out)
    assert got[4][0] == f_status and got[8][0] == g_status, proc.stderr
    if f_status == "kept":
        line = next(ln for ln in proc.stderr.splitlines() if ln.startswith(f"{src}:4:3: note:"))
        assert "loop nest kept sequential:" in line and line.endswith("[too-little-work]"), line
    assert_same_as_sequential(src, out, tmp_path)
