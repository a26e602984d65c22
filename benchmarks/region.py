"""One OpenMP parallel region around a time loop vs a thread team per step (issue 11).

Builds ``kernels/jacobi2d_time.c`` for each size three ways -- the program as written
(``cc -O3 -march=native``), mdpoly's output from a baseline checkout (``--baseline DIR``: a copy
of mdpoly from before the region code, which starts a team in every call of every band) and this
checkout's (one ``omp parallel`` around the time loop) -- both ``--no-tune``, built with
``-O3 -march=native -fopenmp`` -- then runs the variants interleaved (one process each, ``--runs``
rounds), each at ``OMP_NUM_THREADS`` (default 2), and writes medians to
``results/region_<date>.md`` with the load average at start and end. Checksums must agree with
the sequential program's to 1e-9 of the magnitude (every variant computes the same sums).

    python benchmarks/region.py --baseline /tmp/mdpoly-before --runs 7
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
KERNEL = HERE / "kernels" / "jacobi2d_time.c"
SIZES = ((1000, 100), (1000, 500), (2000, 100), (250, 2000))


def _mdpoly(repo: Path, src: Path, out: Path, n: int, t: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(repo))
    cmd = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())", str(src), "-o", str(out),
           "--target", "openmp", "--no-tune", "-q", "-D", f"N={n}", "-D", f"TSTEPS={t}", "-I", str(HERE / "kernels")]
    subprocess.run(cmd, check=True, env=env, cwd=repo)


def _build(src: Path, exe: Path, n: int, t: int, openmp: bool) -> None:
    cc = os.environ.get("CC", "cc")
    flags = ["-O3", "-march=native", f"-DN={n}", f"-DTSTEPS={t}", "-I", str(HERE / "kernels")]
    subprocess.run([cc, *flags, *(["-fopenmp"] if openmp else []), str(src), "-o", str(exe), "-lm"], check=True)


def _run(exe: Path, threads: str) -> tuple[float, float, float]:
    env = dict(os.environ, OMP_NUM_THREADS=threads)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, env=env).stdout
    vals = dict(line.split() for line in out.splitlines() if line.strip())
    return float(vals["median_s"]), float(vals["checksum"]), float(vals["magnitude"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, default=None, help="an mdpoly checkout without the region code")
    ap.add_argument("--reuse", action="store_true",
                    help="use the mdpoly outputs already in --build (e.g. made here, timed on another machine)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", default=os.environ.get("OMP_NUM_THREADS", "2"))
    ap.add_argument("--build", type=Path, default=HERE / "build" / "region")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--sizes", default=",".join(f"{n}x{t}" for n, t in SIZES), help="N x T pairs, e.g. 1000x100,250x2000")
    args = ap.parse_args()
    args.build.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    rows = []
    for n, t in (tuple(int(v) for v in pair.split("x")) for pair in args.sizes.split(",")):
        tag = f"n{n}_t{t}"
        exes = {"gcc -O3 seq": args.build / f"seq_{tag}"}
        _build(KERNEL, exes["gcc -O3 seq"], n, t, openmp=False)
        for name, repo in (("team per step (before)", args.baseline), ("one region (now)", REPO)):
            out = args.build / f"{'old' if repo == args.baseline else 'new'}_{tag}.c"
            if not (args.reuse and out.is_file()):
                if repo is None:
                    raise SystemExit("--baseline is needed to generate the baseline's output")
                _mdpoly(repo, KERNEL, out, n, t)
            exes[name] = out.with_suffix("")
            _build(out, exes[name], n, t, openmp=True)
        times: dict[str, list[float]] = {k: [] for k in exes}
        ref: tuple[float, float] | None = None
        for _ in range(args.runs):
            for name, exe in exes.items():
                sec, chk, mag = _run(exe, args.threads)
                if ref is None:
                    ref = (chk, mag)
                if abs(chk - ref[0]) > 1e-9 * max(ref[1], 1.0):
                    raise SystemExit(f"{name} at N={n}, T={t}: checksum {chk} != {ref[0]}")
                times[name].append(sec)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((n, t, med, {k: (min(v), max(v)) for k, v in times.items()}))
        print(n, t, {k: round(v, 4) for k, v in med.items()}, flush=True)
    load1 = os.getloadavg()
    day = datetime.date.today().isoformat()
    out = args.out or HERE / "results" / f"region_{day}.md"
    names = list(rows[0][2])
    lines = [f"# One parallel region around the time loop: Jacobi 2-D ({day})", "",
             f"`python benchmarks/region.py --runs {args.runs}`; OMP_NUM_THREADS={args.threads}; "
             f"{os.cpu_count()} CPUs; load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
             f"at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}. Median of {args.runs} interleaved runs "
             "(seconds, min-max in brackets); all outputs equal.", "",
             "| N | T | " + " | ".join(names) + " | now vs before | now vs seq |",
             "| --- | --- | " + " | ".join("---" for _ in names) + " | --- | --- |"]
    for n, t, med, rng in rows:
        cells = [f"{med[k]:.4f} [{rng[k][0]:.3f}-{rng[k][1]:.3f}]" for k in names]
        lines.append(f"| {n} | {t} | " + " | ".join(cells)
                     + f" | {med[names[1]] / med[names[2]]:.2f}x | {med[names[0]] / med[names[2]]:.2f}x |")
    out.write_text("\n".join(lines) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
