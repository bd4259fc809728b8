"""The fused margin kernel (bncbench/engine/margin_kernel.py) equals the reference path: scores, margin_loss, scatter."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.fit import build_problem
from bncbench.engine.loss import Data
from bncbench.engine.margin import MarginLoss, margin_loss
from bncbench.engine.margin_kernel import margin_rows
from bncbench.engine.row_table import RowTable, scatter


def _reference(idx, C, Phi, lam, kappa, eta):
    S = RowTable(idx).scores(Phi)
    f, dS = margin_loss(S, C, lam, kappa, eta)
    return f, scatter(idx, dS, Phi.shape[0])


@pytest.mark.parametrize("K,kappa,eta,lam,scale", [(2, 0.1, 5.0, 0.5, 1.0), (3, 0.5, 10.0, 0.05, 3.0),
                                                    (4, 0.05, 1.0, 1.0, 0.3), (10, 0.25, 20.0, 0.2, 2.0),
                                                    (5, 0.3, 0.5, 3.0, 5.0)])
def test_fused_kernel_equals_scores_margin_loss_and_scatter(K, kappa, eta, lam, scale):
    rng = np.random.default_rng(K)
    n, F, n_rows = 300, 6, 40
    idx = rng.integers(-1, n_rows, size=(n, F)).astype(np.int32)  # -1: no contribution
    C = rng.poisson(0.7, size=(n, K)).astype(float)  # compressed rows: several classes, some rows without any
    C[:50] = 0.0
    C[np.arange(50), rng.integers(0, K, 50)] = 1.0  # one-hot rows too
    Phi = scale * rng.standard_normal((n_rows, K))
    f0, G0 = _reference(idx, C, Phi, lam, kappa, eta)
    G = np.zeros_like(Phi)
    f = margin_rows(idx, C, Phi, lam, kappa, eta, G)
    assert f == pytest.approx(f0, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(G, G0, rtol=1e-10, atol=1e-12)
    assert margin_rows(idx, C, Phi, lam, kappa, eta, None) == pytest.approx(f0, rel=1e-12, abs=1e-12)


def test_all_three_hinge_pieces_are_exercised():
    rng = np.random.default_rng(1)
    K, lam, kappa, eta = 3, 1.0, 0.25, 10.0
    idx = np.arange(300, dtype=np.int32)[:, None]
    Phi = 2.0 * rng.standard_normal((300, K))
    C = np.eye(K)[rng.integers(0, K, 300)]
    from bncbench.engine.margin import log_margin
    y = lam * log_margin(Phi, eta)[C > 0]
    assert (y <= 1 - 2 * kappa).any() and ((y > 1 - 2 * kappa) & (y < 1)).any() and (y >= 1).any()
    f0, G0 = _reference(idx, C, Phi, lam, kappa, eta)
    G = np.zeros_like(Phi)
    assert margin_rows(idx, C, Phi, lam, kappa, eta, G) == pytest.approx(f0, rel=1e-12)
    np.testing.assert_allclose(G, G0, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("structure,classes", [("nb", 3), ("tan", 4)])
def test_engine_objective_fused_equals_the_reference_backend(structure, classes):
    model = random_bnc(5, (2, 3), p=1, n_classes=classes, alpha=1.0, seed=3)
    X, y = sample_random_bnc(model, 300, seed=4)
    tables = BNClassifier(structure=structure, discretize=False, cardinalities=model.cards).fit(X, y).tables_
    kw = dict(param="extended", init="generative", objective="margin", margin_lam=0.4, kappa=0.2, eta=7.0)
    _, pmap, fused = build_problem(tables, X, y, **kw)
    _, _, ref = build_problem(tables, X, y, backend="scipy", **kw)
    assert isinstance(fused.cll, MarginLoss) and fused.cll.fused and not ref.cll.fused
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = pmap.x0() + 0.5 * rng.standard_normal(pmap.n_params)
        f1, g1 = fused.fg(x)
        f2, g2 = ref.fg(x)
        assert f1 == pytest.approx(f2, rel=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-9, atol=1e-12)


def test_bad_hyperparameters_still_fail_in_one_line():
    idx = np.zeros((3, 1), np.int32)
    data = Data(idx, np.eye(2)[[0, 1, 0]])
    from bncbench.errors import BNCBenchError
    with pytest.raises(BNCBenchError, match="kappa > 0"):
        MarginLoss(data, 1, margin_lam=0.1, kappa=0.0, eta=5.0)(np.zeros((1, 2)))


def test_validation_logsumexp_is_scipys_to_the_bit():
    from scipy.special import logsumexp

    from bncbench.engine.validation import logsumexp_rows

    rng = np.random.default_rng(3)
    for K in (2, 3, 10):
        S = 30 * rng.standard_normal((500, K))
        S[:50, 1] = S[:50, 0]  # tied maxima (or ties below the maximum)
        S[50:60] = 7.0  # all equal
        S[60:70, 0] = S[60:70, 1:].max(axis=1) + 1e-300
        assert np.array_equal(logsumexp_rows(S), logsumexp(S, axis=1))
