"""The log-softmax per block of :class:`~bncbench.engine.params.Extended` and its pullback, in a few compiled passes.

``Extended`` maps ``beta`` (``n_trained x K``) to ``log softmax`` per block: over the ``K`` classes for the class
row 0, over the rows of each (factor, parent configuration) block, separately per class, for the others. Written
with numpy (its former form, kept in ``tests/test_block_softmax.py`` as the reference) that is a dozen array calls
per map and half a dozen per pullback, each a few microseconds on a small model: on iris, the map and the pullback
were a third of an evaluation. Here the gathers, maxima, sums and differences run in compiled passes and only the
``exp`` and ``log`` stay numpy's, applied to whole arrays in between: numba's ``exp`` and ``log`` are the C
library's, which differ from numpy's vectorized ones (AVX-512 here) in the last bit for some inputs, so they are
not used. The sums are numpy's own order: a 1-d ``.sum()`` is numpy's pairwise summation (:func:`_pairwise`),
``np.add.reduceat`` over a block's rows is its first row plus the pairwise sum of the rest. So the map and the
pullback are numpy's former ones to the bit (tested on random blocks of 1 to 300 rows and 1 to 12 classes).

:func:`log_softmax_blocks` is the map, :func:`pullback_blocks` the pullback; ``starts`` are the first rows of
the blocks after row 0 (``Layout.block_start`` below the trained rows), every row from ``starts[0]`` in a block.
"""

from __future__ import annotations

import numba
import numpy as np


