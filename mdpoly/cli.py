"""The ``mdpoly`` command: argv -> ``Options`` -> front end -> driver -> ``out.c`` (exit status).

gcc's conventions: ``mdpoly in.c -o out.c [--target openmp|opencl|cuda] [-I DIR] [-D NAME[=VAL]]
[-U NAME] [--report FILE] [--emit mdh] [--strict-fp] [--all-nests] [--replace-omp] [--omp-as-written] [--size [FUNC:]NAME=VALUE] [-q]
[--tune | --no-tune] [--tune-time S] [--tune-evals N] [--tune-technique T] [--retune]
[--tune-workers ADDRESS] [--cache-dir DIR]``.
Tuning is on by default (60 s per nest, cached in ``--cache-dir``, ``$MDPOLY_CACHE_DIR`` or the XDG
cache; measured on the Dask cluster of ``--tune-workers`` or ``$MDPOLY_DASK_SCHEDULER`` if given).
Exit status (``EXIT_STATUS_HELP``): 0 on success, 1 on an error in the input (located
``file:line:col: error: ...``, no output written), 2 on misuse of the command line, 3 on an output
or environment error (an output that cannot be written, a preprocessor that cannot run), 130 on
Ctrl-C and 143 on SIGTERM (``mdpoly.interrupts``: temporary folders removed, nothing written, the
tuning results of the nests tuned so far kept in the cache). Every output path (``-o``,
``--report``, and ``--cache-dir`` when tuning) is checked before any work and all outputs are
written atomically, or none (``mdpoly.output_files``);
C text goes out byte for byte as it came in (``mdpoly.frontend.parse.encode_source``).
By default the file is preprocessed like the user's compiler compiles the output:
``$MDPOLY_CC -E`` (default ``cc``, in its default language mode) with the target's compile
flags (``-fopenmp``); ``--preprocessor CMD`` replaces that by a whole preprocessing command
(``mdpoly-cc`` passes the real compiler's ``cc -E`` with the command line's flags). Only this
module reads the environment.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mdpoly import __version__
from mdpoly.backends.devices import DEVICE_TARGETS, check_spec
from mdpoly.cost_model import parse_calibration
from mdpoly.diagnostics import Diagnostic, DiagnosticSink, EnvironmentFailure, MdpolyError, Severity
from mdpoly.interrupts import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, terminate_raises
from mdpoly.options import Options
from mdpoly.output_files import (
    OutputFile,
    OutputPathError,
    check_cache_dir,
    check_output_paths,
    write_files_atomically,
)
from mdpoly.targets import spellings, target_named
from mdpoly.tuning.atf import TECHNIQUES
from mdpoly.tuning.cache import default_cache_dir

if TYPE_CHECKING:
    from mdpoly.ir.nest import NestOutcome


#: Exit statuses of the command.
EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_ENVIRONMENT = 0, 1, 2, 3

EXIT_STATUS_HELP = (
    "exit status: 0 success; 1 error in the input (located file:line:col, nothing written); "
    "2 command-line misuse; 3 output or environment error (an output or --cache-dir that cannot be "
    "written, a preprocessor that cannot run; nothing written); 130 interrupted (Ctrl-C) and 143 "
    "terminated (SIGTERM): nothing written, temporary folders removed, nests tuned so far kept "
    "in the tuning cache.")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mdpoly: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mdpoly", description="Polyhedral auto-parallelizer for C based on MDH expressions.",
                epilog=EXIT_STATUS_HELP)
    p.add_argument("input", help="C source file")
    p.add_argument("-o", dest="output", metavar="FILE", help="write the transformed C source to FILE")
    p.add_argument("--target", choices=spellings(), default="openmp")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]")
    p.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME")
    p.add_argument("--report", metavar="FILE", help="write a JSON report of every loop nest to FILE")
    p.add_argument("--emit", choices=("mdh",), help="print the MDH expression of each nest instead of C")
    p.add_argument("--strict-fp", action="store_true", help="never reassociate floating-point reductions")
    p.add_argument("--all-nests", action="store_true",
                   help="analyse every outermost nest, also in a file with '#pragma scop' or '#pragma mdh' "
                        "markers, and transform the nests the cost model would keep or guard, without a guard")
    p.add_argument("--replace-omp", action="store_true",
                   help="replace a user's '#pragma omp parallel for' loop by mdpoly's code where mdpoly's analysis "
                        "proves it parallel (default: such loops stay as written, reported as already parallel)")
    p.add_argument("--omp-as-written", action="store_true",
                   help="leave the user's kept '#pragma omp parallel for' directives byte for byte (default: each "
                        "gets 'num_threads(mdp_team())', a team of the cores other processes leave free)")
    p.add_argument("--size", action="append", default=[], metavar="[FUNC:]NAME=VALUE",
                   help="problem size hint for every function, or for function FUNC only (it wins there)")
    p.add_argument("--mpi", action="store_true",
                   help="split each computation over the MPI ranks of the program (build with mpicc, run with mpirun)")
    p.add_argument("--devices", metavar="all|N|LIST",
                   help="split each computation over local devices (--target opencl or cuda): all of them, "
                        "the first N, or the device indices LIST such as 0,1 (MDPOLY_DEVICES overrides at run time)")
    p.add_argument("--device-limits", metavar="generic|FILE.json|KEY=VAL,...", type=_device_limits,
                   help="plan untuned OpenCL/CUDA code for these device limits instead of the device found at "
                        "generation time, e.g. cu=132,wg=1024,lmem=48K,warp=32,gpu=1 (keys: cu, wg, items, lmem, "
                        "warp, gpu, async, name) or a JSON file of them; 'generic': the generic limits")
    p.add_argument("--preprocessor", metavar="CMD", type=_command,
                   help="preprocess with CMD (shell-quoted, the file name is appended) instead of "
                        "'$MDPOLY_CC -E' (default 'cc -E', plus the target's flags such as -fopenmp), "
                        "e.g. 'gcc -E -std=gnu17 -fopenmp'")
    tune = p.add_argument_group("auto-tuning")
    tune.add_argument("--tune", dest="tune", action="store_true", default=True,
                      help="tune each nest by measuring candidates (default)")
    tune.add_argument("--no-tune", dest="tune", action="store_false", help="use the heuristic defaults, measure nothing")
    tune.add_argument("--tune-time", type=_positive_float, action=_Enable, metavar="SECONDS",
                      help="tuning time budget per nest, an upper bound for the whole tuning (default: up to 60, scaled down to "
                           "2000 runs of the nest's default code, at least 5)")
    tune.add_argument("--tune-evals", type=_positive_int, action=_Enable, metavar="N",
                      help="at most N evaluations per nest")
    tune.add_argument("--tune-technique", choices=TECHNIQUES, default="auc_bandit", help="search technique")
    tune.add_argument("--retune", action="store_true", help="ignore cached tuning results (and replace them)")
    tune.add_argument("--tune-workers", metavar="ADDRESS",
                      help="measure candidates on the workers of the Dask scheduler at ADDRESS, e.g. "
                           "tcp://host:8786 (default: $MDPOLY_DASK_SCHEDULER; needs the 'dask' extra)")
    tune.add_argument("--cache-dir", metavar="DIR",
                      help="tuning cache directory, on a local disk (default: $MDPOLY_CACHE_DIR, else the XDG cache)")
    p.add_argument("-q", "--quiet", action="store_true", help="silence remarks and notes")
    p.add_argument("--version", action="version", version=f"mdpoly {__version__}")
    return p


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a number of seconds, got '{text}'") from None
    if not value > 0 or value == float("inf"):   # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a positive number, got '{text}'")
    return value


def _device_limits(text: str) -> str:
    from mdpoly.device_limits import parse_limits
    try:
        parse_limits(text)
    except MdpolyError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix("--device-limits: ")) from None
    return text


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects an integer, got '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got '{text}'")
    return value


def _command(text: str) -> tuple[str, ...]:
    try:
        words = tuple(shlex.split(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"cannot split '{text}': {e}") from None
    if not words:
        raise argparse.ArgumentTypeError("expects a command, got an empty string")
    return words


class _Enable(argparse.Action):
    """Store the value and turn tuning on (so ``--no-tune --tune-time 5`` tunes)."""

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, values: object,
                  option_string: str | None = None) -> None:
        setattr(ns, self.dest, values)
        ns.tune = True


def _sizes(parser: argparse.ArgumentParser, items: list[str]) -> tuple[
        tuple[tuple[str, int], ...], tuple[tuple[str, str, int], ...]]:
    """``--size NAME=VALUE`` (every function) and ``--size FUNC:NAME=VALUE`` (one function)."""
    bare: list[tuple[str, int]] = []
    scoped: list[tuple[str, str, int]] = []
    for item in items:
        func, colon, rest = item.rpartition(":")
        name, sep, value = rest.partition("=")
        try:
            if not sep or not name.isidentifier() or (colon and not func.isidentifier()):
                raise ValueError
            number = int(value, 0)
        except ValueError:
            parser.error(f"--size expects NAME=INTEGER, got '{item}' (FUNCTION:NAME=INTEGER for one function)")
        if number < 0:
            parser.error(f"--size expects a size >= 0, got '{item}'")
        if colon:
            scoped.append((func, name, number))
        else:
            bare.append((name, number))
    return tuple(bare), tuple(scoped)


def _compiler() -> tuple[str, ...]:
    """The user's C compiler: ``$MDPOLY_CC`` (as ``mdpoly-cc`` reads it), default ``cc``."""
    return tuple(shlex.split(os.environ.get("MDPOLY_CC", "cc"))) or ("cc",)


