"""Benchmarks of the CCBN engine against scikit-learn's multinomial logistic regression.

1. One NLL + gradient evaluation on the same one-hot design (NB structure,
   one indicator per attribute value plus the class bias), single-threaded:
   scikit-learn's ``LinearModelLoss(HalfMultinomialLoss)`` vs the engine's
   fused kernel (uncompressed rows, and the default compressed rows), the
   general kernel on compressed rows (``two_class=False``; differs from the
   default only with two classes, where the default is the score-difference
   kernel), and the full ``Problem.fg`` of the discriminative parameterization.
2. End to end: ``BNClassifier(structure="nb", param="discriminative",
   init="zeros")`` with ``stop=ebnc`` vs ``LogisticRegression(C=inf,
   solver="lbfgs")`` (``penalty=None``) on the prebuilt one-hot design, with
   the loosest ``tol`` in 1e-4 .. 1e-10 whose training CLL reaches ours
   (relative 1e-6). With two classes ours is also run with the general
   kernel (``two_class=False``) for comparison.

Datasets: letter, adult and connect-4 from ``BNCBENCH_DATA_DIR`` (MDL
discretization on the whole data), or synthetic data of the same shape when
they cannot be loaded (marked ``synthetic``). Prints markdown rows.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_ccbn.py
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from bncbench import BNClassifier  # noqa: E402
from bncbench.engine.fit import build_problem  # noqa: E402
from bncbench.engine import CLL, Data  # noqa: E402

SHAPES = {"letter": (20000, 16, 26), "adult": (48842, 14, 2), "connect-4": (67557, 42, 3)}


def load(name):
    try:
        from bncbench.data.uci import load_uci
        from bncbench.model.preprocess import Discretizer

        ds = load_uci(name)
        disc = Discretizer().fit(ds.X, ds.y)
        return disc.transform(ds.X), np.asarray(ds.y, dtype=np.int64), disc.cardinalities_, "uci"
    except Exception as exc:  # pragma: no cover - data not available
        from bncbench.data.sources import random_bnc, sample_random_bnc

        print(f"<!-- {name}: {exc!r}; using synthetic data of the same shape -->", file=sys.stderr)
        n, d, k = SHAPES[name]
        model = random_bnc(d, (2, 5), p=1, n_classes=k, seed=1)
        X, y = sample_random_bnc(model, n, seed=2)
        return X, y, model.cards, "synthetic"


def onehot(X, cards):
    N, d = X.shape
    off = np.r_[0, np.cumsum(cards)[:-1]]
    ok = (X >= 0) & (X < cards)
    cols = (X + off)[ok]
    indptr = np.r_[0, np.cumsum(ok.sum(axis=1))]
    return sp.csr_matrix((np.ones(cols.size), cols, indptr), shape=(N, int(np.sum(cards))))


def best_time(fn, repeat=7):
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def bench_eval(name, X, y, cards, src):
    from sklearn._loss.loss import HalfMultinomialLoss
    from sklearn.linear_model._linear_loss import LinearModelLoss

    K = int(y.max()) + 1
    Z = onehot(X, cards)
    rng = np.random.default_rng(0)
    coef = 0.1 * rng.standard_normal((K, Z.shape[1] + 1))
    lml = LinearModelLoss(base_loss=HalfMultinomialLoss(n_classes=K), fit_intercept=True)
    yf = y.astype(np.float64)
    t_sk = best_time(lambda: lml.loss_gradient(coef, Z, yf, n_threads=1))

    tables = BNClassifier(structure="nb", discretize=False, cardinalities=cards).fit(X, y).tables_
    layout, pmap, problem = build_problem(tables, X, y, param="discriminative", init="zeros")
    idx = layout.rows(X)
    Phi = 0.1 * rng.standard_normal((layout.n_trained, K))
    raw = CLL(Data.from_rows(idx, y, K, compress=False), layout.n_trained, "numba")
    t_raw = best_time(lambda: raw(Phi))
    comp = problem.cll
    t_comp = best_time(lambda: comp(Phi))
    general = CLL(comp.data, layout.n_trained, "numba", two_class=False)
    t_gen = best_time(lambda: general(Phi))
    x = Phi.ravel().copy()

    def fg():
        problem._cache.clear()
        problem.fg(x)

    t_fg = best_time(fg)
    sci = CLL(Data.from_rows(idx, y, K, compress=False), layout.n_trained, "scipy")
    t_sci = best_time(lambda: sci(Phi), repeat=3)
    print(f"| {name} ({src}) | {X.shape[0]} x {X.shape[1]}, {K} cl | {comp.data.n} | {t_sk * 1e3:.1f} | "
          f"{t_sci * 1e3:.1f} | {t_raw * 1e3:.1f} ({t_raw / t_sk:.2f}x) | {t_comp * 1e3:.1f} ({t_comp / t_sk:.2f}x) | "
          f"{t_gen * 1e3:.1f} ({t_gen / t_sk:.2f}x) | {t_fg * 1e3:.1f} ({t_fg / t_sk:.2f}x) |")


def bench_e2e(name, X, y, cards, src):
    from sklearn.linear_model import LogisticRegression

    def fit(**engine):
        t = time.perf_counter()
        clf = BNClassifier(structure="nb", param="discriminative", init="zeros", discretize=False,
                           cardinalities=cards, optimizer_options={"stop": "ebnc", **engine}).fit(X, y)
        return clf, time.perf_counter() - t

    clf, t_ours = fit()
    ours = clf.train_cll_
    general = "-"
    if int(y.max()) + 1 == 2:
        g, t_g = fit(two_class=False)
        general = f"{t_g:.2f} (it {g.n_iter_}, {t_g / t_ours:.2f}x ours)"
    Z = onehot(X, cards)
    rows = np.arange(len(y))
    for tol in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10):
        t = time.perf_counter()
        lr = LogisticRegression(C=np.inf, solver="lbfgs", tol=tol, max_iter=100000).fit(Z, y)
        t_sk = time.perf_counter() - t
        sk = float(lr.predict_log_proba(Z)[rows, y].sum())
        if sk >= ours - 1e-6 * abs(ours):
            break
    it_sk = int(np.max(lr.n_iter_))
    print(f"| {name} ({src}) | {t_ours:.2f} (it {clf.n_iter_}, fev {clf.n_fev_}, "
          f"{1e3 * t_ours / max(clf.n_fev_, 1):.2f} ms/fev) | {ours:.3f} | {general} | "
          f"{t_sk:.2f} (tol {tol:g}, it {it_sk}, {1e3 * t_sk / max(it_sk, 1):.2f} ms/it) | {sk:.3f} | "
          f"{t_ours / t_sk:.2f}x |")


def main(names=("letter", "adult", "connect-4")):
    data = {n: load(n) for n in names}
    with threadpool_limits(limits=1):
        print("\nOne NLL + gradient evaluation (ms, best of 7, single thread)\n")
        print("| dataset | shape | unique rows | sklearn LinearModelLoss | engine scipy CSR | engine numba, "
              "all rows | engine numba, compressed | general kernel, compressed | discriminative Problem.fg |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in names:
            bench_eval(n, *data[n])
        print("\nEnd to end: NB discriminative (zeros init, L-BFGS stop=ebnc) vs LogisticRegression(lbfgs) (s)\n")
        print("| dataset | ours: time | ours: train CLL | ours, general kernel | sklearn: time | sklearn: train CLL "
              "| ratio |")
        print("|---|---|---|---|---|---|---|")
        for n in names:
            bench_e2e(n, *data[n])


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or ("letter", "adult", "connect-4"))
