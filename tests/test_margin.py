"""The max-margin objective's per-row part (Pernkopf et al., Eqs. 4–6, 8): hinge, log-margin, gradient."""

import numpy as np
import pytest

from bncbench.engine.margin import log_margin, margin_loss, smooth_hinge, smooth_hinge_derivative
from bncbench.errors import BNCBenchError


@pytest.mark.parametrize("kappa", [0.01, 0.1, 0.25, 0.5])
def test_smooth_hinge_pieces_and_joins(kappa):
    lo = 1 - 2 * kappa
    # the three pieces, against Eq. 5 written out
    for y in (lo - 1.7, lo - 1e-3, -5.0):
        assert smooth_hinge(y, kappa) == pytest.approx(y + kappa)
        assert smooth_hinge_derivative(y, kappa) == 1.0
    for y in (lo + 0.25 * (1 - lo), 0.5 * (lo + 1), lo + 0.9 * (1 - lo)):
        assert smooth_hinge(y, kappa) == pytest.approx(1 - (y - 1) ** 2 / (4 * kappa))
        assert smooth_hinge_derivative(y, kappa) == pytest.approx((1 - y) / (2 * kappa))
    for y in (1.0, 1.3, 40.0):
        assert smooth_hinge(y, kappa) == 1.0
        assert smooth_hinge_derivative(y, kappa) == 0.0
    # joins: value and slope continuous
    e = 1e-9
    assert smooth_hinge(lo, kappa) == pytest.approx(1 - kappa)
    assert smooth_hinge(lo + e, kappa) == pytest.approx(1 - kappa, abs=1e-8)
    assert smooth_hinge_derivative(lo + e, kappa) == pytest.approx(1.0, abs=1e-7)
    assert smooth_hinge(1 - e, kappa) == pytest.approx(1.0, abs=1e-8)
    assert smooth_hinge_derivative(1 - e, kappa) == pytest.approx(0.0, abs=1e-7)
    # the derivative is the derivative (central differences away from the joins)
    ys = np.array([lo - 0.3, lo + 0.3 * (1 - lo), lo + 0.7 * (1 - lo), 1.2])
    h = 1e-6
    fd = (smooth_hinge(ys + h, kappa) - smooth_hinge(ys - h, kappa)) / (2 * h)
    np.testing.assert_allclose(smooth_hinge_derivative(ys, kappa), fd, atol=1e-6)


def test_smooth_hinge_hand_values_and_limit():
    assert smooth_hinge(0.9, 0.1) == pytest.approx(0.975)  # 1 - 0.1^2 / 0.4
    assert smooth_hinge(0.5, 0.1) == pytest.approx(0.6)
    assert smooth_hinge(2.0, 0.1) == 1.0
    ys = np.linspace(-2, 3, 101)
    np.testing.assert_allclose(smooth_hinge(ys, 1e-9), np.minimum(1, ys), atol=1e-8)
    with pytest.raises(BNCBenchError):
        smooth_hinge(0.0, 0.0)


def test_two_class_hand_computed():
    """eta = 1, two classes: log d = S_y - S_other; lam = 1, kappa = 0.25."""
    S = np.array([[0.6, 0.0], [2.0, 0.0], [0.0, 0.3]])
    C = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    f, dS = margin_loss(S, C, lam=1.0, kappa=0.25, eta=1.0)
    # row 0: y = 0.6 (quadratic): 1 - h = 0.16, h' = 0.8; row 1: y = 2, no loss; row 2: y = -0.3: 1 - h = 1.05
    assert f == pytest.approx(0.16 + 0.0 + 1.05)
    np.testing.assert_allclose(dS, [[-0.8, 0.8], [0.0, 0.0], [-1.0, 1.0]], atol=1e-12)


def _fd_grad(fun, S, h=1e-6):
    g = np.zeros_like(S)
    for idx in np.ndindex(S.shape):
        e = np.zeros_like(S)
        e[idx] = h
        g[idx] = (fun(S + e) - fun(S - e)) / (2 * h)
    return g


