"""Tree-augmented naive Bayes (Friedman, Geiger & Goldszmidt 1997)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bncbench.components import STRUCTURES
from bncbench.bn.counts import conditional_mutual_information, mutual_information
from bncbench.structures.network import LearnedStructure, TrainingData


def tan(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray, n_classes: int, *,
        root: int | None = None) -> list[tuple[int, ...]]:
    """TAN parent lists.

    Maximum spanning tree over I(X_i; X_j | Y) (Prim's algorithm), directed
    away from ``root`` (default: the attribute with the highest I(X_i; Y)).
    Ties are broken towards the lower attribute index.

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
    root : int, optional
        The attribute without an attribute parent.

    Returns
    -------
    list of tuple of int
        Per attribute, ``()`` for the root and ``(parent,)`` for every other attribute.

    Raises
    ------
    ValueError
        If a code is outside ``[0, card)`` or a class outside ``[0, n_classes)`` (checked by
        :func:`~bncbench.bn.counts.conditional_mutual_information`).
    """
    n = X.shape[1]
    if n == 0:
        return []
    cmi = conditional_mutual_information(X, y, cards, n_classes)
    if root is None:
        root = int(np.argmax(mutual_information(X, y, cards, n_classes)))
    return _prim_parents(cmi, root)


def _prim_parents(weights: np.ndarray, root: int) -> list:
    n = weights.shape[0]
    parent = np.full(n, -1)
    in_tree = np.zeros(n, dtype=bool)
    in_tree[root] = True
    best = weights[root].copy()
    best_from = np.full(n, root)
    for _ in range(n - 1):
        cand = np.where(in_tree, -np.inf, best)
        v = int(np.argmax(cand))
        in_tree[v] = True
        parent[v] = best_from[v]
        better = (~in_tree) & (weights[v] > best)
        best[better] = weights[v][better]
        best_from[better] = v
    return [() if p < 0 else (int(p),) for p in parent]


@STRUCTURES.register("tan", label="TAN")
def learn_tan(data: TrainingData) -> LearnedStructure:
    """Tree-augmented naive Bayes.

    Parameters
    ----------
    data : TrainingData
        Training codes.

    Returns
    -------
    LearnedStructure
        One network, the parent lists of :func:`tan` rooted at the attribute of highest I(X_i; Y).
    """
    return LearnedStructure.single(tan(data.codes, data.y, data.cards, data.n_classes))
