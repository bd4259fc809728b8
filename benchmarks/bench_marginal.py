"""Time exact marginalization of missing test attributes (``missing="marginalize"``) against ignoring them.

A TAN (m-estimates) is fitted on adult's codes (``BNCBENCH_DATA_DIR``; without it a synthetic
table of the same shape: 48,842 rows, 14 attributes with 2-42 values, 2 classes), and the
test rows get ``k`` attributes missing each, drawn uniformly (the same cells for both sides).
Both sides predict the same rows, interleaved, best of ``--repeats``: ``missing="marginalize"``
(the exact sum, :mod:`bncbench.model.marginal`) and the default ``missing="ignore"`` (the factor drops
out, children back off), the peer whose cost exactness adds to. Also printed: the largest
difference in class probabilities between the two (what the exact sum changes).

Usage::

    python benchmarks/bench_marginal.py [--k 0 1 3 7] [--repeats 5]

Prints one markdown table row per ``k``: ``| k | marginalize s | ignore s | ratio | max |dP| |``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np


def _data(seed: int):
    """adult's discretized codes, or a synthetic table of its shape."""
    if os.environ.get("BNCBENCH_DATA_DIR"):
        from bncbench.data.specs import load, resolve
        from bncbench.model.preprocess import Discretizer

        ds = load(resolve(["adult"])[0])
        codes = Discretizer().fit(ds.X, ds.y).transform(ds.X)
        return "adult", codes, ds.y
    rng = np.random.default_rng(seed)
    cards = rng.integers(2, 43, 14)
    codes = np.stack([rng.integers(0, c, 48_842) for c in cards], 1)
    y = (codes[:, 0] + codes[:, 1] * codes[:, 2] + rng.integers(0, 3, len(codes))) % 2
    return "synthetic (adult's shape)", codes, y


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[0, 1, 3, 7])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from bncbench import BNClassifier

    name, codes, y = _data(args.seed)
    cards = codes.max(axis=0) + 1
    half = len(codes) // 2
    exact = BNClassifier(structure="tan", missing="marginalize", cardinalities=cards).fit(codes[:half], y[:half])
    ignore = BNClassifier(structure="tan", cardinalities=cards).fit(codes[:half], y[:half])
    test = codes[half:]
    rng = np.random.default_rng(args.seed + 1)
    print(f"{name}: {len(test)} test rows, {codes.shape[1]} attributes; {platform.processor() or platform.machine()}")
    print("| k | marginalize s | ignore s | ratio | max abs(dP) |")
    print("|--:|--:|--:|--:|--:|")
    for k in args.k:
        Xt = test.copy()
        if k:
            cols = np.argsort(rng.random(Xt.shape), axis=1)[:, :k]
            np.put_along_axis(Xt, cols, -1, axis=1)
        exact.predict_proba(Xt[:10])                      # compile
        best = {"m": np.inf, "i": np.inf}
        for _ in range(args.repeats):                     # interleaved
            for key, clf in (("m", exact), ("i", ignore)):
                t0 = time.perf_counter()
                p = clf.predict_proba(Xt)
                best[key] = min(best[key], time.perf_counter() - t0)
                if key == "m":
                    pm = p
                else:
                    pi = p
        print(f"| {k} | {best['m']:.3f} | {best['i']:.3f} | {best['m'] / best['i']:.1f}x | "
              f"{np.abs(pm - pi).max():.3g} |")


if __name__ == "__main__":
    main()
