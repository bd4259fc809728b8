"""Paired, interleaved before/after timings of max-margin fitting (Pernkopf et al., issue 39's benchmarks).

``bench_mm.py`` times one checkout; on a shared, loaded machine two such runs minutes apart are not
comparable. This script runs the same measurements in fresh processes of two checkouts (``--before``
and ``--after``: directories put first on ``PYTHONPATH``), alternating which goes first, ``--repeats``
times, and reports per quantity the median over the runs of CPU seconds (the process's
``time.process_time``; BLAS limited to one thread) and of wall seconds, with the ratios taken within
each run (MM fit / SVM fit of the same process) before the median.

Measured per process (``worker``), after a warm-up fit that compiles the engine's kernels:

- ``usps``: USPS's given split (the training part optionally subsampled, stratified, ``--rows``),
  MDL codes; MM-NB and MM-TAN (``param=extended, objective=margin, optimizer=cg``, ``margin_lam`` 0.05,
  ``kappa`` 0.25, early stopping on a held-out fifth, patience 10) -- the whole ``BNClassifier.fit``,
  TAN's structure search included, and TAN's conditional mutual information alone --; MM-NB with the
  ``cg_mm`` grid (6 candidates); scikit-learn's ``SVC`` (RBF, C = 10) on the same codes scaled to [0, 1] ("SVM")
  and on the raw pixels scaled to [0, 1] ("SVM (raw)": ``features="raw"``, the SVM the paper compares with and
  the ``pernkopf`` experiment runs).
- ``cvx``: NB-CG-MM (as above) against NB-CVX-MM (cvxpy + Clarabel) on the stratified first half of
  small UCI sets; with ``--fits n`` each model is fitted ``n`` times in turn per process and the median time of
  one fit kept (a fit of a few milliseconds, timed once, varies by tens of percent on a loaded machine).

Usage::

    python benchmarks/bench_mm_paired.py --before ../base --after . --what usps --rows 2000 --repeats 3
    python benchmarks/bench_mm_paired.py --before ../base --after . --what cvx --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

MM = {"param": "extended", "objective": "margin", "optimizer": "cg", "margin_lam": 0.05, "kappa": 0.25}
ES = {"validation_fraction": 0.2, "patience": 10}
GRID = {"margin_lam": [0.005, 0.05, 0.5], "kappa": [0.05, 0.25]}
NAMES = ["iris", "breast-w", "vote", "kr-vs-kp"]


def _median_timed(fn, fits: int):
    """``fn()`` run ``fits`` times in turn: its last result and the median CPU and wall seconds of one run."""
    from bench_mm import timed  # this script's directory is on sys.path

    runs = [timed(fn) for _ in range(max(int(fits), 1))]
    return runs[-1][0], statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)


def _experiment_svm_grid() -> dict:
    """The grid of the ``pernkopf`` experiment's SVM on the raw features (conf/experiment/pernkopf.yaml, its one home)."""
    from omegaconf import OmegaConf

    conf = OmegaConf.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conf", "experiment",
                                       "pernkopf.yaml"))
    for model in conf.models:
        if model.get("model") == "svm_rbf" and model.get("features") == "raw":
            return OmegaConf.to_container(model.grid)
    raise SystemExit("conf/experiment/pernkopf.yaml has no svm_rbf model with features: raw")


