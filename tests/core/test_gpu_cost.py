"""The GPU half of the cost model: ``DeviceInputs`` -> ``DeviceDecision`` (``decide_device``,
``decide_file``), the estimates of a nest (``mdpoly.hybrid.device_inputs``) and the calibration's
overrides (``$MDPOLY_COST_CALIBRATION``)."""

from __future__ import annotations

import json
from pathlib import Path

import mdh_examples as E
import pytest

from mdpoly.cost_model import (
    CALIBRATION,
    Calibration,
    DeviceInputs,
    calibration,
    decide_device,
    decide_file,
    device_estimate,
    parse_calibration,
)
from mdpoly.frontend.analyze import analyze_file
from mdpoly.hybrid import device_inputs, plan_file, trip_range
from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.nest import NestAnalysis, SourceSpan
from mdpoly.options import Options


def _kernel(seq_s: float, mbytes: float = 24.0, launches: int = 1) -> DeviceInputs:
    """A kernel of ``seq_s`` seconds as written (at 0.1 ns an operation), moving ``mbytes`` MB."""
    ops = int(seq_s * 1e9 / CALIBRATION.ns_per_op)
    seq = ops * CALIBRATION.ns_per_op
    return DeviceInputs(target="cuda", ops=ops, device_bytes=int(mbytes * 1e6), transfer_bytes=int(mbytes * 1e6),
                        launches=launches, host_ns=seq / 2 + 1000, seq_ns=seq)


def test_a_30ms_kernel_stays_on_the_host() -> None:
    d = decide_device(_kernel(0.030))
    assert d.choice == "host" and not d.on_device
    assert d.setup_ns == CALIBRATION.gpu_setup_ns
    # the remark's numbers: device with set-up against the host's OpenMP estimate and the sequential one
    assert d.reason.startswith("device 203 ms (200 ms set-up) vs host 15 ms (sequential 30 ms)"), d.reason
    assert d.text().startswith("device: host: device ")
    rep = d.to_report()
    assert rep["choice"] == "host" and rep["inputs"]["ops"] == 300_000_000  # type: ignore[index]


def test_a_large_gemm_goes_to_the_device() -> None:
    # a 4096^3 double gemm: 2 * 4096^3 operations, three 134 MB matrices
    mdh = E.matmul(4096, 4096, 4096, "double")
    nest = _nest(mdh)
    inputs = device_inputs(nest, {}, "cuda", CALIBRATION)
    assert inputs is not None and inputs.launches == 2   # the reduction's combine kernel
    assert inputs.transfer_bytes == 3 * 4096 * 4096 * 8
    d = decide_device(inputs)
    assert d.choice == "device", d.reason
    compute, transfer, launch, total = device_estimate(inputs)
    assert total == pytest.approx(compute + transfer + launch)
    assert d.host_ns > 10 * (d.device_ns + d.setup_ns)


def test_transfers_can_make_the_device_lose() -> None:
    # 1 s of work (0.5 s OpenMP), but 4 GB of copies (0.4 s at 10 GB/s) plus the set-up
    assert decide_device(_kernel(1.0, mbytes=4000)).choice == "host"
    assert decide_device(_kernel(1.0, mbytes=24)).choice == "device"


def test_the_set_up_is_charged_once_per_file() -> None:
    # each alone: 0.3 s as written, 0.15 s OpenMP: its device estimate of a few ms plus 0.2 s of
    # set-up loses; the three together repay one set-up
    one = _kernel(0.3)
    assert decide_device(one).choice == "host"
    both = decide_file([one, one, one, None])
    assert [d.choice if d else None for d in both] == ["device", "device", "device", None]
    assert "3 nests sharing the set-up" in both[0].reason  # type: ignore[union-attr]
    (alone,) = decide_file([one])
    assert alone is not None and alone.choice == "host" and "together" in alone.reason
    # a tiny nest beside big ones stays on the host without changing their choice
    big, tiny = _kernel(5.0), _kernel(0.001)
    got = decide_file([big, tiny])
    assert [d.choice for d in got if d] == ["device", "host"]


def test_calibration_overrides() -> None:
    assert parse_calibration("") == ()
    assert parse_calibration("gpu_setup_ns=0, host_threads=16") == (("gpu_setup_ns", 0.0), ("host_threads", 16.0))
    cal = calibration(parse_calibration('{"gpu_setup_ns": 0}'))
    assert cal.gpu_setup_ns == 0.0 and cal.ns_per_op == CALIBRATION.ns_per_op
    assert calibration((("host_threads", 16.0),)).host_threads == 16
    assert isinstance(calibration((("host_threads", 16.0),)).host_threads, int)
    with pytest.raises(ValueError, match="unknown cost-model constant 'gpu_magic'"):
        parse_calibration("gpu_magic=1")
    with pytest.raises(ValueError, match="no name=value"):
        parse_calibration("gpu_setup_ns=1,oops")
    # without the set-up, the 30 ms kernel pays on the device; gpu_min_speedup 0 sends everything there
    assert decide_device(_kernel(0.030), calibration(parse_calibration("gpu_setup_ns=0"))).choice == "device"
    assert decide_device(_kernel(0.0001), Calibration(gpu_min_speedup=0.0)).choice == "device"


