"""README.md and the Markdown beside the examples -> checks that what they say is true.

- every flag ``mdpoly --help`` lists appears in the README's usage block ("Using it");
- the ``--emit mdh`` example is what that command prints;
- the quick start ends with the comparison of the parallel and the sequential outputs, and every
  file it writes is git-ignored;
- every relative link in README.md, benchmarks/**/*.md and c_examples/**/*.md names an existing file.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _fenced_after(text: str, marker: str) -> str:
    """The first fenced code block after ``marker`` in ``text``, dedented, without its fences."""
    start = text.index(marker)
    m = re.compile(r"^([ \t]*)```[^\n]*\n(.*?)^\1```", re.S | re.M).search(text, start)
    assert m, f"no fenced block after {marker!r}"
    return textwrap.dedent(m[2])


def _help_flags() -> set[str]:
    """The option strings of ``mdpoly --help`` (the lines that introduce an option)."""
    proc = subprocess.run([sys.executable, "-m", "mdpoly", "--help"], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, check=True)
    flags: set[str] = set()
    for line in proc.stdout.splitlines():
        m = re.match(r"^  (-.*?)(?:\s{2,}|$)", line)
        if m:
            flags |= {part.split()[0] for part in m[1].split(", ")}
    return flags


def test_every_flag_of_the_help_is_in_the_usage_block() -> None:
    flags = _help_flags()
    assert {"-o", "--target", "--version", "--tune", "-q", "--quiet"} <= flags, flags   # the parse worked
    usage = _fenced_after(README.read_text(), "## Using it")
    written = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", usage))
    missing = sorted(flags - written)
    assert not missing, f"README.md's usage block lacks {missing}"


def test_the_emit_mdh_example_is_the_real_output() -> None:
    text = README.read_text()
    m = re.search(r"`(mdpoly [^`]*--emit mdh[^`]*)` prints:", text)
    assert m, "README.md has no '`mdpoly ... --emit mdh ...` prints:' example"
    shown = _fenced_after(text, m[0])
    proc = subprocess.run([sys.executable, "-m", "mdpoly", *shlex.split(m[1])[1:]], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == shown.strip()


def _quick_start() -> str:
    return _fenced_after(README.read_text(), "## Quick start").strip()


def test_the_quick_start_compares_with_the_sequential_program() -> None:
    steps = [s.strip() for s in _quick_start().split("&&")]
    assert steps[-1].startswith(".venv/bin/python -m mdpoly.compare "), steps[-1]
    sequential, parallel = shlex.split(steps[-1])[-2:]
    # the two outputs it compares come from the original's build and from mdpoly's
    runs = {shlex.split(s)[-1]: shlex.split(s)[0] for s in steps if ">" in shlex.split(s)}
    builds = {shlex.split(s)[shlex.split(s).index("-o") + 1]: s for s in steps if s.startswith("cc ")}
    assert "c_examples/" in builds[runs[sequential].removeprefix("./")]
    assert "out.c" in builds[runs[parallel].removeprefix("./")]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_every_file_the_quick_start_writes_is_git_ignored() -> None:
    written: list[str] = []
    for step in _quick_start().split("&&"):
        words = shlex.split(step)
        written += [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", ">")]
    assert len(written) >= 5, written   # out.c, two programs, two outputs
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *written], cwd=ROOT,
                             capture_output=True, text=True, check=False).stdout.split()
    assert sorted(ignored) == sorted(written)


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _markdown_files() -> list[Path]:
    return [README, *sorted(ROOT.glob("benchmarks/**/*.md")), *sorted(ROOT.glob("c_examples/**/*.md"))]


def test_the_link_check_reads_links() -> None:
    text = 'see ![plot](a.png) and [the docs](https://x.org), [here](b.md#s "title")'
    assert _LINK.findall(text) == ["a.png", "https://x.org", "b.md#s"]


def test_every_relative_link_names_an_existing_file() -> None:
    broken = []
    for md in _markdown_files():
        for target in _LINK.findall(md.read_text()):
            if re.match(r"[A-Za-z][\w+.-]*:", target) or target.startswith("#"):
                continue   # a URL or an anchor in the same file
            if not (md.parent / target.split("#")[0]).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken, f"links to missing files: {broken}"
