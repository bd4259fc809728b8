"""The evaluation protocol: repeated 2-fold cross-validation (or a given holdout split) and its metrics.

Zaidi et al. (2017, §7) and Petitjean et al. (2018, §6.1) evaluate with 5
rounds of 2-fold cross-validation and report 0-1 loss, RMSE and the
Kohavi–Wolpert bias/variance decomposition estimated as Webb (2000) does it
from repeated cross-validation: every instance is tested once per round, and
its ``R`` predicted labels estimate the distribution of the learner's
prediction at that point. Datasets with a given train/test split (MNIST, USPS;
:mod:`bncbench.data.given_split`) can instead be evaluated on that split once
(``cv.mode: holdout``), without bias and variance.
"""

from __future__ import annotations

import enum
import zlib
from dataclasses import dataclass
from typing import Optional

import numpy as np

from bncbench.missing_protocol import MissingFeaturesConfig


class ProtocolMode(enum.Enum):
    """How a run splits each dataset (``cv.mode``)."""

    cv = "cv"  # cv.rounds x cv.folds-fold cross-validation on all the rows
    holdout = "holdout"  # the dataset's given train/test split, evaluated once


MODES = tuple(m.value for m in ProtocolMode)
"""The protocol modes' names: ``("cv", "holdout")``."""


@dataclass
class CVConfig:
    """The typed ``cv`` node of the run config (a field of :class:`bncbench.run_config.RunConfig`).

    ``mode: cv`` is ``rounds`` x ``folds``-fold cross-validation; ``mode: holdout`` trains on
    each dataset's given training part and tests on its given test part, once (``rounds``
    and ``folds`` are then unused). A value of another type, or another mode, fails when
    Hydra composes the config.

    Attributes
    ----------
    mode : ProtocolMode, default=ProtocolMode.cv
        How each dataset is split.
    rounds : int, default=5
        Rounds of cross-validation.
    folds : int, default=2
        Folds per round.
    missing_features : MissingFeaturesConfig, optional
        Also evaluate every fitted model with features removed at test time
        (:mod:`bncbench.missing_protocol`); unset: not.
    """

    mode: ProtocolMode = ProtocolMode.cv
    rounds: int = 5
    folds: int = 2
    missing_features: Optional[MissingFeaturesConfig] = None


def split_seed(seed: int, dataset: str, round_: int) -> np.random.SeedSequence:
    """The seed of one round's split: a function of (experiment seed, dataset, round) only.

    Parameters
    ----------
    seed : int
        The experiment's seed.
    dataset : str
        The dataset's name (its CRC-32 enters the seed).
    round_ : int
        The round.

    Returns
    -------
    numpy.random.SeedSequence
        Seeded with the entropy ``[int(seed), zlib.crc32(dataset), int(round_)]``.
    """
    return np.random.SeedSequence([int(seed), zlib.crc32(dataset.encode()), int(round_)])


def cv_folds(y: np.ndarray, *, seed: int, dataset: str, round_: int, folds: int = 2) -> np.ndarray:
    """Fold number (0..folds-1) of every instance for one round.

    Stratified: instances are shuffled, then dealt to folds in turn within
    each class, so every fold has the class distribution of the whole.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Class codes (any sortable values).
    seed : int
        The experiment's seed.
    dataset : str
        The dataset's name.
    round_ : int
        The round; the shuffle is seeded by :func:`split_seed` of ``(seed, dataset, round_)``.
    folds : int, default=2
        Number of folds.

    Returns
    -------
    ndarray of int64, shape (N,)
        Fold in ``[0, folds)`` of every instance; fold sizes differ by at most one.
    """
    y = np.asarray(y)
    n = y.shape[0]
    rng = np.random.default_rng(split_seed(seed, dataset, round_))
    perm = rng.permutation(n)
    order = perm[np.argsort(y[perm], kind="stable")]  # grouped by class, shuffled within
    fold = np.empty(n, dtype=np.int64)
    # deal in turn, continuing the count across classes so fold sizes differ by at most one
    fold[order] = np.arange(n) % folds
    return fold


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
