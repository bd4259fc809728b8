"""DBL² and LR² end to end against scikit-learn's LogisticRegression on the same pairwise one-hot design (issue 14).

LR² (Zaidi et al., deep-broad learning, Eq. 3) is logistic regression over one indicator per value
combination of every attribute pair, per class, plus a class bias. In bncbench it is
``BNClassifier(structure="anje", n=2, param="discriminative", init="zeros")``; DBL² is the same model
with AnJE's weighted parameterization (Eq. 11) started at AnJE's exponent, ``param="weighted",
init="generative"``. The peer is ``sklearn.linear_model.LogisticRegression(solver="lbfgs")`` on that
very design, built here from the same discrete codes:

* one training/test split per dataset (a random half, seed 0; ``--rows`` caps the training and test
  rows), MDL-discretized on the training part by the classifier's own ``Discretizer()`` (what
  ``BNClassifier(discretize="auto")`` fits); every model gets these codes;
* sklearn's design (scipy CSR): for every pair ``i < j`` one column per value combination seen in
  training, 1 where the instance has it; an unseen combination (or an unknown value, code -1) at
  test time leaves the pair's columns all zero, as LR²'s unseen rows (0 under zero initialization)
  do; plus a column of ones for the class bias with ``fit_intercept=False`` (``--intercept column``,
  the default), because sklearn does not penalize its intercept while bncbench penalizes the class
  row like every other row. ``--intercept sklearn`` uses sklearn's own (unpenalized) intercept
  instead; then the regularized objectives differ by the class row's penalty, and in ``l2`` no
  time to an equal objective is reported (the table's objective of sklearn is LR²'s, penalty of
  the class row included, at sklearn's solution).

Regularization. bncbench minimizes ``NLL + lam/2 ||x||^2`` with the NLL *summed* over the training
instances and ``x`` every free parameter (LR²: every row of every class, the class row included;
DBL²: every weight, centre 0 with ``reg="l2"``, the paper's setting). sklearn (1.9, lbfgs)
minimizes ``C * NLL + 1/2 ||coef||^2`` (intercept not penalized), which it scales by
``1 / (C N)``. With K > 2 classes sklearn fits the multinomial model with one coefficient vector
per class, exactly LR²'s parameters, so ``C = 1 / lam``. With two classes sklearn fits the binomial
model, one vector ``w = Phi_1 - Phi_0``; LR²'s penalty on both class columns is smallest at
``Phi_0 = -Phi_1 = -w / 2``, where it is ``lam/4 ||w||^2``, so ``C = 2 / lam``. The script checks
the mapping (below).

Settings (``--settings``):

* ``l2``: the paper's regularization, ``reg="l2", lam=0.01`` (``--lam``) for LR² and DBL², sklearn
  with the mapped ``C``. LR² and sklearn minimize the same objective; DBL² a different one (its
  penalty is on the weights ``w = Phi / log theta``, so it pulls rare combinations, whose
  ``|log theta|`` is large, far less), so its CLL differs at the optimum and only its fit time is
  compared.
* ``none``: no regularization, ``penalty=None``: all three minimize the same training NLL (DBL² is a
  reparameterization of LR² on the seen rows: ``log theta < 0`` everywhere), so "equal CLL" is
  well defined for all three. On separable training data (small datasets, pairs of many attributes)
  the infimum is 0 and the parameters diverge: the table flags it; those rows say little.

For every dataset and setting, every repeat runs sklearn, LR² and DBL² in turn (the order rotated
between repeats). Timed end to end from the codes: sklearn = building the training design (pair
keys, columns, CSR) + ``LogisticRegression.fit``; ours = ``BNClassifier.fit`` on codes (counting the
pairs, the layout, the rows, compression, L-BFGS). Discretization and the test-set design are not
timed. Times are the process's CPU time (``--clock cpu``, the default): everything runs on one
thread, so on an idle machine that is the elapsed time, and on a shared machine it is far less
disturbed by the other processes than the elapsed time (``--clock wall``). sklearn runs with ``tol=--sk-tol`` (default 1e-8); ours with its default stop
(``stop="ebnc"``: relative reduction below L-BFGS-B's factr 1e7, or a gradient max-norm below
1e-5), or ``--stop paper``; every optimizer stops after ``--maxiter`` iterations (default 1000:
weakly regularized LR² on adult needs 4,000-10,000 L-BFGS iterations to converge, which would take
minutes per fit; the table marks runs that hit the cap).

"At equal CLL" is the time to reach a common objective: each optimizer's per-iteration objective
is recorded (ours: the model's own trace; sklearn: a callback added to its ``scipy.optimize.minimize``
call, one clock reading and one append per iteration), and the target is the *worst* final
objective among the runs that share it (sklearn and LR² in ``l2``; all three in ``none``; over all
repeats), so every one of them reaches it. Time to target = the fit's time before its optimizer
starts (sklearn: design + input checks; ours: the whole fit minus the optimizer's trace time, an
upper bound) + the trace time of the first iterate at or below the target. The table shows medians
over the repeats; a ratio is the median over the repeats of ours / sklearn within the repeat
(paired: the load of the machine changes between repeats).

Every sklearn fit is also checked against bncbench: its solution, mapped to LR²'s parameters
(the design's columns are LR²'s rows in the same order), is evaluated by bncbench's own LR²
objective (relative difference to sklearn's ``N * fun``: 0 up to rounding when the regularization
maps exactly) and predicts the test set through bncbench's layout (largest difference of the
log-probabilities to sklearn's ``decision_function``: the same model, unseen combinations included).
sklearn's test metrics are computed from these log-probabilities (``predict_log_proba`` takes the
log of probabilities that underflow to 0).

Usage::

    python benchmarks/bench_dbl_lr.py                         # 4 datasets, 2 settings, 3 repeats (~3.5 CPU minutes)
    python benchmarks/bench_dbl_lr.py --datasets adult --maxiter 10000   # to convergence (~13 CPU minutes)
    python benchmarks/bench_dbl_lr.py --datasets adult --settings none --repeats 5 --clock wall
    python benchmarks/bench_dbl_lr.py --rows connect-4=0      # all of connect-4's training half
    python benchmarks/bench_dbl_lr.py --profile               # where each spends its time (one fit each)

Needs ``BNCBENCH_DATA_DIR`` (adult, connect-4, kr-vs-kp, nursery). Single-threaded (BLAS, OpenMP,
numba pinned to one thread).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

DATASETS = ("adult", "connect-4", "kr-vs-kp", "nursery")
ROWS = {"connect-4": 3000}  # default caps of training (and test) rows; 0 = no cap
MAXITER = 1000
SEPARABLE = 1e-2  # a summed training NLL below this: the data are separable, the infimum is 0
MODELS = ("sklearn", "LR2", "DBL2")
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
CLOCK = CLOCKS["cpu"]  # set by --clock


class _Clock:
    """Stands in for the ``time`` module of :mod:`bncbench.engine.optim`: its trace reads ``CLOCK``."""

    def __getattr__(self, name):
        return CLOCK if name == "perf_counter" else getattr(time, name)


# ---------------------------------------------------------------- data
@dataclass
class Split:
    name: str
    Xtr: np.ndarray
    ytr: np.ndarray
    Xte: np.ndarray
    yte: np.ndarray
    cards: np.ndarray
    n_classes: int


def load(name: str, rows: int, seed: int = 0) -> Split:
    """Codes of a random half of ``name`` (MDL fitted on it) and of the other half; ``rows`` caps both (0: no cap)."""
    from bncbench.data.uci import load_uci
    from bncbench.model.preprocess import Discretizer

    ds = load_uci(name)
    y = np.unique(np.asarray(ds.y), return_inverse=True)[1].astype(np.int64)
    rng = np.random.default_rng(seed)
    train = rng.random(len(y)) < 0.5
    tr, te = np.flatnonzero(train), np.flatnonzero(~train)
    if rows:
        tr, te = np.sort(rng.permutation(tr)[:rows]), np.sort(rng.permutation(te)[:rows])
    Xtr = ds.X.iloc[tr]
    disc = Discretizer().fit(Xtr, y[tr])  # what BNClassifier(discretize="auto").fit does
    return Split(name, disc.transform(Xtr), y[tr], disc.transform(ds.X.iloc[te]), y[te],
                 np.asarray(disc.cardinalities_, dtype=np.int64), int(y.max()) + 1)


# ---------------------------------------------------------------- sklearn's side
class PairDesign:
    """LR²'s feature space for scikit-learn: one column per (pair, value combination) seen in training.

    ``transform`` gives a CSR matrix of 0/1 floats, with a last column of ones when ``bias``.
    """

    def __init__(self, cards, bias: bool):
        self.cards = np.asarray(cards, dtype=np.int64)
        a = len(self.cards)
        self.i, self.j = np.triu_indices(a, 1)
        space = self.cards[self.i] * self.cards[self.j]
        self.offset = np.r_[0, np.cumsum(space)[:-1]]
        self.space = int(space.sum())
        self.bias = bias

    def _keys(self, codes):
        c = np.asarray(codes, dtype=np.int64)
        ok = (c >= 0) & (c < self.cards)
        xi, xj = c[:, self.i], c[:, self.j]
        keys = self.offset + xi * self.cards[self.j] + xj
        return np.where(ok[:, self.i] & ok[:, self.j], keys, -1)

    def fit(self, codes) -> "PairDesign":
        keys = self._keys(codes)
        seen = np.zeros(self.space + 1, bool)
        seen[keys.ravel()] = True  # -1 lands on the spare last slot
        seen[-1] = False
        self.column = np.cumsum(seen) - 1
        self.column[~seen] = -1
        self.n_columns = int(seen.sum())
        self._train_keys = keys
        return self

    def transform(self, codes=None) -> sp.csr_matrix:
        keys = self._train_keys if codes is None else self._keys(codes)
        col = self.column[keys]  # key -1 reads the spare slot: -1
        ok = col >= 0
        nnz = ok.sum(axis=1)
        if self.bias:
            col = np.concatenate([col, np.full((len(col), 1), self.n_columns)], axis=1)
            ok = np.concatenate([ok, np.ones((len(ok), 1), bool)], axis=1)
            nnz = nnz + 1
        indptr = np.zeros(len(col) + 1, np.int64)
        np.cumsum(nnz, out=indptr[1:])
        return sp.csr_matrix((np.ones(int(indptr[-1])), col[ok], indptr),
                             shape=(len(col), self.n_columns + int(self.bias)))


class _TracedOptimize:
    """Stands in for ``scipy.optimize`` inside sklearn's logistic module: records ``(time, fun)`` per iteration."""

    def __init__(self, optimize):
        self._optimize = optimize
        self.trace, self.t_start = [], None

    def __getattr__(self, name):
        return getattr(self._optimize, name)

    def minimize(self, *args, callback=None, **kw):
        trace = self.trace

        def cb(intermediate_result):
            trace.append((CLOCK(), float(intermediate_result.fun)))
            if callback is not None:
                callback(intermediate_result.x)

        self.t_start = CLOCK()
        return self._optimize.minimize(*args, callback=cb, **kw)


