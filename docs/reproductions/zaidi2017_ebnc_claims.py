"""Zaidi et al. (2017)'s claims under the paper's formulas and under the authors' EBNC code (issue 41).

Reads the two committed reports of the same datasets, folds and protocol:

* ``zaidi2017_subset/``: the default grid (``+experiment=zaidi2017``, the zero-initialization models),
* ``zaidi2017_ebnc/``: the compatibility mode (``+experiment=zaidi2017_ebnc``),

and writes ``zaidi2017_ebnc_claims/claims.csv`` (one row per claim, structure, subset and mode: the
number the claim rests on) and ``zaidi2017_ebnc_claims/generative.csv`` (the two modes' generative
models against each other), and prints them as Markdown. Every number comes from the reports'
``summary.csv`` (per-dataset means over the 10 folds) and ``tables/convergence_*.csv``; only datasets
complete (10 folds of every model) in both reports are used.

The claims (the paper's numbers in brackets):

* ``wdl``: Table 4, w vs the generative model, W-D-L and sign-test p by metric (All, Big);
* ``time_d_w``, ``time_e_w``: geometric mean over datasets of the training time of d and e over w's
  (§7.1-7.3: about 2x and an order of magnitude);
* ``iter_d_w``, ``iter_e_w``: geometric mean over datasets of the mean iteration count of d and e over w's;
* ``gap_d``, ``gap_e``: §7.4's rule, the iterations d or e need after iteration 5 to reach w's NLL at
  iteration 5 (mean over datasets of the per-dataset median; the paper: about 10 and 15);
* ``generative``: the EBNC code's generative model against ours (0-1 loss and RMSE W-D-L, geometric mean
  ratio): how much its class term P(y) and missing back-off cost the baseline w is compared with.

Usage::

    python docs/reproductions/zaidi2017_ebnc_claims.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.report.stats import geometric_mean_ratios, subset_datasets, wdl_table

HERE = Path(__file__).parent
import os
ROOT = Path(os.environ.get("ZAIDI_EBNC_REPORTS", HERE))
OUT = HERE / "zaidi2017_ebnc_claims"
STRUCTURES = ("NB", "TAN", "KDB-1")
PARAMS = ("generative", "w", "d", "e")
TAIL = " [EBNC estimate] (EBNC start) [EBNC stop]"


def label(mode: str, s: str, p: str) -> str:
    """The model's label in its report."""
    if mode == "default":
        return s if p == "generative" else f"{s}^{p}"
    base = s if s == "NB" else f"{s}[EBNC]"
    if p == "generative":
        return f"{base} [EBNC estimate]"
    return f"{base}^{p}{'[EBNC]' if p == 'e' else ''}{TAIL}"


def load(mode: str, root: Path) -> pd.DataFrame:
    s = pd.read_csv(root / "summary.csv")
    names = {label(mode, st, p): f"{st}|{p}|{mode}" for st in STRUCTURES for p in PARAMS}
    s = s[s["model"].isin(names)].copy()
    s["model"] = s["model"].map(names)
    return s


def complete(s: pd.DataFrame) -> set:
    ok = s[s["n_ok"] == 10].groupby("dataset")["model"].nunique()
    return set(ok[ok == len(STRUCTURES) * len(PARAMS)].index)


