"""Structure learning: information quantities, TAN tree recovery, KDB parent choice."""

from collections import Counter

import numpy as np
import pytest

from bncbench.bn.counts import conditional_mutual_information, mutual_information
from bncbench.data.sources import RandomBNC, sample_random_bnc
from bncbench.errors import BNCBenchError
from bncbench.components import STRUCTURES
from bncbench.structures.custom import validate_parents
from bncbench.structures.kdb import kdb
from bncbench.structures.nb import naive_bayes
from bncbench.structures.tan import tan


def _brute_mi(x, y):
    n = len(x)
    pxy, px, py = Counter(zip(x, y)), Counter(x), Counter(y)
    return sum(c / n * np.log(c * n / (px[a] * py[b])) for (a, b), c in pxy.items())


def _brute_cmi(a, b, y):
    n = len(y)
    pab_y, pa_y, pb_y, py = Counter(zip(a, b, y)), Counter(zip(a, y)), Counter(zip(b, y)), Counter(y)
    return sum(c / n * np.log(c * py[k] / (pa_y[(i, k)] * pb_y[(j, k)])) for (i, j, k), c in pab_y.items())


def test_information_quantities_match_brute_force(rng):
    X = rng.integers(0, 3, size=(300, 4))
    X[:, 1] = (X[:, 0] + rng.integers(0, 2, 300)) % 3
    y = (X[:, 0] + rng.integers(0, 2, 300)) % 2
    cards = [3, 3, 3, 3]
    mi = mutual_information(X, y, cards, 2)
    cmi = conditional_mutual_information(X, y, cards, 2)
    for i in range(4):
        assert mi[i] == pytest.approx(_brute_mi(X[:, i].tolist(), y.tolist()), abs=1e-12)
        for j in range(4):
            want = 0.0 if i == j else _brute_cmi(X[:, i].tolist(), X[:, j].tolist(), y.tolist())
            assert cmi[i, j] == pytest.approx(max(want, 0.0), abs=1e-12)


def _tree_bnc(parents, card=3, n_classes=2, alpha=0.3, seed=0):
    rng = np.random.default_rng(seed)
    cards = np.full(len(parents), card)
    cpts = [rng.dirichlet(np.full(card, alpha), size=(n_classes, *[card] * len(p))) for p in parents]
    return RandomBNC(parents, cards, rng.dirichlet(np.ones(n_classes) * 5), cpts)


def test_tan_recovers_the_true_tree():
    true = [(), (0,), (0,), (1,), (1,), (2,), (5,), (6,)]
    model = _tree_bnc(true, seed=4)
    X, y = sample_random_bnc(model, 20000, seed=1)
    learned = tan(X, y, model.cards, 2)
    edges = lambda ps: {frozenset((i, p)) for i, pp in enumerate(ps) for p in pp}  # noqa: E731
    assert edges(learned) == edges(true)
    # a tree: exactly one root, every other attribute one parent
    assert sum(len(p) == 0 for p in learned) == 1
    assert all(len(p) <= 1 for p in learned)


def test_tan_root_and_direction():
    true = [(), (0,), (1,), (2,)]
    model = _tree_bnc(true, seed=2)
    X, y = sample_random_bnc(model, 20000, seed=3)
    learned = tan(X, y, model.cards, 2, root=3)
    assert learned == [(1,), (2,), (3,), ()]


def test_kdb_parent_choice_on_a_hand_built_example(rng):
    n = 5000
    y = rng.integers(0, 2, n)
    flip = lambda v, p: np.where(rng.random(n) < p, 1 - v, v)  # noqa: E731
    x0 = flip(y, 0.05)              # most informative about y
    x1 = flip(x0, 0.2)              # depends on x0 beyond y
    x2 = rng.integers(0, 2, n)      # noise
    x3 = flip(x1, 0.1)              # depends on x1 most, x0 less
    X = np.column_stack([x0, x1, x2, x3])
    cards = [2, 2, 2, 2]
    mi = mutual_information(X, y, cards, 2)
    order = list(np.argsort(-mi, kind="stable"))
    assert order[:3] == [0, 1, 3] and order[3] == 2
    s1 = kdb(X, y, cards, 2, 1)
    assert s1[0] == () and s1[1] == (0,) and s1[3] == (1,)
    s2 = kdb(X, y, cards, 2, 2)
    assert s2[3] == (1, 0)  # both earlier attributes, most dependent first
    assert s2[2] in {(1, 3), (3, 1), (0, 3), (3, 0), (0, 1), (1, 0)} and len(s2[2]) == 2
    assert kdb(X, y, cards, 2, 0) == naive_bayes(4)


def test_kdb_matches_brute_force_definition(rng):
    X = rng.integers(0, 3, size=(400, 6))
    X[:, 2] = (X[:, 1] + X[:, 0]) % 3
    y = (X[:, 0] + X[:, 2] + rng.integers(0, 2, 400)) % 2
    cards = [3] * 6
    mi = mutual_information(X, y, cards, 2)
    cmi = conditional_mutual_information(X, y, cards, 2)
    order = np.argsort(-mi, kind="stable")
    got = kdb(X, y, cards, 2, 2)
    for pos, i in enumerate(order):
        earlier = list(order[:pos])
        want = tuple(sorted(earlier, key=lambda j: (-cmi[i, j], earlier.index(j)))[:2])
        assert got[i] == want


def test_bad_structures_are_clear_errors():
    X = np.zeros((4, 3), dtype=int)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(BNCBenchError, match="k >= 0"):
        kdb(X, y, [1, 1, 1], 2, -1)
    with pytest.raises(BNCBenchError, match="unknown structure"):
        STRUCTURES["forest"]
    with pytest.raises(BNCBenchError, match="cycle"):
        validate_parents([(1,), (2,), (0,)], 3)
    assert validate_parents([(), (0,), (0, 1)], 3) == [(), (0,), (0, 1)]