def sk_C(lam: float, n_classes: int) -> float:
    """sklearn's C for bncbench's ``lam`` (summed NLL + lam/2 ||x||^2 over every class's parameters)."""
    return 2.0 / lam if n_classes == 2 else 1.0 / lam


@dataclass
class Run:
    time: float  # end to end, seconds of CLOCK
    pre: float  # before the optimizer starts
    trace: list = field(repr=False)  # [(seconds since the optimizer started, objective)] per iteration
    n_iter: int = 0
    obj: float = np.nan  # final training objective, bncbench's: summed NLL + lam/2 ||x||^2
    cll: float = np.nan  # training CLL (summed)
    test: tuple = ()  # (0-1 loss, mean log loss, RMSE)
    checks: tuple = ()  # sklearn: (objective, test log-probabilities) differences, see check_sklearn
    model: object = field(default=None, repr=False)


def fit_sklearn(d: Split, setting: str, lam: float, tol: float, intercept: str, maxiter: int) -> Run:
    from sklearn.linear_model import LogisticRegression, _logistic

    traced = _TracedOptimize(_logistic.optimize)
    kw = dict(penalty=None) if setting == "none" else dict(C=sk_C(lam, d.n_classes))
    t0 = CLOCK()
    design = PairDesign(d.cards, bias=intercept == "column").fit(d.Xtr)
    Z = design.transform()
    clf = LogisticRegression(solver="lbfgs", tol=tol, max_iter=maxiter, fit_intercept=intercept != "column", **kw)
    _logistic.optimize = traced
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter: reported as iterations
            clf.fit(Z, d.ytr)
    finally:
        _logistic.optimize = traced._optimize
    t1 = CLOCK()
    N = len(d.ytr)  # sklearn's objective is bncbench's divided by N
    trace = [(t - traced.t_start, N * f) for t, f in traced.trace]
    return Run(t1 - t0, traced.t_start - t0, trace, int(np.max(clf.n_iter_)), model=(design, clf))


