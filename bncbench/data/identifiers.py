"""Identifier attributes: a distinct value on (nearly) every row is an identifier, not evidence.

**Definition.** On a table of ``n`` rows, a *nominal* attribute is an identifier when
``n >= IDENTIFIER_MIN_ROWS`` (20) and its number of distinct non-missing values is at least
``IDENTIFIER_SHARE * n`` (0.9 n).

Why this matters: a structure learner scores an identifier as the most informative parent of
every other attribute (it determines every row, so its conditional mutual information with
any attribute given the class is that attribute's whole conditional entropy): TAN and KDB make
it the parent of everything, its values are never seen again at test time, every factor backs
off to the class alone and the model is naive Bayes carrying a parameter per row and value.

Why these numbers:

* *Nominal only.* A numeric attribute is discretized by MDL on each training fold into a few
  class-informative intervals (or one, when no cut is accepted), so a value unique to every row
  (a measurement, adult's ``fnlwgt``) cannot single rows out. A numeric row index gets no cut
  unless the rows are sorted by class, which is a different problem (an ordered file).
* *0.9.* A legitimate nominal attribute with 0.9 n values has about one row per value: nothing
  can be estimated from it. Across the 64 registered datasets the highest share among the kept
  attributes is cylinder-bands' ``cylinder_number`` (429 values on 540 rows, 0.79), which the
  papers kept and which is not flagged; the identifiers the registry drops explicitly are
  flagged (promoters' row index and musk1's conformation names, 1.0; yeast's sequence names,
  1462 values on 1484 rows, 0.985).
* *20 rows.* Below that, "nearly every row" says little (a 10-row table may well have a
  10-valued attribute by design), and toy data is left alone.

**Numeric row identifiers.** MDL cannot single rows out of a numeric column, but a running
row number in a file sorted by class is cut into the class itself (a near-perfect, meaningless
predictor). A *numeric* attribute is a row identifier when ``n >= IDENTIFIER_MIN_ROWS``, at least
``IDENTIFIER_SHARE * n`` rows hold distinct values, and either its values are (nearly) a
permutation of the row numbers (integers, spanning at most ``n / IDENTIFIER_SHARE`` consecutive
values: ``0..n-1``, ``1..n`` with a few gaps, in any order) or it is monotone with the row order
(at least ``MONOTONE_SHARE`` of the steps between consecutive present values go the same way: a
row number, a timestamp of a log). The distinct-share condition keeps a file sorted by an
ordinary attribute (age, a count) out.

Identifiers are detected, never dropped silently: loaders warn (one
:class:`~bncbench.errors.IdentifierWarning` naming the columns) and drop them only with the
dataset option ``drop_identifiers`` (default false: the papers kept such columns);
:class:`~bncbench.model.classifier.BNClassifier` warns on a table it discretizes or reads as codes.
"""

from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
import pandas as pd

from bncbench.errors import IdentifierWarning

__all__ = ["IDENTIFIER_MIN_ROWS", "IDENTIFIER_SHARE", "MONOTONE_SHARE", "describe", "find_identifiers",
           "frame_identifiers", "numeric_identifiers", "screen", "warn_identifiers"]

IDENTIFIER_SHARE = 0.9
"""A nominal attribute with at least this share of distinct values per row is an identifier."""

IDENTIFIER_MIN_ROWS = 20
"""Tables with fewer rows are not checked."""

MONOTONE_SHARE = 0.99
"""A numeric attribute whose consecutive present values move one way in at least this share of the
steps is monotone with the row order."""


def find_identifiers(columns: Iterable[tuple[str, np.ndarray, int]], n_rows: int) -> dict[str, int]:
    """The identifiers among nominal columns given as integer codes.

    Parameters
    ----------
    columns : iterable of (str, ndarray of int, int)
        Per nominal column: its name, its codes and its number of values
        ``card``; a code outside ``[0, card)`` (``-1``, or a code reserved for
        "missing" just past the values) is a missing value. A column with
        fewer values than the threshold is skipped without a pass over it.
    n_rows : int
        Number of rows of the table.

    Returns
    -------
    dict of str to int
        Identifier name to its number of distinct non-missing values, in
        column order; empty for a table of fewer than
        :data:`IDENTIFIER_MIN_ROWS` rows.
    """
    if n_rows < IDENTIFIER_MIN_ROWS:
        return {}
    limit = IDENTIFIER_SHARE * n_rows
    out: dict[str, int] = {}
    for name, codes, card in columns:
        if card < limit:
            continue
        codes = np.asarray(codes)
        present = codes[(codes >= 0) & (codes < card)]
        distinct = int(np.count_nonzero(np.bincount(present, minlength=int(card))))
        if distinct >= limit:
            out[str(name)] = distinct
    return out


def frame_identifiers(X: pd.DataFrame) -> dict[str, int]:
    """The identifiers of a typed table (:class:`~bncbench.data.dataset.Dataset` columns).

    Parameters
    ----------
    X : pandas.DataFrame
        Categorical columns are nominal, float columns numeric.

    Returns
    -------
    dict of str to int
        Identifier name to its number of distinct non-missing values.
    """
    cols = ((c, X[c].cat.codes.to_numpy(), len(X[c].cat.categories))
            for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype))
    return find_identifiers(cols, len(X))


