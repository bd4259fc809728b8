"""What the DBL3 and LR3 folds still missing from the Little rerun cost: `zaidi_dbl.md`, "What the rest costs".

    python docs/reproductions/zaidi_dbl_left_cost.py > docs/reproductions/zaidi_dbl_rerun/big_cost/little_left.csv
    python docs/reproductions/zaidi_dbl_left_cost.py --table      # the page's table ("What the rest costs") of it
    python docs/reproductions/zaidi_dbl_left_cost.py --big > docs/reproductions/zaidi_dbl_rerun/big_cost/big_left.csv
    python docs/reproductions/zaidi_dbl_left_cost.py --big --table  # its table ("The Big three" of zaidi_dbl.md)

Reads only committed files:

* ``big_cost/little_left.json`` and ``big_cost/musk1_capped.json``: ``benchmarks/bench_big_fold.py --maxiter 10``
  on round 0 fold 0 (set-up CPU seconds and CPU seconds per evaluation of objective and gradient, single-threaded);
* ``store2/``'s whole musk1 folds (CPU seconds, iterations), which calibrate a capped fit's cost per evaluation to a
  whole fit's cost per iteration: ``k = sum(train_cpu - set-up) / sum(n_iter x CPU s per evaluation)`` per model
  (it holds the evaluations per iteration and the optimizer's own work, which grows with a fit's length);
* ``reg_rows/summary.csv``: each dataset's mean iterations of DBL2 and LR2, and over the datasets with both, the
  quartiles of DBL3's iterations over DBL2's (LR3's over LR2's), both with all 10 folds.

A fold of DBL3 on a dataset left is then predicted to take ``set-up + k x CPU s per evaluation x DBL2's iterations
x r`` CPU seconds, for r each quartile of the ratio: a guess at the iterations, which no capped fit gives. Where
``store2/`` already holds whole folds of a (dataset, model), its missing folds are counted at the mean CPU seconds of
those instead (``folds_done``, ``done_cpu_h``: measured, so the three quartiles are equal;
``guess_fold_cpu_h_q50`` keeps the median guess for a fold, to compare); musk1, complete, only calibrates.

``--big``: the same for the optimized models' folds missing on the Big three (:func:`big_left`), from
``big_cost/big_fold_nov29.json`` (the capped fits of November 29) and ``store_big_nov29/folds.csv`` (the whole folds
done). No ratio of iterations is known there, so a fold left is counted at two lengths, :data:`BIG_ITERS`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from bncbench.harness.store import load_stores

HERE = Path(__file__).resolve().parent / "zaidi_dbl_rerun"
sys.path.insert(1, str(HERE.parents[2] / "benchmarks"))

from bench_big_fold import costs  # noqa: E402  (a capped fit's set-up and per-evaluation CPU seconds)
N2 = {"DBL3": "DBL2", "LR3": "LR2"}
QUARTILES = (0.25, 0.5, 0.75)
FOLDS = 10
BIG_ITERS = (3000, 10000)
"""The lengths a Big fold left is counted at: a middle guess, and the ``stop=ebnc`` cap (10,000 iterations), which
census-income's n = 2 folds reach or come near (LR²: 10,000; DBL²: 8,718 in its first) as connect-4's n = 3 did."""
CALIBRATE = {"DBL2": "DBL2", "LR2": "LR2", "DBL2-one": "DBL2", "DBL3": "DBL2", "LR3": "LR2"}
"""Whose whole Big folds (census-income's) give a model's ``k`` and evaluations per iteration: DBL²'s for the
DBLⁿ, LR²'s for the LRⁿ (no whole n = 3 Big fold has run)."""


def _capped(*names: str) -> pd.DataFrame:
    """The capped fits of ``big_cost/<name>`` (``bench_big_fold.py --json`` files), indexed by (dataset, model), with
    their set-up and per-evaluation CPU seconds (``setup_cpu``, ``eval_cpu``) as ``bench_big_fold.costs`` splits
    them."""
    capped = pd.DataFrame([r for name in names for r in json.loads((HERE / "big_cost" / name).read_text())])
    capped[["setup_cpu", "eval_cpu"]] = [costs(r)[2:] for r in capped.to_dict("records")]
    return capped.set_index(["dataset", "model"])


def _fold_row(dataset: str, model: str, c: pd.Series, k: float, whole: pd.Series, **extra) -> dict:
    """The columns a cost row shares: the capped fit ``c``'s size and costs, ``k``, the ``extra`` columns of the
    table, and the whole folds done (their CPU seconds ``whole``)."""
    return {"dataset": dataset, "model": model, "n_train": c["n_train"], "n_parameters": c["n_parameters"],
            "peak_mib": round(c["peak_mib"]), "setup_cpu": round(c["setup_cpu"], 1),
            "eval_cpu": round(c["eval_cpu"], 3), "k": round(k, 3), **extra,
            "folds_done": len(whole), "done_cpu_h": whole.mean() / 3600 if len(whole) else None,
            "folds_left": FOLDS - len(whole)}


def _with_total(out: pd.DataFrame, digits: int) -> pd.DataFrame:
    """``out`` with a ``total`` row (the sums of the CPU hours and folds left), rounded, its counts as integers."""
    total = {"dataset": "total", **{c: out[c].sum() for c in out if c.startswith("cpu_h") or c == "folds_left"}}
    out = pd.concat([out, pd.DataFrame([total])]).round(digits)
    ints = ["n_train", "n_parameters", "peak_mib", "folds_done", "folds_left"]
    return out.astype(dict.fromkeys(ints, "Int64"))


def left() -> pd.DataFrame:
    """``little_left.csv``'s rows: per dataset left and model, the guess or the measured cost, and the total."""
    summary = pd.read_csv(HERE / "reg_rows" / "summary.csv").query("complete")
    iters = summary.pivot(index="dataset", columns="model", values="n_iter")
    capped = _capped("little_left.json", "musk1_capped.json")
    store = load_stores([HERE / "store2"]).query("status == 'ok'")
    rows = []
    for model, n2 in N2.items():
        done, m1 = store.query("dataset == 'musk1' and model == @model"), capped.loc[("musk1", model)]
        k = (done["train_cpu"] - m1["setup_cpu"]).sum() / (done["n_iter"] * m1["eval_cpu"]).sum()
        ratio = (iters[model] / iters[n2]).dropna()
        left = capped.loc[capped.index.get_level_values("dataset") != "musk1"].xs(model, level="model")
        for dataset, c in left.iterrows():
            whole = store.query("dataset == @dataset and model == @model")["train_cpu"]
            row = _fold_row(dataset, model, c, k, whole, n2_iter=iters.loc[dataset, n2])
            guess = {q: c["setup_cpu"] + k * c["eval_cpu"] * iters.loc[dataset, n2] * ratio.quantile(q)
                     for q in QUARTILES}
            for q in QUARTILES:
                fold = whole.mean() if len(whole) else guess[q]
                row[f"ratio_q{round(100 * q)}"] = round(ratio.quantile(q), 3)
                row[f"cpu_h_q{round(100 * q)}"] = round(row["folds_left"] * fold / 3600, 2)
            row["guess_fold_cpu_h_q50"] = guess[0.5] / 3600
            rows.append(row)
    return _with_total(pd.DataFrame(rows).sort_values(["dataset", "model"]), 2)


def table(out: pd.DataFrame) -> str:
    """:func:`left`'s rows as ``zaidi_dbl.md``'s Markdown table, datasets from the cheapest left (median) on."""
    rows = out[out["dataset"] != "total"]
    order = rows.groupby("dataset")["cpu_h_q50"].sum().sort_values(kind="stable").index
    lines = ["| dataset | model | training rows | weights | peak MiB | CPU s / evaluation | DBL² / LR² iterations "
             "| folds done (CPU h each) | the folds left, CPU h (quartiles of the guess) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for dataset in order:
        for _, r in rows[rows["dataset"] == dataset].iterrows():
            done = f"{r.folds_done} ({r.done_cpu_h:.2f})" if r.folds_done else "0"
            cpu = (f"{r.cpu_h_q50:.2f} (measured)" if r.folds_done
                   else " / ".join(f"{r[f'cpu_h_q{round(100 * q)}']:.2f}" for q in QUARTILES))
            lines.append(f"| {dataset} | {r.model} | {r.n_train:,} | {r.n_parameters:,} | {r.peak_mib:,} | "
                         f"{r.eval_cpu:.2f} | {round(r.n2_iter):,} | {done} | {cpu} |")
    t = out[out["dataset"] == "total"].iloc[0]
    quartiles = " / ".join(f"{t[f'cpu_h_q{round(100 * q)}']:.1f}" for q in QUARTILES)
    lines.append(f"| **all** | | | | | | | | **{quartiles}** |")
    return "\n".join(lines) + "\n"


def big_left() -> pd.DataFrame:
    """``big_left.csv``'s rows: per Big dataset and optimized model, the folds done and the CPU hours of those left.

    A fold left costs ``set-up + k x CPU s per evaluation x evaluations`` at each of :data:`BIG_ITERS` iterations,
    evaluations being iterations times the calibrating model's evaluations per iteration in its whole folds, and
    ``k = sum(train CPU - set-up) / sum(evaluations x CPU s per evaluation)`` over those folds (census-income's,
    :data:`CALIBRATE`). Where whole folds of a (dataset, model) are done, the folds left cost their mean."""
    capped = _capped("big_fold_nov29.json")
    folds = pd.read_csv(HERE / "store_big_nov29" / "folds.csv").query("status == 'ok'")
    calib = {}
    for model in set(CALIBRATE.values()):
        whole = folds.query("dataset == 'census-income' and model == @model")
        c = capped.loc[("census-income", model)]
        calib[model] = ((whole["train_cpu"] - c["setup_cpu"]).sum() / (whole["n_fev"] * c["eval_cpu"]).sum(),
                        whole["n_fev"].sum() / whole["n_iter"].sum())
    rows = []
    for (dataset, model), c in capped.iterrows():
        if model not in CALIBRATE:
            continue
        k, per_iter = calib[CALIBRATE[model]]
        whole = folds.query("dataset == @dataset and model == @model")["train_cpu"]
        row = _fold_row(dataset, model, c, k, whole, evals_per_iter=round(per_iter, 3))
        for n in BIG_ITERS:
            fold = whole.mean() if len(whole) else c["setup_cpu"] + k * c["eval_cpu"] * per_iter * n
            row[f"cpu_h_{n}"] = round(row["folds_left"] * fold / 3600, 1)
        rows.append(row)
    return _with_total(pd.DataFrame(rows), 3)


def big_table(out: pd.DataFrame) -> str:
    """:func:`big_left`'s rows as ``zaidi_dbl.md``'s Markdown table."""
    lines = ["| dataset | model | training rows | weights | peak MiB (capped fit) | CPU s / evaluation "
             "| folds done (CPU h each) | folds left | " + " | ".join(f"CPU h at {n:,} iterations" for n in BIG_ITERS)
             + " |", "|---|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(BIG_ITERS)]
    for _, r in out[out["dataset"] != "total"].iterrows():
        done = f"{r.folds_done} ({r.done_cpu_h:.2f})" if r.folds_done else "0"
        lines.append(f"| {r.dataset} | {r.model} | {r.n_train:,} | {r.n_parameters:,} | {r.peak_mib:,} | "
                     f"{r.eval_cpu:.3g} | {done} | {r.folds_left} | "
                     + " | ".join(f"{r[f'cpu_h_{n}']:,.1f}" for n in BIG_ITERS) + " |")
    t = out[out["dataset"] == "total"].iloc[0]
    lines.append(f"| **all** | | | | | | | **{t.folds_left}** | "
                 + " | ".join(f"**{t[f'cpu_h_{n}']:,.0f}**" for n in BIG_ITERS) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="the page's Markdown table instead of the CSV")
    ap.add_argument("--big", action="store_true", help="the Big three's optimized models instead of Little data's")
    a = ap.parse_args(argv)
    out = big_left() if a.big else left()
    shown = (big_table if a.big else table)(out) if a.table else out.to_csv(index=False)
    sys.stdout.write(shown)


if __name__ == "__main__":
    main()
