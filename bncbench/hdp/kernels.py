"""The compiled Gibbs sampler of the HDP estimates (Algorithms 3-5, Eqs. 11-14).

Everything here works on a tree's flat arrays (node parent index, counts ``n``
and pseudo-counts ``t`` of shape (n_nodes, card), concentration group per
node): :func:`_sweep` resamples the pseudo-counts, :func:`_sample_concentrations`
the concentrations, :func:`_record` and :func:`_flush` accumulate the
estimates, and :func:`_run_tree` runs the iterations of one tree in one
compiled call (releasing the GIL). The layout of the arrays it reads is built
in :mod:`bncbench.hdp.tree`; the driver is :mod:`bncbench.hdp.fit`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bncbench.hdp.rng import _log_beta_variate, _log_gamma_variate, _uniform

PRIOR_SHAPE = 2.0
PRIOR_RATE = 1.0
CONCENTRATION_CAP = 4000.0
AGG_DEPTH = 32
"""Concentration groups of more than 4 * AGG_DEPTH nodes aggregate their Beta draws (see
``_sample_concentrations``)."""

_FAST = {"nsz", "arcp", "contract", "reassoc"}  # no nnan/ninf: the sampler selects around inf/nan ratios


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
