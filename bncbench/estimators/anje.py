"""AnJE's m-estimates, vectorized over all n-subsets (Zaidi et al., deep-broad learning, Eqs. 8-11).

``log P(y, x) = log P(y) + w sum_alpha log P(x_alpha | y)`` over every n-subset ``alpha``, with
``w = (n-1)!(a-n)!/(a-1)!`` and the m-estimates of §4.2 (Eqs. 10-11)::

    P(y)           = (N(y) + m / |Y|) / (N + m)
    P(x_alpha | y) = (N(x_alpha, y) + m / |X_alpha|) / (N(y) + m),    |X_alpha| = prod_{i in alpha} |X_i|

(the project's m-estimate: prior mass ``m`` spread uniformly over the table's cells; A1JE is
naive Bayes with the same m). Only the combinations seen in training are stored
(:class:`~bncbench.estimators.subset_rows.SubsetRows`); all unseen combinations of a subset
share one estimate, that of a zero count. A subset with a value outside its attribute's range
(an unknown value at prediction, code -1) contributes nothing, like any factor of the project.
"""

from __future__ import annotations

import numba
import numpy as np

from bncbench.estimators.scorer import SubsetScorer
from bncbench.estimators.subset_rows import SubsetRows, compact_codes, rows_in_subset, transposed
from bncbench.structures.subset_ensembles import SubsetMembers, anje_exponent


