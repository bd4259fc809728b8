"""Random numbers of the compiled HDP sampler.

xoshiro256** (Blackman & Vigna) on a ``uint64[4]`` state per tree, and from it
uniforms, standard normals (Marsaglia's polar method), log Gamma variates
(Marsaglia & Tsang 2000) and log Beta variates. The draw order of every
function is part of the sampler's reproducibility: results for a seed depend on it.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bncbench.hdp.stirling import _logaddexp

SMALL_BETA = 8
"""Beta(a, n) draws with an integer n up to this use the product of n Beta(a + i, 1) draws."""


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
