"""``--target cuda`` on every ``c_examples/*.c``: builds everywhere, runs where there is a GPU.

Without a GPU (CI): (a) ``mdpoly --target cuda --all-nests --no-tune`` output compiles with
``cc -O2 -Wall -Werror`` against the toolkit's headers and links with ``-lcuda -lnvrtc`` (the
toolkit's stub ``libcuda``, or a stand-in built from the object's symbols where the toolkit has
none; see ``cuda_harness``); run against the stub it exits 1 naming ``cuInit``; (b) the embedded
kernel sources compile with NVRTC for ``sm_90``; ``mdpoly-cc --target cuda`` adds the flags itself.
With a GPU (``-m gpu``): (c) every example and size set runs and matches the sequential original.
``scripts/gpu_check.py`` does (c) on a GPU machine without mdpoly installed there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cuda_harness import (
    compile_for_sm90,
    cuda_device_unavailable,
    kernel_sources,
    link_flags,
    nvrtc_unavailable,
    toolkit_unavailable,
)
from e2e_harness import build_c, c_compiler, define_flags, mdpoly_available, run_mdpoly, run_program, run_step
from test_examples import EXAMPLES, Example

from mdpoly.cuda_toolkit import find_cuda
from mdpoly.differential import compare_outputs

needs_toolkit = pytest.mark.skipif(toolkit_unavailable() is not None or not mdpoly_available(),
                                   reason=str(toolkit_unavailable() or "mdpoly code generation is not available"))
needs_nvrtc = pytest.mark.skipif(nvrtc_unavailable() is not None or not mdpoly_available(),
                                 reason=str(nvrtc_unavailable() or "mdpoly code generation is not available"))

BY_NAME = {ex.name: ex for ex in EXAMPLES}
#: on a GPU, each example at its primes sizes in the quick set (README.md "Run the tests"), the other sizes a campaign
CASES = [pytest.param(ex, size_id, id=f"{ex.name}-{size_id}", marks=() if size_id == "primes" else pytest.mark.campaign)
         for ex in EXAMPLES for size_id in ex.size_sets]


def cuda_out(example: Example, sizes: dict[str, int], tmp_path: Path) -> Path:
    out_c = tmp_path / "out.c"
    run_mdpoly(example.source, out_c, sizes, extra=["-q", "--target", "cuda", "--all-nests", "--no-tune"])
    return out_c


def build_cuda(out_c: Path, exe: Path, defines: dict[str, int], tmp_path: Path) -> bool:
    """Compile (warnings are errors) and link ``out_c``; True when linked against a stand-in stub."""
    kit = find_cuda()
    assert kit is not None
    obj = exe.with_suffix(".o")
    run_step([c_compiler(), "-O2", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-Wno-unused-variable",  # the user's pragmas and C89 iterators stay
              *define_flags(defines), *kit.compile_flags(), "-c", str(out_c),
              "-o", str(obj)])
    flags, stand_in = link_flags(kit, obj, tmp_path)
    run_step([c_compiler(), str(obj), "-o", str(exe), *flags, "-lm"])
    return stand_in


@needs_toolkit
@pytest.mark.parametrize("example", EXAMPLES, ids=[ex.name for ex in EXAMPLES])
def test_cuda_output_compiles_and_links(example: Example, tmp_path: Path) -> None:
    out_c = cuda_out(example, {}, tmp_path)
    text = out_c.read_text()
    if example.parallelizable:
        assert "cuLaunchKernel" in text and "extern \\\"C\\\" __global__ void" in text
    else:
        assert text == example.source.read_text()
    stand_in = build_cuda(out_c, tmp_path / "prog", {}, tmp_path)
    if stand_in and example.parallelizable:
        # every CUDA call fails in the stand-in, as in NVIDIA's stub: the program says so and exits 1
        proc = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1
        assert "mdpoly: CUDA error: cuInit failed" in proc.stderr


@needs_nvrtc
@pytest.mark.parametrize("example", [pytest.param(ex, marks=() if ex.name in ("mcc", "dot") else pytest.mark.campaign)
                                     for ex in EXAMPLES if ex.parallelizable],
                         ids=[ex.name for ex in EXAMPLES if ex.parallelizable])   # README.md "Run the tests"
def test_cuda_kernels_compile_with_nvrtc_for_sm90(example: Example, tmp_path: Path) -> None:
    sizes = example.size_sets.get("primes", {})
    sources = kernel_sources(cuda_out(example, sizes, tmp_path).read_text())
    assert sources, "no embedded kernel source found"
    for name, src in sources.items():
        assert f'extern "C" __global__ void {name}(' in src
        compile_for_sm90(src, name, tmp_path)


@needs_toolkit
def test_mdpoly_cc_adds_the_cuda_flags(tmp_path: Path) -> None:
    """``mdpoly-cc --target cuda`` compiles; the link step adds -L/-lcuda/-lnvrtc (linking needs a
    libcuda: checked where one exists)."""
    import sys
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    cc = [sys.executable, "-m", "mdpoly.cc_wrapper", "--target", "cuda", "--no-tune", "--all-nests", "--"]
    obj = tmp_path / "saxpy.o"
    proc = subprocess.run([*cc, "-O2", "-c", str(BY_NAME["saxpy_scalar"].source), "-o", str(obj)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    nm = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "cuLaunchKernel" in nm and "nvrtcCompileProgram" in nm
    kit = find_cuda()
    assert kit is not None
    if kit.has_libcuda:
        proc = subprocess.run([*cc, str(obj), "-o", str(tmp_path / "saxpy")], capture_output=True, text=True,
                              env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.gpu
@needs_toolkit
@pytest.mark.skipif(cuda_device_unavailable() is not None, reason=str(cuda_device_unavailable()))
@pytest.mark.parametrize(("example", "size_id"), CASES)
def test_cuda_example_matches_original_on_gpu(example: Example, size_id: str, tmp_path: Path) -> None:
    sizes = example.size_sets[size_id]
    reference = run_program(build_c(example.source, tmp_path / "orig", sizes, openmp=False))
    exe = tmp_path / "cuda"
    assert not build_cuda(cuda_out(example, sizes, tmp_path), exe, sizes, tmp_path)
    env = dict(os.environ, MDPOLY_CACHE_DIR=str(tmp_path / "cache"))
    for _ in range(2):   # compiled by NVRTC, then loaded from the module cache
        proc = run_step([str(exe)], env=env)
        mismatch = compare_outputs(reference, proc.stdout, rtol=example.rtol, atol=example.atol)
        assert mismatch is None, str(mismatch)
    if example.parallelizable:
        assert list((tmp_path / "cache" / "cuda").glob("*.cubin")) or list((tmp_path / "cache" / "cuda").glob("*.ptx"))
