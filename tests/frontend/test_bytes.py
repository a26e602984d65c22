"""C sources are bytes (issue 9, item 7): text that is not UTF-8 goes through mdpoly unchanged.

A Latin-1 string literal, stray bytes in comments and CRLF line ends survive byte for byte into
``out.c`` outside the transformed nest; a stray byte where C allows none is a located error; no
input gives a Python traceback, from ``mdpoly`` or from ``mdpoly-cc``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]
MDPOLY_CC = [sys.executable, "-m", "mdpoly.cc_wrapper"]

HEAD = b'#include <stdio.h>\nstatic const char *word = "caf\xe9"; /* Latin-1: \xe9 \xff\xfe */\n'
NEST = b"  for (int i = 0; i < 1000; i++)\n    a[i] = b[i] * 2.0f;\n"
TAIL = b'  printf("%s %.1f\\n", word, a[999]);\n  return 0;\n}\n'
PROGRAM = (HEAD + b"float a[1000], b[1000];\nint main(void) {\n"
           b"  for (int i = 0; i < 1000; i++) b[i] = (float)i;\n" + NEST + TAIL)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, timeout=300, check=False)


def _no_traceback(proc: subprocess.CompletedProcess[bytes]) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and "UnicodeDecodeError" not in err, err


def test_decoding_keeps_every_byte() -> None:
    from mdpoly.frontend.parse import decode_source, encode_source
    data = bytes(range(256)) * 2 + b"caf\xc3\xa9 \r\n"
    text = decode_source(data)
    assert encode_source(text) == data
    assert text.count("\n") == data.count(b"\n")


def test_latin1_source_is_copied_byte_for_byte(tmp_path: Path) -> None:
    (tmp_path / "in.c").write_bytes(PROGRAM)
    proc = _run([*MDPOLY, "in.c", "-o", "out.c", "--no-tune", "--all-nests"], tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert b"loop nest parallelized" in proc.stderr
    out = (tmp_path / "out.c").read_bytes()
    assert out.startswith(HEAD) and out.endswith(TAIL)
    assert NEST not in out   # the nest itself was replaced
    exe = tmp_path / "prog"
    subprocess.run(["cc", "-O2", "-fopenmp", str(tmp_path / "out.c"), "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)], capture_output=True, check=True).stdout == b"caf\xe9 1998.0\n"


def test_crlf_line_ends_are_kept(tmp_path: Path) -> None:
    (tmp_path / "in.c").write_bytes(PROGRAM.replace(b"\n", b"\r\n"))
    proc = _run([*MDPOLY, "in.c", "-o", "out.c", "--no-tune", "--all-nests"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    out = (tmp_path / "out.c").read_bytes()
    assert out.startswith(HEAD.replace(b"\n", b"\r\n")) and out.endswith(TAIL.replace(b"\n", b"\r\n"))


def test_untransformed_file_is_identical(tmp_path: Path) -> None:
    source = HEAD + b"int main(void) { return word[3] == '\xe9' ? 0 : 1; }\r\n/* \x80\x81 */"
    (tmp_path / "in.c").write_bytes(source)
    proc = _run([*MDPOLY, "in.c", "-o", "out.c", "--no-tune"], tmp_path)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert (tmp_path / "out.c").read_bytes() == source


@pytest.mark.parametrize("where", [b"int x = 1 \xe9;\n", b"\xff\xfe int y;\n"], ids=["in-code", "line-start"])
def test_stray_byte_in_code_is_a_located_error(tmp_path: Path, where: bytes) -> None:
    (tmp_path / "in.c").write_bytes(b"int ok;\n" + where)
    proc = _run([*MDPOLY, "in.c", "-o", "out.c", "--no-tune"], tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 1
    column = where.index(b"\xe9" if b"\xe9" in where else b"\xff") + 1
    err = proc.stderr.decode("utf-8", "replace")
    assert f"in.c:2:{column}: error:" in err and "\\x" in err, err
    assert not (tmp_path / "out.c").exists()


def test_preprocessor_error_with_latin1_text(tmp_path: Path) -> None:
    (tmp_path / "in.c").write_bytes(b'#error "caf\xe9"\nint x;\n')
    proc = _run([*MDPOLY, "in.c", "-o", "out.c", "--no-tune"], tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 1 and b"in.c:1:" in proc.stderr


def test_emit_mdh_to_stdout_from_latin1_file(tmp_path: Path) -> None:
    (tmp_path / "in.c").write_bytes(PROGRAM)
    proc = _run([*MDPOLY, "in.c", "--emit", "mdh", "--no-tune"], tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0 and b"md_hom" in proc.stdout


def test_mdpoly_cc_builds_a_latin1_source(tmp_path: Path) -> None:
    (tmp_path / "in.c").write_bytes(PROGRAM)
    proc = _run([*MDPOLY_CC, "--all-nests", "--", "-O2", "in.c", "-o", "prog"], tmp_path)
    _no_traceback(proc)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert b"loop nest parallelized" in proc.stderr and b"warning" not in proc.stderr
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, check=True)
    assert run.stdout == b"caf\xe9 1998.0\n"


def test_mdpoly_cc_falls_back_on_stray_bytes_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "in.c").write_bytes(b"int x = 1;\n\xff int y;\n")
    proc = _run([*MDPOLY_CC, "-c", "in.c", "-o", "in.o"], tmp_path)
    _no_traceback(proc)
    assert b"mdpoly-cc: warning: mdpoly could not transform in.c" in proc.stderr
    assert b"in.c:2:1: error:" in proc.stderr
