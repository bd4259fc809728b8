"""Features removed at test time (Pernkopf et al., Fig. 6): the masks and the curve."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.errors import BNCBenchError
from bncbench.model.impute import knn_impute
from bncbench.harness.missing_features import missing_feature_curve, random_missing_mask


def test_masks_remove_exactly_k_per_row_uniformly(rng):
    m = random_missing_mask(2000, 5, 2, rng)
    assert np.all(m.sum(axis=1) == 2)
    assert np.allclose(m.mean(axis=0), 0.4, atol=0.04)  # every feature equally likely
    assert len({tuple(r) for r in m}) == 10  # all C(5, 2) patterns occur: drawn per row
    assert not random_missing_mask(3, 4, 0, rng).any() and random_missing_mask(3, 4, 4, rng).all()
    with pytest.raises(BNCBenchError):
        random_missing_mask(3, 4, 5, rng)


def _data(rng, n=300):
    cards = np.array([3, 3, 2, 4])
    X = np.stack([rng.integers(0, c, n) for c in cards], 1)
    y = (X[:, 0] + (X[:, 1] > 0) + rng.integers(0, 2, n)) % 3
    return X, y, cards


def test_curve_endpoints(rng):
    X, y, cards = _data(rng)
    clf = BNClassifier(structure="tan", missing="marginalize", cardinalities=cards).fit(X[:200], y[:200])
    curve = missing_feature_curve(clf.predict, X[200:], y[200:], ks=[0, 2, 4], repeats=3, seed=1)
    assert list(curve.columns) == ["k", "repeat", "rate"] and len(curve) == 9
    full = np.mean(clf.predict(X[200:]) == y[200:])
    assert np.allclose(curve.loc[curve.k == 0, "rate"], full)
    # nothing known: every row gets the class of highest prior
    prior_class = clf.classes_[np.argmax(clf.scorer_.log_prior())]
    assert np.allclose(curve.loc[curve.k == 4, "rate"], np.mean(y[200:] == prior_class))
    # the same seed draws the same masks: a second model is compared on the same removals
    again = missing_feature_curve(clf.predict, X[200:], y[200:], ks=[0, 2, 4], repeats=3, seed=1)
    assert again.equals(curve)


def test_imputation_sees_only_the_kept_values(rng):
    X, y, cards = _data(rng)
    seen = []

    def impute(Xm, mask):
        seen.append(Xm[mask])
        return knn_impute(X[:200], Xm, mask, k=5, how="mode")

    clf = BNClassifier(structure="nb", cardinalities=cards).fit(X[:200], y[:200])
    curve = missing_feature_curve(clf.predict, X[200:], y[200:], ks=[1, 3], repeats=2, impute=impute)
    assert len(seen) == 4 and all(np.all(v == -1) for v in seen)
    assert curve["rate"].between(0, 1).all()
