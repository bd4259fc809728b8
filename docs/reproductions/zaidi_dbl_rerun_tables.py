"""Tables 2-6 and §6.3's convergence comparison of the deep-broad paper, from a zaidi_dbl store, as CSVs.

One command regenerates every number of ``docs/reproductions/zaidi_dbl.md``'s rerun with the
authors' per-row penalty (``reg=rows``, issue 37)::

    python docs/reproductions/zaidi_dbl_rerun_tables.py /work/results/zaidi_dbl

It reads the store's records (read-only; a store still being written is fine: a (dataset, model)
counts only once it has every fold, ``--min-folds``) and writes, into ``--out``
(``docs/reproductions/zaidi_dbl_rerun/reg_rows/`` by default):

``summary.csv``
    per dataset x model: folds, mean 0-1 loss, RMSE, Kohavi-Wolpert bias and variance, train and
    test time, mean iterations; ``big`` = more than ``--big-threshold`` rows (the paper's 100,000).
``coverage.csv``
    per model: the Little and Big datasets where it has every fold, and which it lacks.
``wdl.csv``
    W-D-L (wins of ``model_a``: lower mean), two-tailed sign test, per pair of every table of
    ``conf/experiment/zaidi_dbl.yaml``'s ``report.tables`` and subset (Little, Big, All), over the
    datasets where both models have every fold; Tables 2-4's rows carry the paper's cell
    (``paper_wins`` ... ``paper_p``, from ``zaidi_dbl_paper.py``).
``tables5_6.csv``
    Tables 5 (0-1 loss) and 6 (RMSE): the paper's value beside ours for the Big datasets we share.
``convergence.csv``
    §6.3 and Figs. 11-14: per pair (DBLⁿ, LRⁿ) and dataset, each model's mean iterations and
    training time over the folds both ran (``bncbench.report.convergence.pair_iterations``).
``convergence_summary.csv``
    per pair and subset: on how many datasets DBLⁿ needs fewer / as many / more iterations (and less
    / more time) than LRⁿ, the sign test of fewer against more, and the geometric means of the
    ratios DBLⁿ / LRⁿ.

and prints a Markdown rendering of them (``tables.md`` in the same directory). Nothing here
reads the committed report directories: the store is the only input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import zaidi_dbl_paper as paper  # noqa: E402  (the paper's Tables 2-6)

from bncbench.report.convergence import pair_iterations, pair_iterations_summary  # noqa: E402
from bncbench.report.stats import sign_test, wdl_table  # noqa: E402
from bncbench.harness.store import load_results  # noqa: E402
from bncbench.report.summary import summarize  # noqa: E402

EXPERIMENT = HERE.parents[1] / "conf/experiment/zaidi_dbl.yaml"
OUT = HERE / "zaidi_dbl_rerun" / "reg_rows"
SUBSETS = ("Little", "Big", "All")
WDL_METRICS = ("bias", "variance", "zero_one", "rmse", "train_time")
CONVERGENCE_PAIRS = [("DBL1", "LR1"), ("DBL2", "LR2"), ("DBL3", "LR3")]


def complete_summary(records: pd.DataFrame, min_folds: int, big_threshold: int) -> pd.DataFrame:
    """The per-(dataset, model) summary, ``complete`` where the pair has ``min_folds`` successful folds."""
    s = summarize(records.drop(columns=["trace"], errors="ignore"))
    it = records[records["status"] == "ok"].groupby(["dataset", "model"])["n_iter"].mean().rename("n_iter")
    s = s.merge(it.reset_index(), on=["dataset", "model"], how="left")
    s["big"] = s["n_instances"] > big_threshold
    s["complete"] = (s["n_ok"] >= min_folds) & (s["n_failed"].fillna(0) == 0)
    cols = ["dataset", "model", "n_ok", "n_failed", "complete", "n_instances", "big", "zero_one", "rmse", "bias",
            "variance", "train_time", "test_time", "n_iter", "n_parameters"]
    return s[cols].sort_values(["big", "dataset", "model"]).reset_index(drop=True)


def coverage(s: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Per model: complete Little and Big datasets, and the datasets of the store it lacks."""
    all_little = sorted(set(s.loc[~s["big"], "dataset"]))
    all_big = sorted(set(s.loc[s["big"], "dataset"]))
    rows = []
    for m in models:
        done = s[(s["model"] == m) & s["complete"]]
        little, big = sorted(done.loc[~done["big"], "dataset"]), sorted(done.loc[done["big"], "dataset"])
        rows.append({"model": m, "little_complete": len(little), "big_complete": len(big),
                     "little_lacking": " ".join(d for d in all_little if d not in little),
                     "big_lacking": " ".join(d for d in all_big if d not in big)})
    return pd.DataFrame(rows)


