"""The flat search space: sizes, constraints, mapping back to TuningParams without violations."""

import itertools
import random

from mdpoly.backends.openmp import OPENMP_CAPS
from mdpoly.lower import default_params
from mdpoly.lower.params import violations
from mdpoly.tuning.atf import build_search_space
from mdpoly.tuning.space import build_space, neighbours, tile_candidates

MATMUL = """
float A[M][K], B[K][N], C[M][N];
void f(void) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      C[i][j] = 0.0f;
      for (int k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
}
"""

MCC = """
float in[1][9][9][C], w[K][3][3][C], out[1][7][7][K];
void f(void) {
  for (int n = 0; n < 1; n++)
    for (int p = 0; p < 7; p++)
      for (int q = 0; q < 7; q++)
        for (int k = 0; k < K; k++)
          for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++)
              for (int c = 0; c < C; c++)
                out[n][p][q][k] += in[n][p + r][q + s][c] * w[k][r][s][c];
}
"""

SYMBOLIC = """
void f(int n, float *x, float *y) {
  for (int i = 0; i < n; i++)
    y[i] = 2.0f * x[i];
}
"""


def test_tile_candidates_are_powers_of_two_and_the_extent():
    assert tile_candidates(40) == (1, 2, 4, 8, 16, 32, 40)
    assert tile_candidates(64) == (1, 2, 4, 8, 16, 32, 64)
    assert tile_candidates(1) == (1,)


def _configs(space, n=2000, seed=0):
    ss = build_search_space(space.specs, one_dimensional=True)
    size = ss.constrained_size
    idx = range(size) if size <= n else random.Random(seed).sample(range(size), n)
    return size, [ss.get_configuration(i) for i in idx]


def test_every_config_maps_to_valid_params(analyze):
    nest = analyze(MATMUL, M=40, N=50, K=60)
    space = build_space(nest.mdh, {}, OPENMP_CAPS)
    assert space.extents == (40, 50, 60)
    size, configs = _configs(space)
    assert size > 1000
    for cfg in configs:
        p = space.to_params(cfg)
        assert violations(nest.mdh, p) == [], (cfg, p)
        for d, ext in enumerate(space.extents):
            t1, t2 = cfg[f"T1_{d}"], cfg[f"T2_{d}"]
            assert t1 in tile_candidates(ext)
            assert t2 == 0 or (t2 < t1 < ext and t1 % t2 == 0)
        assert all(cfg[f"T1_{d}"] < space.extents[d] for d in cfg["PAR"])


def test_result_tile_bound_is_honoured(analyze):
    nest = analyze(MATMUL, M=1024, N=1024, K=1024)
    space = build_space(nest.mdh, {}, OPENMP_CAPS)
    _, configs = _configs(space, 500)
    for cfg in configs:
        p = space.to_params(cfg)
        if p.split_dim is None:
            inner = [min((t[-1] if t else e), e) for t, e in zip(p.tiles[:2], space.extents[:2])]
            assert inner[0] * inner[1] <= 1 << 16


def test_symbolic_sizes_come_from_the_caller(analyze):
    nest = analyze(SYMBOLIC)
    space = build_space(nest.mdh, {"n": 1000}, OPENMP_CAPS)
    assert space.extents == (1000,)
    _, configs = _configs(space)
    assert all(not violations(nest.mdh, space.to_params(c)) for c in configs)


def test_mcc_space_is_generated(analyze):
    nest = analyze(MCC, K=512, C=512)
    space = build_space(nest.mdh, {}, OPENMP_CAPS)   # its build time: benchmarks/space_build.py
    assert build_search_space(space.specs).constrained_size > 1000
    orders = next(s for s in space.specs if s.name == "ORDER").values
    assert len(orders) < 200          # a reduced candidate set, not 7! orders
    _, configs = _configs(space, 500)
    assert all(not violations(nest.mdh, space.to_params(c)) for c in configs)


def test_neighbours_of_the_default_are_valid(analyze):
    nest = analyze(MCC, K=512, C=512)
    space = build_space(nest.mdh, {}, OPENMP_CAPS)
    d = default_params(nest.mdh, OPENMP_CAPS)
    ns = neighbours(space, d, OPENMP_CAPS)
    assert ns and d not in ns and len(set(ns)) == len(ns)
    assert all(not violations(nest.mdh, q) for q in ns)
    assert all(a != b for a, b in itertools.combinations(ns, 2))
