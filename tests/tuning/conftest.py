import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for p in (_HERE, _HERE.parents[1]):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

REPO = _HERE.parents[1]


@pytest.fixture
def analyze(tmp_path):
    """``analyze(c_text, **defines) -> first NestAnalysis with an MDH``."""
    from mdpoly.frontend import analyze_file
    from mdpoly.options import Options

    def run(src: str, **defines: int):
        path = tmp_path / "in.c"
        path.write_text(src)
        a = analyze_file(str(path), Options(defines=tuple(f"{k}={v}" for k, v in defines.items())))
        return next(n for n in a.nests if n.mdh is not None)

    return run
