"""TAN and KDB as the authors' EBNC code builds them (compatibility mode, off unless chosen).

Zaidi et al. (2017) ran their experiments with github ``nayyarzaidi/EBNC`` (classifier
``wdBayes``). Its structures are the ones of the paper, up to two choices that change the
model: TAN's tree is directed away from attribute 0 (ours: from the attribute of highest
I(X; Y)), and KDB orders the attributes and the candidate parents with Weka's
``Utils.sort`` (a quicksort: ties among equal scores come out in its order, not by index),
on mutual informations summed in the order their code sums them (equal scores stay equal
only if computed the same way). ``structure=tan_ebnc`` and ``structure=kdb_ebnc`` reproduce
the parent lists of their code (checked in ``tests/test_ebnc_compat.py`` against the parent
lists their runs print, ``tests/fixtures/ebnc/train_full.csv``).
"""

from __future__ import annotations

import numpy as np

from bncbench.bn.counts import pair_class_counts
from bncbench.components import STRUCTURES
from bncbench.structures.network import LearnedStructure, TrainingData
from bncbench.structures.kdb import K
from bncbench.structures.tan import _prim_parents

LOG2 = float(np.log(2.0))


def weka_sort(values) -> list[int]:
    """The indices that sort ``values`` ascending, ties in the order of Weka's ``Utils.sort`` (3.7-3.9).

    Weka's median-of-three quicksort (three elements or fewer: compare-and-swap), which does not
    keep equal values in index order. Runs over the attributes (tens), not over instances.

    Parameters
    ----------
    values : sequence of float
        The scores (no NaN).

    Returns
    -------
    list of int
        Positions of ``values`` in ascending order.
    """
    a = [float(v) for v in values]
    idx = list(range(len(a)))

    def cswap(i, j):
        if a[idx[i]] > a[idx[j]]:
            idx[i], idx[j] = idx[j], idx[i]

    def split(lo, hi, pivot):
        hi -= 1
        while True:
            lo += 1
            if a[idx[lo]] >= pivot:
                hi -= 1
                while a[idx[hi]] > pivot:
                    hi -= 1
                if lo >= hi:
                    return lo
                idx[lo], idx[hi] = idx[hi], idx[lo]

    def sort(left, right):
        d = right - left
        if d <= 0:
            return
        if d == 1:
            cswap(left, right)
            return
        if d == 2:
            cswap(left, left + 1)
            cswap(left, right)
            cswap(left + 1, right)
            return
        c = (left + right) // 2
        cswap(left, c)
        cswap(left, right)
        cswap(c, right)
        idx[c], idx[right - 1] = idx[right - 1], idx[c]
        center = split(left, right, a[idx[right - 1]])
        idx[center], idx[right - 1] = idx[right - 1], idx[center]
        sort(left, center - 1)
        sort(center + 1, right)

    sort(0, len(a) - 1)
    return idx


def weka_descending(values) -> list[int]:
    """:func:`weka_sort` reversed: highest first, as the EBNC code orders attributes and parents."""
    return weka_sort(values)[::-1]


def _sequential_sum(terms: np.ndarray) -> np.ndarray:
    """Left-to-right sums along the last axis (``cumsum`` adds in order; ``sum`` is pairwise)."""
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    return np.cumsum(terms, axis=-1)[..., -1]


def ebnc_mutual_information(codes: np.ndarray, y: np.ndarray, cards, n_classes: int) -> np.ndarray:
    """I(X_i; Y) in bits, each term and the order of the sum as the EBNC code computes it.

    Parameters
    ----------
    codes : ndarray of int, shape (N, n)
        Attribute codes in ``[0, cards[i])``.
    y : ndarray of int, shape (N,)
        Class codes.
    cards : sequence of int
        Cardinalities.
    n_classes : int
        Number of classes.

    Returns
    -------
    ndarray of shape (n,)
    """
    N = float(len(y))
    cy = np.bincount(y, minlength=n_classes).astype(float)
    out = np.zeros(codes.shape[1])
    for i, card in enumerate(cards):  # one count table per attribute (not per instance)
        cxy = np.bincount(codes[:, i] * n_classes + y, minlength=card * n_classes).reshape(card, n_classes)
        cx = cxy.sum(axis=1).astype(float)
        a = cxy.astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (a / N) * np.log(a / (cx[:, None] / N * cy[None, :])) / LOG2
        out[i] = _sequential_sum(np.where(a > 0, t, 0.0).ravel())
    return out


