"""Stopping a command cleanly: SIGTERM -> ``Terminated`` raised in the main thread, so that every
``finally`` and context manager on the way out runs (temporary folders are removed, worker
processes killed) before the command exits with status 143.

Ctrl-C needs nothing of this: Python raises ``KeyboardInterrupt`` (``mdpoly.tuning.atf`` keeps
pyATF from replacing that handler). ``Terminated`` derives from ``BaseException``, like
``KeyboardInterrupt``, so no ``except Exception`` on the way swallows it. Only the commands
(``mdpoly.cli``, ``mdpoly.cc_wrapper``) install the handler, for the time they run.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: Exit statuses of a command stopped by a signal (128 + the signal's number, as a shell reports it).
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """The process received SIGTERM."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)   # a second SIGTERM must not cut the clean-up short
    raise Terminated()


@contextmanager
def terminate_raises() -> Iterator[None]:
    """While inside, SIGTERM raises ``Terminated`` in the main thread (elsewhere: no change)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
