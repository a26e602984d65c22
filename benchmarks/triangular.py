"""Triangular-domain benchmark (issue 12): mdpoly vs gcc -O3 and a plain ``omp parallel for``.

Run from the repository root::

    python benchmarks/triangular.py all                   # full sizes, 2 threads, 7 rounds
    python benchmarks/triangular.py all --quick           # small sizes, a smoke run
    python benchmarks/triangular.py all --threads 2 --rounds 9 --only syrk

or in three steps, to time on another (quiet) machine that has only ``cc`` and ``python3``::

    python benchmarks/triangular.py prepare DIR           # here: every variant's C source
    python3 DIR/triangular.py run DIR --out results.json  # there: build with cc, time
    python benchmarks/triangular.py report results.json   # here: the markdown table

Each kernel in ``benchmarks/triangular/`` (syrk-like, trmm-like, a Cholesky-style update; all
with loop bounds that depend on outer iterators) is built in these variants:

* ``seq`` -- the program as written, ``cc -O3 -march=native``;
* ``omp_for`` -- the same with ``#pragma omp parallel for`` on the kernel's outer loop (static
  schedule: on a triangle, one thread gets most of the work);
* ``mdpoly`` -- ``mdpoly --no-tune`` (its default for a non-rectangular domain: tiles handed out
  cyclically, ``schedule(static, 1)``);
* ``mdpoly_block`` / ``mdpoly_dynamic`` -- mdpoly's output with the other two values of its
  ``distribution`` parameter (the clause rewritten to ``schedule(static)`` / ``schedule(dynamic)``),
  to show what the distribution is worth.

The variants run interleaved: ``--rounds`` rounds, each running every program once (one warm-up
call, then ``--reps`` timed calls, their median); a variant's time is the median over rounds.
``OMP_NUM_THREADS`` is ``--threads`` for the parallel variants. Checksums are compared with the
sequential one (to ``CHECKSUM_RTOL`` of the outputs' magnitude, as ``run.py`` does). Results:
``benchmarks/results/triangular_<date>.md`` and ``.json``, with the machine described (``OMP_PLACES=cores OMP_PROC_BIND=close`` for every
parallel variant). The
``run`` step imports nothing outside the standard library.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "triangular"
CC = os.environ.get("CC", "cc")
OPT_FLAGS = ("-O3", "-march=native")
CHECKSUM_RTOL = 1e-3

#: name -> (kernel file, full sizes, quick sizes, multiply-adds as an expression in the sizes)
WORKLOADS: dict[str, tuple[str, dict[str, int], dict[str, int], str]] = {
    "syrk": ("syrk.c", {"N": 1200, "M": 1000}, {"N": 300, "M": 200}, "N*(N+1)//2*M"),
    "trmm": ("trmm.c", {"N": 1200}, {"N": 300}, "N*N*(N+1)//2"),
    "chol_update": ("chol_update.c", {"N": 1500}, {"N": 400}, "N*(N-1)*(N+1)//6"),
}
VARIANTS = ("seq", "omp_for", "mdpoly", "mdpoly_block", "mdpoly_dynamic")
_SCHEDULE = {"mdpoly_block": "schedule(static)", "mdpoly_dynamic": "schedule(dynamic)"}


class StepError(Exception):
    """A build or run step failed."""


def run_cmd(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise StepError(f"timeout after {timeout:g}s: {Path(cmd[0]).name}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise StepError(f"{Path(cmd[0]).name} exit {proc.returncode}: {tail[:200]}")
    return proc.stdout


# {{{ prepare (this checkout: mdpoly)


def prepare(out: Path, quick: bool, only: list[str], timeout: float) -> None:
    """Every variant's source of every kernel into ``out``, plus ``manifest.json`` and this script."""
    sys.path.insert(0, str(HERE))
    from variants import KERNELS_INCLUDE, generate_mdpoly_source, insert_omp_pragma

    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(KERNELS_INCLUDE / "bench_common.h", out / "bench_common.h")
    shutil.copy(Path(__file__), out / "triangular.py")
    manifest: dict[str, object] = {"quick": quick, "kernels": {}}
    for name in only:
        file, full, small, work = WORKLOADS[name]
        sizes = small if quick else full
        src = KERNELS / file
        entry: dict[str, object] = {"sizes": sizes, "flops": 2 * eval(work, {"__builtins__": {}}, dict(sizes)),
                                    "sources": {}, "failed": {}}
        sources: dict[str, str] = entry["sources"]  # type: ignore[assignment]
        failed: dict[str, str] = entry["failed"]  # type: ignore[assignment]
        shutil.copy(src, out / f"seq_{file}")
        sources["seq"] = f"seq_{file}"
        (out / f"omp_for_{file}").write_text(insert_omp_pragma(src.read_text()))
        sources["omp_for"] = f"omp_for_{file}"
        try:
            gen = generate_mdpoly_source(src, sizes, out / f"mdpoly_{file}", timeout,
                                         ("--no-tune", "-I", str(KERNELS_INCLUDE)))
            text = gen.read_text()
            if "schedule(static, 1)" not in text:
                raise StepError("mdpoly's output has no cyclic schedule")
            sources["mdpoly"] = gen.name
            for variant, clause in _SCHEDULE.items():
                (out / f"{variant}_{file}").write_text(text.replace("schedule(static, 1)", clause))
                sources[variant] = f"{variant}_{file}"
        except Exception as exc:  # noqa: BLE001 - a failed variant is a table cell
            for variant in ("mdpoly", *_SCHEDULE):
                failed[variant] = f"{type(exc).__name__}: {exc}"
        manifest["kernels"][name] = entry  # type: ignore[index]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")

