"""L-BFGS-B's iteration with the compact inverse (``bncbench/engine/lbfgs_compact.py``) against scipy's own.

The compact driver forms L-BFGS-B's unbounded step ``-H g`` from the compact representation of the
inverse instead of ``setulb``'s ``B``: equal in exact arithmetic, so on the same problem the two must take
the same iterations, count the same evaluations and pass through the same objective values to rounding, and
every rule around the step (first step ``1/||g||``, the line search's ``maxls`` failures and the restart of
the memory that follows, the stop tests and ``maxfun``) must end a fit where scipy's ends it. The
reference is :func:`scipy.optimize.minimize` (``method="L-BFGS-B"``); the problems are a ridge-penalized
multinomial logistic regression on badly scaled features and a Rosenbrock function.
"""

import numpy as np
import pytest
from scipy.optimize import minimize

from bncbench.engine import lbfgs_compact as lc

pytestmark = pytest.mark.skipif(not lc.available(), reason="this scipy has no DCSRCH line search (before 1.11)")

EPS = np.finfo(float).eps


def _logistic(seed=1, n=400, p=60, c=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 5, p)
    y = rng.integers(0, c, n)
    rows = np.arange(n)

    def fg(w):
        Z = X @ w.reshape(p, c)
        Z -= Z.max(1, keepdims=True)
        lse = np.log(np.exp(Z).sum(1))
        P = np.exp(Z - lse[:, None])
        P[rows, y] -= 1
        return float((lse - Z[rows, y]).sum()) + 0.005 * float(w @ w), (X.T @ P).ravel() + 0.01 * w

    return fg, np.zeros(p * c)


def _rosenbrock(n=30):
    def fg(x):
        a, b = x[:-1], x[1:]
        f = float(np.sum(100.0 * (b - a**2) ** 2 + (1 - a) ** 2))
        g = np.zeros_like(x)
        g[:-1] = -400.0 * a * (b - a**2) - 2 * (1 - a)
        g[1:] += 200.0 * (b - a**2)
        return f, g

    return fg, np.full(n, -1.2)


def _both(fg, x0, m, factr=1e7, pgtol=1e-5, maxls=20, maxiter=15000, maxfun=150000):
    """``(ours, minimize's result, our objective per iteration, minimize's)``."""
    theirs, ours = [], []

    def cb(intermediate_result):  # the name scipy passes an OptimizeResult to
        theirs.append(float(intermediate_result.fun))

    ref = minimize(fg, x0, jac=True, method="L-BFGS-B", callback=cb,
                   options={"maxcor": m, "ftol": factr * EPS, "gtol": pgtol, "maxls": maxls, "maxiter": maxiter,
                            "maxfun": maxfun})
    st = lc.run(fg, lc.State.start(x0, m), m=m, factr=factr, pgtol=pgtol, maxls=maxls, maxiter=maxiter,
                maxfun=maxfun, on_iteration=lambda s: ours.append(s.f))
    return st, ref, np.array(ours), np.array(theirs)


@pytest.mark.parametrize("m", [3, 5, 10])
@pytest.mark.parametrize("problem", [_logistic, _rosenbrock])
def test_the_same_path_as_scipys_lbfgsb(problem, m):
    """The objective equal to rounding along the first iterations, then the same end.

    Rounding differences grow along a path (from 1e-16 at the start to 1e-12 after about 50 iterations on the
    logistic problem, faster on Rosenbrock's valley), so a whole fit may take a few more or fewer iterations:
    here at most 8 % (the logistic problem with 5 and 10 pairs: the same iterations and evaluations)."""
    fg, x0 = problem()
    st, ref, ours, theirs = _both(fg, x0, m)
    np.testing.assert_allclose(ours[:15], theirs[:15], rtol=1e-12)
    assert abs(st.n_iter - ref.nit) <= 0.08 * ref.nit and ref.nit > 100
    if problem is _logistic and m > 3:
        assert st.n_iter == ref.nit and st.nfev == ref.nfev
    np.testing.assert_allclose(st.f, ref.fun, rtol=1e-7, atol=1e-7)  # factr 1e7: f to about 2e-9 relative
    np.testing.assert_allclose(st.x, ref.x, rtol=1e-3, atol=1e-3)
    assert st.status in (lc.CONVERGED, lc.REL_REDUCTION)


