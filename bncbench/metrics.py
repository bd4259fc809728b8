"""The protocol's losses: 0-1 loss, RMSE as Weka computes it, Kohavi–Wolpert bias and variance.

Pure functions of true classes and predictions, used by the runner (per task), the summaries
(per dataset x model) and any component that selects by a loss (the m-estimate's ``m`` grid).
"""

from __future__ import annotations

import numpy as np


def zero_one_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """0-1 loss: the share of wrong predictions.

    Parameters
    ----------
    y_true : ndarray of shape (N,)
        True class codes.
    y_pred : ndarray of shape (N,)
        Predicted class codes.

    Returns
    -------
    float
        ``mean(y_true != y_pred)``, in ``[0, 1]``.
    """
    return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


def rmse(y_true: np.ndarray, proba: np.ndarray) -> float:
    """Root mean squared error as Weka computes it for a nominal class.

    ``sqrt(sum_i sum_y (1[y = y_i] - P(y | x_i))^2 / (N * |Y|))``.

    Parameters
    ----------
    y_true : ndarray of int, shape (N,)
        True class codes in ``[0, n_classes)``.
    proba : ndarray of shape (N, n_classes)
        Predicted class probabilities.

    Returns
    -------
    float
        The RMSE, in ``[0, 1]`` for probability rows.
    """
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=float)
    N, Y = proba.shape
    sq = np.square(proba).sum(axis=1) - 2 * proba[np.arange(N), y_true] + 1.0
    return float(np.sqrt(sq.sum() / (N * Y)))


def kohavi_wolpert(
    y_true: np.ndarray, predictions: np.ndarray, n_classes: int, *, correction: bool = False
) -> dict[str, float]:
    """Kohavi–Wolpert bias and variance from repeated predictions.

    Parameters
    ----------
    y_true : ndarray of shape (N,)
        True class codes.
    predictions : ndarray of shape (R, N)
        Predicted class code of every instance in each of R rounds.
    n_classes : int
        Number of classes; every code of ``y_true`` and ``predictions`` is in ``[0, n_classes)``.
    correction : bool, default=False
        Apply the finite-sample correction of the reference EBNC code:
        subtract ``P_y (1 - P_y) / (R - 1)`` inside the bias sum and set
        variance = error - bias. Ignored when ``R == 1``.

    Returns
    -------
    dict of str to float
        ``error`` (mean 0-1 loss over all R*N predictions), ``bias`` and
        ``variance``; without correction ``bias + variance == error`` exactly
        (in floating point: up to rounding, about 1e-16).
    """
    predictions = np.asarray(predictions)
    R, N = predictions.shape
    y_true = np.asarray(y_true)
    # P_hat[i, y] = share of rounds predicting y for instance i
    counts = np.zeros((N, n_classes))
    np.add.at(counts, (np.tile(np.arange(N), R), predictions.ravel()), 1.0)
    p = counts / R
    onehot = np.zeros_like(p)
    onehot[np.arange(N), y_true] = 1.0
    error = float(np.mean(predictions != y_true[None, :]))
    if correction and R > 1:
        bias_i = 0.5 * np.sum(np.square(onehot - p) - p * (1 - p) / (R - 1), axis=1)
        bias = float(np.mean(bias_i))
        return {"error": error, "bias": bias, "variance": error - bias}
    bias = float(np.mean(0.5 * np.sum(np.square(onehot - p), axis=1)))
    variance = float(np.mean(0.5 * (1.0 - np.sum(np.square(p), axis=1))))
    return {"error": error, "bias": bias, "variance": variance}
