"""``mdpoly-cc --mdpoly-help`` prints mdpoly-cc's own usage (issue 25, item 6), not the compiler's,
and the README documents the same settings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from mdpoly.cc_wrapper import HELP_FLAG, USAGE

REPO = Path(__file__).resolve().parents[2]
CC_MAIN = "import sys; from mdpoly.cc_wrapper import main; sys.exit(main())"


def _cc(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "MDPOLY_CC": "/nonexistent/compiler"}
    return subprocess.run([sys.executable, "-c", CC_MAIN, *args], env=env, capture_output=True, text=True,
                          timeout=60)


def test_mdpoly_help_prints_the_wrappers_usage_without_calling_the_compiler() -> None:
    for args in ((HELP_FLAG,), ("-c", "x.c", HELP_FLAG), ("--target", "opencl", "--", HELP_FLAG)):
        proc = _cc(*args)
        assert proc.returncode == 0 and proc.stderr == ""
        assert proc.stdout == USAGE
    out = _cc(HELP_FLAG).stdout
    assert out.startswith("usage: mdpoly-cc")
    for setting in ("MDPOLY_FLAGS", "MDPOLY_CC_TIMEOUT", "MDPOLY_CC ", "MDPOLY_COMMAND", "MDPOLY_MPICC"):
        assert setting in out
    assert "Tuning is off by default" in out and "MDPOLY_FLAGS='--tune'" in out


def test_the_readme_documents_the_same_settings() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### In a build"):]
    section = section[:section.index("\n### ", 5)]
    for setting in sorted(set(re.findall(r"\bMDPOLY_[A-Z_]+", USAGE))):
        assert f"`{setting}`" in section, setting
    assert HELP_FLAG in section and "--no-tune" in section and ".venv/bin" in section
