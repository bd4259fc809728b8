"""HDP estimates of the probability tables of a Bayesian network classifier.

Petitjean, Buntine, Webb & Zaidi (2018), "Accurate parameter estimation for
Bayesian network classifiers using hierarchical Dirichlet processes",
Machine Learning 107, §3-§4 (Algorithms 1-5, Eqs. 7-15). ``docs/hdp.md``
describes the model, every choice we made where the paper is silent or
differs from the authors' Java code, and the measured speed.

For every attribute ``X_c`` (a conditional probability table) we build a
*context tree*: the root is P(X_c), depth 1 branches on the class, depth
``d >= 2`` on the ``(d-1)``-th attribute parent. The parents are ordered by
decreasing I(X_c; X_p | Y) (``parent_order="cmi"``, §3.3; for KDB this is
the order the structure already uses, for a hand-made structure it may not
be). Nodes exist only for the parent configurations seen in training.

The latent pseudo-counts ``t`` of every node are sampled by a collapsed Gibbs
sampler (within +-``window`` of their current value, Eq. 11 and Algorithm 3)
with weights built from ratios of neighbouring unsigned Stirling numbers of
the first kind (two shared tables, grown on demand by a recurrence in ratio
space); concentrations are tied per ``tying`` strategy and
resampled every ``conc_every`` iterations by the Beta/Gamma augmentation
(Algorithm 5, Gamma(2, 1) prior, capped at 4000); the estimates of
Eqs. 12-14 are averaged over every post-burn-in iteration.

Defaults reproduce the authors' reference implementation (github
fpetitjean/HDP): burn-in ``min(1000, iterations // 10)``, concentrations
start at 2, concentration sampled at iterations ``i`` with
``(i + conc_every // 2) % conc_every == 0``, the root's concentration fixed at
2 and its table counts ``t = min(1, n)``, and the class prior the m-estimate
with m = 1 (the reference classifiers' ``xyDist``).

The sampler is compiled with numba and works on flat arrays per tree (node
parent index, counts ``n`` and pseudo-counts ``t`` of shape (n_nodes, card),
concentration group per node); a whole run of one tree is one compiled call.
Trees are independent, so ``n_jobs > 1`` runs them on threads (the compiled
code releases the GIL); each tree has its own random stream derived from
``seed``, so results do not depend on ``n_jobs``.

Public API
----------
``fit_hdp(X, y, structure, cards, n_classes, **options) -> HDPTables``,
``HDPTables.log_joint(X)``, ``HDPTables.factor_log_theta(X, i)``,
``HDPTables.query(i, y, parent_values)``, ``HDPTables.n_parameters()``,
``log_stirling(n, t)``, ``stirling_table(rows, cols)``, ``TYINGS``.
"""

from __future__ import annotations

import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np
from scipy.special import digamma

from bncbench.errors import BNCBenchError

TYINGS = ("level", "single", "same_parent", "none")
"""Concentration tying strategies: one per tree level (the paper's L,
default), one per tree (S), one per set of siblings (SP), one per node."""

ROOT_CONCENTRATION = 2.0
PRIOR_SHAPE = 2.0
PRIOR_RATE = 1.0
CONCENTRATION_CAP = 4000.0
AGG_DEPTH = 32
"""Concentration groups of more than 4 * AGG_DEPTH nodes aggregate their Beta draws (see
``_sample_concentrations``)."""
SMALL_BETA = 8
"""Beta(a, n) draws with an integer n up to this use the product of n Beta(a + i, 1) draws."""
MAX_TABLE_BYTES = 2 << 30
"""Largest pair of Stirling tables (the sampler's two ratio tables, float64) we allocate."""

_FAST = {"nsz", "arcp", "contract", "reassoc"}  # no nnan/ninf: the sampler selects around inf/nan ratios


# --------------------------------------------------------------------------- Stirling numbers
@numba.njit(cache=True, nogil=True)
def _logaddexp(a, b):  # pragma: no cover - compiled
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@numba.njit(cache=True, nogil=True)
def _fill_stirling(table, r0, c0):  # pragma: no cover - compiled
    """Complete ``table[n, t] = log S(n, t)`` outside the valid block [:r0, :c0].

    Recurrence of the unsigned Stirling numbers of the first kind:
    S(n, t) = S(n-1, t-1) + (n-1) S(n-1, t), S(0, 0) = 1.
    """
    rows, cols = table.shape
    for n in range(rows):
        start = c0 if n < r0 else 0
        for t in range(start, cols):
            if n == 0:
                table[n, t] = 0.0 if t == 0 else -np.inf
            elif t == 0 or t > n:
                table[n, t] = -np.inf
            elif n == 1:
                table[n, t] = 0.0  # S(1, 1) = 1
            else:
                table[n, t] = _logaddexp(table[n - 1, t - 1], math.log(n - 1.0) + table[n - 1, t])


@numba.njit(cache=True, nogil=True)
def _fill_ratios(up_t, up_n, r0, c0):  # pragma: no cover - compiled
    """Complete the ratio tables outside the block already filled for ``r0`` x ``c0`` Stirling numbers.

    ``up_t[n, t] = S(n, t+1) / S(n, t)`` and ``up_n[t, n] = S(n+1, t) / S(n, t)``, 0 where
    undefined or zero. Dividing the recurrence S(n, t) = S(n-1, t-1) + (n-1) S(n-1, t) through
    by S(n-1, t) gives, for 1 <= t < n,

        up_t[n, t] = (1 + (n-1) up_t[n-1, t]) / (1 / up_t[n-1, t-1] + (n-1))

    (the first term of the denominator 0 for t = 1), and dividing S(n+1, t) = S(n, t-1) +
    n S(n, t) by S(n, t), up_n[t, n] = n + 1 / up_t[n, t-1] (n for t = 1), 1 <= t <= n.
    Sums and products of positive numbers only: the relative error grows at most linearly
    in n (a few 1e-16 per row).
    """
    rows, cw = up_t.shape  # cw = cols - 1
    for n in range(rows):
        for t in range(max(c0 - 1, 0) if n < r0 else 0, cw):
            if t == 0 or t >= n:
                up_t[n, t] = 0.0
            else:
                inv = 0.0 if t == 1 else 1.0 / up_t[n - 1, t - 1]
                up_t[n, t] = (1.0 + (n - 1) * up_t[n - 1, t]) / (inv + (n - 1))
    for t in range(cw + 1):
        for n in range(max(r0 - 1, 0) if t < c0 else 0, rows - 1):
            if t == 0 or t > n:
                up_n[t, n] = 0.0
            else:
                up_n[t, n] = n + (0.0 if t == 1 else 1.0 / up_t[n, t - 1])


