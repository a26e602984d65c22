"""Files are never lost (issue 9, item 11): output paths are checked before any work, outputs are
written all or none, and messages name the paths the user gave.

``--report`` or ``-o`` naming the input (under any spelling: relative, ``./``, absolute, a
symbolic or a hard link) and ``--report`` naming the ``-o`` file are refused with exit status 2
and every file untouched; an output in a missing folder fails with exit status 3 (output error) before anything
is written, even the outputs that could have been.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mdpoly.cli import main  # noqa: E402

SOURCE = """\
float a[1000], b[1000];
void f(void) {
  for (int i = 0; i < 1000; i++)
    a[i] = b[i] * 2.0f;
}
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "in.c").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _mdpoly(*args: str) -> int:
    return main(["in.c", "--no-tune", "--all-nests", "-q", *args])


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("report", ["in.c", "./in.c", "sub/../in.c", "ABS"])
def test_report_naming_the_input_is_refused(workdir: Path, capsys: pytest.CaptureFixture[str], report: str) -> None:
    (workdir / "sub").mkdir()
    report = str(workdir / "in.c") if report == "ABS" else report
    assert _mdpoly("-o", "out.c", "--report", report) == 2
    assert (workdir / "in.c").read_text() == SOURCE
    assert not (workdir / "out.c").exists()
    err = capsys.readouterr().err
    assert f"--report file '{report}' is the input file" in err


def test_output_through_a_symlink_or_hard_link_to_the_input_is_refused(workdir: Path) -> None:
    (workdir / "link.c").symlink_to(workdir / "in.c")
    os.link(workdir / "in.c", workdir / "hard.c")
    assert _mdpoly("-o", "link.c") == 2
    assert _mdpoly("-o", "out.c", "--report", "hard.c") == 2
    assert (workdir / "in.c").read_text() == SOURCE and not (workdir / "out.c").exists()


@pytest.mark.parametrize("report", ["out.c", "./out.c", "alias.c"])
def test_report_naming_the_output_is_refused(workdir: Path, capsys: pytest.CaptureFixture[str], report: str) -> None:
    (workdir / "out.c").write_text("previous output\n")
    (workdir / "alias.c").symlink_to("out.c")
    assert _mdpoly("-o", "out.c", "--report", report) == 2
    assert (workdir / "out.c").read_text() == "previous output\n"
    assert f"--report file '{report}' is the same file as the -o file 'out.c'" in capsys.readouterr().err


def test_report_in_a_missing_folder_writes_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "out.c").write_text("previous output\n")
    assert _mdpoly("-o", "out.c", "--report", "nodir/r.json") == 3
    assert (workdir / "out.c").read_text() == "previous output\n"
    err = capsys.readouterr().err
    assert "'nodir/r.json'" in err and "No such file or directory" in err and ".mdpoly-" not in err
    assert sorted(p.name for p in workdir.iterdir()) == ["in.c", "out.c"]   # no temporary left


def test_output_that_is_a_folder_is_refused_before_any_work(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "d").mkdir()
    assert _mdpoly("-o", "d", "--report", "r.json") == 3
    assert not (workdir / "r.json").exists()
    assert "'d'" in capsys.readouterr().err


def test_both_outputs_are_written(workdir: Path) -> None:
    assert _mdpoly("-o", "out.c", "--report", "r.json") == 0
    assert "mdpoly_f" in (workdir / "out.c").read_text()
    assert json.loads((workdir / "r.json").read_text())["nests"][0]["status"] == "transformed"
    assert (workdir / "in.c").read_text() == SOURCE
    assert sorted(p.name for p in workdir.iterdir()) == ["in.c", "out.c", "r.json"]


def test_symlinked_output_is_written_through_and_modes_are_usual(workdir: Path) -> None:
    (workdir / "real").mkdir()
    (workdir / "real" / "out.c").write_text("old\n")
    os.chmod(workdir / "real" / "out.c", 0o640)
    (workdir / "out.c").symlink_to(workdir / "real" / "out.c")
    assert _mdpoly("-o", "out.c", "--report", "r.json") == 0
    assert (workdir / "out.c").is_symlink()
    assert "mdpoly_f" in (workdir / "real" / "out.c").read_text()
    assert stat.S_IMODE((workdir / "real" / "out.c").stat().st_mode) == 0o640   # kept
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((workdir / "r.json").stat().st_mode) == 0o666 & ~umask   # not mkstemp's 0600


def test_emit_mdh_with_report_equal_to_input_is_refused(workdir: Path) -> None:
    assert main(["in.c", "--emit", "mdh", "--report", "in.c"]) == 2
    assert (workdir / "in.c").read_text() == SOURCE


@pytest.mark.skipif(not stat.S_ISCHR(os.stat(os.devnull).st_mode), reason=f"{os.devnull} is no device here")
def test_dev_null_may_take_several_outputs(workdir: Path) -> None:
    assert _mdpoly("-o", os.devnull, "--report", os.devnull) == 0
    assert Path(os.devnull).exists() and not Path(os.devnull).is_file()


def test_check_output_paths_unit(tmp_path: Path) -> None:
    from mdpoly.output_files import OutputFile, OutputPathError, check_output_paths
    src = tmp_path / "a.c"
    src.write_text("x")
    check_output_paths(str(src), [OutputFile("-o", str(tmp_path / "b.c")), OutputFile("--report", str(tmp_path / "r"))])
    with pytest.raises(OutputPathError, match="is the input file"):
        check_output_paths(str(src), [OutputFile("--report", str(tmp_path / "." / "a.c"))])
    with pytest.raises(OutputPathError, match="same file as the -o file"):
        check_output_paths(str(src), [OutputFile("-o", str(tmp_path / "b.c")), OutputFile("--report", str(tmp_path / "b.c"))])
    with pytest.raises(OSError) as info:
        check_output_paths(str(src), [OutputFile("-o", "no/such/dir/x.c")])
    assert info.value.filename == "no/such/dir/x.c"


def test_write_files_atomically_writes_none_when_one_fails(tmp_path: Path) -> None:
    from mdpoly.output_files import write_files_atomically
    (tmp_path / "a").write_bytes(b"old a")
    with pytest.raises(OSError) as info:
        write_files_atomically([(str(tmp_path / "a"), b"new a"), (str(tmp_path / "missing" / "b"), b"b")])
    assert info.value.filename == str(tmp_path / "missing" / "b")
    assert (tmp_path / "a").read_bytes() == b"old a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    write_files_atomically([(str(tmp_path / "a"), b"\xe9 new a"), (str(tmp_path / "b"), b"b")])
    assert (tmp_path / "a").read_bytes() == b"\xe9 new a" and (tmp_path / "b").read_bytes() == b"b"
