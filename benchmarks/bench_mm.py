"""MM-NB and MM-TAN (CG with early stopping) against an RBF SVM, and CG-MM against CVX-MM (Pernkopf et al., Tables 4, 6-7).

Part 1: on a digit set's given split (``--dataset``: USPS, or MNIST-14, the largest we have, 60,000 / 10,000;
``--rows`` subsamples the training part, stratified, one size after another), MDL-discretized on the training
part as the runner does: the CPU time (``time.process_time``, BLAS on one thread) of the whole
``BNClassifier.fit`` of MM-NB and MM-TAN (TAN-CMI structure; ``param=extended, objective=margin,
optimizer=cg``, early stopping on a held-out fifth with patience 10, fixed ``margin_lam`` 0.05 and ``kappa``
0.25), and an estimate of it to the early-stopping point, against scikit-learn's ``SVC(kernel="rbf")`` at a
fixed C and gamma (no grid) on the raw features scaled to [0, 1] (``svm_rbf`` with ``features="raw"``, the
paper's SVM) and, with ``--codes-svm``, on the codes; test classification rates on the given test part and
model sizes (BN parameters; support vectors x attributes), all in the same process.

Part 2: NB-CG-MM against NB-CVX-MM (``model=cvx_mm``: cvxpy + Clarabel) on the stratified first half
of small UCI sets: training and test rates and fit times.

Usage::

    python benchmarks/bench_mm.py [--rows 2000] [--names iris breast-w vote kr-vs-kp]
    python benchmarks/bench_mm.py --dataset mnist14 --rows all 7500 15000 30000 --svm-C 10 --svm-gamma 0.2 \\
        --codes-svm --skip-cvx --json mnist.jsonl
"""

from __future__ import annotations

import argparse
import time

import numpy as np

MM = {"param": "extended", "objective": "margin", "optimizer": "cg", "margin_lam": 0.05, "kappa": 0.25}
ES = {"validation_fraction": 0.2, "patience": 10}


def given_split_codes(name: str = "usps", rows: int | None = None, raw: bool = False):
    """A dataset's given train/test split (USPS, MNIST-14, ...), discretized on its training part as the runner does.

    The one loader of the digit benchmarks (here and in ``bench_mm_paired.py``): the registered dataset, its
    given split (:func:`bncbench.data.given_split.holdout_indices`), the MDL cut points fitted on the training
    part with the dataset's missing-value mask (as ``bncbench.harness.runner`` does for ``cv.mode=holdout``).
    With ``rows``, a stratified subsample (seed 0) of that many training rows, on which the cut points are
    fitted; the test part is always whole. With ``raw``, also the same rows' raw (continuous) features, what
    the paper's SVM reads (:func:`bncbench.harness.raw_features.raw_matrix`).

    Returns
    -------
    Xtr, Xte, ytr, yte, cards
        Training and test codes, their classes, the attribute cardinalities; with ``raw``, then ``Rtr, Rte``.
    """
    from sklearn.model_selection import train_test_split

    from bncbench.data.given_split import holdout_indices
    from bncbench.data.specs import load, resolve
    from bncbench.model.preprocess import Discretizer

    ds = load(resolve([name])[0])
    tr, te = holdout_indices(ds)
    y = np.asarray(ds.y)
    if rows is not None and rows < tr.size:
        tr, _ = train_test_split(tr, train_size=rows, stratify=y[tr], random_state=0)
    disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X.iloc[tr], y[tr])
    out = disc.transform(ds.X.iloc[tr]), disc.transform(ds.X.iloc[te]), y[tr], y[te], disc.cardinalities_
    if not raw:
        return out
    from bncbench.harness.raw_features import raw_matrix

    return (*out, raw_matrix(ds.X.iloc[tr], out[0]), raw_matrix(ds.X.iloc[te], out[1]))


def timed(fn):
    """``fn()``, its CPU seconds (the process's ``time.process_time``) and its wall seconds."""
    c, t = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c, time.perf_counter() - t


