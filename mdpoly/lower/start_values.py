"""Start values that read arrays, for GPU kernels: ``float val = bias[o]; for (i...) val += ...``.

The OpenMP lowering reduces into the start value (a private result tile starts at it, so one
thread's order is the original's). A GPU kernel reduces from the neutral element across
work-items and cannot start from an element it has not copied, so ``init_after_reducing``
rewrites such an output into ``out = init (+) R`` stored by the finishing expression
(``Finish``), whose reads every GPU stage already knows (footprints, transfers, kernel
arguments). The sum is reassociated by one more term, as every GPU reduction is; only ``+`` and
``*`` are rewritten (``max``/``min`` of a NaN start depend on the order), other operators keep
their refusal (``gpu-array-init``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from mdpoly.ir.mdh import Combine, Finish, MdhExpr, OutputWrite

_AFTER = {Combine.ADD: "+", Combine.MUL: "*"}


def init_after_reducing(m: MdhExpr) -> MdhExpr:
    """``m`` with each ``assign`` output whose start value reads arrays finished as
    ``init (+) R``; ``m`` itself when there is none or the operator is not ``+``/``*``."""
    op = _AFTER.get(m.reduction_op) if m.reduction_op is not None else None
    if op is None or not any(o.init_reads is not None and o.update == "assign" for o in m.outputs):
        return m
    return replace(m, outputs=tuple(_finished(o, op) for o in m.outputs))


def _finished(o: OutputWrite, op: str) -> OutputWrite:
    start = o.init_reads
    if start is None or o.update != "assign":
        return o
    fin = o.finish
    taken = set(start.params) | (set(fin.params) if fin is not None else set())
    result = fin.result if fin is not None else "mdp_R"
    while fin is None and result in taken:
        result += "_"
    # a lone name stays bare: '(x) + y' would read as a cast of '+y' to a type 'x'
    first = start.expr if re.fullmatch(r"[A-Za-z_]\w*", start.expr) else f"({start.expr})"
    value = f"({first} {op} {result})"
    if fin is None:
        finish = Finish(value, result, start.params, start.inputs)
    else:
        expr = re.sub(rf"\b{re.escape(fin.result)}\b", lambda _m: value, fin.expr)
        finish = Finish(expr, fin.result, fin.params + start.params, fin.inputs + start.inputs)
    return replace(o, init=None, finish=finish, init_reads=None)
