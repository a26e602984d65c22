"""Test-case reduction: a failing ``Program`` -> a small ``Program`` that fails the same way.

Greedy passes over the program model, each edit kept when the program is still valid C without
undefined behaviour (built with ``-fsanitize=address,undefined`` and ``-Werror=uninitialized``,
it runs cleanly) and mdpoly still fails with the same class (and the same known tag):

1. keep only the kernel the failure was attributed to, then drop other kernels one by one;
2. shrink every size (to 1, 2, 3, half);
3. drop statements, unwrap loops (the iterator replaced by its start value) and ``if``s (either
   branch instead of the ``if``, the ``else`` dropped, the condition simplified);
4. simplify expressions (an operand instead of the operation, ``1`` instead of a leaf);
5. spell sizes as literals, declare iterators in the loop headers, pass arrays as globals.

.. autofunction:: reduce_failure
.. autofunction:: write_reproducer
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from .cast import (
    PRELUDE,
    Assign,
    Bin,
    Call,
    Cast,
    Cond,
    Decl,
    Expr,
    For,
    If,
    Index,
    Kernel,
    Lit,
    Name,
    OneLine,
    Pragma,
    Program,
    Return,
    Size,
    Stmt,
    Un,
    array_count,
    render,
    used_names,
)
from .runner import RUN_TIMEOUT_S, Outcome, c_compiler, check_program

MAX_CHECKS = 150


def is_valid(prog: Program) -> bool:
    """``prog`` builds with sanitizers and runs without a finding, an error or a hang."""
    with tempfile.TemporaryDirectory(prefix="mdpoly-fuzz-san-") as tmp:
        work = Path(tmp)
        (work / "p.c").write_text(render(prog).text)
        try:
            b = subprocess.run([c_compiler(), "-O1", "-g", "-fsanitize=address,undefined",
                                "-fno-sanitize-recover=all", "-Werror=uninitialized", "-Werror=maybe-uninitialized",
                                "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
                                "p.c", "-o", "p", "-lm"], cwd=work, capture_output=True, timeout=120)
            if b.returncode != 0:
                return False
            r = subprocess.run(["./p"], cwd=work, capture_output=True, timeout=RUN_TIMEOUT_S,
                               env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})
        except subprocess.TimeoutExpired:
            return False
        return r.returncode == 0 and not r.stderr.strip()


# {{{ edits


def _sub_expr(e: Expr, var: str, by: Expr) -> Expr:
    if isinstance(e, Name):
        return by if e.name == var else e
    if isinstance(e, (Lit,)) or not dataclasses.is_dataclass(e):
        return e
    changes = {}
    for f in dataclasses.fields(e):
        v = getattr(e, f.name)
        if isinstance(v, tuple):
            changes[f.name] = tuple(_sub_expr(x, var, by) if not isinstance(x, str) else x for x in v)
        elif dataclasses.is_dataclass(v):
            changes[f.name] = _sub_expr(v, var, by)
    return dataclasses.replace(e, **changes)


def _sub_stmt(s: Stmt, var: str, by: Expr) -> Stmt:
    return _sub_expr(s, var, by)  # type: ignore[arg-type,return-value]


def _expr_edits(e: Expr) -> Iterator[Expr]:
    """Simpler versions of ``e``: an operand for the operation, a literal for a leaf."""
    match e:
        case Bin(op, left, right):
            yield left
            yield right
            for x in _expr_edits(left):
                yield Bin(op, x, right)
            for x in _expr_edits(right):
                yield Bin(op, left, x)
        case Un(op, operand) | Cast(op, operand):
            yield operand
            for x in _expr_edits(operand):
                yield dataclasses.replace(e, operand=x)
        case Cond(test, then, other):
            yield then
            yield other
            for x in _expr_edits(then):
                yield Cond(test, x, other)
            for x in _expr_edits(other):
                yield Cond(test, then, x)
        case Call(fn, args):
            for n, a in enumerate(args):
                for x in _expr_edits(a):
                    yield Call(fn, (*args[:n], x, *args[n + 1:]))
        case Index() | Name():
            yield Lit("1")
        case _:
            return


def _body_edits(body: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, ...]]:
    for n, s in enumerate(body):
        before, after = body[:n], body[n + 1:]
        if not isinstance(s, (Return, Decl, Pragma)):
            yield before + after
        if isinstance(s, For):
            yield before + tuple(_sub_stmt(b, s.var, s.start) for b in s.body) + after
            for inner in _body_edits(s.body):
                yield (*before, dataclasses.replace(s, body=inner), *after)
        elif isinstance(s, If):
            yield before + s.body + after
            if s.orelse:
                yield before + s.orelse + after
                yield (*before, If(s.test, s.body), *after)
            for x in _expr_edits(s.test):
                yield (*before, dataclasses.replace(s, test=x), *after)
            for inner in _body_edits(s.body):
                yield (*before, dataclasses.replace(s, body=inner), *after)
            for inner in _body_edits(s.orelse):
                yield (*before, dataclasses.replace(s, orelse=inner), *after)
        elif isinstance(s, OneLine):
            yield before + s.body + after
        elif isinstance(s, Assign):
            for x in _expr_edits(s.value):
                yield (*before, Assign(s.target, s.op, x), *after)
        elif isinstance(s, Decl) and s.init is not None:
            for x in _expr_edits(s.init):
                yield (*before, dataclasses.replace(s, init=x), *after)


def _with_kernel(prog: Program, n: int, k: Kernel) -> Program:
    return dataclasses.replace(prog, kernels=(*prog.kernels[:n], k, *prog.kernels[n + 1:]))


def _prune(prog: Program) -> Program:
    """``prog`` without arrays and sizes nothing uses (the main arrays of aliasing calls stay)."""
    sizes: set[str] = set()
    bases: set[str] = set()
    for k in prog.kernels:
        s, b = used_names(k.body + k.locals_)
        sizes |= s
        bases |= b | {a.replace(" ", "").split("+")[0] for a in k.args} | set(k.dumps)
    arrays = tuple(a for a in prog.arrays if a.name in bases)
    for a in arrays:
        sizes |= {d.size for d in a.dims if d.size}
    return dataclasses.replace(prog, arrays=arrays, sizes=tuple(s for s in prog.sizes if s.name in sizes))


def _candidates(prog: Program, kernel: str | None) -> Iterator[Program]:
    ks = prog.kernels
    if kernel is not None and len(ks) > 1 and any(k.name == kernel for k in ks):
        yield _prune(dataclasses.replace(prog, kernels=tuple(k for k in ks if k.name == kernel)))
    for n in range(len(ks)):
        if len(ks) > 1:
            yield _prune(dataclasses.replace(prog, kernels=ks[:n] + ks[n + 1:]))
    for n, s in enumerate(prog.sizes):
        for v in sorted({1, 2, 3, s.value // 2}):
            if v < s.value:
                yield dataclasses.replace(prog, sizes=(*prog.sizes[:n], Size(s.name, v, s.mode), *prog.sizes[n + 1:]))
    for n, k in enumerate(ks):
        for body in _body_edits(k.body):
            yield _prune(_with_kernel(prog, n, dataclasses.replace(k, body=body)))
    for n, s in enumerate(prog.sizes):
        if s.mode != "literal":
            yield dataclasses.replace(prog, sizes=(*prog.sizes[:n], Size(s.name, s.value, "literal"), *prog.sizes[n + 1:]))
    for n, k in enumerate(ks):
        if k.c89:
            from .generator import _declare_iterators
            types = dict(k.iter_types)
            body = tuple(_declare_iterators(s, types) for s in k.body)
            yield _with_kernel(prog, n, dataclasses.replace(k, body=body, c89=False, iter_types=()))
    for n, a in enumerate(prog.arrays):
        if a.passing != "global" or a.const:
            yield dataclasses.replace(prog, arrays=(*prog.arrays[:n], dataclasses.replace(a, passing="global", const=False), *prog.arrays[n + 1:]))

# }}}


def reduce_failure(prog: Program, failure: Outcome, *, max_checks: int = MAX_CHECKS,
                   log: Callable[[str], None] | None = None) -> Program:
    """The smallest program found that still fails like ``failure`` (same class, same known tag).

    :arg max_checks: how many candidates to check at most (each builds and runs mdpoly).
    """
    def same(p: Program) -> bool:
        if not is_valid(p):
            return False
        o = check_program(p, failure.target)
        return o.status == failure.status and o.known == failure.known

    checks = 0
    kernel = failure.kernel
    progress = True
    while progress and checks < max_checks:
        progress = False
        for cand in _candidates(prog, kernel):
            if cand == prog:
                continue
            checks += 1
            if same(cand):
                prog = cand
                progress = True
                if log:
                    log(f"reduced: {len(render(prog).text.splitlines())} lines")
                break
            if checks >= max_checks:
                break
        kernel = None
    return prog


def write_reproducer(prog: Program, failure: Outcome, directory: Path | None) -> tuple[Path, str]:
    """Write ``prog`` (every element printed when small) and the failure's details; return the C
    file's path and its text without the fixed prelude (for printing)."""
    directory = directory or Path("fuzz_failures")
    directory.mkdir(parents=True, exist_ok=True)
    small = sum(array_count(prog, a) for a in prog.arrays) <= 64
    text = render(prog, dump_all=small).text
    tag = f"-{failure.known}" if failure.known else ""
    path = directory / f"{failure.target}-{failure.status}{tag}-seed{failure.seed}.c"
    path.write_text(text)
    path.with_suffix(".txt").write_text(
        f"seed {failure.seed}, target {failure.target}: {failure.status}"
        + (f" (known: {failure.known})" if failure.known else "") + "\n"
        f"reproduce: mdpoly {path.name} -o out.c --target {failure.target} --no-tune --all-nests\n\n"
        f"{failure.detail}\n")
    shown = text.replace(PRELUDE.rstrip("\n"), "/* ... fz_init / fz_dump (tests/fuzz/fuzz_prelude.h) ... */")
    return path, shown