def mm_record(clf, cpu: float, wall: float, Xte, yte) -> dict:
    """What the benchmarks report of a timed MM fit, with its CPU seconds to the early-stopping point (an estimate).

    The fit runs ``patience`` iterations past its best iterate; ``cpu_to_stop`` is its CPU time less the share of
    its wall time that the optimizer spent after the best iterate (the trace's times), good when the load is even
    over the fit.
    """
    tr = clf.trace_
    after = tr[-1]["time"] - tr[clf.n_iter_]["time"]  # the patience iterations past the early-stopping point
    return {"cpu": cpu, "wall": wall, "n_iter": clf.n_iter_, "run": len(tr) - 1, "test_cr": clf.score(Xte, yte),
            "size": clf.n_parameters_, "cpu_to_stop": cpu * (wall - after) / wall}


def svm_vs_mm(name: str, rows: int | None, C: float, gamma, codes_svm: bool, warm: bool = True) -> dict:
    """MM-NB, MM-TAN and the RBF SVM (raw features; with ``codes_svm`` also on the codes) in this process.

    Every fit is timed whole (CPU and wall; TAN's structure search included), the test rates on the given test
    part untimed; ``warm`` first fits each MM model on 300 rows, outside the timings, to compile the kernels.
    """
    from bncbench import BNClassifier
    from bncbench.baselines.svm_rbf import SVMBaseline

    Xtr, Xte, ytr, yte, cards, Rtr, Rte = given_split_codes(name, rows, raw=True)
    out = {"dataset": name, "rows": int(ytr.size), "test_rows": int(yte.size), "C": C, "gamma": gamma}

    def mm(st, n=None):
        sl = slice(None) if n is None else slice(0, n)
        return BNClassifier(structure=st, discretize=False, cardinalities=cards, optimizer_options=ES,
                            **MM).fit(Xtr[sl], ytr[sl])

    for st in ("nb", "tan"):
        if warm:
            mm(st, n=300)
        clf, c, w = timed(lambda: mm(st))
        out[f"MM-{st.upper()}"] = mm_record(clf, c, w, Xte, yte)
    svms = [("SVM (raw)", "raw", Rtr, Rte)] + ([("SVM (codes)", "codes", Xtr, Xte)] if codes_svm else [])
    for label, feats, A, B in svms:
        svm, c, w = timed(lambda: SVMBaseline(C=C, gamma=gamma, features=feats).fit(A, ytr))
        out[label] = {"cpu": c, "wall": w, "test_cr": svm.score(B, yte), "size": svm.n_parameters_,
                      "support_vectors": int(svm.svc_.n_support_.sum())}
    return out


def print_svm_vs_mm(res: dict) -> None:
    """One ``svm_vs_mm`` result as Markdown: CPU and wall seconds, test rates, sizes, and the ratios to the SVM."""
    print(f"\n{res['dataset']}: {res['rows']} training rows, {res['test_rows']} test rows; SVM C = {res['C']}, "
          f"gamma = {res['gamma']}\n")
    print("| fit | CPU s | wall s | early stop at (of run) | test CR | size |")
    print("|---|---|---|---|---|---|")
    for m in ("MM-NB", "MM-TAN", "SVM (raw)", "SVM (codes)"):
        if m in res:
            r = res[m]
            stop = f"{r['n_iter']} ({r['run']})" if "n_iter" in r else "-"
            print(f"| {m} | {r['cpu']:.2f} | {r['wall']:.2f} | {stop} | {r['test_cr']:.4f} | {r['size']:,} |")
    print("\n| ratio (CPU) | whole fit | to the early-stopping point (estimate) |")
    print("|---|---|---|")
    for svm in ("SVM (raw)", "SVM (codes)"):
        for m in ("MM-NB", "MM-TAN") if svm in res else ():
            print(f"| {m} / {svm} | {res[m]['cpu'] / res[svm]['cpu']:.3f} "
                  f"| {res[m]['cpu_to_stop'] / res[svm]['cpu']:.3f} |")
    print(flush=True)


