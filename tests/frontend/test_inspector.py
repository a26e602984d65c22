"""The inspector of a nest's gathers (``mdpoly.frontend.inspector``): the C it writes is compiled
and run, and the smallest and largest subscript it reports must be those the nest itself reads
(computed here by running the nest's index arithmetic in Python); nests whose subscripts the
inspection cannot compute ahead are refused with a reason."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from pycparser import c_ast, c_parser

from mdpoly.frontend.inspector import NotInspectable, const_tables, inspector_code

CC = shutil.which("cc") or shutil.which("gcc")

STENCIL = """
static const int cx[5] = {0, 1, 0, -1, 0};
static const int cy[5] = {0, 0, 1, 0, -1};
void stream(int nx, int ny, int shift, const float *fin, float *fout, const unsigned char *wall)
{
    int xs, ys;
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < nx; x++) {
            float f[5];
            for (int q = 0; q < 5; q++) {
                xs = x - cx[q] + shift;
                ys = y - cy[q];
                xs = xs < 0 ? xs + nx : (xs >= nx ? xs - nx : xs);
                ys = ys < 0 ? ys + ny : (ys >= ny ? ys - ny : ys);
                f[q] = fin[(ys * nx + xs) * 5 + q];
            }
            if (wall[y * nx + x])
                fout[(y * nx + x) * 5] = fin[x * 3 + 1];
            else
                for (int q = 0; q < 5; q++)
                    fout[(y * nx + x) * 5 + q] = f[q];
        }
}
"""


def _function(source: str) -> tuple[c_ast.FileAST, c_ast.FuncDef, c_ast.For]:
    ast = c_parser.CParser().parse(source)
    func = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef))
    nest = next(s for s in func.body.block_items if isinstance(s, c_ast.For))
    return ast, func, nest


def _run_inspector(tmp_path: Path, source: str, gathered: dict[str, str], call: str,
                   readable: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """Compile ``source`` with its nest replaced by its inspector, which prints each range; run ``call``."""
    ast, func, nest = _function(source)
    code = inspector_code(nest, gathered, const_tables(ast, func), readable)
    prints = "".join(f'printf("%ld %ld\\n", mdp_ins_lo_{n}, mdp_ins_hi_{n});' for n in sorted(gathered))
    start = source.index("    for (", source.index(func.decl.name))
    end = source.rindex("}")
    program = ("#include <stdio.h>\nstatic int mdp_team(void) { return 3; }\n" + source[:start] + "{\n" + code + "\n"
               + prints + "\n}\n" + source[end:] + "\nint main(void) {\n" + call + "\nreturn 0;\n}\n")
    c_file, exe = tmp_path / "inspect.c", tmp_path / "inspect"
    c_file.write_text(program)
    subprocess.run([CC, "-O1", "-fopenmp", str(c_file), "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    return [tuple(int(v) for v in line.split()) for line in out if line]   # type: ignore[misc]


def _stencil_range(nx: int, ny: int, shift: int, wall: list[int]) -> tuple[int, int]:
    cx, cy = (0, 1, 0, -1, 0), (0, 0, 1, 0, -1)
    subs = []
    for y in range(ny):
        for x in range(nx):
            for q in range(5):
                xs, ys = x - cx[q] + shift, y - cy[q]
                xs = xs + nx if xs < 0 else (xs - nx if xs >= nx else xs)
                ys = ys + ny if ys < 0 else (ys - ny if ys >= ny else ys)
                subs.append((ys * nx + xs) * 5 + q)
            if wall[y * nx + x]:
                subs.append(x * 3 + 1)
    return min(subs), max(subs)


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize(("nx", "ny", "shift"), [(7, 5, 0), (3, 2, 4), (1, 1, 0), (9, 4, -12)])
def test_inspector_finds_the_wrapped_gathers(tmp_path: Path, nx: int, ny: int, shift: int) -> None:
    wall = [1 if (i % 4) == 1 else 0 for i in range(nx * ny)]
    call = (f"static float fin[10000], fout[10000]; static unsigned char wall[] = {{{', '.join(map(str, wall))}}};"
            f"stream({nx}, {ny}, {shift}, fin, fout, wall);")
    assert _run_inspector(tmp_path, STENCIL, {"fin": "fin"}, call) == [_stencil_range(nx, ny, shift, wall)]


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_inspector_reads_located_index_arrays_and_reports_no_read_as_zero(tmp_path: Path) -> None:
    source = """
