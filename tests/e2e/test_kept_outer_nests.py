"""Every nest explained (issue 21, item 7): the nests inside an outer loop that stays as written
as a whole get their own analysis, outcome, diagnostic and report entry.

``kept_outer_cases/layers.c``: a time loop whose bound is a struct member (``p->layers``) around
two sweeps under an ``if`` (both transformed, reading the time loop's iterator and a local of
its body); a loop around a ``while`` around a sweep and a histogram (the sweep transformed, the
histogram kept with its own reason); a loop kept for the histogram inside it (which that reason
explains) around an unbraced sweep under ``if`` (transformed, braced as one statement). The output
builds with ``-fopenmp`` and prints what the sequential original prints at 1-4 threads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_harness import mdpoly_available
from usability_harness import assert_same_as_sequential, mdpoly, statuses

LAYERS = Path(__file__).resolve().parent / "kept_outer_cases" / "layers.c"

pytestmark = pytest.mark.skipif(not mdpoly_available(), reason="mdpoly code generation is not in this checkout")

EXPECTED = {
    11: ("kept", "sequential-dependence"),   # for l < p->layers (a hoisted member): each layer reads A
    14: ("transformed", None),               # its sweeps, under if (p->active[l])
    17: ("transformed", None),
    26: ("kept", "while-loop"),              # for t around a while
    29: ("transformed", None),               # the sweep inside the while
    34: ("kept", "non-affine-subscript"),    # the histogram next to it
    41: ("kept", "non-affine-subscript"),    # for t kept for its histogram (line 42, explained by it)
    45: ("transformed", None),               # if (c > t) for ...: the unbraced sweep
    53: ("transformed", None),               # main's initialisation
    59: ("transformed", None),               # main's checksum: a parallel loop with reduction(+:s)
}


def test_every_nest_has_an_entry_and_the_inner_ones_run_in_parallel(tmp_path: Path) -> None:
    out = tmp_path / "out.c"
    proc = mdpoly(LAYERS, out)
    assert proc.returncode == 0, proc.stderr
    assert statuses(out) == EXPECTED, proc.stderr
    err = proc.stderr
    # if (p->active[l]) reads data the nest never writes: a predicate, not the reason
    assert f"{LAYERS}:11:3: note: loop nest kept sequential: loop 'l' carries a flow dependence on 'A'" in err, err
    assert f"{LAYERS}:14:7: remark: loop nest parallelized: i:++ j:++" in err, err
    assert f"{LAYERS}:35:7: note: loop nest kept sequential: subscript 'h[idx[i]]' is not affine" in err, err
    # the histogram at line 42 is the reason for the loop at 41 and not an entry of its own
    assert f"{LAYERS}:43:7: note: loop nest kept sequential: subscript 'h[idx[i]]'" in err
    assert err.count(":43:") == 1 and ":42:" not in err, err
    assert_same_as_sequential(LAYERS, out, tmp_path)
