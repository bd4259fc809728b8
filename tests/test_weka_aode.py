"""Our A1DE is Weka's AODE: the same class probabilities (to 1e-6) on the same codes.

Weka 3.6's ``weka.classifiers.bayes.AODE -F f -M -W m`` is ``BNClassifier(structure="ande", n=1,
min_count=f, m=m)`` (see docs/deep_broad.md for what it computes). Runs when Weka is installed
(``apt-get install weka``, or ``WEKA_JAR``) with ``java``/``javac``; skipped with the reason otherwise.
"""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data import specs
from bncbench.model.preprocess import Discretizer
from bncbench.peers.weka import DEFAULT_JAR, run_weka, weka_jar

pytestmark = pytest.mark.skipif(weka_jar() is None, reason=f"Weka is not installed (no $WEKA_JAR or {DEFAULT_JAR}, "
                                "or no java/javac): apt-get install -y weka")

AODE = "weka.classifiers.bayes.AODE"


def _ours(train, y, test, cards, *, limit, m):
    clf = BNClassifier(structure="ande", n=1, min_count=limit, m=float(m), cardinalities=cards).fit(train, y)
    return clf.predict_proba(test)


def _synthetic():
    """Rare and never-seen attribute values, so that the frequency limit and the fallback matter."""
    rng = np.random.default_rng(2)
    N, cards = 1500, np.array([3, 4, 2, 5, 3, 7])
    X = rng.integers(0, cards, size=(N, 6))
    X[:, 5] = np.where(rng.random(N) < 0.97, 0, X[:, 5])
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.integers(0, 2, N)) % 3
    train, test = X[:1000].copy(), X[1000:].copy()
    train[train[:, 3] == 4, 3] = 3  # value 4 of attribute 3 only at prediction
    return train, y[:1000], test, cards, 3


@pytest.mark.parametrize("limit,m", [(1, 1), (5, 3), (30, 1), (0, 2), (10 ** 6, 1)])
def test_a1de_is_wekas_aode_on_synthetic_codes(limit, m):
    train, y, test, cards, n_classes = _synthetic()
    weka = run_weka(AODE, ["-F", limit, "-M", "-W", m], train, y, test, cards, n_classes)
    ours = _ours(train, y, test, cards, limit=limit, m=m)
    assert weka.proba.shape == ours.shape
    np.testing.assert_allclose(ours, weka.proba, rtol=0, atol=1e-6)
    assert np.abs(ours - weka.proba).max() < 1e-12  # in fact to rounding


@pytest.mark.parametrize("name", ["sklearn-wine", "sklearn-breast_cancer"])
def test_a1de_is_wekas_aode_on_discretized_data(name):
    ds = specs.load(specs.resolve([name])[0])
    y = np.asarray(ds.y, dtype=np.int64)
    train = np.arange(len(y)) % 2 == 0
    disc = Discretizer().fit(ds.X[train], y[train])
    codes = disc.transform(ds.X)
    test = codes[~train]
    test = np.where(test < 0, 0, test)  # Weka's ARFF holds in-range values only
    weka = run_weka(AODE, ["-F", 1, "-M", "-W", 1], codes[train], y[train], test, disc.cardinalities_, ds.n_classes)
    ours = _ours(codes[train], y[train], test, disc.cardinalities_, limit=1, m=1)
    np.testing.assert_allclose(ours, weka.proba, rtol=0, atol=1e-6)
