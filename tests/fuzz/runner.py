"""Differential runner: ``Program -> Outcome`` (built as written and through mdpoly, compared).

For one program and one target: build the original with ``cc -O1 -fopenmp`` and run it; run
``mdpoly prog.c -o out.c --no-tune --all-nests --report r.json``; build ``out.c`` (OpenMP, or
OpenCL host code with ``-lOpenCL``); run it (OpenMP at 2 and 3 threads) and compare the outputs
byte for byte (the generator makes every value exact). Each program is classified:

``ok``, ``wrong-result``, ``mdpoly-crash`` (a traceback, a signal, an exit status other than 0
and 1, or exit 1 with an internal error), ``mdpoly-internal-error`` (exit 0, but a nest was kept
with code ``internal``), ``mdpoly-refused-input`` (a clean exit-1 error on valid input),
``output-does-not-build``, ``output-failed`` (exits non-zero), ``timeout`` (mdpoly or the
output), and ``invalid-program`` (the original itself fails: a generator bug).

Failures are attributed to a kernel where possible (the first differing output line names it;
an error names a source line) and marked *known* through :mod:`known`.

.. autoclass:: Outcome
.. autofunction:: check_program
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .cast import Program, Rendered, render
from .known import explain

REPO = Path(__file__).resolve().parents[2]
FAILURE_CLASSES = ("wrong-result", "mdpoly-crash", "mdpoly-internal-error", "mdpoly-refused-input",
                   "output-does-not-build", "output-failed", "timeout", "invalid-program")
MDPOLY_TIMEOUT_S = 120
RUN_TIMEOUT_S = 30
BUILD_TIMEOUT_S = 120


@dataclass(frozen=True)
class NestResult:
    """One nest of a kernel function, from mdpoly's report."""

    kernel: str
    line: int
    status: str            # transformed | kept
    code: str | None


@dataclass(frozen=True)
class Outcome:
    """What happened to one program on one target.

    :arg status: ``ok`` or one of :data:`FAILURE_CLASSES`.
    :arg detail: the command's tail, the first differing lines, ...
    :arg kernel: the kernel the failure is attributed to, if any.
    :arg tags: that kernel's feature tags (all kernels' when unattributed).
    :arg known: the known bug's tag that explains the failure, if any.
    :arg nests: every kernel nest in mdpoly's report.
    """

    seed: int
    target: str
    status: str
    detail: str = ""
    kernel: str | None = None
    tags: frozenset[str] = frozenset()
    known: str | None = None
    nests: tuple[NestResult, ...] = field(default=())

    @property
    def failed(self) -> bool:
        return self.status != "ok"


def c_compiler() -> str:
    return os.environ.get("MDPOLY_FUZZ_CC", "cc")


def mdpoly_command() -> list[str]:
    """mdpoly as its console script runs it, from this checkout; ``MDPOLY_FUZZ_COMMAND`` (a shell
    line) replaces it, e.g. to fuzz an installed or an older mdpoly."""
    override = os.environ.get("MDPOLY_FUZZ_COMMAND")
    if override:
        return shlex.split(override)
    return [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def opencl_unavailable() -> str | None:
    """Why no OpenCL program can run here, or ``None``."""
    vendors = Path("/etc/OpenCL/vendors")
    if not vendors.is_dir() or not any(vendors.glob("*.icd")):
        return "no OpenCL ICD in /etc/OpenCL/vendors (apt-get install pocl-opencl-icd)"
    if not Path("/usr/include/CL/cl.h").exists():
        return "no OpenCL headers (apt-get install opencl-c-headers ocl-icd-opencl-dev)"
    return None


@dataclass
class _Step:
    rc: int | None         # None: timed out
    out: str
    err: str


def _run(cmd: list[str], *, cwd: Path, timeout: float, env: dict[str, str] | None = None) -> _Step:
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env,
                           errors="replace")
    except subprocess.TimeoutExpired as exc:
        return _Step(None, _text(exc.stdout), _text(exc.stderr))
    return _Step(p.returncode, p.stdout, p.stderr)


def _text(b: bytes | str | None) -> str:
    if b is None:
        return ""
    return b if isinstance(b, str) else b.decode(errors="replace")


