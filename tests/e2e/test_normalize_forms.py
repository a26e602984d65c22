"""Differential tests of the normalization passes (``mdpoly.frontend.normalize``) on C as real
programs write it (``normalize_cases/*.c``): index temporaries and clamped selects (3-D heat,
2-D blur), struct members (rmsnorm, axpy, n-body over a struct of arrays, a Jacobi time loop, a
feed-forward block over nested and typedef'd structs),
per-head local pointers (attention), hoisted members under overlapping arguments, and arrays of
structs (``opt[i].call``, ``parts[i].x += ...``, ``s->parts[i].vx``) next to loops bounded by
widened products of sizes (``i < (long)w * h * nc``), clamped neighbours on flat images with a
run-time row length, and calls of pure static helpers (expanded in place).

Each program is built as written (sequential) and through ``mdpoly --all-nests --no-tune``; the
report must list the intended nests as ``transformed``; the OpenMP build runs at 1-4 threads and
must print what the original prints. ``normalize_refusals/refusals.c`` holds the forms the passes
refuse: each nest stays as written, with its located reason, and the output is unchanged. The
GPU forms also run through ``--target opencl`` on the machine's OpenCL device (PoCL), their CUDA
kernels compile for sm_90, and two programs run split over 2 MPI ranks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_harness import build_c, campaign_except, mdpoly_available, run_mdpoly, run_program
from test_opencl_examples import build_opencl, needs_opencl

from mdpoly.differential import compare_outputs

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "normalize_cases"

#: program -> lines of the nests that must be transformed
TRANSFORMED = {
    "heat3d.c": (10, 29),
    "blur2d.c": (8, 17),
    "rmsnorm.c": (24, 29, 34, 40),
    "nbody.c": (15, 34),
    "jacobi_struct.c": (12,),
    "attention.c": (39,),
    "alias_members.c": (18, 23),
    "ffn.c": (36,),
    "heat3d_rt.c": (7,),
    "aos_fields.c": (20, 34, 44, 51, 58, 63),
    "clamped_rows.c": (8, 16),
    "aos_grid.c": (8, 14),
    "inline_helpers.c": (12, 19),
    "c89_locals.c": (12, 37),   # 'int t, e;' at a block's top, each iterator of two sibling loops
    "split_temp.c": (),  # kept: its recurrence is sequential, and no piece of it may lose 'c = 2 * i;'
}

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")


def _transform(source: Path, tmp_path: Path, extra: tuple[str, ...] = ()) -> tuple[Path, dict[int, dict], str]:
    out_c, report = tmp_path / "out.c", tmp_path / "report.json"
    proc = run_mdpoly(source, out_c, {}, extra=["--no-tune", "--report", str(report), *extra])
    nests = {n["line"]: n for n in json.loads(report.read_text())["nests"]}
    return out_c, nests, proc.stderr


@pytest.mark.parametrize("name", sorted(TRANSFORMED))
def test_normalized_program_matches_original(name: str, tmp_path: Path) -> None:
    source = CASES_DIR / name
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c, nests, _err = _transform(source, tmp_path)
    for line in TRANSFORMED[name]:
        assert nests[line]["status"] == "transformed", (name, line, nests[line])
    parallel = build_c(out_c, tmp_path / "par", {}, openmp=True)
    for threads in (1, 2, 3, 4):
        mismatch = compare_outputs(reference, run_program(parallel, threads=threads), rtol=1e-4, atol=1e-4)
        assert mismatch is None, f"{name}, OMP_NUM_THREADS={threads} (out.c in {tmp_path}): {mismatch}"


@pytest.mark.parametrize(("name", "line", "parallel"), [("attention.c", 23, 2), ("heat3d_rt.c", 7, 3),
                                                     ("clamped_rows.c", 8, 2), ("clamped_rows.c", 16, 2)])
def test_flat_multi_stride_nest_is_one_parallel_computation(name: str, line: int, parallel: int,
                                                            tmp_path: Path) -> None:
    """llama2.c's attention (the loop over heads, with per-head pointers into flat buffers) and the
    run-time-size 3-D stencil are each one computation whose outer loops are parallel."""
    _out, nests, _err = _transform(CASES_DIR / name, tmp_path)
    nest = nests[line]
    assert nest["status"] == "transformed", nest
    assert [lp["combine"] for lp in nest["loops"]][:parallel] == ["++"] * parallel, nest["loops"]


def test_hoisted_members_are_loaded_at_the_call(tmp_path: Path) -> None:
    """The generated function takes the members as parameters; the call site reads them once and
    checks the written pointers against the scalar members' own addresses."""
    out_c, _nests, _err = _transform(CASES_DIR / "alias_members.c", tmp_path)
    text = out_c.read_text()
    assert "mdpoly_scale_18((p->n), (p->k), y);" in text, text
    assert "&(p->k)" in text and "(q->dst)" in text


