"""Canonical form and perfection (Feelders & Ivanovs §3.1): which structures map to logistic regression."""

import itertools

import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.errors import BNCBenchError
from bncbench.structures.canonical import (canonical_form, check_perfect, is_chordal, lr_parameter_count,
                                           roos_parameter_count)

# Fig. 1 of the paper, attributes 0-based (the paper's X1..X5 are 0..4): X1, X2 parents of the class
# (married by the canonical form), X3 a child with parent X1, X4 a child with parent X3, X5 a child.
FIG1 = dict(attribute_parents=[(), (), (0,), (2,), ()], class_children=[2, 3, 4], class_parents=[0, 1])


def _data(seed=0, n=400, n_attr=6):
    model = random_bnc(n_attr, (2, 3), p=2, n_classes=3, alpha=1.0, seed=seed)
    X, y = sample_random_bnc(model, n, seed=seed + 1)
    return X, y, model.cards


def test_fig1_example_counts_9_lr_and_14_roos_parameters():
    g = canonical_form(**FIG1)
    check_perfect(g)
    assert g.parents[1] == (0,)  # the class's parents married
    assert sorted(g.complete_sets(), key=lambda c: (len(c), c)) == [(0,), (1,), (2,), (3,), (4,), (0, 1), (0, 2),
                                                                     (2, 3)]
    assert g.roos_families() == [(0, 1), (0, 2), (2, 3), (4,)]
    cards = [2] * 5
    assert lr_parameter_count(g, cards, 2) == 9
    assert roos_parameter_count(g, cards, 2) == 14
    assert is_chordal(g)


def test_markov_blanket_drops_attributes_outside_it():
    # attribute 3 is a parent of attribute 2 only, which is not a child of the class: outside the blanket
    g = canonical_form([(), (0,), (3,), ()], class_children=[0, 1])
    assert g.attributes == (0, 1)


@pytest.mark.parametrize("structure", [dict(structure="nb"), dict(structure="tan"), dict(structure="kdb", k=1)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nb_tan_kdb1_are_perfect(structure, seed):
    X, y, cards = _data(seed)
    clf = BNClassifier(**structure, discretize=False, cardinalities=cards).fit(X, y)
    g = canonical_form(clf.structure_)
    check_perfect(g)
    assert is_chordal(g)
    assert g.attributes == tuple(range(X.shape[1]))


def test_kdb2_passes_or_fails_with_the_data():
    """KDB-2 is perfect exactly when each attribute's two parents are joined; both happen."""
    outcomes = set()
    for seed in range(8):
        X, y, cards = _data(seed, n_attr=7)
        parents = BNClassifier(structure="kdb", k=2, discretize=False, cardinalities=cards).fit(X, y).structure_
        g = canonical_form(parents)
        joined = all(g.adjacent(a, b) for c in g.attributes for a, b in itertools.combinations(g.parents[c], 2))
        try:
            check_perfect(g)
            outcomes.add(True)
            assert joined and is_chordal(g)
        except BNCBenchError:
            outcomes.add(False)
            assert not joined
    assert outcomes == {True, False}


def test_a_four_cycle_is_refused_naming_it():
    # 0 -> 1, 0 -> 2, {1, 2} -> 3: attributes 1 and 2 share the child 3 but are not joined
    g = canonical_form([(), (0,), (0,), (1, 2)])
    with pytest.raises(BNCBenchError, match=r"attributes 1 and 2, parents of attribute 3, are not connected "
                                            r"\(cycle 3 - 1 - 0 - 2 - 3\)"):
        check_perfect(g)
    # without attribute 0 the only cycle goes through the class
    g = canonical_form([None, (), (), (1, 2)])
    with pytest.raises(BNCBenchError, match=r"\(cycle 3 - 1 - class - 2 - 3\)"):
        check_perfect(g)


def test_a_child_whose_parent_is_not_near_the_class_is_refused():
    g = canonical_form([(), (0,)], class_children=[1])
    with pytest.raises(BNCBenchError, match="attribute 0 and the class, parents of attribute 1"):
        check_perfect(g)


def test_chordality_on_a_perfect_and_an_unchordal_skeleton():
    g = canonical_form([(), (0,), (0, 1), (1, 2)])  # perfect: every pair of parents joined
    check_perfect(g)
    assert is_chordal(g)
    # 0 - 1 - 3 - 2 - 0 without a chord (the class joins 0 and 3 only)
    g = canonical_form([(), (0,), (0,), (1, 2)], class_children=[0, 3])
    assert g.attributes == (0, 1, 2, 3)
    assert not is_chordal(g)
    with pytest.raises(BNCBenchError, match="not perfect"):
        check_perfect(g)


def test_cycles_and_unknown_parents_are_refused():
    with pytest.raises(BNCBenchError, match="directed cycle"):
        canonical_form([(1,), (0,)])
    with pytest.raises(BNCBenchError, match="not an attribute of the network"):
        canonical_form([(5,), ()])
