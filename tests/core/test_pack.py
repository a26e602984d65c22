"""Packed panels (``TuningParams.pack_b`` / ``pack_a``): the micro-kernel reads per-thread copies
of its inputs, run against reference loops with sizes that are not multiples of the tiles or
register blocks.

Each program runs with OMP_NUM_THREADS = 1, 2, 3 (``harness.run_differential``); every Plan
passes ``check_plan``. A test fails when the copy's layout and the micro-kernel's reads disagree,
when a thread's slot is shared, or when a remainder point reads the wrong panel.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mdh_examples as E
import pytest
from harness import run_differential

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.diagnostics import CompilerBug
from mdpoly.ir.mdh import Access, Buffer, Combine, MdhExpr, OutputWrite, ScalarFunction
from mdpoly.ir.plan import Declare, walk
from mdpoly.lower import TuningParams, check_plan, default_params, lower, violations
from mdpoly.lower.params import MAX_PACK_ELEMS, packable_inputs, packed_inputs

BACKEND = OpenMPBackend()

MATMUL_REF = ("for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) for (long k = 0; k < {k}; k++)"
              " C[i][j] += A[i][k] * B[k][j];")


def _heap(params: TuningParams, mdh: MdhExpr) -> list[str]:
    plan = lower(mdh, params)
    return [s.name for s in walk(plan.body) if isinstance(s, Declare) and s.heap]


def _go(tmp: Path, mdh: MdhExpr, ref: str, shapes: dict[str, tuple[int, ...]], params: TuningParams,
        packed: int) -> None:
    assert not violations(mdh, params), violations(mdh, params)
    plan = lower(mdh, params)
    check_plan(plan)
    heap = [s for s in walk(plan.body) if isinstance(s, Declare) and s.heap]
    assert len(heap) == packed
    code = BACKEND.render(plan)
    assert "aligned_alloc" in code.definition and "stdlib.h" in code.headers
    run_differential(tmp, plan, code, ref, shapes)


MATMUL_BASE = TuningParams(tiles=((16,), (40,), (8,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                           register_tile=(3, 16, 1), simd_lanes=8)
MATMUL_PARAMS = [
    (replace(MATMUL_BASE, pack_b=True), 1),
    (replace(MATMUL_BASE, pack_a=True), 1),
    (replace(MATMUL_BASE, pack_a=True, pack_b=True), 2),
    (replace(MATMUL_BASE, pack_b=True, pack_prefetch=True), 1),
    # two tile layers, 2 threads fixed, only i parallel, 4 rows of 3 vectors of 4 lanes
    (TuningParams(tiles=((20, 10), (48, 24), (7,)), parallel_dims=(0,), loop_order=(2, 0, 1), vector_dim=1,
                  register_tile=(4, 12, 1), simd_lanes=4, num_threads=2, pack_a=True, pack_b=True), 2),
    # no parallel loop (one slot), untiled k, dynamic distribution irrelevant
    (TuningParams(tiles=((9,), (32,), ()), parallel_dims=(), loop_order=(0, 2, 1), vector_dim=1,
                  register_tile=(2, 8, 1), simd_lanes=8, pack_a=True, pack_b=True), 2),
    # dynamic distribution: a thread's slot is its number, not its share
    (replace(MATMUL_BASE, distribution="dynamic", pack_a=True, pack_b=True), 2),
]


@pytest.mark.parametrize("params,packed", MATMUL_PARAMS, ids=lambda p: p.describe(E.matmul(1, 1, 1))
                         if isinstance(p, TuningParams) else str(p))
@pytest.mark.parametrize("m,n,k", [(37, 43, 31), (61, 101, 29), (2, 3, 5)])
def test_matmul_packed(tmp_path: Path, params: TuningParams, packed: int, m: int, n: int, k: int) -> None:
    mdh = E.matmul(m, n, k)
    _go(tmp_path, mdh, MATMUL_REF.format(m=m, n=n, k=k), {"A": (m, k), "B": (k, n), "C": (m, n)}, params, packed)


@pytest.mark.parametrize("ty", ["int", "double", "unsigned"])
def test_matmul_packed_other_types(tmp_path: Path, ty: str) -> None:
    """Integer matmuls compare exactly (wrap-around included for unsigned): the copies and the
    copy order move values, they compute nothing."""
    m, n, k = 61, 45, 70
    lanes = 8 if ty != "double" else 4
    params = TuningParams(tiles=((26,), (32,), (24,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                          register_tile=(6, 2 * lanes, 1), simd_lanes=lanes, pack_a=True, pack_b=True)
    _go(tmp_path, E.matmul(m, n, k, ty), MATMUL_REF.format(m=m, n=n, k=k), {"A": (m, k), "B": (k, n), "C": (m, n)},
        params, 2)


def test_copy_order_reads_rows() -> None:
    """The packing copies walk the user's arrays along their rows: B[k][j] packed along j has k
    outside the slivers (lanes innermost, a SIMD loop), A[i][k] packed along i has k innermost."""
    mdh = E.matmul(64, 64, 64)
    plan = lower(mdh, replace(MATMUL_BASE, pack_a=True, pack_b=True))
    text = BACKEND.render(plan).definition
    b_copy = text.index("= B[k][mdp_j_p]")
    a_copy = text.index("= A[mdp_i_p][k]")
    # the loop headers before each copy, innermost last
    b_loops = [ln.strip() for ln in text[:b_copy].splitlines() if ln.strip().startswith("for (")][-3:]
    a_loops = [ln.strip() for ln in text[:a_copy].splitlines() if ln.strip().startswith("for (")][-3:]
    assert [h.split()[2] for h in b_loops] == ["k", "mdp_j_q", "mdp_j_p"], b_loops
    assert [h.split()[2] for h in a_loops] == ["mdp_i_q", "mdp_i_p", "k"], a_loops
    assert text[:b_copy].rstrip().splitlines()[-4].strip() == "#pragma omp simd"
    assert "__builtin_prefetch" not in text


def test_copy_prefetch_stays_in_the_tile() -> None:
    """``pack_prefetch``: the row-wise B copy prefetches each sliver's line 4 rows ahead, guarded
    so that the address stays in B's reduction tile (an address past the array is undefined);
    the column-wise A copy prefetches nothing; without ``pack_b`` the option is refused."""
    mdh = E.matmul(64, 64, 30)
    p = replace(MATMUL_BASE, pack_a=True, pack_b=True, pack_prefetch=True)
    text = BACKEND.render(lower(mdh, p)).definition
    assert text.count("__builtin_prefetch") == 1
    assert "__builtin_prefetch(&B[k + 4][mdp_j_q]);" in text
    guard = text[:text.index("__builtin_prefetch")].rstrip().splitlines()[-2].strip()
    assert guard == "if (mdp_k_t1 - k + 3 >= 0 && (-k) + 25 >= 0)", guard
    assert "pack" in violations(mdh, replace(MATMUL_BASE, pack_a=True, pack_prefetch=True))


def matmul_bt(m: int, n: int, k: int) -> MdhExpr:
    """C[i][j] = sum_k A[i][k] * B[j][k] (B transposed): the panel copy turns B's column walk
    into the micro-kernel's unit stride."""
    mdh = E.matmul(m, n, k, "float", "assign", "0.0f")
    return replace(mdh, buffers=(mdh.buffers[0], Buffer("B", "float", (str(n), str(k)), "array"), mdh.buffers[2]),
                   inputs=(mdh.inputs[0], Access("B", E.idx("j", "k"))))


