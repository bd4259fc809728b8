"""The authors' per-row L2 penalty (``reg="rows"``, ``"rows_one"``; ``"rows_gen"`` toward the generative model): its
weights ``n_k`` and its gradient.

``R = lam/2 sum_k n_k (x_k - c)^2`` with ``n_k`` the training instances whose scores use parameter
``k`` (:mod:`bncbench.engine.row_penalty`). Checked: ``n_k`` by hand on a five-row table for every
map and tying level, against a brute-force count over the materialized rows of one network, a
geometric ensemble and AnJE's subsets; the objective's value; its gradient by finite differences.
"""

from math import comb

import numpy as np
import pytest
from test_ccbn import MAPS, _data, _fd_check
from test_ensemble_engine import _ensemble

from bncbench import BNClassifier
from bncbench.engine.fit import _problem, factor_layout
from bncbench.engine.loss import Data
from bncbench.engine.row_penalty import penalty_weights


def _setup(scorer, X, y, param, level, reg="rows", lam=0.3, init="zeros"):
    layout, gen, cols = factor_layout(scorer, X, param)
    sub = X if cols is None else X[:, cols]
    pmap, problem = _problem(layout, gen, sub, y, param=param, init=init, level=level, reg=reg, lam=lam,
                             objective="cll", compress=True)
    return layout, sub, pmap, problem


def _brute_counts(layout, sub, pmap):
    """Per parameter, the instances using it, from the materialized rows (one pair per instance and parameter)."""
    rows = np.asarray(layout.rows(sub), dtype=np.int64)
    Y = pmap.Y
    T = pmap.T if getattr(pmap, "T", None) is not None else np.arange(layout.n_rows * Y).reshape(-1, Y)
    i = np.repeat(np.arange(rows.shape[0]), rows.shape[1] * Y)
    r = np.repeat(rows.ravel(), Y)
    c = np.tile(np.arange(Y), rows.size)
    ok = r >= 0
    k = T[r[ok], c[ok]]
    pairs = np.unique(i[ok] * pmap.n_params + k)
    return np.bincount(pairs % pmap.n_params, minlength=pmap.n_params).astype(float)


TINY_X = np.array([[0, 0], [0, 1], [1, 1], [0, 1], [1, 0]])
TINY_Y = np.array([0, 1, 0, 1, 1])


@pytest.mark.parametrize("param,level,want", [
    # NB, 5 rows, 2 classes: class row n = 5; attribute 0 values 3 and 2 rows, attribute 1 values 2 and 3
    ("discriminative", 4, sorted([5, 5] + [3, 3, 2, 2] + [2, 2, 3, 3])),
    ("extended", 4, sorted([5, 5] + [3, 3, 2, 2] + [2, 2, 3, 3])),
    ("weighted", 4, sorted([5, 5] + [3, 3, 2, 2] + [2, 2, 3, 3])),
    ("weighted", 3, sorted([5, 5] + [3, 3, 2, 2] + [2, 2, 3, 3])),
    ("weighted", 2, sorted([5, 5] + [3, 2] + [2, 3])),  # one weight per value, shared by the classes
    ("weighted", 1, [5, 5, 5]),  # one for the class row, one per attribute: every instance uses each
])
def test_counts_by_hand(param, level, want):
    clf = BNClassifier(structure="nb", discretize=False, cardinalities=[2, 2]).fit(TINY_X, TINY_Y)
    _, _, pmap, problem = _setup(clf.scorer_, TINY_X, TINY_Y, param, level)
    assert sorted(problem.weights.tolist()) == want
    x = np.full(pmap.n_params, 2.0)
    center = 0.0
    assert problem.f(x) == pytest.approx(problem.nll(x) + 0.15 * np.sum(problem.weights * (x - center) ** 2),
                                         rel=1e-14)


@pytest.fixture(scope="module")
def small():
    return _data(300, seed=3)


