"""m-estimates with back-off (MAP with a uniform Dirichlet prior of total mass m)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from bncbench.components import ESTIMATORS
from bncbench.registry import Hyperparameter, finite, options
from bncbench.structures.base import Network, TrainingData
from bncbench.tables import CountTables

M = Hyperparameter("m", 1.0, [finite(0.0), options(("auto",))],
                   "prior mass of every table row; 'auto': chosen on a holdout (Petitjean et al. 2018)")
M_GRID = (0.0, 0.05, 0.2, 1.0, 5.0, 20.0)
"""The values ``m="auto"`` chooses from (Petitjean et al. 2018, §6.1)."""


@dataclass
class CountScorer:
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

    @property
    def n_classes(self) -> int:
        return self.tables.n_classes

    @property
    def n_parameters(self) -> int:
        return self.tables.n_parameters()

    def log_prior(self) -> np.ndarray:
        return self.tables.log_prior(self.m)

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        return self.tables.log_joint(codes[:, self.columns], self.m)


def choose_m(structure: list, cards, codes, y, n_classes: int, random_state: int) -> float:
    """m with the lowest RMSE on a holdout of min(N/10, 5000) instances (ties: the first in :data:`M_GRID`)."""
    from bncbench.protocol import rmse

    n = codes.shape[0]
    n_hold = min(n // 10, 5000)
    if n_hold < 1:
        return 1.0
    rng = np.random.default_rng(int(random_state))
    hold = np.zeros(n, dtype=bool)
    hold[rng.choice(n, size=n_hold, replace=False)] = True
    t = CountTables(structure, cards, n_classes).fit(codes[~hold], y[~hold])
    best, best_score = 1.0, np.inf
    for m in M_GRID:
        with np.errstate(divide="ignore", invalid="ignore"):
            jll = t.log_joint(codes[hold], m)
            p = np.exp(jll - logsumexp(jll, axis=1, keepdims=True))
        score = rmse(y[hold], p) if np.isfinite(p).all() else np.inf
        if score < best_score:
            best, best_score = m, score
    return best


@ESTIMATORS.register("map", label="", hyperparameters=[M], counts=True)
def fit_mestimate(network: Network, data: TrainingData, *, m) -> CountScorer:
    """m-estimates with back-off to the longest parent prefix that has data."""
    columns = network.columns
    sub = network.restricted()
    codes, cards = data.codes[:, columns], data.cards[columns]
    m = choose_m(sub, cards, codes, data.y, data.n_classes, data.random_state) if m == "auto" else float(m)
    return CountScorer(CountTables(sub, cards, data.n_classes).fit(codes, data.y), columns, m)
