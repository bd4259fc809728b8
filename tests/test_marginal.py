"""missing="marginalize": the exact sum over the values of the attributes missing at prediction time."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from bncbench import BNClassifier
from bncbench.errors import BNCBenchError
from bncbench.registry import ParameterError

CARDS = np.array([2, 3, 4, 2, 3])


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = np.stack([rng.integers(0, c, n) for c in CARDS], 1)
    # the class depends on pairs, so that TAN and KDB-1 find attribute parents
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.integers(0, 2, n)) % 3
    return X, y


def with_gaps(X, p=0.4, seed=1):
    rng = np.random.default_rng(seed)
    Xt = X.copy()
    Xt[rng.random(Xt.shape) < p] = -1
    return Xt


def enumerated(clf, Xt):
    """log sum over every completion of each row's missing values of the model's log joint (the oracle).

    Only the network's attributes are completed: one it leaves out (SkDB) is in no factor."""
    out = []
    for row in Xt:
        miss = np.intersect1d(np.flatnonzero(row < 0), clf.columns_)
        full = np.array([np.where(row < 0, 0, row)] * int(np.prod(CARDS[miss])))
        full[:, miss] = list(itertools.product(*[range(CARDS[j]) for j in miss]))
        out.append(logsumexp(clf.scorer_.log_joint(full), axis=0))
    return np.array(out)


def same(a, b):
    """Equal to 1e-12, infinities where the other has them."""
    both_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    return bool(np.all(both_inf | (np.abs(np.where(both_inf, 0, a) - np.where(both_inf, 0, b)) <= 1e-12)))


MODELS = [dict(structure="nb"), dict(structure="tan"), dict(structure="kdb", k=1), dict(structure="tan", m=0.0),
          dict(structure="tan", m="auto"), dict(structure="skdb", k=1),
          dict(structure="tan", param="weighted", reg="l2", lam=0.1), dict(structure="tan", param="discriminative"),
          dict(structure="tan", param="extended"), dict(structure="kdb", k=1, param="discriminative", init="generative"),
          dict(structure="tan", estimator="hdp", hdp_iterations=30),
          dict(structure="kdb", k=1, backoff="any_class"), dict(structure="tan", m=0.0, backoff="any_class"),
          dict(structure="skdb", k=1, backoff="any_class")]


@pytest.mark.parametrize("kw", MODELS, ids=lambda kw: "-".join(map(str, kw.values())))
def test_the_sum_over_every_completion(kw):
    X, y = data()
    clf = BNClassifier(missing="marginalize", cardinalities=CARDS, **kw).fit(X, y)
    Xt = with_gaps(X[:60])
    assert (Xt < 0).any(axis=1).sum() > 50
    got = clf._joint_log_likelihood(Xt)
    assert same(got, enumerated(clf, Xt))
    # complete rows: the forest's pass gives the model's own log joint
    assert same(clf.forest_.log_joint(X[:60]), clf.scorer_.log_joint(X[:60]))


def test_the_back_off_rule_is_summed_over_as_scored():
    # class 2 never has x1 = 2 (nor x3 = 1): its children's tables back off there, by the chosen rule
    X, y = data()
    keep = ~((y == 2) & ((X[:, 1] == 2) | (X[:, 3] == 1)))
    X, y = X[keep], y[keep]
    Xt = with_gaps(np.vstack([X[:40], np.where(np.arange(5) == 1, 2, X[40:80])]))
    got = {}
    for backoff in ("per_class", "any_class"):
        clf = BNClassifier(structure="tan", backoff=backoff, missing="marginalize", cardinalities=CARDS).fit(X, y)
        got[backoff] = clf._joint_log_likelihood(Xt)
        assert same(got[backoff], enumerated(clf, Xt))
    assert np.abs(got["per_class"] - got["any_class"]).max() > 0.1


