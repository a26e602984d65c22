"""Times building the tuning search spaces (no device needed): MCC and sgemm, OpenMP and GPU.

Run from the repository root::

    python benchmarks/space_build.py            # median of 3 builds per space
    python benchmarks/space_build.py --reps 7

Prints one line per space: its parameters, constrained size and the median build time. This was
a wall-time assertion in ``tests/tuning/test_gpu_tune.py``; the test now bounds the number of
constraint evaluations instead, and timings live here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "core")]

import mdh_examples as ex  # noqa: E402

from mdpoly.backends.opencl import OPENCL_CAPS  # noqa: E402
from mdpoly.backends.openmp import OPENMP_CAPS  # noqa: E402
from mdpoly.tuning.atf import build_search_space  # noqa: E402
from mdpoly.tuning.gpu import gpu_space  # noqa: E402
from mdpoly.tuning.space import build_space  # noqa: E402

GPU_LOOSE = replace(OPENCL_CAPS, max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                    local_mem_bytes=49152, is_gpu=True, preferred_wg_multiple=32, compute_units=80)


def _spaces() -> list[tuple[str, object]]:
    mcc = ex.mcc(2, 8, 8, 16, 8, 3, 3)          # c_examples/mcc.c
    mcc_rw = ex.mcc(1, 7, 7, 512, 512, 3, 3)    # benchmarks' mcc_rw
    sgemm = ex.matmul(1024, 1024, 1024)
    return [
        ("mcc gpu (opencl caps)", lambda: gpu_space(mcc, {}, OPENCL_CAPS).specs),
        ("mcc gpu (1024 threads)", lambda: gpu_space(mcc, {}, GPU_LOOSE).specs),
        ("mcc_rw openmp", lambda: build_space(mcc_rw, {}, OPENMP_CAPS).specs),
        ("sgemm openmp", lambda: build_space(sgemm, {}, OPENMP_CAPS).specs),
        ("sgemm gpu (1024 threads)", lambda: gpu_space(sgemm, {}, GPU_LOOSE).specs),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be positive")
    for name, make_specs in _spaces():
        times = []
        size = 0
        for _ in range(args.reps):
            start = time.perf_counter()
            specs = make_specs()  # type: ignore[operator]
            size = build_search_space(specs).constrained_size
            times.append(time.perf_counter() - start)
        print(f"{name:28s} {len(specs):3d} params {size:>14,d} configurations  {statistics.median(times):7.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
