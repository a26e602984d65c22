"""``--mpi`` host wrapper: ``wrap_for_ranks(code, split) -> GeneratedCode``, a computation made SPMD over MPI ranks.

Input: the target's ordinary ``GeneratedCode`` of the per-rank computation (``RankSplit.sliced``,
function ``<name>_rank``, whose split dimension runs over two parameters) and the ``RankSplit``.
Output: the same code plus a function ``<name>`` with the parameters of ``<name>_rank``, called
where the call site called ``<name>_rank`` (with the whole range of the split dimension): it
initialises MPI when the program has not, cuts the range into the rank's block, calls
``<name>_rank`` on it, then gathers the outputs (``MPI_Allgatherv``, in place as whole rows, or
through a packed buffer) or combines the partial results (``MPI_Allreduce`` with the combine
operator) and applies the start values and finishing expressions once.

Every rank calls the same collectives in the same order: a call site's run-time checks
(aliasing, preconditions) read only replicated data, so every rank takes the same branch.
Compiled with ``-DMDPOLY_MPI_PROFILE``, each call prints its compute and communication times
to stderr.
"""

from __future__ import annotations

import re
from dataclasses import replace

from pycparser import c_ast, c_generator

from mdpoly.backends.base import GeneratedCode
from mdpoly.backends.c_emit import CEmitter, param_decl, size_params
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

#: C element type -> MPI datatype.
MPI_TYPES: dict[str, str] = {
    "float": "MPI_FLOAT", "double": "MPI_DOUBLE", "long double": "MPI_LONG_DOUBLE",
    "char": "MPI_CHAR", "signed char": "MPI_SIGNED_CHAR", "unsigned char": "MPI_UNSIGNED_CHAR",
    "short": "MPI_SHORT", "short int": "MPI_SHORT", "signed short": "MPI_SHORT",
    "unsigned short": "MPI_UNSIGNED_SHORT", "unsigned short int": "MPI_UNSIGNED_SHORT",
    "int": "MPI_INT", "signed": "MPI_INT", "signed int": "MPI_INT",
    "unsigned": "MPI_UNSIGNED", "unsigned int": "MPI_UNSIGNED",
    "long": "MPI_LONG", "long int": "MPI_LONG", "signed long": "MPI_LONG",
    "unsigned long": "MPI_UNSIGNED_LONG", "unsigned long int": "MPI_UNSIGNED_LONG",
    "long long": "MPI_LONG_LONG", "long long int": "MPI_LONG_LONG",
    "unsigned long long": "MPI_UNSIGNED_LONG_LONG", "unsigned long long int": "MPI_UNSIGNED_LONG_LONG",
}

#: Reduction combine operator -> predefined MPI operation. Every reduction operator of the MDH
#: IR has one, so no user ``MPI_Op`` is needed (a new operator would register one here).
MPI_OPS: dict[Combine, str] = {
    Combine.ADD: "MPI_SUM", Combine.MUL: "MPI_PROD", Combine.MAX: "MPI_MAX", Combine.MIN: "MPI_MIN",
    Combine.BAND: "MPI_BAND", Combine.BOR: "MPI_BOR", Combine.BXOR: "MPI_BXOR",
}

_QUALS = {"const", "volatile", "restrict", "__restrict", "__restrict__"}


def mpi_type(elem_type: str) -> str | None:
    """The MPI datatype for reducing values of a C element type; ``None`` when it has none (a
    typedef, ``_Bool``). Plain ``char`` is a text type in MPI, invalid in reductions: it becomes
    the signed or unsigned char type, as the platform's ``char`` is."""
    t = " ".join(w for w in elem_type.split() if w not in _QUALS)
    if t == "char":
        return "(CHAR_MIN < 0 ? MPI_SIGNED_CHAR : MPI_UNSIGNED_CHAR)"
    return MPI_TYPES.get(t)


