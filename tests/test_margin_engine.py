"""The maximum-margin objective through the engine (Pernkopf et al.): param=extended, objective=margin."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.engine.fit import build_problem
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.margin import MarginLoss, margin_loss


def _data(n=240, seed=2, classes=3):
    model = random_bnc(5, (2, 3), p=1, n_classes=classes, alpha=1.0, seed=seed)
    X, y = sample_random_bnc(model, n, seed=seed + 1)
    return X, y, model.cards


def _tables(X, y, cards, structure):
    return BNClassifier(structure=structure, discretize=False, cardinalities=cards).fit(X, y).tables_


@pytest.mark.parametrize("structure", ["nb", "tan"])
def test_at_the_ml_start_the_objective_is_the_margin_loss_of_the_generative_model(structure):
    X, y, cards = _data()
    _, pmap, problem = build_problem(_tables(X, y, cards, structure), X, y, param="extended", init="generative",
                                     objective="margin", margin_lam=0.3, kappa=0.2, eta=7.0)
    assert isinstance(problem.cll, MarginLoss)
    gen = BNClassifier(structure=structure, discretize=False, cardinalities=cards).fit(X, y)
    S = gen.scorer_.log_joint(X)
    want, _ = margin_loss(S, np.eye(S.shape[1])[y], 0.3, 0.2, 7.0)
    assert problem.f(pmap.x0()) == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("structure,classes,kappa,eta", [("nb", 2, 0.1, 5.0), ("nb", 3, 0.5, 10.0),
                                                         ("tan", 3, 0.05, 20.0), ("tan", 4, 0.25, 1.0)])
def test_margin_gradient_through_the_normalized_parameters(structure, classes, kappa, eta):
    X, y, cards = _data(classes=classes)
    _, pmap, problem = build_problem(_tables(X, y, cards, structure), X, y, param="extended", init="generative",
                                     objective="margin", margin_lam=0.5, kappa=kappa, eta=eta)
    rng = np.random.default_rng(0)
    x = pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params)
    f, g = problem.fg(x)
    d = rng.standard_normal(x.size)
    h = 1e-6
    fd = (problem.f(x + h * d) - problem.f(x - h * d)) / (2 * h)
    assert g @ d == pytest.approx(fd, rel=1e-5, abs=1e-7)
    coords = rng.choice(x.size, min(25, x.size), replace=False)
    for c in coords:
        e = np.zeros_like(x)
        e[c] = h
        assert g[c] == pytest.approx((problem.f(x + e) - problem.f(x - e)) / (2 * h), rel=1e-4, abs=1e-6)


def test_mm_on_separable_data_reaches_zero_hinge_loss_and_stays_a_bayesian_network():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(120, 4))
    y = X[:, 0].copy()  # separable through attribute 0; the others are noise
    clf = BNClassifier(structure="nb", param="extended", init="generative", objective="margin", margin_lam=0.5,
                       optimizer="cg", optimizer_options={"maxiter": 500, "gtol": 1e-10}, discretize=False,
                       cardinalities=[3, 3, 3, 3]).fit(X, y)
    assert clf.train_cll_ == 0.0  # minus the loss: every sample has lambda log d >= 1
    assert np.array_equal(clf.predict(X), y)
    # normalized: each attribute's table sums to one over its values, per class, and the prior over the classes
    P = np.exp(clf.model_.phi)
    lay = clf.model_.layout
    np.testing.assert_allclose(P[0].sum(), 1.0)
    starts = lay.block_start
    sums = np.add.reduceat(P[1:], starts - 1, axis=0)
    np.testing.assert_allclose(sums, 1.0, rtol=1e-12)


def test_mm_and_cl_correct_naive_bayes_double_counting():
    """x0 agrees with the class 80 % of the time; five copies of a weaker, opposite feature outvote it in ML NB.
    The discriminative fits (CL and MM, normalized parameters, CG) weigh the copies down and follow x0."""
    rng = np.random.default_rng(9)
    n = 600
    y = rng.integers(0, 2, n)
    x0 = np.where(rng.random(n) < 0.8, y, 1 - y)
    z = np.where(rng.random(n) < 0.6, 1 - y, y)
    X = np.column_stack([x0] + [z] * 5)
    kw = dict(structure="nb", param="extended", init="generative", optimizer="cg", discretize=False,
              cardinalities=[2] * 6)
    ml = BNClassifier(structure="nb", discretize=False, cardinalities=[2] * 6).fit(X, y)
    cl = BNClassifier(**kw).fit(X, y)
    mm = BNClassifier(objective="margin", margin_lam=0.1, **kw).fit(X, y)
    follow_x0 = (x0 == y).mean()
    assert (ml.predict(X) == y).mean() < follow_x0 - 0.1
    assert (mm.predict(X) == y).mean() == pytest.approx(follow_x0) == (cl.predict(X) == y).mean()