def test_tan_differs_from_ignoring_and_nb_does_not():
    """NB's missing factors sum to one, so "ignore" is already exact; TAN's children of a missing
    parent share it, which "ignore" (each child backs off alone) does not see."""
    X, y = data()
    Xt = with_gaps(X[:60])
    for structure, differs in (("nb", False), ("tan", True)):
        exact = BNClassifier(structure=structure, missing="marginalize", cardinalities=CARDS).fit(X, y)
        ignore = BNClassifier(structure=structure, cardinalities=CARDS).fit(X, y)
        gap = np.abs(exact.predict_proba(Xt) - ignore.predict_proba(Xt)).max()
        assert (gap > 1e-3) if differs else (gap < 1e-12), (structure, gap)


def test_an_instance_with_nothing_known_gets_the_class_prior():
    X, y = data()
    for kw in (dict(structure="tan"), dict(structure="kdb", k=1, m=0.5),
               dict(structure="tan", estimator="hdp", hdp_iterations=30)):
        clf = BNClassifier(missing="marginalize", cardinalities=CARDS, **kw).fit(X, y)
        p = clf.predict_proba(np.full((3, len(CARDS)), -1))
        np.testing.assert_allclose(p, np.exp(clf.scorer_.log_prior())[None].repeat(3, 0), rtol=1e-12)


def test_a_hand_computed_tan_with_two_children_of_a_missing_root():
    """x0 -> x1, x0 -> x2 (x0 the root), x0 missing: P(y, x1, x2) = sum_x0 P(y) P(x0|y) P(x1|y,x0) P(x2|y,x0)
    with maximum likelihood counts, summed here by hand from the training table."""
    X = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1], [1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 0, 0], [1, 1, 1]])
    y = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    clf = BNClassifier(structure="custom", parents=[(), (0,), (0,)], m=0.0, missing="marginalize",
                       cardinalities=[2, 2, 2]).fit(X, y)
    want = np.zeros(2)
    for c in (0, 1):
        Xc = X[y == c]
        for x0 in (0, 1):
            r = Xc[Xc[:, 0] == x0]
            want[c] += len(Xc) / len(X) * len(r) / len(Xc) * np.mean(r[:, 1] == 1) * np.mean(r[:, 2] == 0)
    got = np.exp(clf._joint_log_likelihood(np.array([[-1, 1, 0]])))[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nan_in_a_table_is_summed_over_where_training_had_none():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.choice(["u", "v", "w"], 300), "b": rng.choice(["p", "q"], 300),
                       "c": rng.normal(size=300)})
    y = (df["a"] == "u").to_numpy() ^ (df["c"] > 0).to_numpy()
    clf = BNClassifier(structure="tan", missing="marginalize").fit(df, y)
    test = df.iloc[:20].copy()
    test.loc[test.index[:10], "a"] = np.nan
    codes = clf.discretizer_.transform(test)
    assert (codes[:10, 0] == -1).all()
    np.testing.assert_allclose(clf._joint_log_likelihood(test), clf.forest_.log_joint(codes), rtol=1e-12)


@pytest.mark.parametrize("kw, match", [
    (dict(structure="kdb", k=2), r"at most one attribute parent \(NB, TAN, KDB-1\); attribute \d+ of structure='kdb'"),
    (dict(structure="ande", n=1), r"needs the estimates \(estimator=map or hdp\) .* scores with AnDEScorer"),
    (dict(structure="anje", n=2), "scores with AnJEScorer"),
])
def test_models_it_cannot_sum_over_are_one_line_at_fit(kw, match):
    X, y = data(120)
    with pytest.raises(BNCBenchError, match=match) as err:
        BNClassifier(missing="marginalize", cardinalities=CARDS, **kw).fit(X, y)
    assert "\n" not in str(err.value)
    BNClassifier(cardinalities=CARDS, **kw).fit(X, y)          # the default is unaffected


def test_the_keyword_is_validated():
    with pytest.raises(ParameterError, match="missing"):
        BNClassifier(missing="impute").fit(*data(50))