@pytest.mark.parametrize("param,level", MAPS)
def test_counts_one_network_and_ensemble(small, param, level):
    X, y, cards = small
    for scorer in (BNClassifier(structure="kdb", k=2, discretize=False, cardinalities=cards).fit(X, y).scorer_,
                   _ensemble(X, y, cards, 3)):
        layout, sub, pmap, problem = _setup(scorer, X, y, param, level)
        np.testing.assert_array_equal(problem.weights, _brute_counts(layout, sub, pmap))
        assert problem.weights[0] == len(y)  # the class parameters: every instance


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("param,level", [("discriminative", 4), ("weighted", 1), ("weighted", 2), ("weighted", 3),
                                         ("weighted", 4)])
def test_counts_anje_subsets(param, level, n):
    X, y, cards = _data(400, seed=21, n_attr=6, card=(2, 4), n_classes=3, p=2)
    scorer = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(X, y).scorer_
    layout, sub, pmap, problem = _setup(scorer, X, y, param, level)
    w = problem.weights
    np.testing.assert_array_equal(w, _brute_counts(layout, sub, pmap))
    if level == 4:  # a weight per (subset, value combination, class): N per subset and class in all
        assert w.sum() == len(y) * 3 * (1 + comb(6, n))
        # uncompressed data (one design row per instance) give the same counts
        data = Data.from_design(layout.design(sub), y, 3, compress=False)
        np.testing.assert_array_equal(penalty_weights(data, pmap), w)


@pytest.mark.parametrize("reg", ["rows", "rows_one", "rows_gen"])
@pytest.mark.parametrize("param,level", MAPS)
def test_gradient_finite_differences(small, reg, param, level):
    X, y, cards = small
    rng = np.random.default_rng(5)
    for scorer in (BNClassifier(structure="tan", discretize=False, cardinalities=cards).fit(X, y).scorer_,
                   _ensemble(X, y, cards, 3)):
        _, _, pmap, problem = _setup(scorer, X, y, param, level, reg=reg, lam=0.7, init="generative")
        x = pmap.x0() + 0.2 * rng.standard_normal(pmap.n_params)
        err, err_dir = _fd_check(problem, x, rng)
        assert err < 1e-6 and err_dir < 1e-6, (err, err_dir)
        c = {"rows_one": 1.0, "rows_gen": pmap.generative().x}.get(reg, 0.0)
        assert problem.f(x) == pytest.approx(problem.nll(x) + 0.35 * np.sum(problem.weights * (x - c) ** 2),
                                             rel=1e-13)


@pytest.mark.parametrize("reg", ["rows", "rows_one", "rows_gen"])
@pytest.mark.parametrize("param,level", [("discriminative", 4), ("weighted", 2), ("weighted", 4)])
def test_gradient_finite_differences_anje(reg, param, level):
    X, y, cards = _data(400, seed=21, n_attr=6, card=(2, 4), n_classes=3, p=2)
    scorer = BNClassifier(structure="anje", n=2, discretize=False, cardinalities=cards).fit(X, y).scorer_
    _, _, pmap, problem = _setup(scorer, X, y, param, level, reg=reg, lam=0.05, init="zeros")
    rng = np.random.default_rng(2)
    x = pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params)
    err, err_dir = _fd_check(problem, x, rng)
    assert err < 1e-6 and err_dir < 1e-6, (err, err_dir)


def test_from_the_classifier(small):
    """``reg="rows"`` through ``BNClassifier``: its optimum balances the weighted penalty (gradient ~ 0)."""
    X, y, cards = small
    clf = BNClassifier(structure="nb", param="discriminative", init="zeros", reg="rows", lam=0.01,
                       discretize=False, cardinalities=cards,
                       optimizer_options={"stop": "paper", "maxiter": 5000}).fit(X, y)
    _, _, pmap, problem = _setup(clf.scorer_.base, X, y, "discriminative", 4, reg="rows", lam=0.01)
    _, g = problem.fg(clf.scorer_.x)
    assert np.abs(g).max() < 1e-3


def test_from_the_command_line_config():
    """``param.reg=rows_one`` composes (the typed schema accepts it) and reaches the model's parameters."""
    from bncbench.harness.app import compose_config
    from bncbench.harness.model_specs import config_model

    cfg = compose_config(["structure=anje", "structure.n=2", "param=weighted", "init=zeros", "param.reg=rows_one",
                          "param.lam=0.01"])
    spec = config_model(cfg)
    assert spec.params["reg"] == "rows_one" and spec.params["lam"] == 0.01


