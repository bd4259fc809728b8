"""BNClassifier wiring of HDP estimates, m chosen on a holdout, and SkDB."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.estimators.mestimate import M_GRID
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.errors import BNCBenchError
from bncbench.hdp import fit_hdp
from bncbench.structures.skdb import restrict, skdb
from bncbench.bn.count_tables import CountTables


@pytest.fixture(scope="module")
def data():
    model = random_bnc(8, cardinality=(2, 4), p=2, n_classes=2, alpha=0.5, seed=8)
    X, y = sample_random_bnc(model, 1500, seed=1)
    Xt, yt = sample_random_bnc(model, 500, seed=2)
    return X, y, Xt, yt


def test_hdp_estimator_is_fit_hdp_on_the_learned_structure(data):
    X, y, Xt, _ = data
    clf = BNClassifier(structure="kdb", k=2, estimator="hdp", hdp_iterations=200, random_state=3,
                       discretize=False).fit(X, y)
    h = fit_hdp(X, y, clf.structure_, clf.cardinalities_, 2, iterations=200, seed=3)
    np.testing.assert_allclose(clf._joint_log_likelihood(Xt), h.log_joint(Xt))
    assert clf.n_parameters_ == h.n_parameters()


def test_m_auto_picks_the_grid_value_with_lowest_holdout_rmse(data):
    X, y, _, _ = data
    clf = BNClassifier(structure="kdb", k=2, m="auto", random_state=0, discretize=False).fit(X, y)
    assert clf.m_ in M_GRID
    # recompute the holdout choice by hand
    rng = np.random.default_rng(0)
    hold = np.zeros(len(y), bool)
    hold[rng.choice(len(y), size=150, replace=False)] = True
    t = CountTables(clf.structure_, clf.cardinalities_, 2).fit(X[~hold], y[~hold])
    scores = []
    for m in M_GRID:
        with np.errstate(divide="ignore", invalid="ignore"):
            jll = t.log_joint(X[hold], m)
            p = np.exp(jll - jll.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
        scores.append(np.sqrt(np.mean(np.sum((p - np.eye(2)[y[hold]]) ** 2, 1) / 2)) if np.isfinite(p).all() else np.inf)
    assert clf.m_ == M_GRID[int(np.argmin(scores))]
    # the final tables use all training data with that m
    ref = BNClassifier(structure="kdb", k=2, m=clf.m_, discretize=False).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X[:50]), ref.predict_proba(X[:50]))


def test_skdb_classifier_uses_only_the_selected_attributes(data):
    X, y, Xt, _ = data
    rng = np.random.default_rng(0)
    Xn = np.column_stack([X, rng.integers(0, 3, size=(len(y), 3))])  # three noise attributes
    clf = BNClassifier(structure="skdb", k=2, discretize=False).fit(Xn, y)
    sk = skdb(Xn, y, clf.cardinalities_, 2, 2)
    assert clf.structure_ == sk.structure
    cols, sub = restrict(sk.structure)
    np.testing.assert_array_equal(clf.columns_, cols)
    ref = CountTables(sub, clf.cardinalities_[cols], 2).fit(Xn[:, cols], y)
    Xq = np.column_stack([Xt, rng.integers(0, 3, size=(len(Xt), 3))])
    np.testing.assert_allclose(clf._joint_log_likelihood(Xq), ref.log_joint(Xq[:, cols], 1.0))


def test_bad_accurate_estimate_options():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    y = np.array([0, 1, 1, 0])
    with pytest.raises(BNCBenchError, match="tying"):
        BNClassifier(estimator="hdp", tying="weird").fit(X, y)
    with pytest.raises(BNCBenchError, match="count tables"):
        BNClassifier(estimator="hdp", param="weighted").fit(X, y)
    with pytest.raises(BNCBenchError, match="'auto'"):
        BNClassifier(m="lots").fit(X, y)
