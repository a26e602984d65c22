"""Where a CUDA program's fixed start-up cost goes (issues 22 and 23): the phases the generated
host code runs before its first kernel and at exit, timed one by one in a probe program built and
linked like mdpoly's CUDA output (``-lcuda -lnvrtc``).

The cost model charges every program that puts a nest on the device a fixed ``gpu_setup_ns``
(0.2 s, from whole-program times); this splits it. Each variant below is a separate program run
``--reps`` times (medians); a run prints the phase times it measured itself (``CLOCK_MONOTONIC``
from ``main``'s entry) and the whole run is timed from outside (process start to exit):

- ``empty``: ``main`` returning 0, linked without CUDA (process start and exit);
- ``linked``: the same, linked with ``-lcuda -lnvrtc`` (loading the two libraries);
- ``init``: ``cuInit`` + the primary context (``cuDevicePrimaryCtxRetain``, ``cuCtxSetCurrent``),
  a first ``cuMemAlloc``, the NVRTC architecture query, loading a CUBIN compiled ahead
  (``cuModuleLoadData``), one launch of an empty kernel, then at exit ``cuModuleUnload`` and
  ``cuDevicePrimaryCtxRelease`` (what ``mdp_cu_release`` does);
- ``init_noexit``: the same without the release at exit (the driver cleans up as the process ends).

Run on the GPU machine from the repository root::

    python benchmarks/gpu_setup.py --reps 7 --out $OUT/gpu_setup

Writes ``<out>.md`` and ``<out>.json`` (default ``benchmarks/results/gpu_setup_<date>``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PROBE = r"""
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static void ok(CUresult r, const char *what) { if (r != CUDA_SUCCESS) { fprintf(stderr, "%s failed: %d\n", what, (int)r); exit(1); } }
static const char *SRC = "extern \"C\" __global__ void mdp_probe(float *x) { if (x) x[threadIdx.x] = 1.0f; }";

int main(int argc, char **argv)
{
    int release = argc > 1 && strcmp(argv[1], "release") == 0;
    double t0 = ms(), t;
    CUdevice dev; CUcontext ctx; CUdeviceptr buf; CUmodule mod; CUfunction fn;
    int major = 0, minor = 0, n = 0, archs[128];
    ok(cuInit(0), "cuInit");
    t = ms(); printf("phase cuInit %.3f\n", t - t0); t0 = t;
    ok(cuDeviceGet(&dev, 0), "cuDeviceGet");
    ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    t = ms(); printf("phase context %.3f\n", t - t0); t0 = t;
    ok(cuMemAlloc(&buf, 1 << 20), "cuMemAlloc");
    t = ms(); printf("phase first_alloc %.3f\n", t - t0); t0 = t;
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    nvrtcGetNumSupportedArchs(&n);
    if (n > 128) n = 128;
    nvrtcGetSupportedArchs(archs);
    t = ms(); printf("phase nvrtc_arch_query %.3f\n", t - t0); t0 = t;
    {
        char opt[32]; nvrtcProgram prog; size_t size; char *image;
        snprintf(opt, sizeof opt, "--gpu-architecture=sm_%d%d", major, minor);
        const char *opts[1] = {opt};
        nvrtcCreateProgram(&prog, SRC, "probe", 0, NULL, NULL);
        if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) { fprintf(stderr, "nvrtc failed\n"); return 1; }
        nvrtcGetCUBINSize(prog, &size); image = malloc(size); nvrtcGetCUBIN(prog, image);
        nvrtcDestroyProgram(&prog);
        t = ms(); printf("phase nvrtc_compile %.3f\n", t - t0); t0 = t;
        ok(cuModuleLoadData(&mod, image), "cuModuleLoadData");
        free(image);
    }
    t = ms(); printf("phase module_load %.3f\n", t - t0); t0 = t;
    ok(cuModuleGetFunction(&fn, mod, "mdp_probe"), "cuModuleGetFunction");
    {
        void *args[1] = {&buf};
        ok(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
        ok(cuCtxSynchronize(), "cuCtxSynchronize");
    }
    t = ms(); printf("phase first_launch %.3f\n", t - t0); t0 = t;
    if (release) {
        cuMemFree(buf);
        cuModuleUnload(mod);
        cuDevicePrimaryCtxRelease(dev);
        t = ms(); printf("phase release %.3f\n", t - t0); t0 = t;
    }
    return 0;
}
"""

EMPTY = "int main(void) { return 0; }\n"


def build(work: Path, name: str, text: str, link: list[str], comp: list[str]) -> Path:
    src, exe = work / f"{name}.c", work / name
    src.write_text(text)
    subprocess.run(["cc", "-O2", *comp, str(src), "-o", str(exe), *link], check=True)
    return exe


def run(cmd: list[str]) -> tuple[float, dict[str, float]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = (time.perf_counter() - start) * 1e3
    phases = {}
    for line in proc.stdout.splitlines():
        if line.startswith("phase "):
            _, name, value = line.split()
            phases[name] = float(value)
    return wall, phases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from mdpoly.cc_wrapper import target_flags
    comp, link = (list(f) for f in target_flags("cuda"))
    if "-lcuda" not in link:
        print("no CUDA toolkit", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        empty = build(work, "empty", EMPTY, [], [])
        linked = build(work, "linked", EMPTY, ["-Wl,--no-as-needed", *link], comp)
        probe = build(work, "probe", PROBE, link, comp)
        variants = {"empty": [str(empty)], "linked": [str(linked)],
                    "init": [str(probe), "release"], "init_noexit": [str(probe)]}
        runs: dict[str, list[tuple[float, dict[str, float]]]] = {v: [] for v in variants}
        run(variants["init"])   # a first run: the driver's own caches
        for _ in range(args.reps):
            for name, cmd in variants.items():
                runs[name].append(run(cmd))
    result: dict[str, dict[str, float]] = {}
    for name, rs in runs.items():
        cell = {"wall_ms": statistics.median(w for w, _ in rs)}
        for phase in rs[0][1]:
            cell[phase] = statistics.median(p[phase] for _, p in rs)
        result[name] = cell
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True, check=False).stdout.strip()
    date = datetime.date.today().isoformat()
    out = Path(args.out) if args.out else Path(__file__).parent / "results" / f"gpu_setup_{date}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"date": date, "gpu": gpu, "reps": args.reps,
                                                    "variants": result}, indent=1))
    lines = [f"# CUDA program start-up, {date}", "", f"GPU: {gpu}; medians of {args.reps} runs, milliseconds "
             "(`benchmarks/gpu_setup.py`).", "", "| variant | whole run | phases (inside the run) |", "|---|---|---|"]
    for name, cell in result.items():
        phases = ", ".join(f"{k} {v:.1f}" for k, v in cell.items() if k != "wall_ms")
        lines.append(f"| {name} | {cell['wall_ms']:.1f} | {phases or '–'} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
