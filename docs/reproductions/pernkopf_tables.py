"""Pernkopf et al.'s tables from our records: classification rates (Tables 1-2), model sizes (Table 4),
the chosen lambda and kappa, and the missing-features curves (Fig. 6), as CSV and Markdown.

Models are told apart by their stored parameters (``param.structure``, ``param.param``,
``param.objective``, ``param.model``), never by label text: ML is ``param=generative``, CL
``param=extended`` with the CLL objective, MM ``param=extended`` with ``objective=margin``.

    python docs/reproductions/pernkopf_tables.py results/pernkopf_uci [results/pernkopf] \
        [results/pernkopf_kappa] [results/pernkopf_uci_start] [results/pernkopf_mnist] \
        [results/pernkopf_mnist_impute] --out docs/reproductions/pernkopf

A later store's record of the same model (every stored parameter equal) on the same fold replaces an earlier
store's: :func:`bncbench.harness.store.load_stores`, as ``python -m bncbench report`` reads several stores.

``paired.csv`` compares the learnings on the same folds (MM vs CL, CL vs ML, MM vs ML per dataset and structure:
folds won / drawn / lost, mean difference, sign test).

The digit sets' rates (USPS, MNIST-14) also go into ``vs_paper.csv`` beside the paper's Tables 1-2, one row per
(structure, learning) of the paper or of ours, so a model that did not run shows as an empty ``ours``.

pernkopf_kappa's records enter ``kappa.csv`` only (Fig. 5; the others' candidates: ``tuning_curves.csv``); records fitted with
``validation_start: training_part`` (pernkopf_uci_start) enter ``start.csv`` only, beside the same
folds' records with the default start.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.harness.missing_protocol import curves
from bncbench.report.stats import sign_test
from bncbench.report.sensitivity import tuning_curves
from bncbench.harness.store import load_stores

STRUCTURES = {"nb": "NB", "tan": "TAN-CMI", "tan_omi_cr": "TAN-OMI-CR", "tan_cr": "TAN-CR"}

# The paper's Tables 1-2 (classification rate in %) for the digit sets.
PAPER = {
    "MNIST": {("NB", "ML"): 83.73, ("TAN-CMI", "ML"): 91.28, ("TAN-OMI-CR", "ML"): 92.01, ("TAN-CR", "ML"): 92.58,
              ("NB", "CL"): 91.70, ("TAN-CMI", "CL"): 93.80, ("TAN-OMI-CR", "CL"): 93.39, ("TAN-CR", "CL"): 93.94,
              ("NB", "MM"): 91.82, ("TAN-CMI", "MM"): 94.70, ("TAN-OMI-CR", "MM"): 94.94, ("TAN-CR", "MM"): 95.12,
              ("SVM", "SVM"): 96.40},
    "USPS": {("NB", "ML"): 87.10, ("TAN-CMI", "ML"): 91.90, ("TAN-OMI-CR", "ML"): 92.40, ("TAN-CR", "ML"): 92.57,
             ("NB", "CL"): 93.67, ("TAN-CMI", "CL"): 94.87, ("TAN-OMI-CR", "CL"): 94.90, ("TAN-CR", "CL"): 95.83,
             ("NB", "MM"): 95.23, ("TAN-CMI", "MM"): 95.23, ("TAN-OMI-CR", "MM"): 95.70, ("TAN-CR", "MM"): 96.30,
             ("SVM", "SVM"): 97.86},
}
DIGITS = {"mnist14": "MNIST", "usps": "USPS"}  # our dataset -> its table in PAPER


def svm_kind(rec: pd.Series) -> str:
    """The SVM's row name from its parameters: "SVM" on raw features, "SVM (codes)" on codes, with the training
    subsample when ``train_rows`` is set ("SVM (raw, 10k rows)") and the fixed C and gamma when it has no tuning
    grid ("SVM (raw, C=10, gamma=0.2)"), so that no row hides a different model."""
    def given(key):
        v = rec.get(f"param.{key}")
        return v is not None and not (isinstance(v, float) and np.isnan(v))

    parts = ["raw" if rec.get("param.features") == "raw" else "codes"]
    if given("train_rows"):
        n = int(rec["param.train_rows"])
        parts.append(f"{f'{n // 1000}k' if n % 1000 == 0 else n} rows")
    if not given("grid"):
        parts.append(f"C={rec.get('param.C', 1.0):g}, gamma={rec.get('param.gamma', 'scale')}")
    return {("raw",): "SVM", ("codes",): "SVM (codes)"}.get(tuple(parts), f"SVM ({', '.join(parts)})")


def kind(rec: pd.Series) -> tuple[str, str]:
    """(structure, learning) of a record from its parameters; the SVM's structure is :func:`svm_kind`."""
    if isinstance(rec.get("param.model"), str) and rec["param.model"] != "bnc":
        return svm_kind(rec), "SVM"
    structure = STRUCTURES.get(rec["param.structure"], rec["param.structure"])
    if rec["param.param"] == "generative":
        return structure, "ML"
    objective = rec.get("param.objective")
    return structure, "MM" if objective == "margin" else "CL"


