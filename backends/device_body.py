"""A schedule item's C text -> device code for one thread: ``translate(text, ...) -> DeviceBody | str``.

The GPU forms of the schedule items that are no MDH computation (``PrivateLoop``: one device
thread per iteration of its parallel band; a host statement of a resident loop: one thread) run
the item's own C on the device. ``translate`` parses the text (pycparser, inside a dummy
function), takes the outermost ``len(parallel)`` loops as the thread band (their bounds over
names the band does not assign, unit steps up or down), and rewrites the rest for a thread:

* every access to an array declared outside the item (``symbols``: the front end's declarations,
  ``mdpoly.frontend.device_symbols``) becomes a flat subscript of a global pointer,
  ``A[((long)(i) * (m)) + (j)]`` row-major over the declared extents (constants or size
  parameters); an array must be subscripted in full wherever it appears;
* a scalar declared outside that the item only reads is passed by value (so are the names in
  the loop bounds and in the arrays' extents);
* the item's own declarations, the band's and inner loops' iterators and the ``locals`` given
  (the private copies of temporaries) are thread locals; a local array must have constant
  extents of at most ``MAX_LOCAL_ELEMENTS`` elements;
* float math functions keep their names, their arguments cast to the C argument type (OpenCL's
  overloads and CUDA's C++ overloads would otherwise pick another precision for an integer or a
  float argument of a double function);
* ``last``: C run after the body by the thread of the sequentially last iteration (the copies
  back of private temporaries); the outside scalars it assigns (``outs``) come back through a
  one-element buffer each.

Anything it cannot prove it translates exactly is refused with a sentence: calls of other
functions, pointer arithmetic or dereference, address-of, member access, ``sizeof``, jumps out
of the item (``goto``, ``return``, a ``break``/``continue`` of the band), writes to outside
scalars (besides ``outs``), an array used without all its subscripts or with an unknown first
extent, types that are not plain numbers. Nothing here decides whether it pays.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from pycparser import c_ast, c_generator, c_parser

from mdpoly.ir.expr_text import parse_expr
from mdpoly.ir.nest import TILE_BARRIER, TILE_THREAD, TILE_THREADS
from mdpoly.ir.scop import Variable

#: The largest local array (elements) a device thread keeps.
MAX_LOCAL_ELEMENTS = 256

#: Math functions of double arguments and of float arguments (C99 names), with their arity.
DOUBLE_MATH = {"sqrt": 1, "exp": 1, "log": 1, "log10": 1, "pow": 2, "fabs": 1, "sin": 1, "cos": 1, "tan": 1,
               "tanh": 1, "atan": 1, "atan2": 2, "floor": 1, "ceil": 1, "fmax": 2, "fmin": 2, "exp2": 1, "log2": 1}
FLOAT_MATH = {"sqrtf": 1, "expf": 1, "logf": 1, "fabsf": 1, "sinf": 1, "cosf": 1, "tanhf": 1, "powf": 2,
              "fminf": 2, "fmaxf": 2, "floorf": 1, "ceilf": 1}

#: Scalar types a device thread may hold, with their spelling in device code (OpenCL C has no
#: ``long long``; its ``long`` is 64 bits, as CUDA's is on 64-bit Linux).
_TYPES = {
    "char": "char", "signed char": "char", "unsigned char": "uchar", "short": "short", "short int": "short",
    "unsigned short": "ushort", "unsigned short int": "ushort", "int": "int", "signed": "int", "signed int": "int",
    "unsigned": "uint", "unsigned int": "uint", "long": "long", "long int": "long", "long long": "long",
    "long long int": "long", "unsigned long": "ulong", "unsigned long int": "ulong",
    "unsigned long long": "ulong", "unsigned long long int": "ulong", "float": "float", "double": "double",
}


#: Words of the number types, which a loop bound's casts spell.
_TYPE_WORDS = frozenset(w for t in _TYPES for w in t.split())

#: Bytes of the device types.
_SIZES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8, "float": 4,
          "double": 8}


@dataclass(frozen=True, slots=True)
class DeviceArray:
    """A global array the item uses: ``host_type`` as declared (for ``sizeof`` on the host),
    ``device_type`` spelled for the device, ``extents`` the declared ones (C text)."""

    name: str
    host_type: str
    device_type: str
    extents: tuple[str, ...]
    read: bool
    written: bool

    def count(self) -> str:
        """Its element count as C text over the call site's names."""
        return " * ".join(f"(size_t)({e})" for e in self.extents)


