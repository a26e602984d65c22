"""A tiled wavefront's tiles on work-groups: the band's dependences and tiling -> the tile's own
wavefront (coefficients, proved by isl) and the C a work-group runs for one tile.

``mdpoly.frontend.wavefront`` skews a band until every dependence distance is non-negative in
each coordinate, cuts the skewed band into rectangular tiles and runs the tiles of one wavefront
in parallel. A tile of 16x16x16 or 64x64 points is a lot for one device thread; the points of a
tile can be shared as well: along a hyperplane of the tile's *local* skewed coordinates
``l_r = z_r - S_r * T_r`` (``z``: the skewed coordinates, ``S``: the tile's edges, ``T``: the
tile). With coefficients ``c`` in ``{0, 1}`` (the all-ones always works: a dependence inside one
tile has non-negative skewed components, not all zero, so their sum is at least one; fewer
ones make fewer, fuller inner wavefronts), ``h(l) = sum c_r l_r`` must grow along every
dependence whose two points lie in one tile -- proved by isl on the band's dependences under the
wavefront schedule, smallest number of inner wavefronts first.

The tile's code (``tile_points``): for each value ``s`` of ``h`` in order, the group's threads
share the box of the coordinates besides one with coefficient 1 (the innermost; it is computed
from ``s``), each thread takes the candidates ``q = thread, thread + threads, ...``, decodes the
local coordinates, keeps those inside the tile and the band's domain (the domain's isl
constraints as a C condition), sets the band's iterators (undoing the skew; a downward loop's
coordinate is ``-iterator``) and runs the band's body as written; a group barrier ends each
inner wavefront, so a later one reads what an earlier one wrote (global memory). Nothing here
decides whether it pays (``mdpoly.cost_model``).
"""

from __future__ import annotations

import itertools

import islpy as isl

from mdpoly.ir.nest import TILE_BARRIER, TILE_THREAD, TILE_THREADS

#: The most threads of a work-group running one tile.
MAX_GROUP = 256
#: Threads are counted in warps of this many.
WARP = 32


def inner_coefficients(band_deps: isl.Map, sched: isl.Map, skew: list[tuple[int, ...]], sizes: tuple[int, ...],
                       prefix: str) -> tuple[int, ...] | None:
    """The coefficients ``c`` in ``{0, 1}`` of the tile's own wavefront (fewest inner wavefronts
    first) under which every dependence of ``band_deps`` joining two points of one tile goes to a
    larger ``h``, proved by isl; ``None`` when none is.

    :arg sched: band point -> ``[w, tiles..., y]`` (``y``: the iterators, a downward one negated),
        the schedule of ``mdpoly.frontend.wavefront``; ``skew``: row ``r`` holds the factors of
        ``y_0 .. y_{r-1}`` added to ``y_r``."""
    depth = len(sizes)
    a = ["w", *(f"T{r}" for r in range(depth)), *(f"y{r}" for r in range(depth))]
    b = [f"{v}_" for v in a]
    same = " and ".join(f"{u} = {v}" for u, v in zip(a[:depth + 1], b[:depth + 1], strict=True))
    timed = band_deps.apply_domain(sched).apply_range(sched)
    inside = timed.intersect(isl.Map(f"{prefix}{{ [{', '.join(a)}] -> [{', '.join(b)}] : {same} }}"))

    def skewed(y: str, r: int, after: str = "") -> str:   # skewed coordinate r of a source (sink: ``after``)
        return " + ".join([f"{y}{r}{after}", *(f"{c} * {y}{m}{after}" for m, c in enumerate(skew[r]) if c)])

    combos = [c for c in itertools.product((0, 1), repeat=depth) if any(c)]
    combos.sort(key=lambda c: (sum(v * (s - 1) for v, s in zip(c, sizes, strict=True)), [-v for v in c]))
    for c in combos:
        grow = " + ".join(f"{skewed('y', r, '_')} - ({skewed('y', r)})" for r in range(depth) if c[r])
        ok = isl.Map(f"{prefix}{{ [{', '.join(a)}] -> [{', '.join(b)}] : {grow} >= 1 }}")
        if inside.is_subset(ok):
            return c
    return None