def table4_markdown(claims: pd.DataFrame) -> str:
    """Table 4 both ways as ``zaidi2017.md`` shows it (W-D-L and p of w against the generative model)."""
    names = {"bias": "Bias", "variance": "Variance", "zero_one": "0-1 loss", "rmse": "RMSE"}
    w = claims[claims["claim"] == "wdl"]
    out = ["| datasets | metric | NB^w vs NB: formulas | code | TAN^w vs TAN: formulas | code | "
           "KDB-1^w vs KDB-1: formulas | code |", "|---|---|---|---|---|---|---|---|"]
    for sub in ("All", "Big"):
        for m, name in names.items():
            cells = []
            for st in STRUCTURES:
                for mode in ("default", "ebnc"):
                    r = w[(w["subset"] == sub) & (w["metric"] == m) & (w["structure"] == st) & (w["mode"] == mode)]
                    r = r.iloc[0]
                    cell = f"{r['value']} ({'<0.001' if r['p'] < 0.001 else format(r['p'], '.3f')})"
                    cells.append(f"**{cell}**" if r["p"] <= 0.05 else cell)
            out.append(f"| {sub} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


TIMING_ROWS = [("time_d_w", "training time d / w", 2, "about 2"), ("time_e_w", "training time e / w", 2, "about 10"),
               ("iter_d_w", "iterations d / w", 2, "–"), ("iter_e_w", "iterations e / w", 2, "–"),
               ("gap_d", "§7.4 gap, d", 1, "about 10"), ("gap_e", "§7.4 gap, e", 1, "about 15")]


def timing_markdown(claims: pd.DataFrame) -> str:
    """The time and iteration table of ``zaidi2017.md`` (NB / TAN / KDB-1 in every cell)."""
    out = ["| quantity | All: formulas | All: code | Big: formulas | Big: code | the paper |",
           "|---|---|---|---|---|---|"]
    for claim, name, digits, paper in TIMING_ROWS:
        cells = []
        for sub in ("All", "Big"):
            for mode in ("default", "ebnc"):
                c = claims[(claims["claim"] == claim) & (claims["subset"] == sub) & (claims["mode"] == mode)]
                vals = [float(c[c["structure"] == st]["value"].iloc[0]) for st in STRUCTURES]
                cells.append(" / ".join(f"{v:.{digits}f}".replace("-", "−") for v in vals))
        out.append(f"| {name} | " + " | ".join(cells) + f" | {paper} |")
    return "\n".join(out)


def main(root: Path | None = None, out: Path = OUT) -> int:
    root = ROOT if root is None else Path(root)
    d, e = load("default", root / "zaidi2017_subset"), load("ebnc", root / "zaidi2017_ebnc")
    datasets = sorted(complete(d) & complete(e))
    s = pd.concat([d, e], ignore_index=True)
    s = s[s["dataset"].isin(datasets)]
    rows = []
    for mode in ("default", "ebnc"):
        pairs = [(f"{st}|w|{mode}", f"{st}|generative|{mode}") for st in STRUCTURES]
        t = wdl_table(s, pairs, ["bias", "variance", "zero_one", "rmse", "train_time"], subsets=("All", "Big"))
        for r in t.itertuples():
            rows.append(dict(claim="wdl", metric=r.metric, subset=r.subset, structure=r.model_a.split("|")[0],
                             mode=mode, value=f"{r.wins}/{r.draws}/{r.losses}", p=r.p, n=r.n))
        rep = root / ("zaidi2017_subset" if mode == "default" else "zaidi2017_ebnc")
        conv = {k: pd.read_csv(rep / "tables" / f"convergence_{k}.csv")
                for k in ("gaps", "iterations")}
        for sub in ("All", "Big"):
            dsets = [x for x in subset_datasets(s, sub)]
            if not dsets:
                continue
            for st in STRUCTURES:
                w = f"{st}|w|{mode}"
                g = geometric_mean_ratios(s, "train_time", [f"{st}|d|{mode}", f"{st}|e|{mode}"], w, datasets=dsets)
                for p in ("d", "e"):
                    rows.append(dict(claim=f"time_{p}_w", metric="train_time", subset=sub, structure=st, mode=mode,
                                     value=g["ratios"][f"{st}|{p}|{mode}"], p=np.nan, n=g["n"]))
                    other = label(mode, st, p)
                    it = conv["iterations"]
                    it = it[(it["w_model"] == label(mode, st, "w")) & (it["other_model"] == other)
                            & it["dataset"].isin(dsets)]
                    rows.append(dict(claim=f"iter_{p}_w", metric="n_iter", subset=sub, structure=st, mode=mode,
                                     value=float(np.exp(np.log(it["n_iter_other"] / it["n_iter_w"]).mean())),
                                     p=np.nan, n=len(it)))
                    gp = conv["gaps"]
                    gp = gp[(gp["w_model"] == label(mode, st, "w")) & (gp["other_model"] == other)
                            & gp["dataset"].isin(dsets)]
                    rows.append(dict(claim=f"gap_{p}", metric="iterations after 5", subset=sub, structure=st,
                                     mode=mode, value=float(gp["gap"].mean()), p=np.nan, n=len(gp)))
    claims = pd.DataFrame(rows)
    gen = []
    for st in STRUCTURES:
        for p in PARAMS:
            a, b = f"{st}|{p}|ebnc", f"{st}|{p}|default"
            t = wdl_table(s, [(a, b)], ["zero_one", "rmse"], subsets=("All", "Big"))
            for r in t.itertuples():
                g = geometric_mean_ratios(s, r.metric, [a], b, datasets=subset_datasets(s, r.subset))
                gen.append(dict(structure=st, param=p, subset=r.subset, metric=r.metric,
                                ebnc_vs_default=f"{r.wins}/{r.draws}/{r.losses}", p=r.p, n=r.n,
                                geomean_ratio=g["ratios"][a]))
    gen = pd.DataFrame(gen)
    out = Path(out)
    out.mkdir(exist_ok=True)
    claims.to_csv(out / "claims.csv", index=False, float_format="%.6g")
    gen.to_csv(out / "generative.csv", index=False, float_format="%.6g")
    (out / "datasets.txt").write_text("\n".join(datasets) + "\n")
    print(f"{len(datasets)} datasets complete in both reports "
          f"(Big: {', '.join(subset_datasets(s, 'Big')) or 'none'})\n")
    piv = claims.pivot_table(index=["claim", "metric", "subset", "structure"], columns="mode", values="value",
                             aggfunc="first")
    print(piv.to_string())
    print()
    print(claims[claims.claim == "wdl"][["metric", "subset", "structure", "mode", "value", "p"]].to_string(index=False))
    print()
    print(gen.to_string(index=False))
    print()
    print(table4_markdown(pd.read_csv(out / "claims.csv")))
    print()
    print(timing_markdown(pd.read_csv(out / "claims.csv")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
