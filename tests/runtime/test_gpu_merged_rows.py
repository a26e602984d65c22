"""Copies of merged rows (``copy_box``) and whole reduction windows (issue 13, first-layer convolutions).

An NHWC convolution's input box spans the whole channel extent, so for fixed (n, h) its width x
channel part is one contiguous run: the copy walks it as one row, in vectors aligned in
``__global`` memory where the row is not a multiple of the width (the row's ends partial). Its
KRSC weights over the whole 3 x 3 x C window are one row per output channel, or one row for all
of them. Tiny reduction windows (several dims of at most 16 points) are one tile by default.

Differential on PoCL against numpy: strided (2) and unstrided convolutions with 3 and 4 channels,
odd sizes (partial tiles, rows of odd length so that most rows start unaligned), with and without
the prefetch and with float2 copies; GEMV-shaped MatMuls, whose GPU default is one kernel (work-items
along the reduction combined in ``__local`` memory, no partials). The plan check on a merged view;
the CUDA spelling compiled for sm_90."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests" / "core", ROOT / "tests" / "e2e", ROOT / "tests" / "runtime", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import mdh_examples as ex  # noqa: E402
from mdh_examples import LOC, A, dim, idx  # noqa: E402
from test_gpu_prefetch import _nvrtc_reason  # noqa: E402
from test_opencl_runner import needs_device, run_plan  # noqa: E402

from mdpoly.backends.cuda import CUDA_CAPS  # noqa: E402
from mdpoly.backends.cuda import kernel_source as cuda_source  # noqa: E402
from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.backends.opencl import kernel_source as opencl_source  # noqa: E402
from mdpoly.diagnostics import CompilerBug  # noqa: E402
from mdpoly.ir.mdh import Access, Buffer, Combine, MdhExpr, OutputWrite, ScalarFunction  # noqa: E402
from mdpoly.lower.gpu import lower_gpu  # noqa: E402
from mdpoly.lower.gpu_defaults import default_gpu_params  # noqa: E402
from mdpoly.lower.gpu_params import GpuParams, copy_box, gpu_violations  # noqa: E402
from mdpoly.lower.kernel_checks import check_kernel_plan  # noqa: E402


def strided_mcc(n: int, p: int, q: int, k: int, c: int, r: int, s: int, st: int, extra: int = 0) -> MdhExpr:
    """``out[n][p][q][k] += in[n][p*st+r][q*st+s][c] * w[k][r][s][c]`` (NHWC / KRSC, VALID), the input
    ``extra`` rows and columns larger than the window reads (ResNet-50's 230 x 230)."""
    red = Combine.ADD
    ih, iw = (p - 1) * st + r + extra, (q - 1) * st + s + extra
    return MdhExpr(
        name="mdp_smcc", loc=LOC,
        dims=(dim("n", n), dim("p", p), dim("q", q), dim("k", k), dim("r", r, red), dim("s", s, red), dim("c", c, red)),
        buffers=(Buffer("in", "float", (str(n), str(ih), str(iw), str(c)), "array"),
                 Buffer("w", "float", (str(k), str(r), str(s), str(c)), "array"),
                 Buffer("out", "float", (str(n), str(p), str(q), str(k)), "array", written=True)),
        inputs=(Access("in", (A({"n": 1}), A({"p": st, "r": 1}), A({"q": st, "s": 1}), A({"c": 1}))),
                Access("w", idx("k", "r", "s", "c"))),
        outputs=(OutputWrite(Access("out", idx("n", "p", "q", "k")), "float", "accumulate"),),
        f=ScalarFunction(("a", "b"), ("a * b",)),
    )


def check_strided(mdh: MdhExpr, params: GpuParams, seed: int) -> None:
    """``params``'s plan of ``mdh`` (a ``strided_mcc``) on random data equals numpy's strided window sum."""
    n, p, q, k, r, s, c = (d.static_extent for d in mdh.dims)
    assert None not in (n, p, q, k, r, s, c)
    st = mdh.inputs[0].index[1].terms[0][1]
    shape_in = tuple(int(x) for x in mdh.buffer("in").shape)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape_in).astype(np.float32)
    w = rng.standard_normal((k, r, s, c)).astype(np.float32)   # type: ignore[misc]
    out = rng.standard_normal((n, p, q, k)).astype(np.float32)   # type: ignore[misc]
    m = run_plan(mdh, params, {"in": x, "w": w, "out": out})
    ref = out.astype(np.float64).copy()
    for dr in range(r):   # type: ignore[arg-type]
        for ds in range(s):   # type: ignore[arg-type]
            win = x[:, dr:dr + st * (p - 1) + 1:st, ds:ds + st * (q - 1) + 1:st, :].astype(np.float64)  # type: ignore[operator]
            ref += np.einsum("npqc,kc->npqk", win, w[:, dr, ds, :])
    assert np.allclose(m.outputs["out"].reshape(n, p, q, k), ref, rtol=1e-4, atol=1e-4)   # type: ignore[arg-type]


