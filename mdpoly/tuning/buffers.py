"""Concrete argument buffers for running one nest in isolation (tuning, differential checks).

From an ``MdhExpr`` and values for its size parameters: each buffer's concrete shape (declared
extents where they are known, else the extent its accesses reach over the rectangular domain),
its numpy dtype, and random contents; read-only integer scalars that are size parameters get
their size value.
"""

from __future__ import annotations

import re

import numpy as np

from mdpoly.ir.mdh import Affine, Buffer, MdhExpr

_C_TO_NUMPY = {
    "float": "float32", "double": "float64", "long double": "longdouble",
    "char": "int8", "signed char": "int8", "unsigned char": "uint8",
    "short": "int16", "short int": "int16", "unsigned short": "uint16",
    "int": "int32", "signed int": "int32", "signed": "int32", "unsigned": "uint32", "unsigned int": "uint32",
    "long": "int64", "long int": "int64", "unsigned long": "uint64", "long long": "int64",
    "unsigned long long": "uint64", "size_t": "uint64", "int8_t": "int8", "uint8_t": "uint8",
    "int16_t": "int16", "uint16_t": "uint16", "int32_t": "int32", "uint32_t": "uint32",
    "int64_t": "int64", "uint64_t": "uint64", "_Bool": "bool", "bool": "bool",
}


def numpy_dtype(c_type: str) -> str:
    key = " ".join(c_type.replace("const", "").replace("volatile", "").split())
    if key not in _C_TO_NUMPY:
        raise KeyError(f"no numpy type for C type '{c_type}'")
    return _C_TO_NUMPY[key]


def _eval_affine(expr: Affine, env: dict[str, int]) -> int:
    return expr.constant + sum(c * env[n] for n, c in expr.terms)


def _eval_c_extent(text: str, env: dict[str, int]) -> int | None:
    if not text:
        return None
    if not re.fullmatch(r"[\w\s+\-*/()]+", text):
        return None
    try:
        value = eval(text, {"__builtins__": {}}, dict(env))
    except (NameError, SyntaxError, ArithmeticError, TypeError):  # an unknown name, not an expression
        return None
    return int(value)


def index_ranges(mdh: MdhExpr, env: dict[str, int]) -> dict[str, list[int]]:
    """Per buffer, the largest index + 1 reached in each dimension over the domain."""
    lo = {d.iterator: _eval_affine(d.lower, env) for d in mdh.dims}
    hi = {d.iterator: lo[d.iterator] + _eval_affine(d.extent, env) - 1 for d in mdh.dims}
    reach: dict[str, list[int]] = {}
    accesses = [*mdh.inputs, *(o.access for o in mdh.outputs)]
    for acc in accesses:
        dims = reach.setdefault(acc.buffer, [0] * len(acc.index))
        for k, e in enumerate(acc.index):
            top = e.constant
            for n, c in e.terms:
                if n in lo:
                    top += c * (hi[n] if c > 0 else lo[n])
                else:
                    top += c * env[n]
            dims[k] = max(dims[k], top + 1)
    return reach


def concrete_shape(buf: Buffer, reach: list[int] | None, env: dict[str, int]) -> tuple[int, ...]:
    if buf.kind == "scalar":
        return ()
    declared = [_eval_c_extent(s, env) for s in buf.shape]
    if reach is None:
        reach = [1] * max(len(declared), 1)
    if buf.kind == "pointer" and len(reach) == 1:
        return (max(reach[0], 1),)
    shape = []
    for k, need in enumerate(reach):
        have = declared[k] if k < len(declared) else None
        shape.append(max(have or 0, need, 1))
    return tuple(shape)


def make_buffers(mdh: MdhExpr, sizes: dict[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    """Random contents for every buffer of ``mdh``; size parameters get their values."""
    rng = np.random.default_rng(seed)
    reach = index_ranges(mdh, sizes)
    out: dict[str, np.ndarray] = {}
    for buf in mdh.buffers:
        dtype = np.dtype(numpy_dtype(buf.elem_type))
        if buf.kind == "scalar" and buf.name in sizes:
            out[buf.name] = np.array(sizes[buf.name], dtype=dtype)
            continue
        shape = concrete_shape(buf, reach.get(buf.name), sizes)
        if dtype.kind == "f":
            data = rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
        elif dtype.kind == "b":
            data = rng.integers(0, 2, size=shape).astype(dtype)
        else:
            data = rng.integers(-50, 50, size=shape).astype(dtype) if dtype.kind == "i" \
                else rng.integers(0, 50, size=shape).astype(dtype)
        out[buf.name] = np.ascontiguousarray(data)
    return out