def test_matmul_transposed_b_packed(tmp_path: Path) -> None:
    m, n, k = 29, 53, 67
    ref = (f"for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++) {{ C[i][j] = 0.0f;"
           f" for (long k = 0; k < {k}; k++) C[i][j] += A[i][k] * B[j][k]; }}")
    params = TuningParams(tiles=((12,), (48,), (16,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                          register_tile=(6, 16, 1), simd_lanes=8, pack_a=True, pack_b=True)
    _go(tmp_path, matmul_bt(m, n, k), ref, {"A": (m, k), "B": (n, k), "C": (m, n)}, params, 2)


def batched_matmul(b: int, m: int, n: int, k: int) -> MdhExpr:
    """C[b][i][j] += sum_k A[b][i][k] * B[b][k][j]: the panels depend on the unblocked batch dim."""
    return MdhExpr(
        name="mdp_bmm", loc=E.LOC,
        dims=(E.dim("b", b), E.dim("i", m), E.dim("j", n), E.dim("k", k, Combine.ADD)),
        buffers=(Buffer("A", "float", (str(b), str(m), str(k)), "array"),
                 Buffer("B", "float", (str(b), str(k), str(n)), "array"),
                 Buffer("C", "float", (str(b), str(m), str(n)), "array", written=True)),
        inputs=(Access("A", E.idx("b", "i", "k")), Access("B", E.idx("b", "k", "j"))),
        outputs=(OutputWrite(Access("C", E.idx("b", "i", "j")), "float", "accumulate", None),),
        f=ScalarFunction(("x", "y"), ("x * y",)),   # formals apart from the iterator 'b'
    )


@pytest.mark.parametrize("params", [
    # batch dim untiled and outside the blocks: the panels are packed per batch point
    TuningParams(tiles=((), (8,), (24,), (8,)), parallel_dims=(1, 2), loop_order=(0, 1, 3, 2), vector_dim=2,
                 register_tile=(1, 4, 8, 1), simd_lanes=8, pack_a=True, pack_b=True),
    # batch dim parallel and tiled by 2, only B packed
    TuningParams(tiles=((2,), (16,), (32,), (16,)), parallel_dims=(0,), loop_order=(0, 1, 3, 2), vector_dim=2,
                 register_tile=(1, 3, 16, 1), simd_lanes=8, pack_b=True),
])
def test_batched_matmul_packed(tmp_path: Path, params: TuningParams) -> None:
    b, m, n, k = 3, 19, 37, 23
    ref = (f"for (long b = 0; b < {b}; b++) for (long i = 0; i < {m}; i++) for (long j = 0; j < {n}; j++)"
           f" for (long k = 0; k < {k}; k++) C[b][i][j] += A[b][i][k] * B[b][k][j];")
    _go(tmp_path, batched_matmul(b, m, n, k), ref, {"A": (b, m, k), "B": (b, k, n), "C": (b, m, n)}, params,
        int(params.pack_a) + int(params.pack_b))


MCC_SIZES = (2, 5, 7, 19, 13, 3, 3)
MCC_REF = ("for (long n = 0; n < {n}; n++) for (long p = 0; p < {p}; p++) for (long q = 0; q < {q}; q++)"
           " for (long k = 0; k < {k}; k++) for (long r = 0; r < {r}; r++) for (long s = 0; s < {s}; s++)"
           " for (long c = 0; c < {c}; c++) out[n][p][q][k] += in[n][p+r][q+s][c] * w[k][r][s][c];")


@pytest.mark.parametrize("params", [
    # k SIMD (concat), p x k = 2 x (2 vectors of 4): w packed along k, in along p; c tiled by 4
    TuningParams(tiles=((), (4,), (), (16,), (), (), (4,)), parallel_dims=(1, 3), loop_order=(0, 1, 2, 4, 5, 6, 3),
                 vector_dim=3, register_tile=(1, 2, 1, 8, 1, 1, 1), simd_lanes=4, pack_a=True, pack_b=True),
    # q x k blocked, w packed only, the whole reduction box (3 x 3 x 13) per sliver
    TuningParams(tiles=((), (), (3,), (8,), (), (), ()), parallel_dims=(2,), loop_order=(0, 1, 2, 4, 5, 6, 3),
                 vector_dim=3, register_tile=(1, 1, 2, 8, 1, 1, 1), simd_lanes=8, pack_b=True),
])
def test_mcc_packed(tmp_path: Path, params: TuningParams) -> None:
    n, p, q, k, c, r, s = MCC_SIZES
    mdh = E.mcc(n, p, q, k, c, r, s)
    shapes = {"in": (n, p + r - 1, q + s - 1, c), "w": (k, r, s, c), "out": (n, p, q, k)}
    _go(tmp_path, mdh, MCC_REF.format(n=n, p=p, q=q, k=k, c=c, r=r, s=s), shapes, params,
        int(params.pack_a) + int(params.pack_b))


def test_which_inputs_are_packed() -> None:
    mdh = E.matmul(64, 64, 64)
    p = replace(MATMUL_BASE, pack_b=True)
    assert packable_inputs(mdh, p) == {0: 0, 1: 1}     # A along i, B along j
    assert packed_inputs(mdh, p) == {1: 1}
    assert packed_inputs(mdh, replace(p, pack_b=False, pack_a=True)) == {0: 0}
    mcc = E.mcc(*MCC_SIZES)
    q = TuningParams(tiles=((), (), (3,), (8,), (), (), ()), parallel_dims=(2,), loop_order=(0, 1, 2, 4, 5, 6, 3),
                     vector_dim=3, register_tile=(1, 1, 2, 8, 1, 1, 1), simd_lanes=8)
    assert packable_inputs(mcc, q) == {0: 2, 1: 3}     # in along q, w along k


def test_pack_constraints() -> None:
    mdh = E.matmul(64, 64, 64)
    base = replace(MATMUL_BASE, pack_b=True)
    assert not violations(mdh, base)
    bad = [
        replace(base, register_tile=(), simd_lanes=0),                       # no register block
        replace(base, vector_dim=2, loop_order=(0, 1, 2), register_tile=(3, 2, 1), simd_lanes=0),  # reduction SIMD
    ]
    for p in bad:
        assert "pack" in violations(mdh, p), p
        with pytest.raises(CompilerBug):
            lower(mdh, p)
    big = E.matmul(64, 4096, 4096)
    huge = TuningParams(tiles=((16,), (2048,), (1024,)), parallel_dims=(0,), loop_order=(0, 2, 1), vector_dim=1,
                        register_tile=(3, 16, 1), simd_lanes=8, pack_b=True)
    assert MAX_PACK_ELEMS < 2048 * 1024 and "pack" in violations(big, huge)
    # a register block with one row and no other blocked dim: nothing for pack_a to copy
    only_j = TuningParams(tiles=((5,), (64,), (10,)), parallel_dims=(0,), loop_order=(0, 2, 1), vector_dim=1,
                          register_tile=(1, 24, 1), simd_lanes=8, pack_a=True)
    assert "pack" in violations(mdh, only_j)
    # an input that is also written is never copied (the copy would go stale)
    inplace = replace(mdh, buffers=(*mdh.buffers[:1], replace(mdh.buffers[1], written=True), mdh.buffers[2]))
    assert packable_inputs(inplace, base) == {0: 0}


def test_heap_buffers_one_slot_per_thread() -> None:
    mdh = E.matmul(64, 64, 64)
    assert _heap(replace(MATMUL_BASE, pack_a=True, pack_b=True), mdh) == ["mdp_pk0", "mdp_pk1"]
    text = BACKEND.render(lower(mdh, replace(MATMUL_BASE, pack_b=True))).definition
    assert "omp_get_max_threads()" in text and "omp_get_thread_num()" in text and "free(mdp_pk1)" in text


def test_default_packs_large_matmuls_only() -> None:
    large = default_params(E.matmul(1024, 1024, 1024), BACKEND.caps)
    assert large.pack_b and not violations(E.matmul(1024, 1024, 1024), large)
    small = default_params(E.matmul(32, 32, 32), BACKEND.caps)
    assert not small.pack_b and not small.pack_a


@pytest.mark.parametrize("cores,l1,l2", [(2, 32 * 1024, 1024 * 1024), (4, 64 * 1024, 512 * 1024), (3, 32 * 1024, 2 << 20)])
@pytest.mark.parametrize("n", [1024, 2048])
def test_default_cache_tiles_from_cache_sizes(cores: int, l1: int, l2: int, n: int) -> None:
    """The packed default's tiles come from the caches: one sliver of the copied panel (reduction
    tile x SIMD block) takes half of L1, the panel an eighth of L2, the result tile fits the private
    buffer, and each thread's rows are a few nearly equal tiles (one where they fit)."""
    caps = replace(BACKEND.caps, cores=cores, l1_bytes=l1, l2_bytes=l2)
    mdh = E.matmul(n, n, n, "float", "assign", "0.0f")
    p = default_params(mdh, caps)
    assert p.pack_b and not violations(mdh, p)
    rows, cols, kc = (t[0] if t else n for t in p.tiles)
    lanes = p.register_tile[1]
    assert kc == min(n, l1 // 2 // (lanes * 4))
    assert kc * cols * 4 <= l2 // 8 and cols % lanes == 0 and kc * (cols + lanes) * 4 > l2 // 8
    assert rows * cols * 4 <= caps.max_local_bytes
    share = -(-n // cores)
    tiles_per_thread = -(-share // rows)
    assert tiles_per_thread == -(-share * cols * 4 // caps.max_local_bytes)
    assert set(p.parallel_dims) == {0, 1}


@pytest.mark.parametrize("sizes", [(37, 45, 29), (5, 3, 70)])
def test_symbolic_sizes_packed(tmp_path: Path, sizes: tuple[int, int, int]) -> None:
    """Sizes passed at run time: the panels' slices come from the (static) tile sizes, and tiles
    larger than the run-time extents leave parts of the slices unused."""
    n, m, depth = sizes
    ref = ("for (long i = 0; i < n; i++) for (long j = 0; j < m; j++) { C[i][j] = 0.0;"
           " for (long k = 0; k < l; k++) C[i][j] += A[i][k] * B[k][j]; }")
    params = TuningParams(tiles=((16,), (16,), (32,)), parallel_dims=(0, 1), loop_order=(0, 2, 1), vector_dim=1,
                          register_tile=(4, 8, 1), simd_lanes=4, pack_a=True, pack_b=True)
    mdh = E.matmul_symbolic()
    assert not violations(mdh, params)
    assert "pack" in violations(mdh, replace(params, tiles=((16,), (16,), ())))   # reduction tile not static
    plan = lower(mdh, params)
    check_plan(plan)
    run_differential(tmp_path, plan, BACKEND.render(plan), ref, {"A": (n, depth), "B": (depth, m), "C": (n, m)},
                     scalars={"n": str(n), "m": str(m), "l": str(depth)})


@pytest.mark.parametrize("sizes", [(37, 45, 29), (300, 70, 517), (7, 300, 3)])
def test_default_packs_symbolic_sizes(tmp_path: Path, sizes: tuple[int, int, int]) -> None:
    """A matmul whose extents are known only at run time gets packed panels by default (rows of a
    run-time width put the unpacked micro-kernel's column of ``B`` into one cache set: 3.9x slower
    than the sequential loops at n = 1536): cache tiles from the caches, the row tile the result
    tile's rows, shared out at run time, and the result equals the reference loops' at any size."""
    n, m, depth = sizes
    ref = ("for (long i = 0; i < n; i++) for (long j = 0; j < m; j++) { C[i][j] = 0.0;"
           " for (long k = 0; k < l; k++) C[i][j] += A[i][k] * B[k][j]; }")
    mdh = E.matmul_symbolic()
    params = default_params(mdh, BACKEND.caps)
    assert params.pack_b and not violations(mdh, params)
    assert all(params.tiles[d] for d in range(3)) and set(params.parallel_dims) == {0, 1}
    plan = lower(mdh, params)
    check_plan(plan)
    code = BACKEND.render(plan)
    assert "mdp_tile_share(" in code.definition
    run_differential(tmp_path, plan, code, ref, {"A": (n, depth), "B": (depth, m), "C": (n, m)},
                     scalars={"n": str(n), "m": str(m), "l": str(depth)})