def _default_preprocessor(target: str) -> tuple[str, ...]:
    """``$MDPOLY_CC -E`` with the flags the output is compiled with for ``target`` (``-fopenmp``:
    ``_OPENMP`` is defined as it will be), as ``mdpoly-cc`` preprocesses."""
    flags = tuple(f for f in target_named(target).toolchain.compile_flags if not f.startswith("-l"))
    return (*_compiler(), "-E", *flags)


def _devices(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> str | None:
    if ns.devices is None:
        return None
    why = check_spec(ns.devices)
    if why is not None:
        parser.error(f"--devices {why}")
    if target_named(ns.target).name not in DEVICE_TARGETS:
        parser.error(f"--devices needs --target {' or '.join(DEVICE_TARGETS)}")
    if ns.mpi:
        parser.error("--devices and --mpi cannot be combined yet")
    return str(ns.devices)


def options_from_args(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> Options:
    sizes, function_sizes = _sizes(parser, ns.size)
    return Options(
        target=target_named(ns.target).name, include_dirs=tuple(ns.include_dirs), defines=tuple(ns.defines),
        undefines=tuple(ns.undefines), strict_fp=ns.strict_fp, quiet=ns.quiet, all_nests=ns.all_nests,
        replace_omp=ns.replace_omp,
        omp_as_written=ns.omp_as_written,
        sizes=sizes, function_sizes=function_sizes, cc=_compiler(),
        preprocessor=ns.preprocessor or _default_preprocessor(ns.target),
        tune=ns.tune, tune_seconds=ns.tune_time if ns.tune_time is not None else (None if ns.tune_evals else 60.0),
        tune_seconds_explicit=ns.tune_time is not None,
        tune_evals=ns.tune_evals, tune_technique=ns.tune_technique, retune=ns.retune,
        cache_dir=ns.cache_dir or str(default_cache_dir(dict(os.environ))),
        tune_workers=ns.tune_workers or os.environ.get("MDPOLY_DASK_SCHEDULER") or None,
        opencl_device=os.environ.get("MDPOLY_OPENCL_DEVICE") or None,
        cuda_device=os.environ.get("MDPOLY_CUDA_DEVICE") or None,
        mpi=ns.mpi, devices=_devices(parser, ns), device_limits=ns.device_limits,
        cost_calibration=_calibration(parser),
    )


def _calibration(parser: argparse.ArgumentParser) -> tuple[tuple[str, float], ...]:
    """``$MDPOLY_COST_CALIBRATION``: the cost model's constants overridden (a JSON file or object,
    or ``name=value,...``; ``mdpoly.cost_model.parse_calibration``)."""
    try:
        return parse_calibration(os.environ.get("MDPOLY_COST_CALIBRATION", ""))
    except ValueError as err:
        parser.error(f"MDPOLY_COST_CALIBRATION: {err}")


def main(argv: Sequence[str] | None = None) -> int:
    """The ``mdpoly`` command; returns its exit status (``EXIT_STATUS_HELP``)."""
    with terminate_raises():
        try:
            return _main(argv)
        except KeyboardInterrupt:
            _stopped("interrupted")
            return EXIT_INTERRUPTED
        except Terminated:
            _stopped("terminated")
            return EXIT_TERMINATED


def _stopped(how: str) -> None:
    """The one line on stderr of a command stopped by a signal (after the clean-up ran)."""
    print(f"mdpoly: {how}; nothing written (tuning results of the nests tuned so far are in the cache)",
          file=sys.stderr, flush=True)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:
        return int(e.code or 0) if isinstance(e.code, int) else EXIT_USAGE
    try:
        options = options_from_args(parser, ns)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    if ns.output is None and ns.emit is None:
        parser.print_usage(sys.stderr)
        print("mdpoly: error: no output file given (use -o FILE)", file=sys.stderr)
        return EXIT_USAGE
    sink = DiagnosticSink(sys.stderr, quiet=ns.quiet)
    try:
        check_output_paths(ns.input, _outputs(ns))
        if (options.tune and ns.emit is None and options.cache_dir
                and (ns.cache_dir or os.environ.get("MDPOLY_CACHE_DIR"))):
            check_cache_dir(options.cache_dir, "--cache-dir" if ns.cache_dir else "$MDPOLY_CACHE_DIR")
    except OutputPathError as e:
        print(f"mdpoly: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        sink.emit(Diagnostic(Severity.ERROR, "io-error", None, f"cannot write '{e.filename}': {e.strerror}"))
        return EXIT_ENVIRONMENT
    try:
        return _run(ns, options, sink)
    except EnvironmentFailure as e:
        sink.emit(e.to_diagnostic())
        return EXIT_ENVIRONMENT
    except MdpolyError as e:
        sink.emit(e.to_diagnostic())
        return EXIT_INPUT
    except OSError as e:
        what = f"cannot write '{e.filename}'" if e.filename else "input/output error"
        sink.emit(Diagnostic(Severity.ERROR, "io-error", None, f"{what}: {e.strerror}"))
        return EXIT_ENVIRONMENT


def _outputs(ns: argparse.Namespace) -> list[OutputFile]:
    """The files this command will write, as the user named them."""
    outs = [OutputFile("-o", ns.output)] if ns.output is not None else []
    return outs + ([OutputFile("--report", ns.report)] if ns.report else [])


def _write_outputs(ns: argparse.Namespace, text: str, outcomes: tuple[NestOutcome, ...],
                   options: Options | None = None) -> None:
    """``-o`` (or stdout for ``--emit`` without ``-o``) and ``--report``: all of them or none."""
    from mdpoly.frontend.parse import encode_source
    from mdpoly.report import report_dict

    files: list[tuple[str, bytes]] = []
    if ns.output is not None:
        files.append((ns.output, encode_source(text)))
    if ns.report:
        files.append((ns.report, (json.dumps(report_dict(outcomes, options), indent=2) + "\n").encode()))
    write_files_atomically(files)
    if ns.output is None:
        _write_stdout(encode_source(text))


def _write_stdout(data: bytes) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:   # a text-only stream (tests): nothing that is not UTF-8 can go through
        sys.stdout.write(data.decode("utf-8", "replace"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


def _run(ns: argparse.Namespace, options: Options, sink: DiagnosticSink) -> int:
    from mdpoly.frontend import analyze_file
    from mdpoly.ir.nest import schedule_computations
    from mdpoly.report import emit_outcomes, outcomes_from_analysis

    analysis = analyze_file(ns.input, options, sink)
    if ns.emit == "mdh":
        outcomes = outcomes_from_analysis(analysis, None)
        chunks = []
        for n in analysis.nests:
            bands = [n] if n.schedule is None else [c.nest for c in schedule_computations(n.schedule)]
            for band in bands:
                if band.mdh is not None:
                    chunks.append(f"{band.loc}:\n{band.mdh.to_dsl()}\n")
        emit_outcomes(outcomes, sink)
        _write_outputs(ns, "\n".join(chunks), outcomes, options)
        return 0
    try:
        from mdpoly.driver import transform
    except ImportError as e:
        sink.emit(Diagnostic(Severity.ERROR, "no-driver", None,
                             f"code generation is not available in this build (mdpoly.driver: {e}); "
                             "use --emit mdh to see the analysis"))
        return EXIT_ENVIRONMENT
    text, outcomes = transform(analysis, options, sink)
    emit_outcomes(tuple(outcomes), sink)
    _write_outputs(ns, text, tuple(outcomes), options)
    return 0
