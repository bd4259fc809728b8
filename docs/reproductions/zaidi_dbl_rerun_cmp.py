"""Two runs of one experiment side by side: per-model differences and the W-D-L cells that moved.

Reads two ``summary.csv`` files of the same experiment (``python -m bncbench report`` writes one
beside each report; the committed ones are enough, no records are needed) and prints Markdown:

* per model, over the (dataset, model) pairs complete in both runs (every fold) and computed by
  each from its records (a report's ``--supplement`` rows are left out): how many
  pairs differ in mean 0-1 loss, RMSE, bias and variance by more than ``--atol``, and the
  largest difference with its dataset;
* every W-D-L cell of the experiment's report tables (``report.tables`` of the experiment's
  YAML), counted on the same pairs in both runs, with the cells that differ marked.

This is how ``docs/reproductions/zaidi_dbl_l2.md``, "Rerun on a fresh machine", compares the
rerun with the committed report::

    python docs/reproductions/zaidi_dbl_rerun_cmp.py docs/reproductions/zaidi_dbl/summary.csv \
        docs/reproductions/zaidi_dbl_rerun/summary.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from bncbench.report.stats import incomplete, wdl_table
from bncbench.report.supplement import supplied

HERE = Path(__file__).parent
METRICS = ("zero_one", "rmse", "bias", "variance")


def common_pairs(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """The (dataset, model) pairs complete in both summaries (every fold of the dataset), merged.

    A row that a report took from another summary (``report --supplement``: its ``source`` is not
    ``records``) is left out: it is the other run's number, not this run's.
    """
    old, new = old[~incomplete(old)], new[~incomplete(new)]
    old, new = old[~supplied(old)], new[~supplied(new)]
    m = old.merge(new, on=["dataset", "model"], suffixes=("_old", "_new"))
    return m[(m["n_ok_old"] == m["n_ok_new"]) & (m["n_failed_old"].fillna(0) == 0)
             & (m["n_failed_new"].fillna(0) == 0)]


def model_differences(m: pd.DataFrame, atol: float) -> pd.DataFrame:
    """Per model and metric: pairs, pairs differing by more than ``atol``, the largest difference and where."""
    rows = []
    for model, g in m.groupby("model", sort=True):
        for metric in METRICS:
            d = (g[f"{metric}_old"] - g[f"{metric}_new"]).abs()
            worst = d.idxmax()
            rows.append({"model": model, "metric": metric, "pairs": len(g), "differ": int((d > atol).sum()),
                         "max": float(d.max()), "at": g.loc[worst, "dataset"] if d.max() > atol else ""})
    return pd.DataFrame(rows)


def table_pairs(experiment: Path) -> list[tuple[str, str]]:
    """The (model a, model b) pairs of the experiment's report tables, in order, each once."""
    cfg = OmegaConf.load(experiment)
    pairs = [tuple(p.split(":")) for t in cfg.report.tables for p in t.pairs]
    return list(dict.fromkeys(pairs))


def moved_cells(old: pd.DataFrame, new: pd.DataFrame, keep: pd.DataFrame,
                pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """W-D-L and sign-test p of each pair and metric in both runs, on the pairs ``keep`` lists."""
    models = set(keep["model"])
    pairs = [(a, b) for a, b in pairs if a in models and b in models]
    o, n = old.merge(keep), new.merge(keep)
    to = wdl_table(o, pairs, list(METRICS), subsets=["All"])
    tn = wdl_table(n, pairs, list(METRICS), subsets=["All"])
    both = to.merge(tn, on=["model_a", "model_b", "metric"], suffixes=("_old", "_new"))
    fmt = lambda r, s: f"{r['wins' + s]}/{r['draws' + s]}/{r['losses' + s]} ({r['p' + s]:.3f})"  # noqa: E731
    both["old"] = both.apply(fmt, axis=1, s="_old")
    both["new"] = both.apply(fmt, axis=1, s="_new")
    both["moved"] = both["old"] != both["new"]
    order = {p: i for i, p in enumerate(pairs)}
    both["_order"] = [order[(a, b)] * len(METRICS) + METRICS.index(m)
                      for a, b, m in zip(both["model_a"], both["model_b"], both["metric"])]
    return both.sort_values("_order")[["model_a", "model_b", "metric", "old", "new", "moved"]].reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="summary.csv of the first run")
    ap.add_argument("new", type=Path, help="summary.csv of the second run")
    ap.add_argument("--experiment", type=Path, default=HERE.parents[1] / "conf/experiment/zaidi_dbl.yaml",
                    help="the experiment's YAML, for its report tables (default: zaidi_dbl)")
    ap.add_argument("--atol", type=float, default=1e-6,
                    help="a difference above this counts (summary.csv stores six digits)")
    args = ap.parse_args(argv)
    for p in (args.old, args.new, args.experiment):
        if not p.is_file():
            print(f"error: no such file: {p}", file=sys.stderr)
            return 2
    old, new = pd.read_csv(args.old), pd.read_csv(args.new)
    m = common_pairs(old, new)
    if m.empty:
        print("error: the two summaries have no complete (dataset, model) pair in common", file=sys.stderr)
        return 2
    print(f"{m['dataset'].nunique()} datasets, {len(m)} (dataset, model) pairs complete in both runs.\n")
    diff = model_differences(m, args.atol)
    print("| model | metric | pairs | differ | max \\|diff\\| | at |\n|---|---|---:|---:|---:|---|")
    for r in diff.itertuples():
        print(f"| {r.model} | {r.metric} | {r.pairs} | {r.differ} | {r.max:.2g} | {r.at} |")
    cells = moved_cells(old, new, m[["dataset", "model"]], table_pairs(args.experiment))
    print(f"\n{int(cells['moved'].sum())} of {len(cells)} W-D-L cells differ (marked *).\n")
    print("| pair | metric | first run | second run |\n|---|---|---|---|")
    for r in cells.itertuples():
        print(f"| {r.model_a} vs {r.model_b} | {r.metric} | {r.old} | {r.new}{' *' if r.moved else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
