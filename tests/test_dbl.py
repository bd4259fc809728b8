"""LRⁿ and DBLⁿ (Zaidi et al., deep-broad learning, §4): the engine over AnJE's factors.

``structure=anje param=discriminative`` is LRⁿ (Eq. 15), ``param=weighted`` is DBLⁿ
(Eq. 11, one weight per class and seen value combination at level 4). Checked: the
gradient by finite differences, AnJE itself at iteration 0 (with unseen combinations
at prediction), LRⁿ and DBLⁿ reaching the same regularization-free optimum, n = 1
giving NB^d and NB^w exactly, and the regularization centres of §4.4.
"""

import numpy as np
import pytest
from test_ccbn import _data, _fd_check

from bncbench import BNClassifier
from bncbench.engine.fit import factor_layout, fit_ccbn, scorer_problem
from bncbench.engine.subset_layout import SubsetLayout
from bncbench.errors import BNCBenchError

OPTIMIZED = [("discriminative", 4), ("weighted", 1), ("weighted", 2), ("weighted", 3), ("weighted", 4)]


def _anje(X, y, cards, n, **kw):
    return BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards, **kw).fit(X, y)


@pytest.fixture(scope="module")
def toy():
    X, y, cards = _data(400, seed=21, n_attr=6, card=(2, 4), n_classes=3, p=2)
    Xt, _, _ = _data(300, seed=99, n_attr=6, card=(2, 4), n_classes=3, p=2)  # other BN: unseen combinations
    return X, y, cards, np.minimum(Xt, cards - 1)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("init", ["zeros", "generative"])
@pytest.mark.parametrize("param,level", OPTIMIZED)
def test_gradient_finite_differences(toy, n, init, param, level):
    X, y, cards, _ = toy
    scorer = _anje(X, y, cards, n).scorer_
    assert isinstance(factor_layout(scorer, X, param)[0], SubsetLayout) and factor_layout(scorer, X, param)[2] is None
    _, pmap, problem = scorer_problem(scorer, X, y, param=param, init=init, level=level)
    rng = np.random.default_rng(3)
    for x in (pmap.x0(), pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params)):
        err, err_dir = _fd_check(problem, x, rng)
        assert err < 1e-6 and err_dir < 1e-6, (err, err_dir)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("param,level", OPTIMIZED)
def test_generative_init_is_anje_at_iteration_0(toy, n, param, level):
    X, y, cards, Xt = toy
    scorer = _anje(X, y, cards, n).scorer_
    model = fit_ccbn(scorer, X, y, param=param, level=level, init="generative", optimizer_options={"maxiter": 0})
    lay = model.layout
    if n == 3:  # the test set meets combinations never seen in training: the unseen rows
        assert (lay.rows(Xt)[:, 1:] >= lay.n_trained).any()
    for data in (X, Xt):
        got, want = model.log_joint(data), scorer.log_joint(data)
        np.testing.assert_allclose(got - got[:, :1], want - want[:, :1], atol=1e-10)


@pytest.mark.parametrize("param,nb_param", [("discriminative", "discriminative"), ("weighted", "weighted")])
def test_n1_is_naive_bayes(toy, param, nb_param):
    """LR¹ = NB^d and DBL¹ = NB^w: the same rows, the same optimizer path (the sums in the row table's order, as NB's:
    ``combine_subsets`` false; the combined tables give the same fit to rounding, tests/test_subset_design.py)."""
    X, y, cards, Xt = toy
    kw = dict(param=param, init="zeros", optimizer_options={"stop": "paper", "maxiter": 3000})
    a = _anje(X, y, cards, 1, param=param, init="zeros",
              optimizer_options={**kw["optimizer_options"], "combine_subsets": False})
    b = BNClassifier(structure="nb", discretize=False, cardinalities=cards, **kw).fit(X, y)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), atol=1e-10)


def test_lr_and_dbl_reach_the_same_optimum():
    X, y, cards = _data(4000, seed=11, n_attr=4, card=(2, 3), n_classes=2, p=1, alpha=2.0)
    opts = {"stop": "paper", "maxiter": 5000}
    lr = _anje(X, y, cards, 2, param="discriminative", init="zeros", optimizer_options=opts)
    dbl = _anje(X, y, cards, 2, param="weighted", init="zeros", optimizer_options=opts)
    dbl_i = _anje(X, y, cards, 2, param="weighted", init="generative", optimizer_options=opts)
    assert dbl.train_cll_ == pytest.approx(lr.train_cll_, rel=1e-6)
    assert dbl_i.train_cll_ == pytest.approx(lr.train_cll_, rel=1e-6)
    np.testing.assert_allclose(dbl.predict_proba(X), lr.predict_proba(X), atol=1e-3)
    gen = _anje(X, y, cards, 2)
    assert lr.train_cll_ > gen.predict_log_proba(X)[np.arange(len(y)), y].sum()


def test_regularization_centres(toy):
    """A strong L2 pull: LRⁿ toward 0 (uniform posteriors), DBLⁿ toward weight 1 (§4.4)."""
    X, y, cards, _ = toy
    lr = _anje(X, y, cards, 2, param="discriminative", init="zeros", reg="l2", lam=1e8)
    assert np.abs(lr.scorer_.x).max() < 1e-3
    dbl = _anje(X, y, cards, 2, param="weighted", init="zeros", reg="l2_one", lam=1e8)
    assert np.abs(dbl.scorer_.x - 1).max() < 1e-3
    # weight 1 multiplies log P(x_alpha | y) itself: the product of the joints, without AnJE's exponent
    anje = dbl.scorer_.base
    prior = anje.log_prior()
    want = prior + (anje.log_joint(X) - prior) / anje.exponent
    got = dbl.scorer_.log_joint(X)
    np.testing.assert_allclose(got - got[:, :1], want - want[:, :1], atol=1e-3)


def test_extended_on_anje_is_a_clear_error(toy):
    X, y, cards, _ = toy
    with pytest.raises(BNCBenchError, match="seen in training"):
        _anje(X, y, cards, 2, param="extended")


@pytest.mark.parametrize("param", ["weighted", "discriminative"])
def test_scorer_problem_is_the_objective_the_fit_optimizes(toy, param):
    """``scorer_problem`` gives the fit's own objective: optimized alike, it follows the fit's path bit for bit."""
    from bncbench.engine.optim import optimize

    X, y, cards, _ = toy
    kw = dict(param=param, init="generative", optimizer="lbfgs", reg="rows", lam=0.01)
    model = _anje(X, y, cards, 2, **kw, optimizer_options={"maxiter": 5}).scorer_
    _, pmap, problem = scorer_problem(model.base, X, y, param=param, init="generative", reg="rows", lam=0.01)
    assert pmap.n_params == model.pmap.n_params
    x, trace, n_iter = optimize("lbfgs", problem, pmap.x0(), {"maxiter": 5})
    assert n_iter == model.n_iter == 5
    np.testing.assert_array_equal(x, model.x)
    assert -problem.nll(x) == model.train_cll