CONVS = [  # (n, p, q, k, c, r, s, stride, extra)
    (2, 5, 7, 6, 3, 3, 3, 2, 1),     # MobileNet-like: stride 2, 3 channels, an unread extra row and column
    (1, 6, 9, 5, 3, 7, 7, 2, 1),     # ResNet-50-like 7 x 7 window
    (2, 5, 11, 6, 3, 3, 3, 1, 0),    # VGG-like: stride 1
    (1, 7, 5, 9, 4, 3, 3, 2, 0),     # 4 channels
]


@needs_device
@pytest.mark.parametrize("n,p,q,k,c,r,s,st,extra", CONVS)
def test_default_whole_window_merged_rows_match_numpy(n, p, q, k, c, r, s, st, extra) -> None:  # type: ignore[no-untyped-def]
    mdh = strided_mcc(n, p, q, k, c, r, s, st, extra)
    params = default_gpu_params(mdh, OPENCL_CAPS)
    assert params.kt[4:] == (r, s, c) and params.gvec == 4        # the whole window, vector copies
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None
    x, wt = plan.tiles
    assert len(x.box) == 3 and x.box[-1] % c == 0 and x.gvec == 4   # width x channels: one row
    assert wt.box == (params.tile(mdh, 3) * r * s * c,) or len(wt.box) == 2
    check_strided(mdh, params, seed=n * 100 + q)


@needs_device
@pytest.mark.parametrize("gvec,prefetch,kt", [(4, 1, (3, 1, 3)), (2, 0, (3, 3, 3)), (4, 1, (1, 3, 3)), (2, 1, (2, 2, 3))])
def test_merged_rows_with_prefetch_and_float2_match_numpy(gvec: int, prefetch: int, kt: tuple[int, ...]) -> None:
    mdh = strided_mcc(2, 5, 7, 6, 3, 3, 3, 2, 1)
    params = GpuParams((1, 1, 4, 8, 1, 1, 1), (1, 1, 2, 1, 1, 1, 1), (0, 0, 0, 0, 1, 1, 1),
                       ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, *kt), (1, 1), prefetch=prefetch, gvec=gvec)
    assert gpu_violations(mdh, params, OPENCL_CAPS) == []
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None and plan.tiles[0].gvec == gvec and len(plan.tiles[0].box) <= 3   # (w, c) merged
    assert plan.prefetch == bool(prefetch)
    check_strided(mdh, params, seed=7 + gvec)


def test_gemv_default_is_one_kernel_on_a_gpu() -> None:
    mdh = ex.matmul(1, 1000, 2048)
    p = default_gpu_params(mdh, CUDA_CAPS)
    assert (p.num_wi, p.num_wg, p.kt, p.cache) == ((1, 8, 128), (0, 0, 1), (0, 0, 2048), (0, 0))
    plan = lower_gpu(mdh, p, CUDA_CAPS)
    assert plan.local_combine and not plan.partials                 # no second kernel
    assert p.warp_reduce == 1 and plan.warp_reduce == 8             # shuffles within each warp (CUDA)
    check_kernel_plan(plan, CUDA_CAPS)
    # not for: two live concat dims, a short reduction, too many work-groups, the long input strided along j
    assert default_gpu_params(ex.matmul(16, 1000, 2048), CUDA_CAPS).num_wg[2] > 1
    assert default_gpu_params(ex.matmul(1, 1000, 512), CUDA_CAPS).num_wi[1] > 8
    assert default_gpu_params(ex.matmul(1, 4096, 25088), CUDA_CAPS).num_wg[2] > 1
    mv = ex.matvec(1000, 2048)
    assert default_gpu_params(mv, CUDA_CAPS).num_wg[1] > 1
    assert default_gpu_params(mdh, OPENCL_CAPS).num_wg[2] > 1      # portable caps: not a GPU