@pytest.mark.parametrize("maxls", [1, 2])
def test_failed_line_searches_restart_as_scipys(maxls):
    """With one line-search step a search fails: the memory is emptied and the iteration restarts, and the fit
    ends when a search fails with the memory empty, where scipy's does; with two, the searches' second steps."""
    fg, x0 = _rosenbrock()
    st, ref, ours, theirs = _both(fg, x0, 5, maxls=maxls, maxiter=400 if maxls == 1 else 40)
    assert st.n_iter == ref.nit and st.nfev == ref.nfev >= st.n_iter + 3  # evaluations that gave no iterate
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert (st.status == lc.ABNORMAL) == ("ABNORMAL" in str(ref.message))


@pytest.mark.parametrize(("limit", "status"), [({"maxiter": 7}, lc.MAXITER), ({"maxfun": 9}, lc.MAXFUN)])
def test_iteration_and_evaluation_limits(limit, status):
    fg, x0 = _rosenbrock()
    st, ref, ours, theirs = _both(fg, x0, 5, **limit)
    assert st.n_iter == ref.nit and st.nfev == ref.nfev and st.status == status
    np.testing.assert_allclose(st.x, ref.x, rtol=1e-12)


def test_a_saved_state_goes_on_bit_for_bit():
    """A state written at iteration k and read back ends the fit exactly where the uninterrupted run ends it."""
    fg, x0 = _logistic(seed=2)
    opts = {"m": 5, "factr": 1e7, "pgtol": 1e-5, "maxls": 20, "maxiter": 15000, "maxfun": 150000}
    whole = lc.run(fg, lc.State.start(x0, 5), **opts)
    saved = {}

    def save_at_12(s):
        if s.n_iter == 12:
            saved.update({k: np.array(v, copy=True) for k, v in s.arrays().items()})

    lc.run(fg, lc.State.start(x0, 5), on_iteration=save_at_12, **{**opts, "maxiter": 13})
    resumed = lc.run(fg, lc.State.from_arrays(saved), **opts)
    assert resumed.n_iter == whole.n_iter and resumed.nfev == whole.nfev
    np.testing.assert_array_equal(resumed.x, whole.x)


def test_the_step_is_the_two_loop_recursions():
    """``direction`` is ``-H g`` of the stored pairs: Nocedal & Wright's two-loop recursion (Algorithm 7.4), on a
    ring that has turned (more pairs offered than it keeps)."""
    rng = np.random.default_rng(3)
    n, m = 40, 4
    A = rng.normal(size=(n, n))
    A = A @ A.T + n * np.eye(n)
    st = lc.State.start(np.zeros(n), m)
    pairs = []
    for _ in range(7):
        s = rng.normal(size=n)
        y = A @ s
        st.update(1.0, s, y, np.zeros(n), float(s @ y))
        pairs = (pairs + [(s, y)])[-m:]
    st.g = rng.normal(size=n)
    q = st.g.copy()
    alphas = []
    for s, y in reversed(pairs):
        a = (s @ q) / (s @ y)
        q -= a * y
        alphas.append(a)
    s, y = pairs[-1]
    r = (s @ y) / (y @ y) * q
    for (s, y), a in zip(pairs, reversed(alphas)):
        r += s * (a - (y @ r) / (s @ y))
    np.testing.assert_allclose(st.direction(), -r, rtol=1e-10)


def test_a_state_of_another_memory_is_refused():
    fg, x0 = _rosenbrock()
    with pytest.raises(ValueError, match="keeps 5 pairs, not m=3"):
        lc.run(fg, lc.State.start(x0, 5), m=3, factr=1e7, pgtol=1e-5, maxls=20, maxiter=10, maxfun=100)
