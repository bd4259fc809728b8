"""CVX-MM (Guo et al.'s convex relaxation, Pernkopf et al. Eq. 9) for naive Bayes, with cvxpy + Clarabel."""

import numpy as np
import pytest

pytest.importorskip("cvxpy")

from bncbench.harness.model_specs import make_estimator  # noqa: E402
from bncbench.baselines.cvx_mm import CVXMMBaseline, nb_margin_design  # noqa: E402
from bncbench.components import BASELINES  # noqa: E402
from bncbench.errors import BNCBenchError  # noqa: E402


def _separable(rng, M=60):
    """Three classes, the class a function of (x0, x1) that NB can represent (x0 = class for 2 of them)."""
    X = rng.integers(0, 3, size=(M, 4))
    y = X[:, 0].copy()
    X[:, 1] = (y + rng.integers(0, 2, M)) % 3  # informative but noisy
    return X, y


def test_design_rows_are_feature_differences(rng):
    X = rng.integers(0, 3, size=(7, 3))
    y = rng.integers(0, 3, 7)
    cards = np.array([3, 3, 3])
    delta, sample, offsets = nb_margin_design(X, y, cards, 3)
    w = rng.normal(size=offsets[-1])

    def score(c, x):
        return w[c] + sum(w[offsets[i] + c * cards[i] + x[i]] for i in range(3))

    want = [score(y[m], X[m]) - score(c, X[m]) for m in range(7) for c in range(3) if c != y[m]]
    np.testing.assert_allclose(delta @ w, want, atol=1e-12)
    assert np.array_equal(sample, np.repeat(np.arange(7), 2))


def test_separable_problem_classified_perfectly_with_a_proper_network(rng):
    X, y = _separable(rng)
    clf = CVXMMBaseline(B=10.0).fit(X, y)
    assert clf.status_ in ("optimal", "optimal_inaccurate")
    assert np.array_equal(clf.predict(X), y)
    assert clf.gamma_ > 0
    # renormalized: every table and the prior sum to one
    assert np.exp(clf.log_prior_).sum() == pytest.approx(1.0)
    for lt in clf.log_theta_:
        np.testing.assert_allclose(np.exp(lt).sum(axis=1), 1.0)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_renormalization_keeps_every_margin(rng):
    """The smallest training log-margin of the renormalized network is the solved gamma (up to slack)."""
    X, y = _separable(rng, M=40)
    clf = CVXMMBaseline(B=100.0).fit(X, y)
    lj = clf._joint(X)
    rows = np.arange(len(y))
    other = lj.copy()
    other[rows, y] = -np.inf
    margins = lj[rows, y] - other.max(axis=1)
    assert margins.min() == pytest.approx(clf.gamma_, rel=1e-3, abs=1e-4)


def test_registered_as_a_baseline(rng):
    X, y = _separable(rng, M=30)
    est = make_estimator({"model": "cvx_mm", "B": 5.0}, None)
    assert isinstance(est, CVXMMBaseline) and BASELINES["cvx_mm"].label == "NB-CVX-MM"
    assert est.fit(X, y).score(X, y) == 1.0


def test_bad_input_raises():
    with pytest.raises(BNCBenchError, match="one class"):
        CVXMMBaseline().fit(np.zeros((3, 2), dtype=int), [1, 1, 1])
    with pytest.raises(BNCBenchError, match="min_prob"):
        CVXMMBaseline(min_prob=0.0).fit(np.zeros((2, 2), dtype=int), [0, 1])


def test_cvx_mm_and_a_cg_margin_fit_agree_on_a_separable_problem(rng):
    """The issue's check: CVX-MM and CG on the smooth-hinge margin loss (normalized NB) classify alike."""
    from scipy.optimize import minimize
    from test_margin import _nb_softmax_objective

    X, y = _separable(rng, M=60)
    fun, P = _nb_softmax_objective(X, y, [3, 3, 3, 3], 3, lam=0.5, kappa=0.1, eta=10.0)
    res = minimize(lambda b: fun(b)[:2], np.zeros(P), jac=True, method="CG", options={"maxiter": 500})
    cg_pred = np.argmax(fun(res.x)[2], axis=1)
    cvx = CVXMMBaseline(B=10.0).fit(X, y)
    assert np.array_equal(cg_pred, y) and np.array_equal(cvx.predict(X), cg_pred)
    Xn = rng.integers(0, 3, size=(40, 4))  # and on new rows, where x0 decides for both
    _, _, _, tables = fun(res.x)
    S = tables[0][None, :] + sum(t[:, Xn[:, i]].T for i, t in enumerate(tables[1:]))
    assert np.array_equal(np.argmax(S, axis=1), cvx.predict(Xn))
