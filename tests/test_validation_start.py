"""Early stopping's generative start counted on the training part only (validation_start="training_part").

With the default ("all") the held-out rows also shape the ML estimate the fit starts from (a mild
leak); with "training_part" they shape nothing but the stopping iteration.
"""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.validation import split
from bncbench.errors import BNCBenchError
from bncbench.bn.count_tables import CountTables


@pytest.fixture(scope="module")
def data():
    model = random_bnc(6, (2, 4), p=1, n_classes=3, alpha=1.0, seed=3)
    X, y = sample_random_bnc(model, 600, seed=4)
    return X[:400], y[:400], X[400:], model.cards


def _fit(X, y, cards, start, structure="nb", maxiter=0, objective="margin"):
    opts = {"validation_fraction": 0.3, "patience": 3, "maxiter": maxiter}
    if start is not None:
        opts["validation_start"] = start
    return BNClassifier(structure=structure, param="extended", objective=objective, optimizer="cg",
                        optimizer_options=opts, discretize=False, cardinalities=cards).fit(X, y)


def _scrambled_held_out(X, y):
    _, held = split(np.unique(y, return_inverse=True)[1], 0.3, 0)
    Xs = X.copy()
    Xs[held] = np.random.default_rng(0).permutation(X[held], axis=0)[:, ::-1] % (X.max() + 1)
    assert not np.array_equal(Xs[held], X[held])
    return Xs, held


def test_the_start_is_the_m_estimate_of_the_training_part(data):
    X, y, _, cards = data
    clf = _fit(X, y, cards, "training_part")
    train, held = split(np.unique(y, return_inverse=True)[1], 0.3, 0)
    base = clf.model_.base
    ref = CountTables([()] * X.shape[1], cards, 3).fit(X[train], y[train])
    np.testing.assert_allclose(base.tables.class_counts, ref.class_counts)
    assert base.tables.n == train.size
    Xt = data[2]
    np.testing.assert_allclose(base.log_joint(Xt), ref.log_joint(Xt, base.m))
    # maxiter = 0: the fit is its start, which is the training part's NB
    np.testing.assert_allclose(clf.predict_proba(Xt), np.exp(ref.log_joint(Xt, base.m) - np.logaddexp.reduce(
        ref.log_joint(Xt, base.m), axis=1, keepdims=True)), atol=1e-10)


@pytest.mark.parametrize("objective", ["margin", "cll"])
def test_the_held_out_rows_no_longer_shape_the_start(data, objective):
    X, y, Xt, cards = data
    Xs, _ = _scrambled_held_out(X, y)
    fresh = [_fit(A, y, cards, "training_part", objective=objective).predict_proba(Xt) for A in (X, Xs)]
    np.testing.assert_array_equal(fresh[0], fresh[1])
    leaky = [_fit(A, y, cards, None, objective=objective).predict_proba(Xt) for A in (X, Xs)]
    assert np.abs(leaky[0] - leaky[1]).max() > 1e-3  # the default: the held-out rows move the start


def test_all_is_the_default_and_a_tan_fit_runs_from_the_training_part(data):
    X, y, Xt, cards = data
    np.testing.assert_array_equal(_fit(X, y, cards, None).predict_proba(Xt), _fit(X, y, cards, "all").predict_proba(Xt))
    clf = _fit(X, y, cards, "training_part", structure="tan", maxiter=20)
    assert clf.model_.base.tables.n == split(np.unique(y, return_inverse=True)[1], 0.3, 0)[0].size
    assert np.isfinite(clf.predict_proba(Xt)).all() and clf.score(Xt, clf.predict(Xt)) == 1.0
    with pytest.raises(BNCBenchError, match="validation_start"):
        _fit(X, y, cards, "held_out")
