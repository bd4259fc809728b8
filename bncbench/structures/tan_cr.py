"""Greedy discriminative TAN by training classification rate (TAN-CR; Pernkopf et al., §4.2).

Start from naive Bayes; at each step add the attribute arc ``X_j -> X_i`` that most increases
the classification rate (CR) on the training data, keeping a forest (every attribute at most one
attribute parent, no cycle); stop when no arc increases it. Parameters during the search are the
generative m-estimates (the paper's ML parameters with zero probabilities avoided). Every candidate
is rescored incrementally (:class:`~bncbench.structures.cr_search.ArcScorer`): only the child's
factor changes, and only instances whose margin is within the candidate's reach are rescored.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bncbench.components import STRUCTURES
from bncbench.structures.network import LearnedStructure, TrainingData
from bncbench.structures.cr_search import ArcScorer


def search_m(m: float | str) -> float:
    """The m-estimate prior mass the CR searches use: the estimator's ``m``; 1 for ``"auto"`` or 0.

    A zero ``m`` would make unseen value combinations log 0 during the search; the paper replaces
    zero probabilities by a small value, the search uses ``m = 1`` instead.

    Parameters
    ----------
    m : float or "auto"
        The m-estimate estimator's ``m``.

    Returns
    -------
    float
        A positive prior mass.
    """
    return 1.0 if m == "auto" or float(m) <= 0 else float(m)


def pick(scores: np.ndarray, tiebreak: np.ndarray) -> int:
    """Index of the highest score; ties go to the highest ``tiebreak``, then the first.

    Parameters
    ----------
    scores : ndarray of int
        Candidate scores.
    tiebreak : ndarray of float
        Secondary key (the arc's I(X_i; X_j | C)).

    Returns
    -------
    int
    """
    top = np.flatnonzero(scores == scores.max())
    return int(top[np.argmax(tiebreak[top])])


def tan_cr(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray, n_classes: int, *,
           m: float = 1.0) -> tuple[list, dict]:
    """TAN-CR parent lists (a forest) and what the search did.

    Ties between arcs of equal CR go to the arc of higher I(X_i; X_j | C) (the paper does not say).

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes in ``[0, cards[i])``.
    y : ndarray of shape (N,)
        Class codes in ``[0, n_classes)``.
    cards : sequence of int
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    m : float, default=1.0
        Prior mass of the search's m-estimates (> 0).

    Returns
    -------
    parents : list of tuple of int
        ``()`` or ``(parent,)`` per attribute.
    info : dict
        ``train_cr`` (the final training CR), ``nb_train_cr``, ``n_arcs``, ``n_evaluations``
        (candidate arcs scored).
    """
    scorer = ArcScorer(X, y, cards, n_classes, m)
    N, n = scorer.X.shape
    cmi = scorer.class_conditional_mi()
    current = nb = scorer.n_correct
    while True:
        root = scorer.root()
        ok = (scorer.parent[:, None] < 0) & (root[None, :] != np.arange(n)[:, None])  # [child, parent]
        np.fill_diagonal(ok, False)
        children, parents = np.nonzero(ok)
        if children.size == 0:
            break
        scores = scorer.score(children, parents)
        best = pick(scores, cmi[children, parents])
        if scores[best] <= current:
            break
        scorer.add(int(children[best]), int(parents[best]))
        current = int(scores[best])
    info = {"train_cr": current / N, "nb_train_cr": nb / N, "n_arcs": int(np.sum(scorer.parent >= 0)),
            "n_evaluations": int(scorer.n_evaluations)}
    return scorer.parent_lists(), info


@STRUCTURES.register("tan_cr", label="TAN-CR", uses=("m",))
def learn_tan_cr(data: TrainingData, *, m: float | str = 1.0) -> LearnedStructure:
    """Greedy discriminative TAN: arcs added while they raise the training classification rate (Pernkopf et al., §4.2).

    The search's m-estimates use the ``m`` of the m-estimate estimator (``uses``); 1 when it is
    ``"auto"`` or 0 (:func:`search_m`).

    Parameters
    ----------
    data : TrainingData
        Training codes.
    m : float or "auto", default=1.0
        The m-estimate's ``m``.

    Returns
    -------
    LearnedStructure
        One network, a forest over the attributes; ``info`` as :func:`tan_cr`.
    """
    parents, info = tan_cr(data.codes, data.y, data.cards, data.n_classes, m=search_m(m))
    return LearnedStructure.single(parents, **info)
