"""Classify a gcc-style command line: argv -> :class:`CompilerCommand` (mode, C sources, flags).

Only what ``mdpoly-cc`` needs is understood: which arguments are C sources, what the command
produces (an executable, objects, assembly, preprocessed text or dependency lists), the
``-o``/``-MF`` paths, and the flags mdpoly's preprocessing must repeat to parse the sources the
way the compiler will (``preprocess_flags``: every option of the command, in its order, except
those that name outputs, dependency files, the language, other inputs, or the linker's and the
assembler's work). Everything else is carried through untouched.

.. autoclass:: CompilerCommand
.. autofunction:: parse_compiler_args
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["link", "compile", "assemble", "preprocess", "query"]

# gcc options whose value may be the next argument ("-o out", "-I dir", "-x c", ...).
OPTIONS_WITH_VALUE = frozenset({
    "-o", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
    "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-imultilib", "-MF", "-MT",
    "-MQ", "-x", "-L", "-l", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-z",
    "-aux-info", "--param", "-e", "-dumpbase", "-dumpdir", "-wrapper", "-G",
    "-target", "--sysroot", "-Xclang", "-mllvm", "-arch", "-gcc-toolchain", "-B",
})

# What ``cc -E`` must not see again: options (with their values) that name outputs, dependency
# files, the language (mdpoly-cc names it for the one source) and the linker's or assembler's
# inputs; flags that choose another stage; prefixes of joined spellings of those.
NOT_PREPROCESSING_WITH_VALUE = frozenset({
    "-o", "-MF", "-MT", "-MQ", "-x", "-L", "-l", "-Xlinker", "-Xassembler", "-T", "-u", "-z", "-e",
    "-aux-info", "-dumpbase", "-dumpdir", "-wrapper",
})
# ... and flags that only shape ``-E``'s output (no line markers, comments kept, macro dumps,
# directives only), which a compiling command ignores but mdpoly's parser would see.
NOT_PREPROCESSING_FLAGS = frozenset({"-c", "-S", "-E", "-v", "-###", "-fsyntax-only", "-P", "-C", "-CC", "-H",
                                     "-dM", "-dD", "-dN", "-dI", "-dU", "-fdirectives-only"})
NOT_PREPROCESSING_PREFIXES = ("-M", "-Wl,", "-Wa,", "-l", "-L", "-T", "-save-temps", "-x")
# Dependency options of cpp itself (inside -Wp, or -Xpreprocessor) and whether they take a value.
_CPP_DEP_OPTIONS = {"-M": False, "-MM": False, "-MP": False, "-MG": False, "-MD": True, "-MMD": True,
                    "-MF": True, "-MT": True, "-MQ": True}

# Arguments after which the command does not compile anything: run the compiler as is.
QUERY_FLAGS = frozenset({"--version", "-v", "-###", "--help", "-dumpversion", "-dumpfullversion",
                         "-dumpmachine", "-dumpspecs", "--target-help"})

# Include-path options, passed to mdpoly as -I so that it preprocesses as the compiler does.
INCLUDE_DIR_OPTIONS = ("-I", "-isystem", "-iquote", "-idirafter")


@dataclass(frozen=True, slots=True)
class CompilerCommand:
    """What a compiler command line asks for.

    :arg args: the arguments, unchanged (without the compiler name).
    :arg mode: ``query`` (version, help, ``-v`` ...), ``preprocess`` (``-E``, ``-M``,
        ``-MM``), ``assemble`` (``-S``), ``compile`` (``-c``) or ``link``.
    :arg source_indices: indices into ``args`` of the C source files (by ``.c`` suffix or
        ``-x c``).
    :arg output: the ``-o`` value, if given.
    :arg dep_file: the ``-MF`` value, if given.
    :arg writes_deps: ``-MD`` or ``-MMD``: a dependency file is written while compiling.
    :arg syntax_only: ``-fsyntax-only``: nothing is written.
    :arg cpp_flags: the ``-I``/``-D``/``-U`` flags for mdpoly, as separate tokens.
    :arg preprocess_flags: the options that shape preprocessing, in their order (``-D``, ``-U``,
        ``-I``, ``-isystem``, ``-include``, ``-imacros``, ``-std=``, ``-O``, ``-m...``, ``-f...``,
        ``--sysroot``, ...): the command's options without outputs, dependency files, ``-x``,
        mode flags and linker or assembler options; inputs are not among them.
    :arg response_file: a ``@file`` argument was given (its content is not inspected).
    """

    args: tuple[str, ...]
    mode: Mode
    source_indices: tuple[int, ...]
    output: str | None
    dep_file: str | None
    writes_deps: bool
    syntax_only: bool
    cpp_flags: tuple[str, ...]
    response_file: bool
    preprocess_flags: tuple[str, ...] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self.args[i] for i in self.source_indices)


def _split_value(arg: str, option: str) -> str | None:
    """For ``-Idir``-style joined options return ``dir``; ``None`` if ``arg`` is not one."""
    if arg.startswith(option) and len(arg) > len(option):
        value = arg[len(option):]
        return value[1:] if option.startswith("--") and value.startswith("=") else value
    return None


def _without_dependency_output(arg: str) -> str | None:
    """``-Wp,a,b,...`` without cpp's dependency options (``-Wp,-MD,file``); ``None`` if nothing
    is left."""
    parts = arg.split(",")[1:]
    kept: list[str] = []
    k = 0
    while k < len(parts):
        if parts[k] in _CPP_DEP_OPTIONS:
            k += 2 if _CPP_DEP_OPTIONS[parts[k]] else 1
            continue
        kept.append(parts[k])
        k += 1
    return ",".join(["-Wp", *kept]) if kept else None


def _for_preprocessing(option: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The words of one option (``words[0]`` is the argument, a value may follow) that the
    preprocessing command repeats."""
    if option in NOT_PREPROCESSING_WITH_VALUE or option in NOT_PREPROCESSING_FLAGS:
        return ()
    if option == "-Xpreprocessor" and len(words) == 2 and words[1].startswith("-M"):
        return ()
    arg = words[0]
    if arg.startswith("-Wp,"):
        stripped = _without_dependency_output(arg)
        return (stripped,) if stripped else ()
    if len(words) == 1 and arg.startswith(NOT_PREPROCESSING_PREFIXES):
        return ()
    return words


