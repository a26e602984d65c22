"""Work-group tuning parameters as data: ``GpuParams``, ``GPU_PARAMETERS``, ``GPU_CONSTRAINTS``, defaults.

The slice of the MDH parameters (opencl-lift-teml.md §A.4, Table I) that the OpenCL (and a later
CUDA) lowering in ``mdpoly.lower.gpu`` uses:

* ``NUM_WI<d>`` -- work-items per work-group along MDH dim ``d``;
* ``PT_SIZE<d>`` -- private tile: points of a concat dim each work-item computes (its local
  tile is ``LT_SIZE<d> = PT_SIZE<d> * NUM_WI<d>``, so ``PT <= LT`` holds by construction);
* ``NUM_WG<d>`` -- work-groups along a *reduction* dim (> 1: per-group partials combined by a
  second kernel); along a concat dim it follows from the extent at run time,
  ``ceil(N_d / LT_SIZE<d>)``, so symbolic sizes work;
* ``σ_arr→ocl`` -- ``ocl_groups``: a partition of the MDH dims into at most three NDRange
  dimensions (a group of several MDH dims is decoded with div/mod, first dim slowest).

* ``LT_SIZE<d>`` of a reduction dim -- ``kt``: the reduction is walked in tiles of ``kt`` points
  (tiled kernel: reduction tiles outer, the private tile's points inner); ``()`` selects the
  untiled kernel (each work-item strides through the reduction, inputs read from ``__global``);
* ``MEM_INP`` -- ``cache``: per input access (``mdh.inputs`` order), 1 when the work-group copies
  the input's footprint over the current tile (its affine index over the work-group's concat
  tile x the reduction tile, ``input_box``) into ``__local`` memory, 0 when it reads
  ``__global``. Either way, a tiled kernel reads each input once per reduction point into
  private registers, one value per private-tile point the input depends on.

* ``vec`` -- the private tile's layout along each concat dim: a work-item's ``PT`` points come in
  chunks of ``vec`` neighbouring points (chunk ``c`` of work-item ``wi`` starts at
  ``(c * NUM_WI + wi) * vec``), so a work-item reads a cached input's chunk from ``__local``
  memory as one vector; ``()`` or 1: point ``p`` of work-item ``wi`` is ``p * NUM_WI + wi``.

* ``prefetch`` -- double-buffered ``__local`` tiles (1) or not (0): while the work-group computes
  on the current reduction tile's ``__local`` copies, each work-item loads its share of the next
  tile's footprints from ``__global`` into registers (``prefetch_regs`` values), stored into the
  ``__local`` copies after the tile's closing barrier; the global loads' latency overlaps the
  arithmetic. Needs ``kt`` and a cached input. 2: the same registers, but two ``__local`` buffers
  per cached input: the next tile's registers are stored into the other buffer right after the
  current tile is computed, so a tile needs one barrier instead of two (twice the copies'
  ``__local`` memory).

* ``pad`` -- bank-conflict padding of the ``__local`` copies: each row of a copy (its innermost
  position) is ``pad`` elements longer (``pad`` vectors where a copy is read as vectors), so that
  work-items reading one column at once hit different banks.

* ``min_blocks`` -- 0, or the work-groups per compute unit the compiler keeps registers for
  (CUDA ``__launch_bounds__(wg size, min_blocks)``; targets whose caps have ``launch_bounds``):
  an 8 x 8 register tile takes ~180 registers per work-item unbounded, one 256-item group per
  multiprocessor; 2 caps it at 128.

* ``gvec`` -- vector width (1, 2 or 4) of the cooperative ``__global`` -> ``__local`` copies: each
  work-item loads ``gvec`` neighbouring elements of a cached input's box row (its innermost index
  position, contiguous in ``__global`` memory) as one ``float4``/``float2``, for every cached input
  whose box row is a multiple of ``gvec`` elements of a 4-byte type (``gvec_applies``); a vector
  that is not wholly inside the array or not aligned at run time is loaded element by element.
  The row is the copy's (``copy_box``): trailing index positions whose run is contiguous (the
  inner one spans its whole array extent) are merged into one, so an NHWC convolution's input
  loads its width x channel run, not rows of 3 channels; a merged row of another length (at least
  ``2 * gvec``) is read in vectors aligned in ``__global`` memory, its first and last one partial.

* ``async_copy`` -- 1: the cached inputs' ``__local`` copies are double-buffered and filled by
  asynchronous copies (CUDA ``cp.async``, targets whose caps have ``async_copy``): while the
  work-group computes on tile ``t``'s buffer, tile ``t + 1``'s copies are in flight into the other
  one (16-byte chunks where ``gvec`` 4 vectors lie in the array, aligned, else 4- or 8-byte
  elements; elements outside the array are stored as 0). No registers stage the next tile, so it
  replaces ``prefetch`` (which must be 0, or 2: then only the inputs whose copies store whole
  vectors -- B of a matmul -- go asynchronously, the others -- the transposed A -- through the
  two-buffer register prefetch); the copies take twice their ``__local`` memory. Off by
  default, searched by the tuner: on an H200 the register prefetch ran faster (sgemm 1024^3 0.068 ms vs
  0.087 ms, 4096^3 3.26 vs 4.52 ms; benchmarks/results/gpu_2026-11-25_h200_async.md).

* ``warp_tile`` -- ``()``, or ``(wm, wn)`` with ``wm * wn = WARP_ITEMS``: which work-item computes
  which points, a layer between the work-group and the work-item. In hardware order a warp (a
  sub-group of 32 consecutive local ids, NDRange dim 0 fastest) covers 32 consecutive work-items of
  the dim on NDRange dim 0 (rows of ``NUM_WI`` of it); with a warp tile, the work-items of a
  work-group are renumbered so that warp ``w`` covers a ``wm x wn`` rectangle of the two dims on
  NDRange dims 1 and 0 (the warps in row-major order over the group), so that its reads of the
  ``__local`` copies touch ``wm`` and ``wn`` fragments (fewer bank conflicts, more broadcasts). Needs
  those two dims alone on NDRange dims 0 and 1, every other dim's ``NUM_WI`` 1, and ``wn``/``wm``
  dividing their ``NUM_WI`` (``warp_dims``). A pure renumbering: every point is still computed once.
  Off by default, searched by the tuner (H200: 4 x 8 within 1 % of hardware order on sgemm, 8 x 4 slower).

``MEM_RES`` is fixed: results private (a register tile of ``prod PT_SIZE`` accumulators), the
intra-group combine in ``__local``.
``violations(mdh, params, caps)`` names the constraints a candidate breaks against ``TargetCaps``.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.heuristics import elem_bytes
from mdpoly.lower.param_table import Constraint, ParamSpec

#: C text of a constant extent: integer literals, ``+ - *`` and parentheses.
_CONST_TEXT = re.compile(r"[0-9\s*+()-]+")
#: Elements of the private result tile (``prod PT_SIZE`` of the concat dims, per output).
MAX_PRIVATE_ELEMS = 128
#: Work-groups a tiled kernel wants at least, whatever ``compute_units`` says (the OpenCL
#: target's portable caps guess 8; a GPU has ~100 multiprocessors, a CPU loses little).
MIN_GROUPS = 64
#: Most points of a reduction window (the product of several reduction dims of at most 16 points each)
#: that the default tiles as a whole (``_tiled_for``).
MAX_WINDOW = 512
#: Work-groups a symbolic-size dim is planned for.
SYMBOLIC_EXTENT = 4096
#: Registers a work-item may hold for the next reduction tile's ``__local`` copies (``prefetch``).
MAX_PREFETCH_REGS = 32
#: Most resident work-groups ``min_blocks`` may ask for, and work-items a compute unit holds (2048 on
#: NVIDIA GPUs from compute capability 7.5 on, 1536 or 1024 on some: launch bounds beyond are refused).
MAX_MIN_BLOCKS = 4
MAX_RESIDENT_ITEMS = 2048
#: Work-items of a warp (NVIDIA) or of the sub-group a ``warp_tile`` shapes.
WARP_ITEMS = 32
#: Largest bank-conflict padding of a ``__local`` row (``pad``).
MAX_PAD = 8
#: Private tiles of at least this many accumulators hold 130-180 registers per work-item on a GPU, so
#: one work-group of 256 items is resident per multiprocessor (H200, sgemm 8 x 8: 129-183 registers)
#: unless launch bounds cap them at 128 (``min_blocks`` 2): the default asks for those and splits the
#: reduction so that the work-groups fill whole waves (``_wave_split``).
WAVE_TILE_ELEMS = 64
#: GEMV-like nests on a GPU (``_gemv_params``): points of the output dim per work-group, and the
#: shortest reduction the rule applies to.
GEMV_OUTPUT_ITEMS = 4
GEMV_MIN_REDUCTION = 1024


@dataclass(frozen=True, slots=True)
class GpuParams:
    """One point of the work-group search space; tuples are indexed by MDH dim."""

    num_wi: tuple[int, ...]
    pt: tuple[int, ...]
    num_wg: tuple[int, ...]          # reduction dims: the constant; concat dims: 0 (derived)
    ocl_groups: tuple[tuple[int, ...], ...]
    kt: tuple[int, ...] = ()         # reduction dims: tile size; concat dims: 0; (): untiled kernel
    cache: tuple[int, ...] = ()      # per input access: 1 = __local copy, 0 = __global; (): all 0
    vec: tuple[int, ...] = ()        # concat dims: points per contiguous chunk of a private tile; (): all 1
    prefetch: int = 0                # 1: the next reduction tile's __local copies are loaded into registers early
    pad: int = 0                     # elements (vectors) added to each row of a __local copy
    gvec: int = 1                    # vector width of the __global -> __local copies (1, 2, 4)
    min_blocks: int = 0              # CUDA __launch_bounds__ minimum resident work-groups; 0: none
    async_copy: int = 0              # 1: double-buffered __local copies filled asynchronously (cp.async)
    warp_tile: tuple[int, ...] = ()  # (wm, wn): a warp's work-items along the dims on NDRange dims 1, 0; (): off

    @property
    def tiled(self) -> bool:
        return bool(self.kt)

    def describe(self, mdh: MdhExpr) -> str:
        its = [d.iterator for d in mdh.dims]
        wi = ",".join(f"{its[d]}:{n}" for d, n in enumerate(self.num_wi))
        pt = ",".join(f"{its[d]}:{n}" for d, n in enumerate(self.pt))
        wg = ",".join(f"{its[d]}:{n or 'auto'}" for d, n in enumerate(self.num_wg))
        groups = "|".join(",".join(its[d] for d in g) for g in self.ocl_groups)
        text = f"NUM_WI={wi} PT={pt} NUM_WG={wg} ocl=({groups})"
        if self.kt:
            kt = ",".join(f"{its[d]}:{n}" for d, n in enumerate(self.kt) if mdh.dims[d].combine.is_reduction)
            flags = self.cached(len(mdh.inputs))
            cache = ",".join(f"{a.buffer}:{'local' if c else 'global'}" for a, c in zip(mdh.inputs, flags))
            text += f" KT={kt} MEM_INP={cache}"
        if any(v > 1 for v in self.vec):
            text += " VEC=" + ",".join(f"{its[d]}:{v}" for d, v in enumerate(self.vec) if v > 1)
        if self.prefetch:
            text += f" PREFETCH={self.prefetch}"
        if self.pad:
            text += f" PAD={self.pad}"
        if self.gvec > 1:
            text += f" GVEC={self.gvec}"
        if self.min_blocks:
            text += f" MINB={self.min_blocks}"
        if self.async_copy:
            text += " ASYNC=1"
        if self.warp_tile:
            text += " WARP=" + "x".join(str(v) for v in self.warp_tile)
        return text

    def vec_width(self, d: int) -> int:
        """``vec[d]``, or 1 when ``vec`` is ``()``."""
        return self.vec[d] if self.vec else 1

    def cached(self, n_inputs: int | None = None) -> tuple[int, ...]:
        """``cache``, or all 0 for ``n_inputs`` inputs when it is ``()``."""
        return self.cache or (0,) * (n_inputs or 0)

    def tile(self, mdh: MdhExpr, d: int) -> int:
        """Points of dim ``d`` in one work-group tile: ``PT * NUM_WI`` (concat), ``kt`` (reduction)."""
        return self.kt[d] if mdh.dims[d].combine.is_reduction else self.pt[d] * self.num_wi[d]

    def wg_size(self) -> int:
        return math.prod(self.num_wi)

    def reduction_wi(self, mdh: MdhExpr) -> int:
        return math.prod(n for d, n in enumerate(self.num_wi) if mdh.dims[d].combine.is_reduction)

    def private_elems(self, mdh: MdhExpr) -> int:
        return math.prod(n for d, n in enumerate(self.pt) if not mdh.dims[d].combine.is_reduction)



def gpu_params_to_dict(p: GpuParams) -> dict[str, Any]:
    """``p`` as the tuning cache's JSON (every field a list of ints or of lists)."""
    return {k: [list(x) if isinstance(x, tuple) else x for x in v] if isinstance(v, tuple) else v
            for k, v in asdict(p).items()}


