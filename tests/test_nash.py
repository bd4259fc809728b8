"""Nash's CG and BFGS (bncbench.engine.nash) against R's optim, evaluation by evaluation, and scipy."""

import shutil
import subprocess

import numpy as np
import pytest
from scipy.optimize import minimize

from bncbench.engine import nash
from bncbench.errors import BNCBenchError

RSCRIPT = shutil.which("Rscript")
needs_r = pytest.mark.skipif(RSCRIPT is None, reason="Rscript is absent (Debian's r-base-core): no R reference")


# --- the test functions, written with the same floating-point operations in Python and R -----------

def rosen(x):
    return 100 * (x[1] - x[0] * x[0]) ** 2 + (1 - x[0]) ** 2


def rosen_grad(x):
    return np.array([-400 * x[0] * (x[1] - x[0] * x[0]) - 2 * (1 - x[0]), 200 * (x[1] - x[0] * x[0])])


R_ROSEN = """
fn <- function(x) 100 * (x[2] - x[1] * x[1])^2 + (1 - x[1])^2
gr <- function(x) c(-400 * x[1] * (x[2] - x[1] * x[1]) - 2 * (1 - x[1]), 200 * (x[2] - x[1] * x[1]))
"""


def mlogit_data(seed=3, n=80, p=3, k=3):
    rng = np.random.default_rng(seed)
    Z = np.column_stack([np.ones(n), rng.normal(size=(n, p))])
    W = rng.normal(size=(p + 1, k))
    y = np.array([rng.choice(k, p=np.exp(s - s.max()) / np.exp(s - s.max()).sum()) for s in Z @ W])
    return Z, y, k


def mlogit(Z, y, k):
    """Negative log-likelihood of multinomial logistic regression, class 0's weights fixed at 0."""
    n, p = Z.shape
    Y = np.zeros((n, k))
    Y[np.arange(n), y] = 1.0

    def split(w):
        return np.column_stack([np.zeros(p), w.reshape(k - 1, p).T])

    def f(w):
        S = Z @ split(w)
        m = S.max(axis=1)
        return float(np.sum(m + np.log(np.exp(S - m[:, None]).sum(axis=1))) - np.sum(S * Y))

    def g(w):
        S = Z @ split(w)
        P = np.exp(S - S.max(axis=1)[:, None])
        P /= P.sum(axis=1)[:, None]
        return (Z.T @ (P - Y))[:, 1:].T.ravel()

    return f, g


R_MLOGIT = """
d <- as.matrix(read.csv("{data}", header = FALSE))
Z <- d[, -ncol(d), drop = FALSE]; y <- d[, ncol(d)]; k <- {k}; p <- ncol(Z)
Y <- matrix(0, nrow(Z), k); Y[cbind(seq_len(nrow(Z)), y + 1)] <- 1
W <- function(w) cbind(0, matrix(w, p, k - 1))
fn <- function(w) {{ S <- Z %*% W(w); m <- apply(S, 1, max); sum(m + log(rowSums(exp(S - m)))) - sum(S * Y) }}
gr <- function(w) {{ S <- Z %*% W(w); P <- exp(S - apply(S, 1, max)); P <- P / rowSums(P)
                    as.vector((t(Z) %*% (P - Y))[, -1, drop = FALSE]) }}
"""

R_RUN = """
log <- file("{log}", "w")
put <- function(tag, v) writeLines(paste(tag, paste(sprintf("%.17g", v), collapse = " ")), log)
f1 <- function(x) {{ put("F", x); fn(x) }}
g1 <- function(x) {{ put("G", x); gr(x) }}
r <- optim({x0}, f1, g1, method = "{method}", control = list({control}))
put("PAR", r$par); put("VALUE", r$value); put("COUNTS", r$counts); put("CONV", r$convergence)
close(log)
"""


def run_r(tmp_path, setup, method, x0, control):
    log = tmp_path / f"{method}.log"
    x0s = "c(" + ", ".join(f"{v:.17g}" for v in x0) + ")"
    script = setup + R_RUN.format(log=log, x0=x0s, method=method, control=control)
    (tmp_path / "run.R").write_text(script)
    subprocess.run([RSCRIPT, "--vanilla", str(tmp_path / "run.R")], check=True, capture_output=True, timeout=120)
    calls, out = [], {}
    for line in log.read_text().splitlines():
        tag, *vals = line.split()
        v = np.array([float(s) for s in vals])
        if tag in ("F", "G"):
            calls.append((tag, v))
        else:
            out[tag] = v
    return calls, out


