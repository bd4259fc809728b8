"""Pair-class counts N(x_i, x_j, y) of every attribute pair from per-class Gram matrices of one-hot codes.

For the one-hot encoding ``O_c`` of the rows of class ``c`` (one column per attribute value, ``V``
columns in all) the Gram matrix ``O_c.T @ O_c`` holds every pair count ``N(x_i = a, x_j = b, y = c)``
at once. A BLAS matrix product computes it (exact: the entries are integers, accumulated in
float32 below 2^24), where the kernel of :func:`bncbench.bn.counts.pair_class_counts` increments
``N n (n - 1) / 2`` scattered counters: on USPS (7,291 rows, 256 attributes, ``V`` = 892) about
0.3 s of CPU against 4-5 s. The counts are then laid out exactly as that kernel lays them out (per
pair ``i < j`` a ``(card_i, card_j, n_classes)`` table), so everything computed from them (the
conditional mutual information of TAN and KDB, TAN-CR's search) is unchanged to the bit
(``tests/test_cmi_gram.py``).

:func:`bncbench.bn.counts.pair_class_counts` uses it when :func:`fits` says the ``V x V`` matrices are
small and the attributes have few values (else its kernel).
"""

from __future__ import annotations

import numba
import numpy as np

from bncbench.bn.flat import CODE_RANGE, offsets_of

MAX_VALUES = 4096
"""Largest ``V`` (total attribute values): a ``V x V`` float32 and float64 matrix, 200 MB at 4,096."""
MAX_MEAN_SQUARED_CARD = 32.0
"""The product costs ``N V^2`` multiply-adds against ``N n^2 / 2`` scattered increments for the kernel; beyond a
mean squared cardinality ``V^2 / n^2`` of about this, the kernel is the cheaper."""
CHUNK = 4096
"""Rows of a one-hot block (``CHUNK x V`` float32)."""


def fits(cards) -> bool:
    """Whether :func:`pair_counts_gram` is the cheaper way for attributes of these cardinalities.

    Parameters
    ----------
    cards : array-like of shape (n,)
        Cardinality of each attribute.

    Returns
    -------
    bool
        ``n >= 2``, ``V = sum(cards) <= MAX_VALUES`` and ``V^2 <= MAX_MEAN_SQUARED_CARD n^2``.
    """
    cards = np.asarray(cards, dtype=np.int64)
    n, V = cards.size, int(cards.sum())
    return n >= 2 and V <= MAX_VALUES and V * V <= MAX_MEAN_SQUARED_CARD * n * n


def pair_counts_gram(X: np.ndarray, y: np.ndarray, cards: np.ndarray, n_classes: int,
                     offsets: np.ndarray) -> np.ndarray:
    """The flat pair tables of :func:`bncbench.bn.counts.pair_class_counts`, from Gram matrices.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes; column ``i`` in ``[0, cards[i])`` (checked).
    y : ndarray of shape (N,)
        Integer class codes in ``[0, n_classes)`` (checked).
    cards : ndarray of shape (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    offsets : ndarray of shape (n (n - 1) / 2 + 1,)
        Start of the table of each pair ``i < j`` (lexicographic order) in the result.

    Returns
    -------
    ndarray of float64, shape (offsets[-1],)
        Pair ``k``'s table ``counts[offsets[k]:offsets[k + 1]]``, shaped ``(cards[i], cards[j], n_classes)``.

    Raises
    ------
    ValueError
        If a code is outside ``[0, card)`` or a class outside ``[0, n_classes)``.
    """
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    X = np.asarray(X, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    if ((y < 0) | (y >= n_classes)).any():
        raise ValueError(CODE_RANGE)
    start = offsets_of(cards)  # column of each attribute's first value in the one-hot encoding
    V = int(start[-1])
    out = np.zeros(int(offsets[-1]))
    with threadpool_limits(limits=1, user_api="blas"):  # the engine's default too; the machine may be shared
        for c in range(int(n_classes)):
            rows = np.flatnonzero(y == c)
            if rows.size == 0:
                continue
            dtype = np.float32 if rows.size < 2**24 else np.float64  # integer sums exact in float32 below 2^24
            G = np.zeros((V, V), dtype=dtype)
            for s in range(0, rows.size, CHUNK):  # every row once (in its class): checked and encoded by chunks
                part = X[rows[s : s + CHUNK]]
                if ((part < 0) | (part >= cards[None, :])).any():
                    raise ValueError(CODE_RANGE)
                part += start[:-1][None, :]  # column of each (row, attribute) in the one-hot encoding
                O = np.zeros((part.shape[0], V), dtype=dtype)
                np.put_along_axis(O, part, 1.0, axis=1)
                G += O.T @ O
            _fill(G.astype(np.float64), cards, start, offsets, c, int(n_classes), out)
    return out


@numba.njit(cache=True, nogil=True)
def _fill(G, cards, start, offsets, c, n_classes, out):  # pragma: no cover - compiled
    n = cards.size
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            base = offsets[k]
            cj = cards[j]
            for a in range(cards[i]):
                for b in range(cj):
                    out[base + (a * cj + b) * n_classes + c] = G[start[i] + a, start[j] + b]
            k += 1
