"""MPI strong scaling of ``mdpoly --mpi``: sgemm and MCC on 1, 2 and 4 ranks of this machine.

Run from the repository root (needs ``mpicc``/``mpirun``; as root, OpenMPI's run-as-root
variables are set here)::

    python benchmarks/mpi.py                 # ranks 1,2,4, the kernels' default sizes
    python benchmarks/mpi.py --ranks 1,2 --reps 3

Each kernel of ``benchmarks/kernels`` goes through ``mdpoly --mpi --no-tune`` and is built with
``mpicc -O2 -fopenmp -DMDPOLY_MPI_PROFILE``; it runs with ``OMP_NUM_THREADS=1`` per rank (the
ranks are the only parallelism, so the scaling is MPI's), the fastest of ``--runs`` runs kept. The kernel prints its median time
(rank 0, collectives included); the generated code prints, per call and rank, its compute time
(wall and processor time: on a shared machine the latter shows the rank's own work) and its ``MPI_Allgatherv``/``MPI_Allreduce`` time, of which the table shows the median over the
calls of the slowest rank. The original program (``cc -O2``, one core) is the baseline and
its checksum the reference. Writes ``benchmarks/results/mpi_<date>.md``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
KERNELS = {"sgemm": {"M": 1024, "N": 1024, "K": 1024}, "mcc": {"N": 1, "P": 28, "Q": 28, "K": 256, "C": 256}}
PROFILE = re.compile(r"mdpoly-mpi \S+ rank (\d+)/(\d+): compute ([0-9.e+-]+) s \(cpu ([0-9.e+-]+) s\), "
                     r"(\w+) ([0-9.e+-]+) s")


def _run(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def _value(text: str, key: str) -> float:
    m = re.search(rf"^{key} (\S+)$", text, re.M)
    if m is None:
        raise RuntimeError(f"no '{key}' in the output:\n{text[-1000:]}")
    return float(m.group(1))


def measure(kernel: str, sizes: dict[str, int], ranks: list[int], reps: int, runs: int,
            tmp: Path) -> list[dict[str, object]]:
    src = HERE / "kernels" / f"{kernel}.c"
    defs = [f"-D{k}={v}" for k, v in sizes.items()] + [f"-DREPS={reps}"]
    inc = ["-I", str(HERE / "kernels")]
    seq_exe, out_c, mpi_exe = tmp / f"{kernel}_seq", tmp / f"{kernel}_mpi.c", tmp / f"{kernel}_mpi"
    _run(["cc", "-O2", *inc, *defs, str(src), "-o", str(seq_exe), "-lm"])
    seq = _run([str(seq_exe)]).stdout
    mdpoly = [sys.executable, "-m", "mdpoly", str(src), "-o", str(out_c), "--mpi", "--no-tune", "-q", *inc]
    for d in defs:
        mdpoly += ["-D", d[2:]]
    _run(mdpoly)
    _run(["mpicc", "-O2", "-fopenmp", "-DMDPOLY_MPI_PROFILE", *inc, *defs, str(out_c), "-o", str(mpi_exe), "-lm"])
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    rows: list[dict[str, object]] = [{"kernel": kernel, "ranks": "original", "median_s": _value(seq, "median_s"),
                                      "checksum": _value(seq, "checksum")}]
    for p in ranks:
        best: dict[str, object] | None = None
        for run in range(runs):   # the least disturbed of ``runs`` runs (the machine is shared)
            row = _mpi_run(kernel, mpi_exe, p, tmp / f"{kernel}_out{p}_{run}", env)
            if best is None or float(row["median_s"]) < float(best["median_s"]):  # type: ignore[arg-type]
                best = row
        assert best is not None
        rows.append(best)
    return rows


def _mpi_run(kernel: str, exe: Path, p: int, out_dir: Path, env: dict[str, str]) -> dict[str, object]:
    proc = _run(["mpirun", "--oversubscribe", "-np", str(p), "--output-filename", str(out_dir), str(exe)], env)
    rank0 = next(out_dir.rglob("rank.0/stdout")).read_text()
    errs = "".join(f.read_text() for f in out_dir.rglob("stderr")) + proc.stderr
    per_call: dict[int, list[tuple[float, float, float]]] = {}
    what = "collective"
    for m in PROFILE.finditer(errs):
        per_call.setdefault(int(m.group(1)), []).append((float(m.group(3)), float(m.group(4)), float(m.group(6))))
        what = m.group(5)
    calls = min((len(v) for v in per_call.values()), default=0)
    slowest = [tuple(max(per_call[r][c][f] for r in per_call) for f in range(3)) for c in range(calls)]

    def med(f: int) -> float | None:
        return statistics.median(s[f] for s in slowest) if slowest else None
    return {"kernel": kernel, "ranks": p, "median_s": _value(rank0, "median_s"), "checksum": _value(rank0, "checksum"),
            "compute_s": med(0), "cpu_s": med(1), "comm_s": med(2), "comm": what}


def markdown(rows: list[dict[str, object]], ranks: list[int], reps: int, runs: int) -> str:
    lines = [f"# MPI strong scaling of `mdpoly --mpi` ({datetime.date.today().isoformat()})", "",
             f"Machine: {os.cpu_count()} CPU cores (`nproc`), shared with other work while measuring, so "
             f"ranks beyond the core count time-share cores. OpenMPI `mpirun --oversubscribe`, one OpenMP "
             f"thread per rank, `mdpoly --mpi --no-tune`, `mpicc -O2 -fopenmp`. Median of {reps} kernel calls "
             f"after a warm-up, the fastest of {runs} runs (load average when done: {os.getloadavg()[0]:.1f}); "
             f"compute and collective times are the slowest rank's, median over the calls (the collective "
             f"time includes waiting for the slowest rank). "
             f"Ranks: {', '.join(map(str, ranks))}.", "",
             "| kernel | ranks | kernel s | speedup vs 1 rank | compute s | compute cpu s | collective | collective s "
             "| checksum |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    base: dict[str, float] = {}
    ref: dict[str, float] = {}
    for r in rows:
        k, t = str(r["kernel"]), float(r["median_s"])  # type: ignore[arg-type]
        if r["ranks"] == "original":
            ref[k] = float(r["checksum"])  # type: ignore[arg-type]
            lines.append(f"| {k} | original (cc -O2) | {t:.4f} | | | | | | {ref[k]:.6g} |")
            continue
        if r["ranks"] == 1:
            base[k] = t
        speed = f"{base[k] / t:.2f}x" if k in base else ""
        comp = f"{r['compute_s']:.4f}" if r.get("compute_s") is not None else ""
        comm = f"{r['comm_s']:.4f}" if r.get("comm_s") is not None else ""
        cpu = f"{r['cpu_s']:.4f}" if r.get("cpu_s") is not None else ""
        cs = float(r["checksum"])  # type: ignore[arg-type]
        ok = "ok" if abs(cs - ref[k]) <= 1e-3 * max(1.0, abs(ref[k])) else "DIFFERS"
        lines.append(f"| {k} | {r['ranks']} | {t:.4f} | {speed} | {comp} | {cpu} | {r.get('comm', '')} | {comm} | {cs:.6g} {ok} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="mpirun runs per rank count; the fastest is shown")
    ap.add_argument("--only", default=",".join(KERNELS))
    ap.add_argument("--out", type=Path, default=None)
    ns = ap.parse_args()
    ranks = [int(x) for x in ns.ranks.split(",")]
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="mdpoly-mpi-bench-") as tmp:
        for k in ns.only.split(","):
            rows += measure(k, KERNELS[k], ranks, ns.reps, ns.runs, Path(tmp))
    text = markdown(rows, ranks, ns.reps, ns.runs)
    out = ns.out or HERE / "results" / f"mpi_{datetime.date.today().isoformat()}.md"
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
