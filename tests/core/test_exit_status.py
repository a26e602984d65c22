"""Exit statuses and input/output checks of the ``mdpoly`` command (issue 25, item 7): 0 success,
1 input error, 2 usage, 3 output or environment error, each documented in ``--help``; every output
path (and the cache folder when tuning) is checked before any work; a binary input is refused
with one line that holds no raw byte."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mdpoly import cli
from mdpoly.cli import EXIT_ENVIRONMENT, EXIT_INPUT, EXIT_OK, EXIT_USAGE, main

REPO = Path(__file__).resolve().parents[2]
MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]

GOOD = """
float a[64], b[64];
void f(void) {
  for (int i = 0; i < 64; i++)
    a[i] = b[i] * 2.0f;
}
"""
BAD = "int main(void) {\n  int x = 1\n  return x;\n}\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "good.c").write_text(GOOD)
    (tmp_path / "bad.c").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _unwritable_folder(tmp_path: Path) -> str:
    """A folder that takes no new file, also for root (who ignores permissions)."""
    if os.geteuid() == 0:
        return "/sys"
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    return str(d)


def test_the_scheme_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == EXIT_OK
    out = " ".join(capsys.readouterr().out.split())
    for text in ("0 success", "1 error in the input", "2 command-line misuse", "3 output or environment error",
                 "130 interrupted (Ctrl-C)", "143 terminated (SIGTERM)"):
        assert text in out


def test_each_class(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["good.c", "-o", "out.c", "--no-tune", "-q"]) == EXIT_OK
    assert main(["bad.c", "-o", "out.c", "--no-tune"]) == EXIT_INPUT
    assert main(["good.c", "-o", "out.c", "--no-such-option"]) == EXIT_USAGE
    assert main(["good.c", "-o", "good.c", "--no-tune"]) == EXIT_USAGE            # would overwrite the input
    assert main(["good.c", "-o", "nodir/out.c", "--no-tune"]) == EXIT_ENVIRONMENT
    assert main(["good.c", "-o", "out.c", "--no-tune", "--preprocessor", "/nonexistent/cpp -E"]) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err
    assert "cannot run the preprocessor '/nonexistent/cpp'" in err and "[environment]" in err


@pytest.mark.parametrize("option", ["-o", "--report"])
def test_an_unwritable_output_is_refused_before_any_work(workdir: Path, option: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # bad.c has a syntax error: had the analysis run first, the status would be 1
    folder = _unwritable_folder(workdir)
    args = ["-o", f"{folder}/out.c"] if option == "-o" else ["-o", "out.c", "--report", f"{folder}/r.json"]
    assert main(["bad.c", *args, "--no-tune"]) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err
    assert err.startswith(f"mdpoly: error: cannot write '{folder}/") and "bad.c:" not in err
    assert sorted(p.name for p in workdir.iterdir() if p.name != "ro") == ["bad.c", "good.c"]


def test_an_unwritable_cache_folder_is_refused_before_any_work(workdir: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bad.c", "-o", "out.c", "--cache-dir", "good.c/cache"]) == EXIT_ENVIRONMENT
    assert "cannot write 'good.c/cache'" in capsys.readouterr().err
    # not tuning: the cache folder is not used, so not checked
    assert main(["good.c", "-o", "out.c", "--cache-dir", "good.c/cache", "--no-tune", "-q"]) == EXIT_OK
    # a missing one is created
    assert main(["bad.c", "-o", "out.c", "--cache-dir", "new/cache"]) == EXIT_INPUT
    assert (workdir / "new" / "cache").is_dir()


def test_a_write_that_fails_after_the_analysis_is_an_output_error(workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    def full(files: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "out.c")

    monkeypatch.setattr(cli, "write_files_atomically", full)
    assert main(["good.c", "-o", "out.c", "--no-tune", "-q"]) == EXIT_ENVIRONMENT
    assert "cannot write 'out.c': No space left on device" in capsys.readouterr().err


@pytest.mark.parametrize("data", [
    b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00\x1b[2J\xe9\xff",
    bytes(range(1, 256)) * 4,                       # no NUL, but control characters throughout
], ids=["nul", "controls"])
def test_binary_input_is_refused_in_one_line_without_raw_bytes(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "in.c").write_bytes(data)
    proc = subprocess.run([*MDPOLY, "in.c", "-o", "out.c", "--no-tune"], cwd=tmp_path, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert proc.returncode == EXIT_INPUT
    assert proc.stdout == b""
    assert proc.stderr.count(b"\n") == 1 and all(0x20 <= b < 0x7f for b in proc.stderr.rstrip(b"\n"))
    assert proc.stderr.startswith(b"mdpoly: error: 'in.c' is not a C source file: it holds binary data")
    assert not (tmp_path / "out.c").exists()


def test_text_in_an_8_bit_encoding_is_not_binary(tmp_path: Path) -> None:
    from mdpoly.frontend.parse import binary_reason

    assert binary_reason(b'/* caf\xe9 \xe0 la cr\xe8me */\nchar *s = "\xc4\xd6\xdc\x1b[0m";\n' * 50) is None
