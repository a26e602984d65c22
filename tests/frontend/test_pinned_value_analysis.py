"""Values the file pins (``mdpoly.frontend.pinned_values``): what a specialised copy of the
generated code may assume, and what it must not."""

from __future__ import annotations

from pathlib import Path

from pycparser import c_ast

from mdpoly.frontend.parse import parse_c
from mdpoly.frontend.pinned_values import pinned_values
from mdpoly.options import Options


def pins(tmp_path: Path, text: str, sources: dict[str, str], func: str = "kernel") -> dict[str, str]:
    path = tmp_path / "in.c"
    path.write_text(text)
    parsed = parse_c(str(path), Options())
    (fdef,) = [e for e in parsed.ast.ext if isinstance(e, c_ast.FuncDef) and e.decl.name == func]
    return pinned_values(parsed.ast, fdef, sources)


KERNEL = "static void kernel(int n, int d, float s, float *x) { for (int i = 0; i < n * d; i++) x[i] *= s; }\n"


def test_parameters_through_callers_locals_and_chains(tmp_path: Path) -> None:
    got = pins(tmp_path, KERNEL + """
static void step(int n, float s, float *x) { kernel(n, 4, s, x); }
int main(int argc, char **argv) {
  const float soft = 0.01f; float x[64]; int n = argc;
  step(n, soft, x); step(n + 1, 0.01f, x); return 0; }
""", {"n": "n", "d": "d", "s": "s"})
    assert got == {"d": "4"}   # n: a run-time value; s: a floating constant, never pinned


def test_callers_that_disagree_or_escape_pin_nothing(tmp_path: Path) -> None:
    disagree = pins(tmp_path, KERNEL + """
int main(void) { float x[64]; kernel(8, 4, 2.0f, x); kernel(8, 3, 2.0f, x); return 0; }
""", {"d": "d", "s": "s"})
    assert disagree == {}
    escapes = pins(tmp_path, KERNEL + """
void (*hook)(int, int, float, float *) = kernel;
int main(void) { float x[64]; kernel(8, 4, 2.0f, x); return 0; }
""", {"d": "d", "s": "s"})
    assert escapes == {}


def test_members_every_store_sets_and_members_that_change(tmp_path: Path) -> None:
    text = """
typedef struct { int n, dim, k, reps; double h; float *p; } S;
static void kernel(S *s) { for (int i = 0; i < s->n; i++) s->p[i] *= s->dim + s->k + s->reps + s->h; }
static void other(S *s) { for (int i = 0; i < s->dim; i++) s->p[i] = 0; }
static void grow(S *s) { s->reps += 1; }
int main(int argc, char **argv) {
  S a, b = {.dim = 4, .h = -0.5};
  a.n = argc; a.dim = 4; a.k = 16; a.reps = 1; a.h = -0.5;
  b.k = 15; int *pk = &b.n; grow(&a); kernel(&a); kernel(&b); return *pk; }
"""
    got = pins(tmp_path, text, {"m_n": "s->n", "m_dim": "s->dim", "m_k": "s->k", "m_reps": "s->reps", "m_h": "s->h"})
    assert got == {"m_dim": "4"}


def test_only_values_that_change_the_code(tmp_path: Path) -> None:
    got = pins(tmp_path, KERNEL + """
int main(void) { float x[64]; kernel(1000, 0, 0.0f, x); return 0; }
""", {"n": "n", "d": "d", "s": "s"})
    assert got == {}   # 1000: no trip count a compiler unrolls; 0: an empty loop; 0.0f: floating


def test_a_member_stored_from_a_member_is_no_loop(tmp_path: Path) -> None:
    got = pins(tmp_path, """
typedef struct { int w, h, c; float *px; } Image;
static void kernel(Image *im) { for (int i = 0; i < im->w * im->h; i++) im->px[i] *= im->c; }
static void half(Image *dst, const Image *src) { dst->w = src->w / 2; dst->h = src->h / 2; dst->c = src->c; }
int main(void) { Image a, b; a.w = 64; a.h = 32; a.c = 3; half(&b, &a); kernel(&a); kernel(&b); return 0; }
""", {"w": "im->w", "c": "im->c"})
    assert got == {}   # every store of 'c' but one is a member's value, not followed
