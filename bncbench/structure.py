"""Structure learning: parent lists for NB, TAN and KDB-k.

A structure is a list with one entry per attribute: the tuple of that
attribute's *attribute* parents, most important first (the class is an
implicit parent of every attribute). The order matters: back-off for
unseen parent configurations drops parents from the end.
"""

from __future__ import annotations

import numpy as np

from bncbench.counts import conditional_mutual_information, mutual_information
from bncbench.errors import BNCBenchError

Structure = list  # list[tuple[int, ...]]

STRUCTURES = ("nb", "tan", "kdb")


def naive_bayes(n_attributes: int) -> Structure:
    """NB: the class is the only parent of every attribute."""
    return [() for _ in range(n_attributes)]


def tan(X, y, cards, n_classes, *, root: int | None = None) -> Structure:
    """Tree-augmented naive Bayes (Friedman, Geiger & Goldszmidt 1997).

    Maximum spanning tree over I(X_i; X_j | Y) (Prim's algorithm), directed
    away from ``root`` (default: the attribute with the highest I(X_i; Y)).
    Ties are broken towards the lower attribute index.
    """
    n = X.shape[1]
    if n == 0:
        return []
    cmi = conditional_mutual_information(X, y, cards, n_classes)
    if root is None:
        root = int(np.argmax(mutual_information(X, y, cards, n_classes)))
    return _prim_parents(cmi, root)


def _prim_parents(weights: np.ndarray, root: int) -> Structure:
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


def kdb(X, y, cards, n_classes, k: int) -> Structure:
    """k-dependence Bayesian classifier (Sahami 1996).

    Attributes are ordered by I(X_i; Y) (descending; ties by index); each
    attribute takes as parents the (up to) ``k`` earlier attributes with the
    highest I(X_i; X_j | Y), in decreasing order of that score.
    """
    if k < 0:
        raise BNCBenchError(f"KDB needs k >= 0, got k={k}")
    n = X.shape[1]
    if n == 0:
        return []
    mi = mutual_information(X, y, cards, n_classes)
    order = np.argsort(-mi, kind="stable")
    cmi = conditional_mutual_information(X, y, cards, n_classes) if k > 0 and n > 1 else np.zeros((n, n))
    parents: Structure = [()] * n
    for pos, i in enumerate(order):
        earlier = order[:pos]
        if k == 0 or len(earlier) == 0:
            parents[i] = ()
            continue
        scores = cmi[i, earlier]
        pick = np.argsort(-scores, kind="stable")[:k]
        parents[i] = tuple(int(earlier[p]) for p in pick)
    return parents


def learn_structure(name: str, X, y, cards, n_classes, *, k: int = 1, parents=None) -> Structure:
    """Dispatch by structure name (``nb``, ``tan``, ``kdb``, or ``custom`` with ``parents``)."""
    name = str(name).lower()
    if name == "nb":
        return naive_bayes(X.shape[1])
    if name == "tan":
        return tan(X, y, cards, n_classes)
    if name == "kdb":
        return kdb(X, y, cards, n_classes, int(k))
    if name == "custom":
        return validate_parents(parents, X.shape[1])
    raise BNCBenchError(f"unknown structure {name!r}; choose one of nb, tan, kdb, skdb, custom")


def validate_parents(parents, n_attributes: int) -> Structure:
    """Check a user-given parent list: right length, valid indices, acyclic."""
    if parents is None or len(parents) != n_attributes:
        raise BNCBenchError(f"custom structure needs one parent list per attribute ({n_attributes})")
    out = [tuple(int(p) for p in ps) for ps in parents]
    for i, ps in enumerate(out):
        for p in ps:
            if not 0 <= p < n_attributes or p == i:
                raise BNCBenchError(f"attribute {i}: invalid parent {p}")
    # acyclicity: repeatedly remove attributes without remaining parents
    remaining = set(range(n_attributes))
    while remaining:
        free = [i for i in remaining if not (set(out[i]) & remaining)]
        if not free:
            raise BNCBenchError("custom structure has a directed cycle")
        remaining -= set(free)
    return out