class AnJETables:
    """The counts of an AnJE: ``N(y)`` and ``N(x_alpha, y)`` of every seen combination of every subset.

    Parameters
    ----------
    members : SubsetMembers
        The subsets (``members.subsets``) and ``n``.
    cards : array-like of int
    n_classes : int
    """

    def __init__(self, members: SubsetMembers, cards, n_classes: int):
        self.members = members
        self.cards = np.asarray(cards, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.exponent = anje_exponent(len(self.cards), members.n)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "AnJETables":
        y = np.asarray(y, dtype=np.int64)
        self.class_counts = np.bincount(y, minlength=self.n_classes).astype(float)
        self.n = float(y.shape[0])
        self.rows = SubsetRows.fit(compact_codes(X, self.cards), y, self.cards, self.n_classes, self.members.subsets)
        return self

    def log_prior(self, m: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):  # m = 0 (MLE): log 0 = -inf is meant
            return np.log((self.class_counts + m / self.n_classes) / (self.n + m))

    def log_theta(self, m: float) -> np.ndarray:
        """``log P(x_alpha | y)`` of every seen row, then of every subset's unseen row: (R + S, n_classes)."""
        return self.rows.log_mestimates(m / self.rows.space.astype(float), self.class_counts + m)

    def log_joint(self, X: np.ndarray, m: float, log_theta: np.ndarray | None = None) -> np.ndarray:
        """``log P(y) + w sum_alpha log P(x_alpha | y)`` for every instance and class: (N, n_classes)."""
        lt = self.log_theta(m) if log_theta is None else log_theta
        return _anje_log_joint(transposed(compact_codes(X, self.cards)), *self.rows.arrays(), self.rows.n_rows, lt,
                               self.log_prior(m), self.exponent)

    def n_parameters(self) -> int:
        """Free parameters: per subset and class ``min(seen rows, |X_alpha| - 1)``, plus ``|Y| - 1``."""
        per = np.minimum(self.rows.rows_per_subset(), self.rows.space - 1)
        return int(per.sum() * self.n_classes + self.n_classes - 1)


class AnJEScorer(SubsetScorer):
    """AnJE with m-estimates: the project's :class:`~bncbench.estimators.Scorer`, and AnJE's factors.

    Besides ``log_joint``/``log_prior``, the scorer exposes the model as a log-linear one over
    **rows**, for the weighted and discriminative parameterizations (LRⁿ, DBLⁿ) to build on:

    * rows ``0 .. n_trained_rows - 1`` are the value combinations ``x_alpha`` seen in training,
      grouped by subset (subset ``s`` has rows ``rows.row_start[s] .. rows.row_start[s+1] - 1``);
      rows ``n_trained_rows + s`` are the **unseen** rows, one per subset, which stand for every
      combination of subset ``s`` never seen in training (at prediction only: no training
      instance maps to one);
    * :meth:`factor_rows` gives, per instance and subset, its row (-1 where a value of the subset
      is outside its range: that factor contributes nothing); :attr:`subset_rows` and
      :meth:`compact` let the engine find the same rows itself, without an (N, n_subsets) table;
    * :meth:`generative_log_theta` gives ``log P(x_alpha | y)`` of every row (the unseen rows: the
      m-estimate of a zero count), :attr:`exponent` the weight ``w`` of Eq. 8, :attr:`row_subset`
      the subset of every row;

    so that ``log_joint(X)[i, c] == log_prior()[c] + exponent * sum_s
    generative_log_theta()[factor_rows(X)[i, s], c]`` (over the entries that are not -1).

    Attributes
    ----------
    tables : AnJETables
    m : float
    members : SubsetMembers
    combine : str
        ``"geometric"``.
    columns : ndarray
        Every attribute.
    """

    combine = "geometric"

    def __init__(self, tables: AnJETables, m: float):
        super().__init__(tables, m)
        self._log_theta = tables.log_theta(self.m)

    @property
    def exponent(self) -> float:
        """``(n-1)!(a-n)!/(a-1)!``, the weight of every factor (Eq. 8)."""
        return self.tables.exponent

    @property
    def n_trained_rows(self) -> int:
        """Rows of seen combinations; the unseen rows follow them."""
        return self.tables.rows.n_rows

    @property
    def n_rows(self) -> int:
        return self.tables.rows.n_rows + self.tables.rows.n_subsets

    @property
    def row_subset(self) -> np.ndarray:
        """The subset of every row: (n_rows,) int64."""
        rows = self.tables.rows
        return np.concatenate([rows.row_subset(), np.arange(rows.n_subsets, dtype=np.int64)])

    def log_prior(self) -> np.ndarray:
        return self.tables.log_prior(self.m)

    def generative_log_theta(self) -> np.ndarray:
        """``log P(x_alpha | y)`` of every row: (n_rows, n_classes) (a copy)."""
        return self._log_theta.copy()

    @property
    def subset_rows(self) -> SubsetRows:
        """The seen combinations of every subset: rows, sorted keys and lookup maps (see :meth:`factor_rows`)."""
        return self.tables.rows

    def compact(self, codes: np.ndarray) -> np.ndarray:
        """``codes`` as the keys of :attr:`subset_rows` read them: compact integers, -1 for a value out of range."""
        return compact_codes(codes, self.tables.cards)

    def factor_rows(self, codes: np.ndarray) -> np.ndarray:
        """Per instance and subset the row of its values: (N, n_subsets), int32 (int64 beyond 2**31 rows).

        Unseen combinations map to their subset's unseen row, values out of range to -1.
        Memory: ``N * n_subsets * 4`` bytes (pass ``codes`` in chunks for very large products).
        """
        return self.tables.rows.lookup(compact_codes(codes, self.tables.cards), unseen_rows=True,
                                       dtype=np.int32 if self.n_rows < 2**31 - 1 else np.int64)

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        return self.tables.log_joint(codes, self.m, self._log_theta)


@numba.njit(cache=True, nogil=True)
def _anje_log_joint(codes_t, subsets, strides, row_start, keys, dense_off, dense_map, R, lt, prior,
                    w):  # pragma: no cover - compiled
    N, S, Y = codes_t.shape[1], subsets.shape[0], prior.shape[0]
    acc = np.zeros((N, Y))
    kb = np.empty(N, dtype=np.int64)
    bad = np.empty(N, dtype=codes_t.dtype)
    for s in range(S):  # subset-outer: the subset's rows stay in cache
        rows_in_subset(codes_t, s, subsets, strides, row_start, keys, dense_off, dense_map, kb, bad)
        for r in range(N):
            row = kb[r]
            if row == -2:
                continue
            if row == -1:
                row = R + s
            for c in range(Y):
                acc[r, c] += lt[row, c]
    out = np.empty((N, Y))
    for r in range(N):
        for c in range(Y):
            out[r, c] = prior[c] + w * acc[r, c]
    return out