def numeric_identifiers(X: pd.DataFrame) -> dict[str, tuple[int, str]]:
    """The numeric row identifiers of a typed table (see the module's definition).

    Parameters
    ----------
    X : pandas.DataFrame
        Float columns are numeric; other columns are not looked at.

    Returns
    -------
    dict of str to (int, str)
        Identifier name to its number of distinct present values and why: ``"a permutation of
        the row numbers"`` or ``"monotone with the row order"``; empty for a table of fewer than
        :data:`IDENTIFIER_MIN_ROWS` rows.
    """
    n = len(X)
    out: dict[str, tuple[int, str]] = {}
    if n < IDENTIFIER_MIN_ROWS:
        return out
    limit = IDENTIFIER_SHARE * n
    for c in X.columns:
        if not pd.api.types.is_float_dtype(X[c].dtype):
            continue
        v = X[c].to_numpy(dtype=np.float64)
        v = v[~np.isnan(v)]
        if v.size < limit:
            continue
        distinct = int(np.unique(v).size)
        if distinct < limit:
            continue
        if np.all(v == np.round(v)) and v.max() - v.min() + 1 <= n / IDENTIFIER_SHARE:
            out[str(c)] = (distinct, "a permutation of the row numbers")
            continue
        step = np.sign(np.diff(v))
        if max(np.count_nonzero(step > 0), np.count_nonzero(step < 0)) >= MONOTONE_SHARE * step.size:
            out[str(c)] = (distinct, "monotone with the row order")
    return out


def screen(
    X: pd.DataFrame, where: str, drop: bool, advice: str, stacklevel: int = 2
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Find the identifiers of a typed table; drop them, or warn (once for nominal ones, once for numeric ones).

    Parameters
    ----------
    X : pandas.DataFrame
        A typed table (categorical = nominal).
    where : str
        What the table is (its path), for the warning.
    drop : bool
        Drop the identifiers (no warning) instead of warning.
    advice : str
        How to drop them, the warning's end (see :func:`warn_identifiers`).
    stacklevel : int, default 2
        As for :func:`warn_identifiers`, counted from the caller of this function.

    Returns
    -------
    X : pandas.DataFrame
        The table, without the identifiers if ``drop``.
    found : dict of str to int
        Identifier name to its number of distinct values (dropped or not), nominal ones
        (:func:`frame_identifiers`) and numeric row identifiers (:func:`numeric_identifiers`; one
        warning of their own).
    """
    found = frame_identifiers(X)
    numeric = numeric_identifiers(X)
    if (found or numeric) and drop:
        X = X.drop(columns=[*found, *numeric])
    else:
        warn_identifiers(found, len(X), where, advice, stacklevel=stacklevel + 1)
        if numeric:
            n, one = len(X), len(numeric) == 1
            items = ", ".join(f"{name!r} ({why}, {k} distinct values on {n} rows)"
                              for name, (k, why) in numeric.items())
            warnings.warn(IdentifierWarning(
                f"{where}: numeric attribute{'' if one else 's'} {items} look{'s' if one else ''} like a row "
                "identifier, not evidence (discretized, a row number in a file sorted by class predicts the class "
                f"perfectly and means nothing); {advice.replace('{it}', 'it' if one else 'them')}"),
                stacklevel=stacklevel + 1)
    return X, {**found, **{name: k for name, (k, _) in numeric.items()}}


def describe(found: dict[str, int], n_rows: int) -> str:
    """``attribute 'id' (106 distinct values on 106 rows) is an identifier``, for one or several.

    Parameters
    ----------
    found : dict of str to int
        Identifier name to its number of distinct values (non-empty).
    n_rows : int
        Number of rows of the table.

    Returns
    -------
    str
        The phrase, naming every identifier.
    """
    items = ", ".join(f"{name!r} ({k} distinct values on {n_rows} rows)" for name, k in found.items())
    return f"attribute {items} is an identifier" if len(found) == 1 else f"attributes {items} are identifiers"


def warn_identifiers(found: dict[str, int], n_rows: int, where: str, advice: str, stacklevel: int = 2) -> None:
    """Issue one :class:`~bncbench.errors.IdentifierWarning` naming every identifier (none if ``found`` is empty).

    Parameters
    ----------
    found : dict of str to int
        Identifier name to its number of distinct values.
    n_rows : int
        Number of rows of the table.
    where : str
        What the table is (a path, ``X``), the message's first word.
    advice : str
        What to do about it, the message's end; ``{it}`` becomes ``it`` or ``them``.
    stacklevel : int, default 2
        Passed to :func:`warnings.warn`, counted from the caller of this function.
    """
    if not found:
        return
    advice = advice.replace("{it}", "it" if len(found) == 1 else "them")
    warnings.warn(
        IdentifierWarning(
            f"{where}: {describe(found, n_rows)}, not evidence (TAN and KDB make an identifier every "
            f"attribute's parent, and its values are unseen at test time); {advice}"),
        stacklevel=stacklevel + 1,
    )
