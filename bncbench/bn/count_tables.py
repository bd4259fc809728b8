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
parent configuration without training data backs off to a shorter prefix of
the parents (Petitjean et al. 2018, §6: "if zero counts are found, we back off
as many levels in the tree as necessary to find at least one count"), by one
of two rules (:data:`BACKOFF_RULES`, the tables' ``backoff``):

* ``"per_class"`` (the default): class ``y`` takes the longest prefix with
  ``N(y, prefix) > 0``, so classes of one instance may use different depths;
* ``"any_class"`` (the authors' C++ learner, "Gigal", of Martínez et al. 2016 and
  Petitjean et al. 2018): the longest prefix seen in training with *any* class,
  used for every class; a class without data there gets ``(0 + m/|X|) / (0 + m)``,
  i.e. ``1/|X|``.

The two differ only where some class is unseen under a parent configuration
that another class has. An attribute value never seen in the declared range
(code < 0 or >= card) contributes nothing to any class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numba
import numpy as np

from bncbench.bn.counts import find_sorted, mixed_radix
from bncbench.bn.flat import offsets_of
from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

BACKOFF_RULES = ("per_class", "any_class")
"""The back-off rules of the m-estimate (see the module docstring); the first is the default."""

DENSE_LIMIT = 1 << 16
"""Dense count tables up to this many entries (or DENSE_PER_ROW per training row) use a direct ``bincount``;
larger ones count the seen configurations only (adult's KDB-5 tables of up to 1.2 M entries over 24 k rows:
fit + predict 0.108 -> 0.070 s of CPU with 2**21 -> 2**16 here; same counts)."""
DENSE_PER_ROW = 8
ONE_PASS_LIMIT = 1 << 22
"""Dense tables of all factors with small parent spaces are counted in one compiled pass over
the data while their summed size stays below this many entries."""
RESOLVED_DENSE_LIMIT = 1 << 21
"""At prediction time a prefix level whose full configuration space has at most this many
entries (and is not much larger than its seen part) is indexed directly; larger ones by
binary search over the seen keys."""


@dataclass
class Level:
    """Counts of one factor at one parent-prefix length.

    Attributes
    ----------
    keys : ndarray of shape (n_keys,)
        Sorted int64 mixed-radix codes of the prefix configurations seen in training (level 0 has
        the single key 0 when the factor has any count, none otherwise).
    counts : ndarray of shape (n_keys, n_classes, card)
        Float64 counts ``N(key, y, x)`` of the factor's attribute values.
    """

    keys: np.ndarray  # sorted int64 mixed-radix codes of the seen prefix configurations
    counts: np.ndarray  # float64 (n_keys, n_classes, card)

    @property
    def n_keys(self) -> int:
        """Number of seen prefix configurations (rows of ``counts``).

        Returns
        -------
        int
            ``len(keys)``.
        """
        return int(self.keys.shape[0])

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """Row of each code in ``keys``; -1 where the configuration was not seen.

        Parameters
        ----------
        codes : ndarray of shape (N,)
            Mixed-radix configuration codes (int64); negative codes (values out of range) are not seen.

        Returns
        -------
        ndarray of shape (N,)
            The row of ``keys``/``counts`` holding each code, or -1.
        """
        pos = np.searchsorted(self.keys, codes)
        pos = np.minimum(pos, max(self.n_keys - 1, 0))
        found = (codes >= 0) & (self.keys[pos] == codes) if self.n_keys else np.zeros(codes.shape, bool)
        return np.where(found, pos, -1)


@dataclass
class Factor:
    """One attribute with its ordered attribute parents and its count levels.

    Attributes
    ----------
    child : int
        The attribute.
    parents : tuple of int
        Its attribute parents, in order (the class is a parent implicitly).
    card : int
        Its cardinality.
    levels : list of Level
        Counts for the parent prefixes of lengths ``0..len(parents)``, shortest first.
    """
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
    backoff : {"per_class", "any_class"}, default="per_class"
        Back-off rule of every estimate read from the tables (:data:`BACKOFF_RULES`).

    Attributes
    ----------
    structure : list of tuple of int
        As given.
    cards : ndarray of shape (n,)
        Cardinalities (int64).
    n_classes : int
        Number of classes.
    backoff : str
        As given.
    class_counts : ndarray of shape (n_classes,)
        ``N(y)`` (float); set by :meth:`fit`.
    n : float
        Number of training rows; set by :meth:`fit`.
    factors : list of Factor
        One per attribute, in attribute order; set by :meth:`fit`.
    """

    backoff = BACKOFF_RULES[0]  # tables pickled before the rule existed back off per class

    def __init__(self, structure: Sequence[Sequence[int]], cards: ArrayLike, n_classes: int,
                 backoff: str = BACKOFF_RULES[0]) -> None:
        """Store the structure; counting is done by :meth:`fit`.

        Parameters
        ----------
        structure : sequence of sequence of int
            Attribute parents per attribute (class implicit), in prefix order.
        cards : array-like of int
            Cardinality of each attribute.
        n_classes : int
            Number of classes.
        backoff : {"per_class", "any_class"}, default="per_class"
            Back-off rule (:data:`BACKOFF_RULES`).

        Raises
        ------
        BNCBenchError
            If ``backoff`` is not one of :data:`BACKOFF_RULES`.
        """
        if backoff not in BACKOFF_RULES:
            raise BNCBenchError(f"unknown back-off rule {backoff!r}; known: {', '.join(BACKOFF_RULES)}")
        self.structure = [tuple(p) for p in structure]
        self.cards = np.asarray(cards, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.backoff = backoff

    def fit(self, X: np.ndarray, y: np.ndarray) -> "CountTables":
        """Count every factor at every prefix length of its parents.

        A row is counted for a factor only where the attribute's value and all of its parents' values
        lie in ``[0, card)``; the class counts use every row.

        Parameters
        ----------
        X : ndarray of shape (N, n)
            Integer attribute codes.
        y : ndarray of shape (N,)
            Class codes in ``[0, n_classes)`` (not checked).

        Returns
        -------
        CountTables
            ``self``, with ``class_counts``, ``n`` and ``factors`` set.
        """
        X = np.asarray(X)
        y = np.asarray(y, dtype=np.int64)
        Y = self.n_classes
        self.class_counts = np.bincount(y, minlength=Y).astype(float)
        self.n = float(y.shape[0])
        self.factors = []
        one_pass = self._one_pass_counts(X, y)
        for i, parents in enumerate(self.structure):
            card = int(self.cards[i])
            pcards = [int(self.cards[p]) for p in parents]
            space = int(np.prod(pcards, dtype=np.int64)) if parents else 1
            if i in one_pass:
                levels = _dense_levels(one_pass[i].astype(float).reshape(space, Y, card), pcards)
                self.factors.append(Factor(i, parents, card, levels))
                continue
            x = X[:, i].astype(np.int64, copy=False)
            cfg = mixed_radix(X, parents, self.cards)
            ok = (x >= 0) & (x < card) & (cfg >= 0)
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

    def _one_pass_counts(self, X: np.ndarray, y: np.ndarray) -> dict:
        """Dense full-depth counts ``N(cfg, y, x)`` (int64, flat) of the factors with small tables.

        One compiled pass over the rows counts every such factor at once (the
        same counts as the per-factor ``bincount``); returns {attribute: counts}.
        """
        Y, N = self.n_classes, X.shape[0]
        if N == 0 or X.ndim != 2 or X.dtype.kind not in "iu" or y.min() < 0 or y.max() >= Y:
            return {}
        chosen, sizes, total = [], [], 0
        for i, parents in enumerate(self.structure):
            size = math.prod(int(self.cards[p]) for p in parents) * Y * int(self.cards[i])  # (exact: no int64 wrap)
            if size <= max(DENSE_LIMIT, DENSE_PER_ROW * N) and total + size <= ONE_PASS_LIMIT:
                chosen.append(i)
                sizes.append(size)
                total += size
        if not chosen:
            return {}
        child, par, npar, pcard = _factor_arrays(self.structure, self.cards, chosen)
        card = self.cards[chosen].astype(np.int64)
        offsets = offsets_of(sizes)
        counts = _count_factors(X, y, Y, child, card, par, npar, pcard, offsets)
        return {i: counts[offsets[j] : offsets[j + 1]] for j, i in enumerate(chosen)}

    # ------------------------------------------------------------------ estimates
    def log_prior(self, m: float) -> np.ndarray:
        """Log of the m-estimate of the class prior, ``(N(y) + m / |Y|) / (N + m)``.

        Parameters
        ----------
        m : float
            Total mass of the uniform Dirichlet prior; 0 gives the maximum likelihood estimate
            (``-inf`` for an unseen class).

        Returns
        -------
        ndarray of shape (n_classes,)
            Log class prior.
        """
        Y = self.n_classes
        with np.errstate(divide="ignore", invalid="ignore"):  # m = 0 (MLE): log 0 = -inf is meant
            return np.log((self.class_counts + m / Y) / (self.n + m))

    def log_theta(self, factor: Factor, level: int, m: float) -> np.ndarray:
        """m-estimate log theta[key, y, x] of a factor at a prefix level.

        Parameters
        ----------
        factor : Factor
            One of :attr:`factors`.
        level : int
            Prefix length, in ``[0, len(factor.parents)]``.
        m : float
            Total mass of the uniform Dirichlet prior (0: maximum likelihood, ``-inf``/NaN for
            unseen cells).

        Returns
        -------
        ndarray of shape (n_keys, n_classes, card)
            ``log((N(key, y, x) + m / card) / (N(key, y) + m))`` per seen configuration; with
            :attr:`backoff` ``"any_class"``, ``-log(card)`` where ``N(key, y) = 0`` (what any
            ``m > 0`` gives, and its limit for ``m = 0``).
        """
        c = factor.levels[level].counts
        total = c.sum(axis=2, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):  # m = 0 (MLE): log 0 = -inf is meant
            lt = np.log((c + m / factor.card) / (total + m))
        if self.backoff == "any_class":  # a class without data where another has some: 1/|X| (m > 0 gives it;
            lt = np.where(total > 0, lt, -np.log(factor.card))  # m = 0 would give 0/0, its limit is 1/|X|)
        return lt

    def n_parameters(self) -> int:
        """Free parameters of the full-depth tables: sum of |keys| * |Y| * (|X_i| - 1), plus |Y| - 1."""
        Y = self.n_classes
        return int(sum(f.levels[-1].n_keys * Y * (f.card - 1) for f in self.factors) + Y - 1)

    def factor_log_theta(self, X: np.ndarray, factor: Factor, m: float,
                         log_thetas: Sequence[np.ndarray] | None = None) -> np.ndarray:
        """log theta(x_i | y, pi_i) for every instance and class, with back-off: (N, Y).

        With :attr:`backoff` ``"per_class"`` each class takes the estimate of the longest parent
        prefix whose configuration was seen in training with ``N(y, prefix) > 0`` (level 0
        otherwise); with ``"any_class"`` every class takes the longest prefix seen with any class.
        A row whose value of the factor's attribute is outside ``[0, card)`` gets 0 for every
        class (contributes nothing).

        Parameters
        ----------
        X : ndarray of shape (N, n)
            Integer attribute codes.
        factor : Factor
            One of :attr:`factors`.
        m : float
            Total mass of the Dirichlet prior of the m-estimate.
        log_thetas : sequence of ndarray, optional
            Per prefix level, a table shaped like :meth:`log_theta`'s to use instead of the
            m-estimate (``m`` is then not read).

        Returns
        -------
        ndarray of shape (N, n_classes)
            Log conditional probabilities (0 where the value is unknown).
        """
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
            elif self.backoff == "any_class":
                out[use] = vals  # seen with some class: every class uses this prefix
            else:
                has = level.counts[r].sum(axis=2) > 0  # N(y, prefix) > 0
                out[use] = np.where(has, vals, out[use])
        return out

    def log_joint(self, X: np.ndarray, m: float) -> np.ndarray:
        """log P(y, x) up to terms of back-off, for every instance and class: (N, Y).

        The same values as summing :meth:`factor_log_theta` over the factors
        (in factor order, onto the log prior), computed by one compiled pass
        over the rows from per-level tables with the back-off already resolved.

        Parameters
        ----------
        X : ndarray of shape (N, n)
            Attribute codes; non-integer input (or fewer columns than factors) takes the slower
            per-factor path.
        m : float
            Total mass of the Dirichlet prior of the m-estimate.

        Returns
        -------
        ndarray of shape (N, n_classes)
            Unnormalized log joint probabilities.
        """
        X = np.asarray(X)
        if X.ndim != 2 or X.dtype.kind not in "iub" or X.shape[1] < len(self.factors):
            out = np.tile(self.log_prior(m), (X.shape[0], 1))
            for f in self.factors:
                out += self.factor_log_theta(X, f, m)
            return out
        X = X.astype(np.int64, copy=False)
        prior = self.log_prior(m)
        if not self.factors or X.shape[0] == 0:
            return np.tile(prior, (X.shape[0], 1))
        idx = list(range(len(self.factors)))
        structure = [f.parents for f in self.factors]
        child, par, npar, pcard = _factor_arrays(structure, self.cards, idx)
        child[:] = [f.child for f in self.factors]
        card = np.array([f.card for f in self.factors], dtype=np.int64)
        depth = par.shape[1] + 1
        toff = np.zeros((len(self.factors), depth), dtype=np.int64)
        dense = np.zeros((len(self.factors), depth), dtype=np.bool_)
        koff = np.zeros((len(self.factors), depth), dtype=np.int64)
        knum = np.zeros((len(self.factors), depth), dtype=np.int64)
        tabs, keys, tpos, kpos = [], [], 0, 0
        for fi, f in enumerate(self.factors):
            for lev, (is_dense, ks, tab) in enumerate(self._resolved_levels(f, m)):
                toff[fi, lev], dense[fi, lev] = tpos, is_dense
                tabs.append(tab.reshape(-1))
                tpos += tab.size
                if not is_dense:
                    koff[fi, lev], knum[fi, lev] = kpos, ks.size
                    keys.append(ks)
                    kpos += ks.size
        T = np.concatenate(tabs)
        K = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
        return _log_joint_kernel(X, prior, child, card, par, npar, pcard, T, toff, dense, K, koff, knum)

    def _resolved_levels(self, factor: Factor, m: float) -> list:
        """Per prefix level: (dense?, keys, table[row, x, y]) of log theta with the back-off resolved.

        A dense level has one row per configuration of its prefix (unseen ones
        hold the values of their prefix); a sparse level one row per seen key.
        Level 0 is used as is; at a deeper level class ``y`` of a seen
        configuration takes the level's own estimate when ``N(y, prefix) > 0``
        (every class, with :attr:`backoff` ``"any_class"``) and its prefix's
        resolved value otherwise.
        """
        Y, card = self.n_classes, factor.card
        pcards = [int(self.cards[p]) for p in factor.parents]
        out = []
        prev = None
        for lev, level in enumerate(factor.levels):
            lt = self.log_theta(factor, lev, m).transpose(0, 2, 1)  # (keys, card, Y)
            if lev == 0:
                tab = lt[:1].copy() if level.n_keys else np.zeros((1, card, Y))
                out.append((True, level.keys, tab))
                prev = tab
                continue
            pc = pcards[lev - 1]
            space = int(np.prod(pcards[:lev], dtype=np.int64))
            if self.backoff == "any_class":
                has = np.ones((level.n_keys, 1, 1), dtype=bool)  # a seen configuration serves every class
            else:
                has = (level.counts.sum(axis=2) > 0)[:, None, :]  # (keys, 1, Y)
            prev_dense, prev_keys = out[-1][0], out[-1][1]
            size = space * card * Y
            if prev_dense and size <= min(RESOLVED_DENSE_LIMIT, max(1 << 16, 8 * level.n_keys * card * Y)):
                tab = np.repeat(prev, pc, axis=0)
                if level.n_keys:
                    tab[level.keys] = np.where(has, lt, tab[level.keys])
                out.append((True, level.keys, tab))
            else:
                pkey = level.keys // pc
                prow = pkey if prev_dense else np.searchsorted(prev_keys, pkey)
                tab = np.where(has, lt, prev[prow]) if level.n_keys else np.zeros((0, card, Y))
                out.append((False, level.keys.astype(np.int64), tab))
            prev = tab
        return out


def _factor_arrays(structure, cards, which):
    """Child, padded parent indices, parent counts and parent cardinalities of the chosen factors."""
    depth = max([len(structure[i]) for i in which] + [1])
    child = np.array(which, dtype=np.int64)
    par = np.zeros((len(which), depth), dtype=np.int64)
    pcard = np.ones((len(which), depth), dtype=np.int64)
    npar = np.zeros(len(which), dtype=np.int64)
    for j, i in enumerate(which):
        ps = structure[i]
        npar[j] = len(ps)
        par[j, : len(ps)] = ps
        pcard[j, : len(ps)] = [int(cards[p]) for p in ps]
    return child, par, npar, pcard


@numba.njit(cache=True, nogil=True)
def _count_factors(X, y, Y, child, card, par, npar, pcard, offsets):  # pragma: no cover - compiled
    counts = np.zeros(offsets[-1], dtype=np.int64)
    for r in range(X.shape[0]):
        yr = y[r]
        for f in range(child.shape[0]):
            x = X[r, child[f]]
            if x < 0 or x >= card[f]:
                continue
            cfg = 0
            ok = True
            for j in range(npar[f]):
                v = X[r, par[f, j]]
                if v < 0 or v >= pcard[f, j]:
                    ok = False
                    break
                cfg = cfg * pcard[f, j] + v
            if ok:
                counts[offsets[f] + (cfg * Y + yr) * card[f] + x] += 1
    return counts


@numba.njit(cache=True, nogil=True)
def _log_joint_kernel(X, prior, child, card, par, npar, pcard, T, toff, dense, K, koff, knum):  # pragma: no cover
    N, Y = X.shape[0], prior.shape[0]
    out = np.empty((N, Y))
    acc = np.empty(Y)
    for r in range(N):
        for c in range(Y):
            acc[c] = prior[c]
        for f in range(child.shape[0]):
            x = X[r, child[f]]
            if x < 0 or x >= card[f]:
                continue  # an unknown value contributes nothing
            cfg = 0
            lev = 0
            for j in range(npar[f]):  # longest prefix of parents with known values
                v = X[r, par[f, j]]
                if v < 0 or v >= pcard[f, j]:
                    break
                cfg = cfg * pcard[f, j] + v
                lev += 1
            while True:
                if dense[f, lev]:
                    row = cfg
                    break
                i = find_sorted(K, koff[f, lev], koff[f, lev] + knum[f, lev], cfg)
                if i >= 0:
                    row = i - koff[f, lev]
                    break
                lev -= 1  # unseen configuration: back off to the prefix
                cfg = cfg // pcard[f, lev]
            base = toff[f, lev] + (row * card[f] + x) * Y
            for c in range(Y):
                acc[c] += T[base + c]
        for c in range(Y):
            out[r, c] = acc[c]
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