REFUSALS = [
    ("9:21", "the nest writes the struct member 'a->v', which is no scalar", "struct-member-write",
     "        a->sum += *(a->v++);\n"),
    ("17:13", "local pointer 'q' is re-assigned in the nest", "pointer-arithmetic", "            q += i;\n"),
    ("25:9", "index temporary 'c' is read after the nest", "non-affine-subscript", "        c = 2 * i + 1;\n"),
]


def test_refused_forms_stay_as_written(tmp_path: Path) -> None:
    source = HERE / "normalize_refusals" / "refusals.c"
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c, _nests, err = _transform(source, tmp_path)
    text = out_c.read_text()
    for where, message, code, original in REFUSALS:
        assert f"refusals.c:{where}: note: loop nest kept sequential: {message}" in err, (where, err)
        assert any(f"[{code}]" in part.splitlines()[0] for part in err.split(f"refusals.c:{where}:")[1:])
        assert original in text, f"the nest at {where} is not kept as written"
    for threads in (1, 3):
        assert compare_outputs(reference, run_program(build_c(out_c, tmp_path / "par", {}, openmp=True),
                                                      threads=threads)) is None


@needs_opencl
@pytest.mark.parametrize("name", campaign_except(["heat3d.c", "blur2d.c", "rmsnorm.c", "nbody.c", "jacobi_struct.c",
                                                  "attention.c", "alias_members.c", "ffn.c", "inline_helpers.c"],
                                                 "heat3d.c", "rmsnorm.c"))
def test_normalized_program_on_opencl(name: str, tmp_path: Path) -> None:
    source = CASES_DIR / name
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c, nests, _err = _transform(source, tmp_path, ("--target", "opencl"))
    assert "__kernel void" in out_c.read_text()
    for line in TRANSFORMED[name]:
        assert nests[line]["status"] == "transformed", (name, line, nests[line])
    got = run_program(build_opencl(out_c, tmp_path / "cl", {}))
    mismatch = compare_outputs(reference, got, rtol=1e-4, atol=1e-4)
    assert mismatch is None, f"{name} on OpenCL (out.c in {tmp_path}): {mismatch}"


@pytest.mark.parametrize("name", campaign_except(["rmsnorm.c", "attention.c", "nbody.c"]))   # slow under nvcc
def test_normalized_cuda_kernels_compile(name: str, tmp_path: Path) -> None:
    """``--target cuda``: the kernels of the hoisted-member nests compile for sm_90 (no GPU needed)."""
    from cuda_harness import compile_for_sm90, kernel_sources, nvrtc_unavailable
    if nvrtc_unavailable() is not None:
        pytest.skip(str(nvrtc_unavailable()))
    out_c, nests, _err = _transform(CASES_DIR / name, tmp_path, ("--target", "cuda"))
    for line in TRANSFORMED[name]:
        assert nests[line]["status"] == "transformed", (name, line, nests[line])
    sources = kernel_sources(out_c.read_text())
    assert sources, "no embedded kernel source found"
    for kernel, src in sources.items():
        compile_for_sm90(src, kernel, tmp_path)


@pytest.mark.parametrize("name", ["rmsnorm.c", "blur2d.c"])
def test_normalized_program_over_mpi_ranks(name: str, tmp_path: Path) -> None:
    """``--mpi``: the computations over hoisted members and index temporaries split over 2 ranks;
    every rank prints what the sequential original prints."""
    from test_mpi import _mpi_missing, build_mpi, run_ranks
    if _mpi_missing() is not None:
        pytest.skip(str(_mpi_missing()))
    source = CASES_DIR / name
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c, nests, _err = _transform(source, tmp_path, ("--mpi",))
    for line in TRANSFORMED[name]:
        assert nests[line]["status"] == "transformed", (name, line, nests[line])
    outs = run_ranks(build_mpi(out_c, tmp_path / "mpi", {}), 2, tmp_path)
    assert len(outs) == 2
    for rank_out in outs:
        assert compare_outputs(reference, rank_out, rtol=1e-4, atol=1e-4) is None, rank_out


AOS_REFUSALS = [
    ("17:19", "the nest takes the address of the struct member 'a[i].x'", "struct-member-write",
     "        out[i] = &a[i].x;\n"),
    ("27:16", "'g[i][i].y' is an array-of-structs field whose rows are not arrays of a known size",
     "unsupported-statement",
     "        o[i] = g[i][i].y;\n"),
    ("32:9", "'u[i].f' is a member of an array of unions", "unsupported-statement", "        u[i].f = 2.0f * (float)i;\n"),
    ("36:26", "loop bound '((unsigned long) w) * h' is not affine", "non-affine-bound",
     "    for (long i = 0; i < (unsigned long)w * h; i++)\n"),
    ("41:26", "loop bound '((int) w) * h' is not affine", "non-affine-bound",
     "    for (long i = 0; i < (int)w * h; i++)\n"),
    ("51:16", "call to 'scale_of': it is not static, so another definition may replace it at link time",
     "side-effect-call",
     "        o[i] = scale_of(o[i]) + 1.0f;\n"),
    ("56:16", "call to 'biased': it writes the global 'g_bias'", "side-effect-call",
     "        o[i] = biased(o[i]);\n"),
]


