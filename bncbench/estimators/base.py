"""The one scorer interface, and the scorer of an ensemble.

Every source of parameters (m-estimates, HDP estimates, the optimized CCBN
parameterizations, ensembles of them) is a :class:`Scorer`: the unnormalized
log joint ``log P(y, x)`` of every class for integer codes of *all* the
attributes (a scorer picks the columns its network uses).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from scipy.special import logsumexp

from bncbench.structures.base import LearnedStructure, TrainingData


@runtime_checkable
class Scorer(Protocol):
    """What a fitted parameter source offers the classifier.

    Attributes
    ----------
    n_classes : int
    n_parameters : int
        Free parameters (see ``BNClassifier.n_parameters_``).
    """

    n_classes: int
    n_parameters: int

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """``log P(y, x)`` up to a constant per instance: (n, n_classes)."""

    def log_prior(self) -> np.ndarray:
        """``log P(y)``: (n_classes,)."""


class TablesScorer:
    """What every scorer over an estimate kept in ``self.tables`` reads from it.

    The estimate (count tables, AnDE's or AnJE's subset tables) knows its
    ``n_classes`` and ``n_parameters()``; m-estimate scorers derive from this.
    """

    @property
    def n_classes(self) -> int:
        """Number of classes of the estimate."""
        return self.tables.n_classes

    @property
    def n_parameters(self) -> int:
        """Free parameters of the estimate (see ``BNClassifier.n_parameters_``)."""
        return self.tables.n_parameters()


class SubsetScorer(TablesScorer):
    """An ensemble over every n-subset of the attributes (AnDE, AnJE) fitted whole, with prior mass ``m``.

    Parameters
    ----------
    tables : AnDETables or AnJETables
        The fitted subset tables (their ``members`` and ``cards``).
    m : float
        The prior mass of the m-estimates.

    Attributes
    ----------
    tables, m
        As given.
    members : SubsetMembers
        The subsets.
    columns : ndarray
        Every attribute.
    """

    combine: str

    def __init__(self, tables, m: float):
        self.tables, self.m = tables, float(m)
        self.members = tables.members
        self.columns = np.arange(len(tables.cards), dtype=np.int64)


class EnsembleScorer:
    """Members combined by the rule of their :class:`~bncbench.structures.LearnedStructure`.

    ``arithmetic``: ``log sum_m w_m P_m(y, x)``; ``geometric``: ``log P(y) + sum_m
    w_m (log P_m(y, x) - log P_m(y))`` with the first member's prior.
    """

    def __init__(self, members: list, combine: str, weights: np.ndarray):
        self.members, self.combine, self.weights = list(members), combine, np.asarray(weights, dtype=float)
        self.n_classes = self.members[0].n_classes
        self.n_parameters = int(sum(m.n_parameters for m in self.members))

    def log_prior(self) -> np.ndarray:
        return self.members[0].log_prior()

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        stack = np.stack([m.log_joint(codes) for m in self.members])  # (M, n, Y)
        w = self.weights[:, None, None]
        if self.combine == "arithmetic":
            with np.errstate(divide="ignore"):
                return logsumexp(stack + np.log(w), axis=0)
        priors = np.stack([m.log_prior() for m in self.members])[:, None, :]
        return self.log_prior()[None, :] + np.sum(w * (stack - priors), axis=0)


def estimate(fit_network, structure: LearnedStructure, data: TrainingData, *, ensembles: dict | None = None,
             **hyperparameters) -> Scorer:
    """One scorer for the structure: ``fit_network(network, data, **hyperparameters)`` on every member.

    ``ensembles`` maps ensemble kinds to functions ``fit(structure, data, **hyperparameters) -> Scorer``
    that fit a whole ensemble at once (the ``map`` estimator's AnDE and AnJE, declared with
    ``ESTIMATORS.register(..., ensembles=...)``); a structure whose ``info["ensemble"]`` is one of
    them goes there instead of member by member.
    """
    fit_all = (ensembles or {}).get(structure.info.get("ensemble"))
    if fit_all is not None:
        return fit_all(structure, data, **hyperparameters)
    members = [fit_network(net, data, **hyperparameters) for net in structure.members]
    if structure.combine == "product":
        return members[0]
    return EnsembleScorer(members, structure.combine, structure.member_weights())