def test_calibration_file(tmp_path: Path) -> None:
    f = tmp_path / "cal.json"
    f.write_text(json.dumps({"gpu_setup_ns": 5e7, "gpu_transfer_ns_per_byte": 0.04}))
    assert dict(parse_calibration(str(f))) == {"gpu_setup_ns": 5e7, "gpu_transfer_ns_per_byte": 0.04}
    with pytest.raises(ValueError, match="cannot read"):
        parse_calibration(str(tmp_path / "missing.json"))


@pytest.mark.parametrize(("header", "env", "want"), [
    ("for (k = 0; k < n; k++)", {"n": 10}, (10, 4.5)),
    ("for (int t = 1; t <= tsteps; t++)", {"tsteps": 4}, (4, 2.5)),
    ("for (i = n - 1; i >= 0; i--)", {"n": 5}, (5, 2.0)),
    ("for (i = 0; i < 2 * n; i += 4)", {"n": 8}, (4, 6.0)),
    ("for (k = 0; k < m; k++)", {"n": 10}, None),    # m unknown
    ("for (k = 0; k < n; k = f(k))", {"n": 10}, None),
])
def test_trip_range(header: str, env: dict[str, float], want: tuple[int, float] | None) -> None:
    assert trip_range(header, env) == want


LU = """
#define N 600
void kernel_lu(int n, double A[N][N]) {
  int i, j, k;
  for (k = 0; k < n; k++) {
    for (i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] = A[i][j] - A[i][k] * A[k][j];
  }
}
static double A[N][N];
int main(void) { kernel_lu(N, A); return 0; }
"""


def _analysis(tmp_path: Path, text: str) -> tuple[NestAnalysis, ...]:
    src = tmp_path / "in.c"
    src.write_text(text)
    return analyze_file(str(src), Options()).nests


def test_a_host_loop_counts_every_call_and_copies_once(tmp_path: Path) -> None:
    (nest,) = [n for n in _analysis(tmp_path, LU) if n.function == "kernel_lu"]
    assert dict(nest.host_sizes) == {"n": 600}
    d = device_inputs(nest, {}, "cuda", CALIBRATION)
    assert d is not None
    # two launches per k; the matrix in and out once (resident over the loop), no host statement
    assert d.launches == 2 * 600 and d.transfer_bytes == 2 * 600 * 600 * 8 and d.host_syncs == 0
    # the trailing update's work, estimated at the middle k: 600 * (599.5-ish)^2 * 2 operations
    assert 0.9 * 2 * 600 ** 3 / 4 < d.ops < 1.1 * 2 * 600 ** 3 / 4


def test_a_host_statement_in_the_loop_forces_copies(tmp_path: Path) -> None:
    text = LU.replace("  for (k = 0; k < n; k++) {\n", "  for (k = 0; k < n; k++) {\n    A[k][k] = A[k][k] + 1.0;\n")
    (nest,) = [n for n in _analysis(tmp_path, text) if n.function == "kernel_lu"]
    d = device_inputs(nest, {}, "cuda", CALIBRATION)
    assert d is not None and d.host_syncs == 600
    assert d.transfer_bytes == 2 * 600 * 600 * 8 + 600 * 2 * 600 * 600 * 8


def test_plan_file_weighs_only_what_it_may(tmp_path: Path) -> None:
    nests = tuple(n for n in _analysis(tmp_path, LU) if n.function == "kernel_lu")
    assert [d.choice if d else None for d in plan_file(nests, Options(target="cuda"), "cuda", CALIBRATION)] == ["host"]
    assert plan_file(nests, Options(target="openmp"), "openmp", CALIBRATION) == [None]
    assert plan_file(nests, Options(target="cuda", all_nests=True), "cuda", CALIBRATION) == [None]
    forced = Calibration(gpu_min_speedup=0.0)
    assert [d.choice if d else None for d in plan_file(nests, Options(target="cuda"), "cuda", forced)] == ["device"]


def _nest(mdh: MdhExpr) -> NestAnalysis:
    loc = E.LOC
    return NestAnalysis(loc=loc, span=SourceSpan(loc, 1, 1, 1), function="f", function_line=1, loops=(), mdh=mdh)


def test_sizes_known_at_run_time_only_are_not_weighed() -> None:
    mdh = E.matmul_symbolic()
    assert device_inputs(_nest(mdh), {}, "cuda", CALIBRATION) is None
    names = {n for d in mdh.dims for n in d.extent.names()}
    assert device_inputs(_nest(mdh), dict.fromkeys(names, 64), "cuda", CALIBRATION) is not None


