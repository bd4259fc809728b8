"""Vectorized count statistics: joint counts, mutual information, conditional MI.

All functions take integer category codes ``X`` (N x n, values in
``[0, cardinality)``) and class codes ``y`` (values in ``[0, n_classes)``).
Information quantities use natural logarithms and empirical (maximum
likelihood) probabilities, as in Friedman et al. (1997) and Sahami (1996).
"""

from __future__ import annotations

from typing import Sequence

import numba
import numpy as np

from bncbench.bn.flat import CODE_RANGE, offsets_of


def _xlogx_sum(counts: np.ndarray) -> float:
    c = counts[counts > 0]
    return float(np.sum(c * np.log(c)))


def mutual_information(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray, n_classes: int) -> np.ndarray:
    """I(X_i; Y) for every attribute i, in nats.

    Empirical (maximum likelihood) estimate from the counts N(x_i, y); values that round below
    zero are clipped to 0.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes; column ``i`` in ``[0, cards[i])``.
    y : ndarray of shape (N,)
        Integer class codes in ``[0, n_classes)``.
    cards : sequence of int or ndarray of shape (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.

    Returns
    -------
    ndarray of shape (n,)
        I(X_i; Y) >= 0 per attribute (float).

    Raises
    ------
    ValueError
        From numpy, for codes or classes out of range (they are not validated beforehand,
        so some out-of-range combinations go undetected).
    """
    N = X.shape[0]
    out = np.empty(X.shape[1])
    ny = np.bincount(y, minlength=n_classes).astype(float)
    joints = _class_joint_counts(X, y, cards, n_classes)
    for i in range(X.shape[1]):
        if joints is None:
            joint = np.bincount(X[:, i] * n_classes + y, minlength=cards[i] * n_classes).astype(float)
        else:
            joint = joints[i]
        nx = joint.reshape(cards[i], n_classes).sum(axis=1)
        # I = sum p(x,y) log p(x,y) / (p(x) p(y))
        out[i] = (_xlogx_sum(joint) - _xlogx_sum(nx) - _xlogx_sum(ny)) / N + np.log(N)
    return np.maximum(out, 0.0)


def _class_joint_counts(X, y, cards, n_classes: int):
    """Per attribute the counts N(x_i, y) (flat, float) from one compiled pass; None for input it can't take.

    Codes outside ``[0, card)`` or classes outside ``[0, n_classes)`` are left
    to the per-attribute ``bincount`` (and its errors).
    """
    X, y = np.asarray(X), np.asarray(y)
    if X.ndim != 2 or X.dtype.kind not in "iu" or y.dtype.kind not in "iu" or X.shape[0] != y.shape[0]:
        return None
    cards = np.asarray(cards, dtype=np.int64)
    if X.shape[0] == 0 or cards.shape != (X.shape[1],):
        return None
    offsets = offsets_of(cards * int(n_classes))
    counts, ok = _attribute_class_counts(X, y, cards, int(n_classes), offsets)
    if not ok:
        return None
    counts = counts.astype(float)
    return [counts[offsets[i] : offsets[i + 1]] for i in range(X.shape[1])]


@numba.njit(cache=True, nogil=True)
def _attribute_class_counts(X, y, cards, n_classes, offsets):  # pragma: no cover - compiled
    n = X.shape[1]
    counts = np.zeros(offsets[-1], dtype=np.int64)
    for r in range(X.shape[0]):
        yr = y[r]
        if yr < 0 or yr >= n_classes:
            return counts, False
        for i in range(n):
            xi = X[r, i]
            if xi < 0 or xi >= cards[i]:
                return counts, False
            counts[offsets[i] + xi * n_classes + yr] += 1
    return counts, True


