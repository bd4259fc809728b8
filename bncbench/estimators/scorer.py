"""The one scorer interface, and the scorer of an ensemble.

Every source of parameters (m-estimates, HDP estimates, the optimized CCBN
parameterizations, ensembles of them) is a :class:`Scorer`: the unnormalized
log joint ``log P(y, x)`` of every class for integer codes of *all* the
attributes (a scorer picks the columns its network uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

import numpy as np
from scipy.special import logsumexp

from bncbench.errors import BNCBenchError
from bncbench.structures.network import LearnedStructure, TrainingData

if TYPE_CHECKING:
    from bncbench.estimators.ande import AnDETables
    from bncbench.estimators.anje import AnJETables


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
        """``log P(y, x)`` up to a constant per instance: (n, n_classes).

        Parameters
        ----------
        codes : ndarray of int, shape (n, n_attributes)
            Codes of *all* the attributes (the scorer reads the columns its network uses);
            a code outside an attribute's range (e.g. -1) is an unknown value.

        Returns
        -------
        ndarray of shape (n, n_classes)
            Unnormalized log joint probabilities.
        """

    def log_prior(self) -> np.ndarray:
        """``log P(y)``: (n_classes,).

        Returns
        -------
        ndarray of shape (n_classes,)
            The log class prior.
        """


class TablesScorer:
    """What every scorer over an estimate kept in ``self.tables`` reads from it.

    The estimate (count tables, AnDE's or AnJE's subset tables) knows its
    ``n_classes`` and ``n_parameters()``; m-estimate scorers derive from this.
    """

    @property
    def n_classes(self) -> int:
        """Number of classes of the estimate.

        Returns
        -------
        int
            ``self.tables.n_classes``.
        """
        return self.tables.n_classes

    @property
    def n_parameters(self) -> int:
        """Free parameters of the estimate (see ``BNClassifier.n_parameters_``).

        Returns
        -------
        int
            ``self.tables.n_parameters()``.
        """
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

    def __init__(self, tables: AnDETables | AnJETables, m: float) -> None:
        """Keep the tables and ``m``; no estimate is computed here.

        Parameters
        ----------
        tables : AnDETables or AnJETables
            The fitted subset tables.
        m : float
            The prior mass of the m-estimates (converted with ``float()``).
        """
        self.tables, self.m = tables, float(m)
        self.members = tables.members
        self.columns = np.arange(len(tables.cards), dtype=np.int64)


class EnsembleScorer:
    """Members combined by the rule of their :class:`~bncbench.structures.LearnedStructure`.

    ``arithmetic``: ``log sum_m w_m P_m(y, x)``; ``geometric``: ``log P(y) + sum_m
    w_m (log P_m(y, x) - log P_m(y))`` with the first member's prior.

    Parameters
    ----------
    members : list of Scorer
        The fitted members (at least one), with the same classes.
    combine : {"arithmetic", "geometric"}
        The combination rule (of :data:`bncbench.structures.network.COMBINE_RULES`).
    weights : ndarray of shape (n_members,)
        ``w_m`` of every member.

    Attributes
    ----------
    members : list of Scorer
        As given.
    combine : str
        As given.
    weights : ndarray of float64, shape (n_members,)
        As given.
    n_classes : int
        The first member's.
    n_parameters : int
        The members' free parameters summed.
    """

    def __init__(self, members: list, combine: str, weights: np.ndarray) -> None:
        """Keep the members and compute ``n_classes`` and ``n_parameters``.

        Parameters
        ----------
        members : list of Scorer
            The fitted members (at least one).
        combine : {"arithmetic", "geometric"}
            The combination rule.
        weights : ndarray of shape (n_members,)
            ``w_m`` of every member (converted to float).

        Raises
        ------
        BNCBenchError
            If ``combine`` is neither ``"arithmetic"`` nor ``"geometric"``, or ``members`` is empty.
        """
        if combine not in ("arithmetic", "geometric") or not members:
            raise BNCBenchError(f"an ensemble needs members and an 'arithmetic' or 'geometric' rule, got "
                                f"{len(members)} member(s) and {combine!r}")
        self.members, self.combine, self.weights = list(members), combine, np.asarray(weights, dtype=float)
        self.n_classes = self.members[0].n_classes
        self.n_parameters = int(sum(m.n_parameters for m in self.members))

    def log_prior(self) -> np.ndarray:
        """``log P(y)`` of the first member.

        Returns
        -------
        ndarray of shape (n_classes,)
            The first member's log class prior.
        """
        return self.members[0].log_prior()

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """The combined ``log P(y, x)`` of every instance and class (see the class docstring).

        Parameters
        ----------
        codes : ndarray of int, shape (n, n_attributes)
            Codes of all the attributes.

        Returns
        -------
        ndarray of shape (n, n_classes)
            ``log sum_m w_m P_m(y, x)`` (arithmetic; ``-inf`` where every weighted joint is 0),
            or ``log P_1(y) + sum_m w_m (log P_m(y, x) - log P_m(y))`` (geometric).
        """
        stack = np.stack([m.log_joint(codes) for m in self.members])  # (M, n, Y)
        w = self.weights[:, None, None]
        if self.combine == "arithmetic":
            with np.errstate(divide="ignore"):
                return logsumexp(stack + np.log(w), axis=0)
        priors = np.stack([m.log_prior() for m in self.members])[:, None, :]
        return self.log_prior()[None, :] + np.sum(w * (stack - priors), axis=0)


def estimate(fit_network: Callable[..., Scorer], structure: LearnedStructure, data: TrainingData, *,
             ensembles: dict | None = None, **hyperparameters: Any) -> Scorer:
    """One scorer for the structure: ``fit_network(network, data, **hyperparameters)`` on every member.

    ``ensembles`` maps ensemble kinds to functions ``fit(structure, data, **hyperparameters) -> Scorer``
    that fit a whole ensemble at once (the ``map`` estimator's AnDE and AnJE, declared with
    ``ESTIMATORS.register(..., ensembles=...)``); a structure whose ``info["ensemble"]`` is one of
    them goes there instead of member by member.

    Parameters
    ----------
    fit_network : callable
        ``fit_network(network, data, **hyperparameters) -> Scorer`` for one
        :class:`~bncbench.structures.network.Network`.
    structure : LearnedStructure
        The learned structure: one network or an ensemble.
    data : TrainingData
        The training codes, classes and cardinalities.
    ensembles : dict of str to callable, optional
        Whole-ensemble fits by ensemble kind (``"ande"``, ``"anje"``); default none.
    **hyperparameters
        Passed to ``fit_network`` or the ensemble fit.

    Returns
    -------
    Scorer
        The ensemble fit's scorer; else for ``combine="product"`` the single member's scorer
        itself, otherwise an :class:`EnsembleScorer` of the members with
        ``structure.member_weights()``.

    Raises
    ------
    BNCBenchError
        As raised by ``fit_network`` or the ensemble fit.
    """
    fit_all = (ensembles or {}).get(structure.info.get("ensemble"))
    if fit_all is not None:
        return fit_all(structure, data, **hyperparameters)
    members = [fit_network(net, data, **hyperparameters) for net in structure.members]
    if structure.combine == "product":
        return members[0]
    return EnsembleScorer(members, structure.combine, structure.member_weights())
