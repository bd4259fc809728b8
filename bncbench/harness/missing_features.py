"""Classification rate with features removed at test time (Pernkopf et al., §5.1–5.2, Figs. 6–7).

A fitted classifier is evaluated on the test rows with ``k`` features removed from every row,
drawn uniformly and independently per row, for each ``k`` of a list and ``R`` random draws
each: the curve of the classification rate against ``k``, its mean and spread over the draws.
Removed features are either left missing (code -1: a BNC with ``missing="marginalize"`` sums
them out exactly) or filled by an imputation (:func:`bncbench.model.impute.knn_impute`: the most
frequent value of the k nearest training rows for a BNC, their mean for an SVM).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def random_missing_mask(n_rows: int, n_features: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A mask with exactly ``k`` True entries per row, their positions uniform and independent per row.

    Parameters
    ----------
    n_rows, n_features : int
        Shape of the mask.
    k : int
        Missing features per row, ``0 <= k <= n_features``.
    rng : numpy.random.Generator
        Source of the draw.

    Returns
    -------
    ndarray of bool, shape (n_rows, n_features)

    Raises
    ------
    BNCBenchError
        If ``k`` is out of range.
    """
    if not 0 <= k <= n_features:
        raise BNCBenchError(f"cannot remove {k} of {n_features} features")
    ranks = np.argsort(rng.random((n_rows, n_features)), axis=1)
    mask = np.zeros((n_rows, n_features), dtype=bool)
    np.put_along_axis(mask, ranks[:, :k], True, axis=1)
    return mask


def missing_feature_curve(predict: Callable[[np.ndarray], np.ndarray], X_test: ArrayLike, y_test: ArrayLike,
                          ks: Sequence[int], repeats: int = 10, seed: int = 0,
                          impute: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                          missing_code: float = -1) -> pd.DataFrame:
    """Classification rate against the number of features removed per test row.

    Parameters
    ----------
    predict : callable
        ``predict(X) -> labels`` of a fitted classifier (e.g. ``clf.predict``).
    X_test : array-like of shape (n, d)
        Complete test features (codes for a BNC).
    y_test : array-like of shape (n,)
        Test labels.
    ks : sequence of int
        Numbers of features to remove per row.
    repeats : int, default=10
        Random draws of the removed features per ``k``.
    seed : int, default=0
        Seed of the draws (the same masks for every model evaluated with this seed).
    impute : callable, optional
        ``impute(X_missing, mask) -> X_filled``; by default removed entries are set to
        ``missing_code`` and handed to ``predict`` as they are.
    missing_code : float, default=-1
        The value of a removed entry when there is no ``impute`` (-1: unknown to a BNC; use NaN
        for float features).

    Returns
    -------
    pandas.DataFrame
        One row per ``(k, repeat)``: ``k``, ``repeat`` and ``rate`` (the classification rate).

    Raises
    ------
    BNCBenchError
        If a ``k`` is out of range or ``repeats < 1``.
    """
    X = np.asarray(X_test)
    y = np.asarray(y_test)
    if repeats < 1:
        raise BNCBenchError(f"repeats must be >= 1, got {repeats}")
    rng = np.random.default_rng(seed)
    rows = []
    for k in ks:
        for r in range(repeats):
            mask = random_missing_mask(X.shape[0], X.shape[1], int(k), rng)
            Xm = np.where(mask, missing_code, X)
            if impute is not None:  # it sees the removed entries as missing_code only
                Xm = impute(Xm, mask)
            rows.append({"k": int(k), "repeat": r, "rate": float(np.mean(np.asarray(predict(Xm)) == y))})
    return pd.DataFrame(rows)