#: Helpers shared by every wrapper of a file (include-guarded: each nest's preamble repeats them).
HELPERS = r"""#ifndef MDP_MPI_HELPERS
#define MDP_MPI_HELPERS
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__GNUC__)
#define MDP_MPI_UNUSED __attribute__((unused))
#else
#define MDP_MPI_UNUSED
#endif
#ifdef MDPOLY_MPI_PROFILE
#define MDP_MPI_PROFILE 1
#else
#define MDP_MPI_PROFILE 0
#endif
static void mdp_mpi_finalize(void)
{
  int done = 0;
  MPI_Finalized(&done);
  if (!done)
    MPI_Finalize();
}
/* Every rank runs main on replicated data, so every rank reaches the split computations in the
   same order and takes the same branch at their run-time checks (which read only replicated
   data): all ranks call the same collectives in the same order.
   MPI is the program's to initialise. When it has not (yet): a program that calls MPI_Init
   itself (user_init) will do so later, so this call runs whole on every process without MPI
   (size 1: no collectives), as after MPI_Finalize; otherwise the first split computation
   initialises MPI and finalises it at exit. */
MDP_MPI_UNUSED static void mdp_mpi_start(int *rank, int *size, int user_init)
{
  int ready = 0, done = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  if (!ready || done)
  {
    if (user_init || done)
    {
      *rank = 0;
      *size = 1;
      return;
    }
    MPI_Init(NULL, NULL);
    atexit(mdp_mpi_finalize);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}
/* Block r of size blocks of [lo, lo + n): the first n % size blocks are one longer. */
MDP_MPI_UNUSED static void mdp_mpi_block(long long lo, long long n, int r, int size, long long *first, long long *count)
{
  long long q, m;
  if (n < 0)
    n = 0;
  q = n / size;
  m = n % size;
  *first = lo + r * q + (r < m ? r : m);
  *count = q + (r < m ? 1 : 0);
}
MDP_MPI_UNUSED static void mdp_mpi_fail(const char *what)
{
  int ready = 0, done = 0;
  fprintf(stderr, "mdpoly: %s\n", what);
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  if (ready && !done)
    MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}
MDP_MPI_UNUSED static void *mdp_mpi_alloc(long long count, size_t elem)
{
  void *p = malloc((size_t)(count > 0 ? count : 0) * elem + 1);
  if (!p)
    mdp_mpi_fail("out of memory");
  return p;
}
/* Rank r holds the rows row0 + block r of [0, n) (rows of row_bytes bytes from base); afterwards
   every rank holds all of them. */
MDP_MPI_UNUSED static void mdp_mpi_gather_rows(void *base, long long row0, long long n, long long row_bytes, int size)
{
  MPI_Datatype row;
  int *counts, *displs, r;
  long long first, count;
  if (n <= 0 || row_bytes <= 0 || size == 1)
    return;
  if (row_bytes > INT_MAX || row0 + n > INT_MAX)
    mdp_mpi_fail("a gathered output is too large for MPI_Allgatherv");
  counts = (int *)malloc(size * sizeof(int));
  displs = (int *)malloc(size * sizeof(int));
  if (!counts || !displs)
    mdp_mpi_fail("out of memory");
  for (r = 0; r < size; r++)
  {
    mdp_mpi_block(0, n, r, size, &first, &count);
    counts[r] = (int)count;
    displs[r] = (int)(row0 + first);
  }
  MPI_Type_contiguous((int)row_bytes, MPI_BYTE, &row);
  MPI_Type_commit(&row);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, base, counts, displs, row, MPI_COMM_WORLD);
  MPI_Type_free(&row);
  free(counts);
  free(displs);
}
MDP_MPI_UNUSED static void mdp_mpi_allreduce(void *buf, long long count, MPI_Datatype type, MPI_Op op, int size)
{
  if (count <= 0 || size == 1)
    return;
  if (count > INT_MAX)
    mdp_mpi_fail("a reduced output is too large for MPI_Allreduce");
  MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, type, op, MPI_COMM_WORLD);
}
MDP_MPI_UNUSED static double mdp_mpi_now(void)
{
  int ready = 0, done = 0;
  if (MDP_MPI_PROFILE)
  {
    MPI_Initialized(&ready);
    MPI_Finalized(&done);
  }
  return ready && !done ? MPI_Wtime() : 0.0;
}
MDP_MPI_UNUSED static double mdp_mpi_cpu(void)
{
  return MDP_MPI_PROFILE ? (double)clock() / CLOCKS_PER_SEC : 0.0;
}
/* compute wall time (t0..t1), its processor time (c0..c1: on a shared machine the rank's own
   work), then the collective's wall time (t1..t2) */
MDP_MPI_UNUSED static void mdp_mpi_profile(const char *name, const char *what, int rank, int size,
                                           double t0, double t1, double c0, double c1, double t2)
{
  if (MDP_MPI_PROFILE)
    fprintf(stderr, "mdpoly-mpi %s rank %d/%d: compute %.6f s (cpu %.6f s), %s %.6f s\n", name, rank, size,
            t1 - t0, c1 - c0, what, t2 - t1);
}
#endif
"""

