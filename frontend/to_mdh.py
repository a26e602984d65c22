"""MDH construction: ``Scop`` + ``Deps`` -> ``MdhExpr`` for one accepted nest.

Accepted shapes: a chain of loops with rectangular bounds and either (a) all statements in the
innermost body (a perfect nest: several statements in a concat-only nest become several
outputs), or (b) the imperfect initialisation pattern ``C[i][j] = init; for (k...) C[i][j] += e``
where the init statements sit directly inside the concat loops, before the reduction loops.
Anything else raises ``UnsupportedInput`` with a stable code.
"""

from __future__ import annotations

import re

from mdpoly.diagnostics import UnsupportedInput
from mdpoly.frontend.alias import alias_checks
from mdpoly.frontend.box import bounding_box, domain_constraints
from mdpoly.frontend.deps import Deps, Reduction
from mdpoly.ir.mdh import (
    Access,
    Buffer,
    Combine,
    Dim,
    Finish,
    MdhExpr,
    OutputWrite,
    ScalarFunction,
)
from mdpoly.ir.scop import (
    Binary,
    Expr,
    Ref,
    Scop,
    Statement,
    expr_names,
    expr_refs,
    render_expr,
)
from mdpoly.options import Options

_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "<<=": "<<", ">>=": ">>", "&=": "&",
             "|=": "|", "^=": "^"}


def nest_name(scop: Scop) -> str:
    return f"mdpoly_{scop.function}_{scop.loc.line}"


def check_loops(scop: Scop, deps: Deps) -> None:
    """Sequential loops, mixed operators and non-rectangular bounds keep the nest."""
    for lc in deps.loops:
        if lc.combine is Combine.SEQ:
            raise UnsupportedInput(lc.reason or "loop carries a dependence", scop.loops[lc.loop].loc,
                                   "sequential-dependence")
    ops = {lc.combine for lc in deps.loops if lc.combine.is_reduction} | {r.op for r in deps.reductions}
    if deps.mixed_ops or len(ops) > 1:
        names = ", ".join(sorted(o.value for o in ops))
        raise UnsupportedInput(f"the nest's reduction loops use different operators ({names})", scop.loc,
                               "mixed-reduction-operators")


def _same_guards(scop: Scop) -> None:
    """One MDH has one domain: the innermost statements share their ``if``/``min``/``max`` guards,
    and a statement outside the innermost loops (an initialisation or a store) has exactly those
    of them that name only its own loops' iterators."""
    if not scop.statements:
        return
    depth = max(len(s.loops) for s in scop.statements)
    inner = [s for s in scop.statements if len(s.loops) == depth]
    domain = set(inner[0].guards)
    its = {lp.iterator for lp in scop.loops}
    for s in scop.statements:
        own = set(scop.iterators(s))
        expected = domain if len(s.loops) == depth else {g for g in domain if g.names() & its <= own}
        if set(s.guards) != expected:
            raise UnsupportedInput(f"statement '{s.text}' is guarded differently from the other statements of the "
                                   "nest", s.loc, "non-rectangular-domain")


def _chain(scop: Scop) -> None:
    for k, lp in enumerate(scop.loops):
        children = [c for c in scop.loops if c.parent == k]
        if len(children) > 1:
            raise UnsupportedInput(f"loop '{lp.iterator}' contains several loops; only a single chain of "
                                   "loops maps to one MDH expression", lp.loc, "imperfect-nest")


