"""How far a fold's test errors depend on L-BFGS's path: ``zaidi_dbl``'s DBL² and LR² fitted with each driver.

    BNCBENCH_DATA_DIR=/work/shared/datasets/uci python docs/reproductions/zaidi_dbl_driver_paths.py

``lbfgs``'s two drivers (``driver=setulb``, scipy's routine, and ``driver=compact``, the default since
e7a9a6a) take L-BFGS-B's iterates to rounding, and rounding parts their paths over a long fit, so the
experiment's stopping rule (``stop=ebnc``: a relative reduction under ``factr 1e7 * eps``) ends them at
different points near the penalized optimum. This script fits round 0, fold 0 of each model exactly as
the experiment does (``benchmarks/_fold.py``: the runner's task, data, discretization and model) once
with each driver and compares the two fits on the fold's test rows: their predicted classes, errors and
largest probability difference, with their iterations and final objectives. The rerun's n <= 2 models ran
with ``setulb`` (the store of November 26) and its later n = 3 folds with ``compact``; the CSV says how much
of a W-D-L cell the driver could move.

Writes ``zaidi_dbl_rerun/driver_paths.csv`` (``--out``), one row per (dataset, model).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(1, str(HERE.parents[1] / "benchmarks"))

from _fold import fold_inputs  # noqa: E402

from bncbench.atomic import atomic_write_bytes  # noqa: E402
from bncbench.harness.provenance import environment  # noqa: E402

DRIVERS = ("setulb", "compact")
OUT = HERE / "zaidi_dbl_rerun" / "driver_paths.csv"


def compare(dataset: str, label: str) -> dict:
    """Round 0, fold 0 of ``label`` on ``dataset`` fitted with each driver: the row of the CSV."""
    fold = fold_inputs("zaidi_dbl", dataset, label)
    Xt, yt = fold.X[fold.test], fold.y[fold.test]
    got = {}
    for driver in DRIVERS:
        est = fold.estimator
        est.set_params(optimizer_options={**est.get_params()["optimizer_options"], "driver": driver})
        est.fit(*fold.training)
        last = est.trace_[-1]
        got[driver] = (int(est.n_iter_), float(last.get("obj", last["nll"])), est.predict(Xt), est.predict_proba(Xt))
    (i1, f1, p1, P1), (i2, f2, p2, P2) = (got[d] for d in DRIVERS)
    return {"dataset": dataset, "model": label, "n_test": int(len(yt)), "iter_setulb": i1, "iter_compact": i2,
            "obj_setulb": f1, "obj_compact": f2, "obj_rel_diff": abs(f1 - f2) / abs(f1),
            "predictions_apart": int((p1 != p2).sum()), "errors_setulb": int((p1 != yt).sum()),
            "errors_compact": int((p2 != yt).sum()), "max_prob_diff": float(np.abs(P1 - P2).max())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="vote,tic-tac-toe,musk1,spambase,satellite,letter",
                    help="comma-separated registered datasets")
    ap.add_argument("--models", default="DBL2,LR2", help="comma-separated labels of conf/experiment/zaidi_dbl.yaml")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    commit = environment().get("commit")  # as a record names it (with "-dirty" if tracked files differ)
    rows = []
    for dataset in a.datasets.split(","):
        for label in a.models.split(","):
            rows.append({**compare(dataset, label), "commit": commit})
            print(rows[-1], file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    atomic_write_bytes(a.out, df.to_csv(index=False).encode())
    print(df.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
