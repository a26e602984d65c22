"""``python -m mdpoly.compare SEQ PAR`` (the quick start's last step) -> its line and exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "mdpoly.compare", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, check=False)


def _compare(tmp_path: Path, sequential: str, parallel: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "seq.txt").write_text(sequential)
    (tmp_path / "par.txt").write_text(parallel)
    return _run(tmp_path, "seq.txt", "par.txt", *args)


def test_outputs_within_the_float_tolerance_match(tmp_path: Path) -> None:
    proc = _compare(tmp_path, "1.5\n-2.25 3\n", "1.50001\n-2.25 3\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ("parallel output (par.txt) matches sequential (seq.txt): yes, 3 values "
                           "(floats within rtol 0.0001, atol 1e-05)\n")


def test_a_difference_says_where(tmp_path: Path) -> None:
    proc = _compare(tmp_path, "1.5\n7\n", "1.5\n8\n")
    assert proc.returncode == 1
    assert proc.stdout.startswith("parallel output (par.txt) matches sequential (seq.txt): no, line 2, value 1:")
    assert "integers differ" in proc.stdout


def test_a_tighter_tolerance_refuses_what_the_default_accepts(tmp_path: Path) -> None:
    assert _compare(tmp_path, "1.5\n", "1.50001\n", "--rtol", "0", "--atol", "0").returncode == 1


def test_empty_outputs_are_no_match(tmp_path: Path) -> None:
    proc = _compare(tmp_path, "", "")
    assert proc.returncode == 1 and "no, both are empty" in proc.stdout


def test_a_missing_file_is_misuse(tmp_path: Path) -> None:
    (tmp_path / "seq.txt").write_text("1\n")
    proc = _run(tmp_path, "seq.txt", "par.txt")
    assert proc.returncode == 2 and "par.txt" in proc.stderr