def build_mdh(scop: Scop, deps: Deps, options: Options, known_sizes: dict[str, int] | None = None) -> MdhExpr:
    """The MDH expression of ``scop``; ``known_sizes``: size parameters' values found in the file
    (``mdpoly.frontend.call_sizes``), which ``--size`` overrides. :raises UnsupportedInput: when the
    nest does not fit."""
    check_loops(scop, deps)
    _chain(scop)
    _same_guards(scop)
    combine = {lc.loop: lc.combine for lc in deps.loops}
    depth = len(scop.loops)
    inner = [s for s in scop.statements if len(s.loops) == depth]
    outer = [s for s in scop.statements if len(s.loops) < depth]
    red_loops = [k for k in range(depth) if combine[k].is_reduction]
    reductions = {r.stmt: r for r in deps.reductions}

    outputs: list[OutputWrite] = []
    terms: list[Expr] = []
    if not red_loops:
        if outer:
            s = outer[0]
            raise UnsupportedInput(f"statement '{s.text}' is not in the innermost loop", s.loc, "imperfect-nest")
        _check_concat_statements(inner)
        for s in inner:
            rhs = s.rhs if s.op == "=" else Binary(_COMPOUND[s.op], Ref(s.write), s.rhs)
            outputs.append(OutputWrite(s.write, scop.variable(s.write.buffer).elem_type, "assign"))
            terms.append(rhs)
    else:
        first_red = min(red_loops)
        if any(not combine[k].is_reduction for k in range(first_red, depth)) and outer:
            raise UnsupportedInput("initialisation statements need every loop inside them to be a reduction",
                                   scop.loc, "imperfect-nest")
        stores = _local_stores(scop, outer, first_red)
        outer = [s for s in outer if s not in stores.values()]
        inits = _inits(scop, outer, first_red, inner, reductions)
        seen: set[str] = set()
        for s in inner:
            red = reductions.get(s.name)
            if red is None:
                raise UnsupportedInput(f"statement '{s.text}' is not a reduction update like the rest of the nest",
                                       s.loc, "unsupported-statement")
            if red.accumulator.buffer in seen:
                raise UnsupportedInput(f"'{red.accumulator.buffer}' is updated by several statements", s.loc,
                                       "unsupported-statement")
            seen.add(red.accumulator.buffer)
            elem = scop.variable(red.accumulator.buffer).elem_type
            init = inits.get(red.accumulator)
            store = stores.get(red.accumulator.buffer)
            if store is not None:
                assert init is not None  # a local accumulator always has its declaration's initialiser
                target, finish = _finish(scop, store, red.accumulator)
                if any(o.access.buffer == target.buffer for o in outputs):
                    raise UnsupportedInput(f"'{target.buffer}' is stored by several statements", store.loc,
                                           "unsupported-statement")
                outputs.append(OutputWrite(target, elem, "assign", render_expr(init.rhs), finish,
                                           _init_reads(scop, init.rhs)))
            elif init is None:
                outputs.append(OutputWrite(red.accumulator, elem, "accumulate"))
            else:
                outputs.append(OutputWrite(red.accumulator, elem, "assign", render_expr(init.rhs), None,
                                           _init_reads(scop, init.rhs)))
            terms.append(red.term)

        if any(r.op.is_arg for r in reductions.values()):
            _check_arg(scop, inner, reductions, red_loops)
            outputs.reverse()  # the index statement comes first: the value is output 0, the index output 1
            terms.reverse()

    _check_reduced_outputs(scop, outputs, red_loops)
    inputs: list[Access] = []
    for t in terms:
        for a in expr_refs(t):
            if a not in inputs:
                inputs.append(a)
    taken = {v.name for v in scop.variables} | {lp.iterator for lp in scop.loops} | {scop.function}
    names = _param_names(inputs, taken)
    refs = dict(zip(inputs, names))
    results = tuple(render_expr(t, refs) for t in terms)
    its = {lp.iterator for lp in scop.loops}
    uses_indices = any(expr_names(t) & its for t in terms)

    written = {s.write.buffer for s in scop.statements}
    buffers = tuple(Buffer(v.name, v.elem_type, v.shape, v.kind, v.name in written,
                           v.c_decl if v.kind != "scalar" and v.c_decl else None, v.rows_of, v.c_value,
                           base_offset=v.base_offset, lazy=v.lazy)
                    for v in scop.variables if v.kind != "local")
    sizes = {**(known_sizes or {}), **dict(options.sizes)}
    for v in scop.variables:  # a front-end parameter (a strided trip count) from the sizes it is made of
        if v.c_value and v.name not in sizes:
            value = _evaluate(v.c_value, sizes)
            if value is not None:
                sizes[v.name] = max(0, value)
    fp = any(combine[k] in (Combine.ADD, Combine.MUL) for k in red_loops) and any(
        scop.variable(o.access.buffer).is_float for o in outputs)
    box = bounding_box(scop)
    for k, lp in enumerate(scop.loops):
        if box[k].extent.is_constant and box[k].extent.constant <= 0:
            raise UnsupportedInput(f"loop '{lp.iterator}' never runs (its bounds are constants that leave it empty)",
                                   lp.loc, "empty-loop")
    dims = tuple(Dim(lp.iterator, box[k].lower, box[k].extent, combine[k], lp.loc, lp.c_type, lp.step)
                 for k, lp in enumerate(scop.loops))
    return MdhExpr(
        name=nest_name(scop), loc=scop.loc, dims=dims, buffers=buffers, inputs=tuple(inputs),
        outputs=tuple(outputs),
        f=ScalarFunction(tuple(names), results, uses_indices, " ".join(s.text for s in scop.statements)),
        params=tuple((p, sizes.get(p)) for p in scop.params), reassociates_fp=fp, alias_checks=alias_checks(scop),
        preconditions=scop.preconditions, domain=domain_constraints(scop), exits=scop.exits,
    )


