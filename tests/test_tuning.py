"""Hyperparameters chosen on the held-out part of the training data (optimizer option ``grid``)."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.tuning import candidates
from bncbench.errors import BNCBenchError

VAL = {"validation_fraction": 0.3, "patience": 3, "validation_seed": 2, "maxiter": 60}


@pytest.fixture(scope="module")
def data():
    model = random_bnc(10, (2, 4), p=1, n_classes=3, alpha=1.0, seed=3)
    X, y = sample_random_bnc(model, 240, seed=4)
    return X, y, model.cards


def _mm(cards, opts, **kw):
    return BNClassifier(structure="nb", param="extended", objective="margin", optimizer="cg", optimizer_options=opts,
                        discretize=False, cardinalities=cards, **kw)


def test_candidates_are_the_cartesian_product_in_grid_order():
    pts = candidates({"margin_lam": [0.01, 0.1], "kappa": [0.05, 0.2, 0.5]}, "extended", "generative", "margin")
    assert len(pts) == 6 and pts[0] == {"margin_lam": 0.01, "kappa": 0.05} and pts[1]["kappa"] == 0.2
    assert pts[-1] == {"margin_lam": 0.1, "kappa": 0.5}


def test_the_lowest_held_out_error_is_chosen_and_each_candidate_is_an_independent_fit(data):
    X, y, cards = data
    grid = {"margin_lam": [0.002, 0.05, 0.5], "kappa": [0.05, 0.4]}
    clf = _mm(cards, {**VAL, "grid": grid}).fit(X, y)
    tun = clf.tuning_
    rows = tun["candidates"]
    assert len(rows) == 6
    keys = [(r["val_error"], r["val_nll"]) for r in rows]
    best = min(range(6), key=keys.__getitem__)
    assert tun["chosen"] == {"margin_lam": rows[best]["margin_lam"], "kappa": rows[best]["kappa"]}
    for r in rows[::5]:  # a candidate's record is what a fit with its values on the same split gives
        one = _mm(cards, VAL, margin_lam=r["margin_lam"], kappa=r["kappa"]).fit(X, y)
        scored = [(t["val_error"], t["val_nll"]) for t in one.trace_]
        assert min(scored) == pytest.approx((r["val_error"], r["val_nll"]), rel=1e-12)
        assert one.n_iter_ == r["best_iter"]
    # the kept model is the chosen candidate's fit: same predictions, its trace the validation curve
    ref = _mm(cards, VAL, **tun["chosen"]).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), ref.predict_proba(X), rtol=1e-10)
    assert "val_error" in clf.trace_[-1] and clf.n_iter_ == rows[best]["best_iter"]
    # the held-out errors differ across the grid (the choice matters on this data)
    assert len({r["val_error"] for r in rows}) > 1


def test_any_optimized_component_can_be_tuned(data):
    X, y, cards = data
    clf = BNClassifier(structure="tan", param="discriminative", init="zeros", reg="l2", optimizer="lbfgs",
                       optimizer_options={**VAL, "grid": {"lam": [0.0, 1.0, 100.0]}}, discretize=False,
                       cardinalities=cards).fit(X, y)
    assert [r["lam"] for r in clf.tuning_["candidates"]] == [0.0, 1.0, 100.0]
    assert clf.tuning_["chosen"]["lam"] in (0.0, 1.0, 100.0)


def test_without_a_grid_there_is_no_tuning(data):
    X, y, cards = data
    assert _mm(cards, VAL).fit(X, y).tuning_ is None


@pytest.mark.parametrize("opts, match", [
    ({**VAL, "grid": {"level": [1, 2]}}, "cannot tune 'level'"),          # weighted's, not read by extended
    ({**VAL, "grid": {"kappa": [0.1, 0.7]}}, "kappa"),                    # outside (0, 0.5]
    ({**VAL, "grid": {"kappa": []}}, "empty"),
    ({"maxiter": 10, "grid": {"kappa": [0.1]}}, "validation_fraction"),
    ({**VAL, "grid": {}}, "non-empty"),
])
def test_bad_grids_fail_in_one_line(data, opts, match):
    X, y, cards = data
    with pytest.raises(BNCBenchError, match=match):
        _mm(cards, opts).fit(X, y)
