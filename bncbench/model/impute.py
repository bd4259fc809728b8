"""k-nearest-neighbour imputation of features missing at test time (Pernkopf et al., §5.1, Figs. 6–7).

The paper compares exact marginalization of missing features in a Bayesian network classifier
with two imputation baselines: the **most frequent value** among the k nearest training
neighbours for the BNC (on discrete codes), and the **mean** of the k nearest neighbours' values
for the SVM (on continuous features). Neighbours are found on the features the test instance
has, with the training data complete (the paper removes features at test time only).

Distances are computed for all test rows of a batch at once from matrix products (no loop over
instances): squared Euclidean ``sum_{j observed} (x_j - z_j)^2``, or Hamming
``sum_{j observed} 1[x_j != z_j]`` for nominal codes. With Euclidean distances and complete
training data the neighbours are those of scikit-learn's ``KNNImputer`` (its ``nan_euclidean``
rescales a row's distances by one common factor), and mean imputation equals it
(``tests/test_impute.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

BATCH_ENTRIES = 1 << 24
"""Largest number of (test row, training row) distances held at once."""


class _OneHot:
    """Hamming distances on the observed features as one matrix product of one-hot codes.

    The matches of a test row with a training row, ``sum_{j observed} 1[z_j == x_j]``, are the product
    of the test row's one-hot observed values with the training rows' one-hot values (one column per
    (attribute, training value)); the distance is the number of observed features less the matches.
    Every entry is an integer below 2**24, so the float32 product is exact and the distances equal the
    attribute-by-attribute count to the bit. Where the one-hot training matrix would exceed
    ``BATCH_ENTRIES * 4`` entries (many distinct values), the count runs attribute by attribute.
    """

    def __init__(self, Xtr: np.ndarray) -> None:
        self.Xtr = Xtr
        self.values = [np.unique(Xtr[:, j]) for j in range(Xtr.shape[1])]
        sizes = np.array([v.size for v in self.values], dtype=np.int64)
        self.offset = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        width = int(sizes.sum())
        self.B = None
        if Xtr.shape[0] * width <= 4 * BATCH_ENTRIES and Xtr.shape[1] < 1 << 24:
            self.B = np.zeros((Xtr.shape[0], width), dtype=np.float32)
            for j, v in enumerate(self.values):  # one pass per attribute, vectorized over rows
                self.B[np.arange(Xtr.shape[0]), self.offset[j] + np.searchsorted(v, Xtr[:, j])] = 1.0

    def mismatches(self, z: np.ndarray, o: np.ndarray) -> np.ndarray:
        """Distances ``(len(z), n_train)`` of test rows ``z`` observed where ``o`` is 1."""
        if self.B is None:
            D = np.zeros((z.shape[0], self.Xtr.shape[0]))
            for j in range(self.Xtr.shape[1]):
                D += (z[:, j, None] != self.Xtr[None, :, j]) * o[:, j, None]
            return D
        A = np.zeros((z.shape[0], self.B.shape[1]), dtype=np.float32)
        rows = np.arange(z.shape[0])
        for j, v in enumerate(self.values):
            pos = np.minimum(np.searchsorted(v, z[:, j]), v.size - 1)
            hit = (v[pos] == z[:, j]) & (o[:, j] > 0)  # a value no training row has matches none
            A[rows[hit], self.offset[j] + pos[hit]] = 1.0
        return o.sum(axis=1, keepdims=True) - (A @ self.B.T).astype(np.float64)


def knn_neighbours(X_train: ArrayLike, X_test: ArrayLike, missing: ArrayLike, k: int,
                   metric: str = "euclidean") -> np.ndarray:
    """Indices of the ``k`` nearest training rows of every test row, on its observed features.

    Parameters
    ----------
    X_train : array-like of shape (n_train, d)
        Complete training features (codes for ``metric="hamming"``).
    X_test : array-like of shape (n_test, d)
        Test features; values where ``missing`` is set are not read.
    missing : array-like of bool, shape (n_test, d)
        True where a test feature is missing.
    k : int
        Number of neighbours, ``1 <= k <= n_train``.
    metric : {"euclidean", "hamming"}, default="euclidean"
        Distance on the observed features.

    Returns
    -------
    ndarray of shape (n_test, k) of int
        Training row indices, nearest first (ties in an order fixed by the data).

    Raises
    ------
    BNCBenchError
        If the shapes disagree, ``k`` is out of range or the metric is unknown.
    """
    Xtr = np.asarray(X_train, dtype=float)
    Xte = np.asarray(X_test, dtype=float)
    miss = np.asarray(missing, dtype=bool)
    if Xtr.ndim != 2 or Xte.ndim != 2 or Xte.shape != miss.shape or Xtr.shape[1] != Xte.shape[1]:
        raise BNCBenchError("imputation needs X_train (n, d), X_test (m, d) and a missing mask of X_test's shape")
    if not 1 <= k <= Xtr.shape[0]:
        raise BNCBenchError(f"k must be in [1, {Xtr.shape[0]}] (the training rows), got {k}")
    if metric not in ("euclidean", "hamming"):
        raise BNCBenchError(f"unknown metric {metric!r}; choose 'euclidean' or 'hamming'")
    if np.isnan(Xtr).any():
        raise BNCBenchError("the training data for imputation must be complete")
    obs = (~miss).astype(float)
    Z = np.where(miss, 0.0, Xte)
    out = np.empty((Xte.shape[0], k), dtype=np.int64)
    step = max(1, BATCH_ENTRIES // max(Xtr.shape[0], 1))
    onehot = _OneHot(Xtr) if metric == "hamming" else None
    sq_tr = Xtr ** 2 if onehot is None else None
    for s in range(0, Xte.shape[0], step):
        o, z = obs[s : s + step], Z[s : s + step]
        if onehot is not None:
            D = onehot.mismatches(z, o)
        else:
            D = (o * z ** 2).sum(axis=1, keepdims=True) - 2.0 * (o * z) @ Xtr.T + o @ sq_tr.T
        idx = np.argpartition(D, k - 1, axis=1)[:, :k] if k < D.shape[1] else np.tile(np.arange(k), (D.shape[0], 1))
        near = np.take_along_axis(D, idx, axis=1)
        out[s : s + step] = np.take_along_axis(idx, np.argsort(near, axis=1, kind="stable"), axis=1)
    return out


def knn_impute(X_train: ArrayLike, X_test: ArrayLike, missing: ArrayLike, k: int = 5, how: str = "mode",
               metric: str | None = None) -> np.ndarray:
    """Fill the missing test features from the ``k`` nearest training rows.

    Parameters
    ----------
    X_train : array-like of shape (n_train, d)
        Complete training features.
    X_test : array-like of shape (n_test, d)
        Test features.
    missing : array-like of bool, shape (n_test, d)
        True where a test feature is missing.
    k : int, default=5
        Number of neighbours.
    how : {"mode", "mean"}, default="mode"
        ``"mode"``: the most frequent value among the neighbours (ties: the smallest value), the
        paper's imputation for the BNC; ``"mean"``: their mean, for the SVM.
    metric : {"euclidean", "hamming"}, optional
        Distance on the observed features; default Hamming for ``"mode"`` (nominal codes) and
        Euclidean for ``"mean"``.

    Returns
    -------
    ndarray of shape (n_test, d)
        ``X_test`` with its missing entries filled (float for ``"mean"``, the input's dtype
        for ``"mode"``).

    Raises
    ------
    BNCBenchError
        As :func:`knn_neighbours`, or for an unknown ``how``.
    """
    if how not in ("mode", "mean"):
        raise BNCBenchError(f"unknown imputation {how!r}; choose 'mode' or 'mean'")
    metric = metric or ("hamming" if how == "mode" else "euclidean")
    miss = np.asarray(missing, dtype=bool)
    Xtr = np.asarray(X_train)
    out = np.array(X_test, dtype=float if how == "mean" else None, copy=True)
    rows = np.flatnonzero(miss.any(axis=1))
    if rows.size == 0:
        return out
    nb = knn_neighbours(Xtr, np.asarray(X_test)[rows], miss[rows], k, metric)
    for j in np.flatnonzero(miss.any(axis=0)):  # one pass per attribute, vectorized over instances
        need = miss[rows, j]
        vals = Xtr[nb[need], j]  # (rows needing j, k)
        if how == "mean":
            out[rows[need], j] = vals.mean(axis=1)
            continue
        uniq, inv = np.unique(vals, return_inverse=True)
        counts = np.zeros((vals.shape[0], uniq.size), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(vals.shape[0]), k), inv.ravel()), 1)
        out[rows[need], j] = uniq[np.argmax(counts, axis=1)]  # first maximum: the smallest value
    return out
