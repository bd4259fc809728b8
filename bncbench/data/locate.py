"""Where the files of a registered dataset are, and which files it has.

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

import os
from pathlib import Path

from bncbench.errors import BNCBenchError

__all__ = ["describe_directory", "entry_dir", "entry_files"]


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
    from bncbench.data.uci import resolve_data_dir

    spec = entry.get("directory")
    if spec is None:
        return resolve_data_dir(data_dir)
    if not isinstance(spec, dict) or not (spec.get("env") or spec.get("sibling")):
        raise BNCBenchError(f"dataset {entry['name']!r}: registry field 'directory' needs env and/or sibling")
    env = spec.get("env")
    if env and os.environ.get(env):
        return Path(os.environ[env]).expanduser()
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
