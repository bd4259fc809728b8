"""Atomic file writes: a file is replaced whole or not at all.

The results store writes every record through these, the engine its fit checkpoints and the
report its tables and figures, so a killed process never leaves a half-written file. A directory
built once and shared (a peer's compiled program) is put in place whole (:func:`publish_directory`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
from pathlib import Path

TMP_PREFIX = ".tmp-"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_file`).

    Parameters
    ----------
    path : pathlib.Path
        The destination; replaced if it exists.
    data : bytes
        The content.

    Raises
    ------
    OSError
        If a directory or the file cannot be written; ``path`` is left as it was.
    """
    with atomic_file(path) as fh:
        fh.write(data)


@contextlib.contextmanager
def atomic_file(path: Path):
    """A binary file to write that replaces ``path`` at the end of the block, or not at all.

    The file is a temporary one in the same directory, named ``.tmp-<host>-<pid>-...`` (see
    :meth:`ResultStore.clean_temp`), synced to disk and renamed into place when the block ends
    without an exception; the parent directories are created if missing.

    Parameters
    ----------
    path : pathlib.Path
        The destination; replaced if it exists.

    Yields
    ------
    file object
        The temporary file, open for binary writing.

    Raises
    ------
    OSError
        If a directory or the file cannot be written; on this or any exception in the block the
        temporary file is removed and ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:  # a write, a full disk:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc  # name the file it was for
        raise


def publish_directory(work: Path, out: Path, ready: Path) -> None:
    """Move the finished directory ``work`` to ``out`` whole, unless another process has put its own there.

    For a build shared by the processes that may make it at once (pytest-xdist workers, runs sharing a
    cache): each builds in a directory of its own (``tempfile.mkdtemp`` beside ``out``) and publishes
    it here, so none removes another's files or reads a half-written one. ``work`` gets the mode of a
    plain directory (0o755, not mkdtemp's 0o700) and is renamed to ``out``; if that fails because
    ``out`` is there, ``work`` is removed and the build in place is used.

    Parameters
    ----------
    work : pathlib.Path
        The finished build directory, on the file system of ``out``.
    out : pathlib.Path
        Where the build belongs.
    ready : pathlib.Path
        The file under ``out`` whose presence says a build is in place.

    Raises
    ------
    OSError
        If the rename fails and ``ready`` is not there (``work`` is removed).
    """
    os.chmod(work, 0o755)
    try:
        work.rename(out)
    except OSError:
        shutil.rmtree(work, ignore_errors=True)
        if not ready.is_file():
            raise
