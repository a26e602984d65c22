"""The work-group Plan IR: ``KernelPlan``, one nest lowered for work-group targets (OpenCL, CUDA).

Produced by ``mdpoly.lower.gpu.lower_gpu(mdh, GpuParams, caps)``, checked by
``mdpoly.lower.kernel_checks.check_kernel_plan``, rendered by ``mdpoly.backends.opencl`` and
``mdpoly.backends.cuda`` (device code) with their host-code writers. Everything the code does is decided here: how each MDH dim
is spread over work-groups, work-items and a private tile, which NDRange dimension it uses,
whether a work-group combines partial results in local memory, whether a second kernel combines
per-work-group partials, where each buffer's data lives and how many elements move each way.
Index expressions are final C text in the names the kernel declares (``KAccess.flat``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.launch import LaunchSpec
from mdpoly.ir.mdh import Affine, Buffer, Combine, MdhExpr
from mdpoly.ir.plan import FExpr, Iterator


@dataclass(frozen=True, slots=True)
class KDim:
    """One MDH dim on the NDRange.

    Concat dims: work-group ``wg`` and work-item ``wi`` compute the points
    ``lower + (wg * pt + p) * num_wi + wi`` for ``p < pt`` (neighbouring work-items touch
    neighbouring points); the number of work-groups is ``ceil(extent / (pt * num_wi))``, computed
    by the host. Reduction dims: each work-item walks ``lower + wg * num_wi + wi`` in steps of
    ``num_wg * num_wi`` (``num_wg`` is a constant).

    Tiled kernels (``KernelPlan.tiles``): a reduction dim is walked in tiles of ``kt`` points,
    tile ``t`` covering ``lower + t * kt + [0, kt)``; work-group ``wg`` takes the tiles ``wg``,
    ``wg + num_wg``, ...; inside a tile, work-item ``wi`` takes the points ``wi``, ``wi + num_wi``,
    ... A concat dim's work-group tile is ``lower + wg * pt * num_wi + [0, pt * num_wi)``.

    ``vec`` (concat dims, divides ``pt``): the private points come in chunks of ``vec``
    neighbours, point ``p`` of work-item ``wi`` being ``((p / vec) * num_wi + wi) * vec + p % vec``
    within the work-group's block of ``pt * num_wi`` points (``vec`` 1: ``p * num_wi + wi``).
    """

    index: int
    iterator: str
    lower: Affine
    extent: Affine
    combine: Combine
    num_wi: int
    pt: int
    num_wg: int
    kt: int = 0
    vec: int = 1
    #: the iterator's declared type, spelled for the device: the user's expressions see it so
    iterator_type: str = "int"

    @property
    def is_reduction(self) -> bool:
        return self.combine.is_reduction


@dataclass(frozen=True, slots=True)
class KBuffer:
    """A host buffer as the kernel sees it.

    ``role``: ``global`` -- a device buffer of ``count`` elements (``count`` is C text over the
    host function's parameters) copied in when ``copy_in`` and out when ``copy_out``;
    ``value`` -- a read-only scalar passed by value. ``device_type`` is the element type spelled
    in OpenCL C; ``host_type`` as the user wrote it.
    """

    name: str
    host_type: str
    device_type: str
    role: Literal["global", "value"]
    written: bool = False
    copy_in: bool = False
    copy_out: bool = False
    count: str = "1"
    #: a C condition (over the host function's parameters) under which the nest writes every
    #: element of the buffer, so that its copy in is skipped (``""``: none)
    copy_in_unless: str = ""


@dataclass(frozen=True, slots=True)
class KAccess:
    """``buffer[flat]`` in kernel scope; ``flat`` is C text over iterators and value arguments."""

    buffer: str
    flat: str

    def to_c(self) -> str:
        return f"{self.buffer}[{self.flat}]"


@dataclass(frozen=True, slots=True)
class KInput:
    """Input ``f.params[k]`` of a tiled kernel, read once per reduction point into registers.

    Names in the C text (the writer defines them): ``mdp_tb_<d>`` -- the first point of dim
    ``d``'s current tile (work-group tile for concat dims, reduction tile for reduction dims);
    ``mdp_off_<d>`` -- a point's offset from it; ``mdp_lo_<d>``/``mdp_ext_<d>`` -- the domain.

    ``deps``: the concat dims its index depends on; each work-item keeps one value per point of
    its private tile along those dims (``prod pt``), loaded before the point loops.
    ``cached``: the work-group first copies the input's footprint over the current tile -- the
    box of ``box`` elements (row-major, one extent per index position) whose first element has
    the global coordinates ``origin`` -- into ``__local`` memory; coordinates outside the
    domain's range ``[lo, hi]`` (per position) are filled with 0 and never read for a point in
    the domain. ``access`` is the global read. In ``__local`` memory the box element with offsets
    ``r`` (per position) sits at ``sum r[j] * strides[j]`` of an array of ``local_elems``
    elements (row-major, or the vector position innermost with a padded row); ``local`` is a
    point's index into it, over ``mdp_off_<d>``.

    ``vread`` > 1: the input depends on one concat dim ``d`` whose ``KDim.vec`` is ``vread`` and
    ``local`` is ``base + mdp_off_<d>`` with ``base`` a multiple of ``vread``: a chunk of the
    private fragment is one aligned vector read from ``__local`` memory.

    ``gvec`` > 1 (cached): the copy walks the box in vectors of ``gvec`` neighbours along the
    innermost position (contiguous in ``__global`` memory), each loaded as one vector when it lies
    wholly inside the array and its address is aligned, else element by element. A row (``box[-1]``)
    that is a multiple of ``gvec`` is cut into vectors from its start; another row (``aligned_rows``)
    into vectors aligned in ``__global`` memory, from the aligned address at or before its start
    (``row_vectors`` of them, the first and last partial: their lanes outside the row are loaded
    where they lie in the array but not stored). ``vstore``: the vector is also stored as one
    (``strides[-1]`` is 1, the row and the other strides multiples of ``gvec``, so the ``__local``
    index is aligned), else per element.

    The copy view (``box``, ``origin``, ``lo``, ``hi``, ``shape``, ``strides``) may merge trailing
    index positions of the access into one row (``mdpoly.lower.gpu_params.copy_box``): positions
    whose run is contiguous both in the array and in the ``__local`` layout; ``local`` is always
    over the access's own positions.
    """

    param: str
    access: KAccess
    elem_type: str
    deps: tuple[int, ...]
    cached: bool = False
    box: tuple[int, ...] = ()
    origin: tuple[str, ...] = ()
    lo: tuple[str, ...] = ()
    hi: tuple[str, ...] = ()
    shape: tuple[str, ...] = ()
    local: str = "0"
    strides: tuple[int, ...] = ()
    local_elems: int = 0
    vread: int = 1
    gvec: int = 1
    vstore: bool = False

    @property
    def box_elems(self) -> int:
        n = 1
        for e in self.box:
            n *= e
        return n

    @property
    def aligned_rows(self) -> bool:
        """The copy's vectors are aligned in ``__global`` memory, not to the row's start."""
        return self.gvec > 1 and bool(self.box) and self.box[-1] % self.gvec != 0

    @property
    def row_vectors(self) -> int:
        """Vectors (elements where ``gvec`` is 1) the copy reads per row: ``ceil((row + gvec - 1) /
        gvec)`` with ``aligned_rows`` (however the row starts, it fits in that many)."""
        row = self.box[-1] if self.box else 1
        return (row + 2 * self.gvec - 2) // self.gvec if self.aligned_rows else row // self.gvec

    @property
    def copy_vectors(self) -> int:
        """Vectors (elements where ``gvec`` is 1) the copy of the whole box reads."""
        return self.box_elems // (self.box[-1] if self.box else 1) * self.row_vectors


StartKind = Literal["none", "old", "init"]


@dataclass(frozen=True, slots=True)
class KOutput:
    """Output ``o``: where it goes, its value ``f`` (bindings to ``KAccess`` text), and how the
    reduction result ``R`` meets the old value: ``none`` -> ``out = R``; ``old`` ->
    ``out = out (op) R``; ``init`` -> ``out = init (op) R``."""

    access: KAccess
    elem_type: str
    value: FExpr
    start: StartKind = "none"
    init: str | None = None
    neutral: str = "0"
    finish: FExpr | None = None   # stored instead of the reduced value; binds ``mdp_fin`` to it


@dataclass(frozen=True, slots=True)
class KernelPlan:
    """One nest as a main kernel (``name``) plus, when ``partials``, a combine kernel.

    ``params``: the host function's parameters (as the OpenMP function takes them).
    ``local_combine``: work-items that share concat points combine their private results in
    ``__local`` memory (tree, barriers); ``partials``: each work-group writes its results to a
    partials buffer (reduction-group-major), and ``<name>_combine`` folds them in group order.
    """

    name: str
    loc: SourceLoc
    mdh: MdhExpr
    params: tuple[Buffer, ...]
    dims: tuple[KDim, ...]
    #: the launch grid's axes (at most three; OpenCL NDRange dims, CUDA grid/block x, y, z), each
    #: the MDH dims (indices into ``dims``) it carries, decoded with div/mod, first dim slowest
    grid_axes: tuple[tuple[int, ...], ...]
    buffers: tuple[KBuffer, ...]
    outputs: tuple[KOutput, ...]
    op: Combine | None
    local_combine: bool
    partials: bool
    needs_fp64: bool
    tuning: object  # GpuParams
    #: Tiled kernel (GpuParams.kt): reduction tiles of ``KDim.kt`` points, per-input register
    #: fragments and ``__local`` copies (``KInput``); ``None``: the untiled kernel.
    tiles: tuple[KInput, ...] | None = None
    #: Tiled kernel with cached inputs: the next reduction tile's ``__local`` copies are loaded
    #: into registers (``ceil(box_elems / wg_size)`` per cached input and work-item) while the
    #: current tile is computed, and stored after its closing barrier (GpuParams.prefetch).
    prefetch: bool = False
    #: with ``prefetch``: 1, one ``__local`` copy per cached input, the registers stored into it after the
    #: tile's closing barrier (two barriers per tile); 2, two buffers each (``async_buffer_elems``), the next
    #: tile's registers stored into the other one after the current tile is computed (one barrier per
    #: tile; GpuParams.prefetch 2)
    prefetch_buffers: int = 1
    #: C type of the kernels' index arithmetic (and of the extents passed to them): ``int`` when
    #: every extent, buffer and index of the nest is a constant below 2^31, else ``long``.
    index_type: Literal["int", "long"] = "long"
    #: the user's iterators, outermost first (the call site sets the exit values of live ones)
    iterators: tuple[Iterator, ...] = ()
    #: a non-rectangular domain (``MdhExpr.domain``): C conditions over the point indices
    #: ``mdp_i_<d>`` of every dim, all true where ``f`` is evaluated; ``store_domain``: those
    #: naming concat dims only, all true where an output is stored. Empty for a box.
    domain: tuple[str, ...] = ()
    store_domain: tuple[str, ...] = ()
    #: > 0: the compiler keeps the main kernel's registers within what this many resident work-groups
    #: per compute unit leave (GpuParams.min_blocks; CUDA ``__launch_bounds__``); 0: no bound
    min_groups: int = 0
    #: Tiled kernel with cached inputs: two ``__local`` buffers per cached input (each of
    #: ``async_buffer_elems(local_elems)`` elements); the next reduction tile's copies go into the
    #: other buffer, asynchronously where the target can (CUDA ``cp.async``), while the current one
    #: is computed (GpuParams.async_copy; with ``prefetch`` only at ``prefetch_buffers`` 2: then the inputs
    #: whose copies store whole vectors go asynchronously, the others through the registers)
    async_copy: bool = False
    #: ``()``, or ``(wm, wn)``: work-items are renumbered so that each warp of ``wm * wn`` consecutive
    #: flat local ids (NDRange dim 0 fastest) covers ``wm`` x ``wn`` work-items of the dims on grid axes 1
    #: and 0 (one dim each; every other dim has one work-item), the warps row-major over the group:
    #: flat id ``f``, warp ``f / (wm * wn)``, lane ``f % (wm * wn)``; ``wi`` of axis 0's dim
    #: ``(warp % (NUM_WI / wn)) * wn + lane % wn``, of axis 1's ``(warp / (NUM_WI / wn)) * wm + lane / wn``
    #: (GpuParams.warp_tile)
    warp_tile: tuple[int, ...] = ()
    #: 0: the work-group combine is a ``__local`` tree; > 0: it reduces within each warp by register
    #: shuffles first (lane strides from 16 down to this value: the concat work-items below each
    #: reduction work-item in the flat local id), then one value per warp and concat point through
    #: ``__local`` memory, folded in warp order by warp 0 (GpuParams.warp_reduce, ``warp_reduce_stride``)
    warp_reduce: int = 0
    #: how the host code launches the kernels (``mdpoly.lower.gpu.launch_spec``); ``lower_gpu``
    #: always sets it, and the host-code writers read launch geometry from nowhere else
    launch: LaunchSpec | None = None
    #: global buffers the nest only reads that stay on the device between calls (the function's
    #: ``#pragma mdh resident(...)``): copied in at the first call, then used as they are
    keep: tuple[str, ...] = ()

    @property
    def concat(self) -> tuple[KDim, ...]:
        return tuple(d for d in self.dims if not d.is_reduction)

    @property
    def reductions(self) -> tuple[KDim, ...]:
        return tuple(d for d in self.dims if d.is_reduction)

    def wg_size(self) -> int:
        n = 1
        for d in self.dims:
            n *= d.num_wi
        return n
