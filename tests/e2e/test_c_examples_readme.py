"""c_examples/README.md's table -> each example's claims checked against ``mdpoly --report``.

For every row of the table: the combine operators it lists are the report's ``loops[].combine``
of the computation's nests (those of the function before ``main``), and its last column is their
outcome at the default sizes: ``parallel`` (every such nest transformed) or ``kept `CODE``` (every
one kept with that code); ``parallel at `-DN=... -DM=...``` names sizes at which they are all transformed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_harness import EXAMPLES_DIR, child_env, mdpoly_available, mdpoly_command, run_step

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="no mdpoly code generation in this checkout")

README = EXAMPLES_DIR / "README.md"
_ROW = re.compile(r"^\| `(?P<file>[\w.]+\.c)` \|(?P<cells>.*)\|\s*$")


def _rows() -> dict[str, list[str]]:
    """file name -> the table row's cells after the file name."""
    rows: dict[str, list[str]] = {}
    for line in README.read_text().splitlines():
        m = _ROW.match(line)
        if m:
            rows[m["file"]] = [c.strip() for c in m["cells"].split("|")]
    return rows


def _combines(cell: str) -> list[str]:
    """```++` ×4, `+` ×3`` -> ['++', '++', '++', '++', '+', '+', '+']; ``none (sequential)`` -> ['seq']."""
    if cell.startswith("none"):
        return ["seq"]
    out: list[str] = []
    for part in cell.split(","):
        m = re.fullmatch(r"\s*`([^`]+)`(?:\s*×(\d+))?\s*", part)
        assert m, f"cannot read combine operators {cell!r}"
        out += [m[1]] * int(m[2] or 1)
    return out


def _computation_nests(source: Path, tmp_path: Path, *defines: str) -> list[dict]:
    """The report's entries for the nests above ``main`` (the computation's function)."""
    report = tmp_path / "r.json"
    run_step([*mdpoly_command(), str(source), "-o", str(tmp_path / "out.c"), "--no-tune", "-q",
              "--report", str(report), *defines], env=child_env())
    main_line = next(n for n, line in enumerate(source.read_text().splitlines(), 1) if line.startswith("int main"))
    nests = [n for n in json.loads(report.read_text())["nests"] if n["line"] < main_line]
    assert nests, f"no nest above main (line {main_line}) in {source.name}'s report"
    return nests


def test_the_table_lists_every_example() -> None:
    assert sorted(_rows()) == sorted(p.name for p in EXAMPLES_DIR.glob("*.c"))


@pytest.mark.parametrize("name", sorted(_rows()))
def test_the_readme_claims_hold(name: str, tmp_path: Path) -> None:
    cells = _rows()[name]
    combine, outcome = cells[-2], cells[-1]
    nests = _computation_nests(EXAMPLES_DIR / name, tmp_path)
    for nest in nests:
        assert [loop["combine"] for loop in nest["loops"]] == _combines(combine), (name, nest["line"])
    if outcome == "parallel":
        assert all(n["status"] == "transformed" for n in nests), [(n["line"], n["reason"]) for n in nests]
    else:
        m = re.match(r"kept `([\w-]+)`", outcome)
        assert m, f"{name}: cannot read the outcome {outcome!r}"
        assert all((n["status"], n["code"]) == ("kept", m[1]) for n in nests), \
            [(n["line"], n["status"], n["code"]) for n in nests]
    larger = re.search(r"parallel at `([^`]+)`", outcome)
    if larger:
        defines = larger[1].split()
        assert all(re.fullmatch(r"-D\w+=\d+", d) for d in defines), outcome
        bigger = _computation_nests(EXAMPLES_DIR / name, tmp_path, *defines)
        assert all(n["status"] == "transformed" for n in bigger), [(n["line"], n["reason"]) for n in bigger]
