#!/usr/bin/env python3
"""GPU benchmarks: mdpoly's OpenCL and CUDA output vs cuBLAS / cuDNN, prepared here, run on a GPU machine.

Three steps::

    python benchmarks/gpu.py prepare OUTDIR [--quick]
        # here, with mdpoly: copies the kernel programs, writes mdpoly's --target opencl and
        # --target cuda outputs for each workload (sizes as -D), manifest.json and the scripts
        # the run needs (this file, gpu_vendor.py, gpu_report.py) into OUTDIR
    python3 OUTDIR/gpu.py run OUTDIR [--out DIR]
        # there, with python3 (stdlib; numpy, CuPy / PyTorch for the vendor references), cc, the
        # CUDA toolkit and driver: builds each variant, runs it with MDPOLY_PROFILE=1 several
        # times, checks its checksum against the sequential C build, times the vendor libraries,
        # writes gpu_results.json and gpu_results.md into DIR (default $OUT, else OUTDIR)
    python benchmarks/gpu.py report gpu_results.json
        # here: benchmarks/results/gpu_<date>.md, .json and .png (matplotlib, the bench extra)

A variant that fails to build or run is recorded as failed with the reason; the others go on.
The run keeps to a time budget (``--budget``, default 270 s): steps that would start after it
are recorded as skipped. OpenCL builds link ``-lOpenCL`` (the toolkit's headers); when
``OCL_ICD_VENDORS`` is unset and NVIDIA's ``libnvidia-opencl.so.1`` is installed, an ICD file
naming it is written to ``OUTDIR/build/icd`` and used. CUDA builds link ``-lcuda -lnvrtc`` from
``$CUDA_HOME``, ``$CUDA_PATH``, ``nvcc``'s toolkit or ``/usr/local/cuda`` (NVRTC from the
``nvidia-cuda-nvrtc`` wheel when the toolkit lacks it).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import glob
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGETS = ("opencl", "cuda")
CHECKSUM_RTOL = 1e-3
SCRIPTS = ("gpu.py", "gpu_vendor.py", "gpu_report.py")
NCU_METRIC = "gpu__time_duration.sum"
#: ``$MDPOLY_COST_CALIBRATION`` of ``prepare`` unless set: the kernel nests on the device.
FORCE_DEVICE = "gpu_min_speedup=0,device_margin=0"
NCU_UNITS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "second": 1e3,
             "s": 1e3}
PROFILE_LINE = re.compile(r"^mdpoly-profile: (\S+) calls=(\d+) kernel_ms=([0-9.eE+-]+) transfer_ms=([0-9.eE+-]+)(?: host_ms=[0-9.eE+-]+)?$",
                          re.MULTILINE)


# {{{ workloads


@dataclass(frozen=True)
class GpuWorkload:
    """One GPU benchmark: a kernel program, its sizes, the vendor reference and the issues' anchors.

    :arg anchors: kernel times (ms) reported in the issues for the full sizes on an H200, not
        measured by us: ``vendor`` (cuBLAS / cuDNN) and ``ppcg`` (PPCG's default CUDA).
    """

    name: str
    kernel: str
    full: dict[str, int]
    quick: dict[str, int]
    vendor: str                      # gpu_vendor.CANDIDATES key
    anchors: dict[str, float] = field(default_factory=dict)
    seq: bool = True                 # False: too slow sequentially; the vendor's checksum is the reference

    def sizes(self, quick: bool) -> dict[str, int]:
        return dict(self.quick if quick else self.full)


#: RW sgemm: the thesis's "10x500x64" read as M x N x K (C is 10 x 500, the reduction has 64 terms),
#: the MDH papers' I x J x K order for matrix multiplication. The deep-learning shapes are the MDH
#: thesis's evaluation (section 4.5, Fig. 89; issue #13) with their reported H200 vendor kernel times.
#: VGG-16's first layer: the thesis lists a 224 x 224 output, but VALID padding of a 224 x 224 image
#: with a 3 x 3 filter gives 222 x 222, which is what is run here. ResNet-50's 230 x 230 input
#: gives 112 x 112 with a 7 x 7 stride-2 filter; its last row and column are never read.
_RESNET = {"P": 112, "Q": 112, "K": 64, "C": 3, "R": 7, "S": 7, "STR": 2, "IH": 230, "IW": 230}
_VGG = {"P": 222, "Q": 222, "K": 64, "C": 3, "R": 3, "S": 3, "STR": 1, "IH": 224, "IW": 224}
_MOBILENET = {"P": 112, "Q": 112, "K": 32, "C": 3, "R": 3, "S": 3, "STR": 2, "IH": 225, "IW": 225}
_QUICK_CONV = {"P": 14, "Q": 14, "K": 8, "C": 3, "R": 3, "S": 3, "STR": 2, "IH": 29, "IW": 29}
WORKLOADS = (
    GpuWorkload("sgemm", "sgemm.c", {"M": 1024, "N": 1024, "K": 1024}, {"M": 128, "N": 128, "K": 128},
                "sgemm", {"vendor": 0.074, "ppcg": 0.236}),
    GpuWorkload("sgemm_4096", "sgemm.c", {"M": 4096, "N": 4096, "K": 4096}, {"M": 256, "N": 256, "K": 256},
                "sgemm", seq=False),
    GpuWorkload("mm_16x1000x2048", "sgemm.c", {"M": 16, "N": 1000, "K": 2048}, {"M": 16, "N": 100, "K": 256},
                "sgemm", {"vendor": 0.0094}),
    GpuWorkload("mm_1x1000x2048", "sgemm.c", {"M": 1, "N": 1000, "K": 2048}, {"M": 1, "N": 1000, "K": 2048},
                "sgemm", {"vendor": 0.0045}),
    GpuWorkload("mm_16x4096x25088", "sgemm.c", {"M": 16, "N": 4096, "K": 25088}, {"M": 16, "N": 128, "K": 512},
                "sgemm", {"vendor": 0.186}),
    GpuWorkload("mm_1x4096x25088", "sgemm.c", {"M": 1, "N": 4096, "K": 25088}, {"M": 1, "N": 128, "K": 512},
                "sgemm", {"vendor": 0.0955}),
    GpuWorkload("sgemm_rw", "sgemm.c", {"M": 10, "N": 500, "K": 64}, {"M": 10, "N": 500, "K": 64},
                "sgemm", {"vendor": 0.0196}),
    GpuWorkload("mcc_resnet50_n16", "mcc_strided.c", {"N": 16, **_RESNET}, {"N": 2, **_QUICK_CONV},
                "mcc", {"vendor": 0.187}),
    GpuWorkload("mcc_resnet50_n1", "mcc_strided.c", {"N": 1, **_RESNET}, {"N": 1, **_RESNET},
                "mcc", {"vendor": 0.0166}),
    GpuWorkload("mcc_vgg16_n16", "mcc_strided.c", {"N": 16, **_VGG}, {"N": 2, **_QUICK_CONV, "STR": 1, "IH": 16,
                                                                      "IW": 16},
                "mcc", {"vendor": 0.169}),
    GpuWorkload("mcc_vgg16_n1", "mcc_strided.c", {"N": 1, **_VGG}, {"N": 1, **_VGG},
                "mcc", {"vendor": 0.0158}),
    GpuWorkload("mcc_mobilenet_n16", "mcc_strided.c", {"N": 16, **_MOBILENET}, {"N": 2, **_QUICK_CONV},
                "mcc", {"vendor": 0.034}),
    GpuWorkload("mcc_mobilenet_n1", "mcc_strided.c", {"N": 1, **_MOBILENET}, {"N": 1, **_MOBILENET},
                "mcc", {"vendor": 0.0050}),
    GpuWorkload("mcc_rw", "mcc.c", {"N": 1, "P": 7, "Q": 7, "K": 512, "C": 512, "R": 3, "S": 3},
                {"N": 1, "P": 7, "Q": 7, "K": 32, "C": 32, "R": 3, "S": 3}, "mcc", {"vendor": 0.127, "ppcg": 39.0}),
    GpuWorkload("mcc_pc", "mcc.c", {"N": 1, "P": 4092, "Q": 4092, "K": 1, "C": 1, "R": 5, "S": 5},
                {"N": 1, "P": 252, "Q": 252, "K": 1, "C": 1, "R": 5, "S": 5}, "mcc", {"vendor": 1.93}),
)

# }}}

# {{{ prepare (here, with mdpoly)


def prepare(out_dir: Path, quick: bool, targets: tuple[str, ...], only: set[str], tune_time: float = 0.0,
            deadline: float = 0.0) -> int:
    """Write the sources, mdpoly's outputs, the manifest and the scripts into ``out_dir``; 1 on any failure.

    ``tune_time`` > 0: mdpoly tunes each nest for that many seconds (on this machine's device: run
    ``prepare`` on the GPU machine then) instead of ``--no-tune``; what the tuner chose and measured
    (from mdpoly's ``--report``) goes into the manifest per workload and target. ``deadline`` > 0: the
    whole prepare should end within that many seconds, so a later workload's tuning time shrinks
    (never below ``MIN_TUNE_SECONDS``) when the earlier ones took longer than planned."""
    started = time.monotonic()
    planned = [w for w in WORKLOADS if not only or w.name in only]
    left = len(planned) * len(targets)
    overheads: list[float] = []   # seconds each tuned call took beyond its budget
    repo = HERE.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "src").mkdir(exist_ok=True)
    shutil.copy(HERE / "kernels" / "bench_common.h", out_dir / "src" / "bench_common.h")
    for script in SCRIPTS:
        shutil.copy(HERE / script, out_dir / script)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH")]))
    # the benchmark times the kernels: every weighed nest goes to the device, whatever the hybrid cost
    # model would decide for a program this short (it keeps MatMul 1x1000x2048 on the host)
    env.setdefault("MDPOLY_COST_CALIBRATION", FORCE_DEVICE)
    failures, entries = 0, []
    for w in WORKLOADS:
        if only and w.name not in only:
            continue
        shutil.copy(HERE / "kernels" / w.kernel, out_dir / "src" / w.kernel)
        sizes = w.sizes(quick)
        entry: dict[str, Any] = {"workload": w.name, "kernel": f"src/{w.kernel}", "sizes": sizes,
                                 "vendor": w.vendor, "anchors": w.anchors, "seq": w.seq, "generated": {},
                                 "prepare_errors": {}, "tuned": {}}
        for target in targets:
            (out_dir / target).mkdir(exist_ok=True)
            rel = f"{target}/{w.name}.c"
            report_rel = f"{target}/{w.name}.report.json"
            seconds = planned_tune_seconds(tune_time, deadline, time.monotonic() - started, left,
                                           statistics.mean(overheads) if overheads else TUNE_OVERHEAD_SECONDS)
            left -= 1
            call_started = time.monotonic()
            # relative paths, run inside out_dir: the #line directives name src/<kernel>.c, nothing of this machine
            tune = ["--tune-time", f"{seconds:g}", "--retune"] if seconds else ["--no-tune"]
            cmd = [sys.executable, "-m", "mdpoly", f"src/{w.kernel}", "-o", rel, "--target", target, *tune, "-q",
                   "--report", report_rel, *(f"-D{k}={v}" for k, v in sizes.items())]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out_dir, env=env, timeout=900)
            if seconds:
                overheads.append(max(0.0, time.monotonic() - call_started - seconds))
                entry["tuned"][target] = tuning_summary(out_dir / report_rel, seconds)
            (out_dir / report_rel).unlink(missing_ok=True)   # it names this machine's paths (the tuning log)
            text = (out_dir / rel).read_text() if proc.returncode == 0 and (out_dir / rel).is_file() else ""
            if not text or "mdp_" not in text:
                reason = (proc.stderr.strip() or "mdpoly left the kernel as it was")[-1500:]
                print(f"[{w.name}] mdpoly --target {target} failed: {reason}", file=sys.stderr)
                entry["prepare_errors"][target] = reason
                failures += 1
                continue
            entry["generated"][target] = rel
            print(f"[{w.name}] {rel} {describe_tuning(entry['tuned'].get(target))}", file=sys.stderr, flush=True)
        entry["tuning"] = tuning_cell(entry["tuned"])
        entries.append(entry)
    manifest = {"kind": "mdpoly-gpu-bench", "mode": "quick" if quick else "full",
                "prepared": datetime.datetime.now().isoformat(timespec="seconds"),
                "mdpoly_commit": _git_commit(repo), "workloads": entries}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    leaks = _absolute_paths(out_dir, [str(repo), str(out_dir.resolve()), str(Path.home())])
    if leaks:
        print("absolute paths of this machine in the prepared files:\n  " + "\n  ".join(leaks), file=sys.stderr)
        failures += 1
    size = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file())
    print(f"prepared {len(entries)} workloads ({'quick' if quick else 'full'} sizes) for {', '.join(targets)} "
          f"in {out_dir} ({size / 1e6:.2f} MB)", file=sys.stderr)
    return 1 if failures else 0


#: the least tuning time ``--deadline`` leaves a nest (below it the tuner mostly measures the default)
MIN_TUNE_SECONDS = 5.0
#: seconds a tuned mdpoly call takes besides its budget (parsing, the reference, compiling, the final build)
TUNE_OVERHEAD_SECONDS = 12.0


def planned_tune_seconds(tune_time: float, deadline: float, elapsed: float, left: int,
                         overhead: float = TUNE_OVERHEAD_SECONDS) -> float:
    """The tuning budget of the next nest: ``tune_time``, less when the rest would not end by ``deadline``
    (``left`` nests to go, each taking ``overhead`` seconds besides its budget)."""
    if not tune_time or not deadline or left <= 0:
        return tune_time
    share = (deadline - elapsed) / left - overhead
    return round(max(MIN_TUNE_SECONDS, min(tune_time, share)), 1)


def tuning_summary(report: Path, budget: float) -> dict[str, Any]:
    """What mdpoly's ``--report`` says the tuner did for the (first tuned) nest: budget, configuration, times."""
    summary: dict[str, Any] = {"budget_s": budget}
    try:
        nests = json.loads(report.read_text()).get("nests", [])
    except (OSError, ValueError) as exc:
        return {**summary, "status": f"no report: {exc}"}
    tuned = [n for n in nests if n.get("tuning")]
    if not tuned:
        remarks = [r.get("message", "") for n in nests for r in n.get("remarks", []) if "tun" in str(r)]
        return {**summary, "status": "not tuned", "detail": "; ".join(remarks)[:300]}
    t = tuned[0]["tuning"]
    summary.update(status="tuned", params=t.get("params"), tuned_s=t.get("tuned_seconds"),
                   default_s=t.get("default_seconds"), evaluations=t.get("evaluations"),
                   tuning_s=t.get("tuning_seconds"), technique=t.get("technique"), from_cache=t.get("from_cache"))
    return summary


def describe_tuning(t: Mapping[str, Any] | None) -> str:
    """One line: the tuner's default -> tuned time (its own measurement), evaluations and budget."""
    if not t:
        return ""
    if t.get("status") != "tuned":
        return f"({t.get('status')}, {t.get('budget_s', 0):g} s)"
    ms = lambda v: f"{v * 1e3:.4g} ms" if isinstance(v, (int, float)) else "?"  # noqa: E731
    return (f"(tuned {t.get('budget_s', 0):g} s, {t.get('evaluations')} evaluations: default {ms(t.get('default_s'))}"
            f" -> {ms(t.get('tuned_s'))})")


def tuning_cell(tuned: Mapping[str, Mapping[str, Any]]) -> str:
    """The results table's *tuning budget* cell: per target, the budget and the evaluations."""
    if not tuned:
        return "none"
    return "; ".join(f"{target} {t.get('budget_s', 0):g} s"
                     + (f" ({t.get('evaluations')} evals)" if t.get("status") == "tuned" else f" ({t.get('status')})")
                     for target, t in tuned.items())


def _git_commit(repo: Path) -> str:
    proc = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return proc.stdout.strip() + ("-dirty" if dirty else "") if proc.returncode == 0 else "unknown"


def _absolute_paths(out_dir: Path, needles: list[str]) -> list[str]:
    found = []
    for path in out_dir.rglob("*"):
        if path.is_file() and path.suffix in (".c", ".h", ".json"):
            text = path.read_text(errors="replace")
            found += [f"{path.relative_to(out_dir)}: {n}" for n in needles if n and n != "/" and n in text]
    return found

# }}}

# {{{ run (there: stdlib; numpy and CuPy / PyTorch for the vendor references)


class StepError(Exception):
    """A build or run step failed; the message says which and why."""


class Deadline:
    """The run's time budget: each step's timeout is cut to what is left."""

    def __init__(self, seconds: float, step_timeout: float) -> None:
        self.end = time.monotonic() + seconds
        self.step_timeout = step_timeout

    def timeout(self) -> float:
        left = self.end - time.monotonic()
        if left <= 1:
            raise StepError("skipped: the run's time budget is spent")
        return min(self.step_timeout, left)


def sh(cmd: list[str], deadline: Deadline, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    timeout = deadline.timeout()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        raise StepError(f"timed out after {timeout:.0f}s: {Path(cmd[0]).name}") from exc
    except OSError as exc:
        raise StepError(f"cannot run {cmd[0]}: {exc}") from exc
    if proc.returncode != 0:
        tail = " / ".join((proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-4:])
        raise StepError(f"{Path(cmd[0]).name} exit {proc.returncode}: {tail[-600:]}")
    return proc


def find_cuda() -> dict[str, Any] | None:
    """The CUDA toolkit: root, include and link flags (NVRTC from the pip wheel when the toolkit lacks it)."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    roots.append("/usr/local/cuda")
    root = next((Path(r) for r in roots if r and (Path(r) / "include" / "cuda.h").is_file()), None)
    if root is None:
        return None
    lib = root / "lib64" if (root / "lib64").is_dir() else root / "lib"
    include, link = [f"-I{root / 'include'}"], [f"-L{lib}", f"-Wl,-rpath,{lib}"]
    if (lib / "stubs").is_dir():
        link.append(f"-L{lib / 'stubs'}")   # after lib: only for linking; the driver's libcuda.so.1 runs
    nvrtc = "-lnvrtc"
    if not (root / "include" / "nvrtc.h").is_file():
        spec = importlib.util.find_spec("nvidia")
        bases = list(spec.submodule_search_locations or []) if spec else []
        dirs = [Path(b) / sub for b in bases for sub in ("cu13", "cu12", "cuda_nvrtc")]
        wheel = next((d for d in dirs if (d / "include" / "nvrtc.h").is_file()), None)
        if wheel is None:
            return {"root": str(root), "include": include, "link": link + ["-lcuda", nvrtc],
                    "note": "nvrtc.h not found (toolkit or nvidia-cuda-nvrtc wheel)"}
        include.append(f"-I{wheel / 'include'}")
        link += [f"-L{wheel / 'lib'}", f"-Wl,-rpath,{wheel / 'lib'}"]
        if not (wheel / "lib" / "libnvrtc.so").exists():
            names = sorted(glob.glob(str(wheel / "lib" / "libnvrtc.so.*[0-9]")), key=len)
            if names:
                nvrtc = f"-l:{Path(names[0]).name}"
    return {"root": str(root), "include": include, "link": link + ["-lcuda", nvrtc]}


def setup_opencl_icd(build: Path) -> str:
    """Point the ICD loader at NVIDIA's OpenCL when nothing else says where to look; say what is used."""
    if os.environ.get("OCL_ICD_VENDORS"):
        return f"OCL_ICD_VENDORS={os.environ['OCL_ICD_VENDORS']}"
    dirs = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib")
    found = any(Path(d, "libnvidia-opencl.so.1").exists() for d in dirs)
    if not found and shutil.which("ldconfig"):
        found = "libnvidia-opencl.so.1" in subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    if not found:
        return "system ICDs (/etc/OpenCL/vendors)"
    icd = build / "icd"
    icd.mkdir(parents=True, exist_ok=True)
    (icd / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    os.environ["OCL_ICD_VENDORS"] = str(icd)
    return "libnvidia-opencl.so.1 (ICD file written by gpu.py)"


def build(src: Path, exe: Path, sizes: Mapping[str, int], reps: int, flags: list[str], link: list[str],
          deadline: Deadline) -> None:
    """``cc -O2`` compile, then link (so a failure says which of the two failed)."""
    cc = os.environ.get("CC", "cc")
    obj = exe.with_suffix(".o")
    defines = [f"-DREPS={reps}", *(f"-D{k}={v}" for k, v in sizes.items())]
    try:
        sh([cc, "-O2", *defines, f"-I{src.parent.parent / 'src'}", *flags, "-c", str(src), "-o", str(obj)], deadline)
    except StepError as exc:
        raise StepError(f"compile: {exc}") from exc
    try:
        sh([cc, str(obj), "-o", str(exe), *link, "-lm"], deadline)
    except StepError as exc:
        raise StepError(f"link: {exc}") from exc


def run_program(exe: Path, env: Mapping[str, str], deadline: Deadline) -> dict[str, Any]:
    """One run: the program's ``median_s`` and ``checksum``, and its ``mdpoly-profile:`` lines summed."""
    proc = sh([str(exe)], deadline, env)
    values = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    if "median_s" not in values:
        raise StepError(f"program printed no median_s: {proc.stdout[-200:]}")
    result: dict[str, Any] = {"median_s": float(values["median_s"]), "checksum": float(values.get("checksum", "nan")),
                              "magnitude": float(values.get("magnitude", "nan"))}
    lines = PROFILE_LINE.findall(proc.stderr)
    if lines:
        calls = max(int(c) for _, c, _, _ in lines)
        result.update(nests=[n for n, _, _, _ in lines], calls=calls,
                      kernel_ms=sum(float(k) for _, _, k, _ in lines) / calls,
                      transfer_ms=sum(float(t) for _, _, _, t in lines) / calls)
    return result


def checksum_matches(a: float, b: float, magnitude: float = 0.0) -> bool:
    """Relative ``CHECKSUM_RTOL``, or 1e-5 of the outputs' absolute sum ``magnitude`` when the checksum
    itself cancels (reassociated fp32 sums of 25088 terms differ by rounding in proportion to it)."""
    mag = magnitude if math.isfinite(magnitude) else 0.0
    return math.isclose(a, b, rel_tol=CHECKSUM_RTOL, abs_tol=max(1e-6, 1e-5 * mag))


def find_ncu() -> str | None:
    """Nsight Compute's command line, for kernel-only times of the CUDA programs (``None``: not installed)."""
    found = shutil.which("ncu")
    if found:
        return found
    names = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu") + glob.glob("/usr/local/cuda*/bin/ncu"))
    return names[-1] if names else None


def ncu_kernel_ms(ncu: str, exe: Path, env: Mapping[str, str], calls: int, deadline: Deadline) -> dict[str, Any]:
    """Kernel-only device time per call of a CUDA program, from Nsight Compute's ``gpu__time_duration``
    of every kernel it launches (clocks and caches left alone: ``--clock-control none --cache-control
    none``, so the kernels run as they do unprofiled, apart from being serialized)."""
    cmd = [ncu, "--metrics", NCU_METRIC, "--clock-control", "none", "--cache-control", "none", "--csv",
           "--print-units", "base", str(exe)]
    proc = sh(cmd, deadline, env)
    lines = proc.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') and "Metric Value" in line), None)
    if start is None:
        raise StepError(f"ncu printed no metrics: {(proc.stdout + proc.stderr)[-300:]}")
    import csv
    total, kernels, names = 0.0, 0, set()
    for row in csv.DictReader([ln for ln in lines[start:] if ln.startswith('"')]):
        if row.get("Metric Name") != NCU_METRIC:
            continue
        unit = NCU_UNITS.get(row.get("Metric Unit", "nsecond"))
        if unit is None:
            raise StepError(f"ncu: unknown unit {row.get('Metric Unit')!r}")
        total += float(row["Metric Value"].replace(",", "")) * unit
        kernels += 1
        names.add(row.get("Kernel Name", "?"))
    if not kernels:
        raise StepError("ncu profiled no kernel")
    return {"kernel_ms": total / calls, "kernels_per_call": kernels / calls, "kernel_names": sorted(names)}


def measure_variant(entry: Mapping[str, Any], target: str, root: Path, flags: dict[str, tuple[list[str], list[str]]],
                    reps: int, runs: int, deadline: Deadline, ncu: str | None = None) -> dict[str, Any]:
    """Build and run one mdpoly variant ``runs`` times; medians over the runs."""
    rel = entry["generated"].get(target)
    if rel is None:
        return {"status": "failed", "detail": f"prepare: {entry['prepare_errors'].get(target, 'not generated')}"}
    if target not in flags:
        return {"status": "failed", "detail": f"no {target} toolchain found on this machine"}
    exe = root / "build" / f"{entry['workload']}.{target}"
    env = dict(os.environ, MDPOLY_PROFILE="1", MDPOLY_CACHE_DIR=str(root / "build" / "cache"))
    try:
        build(root / rel, exe, entry["sizes"], reps, *flags[target], deadline)
        results = [run_program(exe, env, deadline) for _ in range(runs)]
    except StepError as exc:
        return {"status": "skipped" if str(exc).startswith("skipped") else "failed", "detail": str(exc)}
    out: dict[str, Any] = {"status": "ok", "whole_ms": statistics.median(r["median_s"] for r in results) * 1e3,
                           "checksum": results[0]["checksum"], "runs": results}
    out["magnitude"] = results[0]["magnitude"]
    if all("kernel_ms" in r for r in results):
        out["event_kernel_ms"] = statistics.median(r["kernel_ms"] for r in results)
        out["transfer_ms"] = statistics.median(r["transfer_ms"] for r in results)
    else:
        out["detail"] = "no mdpoly-profile line (profiling missing in this host code?)"
    # kernel-only: OpenCL's profiling events are each command's own start..end; CUDA's events span the
    # launches (launch latency included), so the CUDA program runs once more under Nsight Compute
    if target == "opencl" and "event_kernel_ms" in out:
        out["kernel_ms"], out["kernel_source"] = out["event_kernel_ms"], "OpenCL profiling events"
    elif target == "cuda" and ncu is not None:
        try:
            out["ncu"] = ncu_kernel_ms(ncu, exe, {k: v for k, v in env.items() if k != "MDPOLY_PROFILE"}, reps + 1,
                                       deadline)
            out["kernel_ms"], out["kernel_source"] = out["ncu"]["kernel_ms"], "ncu gpu__time_duration"
        except StepError as exc:
            out["ncu_error"] = str(exc)
    if "kernel_ms" not in out and "event_kernel_ms" in out:
        out["kernel_ms"], out["kernel_source"] = out["event_kernel_ms"], "CUDA events around the launches"
    return out


def measure_seq(entry: Mapping[str, Any], root: Path, deadline: Deadline) -> dict[str, Any]:
    """The sequential C build's checksum (one warm-up and one timed call: it is the reference, not a contender)."""
    if not entry.get("seq", True):
        return {"status": "skipped", "detail": "too slow sequentially: the vendor library's checksum is the reference"}
    exe = root / "build" / f"{entry['workload']}.seq"
    try:
        build(root / entry["kernel"], exe, entry["sizes"], 1, [], [], deadline)
        r = run_program(exe, os.environ, deadline)
    except StepError as exc:
        return {"status": "failed", "detail": str(exc)}
    return {"status": "ok", "whole_ms": r["median_s"] * 1e3, "checksum": r["checksum"], "magnitude": r["magnitude"]}


def machine_description(cuda: Mapping[str, Any] | None, icd: str) -> dict[str, str]:
    smi = shutil.which("nvidia-smi")
    gpu = "unknown (no nvidia-smi)"
    driver = cap = "unknown"
    if smi:
        proc = subprocess.run([smi, "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True)
        first = proc.stdout.strip().splitlines()[0] if proc.returncode == 0 and proc.stdout.strip() else ""
        parts = [p.strip() for p in first.split(",")]
        if len(parts) == 3:
            gpu, driver, cap = parts
        else:
            gpu = f"nvidia-smi failed: {(proc.stderr or proc.stdout).strip()[-200:]}"
    cc = os.environ.get("CC", "cc")
    try:
        cc_version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        cc_version = "unknown"
    versions = {}
    for module in ("numpy", "cupy", "torch"):
        try:
            versions[module] = __import__(module).__version__
        except Exception:   # not installed, or broken: the reference will say so
            versions[module] = "not available"
    return {"gpu": gpu, "driver": driver, "compute_capability": cap,
            "cuda_toolkit": cuda["root"] if cuda else "not found", "opencl_icd": icd, "compiler": cc_version,
            "python": platform.python_version(), **versions, "host": platform.node()}


def measure_vendor(entry: Mapping[str, Any], deadline: Deadline) -> dict[str, Any]:
    try:
        deadline.timeout()
        from gpu_vendor import measure_vendor as vendor
    except StepError as exc:
        return {"status": "skipped", "detail": str(exc)}
    except ImportError as exc:
        return {"status": "skipped", "detail": f"numpy missing: {exc}"}
    v = vendor(entry["vendor"], entry["sizes"])
    return {"name": v.name, "status": v.status, "kernel_ms": v.kernel_ms, "event_ms": v.event_ms,
            "checksum": v.checksum, "magnitude": v.magnitude, "detail": v.detail, "candidates": v.candidates}


def check_row(row: dict[str, Any]) -> None:
    """Compare the variants' and the vendor's checksums with the reference: the sequential C build's,
    or the vendor's where the sequential build was not run (then the vendor is the reference)."""
    seq, vendor = row["seq"], row["vendor"]
    if seq.get("status") == "ok":
        ref, ref_name = seq, "seq"
    elif vendor.get("status") == "ok" and vendor.get("checksum") is not None:
        ref, ref_name = vendor, "vendor"
    else:
        row["reference"] = "none (no checksum checked)"
        return
    row["reference"] = ref_name
    mag = ref.get("magnitude", 0.0) or 0.0
    contenders = [*row["variants"].values()] + ([vendor] if ref_name == "seq" else [])
    for v in contenders:
        if v.get("status") == "ok" and v.get("checksum") is not None \
                and not checksum_matches(v["checksum"], ref["checksum"], mag):
            v.update(status="wrong", detail=f"checksum {v['checksum']:.6g} vs {ref_name} {ref['checksum']:.6g}")


def run(root: Path, out: Path, targets: tuple[str, ...], reps: int, runs: int, budget: float, step_timeout: float,
        vendor: bool, only: set[str]) -> int:
    """Measure every prepared workload; write ``gpu_results.json`` and ``.md`` into ``out``. 1 when anything failed."""
    started = time.monotonic()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from gpu_report import render_markdown

    manifest = json.loads((root / "manifest.json").read_text())
    (root / "build").mkdir(exist_ok=True)
    deadline = Deadline(budget, step_timeout)
    cuda = find_cuda()
    icd = setup_opencl_icd(root / "build")
    flags: dict[str, tuple[list[str], list[str]]] = {}
    if cuda is not None:
        flags["cuda"] = (cuda["include"], cuda["link"])
    ocl_inc = cuda["include"][:1] if cuda else []
    ocl_lib = [f for f in cuda["link"] if f.startswith("-L")][:1] if cuda else []
    flags["opencl"] = (ocl_inc, [*ocl_lib, "-lOpenCL"])
    machine = machine_description(cuda, icd)
    print(f"GPU: {machine['gpu']} (driver {machine['driver']}); CUDA: {machine['cuda_toolkit']}; OpenCL: {icd}",
          file=sys.stderr, flush=True)
    entries = [e for e in manifest["workloads"] if not only or e["workload"] in only]

    # the sequential references first, in parallel (CPU only, before any GPU timing)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(entries), os.cpu_count() or 1))) as pool:
        seqs = list(pool.map(lambda e: measure_seq(e, root, deadline), entries))
    ncu = find_ncu() if "cuda" in targets else None
    machine["ncu"] = ncu or "not found (CUDA kernel times from events)"
    rows = []
    for entry, seq in zip(entries, seqs):
        name = entry["workload"]
        print(f"[{name}] seq: {seq['status']} {seq.get('detail', '')}", file=sys.stderr, flush=True)
        variants = {}
        for target in targets:
            v = measure_variant(entry, target, root, flags, reps, runs, deadline, ncu)
            variants[target] = v
            shown = (f"kernel {v.get('kernel_ms', float('nan')):.4f} ms ({v.get('kernel_source', '?')}), "
                     f"whole call {v['whole_ms']:.4f} ms {v.get('ncu_error', '')}"
                     if v["status"] == "ok" else f"{v['status']}: {v['detail']}")
            print(f"[{name}] {target}: {shown}", file=sys.stderr, flush=True)
        rows.append({"workload": name, "kernel": entry["kernel"], "sizes": entry["sizes"], "seq": seq,
                     "variants": variants, "anchors": entry["anchors"], "tuning": entry.get("tuning", "none"),
                     "tuned": entry.get("tuned", {})})
    failed = 0
    for row, entry in zip(rows, entries):
        row["vendor"] = measure_vendor(entry, deadline) if vendor else {"status": "skipped", "detail": "--no-vendor"}
        check_row(row)
        failed += sum(v["status"] != "ok" for v in row["variants"].values())
        v = row["vendor"]
        ms = "" if v.get("kernel_ms") is None else f"kernel {v['kernel_ms']:.4f} ms, events {v['event_ms']:.4f} ms"
        print(f"[{row['workload']}] vendor: {v['status']} {v.get('name', '')} {ms} {v.get('detail', '')} "
              f"(reference: {row['reference']})", file=sys.stderr, flush=True)

    record = {"kind": "mdpoly-gpu-results", "mode": manifest["mode"],
              "date": datetime.date.today().isoformat(), "machine": machine,
              "settings": {"reps per run": reps, "runs per variant": runs, "targets": ", ".join(targets),
                           "mdpoly commit": manifest.get("mdpoly_commit", "unknown"),
                           "elapsed_s": f"{time.monotonic() - started:.1f}"},
              "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_results.json").write_text(json.dumps(record, indent=1) + "\n")
    md = render_markdown(record)
    (out / "gpu_results.md").write_text(md)
    print(md)
    print(f"wrote {out / 'gpu_results.json'} and {out / 'gpu_results.md'} "
          f"({time.monotonic() - started:.0f}s)", file=sys.stderr)
    return 1 if failed else 0

# }}}

# {{{ merge (prepared dirs of different targets, e.g. tuned in separate device calls)


def merge(into: Path, other: Path) -> int:
    """Add ``other``'s generated programs (targets ``into`` lacks) to the prepared dir ``into``; 1 on a mismatch.

    Both must be prepared from the same workload definitions (same sizes); per workload, ``other``'s
    generated files, prepare errors and tuning records of the targets ``into`` has not prepared are
    copied over, and the manifest notes both commits."""
    mine = json.loads((into / "manifest.json").read_text())
    theirs = json.loads((other / "manifest.json").read_text())
    if mine["mode"] != theirs["mode"]:
        print(f"cannot merge a {theirs['mode']} preparation into a {mine['mode']} one", file=sys.stderr)
        return 1
    by_name = {e["workload"]: e for e in theirs["workloads"]}
    for entry in mine["workloads"]:
        extra = by_name.get(entry["workload"])
        if extra is None:
            continue
        if extra["sizes"] != entry["sizes"]:
            print(f"{entry['workload']}: sizes differ ({extra['sizes']} vs {entry['sizes']})", file=sys.stderr)
            return 1
        for target, rel in extra.get("generated", {}).items():
            if target in entry["generated"] or target in entry.get("prepare_errors", {}):
                continue
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(other / rel, into / rel)
            entry["generated"][target] = rel
            if target in extra.get("tuned", {}):
                entry.setdefault("tuned", {})[target] = extra["tuned"][target]
        for target, why in extra.get("prepare_errors", {}).items():
            if target not in entry["generated"]:
                entry["prepare_errors"].setdefault(target, why)
        entry["tuning"] = tuning_cell(entry.get("tuned", {}))
    commits = {mine.get("mdpoly_commit", "unknown"), theirs.get("mdpoly_commit", "unknown")}
    mine["mdpoly_commit"] = " + ".join(sorted(commits))
    (into / "manifest.json").write_text(json.dumps(mine, indent=1) + "\n")
    print(f"merged {other} into {into}", file=sys.stderr)
    return 0

# }}}


# {{{ report (here)


def report(json_path: Path, out_dir: Path, suffix: str = "") -> int:
    """``gpu_<date>[_quick][_<suffix>].md``, ``.json`` and ``.png`` in ``out_dir`` from a run's record."""
    from gpu_report import plot, render_markdown

    record = json.loads(json_path.read_text())
    stem = f"gpu_{record.get('date', datetime.date.today().isoformat())}"
    stem += "_quick" if record.get("mode") == "quick" else ""
    stem += f"_{suffix}" if suffix else ""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = plot(record, out_dir / f"{stem}.png")
    md = render_markdown(record) + f"\n![vendor / mdpoly kernel time per workload]({png.name})\n"
    (out_dir / f"{stem}.md").write_text(md)
    if json_path.resolve() != (out_dir / f"{stem}.json").resolve():
        shutil.copy(json_path, out_dir / f"{stem}.json")
    print(f"wrote {out_dir / stem}.md, .json and .png", file=sys.stderr)
    return 0

# }}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=("prepare", "run", "report", "merge"))
    p.add_argument("path", type=Path, help="OUTDIR (prepare, run, merge) or gpu_results.json (report)")
    p.add_argument("source", type=Path, nargs="?", help="merge: the prepared dir whose targets are added to OUTDIR")
    p.add_argument("--quick", action="store_true", help="prepare: small sizes (a smoke run, e.g. on PoCL)")
    p.add_argument("--targets", default=",".join(TARGETS))
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--out", type=Path, default=None,
                   help="run: where the results go (default $OUT, else OUTDIR); report: default benchmarks/results")
    p.add_argument("--reps", type=int, default=20, help="run: timed calls per program run")
    p.add_argument("--runs", type=int, default=3, help="run: program runs per variant")
    p.add_argument("--budget", type=float, default=270.0, help="run: seconds for the whole run")
    p.add_argument("--timeout", type=float, default=120.0, help="run: seconds per build or run step")
    p.add_argument("--no-vendor", action="store_true", help="run: skip the cuBLAS / cuDNN references")
    p.add_argument("--tune-time", type=float, default=0.0,
                   help="prepare: tune each nest this many seconds (on this machine's GPU) instead of --no-tune")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="prepare with --tune-time: seconds for the whole prepare (later nests tune less)")
    p.add_argument("--suffix", default="", help="report: appended to the file names (gpu_<date>_<suffix>.md)")
    ns = p.parse_args(argv)
    targets = tuple(t for t in ns.targets.split(",") if t)
    if set(targets) - set(TARGETS):
        p.error(f"unknown target(s): {', '.join(sorted(set(targets) - set(TARGETS)))}")
    only = {w for w in ns.only.split(",") if w}
    if only - {w.name for w in WORKLOADS}:
        p.error(f"unknown workloads: {', '.join(sorted(only - {w.name for w in WORKLOADS}))}")
    if ns.step == "prepare":
        return prepare(ns.path, ns.quick, targets, only, ns.tune_time, ns.deadline)
    if ns.step == "merge":
        if ns.source is None:
            p.error("merge needs the prepared dir to add: gpu.py merge OUTDIR OTHER")
        return merge(ns.path, ns.source)
    if ns.step == "run":
        out = ns.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else ns.path)
        return run(ns.path.resolve(), out, targets, max(ns.reps, 1), max(ns.runs, 1), ns.budget, ns.timeout,
                   not ns.no_vendor, only)
    return report(ns.path, ns.out or HERE / "results", ns.suffix)


if __name__ == "__main__":
    sys.exit(main())