def lr2_params(clf, design: PairDesign, intercept: str) -> np.ndarray:
    """sklearn's solution as LR²'s parameters ``Phi`` (class row first, then the pairs' seen rows).

    The design's columns are LR²'s rows in the same order (pairs ``i < j`` in lexicographic order, and
    within a pair the combinations by increasing mixed-radix key ``x_i * |X_j| + x_j``), so this is a
    reshape: binomial ``w`` becomes ``(-w/2, w/2)``, multinomial coefficients transpose.
    """
    coef, b = clf.coef_, clf.intercept_
    if intercept == "column":
        coef, b = coef[:, :-1], coef[:, -1]
    Phi = np.vstack([b[None, :], coef.T])  # (1 + columns, K or 1)
    return np.hstack([-Phi / 2, Phi / 2]) if Phi.shape[1] == 1 else Phi


def check_sklearn(d: Split, run: Run, setting: str, lam: float, intercept: str) -> None:
    """Evaluate sklearn's solution with bncbench's LR² (its objective and its test predictions).

    Sets ``run.obj``, ``run.cll``, ``run.test`` from bncbench's own code at sklearn's parameters, and
    ``run.checks``: the relative difference of that objective to sklearn's ``N * fun`` (plus, with
    ``--intercept sklearn``, the class row's penalty, which sklearn leaves out), 0 up to rounding
    when the regularization maps as stated; and the largest difference of test log-probabilities
    between bncbench's LR² at those parameters and sklearn's ``decision_function`` (the same model
    at prediction: unseen combinations included).
    """
    from bncbench import BNClassifier
    from bncbench.engine.fit import scorer_problem
    from bncbench.engine import scores

    design, clf = run.model
    scorer = BNClassifier(structure="anje", n=2, discretize=False, cardinalities=d.cards).fit(d.Xtr, d.ytr).scorer_
    reg = dict(reg="none", lam=0.0) if setting == "none" else dict(reg="l2", lam=lam)
    layout, pmap, problem = scorer_problem(scorer, d.Xtr, d.ytr, param="discriminative", init="zeros", level=4, **reg)
    Phi = lr2_params(clf, design, intercept)
    if Phi.shape[0] != layout.n_trained:
        raise RuntimeError(f"sklearn has {Phi.shape[0]} parameter rows, LR² {layout.n_trained}")
    x = Phi.ravel()
    run.obj, run.cll = problem.f(x), -problem.nll(x)
    logp = scores(layout.rows(d.Xte), pmap.phi_full(x))
    logp -= logsumexp(logp, axis=1, keepdims=True)
    run.test = metrics(d.yte, logp)
    S = clf.decision_function(design.transform(d.Xte))
    S = np.stack([np.zeros_like(S), S], axis=1) if S.ndim == 1 else S
    sk = S - logsumexp(S, axis=1, keepdims=True)  # log-probabilities without predict_log_proba's log(0)
    final = run.trace[-1][1] if run.trace else np.nan
    if intercept != "column" and setting != "none":  # sklearn leaves its intercept out of the penalty
        final += 0.5 * lam * float(Phi[0] @ Phi[0])
    run.checks = (abs(run.obj - final) / abs(final), float(np.abs(logp - sk).max()))


