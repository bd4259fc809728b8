"""A data file's typed table, as its parse specification makes it, through the parsed-table cache.

The middle of loading (``docs/architecture.md``, "Data"): :func:`typed_table` looks the file's
table up in the cache (:mod:`bncbench.data.cache`, keyed by the file's sha256 and the
specification's :data:`SPEC_KEYS`), else parses it (:func:`bncbench.data.parse.parse_file`),
drops the columns the specification drops, handles rows without a class, applies the
transforms (:func:`bncbench.data.transforms.apply_transforms`) and caches the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from bncbench.data.cache import cache_file, read_cached, write_cached
from bncbench.data.formats.common import resolve_column
from bncbench.data.parse import parse_file
from bncbench.data.transforms import apply_transforms
from bncbench.errors import BNCBenchError

__all__ = ["SPEC_KEYS", "typed_table"]

SPEC_KEYS = (
    "format", "gzip", "header", "separator", "class_column", "column_names", "drop_columns",
    "missing", "types", "class_values", "skip_lines", "missing_class", "transforms",
)
"""The fields of a registry entry (or of :func:`bncbench.data.uci.load_file`'s options) that decide
its typed table; those set are the cache key with the file's sha256 (changing this changes keys)."""


def typed_table(path: Path, spec: dict, source: str, sha: str, use_cache: bool) -> tuple[pd.DataFrame, pd.Categorical]:
    """The typed table of a data file: from the cache, else parsed, finished, transformed and cached.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    spec : dict
        Its parse specification (a registry entry, or the options of an unregistered file);
        only its :data:`SPEC_KEYS` are read.
    source : str
        What the file is called in error messages (its path).
    sha : str
        The file's sha256 (:func:`bncbench.data.locate.sha256_file`).
    use_cache : bool
        Read and write the cache.

    Returns
    -------
    X : pandas.DataFrame
        The attributes: categorical and float64 columns, rows renumbered from 0.
    y : pandas.Categorical
        The class.

    Raises
    ------
    BNCBenchError
        If the file cannot be parsed, a column to drop is unknown, a row has no class (unless
        ``missing_class: drop``), or a transform fails.
    """
    spec = {k: spec.get(k) for k in SPEC_KEYS if spec.get(k) is not None}
    cfile = cache_file(sha, spec)
    if use_cache:
        hit = read_cached(cfile)
        if hit is not None:
            return hit
    X, y, linenos = parse_file(path, spec, source)
    X, y = _finish(X, y, source, drop_columns=spec.get("drop_columns", ()),
                   missing_class=spec.get("missing_class", "error"), linenos=linenos)
    X, y = apply_transforms(X, y, spec.get("transforms") or [], source)
    y = pd.Categorical(y)
    if use_cache:
        write_cached(cfile, X, y)
    return X, y


def _finish(
    X: pd.DataFrame,
    y: pd.Categorical,
    source: str,
    *,
    drop_columns: Sequence[str] = (),
    missing_class: str = "error",
    linenos: Sequence[int] | None = None,
) -> tuple[pd.DataFrame, pd.Categorical]:
    """The columns to drop dropped, and rows without a class dropped or reported (with their line)."""
    drop = [resolve_column(c, X.columns, source, "column to drop") for c in drop_columns or []]
    if drop:
        X = X.drop(columns=drop)
    codes = np.asarray(y.codes)
    miss = codes < 0
    if miss.any():
        if missing_class == "drop":
            keep = ~miss
            X = X.loc[keep]
            y = y[keep]
        else:
            k = int(np.flatnonzero(miss)[0])
            line = f", line {linenos[k]}" if linenos is not None else ""
            raise BNCBenchError(
                f"{source}{line}: missing class value ({int(miss.sum())} rows); "
                "set missing_class: drop to discard them"
            )
    return X.reset_index(drop=True), y
