"""Work-group tuning parameters as data: ``GpuParams`` (and its dict form), ``GPU_PARAMETERS``, the tile
footprints they imply and ``GPU_CONSTRAINTS``. The untuned defaults are chosen in ``mdpoly.lower.gpu_defaults``,
a queried device's limits are read into ``TargetCaps`` in ``mdpoly.lower.gpu_caps``.

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
  two-buffer register prefetch); the copies take twice their ``__local`` memory.

* ``warp_tile`` -- ``()``, or ``(wm, wn)`` with ``wm * wn = WARP_ITEMS``: which work-item computes
  which points, a layer between the work-group and the work-item. In hardware order a warp (a
  sub-group of 32 consecutive local ids, NDRange dim 0 fastest) covers 32 consecutive work-items of
  the dim on NDRange dim 0 (rows of ``NUM_WI`` of it); with a warp tile, the work-items of a
  work-group are renumbered so that warp ``w`` covers a ``wm x wn`` rectangle of the two dims on
  NDRange dims 1 and 0 (the warps in row-major order over the group), so that its reads of the
  ``__local`` copies touch ``wm`` and ``wn`` fragments (fewer bank conflicts, more broadcasts). Needs
  those two dims alone on NDRange dims 0 and 1, every other dim's ``NUM_WI`` 1, and ``wn``/``wm``
  dividing their ``NUM_WI`` (``warp_dims``). A pure renumbering: every point is still computed once.

* ``warp_reduce`` -- 0, or 1: the work-items that share concat points combine their private results
  first within each warp, in registers (CUDA ``__shfl_down_sync``, pairwise with halving strides,
  the same order as the ``__local`` tree), then one value per warp and concat point through
  ``__local`` memory, folded in warp order by the first warp: one barrier instead of one per tree
  level. Needs a target with ``warp_shuffle`` and 32-wide warps, reduction work-items along one
  reduction dim only, that dim's work-items slower in the flat local id than all the concat
  work-items together (``warp_reduce_stride``: at most 16 of them, a power of two, so that a warp
  holds 32 / stride reduction work-items of each concat point), whole warps, no warp tile, and
  outputs of 4 or 8 bytes. Split-K inside one work-group: with the reduction cheap, a GEMV-like
  nest can give a work-group many reduction work-items (``mdpoly.lower.gpu_defaults``).

``MEM_RES`` is fixed: results private (a register tile of ``prod PT_SIZE`` accumulators), the
intra-group combine in ``__local``.
``gpu_violations(mdh, params, caps)`` names the constraints a candidate breaks against ``TargetCaps``.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from mdpoly.ir.mdh import MdhExpr
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.heuristics import elem_bytes
from mdpoly.lower.param_table import Constraint, ParamSpec

#: C text of a constant extent: integer literals, ``+ - *`` and parentheses.
_CONST_TEXT = re.compile(r"[0-9\s*+()-]+")
#: Elements of the private result tile (``prod PT_SIZE`` of the concat dims, per output).
MAX_PRIVATE_ELEMS = 128
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
    warp_reduce: int = 0             # 1: the work-group's combine reduces within warps by shuffles first

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
        if self.warp_reduce:
            text += " WRED=1"
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
    ParamSpec("warp_reduce", "(work-group combine)", "0: the work-group's combine is a __local tree; 1: within "
                 "each warp by register shuffles first, then one value per warp through __local memory "
                 "(warp_reduce_stride; targets with warp_shuffle)"),
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


def const_int(text: str) -> int | None:
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
    span = const_int(shape[-1]) if shape else None   # elements of the positions the row holds
    while width >= 2 and span is not None and box[-1] == span and strides[-1] == 1 and strides[-2] == box[-1]:
        box[-2:] = [box[-2] * box[-1]]
        strides[-2:] = [1]
        width -= 1
        extent = const_int(shape[width - 1])
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


def flat_strides(p: GpuParams) -> tuple[int, ...]:
    """Per MDH dim, the step of the flat local id (NDRange dim 0 fastest, then 1, then 2) from one of
    its work-items to the next: within an NDRange dim, the last MDH dim of its group is fastest."""
    strides = [1] * len(p.num_wi)
    below = 1
    for g in p.ocl_groups:
        run = below
        for d in reversed(g):
            strides[d] = run
            run *= p.num_wi[d]
        below = run
    return tuple(strides)


def warp_reduce_stride(m: MdhExpr, p: GpuParams) -> int | None:
    """The concat work-items below each reduction work-item in the flat local id -- the lane stride
    of a warp's shuffles -- where ``warp_reduce`` can apply to ``p`` (``None`` elsewhere): one
    reduction dim with more than one work-item (the others one each), its flat stride the product
    of the concat dims' work-items, that product a power of two of at most ``WARP_ITEMS / 2``,
    whole warps, no warp tile, outputs of 4 or 8 bytes (what ``__shfl_down_sync`` moves)."""
    reds = [d for d, dim in enumerate(m.dims) if dim.combine.is_reduction and p.num_wi[d] > 1]
    if len(reds) != 1 or p.warp_tile or p.wg_size() % WARP_ITEMS or not m.outputs:
        return None
    if any(type_bytes(o.elem_type) not in (4, 8) for o in m.outputs):
        return None
    cw = math.prod(n for d, n in enumerate(p.num_wi) if not m.dims[d].combine.is_reduction)
    if cw & (cw - 1) or cw > WARP_ITEMS // 2 or flat_strides(p)[reds[0]] != cw:
        return None
    return cw


def _warp_reduce_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    if p.warp_reduce == 0:
        return True
    return (p.warp_reduce == 1 and c.warp_shuffle and c.preferred_wg_multiple == WARP_ITEMS
            and warp_reduce_stride(m, p) is not None)


def prefetch_fits(m: MdhExpr, p: GpuParams) -> bool:
    """Whether ``prefetch`` can apply: an input is cached and the next tile's registers
    (``prefetch_regs``) are at most ``MAX_PREFETCH_REGS``."""
    return any(p.cache) and prefetch_regs(m, p) <= MAX_PREFETCH_REGS


def _prefetch_ok(m: MdhExpr, p: GpuParams, c: TargetCaps) -> bool:
    return p.prefetch == 0 or (p.prefetch in (1, 2) and prefetch_fits(m, p))


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
    Constraint("warp-reduce", "warp_reduce: 0 or 1; 1 only on a target with 32-wide warp shuffles, with "
                  "work-items along one reduction dim, below them in the flat local id all concat work-items "
                  "(a power of two <= WARP_ITEMS / 2), whole warps, no warp tile, 4- or 8-byte outputs",
                  _warp_reduce_ok),
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
