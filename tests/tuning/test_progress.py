"""Tuning progress on any stderr (issue 25, item 4): on a pipe (make, CI logs) one line when each
nest's tuning starts and one when it ends; on a terminal the live bar instead; ``-q`` neither."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MDPOLY = [sys.executable, "-c", "import sys; from mdpoly.cli import main; sys.exit(main())"]
SRC = REPO / "c_examples" / "matmul.c"


def _cmd(tmp_path: Path, *extra: str) -> list[str]:
    return [*MDPOLY, str(SRC), "-o", str(tmp_path / "out.c"), "--all-nests", "--tune-evals", "3",
            "--cache-dir", str(tmp_path / "cache"), *extra]


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}


def test_a_pipe_gets_a_start_and_an_end_line_per_nest(tmp_path: Path) -> None:
    proc = subprocess.run(_cmd(tmp_path), env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("mdpoly: ")]
    loc = f"{SRC}:32:5"
    assert lines[0] == f"mdpoly: tuning {loc} (at most 3 evaluations)"
    assert re.fullmatch(rf"mdpoly: {re.escape(loc)}: (tuned, \d+\.\d\dx over the default|default kept: .*) "
                        r"\(\d+\.\d s\)", lines[1]), lines[1]
    assert len(lines) == 2 and "\x1b" not in proc.stderr          # no bar, no terminal codes
    # the end line comes before the nest's remarks, the start line before everything of the nest
    assert proc.stderr.index(lines[1]) < proc.stderr.index("remark: tuned (")

    again = subprocess.run(_cmd(tmp_path), env=_env(), capture_output=True, text=True, timeout=300)
    assert f"mdpoly: {loc}: tuned, from the tuning cache (" in again.stderr


def test_quiet_silences_the_lines(tmp_path: Path) -> None:
    proc = subprocess.run(_cmd(tmp_path, "-q"), env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == ""


def test_a_terminal_gets_the_bar_not_the_lines(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    proc = subprocess.run(_cmd(tmp_path), env={**_env(), "TERM": "xterm", "COLUMNS": "120"},
                          stdout=subprocess.DEVNULL, stderr=slave, timeout=300)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0, text
    assert "mdpoly: tuning " not in text and "tuning mdp" in text      # rich's bar names the nest function
