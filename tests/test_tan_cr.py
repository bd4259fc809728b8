"""Discriminative TAN structures (Pernkopf et al., §4.2–4.3): TAN-CR and TAN-OMI-CR.

The incremental classification-rate scores are checked against refitting the m-estimate count
tables on every candidate structure; the searches against a planted problem and the forest invariant.
"""

from collections import Counter

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.components import STRUCTURES
from bncbench.structures.network import TrainingData
from bncbench.structures.cr_search import ArcScorer
from bncbench.structures.tan_cr import tan_cr
from bncbench.structures.tan_omi_cr import class_information_given, omi_order, tan_omi_cr
from bncbench.bn.count_tables import CountTables


def _full_correct(X, y, parents, cards, n_classes, m):
    """Correct training classifications of the m-estimate classifier refitted on ``parents``."""
    lj = CountTables(parents, cards, n_classes).fit(X, y).log_joint(X, m)
    return int(np.sum(np.argmax(lj, axis=1) == y)), lj


def _is_forest(parents):
    for start in range(len(parents)):
        seen, v = set(), start
        while parents[v]:
            assert len(parents[v]) == 1
            if v in seen:
                return False
            seen.add(v)
            v = parents[v][0]
    return True


def _data(rng, N=400, cards=(2, 3, 4, 3, 2, 3), n_classes=3):
    cards = np.asarray(cards)
    X = np.stack([rng.integers(0, c, N) for c in cards], axis=1)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, N)) % n_classes
    X[:, 2] = (X[:, 1] + (rng.random(N) < 0.2)) % cards[2]
    return X, y, cards, n_classes


@pytest.mark.parametrize("m", [1.0, 0.3])
def test_incremental_scores_equal_refitting_every_candidate(rng, m):
    X, y, cards, C = _data(rng)
    n = X.shape[1]
    scorer = ArcScorer(X, y, cards, C, m)
    for child, parent in [(3, 1), (1, 0)]:  # a forest state with arcs already in it
        scorer.add(child, parent)
    parents = scorer.parent_lists()
    correct, lj = _full_correct(X, y, parents, cards, C, m)
    np.testing.assert_allclose(scorer.log_joint, lj, rtol=1e-12, atol=1e-10)
    assert scorer.n_correct == correct
    children, cand = [], []
    for i in range(n):
        for j in range(n):
            if i != j and scorer.parent[i] < 0:
                children.append(i)
                cand.append(j)
    got = scorer.score(np.array(children), np.array(cand))
    for i, j, g in zip(children, cand, got):
        trial = list(parents)
        trial[i] = (j,)
        assert g == _full_correct(X, y, trial, cards, C, m)[0], (i, j)


def test_incremental_scores_with_unseen_parent_class_configurations(rng):
    """Sparse data: many (x_j, c) never seen, so classes back off to theta(x_i | c) as CountTables does."""
    X, y, cards, C = _data(rng, N=40, cards=(5, 6, 7, 5, 6, 4), n_classes=4)
    scorer = ArcScorer(X, y, cards, C, 1.0)
    parents = scorer.parent_lists()
    children, cand = np.nonzero(~np.eye(X.shape[1], dtype=bool))
    got = scorer.score(children, cand)
    for i, j, g in zip(children, cand, got):
        trial = list(parents)
        trial[i] = (int(j),)
        assert g == _full_correct(X, y, trial, cards, C, 1.0)[0]


def test_tan_cr_finds_the_planted_arc(rng):
    """The class is x0 XOR x1 (noisy): naive Bayes cannot tell, the arc between them can."""
    N = 600
    X = rng.integers(0, 2, size=(N, 6))
    y = (X[:, 0] ^ X[:, 1]) ^ (rng.random(N) < 0.05)
    parents, info = tan_cr(X, y, [2] * 6, 2)
    assert parents[0] == (1,) or parents[1] == (0,)
    assert info["train_cr"] > 0.9 > 0.6 > info["nb_train_cr"]
    assert _is_forest(parents)
    p2, info2 = tan_omi_cr(X, y, [2] * 6, 2)
    assert p2[0] == (1,) or p2[1] == (0,)
    assert info2["train_cr"] > 0.9


