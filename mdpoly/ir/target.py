"""``TargetCaps``: what a target offers, as data that lowering, heuristics and tuning read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TargetCaps:
    """Capabilities of one target. Sizes in bytes; ``cores`` is a planning guess, not a limit.

    ``parallel_layers`` counts the levels of parallel hardware (OpenMP threads = 1, plus SIMD when
    ``simd``); ``max_local_bytes`` bounds a thread's private result buffer (stack on a CPU).
    """

    name: str
    parallel_layers: int = 1
    simd: bool = True
    cores: int = 2
    vector_bytes: int = 32
    l1_bytes: int = 32 * 1024
    l2_bytes: int = 1024 * 1024
    max_local_bytes: int = 256 * 1024
