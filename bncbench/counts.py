"""Vectorized count statistics: joint counts, mutual information, conditional MI.

All functions take integer category codes ``X`` (N x n, values in
``[0, cardinality)``) and class codes ``y`` (values in ``[0, n_classes)``).
Information quantities use natural logarithms and empirical (maximum
likelihood) probabilities, as in Friedman et al. (1997) and Sahami (1996).
"""

from __future__ import annotations

import numba
import numpy as np


def _xlogx_sum(counts: np.ndarray) -> float:
    c = counts[counts > 0]
    return float(np.sum(c * np.log(c)))


def mutual_information(X: np.ndarray, y: np.ndarray, cards, n_classes: int) -> np.ndarray:
    """I(X_i; Y) for every attribute i, in nats."""
    N = X.shape[0]
    out = np.empty(X.shape[1])
    ny = np.bincount(y, minlength=n_classes).astype(float)
    for i in range(X.shape[1]):
        joint = np.bincount(X[:, i] * n_classes + y, minlength=cards[i] * n_classes).astype(float)
        nx = joint.reshape(cards[i], n_classes).sum(axis=1)
        # I = sum p(x,y) log p(x,y) / (p(x) p(y))
        out[i] = (_xlogx_sum(joint) - _xlogx_sum(nx) - _xlogx_sum(ny)) / N + np.log(N)
    return np.maximum(out, 0.0)


@numba.njit(cache=True, nogil=True)
def _pair_counts(X, y, cards, n_classes, offsets):  # pragma: no cover - compiled
    n = X.shape[1]
    total = offsets[-1]
    counts = np.zeros(total, dtype=np.int64)
    k = 0
    for r in range(X.shape[0]):
        yr = y[r]
        k = 0
        for i in range(n):
            xi = X[r, i]
            for j in range(i + 1, n):
                counts[offsets[k] + (xi * cards[j] + X[r, j]) * n_classes + yr] += 1
                k += 1
    return counts


def conditional_mutual_information(X: np.ndarray, y: np.ndarray, cards, n_classes: int) -> np.ndarray:
    """Symmetric matrix of I(X_i; X_j | Y) in nats (zero diagonal).

    One compiled pass over the data counts every (x_i, x_j, y) triple.
    """
    X = np.ascontiguousarray(X, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    N, n = X.shape
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    sizes = np.array([cards[i] * cards[j] * n_classes for i, j in pairs], dtype=np.int64)
    offsets = np.zeros(len(pairs) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    counts = _pair_counts(X, y, cards, n_classes, offsets).astype(float)
    cmi = np.zeros((n, n))
    ny = np.bincount(y, minlength=n_classes).astype(float)
    h_y = _xlogx_sum(ny)
    for k, (i, j) in enumerate(pairs):
        t = counts[offsets[k] : offsets[k + 1]].reshape(cards[i], cards[j], n_classes)
        # I(Xi;Xj|Y) = sum n(xi,xj,y) log [n(xi,xj,y) n(y) / (n(xi,y) n(xj,y))] / N
        v = (_xlogx_sum(t) + h_y - _xlogx_sum(t.sum(axis=1)) - _xlogx_sum(t.sum(axis=0))) / N
        cmi[i, j] = cmi[j, i] = max(v, 0.0)
    return cmi


def mixed_radix(X: np.ndarray, columns, cards) -> np.ndarray:
    """Combined index of the values of ``columns`` (first column most significant).

    Returns int64 codes; a row with any value outside ``[0, card)`` gets -1.
    """
    N = X.shape[0]
    code = np.zeros(N, dtype=np.int64)
    bad = np.zeros(N, dtype=bool)
    for c in columns:
        v = X[:, c].astype(np.int64, copy=False)
        bad |= (v < 0) | (v >= cards[c])
        code = code * int(cards[c]) + v
    code[bad] = -1
    return code
