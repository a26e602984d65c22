"""``share_in_block``: repeated casts of a run of assignments -> ``const`` locals, only where safe."""

from __future__ import annotations

from pycparser import c_ast, c_generator, c_parser

from mdpoly.backends.shared_temps import TemporaryNames, share_in_block


def _block(body: str) -> list[c_ast.Node]:
    ast = c_parser.CParser().parse("void f(float *a, float *b, float *c, float s) {" + body + "}")
    return list(ast.ext[0].body.block_items)


def _render(nodes: list[c_ast.Node]) -> str:
    gen = c_generator.CGenerator()
    return "".join(gen.visit(n) + ";\n" for n in nodes)


def test_repeated_casts_become_locals_innermost_first() -> None:
    out = _render(share_in_block(_block(
        "a[0] = (float) (b[1] - b[2]) * (float) (b[1] - b[2]) + sqrtf((float) (b[1] - b[2]));"
        "c[0] = (float) (sqrtf((float) (b[1] - b[2])) * s) + (float) (sqrtf((float) (b[1] - b[2])) * s);"),
        TemporaryNames()))
    assert out.count("b[1] - b[2]") == 1 and out.count("sqrtf") == 2  # the uncast sqrtf stays inline
    assert out.index("const float mdp_tmp0 = b[1] - b[2]") < out.index("const float mdp_tmp1 = sqrtf(mdp_tmp0) * s")


def test_values_the_run_writes_and_impure_calls_stay_inline() -> None:
    written = _render(share_in_block(_block(
        "a[0] = (float) (a[1] + s) * 2; b[0] = (float) (a[1] + s) * 3;"), TemporaryNames()))
    assert "mdp_tmp" not in written   # a is written by the run
    impure = _render(share_in_block(_block(
        "b[0] = (float) (rand() + s); c[0] = (float) (rand() + s);"), TemporaryNames()))
    assert "mdp_tmp" not in impure


def test_an_assignment_after_a_pragma_keeps_its_place() -> None:
    nodes = [c_ast.Pragma("omp atomic"), *_block("a[0] += (float) (b[1] * s) + (float) (b[1] * s);")]
    out = share_in_block(nodes, TemporaryNames())
    assert isinstance(out[0], c_ast.Pragma) and isinstance(out[1], c_ast.Assignment)


def test_reads_a_condition_guards_are_not_computed_ahead_of_it() -> None:
    """A repeated value on one side of ``?:`` or behind ``&&`` is a local only where some
    assignment evaluates it anyway: ``b[-1]`` is not read when ``s`` is not positive."""
    guarded = _render(share_in_block(_block(
        "a[0] = s > 0 ? (float) (b[-1] * s) * (float) (b[-1] * s) : 0.0f;"
        "c[0] = s > 1 && (float) (b[-2] + s) > (float) (b[-2] + s);"), TemporaryNames()))
    assert "mdp_tmp" not in guarded
    once_sure = _render(share_in_block(_block(
        "a[0] = (float) (b[1] * s) + 1.0f; c[0] = s > 0 ? (float) (b[1] * s) : 0.0f;"), TemporaryNames()))
    assert "const float mdp_tmp0 = b[1] * s" in once_sure and once_sure.count("b[1] * s") == 1
