"""Delinearization: a flat subscript's polynomial -> per-dimension affine subscripts, a shape of
run-time sizes and the assumptions under which that view is exact.

``A[t*kv + h*hs + i]``, ``in[x + y*nx + z*nx*ny]``, ``w[(l*dim + i)*dim + j]`` or
``in[((n*ih + p*2 + r)*iw + q*2 + s)*c + ch]`` on a flat pointer index a multi-dimensional array
whose sizes are only known at run time. The subscript, multiplied out into monomials
(``NestBuilder.polynomial``), has in each monomial at most one iterator; the size-parameter part
of a monomial holding an iterator is a *stride*. The strides of all accesses to one array in the
nest, ordered into a chain ``1 < s_1 < ... < s_{n-1}`` (``Layout``), give the view
``A[e_{n-1}]...[e_1][e_0]`` with extents ``d_k = s_k / s_{k-1}`` (innermost first): a monomial
quotient when ``s_{k-1}`` divides ``s_k`` symbolically (``nx*ny / nx = ny``), else a size
parameter of its own (``mdp_q_kv_by_hs``) valid when ``s_{k-1} > 0`` and ``s_k % s_{k-1} == 0``
-- checked at run time. The generated function then takes the pointer as ``T (*)[d_{n-1}]...[d_1]``.

Strides that do not divide each other are chained from the innermost: next is the stride that a
dimension's loop bound exactly fills (``i < hs`` makes ``hs`` the row of ``A[t*kv + h*hs + i]``),
else one the current stride divides, else the one of the innermost loop (an outer loop's iterator
has the larger stride, as row-major traversals do). Every access of an array in the nest uses one
view: an access that needs more dimensions, or an affine ``A[j]`` met before ``A[i*m + j]``,
rebuilds the model with the wider view (``Relayout``), where ``A[j]`` is ``A[0][j]``. A monomial without an iterator (a
constant or invariant offset such as ``- 1``, ``+ nx*ny`` or ``+ l*seq*kv``) goes to the
outermost dimension whose stride divides it (``in[c - nx]`` is row ``y - 1``). One that no
stride divides (a parameter ``loff``, not a product of the strides) is a base-pointer offset when
every access of the array in the nest adds the same one: the view starts at ``A + loff``, which
the call passes (``Layout.base``); otherwise it goes to the innermost dimension, where the range
check below decides at run time whether it stays in the row.

The view is exact -- distinct index tuples are distinct elements and every element the nest
touches is the one the flat subscript names -- when ``0 <= e_k < d_k`` for every ``k >= 1``
(the outermost dimension is unbounded). That is checked over the domain's bounding box
(``mdpoly.frontend.box``), decided now when it is constant, else emitted as a run-time
``Precondition`` computed in ``long long`` from the parameters: one O(1) test per call, the
original nest runs when it fails (``preconditions``). A read of an array the nest does not
write that sits under selects is checked only over the points its selects' conditions let it be
evaluated at (``mdpoly.frontend.guarded_reads``: the clamped neighbour ``x == 0 ? in[c] : in[c-1]``),
and under ``if``s only where their affine conditions bound the subscript (``within_domain``: the
zero-padded convolution's ``if (iy >= 0 && iy < H) ... in[(iy*W + ix)*C + c]``); such arrays are
marked lazy, and their alias rows (``Variable.lazy_rows``) are those of the evaluated reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from math import gcd

import islpy as isl

from mdpoly.frontend.box import bounding_box, box_extremes
from mdpoly.frontend.expr_types import NameTypes, expr_type
from mdpoly.frontend.guarded_reads import Bound, affine_constraints, narrowed, within_domain
from mdpoly.frontend.loop_types import math_text
from mdpoly.ir.c_types import parse_type
from mdpoly.ir.mdh import Affine, Precondition
from mdpoly.ir.scop import Binary, Cast, Const, Expr, Scop, Unary, Var

#: sorted names; ``()`` is the constant 1
Monomial = tuple[str, ...]
Poly = Mapping[Monomial, int]


@dataclass(frozen=True, slots=True)
class Layout:
    """The strides of a flat array's view, innermost first; ``strides[0] == ()`` (one element).

    ``base``: the invariant offset that every access of the array adds and no stride divides
    (``loff`` in ``A[loff + t*kv + h*hs + i]``), as monomial -> coefficient pairs: the view starts
    at ``A + loff``. ``None``: the accesses add different such offsets, which then stay in the
    innermost dimension. ``decided``: ``base`` was set by an access (the first one decides).
    """

    strides: tuple[Monomial, ...]
    base: tuple[tuple[Monomial, int], ...] | None = ()
    decided: bool = False

    def dim_of(self, stride: Monomial) -> int:
        return self.strides.index(stride)


@dataclass(frozen=True, slots=True)
class Use:
    """One delinearized access of ``array``: its subscripts in the view, outermost first."""

    array: str
    subs: tuple[Affine, ...]
    #: the selects' conditions under which it is evaluated (``mdpoly.frontend.guarded_reads``)
    guard: tuple[Bound, ...] = ()
    #: the enclosing ``if``s' affine conditions (``Statement.guards``, each ``>= 0``): it is
    #: evaluated only where they hold (the domain's ``where``)
    domain: tuple[Affine, ...] = ()


class Relayout(Exception):
    """An access needs more dimensions than the view the nest was built with: rebuild the model
    with ``layouts`` (array -> layout) as hints."""

    def __init__(self, layouts: dict[str, Layout]) -> None:
        super().__init__(", ".join(sorted(layouts)))
        self.layouts = layouts


class Refuted(Exception):
    """The view is wrong whatever the parameters are (a subscript leaves its dimension)."""


def _divides(a: Monomial, b: Monomial) -> Monomial | None:
    """``b / a`` when the multiset ``a`` is contained in ``b``, else ``None``."""
    rest = list(b)
    for n in a:
        if n not in rest:
            return None
        rest.remove(n)
    return tuple(rest)


def _numeric(factor: str) -> bool:
    return factor[:1].isdigit()


def _absorbed(poly: Poly, iterators: Sequence[str]) -> dict[Monomial, int]:
    """``poly`` with a constant factor of its outermost stride taken into the stride:
    ``9*nx*y + 9*x + q`` (``fout[(y*nx + x)*9 + q]``) has the stride ``9*nx`` for ``y`` (the
    factor ``"9"``), so its rows hold ``9*nx`` elements and ``9*x + q`` stays inside them; with
    the stride ``nx``, row ``9*y`` would need ``9*x + q < nx``. Only the largest stride (the
    outermost dimension, whose extent is unbounded), only when it has a size parameter, and only
    by the factor every monomial of that stride shares (``2*p*c*iw + r*c*iw`` keeps ``c*iw``)."""
    def stride(mono: Monomial) -> Monomial:
        return tuple(n for n in mono if n not in iterators)

    strides = {stride(m) for m in poly if set(m) & set(iterators)}
    widest = max((len(x) for x in strides), default=0)
    outer = [x for x in strides if len(x) == widest]
    if widest == 0 or len(outer) != 1:
        return dict(poly)
    g = 0
    for m, c in poly.items():
        if stride(m) == outer[0]:
            g = gcd(g, abs(c))
    if g < 2:
        return dict(poly)
    return {(tuple(sorted((*m, str(g)))) if stride(m) == outer[0] else m): (c // g if stride(m) == outer[0] else c)
            for m, c in poly.items()}


def strides_of(poly: Poly, iterators: Sequence[str]) -> dict[Monomial, int] | None:
    """Stride -> depth of the outermost loop whose iterator it multiplies; ``None`` when a
    monomial holds two iterators (``i*j``: no view makes that affine)."""
    out: dict[Monomial, int] = {(): len(iterators)}
    for mono in poly:
        its = [n for n in mono if n in iterators]
        if len(its) > 1:
            return None
        if its:
            stride = tuple(n for n in mono if n not in iterators)
            depth = iterators.index(its[0])
            out[stride] = min(out.get(stride, depth), depth)
    return out


def choose_layout(strides: Mapping[Monomial, int], fits: Mapping[Monomial, frozenset[Monomial]] | None = None) -> Layout:
    """The chain of ``strides``: by divisibility where the strides form one. Else built from the
    innermost: next is the stride that a dimension exactly fills (``fits[s]``: the products of
    ``s`` and the loop bounds of the iterators it multiplies -- ``i < hs`` in ``A[t*kv + h*hs + i]``
    makes ``hs`` the second stride), else one the current stride divides, else the one of the
    innermost loop (an outer loop's iterator has the larger stride, as row-major code does)."""
    by_degree = sorted(strides, key=lambda s: (len(s), s))
    if all(_divides(a, b) is not None for a, b in pairwise(by_degree)):
        return Layout(tuple(by_degree))
    chain: list[Monomial] = [()]
    rest = set(strides) - {()}
    while rest:
        tight = sorted(s for s in rest if s in (fits or {}).get(chain[-1], frozenset()))
        pool = tight or [s for s in rest if _divides(chain[-1], s) is not None] or list(rest)
        chain.append(min(pool, key=lambda s: (-strides[s], len(s), s)))
        rest.remove(chain[-1])
    return Layout(tuple(chain))


def split(poly: Poly, layout: Layout, iterators: Sequence[str]) -> list[dict[Monomial, int]] | None:
    """Per-dimension subscripts, innermost first: ``{(iterator,): c, (params...): c, (): c}``
    (the parameter monomials are quotients by the dimension's stride); ``None`` when a stride of
    ``poly`` is not in ``layout``."""
    dims: list[dict[Monomial, int]] = [{} for _ in layout.strides]
    for mono, c in poly.items():
        its = tuple(n for n in mono if n in iterators)
        rest = tuple(n for n in mono if n not in iterators)
        if its:
            if rest not in layout.strides:
                return None
            k, term = layout.dim_of(rest), its
        else:  # an offset: the outermost dimension whose stride divides it
            k = max(j for j, s in enumerate(layout.strides) if _divides(s, rest) is not None)
            quotient = _divides(layout.strides[k], rest)
            assert quotient is not None
            term = quotient
        dims[k][term] = dims[k].get(term, 0) + c
    _borrow_rows(dims, layout, iterators)
    return dims


def _borrow_rows(dims: list[dict[Monomial, int]], layout: Layout, iterators: Sequence[str]) -> None:
    """Read ``row + w - 1`` (the last column of a row, a clamped neighbour) as that row's column
    ``w - 1``, not as column ``-1`` of the next row: where an inner dimension is a negative
    constant, with iterators only of negative coefficients (``i*w + (w - 1 - j)``, a row read
    backwards), and the dimension outside it holds a whole row as an offset (``+ 1``), one row
    moves inside as the inner dimension's extent. The preconditions still check the result.

    Without that offset (``(y - 1)*w + (w - 1)``, a periodic neighbour ``y == 0 ? .. : y - 1``,
    which folds to row ``y``, column ``-1``) a row is borrowed all the same where the inner
    dimension holds nothing but the constant and such iterators: its column is then negative at
    every point, so the view without borrowing could never pass its range check, while row
    ``y - 1`` passes it wherever the read's guard keeps ``y >= 1`` (``frontend.guarded_reads``)."""
    for k in range(len(dims) - 1, 0, -1):
        inner, outer = dims[k - 1], dims[k]
        extent = _divides(layout.strides[k - 1], layout.strides[k])
        if not extent or inner.get((), 0) >= 0:
            continue
        if outer.get((), 0) < 1 and any(mono and not all(n in iterators for n in mono) for mono in inner):
            continue   # a parameter in the column may make it non-negative: no row to borrow
        if any(c > 0 for mono, c in inner.items() if any(n in iterators for n in mono)):
            continue   # an iterator that can lift the column back into the row: no borrowing
        outer[()] = outer.get((), 0) - 1
        if not outer[()]:
            del outer[()]
        inner[extent] = inner.get(extent, 0) + 1


def may_wrap(e: Expr, name_type: NameTypes) -> bool:
    """Whether C may compute the subscript ``e`` other than as its mathematical value: an operator
    in an unsigned type narrower than a pointer (``unsigned`` wraps at 2^32, where the address
    does not), a conversion to one that may wrap, or a type that is not known. ``size_t``
    arithmetic wraps with the address itself, so it computes the same element; a signed value
    out of its type's range is undefined (or implementation-defined) in the original."""
    if isinstance(e, Var | Const):
        return False
    if isinstance(e, Cast):
        to, of = parse_type(e.resolved or e.type), expr_type(e.operand, name_type)
        if to is None or of is None or (to.is_integer and not to.signed and to.size < 8
                                        and (of.signed or of.size > to.size)):
            return True
        return may_wrap(e.operand, name_type)
    if not isinstance(e, Unary | Binary):
        return True
    t = expr_type(e, name_type)
    if t is None or (t.is_integer and not t.signed and t.size < 8):
        return True
    if isinstance(e, Unary):
        return may_wrap(e.operand, name_type)
    return may_wrap(e.left, name_type) or may_wrap(e.right, name_type)


def _c_product(mono: Monomial) -> str:
    return " * ".join(f"(long long){n}" for n in mono) if mono else "1LL"


class Delinearizer:
    """The delinearized accesses of one nest; ``hints`` fix the layouts of a rebuilt model."""

    def __init__(self, hints: Mapping[str, Layout] | None = None) -> None:
        self.hints = dict(hints or {})
        self.layouts: dict[str, Layout] = {}
        self.seen: dict[str, dict[Monomial, int]] = {}  # array -> strides of all its accesses
        #: array -> stride -> the strides a dimension of it would exactly fill (``choose_layout``)
        self.fits: dict[str, dict[Monomial, frozenset[Monomial]]] = {}
        self.uses: list[Use] = []
        #: run-time quotient extents: name -> (dividend, divisor) as ``long long`` C text
        self.quotients: dict[str, tuple[str, str]] = {}
        self.shown: dict[str, str] = {}  # run-time quotient name -> its text for the reasons (``kv/hs``)
        #: the bounds of the selects around the access being built (``guarded_reads.guarded``)
        self.guards: list[Bound] = []
        #: read-only arrays whose range check used a read's guard (``Variable.lazy``)
        self.lazy: set[str] = set()
        #: of each such array: first view subscript's extremes over its reads' narrowed boxes (None:
        #: not comparable, the alias ranges take the whole box)
        self.lazy_rows: dict[str, tuple[Affine, Affine] | None] = {}
        #: size parameters standing for sums of others (``mdp_sum_nxp2`` = ``nx + 2``): a range
        #: check over them is decided with their values substituted
        self.sums: dict[str, Affine] = {}

    def viewed(self, array: str) -> bool:
        """Whether ``array`` has a view in this nest (so far, or from the hints)."""
        return array in self.layouts or array in self.hints

    def relayout(self) -> Relayout:
        """The rebuild that gives every access of the arrays viewed so far their views."""
        return Relayout({**self.hints, **self.layouts})

    def access(self, array: str, poly: Poly, iterators: Sequence[str],
               param: Callable[[Monomial], str | None],
               extents: Mapping[str, Monomial] | None = None,
               domain: tuple[Affine, ...] = ()) -> tuple[Affine, ...] | None:
        """``array[poly]`` as per-dimension subscripts (outermost first) of ``array``'s view;
        ``domain``: the enclosing ``if``s' conditions (``Use.domain``);
        ``param`` names a product of size parameters (``None``: cannot); ``extents``: the iterators
        that run from 0 to a product of parameters, that product (for ``choose_layout``). ``None``
        when the subscript is not of that form. :raises Relayout: when ``array`` needs a wider view."""
        poly = _absorbed(poly, iterators)
        fits = self.fits.setdefault(array, {})
        for mono in poly:
            its = [n for n in mono if n in iterators]
            if len(its) == 1 and extents and its[0] in extents:
                stride = tuple(n for n in mono if n not in iterators)
                fits[stride] = fits.get(stride, frozenset()) | {tuple(sorted(stride + extents[its[0]]))}
        found = strides_of(poly, iterators)
        if found is None or (len(found) < 2 and not self.viewed(array)):
            return None
        hint = self.hints.get(array)  # its strides stay, ranked as the hint ranks them
        seen = self.seen.setdefault(array, {s: len(iterators) - k for k, s in enumerate(hint.strides)} if hint else {})
        for s, d in found.items():
            seen[s] = min(seen.get(s, d), d)
        layout = self.layouts.get(array) or self.hints.get(array) or choose_layout(seen, fits)
        if not set(found) <= set(layout.strides):
            raise Relayout({**self.hints, **self.layouts, array: choose_layout(seen, fits)})
        opaque = tuple(sorted((m, c) for m, c in poly.items() if m and not set(m) & set(iterators)
                              and not any(_divides(st, m) is not None for st in layout.strides[1:])))
        if not layout.decided:
            layout = replace(layout, base=opaque, decided=True)
        elif layout.base is not None and layout.base != opaque:  # accesses disagree: no base offset
            raise Relayout({**self.hints, **self.layouts, array: replace(layout, base=None)})
        self.layouts[array] = layout
        dims = split({m: c for m, c in poly.items() if (m, c) not in (layout.base or ())}, layout, iterators)
        if dims is None:
            return None
        subs: list[Affine] = []
        for dim in reversed(dims):
            terms: dict[str, int] = {}
            for mono, c in dim.items():
                if not mono:
                    continue
                name = mono[0] if len(mono) == 1 else param(mono)
                if name is None:
                    return None
                terms[name] = terms.get(name, 0) + c
            subs.append(Affine.of(terms, dim.get((), 0)))
        self.uses.append(Use(array, tuple(subs), tuple(self.guards), tuple(domain)))
        return tuple(subs)

    def offsets(self) -> dict[str, str]:
        """Each array's base offset (``Layout.base``) as ``long long`` C text, where it has one."""
        out: dict[str, str] = {}
        for a, lay in self.layouts.items():
            text = ""
            for m, c in lay.base or ():
                term = _c_product(m) if abs(c) == 1 else f"{abs(c)} * {_c_product(m)}"
                text = (f"-{term}" if c < 0 else term) if not text else f"{text} {'-' if c < 0 else '+'} {term}"
            if text:
                out[a] = text
        return out

    def shapes(self, param: Callable[[Monomial], str | None],
               quotient: Callable[[str, str], None]) -> tuple[dict[str, tuple[str, ...]], list[Precondition]]:
        """Each array's shape (``("", d_{n-1}, ..., d_1)``: names of size parameters, a product
        through ``param``, a run-time quotient declared through ``quotient(name, c_value)``) and the
        preconditions of the run-time quotients (``s_{k-1} > 0 && s_k % s_{k-1} == 0``).
        :raises Refuted: when a product cannot be named."""
        shapes: dict[str, tuple[str, ...]] = {}
        pre: list[Precondition] = []
        for array, layout in self.layouts.items():
            dims: list[str] = []
            for inner, outer in pairwise(layout.strides):
                q = _divides(inner, outer)
                if q and any(_numeric(f) for f in q):   # a row of 9 * nx elements: its own parameter
                    scaled = f"mdp_s_{'_'.join(q)}"
                    quotient(scaled, _c_product(q))
                    self.shown[scaled] = "*".join(q)
                    dims.append(scaled)
                    continue
                if q:
                    name = q[0] if len(q) == 1 else param(q)
                    if name is None:
                        raise Refuted(f"the size '{' * '.join(q)}' of a dimension of '{array}' wraps around")
                    dims.append(name)
                    continue
                name = f"mdp_q_{'_'.join(outer)}_by_{'_'.join(inner)}"
                dividend, divisor = _c_product(outer), _c_product(inner)
                self.quotients[name] = (dividend, divisor)
                self.shown[name] = f"{'*'.join(outer)}/{'*'.join(inner)}"
                # never divides by zero, whatever order the checks run in
                quotient(name, f"({divisor} > 0 ? {dividend} / ({divisor}) : 0)")
                p = Precondition(f"{divisor} > 0 && {dividend} % ({divisor}) == 0",
                                 f"'{array}' is viewed with rows of {' * '.join(inner) or '1'} inside rows of "
                                 f"{' * '.join(outer)}: the one divides the other")
                if p not in pre:
                    pre.append(p)
                dims.append(name)
            shapes[array] = ("", *reversed(dims))
        return shapes, pre

    def preconditions(self, scop: Scop, shapes: Mapping[str, tuple[str, ...]]) -> tuple[Precondition, ...]:
        """``0 <= e_k < d_k`` (``k >= 1``) for every access, over the domain's bounding box: decided
        now when constant, else a run-time precondition in ``long long`` (for a run-time quotient
        ``d_k = s_k / s_{k-1}``: ``s_{k-1} > 0 && hi + 1 <= s_k / s_{k-1}``).
        :raises Refuted: when a subscript leaves its dimension for every value of the parameters."""
        box = bounding_box(scop)
        where = {lp.iterator: box[k] for k, lp in enumerate(scop.loops)}
        its = set(where)
        values = {v.name: v.c_value for v in scop.variables if v.c_value}
        written = {s.write.buffer for s in scop.statements}
        out: list[Precondition] = []
        rows: dict[str, list[tuple[Affine, Affine]]] = {}
        for use in self.uses:
            shape = shapes[use.array]
            at = where
            domain = use.domain
            if use.guard and use.array not in written:  # evaluated only under its selects' conditions
                at = narrowed(where, use.guard)
                domain += affine_constraints(use.guard)
                if at != where:
                    self.lazy.add(use.array)
            if use.array not in written and use.subs:
                low, high, tightened = within_domain(use.subs[0], *box_extremes(use.subs[0], at), domain, its)
                if tightened:
                    self.lazy.add(use.array)
                here = (low, high)
                rows.setdefault(use.array, []).append(here)
            for k in range(1, len(shape)):
                sub, ext = use.subs[k], shape[k]
                lo, hi = box_extremes(sub, at)
                if use.array not in written:  # evaluated only in its statement's domain
                    lo, hi, tightened = within_domain(sub, lo, hi, domain, its)
                    if tightened:
                        self.lazy.add(use.array)
                shown = [self.shown.get(d, d) for d in shape]
                why = (f"the subscripts of '{use.array}' viewed as {use.array}{''.join(f'[{d}]' for d in shown)} stay "
                       f"within their dimensions ({sub.to_c()} in [0, {shown[k]}))")
                for cond in (lo, _minus(Affine.of({ext: 1}, -1), hi)):
                    cond = _with_sums(cond, self.sums)
                    if cond.is_constant:
                        if cond.constant < 0:
                            raise Refuted(why + " fails")
                        continue
                    if cond.names() & its:
                        raise Refuted(why + " depends on the iterators")
                    text = f"{math_text(cond, values=values)} >= 0"  # names widened: no wrap-around
                    below = _minus(Affine.of({ext: 1}), cond)  # hi + 1, in parameters
                    if ext in self.quotients and cond.coeff(ext) == 1 and not below.names() & set(values):
                        dividend, divisor = self.quotients[ext]
                        text = f"{divisor} > 0 && {math_text(below)} <= {dividend} / ({divisor})"
                    if text not in {p.c_expr for p in out}:
                        out.append(Precondition(text, why))
        # where the loops run, every extent is at least 1 (else no read is evaluated at all)
        runs = [_minus(_minus(b.upper, b.lower), Affine.of({}, 1)) for b in where.values()]
        self.lazy_rows = {a: _cover(r, runs) for a, r in rows.items() if a in self.lazy}
        return tuple(out)


def _with_sums(a: Affine, sums: Mapping[str, Affine]) -> Affine:
    """``a`` with each sum parameter of ``sums`` replaced by the sum it stands for."""
    if not sums or not a.names() & set(sums):
        return a
    out = Affine.of({n: c for n, c in a.terms if n not in sums}, a.constant)
    for n, c in a.terms:
        if n in sums:
            out = _plus(out, sums[n], c)
    return out


def _plus(a: Affine, b: Affine, scale: int) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) + scale * c
    return Affine.of({n: c for n, c in d.items() if c}, a.constant + scale * b.constant)