@dataclass(frozen=True, slots=True)
class DeviceScalar:
    """An outside scalar: ``host_type`` as declared, ``device_type`` spelled for the device."""

    name: str
    host_type: str
    device_type: str


@dataclass(frozen=True, slots=True)
class ThreadLoop:
    """One loop of the thread band: iteration ``t`` (0-based) of it sets ``iterator`` (of
    ``device_type``) to ``lower + step * t``, for ``t < extent`` (C text over the scalars)."""

    iterator: str
    device_type: str
    lower: str
    extent: str
    step: int


@dataclass(frozen=True, slots=True)
class DeviceBody:
    """An item as device code for one thread (see the module docstring). ``threads``: the band,
    outermost first (``()``: one thread); ``locals``: declarations at the thread's start;
    ``body``/``last``: device C; ``fp64``: it computes in ``double``."""

    threads: tuple[ThreadLoop, ...]
    locals: tuple[str, ...]
    body: str
    last: str
    arrays: tuple[DeviceArray, ...]
    scalars: tuple[DeviceScalar, ...]
    outs: tuple[DeviceScalar, ...]
    fp64: bool
    #: host C run after the kernel that leaves the item's loop iterators declared outside it at
    #: their exit values (its loop headers around nothing; ``""``: none, or not asked for)
    exits: str = ""
    #: threads of the work-group that runs each iteration of the band together (``translate``'s
    #: ``group``; at most this many, fewer where the compiled kernel allows fewer); 0: one thread each
    group: int = 0

    def bytes(self) -> int | None:
        """The bytes its arrays hold (what a call without resident data copies in), where every
        extent is a constant; else ``None``."""
        total = 0
        for a in self.arrays:
            if not all(e.strip().isdigit() for e in a.extents):
                return None
            n = _SIZES.get(a.device_type, 8)
            for e in a.extents:
                n *= int(e)
            total += n
        return total


class Refused(Exception):
    """The item cannot be translated exactly; the message says why."""


def device_type(ctype: str) -> str | None:
    """The device spelling of the plain number type ``ctype``, or ``None``."""
    return _TYPES.get(" ".join(ctype.split()))


def _gen() -> c_generator.CGenerator:
    return c_generator.CGenerator(reduce_parentheses=True)


def _parse(text: str) -> c_ast.Compound:
    try:
        ast = c_parser.CParser().parse("void mdp_item(void) {\n" + text + "\n}")
    except Exception as err:   # a typedef name or a construct pycparser lacks
        raise Refused(f"its text does not parse on its own ({str(err).splitlines()[0]})") from err
    func = ast.ext[0]
    assert isinstance(func, c_ast.FuncDef)
    return func.body


def _strip(stmt: c_ast.Node) -> c_ast.Node:
    """A statement without braces around a single statement."""
    while isinstance(stmt, c_ast.Compound) and stmt.block_items and len(stmt.block_items) == 1:
        stmt = stmt.block_items[0]
    return stmt


def _band_loop(loop: c_ast.For, types: dict[str, str]) -> ThreadLoop:
    """``for (i = lo; i < hi; i++)`` (``<=``, ``>``, ``>=``; ``++``/``--``/``+= 1``/``-= 1``) as a ``ThreadLoop``."""
    gen = _gen()
    init = loop.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        d = init.decls[0]
        if not isinstance(d.type, c_ast.TypeDecl) or not isinstance(d.type.type, c_ast.IdentifierType):
            raise Refused("a parallel loop declares an iterator that is no plain number")
        name, lower_node = d.name, d.init
        types[name] = " ".join(d.type.type.names)
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        name, lower_node = init.lvalue.name, init.rvalue
    else:
        raise Refused("a parallel loop's header is not 'iterator = start'")
    if lower_node is None or not isinstance(loop.cond, c_ast.BinaryOp) or not isinstance(loop.cond.left, c_ast.ID) \
            or loop.cond.left.name != name:
        raise Refused(f"the header of parallel loop '{name}' is not 'for ({name} = a; {name} < b; ...)'")
    step = _step(loop.next, name)
    op, bound = loop.cond.op, gen.visit(loop.cond.right)
    lower = gen.visit(lower_node)
    if step == 1 and op in ("<", "<="):
        extent = f"({bound}) - ({lower})" + (" + 1" if op == "<=" else "")
    elif step == -1 and op in (">", ">="):
        extent = f"({lower}) - ({bound})" + (" + 1" if op == ">=" else "")
    else:
        raise Refused(f"parallel loop '{name}' does not count by one towards its bound")
    return ThreadLoop(name, "", lower, extent, step)