def part1(name: str, rows: list[int | None], C: float, gamma, codes_svm: bool, json_path: str | None) -> None:
    """:func:`svm_vs_mm` for each training-set size in ``rows`` (None: all), in turn, in this process."""
    import json

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        for i, n in enumerate(rows):
            res = svm_vs_mm(name, n, C, gamma, codes_svm, warm=i == 0)
            print_svm_vs_mm(res)
            if json_path:
                with open(json_path, "a") as fh:
                    fh.write(json.dumps(res, default=float) + "\n")


def half_split_codes(name: str):
    """A UCI set's stratified halves (seed 0), MDL-discretized on the first: ``tr, te, y, Xtr, Xte, cards``.

    The one loader of the CG-MM against CVX-MM comparison (here and in ``bench_mm_paired.py``).
    """
    from sklearn.model_selection import train_test_split

    from bncbench.data.specs import load, resolve
    from bncbench.model.preprocess import Discretizer

    ds = load(resolve([name])[0])
    y = np.unique(np.asarray(ds.y), return_inverse=True)[1]
    tr, te = train_test_split(np.arange(len(y)), test_size=0.5, stratify=y, random_state=0)
    disc = Discretizer().fit(ds.X.iloc[tr], y[tr])
    return tr, te, y, disc.transform(ds.X.iloc[tr]), disc.transform(ds.X.iloc[te]), disc.cardinalities_


def part2(names: list[str]) -> None:
    from bncbench import BNClassifier
    from bncbench.baselines.cvx_mm import CVXMMBaseline

    print("| dataset | train rows | CVX-MM s | CG-MM s | ratio | train CR CVX / CG | test CR CVX / CG |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        tr, te, y, Xtr, Xte, cards = half_split_codes(name)
        if name == names[0]:  # compile the engine's kernels outside the timings
            BNClassifier(structure="nb", discretize=False, cardinalities=cards, optimizer_options=ES, **MM).fit(
                Xtr, y[tr])
        t = time.perf_counter()
        cvx = CVXMMBaseline(cardinalities=cards).fit(Xtr, y[tr])
        tc = time.perf_counter() - t
        t = time.perf_counter()
        cg = BNClassifier(structure="nb", discretize=False, cardinalities=cards, optimizer_options=ES, **MM).fit(
            Xtr, y[tr])
        tg = time.perf_counter() - t
        print(f"| {name} | {len(tr)} | {tc:.2f} | {tg:.2f} | {tc / tg:.1f}x | {cvx.score(Xtr, y[tr]):.3f} / "
              f"{cg.score(Xtr, y[tr]):.3f} | {cvx.score(Xte, y[te]):.3f} / {cg.score(Xte, y[te]):.3f} |", flush=True)


def _rows(text: str) -> int | None:
    return None if text == "all" else int(text)


def _gamma(text: str):
    return text if text in ("scale", "auto") else float(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="usps", help="a registered dataset with a given split (usps, mnist14)")
    parser.add_argument("--rows", type=_rows, nargs="+", default=[None],
                        help="training rows, stratified subsamples, each in turn ('all': the whole training part)")
    parser.add_argument("--svm-C", type=float, default=10.0, help="the SVM's C (no grid)")
    parser.add_argument("--svm-gamma", type=_gamma, default="scale", help="the SVM's gamma (no grid)")
    parser.add_argument("--codes-svm", action="store_true", help="also the SVM on the codes scaled to [0, 1]")
    parser.add_argument("--json", help="append each training-set size's result here as a JSON line")
    parser.add_argument("--names", nargs="+", default=["iris", "breast-w", "vote", "kr-vs-kp"])
    parser.add_argument("--skip-digits", action="store_true", help="part 2 only")
    parser.add_argument("--skip-cvx", action="store_true", help="part 1 only")
    args = parser.parse_args(argv)
    if not args.skip_digits:
        part1(args.dataset, args.rows, args.svm_C, args.svm_gamma, args.codes_svm, args.json)
    if not args.skip_cvx:
        part2(args.names)


if __name__ == "__main__":
    main()
