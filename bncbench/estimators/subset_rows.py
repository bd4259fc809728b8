"""The seen value combinations of many attribute subsets: counting and lookup, compiled.

AnDE and AnJE estimate tables over the values ``x_alpha`` of every n-subset ``alpha`` of the
attributes. Their full tables have ``|X_alpha| = prod_{i in alpha} |X_i|`` rows per subset, which
is large for high-cardinality attributes or n = 3; :class:`SubsetRows` keeps only the
combinations seen in training, numbered **rows**: the rows of subset ``s`` are
``row_start[s] .. row_start[s + 1] - 1``, one per seen key (the mixed-radix code of ``x_alpha``,
first attribute most significant, as :func:`bncbench.bn.counts.mixed_radix`), keys increasing.
Memory is proportional to the seen combinations (at most ``min(N, |X_alpha|)`` per subset).

Lookup of an instance's row in subset ``s``: through a dense map ``key -> row`` where the
subset's key space is small (at most ``max(DENSE_MAP_MIN, DENSE_MAP_FACTOR * rows)`` keys), by
binary search over the subset's sorted keys otherwise. Kernels loop over subsets outside and
instances inside: :func:`rows_in_subset` finds the rows of all instances in one subset, ``UNSEEN``
(-1) for a combination never seen in training or ``INVALID`` (-2) where a value of the subset is
outside its attribute's range (a ``-1`` code: unknown at prediction), which every model ignores.
Its keys are computed column by column (:func:`subset_keys`), so that the loops vectorize.

Counting is one compiled call over all subsets: dense counting into a scratch table where the
key space times the classes is at most ``DENSE_COUNT_LIMIT`` entries (all of it read back where
it is not larger than the data, ``FULL_COUNT_PER_ROW``; the keys met noted otherwise), sorting
the keys beyond.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from bncbench.bn.counts import find_sorted
from bncbench.errors import BNCBenchError

UNSEEN = -1
INVALID = -2
DENSE_MAP_MIN = 16
DENSE_MAP_FACTOR = 4
"""A subset whose key space has at most ``max(DENSE_MAP_MIN, DENSE_MAP_FACTOR * rows)`` keys is looked up
through a dense map (4 bytes per key): the maps take at most 4x the seen rows, or 16 keys per subset."""
DENSE_COUNT_LIMIT = 1 << 22
"""Largest scratch table of dense counting, in entries (keys x classes): 32 MiB."""
FULL_COUNT_PER_ROW = 1
"""A key space of at most this many keys per instance is counted whole and read in key order; a larger
one (up to ``DENSE_COUNT_LIMIT``) notes its seen keys as they come."""


def compact_codes(X, cards) -> np.ndarray:
    """``X`` as the smallest signed integer type holding its codes; codes outside ``[0, card)`` become -1."""
    X = np.asarray(X)
    cards = np.asarray(cards, dtype=np.int64)
    if X.ndim != 2 or X.shape[1] != cards.shape[0]:
        raise BNCBenchError(f"expected codes of {cards.shape[0]} attributes, got shape {X.shape}")
    top = int(cards.max(initial=1))
    dtype = np.int8 if top <= 127 else np.int16 if top <= 32767 else np.int32
    if X.dtype.kind not in "iu":
        X = X.astype(np.int64)
    out = np.empty(X.shape, dtype=dtype)
    _compact(X, cards, out)
    return out


@numba.njit(cache=True, nogil=True)
def _compact(X, cards, out):  # pragma: no cover - compiled
    """``out[r, i] = X[r, i]`` where it is in ``[0, cards[i])``, else -1: one pass (numpy's where took three)."""
    for r in range(X.shape[0]):
        for i in range(X.shape[1]):
            x = X[r, i]
            out[r, i] = x if x >= 0 and x < cards[i] else -1


def transposed(codes: np.ndarray) -> np.ndarray:
    """Compact codes as (attributes, instances), the layout the key loops read."""
    return np.ascontiguousarray(codes.T)


@dataclass
class SubsetRows:
    """The seen combinations of every subset, their rows and class counts ``N(x_alpha, y)``.

    Attributes
    ----------
    subsets : ndarray (S, n) of int64
    strides : ndarray (S, n) of int64
        Mixed-radix weight of each subset attribute (the key is ``sum_j x[subsets[s, j]] * strides[s, j]``).
    space : ndarray (S,) of int64
        ``|X_alpha|``, the number of value combinations of each subset.
    row_start : ndarray (S + 1,) of int64
    keys : ndarray (R,) of int64
        Key of every row, increasing within a subset.
    counts : ndarray (R, n_classes) of int64
        ``N(x_alpha, y)`` of every row.
    dense_off : ndarray (S,) of int64
        Offset of the subset's dense map in ``dense_map``, or -1 (binary search).
    dense_map : ndarray of int32 or int64
        Row of every key of the densely mapped subsets (-1: unseen).
    """

    subsets: np.ndarray
    strides: np.ndarray
    space: np.ndarray
    row_start: np.ndarray
    keys: np.ndarray
    counts: np.ndarray
    dense_off: np.ndarray
    dense_map: np.ndarray

    @classmethod
    def fit(cls, codes: np.ndarray, y: np.ndarray, cards, n_classes: int, subsets: np.ndarray) -> "SubsetRows":
        """Count the seen combinations of every subset in compact ``codes`` (see :func:`compact_codes`)."""
        cards = np.asarray(cards, dtype=np.int64)
        subsets = np.ascontiguousarray(subsets, dtype=np.int64)
        strides, space = _strides(cards, subsets)
        N, Y = codes.shape[0], int(n_classes)
        if (codes < 0).any():
            raise BNCBenchError("training codes must be in [0, card) for every attribute")
        cap = int(max(1, min(DENSE_COUNT_LIMIT // Y, max(1 << 16, 2 * N))))  # largest key space counted densely
        small = int(min(cap, FULL_COUNT_PER_ROW * N))
        keys, counts, row_start = _seen_rows(transposed(codes), np.asarray(y, dtype=np.int64), Y, subsets, strides,
                                             space, small, cap)
        dense_off, dense_map = _dense_maps(space, row_start, keys)
        return cls(subsets, strides, space, row_start, keys, counts, dense_off, dense_map)

    @property
    def n_subsets(self) -> int:
        return int(self.subsets.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.keys.shape[0])

    def rows_per_subset(self) -> np.ndarray:
        return np.diff(self.row_start)

    def row_subset(self) -> np.ndarray:
        """The subset of every row: (R,) int64."""
        return np.repeat(np.arange(self.n_subsets, dtype=np.int64), self.rows_per_subset())

    def lookup(self, codes: np.ndarray, unseen_rows: bool = False, dtype=np.int64) -> np.ndarray:
        """Row of every instance in every subset: (N, S) of ``dtype`` (compact ``codes``).

        ``UNSEEN`` or ``INVALID`` where there is none; with ``unseen_rows``, an unseen combination of
        subset ``s`` gets row ``n_rows + s`` and an out-of-range value -1.
        """
        out = np.empty((codes.shape[0], self.n_subsets), dtype=dtype)
        _lookup(transposed(codes), *self.arrays(), out, self.n_rows if unseen_rows else -1)
        return out

    def log_mestimates(self, share: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        """``log((N(x_alpha, y) + share[s]) / denominator[y])`` of every row, then ``log(share[s] / denominator[y])``
        of one unseen row per subset: (R + S, n_classes), computed in place (one table of that size)."""
        R = self.n_rows
        out = np.empty((R + self.n_subsets, self.counts.shape[1]))
        out[:R] = self.counts
        out[:R] += share[self.row_subset()][:, None]
        out[R:] = share[:, None]
        out /= denominator[None, :]
        with np.errstate(divide="ignore"):  # m = 0 (MLE): log 0 = -inf is meant
            np.log(out, out=out)
        return out

    def arrays(self) -> tuple:
        """The arrays :func:`rows_in_subset` reads, in its order after ``(codes_t, s)``."""
        return self.subsets, self.strides, self.row_start, self.keys, self.dense_off, self.dense_map

    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in (self.subsets, self.strides, self.space, self.row_start, self.keys,
                                          self.counts, self.dense_off, self.dense_map)))


def _strides(cards: np.ndarray, subsets: np.ndarray):
    sub_cards = cards[subsets]  # (S, n)
    if subsets.size and np.log2(sub_cards.astype(float)).sum(axis=1).max() > 62:
        raise BNCBenchError("a subset's value combinations do not fit in 64-bit keys; use a smaller n")
    rev = np.cumprod(sub_cards[:, ::-1], axis=1)[:, ::-1]  # products of the cards from j on
    space = rev[:, 0].copy() if subsets.shape[1] else np.ones(subsets.shape[0], dtype=np.int64)
    strides = np.ones_like(sub_cards)
    strides[:, :-1] = rev[:, 1:]
    return np.ascontiguousarray(strides, dtype=np.int64), space.astype(np.int64)


def _dense_maps(space, row_start, keys):
    per = np.diff(row_start)
    dense = space <= np.maximum(DENSE_MAP_MIN, DENSE_MAP_FACTOR * per)
    size = np.where(dense, space, 0)
    off = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
    total = int(size.sum())
    R = int(keys.shape[0])
    dense_map = np.full(total, UNSEEN, dtype=np.int32 if R < 2**31 - 1 else np.int64)
    row_sub = np.repeat(np.arange(space.shape[0]), per)
    in_dense = dense[row_sub]
    rows = np.flatnonzero(in_dense)
    dense_map[off[row_sub[rows]] + keys[rows]] = rows
    return np.where(dense, off, -1).astype(np.int64), dense_map


@numba.njit(cache=True, nogil=True, inline="always")
def subset_keys(codes_t, s, subsets, strides, kb, bad):  # pragma: no cover - compiled
    """``kb[r]``: the key of instance ``r``'s values in subset ``s``, or -1 if one is out of range.

    Column by column over ``codes_t`` (attributes x instances), so that the loops vectorize;
    ``bad`` is scratch of the codes' type (the OR of the values: negative if any is -1).
    """
    N = codes_t.shape[1]
    for r in range(N):
        kb[r] = 0
        bad[r] = 0
    for j in range(subsets.shape[1]):
        col = codes_t[subsets[s, j]]
        st = strides[s, j]
        for r in range(N):
            kb[r] += col[r] * st
            bad[r] |= col[r]
    for r in range(N):
        if bad[r] < 0:
            kb[r] = -1


@numba.njit(cache=True, nogil=True)
def rows_in_subset(codes_t, s, subsets, strides, row_start, keys, dense_off, dense_map, kb, bad):  # pragma: no cover
    """``kb[r]``: the row of instance ``r`` in subset ``s``, ``UNSEEN`` (-1) or ``INVALID`` (-2).

    ``kb`` (int64) and ``bad`` (the codes' type) are scratch of one entry per instance.
    """
    subset_keys(codes_t, s, subsets, strides, kb, bad)
    N = kb.shape[0]
    off = dense_off[s]
    if off >= 0:
        for r in range(N):
            k = kb[r]
            kb[r] = dense_map[off + k] if k >= 0 else -2
        return
    start = row_start[s]
    end = row_start[s + 1]
    for r in range(N):
        k = kb[r]
        if k < 0:
            kb[r] = -2
            continue
        kb[r] = find_sorted(keys, start, end, k)


@numba.njit(cache=True, nogil=True)
def _lookup(codes_t, subsets, strides, row_start, keys, dense_off, dense_map, out, unseen_base):  # pragma: no cover
    N, S = codes_t.shape[1], subsets.shape[0]
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    for s in range(S):
        rows_in_subset(codes_t, s, subsets, strides, row_start, keys, dense_off, dense_map, kb, bad)
        for r in range(N):
            row = kb[r]
            if unseen_base >= 0 and row < 0:
                row = unseen_base + s if row == -1 else -1
            out[r, s] = row


@numba.njit(cache=True, nogil=True)
def _grow(keys, counts, R, size):  # pragma: no cover - compiled
    keys2 = np.empty(size, dtype=np.int64)
    keys2[:R] = keys[:R]
    counts2 = np.zeros((size, counts.shape[1]), dtype=np.int64)
    counts2[:R] = counts[:R]
    return keys2, counts2


@numba.njit(cache=True, nogil=True)
def _seen_rows(codes_t, y, Y, subsets, strides, space, small, cap):  # pragma: no cover - compiled
    """Keys, class counts and row starts of the seen combinations of every subset (codes all in range)."""
    S = subsets.shape[0]
    N = codes_t.shape[1]
    size = max(1024, 4 * S)
    keys = np.empty(size, dtype=np.int64)
    counts = np.zeros((size, Y), dtype=np.int64)
    row_start = np.zeros(S + 1, dtype=np.int64)
    scratch = np.zeros(max(cap, small) * Y, dtype=np.int64)
    total = np.zeros(cap, dtype=np.int64)
    seen = np.empty(min(cap, N) + 1, dtype=np.int64)
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    R = 0
    for s in range(S):
        subset_keys(codes_t, s, subsets, strides, kb, bad)
        if space[s] <= small:  # small key space: count every key, then read the table in key order
            sp = space[s]
            for r in range(N):
                scratch[kb[r] * Y + y[r]] += 1
            if R + sp > size:
                size = max(2 * size, R + sp)
                keys, counts = _grow(keys, counts, R, size)
            for k in range(sp):
                t = 0
                for c in range(Y):
                    t += scratch[k * Y + c]
                if t > 0:
                    keys[R] = k
                    for c in range(Y):
                        counts[R, c] = scratch[k * Y + c]
                    R += 1
                for c in range(Y):
                    scratch[k * Y + c] = 0
        elif space[s] <= cap:  # few of a larger key space seen: note them as they come
            ns = 0
            for r in range(N):
                k = kb[r]
                if total[k] == 0:
                    seen[ns] = k
                    ns += 1
                total[k] += 1
                scratch[k * Y + y[r]] += 1
            found = np.sort(seen[:ns])
            if R + ns > size:
                size = max(2 * size, R + ns)
                keys, counts = _grow(keys, counts, R, size)
            for t in range(ns):
                k = found[t]
                keys[R] = k
                for c in range(Y):
                    counts[R, c] = scratch[k * Y + c]
                    scratch[k * Y + c] = 0
                total[k] = 0
                R += 1
        else:  # a key space too large for the scratch table: sort the keys
            order = np.argsort(kb)
            prev = -1
            for t in range(N):
                k = kb[order[t]]
                if k != prev:
                    if R == size:
                        size = 2 * size
                        keys, counts = _grow(keys, counts, R, size)
                    keys[R] = k
                    R += 1
                    prev = k
                counts[R - 1, y[order[t]]] += 1
        row_start[s + 1] = R
    return keys[:R].copy(), counts[:R].copy(), row_start