def _step(node: c_ast.Node | None, name: str) -> int:
    if isinstance(node, c_ast.UnaryOp) and isinstance(node.expr, c_ast.ID) and node.expr.name == name:
        if node.op in ("p++", "++"):
            return 1
        if node.op in ("p--", "--"):
            return -1
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and node.lvalue.name == name \
            and node.op in ("+=", "-=") and isinstance(node.rvalue, c_ast.Constant) and node.rvalue.value == "1":
        return 1 if node.op == "+=" else -1
    raise Refused(f"parallel loop '{name}' does not step by one")


class _Translator(c_ast.NodeVisitor):
    """Checks an item's statements and rewrites them in place for one device thread."""

    def __init__(self, symbols: dict[str, Variable], local: set[str], outs: set[str], group: bool = False) -> None:
        self.symbols = symbols
        self.local = set(local)
        #: a work-group's code: it may read the thread's index and the group's size and wait at its barrier
        self.group = group
        self.outs_allowed = outs
        self.arrays: dict[str, DeviceArray] = {}
        self.scalars: dict[str, DeviceScalar] = {}
        self.outs: dict[str, DeviceScalar] = {}
        self.local_decls: list[str] = []
        self.fp64 = False
        self.loop_depth = 0
        self.in_last = False

    # {{{ names

    def _outside(self, name: str) -> Variable:
        var = self.symbols.get(name)
        if var is None:
            raise Refused(f"'{name}' has no declaration mdpoly can read")
        return var

    def _scalar_type(self, var: Variable) -> str:
        t = device_type(var.scalar_type or var.elem_type)
        if t is None:
            raise Refused(f"'{var.name}' is of type '{var.elem_type}', which is no plain number")
        if t == "double":
            self.fp64 = True
        return t

    def read_scalar(self, name: str) -> None:
        if name in self.local or name in self.scalars or name in self.outs:
            return
        var = self._outside(name)
        if var.kind not in ("scalar", "local") or var.shape:
            raise Refused(f"'{name}' is used without its subscripts (its address)")
        self.scalars[name] = DeviceScalar(name, var.elem_type, self._scalar_type(var))

    def _array(self, name: str, written: bool) -> DeviceArray:
        var = self._outside(name)
        if var.kind not in ("array", "pointer") or not var.shape:
            raise Refused(f"'{name}' is subscripted but is no array of numbers")
        if any(not e.strip() for e in var.shape):
            raise Refused(f"'{name}' has no declared size in every dimension, so its extent on the device is unknown")
        old = self.arrays.get(name)
        self.arrays[name] = DeviceArray(name, var.elem_type, self._scalar_type(var), tuple(var.shape),
                                        not written or (old is not None and old.read),
                                        written or (old is not None and old.written))
        for e in var.shape:   # the extents' names are passed by value
            self.device_extent(e)
        return self.arrays[name]

    def device_extent(self, extent: str) -> str:
        """A declared extent (host C text) spelled for the device: the scalars it names are read
        (passed by value) and its casts spelled as the device has them (a flat view's ``(long
        long)n`` is ``(long)n``; a name in a cast is no scalar)."""
        tree = parse_expr(extent, rendered=False)   # "(n) * (m)" is a product, not a cast
        if tree is None:
            raise Refused(f"the extent '{extent}' is no expression mdpoly can read")
        return _gen().visit(self.rewrite(tree))

    # }}}

    def flat(self, node: c_ast.ArrayRef, written: bool) -> c_ast.Node:
        """``node`` (a full subscript of an outside array) as a flat subscript; its subscripts visited."""
        subs: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs.insert(0, base.subscript)
            base = base.name
        if not isinstance(base, c_ast.ID):
            raise Refused("an array is reached through an expression, not its name")
        name = base.name
        if name in self.local:
            ref: c_ast.Node = node
            while isinstance(ref, c_ast.ArrayRef):
                ref.subscript = self.rewrite(ref.subscript)
                ref = ref.name
            return node
        a = self._array(name, written)
        if len(subs) != len(a.extents):
            raise Refused(f"'{name}' is used with {len(subs)} of its {len(a.extents)} subscripts")
        subs = [self.rewrite(s) for s in subs]
        gen = _gen()
        flat = f"(long)({gen.visit(subs[0])})"
        for e, s in zip(a.extents[1:], subs[1:], strict=True):
            flat = f"({flat}) * ({self.device_extent(e)}) + ({gen.visit(s)})"
        return c_ast.ArrayRef(c_ast.ID(name), c_ast.ID(flat))

    def target(self, node: c_ast.Node) -> c_ast.Node:
        """An assigned place: a local, an outside array's element, or an allowed out scalar."""
        if isinstance(node, c_ast.ID):
            if node.name in self.local:
                return node
            if self.in_last and node.name in self.outs_allowed:
                var = self._outside(node.name)
                self.outs[node.name] = DeviceScalar(node.name, var.elem_type, self._scalar_type(var))
                return c_ast.ArrayRef(c_ast.ID(f"mdp_out_{node.name}"), c_ast.Constant("int", "0"))
            raise Refused(f"it assigns '{node.name}', a scalar declared outside it")
        if isinstance(node, c_ast.ArrayRef):
            return self.flat(node, True)
        raise Refused("it assigns through something other than a name or an array element")

    def rewrite(self, node: c_ast.Node) -> c_ast.Node:
        """``node`` (an expression) rewritten; its children rewritten in place."""
        if isinstance(node, c_ast.ArrayRef):
            return self.flat(node, False)
        if isinstance(node, c_ast.ID):
            self.read_scalar(node.name)
            return node
        self.visit(node)
        return node

    def generic_visit(self, node: c_ast.Node) -> None:
        raise Refused(f"it contains a construct the device translation does not handle ({type(node).__name__})")

    # {{{ statements

    def visit_Compound(self, node: c_ast.Compound) -> None:
        for k, item in enumerate(node.block_items or []):
            node.block_items[k] = self.stmt(item)

    def stmt(self, node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ArrayRef | c_ast.ID):
            return self.rewrite(node)
        self.visit(node)
        return node

    def visit_EmptyStatement(self, node: c_ast.EmptyStatement) -> None:
        pass

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name in self.symbols and self.symbols[node.name].kind != "local":
            raise Refused(f"it declares '{node.name}' again, hiding a name declared outside it")
        if node.bitsize is not None or node.funcspec or (node.storage and node.storage != ["register"]):
            raise Refused(f"the declaration of '{node.name}' has a storage class or qualifier")
        t = node.type
        elems = 1
        while isinstance(t, c_ast.ArrayDecl):
            if not isinstance(t.dim, c_ast.Constant) or not t.dim.value.isdigit():
                raise Refused(f"the local array '{node.name}' has no constant size")
            elems *= int(t.dim.value)
            t = t.type
        if elems > MAX_LOCAL_ELEMENTS:
            raise Refused(f"the local array '{node.name}' has {elems} elements, too many for a device thread")
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            raise Refused(f"'{node.name}' is no number or array of numbers")
        names = [n for n in t.type.names if n not in ("const", "volatile")]
        spelled = device_type(" ".join(names))
        if spelled is None:
            raise Refused(f"'{node.name}' is of type '{' '.join(names)}', which is no plain number")
        if spelled == "double":
            self.fp64 = True
        t.type.names = [spelled]
        t.quals = [q for q in t.quals if q == "const"]
        if node.init is not None:
            if isinstance(node.init, c_ast.InitList):
                for k, e in enumerate(node.init.exprs):
                    node.init.exprs[k] = self.rewrite(e)
            else:
                node.init = self.rewrite(node.init)
        node.quals = [q for q in node.quals if q == "const"]
        node.storage = []
        self.local.add(node.name)

    def visit_DeclList(self, node: c_ast.DeclList) -> None:
        for d in node.decls:
            self.visit(d)

    def visit_For(self, node: c_ast.For) -> None:
        if node.init is not None:
            self.visit(node.init) if isinstance(node.init, c_ast.DeclList) else self._expr_stmt(node, "init")
        if node.cond is not None:
            node.cond = self.rewrite(node.cond)
        if node.next is not None:
            self._expr_stmt(node, "next")
        self.loop_depth += 1
        node.stmt = self.stmt(node.stmt)
        self.loop_depth -= 1

    def _expr_stmt(self, node: c_ast.Node, field: str) -> None:
        setattr(node, field, self.rewrite(getattr(node, field)))

    def visit_While(self, node: c_ast.While) -> None:
        node.cond = self.rewrite(node.cond)
        self.loop_depth += 1
        node.stmt = self.stmt(node.stmt)
        self.loop_depth -= 1

    def visit_DoWhile(self, node: c_ast.DoWhile) -> None:
        self.visit_While(node)

    def visit_If(self, node: c_ast.If) -> None:
        node.cond = self.rewrite(node.cond)
        node.iftrue = self.stmt(node.iftrue)
        if node.iffalse is not None:
            node.iffalse = self.stmt(node.iffalse)

    def visit_Break(self, node: c_ast.Break) -> None:
        if not self.loop_depth:
            raise Refused("a 'break' leaves the parallel loop")

    def visit_Continue(self, node: c_ast.Continue) -> None:
        if not self.loop_depth:
            raise Refused("a 'continue' skips to the parallel loop's next iteration")

    # }}}

    # {{{ expressions

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        node.rvalue = self.rewrite(node.rvalue)
        if node.op != "=" and isinstance(node.lvalue, c_ast.ID) and node.lvalue.name not in self.local:
            raise Refused(f"it updates '{node.lvalue.name}', a scalar declared outside it")
        node.lvalue = self.target(node.lvalue)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("&", "*"):
            raise Refused(f"it takes an address or dereferences a pointer ('{node.op}')")
        if node.op in ("sizeof", "_Alignof"):
            raise Refused("it uses 'sizeof'")
        if node.op in ("++", "--", "p++", "p--"):
            if isinstance(node.expr, c_ast.ID) and node.expr.name not in self.local:
                raise Refused(f"it updates '{node.expr.name}', a scalar declared outside it")
            node.expr = self.target(node.expr)
            return
        node.expr = self.rewrite(node.expr)

    def visit_BinaryOp(self, node: c_ast.BinaryOp) -> None:
        node.left = self.rewrite(node.left)
        node.right = self.rewrite(node.right)

    def visit_TernaryOp(self, node: c_ast.TernaryOp) -> None:
        node.cond = self.rewrite(node.cond)
        node.iftrue = self.rewrite(node.iftrue)
        node.iffalse = self.rewrite(node.iffalse)

    def visit_ExprList(self, node: c_ast.ExprList) -> None:
        for k, e in enumerate(node.exprs):
            node.exprs[k] = self.rewrite(e)

    def visit_Constant(self, node: c_ast.Constant) -> None:
        if node.type == "double":
            self.fp64 = True
        elif node.type not in ("int", "unsigned int", "long int", "unsigned long int", "long long int",
                               "unsigned long long int", "float", "char"):
            raise Refused(f"it uses a constant of type '{node.type}'")
        if node.type in ("long long int", "unsigned long long int"):   # OpenCL C has no LL suffix
            node.value = re.sub(r"(?i)ll", "l", node.value)

    def visit_Cast(self, node: c_ast.Cast) -> None:
        t = node.to_type.type
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            raise Refused("it casts to a type that is no plain number")
        spelled = device_type(" ".join(n for n in t.type.names if n not in ("const", "volatile")))
        if spelled is None:
            raise Refused(f"it casts to '{' '.join(t.type.names)}', which is no plain number")
        if spelled == "double":
            self.fp64 = True
        t.type.names = [spelled]
        node.expr = self.rewrite(node.expr)

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        name = node.name.name if isinstance(node.name, c_ast.ID) else ""
        arity = DOUBLE_MATH.get(name, FLOAT_MATH.get(name))
        args = node.args.exprs if node.args is not None else []
        if self.group and name + "();" == TILE_BARRIER and not args:
            return
        if arity is None:
            raise Refused(f"it calls '{name or 'a function pointer'}', which is no math function the device has")
        if len(args) != arity:
            raise Refused(f"it calls '{name}' with {len(args)} arguments")
        cast = "double" if name in DOUBLE_MATH else "float"
        if cast == "double":
            self.fp64 = True
        for k, e in enumerate(args):
            node.args.exprs[k] = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
                None, [], None, c_ast.IdentifierType([cast]))), self.rewrite(e))

    # }}}


