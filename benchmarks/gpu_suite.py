"""GPU suite benchmark (issues 22 and 23): the 30 suite kernels through ``--target cuda`` and
``--target opencl`` -> whole-program wall times against gcc -O3 sequential and mdpoly's OpenMP
output, with the MDPOLY_PROFILE kernel and transfer times, as md + json.

For every kernel of ``benchmarks/kernels/suite/`` (the kernel list, checksums and builds of
``suite.py``) the variants are:

- ``seq``: the original, ``gcc -O3 -march=native``;
- ``omp``: mdpoly ``--target openmp --no-tune``, run at ``--threads`` threads (16 on the GPU host);
- ``cuda`` / ``opencl``: mdpoly ``--target cuda|opencl --no-tune`` as shipped: the cost model
  keeps nests the device would lose on as OpenMP code (hybrid output, ``mdpoly/hybrid.py``),
  built with ``-fopenmp`` and run at ``--threads`` threads;
- ``cuda_all`` / ``opencl_all``: the same with ``MDPOLY_COST_CALIBRATION=gpu_min_speedup=0``:
  every nest the model weighs goes to the device (what the GPU code itself achieves; compare
  with ``cuda`` to judge the model's choices);
- ``cuda_thread`` / ``opencl_thread``: forced onto the device with a wavefront's tiles one device
  thread each (``gpu_barrier_ns=1e12`` prices the work-group form out), the form before it.

Each program runs once to check its checksums against ``seq`` (the ``first`` run: CUDA compiles
its kernels with NVRTC into a fresh module cache, OpenCL builds its program) and then ``--reps``
times interleaved; a cell is the median *whole-program* wall time (process start to exit: context
creation, module load, transfers included) and its speedup over ``seq``'s; the program's own
``time_s`` (its timed kernel call) is kept in the json. GPU variants run with ``MDPOLY_PROFILE=1``:
the kernel and transfer milliseconds and resident up/downloads they print are summed per run.
A variant whose target has no device here (no CUDA driver or GPU, no OpenCL device) is recorded
as ``no device``, not as a failure. ``--budget S`` stops starting kernels after S seconds (all
builds come first; kernels not run are ``skipped``).

Run from the repository root::

    python benchmarks/gpu_suite.py --small --variants seq,omp,opencl,opencl_all --threads 2   # here, PoCL
    python benchmarks/gpu_suite.py --threads 16 --budget 420 --out $OUT/gpu_suite             # on the GPU host

Writes ``benchmarks/results/gpu_suite_<date>[_small].md`` and ``.json`` (or ``--out``). Exit
status 1 when a variant is WRONG.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite  # the kernel list, building, checksums

ALL_VARIANTS = ("seq", "omp", "cuda", "cuda_all", "opencl", "opencl_all", "cuda_thread", "opencl_thread")
#: extra seconds a GPU variant's checking run may take (context creation, kernel compilation)
FIRST_RUN_ALLOWANCE_S = 60.0
GPU = {"cuda": "cuda", "cuda_all": "cuda", "opencl": "opencl", "opencl_all": "opencl", "cuda_thread": "cuda",
       "opencl_thread": "opencl"}
FORCE_DEVICE = "gpu_min_speedup=0"
#: forced onto the device with one thread per wavefront tile (the form before issue 23's work-groups)
FORCE_THREAD = "gpu_min_speedup=0,gpu_barrier_ns=1e12"
RUN_TIMEOUT_S = 300
_PROFILE = re.compile(r"mdpoly-profile: (\S+) calls=(\d+) kernel_ms=(\S+) transfer_ms=(\S+)")
_RESIDENT = re.compile(r"mdpoly-profile: resident uploads=(\d+) downloads=(\d+)")


# {{{ devices and toolchains


_PROBES = {
    "opencl": ("#include <stdio.h>\n#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n"
               "int main(void) { cl_uint np = 0, nd = 0, k; cl_platform_id p[8];\n"
               "  if (clGetPlatformIDs(8, p, &np) != CL_SUCCESS || np == 0) { puts(\"no OpenCL platform\"); return 1; }\n"
               "  for (k = 0; k < np && k < 8; k++) { cl_uint n = 0;\n"
               "    if (clGetDeviceIDs(p[k], CL_DEVICE_TYPE_ALL, 0, NULL, &n) == CL_SUCCESS) nd += n; }\n"
               "  if (nd == 0) { puts(\"no OpenCL device\"); return 1; } printf(\"%u\\n\", nd); return 0; }\n"),
    "cuda": ("#include <stdio.h>\n#include <cuda.h>\n"
             "int main(void) { int n = 0; CUresult r = cuInit(0);\n"
             "  if (r != CUDA_SUCCESS) { printf(\"cuInit failed (%d)\\n\", (int)r); return 1; }\n"
             "  if (cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) { puts(\"no CUDA device\"); return 1; }\n"
             "  printf(\"%d\\n\", n); return 0; }\n"),
}


def target_flags(target: str) -> tuple[list[str], list[str]]:
    """(compile, link) flags for a ``target`` output, as ``mdpoly-cc`` adds them; for OpenCL where
    the system has no ``CL/cl.h`` (the GPU machine), the CUDA toolkit's headers and library
    directory (as ``scripts/gpu_check.py`` builds there)."""
    from mdpoly.cc_wrapper import target_flags as flags
    from mdpoly.cuda_toolkit import find_cuda
    comp, link = (list(f) for f in flags(target))
    if target == "opencl" and not _system_cl_header():
        kit = find_cuda()
        if kit is not None:
            comp = [*kit.compile_flags(), *comp]
            link = [f"-L{d}" for d in kit.lib_dirs][:1] + link
    return comp, link


def _system_cl_header() -> bool:
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "h.c"
        src.write_text("#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void) { return 0; }\n")
        return subprocess.run([suite.CC, "-fsyntax-only", str(src)], capture_output=True, check=False).returncode == 0


def device_missing(target: str, work: Path) -> str | None:
    """Why ``target``'s programs cannot run here (no toolkit, driver or device), or ``None``."""
    work.mkdir(parents=True, exist_ok=True)
    src, exe = work / f"probe_{target}.c", work / f"probe_{target}"
    src.write_text(_PROBES[target])
    comp, link = target_flags(target)
    if target == "cuda" and not any(f.startswith("-I") for f in comp):
        return "no device: no CUDA toolkit found (CUDA_HOME, CUDA_PATH, nvcc, /usr/local/cuda)"
    build = subprocess.run([suite.CC, *comp, str(src), "-o", str(exe), *link], capture_output=True, text=True,
                           check=False)
    if build.returncode != 0:
        return f"no device: the probe does not build ({' '.join(build.stderr.split())[-200:]})"
    try:
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no device: {exc}"
    if run.returncode != 0:
        why = (run.stdout + run.stderr).strip().splitlines()
        return f"no device: {why[-1] if why else f'probe exited {run.returncode}'}"
    return None