def gpu_params_from_dict(data: dict[str, Any]) -> GpuParams:
    """The inverse of ``gpu_params_to_dict``.

    :raises KeyError, TypeError: for an entry written by an incompatible version.
    """
    def tup(v: Any) -> Any:
        if not isinstance(v, list):
            return int(v)
        return tuple(tuple(int(y) for y in x) if isinstance(x, list) else int(x) for x in v)

    known = {f.name for f in fields(GpuParams)}
    return GpuParams(**{k: tup(v) for k, v in data.items() if k in known})


# {{{ parameter table


GPU_PARAMETERS: tuple[ParamSpec, ...] = (
    ParamSpec("num_wi", "NUM_WI<d>", "work-items per work-group along each MDH dim (powers of two)"),
    ParamSpec("pt", "PT_SIZE<d>", "points of a concat dim per work-item (private tile); 1 for reduction dims"),
    ParamSpec("num_wg", "NUM_WG<d>", "work-groups along a reduction dim (>1: partials + second kernel); "
                 "0 for concat dims, where it is ceil(N/(PT*NUM_WI)) at run time"),
    ParamSpec("ocl_groups", "σ_arr→ocl", "partition of the MDH dims into <= 3 NDRange dims"),
    ParamSpec("kt", "LT_SIZE<d> (reduction)", "points of a reduction dim per tile (tiled kernel); 0 for concat "
                 "dims; () = untiled kernel"),
    ParamSpec("cache", "MEM_INP", "per input access: 1 = the work-group copies its tile footprint into "
                 "__local memory, 0 = read from __global; () = all 0; needs kt"),
    ParamSpec("prefetch", "(double-buffered tiles)", "1: each work-item loads its share of the next reduction "
                 "tile's __local copies into registers while the current tile is computed; 2: the same into "
                 "the other of two __local buffers (one barrier per tile, twice the copies' __local memory); "
                 "0: no prefetch; needs kt and a cached input"),
    ParamSpec("pad", "(local layout)", "elements added to each row of a __local copy (vectors where it is read "
                 "as vectors): bank-conflict padding; 0..MAX_PAD"),
    ParamSpec("gvec", "(global loads)", "vector width of the __global -> __local copies of the cached inputs "
                 "whose box row is a multiple of it (4-byte elements; the others load elements); 1, 2 or 4; "
                 "run-time alignment and bounds checks fall back to element loads"),
    ParamSpec("min_blocks", "(occupancy)", "0, or 1..MAX_MIN_BLOCKS resident work-groups per compute unit the "
                 "compiler keeps registers for (CUDA __launch_bounds__); work-group size * min_blocks <= "
                 "MAX_RESIDENT_ITEMS"),
    ParamSpec("async_copy", "(double-buffered tiles)", "1: two __local buffers per cached input, the next "
                 "reduction tile's copies asynchronous (CUDA cp.async, sm_80+) while the current one is computed; "
                 "needs kt, a cached input, prefetch 0 (or 2: only the inputs stored as whole vectors "
                 "asynchronously, the others through registers) and a target with async copies; doubles the copies' "
                 "__local memory"),
    ParamSpec("warp_tile", "(warp tile)", "(): work-items in hardware order; (wm, wn), wm * wn = WARP_ITEMS: each "
                 "warp of 32 consecutive local ids covers wm x wn work-items of the dims on NDRange dims 1 and 0 "
                 "(which hold one dim each; every other NUM_WI 1; wm, wn divide their NUM_WI)"),
    ParamSpec("vec", "(private tile layout)", "per dim: a work-item's PT points of a concat dim in chunks of vec "
                 "neighbouring points (vector reads of __local copies); 1 for reduction dims; () = all 1"),
)

