"""Kernel-suite runner (issues 11 and 12): C kernels -> coverage table, checks and speedups.

For every program in ``benchmarks/kernels/suite/`` it builds the original with
``gcc -O3 -march=native`` (``seq``), optionally the same source with ``-DOMP_FOR -fopenmp``
(``omp_for``: the plain ``#pragma omp parallel for`` a programmer would put on the outermost
parallel loop, written into the kernel under ``#ifdef OMP_FOR``; kernels without one show n/a),
and mdpoly's output (``mdpoly_notune``: ``--no-tune``; ``mdpoly_tuned``: ``--tune-time S`` per
nest), both with ``--report``. Every variant's checksums are compared with ``seq`` (relative
tolerance ``--rtol`` of the outputs' sum of absolute values); a mismatch is ``WRONG``. Timed runs
are interleaved (seq, omp_for, mdpoly, seq, ...) and the table shows medians, speedups over
``seq`` and their geometric means. From the report JSON each kernel is classified by whether its
main computation (``KERNELS`` below) became an MDH computation.

Run from the repository root (the venv's python, or any python with this checkout importable)::

    python benchmarks/suite.py --small                   # correctness of every kernel, seconds
    python benchmarks/suite.py --variants seq,omp_for,mdpoly_notune
    python benchmarks/suite.py --kernels gemm,lu --reps 7 --variants seq,mdpoly_notune,mdpoly_tuned --tune-time 20

Writes ``benchmarks/results/suite_<date>[_small].md`` and ``.json`` (or ``--out``). Builds go to
``benchmarks/build/suite/``. Exit status 1 when any variant is WRONG or fails.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
KERNEL_DIR = HERE / "kernels" / "suite"
BUILD_DIR = HERE / "build" / "suite"
RESULTS_DIR = HERE / "results"
CC = os.environ.get("CC", "gcc")
OPT_FLAGS = ("-O3", "-march=native")
ALL_VARIANTS = ("seq", "omp_for", "mdpoly_notune", "mdpoly_tuned")
RUN_TIMEOUT_S = 300
MDPOLY_TIMEOUT_S = 3600
SLOW_FACTOR, SLOW_MIN_S = 10, 2.0     # a variant this much slower is timed once (its checking run)

# {{{ the kernels and their main computations

# A main computation is named by signatures ``(output, needles)``: an MDH computation matches when
# ``output`` (None: any) is among its out_view buffers and every needle is one of its scalar
# function's parameter names, which mdpoly spells ``<array>_<index>_<index>`` (``A[i][k]`` ->
# ``A_i_k``, ``A[i - 1][j]`` -> ``A_im1_j``, ``r[k - i - 1]`` -> ``r_mipkm1``). The main
# computation is parallelized when every signature is matched by a transformed computation.


@dataclass(frozen=True, slots=True)
class Kernel:
    name: str
    category: str
    main: str                                   # the dominant computation, in words
    signatures: tuple[tuple[str | None, tuple[str, ...]], ...]


def _k(name: str, category: str, main: str, *sigs: tuple[str | None, tuple[str, ...]]) -> Kernel:
    return Kernel(name, category, main, tuple(sigs))


BLAS, SOLVER, MINING, STENCIL, DP = "linear algebra", "solver", "data mining", "stencil", "dynamic programming"

KERNELS: tuple[Kernel, ...] = (
    _k("gemm", BLAS, "C += alpha A B (i, k, j)", ("C", ("A_i_k", "B_k_j"))),
    _k("gemver", BLAS, "rank-2 update of A and the two matrix-vector products",
       ("A", ("u1_i", "v1_j")), ("x", ("A_j_i", "y_j")), ("w", ("A_i_j", "x_j"))),
    _k("gesummv", BLAS, "the two matrix-vector sums", ("tmp", ("A_i_j",)), ("y", ("B_i_j",))),
    _k("symm", BLAS, "the two triangular dot products into acc", (None, ("A_i_k", "B_k_j")), (None, ("A_k_i", "B_k_j"))),
    _k("syrk", BLAS, "C[i][j] += alpha A[i][k] A[j][k], j <= i", ("C", ("A_i_k", "A_j_k"))),
    _k("syr2k", BLAS, "C[i][j] += alpha (A B^T + B A^T), j <= i", ("C", ("A_i_k", "B_j_k"))),
    _k("trmm", BLAS, "B[i][j] += L[i][k] B[k][j], k < i", ("B", ("L_i_k", "B_k_j"))),
    _k("2mm", BLAS, "both matrix products", ("tmp", ("A_i_k", "B_k_j")), ("D", ("tmp_i_k", "C_k_j"))),
    _k("3mm", BLAS, "the three matrix products", ("E", ("A_i_k", "B_k_j")), ("F", ("C_i_k", "D_k_j")),
       ("G", ("E_i_k", "F_k_j"))),
    _k("atax", BLAS, "tmp = A x and y += A^T tmp", ("tmp", ("A_i_j", "x_j")), ("y", ("A_i_j", "tmp_i"))),
    _k("bicg", BLAS, "s = A^T r and q = A p", ("s", ("r_i", "A_i_j")), ("q", ("A_i_j", "p_j"))),
    _k("mvt", BLAS, "both matrix-vector products", ("x1", ("A_i_j", "y_1_j")), ("x2", ("A_j_i", "y_2_j"))),
    _k("doitgen", BLAS, "sum[p] += A[r][q][s] C4[s][p]", (None, ("A_r_q_s", "C4_s_p"))),
    _k("cholesky", SOLVER, "trailing update A[i][j] -= A[i][k] A[j][k]", ("A", ("A_i_k", "A_j_k"))),
    _k("lu", SOLVER, "trailing update A[i][j] -= A[i][k] A[k][j]", ("A", ("A_i_k", "A_k_j"))),
    _k("ludcmp", SOLVER, "LU trailing update", ("A", ("A_i_k", "A_k_j"))),
    _k("trisolv", SOLVER, "x[i] -= L[i][j] x[j]", ("x", ("L_i_j", "x_j"))),
    _k("gramschmidt", SOLVER, "R[k][j] = Q^T A and A -= Q R (the j loop)", ("R", ("Q_i_k", "A_i_j")),
       ("A", ("Q_i_k", "R_k_j"))),
    _k("durbin", SOLVER, "the dot product and the z update per k", (None, ("r_mipkm1", "y_i")), ("z", ("y_i",))),
    _k("covariance", MINING, "cov[i][j] += data[k][i] data[k][j]", (None, ("data_k_i", "data_k_j"))),
    _k("correlation", MINING, "corr[i][j] += data[k][i] data[k][j]", (None, ("data_k_i", "data_k_j"))),
    _k("jacobi_1d", STENCIL, "both sweeps per time step", ("B", ("A_im1",)), ("A", ("B_im1",))),
    _k("jacobi_2d", STENCIL, "both sweeps per time step", ("B", ("A_i_jm1",)), ("A", ("B_i_jm1",))),
    _k("heat_3d", STENCIL, "both sweeps per time step", ("B", ("A_ip1_j_k",)), ("A", ("B_ip1_j_k",))),
    _k("fdtd_2d", STENCIL, "the ey, ex and hz updates", ("ey", ("hz_im1_j",)), ("ex", ("hz_i_jm1",)),
       ("hz", ("ex_i_jp1",))),
    _k("seidel_2d", STENCIL, "the in-place 5-point update", ("A", ("A_im1_j",))),
    _k("adi", STENCIL, "the row and column Thomas recurrences", (None, ("p_i_jm1",)), (None, ("p_im1_j",))),
    _k("conv2d", STENCIL, "out[i][j] += filt[di][dj] img[i+di][j+dj]", ("out", ("filt_di_dj",))),
    _k("floyd_warshall", DP, "path[i][j] = min(path[i][j], path[i][k] + path[k][j])", ("path", ("path_i_k", "path_k_j"))),
    _k("nussinov", DP, "the max over split points k", (None, ("T_i_k", "T_kp1_j"))),
)
KERNELS_BY_NAME = {k.name: k for k in KERNELS}

# }}}

# {{{ running programs and comparing checksums


@dataclass
class Output:
    """One run of a kernel program: its timed seconds and checksum lines."""
    seconds: float
    checksums: dict[str, tuple[float, float, float]]   # name -> (sum, weighted sum, sum of |x|)


def parse_output(text: str) -> Output:
    seconds = math.nan
    sums: dict[str, tuple[float, float, float]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "time_s":
            seconds = float(parts[1])
        elif len(parts) == 5 and parts[0] == "checksum":
            sums[parts[1]] = (float(parts[2]), float(parts[3]), float(parts[4]))
    if math.isnan(seconds) or not sums:
        raise ValueError(f"no time_s/checksum lines in output: {text[-500:]!r}")
    return Output(seconds, sums)


def compare(got: Output, ref: Output, rtol: float) -> tuple[bool, float, str]:
    """Whether ``got`` matches ``ref``: every sum within ``rtol`` of the sum of absolute values
    (the weighted sum within ``7 * rtol`` of it). Returns (ok, largest relative deviation, detail)."""
    worst, detail = 0.0, ""
    if set(got.checksums) != set(ref.checksums):
        return False, math.inf, f"outputs {sorted(got.checksums)} vs {sorted(ref.checksums)}"
    for name, (s, w, m) in ref.checksums.items():
        gs, gw, gm = got.checksums[name]
        scale = max(m, gm, 1e-300)
        for label, a, b, weight in (("sum", gs, s, 1.0), ("weighted", gw, w, 7.0)):
            if math.isnan(a) or math.isnan(b):
                dev = 0.0 if math.isnan(a) and math.isnan(b) else math.inf
            else:
                dev = abs(a - b) / (weight * scale)
            if dev > worst:
                worst = dev
            if dev > rtol and not detail:
                detail = f"{name} {label} {a:.17g} vs seq {b:.17g} (|x| sum {scale:.6g}, rel {dev:.3g})"
    return not detail, worst, detail


def run_program(exe: Path, threads: int | None) -> Output:
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{exe.name} exited {proc.returncode}: {proc.stderr[-800:]}")
    return parse_output(proc.stdout)


def _step(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {shlex.join(cmd)}\n{(proc.stderr or proc.stdout)[-1500:]}")
    return proc


def mdpoly_command() -> list[str]:
    override = os.environ.get("MDPOLY_COMMAND")
    if override:
        return shlex.split(override)
    return [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


def mdpoly_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env

# }}}

# {{{ building the variants


@dataclass
class Variant:
    """One build of one kernel; ``status`` is ok, n/a, failed or WRONG."""
    name: str
    exe: Path | None = None
    status: str = "ok"
    detail: str = ""
    times: list[float] = field(default_factory=list)
    deviation: float = 0.0
    report: dict[str, Any] | None = None
    remarks: str = ""
    mdpoly_seconds: float | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times and self.status == "ok" else None


def build(src: Path, exe: Path, defines: list[str], openmp: bool) -> None:
    cmd = [CC, *OPT_FLAGS, *(["-fopenmp"] if openmp else []), *defines, f"-I{KERNEL_DIR}", str(src), "-o", str(exe), "-lm"]
    _step(cmd, 300)


def build_variant(kernel: str, name: str, out_dir: Path, small: bool, tune_time: float | None) -> Variant:
    src = KERNEL_DIR / f"{kernel}.c"
    defines = ["-DSMALL"] if small else []
    v = Variant(name)
    try:
        if name == "seq":
            v.exe = out_dir / "seq"
            build(src, v.exe, defines, openmp=False)
        elif name == "omp_for":
            if "OMP_FOR" not in src.read_text():
                return Variant(name, status="n/a", detail="no parallel-for site in the kernel")
            v.exe = out_dir / "omp_for"
            build(src, v.exe, [*defines, "-DOMP_FOR"], openmp=True)
        else:
            out_c, rep = out_dir / f"{name}.c", out_dir / f"{name}.json"
            cmd = [*mdpoly_command(), str(src), "-o", str(out_c), "--report", str(rep)]
            cmd += ["-D", "SMALL"] if small else []
            cmd += ["--no-tune"] if name == "mdpoly_notune" else (["--tune-time", str(tune_time)] if tune_time else [])
            t0 = time.perf_counter()
            proc = _step(cmd, MDPOLY_TIMEOUT_S, env=mdpoly_env())
            v.mdpoly_seconds = time.perf_counter() - t0
            v.remarks = proc.stderr
            v.report = json.loads(rep.read_text())
            v.exe = out_dir / name
            build(out_c, v.exe, defines, openmp=True)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return Variant(name, status="failed", detail=str(exc), report=v.report, remarks=v.remarks)
    return v

# }}}

# {{{ classification from the report


def _computations(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if it.get("kind") == "host-loop":
            out += _computations(it["body"])
        elif it.get("kind") == "computation":
            out.append(it)
    return out


def computations(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every computation of the report: a scheduled nest's parts, else the nest itself."""
    out: list[dict[str, Any]] = []
    for n in report["nests"]:
        out += _computations(n["schedule"]) if n.get("schedule") else [n]
    return out


