"""Petitjean et al. (2018) with the m-estimates' other back-off rule (any class): W-D-L tables.

The committed report (``docs/reproductions/petitjean2018/``) compared HDP with m-estimates that
back off per class ("X m-est"). ``conf/experiment/petitjean2018.yaml`` now also has the
m-estimates with the back-off of the authors' C++ learner ("X m-est (any class)",
``estimator=mestimate_any``). Only the m-estimates are rerun, with both rules (the per-class
ones check that the code still gives the committed means); the HDP and random-forest means are
the committed ones:

    python -m bncbench run +experiment=petitjean2018 name=petitjean2018_anyclass n_jobs=1 \\
        'dataset.names=[<the 57 datasets of petitjean2018/summary.csv>]' \\
        "only=['NB m-est (any class)',...,'SkDB-5 m-est (any class)','NB m-est',...,'SkDB-5 m-est']"
    python docs/reproductions/petitjean2018_backoff.py results/petitjean2018_anyclass

The committed ``summary.csv`` holds means to 6 significant digits, and a W-D-L table counts a
draw only for means equal up to round-off (``bncbench.report.stats.is_draw``): the any-class
means are rounded the same way before they are compared, so that equal means (NB's, which has
no parents to back off along, or equal 0-1 losses) stay draws. The script stops if a rerun
per-class mean differs from the committed one by more than ``--atol``. It writes, beside itself,
``petitjean2018_backoff/summary.csv`` (the committed rows and the any-class ones, ``source``
saying which) and ``petitjean2018_backoff/tables.csv`` (every W-D-L below, All and Big), and
prints them as Markdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from bncbench.report.stats import wdl_table
from bncbench.report.summary import summarize

HERE = Path(__file__).parent
COMMITTED = HERE / "petitjean2018" / "summary.csv"
OUT = HERE / "petitjean2018_backoff"
STRUCTURES = ["NB", "TAN", "KDB-1", "KDB-2", "KDB-3", "KDB-4", "KDB-5", "SkDB-5"]
METRICS = ["zero_one", "rmse"]
ANY = " m-est (any class)"
KX = ["NB", "KDB-1", "KDB-2", "KDB-3", "KDB-4"]
GROUPS = {
    "Table 2, any class": [(f"{s} HDP", f"{s}{ANY}") for s in STRUCTURES],
    "Table 2, per class (committed)": [(f"{s} HDP", f"{s} m-est") for s in STRUCTURES],
    "any class vs per class": [(f"{s}{ANY}", f"{s} m-est") for s in STRUCTURES],
    "Table 3, any class": [(f"TAN{ANY}", "RF"), (f"SkDB-5{ANY}", "RF")],
    "Fig. 6(b), any class": [(f"KDB-5{ANY}", f"{s}{ANY}") for s in KX],
}


def markdown(table: pd.DataFrame, title: str) -> str:
    subsets = list(dict.fromkeys(table["subset"]))
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


def margin(summary: pd.DataFrame, structure: str, tag: str) -> dict:
    """How much HDP beats one m-estimate over all datasets: the mean and the median over datasets of
    HDP's mean minus the m-estimate's, for RMSE and 0-1 loss (negative: HDP lower)."""
    a = summary[summary["model"] == f"{structure} HDP"].set_index("dataset")
    b = summary[summary["model"] == f"{structure}{tag}"].set_index("dataset")
    a, b = a.align(b, join="inner", axis=0)
    out = {"hdp": f"{structure} HDP", "m_est": f"{structure}{tag}", "n": len(a)}
    for metric in METRICS:
        d = (a[metric] - b[metric]).astype(float)
        out[f"{metric}_diff_mean"], out[f"{metric}_diff_median"] = float(d.mean()), float(d.median())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="the store of the m-estimate rerun (both back-off rules)")
    ap.add_argument("--atol", type=float, default=2e-6)
    args = ap.parse_args(argv)

    old = pd.read_csv(COMMITTED)
    new = summarize(args.results)
    per = new[new["model"].isin([f"{s} m-est" for s in STRUCTURES])]
    chk = per.merge(old, on=["dataset", "model"], suffixes=("", "_old"))
    diff = max(float((chk[c] - chk[c + "_old"]).abs().max()) for c in METRICS) if len(chk) else float("nan")
    print(f"check: {len(chk)} (dataset, per-class m-estimate) means rerun, max |difference| from the committed "
          f"ones {diff:.1e}")
    if not len(chk) or diff > args.atol:
        print(f"the per-class rerun is missing or differs from the committed means by more than {args.atol:g}",
              file=sys.stderr)
        return 1
    anyc = new[new["model"].str.endswith(ANY)].copy()
    datasets = set(old["dataset"])
    full = anyc.groupby("model")["dataset"].nunique()
    if set(anyc["dataset"]) != datasets or (full != len(datasets)).any() or (anyc["n_ok"] != 10).any():
        print(f"the any-class models do not have all 10 folds of the {len(datasets)} datasets yet", file=sys.stderr)
        return 1
    for c in METRICS:
        anyc[c] = anyc[c].map(lambda v: float(f"{v:.6g}"))
    keep = [c for c in old.columns if c in anyc.columns]
    s = pd.concat([old.assign(source=str(COMMITTED.relative_to(HERE.parent.parent))),
                   anyc[keep].assign(source=args.results)], ignore_index=True)
    OUT.mkdir(exist_ok=True)
    s.to_csv(OUT / "summary.csv", index=False)
    tables = []
    for title, pairs in GROUPS.items():
        t = wdl_table(s, pairs, METRICS, subsets=("All", "Big")).assign(group=title)
        tables.append(t)
        print(f"\n{markdown(t, title)}")
    pd.concat(tables, ignore_index=True).to_csv(OUT / "tables.csv", index=False)
    margins = pd.DataFrame([margin(s, s_, tag) for s_ in STRUCTURES for tag in (" m-est", ANY)])
    margins.to_csv(OUT / "margins.csv", index=False)
    print("\n| HDP minus | datasets | 0-1 loss: mean | median | RMSE: mean | median |\n|---|--:|--:|--:|--:|--:|")
    for r in margins.itertuples():
        print(f"| {r.m_est} | {r.n} | {r.zero_one_diff_mean:+.4f} | {r.zero_one_diff_median:+.4f} | "
              f"{r.rmse_diff_mean:+.4f} | {r.rmse_diff_median:+.4f} |")
    print(f"\nwrote {OUT / 'summary.csv'}, {OUT / 'tables.csv'} and {OUT / 'margins.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
