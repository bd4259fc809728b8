"""Where the files of a registered dataset are, which files it has, and whether each is the one registered.

The first step of loading (``docs/architecture.md``, "Data"): the data directory
(:func:`resolve_data_dir`), an entry's own directory (:func:`entry_dir`), its files
(:func:`entry_files`), and each file's presence, size and sha256 (:func:`verify_file`).

Most registry entries name one ``file`` in the data directory (``$BNCBENCH_DATA_DIR`` or a
``data_dir`` argument). An entry may instead say where its own directory is, and have several
files:

.. code-block:: yaml

    directory:                   # looked for in
      env: BNCBENCH_DIGITS_DIR   #   this directory, when the variable is set,
      sibling: digits            #   else digits/ beside the data directory
    files:                       # a given train/test split: each part's files, each with its checks
      train:
        - {file: mnist/train-images-idx3-ubyte.gz, bytes: 9912422, sha256: ...}

so that the shared UCI directory stays the data directory of every run while the digit
datasets are found in its sibling ``digits/`` (or wherever ``$BNCBENCH_DIGITS_DIR`` says).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from bncbench import settings
from bncbench.errors import BNCBenchError

__all__ = ["describe_directory", "entry_dir", "entry_files", "resolve_data_dir", "sha256_file", "verify_file"]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: the argument, else ``$BNCBENCH_DATA_DIR``.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        The directory; ``None`` or ``""`` means ``$BNCBENCH_DATA_DIR``.

    Returns
    -------
    pathlib.Path
        The directory, ``~`` expanded (not checked for existence).

    Raises
    ------
    BNCBenchError
        If neither the argument nor ``$BNCBENCH_DATA_DIR`` is set.
    """
    d = data_dir if data_dir not in (None, "") else settings.data_dir()
    if not d:
        raise BNCBenchError(
            "no data directory: set BNCBENCH_DATA_DIR to the directory of the registered datasets' files, "
            "or pass data_dir"
        )
    return Path(d).expanduser()


def entry_dir(entry: dict, data_dir: str | os.PathLike | None = None) -> Path:
    """The directory a registered dataset's files are looked for in.

    Parameters
    ----------
    entry : dict
        A registry entry (with its ``name``).
    data_dir : str or os.PathLike, optional
        The data directory; default ``$BNCBENCH_DATA_DIR``.

    Returns
    -------
    pathlib.Path
        The entry's ``directory``: the directory its ``env`` variable names when that is
        set, else its ``sibling`` beside the data directory; the data directory for an
        entry without ``directory``. Not checked for existence.

    Raises
    ------
    BNCBenchError
        If the directory cannot be determined (no variable and no data directory), or the
        entry's ``directory`` is malformed.
    """
    spec = entry.get("directory")
    if spec is None:
        return resolve_data_dir(data_dir)
    if not isinstance(spec, dict) or not (spec.get("env") or spec.get("sibling")):
        raise BNCBenchError(f"dataset {entry['name']!r}: registry field 'directory' needs env and/or sibling")
    own = settings.directory(spec["env"]) if spec.get("env") else None
    if own is not None:
        return own
    if spec.get("sibling"):
        try:
            base = resolve_data_dir(data_dir)
        except BNCBenchError:
            pass
        else:
            return base.expanduser().absolute().parent / str(spec["sibling"])
    raise BNCBenchError(f"dataset {entry['name']!r}: no directory for its files; {describe_directory(entry)} "
                        "(neither variable is set)")


def describe_directory(entry: dict) -> str:
    """Where an entry's files are looked for, in words (for ``data list`` / ``data show`` and errors).

    Parameters
    ----------
    entry : dict
        A registry entry.

    Returns
    -------
    str
        E.g. ``"looked for in $BNCBENCH_DIGITS_DIR, else in digits/ beside the data directory
        ($BNCBENCH_DATA_DIR/../digits)"``.
    """
    spec = entry.get("directory")
    if not isinstance(spec, dict):
        return "looked for in the data directory ($BNCBENCH_DATA_DIR or data_dir)"
    parts = []
    if spec.get("env"):
        parts.append(f"${spec['env']}")
    if spec.get("sibling"):
        parts.append(f"{spec['sibling']}/ beside the data directory ($BNCBENCH_DATA_DIR/../{spec['sibling']})")
    return "looked for in " + ", else in ".join(parts)


def entry_files(entry: dict) -> list[dict]:
    """Every file of a registered dataset, each with its checks and the part it belongs to.

    Parameters
    ----------
    entry : dict
        A registry entry: one ``file`` (with the entry's ``bytes`` and ``sha256``), or
        ``files``, a mapping from part (``train``, ``test``) to a list of file records.

    Returns
    -------
    list of dict
        ``{"file", "bytes", "sha256", "part", "name"}`` per file, in registry order;
        ``part`` is ``None`` for a single-file entry.

    Raises
    ------
    BNCBenchError
        If ``files`` is malformed.
    """
    name = entry["name"]
    if "files" not in entry:
        return [{"file": entry["file"], "bytes": entry.get("bytes"), "sha256": entry.get("sha256"), "part": None,
                 "name": name}]
    parts = entry["files"]
    if not isinstance(parts, dict) or not parts:
        raise BNCBenchError(f"dataset {name!r}: registry field 'files' must map parts (train, test) to file lists")
    out = []
    for part, recs in parts.items():
        if not isinstance(recs, list) or not recs:
            raise BNCBenchError(f"dataset {name!r}: files.{part} must be a list of {{file, bytes, sha256}}")
        for r in recs:
            if not isinstance(r, dict) or "file" not in r:
                raise BNCBenchError(f"dataset {name!r}: every file of files.{part} needs 'file'")
            out.append({"file": r["file"], "bytes": r.get("bytes"), "sha256": r.get("sha256"), "part": str(part),
                        "name": name})
    return out


def sha256_file(path: str | os.PathLike) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks.

    Parameters
    ----------
    path : str or os.PathLike
        The file to hash.

    Returns
    -------
    str
        The hex digest (64 lowercase hex digits).
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_file(path: Path, record: dict) -> str:
    """Check that a registered file is there, whole, and the one registered; return its sha256.

    Parameters
    ----------
    path : pathlib.Path
        Where the file is looked for.
    record : dict
        Its registry record: the dataset's ``name``, and the file's ``bytes`` and ``sha256``
        when the registry has them (a single-file entry, or one of :func:`entry_files`).

    Returns
    -------
    str
        The file's sha256.

    Raises
    ------
    BNCBenchError
        If the file is missing, shorter than ``bytes`` (truncated), or has another sha256.
    """
    name = record["name"]
    if not path.is_file():
        raise BNCBenchError(
            f"dataset {name!r}: file {path} not found (set BNCBENCH_DATA_DIR or run "
            f"`python -m bncbench data fetch {name}` if it has a URL)"
        )
    size = path.stat().st_size
    want_size = record.get("bytes")
    if want_size is not None and size < int(want_size):
        raise BNCBenchError(f"dataset {name!r}: {path} is truncated ({size} of {want_size} bytes)")
    sha = sha256_file(path)
    want = record.get("sha256")
    if want and sha != want:
        extra = f", {size} bytes instead of {want_size}" if want_size is not None and size != int(want_size) else ""
        raise BNCBenchError(
            f"dataset {name!r}: {path} has sha256 {sha[:16]}…, expected {str(want)[:16]}…{extra} "
            "(corrupt or a different version of the file)"
        )
    return sha