@numba.njit(cache=True, nogil=True)
def _pair_counts(X, y, cards, n_classes, offsets, counts):  # pragma: no cover - compiled
    """Add N(x_i, x_j, y) for every pair i < j into ``counts``; False on a code out of range."""
    n = X.shape[1]
    base = np.zeros(n * n, dtype=np.int64)  # offset of the table of pair (i, j)
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            base[i * n + j] = offsets[k]
            k += 1
    a = np.empty(n, dtype=np.int64)
    for r in range(X.shape[0]):
        yr = y[r]
        if yr < 0 or yr >= n_classes:
            return False
        for j in range(n):
            v = X[r, j]
            if v < 0 or v >= cards[j]:
                return False
            a[j] = v * n_classes + yr  # (x_j, y) part of the index, shared by every pair (., j)
        for i in range(n - 1):
            xi = X[r, i]
            for j in range(i + 1, n):
                counts[base[i * n + j] + xi * cards[j] * n_classes + a[j]] += 1
    return True


BLOCKED_MIN_ROWS = 20_000
"""From this many rows on, pairs of low-cardinality attributes are counted as blocks (below)."""
BLOCKED_MAX_ENTRIES = 1 << 15
"""Largest total size of the block-pair tables (they should stay in the L1/L2 cache)."""


@numba.njit(cache=True, nogil=True)
def _block_pair_counts(X, y, cards, n_classes, bfirst, bsize, bcard, boff, counts):  # pragma: no cover
    """Count N(b_1, b_2, y) for blocks of adjacent attributes; False on a code out of range.

    ``counts[boff[b, b]:]`` holds a block's own N(b, y) (for the pair inside it).
    """
    nb = bfirst.shape[0]
    code = np.empty(nb, dtype=np.int64)
    for r in range(X.shape[0]):
        yr = y[r]
        if yr < 0 or yr >= n_classes:
            return False
        for b in range(nb):
            c = 0
            for t in range(bsize[b]):
                a = bfirst[b] + t
                v = X[r, a]
                if v < 0 or v >= cards[a]:
                    return False
                c = c * cards[a] + v
            code[b] = c
        for b1 in range(nb):
            counts[boff[b1, b1] + code[b1] * n_classes + yr] += 1
            base = code[b1]
            for b2 in range(b1 + 1, nb):
                counts[boff[b1, b2] + (base * bcard[b2] + code[b2]) * n_classes + yr] += 1
    return True


def _blocked_pair_counts(X, y, cards, n_classes: int, offsets, pairs):
    """The flat pair tables of :func:`conditional_mutual_information`, or None when not worth it.

    Adjacent attributes are paired into blocks of two (combined code
    ``x_a * card_b + x_b``); one increment per block pair then counts four
    attribute pairs at once (n(n-1)/2 increments per row become about n^2/8),
    and each attribute pair's table is summed out of its block pair's table.
    The counts are exact integers, identical to counting pairs directly.
    """
    N, n = X.shape
    if N < BLOCKED_MIN_ROWS or n < 4 or N >= 2**31 - 1:
        return None
    bfirst = np.arange(0, n, 2, dtype=np.int64)
    bsize = np.minimum(2, n - bfirst).astype(np.int64)
    bcard = np.array([int(np.prod(cards[f : f + s])) for f, s in zip(bfirst, bsize)], dtype=np.int64)
    nb = bfirst.size
    boff = np.zeros((nb, nb), dtype=np.int64)
    pos = 0
    for b1 in range(nb):
        for b2 in range(b1, nb):
            boff[b1, b2] = pos
            pos += int(bcard[b1] if b1 == b2 else bcard[b1] * bcard[b2]) * n_classes
            if pos > BLOCKED_MAX_ENTRIES:
                return None
    bc = np.zeros(pos, dtype=np.int32)
    if not _block_pair_counts(X, y, cards, n_classes, bfirst, bsize, bcard, boff, bc):
        raise ValueError(CODE_RANGE)
    out = np.empty(offsets[-1], dtype=np.int64)
    for k, (i, j) in enumerate(pairs):
        bi, bj = i // 2, j // 2
        if bi == bj:  # the two attributes of one block: its own table is N(x_i, x_j, y)
            t = bc[boff[bi, bi] : boff[bi, bi] + bcard[bi] * n_classes]
        else:
            dims = [int(c) for c in cards[bfirst[bi] : bfirst[bi] + bsize[bi]]]
            dims += [int(c) for c in cards[bfirst[bj] : bfirst[bj] + bsize[bj]]]
            t = bc[boff[bi, bj] : boff[bi, bj] + bcard[bi] * bcard[bj] * n_classes].reshape(*dims, n_classes)
            keep = (i - bfirst[bi], bsize[bi] + j - bfirst[bj])
            drop = tuple(a for a in range(len(dims)) if a not in keep)
            if drop:
                t = t.sum(axis=drop)
        out[offsets[k] : offsets[k + 1]] = np.ravel(t)
    return out


