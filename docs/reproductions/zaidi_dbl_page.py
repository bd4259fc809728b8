"""Rewrite the tables of ``zaidi_dbl.md`` from the committed CSVs, and say which cells moved.

    python docs/reproductions/zaidi_dbl_page.py            # after zaidi_dbl_rerun_tables.py, _figures.py, _start.py

Each table is found by its header line and keeps its rows (which pairs, metrics, sets of fits it shows, and the
paper's column); only our cells are computed again:

* Tables 2–4 (``| table | pair | metric | paper (75 Little) | ours (...) |``) and the per-metric tables (``| pair |
  bias | variance | ...``): ``reg_rows/wdl.csv`` (Little), W/D/L (two-tailed sign test p), bold where p <= 0.05;
  §4.4's stronger penalties toward 1 (:data:`TOWARD_ONE_KEY`) the same from ``toward_one/tables/``;
* §6.3's (``| pair | datasets | DBL fewer / equal / more iterations (p) |``): ``reg_rows/convergence_summary.csv``;
* the one-fold paths (``| pair | measure | datasets |``): ``figures/reach_summary.csv``;
* the starts (``| fits | model | measure | datasets |``): ``figures/start_objective_summary.csv``;
* the folds of optdigits (:data:`PER_FOLD`) and of any dataset begun but not complete for DBL³ and LR³ (``| dataset
  | fold | DBL³ iterations |``): ``reg_rows/folds.csv``, a row per fold, ``—`` where one model's fold is not in yet;
* what the rest costs: ``zaidi_dbl_left_cost.py --table``, and on the Big three (:data:`BIG_LEFT_KEY`) its
  ``--big --table``;
* Tables 5 and 6 (from ``**Table 5 (0-1 loss)**`` to the end of Table 6's table): ``reg_rows/summary.csv`` through
  ``zaidi_dbl_paper.big_section`` (the paper's value / ours, with the folds of ours);
* ``covertype-grouped``'s cut points (``| cut points from | cut points |``): ``cut_points/summary.csv`` and
  ``cuts.csv`` (``zaidi_dbl_cut_points.py``), mean 0-1 loss per variant and model, the paper's last.

The numbers in the page's prose are not touched: the cells printed as moved say where to look
(``tests/test_zaidi_dbl_doc.py`` and its neighbours check every table cell, not the prose).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from zaidi_dbl_cut_points import cut_counts  # noqa: E402  (covertype's cut points)
from zaidi_dbl_left_cost import big_left, big_table, left, table  # noqa: E402  (the cost tables)
from zaidi_dbl_paper import MODELS_56, PAPER_BIG, big_section  # noqa: E402  (Tables 5 and 6)
from zaidi_dbl_rerun_tables import p_text  # noqa: E402  (a p as the tables print it)

DOC = HERE / "zaidi_dbl.md"
ROWS = HERE / "zaidi_dbl_rerun" / "reg_rows"
FIGURES = HERE / "zaidi_dbl_rerun" / "figures"
TOWARD_ONE = HERE / "zaidi_dbl_rerun" / "toward_one"
"""``bncbench report`` of ``zaidi_dbl_toward_one`` (§4.4's stronger penalties toward 1 on the smaller datasets)."""
TOWARD_ONE_KEY = r"^\| pair, 36 datasets under 1,000 rows \| bias \|"
METRICS = {"bias": "bias", "variance": "variance", "0-1 loss": "zero_one", "RMSE": "rmse",
           "training time": "train_time"}


def wdl_cell(w: int, d: int, l: int, p: float, sep: str = "/", bold: bool = True) -> str:
    """``w/d/l (p)``, bold where p <= 0.05 (if ``bold``)."""
    cell = sep.join(str(int(v)) for v in (w, d, l)) + f" ({p_text(p)})"
    return f"**{cell}**" if bold and p <= 0.05 else cell


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _row(cells: list[str], indent: str) -> str:
    return indent + "| " + " | ".join(cells) + " |"


def _tables(lines: list[str], header: re.Pattern):
    """(index of the header line, indices of its body rows) of every table whose header matches."""
    for i, line in enumerate(lines):
        if header.match(line.strip()):
            k = i + 2
            while k < len(lines) and lines[k].strip().startswith("|"):
                k += 1
            yield i, range(i + 2, k)


def _wdl(files: tuple[Path, ...] = (ROWS / "wdl.csv",)) -> dict:
    """``{("A vs B", metric): row}`` of the Little rows of the W-D-L CSVs ``files``."""
    w = pd.concat([pd.read_csv(f) for f in files])
    w = w[w["subset"] == "Little"]
    return {(f"{a} vs {b}", m): r for (a, b, m), r in w.set_index(["model_a", "model_b", "metric"]).iterrows()}


PER_FOLD = ("optdigits",)
"""The datasets whose DBL³/LR³ folds the page shows one by one whether complete or not (its optdigits paragraph)."""
RUNNING_KEY = "| dataset | fold | DBL³ iterations |"  # how the page's table is found (its columns are the script's)
RUNNING_HEAD = (RUNNING_KEY + " DBL³ CPU h | DBL³ training NLL | DBL³ 0-1 loss | "
                "LR³ iterations | LR³ CPU h | LR³ training NLL | LR³ 0-1 loss |")


BIG_KEY = "**Table 5 (0-1 loss)**"
"""Where the page's Tables 5 and 6 begin (``zaidi_dbl_paper.big_section``'s first line)."""
BIG_LEFT_KEY = "| dataset | model | training rows | weights | peak MiB (capped fit) |"
"""How the page's table of the Big folds left is found (its columns are ``zaidi_dbl_left_cost.big_table``'s)."""


CUT_KEY = "| cut points from | cut points |"
CUT_VARIANTS = {"fold": "the training fold (the experiment's)", "whole": "the whole data",
                "fold_twice": "the training fold, every row twice", "test": "the test fold"}
CUT_MODELS = ["A1JE", "A2JE", "A3JE", "A1DE", "A2DE", "DBL1"]


def cut_points_table(dataset: str = "covertype-grouped") -> str:
    """``dataset``'s 0-1 loss per variant of ``zaidi_dbl_cut_points.py`` and model, with the mean number of cut points
    over the numeric attributes and folds; "—" where a model was not refitted with a variant."""
    cuts_dir = ROWS.parent / "cut_points"
    s = pd.read_csv(cuts_dir / "summary.csv").query("dataset == @dataset").set_index(["variant", "model"])
    n = cut_counts(pd.read_csv(cuts_dir / "cuts.csv"), dataset)
    lines = [CUT_KEY + " " + " | ".join(CUT_MODELS) + " |", "|---|---:|" + "---:|" * len(CUT_MODELS)]
    for v, name in CUT_VARIANTS.items():
        cells = [f"{s.loc[(v, m), 'zero_one']:.4f}" if (v, m) in s.index else "—" for m in CUT_MODELS]
        lines.append(_row([name, f"{n[v]:.1f}"] + cells, ""))
    paper = dict(zip(MODELS_56, PAPER_BIG[dataset]["zero_one"]))
    lines.append(_row(["the paper", ""] + [f"{paper[m]:.4f}" for m in CUT_MODELS], ""))
    return "\n".join(lines) + "\n"


def running_folds(folds: pd.DataFrame) -> str:
    """The table of every DBL³/LR³ fold (``folds.csv``'s rows) of :data:`PER_FOLD`'s datasets, then of those with
    fewer than 10 of either model."""
    f = folds[folds["model"].isin(["DBL3", "LR3"]) & (folds["status"] == "ok")]
    n = f.groupby(["dataset", "model"]).size().unstack().reindex(columns=["DBL3", "LR3"]).fillna(0)
    lines = [RUNNING_HEAD, "|" + "---|" * RUNNING_HEAD.count(" | ") + "---|"]
    begun = [d for d in n.index[(n < 10).any(axis=1)] if d not in PER_FOLD]
    for dataset in [d for d in PER_FOLD if d in n.index] + begun:
        g = f[f["dataset"] == dataset].set_index(["round", "fold", "model"])
        for rnd, fold in sorted({k[:2] for k in g.index}):
            cells = [dataset, f"r{rnd}f{fold}"]
            for model in ("DBL3", "LR3"):
                if (rnd, fold, model) not in g.index:
                    cells += ["—"] * 4
                    continue
                r = g.loc[(rnd, fold, model)]
                cells += [f"{int(r.n_iter):,}", f"{r.train_cpu / 3600:.2f}", f"{-r.train_cll:.2f}",
                          f"{r.zero_one:.4f}"]
            lines.append(_row(cells, ""))
    return "\n".join(lines) + "\n"


def _ours(r) -> str:
    """A ``wdl.csv`` row's cell."""
    return wdl_cell(r.wins, r.draws, r.losses, r.p)


def rewrite(text: str) -> tuple[str, list[str]]:
    """The page with its tables recomputed, and a line per cell that changed."""
    lines = text.split("\n")
    moved = []
    wdl = _wdl()

    def put(k, cells, label, head):
        """Row ``k`` becomes ``cells``; each changed cell is reported as ``label / its column: old -> new``."""
        indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
        for name, a, b in zip(head, _cells(lines[k]), cells):
            if a != b:
                moved.append(f"{label} / {name}: {a} -> {b}")
        lines[k] = _row(cells, indent)

    counts = sorted({int(r.n) for r in wdl.values()}, reverse=True)
    for i, body in _tables(lines, re.compile(r"^\| table \| pair \| metric \| paper \(75 Little\) \| ours \(")):
        head = _cells(lines[i])
        head[4] = "ours (" + " / ".join(str(c) for c in counts) + " Little)"
        lines[i] = _row(head, "")
        for k in body:
            t, pair, metric, paper, _ = _cells(lines[k])
            r = wdl[(pair, METRICS[metric])]
            put(k, [t, pair, metric, paper, _ours(r)], f"Table {t}: {pair} / {metric}", ["", "", "", "", "ours"])
    toward_one = _wdl(tuple(sorted((TOWARD_ONE / "tables").glob("toward_*.csv"))))
    for pattern, w in ((r"^\| pair \| bias \| variance \|", wdl), (TOWARD_ONE_KEY, toward_one)):
        for i, body in _tables(lines, re.compile(pattern)):
            head = _cells(lines[i])
            for k in body:
                cells = _cells(lines[k])
                put(k, [cells[0]] + [_ours(w[(cells[0], METRICS[h])]) for h in head[1:]], cells[0], head)
    conv = pd.read_csv(ROWS / "convergence_summary.csv")
    conv = conv[conv["subset"] == "Little"].set_index("w_model")
    for i, body in _tables(lines, re.compile(r"^\| pair \| datasets \| DBL fewer / equal / more iterations \(p\) \|")):
        head = _cells(lines[i])
        for k in body:
            pair = _cells(lines[k])[0]
            r = conv.loc[pair.split(" vs ")[0]]
            iters = wdl_cell(r.iter_fewer, r.iter_equal, r.iter_more, r.iter_p, " / ", bold=False)
            put(k, [pair, str(int(r.n_datasets)), iters,
                    f"{r.iter_ratio_geomean:.3f}", f"{int(r.time_less)} / {int(r.time_more)} ({p_text(r.time_p)})",
                    f"{r.time_ratio_geomean:.3f}"], pair, head)
    for file, pattern, keys, medians in (
            ("reach_summary.csv", r"^\| pair \| measure \| datasets \|", ["pair", "measure"],
             ("median_dbl", "median_lr")),
            ("start_objective_summary.csv", r"^\| fits \| model \| measure \| datasets \|",
             ["fits", "model", "measure"], ("median_anje", "median_zero"))):
        s = pd.read_csv(FIGURES / file).set_index(keys)
        for i, body in _tables(lines, re.compile(pattern)):
            head = _cells(lines[i])
            for k in body:
                cells = _cells(lines[k])
                key = tuple(c.strip("`") for c in cells[: len(keys)])
                r = s.loc[key]
                put(k, cells[: len(keys)] + [str(int(r.n_datasets)), wdl_cell(r.fewer, r.equal, r.more, r.p),
                                             f"{r.ratio_geomean:.3f}", f"{r[medians[0]]:g} / {r[medians[1]]:g}"],
                    " / ".join(key), head)
    text = "\n".join(lines)

    def block(start: int, end: int, new: str, label: str) -> None:
        """``text[start:end]`` becomes ``new``, reported as ``label`` if it changed."""
        nonlocal text
        if text[start:end] != new:
            moved.append(label)
        text = text[:start] + new + text[end:]

    start = text.index(RUNNING_KEY)
    block(start, text.index("\n\n", start) + 1, running_folds(pd.read_csv(ROWS / "folds.csv")),
          "The folds begun: the table")
    start = text.index(BIG_KEY)
    table6 = text.index("\n|", text.index("**Table 6 (RMSE)**", start))
    block(start, text.index("\n\n", table6) + 1, big_section(pd.read_csv(ROWS / "summary.csv")),
          "Tables 5 and 6: the tables")
    start = text.index(CUT_KEY)
    block(start, text.index("\n\n", start) + 1, cut_points_table(), "covertype-grouped's cut points: the table")
    section = text.index("## What the rest costs")
    start = text.index("| dataset | model | training rows |", section)
    block(start, text.index("\n", text.index("| **all** |", start)) + 1, table(left()),
          "What the rest costs: the table")
    start = text.index(BIG_LEFT_KEY)
    block(start, text.index("\n", text.index("| **all** |", start)) + 1, big_table(big_left()),
          "The Big three, what is left: the table")
    return text, moved


def main() -> int:
    from bncbench.atomic import atomic_write_bytes

    text, moved = rewrite(DOC.read_text())
    atomic_write_bytes(DOC, text.encode())
    print("\n".join(moved) if moved else "no cell moved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
