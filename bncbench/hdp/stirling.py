"""Unsigned Stirling numbers of the first kind for the HDP sampler.

Two ratio tables (``up_t``, ``up_n``: what the sampler reads) and a log table
(``log S(n, t)``, for :func:`stirling_table` and :func:`log_stirling`), filled by
compiled recurrences and shared by every tree through one process-wide cache
that grows on demand under a lock.
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np

from bncbench.errors import BNCBenchError

MAX_TABLE_BYTES = 2 << 30
"""Largest pair of Stirling tables (the sampler's two ratio tables, float64) we allocate."""


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
    """The shared table ``T`` with ``T[n, t] = log S(n, t)`` for ``n < rows, t < cols`` (at least).

    A table too small is replaced under a lock by a larger one (each dimension that must grow
    grows by at least 1.5x); the old array stays valid for whoever holds it.

    Parameters
    ----------
    rows : int
        Entries needed along ``n``.
    cols : int
        Entries needed along ``t``.

    Returns
    -------
    ndarray of shape (>= rows, >= cols)
        The shared table itself (not a copy: do not modify it); ``-inf`` where S(n, t) = 0.

    Raises
    ------
    BNCBenchError
        If the grown tables would exceed :data:`MAX_TABLE_BYTES`.
    """
    return _STIRLING.ensure_log(int(rows), int(cols))


def log_stirling(n: int, t: int) -> float:
    """log of the unsigned Stirling number of the first kind S(n, t) (``-inf`` when it is 0).

    Parameters
    ----------
    n : int
        Non-negative.
    t : int
        Non-negative.

    Returns
    -------
    float
        ``log S(n, t)``.

    Raises
    ------
    BNCBenchError
        If the shared table would have to grow beyond :data:`MAX_TABLE_BYTES`.
    """
    return float(stirling_table(n + 1, t + 1)[n, t])
