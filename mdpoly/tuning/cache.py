"""``TuningCache``: tuned configurations persisted in SQLite, safe under concurrent processes.

The key is a SHA-256 over a canonical JSON of everything that decides the best configuration
(canonical MDH text, sizes, element types, target, device identity, compiler version); never
Python's ``hash()``. The database lives in ``$MDPOLY_CACHE_DIR`` (default
``$XDG_CACHE_HOME/mdpoly`` or ``~/.cache/mdpoly``); it is readable with the ``sqlite3`` shell, and
WAL mode plus a busy timeout let ``make -j`` run several mdpoly processes against it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS tuned (
  key TEXT PRIMARY KEY,
  key_fields TEXT NOT NULL,
  config TEXT NOT NULL,
  tuned_seconds REAL NOT NULL,
  default_seconds REAL,
  evaluations INTEGER NOT NULL,
  tuning_seconds REAL NOT NULL,
  created REAL NOT NULL
);
"""


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """``$MDPOLY_CACHE_DIR``, else ``$XDG_CACHE_HOME/mdpoly``, else ``~/.cache/mdpoly``, from the
    environment the CLI hands over."""
    env = environ
    if env.get("MDPOLY_CACHE_DIR"):
        return Path(env["MDPOLY_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mdpoly"


def cache_key(fields: dict[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CacheEntry:
    config: dict[str, Any]
    tuned_seconds: float
    default_seconds: float | None
    evaluations: int
    tuning_seconds: float


class TuningCache:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "tuning.sqlite3"
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection closed on exit (``sqlite3.Connection``'s own context manager only commits)."""
        db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        try:
            yield db
        finally:
            db.close()

    def get(self, fields: dict[str, Any]) -> CacheEntry | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT config, tuned_seconds, default_seconds, evaluations, tuning_seconds "
                "FROM tuned WHERE key = ?", (cache_key(fields),)).fetchone()
        if row is None:
            return None
        return CacheEntry(json.loads(row[0]), row[1], row[2], row[3], row[4])

    def put(self, fields: dict[str, Any], entry: CacheEntry) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO tuned VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (cache_key(fields), json.dumps(fields, sort_keys=True), json.dumps(entry.config, sort_keys=True),
                 entry.tuned_seconds, entry.default_seconds, entry.evaluations, entry.tuning_seconds,
                 time.time()))
