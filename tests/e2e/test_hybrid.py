"""Hybrid GPU output (``mdpoly.hybrid``): C -> ``--target opencl`` output in which the nests the
device would lose on keep the OpenMP target's code, with the reason in the report and a remark.

Each program is built as the README documents GPU outputs (``cc -O2 out.c -lOpenCL -lm``, plus
``-fopenmp`` for the OpenMP code inside; also through ``mdpoly-cc``), run on PoCL, and must print
what the sequential original prints at 1-3 threads. The device's losses are forced through the
calibration (``MDPOLY_COST_CALIBRATION``) or come from its default set-up cost.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from e2e_harness import (
    THREAD_COUNTS,
    build_c,
    c_compiler,
    child_env,
    mdpoly_command,
    run_program,
    run_step,
    write_cc_shim,
)
from test_opencl_examples import opencl_unavailable

#: A tiny nest (16 elements) and a large one (a 160^3 matrix product) in one file.
TWO = r"""
#include <stdio.h>
#define N 160
#define T 16
static double A[N][N], B[N][N], C[N][N], v[T];
void tiny(double *x) {
  for (int i = 0; i < T; i++)
    x[i] = x[i] * 0.5 + i;
}
void large(double a[N][N], double b[N][N], double c[N][N]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        c[i][j] += a[i][k] * b[k][j];
}
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { A[i][j] = (i * 3 + j) % 7 - 3.0; B[i][j] = (i + 2 * j) % 5 * 0.5; C[i][j] = 0; }
  for (int i = 0; i < T; i++) v[i] = i;
  tiny(v);
  large(A, B, C);
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += C[i][j] * (i + 1) - j;
  for (int i = 0; i < T; i++) s += v[i];
  printf("%.17g\n", s);
  return 0;
}
"""

#: A time loop over two sweeps: a scheduled nest, far too small to repay the device's set-up.
STENCIL = r"""
#include <stdio.h>
#define N 100000
#define STEPS 10
static double A[N], B[N];
void sweep(int n, int steps, double *a, double *b) {
  for (int t = 0; t < steps; t++) {
    for (int i = 1; i < n - 1; i++)
      b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
    for (int i = 1; i < n - 1; i++)
      a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3.0;
  }
}
int main(void) {
  for (int i = 0; i < N; i++) { A[i] = (i % 17) * 0.25; B[i] = 0; }
  sweep(N, STEPS, A, B);
  double s = 0;
  for (int i = 0; i < N; i++) s += A[i] * (i % 5 + 1) + B[i];
  printf("%.12g\n", s);   /* main's sum is an OpenMP reduction too */
  return 0;
}
"""


@pytest.fixture(scope="module")
def opencl() -> None:
    why = opencl_unavailable()
    if why is not None:
        pytest.skip(why)


def _generate(tmp_path: Path, text: str, calibration: str = "") -> tuple[Path, dict, str]:
    src = tmp_path / "prog.c"
    src.write_text(text)
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    env = child_env(MDPOLY_COST_CALIBRATION=calibration)
    proc = run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "opencl", "--no-tune",
                     "--report", str(report)], env=env)
    return out_c, json.loads(report.read_text()), proc.stderr


def _by_function(report: dict, source: str) -> dict[str, dict]:
    lines = source.splitlines()
    out = {}
    for n in report["nests"]:
        for k in range(n["line"] - 1, -1, -1):   # the function the nest's line is in
            if lines[k].startswith(("void ", "int main")):
                out.setdefault(lines[k].split()[1].split("(")[0], n)
                break
    return out


def _check_runs(tmp_path: Path, src_text: str, out_c: Path) -> None:
    src = tmp_path / "prog.c"
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    plain = tmp_path / "plain"   # the README's GPU build: the OpenMP code runs on one thread
    run_step([c_compiler(), "-O2", str(out_c), "-o", str(plain), "-lOpenCL", "-lm"])
    assert run_program(plain) == reference
    omp = tmp_path / "omp"
    run_step([c_compiler(), "-O2", "-fopenmp", str(out_c), "-o", str(omp), "-lOpenCL", "-lm"])
    for t in THREAD_COUNTS:
        assert run_program(omp, threads=t) == reference, f"{t} threads; out.c kept in {tmp_path}"


def test_tiny_nest_on_the_host_large_nest_on_the_device(tmp_path: Path, opencl: None) -> None:
    # no set-up cost: the matrix product repays its launch and copies, the 16 elements do not
    out_c, report, stderr = _generate(tmp_path, TWO, "gpu_setup_ns=0")
    nests = _by_function(report, TWO)
    tiny, large = nests["tiny"], nests["large"]
    assert large["status"] == "transformed" and large["target"] == "opencl"
    assert large["cost"]["device"]["choice"] == "device"
    # the OpenMP target's own decision on the tiny nest: kept as written, and why not the device
    assert tiny["cost"]["device"]["choice"] == "host"
    assert tiny["status"] == "kept" and tiny["code"] == "too-little-work"
    assert "on the host, not the device: device " in tiny["reason"]
    assert "device: device: device " in stderr and "on the host, not the device" in stderr
    text = out_c.read_text()
    assert "mdp_cl_kernel(" in text
    _check_runs(tmp_path, TWO, out_c)


def test_every_nest_on_the_host_initializes_no_gpu_runtime(tmp_path: Path, opencl: None) -> None:
    # the default set-up (0.2 s) is more than the whole file's work: OpenMP code, no OpenCL at all
    out_c, report, stderr = _generate(tmp_path, TWO)
    nests = _by_function(report, TWO)
    large = nests["large"]
    assert large["status"] == "transformed" and large["target"] == "openmp"
    dev = large["cost"]["device"]
    assert dev["choice"] == "host" and dev["setup_ns"] == 200e6 and dev["host_ns"] < dev["device_ns"] + dev["setup_ns"]
    assert dev["reason"].startswith("device 2") and "(200 ms set-up) vs host " in dev["reason"]
    assert "; device: host: device 2" in stderr   # the remark of the parallelized nest
    text = out_c.read_text()
    assert "mdp_cl_" not in text and "clCreateContext" not in text and "#pragma omp parallel for" in text
    _check_runs(tmp_path, TWO, out_c)


def test_scheduled_nest_on_the_host(tmp_path: Path, opencl: None) -> None:
    out_c, report, stderr = _generate(tmp_path, STENCIL)
    (nest,) = report["nests"][:1]
    assert nest["cost"]["device"]["choice"] == "host"
    assert nest["cost"]["device"]["inputs"]["launches"] == 2 * 10
    assert all(p.get("target") in ("openmp", None) for p in nest["schedule"][0]["body"] if p["kind"] == "computation")
    assert "loop nest scheduled: t:" in stderr and "device: host: device " in stderr
    assert "mdp_cl_" not in out_c.read_text()
    _check_runs(tmp_path, STENCIL, out_c)


def test_forced_device_keeps_the_gpu_code(tmp_path: Path, opencl: None) -> None:
    out_c, report, _ = _generate(tmp_path, STENCIL, "gpu_min_speedup=0")
    (nest,) = report["nests"][:1]
    assert nest["cost"]["device"]["choice"] == "device" and nest["target"] == "opencl"
    assert "mdp_cl_kernel(" in out_c.read_text()
    _check_runs(tmp_path, STENCIL, out_c)


ROWS = r"""
#include <stdio.h>
#include <stdlib.h>
void row_argmax(int rows, int cols, const float *p, int *pred) {
  for (int r = 0; r < rows; r++) {
    int best = 0;
    for (int c = 1; c < cols; c++)
      if (p[r * cols + c] > p[r * cols + best]) best = c;
    pred[r] = best;
  }
}
int main(int argc, char **argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 300, cols = argc > 2 ? atoi(argv[2]) : 10;
  float *p = malloc(sizeof(float) * rows * cols);
  int *pred = malloc(sizeof(int) * rows);
  for (int i = 0; i < rows * cols; i++) p[i] = (float)((i * 7) % 11);
  row_argmax(rows, cols, p, pred);
  long s = 0;
  for (int r = 0; r < rows; r++) s += (long)pred[r] * (r % 5 + 1);
  printf("%ld\n", s);
  return 0;
}
"""


def test_run_time_sized_loop_around_a_body_on_the_host(tmp_path: Path, opencl: None) -> None:
    """A parallel loop around a body as written whose sizes are known only at run time, in no host
    loop: no per-call guard would weigh its launch and copies (nor the runtime's set-up), so the
    OpenMP code runs it; no GPU runtime is started."""
    out_c, report, stderr = _generate(tmp_path, ROWS)
    nest = _by_function(report, ROWS)["row_argmax"]
    assert nest["status"] == "transformed" and nest["target"] == "openmp", nest
    assert nest["cost"]["device"]["choice"] == "host"
    assert "no run-time guard weighs their launches and copies" in nest["cost"]["device"]["reason"]
    assert "device: host: its parallel loops around bodies as written have sizes known at run time only" in stderr
    text = out_c.read_text()
    assert "mdp_cl_" not in text and "#pragma omp parallel for" in text
    _check_runs(tmp_path, ROWS, out_c)


def test_bad_calibration_is_a_usage_error(tmp_path: Path) -> None:
    src = tmp_path / "prog.c"
    src.write_text(STENCIL)
    proc = subprocess.run([*mdpoly_command(), str(src), "-o", str(tmp_path / "out.c"), "--target", "opencl"],
                          env=child_env(MDPOLY_COST_CALIBRATION="gpu_magic=3"), capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown cost-model constant 'gpu_magic'" in proc.stderr


def test_mdpoly_cc_builds_the_hybrid_output_with_openmp(tmp_path: Path, opencl: None) -> None:
    src = tmp_path / "prog.c"
    src.write_text(TWO)
    shim = write_cc_shim(tmp_path)
    exe = tmp_path / "prog"
    run_step([str(shim), "--target", "opencl", "-q", "--", "-O2", str(src), "-o", str(exe), "-lm"], env=child_env())
    # compiled with -fopenmp: the matrix product's OpenMP loop calls libgomp
    nm = run_step(["nm", str(exe)]).stdout
    assert "GOMP_parallel" in nm
    reference = run_program(build_c(src, tmp_path / "orig", {}, openmp=False))
    assert run_program(exe, threads=2) == reference
    # separate compile and link steps: the link adds -fopenmp for a GPU target
    obj = tmp_path / "prog.o"
    run_step([str(shim), "--target", "opencl", "-q", "--", "-O2", "-c", str(src), "-o", str(obj)], env=child_env())
    run_step([str(shim), "--target", "opencl", "--", str(obj), "-o", str(tmp_path / "prog2"), "-lm"], env=child_env())
    assert run_program(tmp_path / "prog2", threads=2) == reference


def test_cuda_hybrid_output_compiles(tmp_path: Path) -> None:
    """``--target cuda``: the tiny nest's OpenMP code and the large nest's CUDA host code compile
    together (warnings are errors, with and without -fopenmp; where a toolkit with NVRTC is
    installed); a file whose nests all stay on the host has no CUDA runtime in it."""
    from cuda_harness import kernel_sources, toolkit_unavailable

    from mdpoly.cuda_toolkit import find_cuda
    src = tmp_path / "prog.c"
    src.write_text(TWO)
    why = toolkit_unavailable()
    for calibration, device in (("gpu_setup_ns=0", True), ("", False)):
        out_c, report = tmp_path / f"out{int(device)}.c", tmp_path / f"r{int(device)}.json"
        run_step([*mdpoly_command(), str(src), "-o", str(out_c), "--target", "cuda", "--no-tune", "--report",
                  str(report)], env=child_env(MDPOLY_COST_CALIBRATION=calibration))
        text = out_c.read_text()
        assert ("cuLaunchKernel" in text) == device and ("MDP_CUDA_RUNTIME" in text) == device
        assert bool(kernel_sources(text)) == device
        targets = {n["target"] for n in json.loads(report.read_text())["nests"] if n["status"] == "transformed"}
        assert targets == ({"cuda", "openmp"} if device else {"openmp"})
        if why is not None and device:
            continue   # the CUDA host code needs the toolkit's headers (cuda.h, nvrtc.h)
        kit = find_cuda()
        flags = kit.compile_flags() if kit is not None and device else ()
        for omp in ([], ["-fopenmp"]):
            run_step([c_compiler(), "-O2", "-Wall", "-Werror", "-Wno-unknown-pragmas", *omp, *flags,
                      "-c", str(out_c), "-o", str(tmp_path / "out.o")])
