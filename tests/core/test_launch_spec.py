"""``LaunchSpec`` (``mdpoly.ir.launch``, made by ``mdpoly.lower.gpu.launch_spec``): the launches cover
every point once, the combine kernel every concat point, and the arguments are the kernels' own.

The host-code writers render the spec and nothing else; that the rendered code computes the right
results is the differential tests' business (tests/e2e, tests/runtime/test_opencl_runner.py).
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mdh_examples as ex

from mdpoly.backends.opencl import OPENCL_CAPS, KernelWriter
from mdpoly.lower.gpu import lower_gpu
from mdpoly.tuning.atf import build_search_space
from mdpoly.tuning.gpu import gpu_space

SIZES = ({"n": 1, "m": 1, "l": 1}, {"n": 37, "m": 5, "l": 64}, {"n": 1000, "m": 333, "l": 17})


def _plans(mdh, count: int = 40):  # type: ignore[no-untyped-def]
    space = gpu_space(mdh, {"n": 64, "m": 64, "l": 64}, OPENCL_CAPS)
    search = build_search_space(space.specs, one_dimensional=True)
    picks = random.Random(7).sample(range(search.constrained_size), min(count, search.constrained_size))
    return [lower_gpu(mdh, space.to_params(dict(search.get_configuration(i))), OPENCL_CAPS) for i in picks]


@pytest.mark.parametrize("sizes", SIZES, ids=str)
def test_launches_cover_the_domain(sizes):
    mdh = ex.matmul_symbolic()
    extent = {"i": sizes["n"], "j": sizes["m"], "k": sizes["l"]}
    for plan in _plans(mdh):
        spec = plan.launch
        assert spec is not None
        env = spec.evaluate(sizes)
        main = spec.launches[0]
        assert main.kernel == plan.name and len(main.groups) == len(plan.grid_axes) <= 3
        # every (dim, work-group, work-item) combination is launched once
        launched = math.prod(c.evaluate(env) * s for c, s in zip(main.groups, main.group_size))
        per_dim = 1
        for d in plan.dims:
            if d.is_reduction:
                per_dim *= d.num_wg * d.num_wi
            else:
                nwg = env[f"mdp_nwg_{d.index}"]
                block = d.pt * d.num_wi
                # the work-groups of a concat dim cover its points, and none is empty
                assert (nwg - 1) * block < extent[d.iterator] <= nwg * block, (plan.tuning, d.iterator)
                per_dim *= nwg * d.num_wi
        assert launched == per_dim
        for size, limit in zip(main.group_size, OPENCL_CAPS.max_work_item_sizes):
            assert size <= limit
        points = extent["i"] * extent["j"]
        if plan.partials:
            combine = spec.launches[1]
            assert combine.kernel == plan.name + "_combine" and combine.items is not None
            assert combine.items.evaluate(env) == points
            assert combine.groups[0].evaluate(env) * combine.group_size[0] >= points
            red_wg = math.prod(d.num_wg for d in plan.reductions)
            assert [s.elems.evaluate(env) for s in spec.scratch] == [points * red_wg]
        else:
            assert len(spec.launches) == 1 and not spec.scratch


def test_an_empty_call_computes_no_counts():
    plan = _plans(ex.matmul_symbolic(), 1)[0]
    assert plan.launch is not None
    env = plan.launch.evaluate({"n": 0, "m": 5, "l": 3})
    assert env["mdp_ext_0"] == 0 and not any(name.startswith("mdp_nwg_") for name in env)


def test_arguments_are_the_kernels_parameters():
    for mdh in (ex.matmul_symbolic(), ex.dot(5000), ex.mcc(1, 7, 7, 64, 32, 3, 3)):
        sizes = {"n": 64, "m": 64, "l": 64}
        space = gpu_space(mdh, sizes if mdh.params else {}, OPENCL_CAPS)
        search = build_search_space(space.specs, one_dimensional=True)
        for i in random.Random(3).sample(range(search.constrained_size), min(20, search.constrained_size)):
            plan = lower_gpu(mdh, space.to_params(dict(search.get_configuration(i))), OPENCL_CAPS)
            assert plan.launch is not None
            params = [p.split()[-1].lstrip("*").replace("64_", "_") for p in KernelWriter(plan).params()]
            names = [f"mdp_{a.name}" if a.kind == "scratch" else a.name for a in plan.launch.args]
            assert names == params
