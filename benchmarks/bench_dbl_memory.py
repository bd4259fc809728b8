"""Memory of DBLⁿ's design: the (N, n_subsets) row table against rows found on the fly.

DBLⁿ / LRⁿ (``structure=anje``, ``param=weighted`` / ``discriminative``) have one factor per
n-subset of the attributes. The engine either materializes the row of ``Phi`` of every training
instance and factor (the engine option ``materialize=True``, the reference: ``N x (1 + n_subsets)``
int32) or finds the rows from the compressed attribute codes inside its kernels (the default,
``bncbench.engine.subset_design``). Two parts, every measurement in a fresh process:

1. ``fit``: DBL² and DBL³ on connect-4 (MDL-discretized on a random half, seed 0, fitted on it,
   predicting the other half), ``BNClassifier(structure="anje", n=n, param="weighted",
   init="generative", optimizer="lbfgs", reg="l2", lam=0.01)`` with the iterations capped
   (``--maxiter2``, ``--maxiter3``): fit and predict time (the process's CPU time, and wall time:
   on a shared machine CPU time is the steadier), and the peak resident memory above
   the process's size after loading the codes and compiling the kernels (Linux ``VmHWM``, reset
   through ``/proc/self/clear_refs``), for both paths; the paths alternate (their order flips
   every repeat) and both must give the same training CLL and probabilities.
2. ``eval``: DBL³'s objective and gradient on connect-4, census-income and covertype: the AnJE
   counts are fitted first, then the peak memory of building the problem (layout, compressed
   data, parameter map) and ``--evals`` evaluations at different points is measured above the
   resident size after the counts, with the time of one evaluation (CPU and wall, the smallest
   after the first).
   On-the-fly path only unless ``--eval-table`` (the row table of census-income's half takes
   13 GB at its peak, covertype's would take about 65 GB: skipped when 2.5 times the table's size
   exceeds 90 % of ``MemAvailable``); ``--eval-rows`` keeps the first rows of the training half only (to
   compare both paths where the whole table would not fit).

Single-threaded (BLAS / OpenMP / numba pinned to one thread). Usage::

    python benchmarks/bench_dbl_memory.py                          # both parts, 3 repeats of part 1
    python benchmarks/bench_dbl_memory.py --only fit --repeats 5 --maxiter3 10
    python benchmarks/bench_dbl_memory.py --only eval --datasets census-income covertype --eval-table
    python benchmarks/bench_dbl_memory.py --only eval --datasets census-income --eval-table --eval-rows 40000

Needs ``BNCBENCH_DATA_DIR`` (connect-4, census-income, covertype).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _memory import mem_available, peak_since_reset, reset_peak, rss_now  # noqa: E402

PATHS = ("table", "codes")  # materialize=True (the reference), the default


def load(name: str):
    """Codes of ``name`` (registry) discretized on a random half (seed 0): train codes, y, test codes, y, cards."""
    from bncbench.data import specs
    from bncbench.model.preprocess import Discretizer

    ds = specs.load(specs.resolve([name])[0], os.environ.get("BNCBENCH_DATA_DIR"))
    y = np.asarray(ds.y, dtype=np.int64)
    train = np.random.default_rng(0).random(len(y)) < 0.5
    disc = Discretizer(reserve_missing=ds.X.isna().any(axis=0).to_numpy()).fit(ds.X[train], y[train])
    codes = disc.transform(ds.X)
    return codes[train], y[train], codes[~train], y[~train], np.asarray(disc.cardinalities_)


def _classifier(n, cards, maxiter, path):
    from bncbench import BNClassifier

    return BNClassifier(structure="anje", n=n, param="weighted", init="generative", optimizer="lbfgs", reg="l2",
                        lam=0.01, discretize=False, cardinalities=cards,
                        optimizer_options={"maxiter": maxiter, "materialize": path == "table"})


def child_fit(npz, n, maxiter, path, out):
    """Part 1 in this fresh process: fit + predict; JSON of times and peaks, probabilities to ``out``."""
    d = np.load(npz)
    Xtr, ytr, Xte, cards = d["Xtr"], d["ytr"], d["Xte"], d["cards"]
    _classifier(n, cards, 2, path).fit(Xtr[:300], ytr[:300]).predict_proba(Xte[:30])  # compile
    base = rss_now()
    reset_peak()
    t0, c0 = time.perf_counter(), time.process_time()
    clf = _classifier(n, cards, maxiter, path).fit(Xtr, ytr)
    t1, c1 = time.perf_counter(), time.process_time()
    peak_fit = peak_since_reset()
    reset_peak()
    t2, c2 = time.perf_counter(), time.process_time()
    proba = clf.predict_proba(Xte)
    t3, c3 = time.perf_counter(), time.process_time()
    peak_pred = peak_since_reset()
    np.save(out, proba)
    print(json.dumps({"fit": t1 - t0, "predict": t3 - t2, "fit_cpu": c1 - c0, "predict_cpu": c3 - c2,
                      "base": base, "peak_fit": peak_fit - base,
                      "peak_predict": peak_pred - base, "n_iter": clf.n_iter_, "n_fev": clf.scorer_.n_fev,
                      "train_cll": clf.train_cll_, "design_rows": int(np.unique(Xtr, axis=0).shape[0]),
                      "subsets": clf.scorer_.layout.n_factors - 1}))


def child_eval(npz, n, evals, path):
    """Part 2 in this fresh process: AnJE counts, then the problem and ``evals`` evaluations; JSON."""
    from bncbench import BNClassifier
    from bncbench.engine.fit import scorer_problem

    d = np.load(npz)
    Xtr, ytr, cards = d["Xtr"], d["ytr"], d["cards"]

    def problem(scorer, X, y):
        return scorer_problem(scorer, X, y, param="weighted", init="generative", level=4, reg="l2", lam=0.01,
                              materialize=path == "table")

    small = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(Xtr[:300], ytr[:300])
    _, pmap, prob = problem(small.scorer_, Xtr[:300], ytr[:300])  # compile
    prob.fg(pmap.x0())
    prob.f(pmap.x0() + 1.0)
    base = rss_now()
    reset_peak()
    t0 = time.perf_counter()
    scorer = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(Xtr, ytr).scorer_
    t1 = time.perf_counter()
    peak_counts = peak_since_reset()
    before = rss_now()
    reset_peak()
    t2, c2 = time.perf_counter(), time.process_time()
    layout, pmap, prob = problem(scorer, Xtr, ytr)
    t3, c3 = time.perf_counter(), time.process_time()
    x0 = pmap.x0()
    rng = np.random.default_rng(0)
    times, cpu, fs = [], [], []
    for k in range(evals):
        x = x0 if k == 0 else x0 + 1e-3 * rng.standard_normal(x0.size)
        t, c = time.perf_counter(), time.process_time()
        f, _ = prob.fg(x)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        fs.append(f)
    peak = peak_since_reset()
    data = prob.cll.data
    print(json.dumps({"counts": t1 - t0, "build": t3 - t2, "build_cpu": c3 - c2, "evals": times, "evals_cpu": cpu,
                      "f": fs, "base": base,
                      "peak_counts": peak_counts - base, "scorer": before - base, "peak_engine": peak - before,
                      "peak_total": max(peak, peak_counts) - base, "train_rows": int(Xtr.shape[0]),
                      "design_rows": data.n, "subsets": layout.n_factors - 1, "phi_rows": layout.n_rows,
                      "n_params": int(pmap.n_params), "n_classes": layout.n_classes}))


def _run(args, log):
    res = subprocess.run([sys.executable, __file__, *map(str, args)], capture_output=True, text=True)
    if res.returncode != 0:
        log(f"  failed: {' '.join(res.stderr.strip().splitlines()[-2:])}")
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_fit(tmp, repeats, maxiters, log):
    Xtr, ytr, Xte, yte, cards = load("connect-4")
    npz = Path(tmp) / "connect-4.npz"
    np.savez(npz, Xtr=Xtr, ytr=ytr, Xte=Xte, cards=cards)
    runs = {}
    for rep in range(repeats):
        for n, maxiter in maxiters.items():
            for path in (PATHS if rep % 2 == 0 else PATHS[::-1]):
                out = Path(tmp) / f"proba-{n}-{path}-{rep}.npy"
                r = _run(["--child-fit", npz, n, maxiter, path, out], log)
                if r is None:
                    continue
                r["proba"] = np.load(out)
                runs.setdefault((n, path), []).append(r)
                log(f"fit connect-4 DBL{n} {path:>5} rep {rep}: fit {r['fit']:.2f} s wall, {r['fit_cpu']:.2f} s CPU "
                    f"({r['n_iter']} iterations, {r['n_fev']} evaluations), predict {r['predict']:.2f} s wall, "
                    f"{r['predict_cpu']:.2f} s CPU, peak +{r['peak_fit'] / 2**20:.0f} MiB "
                    f"fit, +{r['peak_predict'] / 2**20:.0f} MiB predict, CLL {r['train_cll']!r}")
    rows = []
    for n in maxiters:
        t, c = runs.get((n, "table"), []), runs.get((n, "codes"), [])
        if not t or not c:
            continue
        same_cll = all(a["train_cll"] == b["train_cll"] for a in t for b in c)
        diff = max(float(np.abs(a["proba"] - b["proba"]).max()) for a in t for b in c)
        keys = ("fit", "predict", "fit_cpu", "predict_cpu", "peak_fit", "peak_predict")
        med = {p: {k: statistics.median(r[k] for r in rs) for k in keys}
               for p, rs in (("table", t), ("codes", c))}
        rows.append((n, maxiters[n], c[0]["n_iter"], c[0]["n_fev"], c[0]["design_rows"], c[0]["subsets"], med,
                     same_cll, diff, len(t)))
    return rows


def bench_eval(tmp, names, evals, table, max_rows, log):
    rows = []
    for name in names:
        Xtr, ytr, _, _, cards = load(name)
        if max_rows:
            Xtr, ytr = Xtr[:max_rows], ytr[:max_rows]
        npz = Path(tmp) / f"{name}.npz"
        np.savez(npz, Xtr=Xtr, ytr=ytr, cards=cards)
        from math import comb

        est = Xtr.shape[0] * (1 + comb(Xtr.shape[1], 3)) * 4
        for path in (("codes", "table") if table else ("codes",)):
            if path == "table" and 2.5 * est > 0.9 * mem_available():
                log(f"eval {name} DBL3 table: skipped (the row table alone is {est / 2**30:.1f} GiB; about 2.3x that "
                    f"at its peak, more than the {mem_available() / 2**30:.1f} GiB available allow)")
                continue
            r = _run(["--child-eval", npz, 3, evals, path], log)
            if r is None:
                continue
            log(f"eval {name} DBL3 {path}: counts {r['counts']:.1f} s, build {r['build']:.2f} s, evaluations "
                f"{', '.join(f'{t:.2f}' for t in r['evals'])} s wall, {', '.join(f'{t:.2f}' for t in r['evals_cpu'])} "
                f"s CPU; engine peak +{r['peak_engine'] / 2**20:.0f} MiB above "
                f"{r['scorer'] / 2**20:.0f} MiB of counts; {r['design_rows']:,} design rows x {r['subsets']:,} subsets")
            rows.append((name, path, r, est))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="fit,eval", help="comma-separated parts: fit, eval")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of part 1 (each path, each model)")
    ap.add_argument("--maxiter2", type=int, default=100, help="L-BFGS iterations of DBL² in part 1")
    ap.add_argument("--maxiter3", type=int, default=10, help="L-BFGS iterations of DBL³ in part 1")
    ap.add_argument("--datasets", nargs="*", default=["connect-4", "census-income", "covertype"], help="part 2")
    ap.add_argument("--evals", type=int, default=3, help="evaluations per process in part 2")
    ap.add_argument("--eval-table", action="store_true", help="part 2 with the row table too, where it fits")
    ap.add_argument("--eval-rows", type=int, default=0, help="part 2 on the first this many training rows (0: all)")
    ap.add_argument("--child-fit", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--child-eval", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child_fit:
        npz, n, maxiter, path, out = args.child_fit
        return child_fit(npz, int(n), int(maxiter), path, out)
    if args.child_eval:
        npz, n, evals, path = args.child_eval
        return child_eval(npz, int(n), int(evals), path)
    only = set(args.only.split(","))

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    log(f"{platform.platform()}, Python {platform.python_version()}, load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-dbl-") as tmp:
        if "fit" in only:
            rows = bench_fit(tmp, args.repeats, {2: args.maxiter2, 3: args.maxiter3}, log)
            print("\n| model | iterations (evaluations) | design rows × subsets | path | fit s CPU (wall) | "
                  "predict s CPU (wall) | peak fit MiB | peak predict MiB | same CLL, max \\|ΔP\\| |")
            print("|---|---:|---:|---|---:|---:|---:|---:|---|")
            for n, _, it, fev, N, S, med, same, diff, reps in rows:
                for path in PATHS:
                    m = med[path]
                    label = "DBL²" if n == 2 else "DBL³"
                    print(f"| {label} | {it} ({fev}) | {N:,} × {S:,} | {path} | {m['fit_cpu']:.2f} ({m['fit']:.2f}) | "
                          f"{m['predict_cpu']:.2f} ({m['predict']:.2f}) | "
                          f"{m['peak_fit'] / 2**20:,.0f} | {m['peak_predict'] / 2**20:,.0f} | "
                          f"{'yes' if same else 'NO'}, {diff:.1e} |")
            print(f"(medians of {args.repeats} repeats per path, paths alternating)")
        if "eval" in only:
            rows = bench_eval(tmp, args.datasets, args.evals, args.eval_table, args.eval_rows, log)
            print("\n| dataset | train rows → design rows | subsets | classes | rows of Φ | path | build s CPU | "
                  "one evaluation s CPU (min; wall) | engine peak MiB | counts MiB |")
            print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
            for name, path, r, est in rows:
                ev, evc = r["evals"][1:] or r["evals"], r["evals_cpu"][1:] or r["evals_cpu"]
                print(f"| {name} | {r['train_rows']:,} → {r['design_rows']:,} | {r['subsets']:,} | "
                      f"{r['n_classes']} | {r['phi_rows']:,} | {path} | {r['build_cpu']:.2f} | {min(evc):.2f}; "
                      f"{min(ev):.2f} | {r['peak_engine'] / 2**20:,.0f} | {r['scorer'] / 2**20:,.0f} |")
    log(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
