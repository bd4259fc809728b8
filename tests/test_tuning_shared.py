"""A grid's candidates share their set-up (layout, split, training rows, parameter map): each is still the fit it
would be alone, to the bit (bncbench/engine/fit.py, ``_shared``)."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc

VAL = {"validation_fraction": 0.25, "patience": 3, "validation_seed": 1, "maxiter": 40}


@pytest.fixture(scope="module")
def data():
    model = random_bnc(8, (2, 4), p=1, n_classes=3, alpha=1.0, seed=7)
    X, y = sample_random_bnc(model, 300, seed=8)
    return X, y, model.cards


def test_every_margin_candidate_equals_its_fit_alone(data):
    X, y, cards = data
    kw = dict(structure="tan", param="extended", objective="margin", optimizer="cg", discretize=False,
              cardinalities=cards)
    grid = {"margin_lam": [0.01, 0.3], "kappa": [0.05, 0.5], "eta": [5.0, 20.0]}
    clf = BNClassifier(optimizer_options={**VAL, "grid": grid}, **kw).fit(X, y)
    for r in clf.tuning_["candidates"]:
        vals = {k: r[k] for k in grid}
        one = BNClassifier(optimizer_options=VAL, **vals, **kw).fit(X, y)
        best = min((t["val_error"], t["val_nll"], t["iter"]) for t in one.trace_)
        assert best == (r["val_error"], r["val_nll"], r["best_iter"])  # exactly
        assert one.trace_[-1]["iter"] == r["n_iter"]
    alone = BNClassifier(optimizer_options=VAL, **clf.tuning_["chosen"], **kw).fit(X, y)
    assert np.array_equal(clf.predict_proba(X), alone.predict_proba(X))


def test_candidates_of_different_parameter_maps_do_not_share_one(data):
    X, y, cards = data
    kw = dict(structure="nb", param="weighted", init="generative", reg="l2", optimizer="lbfgs", discretize=False,
              cardinalities=cards)
    grid = {"level": [1, 2, 4], "lam": [0.0, 5.0]}
    clf = BNClassifier(optimizer_options={**VAL, "grid": grid}, **kw).fit(X, y)
    sizes = set()
    for r in clf.tuning_["candidates"]:
        one = BNClassifier(optimizer_options=VAL, level=r["level"], lam=r["lam"], **kw).fit(X, y)
        assert min((t["val_error"], t["val_nll"], t["iter"]) for t in one.trace_) == (
            r["val_error"], r["val_nll"], r["best_iter"])
        sizes.add(one.n_parameters_)
    assert len(sizes) == 3  # three different maps were used
    alone = BNClassifier(optimizer_options=VAL, **clf.tuning_["chosen"], **kw).fit(X, y)
    assert np.array_equal(clf.predict_proba(X), alone.predict_proba(X))
