"""The same task run on two machines, or at two commits: how far apart its records are (`zaidi_dbl.md`, provenance).

    R=docs/reproductions/zaidi_dbl_rerun
    python docs/reproductions/zaidi_dbl_cross_cpu.py $R/store2 $R/cross_cpu $R/cross_cpu $R/cross_cpu_a65cacc \\
        > $R/cross_cpu.csv

Stores in pairs (FIRST SECOND ...). For each pair, one row per record of the second store whose task (the same
file name: round, fold and the task's key) the first store holds too: each side's CPU and commit, iterations,
evaluations, training CLL, 0-1 loss and RMSE; the relative difference of the two traces' objectives at iteration 0
and the first iteration where it exceeds 1e-6; the largest difference of the stored test probabilities (float32)
and how many test predictions differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

SIDES = ("a", "b")


def _record(path: Path) -> tuple[dict, dict]:
    rec = json.loads(path.read_text())
    with np.load(path.with_suffix(".npz")) as z:
        arrays = {k: z[k] for k in ("proba", "y_pred")}
    return rec, arrays


def compare(a: Path, b: Path) -> dict:
    """One row: the records at ``a`` and ``b`` (each a record JSON beside its ``.npz``) of one task."""
    (ra, xa), (rb, xb) = _record(a), _record(b)
    row = {"dataset": ra["dataset"], "model": ra["model"], "round": ra["round"], "fold": ra["fold"]}
    for side, r in zip(SIDES, (ra, rb)):
        row[f"cpu_{side}"] = r["environment"]["cpu"]
        row[f"commit_{side}"] = r["environment"]["commit"][:7]
    for k in ("n_iter", "n_fev", "train_cll", "zero_one", "rmse"):
        for side, r in zip(SIDES, (ra, rb)):
            row[f"{k}_{side}"] = r[k]
    oa, ob = (np.array([t["obj"] for t in r["trace"]]) for r in (ra, rb))
    n = min(len(oa), len(ob))
    rel = np.abs(oa[:n] - ob[:n]) / np.abs(ob[:n])
    row["obj_rel_diff_iter0"] = rel[0]
    row["first_iter_obj_rel_diff_over_1e-6"] = int(np.argmax(rel > 1e-6)) if (rel > 1e-6).any() else ""
    row["proba_max_abs_diff"] = float(np.abs(xa["proba"].astype(np.float64) - xb["proba"]).max())
    row["predictions_differ"] = int((xa["y_pred"] != xb["y_pred"]).sum())
    row["n_test"] = len(xa["y_pred"])
    return row


def main(stores: list[str]) -> None:
    rows = []
    for first, second in zip(stores[::2], stores[1::2]):
        for b in sorted(Path(second).rglob("records/*/*/*.json")):
            a = Path(first) / b.relative_to(second)
            if a.exists():
                rows.append(compare(a, b))
    pd.DataFrame(rows).to_csv(sys.stdout, index=False)


if __name__ == "__main__":
    if len(sys.argv) < 3 or len(sys.argv) % 2 == 0:
        sys.exit("usage: zaidi_dbl_cross_cpu.py FIRST_STORE SECOND_STORE [FIRST_STORE SECOND_STORE ...]")
    main(sys.argv[1:])
