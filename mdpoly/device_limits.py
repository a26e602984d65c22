"""Target + ``Options`` -> ``PlanningLimits``: the device limits a work-group target plans its code with.

Untuned OpenCL/CUDA parameters (``mdpoly.lower.gpu_defaults``) are planned for a device's limits:
compute units, work-items per group and per dimension, local (shared) memory per group, the
warp/SIMD width. Where they come from, first that applies:

1. ``--device-limits SPEC`` (cross-generation for another machine): ``generic`` (the target's
   generic limits, as without a device), a JSON file (an object with the keys below), or
   ``key=value`` pairs separated by commas, e.g. ``cu=132,wg=1024,lmem=48K,warp=32,gpu=1``;
2. the device the generated host code will use (``Target.device``: ``MDPOLY_OPENCL_DEVICE`` /
   ``MDPOLY_CUDA_DEVICE``), queried at generation time (``Target.limits``: pyopencl, cuda-python);
3. the target's generic limits (``Target.caps``): "generic limits (no device found)".

Keys (JSON names, then their short ``key=value`` spellings): ``max_compute_units`` (``cu``),
``max_work_group_size`` (``wg``), ``max_work_item_sizes`` (``items``, ``AxBxC``), ``local_mem_size``
(``lmem``, bytes, ``K``/``M`` suffixes for KiB/MiB), ``preferred_wg_multiple`` (``warp``), ``is_gpu``
(``gpu``, 0/1), ``async_copy`` (``async``, 0/1), ``name``; recorded for the report but not planned
with: ``local_mem_optin`` (``lmem_optin``, CUDA's opt-in shared memory per block) and
``registers_per_block`` (``regs``). A key left out keeps the target's generic value.

A queried device is asked once per process (``_QUERIED``). The limits used go to each GPU nest's
report entry (``PlanningLimits.to_report``) and remark (``PlanningLimits.text``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdpoly.diagnostics import MdpolyError
from mdpoly.ir.target import TargetCaps
from mdpoly.lower.gpu_caps import caps_from_device

#: ``key=value`` spellings -> the JSON keys (which are ``caps_from_device``'s).
SHORT_KEYS = {
    "cu": "max_compute_units", "wg": "max_work_group_size", "items": "max_work_item_sizes",
    "lmem": "local_mem_size", "warp": "preferred_wg_multiple", "gpu": "is_gpu", "async": "async_copy",
    "lmem_optin": "local_mem_optin", "regs": "registers_per_block", "name": "name",
}
_INT_KEYS = frozenset({"max_compute_units", "max_work_group_size", "local_mem_size", "preferred_wg_multiple",
                       "local_mem_optin", "registers_per_block"})
_BOOL_KEYS = frozenset({"is_gpu", "async_copy"})
KEYS = frozenset(SHORT_KEYS.values())


@dataclass(frozen=True, slots=True)
class PlanningLimits:
    """The caps a target plans with and where their limits came from: ``source`` is ``device``
    (queried), ``given`` (``--device-limits``) or ``generic``; ``name`` the device's name (or the
    option's text); ``limits`` the raw values (``SHORT_KEYS``' JSON keys)."""

    caps: TargetCaps
    source: str
    name: str
    limits: tuple[tuple[str, Any], ...] = ()

    def text(self) -> str:
        """``device limits of <name> (...)``, ``limits given by --device-limits (...)`` or
        ``generic limits (no device found[: why])``."""
        c = self.caps
        nums = (f"{c.compute_units} compute units, {c.max_work_group_size} work-items per group, "
                f"{_kib(c.local_mem_bytes)} local memory")
        if self.source == "device":
            return f"device limits of {self.name} ({nums})"
        if self.source == "given":
            return f"limits given by --device-limits {self.name} ({nums})"
        return f"generic limits (no device found{': ' + self.name if self.name else ''}) ({nums})"

    def to_report(self) -> dict[str, Any]:
        """The report's ``limits`` object: source, name, and what was planned with."""
        c = self.caps
        out: dict[str, Any] = {
            "source": self.source, "name": self.name, "compute_units": c.compute_units,
            "max_work_group_size": c.max_work_group_size, "max_work_item_sizes": list(c.max_work_item_sizes),
            "local_mem_bytes": c.local_mem_bytes, "preferred_wg_multiple": c.preferred_wg_multiple,
            "is_gpu": c.is_gpu, "async_copy": c.async_copy,
        }
        extra = {k: v for k, v in self.limits if k in ("local_mem_optin", "registers_per_block")}
        out.update(extra)
        return out


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


