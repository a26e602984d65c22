"""Real-C benchmark (issue 21): ``c_examples/real/*.c`` -> times of the original, its hand-written
OpenMP and mdpoly's output, side by side.

Variants of each program, all built with ``gcc -O3 -march=native`` (``CC`` overrides gcc):

- ``seq``: the program as written, sequential (its own ``#pragma omp`` lines ignored);
- ``omp``: the hand-written OpenMP a real program has: its ``// BENCH-OMP: #pragma omp ...``
  markers turned into pragmas, or its own pragmas, with ``-fopenmp`` (n/a when it has neither);
- ``mdpoly``: ``mdpoly --no-tune`` output with ``-fopenmp`` (the program's own pragmas stay
  active next to mdpoly's code);
- ``mdpoly_tuned``: with ``--tune-time S`` instead (only when given);
- ``mdpoly_cuda``, ``mdpoly_opencl`` (``--gpu cuda,opencl``): ``--target cuda|opencl --no-tune``
  output, the cost model choosing device or host per nest, built with the API's flags and
  ``-fopenmp`` (the host code's OpenMP), run at the same ``OMP_NUM_THREADS``.

For every thread count (``--threads``, as ``OMP_NUM_THREADS``) the variants run interleaved
(seq, omp, mdpoly, ..., seq, omp, ...) ``--reps`` times after one checking run; the time is the
program's own ``time_s`` (its hot section), the table shows medians, and ratios against ``seq``
and ``omp`` of the same thread count (> 1: faster). The checking run's checksums are compared
with ``seq``'s (tolerances in ``real_c_programs.py``); a mismatch is ``WRONG``. ``--busy`` starts
one busy-looping process pinned to CPU 0 and runs every variant pinned to CPUs
``0..T-1`` (``taskset``), so one of the cores the threads use is shared. A variant that does not
build or run shows ``failed: reason``; the run goes on.

Run from the repository root (one command; about 10 minutes with the defaults on 16 cores)::

    python benchmarks/real_c.py                                   # all programs, threads 1,2,16
    python benchmarks/real_c.py --programs transformer,heat3d --reps 7 --threads 1,16 --busy
    python benchmarks/real_c.py --tune-time 20 --tag tuned
    python benchmarks/real_c.py --small --reps 1 --threads 2      # smoke run at the default sizes

Writes ``benchmarks/results/real_c_<date>[_small][_TAG].md`` and ``.json``; builds go to
``benchmarks/build/real_c/``. Exit status 1 when a variant is WRONG.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import real_c_programs as rc
from suite import mdpoly_command, mdpoly_env

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CC = os.environ.get("CC", "gcc")
OPT_FLAGS = ("-O3", "-march=native")
BUILD_TIMEOUT_S = 300
MDPOLY_TIMEOUT_S = 3600


@dataclass
class Variant:
    """One build of one program; ``status``: ok, n/a, failed or WRONG (per thread count for runs)."""

    name: str
    exe: Path | None = None
    status: str = "ok"
    detail: str = ""
    mdpoly_seconds: float | None = None
    nests: str = ""
    times: dict[int, list[float]] = field(default_factory=dict)
    run_status: dict[int, tuple[str, str]] = field(default_factory=dict)   # threads -> (status, detail)

    def median(self, threads: int) -> float | None:
        t = self.times.get(threads)
        if self.status != "ok" or self.run_status.get(threads, ("ok", ""))[0] != "ok" or not t:
            return None
        return statistics.median(t)


def _step(cmd: list[str], timeout: float, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env, cwd=cwd)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-6:]
        raise RuntimeError(f"exit {proc.returncode}: {shlex.join(cmd[-4:])}: " + " / ".join(tail))
    return proc




def _build(src: Path, exe: Path, openmp: bool, target: str = "openmp") -> None:
    comp: list[str] = []
    link: list[str] = []
    if target != "openmp":   # a GPU output: its API's headers and libraries, as mdpoly-cc adds them
        from gpu_suite import target_flags
        comp, link = target_flags(target)
    _step([CC, *OPT_FLAGS, *comp, *(["-fopenmp"] if openmp else []), str(src), "-o", str(exe), *link, "-lm"],
          BUILD_TIMEOUT_S)


#: variant name -> the --target of its mdpoly output (``--gpu``)
GPU_VARIANTS = {"mdpoly_cuda": "cuda", "mdpoly_opencl": "opencl"}


def build_variant(prog: rc.RealProgram, name: str, out: Path, tune_time: float | None,
                  before: Path | None = None) -> Variant:
    v = Variant(name)
    try:
        if name == "seq":
            v.exe = out / "seq"
            _build(prog.path, v.exe, openmp=False)
        elif name == "omp":
            text = rc.openmp_source(prog.path.read_text())
            if text is None:
                return Variant(name, status="n/a", detail="no hand-written OpenMP in the program")
            src = out / "omp.c"
            src.write_text(text)
            v.exe = out / "omp"
            _build(src, v.exe, openmp=True)
        else:
            out_c, rep = out / f"{name}.c", out / f"{name}.json"
            target = GPU_VARIANTS.get(name, "openmp")
            tune = ["--no-tune"] if name in ("mdpoly", "before", *GPU_VARIANTS) else ["--tune-time", str(tune_time)]
            if target != "openmp":
                tune += ["--target", target]
            cmd = [*mdpoly_command(), str(prog.path.resolve()), "-o", str(out_c.resolve()), "--report",
                   str(rep.resolve()), *tune]
            env = mdpoly_env()
            cwd = None
            if name == "before":   # the mdpoly of another checkout (``--before``); ``-c`` puts the
                # working directory first on sys.path, ahead of PYTHONPATH: run it there
                cwd = before.resolve() if before is not None else None
                env["PYTHONPATH"] = str(cwd)
            t0 = time.perf_counter()
            _step(cmd, MDPOLY_TIMEOUT_S, env=env, cwd=cwd)
            v.mdpoly_seconds = time.perf_counter() - t0
            cov = rc.coverage(rc.read_report(rep), rc.outermost_loops(prog.path), rc.hot_lines(prog.path.read_text()))
            v.nests = (f"{cov.transformed}/{cov.reported} nests, {cov.parts_parallel}/{cov.parts} computations, "
                       f"{cov.hot_transformed}/{cov.hot} hand-parallelized loops")
            v.exe = out / name
            _build(out_c, v.exe, openmp=True, target=target)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return Variant(name, status="failed", detail=str(exc)[:400], nests=v.nests)
    return v


def _run(v: Variant, args: tuple[str, ...], threads: int, timeout: float, busy: bool) -> rc.Output:
    assert v.exe is not None
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [str(v.exe), *args]
    if busy:
        cmd = ["taskset", "-c", f"0-{threads - 1}", *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    out = rc.parse_output(proc.stdout)
    if out.seconds is None:
        raise RuntimeError("no time_s line")
    return out


def measure_program(prog: rc.RealProgram, variants: list[Variant], args: tuple[str, ...], threads: list[int],
                    reps: int, timeout: float, busy: bool) -> None:
    """Checking run, then ``reps`` interleaved timed rounds, per thread count."""
    seq = variants[0]
    for t in threads:
        live = [v for v in variants if v.status == "ok"]
        ref: rc.Output | None = None
        for v in live:
            try:
                got = _run(v, args, t, timeout, busy)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                v.run_status[t] = ("failed", str(exc)[:300])
                continue
            if v is seq:
                ref = got
            elif ref is None:
                v.run_status[t] = ("failed", "no sequential reference to check against")
                continue
            else:
                diff = rc.compare(got, ref, prog, native=True)
                if diff is not None:
                    v.run_status[t] = ("WRONG", diff)
                    continue
            v.run_status[t] = ("ok", "")
            v.times[t] = []
        timed = [v for v in live if v.run_status.get(t, ("", ""))[0] == "ok" and (ref is not None or v is seq)]
        for _ in range(reps):
            for v in timed:
                if v.run_status[t][0] != "ok":
                    continue
                try:
                    v.times[t].append(_run(v, args, t, timeout, busy).seconds or math.nan)
                except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                    v.run_status[t] = ("failed", str(exc)[:300])
        shown = ", ".join(f"{v.name} {_cell(v, t)}" for v in variants)
        print(f"[{prog.name}] threads {t}: {shown}", file=sys.stderr, flush=True)


# {{{ results


def machine_description(busy: bool) -> dict[str, Any]:
    model = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        cc_version = subprocess.run([CC, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        cc_version = "unknown"
    return {"cpu": model, "logical_cpus": os.cpu_count(), "compiler": cc_version, "c_flags": " ".join(OPT_FLAGS),
            "python": platform.python_version(), "os": platform.platform(),
            "busy": "one busy loop pinned to CPU 0; variants pinned to CPUs 0..T-1" if busy else "no",
            "load_average_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


def _cell(v: Variant, t: int) -> str:
    if v.status != "ok":
        return f"{v.status}: {v.detail}" if v.status != "n/a" else "n/a"
    status, detail = v.run_status.get(t, ("failed", "not run"))
    if status != "ok":
        return f"{status}: {detail}"
    m = v.median(t)
    return f"{m * 1e3:.1f} ms" if m is not None else "–"


def _ratio(base: Variant | None, v: Variant, t: int) -> str:
    if base is None:
        return "–"
    a, b = base.median(t), v.median(t)
    return f"{a / b:.2f}x" if a and b else "–"


def _md_cell(text: str) -> str:
    text = text.replace("|", "/").replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


def write_results(rows: list[dict[str, Any]], meta: dict[str, Any], stem: str, out_dir: Path,
                  names: list[str], threads: list[int]) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    md, js = out_dir / f"{stem}.md", out_dir / f"{stem}.json"
    lines = [f"# Real-C programs: gcc -O3 vs hand-written OpenMP vs mdpoly ({meta['date']})", ""]
    lines += [f"- {k}: {v}" for k, v in meta.items() if k != "date"]
    lines += ["", "Times: medians of the programs' own hot-section `time_s`; ratios > 1: the variant is faster.", ""]
    head = ["program", "args", "threads", *names, "omp / seq", "mdpoly / seq", "mdpoly / omp"]
    if "mdpoly_tuned" in names:
        head += ["tuned / seq", "tuned / omp"]
    if "before" in names:
        head += ["before / seq", "before / omp"]
    for g in GPU_VARIANTS:
        if g in names:
            head += [f"{g[len('mdpoly_'):]} / seq", f"{g[len('mdpoly_'):]} / omp"]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    geo: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        vs: dict[str, Variant] = r["variants"]
        seq, omp = vs.get("seq"), vs.get("omp")
        for t in threads:
            cells = [r["program"], " ".join(r["args"]), str(t), *(_md_cell(_cell(vs[n], t)) for n in names)]
            cells += [_ratio(seq, omp, t) if omp else "–"]
            for n in ("mdpoly", "mdpoly_tuned", "before", *GPU_VARIANTS):
                if n not in names:
                    continue
                cells += [_ratio(seq, vs[n], t), _ratio(omp, vs[n], t) if omp and omp.status == "ok" else "–"]
                for base_name, base in (("seq", seq), ("omp", omp)):
                    a, b = (base.median(t) if base is not None else None), vs[n].median(t)
                    if a and b:
                        geo.setdefault((f"{n} / {base_name}", t), []).append(a / b)
            lines.append("| " + " | ".join(cells) + " |")
    if geo:
        lines += ["", "Geometric means over the programs where both variants ran:", ""]
        for (label, t), xs in sorted(geo.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            lines.append(f"- threads {t}, {label}: {math.exp(sum(map(math.log, xs)) / len(xs)):.2f}x over {len(xs)} programs")
    lines += ["", "mdpoly coverage (from `--report`):", ""]
    for r in rows:
        for n in ("mdpoly", "mdpoly_tuned", *GPU_VARIANTS):
            v = r["variants"].get(n)
            if v is not None:
                secs = f", mdpoly took {v.mdpoly_seconds:.1f} s" if v.mdpoly_seconds else ""
                lines.append(f"- {r['program']} ({n}): {v.nests or v.status}{secs}")
    md.write_text("\n".join(lines) + "\n")
    record = {"meta": meta, "programs": [
        {"program": r["program"], "args": list(r["args"]),
         "variants": {n: {"status": v.status, "detail": v.detail, "mdpoly_seconds": v.mdpoly_seconds, "nests": v.nests,
                          "runs": {str(t): {"status": v.run_status.get(t, (v.status, v.detail))[0],
                                            "detail": v.run_status.get(t, (v.status, v.detail))[1],
                                            "times_s": v.times.get(t, []), "median_s": v.median(t)}
                                   for t in threads}}
                      for n, v in r["variants"].items()}} for r in rows]}
    js.write_text(json.dumps(record, indent=1))
    return md, js

# }}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--programs", default="", help="comma-separated program names (default: all)")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per variant and thread count (median)")
    ap.add_argument("--threads", default="1,2,16", help="OMP_NUM_THREADS values (default 1,2,16)")
    ap.add_argument("--tune-time", type=float, default=None, metavar="S",
                    help="also build mdpoly_tuned with --tune-time S")
    ap.add_argument("--busy", action="store_true", help="one competing busy process on CPU 0 (see above)")
    ap.add_argument("--small", action="store_true", help="the programs' default (small) sizes")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    ap.add_argument("--tag", default="", help="suffix of the result files")
    ap.add_argument("--before", type=Path, default=None,
                    help="root of another mdpoly checkout (e.g. an older commit unpacked by git archive): "
                         "variant 'before', its --no-tune output")
    ap.add_argument("--gpu", default="", help="comma-separated GPU targets (cuda, opencl): variants mdpoly_cuda, "
                                              "mdpoly_opencl, their --target output with the default cost model, "
                                              "OMP_NUM_THREADS as for the others")
    ap.add_argument("--out-dir", type=Path, default=HERE / "results")
    ap.add_argument("--build-dir", type=Path, default=HERE / "build" / "real_c")
    ns = ap.parse_args(argv)
    wanted = [w for w in ns.programs.split(",") if w]
    unknown = set(wanted) - set(rc.PROGRAMS_BY_NAME)
    if unknown:
        ap.error(f"unknown programs: {', '.join(sorted(unknown))}")
    try:
        threads = [int(t) for t in ns.threads.split(",") if t]
    except ValueError:
        ap.error("--threads takes comma-separated integers")
    if not threads or min(threads) < 1 or ns.reps < 1:
        ap.error("--threads and --reps must be positive")
    if ns.busy and (shutil.which("taskset") is None or max(threads) > (os.cpu_count() or 1)):
        ap.error("--busy needs taskset and at most as many threads as CPUs")
    gpu = [g for g in ns.gpu.split(",") if g]
    if set(gpu) - {"cuda", "opencl"}:
        ap.error("--gpu takes cuda and/or opencl")
    names = ["seq", "omp", "mdpoly", *(["mdpoly_tuned"] if ns.tune_time else []), *(["before"] if ns.before else []),
             *(f"mdpoly_{g}" for g in gpu)]
    date = datetime.datetime.now(datetime.UTC)
    meta: dict[str, Any] = {"date": date.isoformat(timespec="seconds"), **machine_description(ns.busy),
                            "threads": threads, "reps": ns.reps, "tune_time_s": ns.tune_time,
                            "sizes": "defaults (--small)" if ns.small else "benchmark sizes (args column)"}
    busy_proc = None
    if ns.busy:
        busy_proc = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"])
    rows: list[dict[str, Any]] = []
    wrong = False
    stem = f"real_c_{date.date().isoformat()}" + ("_small" if ns.small else "") + (f"_{ns.tag}" if ns.tag else "")
    try:
        for prog in rc.PROGRAMS:
            if wanted and prog.name not in wanted:
                continue
            out = ns.build_dir / prog.name
            out.mkdir(parents=True, exist_ok=True)
            print(f"[{prog.name}] building {', '.join(names)} ...", file=sys.stderr, flush=True)
            variants = [build_variant(prog, n, out, ns.tune_time, ns.before) for n in names]
            args = () if ns.small else prog.bench_args
            measure_program(prog, variants, args, threads, ns.reps, ns.timeout, busy=ns.busy)
            wrong |= any(s == "WRONG" for v in variants for s, _ in v.run_status.values())
            rows.append({"program": prog.name, "args": args, "variants": {v.name: v for v in variants}})
            write_results(rows, meta, stem, ns.out_dir, names, threads)   # a cut-off run keeps what it measured
    finally:
        if busy_proc is not None:
            busy_proc.terminate()
            busy_proc.wait()
    meta["load_average_at_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    md, js = write_results(rows, meta, stem, ns.out_dir, names, threads)
    print(md.read_text())
    print(f"wrote {md} and {js}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
