"""CG-Nash with R's parabola step (the experiment's) against Nash's (feelders_nash_parabola), on the same
thresholds: writes parabola.csv beside this script.

    python -m bncbench run +experiment=feelders_nash_parabola
    python docs/reproductions/feelders/parabola.py results/feelders results/feelders_nash_parabola
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.report.thresholds import costs_to_threshold
from bncbench.harness.store import load_results

here = Path(__file__).resolve().parent
main, alt = load_results(sys.argv[1], with_trace=True), load_results(sys.argv[2], with_trace=True)
c = costs_to_threshold(main)
thr = c.drop_duplicates(["dataset", "round", "fold"]).set_index(["dataset", "round", "fold"])["threshold"]
rowmin = c.groupby(["dataset", "round", "fold"])["iterations"].min().clip(lower=1)
rows = []
for r in alt[alt["status"] == "ok"].itertuples():
    key = (r.dataset, r.round, r.fold)
    cll = np.array([-t["nll"] for t in r.trace])
    hit = np.flatnonzero(cll >= thr[key])
    space = r.model.split("^")[1].split(" ")[0]
    mine = c[(c["dataset"] == r.dataset) & (c["round"] == r.round) & (c["fold"] == r.fold)
             & c["model"].str.contains(f"^{space} ", regex=False) & c["model"].str.contains("[CG-Nash]", regex=False)]
    rows.append({"dataset": r.dataset, "fold": r.fold, "space": space,
                 "iterations_r": float(mine["iterations"].iloc[0]),
                 "iterations_nash": float(r.trace[int(hit[0])]["iter"]) if hit.size else np.nan,
                 "row_min": float(rowmin[key])})
df = pd.DataFrame(rows)
agg = df.groupby(["dataset", "space"])[["iterations_r", "iterations_nash", "row_min"]].median()
agg["scaled_r"] = agg["iterations_r"] / agg["row_min"]
agg["scaled_nash"] = agg["iterations_nash"] / agg["row_min"]
agg.to_csv(here / "parabola.csv", float_format="%.4g")
print(agg.groupby("space")[["scaled_r", "scaled_nash"]].mean().round(2))
print("ratio r/nash of iterations, median over rows:", round(float((agg["iterations_r"] / agg["iterations_nash"]).median()), 2))