# }}}


# {{{ building and running


@dataclass
class Variant:
    """One build of one kernel: ``status`` ok, n/a, no device, failed, WRONG or skipped."""
    name: str
    exe: Path | None = None
    status: str = "ok"
    detail: str = ""
    wall: list[float] = field(default_factory=list)
    kernel_s: list[float] = field(default_factory=list)
    first_wall: float | None = None
    profile: dict[str, float] = field(default_factory=dict)
    report: dict[str, Any] | None = None
    remarks: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.wall) if self.wall and self.status == "ok" else None


def _mdpoly(src: Path, out_c: Path, report: Path, target: str, defines: list[str], calibration: str) -> str:
    cmd = [*suite.mdpoly_command(), str(src), "-o", str(out_c), "--report", str(report), "--target", target,
           "--no-tune", f"-I{suite.KERNEL_DIR}", *[a for d in defines for a in ("-D", d[2:])]]
    env = suite.mdpoly_env()
    env["MDPOLY_COST_CALIBRATION"] = calibration
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=suite.MDPOLY_TIMEOUT_S, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"mdpoly exited {proc.returncode}: {shlex.join(cmd)}\n{proc.stderr[-1500:]}")
    return proc.stderr


def build_variant(kernel: str, name: str, out_dir: Path, small: bool, missing: dict[str, str | None]) -> Variant:
    src = suite.KERNEL_DIR / f"{kernel}.c"
    defines = ["-DSMALL"] if small else []
    v = Variant(name)
    target = GPU.get(name, "openmp")
    try:
        if name == "seq":
            v.exe = out_dir / "seq"
            suite.build(src, v.exe, defines, openmp=False)
            return v
        out_c, rep = out_dir / f"{name}.c", out_dir / f"{name}.json"
        v.remarks = _mdpoly(src, out_c, rep, target, defines, FORCE_DEVICE if name.endswith("_all") else
                             FORCE_THREAD if name.endswith("_thread") else "")
        v.report = json.loads(rep.read_text())
        if name in GPU and missing.get(target):
            v.status, v.detail = "no device", str(missing[target])
            return v
        comp, link = target_flags(target)
        v.exe = out_dir / name
        cmd = [suite.CC, *suite.OPT_FLAGS, "-fopenmp", *comp, *defines, f"-I{suite.KERNEL_DIR}", str(out_c),
               "-o", str(v.exe), *link, "-lm"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"build: {shlex.join(cmd)}\n{proc.stderr[-1500:]}")
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return Variant(name, status="failed", detail=str(exc), report=v.report, remarks=v.remarks)
    return v