def log_softmax_blocks(beta: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``log softmax`` per block: row 0 over its columns, each block of rows ``[starts[b], starts[b+1])`` per column.

    Parameters
    ----------
    beta : ndarray of shape (n, K), float64, C-contiguous
        Parameters; ``n >= 1``.
    starts : ndarray of shape (n_blocks,), int64
        First row of each block after row 0, increasing, ``starts[0] == 1`` when there are blocks.

    Returns
    -------
    ndarray of shape (n, K)
        ``beta - logsumexp`` of its block, numpy's former result to the bit.
    """
    n, K = beta.shape
    D = np.empty((n, K))
    top = np.empty((starts.size + 1, K))  # row 0: the class row's maximum (every column); then the blocks' maxima
    _shift(beta, starts, D, top)
    np.exp(D, out=D)
    s = np.empty_like(top)
    _sums(D, starts, s)
    np.log(s, out=s)
    out = D  # the exponentials are no longer needed
    _subtract(beta, starts, top, s, out)
    return out


def pullback_blocks(G: np.ndarray, P: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``G - P * (sum of G over the block)``: the gradient through :func:`log_softmax_blocks`, ``P`` its ``exp``.

    Parameters
    ----------
    G : ndarray of shape (n, K), float64, C-contiguous
        ``dL/dPhi`` of the rows.
    P : ndarray of shape (n, K), float64, C-contiguous
        ``exp`` of the map at the point (the softmax per block).
    starts : ndarray of shape (n_blocks,), int64
        As in :func:`log_softmax_blocks`.

    Returns
    -------
    ndarray of shape (n, K)
        ``dL/dbeta``, numpy's former result to the bit.
    """
    g = np.empty_like(G)
    _pullback(G, P, starts, g)
    return g


@numba.njit(cache=True, nogil=True)
def _pairwise_leaf(a, lo, n, step):  # pragma: no cover - compiled
    """numpy's pairwise sum of ``n <= 128`` entries ``a[lo], a[lo + step], ...``: below 8 in order from -0.0, else
    eight accumulators, their sum as a tree, then the rest in order."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[lo + i * step]
        return res
    r0 = a[lo]
    r1 = a[lo + step]
    r2 = a[lo + 2 * step]
    r3 = a[lo + 3 * step]
    r4 = a[lo + 4 * step]
    r5 = a[lo + 5 * step]
    r6 = a[lo + 6 * step]
    r7 = a[lo + 7 * step]
    m = n - n % 8
    i = 8
    while i < m:
        p = lo + i * step
        r0 += a[p]
        r1 += a[p + step]
        r2 += a[p + 2 * step]
        r3 += a[p + 3 * step]
        r4 += a[p + 4 * step]
        r5 += a[p + 5 * step]
        r6 += a[p + 6 * step]
        r7 += a[p + 7 * step]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i * step]
        i += 1
    return res


@numba.njit(cache=True, nogil=True)
def _pairwise(a, lo, hi, step):  # pragma: no cover - compiled
    """numpy's pairwise sum of ``a[lo:hi:step]`` (1-d ``a``), the order of its float64 add reductions: up to 128
    entries :func:`_pairwise_leaf`, above it the sum of the two halves' (split at a multiple of 8). The halves are
    walked with a stack, not by recursion (numba's cache does not keep recursive functions reliably)."""
    n = (hi - lo) // step
    if n <= 128:
        return _pairwise_leaf(a, lo, n, step)
    depth = 2 * (64 + 1)
    node_lo = np.empty(depth * 2, np.int64)
    node_n = np.empty(depth * 2, np.int64)
    node_join = np.empty(depth * 2, np.bool_)
    vals = np.empty(depth * 2)
    top, nv = 0, 0
    node_lo[0], node_n[0], node_join[0] = lo, n, False
    top = 1
    while top > 0:
        top -= 1
        lo_, n_, join = node_lo[top], node_n[top], node_join[top]
        if join:  # both halves done: left + right
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif n_ <= 128:
            vals[nv] = _pairwise_leaf(a, lo_, n_, step)
            nv += 1
        else:
            n2 = n_ // 2
            n2 -= n2 % 8
            node_lo[top], node_n[top], node_join[top] = lo_, n_, True
            node_lo[top + 1], node_n[top + 1], node_join[top + 1] = lo_ + n2 * step, n_ - n2, False
            node_lo[top + 2], node_n[top + 2], node_join[top + 2] = lo_, n2, False
            top += 3
    return vals[0]


@numba.njit(cache=True, nogil=True)
def _block_end(starts, b, n):  # pragma: no cover - compiled
    return starts[b + 1] if b + 1 < starts.size else n


@numba.njit(cache=True, nogil=True)
def _shift(beta, starts, D, top):  # pragma: no cover - compiled
    """``D = beta - max`` of its block (row 0: over its columns); the maxima into ``top`` (row 0: the class row's, in
    every column), NaN propagated as ``np.max`` does."""
    n, K = beta.shape
    m = beta[0, 0]
    for c in range(1, K):
        v = beta[0, c]
        if v > m or v != v:
            m = v if m == m else m
    for c in range(K):
        top[0, c] = m
        D[0, c] = beta[0, c] - m
    for b in range(starts.size):
        lo, hi = starts[b], _block_end(starts, b, n)
        for c in range(K):
            m = beta[lo, c]
            for r in range(lo + 1, hi):
                v = beta[r, c]
                if v > m or v != v:
                    m = v if m == m else m
            top[b + 1, c] = m
            for r in range(lo, hi):
                D[r, c] = beta[r, c] - m


@numba.njit(cache=True, nogil=True)
def _sums(E, starts, s):  # pragma: no cover - compiled
    """The sums of ``E`` per block in numpy's order: row 0 as ``E[0].sum()`` (every column of ``s[0]``), a block as
    ``np.add.reduceat`` sums it (its first row plus the pairwise sum of the rest)."""
    n, K = E.shape
    flat = E.ravel()
    s0 = _pairwise(flat, 0, K, 1)
    for c in range(K):
        s[0, c] = s0
    for b in range(starts.size):
        lo, hi = starts[b], _block_end(starts, b, n)
        for c in range(K):
            if hi - lo > 1:
                s[b + 1, c] = E[lo, c] + _pairwise(flat, (lo + 1) * K + c, hi * K + c, K)
            else:
                s[b + 1, c] = E[lo, c]


@numba.njit(cache=True, nogil=True)
def _subtract(beta, starts, top, logs, out):  # pragma: no cover - compiled
    """``out = beta - (max + log sum)`` of its block."""
    n, K = beta.shape
    for c in range(K):
        out[0, c] = beta[0, c] - (top[0, c] + logs[0, c])
    for b in range(starts.size):
        lo, hi = starts[b], _block_end(starts, b, n)
        for c in range(K):
            lse = top[b + 1, c] + logs[b + 1, c]
            for r in range(lo, hi):
                out[r, c] = beta[r, c] - lse


@numba.njit(cache=True, nogil=True)
def _pullback(G, P, starts, g):  # pragma: no cover - compiled
    """``g = G - P * (sum of G over the block)``, the sums in numpy's order (as :func:`_sums`)."""
    n, K = G.shape
    flat = G.ravel()
    s0 = _pairwise(flat, 0, K, 1)
    for c in range(K):
        g[0, c] = G[0, c] - P[0, c] * s0
    for b in range(starts.size):
        lo, hi = starts[b], _block_end(starts, b, n)
        for c in range(K):
            if hi - lo > 1:
                sm = G[lo, c] + _pairwise(flat, (lo + 1) * K + c, hi * K + c, K)
            else:
                sm = G[lo, c]
            for r in range(lo, hi):
                g[r, c] = G[r, c] - P[r, c] * sm
