"""The factor layout of attribute-subset models (AnJE): one factor per subset, one row per seen value.

AnJE scores ``log P(y) + e sum_alpha log P(x_alpha | y)`` over every n-subset
``alpha`` of the attributes, with the exponent ``e`` of Eq. 8 (Zaidi et al.,
deep-broad learning). Its scorer (:class:`bncbench.estimators.anje.AnJEScorer`)
numbers the value combinations seen in training as rows, then one *unseen* row
per subset for every combination never seen. :class:`SubsetLayout` turns that
into the engine's rows:

* row 0 is the class row;
* rows ``1 .. R`` are the seen combinations (trained), grouped by subset;
* rows ``R + 1 + s`` are the unseen rows (used at prediction only);
* factor ``1 + s`` is subset ``s``; ``row_scale`` holds ``e`` (1 on the class row).

The weighted parameterization over it is DBLⁿ (a weight per class and seen
combination, Eq. 11, at level 4), the discriminative one LRⁿ (Eq. 15);
generative initialization reproduces AnJE.

There is one factor per subset, ``C(a, n)`` of them, so the engine does not
materialize the rows of every instance and factor: :meth:`SubsetLayout.design`
keeps the instances' codes and finds the rows on the fly
(:mod:`bncbench.engine.subset_design`); :meth:`SubsetLayout.rows` is the
materialized table (the reference).
"""

from __future__ import annotations

import numpy as np

from bncbench.engine.design import LOG_FLOOR
from bncbench.engine.row_table import RowTable
from bncbench.engine.subset_design import SubsetDesign
from bncbench.engine.subset_lookup import DENSE_BUDGET, SubsetLookup


class SubsetLayout:
    """Rows of ``Phi`` for a scorer of attribute-subset factors.

    Parameters
    ----------
    scorer : object
        Offers ``factor_rows(codes) -> (N, S)`` (row of every instance's
        combination per subset; seen rows first, then one unseen row per
        subset; -1: no contribution), ``n_trained_rows``, ``n_rows``,
        ``row_subset`` (n_rows,), ``exponent``, ``n_classes``,
        ``log_prior()`` and ``generative_log_theta() -> (n_rows, n_classes)``;
        for the on-the-fly design also ``subset_rows`` (its
        :class:`~bncbench.estimators.subset_rows.SubsetRows`: the seen rows and
        their keys) and ``compact(codes)`` (the codes the keys are made of).
    dense_budget : int, default=DENSE_BUDGET
        Bytes of the dense key maps of the on-the-fly design
        (:class:`~bncbench.engine.subset_lookup.SubsetLookup`).

    Attributes
    ----------
    n_rows, n_trained, n_classes, n_attributes, n_factors : int
        As :class:`~bncbench.engine.design.Layout`; the "attributes" are the subsets.
    row_factor, row_value, row_level, block_start, value_offset, cards : ndarray
        As :class:`~bncbench.engine.design.Layout`; a subset's "values" are its
        seen combinations and its unseen row (the last).
    row_scale : ndarray (n_rows,)
        AnJE's exponent on every subset row, 1 on the class row.
    """

    def __init__(self, scorer, dense_budget: int = DENSE_BUDGET):
        self.scorer = scorer
        self.dense_budget = int(dense_budget)
        self._lookup = None
        self.n_classes = int(scorer.n_classes)
        R, total = int(scorer.n_trained_rows), int(scorer.n_rows)
        S = total - R
        subset = np.asarray(scorer.row_subset, dtype=np.int64)
        self.n_attributes = S
        self.n_factors = 1 + S
        self.n_trained = 1 + R
        self.n_rows = 1 + total
        seen = np.bincount(subset[:R], minlength=S)
        starts = np.r_[0, np.cumsum(seen)[:-1]]
        self.cards = seen + 1  # the seen combinations and the unseen row
        self.value_offset = np.zeros(S + 1, np.int64)
        np.cumsum(self.cards, out=self.value_offset[1:])
        self.row_factor = np.r_[0, 1 + subset]
        value = np.empty(total, np.int64)
        value[:R] = np.arange(R) - starts[subset[:R]]
        value[R:] = seen[subset[R:]]
        self.row_value = np.r_[0, value]
        self.row_level = np.zeros(self.n_rows, np.int64)
        self.row_scale = np.r_[1.0, np.full(total, float(scorer.exponent))]
        trained_blocks = 1 + starts[seen > 0]
        self.block_start = np.r_[trained_blocks, 1 + R + np.arange(S)].astype(np.int64)

    @property
    def lookup(self) -> SubsetLookup:
        """The rows of every subset and key (built on first use)."""
        if self._lookup is None:
            self._lookup = SubsetLookup(self.scorer.subset_rows, self.dense_budget)
        return self._lookup

    def design(self, codes: np.ndarray, combine: bool | None = None):
        """The design of ``codes`` (one design row per instance) without a row table.

        Parameters
        ----------
        codes : ndarray of shape (N, a)
            Attribute codes; a value outside its attribute's range contributes nothing.
        combine : bool, optional
            :attr:`SubsetDesign.combine` (None: its default).

        Returns
        -------
        SubsetDesign or RowTable
            The codes and :attr:`lookup`; the materialized :meth:`rows` for a scorer without
            ``subset_rows`` and ``compact``.
        """
        if not hasattr(self.scorer, "subset_rows") or not hasattr(self.scorer, "compact"):
            return RowTable(self.rows(codes))
        design = SubsetDesign(self.scorer.compact(codes), self.lookup)
        if combine is not None:
            design.combine = bool(combine)
        return design

    def rows(self, codes: np.ndarray, dtype=np.int32) -> np.ndarray:
        """Row index per instance and factor: (N, 1 + S); -1 = no contribution.

        The materialized table, ``N * (1 + S) * 4`` bytes (plus the scorer's ``factor_rows``):
        the reference the on-the-fly :meth:`design` is tested against.
        """
        r = np.asarray(self.scorer.factor_rows(codes))
        out = np.empty((r.shape[0], 1 + r.shape[1]), dtype=dtype)
        out[:, 0] = 0
        np.add(r, 1, out=out[:, 1:], casting="unsafe")
        out[:, 1:][r < 0] = -1
        return out

    def generative_phi(self) -> np.ndarray:
        """``log P(y)`` on the class row, ``e log P(x_alpha | y)`` elsewhere: (n_rows, n_classes)."""
        out = np.empty((self.n_rows, self.n_classes))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[0] = self.scorer.log_prior()
            out[1:] = float(self.scorer.exponent) * self.scorer.generative_log_theta()
        return np.nan_to_num(out, nan=LOG_FLOOR, neginf=LOG_FLOOR)
