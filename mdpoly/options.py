"""``Options``: the one frozen configuration object built by the CLI and passed down."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Target = Literal["openmp", "opencl", "cuda"]


@dataclass(frozen=True, slots=True)
class Options:
    target: Target = "openmp"
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()      # "NAME" or "NAME=VAL"
    undefines: tuple[str, ...] = ()
    strict_fp: bool = False
    quiet: bool = False
    all_nests: bool = False
    sizes: tuple[tuple[str, int], ...] = ()   # --size NAME=VALUE hints
    cpp: str = "cpp"
    extra: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
