"""C for a computation split into blocks of one dimension (``--mpi`` ranks, ``--devices`` slots).

Both wrappers (``mdpoly.backends.mpi``, ``mdpoly.backends.devices``) call the per-block code of
``RankSplit.sliced`` on each block and then either gather the outputs or combine per-block
partial results of a reduction. What they share lives here: small ``c_ast`` builders, the
row-major walk over the points of some dimensions (``split_points``), and ``SplitWrapper``, whose
reduction parts save the outputs' start values before the blocks run (``reduction_before``),
pack each block's partial results (``pack_partials``) and apply the combined partials with the
start values and finishing expressions (``apply_partials``). How the partials travel between
blocks (``MPI_Allreduce``, a host-side combine over device slots) is the wrapper's own business.
"""

from __future__ import annotations

from pycparser import c_ast, c_generator

from mdpoly.backends.c_emit import CEmitter, size_params
from mdpoly.ir.mdh import Access, Affine, Combine, Dim, MdhExpr
from mdpoly.ir.plan import (
    Apply,
    Assign,
    AsType,
    Const,
    FExpr,
    Loop,
    ParallelRegion,
    Ref,
    Stmt,
    ThreadCount,
    Value,
    Var,
)
from mdpoly.ir.ranks import EXTENT, LO, RankSplit

#: The block's first index and length of the split dimension, and the packing loops' running index.
MY_LO, MY_N, RUNNING = "mdp_my_lo", "mdp_my_n", "mdp_k"


# {{{ small c_ast builders

def c_id(name: str) -> c_ast.ID:
    return c_ast.ID(name)


def c_call(name: str, *args: c_ast.Node) -> c_ast.FuncCall:
    return c_ast.FuncCall(c_id(name), c_ast.ExprList(list(args)))


def c_str(text: str) -> c_ast.Constant:
    return c_ast.Constant("string", '"' + text + '"')


def c_decl(name: str, c_type: str, init: c_ast.Node | None = None, pointer: bool = False) -> c_ast.Decl:
    t: c_ast.Node = c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(c_type.split()))
    if pointer:
        t = c_ast.PtrDecl([], t)
    return c_ast.Decl(name, [], [], [], [], t, init, None)


def c_addr(name: str) -> c_ast.UnaryOp:
    return c_ast.UnaryOp("&", c_id(name))


class NoPragmas:
    """Wrapper loops are plain sequential C: no loop pragmas, no thread teams."""

    def loop_pragmas(self, loop: Loop) -> list[str]:
        return []

    def thread_count(self, stmt: ThreadCount) -> c_ast.Node:
        raise TypeError("no thread teams in a split wrapper")

    def region_pragmas(self, region: ParallelRegion) -> list[str]:
        return []

    def thread_id(self) -> c_ast.Node:
        raise TypeError("no thread teams in a split wrapper")

# }}}


def affine_sum(a: Affine, b: Affine) -> Affine:
    terms = dict(a.terms)
    for n, c in b.terms:
        terms[n] = terms.get(n, 0) + c
    return Affine.of(terms, a.constant + b.constant)


def _range(d: Dim, k: int, split: RankSplit, mine: bool) -> tuple[Affine, Affine]:
    """Lower bound and extent of dim ``k`` in the wrapper: the block or the whole range for the
    split dim, else the computation's own."""
    if k == split.dim:
        if mine:
            return Affine.of({MY_LO: 1}), Affine.of({MY_N: 1})
        return Affine.of({LO: 1}), Affine.of({EXTENT: 1})
    return d.lower, d.extent


def split_points(split: RankSplit, dims: list[int], body: tuple[Stmt, ...], mine: bool) -> tuple[Stmt, ...]:
    """``body`` then ``mdp_k += 1`` at every point of ``dims`` (outermost first), in row-major order;
    ``mine``: the split dim runs over the current block only."""
    m = split.original
    stmts: tuple[Stmt, ...] = (*body, Assign(Var(RUNNING), Apply(Combine.ADD, Var(RUNNING), Const("1"))))
    for k in reversed(dims):
        lo, ext = _range(m.dims[k], k, split, mine)
        stmts = (Loop(m.dims[k].iterator, lo, (affine_sum(lo, ext),), 1, stmts, dim=k),)
    return stmts


def output_ref(m: MdhExpr, acc: Access) -> Ref:
    """The element ``acc`` names (a scalar buffer is dereferenced)."""
    buf = m.buffer(acc.buffer)
    return Ref(acc.buffer, acc.index, deref=buf.kind == "scalar")


