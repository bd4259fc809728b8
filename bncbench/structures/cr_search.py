"""Training classification rate of a naive Bayes plus attribute arcs, rescored one arc at a time.

The discriminative TAN searches of Pernkopf et al. (§4.2 TAN-CR, §4.3 TAN-OMI-CR) score a
candidate arc ``X_j -> X_i`` by the classification rate (CR) of the network with that arc added,
parameters estimated generatively (the m-estimates of :mod:`bncbench.bn.count_tables`) during the search.
Adding a parent to a parentless attribute changes one factor only, so the candidate's per-instance,
per-class log joint is the current one plus

    D_ij[x_i, x_j, c] = log theta(x_i | c, x_j) - log theta(x_i | c),

a table of ``card_i * card_j * n_classes`` entries computed once per ordered pair from the pair
counts N(x_i, x_j, c). A class whose parent configuration ``(x_j, c)`` has no training data backs off
to ``theta(x_i | c)`` (``D = 0``), as :class:`~bncbench.bn.count_tables.CountTables` does when scoring.

Most instances cannot change their classification: with the current margin
``mu_n = L[n, y_n] - max_{c != y_n} L[n, c]`` and the candidate's spread
``s_ij = max over seen (x_i, x_j) of (max_c D - min_c D)``, the new margin lies in
``[mu_n - s_ij, mu_n + s_ij]``. With instances sorted by ``|mu_n|``, only the prefix with
``|mu_n| <= s_ij`` is rescored (exactly, by the argmax of ``L + D``); the others keep their status,
counted from a suffix sum; within the prefix, an instance whose own ``(x_i, x_j)`` spread is below
its ``|mu_n|`` is skipped too. One compiled kernel scores a batch of candidates this way
(``tests/test_tan_cr.py`` checks it against refitting :class:`~bncbench.bn.count_tables.CountTables` on the
candidate structure).
"""

from __future__ import annotations

from typing import Sequence

import numba
import numpy as np

from bncbench.bn.counts import cmi_from_pair_counts, pair_class_counts

MARGIN_TOL = 1e-7
"""Instances whose |margin| is within this of a candidate's spread are rescored too (round-off)."""


