"""OpenMP host code of a tiled wavefront: ``Wavefront`` -> C text (a compound statement).

The loops over wavefronts, tiles and points come from the front end (``Wavefront.waves``, isl's
code generator); here each loop over the tiles of one wavefront becomes an orphaned worksharing
loop (``#pragma omp for``, its implicit barrier ends the wavefront). Outside a parallel region
the loops run in a ``#pragma omp parallel`` of their own (its team chosen at run time,
``mdp_team()`` of the OpenMP preamble); inside one (a host loop's region,
``mdpoly.backends.host_schedule``) every thread runs the wavefront loop and shares the tiles. Afterwards
one thread runs the band's headers around nothing (the iterators' exit values), and when a
run-time alias check or precondition fails the band runs as written, on one thread.
"""

from __future__ import annotations

from typing import cast

from pycparser import c_ast

from mdpoly.backends.c_emit import CEmitter, Dialect
from mdpoly.ir.nest import ORIGINAL_NEST, WAVEFRONT_TILES, Wavefront

#: Words of the pragmas that a user's macro could replace (set aside around the code).
_WORDS = ("omp", "parallel", "for", "schedule", "static", "private", "single", "num_threads")
_INDENT = "  "


def _indent(text: str) -> str:
    return "\n".join(_INDENT + ln if ln.strip() and not ln.startswith("#") else ln for ln in text.splitlines())


def _waves(wave: Wavefront) -> str:
    """The loops with the worksharing pragma on each tile loop."""
    pragma = "#pragma omp for schedule(static)" + (f" private({', '.join(wave.private)})" if wave.private else "")
    return "\n".join(pragma if ln == WAVEFRONT_TILES else ln for ln in wave.waves.splitlines())


def wavefront_guarded(wave: Wavefront, text: str, fallback: str) -> str:
    """``text`` under the wavefront's run-time checks, ``fallback`` when they fail, in a block
    that first declares the size parameters the front end made (``_with_derived``)."""
    if not wave.checks and not wave.preconditions:
        return _with_derived(wave, text)
    emitter = CEmitter(cast(Dialect, None), wide=wave.params)
    marker = "mdp_wavefront_body"
    guarded = emitter.guarded(wave.checks, c_ast.ID(marker), wave.preconditions)
    guarded = guarded.replace(ORIGINAL_NEST.rstrip(";") + ";", fallback.rstrip())
    return _with_derived(wave, guarded.replace(marker + ";", text))


def _with_derived(wave: Wavefront, text: str) -> str:
    """``text`` in a block that first declares the size parameters the front end made
    (``Wavefront.derived``), each with its own type."""
    if not wave.derived:
        return text
    decls = [f"__typeof__({value}) {name} = ({value});" for name, value in wave.derived]
    return "{\n" + "\n".join(_indent(t) for t in [*decls, text]) + "\n}"


def _macros(body: list[str]) -> list[str]:
    push = [f'#pragma push_macro("{w}")\n#undef {w}' for w in _WORDS]
    pop = [f'#pragma pop_macro("{w}")' for w in reversed(_WORDS)]
    return [*push, *body, *pop]


def wavefront_parallel(wave: Wavefront) -> str:
    """The wavefront in a parallel region of its own (the nest is not inside a host loop's region)."""
    body = _macros(["#pragma omp parallel num_threads(mdp_team())", "{", _indent(_waves(wave)), "}"])
    if wave.exits:
        body.append(wave.exits)
    text = "{\n" + "\n".join(_indent(b) for b in body) + "\n}"
    return wavefront_guarded(wave, text, wave.original)


def wavefront_in_region(wave: Wavefront) -> str:
    """The wavefront as run by every thread of an enclosing parallel region: the tiles of each
    wavefront shared among them; exit values and the fallback on one thread."""
    body = _macros([_waves(wave)] + (["#pragma omp single", "{", _indent(wave.exits), "}"] if wave.exits else []))
    text = "{\n" + "\n".join(_indent(b) for b in body) + "\n}"
    fallback = "\n".join(_macros(["#pragma omp single", "{", _indent(wave.original.rstrip()), "}"]))
    return wavefront_guarded(wave, text, fallback)