def start_of(rec: pd.Series) -> str:
    """Where an early-stopped fit's generative start was counted (optimizer option validation_start)."""
    opts = rec.get("param.optimizer_options")
    opts = json.loads(opts) if isinstance(opts, str) else (opts if isinstance(opts, dict) else {})
    return opts.get("validation_start") or "all"


def gather(roots: list[str]) -> pd.DataFrame:
    """The successful records of the stores, read as one (:func:`~bncbench.harness.store.load_stores`: a later
    store's record of the same model, every stored parameter equal, on the same fold replaces an earlier one's; one
    that differs in test rate or marginalized curve is named on stderr). Models are told apart by their parameters
    here, so the stores' labels are left as stored (``labels=False``)."""
    df = load_stores(roots, labels=False, say=lambda line: print(line, file=sys.stderr))
    df = df.sort_values("store", key=lambda s: s.map(roots.index), kind="stable")  # the CSVs' rows by store
    df["experiment"] = df["store"].map(lambda r: Path(r).name)
    df = df[df["status"] == "ok"].copy()
    df[["structure", "learning"]] = df.apply(lambda r: pd.Series(kind(r)), axis=1)
    df["start"] = df.apply(start_of, axis=1)
    df["rate"] = 100 * (1 - df["zero_one"])
    return df


def start_comparison(df: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, structure, learning, round, fold): the test rate with the start counted on all training rows
    and on the training part only (validation_start), where both were run; and their difference."""
    fits = df[df["learning"].isin(["CL", "MM"])]
    t = fits.pivot_table(index=["dataset", "structure", "learning", "round", "fold"], columns="start",
                         values="rate").reset_index()
    if "training_part" not in t:
        return pd.DataFrame()
    t = t.dropna(subset=["all", "training_part"])
    t["difference"] = t["training_part"] - t["all"]
    return t


def rates(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["dataset", "structure", "learning"])
    out = g.agg(rate=("rate", "mean"), std=("rate", "std"), folds=("rate", "size"), n_test=("n_test", "sum"),
                n_parameters=("n_parameters", "mean"), train_s=("train_time", "mean")).reset_index()
    p = out["rate"] / 100  # binomial standard deviation of a rate on the pooled test rows, as the paper reports
    out["binomial_std"] = 100 * np.sqrt(p * (1 - p) / out["n_test"])
    return out


def wide(r: pd.DataFrame) -> pd.DataFrame:
    t = r.pivot_table(index=["dataset", "structure"], columns="learning", values="rate").reset_index()
    return t[["dataset", "structure", *[c for c in ("ML", "CL", "MM", "SVM") if c in t]]]


def vs_paper(r: pd.DataFrame) -> pd.DataFrame:
    """The digit sets' rates (:func:`rates`) beside the paper's Tables 1-2: every (structure, learning) of either.

    The paper's SVM value stands beside each of our SVM rows (on raw features, on codes, on a subsample); a paper row
    we have no record for keeps an empty ``ours``.
    """
    paper = pd.DataFrame([{"dataset": d, "structure": st, "learning": le, "paper": v}
                          for d, table in DIGITS.items() for (st, le), v in PAPER[table].items()])
    ours = r[r["dataset"].isin(DIGITS)].rename(columns={"rate": "ours"})
    ours = ours[["dataset", "structure", "learning", "ours", "binomial_std", "n_parameters", "train_s"]]
    svm = ours[ours["learning"] == "SVM"][["dataset", "structure"]].assign(learning="SVM")
    paper_svm = paper[paper["learning"] == "SVM"].drop(columns="structure").merge(svm, on=["dataset", "learning"])
    paper = pd.concat([paper[paper["learning"] != "SVM"], paper_svm, paper[(paper["learning"] == "SVM") & ~paper[
        "dataset"].isin(svm["dataset"])]], ignore_index=True)
    out = paper.merge(ours, on=["dataset", "structure", "learning"], how="outer")
    out["difference"] = out["ours"] - out["paper"]
    order = {"ML": 0, "CL": 1, "MM": 2, "SVM": 3}
    rank = {"NB": 0, "TAN-CMI": 1, "TAN-OMI-CR": 2, "TAN-CR": 3}
    out = out.assign(_l=out["learning"].map(order), _s=out["structure"].map(rank).fillna(9))
    out = out.sort_values(["dataset", "_l", "_s", "structure"]).drop(columns=["_l", "_s"])
    return out[["dataset", "structure", "learning", "ours", "paper", "difference", "binomial_std", "n_parameters",
                "train_s"]].reset_index(drop=True)


PAIRS = (("MM", "CL"), ("CL", "ML"), ("MM", "ML"))


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, structure) and pair of learnings: the two on the same folds — folds won, drawn and lost by the
    first (a higher test rate), the mean difference in points, and the two-tailed sign test over the folds.

    Only folds both learnings ran count; a (dataset, structure) with fewer than 2 such folds is left out.
    """
    rows = []
    t = df.pivot_table(index=["dataset", "structure", "round", "fold"], columns="learning", values="rate")
    for (a, b) in PAIRS:
        if a not in t or b not in t:
            continue
        both = t[[a, b]].dropna()
        for (dataset, structure), g in both.groupby(level=["dataset", "structure"]):
            if len(g) < 2:
                continue
            d = g[a] - g[b]
            w, l = int((d > 0).sum()), int((d < 0).sum())
            rows.append({"dataset": dataset, "structure": structure, "pair": f"{a} vs {b}", "folds": len(g),
                         "wins": w, "draws": len(g) - w - l, "losses": l, "mean_difference": d.mean(),
                         "sign_p": sign_test(w, l)})
    return pd.DataFrame(rows)


