"""Agreement with the authors' code of LRⁿ, DBLⁿ and AnJE (github ``nayyarzaidi/ALR``, run here).

The numbers are the anchors measured from their code (``../shared/anchors/alr/``; the files
these tests read are copied in ``tests/fixtures/alr/``, see its README): full-data fits of vote
(its '?' read as the attribute's first declared value, as their code reads it) and tic-tac-toe,
A1JE and A2JE, ``-P MAP`` (AnJE), ``-P dCCBN`` (LRⁿ = ``param="discriminative"``) and ``-P wCCBN``
(DBLⁿ = ``param="weighted"``), start at 0, their per-row penalty at lam = 0.01 (``-R``;
``reg="rows"``). Checked:

* AnJE's class probabilities equal theirs to 1e-9 (their m-estimates of the k-tuple's joint, m = 1,
  are ours);
* at a tight convergence, our penalized objective equals their ``factr 1e1`` objective (offset
  ``-N ln nc`` removed) to 1e-9 relative and our class probabilities theirs to 1e-5; our training NLL
  is that of the penalized optimum (one Newton step from our end, to a gradient of 1e-10) to 1e-7
  relative and theirs to 1e-6 (their stop is the looser: tic-tac-toe's A2JE DBL² ends 9.9e-7 from
  it, ours 4e-9), so the two NLLs agree to 1.1e-6;
* our objective and gradient, handed to L-BFGS-B with their settings (5 corrections, factr 1e7,
  pgtol off, start at 0) *with their offset*, follow their path: the same iterations and
  evaluations in the 12 fits listed (the four penalized A2JE fits drift apart by rounding after
  about 100 iterations).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import data_dir_or_skip
from scipy.optimize import minimize

from bncbench import BNClassifier
from bncbench.engine.fit import scorer_problem

FIX = Path(__file__).resolve().parent / "fixtures" / "alr"
RUNS = pd.read_csv(FIX / "train_full.csv")
TAGS = {"discriminative": "dCCBN", "weighted": "wCCBN"}
FITS = [(d, n, p) for d in ("vote", "tic-tac-toe") for n in (1, 2) for p in TAGS]


def _their_codes(name):
    """The dataset as their code reads it: declared value order, a missing value as the first declared value."""
    from bncbench.data.uci import load_uci

    ds = load_uci(name, data_dir_or_skip())
    X = np.column_stack([ds.X[c].cat.codes.to_numpy() for c in ds.X.columns]).astype(np.int64)
    X[X < 0] = 0
    return X, ds.y, [len(ds.X[c].cat.categories) for c in ds.X.columns]


@pytest.fixture(scope="module")
def datasets():
    return {name: _their_codes(name) for name in ("vote", "tic-tac-toe")}


def _run(name, n, tag, factr, penalty=True):
    opts = f"-S A{n}JE -P {tag}{' -R' if penalty else ''} -I Flat -O QN -V"
    row = RUNS[(RUNS.name == name) & (RUNS.options == opts) & (RUNS.factr == factr)]
    assert len(row) == 1, opts
    return row.iloc[0]


def _probs(name, n, tag):
    return pd.read_csv(FIX / f"{name}.A{n}JE.{tag}.csv.gz", header=None).to_numpy()


def _penalized_problem(scorer, X, y, param, reg="rows"):
    return scorer_problem(scorer, X, y, param=param, init="zeros", level=4, reg=reg,
                          lam=0.01 if reg == "rows" else 0.0)[1:]


@pytest.mark.parametrize("name", ["vote", "tic-tac-toe"])
@pytest.mark.parametrize("n", [1, 2])
def test_anje_probabilities(datasets, name, n):
    X, y, cards = datasets[name]
    clf = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(X, y)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P, _probs(name, n, "MAP"), rtol=0, atol=1e-9)
    nll = -np.log(P[np.arange(len(y)), y]).sum()
    assert nll == pytest.approx(_run(name, n, "MAP", 1e7, penalty=False).nll_train, rel=1e-12)


@pytest.mark.parametrize("name,n,param", FITS)
def test_penalized_optimum(datasets, name, n, param):
    X, y, cards = datasets[name]
    tag = TAGS[param]
    clf = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards, param=param, init="zeros",
                       reg="rows", lam=0.01, optimizer_options={"stop": "paper", "maxiter": 20000}).fit(X, y)
    theirs = _run(name, n, tag, 10.0)
    _, problem = _penalized_problem(clf.scorer_.base, X, y, param)
    f = problem.f(clf.scorer_.x)
    assert f == pytest.approx(theirs.objective + len(y) * np.log(theirs.nc), rel=1e-9)
    P = clf.predict_proba(X)
    nll = -np.log(P[np.arange(len(y)), y]).sum()
    opt = _nll(clf.scorer_.base, X, y, param, _newton_step(problem, clf.scorer_.x))
    assert nll == pytest.approx(opt, rel=1e-7)
    assert theirs.nll_train == pytest.approx(opt, rel=1e-6)
    np.testing.assert_allclose(P, _probs(name, n, f"{tag}.R.factr10"), rtol=0, atol=1e-5)


def _newton_step(problem, x, h=1e-6):
    """``x`` moved by one Newton step (the Hessian from central differences of the gradient); near the optimum,
    the optimum (the gradient there checked to 1e-10)."""
    g = problem.fg(x)[1]
    E = np.eye(x.size) * h
    H = np.column_stack([problem.fg(x + e)[1] - problem.fg(x - e)[1] for e in E]) / (2 * h)
    x = x - np.linalg.solve((H + H.T) / 2, g)
    assert np.abs(problem.fg(x)[1]).max() < 1e-10
    return x


def _nll(scorer, X, y, param, x):
    """The training NLL at ``x`` (the problem without the penalty)."""
    return _penalized_problem(scorer, X, y, param, reg="none")[1].f(x)


SAME_PATH = [(d, n, p, pen) for d, n, p in FITS for pen in (True, False) if n == 1 or not pen]


@pytest.mark.parametrize("name,n,param,penalty", SAME_PATH)
def test_their_lbfgsb_path(datasets, name, n, param, penalty):
    X, y, cards = datasets[name]
    gen = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(X, y).scorer_
    pmap, problem = _penalized_problem(gen, X, y, param, reg="rows" if penalty else "none")
    offset = len(y) * np.log(2)

    def fg(x):
        f, g = problem.fg(x)
        return f - offset, g

    res = minimize(fg, pmap.x0(), jac=True, method="L-BFGS-B",
                   options=dict(maxcor=5, ftol=1e7 * np.finfo(float).eps, gtol=1e-33, maxiter=10000, maxfun=10**6))
    theirs = _run(name, n, TAGS[param], 1e7, penalty)
    assert (res.nit, res.nfev) == (theirs.iterations, theirs.fevals)
    assert res.fun == pytest.approx(theirs.objective, rel=1e-9)
