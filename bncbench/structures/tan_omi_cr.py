"""Order-based discriminative TAN (TAN-OMI-CR; Pernkopf et al., §4.3).

1. Order the attributes: first the one of highest I(C; X); then, repeatedly, the one most
   informative about C given the attributes already ordered. I(C; X | X_1..X_{j-1}) cannot be
   estimated from counts once j is more than a few (every configuration of the predecessors
   becomes unique), so it is approximated by its tightest pairwise bound
   ``min over ordered X' of I(C; X | X')`` (conditional mutual information maximization,
   Fleuret 2004); for the second attribute this is exact.
2. In that order, give each attribute the predecessor parent that most raises the training
   classification rate (CR) of the network (naive Bayes plus the arcs chosen so far), or none
   when no predecessor raises it. The result is a forest; O(N^2) candidate evaluations, each
   rescored incrementally (:class:`~bncbench.structures.cr_search.ArcScorer`), with the generative
   m-estimates as parameters.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bncbench.components import STRUCTURES
from bncbench.bn.counts import _xlogx_sum, mutual_information
from bncbench.structures.network import LearnedStructure, TrainingData
from bncbench.structures.cr_search import ArcScorer
from bncbench.structures.tan_cr import pick, search_m


def class_information_given(scorer: ArcScorer) -> np.ndarray:
    """``I[i, j] = I(C; X_i | X_j)`` in nats (empirical), from the scorer's pair counts; 0 on the diagonal.

    Parameters
    ----------
    scorer : ArcScorer
        Holds the pair counts N(x_i, x_j, c).

    Returns
    -------
    ndarray of shape (n, n)
    """
    n = scorer.cards.size
    N = scorer.X.shape[0]
    C = scorer.n_classes
    out = np.zeros((n, n))
    for k, (i, j) in enumerate(scorer.pairs):
        t = scorer.pair_counts[scorer.pair_offsets[k] : scorer.pair_offsets[k + 1]].reshape(
            scorer.cards[i], scorer.cards[j], C)
        full = _xlogx_sum(t)
        # I(C; X_i | X_j) = sum t log[t N(x_j) / (N(x_i, x_j) N(x_j, c))] / N, and symmetrically
        out[i, j] = (full + _xlogx_sum(t.sum(axis=(0, 2))) - _xlogx_sum(t.sum(axis=2))
                     - _xlogx_sum(t.sum(axis=0))) / N
        out[j, i] = (full + _xlogx_sum(t.sum(axis=(1, 2))) - _xlogx_sum(t.sum(axis=2))
                     - _xlogx_sum(t.sum(axis=1))) / N
    return np.maximum(out, 0.0)


def omi_order(scorer: ArcScorer) -> np.ndarray:
    """The attribute order of step 1 (see the module docstring); ties to the lower index.

    Parameters
    ----------
    scorer : ArcScorer
        The training data and its pair counts.

    Returns
    -------
    ndarray of int
        A permutation of the attributes.
    """
    n = scorer.cards.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    info = class_information_given(scorer)
    first = int(np.argmax(mutual_information(scorer.X, scorer.y, scorer.cards, scorer.n_classes)))
    order = [first]
    left = np.ones(n, dtype=bool)
    left[first] = False
    bound = info[:, first].copy()
    for _ in range(n - 1):
        nxt = int(np.argmax(np.where(left, bound, -np.inf)))
        order.append(nxt)
        left[nxt] = False
        bound = np.minimum(bound, info[:, nxt])
    return np.asarray(order, dtype=np.int64)


def tan_omi_cr(X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray, n_classes: int, *,
               m: float = 1.0) -> tuple[list, dict]:
    """TAN-OMI-CR parent lists (a forest) and what the search did.

    Ties between parents of equal CR go to the higher I(X_i; X_j | C), then the earlier in the order.

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
        ``order`` (step 1), ``train_cr``, ``nb_train_cr``, ``n_arcs``, ``n_evaluations``.
    """
    scorer = ArcScorer(X, y, cards, n_classes, m)
    N, n = scorer.X.shape
    order = omi_order(scorer)
    cmi = scorer.class_conditional_mi()
    current = nb = scorer.n_correct
    for pos in range(1, n):
        child = int(order[pos])
        parents = order[:pos]
        scores = scorer.score(np.full(pos, child), parents)
        best = pick(scores, cmi[child, parents])
        if scores[best] > current:
            scorer.add(child, int(parents[best]))
            current = int(scores[best])
    info = {"order": [int(a) for a in order], "train_cr": current / N, "nb_train_cr": nb / N,
            "n_arcs": int(np.sum(scorer.parent >= 0)), "n_evaluations": int(scorer.n_evaluations)}
    return scorer.parent_lists(), info


@STRUCTURES.register("tan_omi_cr", label="TAN-OMI-CR", uses=("m",))
def learn_tan_omi_cr(data: TrainingData, *, m: float | str = 1.0) -> LearnedStructure:
    """Order-based discriminative TAN: attributes ordered by conditional information, parents by training CR (Pernkopf et al., §4.3).

    The search's m-estimates use the ``m`` of the m-estimate estimator (``uses``); 1 when it is
    ``"auto"`` or 0.

    Parameters
    ----------
    data : TrainingData
        Training codes.
    m : float or "auto", default=1.0
        The m-estimate's ``m``.

    Returns
    -------
    LearnedStructure
        One network, a forest over the attributes; ``info`` as :func:`tan_omi_cr`.
    """
    parents, info = tan_omi_cr(data.codes, data.y, data.cards, data.n_classes, m=search_m(m))
    return LearnedStructure.single(parents, **info)
