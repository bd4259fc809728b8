"""A generative hill-climber over the arcs between attributes (Feelders & Ivanovs, §6, Fig. 2).

The class is a parent of every attribute; the climber starts from naive Bayes and, at each step,
takes the best of every legal move (add an arc ``j -> i``, delete one, reverse one) by the
penalized log-likelihood of the data

``sum_i [ LL(X_i | Y, X_pa(i)) - penalty * log(N) / 2 * (d_i - 1) d_0 prod_{j in pa(i)} d_j ]``,

(BIC with ``penalty = 1``), keeping the graph acyclic, and stops at a local optimum (no move
improves the score by more than ``1e-9`` times ``N``). The score decomposes over families: a move
changes one or two of them, and every family score is computed once (one ``np.unique`` over the
family's codes) and kept.

With ``make_perfect=True`` the result is then made perfect, as the paper's LR mappings need
(§3): while two attribute parents of an attribute are unconnected, an arc joins them, from the
earlier to the later in a topological order (acyclic by construction). The paper reports its
hill-climbed structures "happened to be perfect"; ``info["married"]`` lists the arcs added.
"""

from __future__ import annotations

import numpy as np

from bncbench.components import STRUCTURES
from bncbench.registry import Hyperparameter, finite, integer
from bncbench.structures.network import LearnedStructure, TrainingData

PENALTY = Hyperparameter("bic_penalty", 1.0, [finite(0.0)],
                         "hill_climb: multiplier of BIC's log(N)/2 per free parameter (0: unpenalized)", float)
MAX_ATTRIBUTES = Hyperparameter("max_attributes", None, [integer(1), None],
                                "hill_climb: with more attributes than this, no climb (naive Bayes), as Feelders & "
                                "Ivanovs fit satimage", int)
MAKE_PERFECT = Hyperparameter("make_perfect", False, ["boolean"],
                              "hill_climb: marry unconnected attribute parents afterwards (a perfect graph)", bool)


class _FamilyScores:
    """Penalized log-likelihood of ``X_i`` given the class and an attribute parent set, cached."""

    def __init__(self, X: np.ndarray, y: np.ndarray, cards: np.ndarray, n_classes: int, penalty: float) -> None:
        self.X, self.y = X.astype(np.int64), y.astype(np.int64)
        self.cards, self.d0 = np.asarray(cards, dtype=np.int64), int(n_classes)
        self.N = X.shape[0]
        self.pen = float(penalty) * np.log(max(self.N, 1)) / 2.0
        self.cache: dict = {}

    def __call__(self, i: int, parents: frozenset) -> float:
        key = (i, parents)
        s = self.cache.get(key)
        if s is None:
            s = self._score(i, sorted(parents))
            self.cache[key] = s
        return s

    def _score(self, i: int, ps: list) -> float:
        cfg = self.y.copy()
        n_cfg = self.d0
        for p in ps:  # mixed radix; unique() keeps the keys small whatever the radix
            cfg = cfg * self.cards[p] + self.X[:, p]
            n_cfg *= int(self.cards[p])
            cfg = np.unique(cfg, return_inverse=True)[1].astype(np.int64)
        fam = cfg * self.cards[i] + self.X[:, i]
        _, n_fam = np.unique(fam, return_counts=True)
        _, n_par = np.unique(cfg, return_counts=True)
        ll = float(np.sum(n_fam * np.log(n_fam)) - np.sum(n_par * np.log(n_par)))
        return ll - self.pen * (int(self.cards[i]) - 1) * n_cfg


def _reaches(parents: list, src: int, dst: int) -> bool:
    """Is there a directed path ``src -> ... -> dst`` (following child links)?"""
    children = [[] for _ in parents]
    for c, ps in enumerate(parents):
        for p in ps:
            children[p].append(c)
    stack, seen = [src], {src}
    while stack:
        v = stack.pop()
        if v == dst:
            return True
        for c in children[v]:
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return False


