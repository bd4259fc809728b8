"""The factor layout of a geometric ensemble: the members' rows side by side, one class row.

A geometric ensemble scores ``log P(y) + sum_m w_m log P_m(x | y)``
(:data:`bncbench.structures.network.COMBINE_RULES`): a log-linear model whose
factors are the members' attribute factors, each scaled by its member's
weight, plus a single class factor. :class:`CompositeLayout` lays them out as
one :class:`~bncbench.engine.design.Layout` would, so every parameter map,
the loss and the optimizers work on it unchanged:

* row 0 is the shared class row;
* the trained rows of member 1, member 2, ... follow (rows ``[1, n_trained)``),
  then the untrained prefix rows of every member, in member order;
* factor ``1 + i`` of member ``m`` becomes factor ``1 + offset_m + i``, so the
  weight tying of ``weighted`` levels 1-3 keeps one group per member factor;
* ``row_scale`` holds the member weight of every row (1 for the class row).
  The generative ``Phi`` is ``w_m log theta`` on member ``m``'s rows; the
  extended parameterization keeps ``w_m`` as a fixed scale of its softmax, so
  at generative initialization every parameterization scores exactly as the
  generative ensemble (:class:`bncbench.estimators.scorer.EnsembleScorer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

    from bncbench.engine.design import Layout


class CompositeLayout:
    """Rows of ``Phi`` for a geometric ensemble of networks.

    Parameters
    ----------
    layouts : list of Layout
        One layout per member, each over its member's columns of the training codes.
    columns : list of ndarray of int
        The attributes each member uses (indices into the codes of all attributes).
    weights : array-like of float
        The members' weights ``w_m`` (positive).

    Attributes
    ----------
    n_rows, n_trained, n_classes, n_attributes, n_factors : int
        As :class:`~bncbench.engine.design.Layout`; ``n_attributes`` counts the
        attribute factors of all members.
    row_factor, row_value, row_level, block_start, value_offset : ndarray
        As :class:`~bncbench.engine.design.Layout`, over the composite rows.
    row_scale : ndarray (n_rows,)
        The member weight of every row.
    """

    def __init__(self, layouts: Sequence[Layout], columns: Sequence[ArrayLike], weights: ArrayLike) -> None:
        """Lay the members' rows out side by side behind one class row.

        Parameters
        ----------
        layouts : sequence of Layout
            One layout per member (at least one), each over its member's columns of the training codes.
        columns : sequence of array-like of int
            The attributes each member uses.
        weights : array-like of float
            The members' weights, one per layout.

        Raises
        ------
        BNCBenchError
            If the numbers of layouts, column lists and weights differ, or a weight is not finite
            and positive.
        """
        self.layouts = list(layouts)
        self.columns = [np.asarray(c, dtype=np.int64) for c in columns]
        w = np.asarray(weights, dtype=float)
        if len(self.layouts) != len(self.columns) or w.shape != (len(self.layouts),):
            raise BNCBenchError("a composite layout needs one column list and one weight per member layout")
        if not (np.isfinite(w).all() and (w > 0).all()):
            raise BNCBenchError(f"the members' weights must be finite and positive, got {w.tolist()}")
        self.weights = w
        self.n_classes = int(self.layouts[0].n_classes)
        trained = np.array([lay.n_trained - 1 for lay in self.layouts], dtype=np.int64)
        untrained = np.array([lay.n_rows - lay.n_trained for lay in self.layouts], dtype=np.int64)
        self.n_trained = 1 + int(trained.sum())
        self.n_rows = self.n_trained + int(untrained.sum())
        t_start = 1 + np.r_[0, np.cumsum(trained)[:-1]]
        u_start = self.n_trained + np.r_[0, np.cumsum(untrained)[:-1]]
        n_attr = np.array([lay.n_attributes for lay in self.layouts], dtype=np.int64)
        f_start = np.r_[0, np.cumsum(n_attr)[:-1]]
        self.n_attributes = int(n_attr.sum())
        self.n_factors = 1 + self.n_attributes

        self.row_map = []  # member row -> composite row (member row 0, its class row, -> 0)
        self.row_factor = np.zeros(self.n_rows, np.int64)
        self.row_value = np.zeros(self.n_rows, np.int64)
        self.row_level = np.zeros(self.n_rows, np.int64)
        self.row_scale = np.ones(self.n_rows)
        starts = []
        for lay, t0, u0, f0, wm in zip(self.layouts, t_start, u_start, f_start, w):
            r = np.arange(lay.n_rows, dtype=np.int64)
            rmap = np.where(r < lay.n_trained, t0 + r - 1, u0 + r - lay.n_trained)
            rmap[0] = 0
            self.row_map.append(rmap)
            dst = rmap[1:]
            self.row_factor[dst] = lay.row_factor[1:] + f0
            self.row_value[dst] = lay.row_value[1:]
            self.row_level[dst] = lay.row_level[1:]
            self.row_scale[dst] = wm
            starts.append(rmap[lay.block_start])
        self.block_start = np.sort(np.concatenate(starts)) if starts else np.zeros(0, np.int64)
        self.cards = np.concatenate([lay.cards for lay in self.layouts])
        self.value_offset = np.zeros(self.n_attributes + 1, np.int64)
        np.cumsum(self.cards, out=self.value_offset[1:])

    def rows(self, codes: np.ndarray, dtype: DTypeLike = np.int32) -> np.ndarray:
        """Row index per instance and factor for codes of *all* attributes: (N, n_factors); -1 = none.

        Parameters
        ----------
        codes : ndarray of shape (N, n)
            Codes of all attributes; each member reads its ``columns``.
        dtype : dtype, default=np.int32
            Integer type of the result.

        Returns
        -------
        ndarray of shape (N, n_factors)
            Column 0 is the class row (0), then the members' attribute factors in member order.
        """
        codes = np.asarray(codes)
        parts = [np.zeros((codes.shape[0], 1), dtype=dtype)]
        for lay, cols, rmap in zip(self.layouts, self.columns, self.row_map):
            r = lay.rows(codes[:, cols], dtype=np.int64)[:, 1:]
            parts.append(np.where(r >= 0, rmap[np.maximum(r, 0)], -1).astype(dtype, copy=False))
        return np.hstack(parts)

    def stack(self, member_phis: Sequence[np.ndarray]) -> np.ndarray:
        """The composite ``Phi`` from the members' ``Phi``: class row of the first, ``w_m Phi_m`` elsewhere.

        Parameters
        ----------
        member_phis : sequence of ndarray
            One ``Phi`` per member, of shape (member's n_rows, n_classes).

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            The composite ``Phi`` (row 0 is the first member's class row, unscaled).
        """
        out = np.empty((self.n_rows, self.n_classes))
        out[0] = member_phis[0][0]
        for phi, rmap, wm in zip(member_phis, self.row_map, self.weights):
            out[rmap[1:]] = wm * phi[1:]
        return out
