#!/usr/bin/env python3
"""Check ``--target cuda`` (and ``--target opencl``) output on a GPU machine: build, run, compare.

Two steps, so that the GPU machine needs no mdpoly (nor its Python dependencies)::

    scripts/gpu_check.py prepare DIR [--targets cuda,opencl] [--examples a,b] [--sizes default,primes]
                                     [--devices all]    # mdpoly --devices: split over local GPUs
        # here, with mdpoly: copies every c_examples program, writes mdpoly's out.c for every
        # target and size set, plus manifest.json and differential.py, into DIR
    scripts/gpu_check.py run DIR [--targets cuda,opencl] [--timeout 120]
        # there, with python3 (stdlib only), cc and the CUDA driver + toolkit: builds the original
        # with cc and each out.c with the target's flags, runs both, compares the outputs with
        # mdpoly/differential.py (exact, or the example's float tolerance), prints a PASS/FAIL
        # table and exits 1 when anything failed
    scripts/gpu_check.py all DIR ...      # both steps on one machine

CUDA builds: ``cc -O2 out.c -I$CUDA/include -L$CUDA/lib64 -L$CUDA/lib64/stubs -lcuda -lnvrtc -lm``
with ``$CUDA`` from ``$CUDA_HOME``, ``$CUDA_PATH``, ``nvcc`` on ``PATH`` or ``/usr/local/cuda``
(NVRTC from the ``nvidia-cuda-nvrtc`` wheel when the toolkit lacks it). Compiled modules are
cached in ``DIR/cache`` (``MDPOLY_CACHE_DIR``); every CUDA program runs twice, the second time
from the cache. OpenCL builds: ``-lOpenCL`` with the toolkit's headers; when
``OCL_ICD_VENDORS`` is unset and NVIDIA's ``libnvidia-opencl.so.1`` exists, an ICD file naming it
is written to ``DIR/icd`` and used.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGETS = ("cuda", "opencl")


# {{{ prepare (needs mdpoly)


def prepare(out_dir: Path, targets: list[str], examples: list[str] | None, sizes: list[str] | None,
            devices: str = "") -> int:
    sys.path[:0] = [str(REPO), str(REPO / "tests" / "e2e")]
    from test_examples import EXAMPLES  # the size sets and tolerances of the e2e tests

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "src").mkdir(exist_ok=True)
    shutil.copy(REPO / "mdpoly" / "differential.py", out_dir / "differential.py")
    cases = []
    failures = 0
    for ex in EXAMPLES:
        if examples and ex.name not in examples:
            continue
        shutil.copy(ex.source, out_dir / "src" / f"{ex.name}.c")
        for size_id, defines in ex.size_sets.items():
            if sizes and size_id not in sizes:
                continue
            case = {"example": ex.name, "size": size_id, "defines": defines, "rtol": ex.rtol, "atol": ex.atol,
                    "generated": {}}
            for target in targets:
                rel = f"{target}/{ex.name}-{size_id}.c"
                (out_dir / target).mkdir(exist_ok=True)
                cmd = [sys.executable, "-m", "mdpoly", str(ex.source), "-o", str(out_dir / rel), "--target", target,
                       "--all-nests", "--no-tune", "-q", *[f"-D{k}={v}" for k, v in defines.items()],
                       *(["--devices", devices] if devices else [])]
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
                if proc.returncode != 0:
                    print(f"mdpoly failed for {rel}:\n{proc.stderr[-2000:]}", file=sys.stderr)
                    failures += 1
                    continue
                case["generated"][target] = rel
            cases.append(case)
    (out_dir / "manifest.json").write_text(json.dumps({"cases": cases}, indent=1))
    print(f"prepared {len(cases)} cases for {', '.join(targets)} in {out_dir}")
    return 1 if failures else 0

# }}}

# {{{ run (stdlib only)


def find_cuda() -> dict[str, list[str]] | None:
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots += [str(Path(nvcc).resolve().parent.parent), str(Path(nvcc).parent.parent / "cuda")]
    roots.append("/usr/local/cuda")
    root = next((Path(r) for r in roots if r and (Path(r) / "include" / "cuda.h").is_file()), None)
    if root is None:
        return None
    inc = [str(root / "include")]
    lib = root / "lib64" if (root / "lib64").is_dir() else root / "lib"
    link = [f"-L{lib}"] + ([f"-L{lib / 'stubs'}"] if (lib / "stubs").is_dir() else [])
    nvrtc = "-lnvrtc"
    if not (root / "include" / "nvrtc.h").is_file():
        spec = importlib.util.find_spec("nvidia")
        for base in (spec.submodule_search_locations or []) if spec else []:
            for sub in ("cu13", "cu12", "cuda_nvrtc"):
                d = Path(base) / sub
                if (d / "include" / "nvrtc.h").is_file():
                    inc.append(str(d / "include"))
                    link += [f"-L{d / 'lib'}", f"-Wl,-rpath,{d / 'lib'}"]
                    if not (d / "lib" / "libnvrtc.so").exists():
                        names = sorted(glob.glob(str(d / "lib" / "libnvrtc.so.*[0-9]")), key=len)
                        if names:
                            nvrtc = f"-l:{Path(names[0]).name}"
                    break
            else:
                continue
            break
    return {"root": [str(root)], "include": [f"-I{i}" for i in inc], "link": link + ["-lcuda", nvrtc]}


def setup_opencl_icd(out_dir: Path) -> None:
    if os.environ.get("OCL_ICD_VENDORS"):
        return
    found = any(Path(d, "libnvidia-opencl.so.1").exists() for d in
                ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64",
                 "/usr/local/nvidia/lib"))
    if not found:
        ld = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
        found = "libnvidia-opencl.so.1" in ld
    if found:
        icd = out_dir / "icd"
        icd.mkdir(exist_ok=True)
        (icd / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
        os.environ["OCL_ICD_VENDORS"] = str(icd)


def sh(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout}s"


def run_case(out_dir: Path, case: dict, targets: list[str], flags: dict[str, list[str]], timeout: float,
             compare) -> list[tuple[str, str, str, str, float]]:
    """(name, target, status, detail, seconds) rows for one case."""
    name = f"{case['example']}-{case['size']}"
    build = out_dir / "build"
    defines = [f"-D{k}={v}" for k, v in case["defines"].items()]
    cc = os.environ.get("CC", "cc")
    orig = build / f"{name}.orig"
    rc, _, err = sh([cc, "-O2", *defines, str(out_dir / "src" / f"{case['example']}.c"), "-o", str(orig), "-lm"],
                    timeout)
    if rc != 0:
        return [(name, t, "FAIL", f"original does not build: {err.strip()[-300:]}", 0.0) for t in targets]
    rc, expected, err = sh([str(orig)], timeout)
    if rc != 0:
        return [(name, t, "FAIL", f"original exits {rc}", 0.0) for t in targets]
    rows = []
    for target in targets:
        rel = case["generated"].get(target)
        if rel is None:
            rows.append((name, target, "FAIL", "mdpoly produced no output in prepare", 0.0))
            continue
        if target not in flags:
            rows.append((name, target, "SKIP", f"no {target} toolchain found", 0.0))
            continue
        exe = build / f"{name}.{target}"
        rc, _, err = sh([cc, "-O2", *defines, str(out_dir / rel), "-o", str(exe), *flags[target], "-lm"], timeout)
        if rc != 0:
            rows.append((name, target, "FAIL", f"build: {err.strip()[-400:]}", 0.0))
            continue
        env = dict(os.environ, MDPOLY_CACHE_DIR=str(out_dir / "cache"))
        runs = 2 if target == "cuda" else 1
        status, detail, secs = "PASS", "", 0.0
        for k in range(runs):
            start = time.perf_counter()
            rc, actual, err = sh([str(exe)], timeout, env)
            secs = time.perf_counter() - start
            if rc != 0:
                status, detail = "FAIL", f"run {k + 1} exits {rc}: {err.strip()[-400:]}"
                break
            mismatch = compare(expected, actual, rtol=case["rtol"], atol=case["atol"])
            if mismatch is not None:
                status, detail = "FAIL", f"run {k + 1}: {mismatch}"
                break
        if status == "PASS" and runs == 2:
            detail = "second run from the module cache"
        rows.append((name, target, status, detail, secs))
    return rows


def run(out_dir: Path, targets: list[str], timeout: float, jobs: int) -> int:
    sys.path.insert(0, str(out_dir))
    from differential import compare_outputs

    manifest = json.loads((out_dir / "manifest.json").read_text())
    (out_dir / "build").mkdir(exist_ok=True)
    flags: dict[str, list[str]] = {}
    cuda = find_cuda()
    if "cuda" in targets and cuda is not None:
        flags["cuda"] = cuda["include"] + cuda["link"]
        print(f"CUDA toolkit: {cuda['root'][0]}; flags: {' '.join(flags['cuda'])}")
    if "opencl" in targets:
        setup_opencl_icd(out_dir)
        flags["opencl"] = (cuda["include"] if cuda else []) + (
            [f"-L{cuda['root'][0]}/lib64"] if cuda else []) + ["-lOpenCL"]
        print(f"OpenCL flags: {' '.join(flags['opencl'])}; OCL_ICD_VENDORS={os.environ.get('OCL_ICD_VENDORS', '')}")
    smi = sh(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"], 30)
    print(f"GPU: {smi[1].strip() or 'nvidia-smi failed: ' + smi[2].strip()[-200:]}")
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(run_case, out_dir, c, targets, flags, timeout, compare_outputs)
                for c in manifest["cases"]]
        for f in futs:
            rows += f.result()
    width = max((len(r[0]) for r in rows), default=10)
    print(f"\n{'case':<{width}}  {'target':<7} {'result':<6} {'time':>7}  detail")
    for name, target, status, detail, secs in rows:
        print(f"{name:<{width}}  {target:<7} {status:<6} {secs:7.3f}  {detail}")
    counts = {s: sum(1 for r in rows if r[2] == s) for s in ("PASS", "FAIL", "SKIP")}
    print(f"\n{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0

# }}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("prepare", "run", "all"))
    p.add_argument("dir", type=Path)
    p.add_argument("--targets", default=",".join(TARGETS))
    p.add_argument("--examples", default="")
    p.add_argument("--sizes", default="")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    p.add_argument("--devices", default="", help="prepare: generate with mdpoly --devices DEVICES (all, N, 0,1)")
    ns = p.parse_args(argv)
    targets = [t for t in ns.targets.split(",") if t]
    bad = [t for t in targets if t not in TARGETS]
    if bad:
        p.error(f"unknown target(s): {', '.join(bad)}")
    rc = 0
    if ns.step in ("prepare", "all"):
        rc = prepare(ns.dir, targets, [e for e in ns.examples.split(",") if e] or None,
                     [s for s in ns.sizes.split(",") if s] or None, ns.devices)
    if ns.step in ("run", "all"):
        rc = run(ns.dir, targets, ns.timeout, ns.jobs) or rc
    return rc


if __name__ == "__main__":
    sys.exit(main())
