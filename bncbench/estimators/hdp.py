"""Hierarchical Dirichlet process estimates (Petitjean et al. 2018); the sampler is :mod:`bncbench.hdp`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bncbench.components import ESTIMATORS
from bncbench.hdp import TYINGS, HDPTables, fit_hdp
from bncbench.registry import Hyperparameter, integer, options
from bncbench.structures.network import Network, TrainingData

ITERATIONS = Hyperparameter("hdp_iterations", 5000, [integer(1)],
                            "Gibbs iterations (the reference code's default; the paper reports 50,000)", int)
TYING = Hyperparameter("tying", "level", [options(TYINGS)],
                       f"concentration tying: {' | '.join(TYINGS)}", str)


@dataclass
class HDPScorer:
    """HDP estimates of one network (``hdp``: the fitted :class:`~bncbench.hdp.HDPTables`).

    Attributes
    ----------
    hdp : HDPTables
        The estimates, fitted on ``codes[:, columns]``.
    columns : ndarray of int64
        The attributes the network uses (:attr:`~bncbench.structures.network.Network.columns`).
    """

    hdp: HDPTables
    columns: np.ndarray

    @property
    def n_classes(self) -> int:
        """Number of classes.

        Returns
        -------
        int
            ``hdp.n_classes``.
        """
        return self.hdp.n_classes

    @property
    def n_parameters(self) -> int:
        """Free parameters of the estimates.

        Returns
        -------
        int
            :meth:`HDPTables.n_parameters <bncbench.hdp.HDPTables.n_parameters>`: leaves times
            ``card - 1`` over the trees, plus ``n_classes - 1``.
        """
        return self.hdp.n_parameters()

    def log_prior(self) -> np.ndarray:
        """``log P(y)``.

        Returns
        -------
        ndarray of shape (n_classes,)
            ``hdp.log_prior`` (the array itself, not a copy).
        """
        return self.hdp.log_prior

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """``log P(y, x)`` of every instance and class.

        Parameters
        ----------
        codes : ndarray of int, shape (n, n_attributes)
            Codes of all the attributes; the scorer reads ``codes[:, columns]``.

        Returns
        -------
        ndarray of shape (n, n_classes)
            Unnormalized log joint probabilities (a value out of range contributes nothing).
        """
        return self.hdp.log_joint(codes[:, self.columns])


@ESTIMATORS.register("hdp", label=" HDP", hyperparameters=[ITERATIONS, TYING])
def fit_hdp_estimate(network: Network, data: TrainingData, *, hdp_iterations: int, tying: str) -> HDPScorer:
    """HDP estimates: collapsed Gibbs sampling of the pseudo-counts in a context tree per table.

    Parameters
    ----------
    network : Network
        The network; only its used attributes are modelled.
    data : TrainingData
        The training data; ``data.random_state`` seeds the sampler.
    hdp_iterations : int
        Gibbs iterations (>= 1; the registry's default 5000).
    tying : str
        Concentration tying, one of :data:`bncbench.hdp.TYINGS` (the registry's default ``"level"``).

    Returns
    -------
    HDPScorer
        The fitted estimates and the network's columns.

    Raises
    ------
    BNCBenchError
        If a used attribute has a left-out parent, or ``fit_hdp`` rejects its arguments
        (see :func:`bncbench.hdp.fit_hdp`).
    """
    columns = network.columns
    hdp = fit_hdp(data.codes[:, columns], data.y, network.restricted(), data.cards[columns], data.n_classes,
                  iterations=int(hdp_iterations), tying=tying, seed=int(data.random_state))
    return HDPScorer(hdp, columns)