def worker_usps(rows: int | None, tuned_svm: bool = False) -> dict:
    import numpy as np
    from bench_mm import given_split_codes, mm_record, timed  # this script's directory is on sys.path

    from bncbench import BNClassifier
    from bncbench.baselines.svm_rbf import SVMBaseline
    from bncbench.bn.counts import conditional_mutual_information

    Xtr, Xte, ytr, yte, cards, Rtr, Rte = given_split_codes("usps", rows, raw=True)
    out = {"rows": int(ytr.size)}

    def mm(st, opts=ES, n=None):
        sl = slice(None) if n is None else slice(0, n)
        return BNClassifier(structure=st, discretize=False, cardinalities=cards, optimizer_options=opts,
                            **MM).fit(Xtr[sl], ytr[sl])

    for st in ("nb", "tan"):  # compile the kernels outside the timings
        mm(st, n=300)
    mm("nb", {**ES, "grid": GRID}, n=300)
    for st in ("nb", "tan"):
        clf, c, w = timed(lambda: mm(st))
        out[f"MM-{st.upper()}"] = mm_record(clf, c, w, Xte, yte)
    codes_y = np.unique(ytr, return_inverse=True)[1]
    _, c, w = timed(lambda: conditional_mutual_information(np.asarray(Xtr), codes_y, cards, int(codes_y.max()) + 1))
    out["TAN CMI"] = {"cpu": c, "wall": w}
    clf, c, w = timed(lambda: mm("nb", {**ES, "grid": GRID}))
    out["MM-NB tuned"] = {"cpu": c, "wall": w, "test_cr": clf.score(Xte, yte), "chosen": clf.tuning_["chosen"]}
    svm, c, w = timed(lambda: SVMBaseline(C=10.0).fit(Xtr, ytr))
    out["SVM"] = {"cpu": c, "wall": w, "test_cr": svm.score(Xte, yte), "size": svm.n_parameters_}
    # the SVM the paper compares with (and the experiments run): the raw pixels scaled to [0, 1], features=raw
    svm, c, w = timed(lambda: SVMBaseline(C=10.0, features="raw").fit(Rtr, ytr))
    out["SVM (raw)"] = {"cpu": c, "wall": w, "test_cr": svm.score(Rte, yte), "size": svm.n_parameters_}
    if tuned_svm:  # as the pernkopf experiment runs it: C and gamma chosen on a held-out fifth, then refit
        svm, c, w = timed(lambda: SVMBaseline(features="raw", grid=_experiment_svm_grid()).fit(Rtr, ytr))
        out["SVM (raw) tuned"] = {"cpu": c, "wall": w, "test_cr": svm.score(Rte, yte), "size": svm.n_parameters_,
                                  "chosen": svm.tuning_["chosen"]}
    return out


def worker_cvx(names: list[str], fits: int = 1) -> dict:
    from bench_mm import half_split_codes  # this script's directory is on sys.path

    from bncbench import BNClassifier
    from bncbench.baselines.cvx_mm import CVXMMBaseline

    out = {}
    for name in names:
        tr, te, y, Xtr, Xte, cards = half_split_codes(name)

        def cg():
            return BNClassifier(structure="nb", discretize=False, cardinalities=cards, optimizer_options=ES,
                                **MM).fit(Xtr, y[tr])

        if name == names[0]:
            cg()  # compile the engine's kernels outside the timings
            CVXMMBaseline(cardinalities=cards).fit(Xtr, y[tr])  # and cvxpy's first-call set-up
        cvx, c1, w1 = _median_timed(lambda: CVXMMBaseline(cardinalities=cards).fit(Xtr, y[tr]), fits)
        mm, c2, w2 = _median_timed(cg, fits)
        out[name] = {"rows": int(tr.size), "cvx_cpu": c1, "cvx_wall": w1, "cg_cpu": c2, "cg_wall": w2,
                     "test_cr_cvx": cvx.score(Xte, y[te]), "test_cr_cg": mm.score(Xte, y[te])}
    return out