def _cover(ranges: list[tuple[Affine, Affine]], facts: list[Affine]) -> tuple[Affine, Affine] | None:
    """The (lowest, highest) of ``ranges`` that covers them all: a low bound no greater than any
    other and a high bound no less, whenever every ``fact >= 0`` holds (the rows ``0``, ``h - 1``
    and ``0 .. h - 1`` of a clamped tap: ``0 .. h - 1``, as ``h >= 1`` where the loops run);
    ``None`` where no bound is provably extreme."""
    lows, highs = [r[0] for r in ranges], [r[1] for r in ranges]
    low = next((x for x in lows if all(_nonnegative(_minus(y, x), facts) for y in lows)), None)
    high = next((x for x in highs if all(_nonnegative(_minus(x, y), facts) for y in highs)), None)
    return None if low is None or high is None else (low, high)


def _nonnegative(a: Affine, facts: list[Affine]) -> bool:
    """``a >= 0`` for every value of its names where each ``fact >= 0`` holds (isl decides)."""
    if a.is_constant:
        return a.constant >= 0
    names = sorted(a.names().union(*(f.names() for f in facts)))
    cons = " and ".join([f"{_isl_text(f)} >= 0" for f in facts] + [f"{_isl_text(a)} < 0"])
    return bool(isl.Set(f"[{', '.join(names)}] -> {{ : {cons} }}").is_empty())


def _isl_text(a: Affine) -> str:
    return a.to_c().replace(" * ", "*")


def _minus(a: Affine, b: Affine) -> Affine:
    d = dict(a.terms)
    for n, c in b.terms:
        d[n] = d.get(n, 0) - c
    return Affine.of(d, a.constant - b.constant)


def row_elements(shape: Sequence[str]) -> str:
    """Elements per index of the outermost dimension of ``shape``, as C text over its names."""
    inner = list(shape[1:])
    if len(inner) == 1:
        return inner[0]
    return " * ".join(f"(long long)({d})" for d in inner)