def _check_arg(scop: Scop, inner: list[Statement], reductions: dict[str, Reduction], red_loops: list[int]) -> None:
    """An argmax/argmin nest is the pair alone, over one upward reduction loop whose iterator is
    the index: the tie rule compares indices, which must grow in the loop's order."""
    stmt = inner[0]
    if len(inner) != 2 or any(reductions[s.name].partner not in {t.name for t in inner} for s in inner):
        raise UnsupportedInput("an argmax/argmin must be the only reduction of its nest", stmt.loc,
                               "unsupported-statement")
    if len(red_loops) != 1 or scop.loops[red_loops[0]].step != 1:
        raise UnsupportedInput("an argmax/argmin is modelled over one reduction loop counting upwards", stmt.loc,
                               "argmax-index")
    it = scop.loops[red_loops[0]].iterator
    term = reductions[inner[0].name].term
    if render_expr(term) != it:
        raise UnsupportedInput(f"the index an argmax/argmin keeps must be the loop iterator '{it}' itself", stmt.loc,
                               "argmax-index")


def _evaluate(c_expr: str, sizes: dict[str, int]) -> int | None:
    """The value of a front-end parameter's C expression (``((long long)n + 1) / 2``: integer
    ``+ - *`` and a division of a non-negative value) at known sizes, or ``None``."""
    text = c_expr.replace("(long long)", "").replace("/", "//")
    if not re.fullmatch(r"[\w\s+\-*/()]+", text) or not set(re.findall(r"[A-Za-z_]\w*", text)) <= set(sizes):
        return None
    try:
        return int(eval(text, {"__builtins__": {}}, dict(sizes)))
    except (ArithmeticError, SyntaxError, NameError, TypeError):
        return None


def _check_reduced_outputs(scop: Scop, outputs: list[OutputWrite], red_loops: list[int]) -> None:
    """Every reduction dimension reduces every output: an output indexed by a reduction loop's
    iterator (``s[j] += ...`` beside ``q[i] += ...`` in one ``j`` loop) needs another MDH."""
    for o in outputs:
        for k in red_loops:
            it = scop.loops[k].iterator
            if o.access.depends_on(it):
                raise UnsupportedInput(f"'{o.access.to_c()}' is indexed by '{it}', which another statement of the nest "
                                       "reduces over; one MDH has one combine operator per loop for all outputs",
                                       scop.loops[k].loc, "mixed-reduction-dims")


def _check_concat_statements(inner: list[Statement]) -> None:
    writers: dict[str, Statement] = {}
    for s in inner:
        if s.write.buffer in writers:
            raise UnsupportedInput(f"'{s.write.buffer}' is written by several statements of the nest", s.loc,
                                   "unsupported-statement")
        writers[s.write.buffer] = s
    for s in inner:
        for r in s.reads:
            w = writers.get(r.buffer)
            if w is not None and w is not s:
                raise UnsupportedInput(f"statement '{s.text}' reads '{r.to_c()}', which '{w.text}' writes in the "
                                       "same iteration", s.loc, "intra-iteration-flow")


def _inits(scop: Scop, outer: list[Statement], first_red: int, inner: list[Statement],
           reductions: dict[str, Reduction]) -> dict[Access, Statement]:
    """Map accumulator -> its initialisation statement (the imperfect ``C = init; for k C += e``)."""
    accs = {reductions[s.name].accumulator for s in inner if s.name in reductions}
    written = {s.write.buffer for s in scop.statements}
    its = {lp.iterator for lp in scop.loops[:first_red]}
    out: dict[Access, Statement] = {}
    for s in outer:
        ok = (len(s.loops) == first_red and s.op == "=" and s.write in accs and s.write not in out
              and not any(r.buffer in written for r in expr_refs(s.rhs))
              and expr_names(s.rhs) <= (its | {v.name for v in scop.variables})
              and s.position[-1] < _inner_loop_position(scop, first_red))
        if not ok:
            raise UnsupportedInput(f"statement '{s.text}' outside the innermost loop is not the initialisation of "
                                   "a reduction accumulator", s.loc, "imperfect-nest")
        out[s.write] = s
    return out