void gather(int n, int m, const int *idx, const float *src, float *dst)
{
    for (int i = 0; i < n; i++) {
        float s = 0.0f;
        for (int k = 0; k < m; k++)
            s += src[idx[i * m + k] + 2];
        dst[i] = s;
    }
}
"""
    call = ("static int idx[12] = {5, 9, 3, 7, 11, 4, 8, 6, 10, 2, 5, 5}; static float src[20], dst[4];"
            "gather(4, 3, idx, src, dst); gather(0, 3, idx, src, dst);")
    got = _run_inspector(tmp_path, source, {"src": "src"}, call, readable=frozenset({"idx"}))
    assert got == [(2 + 2, 11 + 2), (0, 0)]


@pytest.mark.parametrize(("source", "why"), [
    ("void f(int n, const int *p, const int *idx, const float *a, float *b)"
     "{ for (int i = 0; i < n; i++) b[i] = a[idx[p[i]]]; }", "depends on data"),
    ("void f(int n, const int *idx, const float *a, float *b)"
     "{ for (int i = 0; i < n; i++) { int k = idx[i]; b[i] = a[k]; } }", "depends on data"),
    ("void f(int n, const float *a, float *b)"
     "{ for (int i = 0; i < n; i++) { if (b[i] > 0) { int k = i / n; b[i] = a[k]; } } }", "depends on data"),
    ("void f(int n, const float *a, float *b)"
     "{ for (int i = 0; i < n; i++) { if (i == 3) goto out; b[i] = a[2 * i]; } out:; }", "goto"),
])
def test_inspector_refuses_what_it_cannot_compute_ahead(source: str, why: str) -> None:
    ast, func, nest = _function(source)
    with pytest.raises(NotInspectable, match=why):
        inspector_code(nest, {"a": "a"}, const_tables(ast, func), frozenset())


RESAMPLE = """
typedef struct { int w, h, c; float *px; } Image;
void resample(const Image *src, Image *dst, int c0)
{
    const float sx = (float)src->w / dst->w;
    for (int y = 0; y < dst->h; y++) {
        int y0 = y < src->h ? y : src->h - 1;
        for (int x = 0; x < dst->w; x++) {
            int x0 = (int)(x * sx);
            x0 = x0 < src->w - 1 ? x0 : src->w - 1;
            for (int ch = c0; ch < dst->c; ch++)
                dst->px[(y * dst->w + x) * dst->c + ch] = src->px[(y0 * src->w + x0) * src->c + 2 - ch];
        }
    }
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize(("sw", "sh", "dw", "dh", "c0"), [(5, 4, 9, 6, 0), (7, 3, 3, 2, 1), (4, 4, 4, 4, 3)])
def test_inspector_takes_linear_inner_loops_at_their_ends(tmp_path: Path, sw: int, sh: int, dw: int, dh: int,
                                                          c0: int) -> None:
    """The channel loop's subscript is linear in ``ch``: only its first and last channel are
    recorded (none when the loop runs no iteration), and the struct members are read once."""
    ast, func, nest = _function(RESAMPLE)
    code = inspector_code(nest, {"mdp_m_src_px": "src->px"}, const_tables(ast, func))
    assert "for (int ch" not in code and "__auto_type const mdp_ins_m" in code, code
    assert "src->" not in code.split("#pragma omp parallel for")[1], code
    call = (f"static float a[1000], b[1000]; Image s = {{{sw}, {sh}, 3, a}}, d = {{{dw}, {dh}, 3, b}};"
            f"resample(&s, &d, {c0});")
    got = _run_inspector(tmp_path, RESAMPLE, {"mdp_m_src_px": "src->px"}, call)
    subs = []
    sx = _f32(sw / dw)
    for y in range(dh):
        y0 = y if y < sh else sh - 1
        for x in range(dw):
            x0 = min(int(_f32(x * sx)), sw - 1)
            subs += [(y0 * sw + x0) * 3 + 2 - ch for ch in range(c0, 3)]
    assert got == [(min(subs), max(subs)) if subs else (0, 0)]


def _f32(v: float) -> float:
    """``v`` rounded to C's ``float``."""
    return float(struct.unpack("f", struct.pack("f", v))[0])