def build_flags(target: str) -> list[str]:
    return ["-lOpenCL", "-lm"] if target == "opencl" else ["-lm"]


def _first_diff(a: str, b: str) -> tuple[int, str, str] | None:
    la, lb = a.splitlines(), b.splitlines()
    for n in range(max(len(la), len(lb))):
        x = la[n] if n < len(la) else "<end of output>"
        y = lb[n] if n < len(lb) else "<end of output>"
        if x != y:
            return n, x, y
    return None


_LINE_RE = re.compile(r"prog\.c:(\d+):")


def _kernel_nests(report: Path, r: Rendered) -> tuple[NestResult, ...]:
    try:
        nests = json.loads(report.read_text())["nests"]
    except (OSError, ValueError, KeyError):
        return ()
    out = []
    for n in nests:
        k = r.kernel_at(int(n.get("line", 0)))
        if k is not None:
            out.append(NestResult(k, int(n["line"]), str(n["status"]), n.get("code")))
    return tuple(out)


def check_program(prog: Program, target: str = "openmp", *, work: Path | None = None,
                  threads: tuple[int, ...] = (2, 3)) -> Outcome:
    """Build and run ``prog`` as written and through mdpoly for ``target``; classify the result.

    :arg work: a directory to keep the files in (default: a temporary one, removed).
    :arg threads: the ``OMP_NUM_THREADS`` values the OpenMP output runs with.
    """
    if work is None:
        with tempfile.TemporaryDirectory(prefix="mdpoly-fuzz-") as tmp:
            return check_program(prog, target, work=Path(tmp), threads=threads)
    rendered = render(prog)
    (work / "prog.c").write_text(rendered.text)
    tags_of = {k.name: k.tags for k in prog.kernels}
    all_tags = frozenset().union(*tags_of.values()) if tags_of else frozenset()

    def outcome(status: str, detail: str = "", kernel: str | None = None,
                nests: tuple[NestResult, ...] = ()) -> Outcome:
        tags = tags_of.get(kernel, all_tags) if kernel else all_tags
        # a traceback names no source line: never blame it on a known bug elsewhere in the program
        unattributed_crash = kernel is None and status in ("mdpoly-crash", "timeout")
        known = None if status in ("ok", "invalid-program") or unattributed_crash else explain(tags, target)
        return Outcome(prog.seed, target, status, detail[-4000:], kernel, tags, known, nests)

    cc = c_compiler()
    b = _run([cc, "-O1", "-fopenmp", "prog.c", "-o", "orig", "-lm"], cwd=work, timeout=BUILD_TIMEOUT_S)
    if b.rc != 0:
        return outcome("invalid-program", "original does not build:\n" + b.err)
    ref = _run(["./orig"], cwd=work, timeout=RUN_TIMEOUT_S, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if ref.rc != 0:
        return outcome("invalid-program", f"original exits {ref.rc}:\n{ref.err}")

    m = _run([*mdpoly_command(), "prog.c", "-o", "out.c", "--target", target, "--no-tune", "--all-nests",
              "--report", "r.json"], cwd=work, timeout=MDPOLY_TIMEOUT_S, env=child_env())
    nests = _kernel_nests(work / "r.json", rendered)
    err_line = _LINE_RE.search(m.err)
    err_kernel = rendered.kernel_at(int(err_line.group(1))) if err_line else None
    if m.rc is None:
        return outcome("timeout", "mdpoly timed out\n" + m.err, err_kernel, nests)
    if m.rc != 0:
        internal = "Traceback" in m.err or "internal" in m.err or m.rc != 1
        return outcome("mdpoly-crash" if internal else "mdpoly-refused-input", f"mdpoly exit {m.rc}:\n{m.err}",
                       err_kernel, nests)
    if not (work / "out.c").is_file():
        return outcome("mdpoly-crash", "mdpoly exited 0 without writing out.c\n" + m.err, None, nests)

    flags = ["-fopenmp"] if target == "openmp" else []
    b = _run([cc, "-O1", *flags, "out.c", "-o", "par", *build_flags(target)], cwd=work, timeout=BUILD_TIMEOUT_S)
    if b.rc != 0:
        return outcome("output-does-not-build", b.err, _kernel_in_log(b.err, rendered, tags_of), nests)
    for t in threads if target == "openmp" else (1,):
        env = {**os.environ, "OMP_NUM_THREADS": str(t)}
        r = _run(["./par"], cwd=work, timeout=RUN_TIMEOUT_S * 4, env=env)
        if r.rc is None:
            return outcome("timeout", f"out.c timed out (OMP_NUM_THREADS={t})", None, nests)
        if r.rc != 0:
            last = r.out.splitlines()[-1:] or [""]
            after = _kernel_in_log(r.err, rendered, tags_of) or _kernel_after(last[0], prog)
            return outcome("output-failed", f"out.c exits {r.rc} (OMP_NUM_THREADS={t}):\n{r.err}", after, nests)
        diff = _first_diff(ref.out, r.out)
        if diff is not None:
            n, want, got = diff
            kernel = (want.split() or [None])[0]
            return outcome("wrong-result", f"OMP_NUM_THREADS={t}, output line {n + 1}:\n  expected {want}\n"
                           f"  actual   {got}", kernel if kernel in tags_of else None, nests)
    internal = [x for x in nests if x.code == "internal"]
    if internal:
        return outcome("mdpoly-internal-error", _internal_message(m.err, internal[0].line), internal[0].kernel,
                       nests)
    return outcome("ok", "", None, nests)


def _kernel_in_log(log: str, r: Rendered, kernels: dict[str, frozenset[str]]) -> str | None:
    """The kernel a compiler's log points at: a ``prog.c`` line (through ``#line``), or a
    generated function named after it (``mdpoly_k2_117``)."""
    for m in _LINE_RE.finditer(log):
        k = r.kernel_at(int(m.group(1)))
        if k is not None:
            return k
    m = re.search(r"mdpoly_(k\d+)_\d+", log)
    return m.group(1) if m and m.group(1) in kernels else None


def _kernel_after(last_line: str, prog: Program) -> str | None:
    """The kernel that ran after the one whose dump was printed last (the one that failed)."""
    names = [k.name for k in prog.kernels]
    if not last_line:
        return names[0] if names else None
    done = last_line.split()[0]
    if done in names and names.index(done) + 1 < len(names):
        return names[names.index(done) + 1]
    return done if done in names else None


def _internal_message(err: str, line: int) -> str:
    hits = [x for x in err.splitlines() if "internal" in x]
    return "\n".join(hits) or f"nest at line {line} kept with code 'internal'"


# {{{ campaigns


@dataclass
class Summary:
    """Counts over a campaign."""

    programs: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    known: Counter[str] = field(default_factory=Counter)
    nests_transformed: int = 0
    nests_kept: Counter[str] = field(default_factory=Counter)
    failures: list[Outcome] = field(default_factory=list)

    def add(self, o: Outcome) -> None:
        self.programs += 1
        self.statuses[o.status] += 1
        for n in o.nests:
            if n.status == "transformed":
                self.nests_transformed += 1
            else:
                self.nests_kept[n.code or "?"] += 1
        if o.failed:
            self.failures.append(o)
            if o.known:
                self.known[o.known] += 1

    @property
    def nests(self) -> int:
        return self.nests_transformed + sum(self.nests_kept.values())

    @property
    def transformed_fraction(self) -> float:
        return self.nests_transformed / self.nests if self.nests else 0.0

    @property
    def unknown_failures(self) -> list[Outcome]:
        return [o for o in self.failures if not o.known]

    def text(self) -> str:
        lines = [f"programs: {self.programs}",
                 "outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items())),
                 f"kernel nests: {self.nests}, transformed {self.nests_transformed} "
                 f"({100 * self.transformed_fraction:.1f}%)",
                 "kept by reason: " + ", ".join(f"{k} {v}" for k, v in self.nests_kept.most_common())]
        if self.failures:
            lines.append(f"failures: {len(self.failures)} ({len(self.unknown_failures)} not known)")
            if self.known:
                lines.append("known bugs hit: " + ", ".join(f"{k} {v}" for k, v in self.known.most_common()))
        return "\n".join(lines)

# }}}


def have_compiler() -> bool:
    return shutil.which(c_compiler()) is not None