# }}}

# {{{ tile footprints


def type_bytes(elem_type: str) -> int:
    """Bytes of a C element type on the device (LP64 sizes)."""
    t = elem_type.replace("const", "").replace("volatile", "").split()
    if "double" in t or "long" in t or "size_t" in t:
        return 8
    if "short" in t:
        return 2
    if "char" in t:
        return 1
    return 4


def cacheable(mdh: MdhExpr, k: int) -> bool:
    """Whether input access ``k`` can be copied to ``__local`` memory: an array element, in a
    rectangular nest (over a non-rectangular domain, the footprint of a tile of the bounding box
    may leave the array: ``x[j - i]`` below the diagonal)."""
    acc = mdh.inputs[k]
    return mdh.buffer(acc.buffer).kind != "scalar" and bool(acc.index) and not mdh.domain


def input_box(mdh: MdhExpr, p: GpuParams, k: int) -> tuple[int, ...]:
    """Extents, per index position, of input ``k``'s footprint over one work-group tile x reduction
    tile: position ``e = c + sum a_d * i_d`` spans ``1 + sum |a_d| * (tile_d - 1)`` elements."""
    its = {d.iterator: n for n, d in enumerate(mdh.dims)}
    out: list[int] = []
    for e in mdh.inputs[k].index:
        out.append(1 + sum(abs(a) * (p.tile(mdh, its[name]) - 1) for name, a in e.terms if name in its))
    return tuple(out)


def _input_deps(mdh: MdhExpr, k: int) -> tuple[int, ...]:
    """The concat dims input ``k``'s index depends on."""
    names = {name for e in mdh.inputs[k].index for name, _ in e.terms}
    return tuple(d for d, dim in enumerate(mdh.dims) if not dim.combine.is_reduction and dim.iterator in names)


