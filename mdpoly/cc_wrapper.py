"""``mdpoly-cc``: a C compiler driver that runs mdpoly on each C source, then the real compiler.

Usage::

    mdpoly-cc [mdpoly options] -- <gcc-style arguments>
    mdpoly-cc <gcc-style arguments>               # e.g. make CC=mdpoly-cc

For every ``.c`` input of a compiling command (``-c``, ``-S`` or compile-and-link) the wrapper
runs mdpoly on it into a temporary directory, preprocessing with the real compiler itself
(``--preprocessor '$MDPOLY_CC -E <flags> -x c'``: the target's compile flags such as
``-fopenmp``, then every preprocessing-relevant option of the command line in its order, see
``CompilerCommand.preprocess_flags``), so mdpoly parses exactly what the compiler compiles,
keeping the file's base name, and calls the real compiler with the same arguments, the
transformed file in place of the original, ``-iquote <source dir>`` so that quoted includes
still resolve, and what the target needs (``-fopenmp`` for OpenMP, also when linking;
``-lOpenCL``; for CUDA the toolkit's ``-I``/``-L`` flags and ``-lcuda -lnvrtc``, see
``mdpoly.cuda_toolkit``).
``-M``/``-MM``/``-E``, version and ``-v`` queries pass straight through; dependency files written
by ``-MD``/``-MMD`` name the original source, not the temporary one. A source mdpoly cannot
handle is compiled unchanged, with a ``mdpoly-cc: warning:`` line on stderr.

Environment: ``MDPOLY_CC`` is the real compiler (default ``cc``; may hold a prefix such as
``ccache gcc``), ``MDPOLY_FLAGS`` adds mdpoly options, ``MDPOLY_COMMAND`` replaces the command
that runs mdpoly (default: this package's ``mdpoly.cli.main`` under the current Python),
``MDPOLY_CC_TIMEOUT`` bounds each mdpoly run in seconds (default 600). With ``--mpi`` the real
compiler is ``MDPOLY_MPICC`` (default ``mpicc``) instead. The exit status is the real compiler's.
``mdpoly-cc --mdpoly-help`` prints this usage (``USAGE``; ``--help`` is the compiler's).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mdpoly.cc_args import CompilerCommand, parse_compiler_args
from mdpoly.diagnostics import MdpolyError
from mdpoly.interrupts import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, terminate_raises
from mdpoly.targets import target_named

PROG = "mdpoly-cc"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
MDPOLY_MAIN = "import sys; from mdpoly.cli import main; sys.exit(main())"

def target_flags(target: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(compiling, linking) flags the real compiler needs for code generated for ``target``: its
    registry entry's ``Toolchain`` (``mdpoly.targets``; CUDA's name the toolkit ``find_cuda``
    finds: ``-I``, ``-L`` incl. ``lib64/stubs``, ``-lcuda -lnvrtc``); none for a name mdpoly
    does not know (mdpoly itself then reports the error)."""
    try:
        return target_named(target).toolchain.flags()
    except MdpolyError:
        return (), ()


HELP_FLAG = "--mdpoly-help"
USAGE = """\
usage: mdpoly-cc [mdpoly options] -- <compiler arguments>
       mdpoly-cc <compiler arguments>          (e.g. make CC=mdpoly-cc)

A drop-in C compiler: runs mdpoly on each .c file a command compiles (into a temporary
folder, preprocessed by the real compiler with the command's flags), then the real
compiler on the result, adding what the target needs (-fopenmp for OpenMP). A file mdpoly
cannot transform is compiled unchanged, with a 'mdpoly-cc: warning:' line. Queries (-E,
-M, -MM, --version, -v) and response files (@file) go straight to the real compiler.
The exit status is the real compiler's.

Tuning is off by default (it measures each nest for up to a minute): mdpoly-cc passes
--no-tune first; turn it on with MDPOLY_FLAGS='--tune' (or '--tune-time 30'), or
'mdpoly-cc --tune -- ...'. Later options win.

Settings (environment):
  MDPOLY_CC          the real compiler (default 'cc'; may be a prefix such as 'ccache gcc')
  MDPOLY_FLAGS       mdpoly options added to every run, e.g. '--target opencl -q'
  MDPOLY_CC_TIMEOUT  seconds one mdpoly run may take (default 600); past it the file is
                     compiled unchanged
  MDPOLY_COMMAND     the command that runs mdpoly (default: this Python's mdpoly.cli)
  MDPOLY_MPICC       the real compiler with --mpi (default 'mpicc')
  MDPOLY_CACHE_DIR   tuning cache folder (as for mdpoly)

mdpoly's options: 'mdpoly --help'. The compiler's: 'mdpoly-cc --help'.
"""