def hill_climb(X: np.ndarray, y: np.ndarray, cards, n_classes: int, *, penalty: float = 1.0,
               make_perfect: bool = False) -> tuple[list[tuple[int, ...]], dict]:
    """Greedy search of the attribute arcs by penalized generative log-likelihood (module docstring).

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Attribute codes.
    y : ndarray of shape (N,)
        Class codes.
    cards : sequence of int
        Attribute cardinalities.
    n_classes : int
        Number of classes.
    penalty : float, default=1.0
        Multiplier of BIC's ``log(N) / 2`` per free parameter.
    make_perfect : bool, default=False
        Marry unconnected attribute parents afterwards.

    Returns
    -------
    parents : list of tuple of int
        Attribute parents per attribute, in the order they were added.
    info : dict
        ``score`` (the penalized log-likelihood of the climbed graph), ``moves`` (the moves taken,
        ``(op, j, i)``) and ``married`` (arcs added to make it perfect).
    """
    n = X.shape[1]
    score = _FamilyScores(X, y, cards, n_classes, penalty)
    parents: list[list[int]] = [[] for _ in range(n)]
    fam = [score(i, frozenset()) for i in range(n)]
    tol = 1e-9 * max(X.shape[0], 1)
    moves = []
    while True:
        best, best_move = tol, None
        for i in range(n):
            pi = frozenset(parents[i])
            for j in range(n):
                if j == i:
                    continue
                if j in pi:
                    d = score(i, pi - {j}) - fam[i]  # delete j -> i
                    if d > best:
                        best, best_move = d, ("delete", j, i)
                    # reverse j -> i into i -> j: legal unless another path j -> ... -> i exists
                    pj = frozenset(parents[j])
                    d = d + score(j, pj | {i}) - fam[j]
                    if d > best:
                        parents[i].remove(j)
                        ok = not _reaches(parents, j, i)
                        parents[i].append(j)
                        if ok:
                            best, best_move = d, ("reverse", j, i)
                elif i not in parents[j]:
                    d = score(i, pi | {j}) - fam[i]  # add j -> i: legal unless i reaches j
                    if d > best and not _reaches(parents, i, j):
                        best, best_move = d, ("add", j, i)
        if best_move is None:
            break
        op, j, i = best_move
        if op == "add":
            parents[i].append(j)
        elif op == "delete":
            parents[i].remove(j)
        else:
            parents[i].remove(j)
            parents[j].append(i)
            fam[j] = score(j, frozenset(parents[j]))
        fam[i] = score(i, frozenset(parents[i]))
        moves.append(best_move)
    info = {"score": float(sum(fam)), "moves": moves, "married": []}
    if make_perfect:
        info["married"] = _marry(parents)
    return [tuple(int(p) for p in ps) for ps in parents], info


def _topological_order(parents: list) -> list:
    order, placed = [], set()
    while len(order) < len(parents):
        for v, ps in enumerate(parents):
            if v not in placed and all(p in placed for p in ps):
                order.append(v)
                placed.add(v)
    return order


def _marry(parents: list) -> list:
    """Join unconnected attribute parents until none are left (in place); the arcs added."""
    pos = {v: k for k, v in enumerate(_topological_order(parents))}
    added = []
    changed = True
    while changed:
        changed = False
        for c in sorted(range(len(parents)), key=pos.get):
            ps = sorted(parents[c], key=pos.get)
            for a_ in range(len(ps)):
                for b_ in range(a_ + 1, len(ps)):
                    a, b = ps[a_], ps[b_]  # a before b
                    if a not in parents[b] and b not in parents[a]:
                        parents[b].append(a)
                        added.append((a, b))
                        changed = True
    return added


@STRUCTURES.register("hill_climb", label="HC", hyperparameters=[PENALTY, MAKE_PERFECT, MAX_ATTRIBUTES])
def learn_hill_climb(data: TrainingData, *, bic_penalty: float = 1.0, make_perfect: bool = False,
                     max_attributes: int | None = None) -> LearnedStructure:
    """The generative hill-climber's network (module docstring).

    Parameters
    ----------
    data : TrainingData
        Training codes.
    bic_penalty : float, default=1.0
        Multiplier of BIC's penalty.
    make_perfect : bool, default=False
        Marry unconnected attribute parents afterwards.
    max_attributes : int, optional
        With more attributes than this, naive Bayes (no climb; the paper's choice for satimage's 36).

    Returns
    -------
    LearnedStructure
        One network; ``info`` as :func:`hill_climb` returns it (``{"naive_bayes": True}`` without a climb).
    """
    if max_attributes is not None and data.n_attributes > max_attributes:
        return LearnedStructure.single([()] * data.n_attributes, naive_bayes=True)
    parents, info = hill_climb(data.codes, data.y, data.cards, data.n_classes, penalty=bic_penalty,
                               make_perfect=make_perfect)
    return LearnedStructure.single(parents, **info)