class _StirlingCache:
    """Process-wide Stirling-number tables, grown on demand and shared by every tree.

    The sampler reads ratios of neighbouring Stirling numbers, each table in the
    orientation it reads it in: ``up_t[n, t] = S(n, t+1) / S(n, t)`` (a row of
    the node's n) and ``up_n[t, n] = S(n+1, t) / S(n, t)`` (a row of its
    parent's t). ``log_table[n, t] = log S(n, t)`` is kept apart, for
    :func:`stirling_table` and :func:`log_stirling` only. Growing allocates new
    arrays (the old ones stay valid for whoever holds them), so threads keep
    sampling with the tables they were given; only the new entries are computed.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.up_t = np.zeros((0, 0))
        self.up_n = np.zeros((0, 0))
        self.log_table = np.zeros((0, 0))

    @staticmethod
    def _target(shape, rows, cols):
        r0, c0 = shape
        nr = max(rows, int(r0 * 1.5), 64) if rows > r0 else r0
        nc = max(cols, int(c0 * 1.5), 64) if cols > c0 else c0
        if 2 * nr * nc * 8 > MAX_TABLE_BYTES:
            raise BNCBenchError(f"Stirling tables of {nr} x {nc} entries exceed {MAX_TABLE_BYTES >> 20} MiB")
        return nr, nc

    def ensure(self, rows: int, cols: int):
        """``(up_t, up_n)`` covering S(n, t) for at least ``n < rows``, ``t < cols`` (grown by >= 1.5x)."""
        with self._lock:
            r0, c0 = self.up_t.shape[0], self.up_n.shape[0]
            if rows > r0 or cols > c0:
                nr, nc = self._target((r0, c0), rows, cols)
                up_t = np.empty((nr, nc - 1))
                up_n = np.empty((nc, nr - 1))
                up_t[:r0, : max(c0 - 1, 0)] = self.up_t
                up_n[:c0, : max(r0 - 1, 0)] = self.up_n
                _fill_ratios(up_t, up_n, r0, c0)
                self.up_t, self.up_n = up_t, up_n
            return self.up_t, self.up_n

    def ensure_log(self, rows: int, cols: int) -> np.ndarray:
        """``log_table`` with at least ``rows`` x ``cols`` entries (grown by >= 1.5x)."""
        with self._lock:
            old = self.log_table
            if rows > old.shape[0] or cols > old.shape[1]:
                nr, nc = self._target(old.shape, rows, cols)
                new = np.empty((nr, nc))
                new[: old.shape[0], : old.shape[1]] = old
                _fill_stirling(new, *old.shape)
                self.log_table = new
            return self.log_table


_STIRLING = _StirlingCache()


def stirling_table(rows: int, cols: int) -> np.ndarray:
    """The shared table ``T`` with ``T[n, t] = log S(n, t)`` for ``n < rows, t < cols`` (at least)."""
    return _STIRLING.ensure_log(int(rows), int(cols))


def log_stirling(n: int, t: int) -> float:
    """log of the unsigned Stirling number of the first kind S(n, t) (``-inf`` when it is 0)."""
    return float(stirling_table(n + 1, t + 1)[n, t])


# --------------------------------------------------------------------------- random numbers
@numba.njit(cache=True, nogil=True, inline="always")
def _rotl(x, k):  # pragma: no cover - compiled
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(cache=True, nogil=True)
def _next_u64(s):  # pragma: no cover - compiled
    """xoshiro256** (Blackman & Vigna) on a uint64[4] state."""
    result = _rotl(s[1] * np.uint64(5), 7) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@numba.njit(cache=True, nogil=True)
def _uniform(s):  # pragma: no cover - compiled
    """Uniform on [0, 1) with 53 random bits."""
    return float(_next_u64(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, nogil=True)
def _normal(s):  # pragma: no cover - compiled
    """Standard normal by Marsaglia's polar method."""
    while True:
        u = 2.0 * _uniform(s) - 1.0
        v = 2.0 * _uniform(s) - 1.0
        r = u * u + v * v
        if 0.0 < r < 1.0:
            return u * math.sqrt(-2.0 * math.log(r) / r)


@numba.njit(cache=True, nogil=True)
def _log_gamma_variate(s, a):  # pragma: no cover - compiled
    """log of a Gamma(a, 1) draw (Marsaglia & Tsang 2000; boosted for a < 1)."""
    boost = 0.0
    if a < 1.0:
        boost = math.log(1.0 - _uniform(s)) / a
        a += 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = _normal(s)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - _uniform(s)
        if u < 1.0 - 0.0331 * x * x * x * x or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return math.log(d * v) + boost


