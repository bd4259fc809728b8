"""Selective KDB (SkDB; Martínez, Webb, Chen & Zaidi 2016, "Scalable learning of
Bayesian network classifiers", JMLR 17).

SkDB learns a KDB-k structure (attributes ranked by I(X_i; Y), each attribute
with the up-to-k earlier attributes of highest I(X_i; X_j | Y), in decreasing
order) and then selects the number of attributes ``n* <= n`` (the ``n*``
attributes of highest I(X_i; Y)) and the number of parents ``k* <= k`` (the
first ``k*`` parents of each attribute) that minimise the leave-one-out RMSE
of the m-estimate classifier on the training data, as Petitjean et al. (2018)
use it (RMSE as the criterion).

The leave-one-out is computed incrementally from one set of counts (the
third pass over the data of the paper): for each training instance its own
contribution is subtracted from every count it touched (class prior and every
parent-prefix level of every table) before predicting it, and one pass over
the attributes in rank order scores every ``n'`` and every ``k'`` at once,
because the candidate models are nested. Estimates are exactly those of
:class:`bncbench.tables.CountTables` fitted on the other ``N - 1`` rows:
m-estimates with back-off to the longest parent prefix that has data for the
class (see ``tests/test_skdb.py``, which checks this against refitting), or,
with ``backoff="any_class"``, to the longest prefix that has data for any class,
used for every class: the authors' rule, whose leave-one-out descends while the
instance's parent configuration has a count of at least 2 summed over the
classes (its own row and another).

Representation
--------------
``skdb(...)`` returns ``SkDB(structure, selected, k)``:

* ``structure`` — one entry per attribute: the tuple of (at most ``k*``)
  attribute parents of a selected attribute, ``None`` for an attribute that
  is not selected (a :class:`~bncbench.structures.Network` with ``None``
  entries: the estimators use only the selected columns).
* ``selected`` — the selected attribute indices, best-ranked first.
* ``k`` — the selected ``k*``.

``skdb_search(...)`` returns the full search (:class:`SkDBSearch`: the RMSE
grid over ``k' = 0..k`` and ``n' = 0..n``, the ranking and the full KDB-k
structure).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Sequence

import numpy as np

from bncbench.counts import mixed_radix, mutual_information
from bncbench.errors import BNCBenchError
from bncbench.components import STRUCTURES
from bncbench.structures.base import LearnedStructure, TrainingData
from bncbench.structures.kdb import K, kdb
from bncbench.tables import BACKOFF_RULES, CountTables

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


class SkDB(NamedTuple):
    """The selected SkDB structure.

    Attributes
    ----------
    structure : list of (tuple of int or None)
        Per attribute, its first ``k`` KDB parents if selected, None otherwise.
    selected : list of int
        The selected attributes, best-ranked (highest I(X_i; Y)) first.
    k : int
        The selected number of parents ``k*``.
    """
    structure: list  # parents per attribute, None if not selected
    selected: list  # selected attributes, best-ranked first
    k: int  # k*


@dataclass
class SkDBSearch:
    """The full SkDB search: ranking, KDB-k structure, leave-one-out RMSE grid and its minimum.

    Attributes
    ----------
    order : ndarray of int
        Attributes by decreasing I(X_i; Y).
    full_structure : list of tuple of int
        The KDB-k structure.
    rmse : ndarray of shape (k + 1, n + 1)
        Leave-one-out RMSE of the model with ``k'`` parents and the first ``n'`` attributes.
    n_star : int
        Selected number of attributes (0 only without attributes).
    k_star : int
        Selected number of parents.
    """
    order: np.ndarray  # attributes by decreasing I(X_i; Y)
    full_structure: list  # the KDB-k structure
    rmse: np.ndarray  # (k + 1, n + 1): LOO RMSE of the model with k' parents and the first n' attributes
    n_star: int
    k_star: int

    @property
    def result(self) -> SkDB:
        """The selected structure.

        Returns
        -------
        SkDB
            The first ``n_star`` attributes of :attr:`order`, each with its first ``k_star`` parents.
        """
        sel = [int(a) for a in self.order[: self.n_star]]
        keep = set(sel)
        structure = [
            tuple(ps[: self.k_star]) if a in keep else None for a, ps in enumerate(self.full_structure)
        ]
        return SkDB(structure, sel, int(self.k_star))


def restrict(structure: Sequence[Sequence[int] | None]) -> tuple[list[int], list[tuple[int, ...]]]:
    """``(columns, sub_structure)``: the selected columns and the structure re-indexed on ``X[:, columns]``.

    Parameters
    ----------
    structure : sequence of (sequence of int or None)
        Parents per attribute; None for an attribute that is not selected.

    Returns
    -------
    columns : list of int
        The selected attributes, in increasing order.
    sub_structure : list of tuple of int
        Their parents, as positions in ``columns``.

    Raises
    ------
    BNCBenchError
        If a selected attribute has a parent that is not selected.
    """
    columns = [i for i, ps in enumerate(structure) if ps is not None]
    index = {c: j for j, c in enumerate(columns)}
    try:
        sub = [tuple(index[p] for p in structure[c]) for c in columns]
    except KeyError as exc:
        raise BNCBenchError(f"a selected attribute has the unselected parent {exc.args[0]}") from None
    return columns, sub


def _posterior_sq_error(lj: np.ndarray, onehot: np.ndarray) -> float:
    """Sum over instances and classes of (P(c | x) - 1[c = y])^2."""
    with np.errstate(invalid="ignore"):
        p = np.exp(lj - lj.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
    return float(np.sum((p - onehot) ** 2))


def loo_rmse_grid(X: ArrayLike, y: ArrayLike, structure: Sequence[Sequence[int]], order: Sequence[int] | np.ndarray,
                  cards: ArrayLike, n_classes: int, k: int, m: float = 1.0,
                  backoff: str = BACKOFF_RULES[0]) -> np.ndarray:
    """Leave-one-out RMSE of every nested model, computed incrementally from the counts.

    The model ``(k', n')`` uses the attributes ``order[:n']`` with the first
    ``k'`` parents of each in ``structure`` (which must only name earlier
    attributes of ``order``). Returns an array (k + 1, n + 1); RMSE is
    sqrt(sum over instances and classes of (P(c | x) - 1[c = y])^2 / (N n_classes)).

    Parameters
    ----------
    X : array-like of shape (N, n)
        Integer attribute codes.
    y : array-like of shape (N,)
        Class codes in ``[0, n_classes)``.
    structure : sequence of sequence of int
        Parents of every attribute (the full KDB-k structure).
    order : sequence of int
        Attributes in rank order.
    cards : array-like of int
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    k : int
        Largest number of parents scored.
    m : float, default=1.0
        Total prior mass of the m-estimates.
    backoff : {"per_class", "any_class"}, default="per_class"
        Back-off rule of the m-estimates (:data:`bncbench.tables.BACKOFF_RULES`).

    Returns
    -------
    ndarray of shape (k + 1, len(order) + 1)
        ``rmse[k', n']``; column 0 is the class prior alone. With ``m = 0`` a 0/0 estimate gives NaN.

    Raises
    ------
    BNCBenchError
        If there are fewer than two training instances.
    """
    X = np.asarray(X, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    N, Y = X.shape[0], int(n_classes)
    if N < 2:
        raise BNCBenchError("leave-one-out needs at least two training instances")
    rows = np.arange(N)
    onehot = np.zeros((N, Y))
    onehot[rows, y] = 1.0
    tables = CountTables(structure, cards, Y, backoff).fit(X, y)
    any_class = tables.backoff == "any_class"
    with np.errstate(divide="ignore"):
        prior = np.log((tables.class_counts[None, :] - onehot + m / Y) / (N - 1 + m))
    lj = [prior.copy() for _ in range(k + 1)]
    sq = np.zeros((k + 1, len(order) + 1))
    sq[:, 0] = _posterior_sq_error(prior, onehot)
    for pos, a in enumerate(order):
        f = tables.factors[a]
        x = X[:, a]
        cur = None
        per_level = []
        for lev, level in enumerate(f.levels):
            if lev:
                cfg = mixed_radix(X, f.parents[:lev], cards)
                row = level.lookup(cfg)
            else:
                row = np.zeros(N, dtype=np.int64) if level.n_keys else np.full(N, -1)
            found = row >= 0
            r = np.where(found, row, 0)
            if level.n_keys:
                cnt = level.counts[r, :, x]  # (N, Y): N(x, c, prefix)
                tot = level.counts[r].sum(axis=2)  # (N, Y): N(c, prefix)
            else:
                cnt = np.zeros((N, Y))
                tot = np.zeros((N, Y))
            cnt = np.where(found[:, None], cnt, 0.0) - onehot  # leave the instance out
            tot = np.where(found[:, None], tot, 0.0) - onehot
            with np.errstate(divide="ignore", invalid="ignore"):
                lt = np.log((cnt + m / f.card) / (tot + m))
            if any_class:  # a class without data there: 1/|X|, as CountTables.log_theta
                lt = np.where(tot > 0, lt, -np.log(f.card))
            if lev == 0:
                cur = lt
            elif any_class:  # seen without the instance, with some class: every class uses it
                cur = np.where(tot.sum(axis=1, keepdims=True) > 0, lt, cur)
            else:
                cur = np.where(tot > 0, lt, cur)
            per_level.append(cur)
        for kk in range(k + 1):
            lj[kk] += per_level[min(kk, len(per_level) - 1)]
            sq[kk, pos + 1] = _posterior_sq_error(lj[kk], onehot)
    return np.sqrt(sq / (N * Y))


def skdb_search(X: ArrayLike, y: ArrayLike, cards: ArrayLike, n_classes: int, k: int, m: float = 1.0,
                backoff: str = BACKOFF_RULES[0]) -> SkDBSearch:
    """Learn KDB-k and select n* and k* by incremental leave-one-out RMSE (ties: smaller k*, then n*).

    At least one attribute is selected when there is one; NaN entries of the grid are never chosen.

    Parameters
    ----------
    X : array-like of shape (N, n)
        Integer attribute codes.
    y : array-like of shape (N,)
        Class codes in ``[0, n_classes)``.
    cards : array-like of int
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    k : int
        Largest number of parents (>= 0).
    m : float, default=1.0
        Total prior mass of the m-estimates.
    backoff : {"per_class", "any_class"}, default="per_class"
        Back-off rule of the m-estimates.

    Returns
    -------
    SkDBSearch
        The search and its selection (``n_star = k_star = 0`` without attributes).

    Raises
    ------
    BNCBenchError
        If ``k`` is negative, or there are attributes but fewer than two instances.
    """
    X = np.asarray(X, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    if k < 0:
        raise BNCBenchError(f"SkDB needs k >= 0, got k={k}")
    n = X.shape[1]
    if n == 0:
        return SkDBSearch(np.zeros(0, dtype=np.int64), [], np.zeros((k + 1, 1)), 0, 0)
    mi = mutual_information(X, y, cards, n_classes)
    order = np.argsort(-mi, kind="stable")  # the ranking kdb() uses
    full = kdb(X, y, cards, n_classes, k)
    grid = loo_rmse_grid(X, y, full, order, cards, n_classes, k, m, backoff)
    sub = grid[:, 1:]  # at least one attribute
    # a 0/0 leave-one-out estimate (m = 0) is NaN: never select it
    kk, nn = np.unravel_index(int(np.argmin(np.where(np.isnan(sub), np.inf, sub))), sub.shape)
    return SkDBSearch(order, full, grid, int(nn) + 1, int(kk))


def skdb(X: ArrayLike, y: ArrayLike, cards: ArrayLike, n_classes: int, k: int, m: float = 1.0,
         backoff: str = BACKOFF_RULES[0]) -> SkDB:
    """Selective KDB: ``SkDB(structure, selected, k_star)`` (see the module docstring).

    Parameters
    ----------
    X : array-like of shape (N, n)
        Integer attribute codes.
    y : array-like of shape (N,)
        Class codes in ``[0, n_classes)``.
    cards : array-like of int
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    k : int
        Largest number of parents (>= 0).
    m : float, default=1.0
        Total prior mass of the m-estimates.
    backoff : {"per_class", "any_class"}, default="per_class"
        Back-off rule of the m-estimates.

    Returns
    -------
    SkDB
        The selected structure (:attr:`SkDBSearch.result` of :func:`skdb_search`).

    Raises
    ------
    BNCBenchError
        As :func:`skdb_search`.
    """
    return skdb_search(X, y, cards, n_classes, k, m, backoff).result


@STRUCTURES.register("skdb", label="SkDB-${.k}", hyperparameters=[K], uses=("m", "backoff"))
def learn_skdb(data: TrainingData, *, k: int, m: float | str = 1.0,
               backoff: str = BACKOFF_RULES[0]) -> LearnedStructure:
    """Selective KDB: KDB-k, then the attributes and k* <= k chosen by leave-one-out RMSE of m-estimates.

    The search's m-estimates use the ``m`` and the ``backoff`` of the m-estimate estimator
    (``uses``); ``m`` is 1 when it is ``"auto"`` (chosen after the structure) or the estimator
    is another one.

    Parameters
    ----------
    data : TrainingData
        Training codes.
    k : int
        Largest number of parents.
    m : float or "auto", default=1.0
        The m-estimate's ``m``; ``"auto"`` searches with 1.
    backoff : {"per_class", "any_class"}, default="per_class"
        The m-estimate's back-off rule.

    Returns
    -------
    LearnedStructure
        One network whose unselected attributes are None; ``info`` holds ``selected`` and ``k_star``.

    Raises
    ------
    BNCBenchError
        If ``k`` is negative, or there are attributes but fewer than two instances.
    """
    found = skdb(data.codes, data.y, data.cards, data.n_classes, int(k), m=1.0 if m == "auto" else float(m),
                 backoff=backoff)
    return LearnedStructure.single(found.structure, selected=found.selected, k_star=found.k)
