"""Time the discriminative TAN searches (TAN-CR, TAN-OMI-CR) against the number of attributes.

The data are MNIST-14's training part (the first 60,000 rows of ``mnist14``, MDL-discretized
on those rows; needs the digits, ``docs/digits.md``), or without them a synthetic table of
the same shape. The searches run on the first ``--rows`` rows and the first ``n`` attributes
(pixels in row-major order, the single-valued ones dropped), for each ``n`` of
``--attributes``. Printed per ``n``: the search time, the candidate arcs scored (the paper's
O(N^3) classification-rate evaluations for TAN-CR, O(N^2) for OMI-CR), the time per candidate,
the arcs added and the training classification rate before and after, and, for comparison, the
time of one candidate scored the paper's way (refit the count tables of the candidate structure and
classify every training instance, :class:`~bncbench.bn.count_tables.CountTables`; the mean over 20 random
candidates of the final forest) with the ratio it implies (the candidates scored × that time, a
projection, over the measured search time).

Usage::

    python benchmarks/bench_tan_cr.py [--rows 10000] [--attributes 25 50 100 196] [--search tan_cr tan_omi_cr]

Prints one markdown table row per (search, n).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np


def _data(seed: int):
    """MNIST-14's discretized training codes, or a synthetic table of their shape."""
    try:
        from bncbench.data.specs import load, resolve
        from bncbench.model.preprocess import Discretizer

        ds = load(resolve(["mnist14"])[0])
        X = ds.X.iloc[:60_000]
        y = np.unique(np.asarray(ds.y)[:60_000], return_inverse=True)[1].astype(np.int64)
        codes = Discretizer().fit(X, y).transform(X)
        keep = codes.max(axis=0) > 0
        return "mnist14 (train, MDL)", codes[:, keep], y
    except Exception as exc:  # no digits here: a synthetic table of the same shape
        print(f"(mnist14 not available: {exc}; synthetic data)")
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 10, 60_000)
        codes = np.stack([(y * (j % 7 + 1) + rng.integers(0, 4, y.size)) % 4 for j in range(196)], 1)
        return "synthetic (mnist14's shape)", codes, y


def _full_rescoring_seconds(X, y, cards, parents, seed: int, n: int = 20) -> float:
    """Mean time to score one candidate arc by refitting and classifying (the non-incremental way)."""
    from bncbench.bn.count_tables import CountTables

    rng = np.random.default_rng(seed)
    free = [i for i, p in enumerate(parents) if not p]
    t = time.perf_counter()
    for _ in range(n):
        trial = list(parents)
        child = int(rng.choice(free))
        trial[child] = (int(rng.choice([a for a in range(len(parents)) if a != child])),)  # may be a cycle: same cost
        lj = CountTables(trial, cards, 10).fit(X, y).log_joint(X, 1.0)
        np.sum(np.argmax(lj, axis=1) == y)
    return (time.perf_counter() - t) / n


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--attributes", type=int, nargs="+", default=[25, 50, 100, 196])
    parser.add_argument("--search", nargs="+", default=["tan_cr", "tan_omi_cr"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from bncbench.structures.tan_cr import tan_cr
    from bncbench.structures.tan_omi_cr import tan_omi_cr

    searches = {"tan_cr": tan_cr, "tan_omi_cr": tan_omi_cr}
    name, codes, y = _data(args.seed)
    codes, y = codes[: args.rows], y[: args.rows]
    cards = codes.max(axis=0) + 1
    print(f"{name}: {len(y)} rows, up to {codes.shape[1]} attributes; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cpus")
    tiny = codes[:50, :3]
    for s in args.search:  # compile once outside the timings
        searches[s](tiny, y[:50], cards[:3], 10)
    _full_rescoring_seconds(tiny, y[:50], cards[:3], [(), (), ()], args.seed, n=2)
    print("| search | attributes | seconds (CPU) | candidates scored | µs per candidate | arcs "
          "| train CR NB → found | full rescoring, µs per candidate | projected full / ours |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in args.search:
        for n in args.attributes:
            n = min(n, codes.shape[1])
            t, c = time.perf_counter(), time.process_time()
            parents, info = searches[s](codes[:, :n], y, cards[:n], 10)
            dt, dc = time.perf_counter() - t, time.process_time() - c
            full = _full_rescoring_seconds(codes[:, :n], y, cards[:n], parents, args.seed)
            ev = max(info["n_evaluations"], 1)
            print(f"| {s} | {n} | {dt:.2f} ({dc:.2f}) | {info['n_evaluations']} | {1e6 * dt / ev:.1f} "
                  f"| {info['n_arcs']} | {info['nb_train_cr']:.4f} → {info['train_cr']:.4f} | {1e6 * full:.0f} "
                  f"| {full * ev / dt:.0f}× |", flush=True)


if __name__ == "__main__":
    main()
