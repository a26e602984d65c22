"""The C files mdpoly's output is made of: ``c_file(name, **fields) -> str`` from package data ``backends/c/``.

Each file is C (or OpenCL C) that compiles on its own (``tests/backends/test_c_files.py``): the
host runtimes ``opencl_host.h`` and ``cuda_host.h`` spliced once into every output file of their
target, and the kernel preludes ``opencl_kernel.cl`` and ``cuda_kernel.h`` that start every kernel
source. A file opens with a comment naming it and its job, which ``c_file`` leaves out of the
text it returns. A file may hold named fields ``${name}`` (``string.Template``): ``c_file`` checks
that the fields given are exactly the file's, so a misspelt or forgotten field is an error, not
a hole in the output.
"""

from __future__ import annotations

import string
from importlib.resources import files


def c_file(name: str, **fields: str) -> str:
    """The text of ``backends/c/<name>`` without its header comment, its fields filled in.

    :raises ValueError: when the file's fields and ``fields`` differ, or a ``$`` is malformed.
    :raises FileNotFoundError: for a file that is not there.
    """
    return render(name, (files("mdpoly.backends") / "c" / name).read_text(encoding="utf-8"), fields)


def render(name: str, text: str, fields: dict[str, str]) -> str:
    """``text`` (the C file ``name``) without its header comment, its ``${...}`` fields filled in.

    :raises ValueError: when the file's fields and ``fields`` differ, or a ``$`` is malformed.
    """
    if text.startswith("/*"):
        text = text[text.index("*/") + 2:].lstrip("\n")
    template = string.Template(text)
    if not template.is_valid():
        raise ValueError(f"{name}: a '$' that is not a ${{field}}")
    wanted = set(template.get_identifiers())
    if wanted != set(fields):
        raise ValueError(f"{name}: fields {sorted(wanted)} given as {sorted(fields)}")
    return template.substitute(fields)
