"""The last checks of a loaded table: identifier attributes, and the shape the registry expects.

The step before a :class:`~bncbench.data.dataset.Dataset` is handed out (``docs/architecture.md``,
"Data"): :func:`screen_identifiers` drops or warns about identifier attributes
(:mod:`bncbench.data.identifiers`) and records them in the dataset's ``meta``;
:func:`check_shape` compares a registered dataset with its entry's ``expected`` shape.
"""

from __future__ import annotations

import pandas as pd

from bncbench.data.dataset import Dataset
from bncbench.data.identifiers import screen
from bncbench.errors import BNCBenchError

__all__ = ["check_shape", "screen_identifiers"]


def screen_identifiers(X: pd.DataFrame, where: str, drop, advice: str) -> tuple[pd.DataFrame, dict]:
    """Identifiers dropped (``drop``) or warned about, and the meta entries that record them.

    The warning points at the caller of the loader that calls this function.

    Parameters
    ----------
    X : pandas.DataFrame
        The typed table.
    where : str
        What the table is (its path), the warning's first word.
    drop : bool or None
        Drop the identifiers instead of warning.
    advice : str
        How to drop them, the warning's end (:func:`bncbench.data.identifiers.warn_identifiers`).

    Returns
    -------
    X : pandas.DataFrame
        The table, without the identifiers if ``drop``.
    meta : dict
        ``{"identifiers": {name: distinct values}, "identifiers_dropped": bool}``.
    """
    X, found = screen(X, where, bool(drop), advice, stacklevel=3)  # the warning points at the loader's caller
    return X, {"identifiers": found, "identifiers_dropped": bool(found) and bool(drop)}


def check_shape(name: str, where, ds: Dataset, entry: dict) -> None:
    """Check a registered dataset's rows, attributes and classes against its entry's ``expected``.

    Parameters
    ----------
    name : str
        The dataset's name.
    where : str or os.PathLike
        Where it was read from, for the error message.
    ds : Dataset
        The dataset.
    entry : dict
        Its registry entry (no ``expected``: nothing to check).

    Raises
    ------
    BNCBenchError
        Naming every count that differs.
    """
    exp = entry.get("expected") or {}
    got = {"rows": ds.n_instances, "attributes": ds.n_attributes, "classes": ds.n_classes}
    diffs = [f"{k} {got[k]} (expected {exp[k]})" for k in got if k in exp and int(exp[k]) != got[k]]
    if diffs:
        raise BNCBenchError(f"dataset {name!r}: {where} parsed to an unexpected shape: {', '.join(diffs)}")
