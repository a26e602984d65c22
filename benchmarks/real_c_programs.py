"""The real-C programs of ``c_examples/real/`` (issue 21): name -> sizes, checksum tolerances,
hand-written OpenMP variant, and the loop nests mdpoly must account for.

Shared by the differential test (``tests/e2e/test_real_programs.py``), the coverage table
(``benchmarks/real_c_coverage.py``) and the benchmark (``benchmarks/real_c.py``).

Every program prints ``checksum NAME SUM WEIGHTED ABS`` lines (floating point: the sum, a
position-weighted sum and the sum of absolute values of one output), ``ichecksum NAME VALUE``
lines (integers, exact) and ``time_s SECONDS`` (its hot section). A checksum matches when its
sum and weighted sum are within ``rtol`` of the sum of absolute values (the weighted sum within
13 times that, its weights being 1..13); reassociated floating-point reductions move the last
bits, maps must not move at all (their checksums are ``tight``: only the checksum loop's own
double sum may be reordered).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REAL_DIR = REPO / "c_examples" / "real"
TIGHT_RTOL = 1e-9
#: maps built with -march=native: gcc may contract a + b * c into an FMA differently per build
NATIVE_TIGHT_RTOL = 1e-5
BENCH_OMP = re.compile(r"^(\s*)//\s*BENCH-OMP:\s*(#pragma\s+omp\b.*)$", re.M)
USER_OMP = re.compile(r"^\s*#\s*pragma\s+omp\b", re.M)


@dataclass(frozen=True)
class RealProgram:
    """One program: ``bench_args`` make its hot loops big enough to time (the default, no
    arguments, runs in well under a second); ``rtol`` bounds float checksums that follow
    reassociated reductions, ``tight`` names the checksums of maps (``TIGHT_RTOL``), ``loose``
    overrides single checksums. ``fp_ints`` are integer checksums computed from floating-point
    values (int8 codes of ``sinf`` results): exact at ``-O2`` on x86-64, but with
    ``-march=native`` gcc may contract ``a + b * c`` into an FMA in one build and not in
    another, so the benchmark compares them to 1e-3."""

    name: str
    bench_args: tuple[str, ...]
    rtol: float = 1e-4
    tight: frozenset[str] = frozenset()
    loose: tuple[tuple[str, float], ...] = ()
    fp_ints: frozenset[str] = frozenset()

    @property
    def path(self) -> Path:
        return REAL_DIR / f"{self.name}.c"

    def tolerance(self, checksum: str, *, native: bool = False) -> float:
        if checksum in self.tight:
            return NATIVE_TIGHT_RTOL if native else TIGHT_RTOL
        return dict(self.loose).get(checksum, self.rtol)


PROGRAMS: tuple[RealProgram, ...] = (
    RealProgram("transformer", ("4", "96")),
    RealProgram("image_pipeline", ("6",), tight=frozenset({"blur", "sharp"})),
    RealProgram("heat3d", ("8", "100"), tight=frozenset({"temperature", "energy"})),
    RealProgram("nbody", ("8", "3")),
    RealProgram("shallow_water", ("6", "40"), tight=frozenset({"h", "hu", "hv", "energy", "mass"})),
    RealProgram("q8_matvec", ("4", "128"), loose=(("idot2", 1e-3),), fp_ints=frozenset({"idot1", "idot3", "xq"})),
    RealProgram("kmeans", ("32", "10"), tight=frozenset({"centroids", "sse"})),
    RealProgram("layernorm_softmax", ("64",)),
    RealProgram("conv2d_nhwc", ("6",)),
    RealProgram("resize_bilinear", ("12",), tight=frozenset({"up", "down", "mse"})),
    RealProgram("blocked_gemm", ("6",)),
    # uy is the transverse velocity of an x-driven channel flow: per cell it is a cancelling sum of
    # O(0.1) populations giving O(1e-4), so reassociating the 9-term moment sums (the default,
    # --strict-fp keeps them in order and is then exact) moves it by 2.5e-4 of |uy| at the default
    # size and 2e-3 at "4 40", as reversing the q loop in the sequential original does too.
    RealProgram("lbm_d2q9", ("4", "40"), loose=(("uy", 5e-3),)),
    RealProgram("black_scholes", ("16", "8"),
                tight=frozenset({"calls", "puts", "deltas", "total", "max_call"})),
    # chaotic dynamics: the thermostat's reassociated kinetic-energy sum moves lambda in the last
    # bits, which the steps after it grow (at "4 20": ~1e-9 of |v|); the forces sum as written
    RealProgram("md_lennard_jones", ("4", "20")),
    # 8-bit pixels rounded from float sums (sat_u8): an FMA contraction in one build and not in
    # another moves a pixel by one level now and then (the hand-written OpenMP build did)
    # a padded grid (IDX over rows of nx + 2) with periodic halos: the sweeps are maps, the
    # residual norms reductions
    RealProgram("halo_jacobi3d", ("3", "40"), tight=frozenset({"field"})),
    # per-path knock-out flags in the time loop; the book's sums are reductions over paths
    RealProgram("barrier_mc", ("12", "128")),
    # cloud-in-cell deposition scatters into rho (a reduction over particles when parallel); the
    # two-stream field grows from it over the steps
    RealProgram("pic1d", ("8", "40")),
    # periodic neighbours by remainders; integer counts only (exact)
    RealProgram("life_torus", ("6", "60")),
    # a dynamic-programming table: a tiled wavefront (exact integers)
    RealProgram("seq_align", ("4",)),
    # a Newton 'while' loop per option: a map (each option's iterations as written)
    RealProgram("implied_vol", ("8", "4"), tight=frozenset({"vol"})),
    # vec3 helpers by value, an array of sphere structs, a nearest-hit search per pixel, an image of
    # rgb structs (per pixel as written: exact, but the tone map and the checksums are float sums)
    RealProgram("ray_spheres", ("2", "3")),
    # complex structs with helpers by value; the FFT's butterfly stages step by a run-time length
    # (each butterfly as written: exact)
    RealProgram("fft_spectrum", ("22", "3"), tight=frozenset({"bands"})),
    # CSR power iterations (each row's gather as written), reassociated dangling and L1 sums; the
    # 8-bit codes round ranks (a last-bit change may move one code)
    RealProgram("graph_pagerank", ("4", "30"), loose=(("diff", 1e-3),), fp_ints=frozenset({"codes"})),
    # matmuls of run-time extents (packed panels), reductions over the batch (dW, db), the
    # loss a reassociated sum over rows
    RealProgram("mlp_train", ("4", "6")),
    RealProgram("image_gaussian_sobel", ("8", "4"),
                fp_ints=frozenset({"edges", "blurred", "gray", "equalized", "hist0", "hist255"})),
)
PROGRAMS_BY_NAME = {p.name: p for p in PROGRAMS}

# {{{ outputs


@dataclass
class Output:
    """One run: float checksums (sum, weighted, |x|), integer checksums, the hot section's time."""

    floats: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    ints: dict[str, int] = field(default_factory=dict)
    seconds: float | None = None


