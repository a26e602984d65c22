"""``TargetCaps``: what a target offers, as data that lowering, heuristics and tuning read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TargetCaps:
    """Capabilities of one target. Sizes in bytes; ``cores`` is a planning guess, not a limit.

    ``parallel_layers`` counts the levels of parallel hardware (OpenMP threads = 1, plus SIMD when
    ``simd``); ``max_local_bytes`` bounds a thread's private result buffer (stack on a CPU).

    Work-group targets (OpenCL, CUDA; ``parallel_layers == 2``) also read: ``max_work_group_size``
    (work-items per group), ``max_work_item_sizes`` (per NDRange dimension), ``local_mem_bytes``
    (``__local`` memory per group), ``compute_units``, ``preferred_wg_multiple`` (warp/SIMD
    width), ``is_gpu``, ``launch_bounds`` (kernels can ask the compiler to keep registers for a
    number of resident work-groups per compute unit: CUDA's ``__launch_bounds__``), ``async_copy``
    (``__global`` -> ``__local`` copies may be asynchronous: CUDA's ``cp.async`` from compute capability 8.0
    on; the kernels compile a synchronous copy for older architectures), ``warp_shuffle`` (the
    work-items of a 32-wide warp exchange registers: CUDA's ``__shfl_down_sync``; a work-group's
    combine may then reduce within each warp without ``__local`` memory). Defaults are the OpenCL 1.2 minimums a GPU or PoCL exceeds; a device query
    replaces them (``mdpoly.lower.gpu_caps.caps_from_device``).
    """

    name: str
    parallel_layers: int = 1
    simd: bool = True
    cores: int = 2
    vector_bytes: int = 32
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    max_local_bytes: int = 256 * 1024
    max_work_group_size: int = 256
    max_work_item_sizes: tuple[int, int, int] = (256, 256, 256)
    local_mem_bytes: int = 32 * 1024
    compute_units: int = 8
    preferred_wg_multiple: int = 32
    is_gpu: bool = False
    launch_bounds: bool = False
    async_copy: bool = False
    warp_shuffle: bool = False
