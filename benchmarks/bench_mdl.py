"""Time Weka-compatible MDL discretization of one 100,000-row column.

The column is a three-class Gaussian mixture (class means 0, 1 and 2.5,
unit variance, 5% missing).  ``mdl_cut_points`` is timed best-of-5 and
compared with scikit-learn's unsupervised ``KBinsDiscretizer`` (quantile
strategy, 10 bins) fitted on the same column in the same run.

Usage::

    python benchmarks/bench_mdl.py [--rows 100000] [--repeats 5] [--seed 0]

Prints the timings and one markdown table row:
``| rows | classes | cuts | mdl s | KBins s | mdl/KBins |``.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from bncbench.model.discretize import apply_cuts, mdl_cut_points

    rng = np.random.default_rng(args.seed)
    n_classes = 3
    y = rng.integers(0, n_classes, args.rows)
    x = rng.normal(loc=np.array([0.0, 1.0, 2.5])[y], scale=1.0)
    x[rng.random(args.rows) < 0.05] = np.nan

    cuts = mdl_cut_points(x, y, n_classes)  # warm-up, and the result
    t_mdl = _best_of(lambda: mdl_cut_points(x, y, n_classes), args.repeats)
    t_apply = _best_of(lambda: apply_cuts(x, cuts), args.repeats)

    t_peer = float("nan")
    try:
        from sklearn.preprocessing import KBinsDiscretizer

        present = x[~np.isnan(x)].reshape(-1, 1)  # KBins rejects NaN

        def fit_peer():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                KBinsDiscretizer(
                    n_bins=10, encode="ordinal", strategy="quantile"
                ).fit(present)

        fit_peer()
        t_peer = _best_of(fit_peer, args.repeats)
    except ImportError:  # pragma: no cover - sklearn is a dependency
        pass

    print(f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"rows={args.rows} classes={n_classes} cuts={cuts.size}")
    print(f"mdl_cut_points  best of {args.repeats}: {t_mdl:.4f} s")
    print(f"apply_cuts      best of {args.repeats}: {t_apply:.4f} s")
    print(f"KBinsDiscretizer(quantile, 10 bins).fit best of {args.repeats}: {t_peer:.4f} s")
    print()
    print("| rows | classes | cuts | mdl_cut_points (s) | KBins quantile fit (s) | ratio |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.rows:,} | {n_classes} | {cuts.size} | {t_mdl:.4f} | "
        f"{t_peer:.4f} | {t_mdl / t_peer:.2f}x |"
    )


if __name__ == "__main__":
    main()