def _profile(stderr: str) -> dict[str, float]:
    out = {"kernel_ms": 0.0, "transfer_ms": 0.0, "calls": 0.0, "uploads": 0.0, "downloads": 0.0}
    for _, calls, kern, trans in _PROFILE.findall(stderr):
        out["calls"] += int(calls)
        out["kernel_ms"] += float(kern)
        out["transfer_ms"] += float(trans)
    for up, down in _RESIDENT.findall(stderr):
        out["uploads"] += int(up)
        out["downloads"] += int(down)
    return out


class TooSlow(Exception):
    """A run stopped at its time cap."""


def run_once(v: Variant, threads: int, cache: Path, cap: float = RUN_TIMEOUT_S) -> tuple[float, suite.Output, str]:
    """One whole-program run: wall seconds, parsed output and stderr (``TooSlow`` past ``cap`` s)."""
    assert v.exe is not None
    env = dict(os.environ, MDPOLY_CACHE_DIR=str(cache))
    if v.name != "seq":
        env["OMP_NUM_THREADS"] = str(threads)
    if v.name in GPU:
        env["MDPOLY_PROFILE"] = "1"
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([str(v.exe)], env=env, capture_output=True, text=True, timeout=cap, check=False)
    except subprocess.TimeoutExpired as exc:
        raise TooSlow(f"stopped after {cap:.3g} s") from exc
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{v.exe.name} exited {proc.returncode}: {proc.stderr[-800:]}")
    return wall, suite.parse_output(proc.stdout), proc.stderr


