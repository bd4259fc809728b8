"""Helpers shared by the file-format parsers: file text, column lookup and typed columns.

Reading a (possibly gzipped) data file as text, resolving a class/column
specification against column names, and turning raw string values into float
columns or categoricals with a fixed category order, with errors that name the
source and line.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError

__all__ = ["FORMATS", "TEXT_FORMATS", "cat_index", "read_text", "resolve_column", "to_categorical", "to_float"]

TEXT_FORMATS = ("csv", "tsv", "whitespace")
"""The delimited-text formats (:mod:`bncbench.data.formats.text`)."""
FORMATS = ("arff",) + TEXT_FORMATS
"""Every format a single-file dataset may have."""


def read_text(path: Path, gz: bool) -> str:
    """A data file's text: UTF-8, else Latin-1.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    gz : bool
        Whether it is gzipped.

    Returns
    -------
    str
        The decoded text.

    Raises
    ------
    BNCBenchError
        If the file is missing, or a truncated or corrupt gzip stream.
    """
    try:
        raw = path.read_bytes()
        if gz:
            raw = gzip.decompress(raw)
    except FileNotFoundError:
        raise BNCBenchError(f"{path}: file not found") from None
    except (EOFError, OSError, zlib.error) as exc:
        raise BNCBenchError(f"{path}: truncated or corrupt gzip file ({exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def resolve_column(spec: Any, columns: Sequence[str], source: str, what: str = "class column") -> str:
    """The column a specification names.

    Parameters
    ----------
    spec : str or int
        An index, ``"first"``, ``"last"``, or a name (case-insensitive when that is unambiguous).
    columns : sequence of str
        The column names.
    source : str
        Where the columns come from, for the error message.
    what : str, default ``"class column"``
        What the column is, for the error message.

    Returns
    -------
    str
        The column's name.

    Raises
    ------
    BNCBenchError
        If no column matches.
    """
    cols = list(columns)
    if isinstance(spec, int):
        if not -len(cols) <= spec < len(cols):
            raise BNCBenchError(f"{source}: {what} index {spec} out of range ({len(cols)} columns)")
        return cols[spec]
    s = str(spec)
    if s == "last":
        return cols[-1]
    if s == "first":
        return cols[0]
    if s in cols:
        return s
    low = [c for c in cols if c.lower() == s.lower()]
    if len(low) == 1:
        return low[0]
    shown = cols if len(cols) <= 15 else cols[:15] + ["..."]
    raise BNCBenchError(f"{source}: no {what} {s!r} (columns: {shown})")


def cat_index(labels: Sequence[str]) -> pd.Index:
    """Category labels as an Index of the default string dtype (``str`` in pandas 3)."""
    return pd.Index([str(v) for v in labels])


def to_float(vals: Sequence[str | None], linenos: Sequence[int], source: str, col: str) -> np.ndarray:
    """A numeric column from its values as strings (``None`` for missing: NaN).

    Parameters
    ----------
    vals : sequence of str or None
        The values.
    linenos : sequence of int
        Each value's line in the source, for the error message.
    source, col : str
        The source and the column's name, for the error message.

    Returns
    -------
    numpy.ndarray of float64
        The numbers.

    Raises
    ------
    BNCBenchError
        Naming the line of the first value that is not a number.
    """
    arr = np.array(["nan" if v is None else v for v in vals], dtype=object)
    try:
        return arr.astype(np.float64)
    except ValueError:
        pass
    num = pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(np.isnan(num) & np.array([v is not None and v.lower() != "nan" for v in vals]))
    k = int(bad[0])
    raise BNCBenchError(
        f"{source}, line {linenos[k]}: attribute {col!r} is numeric but has value {vals[k]!r}"
    )


def to_categorical(
    vals: Sequence[str | None], categories: list[str], linenos: Sequence[int], source: str, col: str,
    what: str = "attribute",
) -> pd.Categorical:
    """A nominal column from its values as strings, its categories in the declared order.

    Parameters
    ----------
    vals : sequence of str or None
        The values (``None`` for missing).
    categories : list of str
        The declared values.
    linenos : sequence of int or None
        Each value's line in the source, for the error message.
    source, col : str
        The source and the column's name, for the error message.
    what : str, default ``"attribute"``
        ``"class"`` for the class column (another error message).

    Returns
    -------
    pandas.Categorical
        The codes into ``categories`` (-1 for missing).

    Raises
    ------
    BNCBenchError
        Naming the line of the first value that is not declared.
    """
    index = cat_index(categories)
    arr = np.array(vals, dtype=object)
    codes = index.get_indexer(arr)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        bad = bad[np.array([arr[k] is not None for k in bad], dtype=bool)]
    if bad.size:
        k = int(bad[0])
        line = f", line {linenos[k]}" if linenos is not None else ""
        shown = categories if len(categories) <= 12 else categories[:12] + ["..."]
        kind = "unknown class value" if what == "class" else "undeclared value"
        raise BNCBenchError(
            f"{source}{line}: {kind} {vals[k]!r} for {what} {col!r} (declared: {shown})"
        )
    return pd.Categorical.from_codes(codes, categories=index)
