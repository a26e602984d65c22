"""Candidates measured on a Dask distributed cluster (``--tune-workers ADDRESS``).

The client (the ``mdpoly`` process) keeps everything that decides what is best: it lowers and
renders every candidate, holds the reference outputs and compares each candidate's outputs with
them, owns the tuning log and the tuning cache. A worker only builds and measures: the client
submits a ``Job`` -- plain data: the ``Candidate`` (its ``BuildRequest``), a ``RunnerSpec``
naming the runner (target, device selector, OpenMP threads, C compiler), the repetitions and
the timeout -- to ``run_job``, which builds the runner once per worker process
(``worker_runner``), builds and runs the candidate there and answers a ``JobResult``: the
``Measurement`` or a typed rejection (``build``, ``crash``, ``timeout``; any other failure on the
worker is a ``crash`` too), with the worker that measured it. The nest's inputs are scattered to
the workers once per nest.

Placement: a job asks for one unit of the resource its device kind needs (``RESOURCES``:
``CPU`` for OpenMP, ``GPU`` for OpenCL and CUDA), so a worker started with
``--resources CPU=1`` (or ``GPU=1``) measures one candidate at a time, and GPU candidates only
go to workers that declare a GPU. On a cluster whose workers declare no resources at all, jobs
go to any worker (said in the log).

What runs in parallel (``DaskEvaluator.prefetch``): the search hands over batches -- the whole
neighbourhood of the local refinement, and in the global phase the technique's proposal filled
up with random configurations to the number of workers (``mdpoly.tuning.atf.batched_search``);
each batch is submitted at once, its jobs spread round-robin over the eligible workers (a loose
preference the scheduler may override for a busy or lost worker), and its results are taken in
order. What does not: the
reference (on the client), the default's measurement, and the confirmation of the winner.
Times from different machines are not comparable, so the winner is re-measured against the
default, interleaved, on one worker (the one that measured the default) before it is accepted
(``mdpoly.tuning.tune._confirm``); each candidate's log record names the worker that measured it.
"""

from __future__ import annotations

import hashlib
import socket
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from mdpoly.runtime.base import BuildRequest, Measurement, RuntimeFailure
from mdpoly.tuning.evaluate import NestEvaluator
from mdpoly.tuning.target import Candidate

#: The resource a job of each target asks for (one unit); workers declare what they have.
RESOURCES: dict[str, str] = {"openmp": "CPU", "opencl": "GPU", "cuda": "GPU"}
#: Seconds the client waits for a result beyond the job's own timeout before calling it lost.
GRACE_SECONDS = 120.0
#: Seconds to wait for the scheduler when connecting.
CONNECT_SECONDS = 20.0


@dataclass(frozen=True, slots=True)
class RunnerSpec:
    """Which runner a worker builds: the target's name, its device selector (OpenCL index or name
    substring, CUDA index; ``None``: the host code's own choice), OpenMP threads (``None``: all)
    and the C compiler."""

    target: str
    device: str | None = None
    threads: int | None = None
    compiler: str = "cc"


@dataclass(frozen=True, slots=True)
class Job:
    spec: RunnerSpec
    candidate: Candidate
    repeats: int
    timeout: float
    warmup: int = 1


@dataclass(frozen=True, slots=True)
class JobResult:
    """A worker's answer: ``measurement``, or ``kind`` and ``why`` of the failure."""

    worker: str
    measurement: Measurement | None = None
    kind: str = "ok"
    why: str = ""
    build_seconds: float = 0.0


class WorkerFailure(RuntimeFailure):
    """A job that failed on a worker, with the failure's kind (``build``, ``crash``, ``timeout``)."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind


# {{{ the worker side

#: One runner per ``RunnerSpec`` in each worker process.
_RUNNERS: dict[RunnerSpec, Any] = {}


def worker_runner(spec: RunnerSpec) -> Any:
    """The runner ``spec`` names, made once per process (a GPU target opens its device here)."""
    if spec not in _RUNNERS:
        if spec.target == "openmp":
            from mdpoly.runtime.openmp import OpenMPRunner
            _RUNNERS[spec] = OpenMPRunner(work_dir=tempfile.mkdtemp(prefix="mdpoly-worker-"), threads=spec.threads)
        elif spec.target == "opencl":
            from mdpoly.tuning.gpu import opencl_target
            _RUNNERS[spec] = opencl_target(spec.device).runner
        elif spec.target == "cuda":
            from mdpoly.tuning.gpu import cuda_target
            _RUNNERS[spec] = cuda_target(spec.device).runner
        else:
            raise ValueError(f"no runner for target '{spec.target}'")
    return _RUNNERS[spec]


def _worker_name() -> str:
    try:
        from distributed import get_worker
        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"local:{socket.gethostname()}"


def run_job(job: Job, inputs: dict[str, np.ndarray]) -> JobResult:
    """Build and run ``job`` on this worker: its ``Measurement`` or why it failed (never raises)."""
    where = _worker_name()
    try:
        runner = worker_runner(job.spec)
        request = job.candidate.request
        if job.spec.compiler != request.compiler:
            request = replace(request, compiler=job.spec.compiler)
        built = runner.build(request)
        merged = {**inputs, **job.candidate.inputs} if job.candidate.inputs else inputs
        m = runner.run(built, merged, repeats=job.repeats, warmup=job.warmup, timeout=job.timeout)
    except RuntimeFailure as exc:
        return JobResult(where, None, exc.kind, str(exc)[:2000])
    except Exception as exc:  # noqa: BLE001 - whatever breaks on a worker rejects the candidate, said
        return JobResult(where, None, "crash", f"on worker {where}: {type(exc).__name__}: {exc}"[:2000])
    return JobResult(where, m, "ok", "", built.build_seconds)

# }}}


# {{{ the client side


def connect(address: str) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``.

    :raises ImportError: without the ``dask`` extra; ``OSError``/``TimeoutError`` when unreachable.
    """
    from distributed import Client
    return Client(address, timeout=CONNECT_SECONDS, set_as_default=False)


