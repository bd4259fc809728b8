"""The engine on a geometric ensemble: one class row, the members' factors side by side, member weights.

A geometric ensemble scores ``log P(y) + sum_m w_m log P_m(x | y)``, a log-linear
model, so the discriminative, extended and weighted parameterizations optimize it
like one network (:mod:`bncbench.engine.composite`). Checked here: the gradient by
finite differences, the generative ensemble at iteration 0 (training data and a
test set that backs off), and a one-member ensemble equal to its network.
"""

import numpy as np
import pytest
from test_ccbn import MAPS, _data, _fd_check

from bncbench import BNClassifier
from bncbench.engine.fit import _problem, factor_layout, fit_ccbn
from bncbench.engine.composite import CompositeLayout
from bncbench.errors import BNCBenchError
from bncbench.estimators.scorer import EnsembleScorer, estimate
from bncbench.estimators.mestimate import fit_mestimate
from bncbench.structures import LearnedStructure, Network
from bncbench.structures.network import TrainingData
from bncbench.structures.kdb import kdb
from bncbench.structures.tan import tan

WEIGHTS = (0.5, 1.5, 0.8)


def _ensemble(X, y, cards, n_classes, weights=WEIGHTS, combine="geometric"):
    """NB, TAN and KDB-2 (with one attribute left out) as one ensemble of m-estimates."""
    a = X.shape[1]
    nb = Network(tuple(() for _ in range(a)))
    tree = Network(tuple(tan(X, y, cards, n_classes)))
    k2 = list(kdb(X, y, cards, n_classes, 2))
    k2[0] = None
    k2 = [None if p is None else tuple(q for q in p if q != 0) for p in k2]
    structure = LearnedStructure((nb, tree, Network(tuple(k2))), combine=combine, weights=weights)
    data = TrainingData(X, y, np.asarray(cards), n_classes)
    return estimate(fit_mestimate, structure, data, m=1.0)


@pytest.fixture(scope="module")
def small():
    X, y, cards = _data(300, seed=3)
    return X, y, cards, _ensemble(X, y, cards, 3)


@pytest.mark.parametrize("init", ["zeros", "generative"])
@pytest.mark.parametrize("param,level", MAPS)
def test_gradient_finite_differences(small, init, param, level):
    X, y, cards, scorer = small
    layout, gen, cols = factor_layout(scorer, X, param)
    assert isinstance(layout, CompositeLayout) and cols is None
    pmap, problem = _problem(layout, gen, X, y, param=param, init=init, level=level, reg="none", lam=0.0,
                             objective="cll")
    rng = np.random.default_rng(7)
    for x in (pmap.x0(), pmap.x0() + 0.3 * rng.standard_normal(pmap.n_params)):
        err, err_dir = _fd_check(problem, x, rng)
        assert err < 1e-6, (err, err_dir)
        assert err_dir < 1e-6, (err, err_dir)


@pytest.mark.parametrize("param,level", MAPS)
def test_generative_init_is_the_generative_ensemble_at_iteration_0(param, level):
    X, y, cards = _data(400, seed=21, n_attr=6, card=(2, 4), n_classes=3, p=2)
    Xt, _, _ = _data(300, seed=99, n_attr=6, card=(2, 4), n_classes=3, p=2)  # other BN: unseen configurations
    Xt = np.minimum(Xt, cards - 1)
    scorer = _ensemble(X, y, cards, 3)
    model = fit_ccbn(scorer, X, y, param=param, level=level, init="generative", optimizer_options={"maxiter": 0})
    assert model.n_iter == 0
    lay = model.layout
    assert (lay.row_level[lay.rows(Xt)[:, 1:].ravel()] < 2).any()  # the test set does back off
    for data in (X, Xt):
        want, got = scorer.log_joint(data), model.log_joint(data)
        # equal up to one constant per instance (the posterior is what is compared)
        np.testing.assert_allclose(got - got[:, :1], want - want[:, :1], atol=1e-10)
    want = scorer.log_joint(X)
    want = want - np.logaddexp.reduce(want, axis=1, keepdims=True)
    assert model.train_cll == pytest.approx(want[np.arange(len(y)), y].sum(), rel=1e-12)


@pytest.mark.parametrize("param,level", MAPS)
def test_one_member_ensemble_is_its_network(param, level):
    X, y, cards = _data(300, seed=5)
    single = BNClassifier(structure="tan", discretize=False, cardinalities=cards).fit(X, y).scorer_
    one = EnsembleScorer([single], "geometric", np.ones(1))  # a one-member geometric ensemble of the network
    opts = {"stop": "paper", "maxiter": 40}
    a = fit_ccbn(single, X, y, param=param, level=level, init="zeros", optimizer_options=opts)
    b = fit_ccbn(one, X, y, param=param, level=level, init="zeros", optimizer_options=opts)
    assert a.n_iter == b.n_iter and a.layout.n_rows == b.layout.n_rows
    np.testing.assert_allclose([t["nll"] for t in b.trace], [t["nll"] for t in a.trace], rtol=1e-10)
    np.testing.assert_allclose(b.log_joint(X), a.log_joint(X), atol=1e-8)


def test_member_weights_scale_the_rows_and_must_be_positive(small):
    X, y, cards, scorer = small
    layout, gen, _ = factor_layout(scorer, X)
    rows = layout.rows(X)
    for m, w in enumerate(WEIGHTS):  # every factor of member m has weight w_m
        f0 = sum(lay.n_attributes for lay in layout.layouts[:m])
        cols = 1 + f0 + np.arange(layout.layouts[m].n_attributes)
        assert np.all(layout.row_scale[rows[:, cols]] == w)
    assert layout.row_scale[0] == 1.0 and layout.n_factors == 1 + 5 + 5 + 4
    with pytest.raises(BNCBenchError, match="positive"):
        CompositeLayout(layout.layouts, layout.columns, (1.0, 0.0, 1.0))


def test_optimized_ensemble_improves_training_cll(small):
    X, y, cards, scorer = small
    gen = scorer.log_joint(X)
    gen_cll = (gen - np.logaddexp.reduce(gen, axis=1, keepdims=True))[np.arange(len(y)), y].sum()
    for param in ("discriminative", "extended", "weighted"):
        model = fit_ccbn(scorer, X, y, param=param, init="generative", optimizer_options={"maxiter": 30})
        assert model.train_cll > gen_cll