# ---------------------------------------------------------------- ours
def ours_params(model: str, setting: str, lam: float, stop: str, maxiter: int) -> dict:
    kw = dict(structure="anje", n=2, optimizer="lbfgs", optimizer_options={"stop": stop, "maxiter": maxiter})
    kw.update(param="discriminative", init="zeros") if model == "LR2" else kw.update(param="weighted",
                                                                                       init="generative")
    kw.update(reg="none", lam=0.0) if setting == "none" else kw.update(reg="l2", lam=lam)
    return kw


def fit_ours(d: Split, model: str, setting: str, lam: float, stop: str, maxiter: int) -> Run:
    from bncbench import BNClassifier

    from bncbench.engine import optim

    clf = BNClassifier(discretize=False, cardinalities=d.cards, **ours_params(model, setting, lam, stop, maxiter))
    optim.time = _Clock()  # the optimizer's trace on the same clock (the identical perf_counter for "wall")
    try:
        t0 = CLOCK()
        clf.fit(d.Xtr, d.ytr)
        t = CLOCK() - t0
    finally:
        optim.time = time
    tr = clf.trace_
    key = "obj" if "obj" in tr[0] else "nll"
    trace = [(r["time"], r[key]) for r in tr[1:]]  # iteration 0 is the starting point
    run = Run(t, t - tr[-1]["time"], trace, int(clf.n_iter_), obj=tr[-1][key], cll=clf.train_cll_, model=clf)
    run.test = metrics(d.yte, clf.predict_log_proba(d.Xte))
    return run