def pair_class_counts(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray,
                      n_classes: int) -> tuple[list, np.ndarray, np.ndarray]:
    """The counts N(x_i, x_j, y) of every attribute pair i < j, from one compiled pass over the data.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes; column ``i`` in ``[0, cards[i])``.
    y : ndarray of shape (N,)
        Integer class codes in ``[0, n_classes)``.
    cards : sequence of int or ndarray of shape (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.

    Returns
    -------
    pairs : list of tuple of int
        The pairs ``(i, j)``, ``i < j``, in lexicographic order.
    offsets : ndarray of shape (len(pairs) + 1,)
        Pair ``k``'s table is ``counts[offsets[k]:offsets[k + 1]]``, shaped ``(cards[i], cards[j], n_classes)``.
    counts : ndarray of float
        The flat tables.

    Raises
    ------
    ValueError
        If a code is outside ``[0, card)`` or a class outside ``[0, n_classes)``.
    """
    X = np.ascontiguousarray(X, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    N, n = X.shape
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    offsets = offsets_of([cards[i] * cards[j] * n_classes for i, j in pairs])
    from bncbench.bn import cmi_gram  # per-class Gram matrices of one-hot codes (BLAS) where they are small: same counts

    if N and cmi_gram.fits(cards):
        return pairs, offsets, cmi_gram.pair_counts_gram(X, y, cards, int(n_classes), offsets)
    counts = _blocked_pair_counts(X, y, cards, int(n_classes), offsets, pairs)
    if counts is None:
        # int32 counters keep the whole set of pair tables small enough for the L1/L2 caches
        counts = np.zeros(offsets[-1], dtype=np.int32 if N < 2**31 - 1 else np.int64)
        if not _pair_counts(X, y, cards, int(n_classes), offsets, counts):
            raise ValueError(CODE_RANGE)
    return pairs, offsets, counts.astype(float)


def conditional_mutual_information(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray,
                                   n_classes: int) -> np.ndarray:
    """Symmetric matrix of I(X_i; X_j | Y) in nats (zero diagonal).

    One compiled pass over the data counts every (x_i, x_j, y) triple.
    Empirical (maximum likelihood) estimate; values that round below zero are clipped to 0.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes; column ``i`` in ``[0, cards[i])``.
    y : ndarray of shape (N,)
        Integer class codes in ``[0, n_classes)``.
    cards : sequence of int or ndarray of shape (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.

    Returns
    -------
    ndarray of shape (n, n)
        ``cmi[i, j] = cmi[j, i] = I(X_i; X_j | Y) >= 0`` (float), 0 on the diagonal.

    Raises
    ------
    ValueError
        If a code is outside ``[0, card)`` or a class outside ``[0, n_classes)``.
    """
    X = np.ascontiguousarray(X, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    N, n = X.shape
    pairs, offsets, counts = pair_class_counts(X, y, cards, n_classes)
    return cmi_from_pair_counts(pairs, offsets, counts, cards, np.bincount(y, minlength=n_classes), n)


def cmi_from_pair_counts(pairs: list, offsets: np.ndarray, counts: np.ndarray, cards: np.ndarray,
                         class_counts: np.ndarray, n: int) -> np.ndarray:
    """I(X_i; X_j | Y) from the tables of :func:`pair_class_counts` (see :func:`conditional_mutual_information`).

    Parameters
    ----------
    pairs, offsets, counts
        As returned by :func:`pair_class_counts`.
    cards : ndarray of shape (n,)
        Cardinality of each attribute.
    class_counts : ndarray of shape (n_classes,)
        N(y).
    n : int
        Number of attributes.

    Returns
    -------
    ndarray of shape (n, n)
        Symmetric, 0 on the diagonal, clipped at 0.
    """
    ny = np.asarray(class_counts, dtype=float)
    N, n_classes = ny.sum(), ny.size
    cmi = np.zeros((n, n))
    h_y = _xlogx_sum(ny)
    if not pairs:
        return cmi
    # I(Xi;Xj|Y) = sum n(xi,xj,y) log [n(xi,xj,y) n(y) / (n(xi,y) n(xj,y))] / N
    #            = (P_ij + h_y - h_i - h_j) / N, every term an n log n sum as _xlogx_sum computes it: h_i (of the
    # counts n(xi, y), the same exact integers in every pair table of i) once per attribute, and P_ij for all pairs
    # at once, grouped by their number of non-zero counts (a row sum of a contiguous 2-D array is np.sum of the row):
    # the values of the former loop over pairs to the bit (tests/test_cmi_gram.py)
    ij = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    cards = np.asarray(cards, dtype=np.int64)
    h = np.zeros(n)
    first = {}
    for k, (i, j) in enumerate(pairs):
        first.setdefault(i, (k, 1))
        first.setdefault(j, (k, 0))
        if len(first) == n:
            break
    for a, (k, axis) in first.items():
        i, j = ij[k]
        h[a] = _xlogx_sum(counts[offsets[k] : offsets[k + 1]].reshape(cards[i], cards[j], n_classes).sum(axis=axis))
    pos = counts > 0
    c = counts[pos]
    v = c * np.log(c)
    lens = np.add.reduceat(pos.astype(np.int64), offsets[:-1]) if offsets[-1] else np.zeros(len(pairs), np.int64)
    lens[np.diff(offsets) == 0] = 0
    starts = np.zeros(len(pairs), np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    P = np.zeros(len(pairs))
    for L in np.unique(lens):
        if L == 0:
            continue
        ks = np.flatnonzero(lens == L)
        P[ks] = v[starts[ks][:, None] + np.arange(L)].sum(axis=1)
    vals = np.maximum((P + h_y - h[ij[:, 0]] - h[ij[:, 1]]) / N, 0.0)
    cmi[ij[:, 0], ij[:, 1]] = vals
    cmi[ij[:, 1], ij[:, 0]] = vals
    return cmi


def mixed_radix(X: np.ndarray, columns: Sequence[int], cards: Sequence[int] | np.ndarray) -> np.ndarray:
    """Combined index of the values of ``columns`` (first column most significant).

    Returns int64 codes; a row with any value outside ``[0, card)`` gets -1.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes.
    columns : sequence of int
        The attributes to combine, most significant first; empty gives all zeros.
    cards : sequence of int or ndarray of shape (n,)
        Cardinality of each attribute (indexed by attribute, not by position in ``columns``).

    Returns
    -------
    ndarray of shape (N,)
        ``sum_k x_{columns[k]} * prod_{l > k} cards[columns[l]]`` (int64), in
        ``[0, prod cards[columns])``, or -1 for a row with a value out of range.
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


@numba.njit(cache=True, nogil=True, inline="always")
def find_sorted(keys, lo, hi, k):  # pragma: no cover - compiled
    """The index of ``k`` in the sorted run ``keys[lo:hi]`` (binary search), or -1 if it is not there."""
    end = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < end and keys[lo] == k else -1