def logged(f, g):
    calls = []

    def f1(x):
        calls.append(("F", np.array(x, dtype=float)))
        return f(x)

    def g1(x):
        calls.append(("G", np.array(x, dtype=float)))
        return g(x)

    return calls, f1, g1


def assert_same_run(py_calls, res, r_calls, r_out, rtol):
    assert [c[0] for c in py_calls] == [c[0] for c in r_calls]
    for (_, a), (_, b) in zip(py_calls, r_calls):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(res.x, r_out["PAR"], rtol=rtol, atol=rtol)
    np.testing.assert_allclose(res.f, r_out["VALUE"][0], rtol=rtol)
    assert [res.n_f, res.n_g] == list(r_out["COUNTS"].astype(int))
    assert res.fail == int(r_out["CONV"][0])


CASES = [  # (name, method, control)
    ("cg", "CG", "type = 2"),
    ("cg_maxit", "CG", "type = 2, maxit = 7"),
    ("cg_fr", "CG", "type = 1"),
    ("bfgs", "BFGS", ""),
    ("bfgs_maxit", "BFGS", "maxit = 9"),
]


def _run_py(method, control, f, g, x0):
    kw = {}
    for part in filter(None, (p.strip() for p in control.split(","))):
        key, val = (s.strip() for s in part.split("="))
        kw[key] = int(val)
    if method == "CG":
        return nash.cgmin(f, g, x0, **kw)
    return nash.vmmin(f, g, x0, **kw)


@needs_r
@pytest.mark.parametrize("name,method,control", CASES, ids=[c[0] for c in CASES])
def test_rosenbrock_matches_r_optim_call_by_call(tmp_path, name, method, control):
    x0 = np.array([-1.2, 1.0])
    calls, f1, g1 = logged(rosen, rosen_grad)
    res = _run_py(method, control, f1, g1, x0)
    r_calls, r_out = run_r(tmp_path, R_ROSEN, method, x0, control)
    assert_same_run(calls, res, r_calls, r_out, rtol=1e-9)


@needs_r
@pytest.mark.parametrize("name,method,control", CASES, ids=[c[0] for c in CASES])
def test_multinomial_logistic_regression_matches_r_optim_call_by_call(tmp_path, name, method, control):
    Z, y, k = mlogit_data()
    np.savetxt(tmp_path / "d.csv", np.column_stack([Z, y]), delimiter=",", fmt="%.17g")
    f, g = mlogit(Z, y, k)
    x0 = np.zeros((k - 1) * Z.shape[1])
    calls, f1, g1 = logged(f, g)
    res = _run_py(method, control, f1, g1, x0)
    r_calls, r_out = run_r(tmp_path, R_MLOGIT.format(data=tmp_path / "d.csv", k=k), method, x0, control)
    assert_same_run(calls, res, r_calls, r_out, rtol=1e-7)


@pytest.mark.parametrize("algo", ["cg", "cg_nash_parabola", "bfgs"])
def test_convex_problem_reaches_scipys_optimum(algo):
    Z, y, k = mlogit_data(seed=5, n=200)
    f, g = mlogit(Z, y, k)
    x0 = np.zeros((k - 1) * Z.shape[1])
    ref = minimize(f, x0, jac=g, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10000})
    if algo == "bfgs":
        res = nash.vmmin(f, g, x0, maxit=1000)
    else:
        res = nash.cgmin(f, g, x0, maxit=5000, parabola="r" if algo == "cg" else "nash")
    assert res.fail == 0
    assert res.f == pytest.approx(ref.fun, rel=1e-7)
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-3, atol=1e-3)


def test_trace_counts_and_flops():
    x0 = np.array([-1.2, 1.0])
    res = nash.vmmin(rosen, rosen_grad, x0, cost_cll=5.0, cost_grad=7.0)
    tr = res.trace
    assert len(tr) == res.n_g and tr[-1]["n_f"] <= res.n_f  # the last search ends the run, after the last record
    assert sum(r["count_cll"] for r in tr) == tr[-1]["n_f"]
    r = 2
    assert tr[0]["flops"] == 5.0 + 7.0
    for rec in tr[1:]:
        assert rec["flops"] == 12 * r * r + 8 * r + (4 * r + 5.0) * rec["count_cll"] + 7.0
    assert tr[-1]["flops_total"] == pytest.approx(sum(rec["flops"] for rec in tr))
    res = nash.cgmin(rosen, rosen_grad, x0, cost_cll=5.0, cost_grad=7.0, maxit=20)
    for rec in res.trace[1:]:
        assert rec["flops"] == 10 * r + (4 * r + 5.0) * rec["count_cll"] + 7.0
    assert [rec["iter"] for rec in res.trace] == list(range(len(res.trace)))


