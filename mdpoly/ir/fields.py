"""Array-of-structs field views: a view name <-> the struct member it stands for.

The front end models ``A[e].f`` as an access ``V[e]`` to an array ``V`` of its own, one per
(array, member) pair (``mdpoly.frontend.struct_fields``). ``V`` is a parameter of the generated
function of type "pointer to the struct" that the call site passes ``A`` for; every access to it
must print as ``V[e].f``. The member travels in the name (``mdp_s4_call_book``: member ``call``
of ``book``), so every stage that carries buffer names carries it without a field of its own.
"""

from __future__ import annotations

import re

_VIEW = re.compile(r"mdp_s(\d+)_")


def view_name(base: str, member: str) -> str:
    """The view of ``base[e].member`` (``base``: an identifier spelling of the array)."""
    return f"mdp_s{len(member)}_{member}_{base}"


def view_member(name: str) -> str | None:
    """The member a view name stands for, or None for any other name."""
    m = _VIEW.match(name)
    if m is None:
        return None
    k = int(m.group(1))
    member = name[m.end():m.end() + k]
    return member if len(member) == k and name[m.end() + k:m.end() + k + 1] == "_" else None
