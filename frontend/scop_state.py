"""The state ``NestBuilder`` shares among its parts: one candidate nest -> the model built so far.

``NestBuilder`` (``mdpoly.frontend.scop``) is split along statement / expression / loop-header
lines into classes over this one shared state (a first split: the parts are mixins that read
and write the same attributes, not objects with their own data):

- ``NestState`` (here): the attributes, filled in while the nest is visited, with the small
  helpers every part uses (``_fail``, ``_iterators``, ``written_in``...);
- ``mdpoly.frontend.scop_exprs.NestExprs``: affine and polynomial subscripts, accesses and
  right-hand sides;
- ``mdpoly.frontend.scop_loops.LoopHeaders``: ``for`` headers (bounds, steps, induction variables);
- ``mdpoly.frontend.scop_statements.NestStatements``: statements (``if``, assignments,
  declarations, local accumulators, predicated updates);
- ``mdpoly.frontend.scop.NestBuilder``: all of them, plus ``build``.

Also the exceptions and AST helpers those parts share.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from mdpoly.diagnostics import SourceLoc, UnsupportedInput
from mdpoly.frontend.candidates import Candidate, loc_of
from mdpoly.frontend.delinearize import Delinearizer, Layout
from mdpoly.frontend.opaque_reads import OpaqueRead
from mdpoly.frontend.scatter import ScatterUpdate
from mdpoly.frontend.symbols import SymbolTable
from mdpoly.ir.mdh import Access, Affine, Precondition
from mdpoly.ir.scop import Expr, Loop, Statement, Variable


class _NotAffine(Exception):
    pass


class _NotPrivate(Exception):
    """Scalar ``name`` cannot be private to the iterations: rebuild the model with it shared."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _NotRebound(Exception):
    """Temporary ``name``, declared in the nest, is read after the nest overwrote an input of its
    value (``_Stale``): rebuild the model with it an expanded local, one per iteration of the
    loops around its declaration (a rebound temporary, ``NestState.rebound``, or one declared
    once: ``float out = x[i] + z; z = 0.5f * out; x[i] = out;``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _int_constant(node: c_ast.Constant) -> int:
    if "int" not in node.type and node.type not in ("long", "unsigned"):
        raise _NotAffine
    v = node.value.rstrip("uUlL")
    if v[:2].lower() == "0x":
        return int(v, 16)
    return int(v, 8) if len(v) > 1 and v.startswith("0") else int(v)


class _WrittenNames(c_ast.NodeVisitor):
    """Names assigned (``=``, ``op=``, ``++``/``--``) or declared anywhere inside a nest."""

    def __init__(self) -> None:
        self.written: set[str] = set()
        self.declared: set[str] = set()
        self.counts: dict[str, int] = {}  # writes per name
        self.iterators: set[str] = set()

    def _write(self, name: str) -> None:
        self.written.add(name)
        self.counts[name] = self.counts.get(name, 0) + 1

    def visit_For(self, node: c_ast.For) -> None:
        init = node.init
        if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
            self.iterators.add(init.lvalue.name)
        elif isinstance(init, c_ast.DeclList):
            self.iterators.update(d.name for d in init.decls if d.name)
        self.generic_visit(node)

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        self._write(_base_name(node.lvalue))
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--"):
            self._write(_base_name(node.expr))
        self.generic_visit(node)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name:
            self.declared.add(node.name)
        self.generic_visit(node)


def _names_in(node: c_ast.Node) -> set[str]:
    """Every identifier in an expression."""
    out: set[str] = set()

    class _V(c_ast.NodeVisitor):
        def visit_ID(self, n: c_ast.ID) -> None:
            out.add(n.name)

    _V().visit(node)
    return out


def _base_name(node: c_ast.Node) -> str:
    while isinstance(node, c_ast.ArrayRef):
        node = node.name
    if isinstance(node, c_ast.UnaryOp) and node.op == "*":
        return _base_name(node.expr)
    return node.name if isinstance(node, c_ast.ID) else "<expr>"


@dataclass(frozen=True, slots=True)
class _Stale:
    """A temporary whose inputs a later statement overwrote (it cannot be inlined any more)."""

    name: str
    buffer: str


class NestState(c_ast.NodeVisitor):
    """What ``NestBuilder`` knows about one candidate while it visits it (see the module docstring)."""

    def __init__(self, cand: Candidate, symbols: SymbolTable, privatizable: frozenset[str] = frozenset(),
                 layouts: dict[str, Layout] | None = None) -> None:
        self.cand = cand
        self.sym = symbols
        wn = _WrittenNames()
        wn.visit(cand.node)
        self.written = wn.written
        self.nest_locals = wn.declared
        #: scalars declared before the nest, dead after it, that may be private to each iteration
        #: (``mdpoly.frontend.scop.privatizable_scalars``): an assignment ``s = e`` declares them
        self.privatizable = privatizable
        self.write_counts = wn.counts
        self.loops: list[Loop] = []
        self.stack: list[int] = []          # indices of the enclosing loops
        self.positions: list[int] = [0]     # next textual position at each level
        self.stmt_positions: list[int] = []  # positions of the enclosing loops
        self.statements: list[Statement] = []
        self.temps: dict[str, Expr | _Stale] = {}
        #: temporaries declared in a block and reassigned only by statements of that same block
        #: (``double dx = a - b; dx -= box * rint(dx / box);``): each assignment gives the
        #: temporary a new value to inline (``NestStatements._rebind``), none is a statement
        self.rebound: set[str] = set()
        #: inside how many ``while`` loops the visit is (``NestStatements._while_once``)
        self.while_depth = 0
        #: arrays read inside a ``while`` loop at subscripts the loop changes (opaque, never inspected)
        self.while_gathered: set[str] = set()
        self.rebound_types: dict[str, Variable | None] = {}   # their declared types
        self.not_rebound: frozenset[str] = frozenset()   # names a rebuild keeps as expanded locals
        self.local_accs: dict[str, Access] = {}  # written locals in scope -> their expanded access
        #: arrays declared in the nest's body (``float f[Q];``, for a plain parallel loop's model
        #: only): every element is one cell per iteration of the loops around the declaration
        self.local_arrays: dict[str, Access] = {}
        self.params: list[str] = []
        self.variables: dict[str, Variable] = {}
        self.preconditions: list[Precondition] = []
        self.guards: tuple[Affine, ...] = ()  # affine conditions of the enclosing ifs, each >= 0
        #: the C condition of enclosing ``if``s whose domain is no convex set (``i != j``)
        self.predicate: Expr | None = None
        #: bounds every piece of those predicates implies within the loops (``implied_bounds``):
        #: where the reads under them are evaluated, for the range checks of delinearized reads
        self.predicate_bounds: tuple[Affine, ...] = ()
        #: strided loops in scope: user iterator -> (start, step, model iterator, C type, start expression)
        self.strided: dict[str, tuple[Affine, int, str, str, Expr]] = {}
        self.strided_done: set[str] = set()
        #: size parameters standing for products of parameters (``mdp_p_m_n``): name -> factors
        self.products: dict[str, tuple[str, ...]] = {}
        #: factors that are sums of size parameters (``nx + 2``) become size parameters of their
        #: own where they multiply iterators (``NestExprs._sum_stride``); off when a model with them
        #: was refused and is rebuilt without (``extract_scop``)
        self.sum_strides = True
        #: the size parameters made so (``mdp_sum_nxp2``)
        self.sum_parameters: set[str] = set()
        #: set while a loop bound is modelled (``LoopHeaders._bound``): its C value is compared with
        #: the model before the nest runs, so a product that may wrap (``(size_t) nq * n``) is
        #: modelled there (``mdpoly.frontend.bound_products``)
        self.in_loop_bound = False
        #: the product parameters modelled only under that comparison
        self.wrapping_products: set[str] = set()
        #: induction variables of loop headers (``j`` in ``for (i = 0, j = n - 1; ...; i++, j--)``):
        #: name -> (affine value, C expression, C type)
        self.inductions: dict[str, tuple[Affine, Expr, str]] = {}
        #: flat arrays indexed with polynomial subscripts, viewed as multi-dimensional arrays
        #: (``mdpoly.frontend.delinearize``); ``layouts`` fix their views when the model is rebuilt
        self.delin = Delinearizer(layouts)
        self.flat_accesses: set[str] = set()  # arrays indexed with affine (one-dimensional) subscripts
        #: gathers read without locating them (``mdpoly.frontend.opaque_reads``), where allowed
        self.opaque_ok = False
        #: scalars declared before the nest that an opaque read's subscript may read like the nest's
        #: own temporaries (``privatizable_scalars``: the privatizer proves no value flows in)
        self.opaque_temps: frozenset[str] = frozenset()
        self.opaque: list[OpaqueRead] = []
        #: arrays the nest writes that the subscripts of opaque reads read (``Scop.index_arrays_written``)
        self.index_arrays_written: frozenset[str] = frozenset()
        #: updates (and reads) of arrays at indices the model does not know, in the same model
        #: (``mdpoly.frontend.scatter``); a read is dropped once it proves the accumulator of an update
        self.scatter: list[ScatterUpdate] = []

    def _loc(self, node: c_ast.Node) -> SourceLoc:
        return loc_of(node, self.cand.loc)

    def _fail(self, node: c_ast.Node, code: str, message: str) -> UnsupportedInput:
        return UnsupportedInput(message, self._loc(node), code)

    def written_in(self, node: c_ast.Node) -> set[str]:
        wn = _WrittenNames()
        wn.visit(node)
        return wn.written

    def _next_position(self) -> int:
        p = self.positions[-1]
        self.positions[-1] += 1
        return p

    def _iterators(self) -> list[str]:
        return [self.loops[k].iterator for k in self.stack]