# {{{ small c_ast builders

_MY_LO, _MY_N, _K = "mdp_my_lo", "mdp_my_n", "mdp_k"


def _id(name: str) -> c_ast.ID:
    return c_ast.ID(name)


def _call(name: str, *args: c_ast.Node) -> c_ast.FuncCall:
    return c_ast.FuncCall(_id(name), c_ast.ExprList(list(args)))


def _str(text: str) -> c_ast.Constant:
    return c_ast.Constant("string", '"' + text + '"')


def _decl(name: str, c_type: str, init: c_ast.Node | None = None, pointer: bool = False) -> c_ast.Decl:
    t: c_ast.Node = c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(c_type.split()))
    if pointer:
        t = c_ast.PtrDecl([], t)
    return c_ast.Decl(name, [], [], [], [], t, init, None)


def _addr(name: str) -> c_ast.UnaryOp:
    return c_ast.UnaryOp("&", _id(name))


class _NoPragmas:
    """Wrapper loops are plain sequential C."""

    def loop_pragmas(self, loop: Loop) -> list[str]:
        return []

    def thread_count(self, stmt: ThreadCount) -> c_ast.Node:
        raise TypeError("no thread teams in the MPI wrapper")

    def region_pragmas(self, region: ParallelRegion) -> list[str]:
        return []

    def thread_id(self) -> c_ast.Node:
        raise TypeError("no thread teams in the MPI wrapper")

# }}}


def _sum(a: Affine, b: Affine) -> Affine:
    terms = dict(a.terms)
    for n, c in b.terms:
        terms[n] = terms.get(n, 0) + c
    return Affine.of(terms, a.constant + b.constant)


def _range(d: Dim, k: int, split: RankSplit, mine: bool) -> tuple[Affine, Affine]:
    """Lower bound and extent of dim ``k`` in the wrapper: the rank's block or the whole range
    for the split dim, else the computation's own."""
    if k == split.dim:
        if mine:
            return Affine.of({_MY_LO: 1}), Affine.of({_MY_N: 1})
        return Affine.of({LO: 1}), Affine.of({EXTENT: 1})
    return d.lower, d.extent


def _points(split: RankSplit, dims: list[int], body: tuple[Stmt, ...], mine: bool) -> tuple[Stmt, ...]:
    """``body`` then ``mdp_k += 1`` at every point of ``dims`` (outermost first), in row-major order."""
    m = split.original
    stmts: tuple[Stmt, ...] = (*body, Assign(Var(_K), Apply(Combine.ADD, Var(_K), Const("1"))))
    for k in reversed(dims):
        lo, ext = _range(m.dims[k], k, split, mine)
        stmts = (Loop(m.dims[k].iterator, lo, (_sum(lo, ext),), 1, stmts, dim=k),)
    return stmts


def _ref(m: MdhExpr, acc: Access) -> Ref:
    buf = m.buffer(acc.buffer)
    return Ref(acc.buffer, acc.index, deref=buf.kind == "scalar")


def _binds(m: MdhExpr, dims: list[int]) -> tuple[tuple[str, Value], ...]:
    return tuple((m.dims[k].iterator, AsType(m.dims[k].iterator_type, Affine.of({m.dims[k].iterator: 1})))
                 for k in dims)