def test_refusals():
    with pytest.raises(BNCBenchError, match="unknown CG type"):
        nash.cgmin(rosen, rosen_grad, [0.0, 0.0], type=4)
    with pytest.raises(BNCBenchError, match="not finite"):
        nash.vmmin(lambda x: np.inf, rosen_grad, [0.0, 0.0])


# --- the registered optimizers on the engine's problems ---------------------------------------------

def _small():
    from bncbench.data.sources import random_bnc, sample_random_bnc

    model = random_bnc(4, (2, 3), p=1, n_classes=3, alpha=1.0, seed=7)
    X, y = sample_random_bnc(model, 300, seed=8)
    return X, y, model.cards


@pytest.mark.parametrize("opt", ["cg_nash", "bfgs_nash"])
def test_registered_nash_optimizers_fit_a_ccbn(opt):
    from bncbench import BNClassifier

    X, y, cards = _small()
    kw = dict(structure="nb", param="discriminative", init="generative", discretize=False, cardinalities=cards)
    ref = BNClassifier(**kw, optimizer_options={"stop": "paper"}).fit(X, y)
    costs = (100.0, 300.0)
    clf = BNClassifier(**kw, optimizer=opt, optimizer_options={"maxiter": 400, "flop_costs": costs}).fit(X, y)
    tr = clf.trace_
    assert [t["iter"] for t in tr] == list(range(clf.n_iter_ + 1))
    assert [t["n_g"] for t in tr] == list(range(1, len(tr) + 1))
    nll = [t["nll"] for t in tr]
    assert all(b <= a for a, b in zip(nll, nll[1:]))
    # BFGS stops on R's relative reduction; CG (R's half-step parabola) is slow on this ill-conditioned space
    assert -clf.train_cll_ == pytest.approx(-ref.train_cll_, rel=1e-6 if opt == "bfgs_nash" else 2e-3)
    r = clf.model_.x.size
    flops = nash.bfgs_flops if opt == "bfgs_nash" else nash.cg_flops
    assert [t["flops"] for t in tr[1:]] == [flops(r, t["count_cll"], *costs) for t in tr[1:]]
    assert tr[0]["flops"] == sum(costs)


def test_the_flop_cost_seam_reads_the_parameter_map_or_a_callable():
    from bncbench import BNClassifier
    from bncbench.engine.fit import build_problem
    from bncbench.engine.optim import optimize

    X, y, cards = _small()
    tables = BNClassifier(structure="nb", discretize=False, cardinalities=cards).fit(X, y).tables_
    _, pmap, problem = build_problem(tables, X, y, param="discriminative")
    x0 = pmap.x0()
    _, tr, _ = optimize("cg_nash", problem, x0, {"maxiter": 3, "flop_costs": lambda p: (2.0, 3.0)})
    assert [t["flops"] for t in tr[1:]] == [nash.cg_flops(x0.size, t["count_cll"], 2.0, 3.0) for t in tr[1:]]
    pmap.flop_costs = lambda data: (5.0, 7.0)
    _, tr, _ = optimize("bfgs_nash", problem, x0, {"maxiter": 3})
    assert [t["flops"] for t in tr[1:]] == [nash.bfgs_flops(x0.size, t["count_cll"], 5.0, 7.0) for t in tr[1:]]
    del pmap.flop_costs
    _, tr, _ = optimize("cg_nash", problem, x0, {"maxiter": 3})
    assert [t["flops"] for t in tr[1:]] == [nash.cg_flops(x0.size, t["count_cll"], 0.0, 0.0) for t in tr[1:]]
    with pytest.raises(BNCBenchError, match="above max_params=10; raise optimizer.max_params"):
        optimize("bfgs_nash", problem, x0, {"max_params": 10})
    with pytest.raises(BNCBenchError, match="unknown optimizer option 'ftol'"):
        optimize("cg_nash", problem, x0, {"ftol": 1e-3})
