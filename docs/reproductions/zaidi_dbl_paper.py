"""Zaidi et al.'s deep-broad learning tables beside ours: W-D-L Tables 2-4 and the Big Tables 5-6.

Reads the reports of the ``zaidi_dbl`` experiment (``python -m bncbench report``) and prints
Markdown for ``docs/reproductions/zaidi_dbl.md``:

* Tables 2, 3 and 4 (DBLⁿ vs AnJE, AnDE and RF): the paper's W-D-L and p beside ours, for
  Little and Big datasets, with Big as in the paper (> 100,000 rows: ``--report``) and with our
  Zaidi-2017 threshold (> 10,000 rows: ``--report-10k``), which is almost the paper's own Big
  set of its timing figures (Localization, Connect-4, Shuttle, Adult, Letter, Magic, Nursery,
  Sign, PenDigits);
* Tables 5 and 6 (0-1 loss and RMSE on Big datasets): the paper's values for the datasets we
  share (Census-income, Covertype, Kddcup, Poker-hand) beside our per-dataset means, with the
  number of folds each mean is over.

    python -m bncbench report results/zaidi_dbl --out docs/reproductions/zaidi_dbl
    python -m bncbench report results/zaidi_dbl --out reports/zaidi_dbl_10k --big-threshold 10000
    python docs/reproductions/zaidi_dbl_paper.py --report docs/reproductions/zaidi_dbl \
        --report-10k reports/zaidi_dbl_10k

With ``--baseline`` (and ``--baseline-10k``) an earlier report's cells of Tables 2-4 stand before
ours, and ours are marked `` ·`` where they differ (``--only DBL3``: DBL³'s rows alone).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent

# The paper's Tables 2-4 (Little: bias, variance, 0-1 loss, RMSE; Big: 0-1 loss, RMSE),
# (wins, draws, losses, p) with p as printed ("<0.001" kept as a string).
PAPER_WDL = {
    ("DBL2", "A2JE"): {
        ("Little", "bias"): (66, 4, 5, "<0.001"), ("Little", "variance"): (16, 3, 56, "<0.001"),
        ("Little", "zero_one"): (42, 5, 28, "0.119"), ("Little", "rmse"): (37, 1, 37, "1.092"),
        ("Big", "zero_one"): (7, 0, 1, "0.070"), ("Big", "rmse"): (7, 0, 1, "0.070")},
    ("DBL3", "A3JE"): {
        ("Little", "bias"): (58, 2, 15, "<0.001"), ("Little", "variance"): (19, 2, 54, "<0.001"),
        ("Little", "zero_one"): (37, 3, 35, "0.906"), ("Little", "rmse"): (30, 1, 44, "0.130"),
        ("Big", "zero_one"): (7, 0, 1, "0.070"), ("Big", "rmse"): (7, 0, 1, "0.070")},
    ("DBL2", "A1DE"): {
        ("Little", "bias"): (65, 3, 7, "<0.001"), ("Little", "variance"): (21, 5, 49, "0.001"),
        ("Little", "zero_one"): (42, 4, 29, "0.1539"), ("Little", "rmse"): (30, 1, 44, "0.130"),
        ("Big", "zero_one"): (8, 0, 0, "0.007"), ("Big", "rmse"): (7, 0, 1, "0.073")},
    ("DBL3", "A2DE"): {
        ("Little", "bias"): (53, 5, 17, "<0.001"), ("Little", "variance"): (26, 5, 44, "0.041"),
        ("Little", "zero_one"): (39, 3, 33, "0.556"), ("Little", "rmse"): (22, 1, 52, "<0.001"),
        ("Big", "zero_one"): (7, 0, 1, "0.073"), ("Big", "rmse"): (6, 0, 2, "0.289")},
    ("DBL2", "RF"): {
        ("Little", "bias"): (51, 3, 21, "<0.001"), ("Little", "variance"): (33, 3, 39, "0.556"),
        ("Little", "zero_one"): (40, 3, 32, "0.409"), ("Little", "rmse"): (26, 1, 48, "0.014"),
        ("Big", "zero_one"): (5, 0, 3, "0.726"), ("Big", "rmse"): (5, 0, 3, "0.726")},
    ("DBL3", "RF"): {
        ("Little", "bias"): (52, 2, 21, "<0.001"), ("Little", "variance"): (28, 5, 42, "0.119"),
        ("Little", "zero_one"): (37, 3, 35, "0.906"), ("Little", "rmse"): (27, 1, 47, "0.026"),
        ("Big", "zero_one"): (6, 0, 2, "0.289"), ("Big", "rmse"): (5, 0, 3, "0.726")},
}
TABLES = {"table2": [("DBL2", "A2JE"), ("DBL3", "A3JE")], "table3": [("DBL2", "A1DE"), ("DBL3", "A2DE")],
          "table4": [("DBL2", "RF"), ("DBL3", "RF")]}
ROWS = [("Little", "bias"), ("Little", "variance"), ("Little", "zero_one"), ("Little", "rmse"),
        ("Big", "zero_one"), ("Big", "rmse")]
METRIC_NAMES = {"bias": "Bias", "variance": "Variance", "zero_one": "0-1 loss", "rmse": "RMSE"}

# The paper's Tables 5 (0-1 loss) and 6 (RMSE), the columns of the datasets we have.
MODELS_56 = ["A1JE", "A2JE", "A3JE", "A1DE", "A2DE", "DBL1", "DBL2", "DBL3", "RF"]
PAPER_BIG = {  # dataset -> metric -> values in MODELS_56's order
    "poker-hand": {"zero_one": [0.4988, 0.0763, 0.0763, 0.4640, 0.1348, 0.4988, 0.0021, 0.0056, 0.0687],
                   "rmse": [0.2382, 0.1924, 0.1721, 0.2217, 0.2044, 0.2382, 0.1970, 0.0323, 0.1479]},
    "census-income": {"zero_one": [0.2354, 0.2031, 0.1674, 0.0986, 0.0682, 0.0433, 0.0686, 0.0557, 0.0494],
                      "rmse": [0.4599, 0.4231, 0.3812, 0.2780, 0.2269, 0.1807, 0.250, 0.2332, 0.1928]},
    "covertype-grouped": {"zero_one": [0.3143, 0.2546, 0.1665, 0.2387, 0.1552, 0.2576, 0.1381, 0.0797, 0.0669],
                          "rmse": [0.2511, 0.2256, 0.1857, 0.2174, 0.1779, 0.2254, 0.1802, 0.1494, 0.1336]},
    "kddcup": {"zero_one": [0.0091, 0.0061, 0.0053, 0.0025, 0.0023, 0.0017, 0.0014, 0.0013, 0.0015],
               "rmse": [0.0204, 0.0170, 0.0160, 0.0103, 0.0098, 0.0072, 0.0068, 0.0065, 0.0072]},
}
PAPER_ROWS = {"poker-hand": "1,175,067", "census-income": "299,285", "covertype-grouped": "581,012",
              "kddcup": "5,209,000"}


def _cell(w: int, d: int, l: int, p, significant: bool) -> str:
    text = f"{w}/{d}/{l} ({p})"
    return f"**{text}**" if significant else text


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def wdl_section(reports: dict[str, Path], against: dict[str, str] | None = None,
                only: str | None = None) -> str:
    """Tables 2-4: one Markdown table per paper table, the paper's cells beside each report's.

    ``reports`` maps a column's heading to a report; ``against`` maps a heading to the heading
    of the column it is read against: its cell is marked `` ·`` where the two differ. ``only``
    keeps the comparisons of that model (the first of a pair).
    """
    against = against or {}
    out = []
    for table, pairs in TABLES.items():
        pairs = [(a, b) for a, b in pairs if only is None or a == only]
        frames = {name: pd.read_csv(path / "tables" / f"{table}.csv") for name, path in reports.items()}
        head = ["comparison", "datasets", "metric", "paper"] + list(reports)
        out += [f"**{table[:-1].capitalize()} {table[-1]}**", "", "| " + " | ".join(head) + " |",
                "|" + "---|" * len(head)]
        for a, b in pairs:
            for subset, metric in ROWS:
                w, d, l, p = PAPER_WDL[(a, b)][(subset, metric)]
                sig = p == "<0.001" or float(p) <= 0.05
                cells = {}
                for name, df in frames.items():
                    r = df[(df.model_a == a) & (df.model_b == b) & (df.subset == subset) & (df.metric == metric)]
                    if r.empty or int(r.n.iloc[0]) == 0:
                        cells[name] = "–"
                    else:
                        r = r.iloc[0]
                        cells[name] = _cell(int(r.wins), int(r.draws), int(r.losses), _p(float(r.p)),
                                            bool(r.significant))
                marked = [c + (" ·" if name in against and c != cells[against[name]] else "")
                          for name, c in cells.items()]
                row = [f"{a} vs {b}", subset, METRIC_NAMES[metric], _cell(w, d, l, p, sig)] + marked
                out.append("| " + " | ".join(row) + " |")
        out.append("")
    return "\n".join(out)


def big_section(summary: pd.DataFrame) -> str:
    """Tables 5 and 6 on the datasets we share with the paper: paper / ours (folds)."""
    out = []
    for metric, title in (("zero_one", "Table 5 (0-1 loss)"), ("rmse", "Table 6 (RMSE)")):
        out += [f"**{title}**: paper / ours (folds of ours; – not run)", "",
                "| model | " + " | ".join(f"{d} ({PAPER_ROWS[d]} rows in the paper)" for d in PAPER_BIG) + " |",
                "|---|" + "---|" * len(PAPER_BIG)]
        for i, model in enumerate(MODELS_56):
            cells = []
            for dataset, values in PAPER_BIG.items():
                r = summary[(summary.dataset == dataset) & (summary.model == model) & (summary.n_ok > 0)]
                ours = "–" if r.empty else f"{float(r[metric].iloc[0]):.4f} ({int(r.n_ok.iloc[0])})"
                cells.append(f"{values[metric][i]:.4f} / {ours}")
            out.append(f"| {model} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", default=str(HERE / "zaidi_dbl"), help="the report with Big = > 100,000 rows")
    ap.add_argument("--report-10k", default=None, help="the report with Big = > 10,000 rows (--big-threshold 10000)")
    ap.add_argument("--baseline", default=None,
                    help="an earlier report (Big > 100,000 rows): Tables 2-4 print its cells before ours "
                         "and mark ours with ' ·' where they differ")
    ap.add_argument("--baseline-10k", default=None, help="the same with Big = > 10,000 rows")
    ap.add_argument("--name", default="ours", help="the heading of our columns (default: ours)")
    ap.add_argument("--baseline-name", default="baseline", help="the heading of the baseline's columns")
    ap.add_argument("--only", default=None, metavar="MODEL",
                    help="Tables 2-4: only the comparisons of MODEL (DBL2 or DBL3); no Tables 5-6")
    args = ap.parse_args(argv)
    if args.only is not None and args.only not in {a for pairs in TABLES.values() for a, _ in pairs}:
        print(f"zaidi_dbl_paper: --only {args.only}: the tables compare DBL2 and DBL3", file=sys.stderr)
        return 2
    splits = [("Big > 100,000 rows", args.report, args.baseline)]
    if args.report_10k or args.baseline_10k:
        splits.append(("Big > 10,000 rows", args.report_10k, args.baseline_10k))
    reports, against = {}, {}
    for split, ours, baseline in splits:
        if ours is None:
            print("zaidi_dbl_paper: --baseline-10k needs --report-10k", file=sys.stderr)
            return 2
        if baseline is not None:
            reports[f"{args.baseline_name}, {split}"] = Path(baseline)
            against[f"{args.name}, {split}"] = f"{args.baseline_name}, {split}"
        reports[f"{args.name}, {split}"] = Path(ours)
    for path in reports.values():
        if not (path / "summary.csv").is_file():
            print(f"zaidi_dbl_paper: no report in {path} (summary.csv missing)", file=sys.stderr)
            return 2
    print(wdl_section(reports, against, args.only))
    if args.only is None:
        print(big_section(pd.read_csv(Path(args.report) / "summary.csv")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
