"""``frontend/switches.py``: which ``switch`` statements become ``if`` chains, and the chain."""

from __future__ import annotations

from pycparser import CParser, c_generator

from mdpoly.frontend.switches import structure_switches


def _rewritten(body: str) -> tuple[int, str]:
    ast = CParser().parse("int g(void); void f(int m, int *a, int n) {\n" + body + "\n}\n")
    count = structure_switches(ast)
    return count, c_generator.CGenerator().visit(ast)


def test_groups_become_a_chain_with_the_default_last() -> None:
    count, text = _rewritten("switch (a[m]) { case 0: a[1] = 1; break; default: a[2] = 2; break;"
                             " case 1: case 2: { a[3] = 3; break; } case 7: a[4] = 4; }")
    assert count == 1 and "switch" not in text
    assert "if (a[m] == 0)" in text and "(a[m] == 1) || (a[m] == 2)" in text and "a[m] == 7" in text
    assert text.index("a[4] = 4") < text.index("a[2] = 2")   # the default is the final else


def test_a_break_of_an_inner_loop_stays_that_loops() -> None:
    count, text = _rewritten("switch (m) { case 0: for (int k = 0; k < n; k++) { if (a[k]) break; a[k] = 1; }"
                             " break; default: a[0] = 0; }")
    assert count == 1 and "break;" in text and "switch" not in text


def test_forms_that_stay_switches() -> None:
    kept = [
        "switch (m) { case 0: a[0] = 1; case 1: a[1] = 1; break; }",              # falls into the next group
        "switch (g()) { case 0: a[0] = 1; break; default: a[1] = 2; }",            # a call in the expression
        "switch (m++) { case 0: a[0] = 1; break; }",                                # a side effect
        "switch (m) { case 0: if (a[0]) break; a[1] = 1; break; }",                 # a break in the middle
        "switch (m) { case 0: ; int t = 1; a[0] = t; break; case 1: t = 2; a[1] = t; break; }",  # shared name
    ]
    for body in kept:
        count, text = _rewritten(body)
        assert count == 0 and "switch" in text, body


def test_nested_switches_both_rewritten() -> None:
    count, text = _rewritten("switch (m) { case 0: switch (n) { case 1: a[0] = 1; break; default: a[1] = 1; }"
                             " break; default: a[2] = 2; }")
    assert count == 2 and "switch" not in text
