"""The rows of ``Phi`` of attribute-subset factors, found from the attribute codes (compiled).

An AnJE's factor ``1 + s`` (:class:`~bncbench.engine.subset_layout.SubsetLayout`) uses, per instance,
the row of the value combination of subset ``s``: ``1 + r`` for the scorer's seen row ``r``, the
subset's unseen row ``1 + R + s`` for a combination never seen in training, none (-1) where a value
of the subset is out of range (code -1). :class:`SubsetLookup` finds these rows from the
instances' codes, so that no ``(N, n_subsets)`` table has to exist: per subset, the key of the
combination (its mixed-radix code, :func:`bncbench.estimators.subset_rows.subset_keys`) is
looked up

* in a **dense map** ``key -> engine row`` (unseen keys map to the unseen row), for the subsets
  with the smallest key spaces, as many as fit in ``dense_budget`` bytes (default
  :data:`DENSE_BUDGET`): after MDL discretization this is every subset of connect-4 (27 keys
  each), covertype and census-income for n = 3 (4 and 26 million keys in all, 15 and 99 MiB);
* by binary search over the subset's sorted seen keys (the scorer's own arrays) otherwise.

The kernels of :mod:`bncbench.engine.subset_design` find the rows subset by subset over blocks
of design rows (codes as attributes x instances, so that the key loops vectorize). Their fast
path (a dense subset, a block without unknown values) builds the key from the code of the
subset's *prefix*, all its attributes but the last (:func:`prefix_codes`; in lexicographic order
consecutive subsets share it: ``C(a, n-1)`` prefixes for ``C(a, n)`` subsets), and indexes
without negative-index wraparound; other subsets and blocks call :func:`chunk_rows`.
"""

from __future__ import annotations

import numba
import numpy as np

from bncbench.bn.counts import find_sorted
from bncbench.estimators.subset_rows import subset_keys

DENSE_BUDGET = 256 * 2**20
"""Bytes of the dense ``key -> row`` maps of one layout (4 bytes per key); the subsets with the smallest key
spaces get one until it is spent, the others use binary search."""