def inner_shape(coefficients: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[int, int, int]:
    """``(inner wavefronts, candidates per inner wavefront, the coordinate computed from h)``."""
    gone = max(r for r, c in enumerate(coefficients) if c == 1)
    inner = sum(c * (s - 1) for c, s in zip(coefficients, sizes, strict=True)) + 1
    candidates = 1
    for r, s in enumerate(sizes):
        if r != gone:
            candidates *= s
    return inner, candidates, gone


def group_threads(candidates: int) -> int:
    """The work-group's size for ``candidates`` points per inner wavefront: whole warps, at most
    ``MAX_GROUP``."""
    return min(MAX_GROUP, max(WARP, -(-candidates // WARP) * WARP))


def tile_points(coefficients: tuple[int, ...], sizes: tuple[int, ...], skew: list[tuple[int, ...]],
                steps: list[int], iterators: list[tuple[str, str]], condition: str, body: str,
                tile: list[str]) -> list[str]:
    """The C lines a work-group runs for the tile ``tile`` (``T_r`` as C expressions): the inner
    wavefronts in order, the candidates of each shared among the threads, each point inside the
    tile and the domain (``condition`` over ``mdp_x<r>``, the iterators' values) running ``body``
    with the band's iterators set; ``iterators``: ``(assignment prefix, name)``, the prefix the
    iterator's type where the band's header declares it.

    :raises ValueError: a loop of the band steps by other than one."""
    if any(abs(s) != 1 for s in steps):
        raise ValueError("a loop of the band steps by other than one")
    depth = len(sizes)
    inner, candidates, gone = inner_shape(coefficients, sizes)
    rest = [r for r in range(depth) if r != gone]
    out = ["{"]
    out += [f"  long mdp_T{r} = {tile[r]};" for r in range(depth)]
    out.append(f"  for (long mdp_s = 0; mdp_s < {inner}; mdp_s++) {{")
    out.append(f"    for (long mdp_q = {TILE_THREAD}; mdp_q < {candidates}; mdp_q += {TILE_THREADS}) {{")
    pad = "      "
    radix = 1
    decode: list[str] = []
    for r in reversed(rest):
        value = "mdp_q" if radix == 1 else f"mdp_q / {radix}"
        decode.append(f"{pad}long mdp_l{r} = {value}" + (f" % {sizes[r]};" if r != rest[0] else ";"))
        radix *= sizes[r]
    out += reversed(decode)
    others = " - ".join(f"mdp_l{r}" for r in rest if coefficients[r])
    out.append(f"{pad}long mdp_l{gone} = mdp_s" + (f" - {others};" if others else ";"))
    out.append(f"{pad}if (mdp_l{gone} >= 0 && mdp_l{gone} < {sizes[gone]}) {{")
    pad += "  "
    for r in range(depth):
        unskew = "".join(f" - {c} * mdp_y{m}" if c != 1 else f" - mdp_y{m}" for m, c in enumerate(skew[r]) if c)
        out.append(f"{pad}long mdp_y{r} = {sizes[r]} * mdp_T{r} + mdp_l{r}{unskew};")
    out += [f"{pad}long mdp_x{r} = {'' if steps[r] == 1 else '-'}mdp_y{r};" for r in range(depth)]
    out.append(f"{pad}if ({condition}) {{")
    out += [f"{pad}  {prefix}{name} = mdp_x{r};" for r, (prefix, name) in enumerate(iterators)]
    out += [f"{pad}  {ln}" if ln.strip() and not ln.startswith("#") else ln for ln in body.splitlines()]
    out += [f"{pad}}}", "      }", "    }", f"    {TILE_BARRIER}", "  }", "}"]
    return out