_DEPTH_VAR = "MDPOLY_CC_DEPTH"   # guards against MDPOLY_CC pointing back at mdpoly-cc


#: In a GPU target's output, the sign of OpenMP code inside (the OpenMP target's preamble): the
#: nests that stay on the host (``mdpoly.hybrid``) are built with ``-fopenmp``.
HYBRID_MARK = "MDP_TEAM_H"


def _with_openmp_link(target: str, link_flags: tuple[str, ...]) -> tuple[str, ...]:
    """A GPU target's link flags plus ``-fopenmp`` (its objects may hold OpenMP code: a hybrid output)."""
    if target in ("opencl", "cuda") and "-fopenmp" not in link_flags:
        return ("-fopenmp", *link_flags)
    return link_flags


def warn(message: str) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def note(message: str) -> None:
    print(f"{PROG}: note: {message}", file=sys.stderr)


@dataclass(frozen=True, slots=True)
class Transformed:
    """One C source and the file mdpoly wrote for it (``None`` when it fell back)."""

    original: str
    generated: Path | None


def split_wrapper_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split ``[mdpoly options] -- <compiler args>``; without ``--`` all are compiler args."""
    argv = list(argv)
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return [], argv


def target_of(mdpoly_options: Sequence[str]) -> str:
    """The ``--target`` named in mdpoly options (last one wins), default ``openmp``."""
    target = "openmp"
    for i, opt in enumerate(mdpoly_options):
        if opt == "--target" and i + 1 < len(mdpoly_options):
            target = mdpoly_options[i + 1]
        elif opt.startswith("--target="):
            target = opt.split("=", 1)[1]
    return target


def mdpoly_command() -> list[str]:
    """The argv prefix that runs mdpoly (``MDPOLY_COMMAND`` overrides it)."""
    override = os.environ.get("MDPOLY_COMMAND")
    return shlex.split(override) if override else [sys.executable, "-c", MDPOLY_MAIN]


def _forward(data: bytes) -> None:
    """Copy a child's messages to our stderr unchanged (a text-only stream gets them decoded)."""
    buffer = getattr(sys.stderr, "buffer", None)
    if buffer is None:
        sys.stderr.write(data.decode("utf-8", "replace"))
        return
    sys.stderr.flush()
    buffer.write(data)
    buffer.flush()


def preprocessor_command(command: CompilerCommand, target: str) -> list[str]:
    """The command that preprocesses a source of ``command`` as the real compiler will compile
    the transformed file (the file name follows it): ``$MDPOLY_CC -E``, the target's compile
    flags (placed first, as ``rewrite_compiler_args`` places them), the command's
    preprocessing flags in their order, and ``-x c``."""
    compile_flags = [f for f in target_flags(target)[0] if not f.startswith("-l")]
    return [*real_compiler(), "-E", *compile_flags, *command.preprocess_flags, "-x", "c"]


#: Seconds a stopped mdpoly gets to remove its temporary folders before it is killed.
STOP_GRACE = 10.0


