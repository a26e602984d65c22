"""Coverage of the real-C programs (issue 21): ``c_examples/real/*.c`` -> table of nests found,
transformed and kept (by reason code) from mdpoly's ``--report``.

Run from the repository root::

    python benchmarks/real_c_coverage.py                      # --no-tune
    python benchmarks/real_c_coverage.py --all-nests --details
    python benchmarks/real_c_coverage.py --only transformer,heat3d --json cov.json

"loops" counts the outermost ``for`` statements of every function in the source, "reported"
the nests in the report (a loop missing there is listed: mdpoly must account for each),
"transformed" the nests mdpoly replaced, "parts" the computations of scheduled nests (a time
loop around several nests counts each computation inside it) and how many of them run in
parallel. ``--details`` lists every kept nest with its line and reason. Nothing is asserted:
the frontend's coverage of these forms is work in progress; "hot loops" are the loops the
programs parallelize by hand (``// BENCH-OMP:`` markers and their own ``#pragma omp`` lines),
the ones that matter for speed; the exit status is 1 only when
mdpoly fails or leaves a loop out of its report.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import real_c_programs as rc


def _mdpoly(src: Path, work: Path, extra: list[str]) -> tuple[dict | None, str]:
    out, rep = work / f"{src.stem}.out.c", work / f"{src.stem}.json"
    cmd = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())", str(src),
           "-o", str(out), "--report", str(rep), "--no-tune", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1800)
    if proc.returncode != 0 or not rep.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return None, f"mdpoly exit {proc.returncode}: " + " | ".join(tail)
    return json.loads(rep.read_text()), proc.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--all-nests", action="store_true", help="pass --all-nests to mdpoly")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--details", action="store_true", help="list every kept nest with its reason")
    ap.add_argument("--json", type=Path, help="also write the table as JSON")
    ns = ap.parse_args(argv)
    wanted = [w for w in ns.only.split(",") if w]
    unknown = set(wanted) - set(rc.PROGRAMS_BY_NAME)
    if unknown:
        ap.error(f"unknown programs: {', '.join(sorted(unknown))}")
    extra = ["--all-nests"] if ns.all_nests else []
    rows: list[dict] = []
    bad = False
    print("| program | loops | reported | transformed | parts parallel | hot loops transformed | kept (reason: count) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="real-c-cov-") as tmp:
        for prog in rc.PROGRAMS:
            if wanted and prog.name not in wanted:
                continue
            report, log = _mdpoly(prog.path, Path(tmp), extra)
            if report is None:
                bad = True
                print(f"| {prog.name} | failed: {log} | | | | | |", flush=True)
                rows.append({"program": prog.name, "failed": log})
                continue
            cov = rc.coverage(report, rc.outermost_loops(prog.path), rc.hot_lines(prog.path.read_text()))
            bad |= bool(cov.missing)
            kept = ", ".join(f"{k}: {v}" for k, v in cov.kept.most_common()) or "-"
            missing = f" (missing from report: lines {', '.join(str(lp.line) for lp in cov.missing)})" \
                if cov.missing else ""
            print(f"| {prog.name} | {len(cov.loops)} | {cov.reported}{missing} | {cov.transformed} "
                  f"| {cov.parts_parallel}/{cov.parts} | {cov.hot_transformed}/{cov.hot} | {kept} |", flush=True)
            kept_nests = [{"line": n["line"], "function": _function_at(cov.loops, int(n["line"])),
                           "code": n.get("code"), "reason": n.get("reason")}
                          for n in report["nests"] if n["status"] != "transformed"]
            rows.append({"program": prog.name, "loops": len(cov.loops), "reported": cov.reported,
                         "transformed": cov.transformed, "parts": cov.parts, "parts_parallel": cov.parts_parallel,
                         "hot": cov.hot, "hot_transformed": cov.hot_transformed,
                         "kept": dict(cov.kept), "missing": [lp.line for lp in cov.missing], "kept_nests": kept_nests})
    if rows:
        ok = [r for r in rows if "failed" not in r]
        print(f"\ntotal: {sum(r['transformed'] for r in ok)} of {sum(r['reported'] for r in ok)} nests transformed, "
              f"{sum(r['parts_parallel'] for r in ok)} of {sum(r['parts'] for r in ok)} computations parallel, "
              f"{sum(r['hot_transformed'] for r in ok)} of {sum(r['hot'] for r in ok)} hand-parallelized loops "
              "transformed, "
              f"{len(rows) - len(ok)} programs failed")
    if ns.details:
        for r in rows:
            for n in r.get("kept_nests", []):
                print(f"{r['program']}.c:{n['line']} ({n['function']}): [{n['code']}] {n['reason']}")
    if ns.json:
        ns.json.write_text(json.dumps({"all_nests": ns.all_nests, "programs": rows}, indent=1))
    return 1 if bad else 0


def _function_at(loops: list[rc.Loop], line: int) -> str:
    return next((lp.function for lp in loops if lp.line == line), "?")


if __name__ == "__main__":
    sys.exit(main())