def _mdh_names(comp: dict[str, Any]) -> tuple[set[str], set[str]]:
    mdh = comp.get("mdh") or ""
    outs = set(re.findall(r"(\w+):\(", mdh.split(" o\n")[0])) if mdh else set()
    fm = re.search(r"^f\(([^)]*)\)", mdh, re.M)
    params = {p.split()[-1] for p in fm.group(1).split(",") if p.strip()} if fm else set()
    return outs, params


def _loops(comp: dict[str, Any]) -> str:
    return " ".join(f"{lp['iterator']}:{lp['combine']}" for lp in comp.get("loops", []))


def schedule_summary(report: dict[str, Any]) -> str:
    """The report as one line: ``t:seq{ [i:++ j:++] [kept: code] }`` per nest, ``;`` between."""
    def part(c: dict[str, Any]) -> str:
        return f"[{_loops(c)}]" if c["status"] == "transformed" else f"[kept: {c.get('code')}]"

    def walk(items: list[dict[str, Any]]) -> str:
        words = []
        for it in items:
            if it.get("kind") == "host-loop":
                seq = "seq-in-region" if it.get("parallel_region") else "seq"
                words.append(f"{it['iterator']}:{seq}{{ {walk(it['body'])} }}")
            elif it.get("kind") == "statement":
                words.append("stmt")
            elif it.get("kind") == "private-loop" and it.get("kept"):
                words.append(f"[kept: {it['kept']}]")
            elif it.get("kind") == "private-loop":
                body = f"private {','.join(it['private'])}" if it["private"] else "private-body"
                body += f" blocks {it['blocked']}" if it.get("blocked") else ""
                words.append(f"[{' '.join(v + ':++' for v in it['parallel'])} {body}]")
            elif it.get("kind") == "wavefront":
                skew = "" if it["skew"] == it["loops"] else f" skew {','.join(it['skew'])}"
                skew = f" hyperplane {it['hyperplane']}" if it.get("hyperplane") else skew
                words.append(f"[wavefront {','.join(it['loops'])}{skew}]")
            else:
                words.append(part(it))
        return " ".join(words)
    return "; ".join(walk(n["schedule"]) if n.get("schedule") else part(n) for n in report["nests"])


