"""Time the BNC imputation baseline's Hamming distances: one product of one-hot codes against the count per attribute.

The missing-features protocol (Pernkopf et al., Figs. 6-7; ``cv.missing_features.impute``) fills a BNC's removed
test features with the most frequent value of the 5 nearest training rows, by the Hamming distance on the features
the test row has (:func:`bncbench.model.impute.knn_neighbours`). Both ways of computing those distances are timed on
the same batches of the same data, interleaved, CPU time, best of ``--repeats``:

* ``product``: :class:`bncbench.model.impute._OneHot` with its one-hot training table (one float32 matrix product per
  batch of test rows; the default);
* ``per attribute``: the same class without the table (its fallback beyond the table budget, and the former code):
  one pass over the training codes per attribute.

Data: MNIST-14's shape (60,000 training rows x 196 attributes, codes 0-3, the most MDL gives its pixels here),
random codes, ``--rows`` test rows with a quarter of their features missing; the batches are
:func:`knn_neighbours`'s (``BATCH_ENTRIES`` distances each). The two distance arrays are checked equal to the bit.

Usage::

    python benchmarks/bench_impute.py [--train 60000] [--attributes 196] [--rows 560] [--repeats 3]

Prints a markdown table row: ``| train rows x attributes | test rows | product CPU s | per attribute CPU s | ratio |``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from bncbench.model import impute


def _time(fn, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, default=60_000)
    ap.add_argument("--attributes", type=int, default=196)
    ap.add_argument("--rows", type=int, default=560)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    Xtr = rng.integers(0, 4, size=(args.train, args.attributes)).astype(float)
    Xte = rng.integers(0, 4, size=(args.rows, args.attributes)).astype(float)
    miss = rng.random(Xte.shape) < 0.25
    o, z = (~miss).astype(float), np.where(miss, 0.0, Xte)
    step = max(1, impute.BATCH_ENTRIES // args.train)
    product = impute._OneHot(Xtr)
    per_attribute = impute._OneHot(Xtr)
    per_attribute.B = None  # the count attribute by attribute
    batches = [(z[s:s + step], o[s:s + step]) for s in range(0, args.rows, step)]
    with threadpool_limits(1):  # one core for both
        for a, b in zip((product.mismatches(*bt) for bt in batches), (per_attribute.mismatches(*bt) for bt in batches)):
            np.testing.assert_array_equal(a, b)
        t_prod = t_attr = np.inf
        for _ in range(args.repeats):  # interleaved
            t_prod = min(t_prod, _time(lambda: [product.mismatches(*bt) for bt in batches], 1))
            t_attr = min(t_attr, _time(lambda: [per_attribute.mismatches(*bt) for bt in batches], 1))
    print("| train rows x attributes | test rows | product CPU s | per attribute CPU s | ratio |")
    print("|---|---:|---:|---:|---:|")
    print(f"| {args.train:,} x {args.attributes} | {args.rows} | {t_prod:.2f} | {t_attr:.2f} | {t_prod / t_attr:.3f}x |")


if __name__ == "__main__":
    main()
