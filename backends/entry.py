"""Exported entry points for running one nest in isolation: buffers in ``void **args`` -> C text.

The runtime calls ``void <entry>(void **args)`` where ``args[k]`` points at the data of the
``k``-th buffer of ``params`` (see ``mdpoly.lower.lower.function_params``). Two wrappers share that
layout, both built as pycparser ``c_ast`` and printed by ``CGenerator``:

* ``entry_function``: binds each buffer (arrays as pointers to their declared row type, read-only
  scalars dereferenced by value, written scalars as pointers) and calls the generated function;
* ``timing_function``: exports the host code's profile of its last call (GPU targets);
* ``hold_function``: keeps the arguments on the device for the calls after it (GPU tuning);
* ``reference_function``: binds the buffers as locals with the nest's own names and runs the
  original nest text (a written scalar is copied into a local and back; iterators declared
  outside their ``for`` get a declaration).
"""

from __future__ import annotations

from collections.abc import Mapping

from pycparser import c_ast, c_generator, c_parser

from mdpoly.ir.mdh import Buffer

_QUALS = ("const", "volatile", "restrict")
#: The type of an iterator whose declared type is not given.
ITERATOR_TYPE = "int"


def _tdecl(name: str | None, elem_type: str) -> c_ast.TypeDecl:
    words = elem_type.split()
    return c_ast.TypeDecl(name, [w for w in words if w in _QUALS], None,
                          c_ast.IdentifierType([w for w in words if w not in _QUALS]))


def _decl(name: str, type_: c_ast.Node, init: c_ast.Node | None = None) -> c_ast.Decl:
    return c_ast.Decl(name, [], [], [], [], type_, init, None)


def _arg(k: int) -> c_ast.ArrayRef:
    return c_ast.ArrayRef(c_ast.ID("args"), c_ast.Constant("int", str(k)))


def _ptr_to(name: str | None, buf: Buffer) -> c_ast.Node:
    """``T *name`` for pointers, scalars and 1-D arrays; ``T (*name)[s1]...[sn]`` for n-D arrays."""
    t: c_ast.Node = _tdecl(name, buf.elem_type)
    if buf.kind == "array":
        for dim in reversed(buf.shape[1:]):
            t = c_ast.ArrayDecl(t, c_ast.ID(dim), [])
    return c_ast.PtrDecl([], t)


def _scalar_value(k: int, buf: Buffer) -> c_ast.Node:
    """``*(T *)args[k]``."""
    return c_ast.UnaryOp("*", c_ast.Cast(c_ast.Typename(None, [], None, _ptr_to(None, buf)), _arg(k)))


def _binding(k: int, buf: Buffer, by_value: bool) -> c_ast.Decl:
    if buf.kind == "scalar" and by_value:
        return _decl(buf.name, _tdecl(buf.name, buf.elem_type), _scalar_value(k, buf))
    return _decl(buf.name, _ptr_to(buf.name, buf), _arg(k))


def _function(name: str, body: list[c_ast.Node]) -> str:
    args = c_ast.ParamList([_decl("args", c_ast.PtrDecl([], c_ast.PtrDecl([], _tdecl("args", "void"))))])
    fdef = c_ast.FuncDef(_decl(name, c_ast.FuncDecl(args, _tdecl(name, "void"))), None, c_ast.Compound(body))
    return str(c_generator.CGenerator(reduce_parentheses=True).visit(fdef))


def entry_function(name: str, params: tuple[Buffer, ...], callee: str) -> str:
    """``void name(void **args)`` unpacking ``params`` and calling ``callee`` with them, as C text."""
    body: list[c_ast.Node] = [_binding(k, b, by_value=not b.written) for k, b in enumerate(params)]
    call = c_ast.FuncCall(c_ast.ID(callee), c_ast.ExprList([c_ast.ID(b.name) for b in params]))
    return _function(name, [*body, call])


