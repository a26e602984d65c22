"""A queried device's work-group limits as ``TargetCaps``: ``caps_from_device(base, info)``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mdpoly.ir.target import TargetCaps


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
