"""Registered datasets that come with a given train/test split (MNIST, USPS).

Their registry entry has ``files: {train: [...], test: [...]}`` instead of one ``file``
(see :mod:`bncbench.data.locate`); each part is read as its format says, every file checked
by size and sha256 first:

* ``format: idx``: each part is an image file and its label file (MNIST's four files,
  :mod:`bncbench.data.formats.idx`); the pixels become numeric attributes ``p0, p1, ...``
  (row-major) and the labels the class, whose values are the entry's ``class_values``;
* a text format (``csv``, ...): each part is one file, parsed like a single-file entry
  (USPS's two CSVs, header ``label,p0..p255``).

The parts are stacked, training rows first, and the entry's ``transforms`` (e.g.
``downsample``) applied to the whole. The dataset's ``meta["split"]`` holds the number of
rows of each part: :func:`holdout_indices` turns it into the rows of the holdout protocol
(``cv.mode=holdout``, ``docs/protocol.md``), and cross-validation can still use all the rows.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from bncbench.data.catalog import load_registry
from bncbench.data.dataset import Dataset, from_table
from bncbench.data.formats.common import cat_index
from bncbench.data.formats.idx import read_idx_pair
from bncbench.data.locate import describe_directory, entry_dir, entry_files, verify_file
from bncbench.data.screen import check_shape
from bncbench.data.table import typed_table
from bncbench.data.transforms import apply_transforms
from bncbench.errors import BNCBenchError

__all__ = ["PARTS", "has_given_split", "holdout_indices", "load_given", "names_with_split"]

PARTS = ("train", "test")
"""The parts of a given split, in the order their rows are stacked."""


def has_given_split(entry: dict) -> bool:
    """Whether a registry entry's files hold a given train/test split.

    Parameters
    ----------
    entry : dict
        A registry entry.

    Returns
    -------
    bool
        True when its ``files`` has exactly the parts ``train`` and ``test``.
    """
    return isinstance(entry.get("files"), dict) and set(entry["files"]) == set(PARTS)


def names_with_split(registry: dict | None = None) -> list[str]:
    """The registered datasets that have a given train/test split, in registry order.

    Parameters
    ----------
    registry : dict, optional
        ``{name: entry}``; default the project's registry.

    Returns
    -------
    list of str
        Their names.
    """
    if registry is None:
        registry = load_registry()
    return [n for n, e in registry.items() if has_given_split(e)]


def holdout_indices(ds: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The training and test rows of a dataset's given split.

    Parameters
    ----------
    ds : Dataset
        A dataset loaded by :func:`load_given` (``meta["split"]`` = rows per part).

    Returns
    -------
    train, test : numpy.ndarray of int64
        The rows of the given training part and of the given test part.

    Raises
    ------
    BNCBenchError
        If the dataset has no given split (one line naming the datasets that have one).
    """
    split = (ds.meta or {}).get("split")
    if not split:
        have = ", ".join(names_with_split()) or "none registered"
        raise BNCBenchError(f"dataset {ds.name!r} has no given train/test split, so the holdout protocol "
                            f"(cv.mode=holdout) cannot evaluate it; datasets with one: {have}; "
                            "use cv.mode=cv for the others")
    n_train, n_test = int(split["train"]), int(split["test"])
    if n_train + n_test != ds.n_instances:
        raise BNCBenchError(f"dataset {ds.name!r}: its split has {n_train} + {n_test} rows, the data {ds.n_instances}")
    return np.arange(n_train, dtype=np.int64), np.arange(n_train, n_train + n_test, dtype=np.int64)


def _idx_part(entry: dict, paths: list) -> tuple[np.ndarray, pd.Categorical]:
    if len(paths) != 2:
        raise BNCBenchError(f"dataset {entry['name']!r}: an idx part is two files, images then labels "
                            f"(got {len(paths)})")
    images, labels = read_idx_pair(paths[0], paths[1])
    X = images.reshape(images.shape[0], -1)  # the pixels of each image, row-major
    values, inverse = np.unique(labels, return_inverse=True)
    cats = [str(v) for v in entry.get("class_values") or values]
    pos = cat_index(cats).get_indexer(values.astype(str))
    if (pos < 0).any():
        raise BNCBenchError(f"{paths[1]}: label {int(values[pos < 0][0])} is not a class value of "
                            f"{entry['name']!r} {cats}")
    return X, pd.Categorical.from_codes(pos[inverse.ravel()], categories=cat_index(cats))