class _Wrapper:
    """Builds the statements of one wrapper function."""

    def __init__(self, split: RankSplit, user_init: bool) -> None:
        self.split = split
        self.user_init = user_init
        self.m = split.original
        self.em = CEmitter(_NoPragmas(), wide=size_params(split.params) | {LO, EXTENT})
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
        return c_ast.Assignment("=", _id(_K), _id(start))

    def concat_gather(self) -> list[c_ast.Node]:
        out: list[c_ast.Node] = []
        m, split = self.m, self.split
        others = [k for k in self.concat if k != split.dim]
        for g in split.gathers:
            o = m.outputs[g.output]
            target = _ref(m, o.access)
            if g.rows:
                row0 = self.c(self.em.affine(_sum(g.row0, Affine.of({LO: 1}))))
                out.append(_call("mdp_mpi_gather_rows", c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl(
                    [], c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(["void"])))), _id(o.access.buffer)),
                    _id(row0), _id(EXTENT), _id(f"({g.row_elems}) * (long long)sizeof({o.elem_type})"),
                    _id("mdp_size")))
                continue
            buf, inner = f"mdp_all{g.output}", f"mdp_inner{g.output}"
            elem = o.elem_type
            out.append(_decl(inner, "long long", _id(self.count(others))))
            out.append(_decl(buf, elem, _id(f"({elem} *)mdp_mpi_alloc({self.count(self.concat)}, sizeof({elem}))"),
                             pointer=True))
            order = [split.dim, *others]
            out.append(self.reset_k(f"({_MY_LO} - {LO}) * {inner}"))
            out += self.stmts(_points(split, order, (Assign(Ref(buf, (Affine.of({_K: 1}),)), target),), mine=True))
            out.append(_call("mdp_mpi_gather_rows", _id(buf), _id("0"), _id(EXTENT),
                             _id(f"{inner} * (long long)sizeof({elem})"), _id("mdp_size")))
            out.append(self.reset_k())
            out += self.stmts(_points(split, order, (Assign(target, Ref(buf, (Affine.of({_K: 1}),))),), mine=False))
            out.append(_call("free", _id(buf)))
        return out

    def reduction_before(self) -> list[c_ast.Node]:
        """Buffers for the start values and partial results; the start values saved."""
        m = self.m
        out: list[c_ast.Node] = [_decl("mdp_cnt", "long long", _id(self.count(self.concat)))]
        saves: list[Stmt] = []
        for o, w in enumerate(m.outputs):
            out.append(_decl(f"mdp_red{o}", w.elem_type, _id(f"({w.elem_type} *)mdp_mpi_alloc(mdp_cnt, sizeof({w.elem_type}))"),
                             pointer=True))
            if w.update == "accumulate" or w.init is not None:
                out.append(_decl(f"mdp_start{o}", w.elem_type,
                                 _id(f"({w.elem_type} *)mdp_mpi_alloc(mdp_cnt, sizeof({w.elem_type}))"), pointer=True))
                start: Value = (_ref(m, w.access) if w.update == "accumulate" or w.init is None
                                else FExpr(w.init, _binds(m, self.concat), role="init"))
                saves.append(Assign(Ref(f"mdp_start{o}", (Affine.of({_K: 1}),)), start))
        if saves:
            out.append(self.reset_k())
            out += self.stmts(_points(self.split, self.concat, tuple(saves), mine=False))
        return out

    def reduction_after(self) -> list[c_ast.Node]:
        """Partial results packed, combined over the ranks, start values and finishing applied."""
        m, op = self.m, self.split.op
        assert op is not None
        k = (Affine.of({_K: 1}),)
        packs = tuple(Assign(Ref(f"mdp_red{o}", k), _ref(m, w.access)) for o, w in enumerate(m.outputs))
        out: list[c_ast.Node] = [self.reset_k(), *self.stmts(_points(self.split, self.concat, packs, mine=False))]
        for o, w in enumerate(m.outputs):
            out.append(_call("mdp_mpi_allreduce", _id(f"mdp_red{o}"), _id("mdp_cnt"), _id(str(mpi_type(w.elem_type))),
                             _id(MPI_OPS[op]), _id("mdp_size")))
        stores: list[Stmt] = []
        for o, w in enumerate(m.outputs):
            value: Value = Ref(f"mdp_red{o}", k)
            if w.update == "accumulate" or w.init is not None:
                value = Apply(op, Ref(f"mdp_start{o}", k), value)
            if w.finish is not None:
                f = w.finish
                binds = ((f.result, value), *((p, _ref(m, a)) for p, a in zip(f.params, f.inputs)),
                         *_binds(m, self.concat))
                value = FExpr(f.expr, binds, role="finish")
            stores.append(Assign(_ref(m, w.access), value))
        out += [self.reset_k(), *self.stmts(_points(self.split, self.concat, tuple(stores), mine=False))]
        for o, w in enumerate(m.outputs):
            out.append(_call("free", _id(f"mdp_red{o}")))
            if w.update == "accumulate" or w.init is not None:
                out.append(_call("free", _id(f"mdp_start{o}")))
        return out

    def function(self) -> str:
        split, m = self.split, self.m
        body: list[c_ast.Node] = [
            _decl("mdp_rank", "int"), _decl("mdp_size", "int"), _decl(_MY_LO, "long long"),
            _decl(_MY_N, "long long"), _decl("mdp_t0", "double"), _decl("mdp_t1", "double"),
            _decl("mdp_c0", "double"), _decl("mdp_c1", "double"),
            _call("mdp_mpi_start", _addr("mdp_rank"), _addr("mdp_size"), _id("1" if self.user_init else "0")),
            _call("mdp_mpi_block", _id(LO), _id(EXTENT), _id("mdp_rank"), _id("mdp_size"), _addr(_MY_LO),
                  _addr(_MY_N)),
        ]
        if split.kind == "reduction" or not all(g.rows for g in split.gathers):
            body.append(_decl(_K, "long long", _id("0")))   # the packing loops' running index
        if split.kind == "reduction":
            body += self.reduction_before()
        args = [_id(_MY_LO if b.name == LO else _MY_N if b.name == EXTENT else b.name) for b in split.params]
        body += [c_ast.Assignment("=", _id("mdp_t0"), _call("mdp_mpi_now")),
                 c_ast.Assignment("=", _id("mdp_c0"), _call("mdp_mpi_cpu")),
                 c_ast.FuncCall(_id(split.sliced.name), c_ast.ExprList(args)),
                 c_ast.Assignment("=", _id("mdp_c1"), _call("mdp_mpi_cpu")),
                 c_ast.Assignment("=", _id("mdp_t1"), _call("mdp_mpi_now"))]
        body += self.concat_gather() if split.kind == "concat" else self.reduction_after()
        what = "allgatherv" if split.kind == "concat" else "allreduce"
        body.append(_call("mdp_mpi_profile", _str(m.name), _str(what), _id("mdp_rank"), _id("mdp_size"),
                          _id("mdp_t0"), _id("mdp_t1"), _id("mdp_c0"), _id("mdp_c1"), _call("mdp_mpi_now")))
        params = c_ast.ParamList([param_decl(b) for b in split.params])
        ftype = c_ast.FuncDecl(params, c_ast.TypeDecl(m.name, [], None, c_ast.IdentifierType(["void"])))
        fdef = c_ast.FuncDef(c_ast.Decl(m.name, [], [], ["static"], [], ftype, None, None), None,
                             c_ast.Compound(body))
        return self.c(fdef)


def wrap_for_ranks(code: GeneratedCode, split: RankSplit, user_init: bool = False) -> GeneratedCode:
    """``code`` (of ``split.sliced``) made SPMD over MPI ranks; see the module docstring.

    ``user_init``: the program calls ``MPI_Init`` itself; a call before that runs whole, without MPI."""
    wrapper = _Wrapper(split, user_init).function()
    call = re.sub(rf"\b{re.escape(split.sliced.name)}\(", f"{split.original.name}(", code.call)
    # no team variant (a parallel region around host loops would call the per-rank code on the
    # whole range): the wrapper is the one way into the computation
    return replace(code, name=split.original.name, definition=code.definition + "\n" + wrapper, call=call,
                   headers=(*code.headers, "mpi.h"), preamble=code.preamble + HELPERS, team=None)
