import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
for p in (_ROOT / "tests" / "core", _ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
