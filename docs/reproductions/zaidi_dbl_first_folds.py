"""The whole folds `zaidi_dbl.md` quotes before they enter the rerun's tables: one row per stored record.

    python docs/reproductions/zaidi_dbl_first_folds.py /work/results/zaidi_dbl /work/results_b/zaidi_dbl \\
        > docs/reproductions/zaidi_dbl_rerun/first_folds.csv

Rows: every record of census-income (the first Big dataset run) and of musk1's DBL3 and LR3, from the stores
given (a later store's record of the same task replaces an earlier one's, as for the report); and one row
``max_n_iter_little`` with the largest iteration count of any record of a Little dataset (fewer than 100,000
rows) and whose it is.
"""

from __future__ import annotations

import sys

import pandas as pd

from bncbench.harness.store import load_stores

COLUMNS = ["dataset", "model", "round", "fold", "status", "n_iter", "train_time", "train_cpu", "train_cll", "zero_one",
           "env.commit"]
"""``train_cpu`` (CPU seconds) is empty for records written before it existed (commit 45874cd) and for fits that went
on from a checkpoint saved before it; ``train_cll`` is the training conditional log-likelihood (minus the NLL)."""


def main(stores: list[str]) -> None:
    records = load_stores(stores)
    pick = (records["dataset"] == "census-income") | ((records["dataset"] == "musk1")
                                                     & records["model"].isin(["DBL3", "LR3"]))
    records = records.reindex(columns=list(dict.fromkeys([*records.columns, *COLUMNS])))  # train_cpu: maybe none
    out = records.loc[pick, COLUMNS].sort_values(["dataset", "model", "round", "fold"])
    little = records[(records["n_instances"] < 100_000) & records["n_iter"].notna()]
    top = little.loc[[little["n_iter"].idxmax()], COLUMNS].assign(status="max_n_iter_little")
    out, top = (f.assign(train_time=f["train_time"].round(1), train_cpu=f["train_cpu"].round(1)) for f in (out, top))
    sys.stdout.write(pd.concat([out, top]).to_csv(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
