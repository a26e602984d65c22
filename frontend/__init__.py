"""mdpoly's front end: C file -> ``FileAnalysis`` (SCoPs, dependences, MDH expressions).

``analyze_file(path, options, sink) -> FileAnalysis`` is the one entry point; the stages are
``parse`` (cpp + pycparser), ``scop`` (polyhedral model), ``deps`` (isl dataflow and loop
classification), ``pragmas`` (``#pragma mdh`` checking) and ``to_mdh`` (MDH construction).
"""

from mdpoly.frontend.analyze import analyze_file, analyze_nest
from mdpoly.ir.nest import FileAnalysis

__all__ = ["FileAnalysis", "analyze_file", "analyze_nest"]
