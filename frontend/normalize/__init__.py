"""Normalization of a candidate nest before SCoP extraction: ``Candidate`` -> ``Normalized``.

Small passes over a *copy* of the nest's C AST, each with one job, that turn C as programs write
it into the forms ``mdpoly.frontend.scop`` models (like LLVM's canonicalization before Polly's
ScopBuilder): ``down_loops`` moves the decrement of ``for (size_t i = n; i-- > 0;)`` into the
header, ``short_loops`` writes out a loop of a few trips that picks by its iterator (llama2.c's
RoPE), ``first_assignments`` declares a scalar declared without a value at its first
assignment, ``members`` hoists invariant struct-member reads into parameters of the nest,
``inductions`` writes counters and bumped pointers (``out[idx++]``, ``src += stride``) as closed
forms of the iterators, ``local_pointers`` resolves pointers declared in the nest to base + offset,
``index_temps`` substitutes integer temporaries that subscripts and loop bounds use,
``own_index_args`` gives an argmax through its own index (``a[i] > a[best]``) a value temporary,
and ``selects`` turns a
conditional subscript into a select of two reads. ``pipeline.normalize_candidate`` runs them.
"""

from mdpoly.frontend.normalize.pipeline import Normalized, normalize_candidate, respelled

__all__ = ["Normalized", "normalize_candidate", "respelled"]
