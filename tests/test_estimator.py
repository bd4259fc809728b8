"""BNClassifier follows scikit-learn conventions; the discretizing step behaves as specified."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import check_estimator

from bncbench import BNClassifier
from bncbench.errors import BNCBenchError
from bncbench.model.preprocess import Discretizer


def test_get_params_clone_round_trip():
    clf = BNClassifier(structure="kdb", k=3, m=5.0)
    params = clf.get_params()
    assert params["structure"] == "kdb" and params["k"] == 3 and params["m"] == 5.0
    twin = clone(clf)
    assert twin is not clf and twin.get_params() == params
    assert BNClassifier(**params).get_params() == params
    with pytest.raises(TypeError):
        BNClassifier("nb")  # keyword-only


def test_fitted_attributes_and_string_labels():
    iris = load_iris(as_frame=True)
    y = np.array(["setosa", "versicolor", "virginica"])[iris.target]
    clf = BNClassifier(structure="tan").fit(iris.data, y)
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert clf.n_features_in_ == 4 and list(clf.feature_names_in_) == list(iris.data.columns)
    assert len(clf.structure_) == 4 and sum(len(p) == 0 for p in clf.structure_) == 1
    proba = clf.predict_proba(iris.data)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (clf.predict(iris.data) == y).mean() > 0.9
    assert not hasattr(BNClassifier(), "classes_")


def test_works_inside_sklearn_model_selection():
    X, y = load_iris(return_X_y=True)
    scores = cross_val_score(BNClassifier(structure="kdb", k=1), X, y, cv=3)
    assert scores.mean() > 0.85


def test_sklearn_common_estimator_checks():
    # the full common-check suite of scikit-learn must pass
    check_estimator(BNClassifier())


def test_discretizer_iris_cut_points_are_wekas():
    iris = load_iris(as_frame=True)
    d = Discretizer().fit(iris.data, iris.target)
    want = [[5.55, 6.15], [2.95, 3.35], [2.45, 4.75], [0.8, 1.75]]
    for cuts, w in zip(d.cuts_, want):
        np.testing.assert_allclose(cuts, w, atol=1e-9)
    np.testing.assert_array_equal(d.cardinalities_, [3, 3, 3, 3])


def test_missing_is_a_value_of_its_own_and_unseen_values_do_not_crash():
    X = pd.DataFrame({
        "colour": pd.Categorical(["red", "blue", None, "red", "blue", None], categories=["red", "blue", "green"]),
        "size": [1.0, 2.0, 3.0, np.nan, 10.0, 11.0],
    })
    y = np.array([0, 0, 1, 1, 0, 1])
    d = Discretizer().fit(X, y)
    codes = d.transform(X)
    assert codes.flags.c_contiguous and codes.dtype == np.int64  # the compiled kernels read rows
    np.testing.assert_array_equal(codes, [[0, 0], [1, 0], [3, 0], [0, 1], [1, 0], [3, 0]])  # MDL: no cut in 5 values
    assert d.cardinalities_[0] == 4  # red, blue, green, missing
    assert (codes[[2, 5], 0] == 3).all()
    assert codes[3, 1] == d.cardinalities_[1] - 1  # numeric missing -> its own last code
    test = pd.DataFrame({"colour": pd.Categorical(["purple"]), "size": [np.nan]})
    out = d.transform(test)
    assert out[0, 0] == -1  # unknown category -> ignored by models
    clf = BNClassifier().fit(X, y)
    p = clf.predict_proba(pd.DataFrame({"colour": ["purple", "green"], "size": [np.nan, 500.0]}))
    assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1)


def test_discretizer_is_fitted_on_training_data_only():
    from bncbench.model.discretize import mdl_cut_points

    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = (x + rng.normal(scale=0.5, size=400) > 0).astype(int)
    d = Discretizer().fit(pd.DataFrame({"x": x[:200]}), y[:200])
    np.testing.assert_array_equal(d.cuts_[0], mdl_cut_points(x[:200], y[:200]))
    assert not np.array_equal(d.cuts_[0], mdl_cut_points(x, y))


def test_bad_fit_input_is_a_clear_error():
    with pytest.raises(BNCBenchError, match="only one class"):
        BNClassifier().fit(np.zeros((3, 2), dtype=int), [1, 1, 1])
    with pytest.raises(BNCBenchError, match="no rows"):
        BNClassifier().fit(np.zeros((0, 2), dtype=int), [])
    with pytest.raises(BNCBenchError, match="'param' parameter of BNClassifier must be a str among"):
        BNClassifier(param="bogus").fit(np.zeros((2, 2), dtype=int), [0, 1])


@pytest.mark.parametrize("y", [
    np.array([3, -2, 3, 7, -2]), np.array([250, 3, 3], dtype=np.uint8), np.array([-128, 127, 0], dtype=np.int8),
    np.array([10**12, 5, 5]),  # a range too wide to count: sorted by np.unique
    np.array([1, 0, 1], dtype=np.int16), np.array(["b", "a", "b"]), np.array([True, False, True]),
])
def test_labels_are_coded_as_numpy_unique_codes_them(y):
    from bncbench.model.classifier import _class_codes

    classes, codes = _class_codes(y)
    want_classes, want_codes = np.unique(y, return_inverse=True)
    assert classes.dtype == want_classes.dtype and codes.dtype == want_codes.dtype
    np.testing.assert_array_equal(classes, want_classes)
    np.testing.assert_array_equal(codes, want_codes)


def test_log_probabilities_are_the_joint_normalized_and_uniform_where_every_class_is_impossible():
    from scipy.special import logsumexp

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(300, 4))
    y = (X[:, 0] + rng.integers(0, 2, 300)) % 3
    test = rng.integers(0, 4, size=(200, 4))  # code 3 never seen in training: with m = 0 every class has P = 0
    for m in (1.0, 0.0):
        clf = BNClassifier(structure="tan", m=m, cardinalities=[4, 4, 4, 4]).fit(X, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            jll = clf._joint_log_likelihood(test)
            dead = ~np.isfinite(jll).any(axis=1)
            expected = jll - logsumexp(jll, axis=1, keepdims=True)
            got = clf.predict_log_proba(test)
        assert got.flags.c_contiguous and got.shape == (200, 3)
        assert dead.any() == (m == 0)
        np.testing.assert_allclose(got[~dead], expected[~dead], rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(got[dead], np.log(1 / 3))
    # far below exp's range (|log joint| of thousands: hundreds of attributes), one class impossible
    jll = np.array([[-1e4, -1e4 - 1.0, -np.inf], [-5e3, -7e3, -5e3 - 30.0]])
    clf._joint_log_likelihood = lambda X: jll.copy()
    np.testing.assert_allclose(clf.predict_log_proba(None), jll - logsumexp(jll, axis=1, keepdims=True), rtol=1e-13)
