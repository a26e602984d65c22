"""Products of size parameters in loop bounds (``mdpoly.frontend.bound_products``): casts to
``size_t`` before the product are modelled under a run-time comparison with the C value; products
the model could not compute exactly, and such products outside loop bounds, keep the nest."""

from __future__ import annotations

from mdpoly.frontend.bound_products import LLONG_MAX, bound_magnitude, product_fits_long_long
from mdpoly.ir.c_types import parse_type
from mdpoly.ir.mdh import Affine

HEAD = "#include <stddef.h>\n"
TYPES = {"n": "int", "m": "int", "u": "unsigned int", "z": "size_t", "l": "long"}


def _type(name: str):
    return parse_type(TYPES[name]) if name in TYPES else None


def _by_line(analysis):
    return {n.loc.line: n for n in analysis.nests}


def test_size_t_product_bound_is_checked_against_the_model(analyze):
    nests = _by_line(analyze(HEAD + "void f(int nq, int n, double *d) {\n"
                             "  for (size_t t = 0; t < (size_t)nq * n; t++)\n    d[t] = 0.5;\n}\n"))
    mdh = nests[3].mdh
    assert mdh is not None, nests[3].kept
    assert "mdp_p_n_nq" in {b.name for b in mdh.buffers}
    # the C value (modulo 2^64) equals the exact product, else the nest runs as written
    assert [p.c_expr for p in mdh.preconditions] == ["(__int128)(((size_t) nq) * n) == ((__int128)mdp_p_n_nq)"]


def test_bound_beyond_long_long_is_checked(analyze):
    """``3 * w * h`` of two ints can pass ``LLONG_MAX`` while ``size_t`` holds it: checked too."""
    nests = _by_line(analyze(HEAD + "void g(int w, int h, const unsigned char *px, double *out) {\n"
                             "  double s = 0.0;\n  for (size_t i = 0; i < (size_t)w * h * 3; i++)\n"
                             "    s += px[i];\n  *out = s;\n}\n"))
    mdh = nests[4].mdh
    assert mdh is not None, nests[4].kept
    checks = [p.c_expr for p in mdh.preconditions]
    assert "3 * (__int128)mdp_p_h_w <= (__int128)9223372036854775807LL" in checks, checks
    assert "(__int128)((((size_t) w) * h) * 3) == (3 * (__int128)mdp_p_h_w)" in checks, checks


def test_products_the_model_cannot_hold_keep_the_nest(analyze):
    nests = _by_line(analyze(HEAD + "void k(size_t n, size_t m, long w, int h, double *d) {\n"
                             "  for (size_t t = 0; t < n * m; t++)\n    d[t] = 0.5;\n"
                             "  for (size_t t = 0; t < (size_t)w * h; t++)\n    d[t] = 1.5;\n}\n"))
    for line in (3, 5):
        assert nests[line].mdh is None and nests[line].kept.code == "non-affine-bound", nests[line].kept


def test_wrapping_product_in_a_subscript_keeps_the_nest(analyze):
    """Only a loop bound's C value is compared with the model before the nest runs."""
    nests = _by_line(analyze(HEAD + "void l(int n, int m, double *d) {\n"
                             "  for (int i = 0; i < n; i++)\n    d[(size_t)n * m + i] = 0.5;\n}\n"))
    assert nests[3].mdh is None and nests[3].kept.code == "non-affine-subscript", nests[3].kept


def test_product_fits_long_long():
    assert product_fits_long_long(("n", "m"), _type)
    assert product_fits_long_long(("u", "n"), _type)   # (2^32 - 1) * 2^31 < 2^63
    assert not product_fits_long_long(("u", "u"), _type)
    assert not product_fits_long_long(("z", "n"), _type)
    assert not product_fits_long_long(("l", "n"), _type)
    assert not product_fits_long_long(("n", "unknown"), _type)


def test_bound_magnitude():
    products = {"mdp_p_m_n": ("m", "n")}
    assert bound_magnitude(Affine.of({"mdp_p_m_n": 1}), products, _type) == 2**62
    assert bound_magnitude(Affine.of({"mdp_p_m_n": 3}, -1), products, _type) == 3 * 2**62 + 1 > LLONG_MAX
    assert bound_magnitude(Affine.of({"unknown": 1}), products, _type) is None
