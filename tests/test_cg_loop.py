"""The CG optimizer's own Polak-Ribiere loop (engine/optim.py ``_polak_ribiere``) gives scipy's ``minimize(method="CG")``
iterates to the bit: on test functions (both line searches, ``maxiter``, a halting callback) and through the engine
(max-margin and CLL fits with early stopping: model, trace and evaluation count)."""

import numpy as np
import pytest
from scipy.optimize import minimize, rosen, rosen_der

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine import optim


def _scipy_cg(fg, x0, maxiter, gtol, callback):
    """The former computation: scipy's CG through ``minimize``."""
    return minimize(fg, x0, jac=True, method="CG", callback=callback, options={"maxiter": maxiter, "gtol": gtol}).x


def _recorder(points, halt_after=None):
    def cb(intermediate_result):  # the name scipy needs to pass an OptimizeResult
        points.append((intermediate_result.x.copy(), intermediate_result.fun))
        if halt_after is not None and len(points) >= halt_after:
            raise StopIteration
    return cb


def _counted(fun, calls):
    def fg(x):
        calls.append(x.copy())
        return fun(x)
    return fg


FUNCTIONS = {
    "rosenbrock": (lambda x: (rosen(x), rosen_der(x)), np.array([-1.2, 1.0, -0.5, 0.8, 1.5])),
    # a quadratic with condition number 1e4: many iterations
    "quadratic": (lambda x: (0.5 * float(x @ (np.logspace(0, 4, x.size) * x)), np.logspace(0, 4, x.size) * x),
                  np.linspace(-3.0, 2.0, 12)),
    # |x|^4 + a linear term: a step of 1 is far off, the line searches bracket
    "quartic": (lambda x: (float((x ** 2).sum() ** 2 + x.sum()), 4.0 * (x ** 2).sum() * x + 1.0), np.full(6, 3.0)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("maxiter,gtol,halt", [(200, 1e-5, None), (7, 1e-5, None), (200, 1e-2, None),
                                               (200, 1e-5, 4)])
def test_loop_equals_scipy_minimize_cg(name, maxiter, gtol, halt):
    fun, x0 = FUNCTIONS[name]
    out = {}
    for label, run in (("scipy", _scipy_cg), ("ours", optim._polak_ribiere)):
        points, calls = [], []
        x = run(_counted(fun, calls), x0.copy(), maxiter, gtol, _recorder(points, halt))
        out[label] = (x, points, calls)
    (xs, ps, cs), (xo, po, co) = out["scipy"], out["ours"]
    assert len(ps) == len(po) > 0
    for (a, fa), (b, fb) in zip(ps, po):
        assert np.array_equal(a, b) and fa == fb
    assert np.array_equal(xs, xo)
    # every point scipy evaluated, ours did in the same order (ours also asks again for the last one: a cache hit)
    dedup = [c for i, c in enumerate(co) if i == 0 or not np.array_equal(c, co[i - 1])]
    dedup_s = [c for i, c in enumerate(cs) if i == 0 or not np.array_equal(c, cs[i - 1])]
    assert len(dedup) == len(dedup_s) and all(np.array_equal(a, b) for a, b in zip(dedup, dedup_s))


def test_the_wolfe2_fallback_is_exercised_and_equal(monkeypatch):
    """A function whose first MINPACK line searches fail the sufficient-descent test: the fallback runs."""
    import scipy.optimize._linesearch as ls

    used = []
    real = ls.line_search_wolfe2

    def spy(*a, **k):
        used.append(1)
        return real(*a, **k)

    monkeypatch.setattr(ls, "line_search_wolfe2", spy)
    rng = np.random.default_rng(0)
    found = False
    for seed in range(40):
        x0 = rng.normal(scale=2.0, size=8)
        fun = FUNCTIONS["rosenbrock"][0]
        used.clear()
        p1, p2 = [], []
        optim._polak_ribiere(fun, x0.copy(), 300, 1e-6, _recorder(p1))
        if not used:
            continue
        found = True
        xs = _scipy_cg(fun, x0.copy(), 300, 1e-6, _recorder(p2))
        assert len(p1) == len(p2) and all(np.array_equal(a, b) for (a, _), (b, _) in zip(p1, p2))
        assert np.array_equal(xs, p1[-1][0]) or np.array_equal(xs, p2[-1][0])
        break
    assert found, "no start made the MINPACK line search fall back to line_search_wolfe2"


def _strip(trace):
    return [{k: v for k, v in rec.items() if k != "time"} for rec in trace]


@pytest.mark.parametrize("structure,objective,opts", [
    ("nb", "margin", {"validation_fraction": 0.2, "patience": 10}),
    ("tan", "margin", {"validation_fraction": 0.2, "patience": 3}),
    ("nb", "cll", {"maxiter": 30}),
    ("tan", "margin", {"validation_fraction": 0.2, "patience": 10, "grid": {"margin_lam": [0.01, 0.1],
                                                                            "kappa": [0.1, 0.3]}}),
])
def test_engine_fit_equals_the_scipy_cg_fit(monkeypatch, structure, objective, opts):
    model = random_bnc(7, (2, 4), p=1, n_classes=3, alpha=1.0, seed=11)
    X, y = sample_random_bnc(model, 400, seed=12)
    kw = dict(structure=structure, discretize=False, cardinalities=model.cards, param="extended",
              objective=objective, optimizer="cg", optimizer_options=opts)
    if objective == "margin" and "grid" not in opts:
        kw.update(margin_lam=0.05, kappa=0.25)
    ours = BNClassifier(**kw).fit(X, y)
    monkeypatch.setattr(optim, "_polak_ribiere", _scipy_cg)
    ref = BNClassifier(**kw).fit(X, y)
    a, b = ours.scorer_, ref.scorer_
    assert np.array_equal(a.x, b.x) and np.array_equal(a.phi, b.phi)
    assert a.n_iter == b.n_iter and a.n_fev == b.n_fev
    assert _strip(a.trace) == _strip(b.trace)
    assert np.array_equal(ours.predict_proba(X), ref.predict_proba(X))