def _size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([kKmM]?)(?:i?[bB])?\s*", text)
    if m is None:
        raise ValueError(f"not a size: '{text}'")
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]


def _value(key: str, raw: Any) -> Any:
    if key == "name":
        return str(raw)
    if key == "max_work_item_sizes":
        parts = raw if isinstance(raw, list | tuple) else re.split(r"[x:/]", str(raw))
        sizes = [_size(str(p)) for p in parts]
        if not 1 <= len(sizes) <= 3 or min(sizes) < 1:
            raise ValueError(f"max_work_item_sizes wants 1 to 3 positive sizes, got {raw!r}")
        return tuple(sizes)
    if key in _BOOL_KEYS:
        if isinstance(raw, bool):
            return raw
        if str(raw).lower() in ("1", "true", "yes"):
            return True
        if str(raw).lower() in ("0", "false", "no"):
            return False
        raise ValueError(f"{key} wants 0 or 1, got {raw!r}")
    value = raw if isinstance(raw, int) and not isinstance(raw, bool) else _size(str(raw))
    if value < 1:
        raise ValueError(f"{key} must be positive, got {raw!r}")
    return value


def parse_limits(spec: str) -> dict[str, Any] | None:
    """``--device-limits``' value as limits (``None`` for ``generic``).

    :raises MdpolyError: for an unreadable file, an unknown key or a bad value."""
    text = spec.strip()
    if text == "generic":
        return None
    try:
        if text.endswith(".json") or Path(text).is_file():
            try:
                data = json.loads(Path(text).read_text())
            except OSError as exc:
                raise ValueError(f"cannot read '{text}': {exc.strerror}") from None
            except json.JSONDecodeError as exc:
                raise ValueError(f"'{text}' is not JSON: {exc}") from None
            if not isinstance(data, dict):
                raise ValueError(f"'{text}' must hold a JSON object")
            pairs = list(data.items())
        else:
            pairs = []
            for item in filter(None, (s.strip() for s in text.split(","))):
                key, sep, val = item.partition("=")
                if not sep:
                    raise ValueError(f"'{item}' is not key=value")
                pairs.append((key.strip(), val.strip()))
        out: dict[str, Any] = {}
        for key, raw in pairs:
            full = SHORT_KEYS.get(key, key)
            if full not in KEYS:
                raise ValueError(f"unknown key '{key}' (known: {', '.join(sorted(SHORT_KEYS))} or their JSON names)")
            out[full] = _value(full, raw)
        return out
    except ValueError as exc:
        raise MdpolyError(f"--device-limits: {exc}") from None


#: Queried limits (or why there are none, a ``str``) per (target name, device selector), per process.
_QUERIED: dict[tuple[str, str | None], tuple[str, dict[str, Any]] | str] = {}


def planning_limits(target: Any, options: Any) -> PlanningLimits:
    """The limits ``target`` (a ``mdpoly.targets.Target``) plans with under ``options`` (see the
    module docstring). A target without ``limits`` (OpenMP) keeps its caps, as ``generic``."""
    base: TargetCaps = target.caps
    spec = getattr(options, "device_limits", None)
    if target.limits is None:
        return PlanningLimits(base, "generic", "")
    if spec:
        given = parse_limits(spec)
        if given is None:
            return PlanningLimits(base, "generic", "--device-limits generic")
        return PlanningLimits(caps_from_device(base, given), "given", spec, tuple(sorted(given.items())))
    key = (target.name, target.device(options))
    if key not in _QUERIED:
        try:
            _QUERIED[key] = target.limits(options)
        except Exception as exc:  # noqa: BLE001 - no device (or a broken driver): the generic limits, said
            _QUERIED[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    found = _QUERIED[key]
    if isinstance(found, str):
        return PlanningLimits(base, "generic", found)
    name, info = found
    return PlanningLimits(caps_from_device(base, info), "device", name, tuple(sorted(info.items())))
