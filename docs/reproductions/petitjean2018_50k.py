"""Does the paper's 50,000 iterations change our petitjean2018 conclusions? (docs/reproductions/petitjean2018.md)

Compares the HDP models of the 5,000-iteration ``petitjean2018`` run with the same models at
50,000 iterations (``petitjean2018_50k``, run on the cheapest datasets only) on the datasets the
second run covers; the m-estimates and the random forest come from the first run (they do not
depend on the iterations). Prints Markdown W-D-L tables (two-tailed sign test, p < 0.05 in bold).

    python -m bncbench run +experiment=petitjean2018 name=petitjean2018_50k \
        'dataset.names=[contact-lenses,liver-disorders,iris,haberman,tae,echocardiogram,new-thyroid,
                        postoperative,balance-scale,glass,pima,labor,wine,heart-h,heart-c,led,yeast,
                        lymph,breast-w,lung-cancer,tic-tac-toe,primary-tumor,cmc,abalone]' \
        'models=[{structure:[nb,tan,kdb1,kdb2,kdb3,kdb4,kdb5,skdb5],param:hdp,hdp_iterations:50000}]'
    python docs/reproductions/petitjean2018_50k.py [results/petitjean2018 results/petitjean2018_50k]
"""

from __future__ import annotations

import sys

import pandas as pd

from bncbench.report.stats import wdl_table
from bncbench.report.summary import summarize

STRUCTURES = ["NB", "TAN", "KDB-1", "KDB-2", "KDB-3", "KDB-4", "KDB-5", "SkDB-5"]
METRICS = ["zero_one", "rmse"]


def combined(first: str, second: str) -> pd.DataFrame:
    a, b = summarize(first), summarize(second)
    b = b.assign(model=b["model"] + " 50k")
    a = a[a["dataset"].isin(set(b["dataset"]))]
    return pd.concat([a, b], ignore_index=True)


def markdown(table: pd.DataFrame, title: str) -> str:
    rows = [f"| {title} | 0-1 loss W-D-L (p) | RMSE W-D-L (p) |", "|---|---|---|"]
    for (a, b), grp in table.groupby(["model_a", "model_b"], sort=False):
        cells = []
        for metric in METRICS:
            r = grp[grp["metric"] == metric].iloc[0]
            cell = f"{r.wins}-{r.draws}-{r.losses} ({r.p:.3f})"
            cells.append(f"**{cell}**" if r.significant else cell)
        rows.append(f"| {a} vs {b} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    first, second = (argv + ["results/petitjean2018", "results/petitjean2018_50k"][len(argv):])[:2]
    s = combined(first, second)
    n = s["dataset"].nunique()

    def table(pairs):
        return wdl_table(s, pairs, METRICS, subsets=("All",))

    print(f"{n} datasets\n")
    print(markdown(table([(f"{m} HDP", f"{m} m-est") for m in STRUCTURES]
                         + [(f"{m} HDP 50k", f"{m} m-est") for m in STRUCTURES]), "Table 2 (HDP vs m-estimate)"))
    print()
    print(markdown(table([(f"{m} HDP 50k", f"{m} HDP") for m in STRUCTURES]), "50,000 vs 5,000 iterations"))
    print()
    kx = ["NB", "KDB-1", "KDB-2", "KDB-3", "KDB-4"]
    print(markdown(table([("KDB-5 HDP", f"{m} HDP") for m in kx] + [("KDB-5 HDP 50k", f"{m} HDP 50k") for m in kx]
                         + [("KDB-5 HDP", "SkDB-5 HDP"), ("KDB-5 HDP 50k", "SkDB-5 HDP 50k")]
                         + [("TAN HDP", "RF"), ("TAN HDP 50k", "RF"), ("SkDB-5 HDP", "RF"), ("SkDB-5 HDP 50k", "RF")]),
                   "Fig. 6(b), §6.3 and Table 3"))


if __name__ == "__main__":
    main(sys.argv[1:])
