"""Writing mdpoly's output files: the paths the user named -> checked, then all written or none.

``check_output_paths(input_path, outputs)`` runs before any work: it refuses an output that is
the input file or the same file as another output (:class:`OutputPathError`, a command-line
misuse), whatever the spelling (relative, absolute, through symbolic or hard links), and reports
an output whose folder does not exist, that names a folder, or that cannot be written (its
folder takes no new file, a device refuses writing; ``OSError``, naming the user's path);
``check_cache_dir`` does the same for a cache folder (created when missing). ``write_files_atomically(files)`` writes every file to a temporary file next to its
target first and renames them into place only when all were written, so a failure leaves every
existing file as it was. A symbolic link is written through (its target is replaced, the link
stays); a device or FIFO (``-o /dev/stdout``) is written directly. New files get the usual
``0666 & ~umask`` mode, replaced files keep theirs. Messages name the path the user gave, never
a temporary file.

.. autoclass:: OutputFile
.. autoclass:: OutputPathError
.. autofunction:: check_output_paths
.. autofunction:: write_files_atomically
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from mdpoly.diagnostics import MdpolyError


@dataclass(frozen=True, slots=True)
class OutputFile:
    """One file mdpoly will write: the option that named it (``-o``, ``--report``) and the
    path as the user spelled it."""

    option: str
    path: str


class OutputPathError(MdpolyError):
    """Output paths that would destroy a file: the input, or another output (exit status 2)."""

    code = "output-path"


def _same_file(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` name one file: the same resolved path, or (both existing) the
    same inode, which also catches hard links."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _is_special(path: str) -> bool:
    """An existing file that is neither regular nor a folder (a terminal, a pipe, /dev/null)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_output_paths(input_path: str, outputs: Sequence[OutputFile]) -> None:
    """Refuse outputs that would overwrite the input or each other; check that each can be
    created. Call it before doing any work.

    :raises OutputPathError: an output names the input file, or two outputs name one file.
    :raises OSError: an output's folder does not exist, or the output is a folder
        (``filename`` is the user's path).
    """
    for k, out in enumerate(outputs):
        if _same_file(out.path, input_path) and not _is_special(out.path):
            raise OutputPathError(f"{out.option} file '{out.path}' is the input file; refusing to overwrite it")
        for other in outputs[:k]:
            if _same_file(out.path, other.path) and not _is_special(out.path):
                raise OutputPathError(f"{out.option} file '{out.path}' is the same file as the "
                                      f"{other.option} file '{other.path}'; give them different names")
        if os.path.isdir(out.path):
            raise OSError(errno.EISDIR, os.strerror(errno.EISDIR), out.path)
        folder = os.path.dirname(os.path.realpath(out.path))
        if not os.path.isdir(folder):
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT), out.path)
        if _is_special(out.path):
            if not os.access(out.path, os.W_OK):
                raise OSError(errno.EACCES, os.strerror(errno.EACCES), out.path)
        else:
            _probe_folder(folder, out.path)


def _probe_folder(folder: str, name: str) -> None:
    """Create and remove a temporary file in ``folder``, as the atomic write will (permissions
    alone do not tell: root, read-only file systems, ``/proc``); an ``OSError`` names ``name``."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".mdpoly-", suffix=".tmp", dir=folder)
    except OSError as e:
        raise OSError(e.errno, e.strerror, name) from e
    os.close(fd)
    os.unlink(tmp)


def check_cache_dir(path: str, option: str) -> None:
    """The cache folder ``path`` exists (created with its parents when missing) and takes new files.

    :raises OSError: naming ``path`` (``option`` is only for the message's context)."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OSError(e.errno, f"{e.strerror} ({option})", path) from e
    if not os.path.isdir(path):
        raise OSError(errno.ENOTDIR, f"{os.strerror(errno.ENOTDIR)} ({option})", path)
    _probe_folder(path, path)


def _new_file_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@dataclass(slots=True)
class _Staged:
    path: str          # as the user gave it, for messages
    target: str        # the file that is replaced (symbolic links resolved)
    tmp: str | None    # the written temporary file; None: written directly at commit
    data: bytes


def _stage(path: str, data: bytes) -> _Staged:
    target = os.path.realpath(path)
    if _is_special(target):
        return _Staged(path, target, None, data)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    fd, tmp = tempfile.mkstemp(prefix=".mdpoly-", suffix=".tmp", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, mode)
    except BaseException:
        os.unlink(tmp)
        raise
    return _Staged(path, target, tmp, data)


def write_files_atomically(files: Sequence[tuple[str, bytes]]) -> None:
    """Write every ``(path, data)``; if any cannot be written, none is changed.

    :raises OSError: naming the user's path (``filename``), never the temporary file.
    """
    staged: list[_Staged] = []
    try:
        for path, data in files:
            try:
                staged.append(_stage(path, data))
            except OSError as e:
                raise OSError(e.errno, e.strerror, path) from e
        for s in staged:
            try:
                if s.tmp is None:
                    with open(s.target, "wb") as fh:
                        fh.write(s.data)
                else:
                    os.replace(s.tmp, s.target)
                    s.tmp = None
            except OSError as e:
                raise OSError(e.errno, e.strerror, s.path) from e
    finally:
        for s in staged:
            if s.tmp is not None and os.path.exists(s.tmp):
                os.unlink(s.tmp)