@numba.njit(cache=True, nogil=True)
def _log_beta_variate(s, a, b):  # pragma: no cover - compiled
    """log of a Beta(a, b) draw.

    For a small integer b, Beta(a, b) is the product of independent
    Beta(a + i, 1) = U^(1 / (a + i)), i = 0..b-1; otherwise log X - log(X + Y)
    with X ~ Gamma(a), Y ~ Gamma(b).
    """
    if b <= SMALL_BETA and b == math.floor(b):
        acc = 0.0
        for i in range(int(b)):
            acc += math.log(1.0 - _uniform(s)) / (a + i)
        return acc
    lx = _log_gamma_variate(s, a)
    ly = _log_gamma_variate(s, b)
    return lx - _logaddexp(lx, ly)


# --------------------------------------------------------------------------- the sampler
@numba.njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _sweep(pairs, n1, t1, alpha, Nm, Tm, up_t, up_n, recip, roff, rhi, rng, window, w, max_t):  # pragma: no cover
    """One Gibbs sweep over the (node, value) pairs (Eq. 11, Algorithms 3 and 4).

    ``pairs[q] = (flat index of (j, k), flat index of (parent, k), j, parent,
    group of j, group of parent)`` into the flattened ``n`` and ``t``
    (``n1``, ``t1``). Each ``t[j, k]`` is drawn among ``base..top`` (within
    ``window`` of its value and ``1 <= t <= n``) with weight
    ``S(n_jk, t) a_j^t S(n_pk + d, t_pk) / (a_p)^(N_p + d)`` (``d`` the change,
    ``(a)^(m)`` the rising factorial), 0 below ``lo`` where the parent would be
    left with ``n < t``. The weights are built relative to the first candidate
    by successive ratios, ``w(t+1)/w(t) = S(n, t+1)/S(n, t) a_j
    S(n_p+d+1, t_p)/S(n_p+d, t_p) / (a_p + N_p + d)``, from the ratio tables
    and the parent group's reciprocals ``recip[roff[g] + m] = 1 / (a_g + m)``
    (filled for ``m < rhi[g]``, grown here when a parent's total needs more):
    no log, no exp, no division. The loops have no data-dependent exits (the
    draw counts the cumulative sums below ``u``), so the pair order (by n, see
    :func:`_pairs`) makes their trip counts predictable.

    The ``ex`` candidates below ``lo`` get ratio 1 in the chain and weight 1
    in the running total (one mask per step instead of two); the uniform is
    drawn above them, in ``[ex, total)``, so they are never chosen. Array
    indices are cast to unsigned (all are >= 0), which spares numba's
    negative-index wraparound on every table read.
    """
    mt = max_t[0]
    for q in range(pairs.shape[0]):
        f = np.uint64(pairs[q, 0])
        nj = n1[f]
        if nj <= 1:
            continue  # t = n is forced (invariant 1 <= t <= n)
        pf = np.uint64(pairs[q, 1])
        j = np.uint64(pairs[q, 2])
        par = np.uint64(pairs[q, 3])
        gp = np.uint64(pairs[q, 5])
        tj = t1[f]
        npk = n1[pf]
        tpk = t1[pf]
        mp = Nm[par]
        base = max(1, tj - window)
        top = min(nj, tj + window)
        lo = tj - (npk - tpk)  # the parent keeps n >= t
        aj = alpha[np.uint64(pairs[q, 4])]
        if mp + window >= rhi[gp]:
            _grow_reciprocals(alpha, roff, recip, rhi, gp, mp + window + 1)
        rp = roff[gp] + mp  # recip[rp + d] = 1 / (a_p + N_p + d)
        ex = float(max(0, lo - base))  # the stand-in weights of the excluded candidates
        total = 1.0  # w(base) = 1 (a stand-in 1 if excluded)
        chain = 1.0
        for c in range(top - base):
            tc = base + c
            d = tc - tj
            r = (up_t[np.uint64(nj), np.uint64(tc)] * aj * up_n[np.uint64(tpk), np.uint64(npk + d)]
                 * recip[np.uint64(rp + d)])  # read unconditionally: a select, not a branch
            chain *= r if tc >= lo else 1.0  # excluded candidates: ratio 1
            w[c] = total  # cumulative weight of base..tc
            total += chain
        u = ex + _uniform(rng) * (total - ex)
        cnt = 0
        for i in range(top - base):
            cnt += w[i] <= u
        d = base + cnt - tj
        t1[f] = tj + d
        Tm[j] += d
        n1[pf] = npk + d
        Nm[par] = mp + d
        mt = max(mt, tj + d)
    max_t[0] = mt


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fill_reciprocals(alpha, roff, recip, rhi):  # pragma: no cover - compiled
    """``recip[roff[g] + m] = 1 / (alpha[g] + m)`` for ``m < rhi[g]``."""
    for g in range(alpha.shape[0]):
        a = alpha[g]
        o = roff[g]
        for m in range(rhi[g]):
            recip[o + m] = 1.0 / (a + m)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _grow_reciprocals(alpha, roff, recip, rhi, g, need):  # pragma: no cover - compiled
    """Fill group g's reciprocals up to at least ``need`` entries (64 more for headroom,
    at most the group's static size, which always suffices: see :func:`_reciprocal_offsets`)."""
    new = max(rhi[g], min(roff[g + 1] - roff[g], need + 64))
    a = alpha[g]
    o = roff[g]
    for m in range(rhi[g], new):
        recip[o + m] = 1.0 / (a + m)
    rhi[g] = new


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _sample_concentrations(rng, alpha, grp, gsize, agg_row, n_agg, Nm, Tm, rate, shape):  # pragma: no cover
    """Algorithm 5 for every sampled group g >= 1 (group 0, the root's, stays fixed).

    alpha_g ~ Gamma(2 + sum_j t_j, 1 + sum_j -log q_j), q_j ~ Beta(alpha_g, n_j) over the
    nodes j of the group. Beta(a, n) is the product of Beta(a, I) and Beta(a + I, n - I),
    and -log Beta(a, I) = sum_{i<I} E_i / (a + i) with E_i ~ Exp(1); summed over the
    nodes of a large group, the first part is exactly sum_{i<I} Gamma(c_i, 1) / (a + i),
    c_i the number of nodes with n > i. Large groups (``agg_row[g] >= 0``) use this
    (I = AGG_DEPTH draws instead of one Beta per node); small groups draw per node and
    clamp q >= 1e-75 as the reference code.
    """
    G = alpha.shape[0]
    nn = grp.shape[0]
    hist = np.zeros((n_agg, AGG_DEPTH + 1), dtype=np.int64)
    for g in range(G):
        rate[g] = PRIOR_RATE
        shape[g] = PRIOR_SHAPE
    for j in range(1, nn):
        g = grp[j]
        if g == 0:
            continue
        shape[g] += Tm[j]
        nj = Nm[j]
        row = agg_row[g]
        if row >= 0:
            if nj > AGG_DEPTH:
                hist[row, AGG_DEPTH] += 1
                rate[g] -= _log_beta_variate(rng, alpha[g] + AGG_DEPTH, float(nj - AGG_DEPTH))
            else:
                hist[row, nj] += 1
        else:
            lq = _log_beta_variate(rng, alpha[g], float(nj))
            if lq < -172.69388197455342:  # q >= 1e-75
                lq = -172.69388197455342
            rate[g] -= lq
    for g in range(1, G):
        row = agg_row[g]
        if row >= 0:
            c = 0
            for i in range(AGG_DEPTH, 0, -1):  # c = number of nodes with n > i - 1
                c += hist[row, i]
                if c > 0:
                    rate[g] += math.exp(_log_gamma_variate(rng, float(c))) / (alpha[g] + i - 1)
    for g in range(1, G):
        if gsize[g] > 0:
            a = math.exp(_log_gamma_variate(rng, shape[g])) / rate[g]
            alpha[g] = min(CONCENTRATION_CAP, a)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _record(parent, grp, n, Nm, alpha, p, live, psum, inv):  # pragma: no cover - compiled
    """One iteration of Eqs. 12-14 for the nodes whose counts can change (``live``, in
    breadth-first order), added to their block sums ``psum``.

    ``p_root = (n + a/K) / (N + a)``, ``p_j = (n_j + a_j p_parent) / (N_j + a_j)``. The
    other nodes (leaves and frozen internal nodes) are added once per block by
    :func:`_flush`. ``inv`` is scratch for ``1 / (N_j + a_j)``, one vectorisable pass.
    """
    K = n.shape[1]
    m = live.shape[0]
    for i in range(m):
        j = np.uint64(live[i])
        inv[i] = 1.0 / (Nm[j] + alpha[np.uint64(grp[j])])
    start = 0
    if m > 0 and live[0] == 0:  # the root (live unless the whole tree is frozen)
        a = alpha[grp[0]]
        for k in range(K):
            v = (n[0, k] + a / K) * inv[0]
            p[0, k] = v
            psum[0, k] += v
        start = 1
    for i in range(start, m):
        j = np.uint64(live[i])
        a = alpha[np.uint64(grp[j])]
        iv = inv[i]
        par = np.uint64(parent[j])
        for k in range(K):
            v = (n[j, k] + a * p[par, k]) * iv
            p[j, k] = v
            psum[j, k] += v


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _flush(parent, grp, n, Nm, alpha, acc, live, frozen, n_int, psum, cnt):  # pragma: no cover - compiled
    """Add the estimates of the last ``cnt`` recorded iterations to ``acc``; clear ``psum``.

    Live nodes add their block sums. A frozen node's counts never change (a leaf, or an
    internal node whose children's t are all forced by n <= 1) and its concentration is
    constant between two concentration draws, so the sum of ``(n_jk + a p_par,k) / (N_j + a)``
    over the block is ``(cnt n_jk + a sum p_par,k) / (N_j + a)``: frozen internal nodes
    (breadth-first, so a parent's sum is ready) store theirs in ``psum`` for their children,
    then the leaves (nodes ``>= n_int``) use their parents'. The frozen rows of ``psum``
    are overwritten at each flush, so only the live rows are cleared.
    """
    nn, K = n.shape
    if cnt == 0:
        return
    for i in range(live.shape[0]):
        j = live[i]
        for k in range(K):
            acc[j, k] += psum[j, k]
    for i in range(frozen.shape[0]):
        j = frozen[i]
        a = alpha[grp[j]]
        iv = 1.0 / (Nm[j] + a)
        if j == 0:
            for k in range(K):
                v = cnt * (n[0, k] + a / K) * iv
                psum[0, k] = v
                acc[0, k] += v
        else:
            par = parent[j]
            for k in range(K):
                v = (cnt * n[j, k] + a * psum[par, k]) * iv
                psum[j, k] = v
                acc[j, k] += v
    for j in range(n_int, nn):
        a = alpha[grp[j]]
        par = parent[j]
        iv = 1.0 / (Nm[j] + a)
        for k in range(K):
            acc[j, k] += (cnt * n[j, k] + a * psum[par, k]) * iv
    for i in range(live.shape[0]):
        psum[live[i]] = 0.0


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _run_tree(
    parent, grp, gsize, agg_row, n_agg, pairs, n, t, Nm, Tm, alpha, up_t, up_n, roff, rng,
    acc, acc_n, p, psum, live, frozen, n_int, start, n_iter, burn_in, conc_every, window, max_t, one_sweep,
):  # pragma: no cover - compiled
    """Gibbs iterations ``start .. n_iter - 1`` of one context tree.

    Returns the next iteration to run: ``n_iter`` when done, earlier when the
    Stirling tables need more columns (the caller grows them and calls again)
    or after one iteration when ``one_sweep`` (debug mode). The estimates of
    the nodes whose counts can change are computed every iteration, those of
    the others (the leaves and the frozen internal nodes, most of the nodes)
    once per stretch of constant concentrations (:func:`_flush`).
    """
    G = alpha.shape[0]
    cols = up_n.shape[0]
    n1 = n.reshape(-1)
    t1 = t.reshape(-1)
    conc_offset = conc_every // 2
    w = np.empty(2 * window + 1)
    recip = np.empty(roff[G])
    rhi = np.zeros(G, dtype=np.int64)  # reciprocals filled so far, per group (grown by the sweep)
    rate = np.empty(G)
    shape = np.empty(G)
    inv = np.empty(live.shape[0])
    it = start
    blk = 0  # recorded iterations not yet flushed from psum
    while it < n_iter:
        if max_t[0] + window + 1 >= cols:
            break
        # ---- pseudo-counts, deepest nodes first (Algorithms 3 and 4)
        _sweep(pairs, n1, t1, alpha, Nm, Tm, up_t, up_n, recip, roff, rhi, rng, window, w, max_t)
        # ---- concentrations (Algorithm 5): q_j ~ Beta(alpha, n_j), alpha ~ Gamma(2 + sum t, 1 + sum -log q)
        if (it + conc_offset) % conc_every == 0:
            _flush(parent, grp, n, Nm, alpha, acc, live, frozen, n_int, psum, blk)
            blk = 0
            _sample_concentrations(rng, alpha, grp, gsize, agg_row, n_agg, Nm, Tm, rate, shape)
            _fill_reciprocals(alpha, roff, recip, rhi)
        # ---- running estimate (Eqs. 12-14)
        if it >= burn_in:
            _record(parent, grp, n, Nm, alpha, p, live, psum, inv)
            blk += 1
            acc_n[0] += 1
        it += 1
        if one_sweep:
            break
    _flush(parent, grp, n, Nm, alpha, acc, live, frozen, n_int, psum, blk)
    return it


