"""OpenCL kernels spell C's ``long long`` as the device's 64-bit ``long``/``ulong`` (OpenCL C
reserves ``long long``; PoCL computes it in 128 bits, and a hash of shifts then keeps bits the
host drops)."""

from __future__ import annotations

from pycparser import c_generator, c_parser

from mdpoly.backends.opencl import _sixty_four_bit


def test_casts_and_literals_become_long_and_ulong() -> None:
    ast = c_parser.CParser().parse(
        "void f(void) { x = ((unsigned long long) i) * 0x9E3779B97F4A7C15ull ^ (long long) j + 5LL + 7llu + 3lu; }")
    expr = ast.ext[0].body.block_items[0].rvalue
    text = c_generator.CGenerator().visit(_sixty_four_bit(expr))
    assert text == "(((ulong) i) * 0x9E3779B97F4A7C15ul) ^ (((((long) j) + 5L) + 7lu) + 3lu)", text
