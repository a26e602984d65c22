"""Tests for mdpoly.cc_args.parse_compiler_args."""

from __future__ import annotations

import pytest

from mdpoly.cc_args import parse_compiler_args


@pytest.mark.parametrize(("args", "mode"), [
    (["--version"], "query"),
    (["-v"], "query"),
    (["-v", "x.c", "-o", "x"], "query"),
    (["-print-file-name=libgomp.so"], "query"),
    (["-E", "x.c"], "preprocess"),
    (["-MM", "x.c"], "preprocess"),
    (["-M", "-I", "inc", "x.c"], "preprocess"),
    (["-S", "x.c"], "assemble"),
    (["-c", "x.c"], "compile"),
    (["-MMD", "-MP", "-c", "x.c"], "compile"),
    (["x.c", "-o", "x"], "link"),
    (["a.o", "b.o", "-o", "app", "-lm"], "link"),
])
def test_modes(args: list[str], mode: str) -> None:
    assert parse_compiler_args(args).mode == mode


def test_sources_outputs_and_cpp_flags() -> None:
    cmd = parse_compiler_args(["-O2", "-I", "inc", "-Iother", "-DN=4", "-D", "M=5", "-UX", "-isystem", "sys",
                               "-c", "src/a.c", "-o", "build/a.o", "-MD", "-MF", "build/a.d", "-MT", "a.o"])
    assert cmd.sources == ("src/a.c",)
    assert cmd.output == "build/a.o"
    assert cmd.dep_file == "build/a.d"
    assert cmd.writes_deps
    assert cmd.cpp_flags == ("-I", "inc", "-I", "other", "-D", "N=4", "-D", "M=5", "-U", "X", "-I", "sys")


def test_option_values_are_not_sources() -> None:
    cmd = parse_compiler_args(["-o", "weird.c", "-MT", "t.c", "-include", "h.c", "main.c", "b.o", "lib.a"])
    assert cmd.sources == ("main.c",)
    assert cmd.output == "weird.c"


def test_language_option() -> None:
    assert parse_compiler_args(["-x", "c", "prog.txt", "-c"]).sources == ("prog.txt",)
    assert parse_compiler_args(["-x", "c++", "prog.c", "-c"]).sources == ()
    assert parse_compiler_args(["-x", "c++", "a.cc", "-x", "none", "b.c", "-c"]).sources == ("b.c",)


def test_joined_output_and_stdin() -> None:
    cmd = parse_compiler_args(["-c", "-", "-oout.o"])
    assert cmd.sources == ()
    assert cmd.output == "out.o"


def test_response_file_is_flagged() -> None:
    assert parse_compiler_args(["@args.rsp"]).response_file