def _run(path: str, what: str, rows: int | None, names: list[str], fits: int = 1, tuned_svm: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(path), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", what, "--names", *names, "--fits", str(fits)]
    if rows is not None:
        cmd += ["--rows", str(rows)]
    if tuned_svm:
        cmd += ["--tuned-svm"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _med(xs):
    return statistics.median(xs)


def report_usps(runs: dict) -> None:
    models = ["MM-NB", "MM-TAN", "TAN CMI", "MM-NB tuned", "SVM", "SVM (raw)", "SVM (raw) tuned"]
    models = [m for m in models if m in runs["after"][0] and m in runs["before"][0]]
    svms = [m for m in ("SVM", "SVM (raw)", "SVM (raw) tuned") if m in models]
    print(f"USPS: {runs['after'][0]['rows']} training rows; medians of {len(runs['after'])} paired runs\n")
    print("| fit | before CPU s | after CPU s | CPU speed-up | before wall s | after wall s | test CR before / after |")
    print("|---|---|---|---|---|---|---|")
    for m in models:
        b = [r[m] for r in runs["before"]]
        a = [r[m] for r in runs["after"]]
        bc, ac = _med([x["cpu"] for x in b]), _med([x["cpu"] for x in a])
        cr = (f"{b[0]['test_cr']:.4f} / {a[0]['test_cr']:.4f}" if "test_cr" in b[0] else "-")
        print(f"| {m} | {bc:.2f} | {ac:.2f} | {bc / ac:.1f}x | {_med([x['wall'] for x in b]):.2f} "
              f"| {_med([x['wall'] for x in a]):.2f} | {cr} |")
    print("\n| ratio (median of per-run ratios) | before CPU | after CPU | before wall | after wall |")
    print("|---|---|---|---|---|")
    for svm in svms:
        tuned = svm.endswith("tuned")  # a tuned SVM against the tuned MM fit only (like with like)
        for m in (("MM-NB tuned",) if tuned else ("MM-NB", "MM-TAN", "MM-NB tuned")):
            vals = []
            for side in ("before", "after"):
                for k in ("cpu", "wall"):
                    vals.append(_med([r[m][k] / r[svm][k] for r in runs[side]]))
            print(f"| {m} / {svm} | {vals[0]:.2f} | {vals[2]:.2f} | {vals[1]:.2f} | {vals[3]:.2f} |")
        if not tuned and "cpu_to_stop" in runs["after"][0]["MM-NB"] and "cpu_to_stop" in runs["before"][0]["MM-NB"]:
            # the fit up to its early-stopping point: its CPU time less the share of the wall time the optimizer
            # spent after the best iterate (the patience iterations), an estimate
            for m in ("MM-NB", "MM-TAN"):
                b = _med([r[m]["cpu_to_stop"] / r[svm]["cpu"] for r in runs["before"]])
                a = _med([r[m]["cpu_to_stop"] / r[svm]["cpu"] for r in runs["after"]])
                print(f"| {m} to its early-stopping point / {svm} (estimate) | {b:.2f} | {a:.2f} | - | - |")
    a = runs["after"][0]
    print(f"\nafter: MM-NB early stop at {a['MM-NB']['n_iter']} of {a['MM-NB']['run']}, MM-TAN at "
          f"{a['MM-TAN']['n_iter']} of {a['MM-TAN']['run']}; tuned NB chose {a['MM-NB tuned']['chosen']}")


def report_cvx(runs: dict) -> None:
    print(f"medians of {len(runs['after'])} paired runs\n")
    print("| dataset | train rows | CVX-MM CPU s | CG-MM CPU s before | after | CVX / CG CPU before | after "
          "| CVX / CG wall after | test CR CVX / CG |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in runs["after"][0]:
        b = [r[name] for r in runs["before"]]
        a = [r[name] for r in runs["after"]]
        print(f"| {name} | {a[0]['rows']} | {_med([x['cvx_cpu'] for x in a + b]):.2f} "
              f"| {_med([x['cg_cpu'] for x in b]):.3f} | {_med([x['cg_cpu'] for x in a]):.3f} "
              f"| {_med([x['cvx_cpu'] / x['cg_cpu'] for x in b]):.1f}x | {_med([x['cvx_cpu'] / x['cg_cpu'] for x in a]):.1f}x "
              f"| {_med([x['cvx_wall'] / x['cg_wall'] for x in a]):.1f}x "
              f"| {a[0]['test_cr_cvx']:.3f} / {a[0]['test_cr_cg']:.3f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="checkout measured as 'before' (put first on PYTHONPATH)")
    parser.add_argument("--after", default=".", help="checkout measured as 'after' (default: this one)")
    parser.add_argument("--what", choices=("usps", "cvx"), default="usps")
    parser.add_argument("--rows", type=int, default=None, help="subsample USPS's training part (stratified)")
    parser.add_argument("--names", nargs="+", default=NAMES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fits", type=int, default=1,
                        help="cvx: fits of each model per process, their median CPU (and wall) time kept")
    parser.add_argument("--tuned-svm", action="store_true",
                        help="usps: also the SVM on the raw features with the pernkopf experiment's grid (slow)")
    parser.add_argument("--json", help="also write the raw runs here")
    parser.add_argument("--worker", choices=("usps", "cvx"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            out = (worker_usps(args.rows, args.tuned_svm) if args.worker == "usps"
                   else worker_cvx(args.names, args.fits))
        print(json.dumps(out, default=float))
        return
    runs = {"before": [], "after": []}
    for r in range(args.repeats):
        order = ("before", "after") if r % 2 == 0 else ("after", "before")
        for side in order:
            runs[side].append(_run(getattr(args, side), args.what, args.rows, args.names, args.fits,
                                   args.tuned_svm))
            print(f"run {r + 1}/{args.repeats} {side} done", file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(runs, fh, indent=1, default=float)
    (report_usps if args.what == "usps" else report_cvx)(runs)


if __name__ == "__main__":
    main()