# --------------------------------------------------------------------------- trees
@dataclass
class _Tree:
    """One context tree: nodes in breadth-first order (root first)."""

    child: int
    parents: tuple  # attribute parents in tree order (depth 2, 3, ...)
    card: int
    radices: list  # cardinality of the variable branched on at depth 1, 2, ... (class first)
    keys: list  # keys[d]: sorted int64 mixed-radix codes of the depth-d nodes (keys[0] = [0])
    offsets: np.ndarray  # first node index of each depth
    parent: np.ndarray
    depth: np.ndarray
    n: np.ndarray  # int64 (n_nodes, card)
    t: np.ndarray
    grp: np.ndarray = None
    alpha: np.ndarray = None
    gsize: np.ndarray = None
    rng: np.ndarray = None
    est: np.ndarray = None  # averaged estimates (n_nodes, card)
    data_max: int = 0  # largest count of one child value (bounds every n in the tree)

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(self.keys[-1].shape[0])


def _cmi_order(X, y, cards, n_classes, child, parents):
    """Parents sorted by decreasing I(X_child; X_p | Y) (stable: ties keep the structure order)."""
    if len(parents) < 2:
        return tuple(parents)
    x = X[:, child]
    Kc = int(cards[child])
    scores = []
    for p in parents:
        Kp = int(cards[p])
        xp = X[:, p]
        ok = (x >= 0) & (x < Kc) & (xp >= 0) & (xp < Kp)
        joint = np.bincount((y[ok] * Kp + xp[ok]) * Kc + x[ok], minlength=n_classes * Kp * Kc).astype(float)
        joint = joint.reshape(n_classes, Kp, Kc)
        # N I(X_c; X_p | Y) = sum n(y,p,c) log n(y,p,c) + sum n(y) log n(y) - sum n(y,p) log n(y,p) - sum n(y,c) log n(y,c)
        scores.append(_xlogx(joint) + _xlogx(joint.sum(axis=(1, 2)))
                      - _xlogx(joint.sum(axis=2)) - _xlogx(joint.sum(axis=1)))
    order = np.argsort(-np.asarray(scores), kind="stable")
    return tuple(parents[i] for i in order)


