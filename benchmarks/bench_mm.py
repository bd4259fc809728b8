"""MM-NB and MM-TAN (CG with early stopping) against an RBF SVM, and CG-MM against CVX-MM (Pernkopf et al., Tables 4, 6-7).

Part 1: on USPS's given split (the largest digit set we run; ``--rows`` subsamples the training
part, stratified), MDL-discretized on the training part: the time of MM-NB and MM-TAN
(``param=extended, objective=margin, optimizer=cg``, early stopping on a held-out fifth, fixed
``margin_lam`` and ``kappa``) to their early-stopping point, against scikit-learn's
``SVC(kernel="rbf")`` (C = 10, gamma "scale", on the codes scaled to [0, 1]) on the same codes,
with test classification rates and model sizes (BN parameters; support vectors x attributes).

Part 2: NB-CG-MM against NB-CVX-MM (``model=cvx_mm``: cvxpy + Clarabel) on the stratified first half
of small UCI sets: training and test rates and fit times.

Usage::

    python benchmarks/bench_mm.py [--rows 7291] [--names iris breast-w vote kr-vs-kp]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

MM = {"param": "extended", "objective": "margin", "optimizer": "cg", "margin_lam": 0.05, "kappa": 0.25}
ES = {"validation_fraction": 0.2, "patience": 10}


def usps_codes(rows: int | None, raw: bool = False):
    """USPS's given split (its first ``rows`` training rows, stratified), discretized on the training part.

    With ``raw``, also the same rows' raw (continuous) features, what the paper's SVM reads
    (:func:`bncbench.harness.raw_features.raw_matrix`).

    Returns
    -------
    Xtr, Xte, ytr, yte, cards
        Training and test codes, their classes, the attribute cardinalities; with ``raw``, then ``Rtr, Rte``.
    """
    from sklearn.model_selection import train_test_split

    from bncbench.data.given_split import holdout_indices
    from bncbench.data.specs import load, resolve
    from bncbench.model.preprocess import Discretizer

    ds = load(resolve(["usps"])[0])
    tr, te = holdout_indices(ds)
    y = np.asarray(ds.y)
    if rows is not None and rows < tr.size:
        tr, _ = train_test_split(tr, train_size=rows, stratify=y[tr], random_state=0)
    disc = Discretizer().fit(ds.X.iloc[tr], y[tr])
    out = disc.transform(ds.X.iloc[tr]), disc.transform(ds.X.iloc[te]), y[tr], y[te], disc.cardinalities_
    if not raw:
        return out
    from bncbench.harness.raw_features import raw_matrix

    return (*out, raw_matrix(ds.X.iloc[tr], out[0]), raw_matrix(ds.X.iloc[te], out[1]))


def part1(rows: int | None) -> None:
    from bncbench import BNClassifier
    from bncbench.baselines.svm_rbf import SVMBaseline

    Xtr, Xte, ytr, yte, cards = usps_codes(rows)
    print(f"USPS: {ytr.size} training rows, {yte.size} test rows, {Xtr.shape[1]} attributes\n")
    print("| model | fit s | iterations to the early stop | test CR | size |")
    print("|---|---|---|---|---|")
    times = {}
    BNClassifier(structure="nb", discretize=False, cardinalities=cards, optimizer_options=ES, **MM).fit(
        Xtr[:200], ytr[:200])  # compile the engine's kernels outside the timings
    for st in ("nb", "tan"):
        t = time.perf_counter()
        clf = BNClassifier(structure=st, discretize=False, cardinalities=cards, optimizer_options=ES, **MM).fit(
            Xtr, ytr)
        times[st] = time.perf_counter() - t
        print(f"| MM-{st.upper()} | {times[st]:.1f} | {clf.n_iter_} (of {len(clf.trace_) - 1} run) "
              f"| {clf.score(Xte, yte):.4f} | {clf.n_parameters_} |", flush=True)
    t = time.perf_counter()
    svm = SVMBaseline(C=10.0).fit(Xtr, ytr)
    ts = time.perf_counter() - t
    print(f"| SVM (RBF, C=10) | {ts:.1f} | - | {svm.score(Xte, yte):.4f} | {svm.n_parameters_} |")
    print(f"\nMM-NB / SVM time: {times['nb'] / ts:.2f}; MM-TAN / SVM time: {times['tan'] / ts:.2f}\n", flush=True)


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="subsample USPS's training part (stratified)")
    parser.add_argument("--names", nargs="+", default=["iris", "breast-w", "vote", "kr-vs-kp"])
    parser.add_argument("--skip-usps", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_usps:
        part1(args.rows)
    part2(args.names)


if __name__ == "__main__":
    main()