def _local_stores(scop: Scop, outer: list[Statement], first_red: int) -> dict[str, Statement]:
    """Each local accumulator -> the one statement storing it (``C[i][j] = g(s)``) after its loops.

    :raises UnsupportedInput: a local read anywhere else, or stored before its reduction loops.
    """
    locals_ = {v.name for v in scop.variables if v.kind == "local"}
    out: dict[str, Statement] = {}
    for s in scop.statements:
        for r in s.reads:
            if r.buffer not in locals_ or r.buffer == s.write.buffer:
                continue
            ok = (s in outer and len(s.loops) == first_red and r.buffer not in out
                  and s.position[-1] > _inner_loop_position(scop, first_red)
                  and scop.variable(s.write.buffer).kind != "local")
            if not ok:
                raise UnsupportedInput(f"statement '{s.text}' reads the local accumulator '{r.buffer}'; only one "
                                       "store after its reduction loops is supported", s.loc, "local-accumulator")
            out[r.buffer] = s
    for name in locals_:
        if name not in out:
            raise UnsupportedInput(f"local accumulator '{name}' is never stored", scop.loc, "local-accumulator")
    return out


def _finish(scop: Scop, store: Statement, acc: Access) -> tuple[Access, Finish | None]:
    """The output access of a local accumulator's store and what is stored (None: the value itself)."""
    full = store.rhs if store.op == "=" else Binary(_COMPOUND[store.op], Ref(store.write), store.rhs)
    if full == Ref(acc):
        return store.write, None
    written = {s.write.buffer for s in scop.statements}
    inputs: list[Access] = []
    for a in expr_refs(full):
        if a == acc or a in inputs:
            continue
        if a.buffer in written and a != store.write:
            raise UnsupportedInput(f"'{store.text}' reads '{a.to_c()}', which the nest writes", store.loc,
                                   "local-accumulator")
        inputs.append(a)
    taken = {v.name for v in scop.variables} | {lp.iterator for lp in scop.loops} | {scop.function}
    result = "mdp_R"
    while result in taken:
        result += "_"
    names = _param_names(inputs, taken | {result})
    refs = dict(zip(inputs, names))
    refs[acc] = result
    return store.write, Finish(render_expr(full, refs), result, tuple(names), tuple(inputs))


def _inner_loop_position(scop: Scop, depth: int) -> int:
    for s in scop.statements:
        if len(s.loops) > depth:
            return s.position[depth]
    return 1 << 30


def _init_reads(scop: Scop, rhs: Expr) -> Finish | None:
    """A start value that reads array elements (``bias[o]``) as an expression over named reads
    (``OutputWrite.init_reads``), else None."""
    inputs = [a for a in dict.fromkeys(expr_refs(rhs)) if a.index]
    if not inputs:
        return None
    names = [f"mdp_init{k}" for k in range(len(inputs))]
    taken = {v.name for v in scop.variables}
    while any(n in taken for n in names):
        names = [n + "_" for n in names]
    return Finish(render_expr(rhs, dict(zip(inputs, names))), "", tuple(names), tuple(inputs))


def _param_names(inputs: list[Access], taken: set[str]) -> list[str]:
    """``M_i_k``-style formal names for the inputs, unique and distinct from every user name."""
    out: list[str] = []
    for a in inputs:
        parts = [a.buffer] + [_sanitize(e.to_c()) for e in a.index]
        base = "_".join(parts) if a.index else f"{a.buffer}_val"
        name = base
        n = 1
        while name in taken or name in out:
            name = f"{base}_{n}"
            n += 1
        out.append(name)
    return out


def _sanitize(text: str) -> str:
    t = text.replace(" + ", "p").replace(" - ", "m").replace(" * ", "x").replace("-", "m")
    return re.sub(r"\W", "", t)
