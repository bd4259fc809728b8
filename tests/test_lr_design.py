"""The LR space's fused data term (bncbench/engine/lr_design.py) against the generic path phi -> CLL -> pullback."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import load_synthetic
from bncbench.engine.fit import build_problem
from bncbench.engine.loss import CLL
from bncbench.engine.lr_design import FusedLR
from bncbench.engine.lr_mapping import LRMapping
from bncbench.engine.problem import Problem


def codes(ds):
    """The dataset's attribute codes and cardinalities."""
    X = np.column_stack([ds.X[c].cat.codes.to_numpy() for c in ds.X.columns]).astype(np.int64)
    return X, np.array([len(ds.X[c].cat.categories) for c in ds.X.columns])


def _problem(structure, n_classes=4, n=3000, seed=0, **kw):
    ds = load_synthetic("synth-lr", n_attributes=7, p=2, n_samples=n, n_classes=n_classes, cardinality=(2, 4),
                        seed=seed)
    (X, cards), y = codes(ds), ds.y
    tables = BNClassifier(structure=structure, discretize=False, cardinalities=cards, **kw).fit(X, y).tables_
    layout, _, gprob = build_problem(tables, X, y, param="discriminative", init="generative")
    lr = LRMapping(layout, layout.generative_phi(1.0), "generative")
    return gprob.cll, lr


def _generic(cll, lr, x, grad=True):
    nll, G = cll(lr.phi(x), grad=grad)
    return nll, (lr.pullback(x, G) if grad else None)


@pytest.mark.parametrize("structure, kw", [("nb", {}), ("tan", {}), ("kdb", {"k": 1})])
@pytest.mark.parametrize("scale", [0.0, 1.0, 40.0, 400.0])
def test_fused_equals_generic(structure, kw, scale):
    """Value and gradient at the generative start plus random weights, up to large ones: products of exp(Phi)
    overflow or underflow there, and those rows take the exact log-sum-exp."""
    cll, lr = _problem(structure, **kw)
    fused = lr.fused(cll)
    assert fused is not None
    rng = np.random.default_rng(1)
    x = lr.x0() + scale * rng.standard_normal(lr.n_params)
    f0, g0 = _generic(cll, lr, x)
    f1, g1 = fused(x, True)
    assert np.isfinite(f1) and abs(f1 - f0) <= 1e-12 * abs(f0)
    np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-9 * np.abs(g0).max())
    assert fused(x, False)[1] is None and fused(x, False)[0] == pytest.approx(f1, rel=1e-15)


def test_the_exact_path_is_taken_where_products_overflow():
    cll, lr = _problem("nb")
    term = FusedLR(cll.data, lr._Mt)
    W = lr.x0().reshape(lr.K, lr.Y - 1).copy()
    W[1:] = 0.0
    W[1:, 0] = 500.0  # every indicator: exp(500) each, products overflow; scores up to ~3500
    nll, gW = term(W, True)
    f0, g0 = _generic(cll, lr, W.ravel())
    assert np.isfinite(nll) and abs(nll - f0) <= 1e-12 * abs(f0)
    np.testing.assert_allclose(gW.ravel(), g0, rtol=1e-9, atol=1e-9 * np.abs(g0).max())


def test_multiplicities_and_the_design():
    """The design leaves out the rows of M_t without an indicator; A M_t W is Phi_t's scores all the same."""
    cll, lr = _problem("tan")
    term = FusedLR(cll.data, lr._Mt)
    zero = np.flatnonzero(np.diff(lr._Mt.indptr) == 0)
    assert zero.size and not np.isin(term.A.indices, zero).any()
    rng = np.random.default_rng(2)
    W = rng.standard_normal((lr.K, lr.Y - 1))
    S = np.asarray(term.A @ (lr._Mt @ W))
    S_ref = cll.data.design.scores(lr.phi(W.ravel()))
    np.testing.assert_allclose(S, S_ref[:, 1:] - S_ref[:, :1], rtol=1e-12, atol=1e-12)


def test_problem_uses_it_only_where_it_applies():
    cll, lr = _problem("nb")
    assert Problem(cll, lr)._fused is not None
    assert Problem(CLL(cll.data, cll.n_rows, backend="scipy"), lr)._fused is None  # the reference backend
    cll2, lr2 = _problem("nb", n_classes=2)
    assert Problem(cll2, lr2)._fused is None  # two classes: the score-difference kernel


@pytest.mark.parametrize("optimizer", ["cg_nash", "bfgs_nash", "lbfgs"])
def test_a_fit_is_the_generic_paths(optimizer, monkeypatch):
    """The same iterations and evaluations, and the same CLL at every iterate to rounding: 25 iterations (CG's path
    amplifies rounding differences of either path slowly: about 1e-9 relative after 40 iterations here)."""
    ds = load_synthetic("synth-lr", n_attributes=6, p=2, n_samples=2000, n_classes=3, cardinality=(2, 3), seed=3)
    (X, cards), y = codes(ds), ds.y
    kw = dict(cardinalities=cards, structure="tan", param="lr_mapping", init="generative", optimizer=optimizer,
              optimizer_options={"maxiter": 25}, discretize=False)
    fused = BNClassifier(**kw).fit(X, y)
    monkeypatch.setattr(LRMapping, "fused", lambda self, cll: None)
    generic = BNClassifier(**kw).fit(X, y)
    assert fused.n_iter_ == generic.n_iter_ and fused.n_fev_ == generic.n_fev_
    np.testing.assert_allclose([t["nll"] for t in fused.trace_], [t["nll"] for t in generic.trace_], rtol=1e-10)
    assert fused.train_cll_ == pytest.approx(generic.train_cll_, rel=1e-10)
    np.testing.assert_allclose(fused.predict_proba(X), generic.predict_proba(X), rtol=1e-7, atol=1e-10)
