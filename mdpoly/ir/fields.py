"""Array-of-structs field views: a view name <-> the struct member it stands for.

The front end models ``A[e].f`` as an access ``V[e]`` to an array ``V`` of its own, one per
(array, member) pair (``mdpoly.frontend.struct_fields``). ``V`` is a parameter of the generated
function of type "pointer to the struct" that the call site passes ``A`` for; every access to it
must print as ``V[e].f``. The member travels in the name (``mdp_s4_call_book``: member ``call``
of ``book``), so every stage that carries buffer names carries it without a field of its own. A
member of a nested struct (``p[i].pos.x``) is a path: its components' lengths are joined by ``x``
(``mdp_s3x1_pos_x_p`` stands for member ``pos.x`` of ``p``).
"""

from __future__ import annotations

import re

_VIEW = re.compile(r"mdp_s(\d+(?:x\d+)*)_")


def view_name(base: str, member: str) -> str:
    """The view of ``base[e].member`` (``base``: an identifier spelling of the array; ``member``
    one name or a path ``pos.x``)."""
    parts = member.split(".")
    return f"mdp_s{'x'.join(str(len(p)) for p in parts)}_{'_'.join(parts)}_{base}"


def view_member(name: str) -> str | None:
    """The member (or member path, ``pos.x``) a view name stands for, or None for any other name."""
    m = _VIEW.match(name)
    if m is None:
        return None
    at, parts = m.end(), []
    for k in (int(x) for x in m.group(1).split("x")):
        part = name[at:at + k]
        if len(part) != k or name[at + k:at + k + 1] != "_":
            return None
        parts.append(part)
        at += k + 1
    return ".".join(parts)


def struct_rows_type(c_decl: str, name: str) -> str:
    """The struct type in a view's parameter declaration (``const P *V``, ``const P (*V)[w]`` ->
    ``const P``)."""
    for form in (f"(*{name})", f"*{name}"):
        if form in c_decl:
            return c_decl.split(form)[0].strip()
    return c_decl