@pytest.mark.parametrize("K", [2, 3, 5])
@pytest.mark.parametrize("kappa,eta,lam", [(0.5, 1.0, 0.3), (0.1, 5.0, 0.5), (0.01, 20.0, 0.2), (0.25, 2.5, 1.0)])
def test_gradient_by_finite_differences(K, kappa, eta, lam, rng):
    n = 12
    S = rng.normal(scale=1.5 / lam, size=(n, K))
    C = rng.integers(0, 3, size=(n, K)).astype(float)  # compressed rows: several classes per row
    f, dS = margin_loss(S, C, lam, kappa, eta)
    y = lam * log_margin(S, eta)
    lo = 1 - 2 * kappa
    assert np.any(y[C > 0] <= lo) and np.any(y[C > 0] >= 1)  # more than one piece is exercised
    fd = _fd_grad(lambda s: margin_loss(s, C, lam, kappa, eta, grad=False)[0], S)
    np.testing.assert_allclose(dS, fd, rtol=1e-5, atol=1e-6)
    assert margin_loss(S, C, lam, kappa, eta, grad=False)[1] is None


def test_quadratic_piece_gradient(rng):
    """Scores put near the quadratic piece, where h' is neither 0 nor 1."""
    kappa, lam, eta = 0.5, 1.0, 8.0
    S = rng.normal(scale=0.05, size=(20, 3))
    S[:, 0] += 0.5
    C = np.zeros_like(S)
    C[:, 0] = 1
    y = lam * log_margin(S, eta)[:, 0]
    assert np.mean((y > 0) & (y < 1)) > 0.5
    f, dS = margin_loss(S, C, lam, kappa, eta)
    fd = _fd_grad(lambda s: margin_loss(s, C, lam, kappa, eta, grad=False)[0], S)
    np.testing.assert_allclose(dS, fd, rtol=1e-5, atol=1e-7)


def test_large_eta_approaches_the_hard_margin(rng):
    S = rng.normal(scale=2.0, size=(30, 4))
    hard = np.stack([S[:, c] - np.delete(S, c, axis=1).max(axis=1) for c in range(4)], axis=1)
    errs = [np.max(np.abs(log_margin(S, eta) - hard)) for eta in (1.0, 10.0, 100.0, 1e4)]
    assert all(a > b for a, b in zip(errs, errs[1:]))
    assert errs[-1] <= np.log(3) / 1e4 + 1e-12  # at most log(K - 1) / eta
    # sign of the margin: correct classification for large eta
    assert np.array_equal(log_margin(S, 1e4) > 0, S == S.max(axis=1, keepdims=True))


def test_stable_for_large_scores():
    S = np.array([[1e4, -1e4, 3e3], [-800.0, -805.0, -900.0]])
    C = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    f, dS = margin_loss(S, C, 0.1, 0.1, 10.0)
    assert np.isfinite(f) and np.all(np.isfinite(dS))
    assert log_margin(S, 10.0)[0, 0] == pytest.approx(7e3)


def test_zero_loss_exactly_when_every_scaled_margin_reaches_one(rng):
    lam = 0.25
    S = rng.normal(size=(10, 3))
    y = rng.integers(0, 3, 10)
    C = np.eye(3)[y]
    S[np.arange(10), y] += 10.0  # every margin >= 1 / lam, for eta = 50
    f, dS = margin_loss(S, C, lam, 0.1, 50.0)
    assert f == 0.0 and not np.any(dS)
    S[0, y[0]] -= 9.0
    assert margin_loss(S, C, lam, 0.1, 50.0, grad=False)[0] > 0