def wdl_rows(s: pd.DataFrame, tables: list[tuple[str, list[tuple[str, str]]]]) -> pd.DataFrame:
    """W-D-L of every table's pairs on the complete pairs, with the paper's cell where it has one."""
    c = s[s["complete"]]
    known = set(c["model"])
    frames = []
    for name, pairs in tables:
        pairs = [(a, b) for a, b in pairs if a in known and b in known]
        if not pairs:
            continue
        t = wdl_table(c, pairs, list(WDL_METRICS), subsets=list(SUBSETS))
        frames.append(t.assign(table=name))
    out = pd.concat(frames, ignore_index=True)
    cells = []
    for r in out.itertuples():
        cell = paper.PAPER_WDL.get((r.model_a, r.model_b), {}).get((r.subset, r.metric))
        cells.append(cell if cell is not None else (np.nan, np.nan, np.nan, ""))
    out[["paper_wins", "paper_draws", "paper_losses", "paper_p"]] = pd.DataFrame(cells, index=out.index)
    out = out[out["n"] > 0]
    return out[["table", "model_a", "model_b", "subset", "metric", "wins", "draws", "losses", "n", "p", "significant",
                "paper_wins", "paper_draws", "paper_losses", "paper_p"]].reset_index(drop=True)


def tables5_6(s: pd.DataFrame) -> pd.DataFrame:
    """The paper's Tables 5 and 6 for the Big datasets we share, beside our means (complete or not)."""
    rows = []
    for dataset, values in paper.PAPER_BIG.items():
        for metric in ("zero_one", "rmse"):
            for i, model in enumerate(paper.MODELS_56):
                r = s[(s["dataset"] == dataset) & (s["model"] == model)]
                rows.append({"dataset": dataset, "metric": metric, "model": model, "paper": values[metric][i],
                             "ours": float(r[metric].iloc[0]) if len(r) else np.nan,
                             "folds": int(r["n_ok"].iloc[0]) if len(r) else 0,
                             "big_here": bool(r["big"].iloc[0]) if len(r) else np.nan})
    return pd.DataFrame(rows)


def convergence(records: pd.DataFrame, s: pd.DataFrame, subsets: dict[str, list[str]]) -> tuple[pd.DataFrame,
                                                                                               pd.DataFrame]:
    """Figs. 11-14's per-dataset iterations and times of DBLⁿ and LRⁿ, and their per-subset summary."""
    complete = set(map(tuple, s.loc[s["complete"], ["dataset", "model"]].to_numpy()))
    per = pair_iterations(records, CONVERGENCE_PAIRS)
    keep = [((d, w) in complete) and ((d, o) in complete)
            for d, w, o in zip(per["dataset"], per["w_model"], per["other_model"])]
    per = per[keep].reset_index(drop=True)
    summ = pair_iterations_summary(per, subsets)
    summ["iter_p"] = [sign_test(int(a), int(b)) for a, b in zip(summ["iter_fewer"], summ["iter_more"])]
    summ["time_p"] = [sign_test(int(a), int(b)) for a, b in zip(summ["time_less"], summ["time_more"])]
    return per, summ