def metrics(y, logp) -> tuple:
    from bncbench.metrics import rmse, zero_one_loss

    return (zero_one_loss(y, logp.argmax(axis=1)), -float(logp[np.arange(len(y)), y].mean()),
            rmse(y, np.exp(logp)))


def time_to(run: Run, target: float) -> float:
    """End-to-end seconds until the run's objective is at or below ``target`` (NaN: never)."""
    for t, f in run.trace:
        if f <= target:
            return run.pre + t
    return np.nan


# ---------------------------------------------------------------- driver
def bench(d: Split, setting: str, args, log) -> dict:
    fitters = {"sklearn": lambda: fit_sklearn(d, setting, args.lam, args.sk_tol, args.intercept, args.maxiter),
               "LR2": lambda: fit_ours(d, "LR2", setting, args.lam, args.stop, args.maxiter),
               "DBL2": lambda: fit_ours(d, "DBL2", setting, args.lam, args.stop, args.maxiter)}
    runs = {m: [] for m in MODELS}
    for rep in range(args.repeats):
        for m in MODELS[rep % 3:] + MODELS[:rep % 3]:  # interleaved, the order rotated
            r = fitters[m]()
            if m == "sklearn":
                check_sklearn(d, r, setting, args.lam, args.intercept)
            runs[m].append(r)
            log(f"{d.name} {setting} rep {rep} {m}: {r.time:.3f} s (before the optimizer {r.pre:.3f}), {r.n_iter} it, "
                f"objective {r.obj:.6f}, train CLL {r.cll:.4f}, test 0-1 {r.test[0]:.4f}"
                + (f"; checks {r.checks[0]:.1e} {r.checks[1]:.1e}" if m == "sklearn" else ""))
    # equal objective: the runs minimizing the same one (sklearn's column intercept = LR²'s class row)
    shared = list(MODELS) if setting == "none" else ["sklearn", "LR2"] if args.intercept == "column" else []
    target = max(r.trace[-1][1] for m in shared for r in runs[m]) if len(shared) > 1 else np.nan
    out = {"setting": setting, "target": target, "shared": shared}
    for m in MODELS:
        rs, sk = runs[m], runs["sklearn"]
        to = [time_to(r, target) if m in shared else np.nan for r in rs]
        out[m] = dict(time=statistics.median(r.time for r in rs), n_iter=statistics.median(r.n_iter for r in rs),
                      obj=rs[-1].obj, cll=rs[-1].cll, test=rs[-1].test, checks=rs[-1].checks,
                      capped=rs[-1].n_iter >= args.maxiter, to_target=statistics.median(to),
                      # paired: each repeat's ratio to the sklearn fit of the same repeat, then the median
                      ratio_fit=statistics.median(r.time / s.time for r, s in zip(rs, sk)),
                      ratio_to=statistics.median(t / time_to(s, target) for t, s in zip(to, sk)))
    return out


