"""kNN imputation of test features (Pernkopf et al., §5.1): against scikit-learn's KNNImputer and brute force."""

from collections import Counter

import numpy as np
import pytest
from sklearn.impute import KNNImputer

from bncbench.errors import BNCBenchError
from bncbench.model import impute
from bncbench.model.impute import knn_impute, knn_neighbours


def _brute_neighbours(Xtr, x, miss, k, metric):
    obs = ~miss
    if metric == "hamming":
        d = [np.sum(Xtr[r, obs] != x[obs]) for r in range(len(Xtr))]
    else:
        d = [np.sum((Xtr[r, obs] - x[obs]) ** 2) for r in range(len(Xtr))]
    return np.argsort(d, kind="stable")[:k]


def test_mean_imputation_equals_sklearn_knn_imputer(rng):
    Xtr = rng.normal(size=(80, 6))
    Xte = rng.normal(size=(25, 6))
    miss = rng.random((25, 6)) < 0.3
    miss[0] = False  # a complete row stays as it is
    ours = knn_impute(Xtr, Xte, miss, k=4, how="mean")
    ref = KNNImputer(n_neighbors=4).fit(Xtr).transform(np.where(miss, np.nan, Xte))
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours[~miss], Xte[~miss])


@pytest.mark.parametrize("metric", ["euclidean", "hamming"])
def test_neighbours_match_brute_force(rng, metric):
    # continuous training values: no distance ties for the Euclidean case
    Xtr = rng.normal(size=(50, 5)) if metric == "euclidean" else rng.integers(0, 6, size=(50, 9))
    Xte = rng.normal(size=(12, 5)) if metric == "euclidean" else rng.integers(0, 6, size=(12, 9))
    miss = rng.random(Xte.shape) < 0.35
    nb = knn_neighbours(Xtr, Xte, miss, 3, metric)
    for t in range(len(Xte)):
        want = _brute_neighbours(Xtr, Xte[t], miss[t], 3, metric)
        if metric == "euclidean":
            assert list(nb[t]) == list(want)
        else:  # Hamming distances tie: compare the distances of the chosen neighbours
            obs = ~miss[t]
            dist = lambda rows: sorted(int(np.sum(Xtr[r, obs] != Xte[t, obs])) for r in rows)  # noqa: E731
            assert dist(nb[t]) == dist(want)


def test_hamming_by_one_hot_product_equals_the_count_per_attribute(rng, monkeypatch):
    """The one-hot matrix product gives the attribute-by-attribute mismatch count to the bit (and so the
    same neighbours, ties included), with test values no training row has and the large-table fallback."""
    Xtr = rng.integers(0, 5, size=(300, 11)).astype(float)
    Xtr[:, 3] = rng.choice([-2.5, 0.5, 7.0], size=300)  # codes need not be 0..v-1
    Xte = rng.integers(0, 7, size=(40, 11)).astype(float)  # 5 and 6: unseen in training
    Xte[:, 3] = rng.choice([-2.5, 0.5, 3.0], size=40)
    miss = rng.random(Xte.shape) < 0.3
    o, z = (~miss).astype(float), np.where(miss, 0.0, Xte)
    want = np.zeros((40, 300))
    for j in range(11):
        want += (z[:, j, None] != Xtr[None, :, j]) * o[:, j, None]
    onehot = impute._OneHot(Xtr)
    assert onehot.B is not None
    np.testing.assert_array_equal(onehot.mismatches(z, o), want)
    monkeypatch.setattr(impute, "BATCH_ENTRIES", 8)  # the one-hot table exceeds the budget: counted per attribute
    small = impute._OneHot(Xtr)
    assert small.B is None
    np.testing.assert_array_equal(small.mismatches(z, o), want)
    np.testing.assert_array_equal(knn_neighbours(Xtr, Xte, miss, 6, "hamming"),
                                  (monkeypatch.undo(), knn_neighbours(Xtr, Xte, miss, 6, "hamming"))[1])


def test_mode_imputation_most_frequent_value_of_the_neighbours():
    """Hand-made: the test row matches training rows 0-4 on its observed features and no other."""
    Xtr = np.array([[0, 0, 2], [0, 0, 2], [0, 0, 1], [0, 0, 2], [0, 0, 1],
                    [3, 3, 0], [3, 3, 0], [3, 3, 0], [3, 3, 0], [3, 3, 0]])
    Xte = np.array([[0, 0, -1], [3, -1, -1]])
    miss = Xte < 0
    out = knn_impute(Xtr, Xte, miss, k=5, how="mode")
    assert out.tolist() == [[0, 0, 2], [3, 3, 0]]
    assert out.dtype == Xte.dtype
    # a tie between two values goes to the smaller one
    out = knn_impute(Xtr[:4], np.array([[0, 0, -1]]), np.array([[False, False, True]]), k=2, how="mode")
    assert out[0, 2] in (1, 2)
    vals = Counter(Xtr[knn_neighbours(Xtr[:4], np.array([[0, 0, 0]]), np.array([[False, False, True]]), 2,
                                      "hamming")[0], 2])
    top = max(vals.values())
    assert out[0, 2] == min(v for v, c in vals.items() if c == top)


def test_mode_imputation_against_brute_force(rng):
    Xtr = rng.integers(0, 4, size=(60, 7))
    Xte = rng.integers(0, 4, size=(15, 7))
    miss = rng.random(Xte.shape) < 0.3
    out = knn_impute(Xtr, Xte, miss, k=7, how="mode")
    nb = knn_neighbours(Xtr, Xte, miss, 7, "hamming")
    for t in range(len(Xte)):
        for j in np.flatnonzero(miss[t]):
            c = Counter(Xtr[nb[t], j].tolist())
            top = max(c.values())
            assert out[t, j] == min(v for v, n in c.items() if n == top)
        np.testing.assert_array_equal(out[t, ~miss[t]], Xte[t, ~miss[t]])


def test_bad_arguments():
    X = np.zeros((4, 2))
    with pytest.raises(BNCBenchError, match="k must be"):
        knn_impute(X, X, np.zeros((4, 2), bool) | True, k=9)
    with pytest.raises(BNCBenchError, match="unknown imputation"):
        knn_impute(X, X, np.ones((4, 2), bool), how="median")
    with pytest.raises(BNCBenchError, match="missing mask"):
        knn_neighbours(X, X, np.ones((3, 2), bool), 1)
    with pytest.raises(BNCBenchError, match="metric"):
        knn_neighbours(X, X, np.ones((4, 2), bool), 1, metric="cosine")
