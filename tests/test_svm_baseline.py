"""The RBF-SVM baseline (Pernkopf et al.'s SVM peer): scikit-learn's SVC on scaled codes, cross-tuned C and gamma."""

import numpy as np
import pytest
from sklearn.svm import SVC

from bncbench.harness.model_specs import make_estimator
from bncbench.engine.validation import split
from bncbench.errors import BNCBenchError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(300, 6))
    y = np.where(X[:, 0] + X[:, 1] > 4, "a", "b")
    return X, y


def test_it_is_scikit_learns_svc_on_codes_scaled_to_the_unit_range(data):
    X, y = data
    clf = make_estimator({"model": "svm_rbf", "C": 3.0, "gamma": 0.7}, None).fit(X[:200], y[:200])
    ref = SVC(kernel="rbf", C=3.0, gamma=0.7).fit(X[:200] / 4.0, y[:200])
    np.testing.assert_array_equal(clf.predict(X[200:]), ref.predict(X[200:] / 4.0))
    assert clf.n_parameters_ == ref.support_.size * 6  # Table 4: support vectors x features
    P = clf.predict_proba(X[200:])
    assert np.allclose(P.sum(axis=1), 1.0) and set(np.unique(P)) <= {0.0, 1.0}


def test_cross_tuning_keeps_the_pair_of_lowest_held_out_error_and_refits_on_everything(data):
    X, y = data
    grid = {"C": [0.01, 1.0, 100.0], "gamma": [0.1, 2.0]}
    clf = make_estimator({"model": "svm_rbf", "grid": grid, "validation_fraction": 0.25, "validation_seed": 1},
                         None).fit(X, y)
    rows = clf.tuning_["candidates"]
    assert len(rows) == 6
    codes = np.unique(y, return_inverse=True)[1]
    tr, held = split(codes, 0.25, 1)
    for r in rows:  # each candidate's held-out error is SVC's on that split
        svc = SVC(kernel="rbf", C=r["C"], gamma=r["gamma"]).fit(X[tr] / 4.0, codes[tr])
        assert r["val_error"] == pytest.approx(np.mean(svc.predict(X[held] / 4.0) != codes[held]))
    best = min(rows, key=lambda r: r["val_error"])
    assert clf.tuning_["chosen"] == {"C": best["C"], "gamma": best["gamma"]}
    assert clf.svc_.C == best["C"] and clf.svc_.support_.size > 0
    with pytest.raises(BNCBenchError, match="grid"):
        make_estimator({"model": "svm_rbf", "grid": {"degree": [2]}}, None).fit(X, y)


def test_train_rows_fits_on_a_stratified_subsample_only(data):
    X, y = data
    clf = make_estimator({"model": "svm_rbf", "C": 3.0, "gamma": 0.7, "train_rows": 90, "validation_seed": 2},
                         None).fit(X, y)
    codes = np.unique(y, return_inverse=True)[1]
    _, rows = split(codes, 90 / 300, 2)
    assert rows.size == 90 and np.allclose(np.bincount(codes[rows]) / 90, np.bincount(codes) / 300, atol=0.01)
    lo, span = X[rows].min(axis=0), X[rows].max(axis=0) - X[rows].min(axis=0)  # scaled by the subsample's range
    ref = SVC(kernel="rbf", C=3.0, gamma=0.7).fit((X[rows] - lo) / span, codes[rows])
    np.testing.assert_array_equal(clf.svc_.support_vectors_, ref.support_vectors_)
    np.testing.assert_array_equal(clf.predict(X), np.unique(y)[ref.predict((X - lo) / span)])
    full = make_estimator({"model": "svm_rbf", "C": 3.0, "gamma": 0.7}, None).fit(X, y)
    assert full.svc_.support_.size > clf.svc_.support_.size  # the other rows are not seen
    every = make_estimator({"model": "svm_rbf", "C": 3.0, "gamma": 0.7, "train_rows": 300}, None).fit(X, y)
    np.testing.assert_array_equal(every.svc_.support_vectors_, full.svc_.support_vectors_)


def test_train_rows_left_at_its_default_is_not_in_the_model_parameters():
    """So the task key of a stored SVM record is unchanged."""
    from bncbench.harness import app

    models = {m.label: m for m in app.plan(["+experiment=pernkopf", "dataset.names=[synth-nb]", "cv.mode=cv"]).models}
    assert "train_rows" not in models["SVM"].params and "train_rows" not in models["SVM (codes)"].params
