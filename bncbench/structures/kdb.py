"""k-dependence Bayesian classifiers (Sahami 1996)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bncbench.components import STRUCTURES
from bncbench.bn.counts import conditional_mutual_information, mutual_information
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, integer
from bncbench.structures.network import LearnedStructure, TrainingData

K = Hyperparameter("k", 1, [integer(0)], "attribute parents per attribute (KDB-k; SkDB's largest k)", int)


def kdb(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray, n_classes: int,
        k: int) -> list[tuple[int, ...]]:
    """KDB-k parent lists.

    Attributes are ordered by I(X_i; Y) (descending; ties by index); each
    attribute takes as parents the (up to) ``k`` earlier attributes with the
    highest I(X_i; X_j | Y), in decreasing order of that score.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Integer attribute codes; column ``i`` in ``[0, cards[i])``.
    y : ndarray of shape (N,)
        Class codes in ``[0, n_classes)``.
    cards : sequence of int or ndarray of shape (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    k : int
        Largest number of attribute parents (>= 0).

    Returns
    -------
    list of tuple of int
        Attribute parents of every attribute, highest I(X_i; X_j | Y) first.

    Raises
    ------
    BNCBenchError
        If ``k`` is negative.
    ValueError
        If the counting meets a code or class out of range (see
        :func:`~bncbench.bn.counts.mutual_information`).
    """
    if k < 0:
        raise BNCBenchError(f"KDB needs k >= 0, got k={k}")
    n = X.shape[1]
    if n == 0:
        return []
    mi = mutual_information(X, y, cards, n_classes)
    order = np.argsort(-mi, kind="stable")
    cmi = conditional_mutual_information(X, y, cards, n_classes) if k > 0 and n > 1 else np.zeros((n, n))
    parents: list = [()] * n
    for pos, i in enumerate(order):
        earlier = order[:pos]
        if k == 0 or len(earlier) == 0:
            parents[i] = ()
            continue
        scores = cmi[i, earlier]
        pick = np.argsort(-scores, kind="stable")[:k]
        parents[i] = tuple(int(earlier[p]) for p in pick)
    return parents


@STRUCTURES.register("kdb", label="KDB-${.k}", hyperparameters=[K])
def learn_kdb(data: TrainingData, *, k: int) -> LearnedStructure:
    """k-dependence Bayes: each attribute with up to k attribute parents.

    Parameters
    ----------
    data : TrainingData
        Training codes.
    k : int
        Largest number of attribute parents.

    Returns
    -------
    LearnedStructure
        One network, the parent lists of :func:`kdb`.

    Raises
    ------
    BNCBenchError
        If ``k`` is negative.
    """
    return LearnedStructure.single(kdb(data.codes, data.y, data.cards, data.n_classes, int(k)))