@pytest.mark.parametrize("search", [tan_cr, tan_omi_cr])
def test_searches_give_forests_and_never_lower_the_training_rate(rng, search):
    X, y, cards, C = _data(rng, N=300, cards=(3, 3, 3, 2, 4, 3, 2, 3, 3, 2))
    parents, info = search(X, y, cards, C)
    assert len(parents) == X.shape[1] and _is_forest(parents)
    correct, _ = _full_correct(X, y, parents, cards, C, 1.0)
    assert info["train_cr"] == pytest.approx(correct / len(y))
    assert info["train_cr"] >= info["nb_train_cr"]
    assert info["n_arcs"] == sum(1 for p in parents if p)


def test_tan_cr_stops_when_no_arc_improves(rng):
    """Each arc it kept raised the rate; at the end no admissible arc raises it further."""
    X, y, cards, C = _data(rng, N=300)
    parents, info = tan_cr(X, y, cards, C)
    scorer = ArcScorer(X, y, cards, C, 1.0)
    for i, p in enumerate(parents):
        if p:
            scorer.add(i, p[0])
    root = scorer.root()
    kids, pars = [], []
    for i in range(len(parents)):
        for j in range(len(parents)):
            if i != j and not parents[i] and root[j] != i:
                kids.append(i)
                pars.append(j)
    if kids:
        assert scorer.score(np.array(kids), np.array(pars)).max() <= scorer.n_correct


def _brute_class_info(xi, xj, y):
    n = len(y)
    t, ab, bc, b = Counter(zip(xi, xj, y)), Counter(zip(xi, xj)), Counter(zip(xj, y)), Counter(xj)
    return sum(c / n * np.log(c * b[q] / (ab[(p, q)] * bc[(q, k)])) for (p, q, k), c in t.items())


def test_order_uses_class_information_given_each_predecessor(rng):
    X, y, cards, C = _data(rng, N=250)
    scorer = ArcScorer(X, y, cards, C)
    info = class_information_given(scorer)
    for i in range(X.shape[1]):
        for j in range(X.shape[1]):
            want = 0.0 if i == j else _brute_class_info(X[:, i].tolist(), X[:, j].tolist(), y.tolist())
            assert info[i, j] == pytest.approx(max(want, 0.0), abs=1e-12)
    order = omi_order(scorer)
    assert sorted(order) == list(range(X.shape[1]))
    # the second attribute is the most informative about C given the first (exact at this step)
    rest = [a for a in range(X.shape[1]) if a != order[0]]
    assert order[1] == rest[int(np.argmax(info[rest, order[0]]))]


@pytest.mark.parametrize("name", ["tan_cr", "tan_omi_cr"])
def test_registered_and_usable_from_the_classifier(rng, name):
    X, y, cards, C = _data(rng, N=200)
    learned = STRUCTURES[name].obj(TrainingData(X, y, cards, C))
    assert _is_forest(learned.parents)
    clf = BNClassifier(structure=name).fit(X, y)
    assert clf.predict(X).shape == y.shape
    assert clf.score(X, y) >= np.mean(BNClassifier(structure="nb").fit(X, y).predict(X) == y)


@pytest.mark.parametrize("name", ["tan_cr", "tan_omi_cr"])
def test_missing_values_are_summed_out_exactly(name):
    """The searches give forests, so missing="marginalize" applies: against the sum over completions."""
    import itertools

    from scipy.special import logsumexp

    rng = np.random.default_rng(3)
    cards = np.array([2, 3, 4, 2, 3])
    X = np.stack([rng.integers(0, c, 400) for c in cards], 1)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.integers(0, 2, 400)) % 3
    clf = BNClassifier(structure=name, missing="marginalize", cardinalities=cards).fit(X, y)
    assert any(clf.structure_)  # arcs were found: not naive Bayes
    Xt = X[:40].copy()
    Xt[rng.random(Xt.shape) < 0.4] = -1
    want = []
    for row in Xt:
        miss = np.flatnonzero(row < 0)
        full = np.array([np.where(row < 0, 0, row)] * int(np.prod(cards[miss])))
        full[:, miss] = list(itertools.product(*[range(cards[j]) for j in miss]))
        want.append(logsumexp(clf.scorer_.log_joint(full), axis=0))
    np.testing.assert_allclose(clf._joint_log_likelihood(Xt), np.array(want), rtol=0, atol=1e-12)


def test_scorer_cmi_is_the_shared_one(rng):
    from bncbench.bn.counts import conditional_mutual_information

    X, y, cards, C = _data(rng)
    np.testing.assert_allclose(ArcScorer(X, y, cards, C).class_conditional_mi(),
                               conditional_mutual_information(X, y, cards, C), rtol=0, atol=1e-15)
