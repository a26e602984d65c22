"""Shared helpers for the front-end tests: write a C file into ``tmp_path`` and analyse it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mdpoly.frontend import analyze_file  # noqa: E402
from mdpoly.ir.nest import FileAnalysis  # noqa: E402
from mdpoly.options import Options  # noqa: E402


@pytest.fixture
def write_c(tmp_path: Path) -> Callable[[str, str], str]:
    def write(text: str, name: str = "in.c") -> str:
        p = tmp_path / name
        p.write_text(text)
        return str(p)
    return write


@pytest.fixture
def analyze(write_c: Callable[[str, str], str]) -> Callable[..., FileAnalysis]:
    def run(text: str, name: str = "in.c", **opts: object) -> FileAnalysis:
        path = write_c(text, name)
        cwd = os.getcwd()
        os.chdir(os.path.dirname(path))
        try:
            return analyze_file(os.path.basename(path), Options(**opts))  # type: ignore[arg-type]
        finally:
            os.chdir(cwd)
    return run
