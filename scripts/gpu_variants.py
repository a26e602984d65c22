"""Hand-set GPU parameter variants of the benchmark workloads, for ``benchmarks/gpu.py run``.

    python scripts/gpu_variants.py PREPARED OUTDIR NAME=WORKLOAD:FIELD=VALUE[;FIELD=VALUE...] ...

``PREPARED`` is a directory written by ``benchmarks/gpu.py prepare`` (its manifest gives each
workload's kernel and sizes); ``OUTDIR`` gets the same scripts and sources and one CUDA variant
per ``NAME``: mdpoly's ``--no-tune`` output with the default ``GpuParams`` changed as given. A
per-dim field is written ``it:v/it:v`` (MDH iterators, e.g. ``num_wg=k:1``, ``pt=i:4/j:8``), a
scalar field as an integer (``prefetch=0``), a per-input one as integers with commas
(``cache=1,0``), the NDRange grouping by iterators (``ocl_groups=j|i,k``), an empty one as ``none`` (``kt=none;cache=none``: the untiled kernel). Run it there with ``gpu.py run OUTDIR --no-vendor``.
A variant whose parameters break a constraint fails at prepare time (mdpoly reports it).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import mdpoly.targets as targets
from mdpoly.cli import main as mdpoly_main
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu_params import GpuParams


def _override(text: str) -> Any:
    def apply(mdh: MdhExpr, p: GpuParams) -> GpuParams:
        its = [d.iterator for d in mdh.dims]
        changes: dict[str, Any] = {}
        for item in filter(None, text.split(";")):
            field, value = item.split("=", 1)
            if field == "ocl_groups":   # NDRange dims by iterators, dim 0 first: j|i,k
                changes[field] = tuple(tuple(its.index(it) for it in g.split(",")) for g in value.split("|"))
                continue
            if value == "none":
                changes[field] = ()
                continue
            if ":" not in value and "," in value:   # a per-input tuple (cache=1,0) or a pair (warp_tile)
                changes[field] = tuple(int(v) for v in value.split(","))
                continue
            if ":" not in value:
                changes[field] = int(value)
                continue
            cur = list(getattr(p, field) or (1 if field == "vec" else 0,) * len(its))
            for part in value.split("/"):
                it, v = part.split(":")
                cur[its.index(it)] = int(v)
            changes[field] = tuple(cur)
        return replace(p, **changes)
    return apply


def main(argv: list[str]) -> int:
    os.environ.setdefault("MDPOLY_COST_CALIBRATION", "gpu_min_speedup=0,device_margin=0")   # as gpu.py prepare
    prepared, out = Path(argv[0]), Path(argv[1])
    manifest = json.loads((prepared / "manifest.json").read_text())
    by_name = {w["workload"]: w for w in manifest["workloads"]}
    out.mkdir(parents=True, exist_ok=True)
    for name in ("src",):
        shutil.copytree(prepared / name, out / name, dirs_exist_ok=True)
    for script in ("gpu.py", "gpu_vendor.py", "gpu_report.py"):
        shutil.copy(prepared / script, out / script)
    (out / "cuda").mkdir(exist_ok=True)
    original = targets.default_gpu_params
    entries = []
    for spec in argv[2:]:
        name, rest = spec.split("=", 1)
        workload, change = rest.split(":", 1)
        base = by_name[workload]
        apply = _override(change)

        def patched(mdh: MdhExpr, caps: TargetCaps, _apply: Any = apply) -> GpuParams:
            return _apply(mdh, original(mdh, caps))  # type: ignore[no-any-return]

        targets.default_gpu_params = patched  # type: ignore[assignment]
        rel = f"cuda/{name}.c"
        args = [str(prepared / base["kernel"]), "-o", str(out / rel), "--target", "cuda", "--no-tune", "-q",
                *(f"-D{k}={v}" for k, v in base["sizes"].items())]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = mdpoly_main(args)
        targets.default_gpu_params = original
        entry = dict(base, workload=name, generated={}, prepare_errors={})
        if rc == 0 and "mdp_" in (out / rel).read_text():
            entry["generated"] = {"cuda": rel}
            text = (out / rel).read_text()
            line = next((ln for ln in text.splitlines() if "NUM_WI=" in ln), "?")
            print(f"[{name}] {line.strip()[:200]}", file=sys.stderr)
        else:
            entry["prepare_errors"] = {"cuda": err.getvalue()[-800:]}
            print(f"[{name}] failed: {err.getvalue()[-400:]}", file=sys.stderr)
        entries.append(entry)
    (out / "manifest.json").write_text(json.dumps(dict(manifest, workloads=entries), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
