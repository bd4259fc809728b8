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
attribute value and class, ``(R, sum_i |X_i|, |Y|)``; their m-estimates are computed once per m
(classes padded to :func:`lanes`). Memory: ``R sum_i |X_i| |Y|`` times 4 bytes (counts) plus 8
(estimates), at most :data:`MAX_TABLE_ENTRIES` entries. For A1DE every pair of attributes is
counted once and its table mirrored (:func:`_pair_child_counts`).

Prediction multiplies probabilities (no ``exp`` per instance and parent subset) wherever no product
of the tables' smallest estimates can underflow (:func:`products_are_safe`; m > 0), and adds logs
with a running log-sum-exp otherwise (many attributes). The two agree to rounding
(``tests/test_anjde.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba
import numpy as np

from bncbench.bn.counts import find_sorted
from bncbench.errors import BNCBenchError
from bncbench.estimators.scorer import SubsetScorer
from bncbench.estimators.subset_rows import SubsetRows, compact_codes, rows_in_subset, transposed
from bncbench.structures.subset_ensembles import SubsetMembers

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

LANES = 4
"""Classes are combined four at a time, two for two classes (:func:`lanes`): independent chains of
operations, so that the factors of one instance do not wait for each other."""
MAX_TABLE_ENTRIES = 1 << 29
"""Largest conditional table (seen parent combinations x attribute values x padded classes, 4 GiB of
float64) an AnDE may build; beyond it the fit is a clear error rather than an out-of-memory."""
NO_CLASS = np.zeros(0, dtype=np.int64)
"""The ``y`` of :func:`_columns` for columns without the class."""


LOG_TINY = float(np.log(np.finfo(float).tiny))
"""The log of the smallest normal double: a product of probabilities whose log stays above it does not underflow."""


def lanes(n_classes: int) -> int:
    """The classes of the tables padded for the kernels: 2 for up to two classes, else a multiple of :data:`LANES`."""
    return 2 if n_classes <= 2 else -(-int(n_classes) // LANES) * LANES


def products_are_safe(log_cond: np.ndarray, log_joint: np.ndarray, log_unseen_child: np.ndarray,
                      att_off: np.ndarray) -> bool:
    """Whether every product of a joint estimate and one conditional estimate per attribute stays a normal double.

    A lower bound of every instance's product: the smallest ``log P(y, x_alpha)`` plus, per attribute, the
    smallest of its conditional estimates (any row, value, class) and its unseen-parent estimate. Partial
    products are at least the whole (every factor is at most 1), so none underflows either.

    Parameters
    ----------
    log_cond : ndarray of shape (R, C, Y)
        ``log P(x_i | y, x_alpha)``, finite, columns in attribute order.
    log_joint : ndarray of shape (R + S, Y)
        ``log P(y, x_alpha)``, finite.
    log_unseen_child : ndarray of shape (a,)
        The estimate of a child under an unseen parent combination.
    att_off : ndarray of int, shape (a,)
        First column of every attribute in ``log_cond``.

    Returns
    -------
    bool
        True when the bound is above :data:`LOG_TINY`.
    """
    if log_cond.size == 0:
        return False
    per_value = log_cond.min(axis=0).min(axis=1)  # (numpy's reduction over (0, 2) at once was 5x slower)
    per_attribute = np.minimum(np.minimum.reduceat(per_value, att_off), log_unseen_child)
    return bool(per_attribute.sum() + log_joint.min(initial=0.0) > LOG_TINY)


class AnDETables:
    """The counts of an AnDE: ``N(y)``, ``N(x_i, y)`` and, per seen parent combination, ``N(x_i, y, x_alpha)``.

    Parameters
    ----------
    members : SubsetMembers
        The parent subsets (``members.subsets``, shape (S, n)) and ``n``.
    cards : array-like of int
        Cardinality of every attribute, shape (a,).
    n_classes : int
        Number of classes.
    min_count : int
        The frequency limit: a parent subset enters an instance's mean if ``N(x_alpha) >= min_count``.

    Attributes
    ----------
    members, min_count
        As given.
    cards : ndarray of int64, shape (a,)
        ``cards`` as an array.
    n_classes : int
        As given.
    att_off : ndarray of int64, shape (a,)
        First table column of every attribute (cumulative cardinalities).
    class_counts : ndarray of float, shape (n_classes,)
        ``N(y)``; set by :meth:`fit`.
    n : float
        Number of training instances; set by :meth:`fit`.
    rows : SubsetRows
        The seen parent combinations and their class counts ``N(y, x_alpha)``; set by :meth:`fit`.
    child_counts : ndarray of int32, shape (R, C, n_classes)
        ``N(x_i, y, x_alpha)`` per seen row, ``C = sum(cards)`` attribute values; set by :meth:`fit`.
    nb_counts : ndarray of int, shape (C, n_classes)
        ``N(x_i, y)``; set by :meth:`fit`.
    row_total : ndarray of int64, shape (R,)
        ``N(x_alpha)`` of every seen row; set by :meth:`fit`.
    """

    def __init__(self, members: SubsetMembers, cards: ArrayLike, n_classes: int, min_count: int = 1) -> None:
        """Store the subsets and cardinalities; counting is done by :meth:`fit`.

        Parameters
        ----------
        members : SubsetMembers
            The parent subsets.
        cards : array-like of int
            Cardinality of every attribute.
        n_classes : int
            Number of classes.
        min_count : int, default=1
            The frequency limit.
        """
        self.members = members
        self.cards = np.asarray(cards, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.min_count = int(min_count)
        self.att_off = np.concatenate([[0], np.cumsum(self.cards)[:-1]]).astype(np.int64)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "AnDETables":
        """Count ``N(y)``, ``N(x_i, y)`` and, per seen parent combination, ``N(x_alpha, y)`` and ``N(x_i, y, x_alpha)``.

        Parameters
        ----------
        X : ndarray of int, shape (N, a)
            Training codes, every code in ``[0, cards[i])``.
        y : ndarray of int, shape (N,)
            Class codes in ``[0, n_classes)`` (not checked).

        Returns
        -------
        AnDETables
            ``self``, with ``class_counts``, ``n``, ``rows``, ``child_counts``, ``nb_counts`` and
            ``row_total`` set.

        Raises
        ------
        BNCBenchError
            If ``X`` does not have one column per attribute, a code is outside ``[0, card)``, or
            the conditional table (seen parent combinations x attribute values x classes padded
            to :func:`lanes`) would exceed :data:`MAX_TABLE_ENTRIES` entries.
        """
        y = np.asarray(y, dtype=np.int64)
        Y = self.n_classes
        codes = compact_codes(X, self.cards)
        self.class_counts = np.bincount(y, minlength=Y).astype(float)
        self.n = float(y.shape[0])
        self.rows = SubsetRows.fit(codes, y, self.cards, Y, self.members.subsets)
        C = int(self.cards.sum())
        if self.rows.n_rows * (C + 1) * lanes(Y) > MAX_TABLE_ENTRIES:
            raise BNCBenchError(
                f"A{self.members.n}DE on these data needs tables of {self.rows.n_rows:,} parent combinations x "
                f"{C} attribute values x {Y} classes, more than {MAX_TABLE_ENTRIES:,} entries; use a smaller n")
        cols = _columns(codes, self.att_off, y, Y, -1)
        subsets = self.members.subsets
        if subsets.shape[1] == 1 and np.array_equal(subsets[:, 0], np.arange(len(self.cards))):
            counts = _pair_child_counts(transposed(codes), *self.rows.arrays(), cols, C * Y, self.rows.n_rows,
                                        self.att_off, self.cards, Y)
        else:
            counts = _child_counts(transposed(codes), *self.rows.arrays(), cols, C * Y, self.rows.n_rows)
        self.child_counts = counts.reshape(-1, C, Y)
        self.nb_counts = np.bincount(cols.ravel(), minlength=C * Y).reshape(C, Y)  # training codes are in range
        self.row_total = self.rows.counts.sum(axis=1)
        return self

    def log_tables(self, m: float, linear: bool | None = None) -> dict:
        """The m-estimates for ``m`` as the prediction kernel reads them: joint (R + S, Y; unseen rows last),
        conditionals (R, C + 1, :func:`lanes`), NB's (C, Y); probabilities or their logs.

        Parameters
        ----------
        m : float
            Prior mass of the m-estimates (>= 0; 0 gives maximum likelihood, ``-inf`` for zero counts).
        linear : bool, optional
            Probabilities (True) or logs (False) in ``joint``, ``cond`` and ``unseen_child``. By default
            probabilities where no product can underflow (:func:`products_are_safe`, with m > 0).

        Returns
        -------
        dict
            ``linear`` (bool): which of the two; ``joint`` (R + S, Y): ``P(y, x_alpha)`` of every seen row,
            then of one unseen row per subset; ``cond`` (R, C + 1, Yp), ``Yp`` = :func:`lanes` (Y):
            ``P(x_i | y, x_alpha)`` in ``cond[:, :C, :Y]``, the neutral factor (1, or 0 in logs) in the
            padding, in the last column (an unknown value's), in the columns of the row's own
            subset (not children: every attribute's column can be read) and where ``N(y, x_alpha) = 0``
            with ``m = 0``; ``unseen_child`` (a,): ``1 / |X_i|``, the estimate of a child under an
            unseen parent combination (neutral when ``m = 0``). In logs always: ``nb`` (C, Y), naive
            Bayes' ``log P(x_i | y)``, and ``prior`` (Y,), ``log P(y)``.
        """
        Y, rows, C = self.n_classes, self.rows, int(self.cards.sum())
        m_card = np.repeat(m / self.cards, self.cards)  # m / |X_i| of every column (attribute value)
        joint = rows.log_mestimates(m / (Y * rows.space.astype(float)), np.full(Y, self.n + m))
        with np.errstate(divide="ignore", invalid="ignore"):  # m = 0 (MLE): log 0 = -inf, 0/0 never read
            padded = np.zeros((rows.n_rows, C + 1, lanes(Y)))  # in place: one table of this size
            cond = padded[:, :C, :Y]
            cond[...] = self.child_counts
            cond += m_card[None, :, None]
            cond /= (rows.counts + m)[:, None, :]
            np.log(cond, out=cond)
            nb = np.log((self.nb_counts + m_card[:, None]) / (self.class_counts + m)[None, :])
            prior = np.log((self.class_counts + m / Y) / (self.n + m))
        if m == 0:
            cond[np.isnan(cond)] = 0.0  # 0/0 where N(y, x_alpha) = 0: P(y, x_alpha) = 0 there
        unseen_child = np.log(1.0 / self.cards) if m > 0 else np.zeros(len(self.cards))
        _neutral_parents(padded, rows.subsets, rows.row_start, self.att_off, self.cards)
        if linear is None:
            linear = m > 0 and products_are_safe(cond, joint, unseen_child, self.att_off)
        if linear:
            np.exp(padded, out=padded)
            joint, unseen_child = np.exp(joint), np.exp(unseen_child)
        return {"linear": bool(linear), "joint": joint, "cond": padded, "nb": nb, "prior": prior,
                "unseen_child": unseen_child}

    def log_joint(self, X: np.ndarray, m: float, tables: dict | None = None) -> np.ndarray:
        """``log P(y, x)`` (the frequency-limited mean of the SPnDEs) of every instance and class: (N, Y).

        Parameters
        ----------
        X : ndarray of int, shape (N, a)
            Codes of every attribute; a code outside ``[0, cards[i])`` is an unknown value (ignored).
        m : float
            Prior mass of the m-estimates.
        tables : dict, optional
            :meth:`log_tables` for ``m``, computed here when ``None``.

        Returns
        -------
        ndarray of shape (N, n_classes)
            Unnormalized log joint probabilities; naive Bayes (with ``m``) for an instance for which
            no parent subset qualifies (frequency limit, or a value of the subset out of range).

        Raises
        ------
        BNCBenchError
            If ``X`` does not have one column per attribute.
        """
        t = self.log_tables(m) if tables is None else tables
        codes = compact_codes(X, self.cards)
        unknown = t["cond"].shape[1] - 1  # the neutral column
        return _ande_log_joint(transposed(codes), *self.rows.arrays(), self.rows.n_rows, self.row_total, self.min_count,
                               t["joint"], t["cond"], t["unseen_child"], t["nb"], t["prior"],
                               _columns(codes, self.att_off, NO_CLASS, 1, unknown), t["linear"])

    def n_parameters(self) -> int:
        """Free parameters: per subset ``min(R Y, Y |X_alpha| - 1)`` for ``P(y, x_alpha)``, plus per seen row
        and class ``sum_{i not in alpha} (|X_i| - 1)``.

        ``R`` is the subset's number of seen rows. Requires :meth:`fit`.

        Returns
        -------
        int
            The sum over the subsets.
        """
        rows, Y = self.rows, self.n_classes
        per = rows.rows_per_subset()
        joint = np.minimum(per * Y, Y * rows.space - 1).sum()
        free = self.cards - 1
        children = per * (free.sum() - free[self.members.subsets].sum(axis=1)) * Y
        return int(joint + children.sum())


class AnDEScorer(SubsetScorer):
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

    def __init__(self, tables: AnDETables, m: float) -> None:
        """Compute the log m-estimates once (:meth:`AnDETables.log_tables`).

        Parameters
        ----------
        tables : AnDETables
            Fitted tables.
        m : float
            Prior mass of the m-estimates.
        """
        super().__init__(tables, m)
        self._tables = tables.log_tables(self.m)

    def log_prior(self) -> np.ndarray:
        """``log P(y)``, the m-estimate of the class prior.

        Returns
        -------
        ndarray of shape (n_classes,)
            ``log((N(y) + m / |Y|) / (N + m))`` (the stored array, not a copy).
        """
        return self._tables["prior"]

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """``log P(y, x)`` of every instance and class (:meth:`AnDETables.log_joint`).

        Parameters
        ----------
        codes : ndarray of int, shape (n, a)
            Codes of all the attributes.

        Returns
        -------
        ndarray of shape (n, n_classes)
            Unnormalized log joint probabilities.

        Raises
        ------
        BNCBenchError
            If ``codes`` does not have one column per attribute.
        """
        return self.tables.log_joint(codes, self.m, self._tables)


@numba.njit(cache=True, nogil=True)
def _columns(codes, att_off, y, n_classes, unknown):  # pragma: no cover - compiled
    """Per instance and attribute the table column ``att_off[i] + x_i``, or ``(att_off[i] + x_i) * n_classes + y``
    when ``y`` has an entry per instance (a (value, class) table); ``unknown`` for an unknown value. (N, a) int32.

    The kernels read these rather than add the offsets in their inner loops (measured faster).
    """
    N, a = codes.shape
    out = np.empty((N, a), dtype=np.int32)
    with_class = y.shape[0] == N
    for r in range(N):
        for i in range(a):
            x = codes[r, i]
            if x < 0:
                out[r, i] = unknown
            elif with_class:
                out[r, i] = (att_off[i] + x) * n_classes + y[r]
            else:
                out[r, i] = att_off[i] + x
    return out


@numba.njit(cache=True, nogil=True)
def _child_counts(codes_t, subsets, strides, row_start, keys, dense_off, dense_map, cols, T, R):  # pragma: no cover
    """``N(x_i, y, x_alpha)`` per seen row: (R, T) int32, T = values x classes; ``cols``: :func:`_columns` with y."""
    a, N = codes_t.shape
    out = np.zeros((R, T), dtype=np.int32)
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    for s in range(subsets.shape[0]):  # subset-outer: the subset's rows stay in cache
        rows_in_subset(codes_t, s, subsets, strides, row_start, keys, dense_off, dense_map, kb, bad)
        for r in range(N):
            row = kb[r]
            if row < 0:
                continue
            counts = out[row]
            cr = cols[r]
            for i in range(a):
                col = cr[i]
                if col >= 0:
                    counts[col] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _pair_child_counts(codes_t, subsets, strides, row_start, keys, dense_off, dense_map, cols, T, R, att_off, cards,
                       n_classes):  # pragma: no cover - compiled
    """A1DE's :func:`_child_counts` (subset ``s`` is attribute ``s``), each pair of attributes counted once.

    ``N(x_i, y, x_p)`` is counted for ``i >= p`` (the parent's own column included) and mirrored into the
    rows of ``i`` for ``i < p``: half the increments. A value never seen in training has no row, and no count
    to mirror.
    """
    a, N = codes_t.shape
    out = np.zeros((R, T), dtype=np.int32)
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    for p in range(a):
        rows_in_subset(codes_t, p, subsets, strides, row_start, keys, dense_off, dense_map, kb, bad)
        for r in range(N):
            row = kb[r]
            if row < 0:
                continue
            counts = out[row]
            later = cols[r, p:]  # (this form compiles to a loop twice as fast as indexing cols[r, i] from p)
            for t in range(a - p):
                col = later[t]
                if col >= 0:
                    counts[col] += 1
    for p in range(1, a):
        for row in range(row_start[p], row_start[p + 1]):
            src = (att_off[p] + keys[row]) * n_classes  # the key of a one-attribute subset is its value
            for i in range(p):
                for u in range(cards[i]):
                    mirror = dense_map[dense_off[i] + u] if dense_off[i] >= 0 else \
                        find_sorted(keys, row_start[i], row_start[i + 1], u)
                    if mirror < 0:
                        continue
                    dst = (att_off[i] + u) * n_classes
                    for c in range(n_classes):
                        out[row, dst + c] = out[mirror, src + c]
    return out


@numba.njit(cache=True, nogil=True)
def _neutral_parents(cond, subsets, row_start, att_off, cards):  # pragma: no cover - compiled
    """Zero (log 1) the columns of a row's own subset attributes in ``cond``: read as the neutral factor."""
    for s in range(subsets.shape[0]):
        for j in range(subsets.shape[1]):
            i = subsets[s, j]
            for row in range(row_start[s], row_start[s + 1]):
                for v in range(att_off[i], att_off[i] + cards[i]):
                    for c in range(cond.shape[2]):
                        cond[row, v, c] = 0.0


@numba.njit(cache=True, nogil=True)
def _ande_log_joint(codes_t, subsets, strides, row_start, keys, dense_off, dense_map, R, row_total, min_count,
                    joint, cond, unseen_child, nb, prior, cols, linear):  # pragma: no cover - compiled
    """The frequency-limited log mean of the SPnDEs; ``cols``: :func:`_columns` without the class, an unknown
    value in ``cond``'s last (neutral) column; ``joint``, ``cond`` and ``unseen_child`` probabilities when
    ``linear``, else logs (summed with a running log-sum-exp per instance and class).

    Subset-outer: the subset's rows of ``cond`` stay in cache while every instance reads them. Class lanes
    are independent chains of products (the operations of one instance do not wait for each other).
    """
    a, N = codes_t.shape
    S, n = subsets.shape
    Y = prior.shape[0]
    C = cond.shape[1] - 1
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    mx = np.full((N, Y), -np.inf)
    tot = np.zeros((N, Y))
    used = np.zeros(N, dtype=np.int64)
    Yp = cond.shape[2]
    acc = np.empty(Yp)
    kids = np.empty(a, dtype=np.int64)
    for s in range(S):
        nk = 0
        j = 0
        for i in range(a):  # the children: attributes not in the subset
            if j < n and subsets[s, j] == i:
                j += 1
            else:
                kids[nk] = i
                nk += 1
        rows_in_subset(codes_t, s, subsets, strides, row_start, keys, dense_off, dense_map, kb, bad)
        for r in range(N):
            row = kb[r]
            if row == -2:
                continue
            if row == -1:
                if min_count > 0:
                    continue
                v = 1.0 if linear else 0.0
                for t in range(nk):
                    if cols[r, kids[t]] < C:
                        v = v * unseen_child[kids[t]] if linear else v + unseen_child[kids[t]]
                for c in range(Y):
                    acc[c] = joint[R + s, c] * v if linear else joint[R + s, c] + v
            elif row_total[row] < min_count:
                continue
            elif linear and Yp == 2:  # the hot path: four chains per class, over every fourth attribute
                tab = cond[row]
                cr = cols[r]
                a0 = joint[row, 0]
                a1 = joint[row, 1] if Y > 1 else 1.0
                b0 = 1.0
                b1 = 1.0
                d0 = 1.0
                d1 = 1.0
                e0 = 1.0
                e1 = 1.0
                i = 0
                while i + 3 < a:
                    c0 = cr[i]
                    c1 = cr[i + 1]
                    c2 = cr[i + 2]
                    c3 = cr[i + 3]
                    a0 *= tab[c0, 0]
                    a1 *= tab[c0, 1]
                    b0 *= tab[c1, 0]
                    b1 *= tab[c1, 1]
                    d0 *= tab[c2, 0]
                    d1 *= tab[c2, 1]
                    e0 *= tab[c3, 0]
                    e1 *= tab[c3, 1]
                    i += 4
                while i < a:
                    a0 *= tab[cr[i], 0]
                    a1 *= tab[cr[i], 1]
                    i += 1
                used[r] += 1
                tot[r, 0] += (a0 * b0) * (d0 * e0)
                if Y > 1:
                    tot[r, 1] += (a1 * b1) * (d1 * e1)
                continue
            elif linear:  # four classes at a time, two chains each
                tab = cond[row]
                cr = cols[r]
                for cb in range(0, Yp, 4):
                    a0 = 1.0
                    a1 = 1.0
                    a2 = 1.0
                    a3 = 1.0
                    b0 = 1.0
                    b1 = 1.0
                    b2 = 1.0
                    b3 = 1.0
                    i = 0
                    while i + 1 < a:
                        c0 = cr[i]
                        c1 = cr[i + 1]
                        a0 *= tab[c0, cb]
                        a1 *= tab[c0, cb + 1]
                        a2 *= tab[c0, cb + 2]
                        a3 *= tab[c0, cb + 3]
                        b0 *= tab[c1, cb]
                        b1 *= tab[c1, cb + 1]
                        b2 *= tab[c1, cb + 2]
                        b3 *= tab[c1, cb + 3]
                        i += 2
                    if i < a:
                        c0 = cr[i]
                        a0 *= tab[c0, cb]
                        a1 *= tab[c0, cb + 1]
                        a2 *= tab[c0, cb + 2]
                        a3 *= tab[c0, cb + 3]
                    acc[cb] = a0 * b0
                    acc[cb + 1] = a1 * b1
                    acc[cb + 2] = a2 * b2
                    acc[cb + 3] = a3 * b3
                for c in range(Y):
                    acc[c] *= joint[row, c]
            else:
                tab = cond[row]
                cr = cols[r]
                acc[:] = 0.0
                for i in range(a):
                    col = cr[i]
                    for c in range(Yp):
                        acc[c] += tab[col, c]
                for c in range(Y):
                    acc[c] += joint[row, c]
            used[r] += 1
            for c in range(Y):
                v = acc[c]
                if linear:
                    tot[r, c] += v
                elif v == -np.inf:
                    continue
                elif v > mx[r, c]:
                    tot[r, c] = tot[r, c] * np.exp(mx[r, c] - v) + 1.0
                    mx[r, c] = v
                else:
                    tot[r, c] += np.exp(v - mx[r, c])
    out = np.empty((N, Y))
    for r in range(N):
        if used[r] == 0:  # no parent subset qualifies: naive Bayes
            for c in range(Y):
                out[r, c] = prior[c]
            for i in range(a):
                col = cols[r, i]
                if col < C:
                    for c in range(Y):
                        out[r, c] += nb[col, c]
            continue
        logk = np.log(used[r])
        for c in range(Y):
            if tot[r, c] <= 0:
                out[r, c] = -np.inf
            elif linear:
                out[r, c] = np.log(tot[r, c]) - logk
            else:
                out[r, c] = mx[r, c] + np.log(tot[r, c]) - logk
    return out
