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

from pycparser import c_ast

from mdpoly.backends.base import GeneratedCode
from mdpoly.backends.c_emit import param_decl
from mdpoly.backends.split_c import (
    MY_LO,
    MY_N,
    RUNNING,
    SplitWrapper,
    affine_sum,
    c_addr,
    c_call,
    c_decl,
    c_id,
    c_str,
    output_ref,
    split_points,
)
from mdpoly.ir.mdh import Affine, Combine
from mdpoly.ir.plan import Assign, Ref
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

class _MpiWrapper(SplitWrapper):
    """Builds the statements of one MPI wrapper function."""

    def __init__(self, split: RankSplit, user_init: bool) -> None:
        super().__init__(split)
        self.user_init = user_init

    def concat_gather(self) -> list[c_ast.Node]:
        out: list[c_ast.Node] = []
        m, split = self.m, self.split
        others = [k for k in self.concat if k != split.dim]
        for g in split.gathers:
            o = m.outputs[g.output]
            target = output_ref(m, o.access)
            if g.rows:
                row0 = self.c(self.em.affine(affine_sum(g.row0, Affine.of({LO: 1}))))
                out.append(c_call("mdp_mpi_gather_rows", c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl(
                    [], c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(["void"])))), c_id(o.access.buffer)),
                    c_id(row0), c_id(EXTENT), c_id(f"({g.row_elems}) * (long long)sizeof({o.elem_type})"),
                    c_id("mdp_size")))
                continue
            buf, inner = f"mdp_all{g.output}", f"mdp_inner{g.output}"
            elem = o.elem_type
            out.append(c_decl(inner, "long long", c_id(self.count(others))))
            out.append(c_decl(buf, elem, c_id(f"({elem} *)mdp_mpi_alloc({self.count(self.concat)}, sizeof({elem}))"),
                              pointer=True))
            order = [split.dim, *others]
            out.append(self.reset_k(f"({MY_LO} - {LO}) * {inner}"))
            out += self.stmts(split_points(split, order, (Assign(Ref(buf, (Affine.of({RUNNING: 1}),)), target),),
                                           mine=True))
            out.append(c_call("mdp_mpi_gather_rows", c_id(buf), c_id("0"), c_id(EXTENT),
                              c_id(f"{inner} * (long long)sizeof({elem})"), c_id("mdp_size")))
            out.append(self.reset_k())
            out += self.stmts(split_points(split, order, (Assign(target, Ref(buf, (Affine.of({RUNNING: 1}),))),),
                                           mine=False))
            out.append(c_call("free", c_id(buf)))
        return out

    def reduction_after(self) -> list[c_ast.Node]:
        """Partial results packed, combined over the ranks, start values and finishing applied."""
        op = self.split.op
        assert op is not None
        out = self.pack_partials()
        for o, w in enumerate(self.m.outputs):
            out.append(c_call("mdp_mpi_allreduce", c_id(f"mdp_red{o}"), c_id("mdp_cnt"),
                              c_id(str(mpi_type(w.elem_type))), c_id(MPI_OPS[op]), c_id("mdp_size")))
        return out + self.apply_partials()

    def function(self) -> str:
        split, m = self.split, self.m
        body: list[c_ast.Node] = [
            c_decl("mdp_rank", "int"), c_decl("mdp_size", "int"), c_decl(MY_LO, "long long"),
            c_decl(MY_N, "long long"), c_decl("mdp_t0", "double"), c_decl("mdp_t1", "double"),
            c_decl("mdp_c0", "double"), c_decl("mdp_c1", "double"),
            c_call("mdp_mpi_start", c_addr("mdp_rank"), c_addr("mdp_size"), c_id("1" if self.user_init else "0")),
            c_call("mdp_mpi_block", c_id(LO), c_id(EXTENT), c_id("mdp_rank"), c_id("mdp_size"), c_addr(MY_LO),
                  c_addr(MY_N)),
        ]
        if split.kind == "reduction" or not all(g.rows for g in split.gathers):
            body.append(c_decl(RUNNING, "long long", c_id("0")))   # the packing loops' running index
        if split.kind == "reduction":
            body += self.reduction_before()
        args = [c_id(MY_LO if b.name == LO else MY_N if b.name == EXTENT else b.name) for b in split.params]
        body += [c_ast.Assignment("=", c_id("mdp_t0"), c_call("mdp_mpi_now")),
                 c_ast.Assignment("=", c_id("mdp_c0"), c_call("mdp_mpi_cpu")),
                 c_ast.FuncCall(c_id(split.sliced.name), c_ast.ExprList(args)),
                 c_ast.Assignment("=", c_id("mdp_c1"), c_call("mdp_mpi_cpu")),
                 c_ast.Assignment("=", c_id("mdp_t1"), c_call("mdp_mpi_now"))]
        body += self.concat_gather() if split.kind == "concat" else self.reduction_after()
        what = "allgatherv" if split.kind == "concat" else "allreduce"
        body.append(c_call("mdp_mpi_profile", c_str(m.name), c_str(what), c_id("mdp_rank"), c_id("mdp_size"),
                          c_id("mdp_t0"), c_id("mdp_t1"), c_id("mdp_c0"), c_id("mdp_c1"), c_call("mdp_mpi_now")))
        params = c_ast.ParamList([param_decl(b) for b in split.params])
        ftype = c_ast.FuncDecl(params, c_ast.TypeDecl(m.name, [], None, c_ast.IdentifierType(["void"])))
        fdef = c_ast.FuncDef(c_ast.Decl(m.name, [], [], ["static"], [], ftype, None, None), None,
                             c_ast.Compound(body))
        return self.c(fdef)


def wrap_for_ranks(code: GeneratedCode, split: RankSplit, user_init: bool = False) -> GeneratedCode:
    """``code`` (of ``split.sliced``) made SPMD over MPI ranks; see the module docstring.

    ``user_init``: the program calls ``MPI_Init`` itself; a call before that runs whole, without MPI."""
    wrapper = _MpiWrapper(split, user_init).function()
    call = re.sub(rf"\b{re.escape(split.sliced.name)}\(", f"{split.original.name}(", code.call)
    # no team variant (a parallel region around host loops would call the per-rank code on the
    # whole range): the wrapper is the one way into the computation
    return replace(code, name=split.original.name, definition=code.definition + "\n" + wrapper, call=call,
                   headers=(*code.headers, "mpi.h"), preamble=code.preamble + HELPERS, team=None)
