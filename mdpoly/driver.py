"""The transformation driver: ``transform(analysis, options, sink) -> (out_text, outcomes)``.

For every nest of a ``FileAnalysis``: kept when the front end kept it or it has too little work;
otherwise tuning parameters (tuned when ``options.tune``) -> ``lower`` -> ``check_plan`` -> backend ``render``; then all
generated code is spliced into the original text. Returns the new text and one ``NestOutcome``
per nest, in order; diagnostics about the outcomes are the report's job.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from backends.base import Backend
from backends.openmp import OpenMPBackend
from mdpoly.diagnostics import CompilerBug, DiagnosticSink, MdpolyError, UnsupportedInput
from mdpoly.ir.nest import NestAnalysis, NestOutcome
from mdpoly.lower import check_plan, default_params, lower
from mdpoly.options import Options
from mdpoly.profitability import too_little_work
from mdpoly.splice import Replacement, splice
from mdpoly.tuning.hook import choose_gpu_params, choose_params


class _Analysis(Protocol):
    path: str
    source_text: str
    nests: tuple[NestAnalysis, ...]


def backend_for(options: Options) -> Backend:
    """The backend of ``options.target``.

    :raises MdpolyError: for targets without a backend yet.
    """
    if options.target == "openmp":
        return OpenMPBackend()
    if options.target == "opencl":
        from backends.opencl import OpenCLBackend
        return OpenCLBackend()
    if options.target == "cuda":
        from backends.cuda import CudaBackend
        return CudaBackend()
    raise MdpolyError(f"target '{options.target}' is not implemented yet")


def _kept(nest: NestAnalysis, code: str, reason: str) -> NestOutcome:
    return NestOutcome(nest=nest, status="kept", reason=reason, code=code, target=None)


def transform(analysis: _Analysis, options: Options,
              sink: DiagnosticSink | None = None) -> tuple[str, tuple[NestOutcome, ...]]:
    """Transform every profitable nest of ``analysis``; see the module docstring.

    :raises MdpolyError: for an unimplemented target.
    """
    backend = backend_for(options)
    outcomes: list[NestOutcome] = []
    reps: list[Replacement] = []
    used_names: set[str] = set()
    for nest in analysis.nests:
        if nest.mdh is None:
            kept = nest.kept
            outcomes.append(_kept(nest, kept.code if kept else "unsupported",
                                  kept.message if kept else "not an MDH computation"))
            continue
        little = too_little_work(nest, options)
        if little is not None:
            outcomes.append(_kept(nest, little.code, little.message))
            continue
        mdh = nest.mdh
        name, k = mdh.name, 1
        while name in used_names:
            k += 1
            name = f"{mdh.name}_{k}"
        used_names.add(name)
        if name != mdh.name:
            mdh = replace(mdh, name=name)
        tuning = None
        try:
            if backend.caps.parallel_layers >= 2:   # work-group targets: mdpoly.lower.gpu
                from mdpoly.lower.gpu import lower_gpu
                gparams, caps, tuning = choose_gpu_params(nest, mdh, backend, options, sink)
                renderer = backend if caps == backend.caps else type(backend)(caps)  # type: ignore[call-arg]
                code = renderer.render(lower_gpu(mdh, gparams, caps))  # type: ignore[arg-type]
            else:
                params, tuning = choose_params(nest, mdh, backend, options, sink)
                plan = lower(mdh, params)
                check_plan(plan)
                code = backend.render(plan)
        except UnsupportedInput as err:
            outcomes.append(_kept(nest, err.code, err.message))
            continue
        except CompilerBug as err:
            outcomes.append(_kept(nest, err.code, f"internal error, nest kept: {err.message}"))
            continue
        reps.append(Replacement(nest.span, nest.function_line, code.call, code.definition, code.preamble))
        outcomes.append(NestOutcome(nest=nest, status="transformed", reason=None, code=None, target=backend.name,
                                    tuning=tuning.to_report() if tuning is not None else None))
    text = splice(analysis.source_text, reps, analysis.path)
    return text, tuple(outcomes)
