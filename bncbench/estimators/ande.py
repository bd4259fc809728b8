"""AnDE's m-estimates, vectorized over all parent subsets (Webb et al. 2005, 2012).

``P(y, x) = mean over alpha in A(x) of  P(y, x_alpha) prod_{i not in alpha} P(x_i | y, x_alpha)``

with the m-estimates (prior mass ``m`` spread uniformly over each table's cells, as Weka's
``AODE -M -W m``)::

    P(y, x_alpha)       = (N(y, x_alpha) + m / (|Y| |X_alpha|)) / (N + m)
    P(x_i | y, x_alpha) = (N(x_i, y, x_alpha) + m / |X_i|) / (N(y, x_alpha) + m)

``A(x)`` are the parent subsets whose values ``x_alpha`` were seen at least ``min_count`` times in
training (the frequency limit; ``min_count = 0`` keeps every subset, an unseen combination
with its zero-count estimates). When ``A(x)`` is empty, the instance gets naive Bayes with the
same m (A0DE). A value outside its attribute's range (code -1, unknown at prediction) is
ignored: as a child it contributes nothing, a parent subset containing it is left out.

Tables: per seen parent combination (a row of
:class:`~bncbench.estimators.subset_rows.SubsetRows`) the counts ``N(x_i, y, x_alpha)`` of every
attribute value, ``(R, sum_i |X_i| |Y|)``; their log m-estimates are computed once per m.
"""

from __future__ import annotations

import numba
import numpy as np

from bncbench.estimators.subset_rows import SubsetRows, compact_codes, find_row
from bncbench.structures.subsets import SubsetMembers