def test_minibatch_gradient_of_all_rows_is_the_gradient(small):
    """``batch_grad`` over every training row (the SGD optimizer's step) is ``fg``'s gradient, penalty included."""
    X, y, cards = small
    scorer = BNClassifier(structure="tan", discretize=False, cardinalities=cards).fit(X, y).scorer_
    _, _, pmap, problem = _setup(scorer, X, y, "weighted", 2, reg="rows_one", lam=0.7, init="generative")
    x = pmap.x0() + 0.2 * np.random.default_rng(4).standard_normal(pmap.n_params)
    np.testing.assert_allclose(problem.batch_grad(x, problem.cll.data), problem.fg(x)[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reg", ["l2", "l2_one", "rows", "rows_one", "rows_gen"])
def test_objective_is_the_plain_formula_bit_for_bit(small, reg):
    """``Problem.fg`` forms the penalty's gradient in place: the value and gradient of the plain formula, bit for bit
    (a fit's path depends on them), the caller's point untouched, and the cached gradient not the one handed out."""
    X, y, cards = small
    scorer = BNClassifier(structure="tan", discretize=False, cardinalities=cards).fit(X, y).scorer_
    _, _, pmap, problem = _setup(scorer, X, y, "weighted", 2, reg=reg, lam=0.7, init="generative")
    x = pmap.x0() + 0.2 * np.random.default_rng(4).standard_normal(pmap.n_params)
    x_in = x.copy()
    f, g = problem.fg(x)
    np.testing.assert_array_equal(x, x_in)
    nll, g_data = problem._data_term(x, True)
    d = x - (pmap.generative().x if reg == "rows_gen" else 1.0 if reg.endswith("_one") else 0.0)
    wd = d if problem.weights is None else problem.weights * d
    assert f == nll + 0.5 * 0.7 * float(wd @ d)
    np.testing.assert_array_equal(g, g_data + 0.7 * wd)
    g[:] = np.nan
    f_again, g_again = problem.fg(x)  # from the cache
    assert f_again == f and problem.f(x) == f
    np.testing.assert_array_equal(g_again, g_data + 0.7 * wd)


@pytest.mark.parametrize("param,init", [("weighted", "zeros"), ("discriminative", "zeros")])
def test_a_strong_pull_toward_the_generative_model_is_anje(param, init):
    """``reg="rows_gen"`` pulls AnJE's weights toward the generative model's (AnJE's exponent ``e``, not 1; ``e log
    theta`` for LRⁿ): with a large ``lam`` DBL² and LR² give A2JE's class probabilities, started from 0, while
    ``rows_one``'s pull toward 1 ends elsewhere on AnJE (``e = 1/(a - 1)`` for n = 2)."""
    X, y, cards = _data(300, seed=8, n_attr=5, card=(2, 4), n_classes=3, p=2)
    common = dict(structure="anje", n=2, discretize=False, cardinalities=cards)
    anje = BNClassifier(**common).fit(X, y).predict_proba(X)
    opts = {"stop": "paper", "maxiter": 2000}
    gen = BNClassifier(**common, param=param, init=init, reg="rows_gen", lam=1e6, optimizer_options=opts).fit(X, y)
    np.testing.assert_allclose(gen.predict_proba(X), anje, atol=1e-5)
    if param == "weighted":
        one = BNClassifier(**common, param=param, init=init, reg="rows_one", lam=1e6, optimizer_options=opts)
        assert np.abs(one.fit(X, y).predict_proba(X) - anje).max() > 0.05


def test_rows_gen_needs_a_generative_point():
    """A map without a generative point refuses ``reg="rows_gen"`` in one line."""
    from bncbench.engine.problem import Problem
    from bncbench.errors import BNCBenchError

    class NoPoint:
        name = "bare"

        def generative(self):
            raise NotImplementedError

    with pytest.raises(BNCBenchError, match="reg=rows_gen pulls toward the generative model's parameters, which the "
                                            "bare parameterization does not define"):
        Problem(None, NoPoint(), reg="rows_gen", lam=1.0)
