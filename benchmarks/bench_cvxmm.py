"""Time CVX-MM (Guo et al.'s convex relaxation, Pernkopf et al. Eq. 9) for naive Bayes on small UCI sets.

Each dataset (``BNCBENCH_DATA_DIR``) is split in half (stratified, seeded), MDL-discretized on the
training half, and NB-CVX-MM (``model=cvx_mm``, cvxpy + Clarabel) is fitted on it. Printed per
dataset: the training size, the number of margin constraints (samples × wrong classes), the
solver's wall time, its status, and the training and test classification rates beside NB with
m-estimates on the same codes. (CG-MM joins this table when the max-margin objective is in the
engine: Pernkopf et al.'s Tables 6–7.)

Usage::

    python benchmarks/bench_cvxmm.py [--names iris labor breast-w] [--B 1.0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", nargs="+", default=["iris", "labor", "breast-w", "liver-disorders"])
    parser.add_argument("--B", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from sklearn.model_selection import train_test_split

    from bncbench import BNClassifier
    from bncbench.baselines.cvx_mm import CVXMMBaseline
    from bncbench.data.specs import load, resolve
    from bncbench.model.preprocess import Discretizer

    print("| dataset | train rows | constraints | CVX-MM s | status | train CR CVX-MM / NB | test CR CVX-MM / NB |")
    print("|---|---|---|---|---|---|---|")
    for name in args.names:
        ds = load(resolve([name])[0])
        y = np.unique(np.asarray(ds.y), return_inverse=True)[1]
        idx = np.arange(len(y))
        tr, te = train_test_split(idx, test_size=0.5, stratify=y, random_state=args.seed)
        disc = Discretizer().fit(ds.X.iloc[tr], y[tr])
        Xtr, Xte = disc.transform(ds.X.iloc[tr]), disc.transform(ds.X.iloc[te])
        cards = disc.cardinalities_
        t = time.perf_counter()
        mm = CVXMMBaseline(B=args.B, cardinalities=cards).fit(Xtr, y[tr])
        dt = time.perf_counter() - t
        nb = BNClassifier(structure="nb", cardinalities=cards, discretize=False).fit(Xtr, y[tr])
        K = len(np.unique(y))
        print(f"| {name} | {len(tr)} | {len(tr) * (K - 1)} | {dt:.2f} | {mm.status_} "
              f"| {mm.score(Xtr, y[tr]):.3f} / {nb.score(Xtr, y[tr]):.3f} "
              f"| {mm.score(Xte, y[te]):.3f} / {nb.score(Xte, y[te]):.3f} |", flush=True)


if __name__ == "__main__":
    main()
