"""Count tables of a Bayesian network classifier and their generative estimates.

Every attribute ``i`` with ordered attribute parents ``pi_i = (p_1, ..., p_k)``
is a *factor*. For each factor and each prefix length ``l = 0..k`` we keep
the counts ``N(x_i, y, p_1..p_l)`` for the parent configurations seen in
training only (sorted mixed-radix keys), so that a KDB-5 table over
high-cardinality attributes costs memory proportional to the data, not to
the product of the cardinalities.

The m-estimate (MAP with a uniform Dirichlet prior of total mass ``m``)::

    theta(x | y, pi) = (N(x, y, pi) + m / |X|) / (N(y, pi) + m)

and the class prior ``(N(y) + m / |Y|) / (N + m)``. At prediction time a
parent configuration with no training data for class ``y`` backs off to the
longest prefix of the parents that has data (Petitjean et al. 2018, §6.1);
an attribute value never seen in the declared range (code < 0 or >= card)
contributes nothing to any class.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bncbench.counts import mixed_radix

DENSE_LIMIT = 1 << 21
"""Dense count tables up to this many entries (or DENSE_PER_ROW per training row) use a direct ``bincount``."""
DENSE_PER_ROW = 8


@dataclass
class Level:
    """Counts of one factor at one parent-prefix length."""

    keys: np.ndarray  # sorted int64 mixed-radix codes of the seen prefix configurations
    counts: np.ndarray  # float64 (n_keys, n_classes, card)

    @property
    def n_keys(self) -> int:
        return int(self.keys.shape[0])

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """Row of each code in ``keys``; -1 where the configuration was not seen."""
        pos = np.searchsorted(self.keys, codes)
        pos = np.minimum(pos, max(self.n_keys - 1, 0))
        found = (codes >= 0) & (self.keys[pos] == codes) if self.n_keys else np.zeros(codes.shape, bool)
        return np.where(found, pos, -1)


@dataclass
class Factor:
    child: int
    parents: tuple
    card: int
    levels: list = field(default_factory=list)  # Level for prefix lengths 0..len(parents)


class CountTables:
    """Counts for a structure, fitted on integer codes.

    Parameters
    ----------
    structure : list of tuple of int
        Attribute parents per attribute (class implicit).
    cards : array-like of int
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    """

    def __init__(self, structure, cards, n_classes: int):
        self.structure = [tuple(p) for p in structure]
        self.cards = np.asarray(cards, dtype=np.int64)
        self.n_classes = int(n_classes)

    def fit(self, X: np.ndarray, y: np.ndarray) -> "CountTables":
        X = np.asarray(X)
        y = np.asarray(y, dtype=np.int64)
        Y = self.n_classes
        self.class_counts = np.bincount(y, minlength=Y).astype(float)
        self.n = float(y.shape[0])
        self.factors = []
        for i, parents in enumerate(self.structure):
            card = int(self.cards[i])
            pcards = [int(self.cards[p]) for p in parents]
            x = X[:, i].astype(np.int64, copy=False)
            cfg = mixed_radix(X, parents, self.cards)
            ok = (x >= 0) & (x < card) & (cfg >= 0)
            space = int(np.prod(pcards, dtype=np.int64)) if parents else 1
            if space * Y * card <= max(DENSE_LIMIT, DENSE_PER_ROW * X.shape[0]):
                dense = np.bincount(
                    (cfg[ok] * Y + y[ok]) * card + x[ok], minlength=space * Y * card
                ).astype(float).reshape(space, Y, card)
                levels = _dense_levels(dense, pcards)
            else:
                keys, inv = np.unique(cfg[ok], return_inverse=True)
                counts = np.bincount(
                    (inv * Y + y[ok]) * card + x[ok], minlength=keys.size * Y * card
                ).astype(float).reshape(keys.size, Y, card)
                levels = _sparse_levels(keys, counts, pcards)
            self.factors.append(Factor(i, parents, card, levels))
        return self

    # ------------------------------------------------------------------ estimates
    def log_prior(self, m: float) -> np.ndarray:
        Y = self.n_classes
        return np.log((self.class_counts + m / Y) / (self.n + m))

    def log_theta(self, factor: Factor, level: int, m: float) -> np.ndarray:
        """m-estimate log theta[key, y, x] of a factor at a prefix level."""
        c = factor.levels[level].counts
        return np.log((c + m / factor.card) / (c.sum(axis=2, keepdims=True) + m))

    def n_parameters(self) -> int:
        """Free parameters of the full-depth tables: sum of |keys| * |Y| * (|X_i| - 1), plus |Y| - 1."""
        Y = self.n_classes
        return int(sum(f.levels[-1].n_keys * Y * (f.card - 1) for f in self.factors) + Y - 1)

    def factor_log_theta(self, X: np.ndarray, factor: Factor, m: float, log_thetas=None) -> np.ndarray:
        """log theta(x_i | y, pi_i) for every instance and class, with back-off: (N, Y)."""
        N, Y = X.shape[0], self.n_classes
        x = X[:, factor.child].astype(np.int64, copy=False)
        xok = (x >= 0) & (x < factor.card)
        xs = np.where(xok, x, 0)
        out = np.zeros((N, Y))
        for lev, level in enumerate(factor.levels):
            lt = log_thetas[lev] if log_thetas is not None else self.log_theta(factor, lev, m)
            cfg = mixed_radix(X, factor.parents[:lev], self.cards)
            row = level.lookup(cfg) if lev else np.full(N, 0 if level.n_keys else -1, dtype=np.int64)
            use = xok & (row >= 0)
            if not use.any():
                break  # deeper prefixes cannot have data where this one has none
            r, xv = row[use], xs[use]
            vals = lt[r, :, xv]  # (n_use, Y)
            if lev == 0:
                out[use] = vals
            else:
                has = level.counts[r].sum(axis=2) > 0  # N(y, prefix) > 0
                out[use] = np.where(has, vals, out[use])
        return out

    def log_joint(self, X: np.ndarray, m: float) -> np.ndarray:
        """log P(y, x) up to terms of back-off, for every instance and class: (N, Y)."""
        X = np.asarray(X)
        out = np.tile(self.log_prior(m), (X.shape[0], 1))
        for f in self.factors:
            out += self.factor_log_theta(X, f, m)
        return out


def _dense_levels(dense: np.ndarray, pcards: list) -> list:
    """Compact per-level tables from a dense full-depth table (space, Y, card)."""
    levels = []
    cur = dense
    tables = [cur]
    for c in reversed(pcards):  # sum out the last parent repeatedly
        cur = cur.reshape(-1, c, *cur.shape[1:]).sum(axis=1)
        tables.append(cur)
    for t in reversed(tables):
        seen = np.flatnonzero(t.sum(axis=(1, 2)) > 0)
        levels.append(Level(seen.astype(np.int64), t[seen]))
    return levels


def _sparse_levels(keys: np.ndarray, counts: np.ndarray, pcards: list) -> list:
    """Per-level tables from sorted sparse full-depth keys by successive aggregation."""
    levels = [Level(keys.astype(np.int64), counts)]
    for c in reversed(pcards):
        k = levels[0].keys // c
        if k.size:
            starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
            agg = np.add.reduceat(levels[0].counts, starts, axis=0)
            levels.insert(0, Level(k[starts], agg))
        else:
            levels.insert(0, Level(k, levels[0].counts[:0]))
    return levels
