"""``Options``: the one frozen configuration object built by the CLI and passed down."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Options:
    target: str = "openmp"   # a target's name in the registry, ``mdpoly.targets.TARGETS``
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()      # "NAME" or "NAME=VAL"
    undefines: tuple[str, ...] = ()
    strict_fp: bool = False
    quiet: bool = False
    all_nests: bool = False
    # --replace-omp: mdpoly's code replaces a user's ``omp parallel for`` where it proves the loop parallel
    replace_omp: bool = False
    # --omp-as-written: the user's ``omp parallel for`` directives mdpoly keeps stay byte for byte
    # (default: they get ``num_threads(mdp_team())``, ``mdpoly.frontend.user_teams``)
    omp_as_written: bool = False
    sizes: tuple[tuple[str, int], ...] = ()   # --size NAME=VALUE hints (every function)
    # --size FUNC:NAME=VALUE hints: (function, name, value), for that function only (they win
    # over a bare NAME=VALUE there); ``for_function`` folds them into ``sizes``
    function_sizes: tuple[tuple[str, str, int], ...] = ()
    cc: tuple[str, ...] = ("cc",)   # the user's C compiler ($MDPOLY_CC), e.g. ("ccache", "gcc")
    # The whole preprocessor command before the file name (e.g. ``gcc -E -std=gnu17 -include x.h``,
    # as mdpoly-cc hands it over); empty = ``cc -E`` (the compiler's default mode), then the
    # -I/-D/-U above.
    preprocessor: tuple[str, ...] = ()
    # Auto-tuning (issue #4). The CLI turns it on by default; library callers opt in.
    tune: bool = False
    tune_seconds: float | None = 60.0        # per nest; None = no time limit
    tune_seconds_explicit: bool = False      # --tune-time given: spend it all (else scaled to the nest)
    tune_evals: int | None = None
    tune_technique: str = "auc_bandit"
    retune: bool = False
    cache_dir: str | None = None              # None = no persistent cache
    # --tune-workers / MDPOLY_DASK_SCHEDULER: the Dask scheduler whose workers measure candidates
    tune_workers: str | None = None
    # The device the generated host code will pick (MDPOLY_OPENCL_DEVICE / MDPOLY_CUDA_DEVICE,
    # read by the CLI): the tuner measures on the same one.
    opencl_device: str | None = None
    cuda_device: str | None = None
    # --mpi: each computation split over the MPI ranks of an SPMD program (mdpoly.lower.split)
    mpi: bool = False
    # --devices: each computation split over these local devices (opencl/cuda; backends/devices.py)
    devices: str | None = None
    # --device-limits: the limits GPU code is planned with (``mdpoly.device_limits``): ``generic``, a JSON
    # file or ``key=value,...``; None = query the device the host code will use, else the generic limits
    device_limits: str | None = None
    # $MDPOLY_COST_CALIBRATION: overrides of the cost model's constants (``mdpoly.cost_model.Calibration``)
    cost_calibration: tuple[tuple[str, float], ...] = ()


def for_function(options: Options, function: str) -> Options:
    """``options`` as a nest of ``function`` sees them: ``sizes`` holds the bare hints, then the
    hints scoped to ``function`` (which win); no scoped hints are left."""
    if not options.function_sizes:
        return options
    sizes = dict(options.sizes)
    sizes.update({name: value for func, name, value in options.function_sizes if func == function})
    return replace(options, sizes=tuple(sizes.items()), function_sizes=())
