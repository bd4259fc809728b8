"""The SVM baseline on the raw (continuous) features of a fold (Pernkopf et al.'s SVM), through the runner."""

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from bncbench.harness.model_specs import make_estimator
from bncbench.data import specs
from bncbench.harness.model_specs import ModelSpec
from bncbench.harness.missing_protocol import settings
from bncbench.harness.raw_features import raw_matrix, reads_raw
from bncbench.harness.runner import Protocol, Task, _prepared_fold, evaluate_task
from bncbench.harness.protocol import cv_folds

GRID = {"C": [1.0, 10.0], "gamma": [0.1, 1.0]}


def test_raw_matrix_keeps_numeric_values_and_the_codes_of_nominal_attributes():
    X = pd.DataFrame({"a": [0.5, np.nan, 2.0], "b": pd.Categorical(["u", "v", "u"]), "c": [-1.0, 3.0, 7.5]})
    codes = np.array([[0, 1, 0], [2, 0, 1], [1, 1, 2]])
    R = raw_matrix(X, codes)
    np.testing.assert_array_equal(R[:, 0], [0.5, np.nan, 2.0])
    np.testing.assert_array_equal(R[:, 1], [1.0, 0.0, 1.0])  # nominal: its code
    np.testing.assert_array_equal(R[:, 2], [-1.0, 3.0, 7.5])
    assert reads_raw(make_estimator({"model": "svm_rbf", "features": "raw"}, None))
    assert not reads_raw(make_estimator({"model": "svm_rbf"}, None))
    assert not reads_raw(make_estimator({"model": "random_forest"}, None))


def test_a_missing_raw_value_is_the_training_mean_of_its_column():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] > 0).astype(int)
    Xn = X.copy()
    Xn[::7, 1] = np.nan
    mean = np.nanmean(Xn[:, 1])
    clf = make_estimator({"model": "svm_rbf", "features": "raw", "C": 2.0, "gamma": 0.5}, None).fit(Xn, y)
    Xf = Xn.copy()
    Xf[::7, 1] = mean
    ref = make_estimator({"model": "svm_rbf", "C": 2.0, "gamma": 0.5}, None).fit(Xf, y)
    np.testing.assert_array_equal(clf.predict(Xn), ref.predict(Xf))
    assert clf.fill_[1] == pytest.approx(mean)


@pytest.mark.parametrize("features", ["raw", "codes"])
def test_the_runner_gives_the_raw_features_to_an_svm_that_asks_for_them(features):
    ds_spec = specs.resolve(["sklearn-wine"])[0]
    params = {"model": "svm_rbf", "grid": GRID, **({"features": "raw"} if features == "raw" else {})}
    p = Protocol(seed=0, rounds=1, folds=2, missing_features=settings({"ks": [0, 3], "repeats": 2}))
    rec = evaluate_task(Task(ds_spec, ModelSpec("SVM", params), 0, 1, p))
    assert rec.status == "ok", rec.error
    ds = specs.load(ds_spec, None)
    assign = cv_folds(ds.y, seed=0, dataset=ds.name, round_=0, folds=2)
    train, test = np.flatnonzero(assign != 1), np.flatnonzero(assign == 1)
    if features == "raw":  # wine's 13 attributes as they are, each scaled to [0, 1] by its training range
        X = ds.X.to_numpy(dtype=float)
    else:
        X = _prepared_fold(__import__("json").dumps(ds_spec, sort_keys=True), None, 0, 2, 0, 1)[3].astype(float)
    lo, hi = X[train].min(axis=0), X[train].max(axis=0)
    Z = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    C, g = rec.tuning["chosen"]["C"], rec.tuning["chosen"]["gamma"]
    ref = SVC(kernel="rbf", C=C, gamma=g).fit(Z[train], ds.y[train])
    np.testing.assert_array_equal(rec.arrays["y_pred"], ref.predict(Z[test]))
    assert rec.missing_features["method"] == "knn_mean"
    assert rec.missing_features["rate"][0] == [pytest.approx(1 - rec.zero_one)] * 2  # k = 0: the plain rate


@pytest.mark.parametrize("features", ["raw", "codes"])
def test_the_untimed_warm_up_fits_on_the_timed_fits_own_inputs(recorded_fits, features):
    import bncbench.harness.runner as runner

    ds_spec = specs.resolve(["sklearn-wine"])[0]  # 13 numeric attributes: raw values differ from their codes
    params = {"model": "svm_rbf", "grid": {"C": [1.0], "gamma": [0.5]}, "features": features}
    rec = evaluate_task(Task(ds_spec, ModelSpec("SVM", params), 0, 1, Protocol(seed=0, rounds=1, folds=2)))
    assert rec.status == "ok", rec.error
    (_, warm_X, warm_y), (_, timed_X, timed_y) = recorded_fits[0], recorded_fits[-1]
    assert len(warm_y) == runner.WARM_UP_ROWS and len(timed_y) > runner.WARM_UP_ROWS
    np.testing.assert_array_equal(warm_X, timed_X[:runner.WARM_UP_ROWS])  # the same matrix, the same rows
    np.testing.assert_array_equal(warm_y, timed_y[:runner.WARM_UP_ROWS])
    assert (np.any(timed_X != np.round(timed_X))) == (features == "raw")  # raw: wine's real values, not codes