def test_compressed_rows_equal_the_sum_over_instances(rng):
    S = rng.normal(size=(4, 3))
    C = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 1.0], [0.0, 2.0, 0.0]])
    f, dS = margin_loss(S, C, 0.4, 0.2, 6.0)
    rows, cls = np.nonzero(C)
    reps = C[rows, cls].astype(int)
    Se = np.repeat(S[rows], reps, axis=0)
    Ce = np.repeat(np.eye(3)[cls], reps, axis=0)
    fe, dSe = margin_loss(Se, Ce, 0.4, 0.2, 6.0)
    assert f == pytest.approx(fe)
    back = np.zeros_like(S)
    np.add.at(back, np.repeat(rows, reps), dSe)
    np.testing.assert_allclose(dS, back, atol=1e-12)


def test_bad_arguments_raise_one_line_errors():
    S = np.zeros((2, 3))
    with pytest.raises(BNCBenchError, match="lam > 0"):
        margin_loss(S, S, 0.0, 0.1, 5.0)
    with pytest.raises(BNCBenchError, match="kappa > 0"):
        margin_loss(S, S, 0.1, -1.0, 5.0)
    with pytest.raises(BNCBenchError, match="eta > 0"):
        margin_loss(S, S, 0.1, 0.1, 0.0)
    with pytest.raises(BNCBenchError, match="same shape"):
        margin_loss(S, np.zeros((2, 2)), 0.1, 0.1, 5.0)
    with pytest.raises(BNCBenchError, match="classes >= 2"):
        log_margin(np.zeros((2, 1)), 5.0)


def _nb_softmax_objective(X, y, cards, K, lam, kappa, eta):
    """margin_loss through a naive Bayes with softmax-normalized parameters (Eq. 7), for a CG run."""
    n, d = X.shape
    C = np.eye(K)[y]
    sizes = [K] + [K * c for c in cards]
    offs = np.concatenate([[0], np.cumsum(sizes)])

    def log_softmax(b, shape):
        b = b.reshape(shape)
        return b - np.logaddexp.reduce(b, axis=-1, keepdims=True)

    def fun(beta):
        prior = log_softmax(beta[: offs[1]], (K,))
        tabs = [log_softmax(beta[offs[i + 1] : offs[i + 2]], (K, cards[i])) for i in range(d)]
        S = prior[None, :] + sum(t[:, X[:, i]].T for i, t in enumerate(tabs))
        f, dS = margin_loss(S, C, lam, kappa, eta)
        g = np.empty_like(beta)
        gp = dS.sum(axis=0)
        g[: offs[1]] = gp - np.exp(prior) * gp.sum()
        for i, t in enumerate(tabs):
            gt = np.zeros((K, cards[i]))
            np.add.at(gt.T, X[:, i], dS)
            g[offs[i + 1] : offs[i + 2]] = (gt - np.exp(t) * gt.sum(axis=1, keepdims=True)).ravel()
        return f, g, S, [prior] + tabs

    return fun, int(offs[-1])


def test_max_margin_nb_on_separable_data_reaches_zero_loss(rng):
    """Normalized NB parameters optimized by CG on the margin loss: zero hinge loss, every sample right."""
    from scipy.optimize import check_grad, minimize

    n, K = 90, 3
    X = rng.integers(0, 3, size=(n, 4))
    y = X[:, 0].copy()  # separable through x0; the other attributes are noise
    fun, P = _nb_softmax_objective(X, y, [3, 3, 3, 3], K, lam=0.5, kappa=0.1, eta=10.0)
    beta0 = rng.normal(scale=0.1, size=P)
    assert check_grad(lambda b: fun(b)[0], lambda b: fun(b)[1], beta0) < 1e-5 * max(1.0, np.abs(fun(beta0)[1]).max())
    res = minimize(lambda b: fun(b)[:2], beta0, jac=True, method="CG", options={"maxiter": 500, "gtol": 1e-10})
    f, _, S, tables = fun(res.x)
    assert f == 0.0
    assert np.array_equal(np.argmax(S, axis=1), y)
    for t in tables:  # the model stays a Bayesian network: every distribution sums to one
        np.testing.assert_allclose(np.exp(t).sum(axis=-1), 1.0)