# }}}


# {{{ run (anywhere: cc + python3)


def machine() -> dict[str, str]:
    model = "unknown"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        cc = subprocess.run([CC, "--version"], capture_output=True, text=True, check=False).stdout.splitlines()[0]
    except (OSError, IndexError):
        cc = "unknown"
    return {"cpu": model, "logical_cpus": str(os.cpu_count()), "compiler": cc, "c_flags": " ".join(OPT_FLAGS),
            "python": platform.python_version(), "os": platform.platform(),
            "load_average_at_start": " ".join(f"{x:.2f}" for x in os.getloadavg())}


#: OpenMP placement for every parallel variant: one thread per physical core, close together
#: (less noise from the scheduler moving threads, none from two threads sharing a core).
OMP_PLACEMENT = {"OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}


def run_once(exe: Path, threads: int | None, timeout: float) -> tuple[float, float, float]:
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
        env.update(OMP_PLACEMENT)
    values: dict[str, float] = {}
    for line in run_cmd([str(exe)], timeout, env).splitlines():
        key, _, value = line.partition(" ")
        values[key] = float(value)
    return values["median_s"], values.get("checksum", math.nan), values.get("magnitude", 0.0)


def run(directory: Path, threads: int, rounds: int, reps: int, timeout: float) -> dict[str, object]:
    """Build the prepared sources with ``cc`` and time them interleaved (see the module docstring)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    build = Path(tempfile.mkdtemp(prefix="tri-build-"))
    rows: list[dict[str, object]] = []
    for name, entry in manifest["kernels"].items():
        sizes = entry["sizes"]
        results: dict[str, dict[str, object]] = {v: {"status": "failed", "detail": why}
                                                 for v, why in entry["failed"].items()}
        exes: dict[str, Path] = {}
        for variant, source in entry["sources"].items():
            exe = build / f"{name}_{variant}"
            cmd = [CC, *OPT_FLAGS, *(["-fopenmp"] if variant != "seq" else []), f"-DREPS={reps}",
                   *(f"-D{k}={v}" for k, v in sizes.items()), f"-I{directory}", str(directory / source),
                   "-o", str(exe), "-lm"]
            try:
                run_cmd(cmd, timeout)
                exes[variant] = exe
            except StepError as exc:
                results[variant] = {"status": "failed", "detail": str(exc)}
        times: dict[str, list[float]] = {v: [] for v in exes}
        sums: dict[str, tuple[float, float]] = {}
        for _ in range(rounds):
            for variant in list(times):
                try:
                    seconds, checksum, magnitude = run_once(exes[variant], None if variant == "seq" else threads,
                                                            timeout)
                except StepError as exc:
                    results[variant] = {"status": "failed", "detail": str(exc)}
                    del times[variant]
                    continue
                times[variant].append(seconds)
                sums[variant] = (checksum, magnitude)
        for variant, ts in times.items():
            med = statistics.median(ts)
            results[variant] = {"status": "ok", "seconds": med, "all_seconds": ts, "checksum": sums[variant][0],
                                "gflops": entry["flops"] / med / 1e9}
        seq = results.get("seq", {})
        for variant, r in results.items():
            if r["status"] == "ok" and seq.get("status") == "ok":
                a, b = float(r["checksum"]), float(seq["checksum"])  # type: ignore[arg-type]
                scale = max(sums[variant][1], sums["seq"][1])
                if not math.isclose(a, b, rel_tol=CHECKSUM_RTOL, abs_tol=max(1e-6, CHECKSUM_RTOL * scale)):
                    r["status"], r["detail"] = "wrong", f"checksum {a:.6g} vs seq {b:.6g}"
        print(name, {v: (r["status"], r.get("seconds")) for v, r in results.items()}, file=sys.stderr, flush=True)
        rows.append({"kernel": name, "sizes": sizes, "results": results})
    return {"date": datetime.date.today().isoformat(), "quick": manifest["quick"], "machine": machine(),
            "threads": threads, "omp_env": OMP_PLACEMENT, "rounds": rounds, "reps": reps, "rows": rows}

# }}}


# {{{ report


def markdown(data: dict) -> str:  # type: ignore[type-arg]
    lines = [f"# Triangular kernels ({data['date']}{', quick sizes' if data['quick'] else ''})", "",
             "Machine: " + ", ".join(f"{k}: {v}" for k, v in data["machine"].items()) + ".",
             *(["", data["note"]] if data.get("note") else []), "",
             f"Parallel variants at OMP_NUM_THREADS={data['threads']} "
             + " ".join(f"{k}={v}" for k, v in data.get("omp_env", {}).items()) + f"; each time is the median of {data['rounds']} "
             f"interleaved rounds, a round's time the median of {data['reps']} timed calls after a warm-up. "
             "`mdpoly` is `mdpoly --no-tune` (parallel tiles handed out cyclically, `schedule(static, 1)`, its "
             "default for a non-rectangular domain); `mdpoly_block`/`mdpoly_dynamic` are the same output with "
             "`schedule(static)`/`schedule(dynamic)`. `omp_for` is the source with `#pragma omp parallel for` "
             "on the outer loop.", "",
             "| kernel | sizes | " + " | ".join(VARIANTS) + " | mdpoly vs seq | mdpoly vs omp_for |",
             "| --- | --- | " + " | ".join("---" for _ in VARIANTS) + " | --- | --- |"]
    for row in data["rows"]:
        res = row["results"]
        cells = []
        for v in VARIANTS:
            r = res.get(v, {})
            if r.get("status") == "ok":
                cells.append(f"{r['seconds'] * 1e3:.1f} ms ({r['gflops']:.2f} GF/s)")
            else:
                cells.append(f"{r.get('status', 'n/a')}: {r.get('detail', '')}"[:60])

        def ratio(base: str) -> str:
            a, b = res.get(base, {}), res.get("mdpoly", {})
            if a.get("status") == "ok" and b.get("status") == "ok":
                return f"{a['seconds'] / b['seconds']:.2f}x"
            return "n/a"
        sizes = ", ".join(f"{k}={v}" for k, v in row["sizes"].items())
        lines.append(f"| {row['kernel']} | {sizes} | " + " | ".join(cells) + f" | {ratio('seq')} | {ratio('omp_for')} |")
    return "\n".join(lines) + "\n"


def report(data: dict, out_dir: Path, tag: str) -> Path:  # type: ignore[type-arg]
    stem = f"triangular_{data['date']}{'_quick' if data['quick'] else ''}{'_' + tag if tag else ''}"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
    (out_dir / f"{stem}.md").write_text(markdown(data))
    return out_dir / f"{stem}.md"

# }}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("all", "prepare", "run", "report"))
    parser.add_argument("path", nargs="?", type=Path, help="prepare/run: the sources' folder; report: results JSON")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated kernels")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--out", type=Path, help="run: where to write the results JSON")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results")
    parser.add_argument("--tag", default="", help="suffix of the result files")
    parser.add_argument("--note", default="", help="report: a sentence about the machine, added to the header")
    args = parser.parse_args(argv)
    only = [w for w in args.only.split(",") if w] or list(WORKLOADS)
    if args.step == "prepare":
        prepare(args.path, args.quick, only, args.timeout)
    elif args.step == "run":
        data = run(args.path, args.threads, args.rounds, args.reps, args.timeout)
        (args.out or args.path / "results.json").write_text(json.dumps(data, indent=2) + "\n")
    elif args.step == "report":
        data = json.loads(args.path.read_text())
        if args.note:
            data["note"] = args.note
        print(report(data, args.out_dir, args.tag))
    else:
        (HERE / "build").mkdir(exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="tri-", dir=HERE / "build"))
        prepare(work, args.quick, only, args.timeout)
        print(report(run(work, args.threads, args.rounds, args.reps, args.timeout), args.out_dir, args.tag))
    return 0


if __name__ == "__main__":
    sys.exit(main())