def measure(built: dict[str, Variant], reps: int, threads: int, rtol: float, cache: Path, cap: float,
            deadline: float) -> None:
    """A checking run of every variant (its wall time kept as ``first_wall``), then ``reps``
    interleaved timed runs while ``time.monotonic()`` is before ``deadline``. A variant whose
    checking run passes ``cap`` times seq's (at least 2 s; a GPU variant gets
    ``FIRST_RUN_ALLOWANCE_S`` more for its context and kernel compilation) is stopped (``slow``); one left without
    a timed run is timed by its checking run."""
    seq = built["seq"]
    if seq.status != "ok":
        return
    try:
        wall, ref, _ = run_once(seq, threads, cache)
        seq.first_wall = wall
    except (RuntimeError, ValueError, TooSlow) as exc:
        seq.status, seq.detail = "failed", str(exc)
        return
    for v in built.values():
        if v.name == "seq" or v.status != "ok":
            continue
        try:
            # a GPU variant's first run also creates its context and JIT-compiles its kernels
            # (NVRTC takes seconds for a tiled kernel): reported as first_wall, not capped by seq
            limit = max(2.0, cap * wall) + (FIRST_RUN_ALLOWANCE_S if v.name in GPU else 0.0)
            v.first_wall, got, _ = run_once(v, threads, cache, limit)
        except TooSlow as exc:
            v.status, v.detail = f"<{1 / cap:.2g}x", f"{exc} (over {cap:g}x seq's {wall:.3g} s)"
            continue
        except (RuntimeError, ValueError) as exc:
            v.status, v.detail = "failed", str(exc)
            continue
        ok, _, detail = suite.compare(got, ref, rtol)
        if not ok:
            v.status, v.detail = "WRONG", detail
            print(f"!!! WRONG: {v.name}: {detail}", file=sys.stderr)
    for _ in range(reps):
        if time.monotonic() > deadline:
            break
        for v in built.values():
            if v.status != "ok":
                continue
            try:
                wall, out, err = run_once(v, threads, cache)
            except (RuntimeError, ValueError, TooSlow) as exc:
                v.status, v.detail = "failed", str(exc)
                continue
            v.wall.append(wall)
            v.kernel_s.append(out.seconds)
            if v.name in GPU:
                for k, x in _profile(err).items():
                    v.profile[k] = v.profile.get(k, 0.0) + x
    for v in built.values():
        if v.status == "ok" and v.wall:
            v.profile = {k: x / len(v.wall) for k, x in v.profile.items()}
        elif v.status == "ok" and v.first_wall is not None:
            v.wall, v.detail = [v.first_wall], "timed by its checking run only (time budget)"

# }}}


# {{{ the report


def _device_choices(report: dict[str, Any] | None) -> str:
    """Where the cost model put the nests: ``device``/``host`` counts (nests it weighed)."""
    if not report:
        return ""
    got = [n.get("cost", {}).get("device", {}).get("choice") for n in report["nests"]]
    dev, host = got.count("device"), got.count("host")
    return f"{dev} dev / {host} host" if dev or host else "–"


def row_for(kernel: str, built: dict[str, Variant], variants: list[str]) -> dict[str, Any]:
    seq = built["seq"].median
    row: dict[str, Any] = {"kernel": kernel, "variants": {}, "speedup": {}}
    for name in variants:
        v = built[name]
        row["variants"][name] = {"status": v.status, "detail": v.detail[:2000], "median_wall_s": v.median,
                                 "wall_s": v.wall, "first_wall_s": v.first_wall, "kernel_s": v.kernel_s,
                                 "profile": v.profile or None, "device_choices": _device_choices(v.report),
                                 "cost": [n.get("cost") for n in v.report["nests"]] if v.report else None}
        if name != "seq" and seq and v.median:
            row["speedup"][name] = seq / v.median
    omp = built["omp"].median if "omp" in built else None
    medians = {n: m for n in variants if n in GPU and (m := built[n].median)}
    row["vs_omp"] = {n: omp / m for n, m in medians.items()} if omp else {}
    if "omp" in built and built["omp"].report:
        row["coverage"] = suite.classify(suite.KERNELS_BY_NAME[kernel], built["omp"].report)["class"]
    return row