#: What ``timing_function``'s export writes, in order: the last call's kernel time, transfer
#: time and whole-call time, in milliseconds (fields of the host code's last-call struct).
TIMING_FIELDS = ("kernel_ms", "transfer_ms", "call_ms")


def timing_function(name: str, last_call: str) -> str:
    """``void name(double *out)`` copying the host code's last-call profile ``last_call`` (a struct
    with the fields ``TIMING_FIELDS``, filled when ``MDPOLY_PROFILE`` is set) to ``out``, as C text."""
    out = c_ast.ParamList([_decl("out", c_ast.PtrDecl([], _tdecl("out", "double")))])
    body: list[c_ast.Node] = [
        c_ast.Assignment("=", c_ast.ArrayRef(c_ast.ID("out"), c_ast.Constant("int", str(k))),
                         c_ast.StructRef(c_ast.ID(last_call), ".", c_ast.ID(f)))
        for k, f in enumerate(TIMING_FIELDS)]
    fdef = c_ast.FuncDef(_decl(name, c_ast.FuncDecl(out, _tdecl(name, "void"))), None, c_ast.Compound(body))
    return str(c_generator.CGenerator(reduce_parentheses=True).visit(fdef))


def hold_function(name: str, enter: str, sizes: tuple[int | None, ...]) -> str:
    """``void name(void **args)`` registering each argument ``k`` with a byte size ``sizes[k]`` (not
    ``None``) as device-resident through the host runtime's ``enter(host, bytes, upload, download)``:
    copied to the device once, here, never back; the host function then finds it by address and
    copies nothing (the tuner's timed calls). As C text."""
    body: list[c_ast.Node] = [
        c_ast.FuncCall(c_ast.ID(enter), c_ast.ExprList([_arg(k), c_ast.Constant("unsigned long", f"{n}UL"),
                                                        c_ast.Constant("int", "1"), c_ast.Constant("int", "0")]))
        for k, n in enumerate(sizes) if n is not None]
    return _function(name, body)


def _parse_nest(text: str) -> c_ast.Node | None:
    """The nest as a statement node, or ``None`` when pycparser cannot parse it alone (typedefs)."""
    try:
        ast = c_parser.CParser().parse(f"void mdp_reference_body(void) {{ {text} }}")
    except c_parser.ParseError:  # a typedef name the nest uses is unknown without its declaration
        return None
    items = ast.ext[0].body.block_items or []
    return items[0] if len(items) == 1 else c_ast.Compound(items)


def _declared_in_for(node: c_ast.Node) -> set[str]:
    out: set[str] = set()

    class _V(c_ast.NodeVisitor):
        def visit_For(self, n: c_ast.For) -> None:
            if isinstance(n.init, c_ast.DeclList):
                out.update(str(d.name) for d in n.init.decls)
            self.generic_visit(n)

    _V().visit(node)
    return out


def reference_function(name: str, params: tuple[Buffer, ...], nest_c: str,
                       iterators: tuple[str, ...], types: Mapping[str, str] | None = None) -> str:
    """``void name(void **args)`` running the original nest ``nest_c`` on the buffers, as C text.

    ``types`` maps iterators to their declared C types (``ITERATOR_TYPE`` when missing)."""
    body: list[c_ast.Node] = []
    for k, b in enumerate(params):
        body.append(_binding(k, b, by_value=b.kind == "scalar"))
    nest = _parse_nest(nest_c)
    declared = _declared_in_for(nest) if nest is not None else set()
    for it in iterators:
        if it not in declared:
            body.append(_decl(it, _tdecl(it, (types or {}).get(it, ITERATOR_TYPE))))
    # Unparsable text goes in verbatim as an expression-less statement (printed as written).
    body.append(nest if nest is not None else c_ast.ID(nest_c.strip()))
    for k, b in enumerate(params):
        if b.kind == "scalar" and b.written:
            body.append(c_ast.Assignment("=", _scalar_value(k, b), c_ast.ID(b.name)))
    return _function(name, body)