def parse_output(text: str) -> Output:
    out = Output()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0] == "checksum":
            out.floats[parts[1]] = (float(parts[2]), float(parts[3]), float(parts[4]))
        elif len(parts) == 3 and parts[0] == "ichecksum":
            out.ints[parts[1]] = int(parts[2])
        elif len(parts) == 2 and parts[0] == "time_s":
            out.seconds = float(parts[1])
    if not out.floats and not out.ints:
        raise ValueError(f"no checksum lines in the output: {text[-400:]!r}")
    return out


def compare(got: Output, ref: Output, program: RealProgram, *, native: bool = False) -> str | None:
    """``None`` when ``got`` matches ``ref``, else what differs first.

    :arg native: the builds used ``-march=native`` (maps compare to ``NATIVE_TIGHT_RTOL``, the
        program's ``fp_ints`` to 1e-3).
    """
    if set(got.floats) != set(ref.floats) or set(got.ints) != set(ref.ints):
        return f"checksums {sorted(got.floats) + sorted(got.ints)} vs {sorted(ref.floats) + sorted(ref.ints)}"
    for name, want in ref.ints.items():
        have = got.ints[name]
        int_rtol = 1e-3 if native and name in program.fp_ints else 0.0
        if abs(have - want) > int_rtol * abs(want):
            return f"{name} {have} vs {want}"
    for name, (s, w, a) in ref.floats.items():
        gs, gw, ga = got.floats[name]
        rtol = program.tolerance(name, native=native)
        scale = max(a, ga, 1e-300)
        for label, x, y, weight in (("sum", gs, s, 1.0), ("weighted", gw, w, 13.0), ("|x|", ga, a, 1.0)):
            if math.isnan(x) and math.isnan(y):
                continue
            if not abs(x - y) <= rtol * weight * scale:
                return f"{name} {label} {x:.12g} vs {y:.12g} (|x| sum {scale:.6g}, tolerance {rtol:g})"
    return None

