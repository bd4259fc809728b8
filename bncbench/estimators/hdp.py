"""Hierarchical Dirichlet process estimates (Petitjean et al. 2018); the sampler is :mod:`bncbench.hdp`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bncbench.components import ESTIMATORS
from bncbench.hdp import TYINGS, HDPTables, fit_hdp
from bncbench.registry import Hyperparameter, integer, options
from bncbench.structures.base import Network, TrainingData

ITERATIONS = Hyperparameter("hdp_iterations", 5000, [integer(1)],
                            "Gibbs iterations (the reference code's default; the paper reports 50,000)", int)
TYING = Hyperparameter("tying", "level", [options(TYINGS)],
                       f"concentration tying: {' | '.join(TYINGS)}", str)


@dataclass
class HDPScorer:
    """HDP estimates of one network (``hdp``: the fitted :class:`~bncbench.hdp.HDPTables`)."""

    hdp: HDPTables
    columns: np.ndarray

    @property
    def n_classes(self) -> int:
        return self.hdp.n_classes

    @property
    def n_parameters(self) -> int:
        return self.hdp.n_parameters()

    def log_prior(self) -> np.ndarray:
        return self.hdp.log_prior

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        return self.hdp.log_joint(codes[:, self.columns])


@ESTIMATORS.register("hdp", label=" HDP", hyperparameters=[ITERATIONS, TYING])
def fit_hdp_estimate(network: Network, data: TrainingData, *, hdp_iterations: int, tying: str) -> HDPScorer:
    """HDP estimates: collapsed Gibbs sampling of the pseudo-counts in a context tree per table."""
    columns = network.columns
    hdp = fit_hdp(data.codes[:, columns], data.y, network.restricted(), data.cards[columns], data.n_classes,
                  iterations=int(hdp_iterations), tying=tying, seed=int(data.random_state))
    return HDPScorer(hdp, columns)