class SubsetLookup:
    """Rows of ``Phi`` per subset and key: dense maps where affordable, binary search elsewhere.

    Parameters
    ----------
    seen : SubsetRows
        The scorer's seen combinations (:class:`bncbench.estimators.subset_rows.SubsetRows`): its
        subsets, strides, key spaces, row starts and sorted keys (shared, not copied).
    dense_budget : int, default=DENSE_BUDGET
        Bytes of dense maps at most.

    Attributes
    ----------
    n_subsets : int
    unseen_base : int
        Engine row of subset 0's unseen row (``1 + R``); subset ``s``'s is ``unseen_base + s``.
    dense_off : ndarray (n_subsets,) of int64
        Offset of the subset's dense map in ``dense_rows``, or -1 (binary search).
    dense_rows : ndarray of int32 (int64 beyond 2**31 rows)
        Engine row of every key of the densely mapped subsets.
    space : ndarray (n_subsets,) of int64
        Key space of every subset (the scorer's).
    groups : SubsetGroups or None
        The subsets' combined tables (:class:`bncbench.engine.subset_design.SubsetGroups`), once a design
        has built them.
    """

    def __init__(self, seen, dense_budget: int = DENSE_BUDGET) -> None:
        """Build the dense maps of the subsets with the smallest key spaces that fit the budget.

        Parameters
        ----------
        seen : SubsetRows
            The seen combinations of every subset.
        dense_budget : int, default=DENSE_BUDGET
            Bytes of dense maps at most.
        """
        self.subsets, self.strides = seen.subsets, seen.strides
        self.row_start, self.keys = seen.row_start, seen.keys
        S, R = seen.n_subsets, seen.n_rows
        self.n_subsets = S
        self.space = seen.space
        self.groups = None  # the combined tables (subset_design.SubsetGroups), built when a design first needs them
        self.unseen_base = 1 + R
        dtype = np.int32 if 1 + R + S < 2**31 - 1 else np.int64
        space = seen.space
        order = np.argsort(space, kind="stable")
        fits = np.cumsum(space[order]) * np.dtype(dtype).itemsize <= int(dense_budget)
        dense = np.zeros(S, bool)
        dense[order[fits]] = True
        size = np.where(dense, space, 0)
        off = np.r_[0, np.cumsum(size)[:-1]].astype(np.int64)
        self.dense_rows = np.repeat((self.unseen_base + np.arange(S)).astype(dtype), size)
        per = np.diff(seen.row_start)
        row_sub = np.repeat(np.arange(S), per)
        rows = np.flatnonzero(dense[row_sub])
        self.dense_rows[off[row_sub[rows]] + seen.keys[rows]] = 1 + rows
        self.dense_off = np.where(dense, off, -1).astype(np.int64)
        # key = prefix code * radix + last code; the prefix code is shared by consecutive subsets
        n = self.subsets.shape[1]
        self.last = np.ascontiguousarray(self.subsets[:, -1]) if n else np.zeros(S, np.int64)
        self.radix = self.strides[:, -2].copy() if n > 1 else np.ones(S, np.int64)
        self.prefix_strides = np.ascontiguousarray(self.strides[:, :-1] // self.radix[:, None]) if n else \
            np.zeros((S, 0), np.int64)
        self.new_prefix = np.ones(S, np.bool_)
        if n > 1 and S > 1:
            self.new_prefix[1:] = (self.subsets[1:, :-1] != self.subsets[:-1, :-1]).any(axis=1)
        elif S > 1:
            self.new_prefix[1:] = False

    def arrays(self) -> tuple:
        """The arrays :func:`chunk_rows` reads, in its order after ``(codes_t, s)``."""
        return (self.subsets, self.strides, self.dense_off, self.dense_rows, self.row_start, self.keys,
                self.unseen_base)

    def kernel_arrays(self) -> tuple:
        """:meth:`arrays`, then the prefix arrays of the fast path: ``last, radix, prefix_strides, new_prefix``."""
        return (*self.arrays(), self.last, self.radix, self.prefix_strides, self.new_prefix)

    def table(self, codes: np.ndarray) -> np.ndarray:
        """The materialized rows of compact ``codes``: (N, 1 + n_subsets) int32, column 0 the class row.

        ``N * (1 + n_subsets) * 4`` bytes: for the reference path and tests only.
        """
        out = np.empty((codes.shape[0], 1 + self.n_subsets), dtype=np.int32)
        _table(np.ascontiguousarray(codes.T), *self.arrays(), out)
        return out

    def nbytes(self) -> int:
        """Bytes of the lookup's own arrays (the dense maps and their offsets)."""
        return int(self.dense_rows.nbytes + self.dense_off.nbytes)


@numba.njit(cache=True, nogil=True)
def chunk_rows(codes_t, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, kb,
               bad):  # pragma: no cover - compiled
    """``kb[b]``: the engine row of instance ``b`` of ``codes_t`` (attributes x instances) in subset ``s``, or -1.

    ``kb`` (int64) and ``bad`` (the codes' type) are scratch of one entry per instance.
    """
    subset_keys(codes_t, s, subsets, strides, kb, bad)
    B = kb.shape[0]
    off = dense_off[s]
    if off >= 0:
        for b in range(B):
            k = kb[b]
            kb[b] = dense_rows[off + k] if k >= 0 else -1
        return
    start = row_start[s]
    end = row_start[s + 1]
    for b in range(B):
        k = kb[b]
        if k < 0:
            continue
        i = find_sorted(keys, start, end, k)
        kb[b] = 1 + i if i >= 0 else unseen_base + s


@numba.njit(cache=True, nogil=True, inline="always")
def prefix_codes(codes_t, s, subsets, prefix_strides, prefix):  # pragma: no cover - compiled
    """``prefix[b]``: the code of instance ``b``'s values of subset ``s``'s prefix (its attributes but the last)."""
    for b in range(prefix.shape[0]):
        prefix[b] = 0
    for j in range(prefix_strides.shape[1]):
        col = codes_t[subsets[s, j]]
        st = prefix_strides[s, j]
        for b in range(prefix.shape[0]):
            prefix[b] += col[b] * st


@numba.njit(cache=True, nogil=True)
def _table(codes_t, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base,
           out):  # pragma: no cover - compiled
    N = codes_t.shape[1]
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    for r in range(N):
        out[r, 0] = 0
    for s in range(subsets.shape[0]):
        chunk_rows(codes_t, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, kb, bad)
        for r in range(N):
            out[r, 1 + s] = kb[r]
