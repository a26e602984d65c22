"""``mdpoly.backends.device_body``: an item's C -> device code for one thread, or a refusal.

The translations are checked by their text (flat subscripts over the declared extents, scalars
by value, locals, casts of math arguments); the OpenCL output of each is built on PoCL where
pyopencl is present. Every refusal names its construct.
"""

from __future__ import annotations

import pytest

from mdpoly.backends.device_body import Refused, translate
from mdpoly.backends.device_item import kernel_source
from mdpoly.ir.scop import Variable

SYMBOLS = {
    "A": Variable("A", "double", ("n", "m"), "array", "double"),
    "x": Variable("x", "float", ("64",), "array", "float"),
    "p": Variable("p", "double", ("",), "pointer", "double"),
    "n": Variable("n", "int", (), "scalar", "int"),
    "m": Variable("m", "int", (), "scalar", "int"),
    "s": Variable("s", "double", (), "scalar", "double"),
    "i": Variable("i", "int", (), "scalar", "int"),
    "j": Variable("j", "int", (), "scalar", "int"),
    "q": Variable("q", "long double", (), "scalar", "long double"),
}


def test_band_flat_subscripts_and_scalars() -> None:
    body = translate("for (i = 0; i < n; i++) for (j = 1; j < m; j++) A[i][j] = s * A[i][j - 1];",
                     SYMBOLS, ("i",), private=("j",))
    assert [(t.iterator, t.lower, t.extent, t.step) for t in body.threads] == [("i", "0", "(n) - (0)", 1)]
    assert "A[((long)(i)) * (m) + (j)] = s * A[((long)(i)) * (m) + (j - 1)]" in body.body
    assert [a.name for a in body.arrays] == ["A"] and body.arrays[0].written
    assert sorted(s.name for s in body.scalars) == ["m", "n", "s"]
    assert body.locals == ("int j;",) and body.fp64


def test_view_extents_with_casts() -> None:
    """A flat pointer's view (``a3[2*(h*n3 + t) + e]`` as rows of ``2 * n3``) has extents that the
    front end prints with casts, ``(long long)2 * (long long)n3``: a cast's type is no scalar to
    read (it was refused as "'long' has no declaration"), and the device spells it ``long``."""
    symbols = {**SYMBOLS, "V": Variable("V", "float", ("(n) * (m)", "((long long)2 * (long long)m)"), "pointer",
                                        "float")}
    body = translate("for (i = 0; i < n; i++) for (j = 0; j < m; j++) V[i][2 * j] = s;", symbols, ("i",),
                     private=("j",))
    assert "V[((long)(i)) * (((long) 2) * ((long) m)) + (2 * j)] = s" in body.body, body.body
    assert sorted(s.name for s in body.scalars) == ["m", "n", "s"]
    assert all("long long" not in e for e in body.body.split("\n"))


def test_downward_band_and_math_casts() -> None:
    body = translate("for (i = n - 1; i >= 0; i--) { float t = sqrtf(i); x[i] = fabs(t) + t; }", SYMBOLS, ("i",))
    (t,) = body.threads
    assert t.step == -1 and t.extent == "(n - 1) - (0) + 1"
    assert "sqrtf((float) i)" in body.body and "fabs((double) t)" in body.body


def test_one_thread_with_own_loops_sets_exit_values() -> None:
    body = translate("for (i = 0; i < n; i++) x[i] = 0;", SYMBOLS, own_loops=True)
    assert body.threads == () and "int i;" in body.locals
    assert "for(i=0;i<n;i++)\n{\n}" in body.exits.replace(" ", "")


@pytest.mark.parametrize(("text", "why"), [
    ("A[i][0] = foo(s);", "calls 'foo'"),
    ("A[0][0] = *p;", "dereferences"),
    ("x[0] = (float) (long) &s;", "address"),
    ("s = A[0][0];", "assigns 's'"),
    ("n++;", "updates 'n'"),
    ("p[0] = 1;", "no declared size"),
    ("x[0] = A[1];", "1 of its 2 subscripts"),
    ("x[0] = q;", "no plain number"),
    ("goto end; end: x[0] = 0;", "Goto"),
    ("return;", "Return"),
    ("x[0] = sizeof(double);", "sizeof"),
    ("{ double A = 1; x[0] = A; }", "declares 'A' again"),
    ("{ double big[1000]; big[0] = 1; }", "too many"),
    ("for (i = 0; i < n; i++) { if (i) break; x[i] = 0; }", ""),
])
def test_refusals(text: str, why: str) -> None:
    if not why:   # a break inside an inner loop of a one-thread body is fine
        translate(text, SYMBOLS, own_loops=True)
        return
    with pytest.raises(Refused, match=why):
        translate(text, SYMBOLS)


def test_band_refusals() -> None:
    with pytest.raises(Refused, match="depend on another parallel loop"):
        translate("for (i = 0; i < n; i++) for (j = i; j < m; j++) A[i][j] = 0;", SYMBOLS, ("i", "j"))
    with pytest.raises(Refused, match="step by one"):
        translate("for (i = 0; i < n; i += 2) x[i] = 0;", SYMBOLS, ("i",))
    with pytest.raises(Refused, match="leaves the parallel loop"):
        translate("for (i = 0; i < n; i++) { if (x[i] > 0) break; x[i] = 1; }", SYMBOLS, ("i",))
    with pytest.raises(Refused, match="under a condition"):
        translate("if (n > 2) for (i = 0; i < n; i++) x[i] = 0;", SYMBOLS, own_loops=True)


def test_last_iteration_writes_back_scalars() -> None:
    body = translate("for (i = 0; i < n; i++) { mdp_priv_s = A[i][0]; A[i][1] = mdp_priv_s; }", SYMBOLS, ("i",),
                     ("double mdp_priv_s;",), last="s = mdp_priv_s;", outs=frozenset({"s"}))
    assert [o.name for o in body.outs] == ["s"] and "mdp_out_s[0] = mdp_priv_s" in body.last


@pytest.mark.parametrize("api", ["opencl", "cuda"])
def test_kernel_source_decodes_the_band(api: str) -> None:
    body = translate("for (i = 0; i < n; i++) for (j = 0; j < m; j++) A[i][j] = s;", SYMBOLS, ("i", "j"))
    src = kernel_source(body, "k", api)
    assert "j = (int)(mdp_lo1 + (mdp_r % mdp_ext1));" in src and "i = (int)(mdp_lo0 + mdp_r);" in src
    assert ("get_global_id(0)" in src) == (api == "opencl") and ("blockIdx.x" in src) == (api == "cuda")


def test_opencl_kernel_builds_on_pocl() -> None:
    cl = pytest.importorskip("pyopencl")
    try:
        ctx = cl.create_some_context(interactive=False)
    except Exception as exc:   # no platform
        pytest.skip(f"no OpenCL device: {exc}")
    body = translate("for (i = 0; i < n; i++) { double t = pow(s, 2); A[i][0] = sqrt(t) + floorf(x[i]); }",
                     SYMBOLS, ("i",))
    cl.Program(ctx, kernel_source(body, "k", "opencl")).build()
    view = {**SYMBOLS, "V": Variable("V", "float", ("n", "((long long)2 * (long long)m)"), "pointer", "float")}
    body = translate("for (i = 0; i < n; i++) V[i][1] = s;", view, ("i",))
    cl.Program(ctx, kernel_source(body, "k", "opencl")).build()
