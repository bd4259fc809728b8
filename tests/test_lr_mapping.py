"""The proposed LR mapping (Feelders & Ivanovs §3.2, §5.1) as an engine parameter map."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from bncbench import BNClassifier
from bncbench.engine.fit import build_problem
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.flops import bn_costs, lr_costs, roos_ones
from bncbench.engine.lr_mapping import LRMapping
from bncbench.engine.nash import vmmin
from bncbench.engine.problem import Problem
from bncbench.errors import BNCBenchError

STRUCTS = {"nb": dict(structure="nb"), "tan": dict(structure="tan"), "kdb1": dict(structure="kdb", k=1)}


def _data(seed=0, n=500, n_attr=5, card=(2, 4), n_classes=3, p=1):
    model = random_bnc(n_attr, card, p=p, n_classes=n_classes, alpha=1.0, seed=seed)
    X, y = sample_random_bnc(model, n, seed=seed + 1)
    return np.asarray(X), np.asarray(y), model.cards


def _lr_problem(X, y, cards, struct, init="generative", m=1.0):
    tables = BNClassifier(**STRUCTS[struct], discretize=False, cardinalities=cards).fit(X, y).tables_
    layout, gmap, gprob = build_problem(tables, X, y, param="discriminative", init="generative", m=m)
    lr = LRMapping(layout, layout.generative_phi(m), init)
    return lr, Problem(gprob.cll, lr), gmap, gprob


@pytest.mark.parametrize("struct", ["nb", "tan", "kdb1"])
def test_generative_start_has_the_generative_cll(struct):
    X, y, cards = _data(seed=2)
    lr, prob, gmap, gprob = _lr_problem(X, y, cards, struct)
    assert prob.nll(lr.x0()) == pytest.approx(gprob.nll(gmap.x0()), rel=1e-12)


@pytest.mark.parametrize("struct", ["nb", "tan", "kdb1"])
def test_gradient_by_finite_differences(struct):
    X, y, cards = _data(seed=4)
    lr, prob, _, _ = _lr_problem(X, y, cards, struct)
    rng = np.random.default_rng(0)
    x = lr.x0() + 0.3 * rng.standard_normal(lr.n_params)
    f, g = prob.fg(x)
    h = 1e-6
    for c in rng.choice(lr.n_params, min(30, lr.n_params), replace=False):
        e = np.zeros_like(x)
        e[c] = h
        fd = (prob.f(x + e) - prob.f(x - e)) / (2 * h)
        assert g[c] == pytest.approx(fd, rel=1e-5, abs=1e-6)
    d = rng.standard_normal(x.size)
    assert g @ d == pytest.approx((prob.f(x + h * d) - prob.f(x - h * d)) / (2 * h), rel=1e-6)


def _one_hot_design(X, cards, ref):
    """NB's LR design by hand: one indicator per attribute value other than the reference."""
    cols = []
    for j, d in enumerate(cards):
        for v in range(d):
            if v != ref[j]:
                cols.append((X[:, j] == v).astype(float))
    return np.column_stack(cols)


def test_nb_optimum_is_unpenalized_multinomial_logistic_regression():
    """C=inf: no penalty (scikit-learn 1.8 deprecates penalty=None)."""
    X, y, cards = _data(seed=6, n=800, card=(2, 3))
    lr, prob, _, _ = _lr_problem(X, y, cards, "nb")
    assert lr.n_params == (3 - 1) * (1 + sum(d - 1 for d in cards))
    res = vmmin(prob.f, lambda x: prob.fg(x)[1], lr.x0(), maxit=1000, reltol=1e-14)
    Z = _one_hot_design(X, cards, lr.ref)
    sk = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(Z, y)
    P = sk.predict_proba(Z)
    sk_nll = -np.log(P[np.arange(len(y)), y]).sum()
    assert res.f == pytest.approx(sk_nll, rel=1e-6)
    # the same weights: scikit-learn's are centred over the classes; ours fix class 0 at 0
    W = res.x.reshape(lr.K, 2)
    coef = np.column_stack([sk.intercept_, sk.coef_]).T  # (1 + p, 3)
    np.testing.assert_allclose(W, coef[:, 1:] - coef[:, :1], rtol=1e-3, atol=1e-3)


def test_reference_values_are_the_most_frequent_and_zero_weights_elsewhere():
    X, y, cards = _data(seed=8)
    lr, _, _, _ = _lr_problem(X, y, cards, "tan")
    for j in range(X.shape[1]):
        assert lr.ref[j] == np.argmax(np.bincount(X[:, j], minlength=cards[j]))
    assert lr.phi(np.zeros(lr.n_params)).any() == False  # noqa: E712 - all-zero weights, all-zero Phi
    assert np.all(lr.M.data == 1.0)


def test_a_non_perfect_structure_is_refused():
    X, y, cards = _data(seed=1, n_attr=7, p=2)
    for seed in range(10):
        X, y, cards = _data(seed=seed, n_attr=7, p=2)
        tables = BNClassifier(structure="kdb", k=2, discretize=False, cardinalities=cards).fit(X, y).tables_
        layout, _, _ = build_problem(tables, X, y, param="discriminative")
        try:
            LRMapping(layout, layout.generative_phi(1.0), "generative")
        except BNCBenchError as e:
            assert "not perfect" in str(e) and "cycle" in str(e)
            return
    pytest.fail("no KDB-2 among 10 seeds was imperfect")