def _cell(row: dict[str, Any], v: str) -> str:
    d = row["variants"][v]
    if d["status"] != "ok":
        return f"**{d['status']}**" if d["status"] in ("WRONG", "failed") else d["status"]
    if d["detail"].startswith("timed by its checking run"):
        return (f"{row['speedup'][v]:.2f}x (1 run)" if v in row["speedup"] else "–") if v != "seq" else \
            f"{d['median_wall_s']:.3g} s (1 run)"
    if v == "seq":
        return f"{d['median_wall_s']:.3g} s"
    cell = f"{row['speedup'][v]:.2f}x" if v in row["speedup"] else "–"
    if v in GPU:
        prof = d["profile"] or {}
        cell += f" ({d['device_choices']}"
        if prof.get("calls"):
            cell += f"; k {prof['kernel_ms']:.3g} ms, t {prof['transfer_ms']:.3g} ms"
        cell += ")"
        if v in row["vs_omp"]:
            cell += f" {row['vs_omp'][v]:.2f}x omp"
    return cell


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any], variants: list[str]) -> str:
    m = meta["machine"]
    lines = [f"# GPU suite, {meta['date']}{' (SMALL sizes)' if meta['small'] else ''}", "",
             f"`python benchmarks/gpu_suite.py {meta['argv']}`", "",
             f"Machine: {m['cpu']}, nproc {m['nproc']}, {m['compiler']}; GPU: {meta['gpu']}; mdpoly at "
             f"`{m['mdpoly_commit']}`. Devices: " + "; ".join(f"{t}: {why or 'ok'}" for t, why in meta["devices"].items()),
             "", f"Cells: median whole-program wall time of {meta['reps']} runs (process start to exit) as a speedup "
             f"over `seq` (gcc {' '.join(suite.OPT_FLAGS)}); `omp` and the GPU variants at OMP_NUM_THREADS="
             f"{meta['threads']}. GPU cells: where the cost model put the nests it weighed (`dev`/`host`), the "
             "MDPOLY_PROFILE kernel (`k`) and transfer (`t`) milliseconds per run, and the speedup over `omp`. "
             "`*_all`: every weighed nest forced onto the device (`MDPOLY_COST_CALIBRATION=gpu_min_speedup=0`). "
             "The first (checking) run's wall time, with a cold NVRTC cache, is in the json (`first_wall_s`).", ""]
    head = ["kernel", "coverage (omp)", *variants]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([r["kernel"], r.get("coverage", "–"), *(_cell(r, v) for v in variants)]) + " |")
    lines += ["", "## Summary", ""]
    for v in variants[1:]:
        xs = [r["speedup"][v] for r in rows if v in r["speedup"]]
        g = suite.geomean(xs)
        slower = [r["kernel"] for r in rows if r["speedup"].get(v, 2.0) < 0.95 or r["variants"][v]["status"].startswith("<")]
        lines.append(f"- {v}: geomean over seq **{g:.2f}x** over {len(xs)} kernels; below 0.95x: "
                     f"{', '.join(slower) or 'none'}" if g else f"- {v}: no timed kernel")
        if v in GPU:
            ys = [r["vs_omp"][v] for r in rows if v in r["vs_omp"]]
            gy = suite.geomean(ys)
            if gy:
                lines.append(f"  - over omp: geomean {gy:.2f}x ({len(ys)} kernels)")
    wrong = [f"{r['kernel']}:{v}" for r in rows for v, d in r["variants"].items() if d["status"] == "WRONG"]
    failed = [f"{r['kernel']}:{v}" for r in rows for v, d in r["variants"].items() if d["status"] == "failed"]
    skipped = [r["kernel"] for r in rows if r["variants"]["seq"]["status"] == "skipped"]
    lines.append(f"- WRONG: {', '.join(wrong) or 'none'}; failed: {', '.join(failed) or 'none'}; "
                 f"skipped (budget): {', '.join(skipped) or 'none'}")
    details = [(r["kernel"], v, d["detail"]) for r in rows for v, d in r["variants"].items()
               if d["status"] in ("WRONG", "failed")]
    if details:
        lines += ["", "## Failures", ""] + [f"- {k} {v}: `{d[:400]}`".replace("\n", " ") for k, v, d in details]
    return "\n".join(lines) + "\n"

# }}}


