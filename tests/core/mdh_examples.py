"""Hand-built MdhExprs for the core and backend tests (the front end is tested separately)."""

from __future__ import annotations

from mdpoly.diagnostics import SourceLoc
from mdpoly.ir.mdh import Access, Affine, Buffer, Combine, Dim, MdhExpr, OutputWrite, ScalarFunction

LOC = SourceLoc("t.c", 1, 1)
A = Affine.of


def dim(it: str, extent: int | str, combine: Combine = Combine.CONCAT, lower: int = 0) -> Dim:
    ext = A({}, extent) if isinstance(extent, int) else A({extent: 1})
    return Dim(it, A({}, lower), ext, combine, LOC)


def idx(*names: str | tuple[str, int]) -> tuple[Affine, ...]:
    out = []
    for n in names:
        if isinstance(n, tuple):
            out.append(A({n[0]: 1}, n[1]))
        else:
            out.append(A({n: 1}))
    return tuple(out)


def matmul(m: int, n: int, k: int, ty: str = "float", update: str = "accumulate", init: str | None = None) -> MdhExpr:
    return MdhExpr(
        name="mdp_matmul", loc=LOC,
        dims=(dim("i", m), dim("j", n), dim("k", k, Combine.ADD)),
        buffers=(Buffer("A", ty, (str(m), str(k)), "array"), Buffer("B", ty, (str(k), str(n)), "array"),
                 Buffer("C", ty, (str(m), str(n)), "array", written=True)),
        inputs=(Access("A", idx("i", "k")), Access("B", idx("k", "j"))),
        outputs=(OutputWrite(Access("C", idx("i", "j")), ty, update, init),),  # type: ignore[arg-type]
        f=ScalarFunction(("a", "b"), ("a * b",)),
    )


def matvec(m: int, n: int, ty: str = "float") -> MdhExpr:
    return MdhExpr(
        name="mdp_matvec", loc=LOC,
        dims=(dim("i", m), dim("j", n, Combine.ADD)),
        buffers=(Buffer("M", ty, ("", str(n)), "array"), Buffer("x", ty, ("",), "pointer"),
                 Buffer("y", ty, ("",), "pointer", written=True)),
        inputs=(Access("M", idx("i", "j")), Access("x", idx("j"))),
        outputs=(OutputWrite(Access("y", idx("i")), ty, "assign", "0"),),
        f=ScalarFunction(("m", "v"), ("m * v",)),
    )


def dot(n: int, ty: str = "double") -> MdhExpr:
    return MdhExpr(
        name="mdp_dot", loc=LOC,
        dims=(dim("i", n, Combine.ADD),),
        buffers=(Buffer("x", ty, (str(n),), "array"), Buffer("y", ty, (str(n),), "array"),
                 Buffer("s", ty, (), "scalar", written=True)),
        inputs=(Access("x", idx("i")), Access("y", idx("i"))),
        outputs=(OutputWrite(Access("s", ()), ty, "accumulate"),),
        f=ScalarFunction(("x", "y"), ("x * y",)),
    )


def colmax(m: int, n: int, ty: str = "float") -> MdhExpr:
    return MdhExpr(
        name="mdp_colmax", loc=LOC,
        dims=(dim("i", m, Combine.MAX), dim("j", n)),
        buffers=(Buffer("A", ty, (str(m), str(n)), "array"), Buffer("mx", ty, (str(n),), "array", written=True)),
        inputs=(Access("A", idx("i", "j")),),
        outputs=(OutputWrite(Access("mx", idx("j")), ty, "assign"),),
        f=ScalarFunction(("a",), ("a",)),
    )


def jacobi2d(n: int, ty: str = "float") -> MdhExpr:
    acc = [Access("A", idx(("i", di), ("j", dj))) for di, dj in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))]
    return MdhExpr(
        name="mdp_jacobi", loc=LOC,
        dims=(dim("i", n - 2, lower=1), dim("j", n - 2, lower=1)),
        buffers=(Buffer("A", ty, (str(n), str(n)), "array"), Buffer("B", ty, (str(n), str(n)), "array", written=True)),
        inputs=tuple(acc),
        outputs=(OutputWrite(Access("B", idx("i", "j")), ty),),
        f=ScalarFunction(("c", "n", "s", "w", "e"), ("0.2f * (c + n + s + w + e)",)),
    )


def elementwise_indices(m: int, n: int) -> MdhExpr:
    return MdhExpr(
        name="mdp_ew", loc=LOC,
        dims=(dim("i", m), dim("j", n)),
        buffers=(Buffer("alpha", "int", (), "scalar"), Buffer("X", "int", (str(m), str(n)), "array"),
                 Buffer("Y", "int", (str(m), str(n)), "array", written=True)),
        inputs=(Access("X", idx("i", "j")),),
        outputs=(OutputWrite(Access("Y", idx("i", "j")), "int"),),
        f=ScalarFunction(("x",), ("alpha * x + i * 3 - j",), uses_indices=True),
    )