def ebnc_conditional_mutual_information(codes: np.ndarray, y: np.ndarray, cards, n_classes: int) -> np.ndarray:
    """I(X_i; X_j | Y) in bits, symmetric, each term and the order of the sum as the EBNC code computes it.

    Parameters
    ----------
    codes, y, cards, n_classes
        As :func:`ebnc_mutual_information`.

    Returns
    -------
    ndarray of shape (n, n)
        Zero diagonal.
    """
    N = float(len(y))
    n = codes.shape[1]
    cy = np.bincount(y, minlength=n_classes).astype(float)
    cxy = [np.bincount(codes[:, i] * n_classes + y, minlength=c * n_classes).reshape(c, n_classes).astype(float)
           for i, c in enumerate(cards)]
    # every N(x_i, x_j, y) at once (exact integer counts, so the same floats as one bincount per pair)
    _, offsets, counts = pair_class_counts(codes, y, cards, n_classes)
    out = np.zeros((n, n))
    k = 0
    for u2 in range(n):  # pair_class_counts' lexicographic order: (u2, u1), u2 < u1
        for u1 in range(u2 + 1, n):
            c1, c2 = int(cards[u1]), int(cards[u2])
            a = counts[offsets[k]:offsets[k + 1]].reshape(c2, c1, n_classes).transpose(1, 0, 2)
            k += 1
            d, e = cxy[u1][:, None, :], cxy[u2][None, :, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (a / N) * np.log((a * cy) / (d * e)) / LOG2
            out[u1, u2] = out[u2, u1] = _sequential_sum(np.where(a > 0, t, 0.0).ravel())
    return out


def kdb_ebnc(codes: np.ndarray, y: np.ndarray, cards, n_classes: int, k: int) -> list[tuple[int, ...]]:
    """KDB-k parent lists as the EBNC code chooses them.

    Attributes in decreasing :func:`ebnc_mutual_information` (:func:`weka_descending`); each takes
    the ``min(position, k)`` earlier attributes of highest :func:`ebnc_conditional_mutual_information`,
    in :func:`weka_descending` order.

    Parameters
    ----------
    codes, y, cards, n_classes
        As :func:`ebnc_mutual_information`.
    k : int
        Attribute parents per attribute.

    Returns
    -------
    list of tuple of int
    """
    n = codes.shape[1]
    if n == 0:
        return []
    order = weka_descending(ebnc_mutual_information(codes, y, cards, n_classes))
    cmi = ebnc_conditional_mutual_information(codes, y, cards, n_classes) if k > 0 else None
    parents: list = [()] * n
    for u in range(1, n):
        nk = min(u, k)
        if nk:
            pick = weka_descending([cmi[order[u], order[j]] for j in range(u)])[:nk]
            parents[order[u]] = tuple(int(order[j]) for j in pick)
    return parents


def tan_ebnc(codes: np.ndarray, y: np.ndarray, cards, n_classes: int) -> list[tuple[int, ...]]:
    """TAN parent lists as the EBNC code builds them: Prim's tree over CMI, directed away from attribute 0.

    Parameters
    ----------
    codes, y, cards, n_classes
        As :func:`ebnc_mutual_information`.

    Returns
    -------
    list of tuple of int
    """
    if codes.shape[1] == 0:
        return []
    return _prim_parents(ebnc_conditional_mutual_information(codes, y, cards, n_classes), 0)


@STRUCTURES.register("tan_ebnc", label="TAN[EBNC]",
                     doc="TAN as the authors' EBNC code builds it: rooted at attribute 0 (compatibility mode)")
def learn_tan_ebnc(data: TrainingData) -> LearnedStructure:
    """TAN rooted at attribute 0 (:func:`tan_ebnc`)."""
    return LearnedStructure.single(tan_ebnc(data.codes, data.y, data.cards, data.n_classes))


@STRUCTURES.register("kdb_ebnc", label="KDB-${.k}[EBNC]", hyperparameters=[K],
                     doc="KDB-k as the authors' EBNC code builds it: Weka's sort order on ties (compatibility mode)")
def learn_kdb_ebnc(data: TrainingData, *, k: int) -> LearnedStructure:
    """KDB-k with the EBNC code's ordering (:func:`kdb_ebnc`)."""
    return LearnedStructure.single(kdb_ebnc(data.codes, data.y, data.cards, data.n_classes, int(k)))