def test_parallel_loop_around_a_body_as_written_is_weighed_for_the_device(tmp_path: Path) -> None:
    # a parallel loop around a body as written (a private temporary): the GPU targets run it with
    # one thread per row, so the file's plan weighs it like a computation (a launch, its arrays)
    text = """
#define N 300
void rows(int n, double A[N][N], double out[N]) {
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      s = s * 0.5 + A[i][j];
    out[i] = s;
  }
}
static double A[N][N], out[N];
int main(void) { rows(N, A, out); return 0; }
"""
    nests = tuple(n for n in _analysis(tmp_path, text) if n.function == "rows")
    assert len(nests) == 1 and nests[0].schedule is not None
    inputs = device_inputs(nests[0], {"n": 300}, "cuda", CALIBRATION)
    assert inputs is not None and inputs.launches == 1, inputs
    assert inputs.transfer_bytes == (300 * 300 + 300) * 8 and inputs.ops >= 2 * 300 * 300, inputs
    (d,) = decide_file([inputs], Calibration(gpu_min_speedup=0.0))   # the device when forced
    assert d is not None and d.choice == "device", d
    (d,) = decide_file([inputs], CALIBRATION)   # 90000 operations do not repay the set-up
    assert d is not None and d.choice == "host", d


_SWEEP = """
#define N 300
void sweep(int n, double A[N][N]) {
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++)
      A[i][j] = 0.5 * (A[i - 1][j] + A[i][j - 1]);
}
static double A[N][N];
int main(void) { sweep(N, A); return 0; }
"""


def test_wavefront_weighed_by_its_launches(tmp_path: Path) -> None:
    # a tiled wavefront of 5 x 5 tiles of 64 x 64: 9 launches
    nests = tuple(n for n in _analysis(tmp_path, _SWEEP) if n.function == "sweep")
    assert len(nests) == 1 and nests[0].schedule is not None
    inputs = device_inputs(nests[0], {}, "cuda", CALIBRATION)
    assert inputs is not None and inputs.launches == 9 and inputs.ops == 2 * 299 * 299
    # a work-group per tile: 127 inner wavefronts (i+j over 64 x 64) of 64 candidates on 64 threads
    assert inputs.path_ops == 9 * 127 * 2 and inputs.barriers == 9 * 127 and inputs.transfer_bytes == 2 * 300 * 300 * 8
    one = device_inputs(nests[0], {}, "cuda", Calibration(gpu_barrier_ns=1e12))   # a thread per tile
    assert one is not None and one.path_ops == 9 * 2 * 64 * 64 and one.barriers == 0
    (d,) = decide_file([inputs], CALIBRATION)
    assert d is not None and d.choice == "host", d   # a small sweep: the set-up alone loses
    (d,) = decide_file([inputs], Calibration(gpu_min_speedup=0.0))
    assert d is not None and d.choice == "device"


def test_nothing_on_the_device_stays_on_the_host(tmp_path: Path) -> None:
    # a tiled wavefront over an array without a first extent: the GPU targets cannot run it, the
    # OpenMP target runs it in parallel
    text = _SWEEP.replace("double A[N][N]) {", "double (*A)[N]) {")
    nests = tuple(n for n in _analysis(tmp_path, text) if n.function == "sweep")
    assert len(nests) == 1 and nests[0].schedule is not None
    inputs = device_inputs(nests[0], {}, "cuda", CALIBRATION)
    assert inputs is not None and inputs.launches == 0
    (d,) = decide_file([inputs], Calibration(gpu_min_speedup=0.0))   # even when the device is forced
    assert d is not None and d.choice == "host" and d.reason.startswith("nothing of it would run on the device")


def test_run_time_guard_charges_the_copies() -> None:
    from mdpoly.cost_model import cost_inputs, decide
    mm = E.matmul_symbolic()
    d = decide(cost_inputs(mm, {}, "cuda"))
    assert d.choice == "guarded" and d.guard is not None and " && " in d.guard
    assert d.inputs.large_bytes_per_point is not None and d.inputs.large_bytes_per_point < 1e-3
    # a stencil: a few operations per point for as many bytes copied, at any size: the device
    # never repays a call's copies
    stencil = E.stencil3d_symbolic()
    got = decide(cost_inputs(stencil, {}, "opencl"))
    assert got.choice == "sequential" and "never repays the copies" in got.reason, got
    # inside host loops no guard, no copies charged (the data may stay on the device)
    assert decide(cost_inputs(stencil, {}, "opencl", in_host_loop=True)).choice == "parallel"


def test_arrays_written_in_a_resident_loop_go_back_once(tmp_path: Path) -> None:
    text = """
#define T 50
#define N 1000
double A[N], B[N];
void f(void) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++) B[i] = A[i-1] + A[i+1];
    for (int i = 1; i < N - 1; i++) A[i] = B[i-1] + B[i+1];
  }
}
"""
    (nest,) = _analysis(tmp_path, text)
    d = device_inputs(nest, {}, "cuda", CALIBRATION)
    # macros are expanded in the host loop's header; A and B both written: each in and out once
    assert d is not None and d.launches == 100 and d.calls == 100
    assert d.transfer_bytes == 2 * 8000 + 2 * 8000