def test_array_of_structs_refusals_stay_as_written(tmp_path: Path) -> None:
    """``&A[i].f``, rows through pointers,
    unions, loop bounds whose product wraps (unsigned) in factors too wide for the model or whose cast narrows, and calls of helpers
    that are not static or write a global stay as written,
    located, and the program prints what the original prints."""
    source = HERE / "normalize_refusals" / "aos_refusals.c"
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c, nests, err = _transform(source, tmp_path)
    text = out_c.read_text()
    # a whole struct of scalars stored (``a[i] = s``) and a nested member (``q[i].pos.x``) are
    # modelled member by member, next to the refusals
    assert nests[9]["status"] == "transformed" and nests[21]["status"] == "transformed", (nests[9], nests[21])
    for where, message, code, original in AOS_REFUSALS:
        assert f"aos_refusals.c:{where}: note: loop nest kept sequential: {message}" in err, (where, err)
        assert any(f"[{code}]" in part.splitlines()[0] for part in err.split(f"aos_refusals.c:{where}:")[1:])
        assert original in text, f"the nest at {where} is not kept as written"
    for threads in (1, 3):
        assert compare_outputs(reference, run_program(build_c(out_c, tmp_path / "par", {}, openmp=True),
                                                      threads=threads)) is None


def test_array_of_structs_views_print_members(tmp_path: Path) -> None:
    """The generated functions take each (array, member) view as a pointer to the struct, passed
    the user's array; views of one array are not checked against each other, other pointers are."""
    out_c, _nests, _err = _transform(CASES_DIR / "aos_fields.c", tmp_path)
    text = out_c.read_text()
    assert "Option *mdp_s4_call_opt" in text and "mdp_s4_call_opt[i].call =" in text, text
    assert "mdpoly_drift_51((s->n), (s->dt), (s->parts), (s->parts), (s->parts), (s->parts));" in text
    kick = text.split("static void kick(")[1].split("mdpoly_kick_44(")[0]
    assert "(parts) + ((long) n)" in kick and "(ax + 0)" in kick  # whole structs of 'parts' against 'ax'
    assert "mdp_p_h_nc_w" in text and "((long) w) * h * nc" in text  # the widened product bound


@pytest.mark.parametrize(("extra", "code"), [(("--target", "opencl"), "gpu-struct-field"),
                                             (("--target", "cuda"), "gpu-struct-field"),
                                             (("--mpi",), "mpi-struct-field-output")])
def test_array_of_structs_off_openmp(extra: tuple[str, ...], code: str, tmp_path: Path) -> None:
    """GPU kernels do not take array-of-structs fields (the struct is not declared in the kernel
    source): the nest is kept, located; over MPI ranks a written member is not split."""
    _out, nests, err = _transform(CASES_DIR / "aos_fields.c", tmp_path, extra)
    assert any(f"[{code}]" in part.splitlines()[0] for part in err.split("aos_fields.c:20:5:")[1:]), err
    assert nests[58]["status"] == "transformed", nests[58]  # the widened product bound has no struct


CLAMPED_REFUSALS = [
    (6, "(x + 1 in [0, w)) fails"),
    (12, "(x - 1 in [0, w)) fails"),
    (18, "the subscripts of 'a' viewed as a[][w]"),
]


def test_out_of_row_reads_not_excluded_stay_rowwise(tmp_path: Path) -> None:
    """A read that leaves its row where it is evaluated (no select, or the select takes it
    exactly there), or one of an array the nest writes, gets no 2-D view: the rows loop stays
    sequential (each row one computation), with the reason in the report; same output."""
    source = HERE / "normalize_refusals" / "clamped_refusals.c"
    reference = run_program(build_c(source, tmp_path / "orig", {}, openmp=False))
    out_c, nests, _err = _transform(source, tmp_path)
    for line, message in CLAMPED_REFUSALS:
        host = nests[line]["schedule"][0]
        assert host["kind"] == "host-loop" and host["iterator"] == "y", nests[line]
        assert message in host["reason"], (line, host["reason"])
    for threads in (1, 3):
        got = run_program(build_c(out_c, tmp_path / "par", {}, openmp=True), threads=threads)
        assert compare_outputs(reference, got) is None


@pytest.mark.parametrize("target", ["opencl", "cuda"])
def test_guarded_reads_stay_off_gpu(target: str, tmp_path: Path) -> None:
    """GPU kernels may read inputs ahead of a select (``__local`` caches): such nests run the
    OpenMP target's code on the host, and the remark says why the device does not run them."""
    _out, _nests, err = _transform(CASES_DIR / "clamped_rows.c", tmp_path, ("--target", target))
    for where in ("8:5", "16:5"):
        assert any("[gpu-guarded-read]" in part.splitlines()[0] for part in err.split(f"clamped_rows.c:{where}:")[1:]), err
