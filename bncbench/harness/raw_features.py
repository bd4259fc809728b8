"""The fold's features before discretization, for the models that read them (Pernkopf et al.'s SVM).

Every model of a task is normally given the same discretized codes (``bncbench.model.preprocess``:
MDL cut points fitted on the training part). A baseline whose ``features`` hyperparameter is
``"raw"`` is given instead the dataset's attributes as numbers: a numeric attribute its value
(``NaN`` where missing), a nominal attribute its code (as in the coded matrix: a nominal value has
no number of its own). The matrix has one column per attribute, in the coded matrix's order, so
that the protocol's features removed at test time (:mod:`bncbench.harness.missing_protocol`) are the same
attributes for every model of a fold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RAW = "raw"
"""The value of a model's ``features`` hyperparameter that asks for this matrix."""


def reads_raw(clf) -> bool:
    """Whether an estimator asks for the raw features (its ``features`` hyperparameter is :data:`RAW`).

    Parameters
    ----------
    clf : estimator
        Any estimator; those without a ``features`` attribute read codes.

    Returns
    -------
    bool
    """
    return getattr(clf, "features", None) == RAW


def raw_matrix(X: pd.DataFrame, codes: np.ndarray) -> np.ndarray:
    """The attributes as a float matrix: numeric ones as they are, nominal ones as their codes.

    Parameters
    ----------
    X : pandas.DataFrame
        The dataset's typed table (:class:`bncbench.data.dataset.Dataset`'s ``X``): ``category``
        columns for nominal attributes, float columns for numeric ones.
    codes : ndarray of shape (n, d)
        The same rows' discretized codes (the nominal columns are taken from here).

    Returns
    -------
    ndarray of float64, shape (n, d)
        ``NaN`` where a numeric value is missing.
    """
    out = np.asarray(codes, dtype=np.float64).copy()
    numeric = [j for j, dt in enumerate(X.dtypes) if not isinstance(dt, pd.CategoricalDtype)]
    if numeric:
        out[:, numeric] = X.iloc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    return out


def model_matrix(clf, X: pd.DataFrame, codes: np.ndarray) -> np.ndarray:
    """The matrix a model is fitted on and scored with: the raw features if it asks for them, else the codes.

    The one place that chooses a model's inputs: the runner's untimed warm-up fit, its timed fit, its
    predictions and the features removed at test time all take their rows from this matrix.

    Parameters
    ----------
    clf : estimator
        The model (:func:`reads_raw` decides).
    X : pandas.DataFrame
        The dataset's typed table (see :func:`raw_matrix`).
    codes : ndarray of shape (n, d)
        The same rows' discretized codes.

    Returns
    -------
    ndarray of shape (n, d)
        :func:`raw_matrix` of ``X`` and ``codes`` for a model that reads raw features, else ``codes`` itself.
    """
    return raw_matrix(X, codes) if reads_raw(clf) else codes