# }}}

# {{{ the hand-written OpenMP variant


def user_openmp(text: str) -> bool:
    """Whether the source itself has ``#pragma omp`` lines (active in a ``-fopenmp`` build)."""
    return USER_OMP.search(text) is not None


def openmp_source(text: str) -> str | None:
    """The hand-written OpenMP variant: every ``// BENCH-OMP: #pragma omp ...`` marker turned
    into its pragma; the source as is when it has its own pragmas; ``None`` when it has neither."""
    if BENCH_OMP.search(text):
        return BENCH_OMP.sub(r"\1\2", text)
    return text if user_openmp(text) else None

# }}}

# {{{ the nests mdpoly must account for


def hot_lines(text: str) -> list[int]:
    """The lines (1-based) of the loops a programmer parallelized by hand: the ``for`` after each
    ``// BENCH-OMP:`` marker or ``#pragma omp`` line."""
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines):
        if BENCH_OMP.match(line) or USER_OMP.match(line):
            nxt = next((k for k in range(n + 1, len(lines)) if lines[k].strip()
                        and not lines[k].lstrip().startswith(("#", "//"))), None)
            if nxt is not None and lines[nxt].lstrip().startswith("for"):
                out.append(nxt + 1)
    return out


@dataclass(frozen=True)
class Loop:
    """An outermost ``for`` statement of a function (no ``for`` around it)."""

    function: str
    line: int


def outermost_loops(path: Path) -> list[Loop]:
    """Every outermost ``for`` of every function defined in ``path`` (after preprocessing, with
    mdpoly's own parser so that both see the same program)."""
    from pycparser import c_ast

    from mdpoly.frontend.parse import parse_c
    from mdpoly.options import Options

    parsed = parse_c(str(path), Options())
    found: list[Loop] = []

    class Finder(c_ast.NodeVisitor):
        def __init__(self, function: str) -> None:
            self.function = function

        def visit_For(self, node: c_ast.For) -> None:
            if node.coord is not None and Path(str(node.coord.file)).name == path.name:
                found.append(Loop(self.function, int(node.coord.line)))
            # loops inside it are not outermost

    for ext in parsed.ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.coord is not None and Path(str(ext.coord.file)).name == path.name:
            Finder(ext.decl.name).visit(ext.body)
    return found


def _parts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if it.get("kind") == "host-loop":
            out += _parts(it.get("body", []))
        elif it.get("kind") in ("computation", "private-loop", "wavefront"):
            out.append(it)
    return out


@dataclass
class Coverage:
    """What mdpoly's ``--report`` says about one program's nests."""

    loops: list[Loop]
    reported: int = 0
    transformed: int = 0
    kept: Counter[str] = field(default_factory=Counter)
    missing: list[Loop] = field(default_factory=list)
    parts: int = 0                  # computations of scheduled nests (and plain nests)
    parts_parallel: int = 0
    hot: int = 0                    # loops parallelized by hand (markers, pragmas) ...
    hot_transformed: int = 0        # ... that are transformed nests of mdpoly's


def coverage(report: dict[str, Any], loops: list[Loop], hot: list[int] | None = None) -> Coverage:
    """``report`` (``--report`` JSON) against the outermost loops of the source and its
    hand-parallelized loops ``hot`` (see :func:`hot_lines`)."""
    cov = Coverage(loops)
    transformed_lines = {int(n["line"]) for n in report["nests"] if n["status"] == "transformed"}
    cov.hot = len(hot or [])
    cov.hot_transformed = sum(1 for line in hot or [] if line in transformed_lines)
    lines = {int(n["line"]) for n in report["nests"]}
    cov.missing = [lp for lp in loops if lp.line not in lines]
    for n in report["nests"]:
        cov.reported += 1
        if n["status"] == "transformed":
            cov.transformed += 1
        else:
            cov.kept[str(n.get("code") or "?")] += 1
        parts = _parts(n["schedule"]) if n.get("schedule") else [n]
        cov.parts += len(parts)
        cov.parts_parallel += sum(1 for p in parts
                                  if p.get("status") == "transformed" or (p.get("kind") in ("private-loop", "wavefront")
                                                                         and not p.get("kept")))
    return cov


def read_report(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())

# }}}