def test_flop_costs_against_a_hand_count():
    # NB, two binary attributes, three instances, two classes
    X = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [0, 1]])
    y = np.array([0, 1, 1, 0, 0])
    lr, prob, _, _ = _lr_problem(X, y, [2, 2], "nb")
    assert list(lr.ref) == [0, 0]
    # Z: intercept on all 5 rows, X1=1 on rows 2 and 3, X2=1 on rows 3 and 5: |Z| = 5 + 2 + 2 = 9
    assert lr.n_ones(prob.cll.data) == 9
    # §5.1: cost_CLL = |Z|(d0 - 1) + N(d0 + 2) = 9 + 20; cost_grad = |Z| d0 + 2 N d0 = 18 + 20
    assert lr.flop_costs(prob.cll.data) == (29.0, 38.0) == lr_costs(9, 5, 2)
    # Roos: 1 + n - |pa(0)| = 3 ones per row
    assert roos_ones(5, 2, 0) == 15 and lr_costs(15, 5, 2) == (15 + 20, 30 + 20)
    # BN space: |beta| = 2 (class) + 2 * 2 * 2 = 10; cost_CLL = 30 + 5 (2*2 + 4 + 2) = 80;
    # cost_grad = 30 + 5 (2*2*2 + 2 + 5 (3 + 4)) = 30 + 5 * 45 = 255
    assert bn_costs(10, 5, 2, [2, 2]) == (80.0, 255.0)
    # the same through the engine's problems (the seam's callables)
    from bncbench.engine.flops import bn_space_costs, roos_space_costs

    tables = BNClassifier(structure="nb", discretize=False, cardinalities=[2, 2]).fit(X, y).tables_
    _, emap, eprob = build_problem(tables, X, y, param="extended", init="generative")
    assert emap.n_params == 10 and bn_space_costs(eprob) == (80.0, 255.0)
    assert roos_space_costs(eprob) == (35.0, 50.0)


@pytest.mark.parametrize("struct", ["tan", "kdb1"])
def test_optimum_equals_the_free_log_potentials_optimum(struct):
    """On a perfect graph the LR space and the discriminative CCBN (free log-potentials) model the same
    conditionals: the same maximal CLL."""
    X, y, cards = _data(seed=10, n=1500, card=(2, 3))
    lr, prob, gmap, gprob = _lr_problem(X, y, cards, struct)
    res = vmmin(prob.f, lambda x: prob.fg(x)[1], lr.x0(), maxit=2000, reltol=1e-15)
    ref = BNClassifier(**STRUCTS[struct], param="discriminative", init="generative", discretize=False,
                       cardinalities=cards, optimizer_options={"stop": "paper", "maxiter": 5000}).fit(X, y)
    assert res.f == pytest.approx(-ref.train_cll_, rel=1e-6)


def test_parameter_count_and_the_flop_seam_of_the_nash_optimizers():
    from bncbench.engine import nash
    from bncbench.engine.optim import optimize
    from bncbench.structures.canonical import canonical_form, lr_parameter_count

    X, y, cards = _data(seed=12)
    lr, prob, _, _ = _lr_problem(X, y, cards, "tan")
    parents = [None] * len(cards)
    for f in lr.layout.tables.factors:
        parents[f.child] = tuple(f.parents)
    assert lr.n_params == lr_parameter_count(canonical_form(parents), cards, 3)
    cc, cg = lr.flop_costs(prob.cll.data)
    _, tr, _ = optimize("bfgs_nash", prob, lr.x0(), {"maxiter": 5})
    assert [t["flops"] for t in tr] == [cc + cg] + [nash.bfgs_flops(lr.n_params, t["count_cll"], cc, cg)
                                                    for t in tr[1:]]


def test_fits_through_bnclassifier_as_param_lr_mapping():
    """``param=lr_mapping`` fits and predicts through BNClassifier, from the generative model's CLL to the
    free log-potentials' optimum."""
    name = "lr_mapping"
    X, y, cards = _data(seed=14, n=1200, card=(2, 3))
    kw = dict(structure="tan", init="generative", discretize=False, cardinalities=cards)
    ours = BNClassifier(**kw, param=name, optimizer="bfgs_nash", optimizer_options={"maxiter": 1000}).fit(X, y)
    ref = BNClassifier(**kw, param="discriminative", optimizer_options={"stop": "paper"}).fit(X, y)
    gen = BNClassifier(structure="tan", discretize=False, cardinalities=cards).fit(X, y)
    assert ours.trace_[0]["nll"] == pytest.approx(-np.log(gen.predict_proba(X)[np.arange(len(y)), y]).sum(), rel=1e-10)
    assert ours.train_cll_ == pytest.approx(ref.train_cll_, rel=1e-6)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-3)


def test_add_flops_to_a_cgb_trace():
    """CGB's iterations: Brent's evaluations, then one value-and-gradient; n_fev counts both."""
    from bncbench.engine import nash
    from bncbench.engine.flops import add_flops
    from bncbench.engine.optim import optimize

    X, y, cards = _data(seed=16)
    lr, prob, _, _ = _lr_problem(X, y, cards, "nb")
    calls = {False: 0, True: 0}
    term = prob._data_term  # every evaluation of the data term, the fused LR kernel's too

    def counted(x, grad):
        calls[bool(grad)] += 1
        return term(x, grad)

    prob._data_term = counted
    _, tr, n_iter = optimize("cgb", prob, lr.x0(), {"maxiter": 6})
    add_flops(tr, lr.n_params, "cg", 10.0, 20.0)
    assert calls[True] == len(tr)  # one value-and-gradient per record
    assert sum(t["count_cll"] for t in tr) == calls[False]  # the CLL-only evaluations, all accounted
    assert tr[0]["flops"] == 30.0
    assert all(t["flops"] == nash.cg_flops(lr.n_params, t["count_cll"], 10.0, 20.0) for t in tr[1:])
    assert all(t["count_cll"] >= 1 for t in tr[1:])