def _gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30, check=False).stdout.strip()
        return out.replace("\n", ", ") or "none (nvidia-smi lists none)"
    except (OSError, subprocess.TimeoutExpired):
        return "none (no nvidia-smi)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="-DSMALL sizes (a correctness run)")
    ap.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    ap.add_argument("--variants", default=",".join(ALL_VARIANTS), help=f"from {','.join(ALL_VARIANTS)}")
    ap.add_argument("--reps", type=int, default=3, help="timed runs per variant (median; default 3)")
    ap.add_argument("--threads", type=int, default=16, help="OMP_NUM_THREADS of omp and the GPU variants")
    ap.add_argument("--rtol", type=float, default=1e-6, help="checksum tolerance relative to the outputs' |x| sum")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2), help="parallel builds")
    ap.add_argument("--budget", type=float, default=None, help="start no kernel's runs after this many seconds")
    ap.add_argument("--cap", type=float, default=10.0, help="stop a variant's checking run past this many times seq's")
    ap.add_argument("--out", help="output path without extension (default benchmarks/results/gpu_suite_<date>[_small])")
    ns = ap.parse_args(argv)
    t0 = time.monotonic()
    variants = [v for v in ns.variants.split(",") if v]
    bad = [v for v in variants if v not in ALL_VARIANTS]
    if bad:
        ap.error(f"unknown variants {bad}")
    variants = sorted(set(variants) | {"seq"}, key=ALL_VARIANTS.index)
    names = ns.kernels.split(",") if ns.kernels else [k.name for k in suite.KERNELS]
    unknown = [n for n in names if n not in suite.KERNELS_BY_NAME]
    if unknown:
        ap.error(f"unknown kernels {unknown}")
    build_root = suite.BUILD_DIR.parent / "gpu_suite" / ("small" if ns.small else "full")
    missing = {t: device_missing(t, build_root / "probe") for t in sorted({GPU[v] for v in variants if v in GPU})}
    for t, why in missing.items():
        print(f"{t}: {why or 'device found'}", file=sys.stderr)
    meta: dict[str, Any] = {"date": datetime.date.today().isoformat(), "small": ns.small, "reps": ns.reps,
                            "threads": ns.threads, "rtol": ns.rtol, "budget_s": ns.budget,
                            "argv": " ".join(argv if argv is not None else sys.argv[1:]), "machine": suite.machine(),
                            "gpu": _gpu_name(), "devices": missing}

    def prepare(kernel: str) -> dict[str, Variant]:
        out_dir = build_root / kernel
        out_dir.mkdir(parents=True, exist_ok=True)
        return {v: build_variant(kernel, v, out_dir, ns.small, missing) for v in variants}

    print(f"building {len(names)} kernels x {variants} ...", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as pool:
        built = dict(zip(names, pool.map(prepare, names), strict=True))
    print(f"built in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    base = Path(ns.out) if ns.out else suite.RESULTS_DIR / f"gpu_suite_{meta['date']}{'_small' if ns.small else ''}"
    base.parent.mkdir(parents=True, exist_ok=True)
    deadline = t0 + ns.budget if ns.budget is not None else float("inf")
    rows: list[dict[str, Any]] = []
    md = ""
    with tempfile.TemporaryDirectory(prefix="mdpoly-gpu-suite-") as cache:
        for n in names:
            if time.monotonic() > deadline:
                for v in built[n].values():
                    if v.status == "ok":
                        v.status, v.detail = "skipped", "time budget spent"
            else:
                measure(built[n], ns.reps, ns.threads, ns.rtol, Path(cache), ns.cap, deadline)
            row = row_for(n, built[n], variants)
            rows.append(row)
            print(f"{n:15s} " + "  ".join(f"{v}={_cell(row, v)}" for v in variants), file=sys.stderr)
            meta["elapsed_s"] = round(time.monotonic() - t0, 1)   # written after every kernel: a killed run keeps its rows
            md = markdown(rows, meta, variants)
            base.with_suffix(".md").write_text(md)
            base.with_suffix(".json").write_text(json.dumps({"meta": meta, "kernels": rows}, indent=1) + "\n")
    print(md.split("## Summary", 1)[1] if md else "no kernel")
    print(f"wrote {base.with_suffix('.md')} and .json", file=sys.stderr)
    return 1 if any(d["status"] == "WRONG" for r in rows for d in r["variants"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