def _wavefronts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if it.get("kind") == "wavefront":
            out.append(it)
        elif it.get("kind") == "host-loop":
            out += _wavefronts(it["body"])
    return out


def _private_loops(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parallel loops around bodies as written that run in parallel, host loops' bodies included."""
    out: list[dict[str, Any]] = []
    for it in items:
        if it.get("kind") == "private-loop" and not it.get("kept"):
            out.append(it)
        elif it.get("kind") == "host-loop":
            out += _private_loops(it["body"])
    return out


def _host_loops(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for it in items:
        if it.get("kind") == "host-loop":
            out.append(it)
            out += _host_loops(it["body"])
    return out


def classify(kernel: Kernel, report: dict[str, Any]) -> dict[str, Any]:
    """``main`` (every main signature in a transformed computation), ``part of main`` (some),
    ``minor`` (other computations only) or ``nothing``; plus which matched and the kept codes."""
    comps = computations(report)
    done = [c for c in comps if c["status"] == "transformed"]
    # a nest made parallel by privatizing its temporaries runs as written inside its parallel
    # loops: every computation in it is parallel (it has no MDH to match signatures against)
    private = any(n["status"] == "transformed" and _private_loops(n["schedule"])
                  for n in report["nests"] if n.get("schedule"))
    # likewise a nest whose band runs as a tiled wavefront (the band as written, tiles in parallel)
    private = private or any(n["status"] == "transformed" and _wavefronts(n["schedule"])
                             for n in report["nests"] if n.get("schedule"))
    matched, reduction_only = [], not private
    for out, needles in kernel.signatures:
        if private:
            matched.append(True)
            continue
        hit = None
        for c in done:
            outs, params = _mdh_names(c)
            if (out is None or out in outs) and all(nd in params for nd in needles):
                hit = c
                break
        matched.append(hit is not None)
        if hit is not None and any(lp["combine"] == "++" for lp in hit.get("loops", [])):
            reduction_only = False
    if all(matched):
        cls = "main"
    elif any(matched):
        cls = "part of main"
    elif done:
        cls = "minor"
    else:
        cls = "nothing"
    # why the main computation (or the nest holding it) stays sequential, where it does
    kept = sorted({c.get("code") or "?" for c in comps if c["status"] != "transformed"})
    return {"class": cls, "matched": matched, "reduction_only": cls == "main" and reduction_only,
            "kept_codes": kept, "host_loops": [f"{h['iterator']}: {h['reason']}" for h in
                                               (hl for n in report["nests"] for hl in _host_loops(n.get("schedule") or []))],
            "schedule": schedule_summary(report),
            "transformed": len(done), "computations": len(comps)}

# }}}

# {{{ the run


def prepare(kernel: str, variants: list[str], small: bool, tune_time: float | None) -> dict[str, Variant]:
    out_dir = BUILD_DIR / ("small" if small else "full") / kernel
    out_dir.mkdir(parents=True, exist_ok=True)
    return {name: build_variant(kernel, name, out_dir, small, tune_time) for name in variants}


def measure(kernel: str, built: dict[str, Variant], reps: int, threads: int, rtol: float) -> None:
    """A checking run of every variant, then ``reps`` interleaved timed rounds."""
    seq = built["seq"]
    if seq.status != "ok" or seq.exe is None:
        return
    try:
        ref = run_program(seq.exe, None)
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        seq.status, seq.detail = "failed", str(exc)
        return
    for v in built.values():
        if v.name == "seq" or v.status != "ok" or v.exe is None:
            continue
        try:
            got = run_program(v.exe, threads)
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
            v.status, v.detail = "failed", str(exc)
            continue
        ok, v.deviation, detail = compare(got, ref, rtol)
        if not ok:
            v.status, v.detail = "WRONG", detail
            print(f"!!! WRONG: {kernel} {v.name}: {detail}", file=sys.stderr)
        elif got.seconds > SLOW_FACTOR * ref.seconds and got.seconds > SLOW_MIN_S:
            v.times, v.detail = [got.seconds], f"one run only: over {SLOW_FACTOR}x slower than seq"
    for _ in range(reps):
        for v in built.values():
            if v.status != "ok" or v.exe is None or v.detail.startswith("one run only"):
                continue
            try:
                v.times.append(run_program(v.exe, None if v.name == "seq" else threads).seconds)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                v.status, v.detail = "failed", str(exc)


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cc = subprocess.run([CC, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        cc = "unknown"
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
    except OSError:
        commit = "unknown"
    return {"cpu": model, "nproc": str(os.cpu_count()), "compiler": cc, "c_flags": " ".join(OPT_FLAGS),
            "python": platform.python_version(), "os": platform.platform(), "mdpoly_commit": commit,
            "load_average_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def geomean(xs: list[float]) -> float | None:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(rows: list[dict[str, Any]], variants: list[str]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for r in rows:
        if r.get("coverage"):
            counts[r["coverage"]["class"]] = counts.get(r["coverage"]["class"], 0) + 1
    reasons: dict[str, int] = {}
    for r in rows:
        cov = r.get("coverage")
        if cov and cov["class"] != "main":
            codes = list(cov["kept_codes"])
            if " stmt" in f" {cov['schedule']}":
                codes.append("statements kept as written in host loops")
            for code in codes or ["(main not an MDH computation)"]:
                reasons[code] = reasons.get(code, 0) + 1
    speed = {}
    for v in variants[1:]:
        xs = [r["speedup"][v] for r in rows if r["speedup"].get(v)]
        g = geomean(xs)
        speed[v] = {"geomean": g, "kernels": len(xs)}
    wrong = [f"{r['kernel']}:{v}" for r in rows for v, d in r["variants"].items() if d["status"] == "WRONG"]
    failed = [f"{r['kernel']}:{v}" for r in rows for v, d in r["variants"].items() if d["status"] == "failed"]
    broken = [r["kernel"] for r in rows if r.get("coverage", {}).get("class") == "main"
              and any(d["status"] in ("WRONG", "failed") for v, d in r["variants"].items() if v.startswith("mdpoly"))]
    return {"coverage": counts, "main_but_mdpoly_wrong_or_failed": broken, "kept_reasons_outside_main": reasons, "speedup": speed, "wrong": wrong,
            "failed": failed, "reduction_only_main": [r["kernel"] for r in rows
                                                       if r.get("coverage", {}).get("reduction_only")]}


def row_for(kernel: Kernel, built: dict[str, Variant], variants: list[str]) -> dict[str, Any]:
    seq_med = built["seq"].median
    row: dict[str, Any] = {"kernel": kernel.name, "category": kernel.category, "main": kernel.main,
                           "variants": {}, "speedup": {}}
    for name in variants:
        v = built[name]
        row["variants"][name] = {"status": v.status, "detail": v.detail, "median_s": v.median, "times_s": v.times,
                                 "max_rel_deviation": v.deviation, "mdpoly_seconds": v.mdpoly_seconds}
        if name != "seq" and seq_med and v.median:
            row["speedup"][name] = seq_med / v.median
    rep_variant = next((built[n] for n in ("mdpoly_notune", "mdpoly_tuned") if n in built and built[n].report), None)
    if rep_variant is not None and rep_variant.report is not None:
        row["coverage"] = classify(kernel, rep_variant.report)
        row["report"] = rep_variant.report
    return row


def _cell(row: dict[str, Any], v: str) -> str:
    d = row["variants"][v]
    if d["status"] == "n/a":
        return "n/a"
    if d["status"] != "ok":
        return f"**{d['status']}**"
    if v == "seq":
        return f"{d['median_s'] * 1e3:.3g} ms"
    slow = " (1 run)" if d["detail"].startswith("one run only") else ""
    return f"{row['speedup'][v]:.2f}x{slow}" if v in row["speedup"] else "–"


def markdown(rows: list[dict[str, Any]], summary: dict[str, Any], meta: dict[str, Any], variants: list[str]) -> str:
    m = meta["machine"]
    lines = [f"# Kernel suite, {meta['date']}{' (SMALL sizes)' if meta['small'] else ''}", "",
             f"`python benchmarks/suite.py {meta['argv']}`", "",
             f"Machine: {m['cpu']}, nproc {m['nproc']}, {m['compiler']}, `{m['c_flags']}`; load average at start "
             f"{m['load_average_at_start']}, at end {meta['load_average_at_end']}; mdpoly at `{m['mdpoly_commit']}`"
             " (plus uncommitted work of the checkout at the time).", "",
             f"Parallel variants run with OMP_NUM_THREADS={meta['threads']}; `seq` is the original built with "
             f"`{CC} {m['c_flags']}`. Each cell is the median of {meta['reps']} timed runs of the kernel call (after "
             "one checking run), the variants' runs interleaved (seq, omp_for, mdpoly, seq, ...); a variant over "
             f"{SLOW_FACTOR}x slower than seq is timed by its checking run alone ('1 run'). The machine is "
             "shared with other engineers' jobs, so timings are noisy (runs of a few ms swing by 2x; kernels were "
             "sized to run >= 50 ms sequentially); speedups are seq median / variant median.", "",
             "Coverage (from mdpoly's `--report`): **main** = every main computation of the kernel "
             "(column 'main computation') is a transformed MDH computation, alone or inside host loops; "
             "**part** = some of them; **minor** = only other nests; **nothing** = no nest transformed. "
             "'red. only' marks a main computation parallelized only along reduction dimensions "
             "(its ++ loops stay host loops).", ""]
    head = ["kernel", "category", "main computation", "coverage", "schedule (mdpoly --no-tune report)", *variants]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cov = r.get("coverage")
        cls = (cov["class"] + (" (red. only)" if cov["reduction_only"] else "")) if cov else "–"
        sched = cov["schedule"].replace("|", "/") if cov else "–"
        lines.append("| " + " | ".join([r["kernel"], r["category"], r["main"], cls, f"`{sched}`",
                                        *(_cell(r, v) for v in variants)]) + " |")
    n = len(rows)
    c = summary["coverage"]
    lines += ["", "## Summary", "",
              f"- main computation parallelized: **{c.get('main', 0)} of {n}** "
              f"(of which parallel along reductions only: {', '.join(summary['reduction_only_main']) or 'none'}); "
              f"part of main: {c.get('part of main', 0)}; only a minor nest: {c.get('minor', 0)}; "
              f"nothing: {c.get('nothing', 0)}; main per the report but mdpoly's output WRONG or failing: "
              f"{', '.join(summary['main_but_mdpoly_wrong_or_failed']) or 'none'}",
              "- kept reasons in the kernels whose main computation is not parallelized: "
              + (", ".join(f"`{k}` x{v}" for k, v in sorted(summary["kept_reasons_outside_main"].items())) or "none")]
    for v, s in summary["speedup"].items():
        g = f"{s['geomean']:.2f}x" if s["geomean"] else "–"
        lines.append(f"- geometric-mean speedup over seq, {v}: **{g}** over {s['kernels']} kernels")
    lines.append(f"- WRONG: {', '.join(summary['wrong']) or 'none'}; failed: {', '.join(summary['failed']) or 'none'}")
    details = [(r["kernel"], v, d["detail"]) for r in rows for v, d in r["variants"].items()
               if d["status"] in ("WRONG", "failed")]
    if details:
        lines += ["", "## Failures", ""] + [f"- {k} {v}: `{d[:400]}`".replace("\n", " ") for k, v, d in details]
    lines += ["", "## Sequential host loops (why they stay sequential)", ""]
    for r in rows:
        cov = r.get("coverage")
        if cov and cov["host_loops"]:
            lines.append(f"- {r['kernel']}: " + "; ".join(h.replace("|", "/") for h in cov["host_loops"]))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="-DSMALL sizes (a correctness run)")
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per variant (median; default 5)")
    ap.add_argument("--variants", default="seq,omp_for,mdpoly_notune", help=f"comma-separated, from {','.join(ALL_VARIANTS)}")
    ap.add_argument("--tune-time", type=float, default=None, help="mdpoly --tune-time S per nest for mdpoly_tuned")
    ap.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS of the parallel variants (default 2)")
    ap.add_argument("--rtol", type=float, default=1e-6, help="checksum tolerance relative to the outputs' |x| sum")
    ap.add_argument("--jobs", type=int, default=2, help="parallel builds (timing is always one run at a time)")
    ap.add_argument("--out", help="output path without extension (default benchmarks/results/suite_<date>[_small])")
    ns = ap.parse_args(argv)

    variants = [v for v in ns.variants.split(",") if v]
    bad = [v for v in variants if v not in ALL_VARIANTS]
    if bad:
        ap.error(f"unknown variants {bad}")
    if "seq" not in variants:
        variants.insert(0, "seq")
    variants.sort(key=ALL_VARIANTS.index)
    names = ns.kernels.split(",") if ns.kernels else [k.name for k in KERNELS]
    unknown = [n for n in names if n not in KERNELS_BY_NAME]
    if unknown:
        ap.error(f"unknown kernels {unknown}")
    meta: dict[str, Any] = {"date": datetime.date.today().isoformat(), "small": ns.small, "reps": ns.reps,
                            "threads": ns.threads, "rtol": ns.rtol, "tune_time": ns.tune_time,
                            "argv": " ".join(argv if argv is not None else sys.argv[1:]), "machine": machine()}

    print(f"building {len(names)} kernels x {variants} ...", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
        built = dict(zip(names, pool.map(lambda n: prepare(n, variants, ns.small, ns.tune_time), names)))
    rows = []
    for n in names:
        measure(n, built[n], ns.reps, ns.threads, ns.rtol)
        row = row_for(KERNELS_BY_NAME[n], built[n], variants)
        rows.append(row)
        cells = "  ".join(f"{v}={_cell(row, v)}" for v in variants)
        cls = row.get("coverage", {}).get("class", "–")
        print(f"{n:15s} {cls:13s} {cells}", file=sys.stderr)
    meta["load_average_at_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    summary = summarize(rows, variants)

    base = Path(ns.out) if ns.out else RESULTS_DIR / f"suite_{meta['date']}{'_small' if ns.small else ''}"
    base.parent.mkdir(parents=True, exist_ok=True)
    md = markdown(rows, summary, meta, variants)
    base.with_suffix(".md").write_text(md)
    base.with_suffix(".json").write_text(json.dumps({"meta": meta, "summary": summary, "kernels": rows}, indent=1) + "\n")
    print(md.split("## Summary", 1)[1] if "## Summary" in md else md)
    print(f"wrote {base.with_suffix('.md')} and .json", file=sys.stderr)
    return 1 if summary["wrong"] or summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
