"""The compiled log-softmax per block (bncbench/engine/block_softmax.py) equals numpy's former map and pullback to the bit."""

import numpy as np
import pytest

from bncbench.engine.block_softmax import log_softmax_blocks, pullback_blocks
from bncbench.engine.params import Extended, _blocks


def _former_map(beta, st, bid):
    """``Extended._map`` before the compiled passes (the reference)."""
    out = np.empty_like(beta)
    b0 = beta[0]
    out[0] = b0 - (b0.max() + np.log(np.exp(b0 - b0.max()).sum()))
    if st.size:
        body = beta[1:]
        off = st - 1
        mx = np.maximum.reduceat(body, off, axis=0)
        e = np.exp(body - mx[bid])
        lse = mx + np.log(np.add.reduceat(e, off, axis=0))
        out[1:] = body - lse[bid]
    return out


def _former_pullback(G, P, st, bid):
    """``Extended.pullback`` before the compiled passes, from ``G`` (scaled) and ``P = exp(map)``."""
    g = np.empty_like(G)
    g[0] = G[0] - P[0] * G[0].sum()
    if st.size:
        sums = np.add.reduceat(G[1:], st - 1, axis=0)
        g[1:] = G[1:] - P[1:] * sums[bid]
    return g


def _case(rng, K, sizes, scale):
    st = np.cumsum(np.r_[1, sizes[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)
    n = 1 + int(np.sum(sizes))
    beta = scale * rng.standard_normal((n, K))
    return beta, st, _blocks(st, n)


# block sizes around numpy's pairwise-summation thresholds (8 accumulators from 9 rows, halves above 129)
SIZES = [[], [1], [2, 3], [7, 8, 9, 10], [16, 17, 1, 2], [128, 129, 130], [300, 5, 257], list(range(1, 40))]


@pytest.mark.parametrize("K", [1, 2, 3, 4, 7, 8, 9, 12])
@pytest.mark.parametrize("sizes", SIZES)
def test_map_and_pullback_equal_numpys_former_ones_to_the_bit(K, sizes):
    rng = np.random.default_rng(K * 100 + len(sizes))
    for scale in (1e-3, 1.0, 30.0):
        beta, st, bid = _case(rng, K, sizes, scale)
        m = log_softmax_blocks(beta, st)
        np.testing.assert_array_equal(m, _former_map(beta, st, bid))
        G = scale * rng.standard_normal(beta.shape)
        P = np.exp(m)
        np.testing.assert_array_equal(pullback_blocks(G, P, st), _former_pullback(G, P, st, bid))


def test_ties_signed_zeros_and_nan_as_numpy():
    st = np.array([1, 3], dtype=np.int64)
    beta = np.array([[0.0, -0.0, 0.0], [2.0, -0.0, 5.0], [2.0, 0.0, 5.0], [-1e300, 1e-300, 7.0], [-1e300, 3.0, 7.0]])
    bid = _blocks(st, beta.shape[0])
    np.testing.assert_array_equal(log_softmax_blocks(beta, st), _former_map(beta, st, bid))
    beta[4, 1] = np.nan
    beta[0, 2] = np.nan
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(log_softmax_blocks(beta, st), _former_map(beta, st, bid))


def test_extended_fit_is_unchanged_to_the_bit(monkeypatch):
    """A whole early-stopped MM fit through the engine: the same iterates (parameters, trace) as the former map."""
    from bncbench import BNClassifier
    from bncbench.data.sources import random_bnc, sample_random_bnc

    net = random_bnc(6, (2, 4), p=1, n_classes=3, seed=4)
    X, y = sample_random_bnc(net, 400, seed=5)
    kw = dict(structure="tan", param="extended", objective="margin", optimizer="cg", margin_lam=0.05, kappa=0.25,
              optimizer_options={"validation_fraction": 0.2, "patience": 5})
    new = BNClassifier(**kw).fit(X, y)

    def former_pullback(self, x, G):
        P = np.exp(self._mapped(x))
        return _former_pullback(self._scaled(G, self.nt), P, self._st, self._bid).ravel()

    monkeypatch.setattr(Extended, "_map", staticmethod(lambda beta, st, bid: _former_map(beta, st,
                                                                                      _blocks(st, beta.shape[0]))))
    monkeypatch.setattr(Extended, "pullback", former_pullback)
    old = BNClassifier(**kw).fit(X, y)
    np.testing.assert_array_equal(new.scorer_.x, old.scorer_.x)
    assert [r["nll"] for r in new.trace_] == [r["nll"] for r in old.trace_]
    assert new.n_iter_ == old.n_iter_ and new.scorer_.n_fev == old.scorer_.n_fev


def test_pairwise_sum_is_numpys_order():
    from bncbench.engine.block_softmax import _pairwise

    rng = np.random.default_rng(0)
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000, 4099, 70001]:
        a = rng.standard_normal(n) * 10.0 ** rng.uniform(-4, 4, n)
        assert _pairwise(a, 0, n, 1) == a.sum()
        A = a[: n - n % 3].reshape(-1, 3) if n >= 3 else np.zeros((0, 3))
        if A.shape[0]:  # a strided column, as the blocks' sums read it
            assert _pairwise(A.ravel(), 1, A.size + 1, 3) == A[:, 1].copy().sum()