def _p(p) -> str:
    if isinstance(p, str):
        return p
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def markdown(cov: pd.DataFrame, wdl: pd.DataFrame, t56: pd.DataFrame, conv: pd.DataFrame) -> str:
    """The CSVs as Markdown tables (what the reproduction doc quotes)."""
    out = ["## Coverage (datasets with every fold)", "",
           "| model | Little | Big | Little lacking | Big lacking |", "|---|---:|---:|---|---|"]
    for r in cov.itertuples():
        out.append(f"| {r.model} | {r.little_complete} | {r.big_complete} | {r.little_lacking or '–'} | "
                   f"{r.big_lacking or '–'} |")
    out += ["", "## Tables 2-4: the paper's W-D-L beside ours (**bold**: p <= 0.05)", "",
            "| table | pair | subset | metric | paper | ours |", "|---|---|---|---|---|---|"]
    for r in wdl[wdl["paper_wins"].notna()].itertuples():
        sig = r.paper_p == "<0.001" or float(r.paper_p) <= 0.05
        pap = f"{int(r.paper_wins)}/{int(r.paper_draws)}/{int(r.paper_losses)} ({r.paper_p})"
        ours = f"{r.wins}/{r.draws}/{r.losses} ({_p(r.p)})"
        out.append(f"| {r.table} | {r.model_a} vs {r.model_b} | {r.subset} | {r.metric} | "
                   f"{f'**{pap}**' if sig else pap} | {f'**{ours}**' if r.significant else ours} |")
    for (table, subset), g in wdl.groupby(["table", "subset"], sort=False):
        if subset == "All" and (wdl["subset"] == "Big").sum() == 0:
            continue                                      # All = Little while no Big dataset is complete
        out += ["", f"## {table}, {subset}: W-D-L per metric (**bold**: p <= 0.05)", "",
                "| pair | " + " | ".join(WDL_METRICS) + " |", "|---|" + "---|" * len(WDL_METRICS)]
        for (a, b), h in g.groupby(["model_a", "model_b"], sort=False):
            cells = []
            for m in WDL_METRICS:
                r = h[h["metric"] == m]
                if r.empty:
                    cells.append("–")
                    continue
                r = r.iloc[0]
                c = f"{r.wins}/{r.draws}/{r.losses} ({_p(r.p)})"
                cells.append(f"**{c}**" if r.significant else c)
            out.append(f"| {a} vs {b} | " + " | ".join(cells) + " |")
    out += ["", "## W-D-L (first model's wins: lower mean; sign test p; paper's cell where it has one)", "",
            "| table | pair | subset | metric | ours | paper |", "|---|---|---|---|---|---|"]
    for r in wdl.itertuples():
        ours = f"{r.wins}/{r.draws}/{r.losses} ({_p(r.p)})"
        ours = f"**{ours}**" if r.significant else ours
        pap = "–" if pd.isna(r.paper_wins) else \
            f"{int(r.paper_wins)}/{int(r.paper_draws)}/{int(r.paper_losses)} ({r.paper_p})"
        out.append(f"| {r.table} | {r.model_a} vs {r.model_b} | {r.subset} | {r.metric} | {ours} | {pap} |")
    out += ["", "## Tables 5 and 6: paper / ours (folds of ours)", "",
            "| dataset | metric | " + " | ".join(paper.MODELS_56) + " |", "|---|---|" + "---|" * len(paper.MODELS_56)]
    for (d, m), g in t56.groupby(["dataset", "metric"], sort=False):
        cells = [f"{r.paper:.4f} / " + ("–" if r.folds == 0 else f"{r.ours:.4f} ({r.folds})") for r in g.itertuples()]
        out.append(f"| {d} | {m} | " + " | ".join(cells) + " |")
    out += ["", "## §6.3: DBLⁿ vs LRⁿ, iterations and training time (datasets where both have every fold)", "",
            "| pair | subset | datasets | DBL fewer / equal / more iterations (p) | iterations DBL/LR (geo. mean) "
            "| DBL less / more time (p) | time DBL/LR (geo. mean) |", "|---|---|---:|---|---:|---|---:|"]
    for r in conv.itertuples():
        out.append(f"| {r.w_model} vs {r.other_model} | {r.subset} | {r.n_datasets} | {r.iter_fewer} / {r.iter_equal} "
                   f"/ {r.iter_more} ({_p(r.iter_p)}) | {r.iter_ratio_geomean:.3f} | {r.time_less} / {r.time_more} "
                   f"({_p(r.time_p)}) | {r.time_ratio_geomean:.3f} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path, help="the zaidi_dbl results directory (records/ under it); read only")
    ap.add_argument("--out", type=Path, default=OUT,
                    help=f"where the CSVs go (default {OUT.relative_to(HERE.parents[1])})")
    ap.add_argument("--experiment", type=Path, default=EXPERIMENT, help="the experiment YAML (its report tables)")
    ap.add_argument("--min-folds", type=int, default=10, help="folds a (dataset, model) needs to count (default 10)")
    ap.add_argument("--big-threshold", type=int, default=100_000, help="Big: more rows than this (the paper's)")
    args = ap.parse_args(argv)
    if not (args.store / "records").is_dir():
        print(f"error: no records/ under {args.store}", file=sys.stderr)
        return 2
    cfg = OmegaConf.to_container(OmegaConf.load(args.experiment), resolve=True)
    models = [m["label"] for m in cfg["models"]]
    tables = [(t["name"], [tuple(p.split(":")) for p in t["pairs"]]) for t in cfg["report"]["tables"]]
    records = load_results(args.store)
    records = records[records["model"].isin(models)]
    s = complete_summary(records, args.min_folds, args.big_threshold)
    subsets = {"Little": sorted(set(s.loc[~s["big"], "dataset"])), "Big": sorted(set(s.loc[s["big"], "dataset"])),
               "All": sorted(set(s["dataset"]))}
    cov = coverage(s, models)
    wdl = wdl_rows(s, tables)
    t56 = tables5_6(s)
    per, conv = convergence(records, s, subsets)
    args.out.mkdir(parents=True, exist_ok=True)
    s.to_csv(args.out / "summary.csv", index=False)
    cov.to_csv(args.out / "coverage.csv", index=False)
    wdl.to_csv(args.out / "wdl.csv", index=False)
    t56.to_csv(args.out / "tables5_6.csv", index=False)
    per.to_csv(args.out / "convergence.csv", index=False)
    conv.to_csv(args.out / "convergence_summary.csv", index=False)
    md = markdown(cov, wdl, t56, conv)
    (args.out / "tables.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
