"""The persistent tuning cache: hits, misses, key fields, concurrent writers."""

import multiprocessing as mp
from pathlib import Path

from test_space import MATMUL

from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.ir.target import TargetCaps
from mdpoly.runtime.openmp import OpenMPRunner
from mdpoly.tuning.cache import CacheEntry, TuningCache, cache_key, default_cache_dir
from mdpoly.tuning.tune import canonical_mdh, key_fields


def _entry(k: int) -> CacheEntry:
    return CacheEntry({"k": k}, 1.0 / (k + 1), 2.0, k, 0.5)


def test_hit_and_miss(tmp_path):
    cache = TuningCache(tmp_path)
    assert cache.get({"a": 1}) is None
    cache.put({"a": 1}, _entry(3))
    assert cache.get({"a": 1}) == _entry(3)
    assert cache.get({"a": 2}) is None
    assert TuningCache(tmp_path).get({"a": 1}) == _entry(3)    # persisted


def test_key_is_stable_and_ordered():
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 2})


def test_default_dir_from_environment(tmp_path):
    assert default_cache_dir({"MDPOLY_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert default_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/mdpoly")


def test_key_changes_with_sizes_and_target(analyze):
    from dataclasses import replace

    runner = OpenMPRunner()
    small = analyze(MATMUL, M=40, N=50, K=60).mdh
    big = analyze(MATMUL, M=40, N=50, K=64).mdh
    be = OpenMPBackend()
    k0 = cache_key(key_fields(small, {}, be, runner, False))
    assert k0 == cache_key(key_fields(replace(small, name="other_name"), {}, be, runner, False))
    assert k0 != cache_key(key_fields(big, {}, be, runner, False))
    other = OpenMPBackend(TargetCaps(name="openmp", cores=8))
    assert k0 != cache_key(key_fields(small, {}, other, runner, False))
    other_target = type("B", (), {"name": "opencl", "caps": be.caps})()
    assert k0 != cache_key(key_fields(small, {}, other_target, runner, False))
    assert "<nest>" not in canonical_mdh(small) or small.name not in canonical_mdh(small)


def _writer(directory: str, start: int) -> None:
    cache = TuningCache(Path(directory))
    for k in range(start, start + 40):
        cache.put({"k": k}, _entry(k))
        assert cache.get({"k": k}) is not None


def test_two_concurrent_writer_processes(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), s)) for s in (0, 20)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = TuningCache(tmp_path)
    assert all(cache.get({"k": k}) == _entry(k) for k in range(60))


def test_implicit_budget_scales_with_the_default_time() -> None:
    from mdpoly.tuning.tune import MIN_IMPLICIT_SECONDS, scaled_budget

    assert scaled_budget(60.0, 6e-6) == MIN_IMPLICIT_SECONDS       # microsecond kernel: minimum
    assert scaled_budget(60.0, 0.010) == 20.0                      # 2000 runs of 10 ms
    assert scaled_budget(60.0, 1.0) == 60.0                        # never above the maximum
    assert scaled_budget(None, 0.010) is None                      # evaluation budget only
    assert scaled_budget(60.0, None) == 60.0                       # default failed: keep the maximum