class ArcScorer:
    """The training CR of NB plus a growing set of arcs, and of every candidate arc, incrementally.

    Parameters
    ----------
    X : ndarray of shape (N, n)
        Training attribute codes in ``[0, cards[i])``.
    y : ndarray of shape (N,)
        Class codes in ``[0, n_classes)``.
    cards : sequence of int
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    m : float, default=1.0
        Prior mass of the m-estimates (> 0).

    Attributes
    ----------
    parent : ndarray of shape (n,) of int
        The attribute parent of every attribute, -1 for none.
    log_joint : ndarray of shape (N, n_classes)
        The current network's log P(c, x_n).
    n_evaluations : int
        Candidate arcs scored so far.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, cards: Sequence[int] | np.ndarray, n_classes: int,
                 m: float = 1.0) -> None:
        self.X = np.ascontiguousarray(X, dtype=np.int64)
        self.XT = np.ascontiguousarray(self.X.T, dtype=np.int32)  # per attribute, for the kernel
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.cards = np.asarray(cards, dtype=np.int64)
        self.n_classes = C = int(n_classes)
        N, n = self.X.shape
        self.m = float(m)
        class_counts = np.bincount(self.y, minlength=C).astype(float)
        self.log_joint = np.tile(np.log((class_counts + self.m / C) / (N + self.m)), (N, 1))
        self.attr_counts = []  # N(x_i, c), (card_i, C)
        for i in range(n):
            ac = np.bincount(self.X[:, i] * C + self.y, minlength=self.cards[i] * C).reshape(self.cards[i], C)
            self.attr_counts.append(ac.astype(float))
            base = np.log((ac + self.m / self.cards[i]) / (class_counts + self.m))
            self.log_joint += base[self.X[:, i]]
        self.pairs, offsets, self.pair_counts = pair_class_counts(self.X, self.y, self.cards, C)
        self.pair_offsets = offsets
        self.class_counts = class_counts
        pi = np.array([p[0] for p in self.pairs], dtype=np.int64).reshape(-1)
        pj = np.array([p[1] for p in self.pairs], dtype=np.int64).reshape(-1)
        # ordered pair 2k: child pairs[k][0], parent pairs[k][1]; 2k + 1: the reverse
        self.oid = np.full((n, n), -1, dtype=np.int64)
        k = np.arange(len(self.pairs), dtype=np.int64)
        self.oid[pi, pj] = 2 * k
        self.oid[pj, pi] = 2 * k + 1
        self.delta = np.empty(2 * offsets[-1])
        self.delta_offsets = np.empty(2 * len(self.pairs), dtype=np.int64)
        self.spread = np.empty(2 * len(self.pairs))
        self.local_spread = np.zeros(2 * offsets[-1] // C)
        _delta_tables(self.pair_counts, offsets, pi, pj, self.cards, C, self.m, self.delta, self.delta_offsets,
                      self.spread, self.local_spread)
        self.parent = np.full(n, -1, dtype=np.int64)
        self.n_evaluations = 0

    def class_conditional_mi(self) -> np.ndarray:
        """I(X_i; X_j | C) of every attribute pair, from the scorer's pair counts.

        Returns
        -------
        ndarray of shape (n, n)
            As :func:`~bncbench.bn.counts.conditional_mutual_information`.
        """
        return cmi_from_pair_counts(self.pairs, self.pair_offsets, self.pair_counts, self.cards, self.class_counts,
                                    self.cards.size)

    @property
    def n_correct(self) -> int:
        """Training instances the current network classifies correctly (argmax, first on ties)."""
        return int(np.sum(np.argmax(self.log_joint, axis=1) == self.y))

    def delta_table(self, child: int, parent: int) -> np.ndarray:
        """``D[x_child, x_parent, c]`` of the arc ``parent -> child`` (see the module docstring).

        Parameters
        ----------
        child, parent : int
            The arc's attributes.

        Returns
        -------
        ndarray of shape (cards[child], cards[parent], n_classes)
            A view into the flat tables.
        """
        o = self.delta_offsets[self.oid[child, parent]]
        size = self.cards[child] * self.cards[parent] * self.n_classes
        return self.delta[o : o + size].reshape(self.cards[child], self.cards[parent], self.n_classes)

    def score(self, children: np.ndarray, parents: np.ndarray) -> np.ndarray:
        """Correctly classified training instances after adding each candidate arc alone.

        Parameters
        ----------
        children, parents : ndarray of int, same shape
            Candidate arcs ``parents[q] -> children[q]``; every child must be parentless now.

        Returns
        -------
        ndarray of int
            Per candidate, the number of training instances classified correctly.
        """
        children = np.ascontiguousarray(children, dtype=np.int64).reshape(-1)
        parents = np.ascontiguousarray(parents, dtype=np.int64).reshape(-1)
        assert np.all(self.parent[children] < 0), "a candidate's child already has a parent"
        L = self.log_joint
        rows = np.arange(L.shape[0])
        true = L[rows, self.y]
        other = L.copy()
        other[rows, self.y] = -np.inf
        margin = true - other.max(axis=1)
        order = np.argsort(np.abs(margin), kind="stable")
        absm = np.abs(margin)[order]
        good = (margin[order] > 0).astype(np.int64)
        suffix = np.zeros(good.size + 1, dtype=np.int64)
        suffix[:-1] = np.cumsum(good[::-1])[::-1]
        oids = self.oid[children, parents]
        out = np.empty(children.size, dtype=np.int64)
        # only the instances some candidate may flip, their columns copied contiguous in |margin| order
        top = order[: np.searchsorted(absm, self.spread[oids].max(initial=0.0) + MARGIN_TOL, side="right")]
        cols = np.unique(np.concatenate([children, parents]))
        colmap = np.full(self.cards.size, -1, dtype=np.int64)
        colmap[cols] = np.arange(cols.size)
        Xs = self.XT[cols][:, top]
        _score_candidates(Xs, colmap, self.y[top], np.ascontiguousarray(L[top]), absm, good, suffix, children,
                          parents, oids, self.delta, self.delta_offsets, self.spread, self.local_spread, self.cards,
                          MARGIN_TOL, out)
        self.n_evaluations += children.size
        return out

    def add(self, child: int, parent: int) -> None:
        """Add the arc ``parent -> child`` (``child`` parentless) and update the log joint.

        Parameters
        ----------
        child, parent : int
            The arc.
        """
        assert self.parent[child] < 0 and child != parent
        D = self.delta_table(child, parent)
        self.log_joint = self.log_joint + D[self.X[:, child], self.X[:, parent]]
        self.parent[child] = parent

    def root(self) -> np.ndarray:
        """The root of every attribute's tree in the current forest.

        Returns
        -------
        ndarray of shape (n,) of int
        """
        r = np.arange(self.parent.size)
        for _ in range(self.parent.size):
            nxt = np.where(self.parent[r] >= 0, self.parent[r], r)
            if np.array_equal(nxt, r):
                break
            r = nxt
        return r

    def parent_lists(self) -> list:
        """The current network as parent lists: ``()`` or ``(parent,)`` per attribute."""
        return [() if p < 0 else (int(p),) for p in self.parent]


@numba.njit(cache=True, nogil=True)
def _delta_tables(counts, offsets, pi, pj, cards, C, m, delta, doff, spread, lspread):  # pragma: no cover
    """Fill ``delta`` with D of both arcs of every pair, each arc's spread over seen (x_i, x_j), and
    ``lspread`` with the spread ``max_c D - min_c D`` of every (x_i, x_j) (at ``delta``'s index / C)."""
    for k in range(pi.shape[0]):
        i, j = pi[k], pj[k]
        ci, cj = cards[i], cards[j]
        base = offsets[k]
        size = ci * cj * C
        o1 = 2 * base  # child i, parent j: [a, b, c]
        o2 = 2 * base + size  # child j, parent i: [b, a, c]
        doff[2 * k] = o1
        doff[2 * k + 1] = o2
        ni = np.zeros((ci, C))  # N(x_i, c)
        nj = np.zeros((cj, C))  # N(x_j, c)
        ncls = np.zeros(C)
        for a in range(ci):
            for b in range(cj):
                for c in range(C):
                    t = counts[base + (a * cj + b) * C + c]
                    ni[a, c] += t
                    nj[b, c] += t
                    ncls[c] += t
        s1 = 0.0
        s2 = 0.0
        for a in range(ci):
            for b in range(cj):
                seen = 0.0
                lo1, hi1, lo2, hi2 = np.inf, -np.inf, np.inf, -np.inf
                for c in range(C):
                    t = counts[base + (a * cj + b) * C + c]
                    seen += t
                    d1 = 0.0
                    if nj[b, c] > 0:
                        d1 = (np.log((t + m / ci) / (nj[b, c] + m))
                              - np.log((ni[a, c] + m / ci) / (ncls[c] + m)))
                    d2 = 0.0
                    if ni[a, c] > 0:
                        d2 = (np.log((t + m / cj) / (ni[a, c] + m))
                              - np.log((nj[b, c] + m / cj) / (ncls[c] + m)))
                    delta[o1 + (a * cj + b) * C + c] = d1
                    delta[o2 + (b * ci + a) * C + c] = d2
                    lo1, hi1 = min(lo1, d1), max(hi1, d1)
                    lo2, hi2 = min(lo2, d2), max(hi2, d2)
                lspread[(o1 + (a * cj + b) * C) // C] = hi1 - lo1
                lspread[(o2 + (b * ci + a) * C) // C] = hi2 - lo2
                if seen > 0:
                    s1 = max(s1, hi1 - lo1)
                    s2 = max(s2, hi2 - lo2)
        spread[2 * k] = s1
        spread[2 * k + 1] = s2


@numba.njit(cache=True, nogil=True)
def _score_candidates(Xs, colmap, ys, Ls, absm, good, suffix, children, parents, oids, delta, doff, spread, lspread,
                      cards, tol, out):  # pragma: no cover - compiled
    """Per candidate: the instances it cannot flip from the suffix sum, the others rescored.

    ``Xs[colmap[a], t]``, ``ys[t]`` and ``Ls[t]`` are the code of attribute ``a``, the class and the
    log joint of the instance of rank ``t`` in increasing |margin| (``absm[t]``).
    """
    C = Ls.shape[1]
    for q in range(children.shape[0]):
        i, j, o = children[q], parents[q], oids[q]
        p = np.searchsorted(absm, spread[o] + tol, side="right")
        cnt = suffix[p]
        cj = cards[j]
        base = doff[o]
        xi = Xs[colmap[i]]
        xj = Xs[colmap[j]]
        for t in range(p):
            row = base + (xi[t] * cj + xj[t]) * C
            if absm[t] > lspread[row // C] + tol:  # this instance's (x_i, x_j) cannot flip it
                cnt += good[t]
                continue
            best = 0
            bv = Ls[t, 0] + delta[row]
            for c in range(1, C):
                v = Ls[t, c] + delta[row + c]
                if v > bv:
                    bv = v
                    best = c
            if best == ys[t]:
                cnt += 1
        out[q] = cnt