def _is_c_source(path: str, language: str | None) -> bool:
    if path == "-":
        return False
    if language is not None:
        return language == "c"
    return path.endswith(".c")


def parse_compiler_args(args: list[str] | tuple[str, ...]) -> CompilerCommand:
    """Classify a gcc-style argument list (without the compiler's own name)."""
    args = tuple(args)
    sources: list[int] = []
    cpp_flags: list[str] = []
    preprocess_flags: list[str] = []
    output = dep_file = None
    language: str | None = None
    flags: set[str] = set()
    response_file = False

    i = 0
    while i < len(args):
        arg = args[i]
        value: str | None = None
        option: str | None = None
        words: tuple[str, ...] = (arg,)
        if arg in OPTIONS_WITH_VALUE:
            option, value = arg, (args[i + 1] if i + 1 < len(args) else None)
            words = args[i:i + 2]
            i += 2
        else:
            for candidate in ("-o", "-I", "-D", "-U", "-MF", "-x", "-isystem", "-iquote", "-idirafter"):
                joined = _split_value(arg, candidate)
                if joined is not None:
                    option, value = candidate, joined
                    break
            i += 1
        if option is not None or (arg.startswith("-") and arg != "-"):
            preprocess_flags += _for_preprocessing(option or arg, words)
        if option is not None:
            if option == "-o":
                output = value
            elif option == "-MF":
                dep_file = value
            elif option == "-x":
                language = None if value in (None, "none") else value
            elif option in INCLUDE_DIR_OPTIONS and value is not None:
                cpp_flags += ["-I", value]
            elif option in ("-D", "-U") and value is not None:
                cpp_flags += [option, value]
            continue
        if arg.startswith("@"):
            response_file = True
        elif arg.startswith("-") and arg != "-":
            flags.add(arg)
        elif _is_c_source(arg, language):
            sources.append(i - 1)

    if flags & QUERY_FLAGS or any(f.startswith("-print-") for f in flags):
        mode: Mode = "query"
    elif "-E" in flags or (flags & {"-M", "-MM"}):
        mode = "preprocess"
    elif "-S" in flags:
        mode = "assemble"
    elif "-c" in flags:
        mode = "compile"
    else:
        mode = "link"
    return CompilerCommand(args=args, mode=mode, source_indices=tuple(sources), output=output,
                           dep_file=dep_file,
                           writes_deps=bool(flags & {"-MD", "-MMD"}), syntax_only="-fsyntax-only" in flags,
                           cpp_flags=tuple(cpp_flags), response_file=response_file,
                           preprocess_flags=tuple(preprocess_flags))
