"""A fourth target from nothing but a registry entry: ``omp-offload``, the OpenMP plan spelled
with ``#pragma omp target teams distribute parallel for`` (OpenMP 4.5's offload construct).

The toy reuses the OpenMP target's parameter model, lowering and checks, and renders through a
backend that changes only the spelling of the parallel loop. It must go through the ordinary
driver (``transform``) and the ordinary CLI spelling lookup, and its output, built with the
toy's own toolchain flags (host fallback: ``-foffload=disable``), must print what the original
C prints. A lookup that ignored the registry would fail here, as would a driver that branched on
the target's name."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from mdpoly.backends.base import GeneratedCode
from mdpoly.backends.openmp import OpenMPBackend
from mdpoly.differential import compare_outputs
from mdpoly.driver import transform
from mdpoly.frontend.analyze import analyze_file
from mdpoly.ir.plan import Plan
from mdpoly.ir.target import TargetCaps
from mdpoly.options import Options
from mdpoly.targets import OPENMP, TARGETS, Toolchain, spellings, target_named

EXAMPLES = Path(__file__).resolve().parents[2] / "c_examples"
CC = os.environ.get("MDPOLY_E2E_CC", "cc")
OFFLOAD = "omp target teams distribute parallel for"


class OffloadBackend(OpenMPBackend):
    """The OpenMP backend with its parallel loops spelled as offloaded loops."""

    name = "omp-offload"

    def render(self, plan: Plan) -> GeneratedCode:
        code = super().render(plan)
        # an offloaded loop's teams are the device's: no host team size (mdp_team() reads host state)
        text = re.sub(r" num_threads\(mdp_team(_upto\([^()]*\))?(\(\))?\)", "", code.definition)
        return replace(code, definition=text.replace("#pragma omp parallel for", f"#pragma {OFFLOAD}"))


def _offload_backend(caps: TargetCaps) -> OffloadBackend:
    return OffloadBackend(caps)


TOY = replace(OPENMP, name="omp-offload", word="OpenMP offload", spellings=("omp-offload", "openmp-target"),
              caps=replace(OPENMP.caps, name="omp-offload"), backend=_offload_backend,
              toolchain=Toolchain(("-fopenmp", "-foffload=disable"), ("-fopenmp", "-foffload=disable")))


@pytest.fixture
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TARGETS, TOY.name, TOY)


def _build_and_run(source: str, exe: Path, flags: tuple[str, ...]) -> str:
    src = exe.with_suffix(".c")
    src.write_text(source)
    subprocess.run([CC, "-O2", *flags, str(src), "-o", str(exe), "-lm"], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "3"}).stdout


def test_toy_spellings_are_looked_up(toy_registered: None) -> None:
    assert "omp-offload" in spellings() and "openmp-target" in spellings()
    assert target_named("openmp-target") is TOY
    from mdpoly.cli import build_parser
    ns = build_parser().parse_args(["x.c", "--target", "openmp-target"])
    assert ns.target == "openmp-target"


@pytest.mark.parametrize("example", ["matmul.c", "matvec.c", "jacobi2d.c"])
def test_toy_target_output_matches_original(example: str, toy_registered: None, tmp_path: Path) -> None:
    cwd = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        options = Options(target="omp-offload", all_nests=True)
        analysis = analyze_file(example, options)
        text, outcomes = transform(analysis, options)
    finally:
        os.chdir(cwd)
    assert any(o.status == "transformed" and o.target == "omp-offload" for o in outcomes)
    assert f"#pragma {OFFLOAD}" in text and "#pragma omp parallel for" not in text
    compile_flags, link_flags = target_named("omp-offload").toolchain.flags()
    flags = tuple(dict.fromkeys(compile_flags + link_flags))
    expected = _build_and_run((EXAMPLES / example).read_text(), tmp_path / "orig", ("-fopenmp",))
    actual = _build_and_run(text, tmp_path / "toy", flags)
    assert compare_outputs(expected, actual, rtol=1e-4, atol=1e-5) is None


def test_registry_toolchains_agree_with_backends_and_readme() -> None:
    """The flags ``mdpoly-cc`` adds are the registry's; the backends' ``GeneratedCode.flags`` and
    the README's build lines name the same libraries."""
    from mdpoly.cc_wrapper import target_flags
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for name in ("openmp", "opencl"):
        t = TARGETS[name]
        assert target_flags(name) == (t.toolchain.compile_flags, t.toolchain.link_flags)
        for flag in t.toolchain.link_flags:
            assert flag in readme
    assert TARGETS["cuda"].toolchain.link_flags == ("-lcuda", "-lnvrtc")
    assert "-lcuda -lnvrtc" in readme


def test_driver_checks_every_kernel_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """A work-group lowering that drops the combine kernel of a reduction spread over several
    work-groups would compute a wrong sum; the driver's check keeps the nest as written instead,
    with the internal-error reason."""
    from mdpoly.lower.gpu import lower_gpu
    from mdpoly.targets import OPENCL

    def broken_lower(mdh, params, caps):  # type: ignore[no-untyped-def]
        plan = lower_gpu(mdh, replace(params, num_wg=tuple(2 if n else 0 for n in params.num_wg)), caps)
        return replace(plan, partials=False)

    monkeypatch.setitem(TARGETS, "opencl", replace(OPENCL, lower=broken_lower))
    cwd = os.getcwd()
    os.chdir(EXAMPLES)
    try:
        options = Options(target="opencl", all_nests=True)
        text, outcomes = transform(analyze_file("dot.c", options), options)
    finally:
        os.chdir(cwd)
    reduced = [o for o in outcomes if o.nest.mdh is not None]
    assert reduced and all(o.status == "kept" and o.code == "internal" for o in reduced)
    assert "without a combine kernel" in (reduced[0].reason or "")
    assert text == (EXAMPLES / "dot.c").read_text()