def local_layout(mdh: MdhExpr, p: GpuParams, k: int) -> tuple[tuple[int, ...], int, int | None]:
    """The ``__local`` layout of cached input ``k``'s box (``input_box``): per-position strides,
    elements, and the vector position (``None`` when there is none).

    Row-major, unless the input depends on one concat dim ``d`` with ``vec[d] > 1`` through a
    position ``1 * i_d (+ c)``: that position goes innermost, its row rounded up to a multiple
    of the vector width (plus one vector when it was moved, so that the copy's consecutive
    work-items, which walk the box in global order, store to different banks)."""
    acc = mdh.inputs[k]
    box = input_box(mdh, p, k)
    deps = _input_deps(mdh, k)
    n = len(box)
    vpos = None
    if len(deps) == 1 and p.vec_width(deps[0]) > 1:
        it = mdh.dims[deps[0]].iterator
        vpos = next((j for j, e in enumerate(acc.index) if e.terms == ((it, 1),)), None)
    if vpos is None:
        strides = [1] * n
        for j in range(n - 2, -1, -1):
            strides[j] = strides[j + 1] * (box[j + 1] + (p.pad if j == n - 2 else 0))
        return tuple(strides), (strides[0] * box[0] if n > 1 else box[0]), None
    v = p.vec_width(deps[0])
    pitch = -(-box[vpos] // v) * v + (v if vpos != n - 1 else 0) + (p.pad * v if n > 1 else 0)
    order = [j for j in range(n) if j != vpos] + [vpos]
    strides = [0] * n
    size = 1
    for j in reversed(order):
        strides[j] = size
        size *= pitch if j == vpos else box[j]
    return tuple(strides), size, vpos


#: Element types whose cached copies may be loaded as vectors (``gvec``), spelled as in C.
GVEC_TYPES = frozenset({"float", "int", "signed", "signed int", "unsigned", "unsigned int"})


def _gvec_type(mdh: MdhExpr, k: int) -> bool:
    """Input ``k`` is an array access of a 4-byte type with a vector type."""
    elem = " ".join(mdh.buffer(mdh.inputs[k].buffer).elem_type.replace("const", "").split())
    return elem in GVEC_TYPES and bool(mdh.inputs[k].index)


def _const_int(text: str) -> int | None:
    """The value of C text made of integer literals, ``+ - *`` and parentheses (a macro-expanded
    array extent), else ``None``."""
    if not text or not _CONST_TEXT.fullmatch(text):
        return None
    try:
        value = eval(text, {"__builtins__": {}}, {})
    except SyntaxError:
        return None
    return value if isinstance(value, int) else None


def copy_box(mdh: MdhExpr, p: GpuParams, k: int) -> tuple[int, ...]:
    """Cached input ``k``'s box as its copy walks it: ``input_box`` with trailing index positions
    merged into one row while the innermost one spans its array's whole (constant) extent and the
    ``__local`` layout keeps the two positions row-major and unpadded. Such a run of rows is one
    contiguous run in ``__global`` and in ``__local`` memory (an NHWC convolution's input over
    the whole channel extent: the width x channel part of a tile is one row), so vector loads apply
    to it although each channel row is short."""
    box = list(input_box(mdh, p, k))
    strides = list(local_layout(mdh, p, k)[0])
    shape = mdh.buffer(mdh.inputs[k].buffer).shape
    width = len(box)
    span = _const_int(shape[-1]) if shape else None   # elements of the positions the row holds
    while width >= 2 and span is not None and box[-1] == span and strides[-1] == 1 and strides[-2] == box[-1]:
        box[-2:] = [box[-2] * box[-1]]
        strides[-2:] = [1]
        width -= 1
        extent = _const_int(shape[width - 1])
        span = span * extent if extent is not None else None
    return tuple(box)


def gvec_applies(mdh: MdhExpr, p: GpuParams, k: int) -> int:
    """The vector width cached input ``k``'s copy loads with: ``gvec`` when its element type is a
    4-byte vector type and its copy row (``copy_box``) is a multiple of it (vectors from the row's
    start) or, without ``async_copy``, at least ``2 * gvec`` long (vectors aligned in ``__global``
    memory, the row's ends partial), else 1."""
    if p.gvec <= 1 or not p.cached(len(mdh.inputs))[k] or not _gvec_type(mdh, k):
        return 1
    row = copy_box(mdh, p, k)[-1]
    return p.gvec if row % p.gvec == 0 or (row >= 2 * p.gvec and not p.async_copy) else 1


def prefetch_regs(mdh: MdhExpr, p: GpuParams) -> int:
    """Registers per work-item that hold the next tile of the cached inputs (``prefetch``): each
    input's box, spread over the work-group's items. Copies loaded in vectors (``gvec``) round
    each input's count up to whole vectors, at most ``gvec - 1`` more, which this budget ignores
    (so that ``gvec`` stays independent of the work-group in the tuning space)."""
    wg = p.wg_size()
    return sum(-(-math.prod(input_box(mdh, p, k)) // wg) for k, v in enumerate(p.cache) if v)


def async_buffer_elems(elems: int) -> int:
    """Elements of one of a cached input's two ``__local`` buffers (``async_copy``): its copy's
    elements rounded up to a multiple of 4, so that the second buffer starts 16-byte aligned."""
    return -(-elems // 4) * 4


def local_bytes(mdh: MdhExpr, p: GpuParams) -> int:
    """``__local`` bytes a work-group uses: cached inputs' copies (``local_layout``, padding
    included; two of each with ``async_copy`` or ``prefetch`` 2) plus the reduction scratch."""
    total = 0
    if p.reduction_wi(mdh) > 1:
        total += p.wg_size() * elem_bytes(mdh) * len(mdh.outputs)
    if p.kt:
        for k, v in enumerate(p.cache):
            if v:
                elems = local_layout(mdh, p, k)[1]
                elems = 2 * async_buffer_elems(elems) if p.async_copy or p.prefetch == 2 else elems
                total += elems * type_bytes(mdh.buffer(mdh.inputs[k].buffer).elem_type)
    return total

# }}}

# {{{ constraints


def _shape_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    n = len(m.dims)
    return (len(p.num_wi) == len(p.pt) == len(p.num_wg) == n and all(v >= 1 for v in p.num_wi + p.pt)
            and all(v >= 0 for v in p.num_wg))


def _roles_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    for d, dim in enumerate(m.dims):
        if dim.combine.is_reduction and (p.pt[d] != 1 or p.num_wg[d] < 1):
            return False
        if not dim.combine.is_reduction and p.num_wg[d] != 0:
            return False
    return True


def _groups_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    flat = [d for g in p.ocl_groups for d in g]
    return 1 <= len(p.ocl_groups) <= 3 and all(p.ocl_groups) and sorted(flat) == list(range(len(m.dims)))


def _wg_size_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return p.wg_size() <= c.max_work_group_size


def _item_sizes_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return all(math.prod(p.num_wi[d] for d in g) <= c.max_work_item_sizes[k] for k, g in enumerate(p.ocl_groups))


def _local_mem_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if p.reduction_wi(m) <= 1:
        return True
    return p.wg_size() * elem_bytes(m) * len(m.outputs) <= c.local_mem_bytes


def _private_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return p.private_elems(m) <= MAX_PRIVATE_ELEMS


def _tile_shape_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if not p.kt:
        return not p.cache
    dims = m.dims
    if len(p.kt) != len(dims) or not any(d.combine.is_reduction for d in dims):
        return False
    if any((p.kt[d] < 1) if dim.combine.is_reduction else (p.kt[d] != 0) for d, dim in enumerate(dims)):
        return False
    return not p.cache or (len(p.cache) == len(m.inputs) and all(v in (0, 1) for v in p.cache))


def _vec_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if not p.vec:
        return True
    if len(p.vec) != len(m.dims):
        return False
    for d, dim in enumerate(m.dims):
        v = p.vec[d]
        if v not in (1, 2, 4) or (dim.combine.is_reduction and v != 1) or p.pt[d] % v:
            return False
    return True


def _cacheable_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return all(not v or cacheable(m, k) for k, v in enumerate(p.cache))


def _tile_local_mem_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return local_bytes(m, p) <= c.local_mem_bytes


def _pad_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return 0 <= p.pad <= MAX_PAD and (p.pad == 0 or any(p.cache))


def _gvec_legal(m: MdhExpr, p: GpuParams) -> bool:
    """gvec 1, or 2 or 4 with a cached input of a 4-byte vector type (whose box rows decide, with
    the work-group, where it applies: ``gvec_applies``)."""
    if p.gvec == 1:
        return True
    return p.gvec in (2, 4) and any(v and _gvec_type(m, k) for k, v in enumerate(p.cached(len(m.inputs))))


def _gvec_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return _gvec_legal(m, p)


def _launch_bounds_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if p.min_blocks == 0:
        return True
    return (c.launch_bounds and 1 <= p.min_blocks <= MAX_MIN_BLOCKS
            and p.wg_size() * p.min_blocks <= MAX_RESIDENT_ITEMS)


def _async_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if p.async_copy == 0:
        return True
    return p.async_copy == 1 and c.async_copy and p.tiled and any(p.cache) and p.prefetch in (0, 2)


def warp_dims(m: MdhExpr, p: GpuParams) -> tuple[int, int] | None:
    """The dims ``(a, b)`` on NDRange dims 0 and 1 that ``warp_tile`` ``(wm, wn)`` shapes (``wn``
    along ``a``), or ``None`` when the parameters allow no warp tile: ``a`` and ``b`` alone on their
    NDRange dims, every other dim with one work-item, ``wm * wn = WARP_ITEMS``, ``wn`` dividing
    ``NUM_WI[a]`` and ``wm`` dividing ``NUM_WI[b]``."""
    if len(p.warp_tile) != 2 or len(p.ocl_groups) < 2 or len(p.ocl_groups[0]) != 1 or len(p.ocl_groups[1]) != 1:
        return None
    wm, wn = p.warp_tile
    a, b = p.ocl_groups[0][0], p.ocl_groups[1][0]
    if wm < 1 or wn < 1 or wm * wn != WARP_ITEMS or p.num_wi[a] % wn or p.num_wi[b] % wm:
        return None
    if any(n != 1 for d, n in enumerate(p.num_wi) if d not in (a, b)):
        return None
    return a, b


def _warp_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return not p.warp_tile or warp_dims(m, p) is not None


def _prefetch_fits(m: MdhExpr, p: GpuParams) -> bool:
    return any(p.cache) and prefetch_regs(m, p) <= MAX_PREFETCH_REGS


def _prefetch_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return p.prefetch == 0 or (p.prefetch in (1, 2) and _prefetch_fits(m, p))


GPU_CONSTRAINTS: tuple[Constraint[GpuParams], ...] = (
    Constraint("shape", "one NUM_WI, PT_SIZE and NUM_WG per dim; NUM_WI, PT >= 1", _shape_ok),
    Constraint("dim-roles", "reduction dims: PT_SIZE 1, NUM_WG >= 1; concat dims: NUM_WG 0 (derived)", _roles_ok),
    Constraint("ocl-partition", "ocl_groups partitions the dims into 1..3 non-empty NDRange dims", _groups_ok),
    Constraint("wg-size", "prod NUM_WI <= CL_DEVICE_MAX_WORK_GROUP_SIZE", _wg_size_ok),
    Constraint("item-sizes", "per NDRange dim, prod NUM_WI <= CL_DEVICE_MAX_WORK_ITEM_SIZES[k]", _item_sizes_ok),
    Constraint("local-mem", "reduction scratch (wg size * elem size * outputs) <= CL_DEVICE_LOCAL_MEM_SIZE",
                  _local_mem_ok),
    Constraint("private-tile", "prod PT_SIZE of the concat dims <= MAX_PRIVATE_ELEMS", _private_ok),
    Constraint("tile-shape", "kt: () or one per dim, >= 1 for reduction dims, 0 for concat dims, only with a "
                  "reduction; cache: () or one 0/1 per input access, only with kt", _tile_shape_ok),
    Constraint("vec", "vec: () or one per dim, 1, 2 or 4, dividing PT_SIZE; 1 for reduction dims", _vec_ok),
    Constraint("cacheable", "a cached input is an array access (not a scalar buffer) of a rectangular nest",
                  _cacheable_ok),
    Constraint("tile-local-mem", "__local copies of the cached inputs' tile footprints + reduction scratch "
                  "<= CL_DEVICE_LOCAL_MEM_SIZE", _tile_local_mem_ok),
    Constraint("pad", "pad: 0..MAX_PAD, > 0 only with a cached input (the __local copies' size with it is "
                  "checked by tile-local-mem)", _pad_ok),
    Constraint("gvec", "gvec: 1, 2 or 4; > 1 only with a cached input of a 4-byte vector type (the inputs whose "
                  "box row is a multiple of it load vectors: gvec_applies)", _gvec_ok),
    Constraint("launch-bounds", "min_blocks: 0, or 1..MAX_MIN_BLOCKS on a target with launch bounds, wg size * "
                  "min_blocks <= MAX_RESIDENT_ITEMS", _launch_bounds_ok),
    Constraint("prefetch", "prefetch: 0, 1 or 2; 1 and 2 only with a cached input (so with kt), its next-tile "
                  "registers sum ceil(box / wg size) over the cached inputs <= MAX_PREFETCH_REGS", _prefetch_ok),
    Constraint("async-copy", "async_copy: 0 or 1; 1 only on a target with async copies (CUDA, sm_80+), with kt, a "
                  "cached input and prefetch 0 or 2 (its two buffers per copy are checked by tile-local-mem)", _async_ok),
    Constraint("warp-tile", "warp_tile: () or (wm, wn), wm * wn = WARP_ITEMS, over the dims alone on NDRange dims 1 and "
                  "0 (wm, wn dividing their NUM_WI), every other NUM_WI 1", _warp_ok),
)


def gpu_violations(mdh: MdhExpr, params: GpuParams, caps: TargetCaps) -> list[str]:
    """Names of the constraints ``params`` breaks (empty when valid); stops at a broken shape."""
    out: list[str] = []
    for con in GPU_CONSTRAINTS:
        if not con.holds(mdh, params, caps):
            out.append(con.name)
            if con.name in ("shape", "ocl-partition", "tile-shape"):
                break
    return out

# }}}

# {{{ defaults


def _pow2_floor(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


def _pow2_ceil(n: int) -> int:
    return 1 << max(0, (max(n, 1) - 1).bit_length())


def default_ocl_groups(ndims: int) -> tuple[tuple[int, ...], ...]:
    """Innermost MDH dim on NDRange dim 0 (unit stride across neighbouring work-items); more than
    three dims: the two innermost get one NDRange dim each, the rest share dimension 2."""
    rev = tuple(range(ndims - 1, -1, -1))
    if ndims <= 3:
        return tuple((d,) for d in rev)
    return ((ndims - 1,), (ndims - 2,), tuple(range(ndims - 2)))


def default_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams:
    """Sane untuned parameters for a CPU (PoCL) and a GPU: the tiled kernel
    (``tiled_gpu_params``) for a nest with concat and reduction dims when its parameters are
    valid on ``caps``, else the untiled kernel (``untiled_gpu_params``)."""
    tiled = tiled_gpu_params(mdh, caps)
    if tiled is not None and not gpu_violations(mdh, tiled, caps):
        return tiled
    return untiled_gpu_params(mdh, caps)


def tiled_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams | None:
    """Tiled-kernel parameters (register tiles, reduction tiles, ``__local`` input copies), or
    ``None`` for a nest without both concat and reduction dims.

    The two innermost concat dims of extent > 1 (the unit-stride output dim first, on NDRange
    dim 0) get the work-items -- 16 x 16, or all 256 on one dim -- and a private tile of 4 x 4
    points, both cut to the extents; 8 x 8 points when those tiles, with the
    reduction split, still give ``compute_units`` work-groups (``MIN_GROUPS`` off a GPU) and
    their inputs' copies fit unshrunk, read from ``__local`` memory as ``vec`` = 4 vectors; a further concat dim of extent <= 8 is held whole in the
    private tile (the innermost dim's points halve to keep <= 16 accumulators). The same shape on a CPU: OpenCL output is portable and most
    often runs on a GPU, and PoCL runs such work-groups well (one loop over the work-items). The longest
    reduction dim is tiled by 16 points (the others by 1). An input is copied to ``__local``
    memory when it varies along the reduction and its footprint over the tiles is at most half
    the global reads the work-group's items would make without the copy (items sharing a value,
    overlapping stencil windows); several reduction dims of at most 16 points each, ``MAX_WINDOW``
    points together (a first-layer convolution's 7 x 7 x 3 window), are one tile where its copies
    fit; tiles shrink until the copies fit. A GEMV-like nest on a GPU (one concat dim of extent > 1
    next to one long reduction) gets one kernel without partials (``_gemv_params``) where it applies. When the concat tiles give
    at most ``max(compute_units, MIN_GROUPS)`` work-groups, the longest reduction's tiles are spread
    over several work-groups (partials + combine kernel) up to twice that, each keeping at least
    two tiles (on a GPU: eight times, and four tiles of a reduction of 64 or more tiles -- skinny,
    memory-bound MatMuls gain from more loads in flight); on a GPU, register tiles of
    ``WAVE_TILE_ELEMS`` or more points get launch bounds for two resident work-groups where the
    target has them (``min_blocks``) and are split so that the work-groups fill whole waves of the
    multiprocessors (``_wave_split``).
    """
    dims = mdh.dims
    n = len(dims)
    ext = [d.static_extent if d.static_extent is not None else SYMBOLIC_EXTENT for d in dims]
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    reds = [d for d in range(n) if dims[d].combine.is_reduction]
    if not concat or not reds or mdh.reduction_op is None:
        return None
    target = min(256, caps.max_work_group_size)
    live = [d for d in reversed(concat) if ext[d] > 1][:2]
    num_wi = [1] * n
    pt = [1] * n
    per_dim = [target] if len(live) == 1 else [_pow2_floor(math.isqrt(target))] * 2
    for d, w in zip(live, per_dim):
        num_wi[d] = max(1, min(w, _pow2_ceil(ext[d])))
        pt[d] = max(1, min(4, math.ceil(ext[d] / num_wi[d])))
    fill = caps.compute_units if caps.is_gpu else max(caps.compute_units, MIN_GROUPS)
    if caps.is_gpu and len(live) == 1:
        gemv = _gemv_params(mdh, caps, live[0], ext)
        if gemv is not None:
            return gemv
    params, _ = _tiled_for(mdh, caps, live, num_wi, pt)
    if len(live) == 2 and all(ext[d] <= 1 for d in concat if d not in live):
        # 8 x 8 register tiles (more work per item between __local reads) while the work-groups,
        # with the reduction split over several where it is long, still cover the compute units
        # and the same inputs still fit in __local memory whole (H200, sgemm 1024^3, CUDA: 8 x 8
        # with the reduction split 5 ways 0.142 ms, 4 x 4 0.155 ms, 8 x 4 0.152 ms, 8 x 8 on 64
        # unsplit groups 0.227 ms; MCC PC: 8 x 4 tiles, whose halo copies shrink 8 x 8's, ran slower)
        big = list(pt)
        for d in live:
            big[d] = min(8, max(1, math.ceil(ext[d] / num_wi[d])))
        cand, shrunk = _tiled_for(mdh, caps, live, num_wi, big)
        if math.prod(big) > math.prod(pt) and cand is not None and not shrunk:
            # work-groups along the concat dims times those the reduction is split over
            groups = math.prod(math.ceil(ext[d] / (big[d] * num_wi[d])) for d in live)
            groups *= math.prod(cand.num_wg[d] for d in reds)
            if groups >= fill or (caps.is_gpu and 4 * groups >= 3 * fill):   # one wave of 3/4 of the units
                return cand
    return params


def _gemv_params(mdh: MdhExpr, caps: TargetCaps, j: int, ext: list[int]) -> GpuParams | None:
    """One kernel for a GEMV-like nest on a GPU, or ``None`` where the rule does not apply: one concat
    dim ``j`` of extent > 1, one reduction dim ``r`` of at least ``GEMV_MIN_REDUCTION`` points (static),
    every input indexed by both contiguous along ``j`` (its last position ``1 * j``), and work-groups of ``GEMV_OUTPUT_ITEMS`` points of ``j`` that fill at most two waves of the compute
    units. Each work-group is ``GEMV_OUTPUT_ITEMS`` x the rest of 256 work-items along ``r`` (neighbouring
    items read neighbouring points of ``j``), which walk the whole reduction as one tile from
    ``__global`` memory and combine in ``__local`` memory: no partials, no second kernel (H200,
    1x1000x2048: 0.0084 ms; split 64 ways with a combine kernel 0.0112 ms, 128 ways 0.0102 ms;
    8 x 32 items 0.0111 ms)."""
    dims = mdh.dims
    reds = [d for d, dim in enumerate(dims) if dim.combine.is_reduction]
    if len(reds) != 1 or dims[reds[0]].static_extent is None or ext[reds[0]] < GEMV_MIN_REDUCTION:
        return None
    r, n = reds[0], len(dims)
    it = dims[j].iterator
    for acc in mdh.inputs:   # the long input(s) contiguous along j: neighbouring work-items, neighbouring addresses
        names = {name for e in acc.index for name, _ in e.terms}
        if {it, dims[r].iterator} <= names and acc.index[-1].terms != ((it, 1),):
            return None
    groups = math.ceil(ext[j] / GEMV_OUTPUT_ITEMS) * math.prod(ext[d] for d in range(n) if d not in (j, r)
                                                            and not dims[d].combine.is_reduction)
    if groups > 2 * caps.compute_units:
        return None
    rest = tuple(d for d in range(n) if d != j)
    target = min(256, caps.max_work_group_size)
    along = min(target // GEMV_OUTPUT_ITEMS, _pow2_floor(ext[r]), _pow2_floor(caps.max_work_item_sizes[1]))
    num_wi = tuple(GEMV_OUTPUT_ITEMS if d == j else along if d == r else 1 for d in range(n))
    params = GpuParams(num_wi, (1,) * n, tuple(1 if d == r else 0 for d in range(n)), ((j,), rest),
                       tuple(ext[r] if d == r else 0 for d in range(n)), (0,) * len(mdh.inputs))
    return None if gpu_violations(mdh, params, caps) else params


def _tiled_for(mdh: MdhExpr, caps: TargetCaps, live: list[int], num_wi_in: list[int],
               pt_in: list[int]) -> tuple[GpuParams | None, bool]:
    """``tiled_gpu_params`` for given work-items and private tiles along the ``live`` dims: the
    parameters (``None`` when nothing fits) and whether tiles or copies had to shrink to fit."""
    dims = mdh.dims
    n = len(dims)
    ext = [d.static_extent if d.static_extent is not None else SYMBOLIC_EXTENT for d in dims]
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    reds = [d for d in range(n) if dims[d].combine.is_reduction]
    num_wi = list(num_wi_in)
    pt = list(pt_in)
    shrunk = False
    for d in concat:   # short further concat dims: whole extent in the private tile (reuse of the others)
        if d not in live and 1 < ext[d] <= 8:
            pt[d] = ext[d]
            while live and math.prod(pt) > 16 and pt[live[0]] > 1:
                pt[live[0]] = (pt[live[0]] + 1) // 2
    rest = tuple(d for d in range(n) if d not in live)
    groups = tuple(g for g in ((live[0],) if live else (), (live[1],) if len(live) > 1 else (), rest) if g)
    for k, g in enumerate(groups):
        while math.prod(num_wi[d] for d in g) > caps.max_work_item_sizes[k]:
            d = max(g, key=lambda x: num_wi[x])
            num_wi[d] //= 2
    r = max(reds, key=lambda d: ext[d])
    kt = [0] * n
    for d in reds:
        kt[d] = 1
    kt[r] = min(16, ext[r])
    tile = [kt[d] if d in reds else pt[d] * num_wi[d] for d in range(n)]
    num_wg = [0 if d in concat else 1 for d in range(n)]
    params = GpuParams(tuple(num_wi), tuple(pt), tuple(num_wg), groups, tuple(kt), (0,) * len(mdh.inputs))
    cache = []
    for k, acc in enumerate(mdh.inputs):
        names = {name for e in acc.index for name, _ in e.terms}
        # global reads per tile without the copy: each item's fragment at each reduction point
        reads = math.prod(tile[d] if dims[d].iterator in names else (num_wi[d] if d in concat else 1)
                          for d in range(n))
        varies = any(dims[d].iterator in names for d in reds)
        reuse = 2 * math.prod(input_box(mdh, params, k)) <= reads
        cache.append(1 if cacheable(mdh, k) and varies and reuse else 0)
    params = replace(params, cache=tuple(cache))
    params = replace(params, vec=_default_vec(mdh, params))
    window = [e for e in (dims[d].static_extent for d in reds) if e is not None and e <= 16]
    if len(reds) > 1 and len(window) == len(reds) and math.prod(window) <= MAX_WINDOW:
        # several tiny reduction dims (a first-layer convolution's 7 x 7 x 3 window): one tile holds the
        # whole window where its copies fit, so a work-group has two barriers, not two per (s, c) point
        whole = replace(params, kt=tuple(ext[d] if d in reds else 0 for d in range(n)))
        if local_bytes(mdh, whole) <= caps.local_mem_bytes:
            params = whole
    while local_bytes(mdh, params) > caps.local_mem_bytes:
        shrunk = True
        if params.kt[r] > 1:
            params = replace(params, kt=tuple(max(1, v // 2) if d == r else v for d, v in enumerate(params.kt)))
        elif any(params.cache):
            big = max((k for k, v in enumerate(params.cache) if v),
                      key=lambda k: math.prod(input_box(mdh, params, k)))
            params = replace(params, cache=tuple(0 if k == big else v for k, v in enumerate(params.cache)))
        else:
            return None, True
    concat_groups = math.prod(math.ceil(ext[d] / params.tile(mdh, d)) for d in concat)
    tiles = math.ceil(ext[r] / params.kt[r])
    if caps.is_gpu and params.private_elems(mdh) >= WAVE_TILE_ELEMS:
        # launch bounds keep such a tile within 128 registers: two resident work-groups per multiprocessor
        # (H200, sgemm 4096^3: 3.38 ms with, 3.69 ms without; 1024^3 split 4 ways: 0.070 ms, 0.073 ms)
        resident = 2 if caps.launch_bounds and 2 * params.wg_size() <= MAX_RESIDENT_ITEMS else 1
        params = replace(params, min_blocks=resident if resident > 1 else 0)
        if resident > 1 and params.kt[r] == 16:
            # bounded to 128 registers, reduction tiles of 8 ran faster (H200: 4096^3 3.25 ms vs 3.37 ms,
            # 1024^3 0.068 ms vs 0.070 ms): fewer prefetch registers, so fewer spills
            params = replace(params, kt=tuple(8 if d == r else v for d, v in enumerate(params.kt)))
            tiles = math.ceil(ext[r] / 8)
        wg = _wave_split(concat_groups, tiles, resident * caps.compute_units)
        params = replace(params, num_wg=tuple(wg if d == r else v for d, v in enumerate(params.num_wg)))
    else:
        # skinny, memory-bound MatMuls on a GPU: many loads in flight (8x the multiprocessors' work-groups),
        # each group walking at least 4 tiles of a long reduction (H200: 1x4096x25088 264 groups 0.105 ms,
        # 132 0.109, 66 0.169; 16x4096x25088 34 0.281 ms, 17 0.314; 16x1000x2048 33 0.012 ms, 64 0.014)
        want = (8 if caps.is_gpu else 2) * max(caps.compute_units, MIN_GROUPS)
        most = tiles // 2
        if caps.is_gpu and tiles >= 64:   # at least two groups per multiprocessor (1x1000x2048: 64 groups
            # 0.011 ms, 32 0.017 ms), beyond that each group walking >= 4 tiles
            most = min(most, max(tiles // 4, math.ceil(2 * caps.compute_units / concat_groups)))
        if 2 * concat_groups <= want and tiles >= 4:
            wg = max(1, min(math.ceil(want / concat_groups), most))
            params = replace(params, num_wg=tuple(wg if d == r else v for d, v in enumerate(params.num_wg)))
    params = replace(params, gvec=_default_gvec(mdh, params))
    if caps.is_gpu:   # PoCL: registers live across barriers become per-item arrays, compiled slowly
        params = _default_prefetch(mdh, params, ext)
    return params, shrunk


def _default_gvec(mdh: MdhExpr, p: GpuParams) -> int:
    """The widest ``gvec`` (4, else 2) some cached input's copy loads with, else 1."""
    for v in (4, 2):
        q = replace(p, gvec=v)
        if any(gvec_applies(mdh, q, k) > 1 for k in range(len(mdh.inputs))):
            return v
    return 1


def _wave_split(concat_groups: int, tiles: int, units: int) -> int:
    """Work-groups along the reduction for a register-heavy tile (one resident work-group per
    multiprocessor): the fewest whose waves per reduction tile walked, ``ceil(groups * wg /
    units) / wg``, come within 10 % of the best any split up to ``tiles // 2`` reaches (each
    group keeping at least two tiles). H200, sgemm 1024^3, 8 x 8 tiles on 64 concat groups: 2
    groups along k 0.086 ms (one wave), 5 0.110 ms (three waves), 1 0.149 ms."""
    if tiles < 4 or concat_groups >= units:
        return 1
    cands = range(1, tiles // 2 + 1)
    cost = {wg: math.ceil(concat_groups * wg / units) / wg for wg in cands}
    best = min(cost.values())
    return next(wg for wg in cands if cost[wg] <= 1.1 * best)


def _default_prefetch(mdh: MdhExpr, p: GpuParams, ext: list[int]) -> GpuParams:
    """``prefetch`` 1 when an input is cached, the next tile's registers fit ``MAX_PREFETCH_REGS``
    and a work-group walks at least two tiles of the innermost reduction loop (the last reduction
    dim), so that there is a next tile to load early (H100, MCC PC: one tile of its one channel,
    0.40 ms without the prefetch, 0.65 ms with it)."""
    z = max(d for d, dim in enumerate(mdh.dims) if dim.combine.is_reduction)
    walked = math.ceil(ext[z] / p.kt[z]) // max(1, p.num_wg[z])
    return replace(p, prefetch=1 if walked >= 2 and _prefetch_fits(mdh, p) else 0)


def _default_vec(mdh: MdhExpr, p: GpuParams) -> tuple[int, ...]:
    """4 along a concat dim whose private tile holds 8 or more points, a multiple of 4, when a cached input
    depends on that dim alone, through an index position ``1 * i_d (+ c)``: its points are read
    from ``__local`` memory as vectors (``mdpoly.lower.gpu`` checks the layout); else 1."""
    dims = mdh.dims
    vec = [1] * len(dims)
    for k, acc in enumerate(mdh.inputs):
        if not p.cached(len(mdh.inputs))[k]:
            continue
        names = {name for e in acc.index for name, _ in e.terms}
        deps = [d for d, dim in enumerate(dims) if not dim.combine.is_reduction and dim.iterator in names]
        if len(deps) != 1 or p.pt[deps[0]] % 4 or p.pt[deps[0]] < 8:   # 4 x 4 tiles ran faster scalar
            continue
        it = dims[deps[0]].iterator
        if any(e.terms == ((it, 1),) for e in acc.index):
            vec[deps[0]] = 4
    return tuple(vec)


def untiled_gpu_params(mdh: MdhExpr, caps: TargetCaps) -> GpuParams:
    """Untiled-kernel parameters for a CPU (PoCL) and a GPU.

    Work-group size: ``min(256, max_work_group_size)`` on a GPU, ``min(64, ...)`` on a CPU. The
    work-items go to concat dims, innermost first, up to each dim's extent. When the concat
    points cannot fill ``compute_units`` groups of that size, the rest of the group (and, if the
    reduction is long, several work-groups) go to the longest reduction dim: a local-memory tree
    inside the group, per-group partials and a second kernel across groups.
    """
    dims = mdh.dims
    n = len(dims)
    ext = [d.static_extent if d.static_extent is not None else SYMBOLIC_EXTENT for d in dims]
    concat = [d for d in range(n) if not dims[d].combine.is_reduction]
    reds = [d for d in range(n) if dims[d].combine.is_reduction]
    target = min(256 if caps.is_gpu else 64, caps.max_work_group_size)
    groups = default_ocl_groups(n)
    item_cap = {d: caps.max_work_item_sizes[k] for k, g in enumerate(groups) for d in g}
    num_wi = [1] * n
    left = target
    for d in reversed(concat):
        w = min(_pow2_floor(max(ext[d], 1)), left, _pow2_floor(item_cap[d]))
        num_wi[d] = max(1, w)
        left //= num_wi[d]
    pt = [1] * n
    num_wg = [0 if d in concat else 1 for d in range(n)]
    concat_points = math.prod(max(ext[d], 1) for d in concat)
    want_items = target * max(caps.compute_units, 1)
    if reds and concat_points < want_items:
        r = max(reds, key=lambda d: ext[d])
        room = max(1, target // math.prod(num_wi))
        num_wi[r] = max(1, min(room, _pow2_floor(ext[r]), _pow2_floor(item_cap[r])))
        groups_along_concat = math.prod(math.ceil(max(ext[d], 1) / num_wi[d]) for d in concat)
        want_groups = max(1, 4 * caps.compute_units // max(groups_along_concat, 1))
        per_item = 16  # points each work-item reduces before groups are added
        num_wg[r] = max(1, min(want_groups, ext[r] // (num_wi[r] * per_item)))
    for k, g in enumerate(groups):   # folded NDRange dims: the product must fit the item size
        while math.prod(num_wi[d] for d in g) > caps.max_work_item_sizes[k]:
            d = max(g, key=lambda x: num_wi[x])
            num_wi[d] //= 2
    params = GpuParams(tuple(num_wi), tuple(pt), tuple(num_wg), groups)
    # Larger private tiles along the innermost concat dim when there are many points per item.
    inner = concat[-1] if concat else None
    if inner is not None and concat_points >= 64 * want_items:
        params = replace(params, pt=tuple(4 if d == inner else v for d, v in enumerate(params.pt)))
    return params


def caps_from_device(base: TargetCaps, info: dict[str, Any]) -> TargetCaps:
    """``base`` with the work-group limits of a queried device (``mdpoly.runtime.opencl.device_limits``)."""
    sizes = tuple(info.get("max_work_item_sizes", base.max_work_item_sizes))[:3]
    sizes = sizes + (1,) * (3 - len(sizes))
    return replace(
        base,
        max_work_group_size=int(info.get("max_work_group_size", base.max_work_group_size)),
        max_work_item_sizes=(int(sizes[0]), int(sizes[1]), int(sizes[2])),
        local_mem_bytes=int(info.get("local_mem_size", base.local_mem_bytes)),
        compute_units=int(info.get("max_compute_units", base.compute_units)),
        is_gpu=bool(info.get("is_gpu", base.is_gpu)),
        preferred_wg_multiple=int(info.get("preferred_wg_multiple", base.preferred_wg_multiple)),
        async_copy=bool(info.get("async_copy", base.async_copy)),
    )

# }}}
