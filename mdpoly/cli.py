"""The ``mdpoly`` command: argv -> ``Options`` -> front end -> driver -> ``out.c`` (exit status).

gcc's conventions: ``mdpoly in.c -o out.c [--target openmp|opencl|cuda] [-I DIR] [-D NAME[=VAL]]
[-U NAME] [--report FILE] [--emit mdh] [--strict-fp] [--all-nests] [--size NAME=VALUE] [-q]
[--tune | --no-tune] [--tune-time S] [--tune-evals N] [--tune-technique T] [--retune]``.
Tuning is on by default (60 s per nest, cached in ``$MDPOLY_CACHE_DIR`` or the XDG cache).
Exit status 0 on success, 1 on an error in the input (located ``file:line:col: error: ...``,
no output written), 2 on misuse of the command line. Only this module reads the environment.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from mdpoly import __version__
from mdpoly.diagnostics import Diagnostic, DiagnosticSink, MdpolyError, Severity
from mdpoly.options import Options
from mdpoly.tuning.atf import TECHNIQUES
from mdpoly.tuning.cache import default_cache_dir


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"mdpoly: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mdpoly", description="Polyhedral auto-parallelizer for C based on MDH expressions.")
    p.add_argument("input", help="C source file")
    p.add_argument("-o", dest="output", metavar="FILE", help="write the transformed C source to FILE")
    p.add_argument("--target", choices=("openmp", "opencl", "cuda"), default="openmp")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VAL]")
    p.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME")
    p.add_argument("--report", metavar="FILE", help="write a JSON report of every loop nest to FILE")
    p.add_argument("--emit", choices=("mdh",), help="print the MDH expression of each nest instead of C")
    p.add_argument("--strict-fp", action="store_true", help="never reassociate floating-point reductions")
    p.add_argument("--all-nests", action="store_true", help="consider every outermost nest, even with markers")
    p.add_argument("--size", action="append", default=[], metavar="NAME=VALUE", help="problem size hint")
    tune = p.add_argument_group("auto-tuning")
    tune.add_argument("--tune", dest="tune", action="store_true", default=True,
                      help="tune each nest by measuring candidates (default)")
    tune.add_argument("--no-tune", dest="tune", action="store_false", help="use the heuristic defaults, measure nothing")
    tune.add_argument("--tune-time", type=_positive_float, action=_Enable, metavar="SECONDS",
                      help="tuning time budget per nest, spent in full (default: up to 60, scaled down to "
                           "2000 runs of the nest's default code, at least 5)")
    tune.add_argument("--tune-evals", type=int, action=_Enable, metavar="N", help="at most N evaluations per nest")
    tune.add_argument("--tune-technique", choices=TECHNIQUES, default="auc_bandit", help="search technique")
    tune.add_argument("--retune", action="store_true", help="ignore cached tuning results (and replace them)")
    p.add_argument("-q", "--quiet", action="store_true", help="silence remarks and notes")
    p.add_argument("--version", action="version", version=f"mdpoly {__version__}")
    return p


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


class _Enable(argparse.Action):
    """Store the value and turn tuning on (so ``--no-tune --tune-time 5`` tunes)."""

    def __call__(self, parser: argparse.ArgumentParser, ns: argparse.Namespace, values: object,
                  option_string: str | None = None) -> None:
        setattr(ns, self.dest, values)
        ns.tune = True


def _sizes(parser: argparse.ArgumentParser, items: list[str]) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name.isidentifier():
                raise ValueError
            out.append((name, int(value, 0)))
        except ValueError:
            parser.error(f"--size expects NAME=INTEGER, got '{item}'")
    return tuple(out)


def options_from_args(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> Options:
    return Options(
        target=ns.target, include_dirs=tuple(ns.include_dirs), defines=tuple(ns.defines),
        undefines=tuple(ns.undefines), strict_fp=ns.strict_fp, quiet=ns.quiet, all_nests=ns.all_nests,
        sizes=_sizes(parser, ns.size), cpp=os.environ.get("MDPOLY_CPP", "cpp"),
        tune=ns.tune, tune_seconds=ns.tune_time if ns.tune_time is not None else (None if ns.tune_evals else 60.0),
        tune_seconds_explicit=ns.tune_time is not None,
        tune_evals=ns.tune_evals, tune_technique=ns.tune_technique, retune=ns.retune,
        cache_dir=str(default_cache_dir(dict(os.environ))),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:
        return int(e.code or 0) if isinstance(e.code, int) else 2
    try:
        options = options_from_args(parser, ns)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    if ns.output is None and ns.emit is None:
        parser.print_usage(sys.stderr)
        print("mdpoly: error: no output file given (use -o FILE)", file=sys.stderr)
        return 2
    if ns.output is not None and os.path.exists(ns.input) and os.path.realpath(ns.output) == os.path.realpath(ns.input):
        print(f"mdpoly: error: output file '{ns.output}' is the input file; refusing to overwrite it",
              file=sys.stderr)
        return 2
    sink = DiagnosticSink(sys.stderr, quiet=ns.quiet)
    try:
        return _run(ns, options, sink)
    except MdpolyError as e:
        sink.emit(e.to_diagnostic())
        return 1
    except OSError as e:
        sink.emit(Diagnostic(Severity.ERROR, "io-error", None, f"{e.filename or ''}: {e.strerror}"))
        return 1


def _run(ns: argparse.Namespace, options: Options, sink: DiagnosticSink) -> int:
    from frontend import analyze_file
    from mdpoly.report import emit_outcomes, outcomes_from_analysis, write_report, write_text_atomically

    analysis = analyze_file(ns.input, options, sink)
    if ns.emit == "mdh":
        outcomes = outcomes_from_analysis(analysis, None)
        chunks = []
        for n in analysis.nests:
            if n.mdh is not None:
                chunks.append(f"{n.loc}:\n{n.mdh.to_dsl()}\n")
        text = "\n".join(chunks)
        emit_outcomes(outcomes, sink)
        if ns.output is not None:
            write_text_atomically(ns.output, text)
        else:
            sys.stdout.write(text)
        if ns.report:
            write_report(ns.report, outcomes)
        return 0
    try:
        from mdpoly.driver import transform
    except ImportError as e:
        sink.emit(Diagnostic(Severity.ERROR, "no-driver", None,
                             f"code generation is not available in this build (mdpoly.driver: {e}); "
                             "use --emit mdh to see the analysis"))
        return 1
    text, outcomes = transform(analysis, options, sink)
    emit_outcomes(tuple(outcomes), sink)
    write_text_atomically(ns.output, text)
    if ns.report:
        write_report(ns.report, tuple(outcomes))
    return 0