def _xlogx(a):
    a = a[a > 0]
    return float(np.sum(a * np.log(a)))


def _build_tree(X, y, cards, n_classes, child, parents) -> _Tree:
    K = int(cards[child])
    x = X[:, child]
    ok = (x >= 0) & (x < K) & (y >= 0) & (y < n_classes)
    for p in parents:
        ok &= (X[:, p] >= 0) & (X[:, p] < cards[p])
    radices = [int(n_classes)] + [int(cards[p]) for p in parents]
    code = y[ok].astype(np.int64)
    for p in parents:
        code = code * int(cards[p]) + X[ok, p]
    xs = x[ok]
    L = len(radices)
    keys = [None] * (L + 1)
    links = [None] * (L + 1)  # links[d][i]: position at depth d-1 of the parent of node i at depth d
    keys[L], inv = np.unique(code, return_inverse=True)
    leaf_n = np.bincount(inv * K + xs, minlength=keys[L].size * K).reshape(keys[L].size, K)
    for d in range(L, 0, -1):
        up = keys[d] // radices[d - 1]
        keys[d - 1], links[d] = np.unique(up, return_inverse=True)
    if keys[0].size == 0:  # no usable training row: a lone root
        keys[0] = np.zeros(1, dtype=np.int64)
    sizes = np.array([k.size for k in keys], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    nn = int(offsets[-1])
    parent = np.full(nn, -1, dtype=np.int64)
    depth = np.zeros(nn, dtype=np.int64)
    for d in range(1, L + 1):
        parent[offsets[d] : offsets[d + 1]] = offsets[d - 1] + links[d]
        depth[offsets[d] : offsets[d + 1]] = d
    n = np.zeros((nn, K), dtype=np.int64)
    n[offsets[L] :] = leaf_n
    data_max = int(np.bincount(xs, minlength=K).max()) if xs.size else 0
    return _Tree(child, tuple(parents), K, radices, [np.asarray(k, dtype=np.int64) for k in keys],
                 offsets, parent, depth, n, np.zeros_like(n), data_max=data_max)


def _groups(tree: _Tree, tying: str):
    """Concentration group of every node; group 0 is the root's (fixed, never sampled)."""
    nn = tree.n_nodes
    if tying == "level":
        grp = tree.depth.copy()
    elif tying == "single":
        grp = np.minimum(tree.depth, 1)
    elif tying == "same_parent":
        grp = np.zeros(nn, dtype=np.int64)
        grp[1:] = tree.parent[1:] + 1
    elif tying == "none":
        grp = np.arange(nn, dtype=np.int64)
    else:
        raise BNCBenchError(f"unknown tying {tying!r}; choose one of {', '.join(TYINGS)}")
    G = int(grp.max()) + 1
    gsize = np.bincount(grp, minlength=G).astype(np.int64)
    alpha = np.full(G, ROOT_CONCENTRATION)
    return grp.astype(np.int64), alpha, gsize


def _initialise(tree: _Tree):
    """Eq. 15 bottom-up (Algorithm 2): t = n if n <= 1 else max(1, floor(a (psi(a + n) - psi(a))))."""
    n, t = tree.n, tree.t
    off = tree.offsets
    L = len(off) - 2
    for d in range(L, 0, -1):
        sl = slice(off[d], off[d + 1])
        a = tree.alpha[tree.grp[sl]][:, None]
        nd = n[sl]
        exp_t = np.floor(a * (digamma(a + nd) - digamma(a)))
        t[sl] = np.where(nd <= 1, nd, np.maximum(1, exp_t)).astype(np.int64)
        np.add.at(n, tree.parent[sl], t[sl])
    t[0] = np.minimum(1, n[0])


def check_invariants(tree: _Tree) -> None:
    """Raise AssertionError unless the sampler state of ``tree`` is consistent.

    1 <= t <= n where n > 0, t = 0 where n = 0, root t = min(1, n), and a
    node's n equals the sum of its children's t (leaves keep their data counts).
    """
    n, t = tree.n, tree.t
    pos = n > 0
    if not (np.all(t[pos] >= 1) and np.all(t[pos] <= n[pos]) and np.all(t[~pos] == 0)):
        bad = np.argwhere((pos & ((t < 1) | (t > n))) | (~pos & (t != 0)))[0]
        raise AssertionError(f"tree of attribute {tree.child}: bad t={t[tuple(bad)]} for n={n[tuple(bad)]} at {bad}")
    if not np.array_equal(t[0], np.minimum(1, n[0])):
        raise AssertionError(f"tree of attribute {tree.child}: root t != min(1, n)")
    internal = tree.offsets[-2]
    sums = np.zeros_like(n[:internal])
    np.add.at(sums, tree.parent[1:], t[1:])
    if not np.array_equal(sums, n[:internal]):
        j = int(np.argwhere((sums != n[:internal]).any(axis=1))[0, 0])
        raise AssertionError(f"tree of attribute {tree.child}: node {j} has n={n[j]} but children's t sum to {sums[j]}")


# --------------------------------------------------------------------------- the fitted tables
@dataclass
class HDPTables:
    """HDP estimates for a structure; same prediction contract as :class:`CountTables`.

    Attributes
    ----------
    structure : list
        Attribute parents per attribute as given (``None`` = attribute not modelled).
    trees : list of _Tree
        One context tree per modelled attribute (``tree.parents`` in tree order).
    log_prior : ndarray (n_classes,)
        log P(y): the m-estimate with ``prior_m`` (1 in the reference code).
    """

    structure: list
    cards: np.ndarray
    n_classes: int
    trees: list
    log_prior: np.ndarray
    iterations: int
    burn_in: int
    tying: str
    seed: int
    fit_seconds: float = 0.0
    info: dict = field(default_factory=dict)

    # ------------------------------------------------------------ queries
    def _nodes(self, X: np.ndarray, tree: _Tree) -> np.ndarray:
        """Deepest existing node of ``tree`` for every instance and class: (N, n_classes)."""
        N, Y = X.shape[0], self.n_classes
        node = np.zeros((N, Y), dtype=np.int64)
        alive = np.ones((N, Y), dtype=bool)
        pc = np.zeros(N, dtype=np.int64)  # mixed-radix code of the parent values so far
        pvalid = np.ones(N, dtype=bool)
        span = 1  # product of the parent radices so far
        classes = np.arange(Y, dtype=np.int64)
        for d in range(1, len(tree.keys)):
            if d >= 2:
                p = tree.parents[d - 2]
                v = X[:, p].astype(np.int64)
                r = tree.radices[d - 1]
                pvalid &= (v >= 0) & (v < r)
                pc = pc * r + np.where(pvalid, v, 0)
                span *= r
            keys = tree.keys[d]
            if keys.size == 0:
                break
            code = classes[None, :] * span + pc[:, None]
            pos = np.minimum(np.searchsorted(keys, code), keys.size - 1)
            alive &= (keys[pos] == code) & pvalid[:, None]
            if not alive.any():
                break
            node = np.where(alive, tree.offsets[d] + pos, node)
        return node

    def factor_log_theta(self, X: np.ndarray, i: int) -> np.ndarray:
        """log theta(x_i | y, pi_i) for every instance and class (N, n_classes); 0 where x_i is out of range."""
        X = np.asarray(X)
        tree = self._tree_of(i)
        node = self._nodes(X, tree)
        x = X[:, tree.child].astype(np.int64)
        ok = (x >= 0) & (x < tree.card)
        out = np.log(tree.est[node, np.where(ok, x, 0)[:, None]])
        out[~ok] = 0.0
        return out

    def log_joint(self, X: np.ndarray) -> np.ndarray:
        """log P(y) + sum_i log theta(x_i | y, pi_i) for every instance and class: (N, n_classes)."""
        X = np.asarray(X)
        out = np.tile(self.log_prior, (X.shape[0], 1))
        for tree in self.trees:
            out += self.factor_log_theta(X, tree.child)
        return out

    def query(self, i: int, y: int, parent_values=()) -> np.ndarray:
        """Estimated distribution of attribute ``i`` given class ``y`` and its parents' values.

        ``parent_values`` follow ``self.structure[i]`` (the structure's order);
        an unseen configuration uses the deepest existing node.
        """
        tree = self._tree_of(i)
        parents = tuple(self.structure[i])
        row = np.zeros((1, len(self.cards)), dtype=np.int64)
        for p, v in zip(parents, parent_values):
            row[0, p] = v
        node = self._nodes(row, tree)[0, int(y)]
        return tree.est[node].copy()

    def _tree_of(self, i: int) -> _Tree:
        for tree in self.trees:
            if tree.child == i:
                return tree
        raise BNCBenchError(f"attribute {i} is not modelled")

    def n_parameters(self) -> int:
        """Free parameters of the leaf distributions: sum over trees of leaves * (card - 1), plus n_classes - 1."""
        return int(sum(t.n_leaves * (t.card - 1) for t in self.trees) + self.n_classes - 1)

    def n_nodes(self) -> int:
        return int(sum(t.n_nodes for t in self.trees))


# --------------------------------------------------------------------------- fitting
def _pairs(tree: _Tree, window: int) -> np.ndarray:
    """The (node, value) pairs that can ever need sampling, as :func:`_sweep` reads them.

    Leaves with n >= 2 and internal nodes with n >= 1 (the set of nonzero n
    never changes; an internal n may drop to 1), deepest nodes first. Within a
    depth they are ordered by their initial n (capped at 2 window + 2) and then
    by node: pairs of equal n have equal numbers of candidates, so the sweep's
    loops are predictable. Any fixed order is a valid Gibbs scan; the
    deepest-first order of the reference code is kept.
    """
    nn, K = tree.n.shape
    first_leaf = tree.offsets[-2]
    need = np.where(np.arange(1, nn) < first_leaf, 1, 2)
    jj, kk = np.nonzero(tree.n[1:] >= need[:, None])
    j, k = jj + 1, kk
    order = np.lexsort((j, np.minimum(tree.n[j, k], 2 * window + 2), -tree.depth[j]))
    j, k = j[order], k[order]
    par = tree.parent[j]
    return np.ascontiguousarray(np.stack([j * K + k, par * K + k, j, par, tree.grp[j], tree.grp[par]], axis=1),
                                dtype=np.int64)


def _reciprocal_offsets(tree: _Tree, window: int) -> np.ndarray:
    """Offsets of each concentration group's reciprocals ``1 / (a_g + m)`` in one flat cache.

    A parent's N (the sum of its children's t) never exceeds the number of
    training rows below it, D, so the sweep reads ``m = N + d <= D + window``:
    group g gets ``max D + window + 1`` entries over its internal nodes (none
    for a group of leaves only). Allocated once; only the first ``rhi[g]``
    entries are computed, as far as the parents' totals have reached (N is
    usually far below D), grown by the sweep and refilled after each
    concentration draw.
    """
    D = tree.n.sum(axis=1)  # leaves: their data counts; internal nodes: recomputed below
    off = tree.offsets
    for d in range(len(off) - 3, -1, -1):  # internal depths, deepest first
        lo, hi = off[d], off[d + 1]
        D[lo:hi] = 0
        kids = slice(off[d + 1], off[d + 2])
        np.add.at(D, tree.parent[kids], D[kids])
    G = tree.alpha.shape[0]
    size = np.zeros(G, dtype=np.int64)
    first_leaf = off[-2]
    np.maximum.at(size, tree.grp[:first_leaf], D[:first_leaf] + window + 1)
    return np.concatenate([[0], np.cumsum(size)]).astype(np.int64)


def _frozen(tree: _Tree) -> np.ndarray:
    """Nodes whose counts never change: the leaves, and the internal nodes all of whose
    children are frozen with every n <= 1 (so their t = n is forced and never sampled)."""
    nn = tree.n.shape[0]
    off = tree.offsets
    frozen = np.zeros(nn, dtype=bool)
    frozen[off[-2]:] = True
    for d in range(len(off) - 3, -1, -1):  # internal depths, deepest first
        kids = np.arange(off[d + 1], off[d + 2])
        moving = ~frozen[kids] | (tree.n[kids].max(axis=1, initial=0) > 1)
        blocked = np.zeros(nn, dtype=bool)
        blocked[tree.parent[kids[moving]]] = True
        frozen[off[d]:off[d + 1]] = ~blocked[off[d]:off[d + 1]]
    return frozen


def _run(tree: _Tree, iterations, burn_in, conc_every, window, debug):
    nn, K = tree.n.shape
    Nm = tree.n.sum(axis=1)
    Tm = tree.t.sum(axis=1)
    acc = np.zeros((nn, K))
    acc_n = np.zeros(1, dtype=np.int64)
    p = np.empty((nn, K))
    n_int = int(tree.offsets[-2])  # the first leaf
    frozen = _frozen(tree)
    live = np.flatnonzero(~frozen[:n_int])
    frozen_int = np.flatnonzero(frozen[:n_int])
    psum = np.zeros((n_int, K))
    max_t = np.array([int(tree.t.max()) if tree.t.size else 0], dtype=np.int64)
    rows = tree.data_max + window + 2
    pairs = _pairs(tree, window)
    roff = _reciprocal_offsets(tree, window)
    agg_row = np.full(tree.alpha.shape[0], -1, dtype=np.int64)
    big = np.flatnonzero(tree.gsize > 4 * AGG_DEPTH)
    big = big[big > 0]
    agg_row[big] = np.arange(big.size)
    it = 0
    while it < iterations:
        up_t, up_n = _STIRLING.ensure(rows, max_t[0] + 2 * window + 2)
        it = _run_tree(tree.parent, tree.grp, tree.gsize, agg_row, big.size, pairs,
                       tree.n, tree.t, Nm, Tm, tree.alpha, up_t, up_n, roff, tree.rng, acc, acc_n, p, psum, live, frozen_int,
                       n_int,
                       it, iterations, burn_in, conc_every, window, max_t, debug)
        if debug:
            check_invariants(tree)
            assert np.array_equal(Nm, tree.n.sum(axis=1)) and np.array_equal(Tm, tree.t.sum(axis=1))
    if acc_n[0] == 0:  # no post-burn-in iteration: estimates of the final state
        _record(tree.parent, tree.grp, tree.n, Nm, tree.alpha, p, np.arange(nn), acc, np.empty(nn))  # acc = p
        acc_n[0] = 1
    tree.est = acc / acc_n[0]


def fit_hdp(
    X,
    y,
    structure,
    cards,
    n_classes: int,
    *,
    iterations: int = 5000,
    tying: str = "level",
    seed: int = 0,
    burn_in: int | None = None,
    debug: bool = False,
    conc_every: int = 5,
    window: int = 10,
    parent_order: str = "cmi",
    prior_m: float = 1.0,
    n_jobs: int = 1,
) -> HDPTables:
    """Fit HDP estimates of every probability table of a BNC.

    Parameters
    ----------
    X : int array (N, n)
        Attribute codes in ``[0, cards[i])``; rows with an out-of-range code
        in a table's child or parents are left out of that table.
    y : int array (N,)
        Class codes in ``[0, n_classes)``.
    structure : list
        Attribute parents of every attribute (class implicit); ``None`` leaves
        an attribute out of the model (e.g. not selected by SkDB).
    iterations : int
        Gibbs iterations (the reference default 5,000; the paper used 50,000).
    tying : {"level", "single", "same_parent", "none"}
        Concentration tying (§4.4.2).
    seed : int
        Seed of the random streams (one per tree); results are identical for
        equal seeds whatever ``n_jobs``.
    burn_in : int, optional
        Iterations before averaging; default ``min(1000, iterations // 10)``.
    debug : bool
        Check the sampler invariants after every sweep (slow).
    conc_every : int
        Concentrations resampled every this many iterations (reference: 5).
    window : int
        Pseudo-counts are sampled within +-window of their value (paper: 10).
    parent_order : {"cmi", "structure"}
        Tree order of the attribute parents: by decreasing I(X_i; X_p | Y)
        (the paper, §3.3) or as listed in ``structure``.
    prior_m : float
        m of the class prior's m-estimate (1 as the reference classifiers).
    n_jobs : int
        Threads sampling trees in parallel (``-1``: all cores).
    """
    X = np.ascontiguousarray(X, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    n_classes = int(n_classes)
    if tying not in TYINGS:
        raise BNCBenchError(f"unknown tying {tying!r}; choose one of {', '.join(TYINGS)}")
    if parent_order not in ("cmi", "structure"):
        raise BNCBenchError(f"unknown parent_order {parent_order!r}; choose cmi or structure")
    iterations = int(iterations)
    if iterations < 0 or conc_every < 1 or window < 1:
        raise BNCBenchError("iterations must be >= 0, conc_every and window >= 1")
    if burn_in is None:
        burn_in = min(1000, iterations // 10)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or len(structure) != X.shape[1]:
        raise BNCBenchError("X must be (N, n) with one structure entry per column and N class values")
    start = time.perf_counter()
    ok_y = (y >= 0) & (y < n_classes)
    counts = np.bincount(y[ok_y], minlength=n_classes).astype(float)
    log_prior = np.log((counts + prior_m / n_classes) / (counts.sum() + prior_m))

    trees = []
    for i, parents in enumerate(structure):
        if parents is None:
            continue
        parents = tuple(int(p) for p in parents)
        if parent_order == "cmi":
            parents = _cmi_order(X[ok_y], y[ok_y], cards, n_classes, i, parents)
        tree = _build_tree(X, y, cards, n_classes, i, parents)
        tree.grp, tree.alpha, tree.gsize = _groups(tree, tying)
        _initialise(tree)
        trees.append(tree)
    states = np.random.SeedSequence(int(seed)).spawn(max(len(trees), 1))
    for tree, ss in zip(trees, states):
        tree.rng = ss.generate_state(4, dtype=np.uint64)
        if debug:
            check_invariants(tree)

    jobs = (os.cpu_count() or 1) if n_jobs == -1 else max(1, int(n_jobs))
    args = (iterations, int(burn_in), int(conc_every), int(window), bool(debug))
    by_size = sorted(trees, key=lambda t: -t.n_nodes * t.card)
    if jobs == 1 or len(trees) <= 1:
        for tree in by_size:
            _run(tree, *args)
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for f in [pool.submit(_run, tree, *args) for tree in by_size]:
                f.result()
    tables = HDPTables(
        structure=[None if p is None else tuple(int(v) for v in p) for p in structure],
        cards=cards, n_classes=n_classes, trees=trees, log_prior=log_prior,
        iterations=iterations, burn_in=int(burn_in), tying=tying, seed=int(seed),
    )
    tables.fit_seconds = time.perf_counter() - start
    tables.info = {
        "n_nodes": tables.n_nodes(),
        "concentrations": [t.alpha.copy() for t in trees],
        "stirling_table_shape": (_STIRLING.up_t.shape[0], _STIRLING.up_n.shape[0]),
    }
    return tables
