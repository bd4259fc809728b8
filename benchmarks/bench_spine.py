"""Benchmarks of the experiment spine (issue 2, item 12), each against a peer timed in the same run.

1. ``nb``:   NB fit + predict, ``BNClassifier(structure="nb", discretize=False)`` vs
   scikit-learn's ``CategoricalNB`` on the same integer codes
   (200,000 x 20 synthetic rows). Target: ours / peer <= 1.0.
2. ``tan``:  TAN structure learning, ``bncbench.structure.tan`` vs pgmpy's
   ``TreeSearch(...).estimate(estimator_type="tan")`` (``n_jobs=1``) on 10,000 x 20
   synthetic rows; also checks that both find the same tree (undirected
   attribute edges). Target: ours >= 20x faster.
3. ``kdb``:  KDB-2 fit + predict on 1,000,000 x 20 synthetic rows; peer:
   ``CategoricalNB`` fit + predict on the same rows. Target: ours < 5 s.
4. ``mdl``:  Weka-compatible MDL discretization of one 100,000-row numeric column
   (3-class Gaussian mixture, 5% missing), ``bncbench.model.discretize.mdl_cut_points`` vs
   scikit-learn's ``KBinsDiscretizer(strategy="quantile", n_bins=10)``. Target: ours < 0.5 s.

Synthetic rows are sampled from random BNCs (``bncbench.data.sources.random_bnc``,
20 attributes of cardinality 2..4, two classes). Every "fit + predict" predicts
the training rows. Inputs are built before timing; each side gets its native
input (arrays for us, a DataFrame for pgmpy). Everything runs single-threaded
(BLAS / OpenMP / numba pools pinned to 1 thread, pgmpy with ``n_jobs=1``).

Timing: every function is run once untimed (numba JIT compilation, caches;
these runs also give the agreement checks), then ``--repeats`` times with ours and the peer interleaved (alternating which
goes first), so both see the same background load. The table reports the
*median* wall time per side; the minimum (best-of-k) is printed below it.

Usage::

    python benchmarks/bench_spine.py            # full sizes (about 1-2 minutes)
    python benchmarks/bench_spine.py --quick    # small sizes, a few seconds (targets are for full sizes)
    python benchmarks/bench_spine.py --only nb,kdb --repeats 7

The peer of ``tan`` needs ``pip install pgmpy`` (not a project dependency);
without it that row shows ``n/a``.
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

import numpy as np  # noqa: E402

FULL = {"nb": 200_000, "tan": 10_000, "kdb": 1_000_000, "mdl": 100_000}
QUICK = {"nb": 20_000, "tan": 2_000, "kdb": 100_000, "mdl": 20_000}
N_ATTRIBUTES = 20


class Result:
    def __init__(self, name, ours, peer, peer_name, target, met, note=""):
        self.name, self.ours, self.peer, self.peer_name = name, ours, peer, peer_name
        self.target, self.met, self.note = target, met, note


def interleaved(ours, peer, repeats: int):
    """Time ``ours`` and ``peer`` alternately; returns (our times, peer times).

    The callers have run both once already (the result checks), which is the warm-up.
    """
    t_ours, t_peer = [], []
    for r in range(repeats):
        order = [("o", ours), ("p", peer)] if r % 2 == 0 else [("p", peer), ("o", ours)]
        for who, fn in order:
            if fn is None:
                continue
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            (t_ours if who == "o" else t_peer).append(dt)
    return t_ours, t_peer


def _synthetic(n_rows: int, p: int, seed: int):
    from bncbench.data.sources import random_bnc, sample_random_bnc

    model = random_bnc(N_ATTRIBUTES, cardinality=(2, 4), p=p, n_classes=2, alpha=1.0, seed=seed)
    X, y = sample_random_bnc(model, n_rows, seed=seed + 1)
    return X, y, np.asarray(model.cards, dtype=np.int64)


def _fmt_times(ts):
    return ", ".join(f"{t:.4f}" for t in ts) if ts else "-"


# --------------------------------------------------------------------------- benchmarks
def bench_nb(n_rows, repeats, seed, log):
    from sklearn.naive_bayes import CategoricalNB

    from bncbench import BNClassifier

    X, y, cards = _synthetic(n_rows, p=1, seed=seed)

    def ours():
        return BNClassifier(structure="nb", discretize=False, cardinalities=cards).fit(X, y).predict(X)

    def peer():
        return CategoricalNB(min_categories=cards).fit(X, y).predict(X)

    agree = float(np.mean(ours() == peer()))
    t_o, t_p = interleaved(ours, peer, repeats)
    o, p = statistics.median(t_o), statistics.median(t_p)
    log(f"nb   {n_rows:,} x {N_ATTRIBUTES}: ours [{_fmt_times(t_o)}]  CategoricalNB [{_fmt_times(t_p)}]")
    log(f"     same predicted label on {agree:.2%} of rows (m-estimate m=1 vs Laplace alpha=1)")
    return Result(
        f"NB fit+predict, {n_rows:,} x {N_ATTRIBUTES}", o, p, "sklearn CategoricalNB",
        "ours/peer <= 1.0", o / p <= 1.0, f"best {min(t_o):.4f} / {min(t_p):.4f} s",
    )


def bench_tan(n_rows, repeats, seed, log):
    from bncbench.bn.counts import mutual_information
    from bncbench.structures.tan import tan

    X, y, cards = _synthetic(n_rows, p=1, seed=seed)
    n_classes = int(y.max()) + 1

    def ours():
        return tan(X, y, cards, n_classes)

    structure = ours()
    our_edges = {frozenset((i, ps[0])) for i, ps in enumerate(structure) if ps}
    root = int(np.argmax(mutual_information(X, y, cards, n_classes)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pandas as pd
            from pgmpy.estimators import TreeSearch
    except ImportError:
        t_o, _ = interleaved(ours, None, repeats)  # ours() ran above
        o = statistics.median(t_o)
        log(f"tan  {n_rows:,} x {N_ATTRIBUTES}: ours [{_fmt_times(t_o)}]  pgmpy not installed (pip install pgmpy)")
        return Result(f"TAN structure, {n_rows:,} x {N_ATTRIBUTES}", o, None, "pgmpy TreeSearch (not installed)",
                      ">= 20x faster", None)

    names = [f"x{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    df["class"] = y

    def peer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = TreeSearch(df, root_node=names[root], n_jobs=1)
            return est.estimate(estimator_type="tan", class_node="class", show_progress=False)

    dag = peer()
    peer_edges = {frozenset((names.index(u), names.index(v))) for u, v in dag.edges() if "class" not in (u, v)}
    same = our_edges == peer_edges
    t_o, t_p = interleaved(ours, peer, repeats)
    o, p = statistics.median(t_o), statistics.median(t_p)
    log(f"tan  {n_rows:,} x {N_ATTRIBUTES}: ours [{_fmt_times(t_o)}]  pgmpy [{_fmt_times(t_p)}]")
    log(f"     same undirected tree as pgmpy: {'yes' if same else 'NO'} "
        f"({len(our_edges & peer_edges)} of {len(our_edges)} edges shared)")
    return Result(
        f"TAN structure, {n_rows:,} x {N_ATTRIBUTES}", o, p, "pgmpy TreeSearch(tan), n_jobs=1",
        ">= 20x faster (ours/peer <= 0.05)", p / o >= 20.0,
        f"best {min(t_o):.4f} / {min(t_p):.4f} s; same tree: {'yes' if same else 'no'}",
    )


def bench_kdb(n_rows, repeats, seed, log):
    from sklearn.naive_bayes import CategoricalNB

    from bncbench import BNClassifier

    X, y, cards = _synthetic(n_rows, p=2, seed=seed)

    def ours():
        return BNClassifier(structure="kdb", k=2, discretize=False, cardinalities=cards).fit(X, y).predict(X)

    def peer():
        return CategoricalNB(min_categories=cards).fit(X, y).predict(X)

    acc_o, acc_p = float(np.mean(ours() == y)), float(np.mean(peer() == y))
    t_o, t_p = interleaved(ours, peer, repeats)
    o, p = statistics.median(t_o), statistics.median(t_p)
    log(f"kdb  {n_rows:,} x {N_ATTRIBUTES}: ours [{_fmt_times(t_o)}]  CategoricalNB [{_fmt_times(t_p)}]")
    log(f"     training accuracy: KDB-2 {acc_o:.4f}, CategoricalNB {acc_p:.4f}")
    return Result(
        f"KDB-2 fit+predict, {n_rows:,} x {N_ATTRIBUTES}", o, p, "sklearn CategoricalNB (same rows)",
        "ours < 5 s", o < 5.0, f"best {min(t_o):.4f} / {min(t_p):.4f} s",
    )


def bench_mdl(n_rows, repeats, seed, log):
    try:
        from bncbench.model.discretize import mdl_cut_points
    except ImportError:
        log("mdl  bncbench.model.discretize.mdl_cut_points not available")
        return Result(f"MDL cut points, {n_rows:,} rows", None, None, "-", "ours < 0.5 s", None)
    from sklearn.preprocessing import KBinsDiscretizer

    rng = np.random.default_rng(seed)
    n_classes = 3
    y = rng.integers(0, n_classes, n_rows)
    x = rng.normal(loc=np.array([0.0, 1.0, 2.5])[y], scale=1.0)
    x[rng.random(n_rows) < 0.05] = np.nan
    present = x[~np.isnan(x)].reshape(-1, 1)  # KBinsDiscretizer rejects NaN

    def ours():
        return mdl_cut_points(x, y, n_classes)

    def peer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return KBinsDiscretizer(n_bins=10, encode="ordinal", strategy="quantile").fit(present)

    cuts = ours()
    t_o, t_p = interleaved(ours, peer, repeats)
    o, p = statistics.median(t_o), statistics.median(t_p)
    log(f"mdl  {n_rows:,} rows: ours [{_fmt_times(t_o)}]  KBinsDiscretizer [{_fmt_times(t_p)}]")
    log(f"     {cuts.size} MDL cuts: {np.array2string(cuts, precision=3)}")
    return Result(
        f"MDL cut points, {n_rows:,} rows", o, p, "sklearn KBinsDiscretizer(quantile, 10)",
        "ours < 0.5 s", o < 0.5, f"best {min(t_o):.4f} / {min(t_p):.4f} s; {cuts.size} cuts",
    )


BENCHES = {"nb": bench_nb, "tan": bench_tan, "kdb": bench_kdb, "mdl": bench_mdl}


def _versions() -> str:
    out = [f"python {platform.python_version()}", f"numpy {np.__version__}"]
    for mod in ("numba", "sklearn", "pgmpy"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            out.append(f"{mod} -")
    return ", ".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run; targets are for full sizes)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repetitions per side (default 5, quick 3)")
    ap.add_argument("--only", default=",".join(BENCHES), help="comma-separated subset of: " + ", ".join(BENCHES))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    which = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in which if w not in BENCHES]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {', '.join(BENCHES)}", file=sys.stderr)
        return 2
    repeats = args.repeats or (3 if args.quick else 5)
    sizes = QUICK if args.quick else FULL

    from threadpoolctl import threadpool_limits  # comes with scikit-learn

    def log(msg):
        print(msg, flush=True)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    log(f"# bench_spine{' --quick' if args.quick else ''}: {_versions()}; {os.cpu_count()} cores, "
        f"load average {load:.2f}; median of {repeats} (after one warm-up run)")
    with threadpool_limits(1):
        results = [BENCHES[w](sizes[w], repeats, args.seed, log) for w in which]

    def s(v):
        return "n/a" if v is None else f"{v:.4f}"

    print()
    print("| benchmark | ours s | peer s | ratio (ours/peer) | target | met? |")
    print("|---|---:|---:|---:|---|---|")
    for r in results:
        if r.ours is not None and r.peer is not None:
            ratio = f"{r.ours / r.peer:.3f}x" + (f" ({r.peer / r.ours:.1f}x faster)" if r.ours < r.peer else "")
        else:
            ratio = "n/a"
        met = "n/a" if r.met is None else ("yes" if r.met else "**no**")
        if args.quick and r.met is not None:
            met += " (quick size)"
        print(f"| {r.name} | {s(r.ours)} | {s(r.peer)} [{r.peer_name}] | {ratio} | {r.target} | {met} |")
    print()
    for r in results:
        if r.note:
            print(f"- {r.name}: {r.note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
