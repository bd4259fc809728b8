"""CV splits, RMSE and the Kohavi–Wolpert decomposition."""

import numpy as np
import pytest

from bncbench.harness.protocol import cv_folds
from bncbench.metrics import kohavi_wolpert, rmse, zero_one_loss


def test_rmse_by_hand():
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    y = np.array([0, 1])
    # instance 0: (0.3^2 + 0.2^2 + 0.1^2) = 0.14; instance 1: (0.1^2 + 0.9^2 + 0.8^2) = 1.46
    assert rmse(y, proba) == pytest.approx(np.sqrt((0.14 + 1.46) / (2 * 3)))
    assert rmse(y, np.eye(3)[y]) == 0.0


def test_kw_hand_example():
    # one instance, true class 0, predicted [0, 0, 1, 2] over 4 rounds: P = [.5, .25, .25]
    preds = np.array([[0], [0], [1], [2]])
    kw = kohavi_wolpert(np.array([0]), preds, 3)
    assert kw["error"] == pytest.approx(0.5)
    assert kw["bias"] == pytest.approx(0.5 * (0.25 + 0.0625 + 0.0625))
    assert kw["variance"] == pytest.approx(0.5 * (1 - (0.25 + 0.0625 + 0.0625)))
    corrected = kohavi_wolpert(np.array([0]), preds, 3, correction=True)
    want_bias = 0.5 * (0.25 + 0.0625 + 0.0625 - (0.5 * 0.5 + 0.25 * 0.75 * 2) / 3)
    assert corrected["bias"] == pytest.approx(want_bias)
    assert corrected["variance"] == pytest.approx(0.5 - want_bias)


@pytest.mark.parametrize("seed", range(5))
def test_bias_plus_variance_equals_zero_one_loss(seed):
    rng = np.random.default_rng(seed)
    n, R, C = 200, 5, 4
    y = rng.integers(0, C, n)
    preds = np.where(rng.random((R, n)) < 0.6, y, rng.integers(0, C, (R, n)))
    kw = kohavi_wolpert(y, preds, C)
    assert kw["bias"] + kw["variance"] == pytest.approx(kw["error"], abs=1e-12)
    assert kw["error"] == pytest.approx(zero_one_loss(np.tile(y, R), preds.ravel()))
    assert kw["bias"] >= 0 and kw["variance"] >= 0
    kc = kohavi_wolpert(y, preds, C, correction=True)
    assert kc["error"] == kw["error"]
    assert kc["bias"] < kw["bias"]  # the correction removes the finite-sample share of the spread


def test_folds_deterministic_stratified_and_paired():
    y = np.repeat([0, 1, 2], [50, 31, 19])
    a = cv_folds(y, seed=7, dataset="d", round_=2, folds=2)
    b = cv_folds(y, seed=7, dataset="d", round_=2, folds=2)
    np.testing.assert_array_equal(a, b)
    for c in range(3):
        sizes = np.bincount(a[y == c], minlength=2)
        assert abs(sizes[0] - sizes[1]) <= 1
    assert abs((a == 0).sum() - (a == 1).sum()) <= 1
    assert not np.array_equal(a, cv_folds(y, seed=7, dataset="d", round_=3, folds=2))
    assert not np.array_equal(a, cv_folds(y, seed=8, dataset="d", round_=2, folds=2))
    assert not np.array_equal(a, cv_folds(y, seed=7, dataset="e", round_=2, folds=2))
