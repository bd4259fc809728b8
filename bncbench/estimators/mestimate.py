"""m-estimates with back-off (MAP with a uniform Dirichlet prior of total mass m).

The ``map`` estimator fits one network's count tables (:class:`CountScorer`), and the subset
ensembles AnDE and AnJE whole, vectorized over their subsets (declared as its ``ensembles``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from bncbench.components import ESTIMATORS
from bncbench.registry import Hyperparameter, finite, options
from bncbench.estimators.ande import AnDEScorer, AnDETables
from bncbench.estimators.anje import AnJEScorer, AnJETables
from bncbench.estimators.base import TablesScorer
from bncbench.structures.base import LearnedStructure, Network, TrainingData
from bncbench.structures.subsets import ENSEMBLES
from bncbench.tables import CountTables

M = Hyperparameter("m", 1.0, [finite(0.0), options(("auto",))],
                   "prior mass of every table row; 'auto': chosen on a holdout (Petitjean et al. 2018)")
M_GRID = (0.0, 0.05, 0.2, 1.0, 5.0, 20.0)
"""The values ``m="auto"`` chooses from (Petitjean et al. 2018, §6.1)."""


@dataclass
class CountScorer(TablesScorer):
    """m-estimates of one network's count tables.

    Attributes
    ----------
    tables : CountTables
        Counts of the network, fitted on ``codes[:, columns]``.
    columns : ndarray of int
        The attributes the network uses.
    m : float
        The prior mass used (chosen when ``m="auto"``).
    """

    tables: CountTables
    columns: np.ndarray
    m: float

    def log_prior(self) -> np.ndarray:
        return self.tables.log_prior(self.m)

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        return self.tables.log_joint(codes[:, self.columns], self.m)


def choose_m(structure: list, cards, codes, y, n_classes: int, random_state: int) -> float:
    """m with the lowest RMSE on a holdout of min(N/10, 5000) instances (ties: the first in :data:`M_GRID`)."""
    return pick_m(lambda X, yy: CountTables(structure, cards, n_classes).fit(X, yy), codes, y, random_state)


def pick_m(fit, codes, y, random_state: int) -> float:
    """m of :data:`M_GRID` with the lowest holdout RMSE for counts ``fit(codes, y)`` that offer ``log_joint(X, m)``.

    The holdout is min(N/10, 5000) instances drawn with ``random_state``; ties go to the first m.
    """
    from bncbench.protocol import rmse

    n = codes.shape[0]
    n_hold = min(n // 10, 5000)
    if n_hold < 1:
        return 1.0
    rng = np.random.default_rng(int(random_state))
    hold = np.zeros(n, dtype=bool)
    hold[rng.choice(n, size=n_hold, replace=False)] = True
    t = fit(codes[~hold], y[~hold])
    best, best_score = 1.0, np.inf
    for m in M_GRID:
        with np.errstate(divide="ignore", invalid="ignore"):
            jll = t.log_joint(codes[hold], m)
            p = np.exp(jll - logsumexp(jll, axis=1, keepdims=True))
        score = rmse(y[hold], p) if np.isfinite(p).all() else np.inf
        if score < best_score:
            best, best_score = m, score
    return best


def fit_subset_ensemble(structure: LearnedStructure, data: TrainingData, *, m):
    """m-estimates of an AnDE or AnJE, all subsets at once (:mod:`~bncbench.estimators.ande`, ``anje``)."""
    members = structure.members
    if structure.info["ensemble"] == "ande":
        def make(X, yy):
            return AnDETables(members, data.cards, data.n_classes, structure.info["min_count"]).fit(X, yy)
        scorer = AnDEScorer
    else:
        def make(X, yy):
            return AnJETables(members, data.cards, data.n_classes).fit(X, yy)
        scorer = AnJEScorer
    m = pick_m(make, data.codes, data.y, data.random_state) if m == "auto" else float(m)
    return scorer(make(data.codes, data.y), m)


@ESTIMATORS.register("map", label="", hyperparameters=[M], counts=True,
                     ensembles=dict.fromkeys(ENSEMBLES, fit_subset_ensemble))
def fit_mestimate(network: Network, data: TrainingData, *, m) -> CountScorer:
    """m-estimates with back-off to the longest parent prefix that has data."""
    columns = network.columns
    sub = network.restricted()
    codes, cards = data.codes[:, columns], data.cards[columns]
    m = choose_m(sub, cards, codes, data.y, data.n_classes, data.random_state) if m == "auto" else float(m)
    return CountScorer(CountTables(sub, cards, data.n_classes).fit(codes, data.y), columns, m)