class _Targets(c_ast.NodeVisitor):
    """Names assigned (``=``, ``op=``, ``++``/``--``) outside the headers of ``for`` loops."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_For(self, node: c_ast.For) -> None:
        for part in (node.cond, node.stmt):
            if part is not None:
                self.visit(part)

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        if isinstance(node.lvalue, c_ast.ID):
            self.names.add(node.lvalue.name)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("++", "--", "p++", "p--") and isinstance(node.expr, c_ast.ID):
            self.names.add(node.expr.name)
        self.generic_visit(node)


def _loop_iterator(loop: c_ast.For) -> str | None:
    init = loop.init
    if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        return str(init.lvalue.name)
    return None


def _plain_header(loop: c_ast.For) -> bool:
    """The header reads no array, calls nothing and assigns only its iterator."""
    seen: list[c_ast.Node] = [n for n in (loop.init, loop.cond, loop.next) if n is not None]
    while seen:
        n = seen.pop()
        if isinstance(n, c_ast.ArrayRef | c_ast.FuncCall | c_ast.StructRef):
            return False
        seen.extend(c for _, c in n.children())
    return True


def _skeleton(node: c_ast.Node, own: set[str]) -> c_ast.Node | None:
    """``node`` reduced to its ``for`` loops around nothing (``None``: no loop), which leaves
    their iterators at the values the whole statement leaves them.

    :raises Refused: a loop whose iterator is in ``own`` sits under anything but loops, or its
        header depends on more than scalars."""
    if isinstance(node, c_ast.For):
        if not _plain_header(node):
            raise Refused("a loop header reads an array, so its exit value is not known on the host")
        inner = _skeleton(node.stmt, own)
        return c_ast.For(node.init, node.cond, node.next, inner if inner is not None else c_ast.Compound([]))
    if isinstance(node, c_ast.Compound):
        kept = [k for k in (_skeleton(it, own) for it in node.block_items or []) if k is not None]
        return c_ast.Compound(kept) if kept else None
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.For) and _loop_iterator(n) in own:
            raise Refused(f"the loop of '{_loop_iterator(n)}' runs under a condition, so its exit value is not "
                          "known on the host")
        stack.extend(c for _, c in n.children())
    return None


def _own_iterators(stmt: c_ast.Node, symbols: dict[str, Variable]) -> set[str]:
    """Iterators of the loops of ``stmt`` that are integer scalars declared outside it."""
    out: set[str] = set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.For):
            it = _loop_iterator(n)
            var = symbols.get(it or "")
            if it is not None and var is not None and not var.shape and var.kind in ("scalar", "local") \
                    and device_type(var.scalar_type or var.elem_type) not in (None, "float", "double"):
                out.add(it)
        stack.extend(c for _, c in n.children())
    return out


def translate(text: str, symbols: dict[str, Variable], parallel: tuple[str, ...] = (),
              locals_: tuple[str, ...] = (), private: tuple[str, ...] = (), last: str = "",
              outs: frozenset[str] = frozenset(), own_loops: bool = False, group: bool = False) -> DeviceBody:
    """``text`` (an item's C) as a ``DeviceBody``.

    :arg symbols: declarations of the outside names, by name.
    :arg parallel: the iterators of the outermost loops that become the thread band (perfectly
        nested; ``()``: the whole text runs on one thread).
    :arg locals_: declarations (C text) of thread locals the text uses (private copies).
    :arg private: outside names the item uses as its own (inner loops' iterators declared outside).
    :arg last: C run by the sequentially last thread after the body (the copies back).
    :arg outs: outside scalars ``last`` may assign.
    :arg own_loops: the iterators of the text's loops that are declared outside it are thread
        locals too, and ``DeviceBody.exits`` sets them on the host afterwards (each assigned only
        by its loop's header, each loop under loops only, its header over scalars).
    :arg group: each iteration of the band runs on a work-group: the text may read the thread's
        index in it and its size (``TILE_THREAD``, ``TILE_THREADS``) and wait at its barrier
        (``TILE_BARRIER``; the text keeps every barrier uniform over the group).
    :raises Refused: with the reason it cannot be translated exactly.
    """
    body = _parse("\n".join([*locals_, text]))
    decls = list(body.block_items or [])[:len(locals_)]
    items = list(body.block_items or [])[len(locals_):]
    types: dict[str, str] = {}
    band: list[ThreadLoop] = []
    stmt: c_ast.Node = c_ast.Compound(items)
    for it in parallel:
        loop = _strip(stmt)
        if not isinstance(loop, c_ast.For):
            raise Refused(f"the parallel loop '{it}' is not perfectly nested")
        band.append(_band_loop(loop, types))
        if band[-1].iterator != it:
            raise Refused(f"the parallel loop '{it}' is not where the band has it")
        stmt = loop.stmt
    names = {b.iterator for b in band}
    private = tuple(p for p in private if p not in names)
    exits = ""
    if own_loops:
        whole = c_ast.Compound(items)
        own = _own_iterators(whole, symbols) - set(private)
        targets = _Targets()
        targets.visit(whole)
        if own & targets.names:
            raise Refused(f"the loop iterator '{sorted(own & targets.names)[0]}' is assigned in the loop's body")
        skeleton = _skeleton(whole, own) if own else None
        exits = _gen().visit(skeleton) if skeleton is not None else ""
        private = (*private, *sorted(own - names))
    builtins = {TILE_THREAD, TILE_THREADS} if group else set()
    tr = _Translator(symbols, names | set(private) | builtins, set(outs), group)
    for d in decls:
        tr.visit(d)
    typed: list[ThreadLoop] = []
    for b in band:   # bounds: over outside scalars only, none of the band's iterators
        for n in re.findall(r"[A-Za-z_]\w*", b.lower + " " + b.extent):
            if n in _TYPE_WORDS:   # a cast (isl's bounds read sizes as ``(long)n``)
                continue
            if n in names:
                raise Refused(f"the bounds of parallel loop '{b.iterator}' depend on another parallel loop")
            tr.read_scalar(n)
        ctype = types.get(b.iterator) or (symbols[b.iterator].scalar_type if b.iterator in symbols else "")
        spelled = device_type(ctype)
        if spelled is None or spelled in ("float", "double"):
            raise Refused(f"the iterator '{b.iterator}' is no integer the declarations show")
        typed.append(ThreadLoop(b.iterator, spelled, b.lower, b.extent, b.step))
    local_decls: list[str] = []
    for n in sorted(set(private)):
        spelled = device_type(symbols[n].scalar_type) if n in symbols else None
        if spelled is None or symbols[n].shape:
            raise Refused(f"the inner iterator '{n}' is no integer the declarations show")
        local_decls.append(f"{spelled} {n};")
    stmt = copy.deepcopy(stmt)
    stmt = tr.stmt(stmt)
    last_c = ""
    if last.strip():
        last_ast = _parse(last)
        tr.in_last = True
        tr.visit(last_ast)
        tr.in_last = False
        last_c = _gen().visit(last_ast)
    gen = _gen()
    local_decls += [gen.visit(d) + ";" for d in decls]
    body_c = gen.visit(stmt) if isinstance(stmt, c_ast.Compound) else gen.visit(c_ast.Compound([stmt]))
    return DeviceBody(tuple(typed), tuple(local_decls), body_c, last_c, tuple(tr.arrays.values()),
                      tuple(s for n, s in tr.scalars.items() if n not in names), tuple(tr.outs.values()), tr.fp64,
                      exits)