def _text_part(entry: dict, paths: list, shas: list, cache: bool) -> tuple[pd.DataFrame, pd.Categorical]:
    if len(paths) != 1:
        raise BNCBenchError(f"dataset {entry['name']!r}: a {entry.get('format')} part is one file (got {len(paths)})")
    spec = {k: v for k, v in entry.items() if k != "transforms"}  # transforms apply to the stacked parts
    return typed_table(paths[0], spec, str(paths[0]), shas[0], cache)


def _stack(parts: list, source: str) -> tuple[pd.DataFrame, pd.Categorical]:
    """The parts' rows one after the other; pixel arrays (idx) become one float64 table ``p0, p1, ...``."""
    if isinstance(parts[0][0], np.ndarray):
        if len({X.shape[1] for X, _ in parts}) != 1:
            raise BNCBenchError(f"{source}: the training and test images have different shapes")
        pixels = np.concatenate([X for X, _ in parts]).astype(np.float64)
        X = pd.DataFrame(pixels, columns=[f"p{k}" for k in range(pixels.shape[1])])
    else:
        cols = list(parts[0][0].columns)
        if any(list(X.columns) != cols for X, _ in parts[1:]):
            raise BNCBenchError(f"{source}: the training and test parts have different attributes")
        X = pd.concat([X for X, _ in parts], ignore_index=True)
    y = pd.api.types.union_categoricals([y for _, y in parts], ignore_order=True)
    return X, pd.Categorical(y)


def load_given(entry: dict, data_dir: str | os.PathLike | None = None, *, cache: bool = True) -> Dataset:
    """Load a registered dataset whose files hold a given train/test split.

    Parameters
    ----------
    entry : dict
        Its registry entry (with ``files``; see the module docstring).
    data_dir : str or os.PathLike, optional
        The data directory; the entry's ``directory`` may be found beside it
        (:func:`bncbench.data.locate.entry_dir`).
    cache : bool, default True
        Use the parsed-table cache for text parts.

    Returns
    -------
    Dataset
        Training rows first, then test rows; ``meta["split"]`` = ``{"train": rows, "test": rows}``,
        ``meta["files"]`` the files read with their sha256.

    Raises
    ------
    BNCBenchError
        If the directory or a file is missing, a file is truncated or has another sha256,
        cannot be parsed, or the result has another shape than the entry's ``expected``.
    """
    name = entry["name"]
    if not has_given_split(entry):
        raise BNCBenchError(f"dataset {name!r}: 'files' must have the parts train and test")
    ddir = entry_dir(entry, data_dir)
    if not ddir.is_dir():
        raise BNCBenchError(f"dataset {name!r}: directory {ddir} not found ({describe_directory(entry)})")
    files = sorted(entry_files(entry), key=lambda f: PARTS.index(f["part"]))  # training files first
    for f in files:
        f["path"] = ddir / f["file"]
        f["sha256"] = verify_file(f["path"], f)
    parts, rows = [], {}
    for part in PARTS:
        mine = [f for f in files if f["part"] == part]
        paths = [f["path"] for f in mine]
        if entry.get("format") == "idx":
            X, y = _idx_part(entry, paths)
        else:
            X, y = _text_part(entry, paths, [f["sha256"] for f in mine], cache)
        parts.append((X, y))
        rows[part] = int(X.shape[0])
    X, y = _stack(parts, str(ddir))
    X, y = apply_transforms(X, y, entry.get("transforms") or [], f"dataset {name!r}")
    meta = {k: entry[k] for k in ("format", "provenance", "paper", "differences", "transforms", "variant_of")
            if k in entry}
    meta.update({"path": str(ddir), "registered": True, "split": rows,
                 "files": [{"file": f["file"], "part": f["part"], "path": str(f["path"]), "sha256": f["sha256"]}
                           for f in files]})
    ds = from_table(name, X, y, meta)
    check_shape(name, ddir, ds, entry)
    exp = entry.get("expected") or {}
    wrong = [f"{p} {rows[p]} (expected {exp[p]})" for p in PARTS if p in exp and int(exp[p]) != rows[p]]
    if wrong:
        raise BNCBenchError(f"dataset {name!r}: the given split in {ddir} has {', '.join(wrong)} rows")
    return ds