def tuning(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for rec in df.itertuples():
        tun = getattr(rec, "tuning", None)
        if isinstance(tun, dict):
            rows.append({"dataset": rec.dataset, "structure": rec.structure, "learning": rec.learning,
                         "round": rec.round, "fold": rec.fold, **{f"chosen.{k}": v for k, v in tun["chosen"].items()},
                         "best_val_error": min(c["val_error"] for c in tun["candidates"]),
                         "candidates": len(tun["candidates"])})
    return pd.DataFrame(rows)


def md(df: pd.DataFrame, fmt: str = "{:.2f}") -> str:
    """A Markdown table (without the optional tabulate package)."""
    cell = lambda v: fmt.format(v) if isinstance(v, float) and np.isfinite(v) else ("" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--out", default="docs/reproductions/pernkopf")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    everything = gather(args.roots)
    comparison = start_comparison(everything[everything["experiment"] != "pernkopf_kappa"])  # its MM-NB is another grid
    if not comparison.empty:
        comparison.to_csv(out / "start.csv", index=False, float_format="%.2f")
    kappa = everything[everything["experiment"] == "pernkopf_kappa"]
    if not kappa.empty:  # Fig. 5: MM-NB at lambda = 0.02 over a kappa grid
        tuning_curves(kappa).to_csv(out / "kappa.csv", index=False, float_format="%.4f")
    df = everything[(everything["start"] == "all") & (everything["experiment"] != "pernkopf_kappa")]
    tuning_curves(df).to_csv(out / "tuning_curves.csv", index=False, float_format="%.4f")
    r = rates(df)
    r.to_csv(out / "rates.csv", index=False, float_format="%.4f")
    w = wide(r)
    w.to_csv(out / "rates_wide.csv", index=False, float_format="%.2f")
    digits = vs_paper(r)
    if digits["ours"].notna().any():
        digits.to_csv(out / "vs_paper.csv", index=False, float_format="%.2f")
    sizes = r[(r["structure"].isin(["NB", "TAN-CR", "SVM"]) | r["structure"].str.startswith("SVM (raw,"))
              & r["learning"].isin(["MM", "SVM"])][["dataset", "structure", "learning", "n_parameters", "rate"]]
    sizes.to_csv(out / "sizes.csv", index=False, float_format="%.2f")
    pairs = paired(df)
    pairs.to_csv(out / "paired.csv", index=False, float_format="%.4f")
    tun = tuning(df)
    tun.to_csv(out / "tuning.csv", index=False)
    cur = curves(df)
    cur.to_csv(out / "missing_features.csv", index=False, float_format="%.4f")
    if not comparison.empty:
        print(md(comparison))
        print()
    print(md(w))
    print()
    if digits["ours"].notna().any():
        print(md(digits))
        print()
    print(md(sizes, "{:.0f}"))
    print()
    if not pairs.empty:
        print(md(pairs, "{:.3f}"))
        print()
    if not tun.empty:
        print(md(tun, "{:.4g}"))
        print()
    if not cur.empty:
        c = cur.assign(cell=cur["mean"].map(lambda v: f"{100 * v:.1f}") + " ± " + cur["std"].map(
            lambda v: f"{100 * v:.1f}"))
        print(c.pivot_table(index=["dataset", "model", "method"], columns="k", values="cell", aggfunc="first")
              .reset_index().pipe(md))


if __name__ == "__main__":
    main()
