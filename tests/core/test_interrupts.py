"""Stopping ``mdpoly`` while it tunes (issue 25, item 5): Ctrl-C (SIGINT) says so on stderr and
exits 130, SIGTERM exits 143; either way nothing is written, no ``mdpoly-tune-*`` folder stays in
the temporary directory and no measuring process outlives the command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]


def _tune_folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("mdpoly-tune-*"))


@pytest.mark.parametrize("signum,status,word", [(signal.SIGINT, 130, "interrupted"),
                                                (signal.SIGTERM, 143, "terminated")], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_tuning_cleans_up(tmp_path: Path, signum: int, status: int, word: str) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "TMPDIR": str(tmp),
           "MDPOLY_CACHE_DIR": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    cmd = [*MDPOLY, str(REPO / "c_examples" / "matmul.c"), "-o", str(tmp_path / "out.c"), "--all-nests",
           "--tune-time", "120", "--report", str(tmp_path / "r.json")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not _tune_folders(tmp) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _tune_folders(tmp), "tuning did not start"
        time.sleep(1.5)                        # well inside the search: candidates being measured
        proc.send_signal(signum)               # to mdpoly alone, as `kill` does
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = err.decode("utf-8", "replace")
    assert proc.returncode == status, text
    assert out == b""
    assert f"mdpoly: {word}; nothing written" in text and "Traceback" not in text
    assert _tune_folders(tmp) == []
    assert not (tmp_path / "out.c").exists() and not (tmp_path / "r.json").exists()
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):    # no worker or compiler left in the command's group
        os.killpg(proc.pid, 0)


def test_sigterm_to_mdpoly_cc_stops_its_mdpoly_and_cleans_up(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "TMPDIR": str(tmp),
           "MDPOLY_CACHE_DIR": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1",
           "MDPOLY_FLAGS": "--tune-time 120 --all-nests"}
    cmd = [sys.executable, "-c", "import sys; from mdpoly.cc_wrapper import main; sys.exit(main())",
           "-c", str(REPO / "c_examples" / "matmul.c"), "-o", str(tmp_path / "m.o")]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not _tune_folders(tmp) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _tune_folders(tmp), "tuning did not start"
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = err.decode("utf-8", "replace")
    assert proc.returncode == 143, text
    assert "mdpoly-cc: terminated" in text and "mdpoly: terminated" in text and "Traceback" not in text
    assert sorted(p.name for p in tmp.iterdir()) == []      # no mdpoly-tune-*, no mdpoly-cc-*
    assert not (tmp_path / "m.o").exists()
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
