"""A fuzzing campaign: seeds -> :class:`runner.Summary` plus reduced reproducers of its failures.

.. autofunction:: run_campaign
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

from .generator import generate
from .known import known_for
from .reduce import reduce_failure, write_reproducer
from .runner import Outcome, Summary, check_program


def run_campaign(seeds: Iterable[int], target: str, *, jobs: int = 2, kernels: int | None = None,
                 avoid_known: bool = False, reduce_limit: int = 0,
                 failures_dir: Path | None = None, verbose: bool = False,
                 pool: Callable[..., Executor] = ThreadPoolExecutor,
                 real_c: float = 0.0, control: float = 0.0,
                 pinned: float = 0.0) -> tuple[Summary, list[tuple[Path, str]]]:
    """Check the program of every seed on ``target``; reduce up to ``reduce_limit`` failures.

    Failures are reduced one per (class, known tag) first, so that distinct bugs get a
    reproducer before repeats of one. Returns the summary and ``(path, C text)`` of each
    reproducer written under ``failures_dir``. ``real_c``, ``control``, ``pinned``: see :func:`generator.generate`.
    """
    avoid = known_for(target) if avoid_known else frozenset()

    def one(seed: int) -> Outcome:
        return check_program(generate(seed, target=target, kernels=kernels, avoid=avoid, real_c=real_c,
                                      control=control, pinned=pinned), target)

    summary = Summary()
    with pool(max_workers=jobs) as ex:
        for o in ex.map(one, seeds):
            summary.add(o)
            if verbose:
                t = sum(n.status == "transformed" for n in o.nests)
                print(f"seed {o.seed}: {o.status}{' [known ' + o.known + ']' if o.known else ''} "
                      f"({t}/{len(o.nests)} nests transformed) {' '.join(sorted(o.tags))}", flush=True)
    reduced: list[tuple[Path, str]] = []
    if reduce_limit <= 0 or not summary.failures:
        return summary, reduced
    seen: set[tuple[str, str | None]] = set()
    firsts = []
    for o in summary.failures:
        key = (o.status, o.known)
        if key not in seen:
            seen.add(key)
            firsts.append(o)
    rest = [o for o in summary.failures if o not in firsts]
    for o in (firsts + rest)[:reduce_limit]:
        prog = generate(o.seed, target=target, kernels=kernels, avoid=avoid, real_c=real_c, control=control,
                        pinned=pinned)
        small = reduce_failure(prog, o)
        again = check_program(small, target)
        path, text = write_reproducer(small, again if again.status == o.status else o, failures_dir)
        reduced.append((path, text))
    return summary, reduced
