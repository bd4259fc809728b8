"""The generative estimate of the authors' EBNC code (compatibility mode, off unless chosen).

Zaidi et al. (2017) ran their experiments with github ``nayyarzaidi/EBNC`` (classifier
``wdBayes``), whose generative estimate departs from the paper's m-estimate with back-off
(``../shared/anchors/ebnc/README.md``, each fact checked by recomputing its output):

- P̂(x | pa, y) = (n_{x,pa,y} + 1/|X|) / (n_{pa,y} + 1), floored at 1e-75 before the log;
- a parent configuration seen in training but never with class y gives the uniform 1/|X|
  (no back-off to a shorter parent prefix); one never seen at all (only at test time) falls
  back to P̂(x | y) (the engine's layout: the longest prefix seen with any class);
- MAP's class term is P̂(y) = (n_y + 1/|Y|) / (N + 1) itself, not ln P̂(y): its generative NB,
  TAN and KDB add a probability to a sum of log probabilities.

``estimator=ebnc`` is that estimate. Its tables (:class:`EBNCTables`) give the engine the same
values as its generative ``Phi`` (:meth:`EBNCTables.generative_phi`: row 0 the probability
P̂(y), the other rows ln P̂), so ``param=discriminative`` / ``weighted`` on it are the EBNC code's
dCCBN / wCCBN (its class weight multiplies P̂(y)). Tests: ``tests/test_ebnc_compat.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bncbench.components import ESTIMATORS
from bncbench.engine.design import Layout
from bncbench.engine.row_table import design_of
from bncbench.estimators.mestimate import CountScorer
from bncbench.structures.network import Network, TrainingData
from bncbench.bn.count_tables import CountTables

EBNC_FLOOR = 1e-75
"""The EBNC code's floor on an estimate before its log."""
EBNC_M = 1.0
"""The EBNC code's prior mass (fixed)."""


class EBNCTables(CountTables):
    """Count tables whose generative ``Phi`` is the EBNC code's estimate (see the module docstring)."""

    def generative_phi(self, layout: Layout, m: float) -> np.ndarray:
        """The EBNC estimate on every row of ``layout``: (n_rows, n_classes).

        :meth:`Layout.generative_phi <bncbench.engine.design.Layout.generative_phi>` hands the
        computation to the tables when they offer this method.

        Parameters
        ----------
        layout : Layout
            The rows (a block per parent configuration seen in training, at every prefix length).
        m : float
            The prior mass.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Row 0: P̂(y) (a probability, as the EBNC code adds it); every block: ln max(P̂(x | key, y),
            1e-75) of its own counts, without back-off.
        """
        Y = self.n_classes
        out = np.empty((layout.n_rows, Y))
        out[0] = (self.class_counts + m / Y) / (self.n + m)
        for fi, lev, pos, start, card in layout.segments:
            c = self.factors[fi].levels[lev].counts[pos]  # (nb, Y, card)
            theta = (c + m / card) / (c.sum(axis=2, keepdims=True) + m)
            lt = np.log(np.maximum(theta, EBNC_FLOOR))
            out[start : start + pos.size * card] = lt.transpose(0, 2, 1).reshape(-1, Y)
        return out


@dataclass
class EBNCScorer(CountScorer):
    """The EBNC code's MAP classifier: ``P̂(y) + Σ_i ln P̂(x_i | pa_i, y)`` (the class term not logged).

    Attributes
    ----------
    tables : EBNCTables
        Counts of the network, fitted on ``codes[:, columns]``.
    columns : ndarray of int
        The attributes the network uses.
    m : float
        1 (the EBNC code's).
    layout : Layout
        The rows of the estimate (built on the training codes).
    """

    layout: Layout = field(default=None, repr=False)

    def __post_init__(self):
        self.phi = self.tables.generative_phi(self.layout, self.m)

    def log_prior(self) -> np.ndarray:
        """The class term the EBNC code adds: P̂(y) itself (not a log).

        Returns
        -------
        ndarray of shape (n_classes,)
        """
        return self.phi[0].copy()

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """The EBNC code's class scores ``P̂(y) + Σ ln P̂(x_i | pa_i, y)`` (normalized by a softmax).

        Parameters
        ----------
        codes : ndarray of int, shape (n, n_attributes)
            Codes of all the attributes; the scorer reads ``codes[:, columns]``.

        Returns
        -------
        ndarray of shape (n, n_classes)
        """
        return design_of(self.layout, codes[:, self.columns]).scores(self.phi)


@ESTIMATORS.register("ebnc", label=" [EBNC estimate]", counts=True,
                     doc="the authors' EBNC code's estimate: no back-off, class term P(y) not ln P(y) "
                         "(compatibility mode)")
def fit_ebnc(network: Network, data: TrainingData) -> EBNCScorer:
    """The EBNC code's estimate of one network (see the module docstring).

    Parameters
    ----------
    network : Network
        The network; its used attributes' columns are counted.
    data : TrainingData
        The training data.

    Returns
    -------
    EBNCScorer
    """
    columns = network.columns
    codes, cards = data.codes[:, columns], data.cards[columns]
    tables = EBNCTables(network.restricted(), cards, data.n_classes).fit(codes, data.y)
    return EBNCScorer(tables, columns, EBNC_M, Layout(tables, codes))
