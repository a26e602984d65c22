"""Feature tags of generated kernels, and which of them are known mdpoly bugs (issue 9).

The generator tags each kernel with the risky forms it contains. A failure is *known* when the
kernel it is attributed to (the first output that differs, or the source line of an error)
carries a tag listed in :data:`KNOWN_BUGS` for that target. CI tolerates known failures and
fails on every other one; delete a tag here when its bug is fixed, and the test becomes strict
for that form. ``--strict`` on the command line ignores this table.
"""

from __future__ import annotations

from .row_forms import TAGS as ROW_TAGS

#: tag -> (targets it fails on, what goes wrong). Tags not listed are expected to work.
KNOWN_BUGS: dict[str, tuple[frozenset[str], str]] = {
    "int-acc-float-addend": (frozenset({"openmp", "opencl"}),
                             "issue 9.1: int accumulator with float addends is reassociated"),
    "iter-type": (frozenset({"openmp", "opencl"}),
                  "issue 9.2: iterators lose their C type ((i - 10u) >> 28, sizeof(i))"),
    "signed-unsigned-cond": (frozenset({"openmp", "opencl"}),
                             "issue 9.3: for (int i = -5; i < 40u; i++) modelled as 45 iterations"),
    "c89-gpu": (frozenset({"opencl"}), "issue 9.5: C89-declared iterators redefined in GPU kernels"),
    "one-line": (frozenset({"openmp", "opencl"}), "issue 9.6: two nests on one source line"),
    "typedef-cast": (frozenset({"openmp", "opencl"}), "issue 9.8: casts printed C++ style with typedef names"),
    "acc-outside-scaled": (frozenset({"openmp", "opencl"}),
                           "issue 9.10: scalar accumulator declared outside, scaled before the store"),
    "running-scalar": (frozenset({"openmp", "opencl"}),
                       "issue 9.10: scalar accumulator declared outside the nest"),
}

#: every tag the generator can put on a kernel
ALL_TAGS = frozenset(KNOWN_BUGS) | {"alias", "flat3d", "index-temp", "ternary-subscript", "struct", "aos",
                                    "local-ptr", "user-omp", "omp-before-mdh", "mdh-before-omp", "union-guard",
                                    "argmax", "continue", "guard-if", "iter-cond", "data-cond", "written-cond",
                                    "alias-cond", "continue-else", "nested-continue", "indirect-cond", "scalar-cond",
                                    "temp-cond"} | ROW_TAGS


def known_for(target: str) -> frozenset[str]:
    """The tags that are known bugs on ``target``."""
    return frozenset(tag for tag, (targets, _) in KNOWN_BUGS.items() if target in targets)


def explain(tags: frozenset[str], target: str) -> str | None:
    """The known bug that ``tags`` point at on ``target``, or ``None``."""
    hits = sorted(tags & known_for(target))
    return hits[0] if hits else None