def profile(d: Split, setting: str, args, log) -> None:
    """Where one fit of each spends its time (cProfile, the top functions by own time)."""
    import cProfile
    import io
    import pstats

    for m in MODELS:
        pr = cProfile.Profile()
        pr.enable()
        if m == "sklearn":
            fit_sklearn(d, setting, args.lam, args.sk_tol, args.intercept, args.maxiter)
        else:
            fit_ours(d, m, setting, args.lam, args.stop, args.maxiter)
        pr.disable()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(12)
        log(f"---- profile {d.name} {setting} {m}\n{s.getvalue()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated dataset names")
    ap.add_argument("--rows", nargs="*", default=[], metavar="NAME=N",
                    help="cap of the training (and test) rows of a dataset, 0 = its whole half "
                         f"(defaults: {', '.join(f'{k}={v}' for k, v in ROWS.items())})")
    ap.add_argument("--settings", default="l2,none", help="comma-separated: l2 (reg=l2 with --lam), none (no penalty)")
    ap.add_argument("--lam", type=float, default=0.01, help="bncbench's lam (the paper's C = 1e-2)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--maxiter", type=int, default=MAXITER, help="iteration cap of every optimizer")
    ap.add_argument("--sk-tol", type=float, default=1e-8, help="sklearn's tol (gtol of L-BFGS-B)")
    ap.add_argument("--stop", default="ebnc", choices=("ebnc", "paper"), help="ours: stopping preset")
    ap.add_argument("--intercept", default="column", choices=("column", "sklearn"),
                    help="class bias: a penalized column of ones (as LR²'s class row), or sklearn's intercept")
    ap.add_argument("--clock", default="cpu", choices=tuple(CLOCKS),
                    help="cpu: the process's CPU time (everything runs on one thread), wall: elapsed time")
    ap.add_argument("--profile", action="store_true", help="profile one fit of each instead of timing")
    args = ap.parse_args(argv)
    global CLOCK
    CLOCK = CLOCKS[args.clock]
    caps = dict(ROWS)
    for spec in args.rows:
        name, _, n = spec.partition("=")
        caps[name] = int(n)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    from threadpoolctl import threadpool_limits

    log(f"{platform.platform()}, Python {platform.python_version()}, load average {os.getloadavg()}")
    results = []
    with threadpool_limits(limits=1):
        for name in args.datasets.split(","):
            d = load(name, caps.get(name, 0))
            design = PairDesign(d.cards, bias=False).fit(d.Xtr)
            log(f"{name}: {len(d.ytr):,} train × {d.Xtr.shape[1]} attributes, {len(d.yte):,} test, "
                f"{d.n_classes} classes, {len(design.i):,} pairs, {design.n_columns:,} seen combinations")
            w, wt = np.linspace(0, len(d.ytr) - 1, 300).astype(int), np.arange(min(30, len(d.yte)))
            warm = Split(name, d.Xtr[w], d.ytr[w], d.Xte[wt], d.yte[wt], d.cards, d.n_classes)
            fit_sklearn(warm, "l2", args.lam, args.sk_tol, args.intercept, 5)  # imports, numba compilation
            for m in ("LR2", "DBL2"):
                fit_ours(warm, m, "l2", args.lam, args.stop, 5)
            for setting in args.settings.split(","):
                if args.profile:
                    profile(d, setting, args, log)
                    continue
                res = bench(d, setting, args, log)
                res.update(name=name, shape=(len(d.ytr), d.Xtr.shape[1], len(d.yte), d.n_classes),
                           columns=design.n_columns)
                results.append(res)
    if results:
        print_table(results, args)
    log(f"load average at the end {os.getloadavg()}")


def _s(x, fmt=".2f", unit=" s"):
    return "–" if x is None or np.isnan(x) else f"{x:{fmt}}{unit}"


def print_table(results, args):
    print(f"\n{args.clock} time; sklearn tol {args.sk_tol:g}, ours stop={args.stop}, at most {args.maxiter} iterations, "
          f"lam {args.lam:g}, "
          f"class bias: {args.intercept}; medians of {args.repeats} repeats; ratios ours / sklearn: the median of "
          f"the repeats' ratios (each to the sklearn fit of the same repeat)\n")
    print("| dataset (train × attributes, test, classes; pair columns) | setting: target objective | model | fit | "
          "iterations | train objective | train CLL | to target | ratio fit | ratio to target | test 0-1 | "
          "test log loss | test RMSE |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        N, a, Nt, K = r["shape"]
        for m in MODELS:
            x = r[m]
            first = m == "sklearn"
            label = f"{r['name']} ({N:,} × {a}, {Nt:,}, {K}; {r['columns']:,})" if first else ""
            setting = ""
            if first:
                setting = f"{r['setting']}: {r['target']:.4f}"
                if r["setting"] == "none" and r["target"] < SEPARABLE:
                    setting += " (separable: NLL → 0)"
            ratios = "| " if first else f"{_s(x['ratio_fit'], unit='×')} | {_s(x['ratio_to'], unit='×')}"
            it = f"{x['n_iter']:.0f}" + (" (cap)" if x["capped"] else "")
            print(f"| {label} | {setting} | {m} | {_s(x['time'])} | {it} | {x['obj']:.4f} | {x['cll']:.4f} | "
                  f"{_s(x['to_target'])} | {ratios} | {x['test'][0]:.4f} | {x['test'][1]:.4f} | {x['test'][2]:.4f} |")
    obj = max(r["sklearn"]["checks"][0] for r in results)
    pred = max(r["sklearn"]["checks"][1] for r in results)
    print(f"\nChecks at sklearn's solution: bncbench's LR² objective vs sklearn's own (N × fun), largest relative "
          f"difference {obj:.1e}; test log-probabilities of bncbench's LR² at sklearn's parameters vs sklearn's "
          f"decision_function, largest difference {pred:.1e}.")


if __name__ == "__main__":
    main()
