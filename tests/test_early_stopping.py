"""Early stopping on a held-out part of the training fold, through every optimizer's tracer."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.validation import split
from bncbench.errors import BNCBenchError


def test_split_is_stratified_disjoint_and_seeded():
    y = np.repeat([0, 1, 2], [50, 30, 1])
    tr, held = split(y, 0.2, seed=3)
    assert np.intersect1d(tr, held).size == 0 and np.union1d(tr, held).size == y.size
    np.testing.assert_array_equal(np.bincount(y[held], minlength=3), [10, 6, 0])  # the singleton class stays
    np.testing.assert_array_equal(split(y, 0.2, seed=3)[1], held)
    assert not np.array_equal(split(y, 0.2, seed=4)[1], held)
    with pytest.raises(BNCBenchError, match="validation_fraction"):
        split(y, 1.0)


@pytest.fixture(scope="module")
def overfit():
    model = random_bnc(12, (2, 4), p=2, n_classes=3, alpha=1.0, seed=5)
    X, y = sample_random_bnc(model, 150, seed=6)
    return X, y, model.cards


@pytest.mark.parametrize("optimizer", ["lbfgs", "cg", "cgb", "bfgs", "sgd"])
def test_the_returned_iterate_is_the_best_on_the_held_out_rows(overfit, optimizer):
    X, y, cards = overfit
    opts = {"validation_fraction": 0.3, "patience": 4, "validation_seed": 1, "maxiter": 200}
    clf = BNClassifier(structure="kdb", k=2, param="discriminative", init="zeros", optimizer=optimizer,
                       optimizer_options=opts, discretize=False, cardinalities=cards).fit(X, y)
    trace = clf.trace_
    keys = [(t["val_error"], t["val_nll"]) for t in trace]
    best = min(range(len(keys)), key=keys.__getitem__)
    assert clf.n_iter_ == best
    # the fit stopped `patience` iterations after the best one (every optimizer overfits this data by then)
    assert len(trace) - 1 - best == 4
    # the returned parameters score the held-out rows as the best record says
    tr, held = split(y, 0.3, seed=1)
    P = clf.predict_proba(X[held])
    err = np.mean(np.argmax(P, axis=1) != y[held])
    nll = -np.log(P[np.arange(held.size), y[held]]).sum()
    assert err == pytest.approx(keys[best][0], abs=1e-12) and nll == pytest.approx(keys[best][1], rel=1e-9)


def test_without_validation_nothing_changes(overfit):
    X, y, cards = overfit
    kw = dict(structure="tan", param="discriminative", init="zeros", discretize=False, cardinalities=cards)
    a = BNClassifier(optimizer_options={"maxiter": 30}, **kw).fit(X, y)
    assert "val_error" not in a.trace_[-1] and a.n_iter_ == len(a.trace_) - 1