def _binds(m: MdhExpr, dims: list[int]) -> tuple[tuple[str, Value], ...]:
    return tuple((m.dims[k].iterator, AsType(m.dims[k].iterator_type, Affine.of({m.dims[k].iterator: 1})))
                 for k in dims)


class SplitWrapper:
    """Statement builders of one wrapper function over ``split``."""

    def __init__(self, split: RankSplit) -> None:
        self.split = split
        self.m = split.original
        self.em = CEmitter(NoPragmas(), wide=size_params(split.params) | {LO, EXTENT})
        self.gen = c_generator.CGenerator(reduce_parentheses=True)
        self.concat = [k for k, d in enumerate(self.m.dims) if d.combine is Combine.CONCAT]

    def c(self, node: c_ast.Node) -> str:
        return str(self.gen.visit(node))

    def count(self, dims: list[int]) -> str:
        """C text: the number of points of ``dims`` (whole ranges), each extent clipped at 0."""
        factors = ["1"]
        for k in dims:
            _, ext = _range(self.m.dims[k], k, self.split, mine=False)
            e = self.c(self.em.affine(ext))
            factors.append(f"((long long)({e}) > 0 ? (long long)({e}) : 0)")
        return " * ".join(factors)

    def stmts(self, body: tuple[Stmt, ...]) -> list[c_ast.Node]:
        return self.em.stmts(body)

    def reset_k(self, start: str = "0") -> c_ast.Node:
        return c_ast.Assignment("=", c_id(RUNNING), c_id(start))

    def points(self, dims: list[int], body: tuple[Stmt, ...], mine: bool) -> list[c_ast.Node]:
        """``mdp_k = 0`` then ``split_points`` as C statements."""
        return [self.reset_k(), *self.stmts(split_points(self.split, dims, body, mine))]

    def reduction_before(self) -> list[c_ast.Node]:
        """Buffers ``mdp_red<o>`` for the partial results and ``mdp_start<o>`` for the start values
        (the outputs' values before the blocks run, or their init expressions), the latter filled."""
        m = self.m
        out: list[c_ast.Node] = [c_decl("mdp_cnt", "long long", c_id(self.count(self.concat)))]
        saves: list[Stmt] = []
        for o, w in enumerate(m.outputs):
            out.append(c_decl(f"mdp_red{o}", w.elem_type,
                              c_id(f"({w.elem_type} *)mdp_mpi_alloc(mdp_cnt, sizeof({w.elem_type}))"), pointer=True))
            if w.update == "accumulate" or w.init is not None:
                out.append(c_decl(f"mdp_start{o}", w.elem_type,
                                  c_id(f"({w.elem_type} *)mdp_mpi_alloc(mdp_cnt, sizeof({w.elem_type}))"),
                                  pointer=True))
                start: Value = (output_ref(m, w.access) if w.update == "accumulate" or w.init is None
                                else FExpr(w.init, _binds(m, self.concat), role="init"))
                saves.append(Assign(Ref(f"mdp_start{o}", (Affine.of({RUNNING: 1}),)), start))
        if saves:
            out += self.points(self.concat, tuple(saves), mine=False)
        return out

    def pack_partials(self) -> list[c_ast.Node]:
        """This block's partial results (left in the outputs by the per-block code) into ``mdp_red<o>``."""
        k = (Affine.of({RUNNING: 1}),)
        packs = tuple(Assign(Ref(f"mdp_red{o}", k), output_ref(self.m, w.access)) for o, w in enumerate(self.m.outputs))
        return self.points(self.concat, packs, mine=False)

    def apply_partials(self) -> list[c_ast.Node]:
        """The combined partials in ``mdp_red<o>`` stored into the outputs, combined with the start
        values and finished; the buffers freed."""
        m, op = self.m, self.split.op
        assert op is not None
        k = (Affine.of({RUNNING: 1}),)
        stores: list[Stmt] = []
        for o, w in enumerate(m.outputs):
            value: Value = Ref(f"mdp_red{o}", k)
            if w.update == "accumulate" or w.init is not None:
                value = Apply(op, Ref(f"mdp_start{o}", k), value)
            if w.finish is not None:
                f = w.finish
                binds = ((f.result, value), *((p, output_ref(m, a)) for p, a in zip(f.params, f.inputs)),
                         *_binds(m, self.concat))
                value = FExpr(f.expr, binds, role="finish")
            stores.append(Assign(output_ref(m, w.access), value))
        out = self.points(self.concat, tuple(stores), mine=False)
        for o, w in enumerate(m.outputs):
            out.append(c_call("free", c_id(f"mdp_red{o}")))
            if w.update == "accumulate" or w.init is not None:
                out.append(c_call("free", c_id(f"mdp_start{o}")))
        return out
