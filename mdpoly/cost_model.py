"""The cost model: ``CostInputs`` (work, bytes, synchronization, calls, target) -> ``CostDecision``.

Decides, per computation (and, through ``min_phase_ops``, per parallel loop and per region step
of a host loop): parallel or as written, and -- where the work is known only at run time -- the
run-time guard under which the parallel code runs (the original nest runs otherwise, the way a
failed run-time check falls back to it). Its inputs and decision print (``CostDecision.text``)
and go into the report (``to_report``).

The model, in the constants of ``CALIBRATION`` (one table, measured; see there):

- sequential time ``S = ops * ns_per_op``;
- quiet parallel time on ``t`` threads ``P = S / t + syncs * sync(t)``, where ``syncs`` counts the
  team's fork/join plus the barriers of one call and ``sync(t)`` grows with ``t``.

A computation runs in parallel when ``P <= S / min_speedup`` for every team size the program may
run with (2 .. ``max_threads``: never slower). That bounds the work *between two
synchronizations* from below, so the decision is one number of operations per synchronization,
``min_phase_ops``. A computation inside host loops is judged per call (its team starts, or its
barrier waits, once per call).

Under load (another process busy on a core) a barrier of a team with a thread on that core
waits for a scheduler slice (0.1-2 ms): priced per synchronization that would keep every
computation under ~2,000,000 operations per synchronization sequential. Instead the generated
code chooses its team size at run time (``mdp_team()``, ``backends/c/mdp_team.h``: no more
threads than cores free of other runnable tasks), so the model prices synchronization quiet;
``loaded_ns`` estimates the call on the one free core it may be left with.

Work known only at run time is decided per call by a guard. Where the generated code may beat
the nest as written on one thread (``gains_on_one_thread``: its tiling, register blocks or loop
order), there are three bands: the nest as written below ``call_margin * call_ns`` of work, the
generated code on one thread up to ``min_phase_ops`` (the OpenMP ``if`` clause,
``Plan.parallel_if``), and a team above it; otherwise two (as written, or a team).

GPU targets: the device pays when ``S >= device_margin * (launches * launch_ns + bytes *
transfer_ns_per_byte)``; inside host loops the transfers are not charged (the data may stay on
the device over the loop, ``mdpoly.backends.residency``) and no run-time guard is added (it would read
the loop's iterators and end that residency). A run-time guard also rents before it buys
(``mdp_gpu_rent(setup_s)``): the host runs the calls it would send to the device until their host
time reaches the set-up's, so a short program never pays a set-up that a long one pays at most
twice over. The per-program context and module set-up
(``gpu_setup_ns``) is not charged per call: it is paid once per program whatever the number of
nests. Whole nests of a GPU target's file are weighed against the host by ``decide_file``
(``DeviceInputs`` from ``mdpoly.hybrid``): device time ``max(ops * gpu_ns_per_op, bytes *
gpu_ns_per_byte, path_ops * gpu_thread_ns_per_op) + launches * gpu_launch_ns + copies *
gpu_transfer_ns_per_byte`` (``path_ops``: operations one device thread runs one after the other,
a wavefront's tile per wavefront; plus what
stays on the host as written) against the OpenMP estimate on ``host_threads`` threads, with the
set-up charged once to the nests that go to the device together (a whole program whose kernels
run under ~30 ms sequentially stays on the host: the hybrid output).

``--all-nests`` and ``#pragma mdh`` force the transformation: the decision is then ``forced``
(parallel, no guard) and says what the model would have done.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, fields, replace

from mdpoly.ir.c_types import parse_type
from mdpoly.ir.mdh import Affine, MdhExpr, Precondition
from mdpoly.ir.nest import SCATTER_WORK_PER_ELEMENT, HostLoop, PrivateLoop, ScheduleItem, Wavefront
from mdpoly.ir.plan import REGISTER_LAYER, Loop, Plan, walk

# {{{ the constants


@dataclass(frozen=True, slots=True)
class Calibration:
    """The model's constants: synchronization quiet (``benchmarks/never_slower.py --calibrate``,
    whose ``sync_costs.c`` times R calls of ``a[i] = a[i] * 0.5 + 1`` over W elements as fork/join
    calls, as steps of one region, and sequentially).

    Quiet, on the 16-core Xeon (gcc, libgomp): a fork/join a few us (2 threads ~1-1.5 us, 16
    threads ~5-7 us), a barrier ~1 us; the same on the 2-core development machine when it is
    quiet (fork/join of 2 threads 1.5 us, barrier 0.3 us); EPCC syncbench's published libgomp
    numbers agree (fork/join ~5-10 us, barrier ~2-4 us at 16 threads): ``sync(t)`` is linear in
    t, 1 us at 2 threads, 6.6 us at 16. With ``min_speedup`` that asks ~86,000 counted operations
    per synchronization (``min_phase_ops(1)``): jacobi_1d at LARGE (1.2M per time step) shares,
    a step of durbin or trisolv (a few thousand) or an rmsnorm of 48 elements does not.

    Loaded synchronization (one ``yes`` on one of the two cores: 150 us to 1.8 ms per fork/join
    around 3-28 us of work) is not priced: the team size chosen at run time (``mdp_team()``)
    leaves the loaded core out. ``ns_per_op``: an element 0.07-0.1 ns in cache (two operations,
    vectorized), a 60x70x80 gemm 0.05 ns per counted operation, streaming 0.3-0.6 ns an element;
    it lies between, since the counted operations of a scalar function (``ops_per_point``) leave
    out loads and address arithmetic.
    """

    ns_per_op: float = 0.1             # sequential time per counted operation
    sync_ns: float = 1000.0            # a fork/join (or a barrier) of a 2-thread team, quiet
    sync_per_thread_ns: float = 400.0  # its growth per further thread (16 threads: 6.6 us)
    min_speedup: float = 1.2           # a parallel call must be estimated at least this much faster (quiet)
    max_threads: int = 16              # the largest team judged at compile time (the run time picks one)
    call_ns: float = 1000.0            # a call of generated code on one thread (call, 1-thread team, tile set-up)
    call_margin: float = 10.0          # the work of a call must be this many times its overhead
    gpu_launch_ns: float = 10_000.0    # a kernel launch and its synchronization
    gpu_transfer_ns_per_byte: float = 0.1   # host <-> device, ~10 GB/s
    gpu_setup_ns: float = 200e6        # context creation and module load, once per program
    device_margin: float = 2.0         # the device must be estimated this many times faster
    gpu_ns_per_op: float = 0.002       # a counted operation on the device (H100-class)
    gpu_ns_per_byte: float = 0.0005    # a byte of device memory traffic, ~2 TB/s
    host_threads: int = 2              # the host team the device is weighed against (the OpenMP estimate)
    gpu_min_speedup: float = 1.2       # a nest goes to the device when estimated this much faster (0: always)
    #: a counted operation of one device thread running sequential code alone (a wavefront's tile:
    #: in order, each load's latency exposed, hidden only by the other tiles' threads). Measured on
    #: the H200 (issue 23, one thread per tile): seidel_2d's kernels 446 ms over a path of 5.2M
    #: operations (85 ns), nussinov's 2.79 s over 57.6M (48 ns)
    gpu_thread_ns_per_op: float = 50.0
    #: one of a tile's own wavefronts on a work-group (``Wavefront.in_tile``) beyond its threads'
    #: work: the group's barrier and the global-memory round trip the next inner wavefront waits
    #: for. Measured on the H200 (issue 23, a work-group per tile, CUDA): seidel_2d's kernels
    #: 10.5 ms over a path of 39,680 operations (at 50 ns: 2 ms) and 19,840 barriers, ~430 ns
    #: each; with it nussinov's path (1.79M operations, 2,413 barriers) predicts 90 ms, measured
    #: 99.7 ms (NVIDIA OpenCL: 11 ms and 170 ms)
    gpu_barrier_ns: float = 450.0

    def sync(self, threads: int) -> float:
        return self.sync_ns + self.sync_per_thread_ns * max(threads - 2, 0)


#: The one table of constants every decision uses (``calibration`` overrides some of them).
CALIBRATION = Calibration()

#: Sources of the GPU constants (H100-class defaults; issue 22's measurement on an H100, whole
#: programs at LARGE through ``--target cuda``):
#:
#: - ``gpu_setup_ns`` 0.2 s: every kernel under 30 ms sequential took about 0.2 s as a program
#:   (context creation, NVRTC compile of the kernels and module load at the first call; an OpenCL
#:   program build is similar), paid once per program;
#: - ``gpu_transfer_ns_per_byte`` 0.1 ns (10 GB/s, pageable PCIe copies): gramschmidt's 5.7 s of
#:   transfers, lu's whole-matrix copies around a host statement (over 40 s against 4.7 s);
#: - ``gpu_launch_ns`` 10 us: a launch and its synchronization (cuLaunchKernel + cuCtxSynchronize);
#: - ``gpu_ns_per_op`` 0.002 ns: 50 times ``ns_per_op`` (large BLAS-3 kernels ran 11-29x faster
#:   than gcc -O3 sequential as whole programs, set-up and transfers included);
#: - ``gpu_ns_per_byte`` 0.0005 ns: ~2 TB/s of the H100's 3.35 TB/s HBM3.
#:
#: ``host_threads``: the team of the OpenMP estimate the device must beat (the CPU model's own
#: judging team; 16 on the GPU machine's host makes the host win more often);
#: ``gpu_min_speedup`` 0 sends every weighed nest to the device (the benchmark's ``cuda_all``).
GPU_SOURCES = "issue 22 (H100, whole programs at LARGE, --target cuda); see the comment above GPU_SOURCES"


def calibration(overrides: tuple[tuple[str, float], ...] = ()) -> Calibration:
    """``CALIBRATION`` with ``overrides`` (field name, value) applied.

    :raises ValueError: for a name that is no constant of ``Calibration``.
    """
    if not overrides:
        return CALIBRATION
    names = {f.name: f.type for f in fields(Calibration)}
    values: dict[str, float | int] = {}
    for name, value in overrides:
        if name not in names:
            raise ValueError(f"unknown cost-model constant '{name}' (known: {', '.join(sorted(names))})")
        values[name] = int(value) if names[name] in ("int", int) else float(value)
    return replace(CALIBRATION, **values)  # type: ignore[arg-type]


def parse_calibration(text: str) -> tuple[tuple[str, float], ...]:
    """Overrides from ``$MDPOLY_COST_CALIBRATION``: a JSON object (the text, or a file holding it:
    ``{"gpu_setup_ns": 1e8}``) or ``name=value`` pairs separated by commas.

    :raises ValueError: for text that is none of these, or a name ``Calibration`` lacks.
    """
    text = text.strip()
    if not text:
        return ()
    if not text.startswith("{") and "=" not in text:
        try:
            with open(text, encoding="utf-8") as fh:
                text = fh.read().strip()
        except OSError as err:
            raise ValueError(f"cannot read the cost-model calibration file '{text}': {err.strerror}") from err
    pairs: list[tuple[str, float]] = []
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"cost-model calibration: {err}") from err
        pairs = [(str(k), float(v)) for k, v in data.items()]
    else:
        for item in filter(None, (t.strip() for t in text.split(","))):
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"cost-model calibration: '{item}' is no name=value")
            pairs.append((name.strip(), float(value)))
    calibration(tuple(pairs))   # unknown names fail here
    return tuple(pairs)

# }}}


# {{{ inputs and decision


@dataclass(frozen=True, slots=True)
class CostInputs:
    """What the model reads about one computation (all per call).

    ``ops``/``bytes``: known work and bytes touched (``None``: sizes known only at run time);
    ``points_c``: the iteration count as a C expression of the sizes (``double`` arithmetic),
    for the run-time guard at the call (``points_in_c``: the same inside the generated function);
    ``ops_per_point``; ``syncs``: fork/join plus barriers per call;
    ``in_host_loop``: it is called once per iteration of sequential loops around it;
    ``target``: ``openmp`` or a GPU target; ``forced``: why the transformation is requested
    regardless (``--all-nests``, ``#pragma mdh``), or ``""``."""

    target: str
    ops: int | None
    bytes: int | None
    points_c: str
    ops_per_point: int
    #: ``points_c`` inside the generated function (its parameters' names; ``""``: as ``points_c``)
    points_in_c: str = ""
    syncs: int = 1
    in_host_loop: bool = False
    forced: str = ""
    #: GPU targets, work known at run time only: the bytes a call copies in and out as a C
    #: expression of the sizes (``""``: not known), and those bytes per point at very large sizes
    bytes_c: str = ""
    large_bytes_per_point: float | None = None

    def text(self) -> str:
        ops = f"{self.ops}" if self.ops is not None else f"({self.points_c}) * {self.ops_per_point}"
        return (f"target={self.target} ops={ops} bytes={self.bytes if self.bytes is not None else '?'} "
                f"syncs/call={self.syncs} in_host_loop={self.in_host_loop}"
                + (f" forced={self.forced}" if self.forced else ""))


@dataclass(frozen=True, slots=True)
class CostDecision:
    """The model's verdict on one computation.

    ``choice``: ``parallel`` (always), ``guarded`` (decided at run time: the generated code
    when ``guard`` holds, else the original nest; inside it, more than one thread only when
    ``parallel_if`` holds), ``sequential`` (kept as written), or ``forced``; ``reason`` in
    words; ``min_ops``: the least work per call that pays in parallel (``min_call_ops``: the
    least that pays the generated code's call on one thread); ``seq_ns``/``par_ns``/``loaded_ns``:
    the estimates at ``threads`` threads (``None`` when the work is unknown)."""

    choice: str
    reason: str
    min_ops: int
    inputs: CostInputs
    guard: str | None = None
    parallel_if: str | None = None
    min_call_ops: int = 0
    threads: int = 2
    seq_ns: float | None = None
    par_ns: float | None = None
    loaded_ns: float | None = None
    #: the generated code may beat the nest as written on one thread (``gains_on_one_thread``;
    #: ``None``: not asked, no OpenMP plan)
    one_thread_gain: bool | None = None

    @property
    def parallel(self) -> bool:
        return self.choice != "sequential"

    def precondition(self) -> Precondition | None:
        """The run-time guard as a precondition of the generated call (``None``: no guard)."""
        if self.guard is None:
            return None
        return Precondition(self.guard, f"cost model: at least {self.min_call_ops or self.min_ops} operations per call")

    def for_plan(self, gains: bool) -> CostDecision:
        """This decision for generated code that may (``gains``) or may not beat the nest as
        written on one thread (``gains_on_one_thread``): without gains, calls too small for a
        team run the nest as written (no one-thread band)."""
        if gains or self.parallel_if is None:
            return replace(self, one_thread_gain=gains)
        points = max(1, math.ceil(self.min_ops / self.inputs.ops_per_point))
        return replace(self, guard=f"{self.inputs.points_c} >= {points}.0", parallel_if=None, min_call_ops=0,
                       one_thread_gain=gains)

    def text(self) -> str:
        """One line for a remark, e.g. ``cost: guarded: parallel when ops >= 200000``."""
        if self.choice == "guarded" and self.parallel_if is not None:
            return (f"cost: run-time guard, the generated code when a call has >= {self.min_call_ops} operations, "
                    f"in parallel when >= {self.min_ops}")
        if self.choice == "guarded":
            rent = "; " + self.reason.split("; ", 1)[1] if "; " in self.reason else ""
            return f"cost: run-time guard, parallel when a call has >= {self.min_ops} operations{rent}"
        est = (f" (est. {_us(self.seq_ns)} sequential, {_us(self.par_ns)} on {self.threads} threads, "
               f"{_us(self.loaded_ns)} under load)" if self.seq_ns is not None else "")
        return f"cost: {self.choice}: {self.reason}{est}"

    def to_report(self) -> dict[str, object]:
        out: dict[str, object] = {"choice": self.choice, "reason": self.reason, "min_ops": self.min_ops,
                                  "guard": self.guard, "parallel_if": self.parallel_if,
                                  "min_call_ops": self.min_call_ops, "threads": self.threads, "seq_ns": self.seq_ns,
                                  "par_ns": self.par_ns, "loaded_ns": self.loaded_ns,
                                  "gains_on_one_thread": self.one_thread_gain, "inputs": asdict(self.inputs)}
        return out


def _us(ns: float | None) -> str:
    if ns is None:
        return "?"
    return f"{ns / 1e9:.3g} s" if ns >= 1e9 else f"{ns / 1e6:.3g} ms" if ns >= 1e6 else f"{ns / 1e3:.3g} us"

# }}}


# {{{ the decision


def min_phase_ops(syncs: int = 1, cal: Calibration = CALIBRATION) -> int:
    """The least work (operations) of one call with ``syncs`` synchronizations that pays on the
    host, quiet, for every team of 2 .. ``max_threads`` threads (under load the run-time team
    size leaves busy cores out)."""
    need = 0.0
    for t in (2, cal.max_threads):
        # S - S/t >= ... : S (1/ms - 1/t) >= syncs * sync(t)
        gain = 1.0 / cal.min_speedup - 1.0 / t
        need = max(need, syncs * cal.sync(t) / gain)
    return math.ceil(need / cal.ns_per_op)


def guard_private_loops(items: tuple[ScheduleItem, ...], min_work: int) -> tuple[ScheduleItem, ...]:
    """``items`` with each parallel loop around a body as written (``PrivateLoop``) whose work
    is known only at run time guarded like a computation's call: it runs in parallel when its
    estimated operations (two per statement instance) reach ``min_work`` and the run-time team
    has more than one thread (the same code on one thread only adds the team's start), else as
    written. Loops of known work, or without an estimate, are left as they are.

    A loop with scattered reductions (``PrivateLoop.scattered``) always gets one more guard: its
    statement instances exceed ``SCATTER_WORK_PER_ELEMENT`` times the team size times the
    elements of its sections, since each thread zeroes a copy of every section and the team
    combines them one after the other (gcc combines under a lock)."""
    out: list[ScheduleItem] = []
    for it in items:
        if isinstance(it, HostLoop):
            out.append(replace(it, body=guard_private_loops(it.body, min_work)))
        elif isinstance(it, PrivateLoop):
            guards: list[Precondition] = []
            if it.work is None and it.work_c and min_work > 0:
                team = "" if it.blocked else " && mdp_team() > 1"
                guards.append(Precondition(f"2.0 * ({it.work_c}) >= {min_work}.0{team}",
                                           f"cost: parallel when a call runs >= {min_work} operations (estimated "
                                           "at run time from the sizes)" + (" on more than one thread" if team else "")))
            if it.scattered:
                guards.append(_scatter_guard(it))
            out.append(replace(it, preconditions=(*it.preconditions, *guards)) if guards else it)
        else:
            out.append(it)
    return tuple(out)


def _scatter_guard(loop: PrivateLoop) -> Precondition:
    """The run-time condition under which ``loop``'s copies of its scattered sections pay."""
    elements = " + ".join(f"(double)({r.length})" for r in loop.scattered)
    names = ", ".join(f"'{r.name}'" for r in loop.scattered)
    return Precondition(f"({loop.work_c or loop.work}) > {SCATTER_WORK_PER_ELEMENT}.0 * (double)mdp_team() * ({elements})",
                        f"cost: its statement instances exceed {SCATTER_WORK_PER_ELEMENT} x the team size x the elements "
                        f"of {names} it updates (each thread zeroes and combines a copy)")


def _gpu_min_ops(inputs: CostInputs, cal: Calibration) -> int:
    return math.ceil(cal.device_margin * inputs.syncs * cal.gpu_launch_ns / cal.ns_per_op)


def decide(inputs: CostInputs, cal: Calibration = CALIBRATION) -> CostDecision:
    """The decision for ``inputs`` under ``cal`` (see the module docstring)."""
    gpu = inputs.target in ("opencl", "cuda")
    min_ops = _gpu_min_ops(inputs, cal) if gpu else min_phase_ops(inputs.syncs, cal)
    if inputs.ops is None:
        if gpu and inputs.in_host_loop:
            # a guard reading the host loop's iterators would end the data's residency on the device
            return CostDecision("parallel", "inside host loops, where its data may stay on the device: no guard",
                                min_ops, inputs, threads=0)
        if inputs.forced:
            return CostDecision("forced", f"requested by {inputs.forced}; sizes known at run time only",
                                min_ops, inputs)
        points = max(1, math.ceil(min_ops / inputs.ops_per_point))
        if gpu:
            guard = f"{inputs.points_c} >= {points}.0"
            # a call's copies must be repaid too: per point, the host's time (OpenMP estimate)
            # less the device's must exceed the copies' share
            gain = inputs.ops_per_point * (cal.ns_per_op / max(1, cal.host_threads) - cal.device_margin * cal.gpu_ns_per_op)
            copies = cal.device_margin * cal.gpu_transfer_ns_per_byte
            if inputs.large_bytes_per_point is not None and gain <= copies * inputs.large_bytes_per_point:
                return CostDecision("sequential", f"the device never repays the copies of a call ({inputs.ops_per_point} "
                                    f"operations per point for {inputs.large_bytes_per_point:.3g} bytes copied, even at "
                                    "very large sizes)", min_ops, inputs, threads=0)
            if inputs.bytes_c and gain > 0:
                guard += f" && {gain!r} * {inputs.points_c} >= {copies!r} * ({inputs.bytes_c})"
            why = "sizes known at run time only"
            if cal.gpu_setup_ns > 0:   # ski rental: the host runs such calls until they took the set-up's time
                # (a call estimated to take that long on the host alone buys at once)
                per_point_s = inputs.ops_per_point * cal.ns_per_op / max(1, cal.host_threads) * 1e-9
                guard += f" && mdp_gpu_rent({cal.gpu_setup_ns * 1e-9!r}, {per_point_s!r} * {inputs.points_c})"
                why += (f"; the device once the host has spent {_us(cal.gpu_setup_ns)} (the runtime's set-up) "
                        "on the calls it would run, or the runtime is up")
            return CostDecision("guarded", why, min_ops, inputs, guard=guard)
        # the generated code pays on one thread long before it pays in parallel (its tiling and
        # vectorization): the call's guard is lower, and its team forms only above ``min_ops``
        min_call = min(min_ops, math.ceil(cal.call_margin * cal.call_ns / cal.ns_per_op))
        if min_call >= min_ops:   # no one-thread band: the call's guard is the parallel one
            return CostDecision("guarded", "sizes known at run time only", min_ops, inputs,
                                guard=f"{inputs.points_c} >= {points}.0")
        call_points = max(1, math.ceil(min_call / inputs.ops_per_point))
        return CostDecision("guarded", "sizes known at run time only", min_ops, inputs,
                            guard=f"{inputs.points_c} >= {call_points}.0",
                            parallel_if=f"{inputs.points_in_c or inputs.points_c} >= {points}.0",
                            min_call_ops=min_call)
    seq = inputs.ops * cal.ns_per_op
    if gpu:
        moved = 0 if inputs.in_host_loop else inputs.bytes or 0   # over host loops: resident, maybe
        dev = inputs.syncs * cal.gpu_launch_ns + moved * cal.gpu_transfer_ns_per_byte
        pays = seq >= cal.device_margin * dev and inputs.ops >= min_ops
        why = (f"{inputs.ops} operations repay a launch and {moved} bytes of transfers" if pays else
               f"{inputs.ops} operations do not repay a launch and {moved} bytes of transfers")
        choice = "parallel" if pays else "sequential"
        if not pays and inputs.forced:
            choice, why = "forced", f"requested by {inputs.forced} ({why})"
        return CostDecision(choice, why, min_ops, inputs, threads=0, seq_ns=seq, par_ns=dev, loaded_ns=None)
    t = 2
    par = seq / t + inputs.syncs * cal.sync(t)
    loaded = seq + inputs.syncs * cal.sync_ns   # the team of the one free core
    pays = inputs.ops >= min_ops
    per = "per call"
    why = (f"{inputs.ops} operations {per} repay {inputs.syncs} thread synchronization(s)" if pays else
           f"{inputs.ops} operations {per} do not repay {inputs.syncs} thread synchronization(s) "
           f"(at least {min_ops} do)")
    choice = "parallel" if pays else "sequential"
    if not pays and inputs.forced:
        choice, why = "forced", f"requested by {inputs.forced} ({why})"
    return CostDecision(choice, why, min_ops, inputs, threads=t, seq_ns=seq, par_ns=par, loaded_ns=loaded)

#: a function call in a scalar function's C text
_CALL = re.compile(r"\b[A-Za-z_]\w*\s*\(")


def gains_on_one_thread(plan: Plan) -> bool:
    """Whether ``plan``'s code may beat its nest as written on one thread: it tiles a
    reduction, blocks registers, or orders its point loops otherwise than the source -- unless
    its scalar function calls a function (``sqrtf``, ``expf``): under C's default
    ``-fmath-errno`` such calls keep gcc from vectorizing the reordered loops, which then only
    add the traffic of their partial results (an n-body step ran 1.15x slower than written)."""
    if any(_CALL.search(r) for r in plan.mdh.f.results):
        return False
    if any(d.combine.is_reduction for d in plan.mdh.dims):
        return True
    order: list[int] = []
    for st in walk(plan.body):
        if isinstance(st, Loop) and st.dim >= 0:
            if st.layer == REGISTER_LAYER:
                return True
            if st.layer == 0 and st.dim not in order:
                order.append(st.dim)
    return order != sorted(order)

def one_thread_gain_extent(plan: Plan) -> Affine | None:
    """Where ``plan``'s gain on one thread (``gains_on_one_thread``) is only a reduction's, run by a
    SIMD loop over a dim whose extent is known only at run time, that extent: the gain needs
    ``MIN_VECTOR_EXTENT`` points of it (a vertical blur's 3 channels made the vector loop, and
    the generated code ran 2-3.5x slower than the nest as written on one thread). ``None``: the
    gain does not depend on a run-time extent (a register block, reordered point loops, a SIMD
    dim of static extent), or there is none."""
    if not gains_on_one_thread(plan) or not any(d.combine.is_reduction for d in plan.mdh.dims):
        return None
    order: list[int] = []
    simd: set[int] = set()
    for st in walk(plan.body):
        if isinstance(st, Loop) and st.dim >= 0:
            if st.layer == REGISTER_LAYER:
                return None
            if st.layer == 0:
                if st.dim not in order:
                    order.append(st.dim)
                if st.schedule == "simd":
                    simd.add(st.dim)
    concat_order = [d for d in order if not plan.mdh.dims[d].combine.is_reduction]
    if concat_order != sorted(concat_order) or len(simd) != 1:
        return None   # reordered concat loops (strides) gain whatever the extents
    dim = plan.mdh.dims[simd.pop()]
    return dim.extent if dim.static_extent is None else None

# }}}


# {{{ inputs from an MDH expression


def _value(a: Affine, sizes: dict[str, int]) -> int | None:
    total = a.constant
    for name, c in a.terms:
        if name not in sizes:
            return None
        total += c * sizes[name]
    return total


def ops_per_point(mdh: MdhExpr) -> int:
    """Operations of one point of ``mdh``: the scalar function's arithmetic and calls, plus the
    combine of a reduction."""
    text = " ".join(mdh.f.results)
    ops = len(re.findall(r"[-+*/%]|\b[A-Za-z_]\w*\s*\(", text))
    reduces = any(d.combine.is_reduction for d in mdh.dims)
    return max(1, ops + (len(mdh.outputs) if reduces else 0))


def _c_double(a: Affine, values: dict[str, str]) -> str:
    """``a`` in ``double`` arithmetic (no overflow, no unsigned wrap-around) as C text."""
    parts = []
    for name, c in a.terms:
        v = f"(double)({values.get(name, name)})"
        parts.append(v if c == 1 else f"{c}.0 * {v}")
    if a.constant or not parts:
        parts.append(f"{a.constant}.0")
    return "(" + " + ".join(parts) + ")"


def domain_share(mdh: MdhExpr) -> float:
    """The estimated share of ``mdh``'s bounding box inside its domain: one half per constraint
    coupling two or more of its iterators (``j <= i``: a triangle), 1 for a box."""
    its = {d.iterator for d in mdh.dims}
    return 0.5 ** sum(1 for c in mdh.domain if len(c.names() & its) >= 2)


def points_in_function(mdh: MdhExpr) -> str:
    """The (estimated) iteration count of ``mdh`` as C over the generated function's parameters."""
    share = domain_share(mdh)
    text = " * ".join(_c_double(d.extent, {}) for d in mdh.dims) or "1.0"
    return f"{share!r} * {text}" if share != 1.0 else text


def work(mdh: MdhExpr, sizes: dict[str, int]) -> tuple[int | None, int | None, str]:
    """``mdh``'s iterations' operations and bytes touched per call with ``sizes`` (``None`` where
    a size is unknown) and the iteration count as a C expression (for a run-time guard): the
    bounding box times ``domain_share``."""
    sizes = dict(sizes)
    sizes.update({n: v for n, v in mdh.params if v is not None})
    values = {b.name: b.c_value for b in mdh.buffers if b.c_value}
    share = domain_share(mdh)
    points_c = " * ".join(_c_double(d.extent, values) for d in mdh.dims) or "1.0"
    if share != 1.0:
        points_c = f"{share!r} * {points_c}"
    exts = {d.iterator: _value(d.extent, sizes) for d in mdh.dims}
    if any(e is None for e in exts.values()):
        return None, None, points_c
    known = {k: max(v, 0) for k, v in exts.items() if v is not None}
    iters = math.ceil(math.prod(known.values()) * share)
    touched = 0
    for acc, ty in [(a, mdh.buffer(a.buffer).elem_type) for a in mdh.inputs] + \
                   [(o.access, o.elem_type) for o in mdh.outputs]:
        used = [known[d.iterator] for d in mdh.dims if acc.depends_on(d.iterator)]
        touched += math.prod(used) * (t.size if (t := parse_type(ty)) is not None else 8)
    return iters * ops_per_point(mdh), touched, points_c


def bytes_in_c(mdh: MdhExpr) -> str:
    """The bytes ``mdh``'s reads and writes touch per call, as C (``double`` arithmetic) over the
    names at the call (as ``work``'s ``points_c``)."""
    values = {b.name: b.c_value for b in mdh.buffers if b.c_value}
    terms = []
    for acc, ty in [(a, mdh.buffer(a.buffer).elem_type) for a in mdh.inputs] + \
                   [(o.access, o.elem_type) for o in mdh.outputs]:
        size = t.size if (t := parse_type(ty)) is not None else 8
        used = [_c_double(d.extent, values) for d in mdh.dims if acc.depends_on(d.iterator)]
        terms.append(" * ".join([f"{size}.0", *used]))
    return " + ".join(terms) or "0.0"


#: The size every unknown name takes for ``CostInputs.large_bytes_per_point``.
LARGE_SIZE = 1 << 20


def cost_inputs(mdh: MdhExpr, sizes: dict[str, int], target: str, in_host_loop: bool = False,
                forced: str = "") -> CostInputs:
    """The model's inputs for ``mdh`` (``sizes``: the ``--size`` hints)."""
    ops, touched, points_c = work(mdh, sizes)
    bytes_c, large = "", None
    if ops is None and target in ("opencl", "cuda") and not in_host_loop:
        bytes_c = bytes_in_c(mdh)
        names = {n for d in mdh.dims for n in d.extent.names()}
        big_ops, big_bytes, _ = work(mdh, {**dict.fromkeys(names, LARGE_SIZE), **sizes})
        if big_ops and big_bytes is not None:
            large = big_bytes / (big_ops / ops_per_point(mdh))
    return CostInputs(target=target, ops=ops, bytes=touched, points_c=points_c, ops_per_point=ops_per_point(mdh),
                      points_in_c=points_in_function(mdh), syncs=1, in_host_loop=in_host_loop, forced=forced,
                      bytes_c=bytes_c, large_bytes_per_point=large)

# }}}


# {{{ the device against the host (whole nests of a GPU target's file)


@dataclass(frozen=True, slots=True)
class DeviceInputs:
    """What the model reads about one nest of a ``--target cuda/opencl`` file (totals over every
    call the nest makes: a computation inside host loops counts once per iteration).

    ``ops``/``device_bytes``: the work and device-memory traffic of the computations that would
    run on the device; ``transfer_bytes``: host <-> device copies (each call's, or a resident
    region's once-only copies, plus ``host_syncs`` copies that host statements force);
    ``launches``; ``host_ops``: work that stays on the host in the device version (statements and
    computations the GPU target keeps, run as written); ``host_ns``: the host version's estimate
    (the OpenMP target's code with its own CPU cost decisions); ``seq_ns``: the nest as written."""

    target: str
    ops: int
    device_bytes: int
    transfer_bytes: int
    launches: int
    host_ns: float
    seq_ns: float
    host_ops: int = 0
    host_syncs: int = 0
    calls: int = 1
    #: operations that run one after the other on the device: a wavefront's threads each run a
    #: tile's points in order, so each wavefront lasts at least one tile's work on one thread (a
    #: work-group per tile: each of the tile's own wavefronts, a thread's share of its points)
    path_ops: int = 0
    #: work-group barriers on that path (a work-group per tile: one per inner wavefront)
    barriers: int = 0
    #: why nothing of it goes to the device, where that is not the GPU target's refusal
    host_why: str = ""

    def text(self) -> str:
        return (f"target={self.target} device_ops={self.ops} device_bytes={self.device_bytes} "
                f"transfer_bytes={self.transfer_bytes} launches={self.launches} host_syncs={self.host_syncs} "
                f"host_ops={self.host_ops} calls={self.calls} path_ops={self.path_ops} barriers={self.barriers} "
                f"host_ns={self.host_ns:.4g} "
                f"seq_ns={self.seq_ns:.4g}")


@dataclass(frozen=True, slots=True)
class DeviceDecision:
    """Where one nest of a GPU target's file runs: ``device`` or ``host`` (the OpenMP target's
    code); the estimates in ns: ``device_ns`` (compute + transfers + launches + host parts, without
    set-up), ``setup_ns`` (the context and module set-up charged to the file's device nests:
    the whole of it when this nest is weighed on its own), ``host_ns``, ``seq_ns``."""

    choice: str
    reason: str
    inputs: DeviceInputs
    compute_ns: float
    transfer_ns: float
    launch_ns: float
    device_ns: float
    setup_ns: float
    host_ns: float
    seq_ns: float

    @property
    def on_device(self) -> bool:
        return self.choice == "device"

    def text(self) -> str:
        """One line for a remark, e.g. ``device: host: device 0.21 s (0.2 s set-up) vs host 4 ms``."""
        return f"device: {self.choice}: {self.reason}"

    def to_report(self) -> dict[str, object]:
        return {"choice": self.choice, "reason": self.reason, "device_ns": self.device_ns,
                "setup_ns": self.setup_ns, "compute_ns": self.compute_ns, "transfer_ns": self.transfer_ns,
                "launch_ns": self.launch_ns, "host_ns": self.host_ns, "seq_ns": self.seq_ns,
                "inputs": asdict(self.inputs)}


def device_estimate(inputs: DeviceInputs, cal: Calibration = CALIBRATION) -> tuple[float, float, float, float]:
    """(compute, transfers, launches, total) in ns for ``inputs`` on the device, without set-up:
    compute is the largest of work and memory traffic at the device's rates and the critical
    path of sequential threads (``path_ops``, a wavefront's tiles, and its group barriers); the host parts of
    the device version run as written."""
    compute = max(inputs.ops * cal.gpu_ns_per_op, inputs.device_bytes * cal.gpu_ns_per_byte,
                  inputs.path_ops * cal.gpu_thread_ns_per_op + inputs.barriers * cal.gpu_barrier_ns)
    transfer = inputs.transfer_bytes * cal.gpu_transfer_ns_per_byte
    launch = inputs.launches * cal.gpu_launch_ns
    return compute, transfer, launch, compute + transfer + launch + inputs.host_ops * cal.ns_per_op


def _against(device_ns: float, setup_ns: float, host_ns: float, seq_ns: float) -> str:
    host = f"host {_us(host_ns)}" + (f" (sequential {_us(seq_ns)})" if seq_ns > host_ns * 1.01 else "")
    return f"device {_us(device_ns + setup_ns)} ({_us(setup_ns)} set-up) vs {host}"


def decide_device(inputs: DeviceInputs, cal: Calibration = CALIBRATION, setup_ns: float | None = None) -> DeviceDecision:
    """One nest weighed on its own: the device when its estimate, with ``setup_ns`` (default: the
    whole set-up), is ``gpu_min_speedup`` times below the host's (the OpenMP estimate or the nest as
    written, whichever is faster)."""
    setup = cal.gpu_setup_ns if setup_ns is None else setup_ns
    if inputs.launches == 0:
        return DeviceDecision("host", inputs.host_why or
                              "nothing of it would run on the device (the GPU target keeps the wavefronts and the "
                              "parallel loops around bodies it cannot run on the device sequential)",
                              inputs, 0.0, 0.0, 0.0, 0.0, setup, 0.0, 0.0)
    compute, transfer, launch, dev = device_estimate(inputs, cal)
    host = min(inputs.host_ns, inputs.seq_ns)
    on = cal.gpu_min_speedup * (dev + setup) <= host
    why = _against(dev, setup, host, inputs.seq_ns)
    return DeviceDecision("device" if on else "host", why, inputs, compute, transfer, launch, dev, setup, host,
                          inputs.seq_ns)


@dataclass(frozen=True, slots=True)
class WavePath:
    """The critical path of one tile of a wavefront on the device: ``ops`` counted operations one
    thread runs one after the other, and ``barriers`` work-group barriers."""

    ops: int
    barriers: int

    def ns(self, cal: Calibration) -> float:
        return self.ops * cal.gpu_thread_ns_per_op + self.barriers * cal.gpu_barrier_ns


def tile_path(wave: Wavefront, ops_per_point: float, group: bool) -> WavePath:
    """One tile's path: one thread runs its points (``Wavefront.item_points``) in order, or
    (``group``, where ``Wavefront.in_tile`` is) a work-group runs its inner wavefronts in order,
    each thread its share of an inner wavefront's candidates, a barrier after each."""
    tiles = wave.in_tile
    if group and tiles is not None:
        share = -(-tiles.candidates // max(tiles.threads, 1))
        return WavePath(math.ceil(tiles.inner * share * ops_per_point), tiles.inner)
    points = wave.item_points
    if points is None:
        points = math.prod(wave.tiles) if wave.tiles else 1
    return WavePath(math.ceil(points * ops_per_point), 0)


def group_per_tile(wave: Wavefront, cal: Calibration = CALIBRATION) -> bool:
    """Whether a wavefront on the device runs a work-group per tile (its tile's own wavefronts,
    ``Wavefront.in_tile``) rather than a thread per tile: where it has that form and one tile's
    path is shorter so (``tile_path``: the same number of tiles either way, so the sizes do not
    matter; two operations per statement instance, the instances per point where known)."""
    if wave.in_tile is None:
        return False
    per_point = 2.0 * (wave.work / wave.points if wave.work is not None and wave.points else 1.0)
    return tile_path(wave, per_point, True).ns(cal) < tile_path(wave, per_point, False).ns(cal)


def decide_file(nests: list[DeviceInputs | None], cal: Calibration = CALIBRATION) -> list[DeviceDecision | None]:
    """The decisions for a file's nests (``None``: not weighed, e.g. sizes known at run time only,
    which the per-call guard decides). The set-up is paid once per program, so it is charged
    once to the nests that would run on the device: those whose device estimate alone is
    ``gpu_min_speedup`` times below the host's go to the device together when their estimates plus
    one set-up still are; otherwise every weighed nest stays on the host."""
    known = [(k, x) for k, x in enumerate(nests) if x is not None]
    alone = {k: decide_device(x, cal, 0.0) for k, x in known}
    winners = [k for k, d in alone.items() if d.on_device]
    dev = sum(alone[k].device_ns for k in winners)
    host = sum(alone[k].host_ns for k in winners)
    together = bool(winners) and cal.gpu_min_speedup * (dev + cal.gpu_setup_ns) <= host
    out: list[DeviceDecision | None] = [None] * len(nests)
    share = f" (with {len(winners)} nests sharing the set-up)" if together and len(winners) > 1 else ""
    for k, d in alone.items():
        if together and k in winners:
            out[k] = replace(d, setup_ns=cal.gpu_setup_ns,
                             reason=_against(d.device_ns, cal.gpu_setup_ns, d.host_ns, d.seq_ns) + share)
        elif d.inputs.launches == 0:   # nothing of it on the device: no set-up to share
            out[k] = d
        else:
            lost = replace(d, choice="host", setup_ns=cal.gpu_setup_ns,
                           reason=_against(d.device_ns, cal.gpu_setup_ns, d.host_ns, d.seq_ns))
            if k in winners:   # it wins alone, but not with the set-up
                lost = replace(lost, reason=lost.reason + f"; the file's device nests together: device "
                               f"{_us(dev + cal.gpu_setup_ns)} vs host {_us(host)}")
            out[k] = lost
    return out

# }}}
