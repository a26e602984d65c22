"""Numeric command-line options are checked (issue 9, smaller items): a negative or zero count or
time, or a negative size, is a command-line misuse (exit status 2, a message naming the option),
never silently accepted; nothing is read or written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mdpoly.cli import build_parser, main, options_from_args  # noqa: E402

SOURCE = "float a[8];\nvoid f(void) { for (int i = 0; i < 8; i++) a[i] = 1.0f; }\n"


@pytest.mark.parametrize(("args", "needle"), [
    (["--tune-evals", "-3"], "--tune-evals: must be a positive integer, got '-3'"),
    (["--tune-evals", "0"], "--tune-evals: must be a positive integer, got '0'"),
    (["--tune-evals", "many"], "--tune-evals: expects an integer, got 'many'"),
    (["--tune-evals=-1"], "--tune-evals: must be a positive integer"),
    (["--tune-time", "-1"], "--tune-time: must be a positive number, got '-1'"),
    (["--tune-time", "0"], "--tune-time: must be a positive number"),
    (["--tune-time", "nan"], "--tune-time: must be a positive number"),
    (["--tune-time", "inf"], "--tune-time: must be a positive number"),
    (["--tune-time", "soon"], "--tune-time: expects a number of seconds"),
    (["--size", "n=-4"], "--size expects a size >= 0, got 'n=-4'"),
    (["--size", "n=four"], "--size expects NAME=INTEGER, got 'n=four'"),
])
def test_bad_numbers_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.c").write_text(SOURCE)
    assert main(["in.c", "-o", "out.c", *args]) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "out.c").exists()


def test_good_numbers_are_taken() -> None:
    parser = build_parser()
    ns = parser.parse_args(["in.c", "-o", "o.c", "--tune-evals", "5", "--tune-time", "0.5", "--size", "n=0",
                            "--size", "m=0x10"])
    opts = options_from_args(parser, ns)
    assert opts.tune_evals == 5 and opts.tune_seconds == 0.5 and opts.sizes == (("n", 0), ("m", 16))