def _waited(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether ``proc`` ended within ``seconds``; its messages are forwarded to our stderr."""
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    _forward(out + err)
    return True


def _run_stoppable(cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    """``subprocess.run(cmd, capture_output=True, timeout=timeout)``, except that a wrapper that is
    stopped (Ctrl-C, SIGTERM) or times out first sends mdpoly SIGTERM, so that it cleans up (its
    messages are forwarded), and kills it only after ``STOP_GRACE`` seconds."""
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException as exc:
            # Ctrl-C reached mdpoly too (one process group): give it a moment to stop on its own
            if not isinstance(exc, KeyboardInterrupt) or not _waited(proc, 2.0):
                proc.terminate()
                if not _waited(proc, STOP_GRACE):
                    proc.kill()
                    proc.communicate()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def run_mdpoly(source: str, out: Path, options: Sequence[str], preprocessor: Sequence[str]) -> bool:
    """Run mdpoly on ``source`` into ``out``, preprocessing with ``preprocessor`` (a command the
    file name is appended to); forward its messages; return whether it worked."""
    cmd = [*mdpoly_command(), source, "-o", str(out), "--preprocessor", shlex.join(preprocessor), *options]
    env = dict(os.environ)
    timeout = float(os.environ.get("MDPOLY_CC_TIMEOUT", "600"))
    try:
        proc = _run_stoppable(cmd, env, timeout)
    except subprocess.TimeoutExpired:
        warn(f"mdpoly took longer than {timeout:g}s on {source}; compiling it unchanged")
        return False
    # Diagnostics go to stderr, byte for byte (a source need not be UTF-8); a compiler's
    # stdout is not the place for them.
    _forward(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not out.is_file():
        stderr = proc.stderr.decode("utf-8", "replace")
        lines = stderr.strip().splitlines() or ["no message"]
        last = next((ln for ln in reversed(lines) if "error:" in ln), lines[-1])
        warn(f"mdpoly could not transform {source} (exit {proc.returncode}: {last}); compiling it unchanged")
        return False
    return True


def transform_sources(command: CompilerCommand, options: Sequence[str], workdir: Path) -> list[Transformed]:
    """Run mdpoly on every C source of ``command``, each into its own folder under ``workdir``."""
    preprocessor = preprocessor_command(command, target_of(options))
    results = []
    for number, source in enumerate(command.sources):
        if not Path(source).is_file():
            results.append(Transformed(source, None))   # the compiler reports the missing file
            continue
        out = workdir / str(number) / Path(source).name
        out.parent.mkdir()
        ok = run_mdpoly(source, out, options, preprocessor)
        results.append(Transformed(source, out if ok else None))
    return results


def rewrite_compiler_args(command: CompilerCommand, transformed: Sequence[Transformed], target: str) -> list[str]:
    """The compiler arguments with generated files in place of the sources, plus target flags."""
    compile_flags, link_flags = target_flags(target)
    if target != "openmp" and any(t.generated is not None and HYBRID_MARK in t.generated.read_text(errors="replace")
                                  for t in transformed):
        compile_flags = (*compile_flags, "-fopenmp")   # a GPU output with OpenMP code inside (mdpoly.hybrid)
    link_flags = _with_openmp_link(target, link_flags)
    args = list(command.args)
    quote_dirs: list[str] = []
    for index, item in zip(command.source_indices, transformed):
        if item.generated is not None:
            args[index] = str(item.generated)
            src_dir = str(Path(item.original).resolve().parent)
            if src_dir not in quote_dirs:
                quote_dirs.append(src_dir)
    extra: list[str] = []
    for src_dir in quote_dirs:
        extra += ["-iquote", src_dir]
    flags = compile_flags if command.mode != "link" else tuple(dict.fromkeys(compile_flags + link_flags))
    extra += [f for f in flags if not f.startswith("-l")]
    libs = [f for f in flags if f.startswith("-l")]   # libraries after the objects that need them
    if (command.mode in ("compile", "assemble") and command.output is None and not command.syntax_only
            and len(command.sources) == 1 and any(t.generated for t in transformed)):
        suffix = ".o" if command.mode == "compile" else ".s"
        extra += ["-o", Path(command.sources[0]).with_suffix(suffix).name]
    return extra + args + libs


def dependency_file(command: CompilerCommand) -> Path | None:
    """Where ``-MD``/``-MMD`` writes its list: ``-MF``, else the output with suffix ``.d``."""
    if not command.writes_deps:
        return None
    if command.dep_file is not None:
        return Path(command.dep_file)
    if command.output is not None:
        return Path(command.output).with_suffix(".d")
    if len(command.sources) == 1:
        return Path(Path(command.sources[0]).name).with_suffix(".d")
    return None


def fix_dependency_file(path: Path | None, transformed: Sequence[Transformed]) -> None:
    """Make a dependency file name the original sources instead of the generated ones."""
    if path is None or not path.is_file():
        return
    # Paths are bytes too: decode and encode so that every byte survives.
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    for item in transformed:
        if item.generated is not None:
            text = text.replace(str(item.generated), item.original.replace(" ", "\\ "))
    path.write_bytes(text.encode("utf-8", "surrogateescape"))


def real_compiler() -> list[str]:
    return shlex.split(os.environ.get("MDPOLY_CC", "cc")) or ["cc"]


def run_compiler(args: Sequence[str]) -> int:
    return subprocess.run([*real_compiler(), *args], check=False).returncode


def compile_with_mdpoly(command: CompilerCommand, options: Sequence[str]) -> int:
    """Transform the sources of a compiling command, then run the real compiler on them."""
    target = target_of(options)
    workdir = Path(tempfile.mkdtemp(prefix="mdpoly-cc-"))
    keep = False
    try:
        transformed = transform_sources(command, options, workdir)
        status = run_compiler(rewrite_compiler_args(command, transformed, target))
        if status == 0:
            fix_dependency_file(dependency_file(command), transformed)
        elif any(t.generated for t in transformed):
            keep = True
            note(f"the compiler failed on mdpoly's output; it is kept in {workdir}")
        return status
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``mdpoly-cc``; returns the real compiler's exit status (130 after Ctrl-C,
    143 after SIGTERM, its temporary folder and mdpoly's removed)."""
    with terminate_raises():
        try:
            return _main(argv)
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        except Terminated:
            print(f"{PROG}: terminated", file=sys.stderr, flush=True)
            return EXIT_TERMINATED


def _main(argv: Sequence[str] | None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if HELP_FLAG in args:
        sys.stdout.write(USAGE)
        return 0
    wrapper_options, compiler_args = split_wrapper_args(args)
    # No tuning by default inside builds (it measures for up to a minute per nest);
    # MDPOLY_FLAGS="--tune" or "--tune-time 30" turns it on (later flags win).
    options = ["--no-tune", *shlex.split(os.environ.get("MDPOLY_FLAGS", "")), *wrapper_options]

    if os.environ.get(_DEPTH_VAR):
        warn("MDPOLY_CC points back at mdpoly-cc; using cc")
        return subprocess.run(["cc", *compiler_args], check=False).returncode
    os.environ[_DEPTH_VAR] = "1"
    if "--mpi" in options:   # SPMD code over MPI ranks: the MPI compiler wrapper builds it
        os.environ["MDPOLY_CC"] = os.environ.get("MDPOLY_MPICC", "mpicc")

    command = parse_compiler_args(compiler_args)
    link_flags = list(_with_openmp_link(target_of(options), target_flags(target_of(options))[1]))
    if command.mode in ("query", "preprocess"):
        return run_compiler(command.args)
    if command.response_file:
        warn("response files (@file) are not inspected; compiling without mdpoly")
        return run_compiler([*command.args, *link_flags] if command.mode == "link" else command.args)
    if not command.sources:
        return run_compiler([*command.args, *link_flags] if command.mode == "link" else command.args)
    return compile_with_mdpoly(command, options)


if __name__ == "__main__":
    sys.exit(main())