def _request_key(request: BuildRequest) -> str:
    text = "\0".join((request.source, request.entry, request.language, request.compiler, *request.flags))
    return hashlib.sha256(text.encode()).hexdigest()


class DaskEvaluator(NestEvaluator):
    """A ``NestEvaluator`` whose candidates are built and measured on the workers of ``client``
    (see the module docstring); ``spec`` names the runner the workers build."""

    def __init__(self, *args: Any, client: Any, spec: RunnerSpec, **kwargs: Any) -> None:
        self.client = client
        self.spec = spec
        resource = RESOURCES.get(spec.target, "CPU")
        workers = client.scheduler_info().get("workers", {})
        declared = [w for w in workers.values() if w.get("resources")]
        self.resources: dict[str, float] | None = {resource: 1} if declared else None
        eligible = [a for a, w in workers.items() if not declared or w.get("resources", {}).get(resource)]
        if not eligible:
            raise RuntimeError(f"no Dask worker declares the resource {resource} that {spec.target} candidates "
                               f"need (start workers with --resources {resource}=1)")
        #: how many jobs a batch should hold: one per eligible worker
        self.width = len(eligible)
        #: the eligible workers, in the order jobs are spread over them
        self.eligible = list(eligible)
        self._next_worker = 0
        self._scattered: Any = None
        self._pending: dict[str, Any] = {}
        self._candidates: dict[Any, Candidate] = {}
        self._last_worker: str | None = None
        self._pin: str | None = None
        #: the worker that measured the default (where confirmations run)
        self.home: str | None = None
        #: candidates measured per worker
        self.by_worker: Counter[str] = Counter()
        super().__init__(*args, **kwargs)
        self.log.write({"event": "workers", "scheduler": str(client.scheduler.address), "eligible": eligible,
                        "resources": self.resources,
                        "placement": "any worker (none declares resources)" if self.resources is None
                        else f"workers declaring {resource}"})

    def _inputs(self) -> Any:
        if self._scattered is None:
            self._scattered = self.client.scatter(self.inputs, broadcast=True)
        return self._scattered

    def _submit(self, cand: Candidate, repeats: int, timeout: float) -> Any:
        job = Job(self.spec, cand, repeats, timeout)
        kwargs: dict[str, Any] = {"pure": False}
        if self.resources is not None:
            kwargs["resources"] = self.resources
        if self._pin is not None:
            kwargs["workers"] = [self._pin]
            kwargs["allow_other_workers"] = False
        else:
            # spread jobs round-robin: a loose preference, so a busy or lost worker's job may move,
            # but a batch of fast candidates does not all land on the first worker that is free
            kwargs["workers"] = [self.eligible[self._next_worker % len(self.eligible)]]
            kwargs["allow_other_workers"] = True
            self._next_worker += 1
        return self.client.submit(run_job, job, self._inputs(), **kwargs)

    def candidate(self, params: Any) -> Candidate:
        hit = self._candidates.pop(params, None)
        return hit if hit is not None else super().candidate(params)

    def prefetch(self, batch: list[Any]) -> None:
        """Submit every not yet measured parameter set of ``batch`` at once; ``evaluate`` then
        takes their results (a set the target refuses is left to ``evaluate`` to reject)."""
        from mdpoly.tuning.target import Rejected
        for params in batch:
            if params in self.memo:
                continue
            try:
                cand = super().candidate(params)
            except Rejected:
                continue
            key = _request_key(cand.request)
            if key not in self._pending:
                self._candidates[params] = cand
                self._pending[key] = self._submit(cand, self.repeats, self._budgeted(self.timeout))

    def _run(self, cand: Candidate, repeats: int, timeout: float) -> Measurement:
        key = _request_key(cand.request)
        future = self._pending.pop(key, None) if self._pin is None else None
        if future is None:
            future = self._submit(cand, repeats, timeout)
        try:
            result: JobResult = future.result(timeout=timeout + GRACE_SECONDS)
        except Exception as exc:  # a lost worker or job is a failed candidate, not a failed tuning
            future.cancel()
            raise WorkerFailure("crash", f"the job failed on the cluster: {type(exc).__name__}: {exc}") from exc
        self._last_worker = result.worker
        if result.measurement is None:
            raise WorkerFailure(result.kind, result.why)
        if self.home is None:
            self.home = result.worker
        return result.measurement

    def _log_extra(self, params: Any) -> dict[str, Any]:
        where, self._last_worker = self._last_worker, None
        if where is not None:
            self.by_worker[where] += 1
        return {"worker": where}

    def remeasure(self, params: Any) -> float:
        """As ``NestEvaluator.remeasure``, on the worker that measured the default."""
        self._pin = self.home
        try:
            return super().remeasure(params)
        finally:
            self._pin = None
            self._last_worker = None

    def close(self) -> None:
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()


def workers_summary(by_worker: dict[str, int]) -> str:
    """``"2 workers (tcp://a: 7, tcp://b: 6)"``."""
    parts = ", ".join(f"{w}: {n}" for w, n in sorted(by_worker.items()))
    return f"{len(by_worker)} worker{'s' if len(by_worker) != 1 else ''} ({parts})"


# }}}