def mcc(n: int, p: int, q: int, k: int, c: int, r: int, s: int, ty: str = "float") -> MdhExpr:
    red = Combine.ADD
    return MdhExpr(
        name="mdp_mcc", loc=LOC,
        dims=(dim("n", n), dim("p", p), dim("q", q), dim("k", k), dim("r", r, red), dim("s", s, red), dim("c", c, red)),
        buffers=(Buffer("in", ty, (str(n), str(p + r - 1), str(q + s - 1), str(c)), "array"),
                 Buffer("w", ty, (str(k), str(r), str(s), str(c)), "array"),
                 Buffer("out", ty, (str(n), str(p), str(q), str(k)), "array", written=True)),
        inputs=(Access("in", (A({"n": 1}), A({"p": 1, "r": 1}), A({"q": 1, "s": 1}), A({"c": 1}))),
                Access("w", idx("k", "r", "s", "c"))),
        outputs=(OutputWrite(Access("out", idx("n", "p", "q", "k")), ty, "accumulate"),),
        f=ScalarFunction(("a", "b"), ("a * b",)),
    )


def matmul_symbolic(ty: str = "double") -> MdhExpr:
    """C[i][j] = sum_k A[i][k]*B[k][j] with sizes n, m, l passed as int scalars; pointers as VLAs."""
    return MdhExpr(
        name="mdp_mm_sym", loc=LOC,
        dims=(Dim("i", A(), A({"n": 1}), Combine.CONCAT, LOC), Dim("j", A(), A({"m": 1}), Combine.CONCAT, LOC),
              Dim("k", A(), A({"l": 1}), Combine.ADD, LOC)),
        buffers=(Buffer("A", ty, ("", "l"), "array"), Buffer("B", ty, ("", "m"), "array"),
                 Buffer("C", ty, ("", "m"), "array", written=True),
                 Buffer("n", "int", (), "scalar"), Buffer("m", "int", (), "scalar"), Buffer("l", "int", (), "scalar")),
        inputs=(Access("A", idx("i", "k")), Access("B", idx("k", "j"))),
        outputs=(OutputWrite(Access("C", idx("i", "j")), ty, "assign", "0.0"),),
        f=ScalarFunction(("a", "b"), ("a * b",)),
        params=(("n", None), ("m", None), ("l", None)),
    )


def contraction(a: int, b: int, c: int, d: int, e: int, ty: str = "float") -> MdhExpr:
    """Tensor contraction ``C[a][b][c] += sum_{d,e} A[a][e][b][d] * B[d][e][c]``."""
    red = Combine.ADD
    return MdhExpr(
        name="mdp_tc", loc=LOC,
        dims=(dim("a", a), dim("b", b), dim("c", c), dim("d", d, red), dim("e", e, red)),
        buffers=(Buffer("A", ty, (str(a), str(e), str(b), str(d)), "array"),
                 Buffer("B", ty, (str(d), str(e), str(c)), "array"),
                 Buffer("C", ty, (str(a), str(b), str(c)), "array", written=True)),
        inputs=(Access("A", idx("a", "e", "b", "d")), Access("B", idx("d", "e", "c"))),
        outputs=(OutputWrite(Access("C", idx("a", "b", "c")), ty, "accumulate"),),
        f=ScalarFunction(("x", "y"), ("x * y",)),
    )


def stencil3d_symbolic(ty: str = "float") -> MdhExpr:
    """B[z][y][x] = A[z][y][x] + A[z][y][x+1] over z < nz, y < ny, x < nx - 1 (sizes passed as ints)."""
    return MdhExpr(
        name="mdp_st3", loc=LOC,
        dims=(Dim("z", A(), A({"nz": 1}), Combine.CONCAT, LOC), Dim("y", A(), A({"ny": 1}), Combine.CONCAT, LOC),
              Dim("x", A(), A({"nx": 1}, -1), Combine.CONCAT, LOC)),
        buffers=(Buffer("A", ty, ("", "ny", "nx"), "array"), Buffer("B", ty, ("", "ny", "nx"), "array", written=True),
                 Buffer("nz", "int", (), "scalar"), Buffer("ny", "int", (), "scalar"), Buffer("nx", "int", (), "scalar")),
        inputs=(Access("A", idx("z", "y", "x")), Access("A", idx("z", "y", ("x", 1)))),
        outputs=(OutputWrite(Access("B", idx("z", "y", "x")), ty),),
        f=ScalarFunction(("a", "b"), ("a + 2 * b",)),
        params=(("nz", None), ("ny", None), ("nx", None)),
    )


def sum3d_symbolic(ty: str = "double") -> MdhExpr:
    """S[0] = sum over z < nz, y < ny, x < nx of A[z][y][x] (sizes passed as ints)."""
    red = Combine.ADD
    return MdhExpr(
        name="mdp_sum3", loc=LOC,
        dims=(Dim("z", A(), A({"nz": 1}), red, LOC), Dim("y", A(), A({"ny": 1}), red, LOC),
              Dim("x", A(), A({"nx": 1}), red, LOC)),
        buffers=(Buffer("A", ty, ("", "ny", "nx"), "array"), Buffer("S", ty, ("1",), "array", written=True),
                 Buffer("nz", "int", (), "scalar"), Buffer("ny", "int", (), "scalar"), Buffer("nx", "int", (), "scalar")),
        inputs=(Access("A", idx("z", "y", "x")),),
        outputs=(OutputWrite(Access("S", (A(),)), ty, "assign", "0.0"),),
        f=ScalarFunction(("a",), ("a",)),
        params=(("nz", None), ("ny", None), ("nx", None)),
    )
