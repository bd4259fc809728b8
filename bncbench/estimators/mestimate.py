"""m-estimates with back-off (MAP with a uniform Dirichlet prior of total mass m).

The ``map`` estimator fits one network's count tables (:class:`CountScorer`), and the subset
ensembles AnDE and AnJE whole, vectorized over their subsets (declared as its ``ensembles``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from scipy.special import logsumexp

from bncbench.components import ESTIMATORS
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, finite, options
from bncbench.estimators.ande import AnDEScorer, AnDETables
from bncbench.estimators.anje import AnJEScorer, AnJETables
from bncbench.estimators.scorer import SubsetScorer, TablesScorer
from bncbench.structures.network import LearnedStructure, Network, TrainingData
from bncbench.structures.subset_ensembles import ENSEMBLES
from bncbench.bn.count_tables import BACKOFF_RULES, CountTables

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

M = Hyperparameter("m", 1.0, [finite(0.0), options(("auto",))],
                   "prior mass of every table row; 'auto': chosen on a holdout (Petitjean et al. 2018)")
BACKOFF = Hyperparameter(
    "backoff", BACKOFF_RULES[0], [options(BACKOFF_RULES)],
    "back-off of an unseen parent configuration: per_class (longest prefix with N(prefix, y) > 0, each class) "
    "or any_class (longest prefix seen with any class, for every class: the authors' C++ learner)",
    type=str, omit_default=True)
"""The m-estimate's back-off rule (:data:`bncbench.bn.count_tables.BACKOFF_RULES`, module docstring of
:mod:`bncbench.bn.count_tables`); left out of a model's parameters while per class, so records made
before it existed keep their task keys."""
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
        """``log P(y)``, the m-estimate of the class prior.

        Returns
        -------
        ndarray of shape (n_classes,)
            ``log((N(y) + m / |Y|) / (N + m))`` (``-inf`` for an unseen class when ``m = 0``).
        """
        return self.tables.log_prior(self.m)

    def log_joint(self, codes: np.ndarray) -> np.ndarray:
        """``log P(y, x)`` with back-off, of every instance and class.

        Parameters
        ----------
        codes : ndarray of int, shape (n, n_attributes)
            Codes of all the attributes; the scorer reads ``codes[:, columns]``.

        Returns
        -------
        ndarray of shape (n, n_classes)
            :meth:`CountTables.log_joint <bncbench.bn.count_tables.CountTables.log_joint>` with ``m``.
        """
        return self.tables.log_joint(codes[:, self.columns], self.m)


def choose_m(structure: list, cards: ArrayLike, codes: np.ndarray, y: np.ndarray, n_classes: int,
             random_state: int, backoff: str = BACKOFF_RULES[0]) -> float:
    """m with the lowest RMSE on a holdout of min(N/10, 5000) instances (ties: the first in :data:`M_GRID`).

    Parameters
    ----------
    structure : list of tuple of int
        Attribute parents per attribute, on the columns of ``codes`` (class implicit).
    cards : array-like of int, shape (n,)
        Cardinality of each column of ``codes``.
    codes : ndarray of int, shape (N, n)
        Training codes.
    y : ndarray of int, shape (N,)
        Training class codes.
    n_classes : int
        Number of classes.
    random_state : int
        Seed of the holdout draw.
    backoff : {"per_class", "any_class"}, default="per_class"
        Back-off rule of the estimates (:data:`BACKOFF`).

    Returns
    -------
    float
        The chosen value of :data:`M_GRID` (see :func:`pick_m`, which this calls with
        :class:`~bncbench.bn.count_tables.CountTables` of ``structure``).
    """
    return pick_m(lambda X, yy: CountTables(structure, cards, n_classes, backoff).fit(X, yy), codes, y,
                  random_state)


def pick_m(fit: Callable[[np.ndarray, np.ndarray], Any], codes: np.ndarray, y: np.ndarray,
           random_state: int) -> float:
    """m of :data:`M_GRID` with the lowest holdout RMSE for counts ``fit(codes, y)`` that offer ``log_joint(X, m)``.

    The holdout is min(N/10, 5000) instances drawn with ``random_state``; ties go to the first m.

    Parameters
    ----------
    fit : callable
        ``fit(X, y)`` returns fitted counts with a method ``log_joint(X, m)`` giving an
        (n, n_classes) array; it is called once, on the instances outside the holdout.
    codes : ndarray of int, shape (N, n)
        Training codes.
    y : ndarray of int, shape (N,)
        Training class codes.
    random_state : int
        Seed of the holdout draw (:func:`numpy.random.default_rng`).

    Returns
    -------
    float
        The value of :data:`M_GRID` with the lowest RMSE (:func:`bncbench.metrics.rmse`) on the
        holdout among those giving finite probabilities; 1.0 when ``N < 10`` (no holdout) or
        when no value gives finite probabilities.
    """
    from bncbench.metrics import rmse

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


def fit_subset_ensemble(structure: LearnedStructure, data: TrainingData, *, m: float | str,
                        backoff: str = BACKOFF_RULES[0]) -> SubsetScorer:
    """m-estimates of an AnDE or AnJE, all subsets at once (:mod:`~bncbench.estimators.ande`, ``anje``).

    Parameters
    ----------
    structure : LearnedStructure
        The subset ensemble: ``info["ensemble"]`` is ``"ande"`` (with ``info["min_count"]``, the
        frequency limit) or otherwise AnJE; ``members`` is its
        :class:`~bncbench.structures.subset_ensembles.SubsetMembers`.
    data : TrainingData
        The training data.
    m : float or "auto"
        Prior mass of the m-estimates (>= 0), or ``"auto"``: chosen by :func:`pick_m` with
        ``data.random_state`` (the tables are then fitted twice, on the non-holdout part and on
        all the data).
    backoff : str, default="per_class"
        Not read: a subset's tables condition on all of its attributes, there is no parent
        prefix to back off along (AnDE's frequency limit is its ``min_count``).

    Returns
    -------
    AnDEScorer or AnJEScorer
        Tables fitted on all of ``data`` with the chosen ``m``.

    Raises
    ------
    BNCBenchError
        If the codes do not match the cardinalities or lie outside ``[0, card)``, or (AnDE) the
        conditional tables would exceed :data:`~bncbench.estimators.ande.MAX_TABLE_ENTRIES`.
    """
    members = structure.members
    if structure.info["ensemble"] == "ande":
        def make(X, yy):
            return AnDETables(members, data.cards, data.n_classes, structure.info["min_count"]).fit(X, yy)
        scorer = AnDEScorer
    elif structure.info["ensemble"] == "anje":
        def make(X, yy):
            return AnJETables(members, data.cards, data.n_classes).fit(X, yy)
        scorer = AnJEScorer
    else:
        raise BNCBenchError(f"no m-estimates for the subset ensemble {structure.info['ensemble']!r}; "
                            f"known: {', '.join(ENSEMBLES)}")
    m = pick_m(make, data.codes, data.y, data.random_state) if m == "auto" else float(m)
    return scorer(make(data.codes, data.y), m)


@ESTIMATORS.register("map", label="", hyperparameters=[M, BACKOFF], counts=True,
                     ensembles=dict.fromkeys(ENSEMBLES, fit_subset_ensemble))
def fit_mestimate(network: Network, data: TrainingData, *, m: float | str,
                  backoff: str = BACKOFF_RULES[0]) -> CountScorer:
    """m-estimates with back-off to the longest parent prefix that has data.

    Two back-off rules (:mod:`bncbench.bn.count_tables`; Petitjean et al. 2018, §6: "if zero counts are
    found, we back off as many levels in the tree as necessary to find at least one count"):
    ``per_class`` takes, for each class, the longest parent prefix with data for that class;
    ``any_class``, what the authors' C++ learner does, the longest prefix seen with any class,
    for every class (a class without data there gets ``1/|X|``).

    Parameters
    ----------
    network : Network
        The network; its used attributes' columns are counted.
    data : TrainingData
        The training data.
    m : float or "auto"
        Prior mass of every table row (>= 0), or ``"auto"``: chosen by :func:`choose_m` with
        ``data.random_state``.
    backoff : {"per_class", "any_class"}, default="per_class"
        The back-off rule (:data:`BACKOFF`), kept by the count tables.

    Returns
    -------
    CountScorer
        The count tables of ``codes[:, network.columns]`` with the chosen ``m``.

    Raises
    ------
    BNCBenchError
        If a used attribute has a parent the network leaves out.
    """
    columns = network.columns
    sub = network.restricted()
    codes, cards = data.codes[:, columns], data.cards[columns]
    if m == "auto":
        m = choose_m(sub, cards, codes, data.y, data.n_classes, data.random_state, backoff)
    return CountScorer(CountTables(sub, cards, data.n_classes, backoff).fit(codes, data.y), columns, float(m))