class AnDETables:
    """The counts of an AnDE: ``N(y)``, ``N(x_i, y)`` and, per seen parent combination, ``N(x_i, y, x_alpha)``.

    Parameters
    ----------
    members : SubsetMembers
    cards : array-like of int
    n_classes : int
    min_count : int
        The frequency limit: a parent subset enters an instance's mean if ``N(x_alpha) >= min_count``.
    """

    def __init__(self, members: SubsetMembers, cards, n_classes: int, min_count: int = 1):
        self.members = members
        self.cards = np.asarray(cards, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.min_count = int(min_count)
        self.att_off = np.concatenate([[0], np.cumsum(self.cards)[:-1]]).astype(np.int64)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "AnDETables":
        y = np.asarray(y, dtype=np.int64)
        Y = self.n_classes
        codes = compact_codes(X, self.cards)
        self.class_counts = np.bincount(y, minlength=Y).astype(float)
        self.n = float(y.shape[0])
        self.rows = SubsetRows.fit(codes, y, self.cards, Y, self.members.subsets)
        T = int(self.cards.sum()) * Y
        self.child_counts = _child_counts(codes, y, Y, *self.rows.arrays(), self.att_off, T, self.rows.n_rows)
        self.nb_counts = _attribute_counts(codes, y, Y, self.att_off, T)
        self.row_total = self.rows.counts.sum(axis=1)
        return self

    def log_tables(self, m: float) -> dict:
        """The log m-estimates for ``m``: joint (R + S, Y; unseen rows last), conditionals (R, T), NB's."""
        Y, rows = self.n_classes, self.rows
        col_att = np.repeat(np.arange(len(self.cards)), self.cards * Y)  # attribute of every column
        col_class = np.tile(np.arange(Y), int(self.cards.sum()))
        share = m / (Y * rows.space.astype(float))
        num = np.concatenate([rows.counts + share[rows.row_subset()][:, None],
                              np.broadcast_to(share[:, None], (rows.n_subsets, Y))])
        with np.errstate(divide="ignore", invalid="ignore"):  # m = 0 (MLE): log 0 = -inf, 0/0 never read
            joint = np.log(num / (self.n + m))
            cond = np.log((self.child_counts + (m / self.cards)[col_att]) / (rows.counts[:, col_class] + m))
            nb = np.log((self.nb_counts + (m / self.cards)[col_att]) / (self.class_counts[col_class] + m))
            prior = np.log((self.class_counts + m / Y) / (self.n + m))
        cond[~np.isfinite(cond) & (rows.counts[:, col_class] == 0)] = 0.0  # P(y, x_alpha) = 0 there
        unseen_child = np.log(1.0 / self.cards) if m > 0 else np.zeros(len(self.cards))
        return {"joint": joint, "cond": cond, "nb": nb, "prior": prior, "unseen_child": unseen_child}

    def log_joint(self, X: np.ndarray, m: float, tables: dict | None = None) -> np.ndarray:
        """``log P(y, x)`` (the frequency-limited mean of the SPnDEs) of every instance and class: (N, Y)."""
        t = self.log_tables(m) if tables is None else tables
        return _ande_log_joint(compact_codes(X, self.cards), *self.rows.arrays(), self.rows.n_rows, self.row_total,
                               self.min_count, t["joint"], t["cond"], t["unseen_child"], t["nb"], t["prior"],
                               self.att_off)

    def n_parameters(self) -> int:
        """Free parameters: per subset ``min(R Y, Y |X_alpha| - 1)`` for ``P(y, x_alpha)``, plus per seen row
        and class ``sum_{i not in alpha} (|X_i| - 1)``."""
        rows, Y = self.rows, self.n_classes
        per = rows.rows_per_subset()
        joint = np.minimum(per * Y, Y * rows.space - 1).sum()
        free = self.cards - 1
        children = per * (free.sum() - free[self.members.subsets].sum(axis=1)) * Y
        return int(joint + children.sum())


class AnDEScorer:
    """AnDE with m-estimates: the project's :class:`~bncbench.estimators.Scorer`.

    Attributes
    ----------
    tables : AnDETables
    m : float
    members : SubsetMembers
    combine : str
        ``"arithmetic"``.
    columns : ndarray
        Every attribute.
    """

    combine = "arithmetic"

    def __init__(self, tables: AnDETables, m: float):
        self.tables, self.m = tables, float(m)
        self.members = tables.members
        self.columns = np.arange(len(tables.cards), dtype=np.int64)
        self._tables = tables.log_tables(self.m)

    @property
    def n_classes(self) -> int:
        return self.tables.n_classes

    @property
    def n_parameters(self) -> int:
        return self.tables.n_parameters()

    def log_prior(self) -> np.ndarray:
        return self._tables["prior"]

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        return self.tables.log_joint(codes, self.m, self._tables)


@numba.njit(cache=True, nogil=True)
def _attribute_counts(codes, y, Y, att_off, T):  # pragma: no cover - compiled
    out = np.zeros(T, dtype=np.int64)
    for r in range(codes.shape[0]):
        for i in range(codes.shape[1]):
            x = codes[r, i]
            if x >= 0:
                out[(att_off[i] + x) * Y + y[r]] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _child_counts(codes, y, Y, subsets, strides, row_start, keys, dense_off, dense_map, att_off, T, R):  # pragma: no cover
    """``N(x_i, y, x_alpha)`` per seen row: (R, T) int32, column ``(att_off[i] + x_i) * Y + y``."""
    N, a = codes.shape
    out = np.zeros((R, T), dtype=np.int32)
    for s in range(subsets.shape[0]):
        for r in range(N):
            row = find_row(codes, r, s, subsets, strides, row_start, keys, dense_off, dense_map)
            if row < 0:
                continue
            yr = y[r]
            for i in range(a):
                x = codes[r, i]
                if x >= 0:
                    out[row, (att_off[i] + x) * Y + yr] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _ande_log_joint(codes, subsets, strides, row_start, keys, dense_off, dense_map, R, row_total, min_count,
                    joint, cond, unseen_child, nb, prior, att_off):  # pragma: no cover - compiled
    N, a = codes.shape
    S, n = subsets.shape
    Y = prior.shape[0]
    out = np.empty((N, Y))
    buf = np.empty((S, Y))
    acc = np.empty(Y)
    for r in range(N):
        K = 0
        for s in range(S):
            row = find_row(codes, r, s, subsets, strides, row_start, keys, dense_off, dense_map)
            if row == -2:
                continue
            if row == -1:
                if min_count > 0:
                    continue
                for c in range(Y):
                    acc[c] = joint[R + s, c]
            else:
                if row_total[row] < min_count:
                    continue
                for c in range(Y):
                    acc[c] = joint[row, c]
            j = 0
            for i in range(a):
                if j < n and subsets[s, j] == i:
                    j += 1
                    continue
                x = codes[r, i]
                if x < 0:
                    continue
                if row == -1:
                    for c in range(Y):
                        acc[c] += unseen_child[i]
                else:
                    base = (att_off[i] + x) * Y
                    for c in range(Y):
                        acc[c] += cond[row, base + c]
            for c in range(Y):
                buf[K, c] = acc[c]
            K += 1
        if K == 0:  # no parent subset qualifies: naive Bayes
            for c in range(Y):
                acc[c] = prior[c]
            for i in range(a):
                x = codes[r, i]
                if x >= 0:
                    base = (att_off[i] + x) * Y
                    for c in range(Y):
                        acc[c] += nb[base + c]
            for c in range(Y):
                out[r, c] = acc[c]
            continue
        logk = np.log(K)
        for c in range(Y):
            mx = -np.inf
            for k in range(K):
                if buf[k, c] > mx:
                    mx = buf[k, c]
            if mx == -np.inf:
                out[r, c] = -np.inf
                continue
            tot = 0.0
            for k in range(K):
                tot += np.exp(buf[k, c] - mx)
            out[r, c] = mx + np.log(tot) - logk
    return out
