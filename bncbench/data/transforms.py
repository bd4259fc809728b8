"""The registry's declarative transforms of a typed table (``transforms:`` in ``datasets/registry.yaml``).

A step of loading (``docs/architecture.md``, "Data"): after a table is parsed and typed, each
``{op: ..., ...}`` of the entry's ``transforms`` is applied in order (:func:`apply_transforms`):

* ``downsample``: average pooling of image pixels (:mod:`bncbench.data.images`);
* ``bin_class``: a numeric class binned into labelled intervals;
* ``drop_unused_classes``, ``drop_constant_attributes``;
* ``one_hot_to_nominal``: groups of 0/1 indicator columns become nominal attributes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bncbench.data.formats.common import cat_index, resolve_column
from bncbench.data.images import downsample_frame
from bncbench.errors import BNCBenchError

__all__ = ["apply_transforms"]


def apply_transforms(X: pd.DataFrame, y: pd.Categorical, transforms: list, source: str):
    """Apply a registry entry's transforms, in order.

    Parameters
    ----------
    X : pandas.DataFrame
        The attributes.
    y : pandas.Categorical
        The class.
    transforms : list of dict
        The entry's ``transforms`` (``None`` or empty: none).
    source : str
        What the table is, for error messages.

    Returns
    -------
    X : pandas.DataFrame
        The transformed attributes.
    y : pandas.Categorical
        The transformed class.

    Raises
    ------
    BNCBenchError
        On an unknown ``op`` or a transform that does not fit the table.
    """
    for t in transforms or []:
        op = t.get("op")
        if op == "downsample":  # average pooling of image pixels (bncbench.data.images)
            X = downsample_frame(X, factor=t.get("factor"), shape=t.get("shape"), source=source)
        elif op == "bin_class":
            # class values are numbers; value <= upper_bounds[i] -> labels[i], above all -> labels[-1]
            bounds = [float(b) for b in t["upper_bounds"]]
            labels = [str(l) for l in t["labels"]]
            if len(labels) != len(bounds) + 1:
                raise BNCBenchError(f"{source}: bin_class needs len(labels) == len(upper_bounds) + 1")
            vals = pd.to_numeric(pd.Series(np.asarray(y, dtype=object)), errors="coerce").to_numpy(float)
            if np.isnan(vals).any():
                raise BNCBenchError(f"{source}: bin_class on a class with non-numeric values")
            codes = np.searchsorted(np.asarray(bounds), vals, side="left")
            y = pd.Categorical.from_codes(codes, categories=cat_index(labels))
        elif op == "drop_unused_classes":
            y = y.remove_unused_categories()
        elif op == "drop_constant_attributes":
            keep = [c for c in X.columns if X[c].nunique(dropna=True) > 1]
            X = X[keep]
        elif op == "rows":  # keep the rows [start, stop) of the file (satimage: sat.trn inside satellite.tsv)
            start, stop = int(t.get("start", 0)), t.get("stop")
            sel = slice(start, None if stop is None else int(stop))
            X = X.iloc[sel].reset_index(drop=True)
            y = y[sel]
        elif op == "one_hot_to_nominal":
            X = _one_hot_to_nominal(X, t.get("groups"), source)
        else:
            raise BNCBenchError(f"{source}: unknown transform {op!r}")
    return X, y


def _one_hot_to_nominal(X: pd.DataFrame, groups, source: str) -> pd.DataFrame:
    """Each group of 0/1 indicator columns becomes one nominal attribute, where its leftmost column was.

    ``groups`` maps the new attribute's name to its indicator columns; its value is the name of
    the column holding the row's 1 (a missing indicator makes it missing). A row whose
    indicators are not exactly one 1 among 0s is an error, as is a value other than 0 and 1.
    """
    if not isinstance(groups, dict) or not groups or not all(isinstance(c, list) and c for c in groups.values()):
        raise BNCBenchError(f"{source}: one_hot_to_nominal needs groups: {{name: [indicator columns]}}")
    for name, cols in groups.items():
        cols = [resolve_column(c, X.columns, source, "indicator column") for c in cols]
        block = X[cols].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        present = ~np.isnan(block).any(axis=1)
        bad = present & ~np.all((block == 0) | (block == 1), axis=1)
        bad |= present & (np.nansum(block, axis=1) != 1)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise BNCBenchError(f"{source}: one_hot_to_nominal group {name!r}: {int(bad.sum())} rows are not one 1 "
                                f"among 0s (first: row {k + 1}, values {block[k].tolist()})")
        codes = np.where(present, np.argmax(np.nan_to_num(block, nan=-1), axis=1), -1)  # NaN rows: missing
        at = min(X.columns.get_loc(c) for c in cols)
        X = X.drop(columns=cols)
        X.insert(at, str(name), pd.Categorical.from_codes(codes, categories=cat_index(cols)))
    return X
