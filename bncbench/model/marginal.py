"""Exact marginalization of attributes missing at prediction time (Pernkopf et al., §5.1).

A Bayesian network classifier scores an instance whose attributes ``M`` are unknown by their sum,

    log P(y, x_O) = log sum_{x_M} P(y, x_O, x_M),

over every value of the missing attributes of the model's own joint. When every attribute has at
most one attribute parent (NB, TAN, KDB-1, SkDB with ``k = 1``, a custom forest: the attributes
form a forest given the class) the sum factorizes along the trees: one pass from the leaves to
the roots per instance (sum-product), exact, in ``O(sum_i |X_pa(i)| |X_i| |Y|)`` per instance
at most. A missing leaf sums to one under normalized estimates (its factor drops out, as NB does
with a missing value); a missing attribute with children sums over its values with them.

The default of :class:`~bncbench.BNClassifier` (``missing="ignore"``) is not this sum: an
unknown value contributes nothing and each of its children backs off to the parent prefix seen
without it (:mod:`bncbench.bn.count_tables`), i.e. ``P(x_c | y)`` in place of ``P(x_c | y, x_p)``. That is
the exact marginal of one child under maximum likelihood counts, but not of two children of the
same missing parent, which share it. ``missing="marginalize"`` sums exactly.

The sum runs over the model's log-potentials: the back-off that scoring a complete instance uses
is in the tables summed over, and an optimized CCBN (``discriminative``, ``weighted``,
``extended``) sums its unnormalized potentials. Pernkopf et al. keep their discriminatively
optimized parameters normalized so that this sum is a marginal probability; for unnormalized
potentials it is the same sum, whose missing leaves no longer drop out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from bncbench.errors import BNCBenchError


@dataclass(frozen=True)
class Forest:
    """The log-potentials of a network whose attributes have at most one attribute parent each.

    Attributes
    ----------
    columns : ndarray of int, shape (a,)
        The attributes (columns of all the codes) the network uses, in its order.
    parent : ndarray of int, shape (a,)
        Each attribute's attribute parent, an index into ``columns``, or -1 for none.
    cards : ndarray of int, shape (a,)
        Cardinalities.
    offsets : ndarray of int, shape (a + 1,)
        Where each attribute's block starts in ``table``.
    table : ndarray of float, shape (offsets[-1],)
        ``table[offsets[i] + (x_p * cards[i] + x_i) * Y + y]`` = the log-potential of attribute
        ``i``'s value ``x_i`` given its parent's value ``x_p`` (0 without a parent) and class ``y``.
    prior : ndarray of float, shape (Y,)
        The class factor (a log prior, up to a constant for an optimized model).
    order : ndarray of int, shape (a,)
        The attributes children first (every attribute before its parent).
    """

    columns: np.ndarray
    parent: np.ndarray
    cards: np.ndarray
    offsets: np.ndarray
    table: np.ndarray
    prior: np.ndarray
    order: np.ndarray

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return int(self.prior.shape[0])

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """``log sum_{x_M} exp(score(y, x_O, x_M))`` of every instance and class.

        Parameters
        ----------
        codes : ndarray of int, shape (n, n_attributes)
            Codes of all the attributes; a code outside ``[0, card)`` of a network attribute is
            missing and summed over.

        Returns
        -------
        ndarray of shape (n, n_classes)
            The marginal log joint (for a complete instance: the network's log joint).
        """
        local = self._local(codes)
        out = np.empty((local.shape[0], self.n_classes))
        _forest_sum(local, self.order, self.parent, self.cards, self.offsets, self.table, self.prior, out)
        return out

    def missing(self, codes: np.ndarray) -> np.ndarray:
        """Whether each instance has a network attribute's code outside ``[0, card)``: (n,) bool."""
        return (self._local(codes) < 0).any(axis=1)

    def _local(self, codes: np.ndarray) -> np.ndarray:
        """The network's columns of ``codes``, a code outside ``[0, card)`` as -1."""
        local = np.asarray(codes)[:, self.columns].astype(np.int64, copy=True)
        local[(local < 0) | (local >= self.cards)] = -1
        return local


def forest_of(scorer, what: str = "this model") -> Forest:
    """The :class:`Forest` of a fitted one-network scorer, for exact marginalization.

    Parameters
    ----------
    scorer : CountScorer, HDPScorer or CCBNModel
        m-estimates (``estimator=map``) or HDP estimates of one network, or an optimized CCBN over
        one network.
    what : str, default="this model"
        How the error message names the model.

    Returns
    -------
    Forest
        Its log-potentials, with the back-off of scoring resolved per parent value.

    Raises
    ------
    BNCBenchError
        If the scorer is of another kind (AnDE, AnJE, an ensemble) or an attribute has more than
        one attribute parent (KDB-k with k > 1): one line that says so.
    """
    columns, parents, cards, potentials, prior = _network_of(scorer, what)
    Y = int(np.asarray(prior).shape[0])
    a = len(parents)
    parent = np.full(a, -1, np.int64)
    blocks = []
    for i, pa in enumerate(parents):
        if len(pa) > 1:
            raise BNCBenchError(
                f"missing='marginalize' sums exactly over networks whose attributes have at most one attribute "
                f"parent (NB, TAN, KDB-1); attribute {int(columns[i])} of {what} has {len(pa)}")
        p = parent[i] = int(pa[0]) if pa else -1
        pcard = int(cards[p]) if pa else 1
        grid = np.zeros((pcard * cards[i], a), dtype=np.int64)     # every (parent value, value)
        grid[:, i] = np.tile(np.arange(cards[i]), pcard)
        if pa:
            grid[:, p] = np.repeat(np.arange(pcard), cards[i])
        blocks.append(np.asarray(potentials(i, grid), dtype=np.float64).reshape(pcard * int(cards[i]) * Y))
    offsets = np.zeros(a + 1, np.int64)
    offsets[1:] = np.cumsum([b.size for b in blocks])
    table = np.concatenate(blocks) if blocks else np.zeros(0)
    table = np.nan_to_num(table, nan=-np.inf, posinf=np.inf, neginf=-np.inf)   # m = 0: 0/0 cells never used
    prior = np.nan_to_num(np.asarray(prior, dtype=np.float64), nan=-np.inf)
    return Forest(np.asarray(columns, dtype=np.int64), parent, np.asarray(cards, dtype=np.int64), offsets, table,
                  prior, _children_first(parent))


def _network_of(scorer, what: str):
    """``(columns, parents, cards, potentials(i, grid) -> (R, Y), prior)`` of a one-network scorer.

    ``parents`` and the grids are in the network's own attribute order (the columns it reads).
    """
    from bncbench.engine.fit import CCBNModel
    from bncbench.engine.design import Layout
    from bncbench.estimators.hdp import HDPScorer
    from bncbench.estimators.mestimate import CountScorer

    if isinstance(scorer, HDPScorer):
        hdp = scorer.hdp
        if any(p is None for p in hdp.structure):      # fitted on the network's columns: every one modelled
            raise BNCBenchError("the HDP estimates leave an attribute of their columns out")
        return (scorer.columns, [tuple(p) for p in hdp.structure], np.asarray(hdp.cards, dtype=np.int64),
                lambda i, grid: hdp.factor_log_theta(grid, i), hdp.log_prior)
    if isinstance(scorer, CountScorer):
        tables, columns = scorer.tables, scorer.columns
        prior = tables.log_prior(scorer.m)

        def potentials(i, grid):
            return tables.factor_log_theta(grid, tables.factors[i], scorer.m)
    elif isinstance(scorer, CCBNModel) and type(scorer.layout) is Layout:
        layout = scorer.layout
        tables = layout.tables
        columns = scorer.columns if scorer.columns is not None else np.arange(len(tables.cards))
        prior = scorer.phi[0]

        def potentials(i, grid):
            rows = layout.factor_rows(i, grid)
            return np.where(rows[:, None] >= 0, scorer.phi[np.maximum(rows, 0)], 0.0)
    else:
        raise BNCBenchError(f"missing='marginalize' needs the estimates (estimator=map or hdp) or an optimized "
                            f"parameterization of one network; {what} scores with {type(scorer).__name__}")
    if any(f.child != i for i, f in enumerate(tables.factors)):
        raise BNCBenchError("the count tables are not one factor per attribute in order")
    return (columns, [tuple(f.parents) for f in tables.factors], np.array([f.card for f in tables.factors]),
            potentials, prior)


def _children_first(parent: np.ndarray) -> np.ndarray:
    """The attributes ordered so that each comes before its parent (leaves first)."""
    depth = np.zeros(len(parent), np.int64)
    for i in range(len(parent)):
        j, d = i, 0
        while parent[j] >= 0:
            j, d = parent[j], d + 1
            if d > len(parent):
                raise BNCBenchError("the attribute parents form a cycle")
        depth[i] = d
    return np.argsort(-depth, kind="stable")


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _forest_sum(codes, order, parent, cards, offsets, table, prior, out):  # pragma: no cover - compiled
    N, a = codes.shape
    Y = prior.shape[0]
    voff = np.zeros(a + 1, np.int64)
    for i in range(a):
        voff[i + 1] = voff[i] + cards[i]
    lam = np.empty(voff[a] * Y)          # log messages into each attribute, per its value and class
    for n in range(N):
        lam[:] = 0.0
        for y in range(Y):
            out[n, y] = prior[y]
        for k in range(a):
            i = order[k]
            p = parent[i]
            ci = cards[i]
            v = codes[n, i]
            lo, hi = 0, 1
            if p >= 0:
                pv = codes[n, p]
                if pv >= 0:
                    lo, hi = pv, pv + 1      # only the parent's observed value is ever read
                else:
                    hi = cards[p]
            for xp in range(lo, hi):
                base = offsets[i] + xp * ci * Y
                for y in range(Y):
                    if v >= 0:
                        s = table[base + v * Y + y] + lam[(voff[i] + v) * Y + y]
                    else:
                        mx = -np.inf
                        for xi in range(ci):
                            t = table[base + xi * Y + y] + lam[(voff[i] + xi) * Y + y]
                            if t > mx:
                                mx = t
                        if mx == -np.inf or mx == np.inf:
                            s = mx
                        else:
                            acc = 0.0
                            for xi in range(ci):
                                acc += np.exp(table[base + xi * Y + y] + lam[(voff[i] + xi) * Y + y] - mx)
                            s = mx + np.log(acc)
                    if p < 0:
                        out[n, y] += s
                    else:
                        lam[(voff[p] + xp) * Y + y] += s


__all__ = ["Forest", "forest_of"]
