"""One evaluation of DBL² and LR² with the authors' penalty: CPU time of ``Problem.fg`` (issue 37 item 4).

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python benchmarks/bench_alr_eval.py --datasets adult connect-4

The problems of ``bench_alr.py`` (A2JE, ``param=weighted`` / ``discriminative``, ``reg=rows lam=0.01``,
the whole dataset's codes, MDL on all rows), our side only: ``--evals`` evaluations of the objective
and gradient at random points (normal, sd 0.3, seed 1), the evaluation cache cleared before each, CPU
time (``process_time``) in this single-threaded process (numba and BLAS: 1 thread, set before
importing them). Prints the median per evaluation and its ratio to the authors' per-evaluation CPU
time *as recorded* in ``docs/benchmarks.md`` (``THEIRS``; not re-measured here). To compare two
checkouts, run it alternately with ``PYTHONPATH`` pointing at each; ``--save`` writes the first point's
objective and gradient (``.npy``) for a check between them (``np.array_equal`` where the sums keep their order;
to rounding across ``--combine-subsets true`` / ``false``).
"""

from __future__ import annotations

import os

for _k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_k, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_alr import LAM, MODELS, prepare  # noqa: E402

THEIRS = {("adult", "DBL2"): 60.5, ("adult", "LR2"): 49.1, ("connect-4", "DBL2"): 618.0, ("connect-4", "LR2"): 513.0}
"""The authors' CPU ms per evaluation recorded in docs/benchmarks.md (the optimizer's CPU time / evaluations)."""


def problem_of(npz: Path, param: str, combine_subsets: bool | None = None, *, n: int = 2, rows: int | None = None):
    """The fit's objective (``Problem``) of AnJE (A2JE by default) with ``param`` and the authors' penalty, started
    at 0, on the first ``rows`` rows of the codes (all by default).

    ``combine_subsets``: the engine option (None: its default; False: the per-subset kernels, the row table's order).
    """
    from bncbench import BNClassifier
    from bncbench.engine.fit import scorer_problem

    d = np.load(npz)
    X, y, cards = d["X"][:rows], d["y"][:rows], d["cards"].tolist()
    scorer = BNClassifier(structure="anje", n=n, discretize=False, cardinalities=cards).fit(X, y).scorer_
    engine = {} if combine_subsets is None else {"combine_subsets": combine_subsets}  # (a checkout without it)
    return scorer_problem(scorer, X, y, param=param, init="zeros", reg="rows", lam=LAM, **engine)[2]


def time_evaluations(pb, evals: int, save: Path | None = None) -> tuple[float, list[float]]:
    """CPU seconds of ``evals`` evaluations of ``pb.fg`` at random points (normal, sd 0.3, seed 1), the evaluation
    cache cleared before each; the first point's objective (evaluated once before, which compiles), and with
    ``save`` its objective and gradient written there (``.npy``)."""
    rng = np.random.default_rng(1)
    xs = [rng.normal(0.0, 0.3, pb.pmap.n_params) for _ in range(evals)]
    f0, g0 = pb.fg(xs[0])  # numba compiled
    if save is not None:
        np.save(save, np.concatenate([[f0], g0]))
    ts = []
    for x in xs:
        pb._cache.clear()
        c = time.process_time()
        pb.fg(x)
        ts.append(time.process_time() - c)
    return f0, ts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["adult", "connect-4"])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--evals", type=int, default=25)
    ap.add_argument("--save", help="directory for each problem's f and gradient at the first point (.npy)")
    ap.add_argument("--combine-subsets", choices=("true", "false"), help="the engine option combine_subsets "
                    "(default: the engine's; false: the per-subset kernels, the row table's order)")
    args = ap.parse_args(argv)
    print("| dataset | model | ms CPU per evaluation (median) | min | theirs, recorded ms | ours / theirs |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as td:
        for name in args.datasets:
            data = prepare(name, Path(td))
            for model in args.models:
                combine = None if args.combine_subsets is None else args.combine_subsets == "true"
                pb = problem_of(data["npz"], MODELS[model][0], combine)
                save = Path(args.save) / f"fg_{name}_{model}.npy" if args.save else None
                _, ts = time_evaluations(pb, args.evals, save)
                ms, theirs = 1000 * float(np.median(ts)), THEIRS.get((name, model), float("nan"))
                print(f"| {name} | {model} | {ms:.1f} | {1000 * min(ts):.1f} | {theirs:g} | {ms / theirs:.3f} |",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
