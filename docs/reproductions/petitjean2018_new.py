"""Petitjean et al. (2018) with the datasets the registry gained later (Nursery, PenDigits, House Votes 84).

The committed report (``docs/reproductions/petitjean2018/``) is of the 57 datasets we had. Its
per-dataset means are in its ``summary.csv``; this script adds the three new datasets' runs to
them and prints Table 2, Table 3 and Fig. 6(b) on all 60 datasets and on the 8 Big ones
(> 10,000 rows: adult, connect-4, letter, magic, shuttle, sign, nursery, pendigits), as Markdown.

Adding means from two runs is sound only if the code gives the same results as when the first
run was made. The new run therefore also reruns ``--check`` datasets that the first run had
(cheap ones); the script compares their means with the committed ones and stops if an
m-estimate or random-forest mean differs by more than ``--atol`` (the committed summary rounds
to 6 digits and the records store probabilities as float32). The HDP models cannot pass such a
check: the sampler was made faster after the committed run (ratios of Stirling numbers,
cached reciprocals), which changes the rounding and so the Gibbs chain; its results are the
same in distribution, not bit for bit. The script prints how far the HDP means moved on the
check datasets, as the scale of that sampling noise.

    python -m bncbench run +experiment=petitjean2018 \
        'dataset.names=[nursery,pendigits,vote,labor,iris,contact-lenses]'
    python docs/reproductions/petitjean2018_new.py results/petitjean2018
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from bncbench.report.stats import wdl_table
from bncbench.report.summary import summarize

HERE = Path(__file__).parent
STRUCTURES = ["NB", "TAN", "KDB-1", "KDB-2", "KDB-3", "KDB-4", "KDB-5", "SkDB-5"]
METRICS = ["zero_one", "rmse"]
NEW = ["nursery", "pendigits", "vote"]


def markdown(table: pd.DataFrame, title: str, subsets: list[str]) -> str:
    head = " | ".join(f"{s}: {m}" for s in subsets for m in ("0-1 loss", "RMSE"))
    rows = [f"| {title} | {head} |", "|---|" + "---|" * (2 * len(subsets))]
    for (a, b), grp in table.groupby(["model_a", "model_b"], sort=False):
        cells = []
        for sub in subsets:
            for metric in METRICS:
                r = grp[(grp["metric"] == metric) & (grp["subset"] == sub)].iloc[0]
                cell = f"{r.wins}–{r.draws}–{r.losses} ({'<0.001' if r.p < 0.001 else f'{r.p:.3f}'})"
                cells.append(f"**{cell}**" if r.significant else cell)
        rows.append(f"| {a} vs {b} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="results/petitjean2018 of the run with the new datasets")
    ap.add_argument("--committed", default=str(HERE / "petitjean2018" / "summary.csv"))
    ap.add_argument("--check", nargs="*", default=["labor", "iris", "contact-lenses"])
    ap.add_argument("--atol", type=float, default=2e-6)
    args = ap.parse_args(argv)

    old = pd.read_csv(args.committed)
    new = summarize(args.results)
    cols = ["zero_one", "rmse"]
    chk = new[new["dataset"].isin(args.check)].merge(old, on=["dataset", "model"], suffixes=("", "_old"))
    if chk.empty:
        print(f"none of the check datasets {args.check} is in {args.results}", file=sys.stderr)
        return 1
    hdp = chk["model"].str.endswith("HDP")
    diff = max(float((chk.loc[~hdp, c] - chk.loc[~hdp, c + "_old"]).abs().max()) for c in cols)
    drift = {c: (chk.loc[hdp, c] - chk.loc[hdp, c + "_old"]).abs() for c in cols}
    print(f"check: {chk['dataset'].nunique()} datasets x {chk['model'].nunique()} models rerun; m-estimates and RF: "
          f"max |difference| from the committed means {diff:.1e}; HDP (sampling noise): 0-1 loss median "
          f"{drift['zero_one'].median():.1e}, max {drift['zero_one'].max():.1e}, RMSE median "
          f"{drift['rmse'].median():.1e}, max {drift['rmse'].max():.1e}\n")
    if diff > args.atol:
        print(f"the rerun's m-estimates or RF differ from the committed results by {diff:.2e} > {args.atol:g}; "
              "not combining", file=sys.stderr)
        return 1
    missing = [d for d in NEW if d not in set(new["dataset"])]
    if missing:
        print(f"no records of {', '.join(missing)} in {args.results}", file=sys.stderr)
        return 1
    s = pd.concat([old[~old["dataset"].isin(NEW)], new[new["dataset"].isin(NEW)]], ignore_index=True)
    big = sorted(s.loc[s["big"].astype(bool), "dataset"].unique())
    print(f"{s['dataset'].nunique()} datasets, {len(big)} Big: {', '.join(big)}\n")

    def table(pairs):
        return wdl_table(s, pairs, METRICS, subsets=("All", "Big"))

    print(markdown(table([(f"{m} HDP", f"{m} m-est") for m in STRUCTURES]), "Table 2", ["All", "Big"]))
    print()
    print(markdown(table([("TAN m-est", "RF"), ("SkDB-5 m-est", "RF"), ("TAN HDP", "RF"), ("SkDB-5 HDP", "RF")]),
                   "Table 3", ["All", "Big"]))
    print()
    kx = ["NB", "KDB-1", "KDB-2", "KDB-3", "KDB-4"]
    print(markdown(table([("KDB-5 m-est", f"{m} m-est") for m in kx] + [("KDB-5 HDP", f"{m} HDP") for m in kx]
                         + [("KDB-5 HDP", "SkDB-5 HDP")]), "Fig. 6(b) and §6.3", ["All", "Big"]))
    for metric in METRICS:
        per = s[s["dataset"].isin(NEW)].pivot_table(index="model", columns="dataset", values=metric)
        print(f"\n{metric} on the new datasets\n")
        print("| model | " + " | ".join(per.columns) + " |\n|---|" + "---:|" * len(per.columns))
        for model, row in per.iterrows():
            print(f"| {model} | " + " | ".join(f"{v:.4f}" for v in row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