@needs_device
@pytest.mark.parametrize("n,k", [(203, 1031), (1000, 2048)])
def test_gemv_one_kernel_matches_numpy(n: int, k: int) -> None:
    mdh = ex.matmul(1, n, k)
    params = default_gpu_params(mdh, CUDA_CAPS)         # the GPU's one-kernel plan, run on PoCL
    assert params.num_wg == (0, 0, 1) and params.num_wi[2] == 128
    params = replace(params, warp_reduce=0)             # PoCL has no warp shuffles (test_gpu_warp_reduce.py)
    rng = np.random.default_rng(n)
    a, b, c = (rng.standard_normal(sh).astype(np.float32) for sh in ((1, k), (k, n), (1, n)))
    out = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(1, n), c + a @ b, rtol=1e-3, atol=1e-3)


@needs_device
def test_gemv_default_matches_numpy() -> None:
    m, n, k = 1, 1000, 2048
    mdh = ex.matmul(m, n, k)
    params = default_gpu_params(mdh, OPENCL_CAPS)
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(sh).astype(np.float32) for sh in ((m, k), (k, n), (m, n)))
    out = run_plan(mdh, params, {"A": a, "B": b, "C": c})
    assert np.allclose(out.outputs["C"].reshape(m, n), c + a @ b, rtol=1e-3, atol=1e-3)


def test_copy_box_merges_only_whole_contiguous_extents() -> None:
    mdh = strided_mcc(16, 112, 112, 64, 3, 7, 7, 2, 6)
    p = GpuParams((1, 1, 16, 16, 1, 1, 1), (1, 1, 4, 4, 1, 1, 1), (0, 0, 0, 0, 1, 1, 1),
                  ((3,), (2,), (0, 1, 4, 5, 6)), (0, 0, 0, 0, 7, 7, 3), (1, 1))
    assert copy_box(mdh, p, 0) == (1, 7, 133 * 3)        # (w, c) one row; h is not whole
    assert copy_box(mdh, p, 1) == (64 * 7 * 7 * 3,)      # the weights of all 64 output channels
    part = replace(p, kt=(0, 0, 0, 0, 7, 1, 1))          # one channel per tile: rows of 1, nothing to merge
    assert copy_box(mdh, part, 0) == (1, 7, 127, 1) and copy_box(mdh, part, 1) == (64, 7, 1, 1)
    padded = replace(p, pad=1)                            # a padded row is not contiguous with the next
    assert copy_box(mdh, padded, 0) == (1, 7, 133, 3)
    assert default_gpu_params(mdh, CUDA_CAPS).kt[4:] == (7, 7, 3)
    assert default_gpu_params(ex.mcc(1, 56, 56, 64, 64, 3, 3), CUDA_CAPS).kt[4:] != (3, 3, 64)   # too wide


def test_plan_check_rejects_a_merged_view_that_does_not_match() -> None:
    mdh = strided_mcc(2, 5, 7, 6, 3, 3, 3, 2, 1)
    params = default_gpu_params(mdh, OPENCL_CAPS)
    plan = lower_gpu(mdh, params, OPENCL_CAPS)
    assert plan.tiles is not None
    check_kernel_plan(plan, OPENCL_CAPS)
    x = plan.tiles[0]
    short = replace(plan, tiles=(replace(x, origin=x.origin[:-1]), plan.tiles[1]))
    with pytest.raises(CompilerBug, match="copy view"):
        check_kernel_plan(short, OPENCL_CAPS)
    wide = replace(plan, tiles=(replace(x, box=(x.box[0], x.box[1], x.local_elems)), plan.tiles[1]))
    with pytest.raises(CompilerBug, match="copy view"):
        check_kernel_plan(wide, OPENCL_CAPS)
    assert "mdp_v * 4 - " in opencl_source(plan)      # the rows' vectors start at aligned addresses


@pytest.mark.campaign   # large kernels (README.md "Run the tests")
@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_first_layer_kernels_compile_for_sm90(tmp_path: Path) -> None:
    from cuda_harness import compile_for_sm90
    for mdh in (strided_mcc(16, 112, 112, 64, 3, 7, 7, 2, 6), strided_mcc(1, 112, 112, 32, 3, 3, 3, 2, 0),
                ex.matmul(1, 1000, 2048)):
        params = default_gpu_params(mdh, CUDA_CAPS)
        plan = lower_gpu(mdh, params, CUDA_CAPS)
        check_kernel_plan(plan, CUDA_CAPS)
        compile_for_sm90(cuda_source(plan), plan.name, tmp_path)
