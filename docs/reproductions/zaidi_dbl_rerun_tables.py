"""Tables 2-6 and §6.3's convergence comparison of the deep-broad paper, from a zaidi_dbl store, as CSVs.

One command regenerates every number of ``docs/reproductions/zaidi_dbl.md``'s rerun with the
authors' per-row penalty (``reg=rows``, issue 37)::

    python docs/reproductions/zaidi_dbl_rerun_tables.py docs/reproductions/zaidi_dbl_rerun/store2 \
        --supplement docs/reproductions/zaidi_dbl_rerun/store_nov26/summary.csv \
        --supplement docs/reproductions/zaidi_dbl_rerun/store_big_nov29/summary.csv

It reads the store's records (read-only; a store still being written is fine: a (dataset, model)
counts only once it has every fold, ``--min-folds``) and writes, into ``--out``
(``docs/reproductions/zaidi_dbl_rerun/reg_rows/`` by default):

``summary.csv``
    per dataset x model: folds, mean 0-1 loss, RMSE, Kohavi-Wolpert bias and variance, train and
    test time, mean iterations; ``big`` = more than ``--big-threshold`` rows (the paper's 100,000); ``params``: the
    model's parameters as the experiment's plan gives them (checked against the store's records and a supplement
    that names them), so ``python -m bncbench report STORE --supplement summary.csv`` takes every model.
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
``folds.csv``
    every record of the store, one row per fold (:data:`FOLD_COLUMNS`): the page's per-fold numbers (musk1's,
    letter's and thyroid's iterations, losses and CPU times) come from it.

``<table>.tex``
    each of those tables' W-D-L as a LaTeX ``tabular`` (booktabs; ``bncbench report``'s layout), for a paper;
``paper_vs_ours.tex``
    Tables 2-4's cells, the paper's W-D-L and p beside ours, as a LaTeX ``tabular``;
``convergence.tex``
    ``convergence_summary.csv``'s counts, sign tests and geometric means as a LaTeX ``tabular``;

and prints a Markdown rendering of them (``tables.md`` in the same directory).

``--supplement SUMMARY.csv`` adds the (dataset, model) pairs that the store does not have with
every fold from an earlier ``summary.csv`` of this script, of a store that no longer exists (records
do not survive a change of machine; a committed summary does) or whose records are too large to
commit (the Big datasets'). It may be given several times: the supplements are taken in turn, each
by the same rule. Every W-D-L cell, sign test and
convergence ratio is computed from per-dataset means, so the tables are those of the union; a
supplied pair's §6.3 row takes its means from the summary (both models have all their folds, so
those are the means over the folds both ran). ``summary.csv`` names each pair's ``source``.
Without a store, the supplement alone gives back the CSVs it was written with
(``tests/test_rerun_tables.py`` checks it on the committed ones).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import zaidi_dbl_paper as paper  # noqa: E402  (the paper's Tables 2-6)

from bncbench.harness.store import json_default, load_results  # noqa: E402
from bncbench.report.convergence import PAIR_COLUMNS, pair_iterations, pair_iterations_summary  # noqa: E402
from bncbench.report.families import model_params  # noqa: E402
from bncbench.report.stats import metric_name, sign_test, wdl_table  # noqa: E402
from bncbench.report.summary import summarize  # noqa: E402
from bncbench.report.supplement import (PARAMS, RECORDS, SOURCE, check_same_data, merge_by_folds,  # noqa: E402
                                        with_params)
from bncbench.report.tabulate import SUBSET_TITLES, format_p, tex_label, wdl_latex  # noqa: E402

EXPERIMENT = HERE.parents[1] / "conf/experiment/zaidi_dbl.yaml"
OUT = HERE / "zaidi_dbl_rerun" / "reg_rows"
SUBSETS = ("Little", "Big", "All")
WDL_METRICS = ("bias", "variance", "zero_one", "rmse", "train_time")
CONVERGENCE_PAIRS = [("DBL1", "LR1"), ("DBL2", "LR2"), ("DBL3", "LR3")]


COLUMNS = ["dataset", "model", "n_ok", "n_failed", "complete", "n_instances", "big", "zero_one", "rmse", "bias",
           "variance", "train_time", "test_time", "n_iter", "n_parameters"]
"""``summary.csv``'s columns (then :data:`CPU` and :data:`SOURCE`)."""
FOLD_COLUMNS = ["dataset", "model", "round", "fold", "status", "n_iter", "n_fev", "train_cll", "zero_one", "rmse",
                "train_cpu", "train_time", "n_parameters", "n_train", "n_classes", "resumed", "env.commit"]
"""``folds.csv``'s columns: a record's fit (iterations, evaluations, training CLL, CPU and wall seconds), test losses,
size, whether it went on from a checkpoint and the commit that wrote it."""
CPU = "train_cpu"
"""``summary.csv``'s mean CPU seconds of a fit, where every fold has them (records since commit 45874cd); empty
for a supplied pair."""


def _flags(s: pd.DataFrame, min_folds: int, big_threshold: int) -> pd.DataFrame:
    s = s.copy()
    s["big"] = s["n_instances"] > big_threshold
    s["complete"] = (s["n_ok"] >= min_folds) & (s["n_failed"].fillna(0) == 0)
    return s


def complete_summary(records: pd.DataFrame, min_folds: int, big_threshold: int) -> pd.DataFrame:
    """The per-(dataset, model) summary, ``complete`` where the pair has ``min_folds`` successful folds."""
    if records.empty:
        return pd.DataFrame(columns=COLUMNS + [CPU, SOURCE])
    s = summarize(records.drop(columns=["trace"], errors="ignore"))
    it = records[records["status"] == "ok"].groupby(["dataset", "model"])["n_iter"].mean().rename("n_iter")
    s = _flags(s.merge(it.reset_index(), on=["dataset", "model"], how="left"), min_folds, big_threshold)
    s = s.reindex(columns=COLUMNS + [CPU])
    return s.assign(**{SOURCE: RECORDS}).sort_values(["big", "dataset", "model"]).reset_index(drop=True)


def supplement(s: pd.DataFrame, path: Path, models: list[str], min_folds: int, big_threshold: int) -> pd.DataFrame:
    """``s`` with the rows of an earlier ``summary.csv`` of this script for the pairs it has with fewer folds.

    The report's rule (:func:`bncbench.report.supplement.merge_by_folds`): a pair of the supplement
    replaces the store's when it has more successful folds (the store's has none: it is added),
    and a supplement of other data is refused. Only the experiment's models are taken. The
    supplement's ``source`` (if it has one, and it is not ``records``) is kept, else it is
    ``path``'s name as given.

    Raises
    ------
    ValueError
        If the file lacks a column of :data:`COLUMNS`, or a dataset has another number of rows in it
        than in the store (not the same data).
    """
    sup = pd.read_csv(path)
    lacking = [c for c in COLUMNS if c not in sup]
    if lacking:
        raise ValueError(f"{path} is not a summary.csv of this script: no column {', '.join(lacking)}")
    sup = sup[sup["model"].isin(models)]
    check_same_data(s, sup)
    keep = COLUMNS + [CPU, SOURCE] + ([PARAMS] if PARAMS in sup else [])
    out = _flags(merge_by_folds(s, sup, str(path)), min_folds, big_threshold).reindex(columns=keep)
    out[["big", "complete"]] = out[["big", "complete"]].astype(bool)
    return out.sort_values(["big", "dataset", "model"]).reset_index(drop=True)


def experiment_params(experiment: Path) -> dict[str, dict] | None:
    """Each model's parameters (``{label: params}``) as the experiment's plan gives them, or None for an experiment
    outside ``conf/experiment/``. The models do not depend on the datasets: one synthetic dataset keeps the plan off
    the data directory."""
    if experiment.resolve().parent != EXPERIMENT.parent.resolve():
        return None
    from bncbench.harness.app import plan

    return {m.label: m.params for m in plan([f"+experiment={experiment.stem}", "dataset.names=[synth-nb]"]).models}


def _json(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=json_default)


def named_params(s: pd.DataFrame, records: pd.DataFrame, params: dict[str, dict]) -> pd.DataFrame:
    """``s`` with a :data:`PARAMS` column, each model's parameters from the experiment, as a report's summary names
    them: so ``python -m bncbench report STORE --supplement summary.csv`` can take its pairs (the report selects
    models by their parameters, not their labels).

    Raises
    ------
    ValueError
        If the store's records of a model, or the supplement's row of one, name other parameters than the
        experiment's (not the experiment's model under that label).
    """
    want = {label: _json(p) for label, p in params.items()}
    found = [(label, f"the store's records of {label}", _json(p)) for label, p in model_params(records).items()
             if label in want] if len(records) else []
    if PARAMS in s:
        found += [(m, f"the supplement's {m}", p) for m, p in zip(s["model"], s[PARAMS]) if isinstance(p, str)]
    for label, where, got in found:
        if json.loads(got) != json.loads(want[label]):  # parsed: 4 and 4.0 (an int column with gaps) are equal
            raise ValueError(f"{where} name other parameters than the experiment's: {got} against {want[label]}")
    return with_params(s.drop(columns=[PARAMS], errors="ignore"), params)


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
    c = s[s["complete"]]
    stored = set(map(tuple, c.loc[c[SOURCE] == RECORDS, ["dataset", "model"]].to_numpy()))
    per = pair_iterations(records, CONVERGENCE_PAIRS) if len(records) else pd.DataFrame(columns=PAIR_COLUMNS)
    keep = [((d, w) in stored) and ((d, o) in stored)
            for d, w, o in zip(per["dataset"], per["w_model"], per["other_model"])]
    frames = [per[keep]]
    # a pair with a supplied side: the summary's means (both models have all their folds)
    means = c.set_index(["dataset", "model"])
    for w, o in CONVERGENCE_PAIRS:
        for d in sorted(set(c.loc[c["model"] == w, "dataset"]) & set(c.loc[c["model"] == o, "dataset"])):
            if (d, w) in stored and (d, o) in stored:
                continue
            a, b = means.loc[(d, w)], means.loc[(d, o)]
            frames.append(pd.DataFrame([{"dataset": d, "n_iter_w": a["n_iter"], "n_iter_other": b["n_iter"],
                                         "train_time_w": a["train_time"], "train_time_other": b["train_time"],
                                         "n_folds": int(min(a["n_ok"], b["n_ok"])), "w_model": w, "other_model": o}]))
    order = {p: i for i, p in enumerate(CONVERGENCE_PAIRS)}
    per = pd.concat([f for f in frames if len(f)], ignore_index=True)
    per = per.assign(_o=[order[(w, o)] for w, o in zip(per["w_model"], per["other_model"])])
    per = per.sort_values(["_o", "dataset"]).drop(columns="_o").reset_index(drop=True)
    per = per[list(PAIR_COLUMNS) + [col for col in per if col not in PAIR_COLUMNS]]
    summ = pair_iterations_summary(per, subsets)
    summ["iter_p"] = [sign_test(int(a), int(b)) for a, b in zip(summ["iter_fewer"], summ["iter_more"])]
    summ["time_p"] = [sign_test(int(a), int(b)) for a, b in zip(summ["time_less"], summ["time_more"])]
    return per, summ


def folds(records: pd.DataFrame) -> pd.DataFrame:
    """The store's records one row per fold (:data:`FOLD_COLUMNS`), sorted by dataset, model, round and fold."""
    out = records.reindex(columns=FOLD_COLUMNS)  # no store (an empty frame): the header alone
    return out.sort_values(["dataset", "model", "round", "fold"], kind="stable").reset_index(drop=True)


def _tables_with_big(wdl: pd.DataFrame) -> set[str]:
    """The report tables some pair of which has a Big dataset: the others' All block is their Little block, and is
    left out of ``<table>.tex`` and ``tables.md``."""
    return set(wdl.loc[wdl["subset"] == "Big", "table"])


def latex(wdl: pd.DataFrame) -> dict[str, str]:
    """Each report table's W-D-L as a LaTeX tabular (``bncbench report``'s layout: a W-D-L and a p column per pair,
    a block per subset, p <= 0.05 in bold), keyed by file name; a table's All block is left out while none of its
    pairs has a Big dataset (:func:`_tables_with_big`), as in ``tables.md``."""
    out, with_big = {}, _tables_with_big(wdl)
    for name, g in wdl.groupby("table", sort=False):
        g = g if name in with_big else g[g["subset"] != "All"]
        counted = "; ".join(
            f"{a} vs {b}: " + ", ".join(f"{n} {sub}" for sub, n in h.groupby("subset", sort=False)["n"].max().items())
            for (a, b), h in g.groupby(["model_a", "model_b"], sort=False))
        comment = (f"{name} of the zaidi_dbl rerun with the authors' per-row penalty (reg=rows), written by\n"
                   f"docs/reproductions/zaidi_dbl_rerun_tables.py: wins/draws/losses of the first model (a win: a\n"
                   f"lower mean), two-tailed sign test. Datasets counted: {counted}.")
        out[f"{name}.tex"] = wdl_latex(g.drop(columns=["table"]), caption_comment=comment)
    out["paper_vs_ours.tex"] = paper_vs_ours_latex(wdl)
    return out


def convergence_latex(conv: pd.DataFrame) -> str:
    """§6.3's comparison (``convergence_summary.csv``) as a LaTeX tabular (booktabs): per pair and subset, on how many
    datasets DBLⁿ needs fewer / as many / more iterations than LRⁿ and less / more time, the sign tests (p <= 0.05
    in bold) and the geometric means of the ratios."""
    lines = ["% Section 6.3 of the deep-broad paper (Zaidi et al.): DBL^n against LR^n in the zaidi_dbl rerun with the",
             "% authors' per-row penalty (reg=rows), written by docs/reproductions/zaidi_dbl_rerun_tables.py over the",
             "% datasets where both have every fold; sign test of fewer against more, p <= 0.05 in bold.",
             "% needs \\usepackage{booktabs}",
             "\\begin{tabular}{llrrrrrrr}", "\\toprule",
             " & & & \\multicolumn{3}{c}{iterations} & \\multicolumn{3}{c}{training time} \\\\",
             "\\cmidrule(lr){4-6}\\cmidrule(lr){7-9}",
             "Pair & Datasets & $n$ & fewer/equal/more & $p$ & DBL/LR & less/more & $p$ & DBL/LR \\\\",
             "\\midrule"]
    if not (conv["subset"] == "Big").any():  # All is Little while no Big dataset is complete
        conv = conv[conv["subset"] != "All"]
    for r in conv.itertuples():
        it_p, time_p = float(r.iter_p), float(r.time_p)
        lines.append(" & ".join([f"{tex_label(r.w_model)} vs {tex_label(r.other_model)}", r.subset, str(r.n_datasets),
                                 f"{r.iter_fewer}/{r.iter_equal}/{r.iter_more}", _tex_p(format_p(it_p), it_p <= 0.05),
                                 f"{r.iter_ratio_geomean:.3f}", f"{r.time_less}/{r.time_more}",
                                 _tex_p(format_p(time_p), time_p <= 0.05), f"{r.time_ratio_geomean:.3f}"])
                     + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _tex_p(text: str, bold: bool) -> str:
    """A printed p as a LaTeX cell: ``<`` in math mode, bold where significant."""
    text = text.replace("<", "$<$")
    return f"\\textbf{{{text}}}" if bold else text


def _significant(p) -> bool:
    """A p as the paper prints it (``<0.001`` or a number) or as ours computes it: at most 0.05."""
    return p == "<0.001" or float(p) <= 0.05


def paper_vs_ours_latex(wdl: pd.DataFrame) -> str:
    """Tables 2-4's cells, the paper's W-D-L and p beside ours, a block per subset: a LaTeX tabular (booktabs)."""
    rows = wdl[wdl["paper_wins"].notna()]
    lines = ["% Tables 2-4 of the deep-broad paper (Zaidi et al.) beside the zaidi_dbl rerun with the authors' per-row",
             "% penalty (reg=rows), written by docs/reproductions/zaidi_dbl_rerun_tables.py: wins/draws/losses of the",
             "% first model (a win: a lower mean), two-tailed sign test, p <= 0.05 in bold; the paper's p as printed.",
             "% needs \\usepackage{booktabs}",
             "\\begin{tabular}{lllrrrr}", "\\toprule",
             " & & & \\multicolumn{2}{c}{paper} & \\multicolumn{2}{c}{ours} \\\\",
             "\\cmidrule(lr){4-5}\\cmidrule(lr){6-7}",
             "Table & Pair & Metric & W--D--L & $p$ & W--D--L & $p$ \\\\"]
    for subset, g in rows.groupby("subset", sort=False):
        lines += ["\\midrule", f"\\multicolumn{{7}}{{l}}{{\\emph{{{SUBSET_TITLES[subset]}}}}} \\\\"]
        for r in g.itertuples():
            cells = [r.table.removeprefix("table"), f"{tex_label(r.model_a)} vs {tex_label(r.model_b)}",
                     metric_name(r.metric),
                     f"{int(r.paper_wins)}/{int(r.paper_draws)}/{int(r.paper_losses)}",
                     _tex_p(str(r.paper_p), _significant(r.paper_p)),
                     f"{r.wins}/{r.draws}/{r.losses}", _tex_p(format_p(float(r.p)), bool(r.significant))]
            lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def p_text(p) -> str:
    """A sign test's p as the tables print it (``<0.001``, else three decimals); the paper's printed p as it is."""
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
        sig = _significant(r.paper_p)
        pap = f"{int(r.paper_wins)}/{int(r.paper_draws)}/{int(r.paper_losses)} ({r.paper_p})"
        ours = f"{r.wins}/{r.draws}/{r.losses} ({p_text(r.p)})"
        out.append(f"| {r.table} | {r.model_a} vs {r.model_b} | {r.subset} | {r.metric} | "
                   f"{f'**{pap}**' if sig else pap} | {f'**{ours}**' if r.significant else ours} |")
    with_big = _tables_with_big(wdl)
    for (table, subset), g in wdl.groupby(["table", "subset"], sort=False):
        if subset == "All" and table not in with_big:
            continue                                      # All = Little while no pair of the table has a Big dataset
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
                c = f"{r.wins}/{r.draws}/{r.losses} ({p_text(r.p)})"
                cells.append(f"**{c}**" if r.significant else c)
            out.append(f"| {a} vs {b} | " + " | ".join(cells) + " |")
    out += ["", "## W-D-L (first model's wins: lower mean; sign test p; paper's cell where it has one)", "",
            "| table | pair | subset | metric | ours | paper |", "|---|---|---|---|---|---|"]
    for r in wdl.itertuples():
        ours = f"{r.wins}/{r.draws}/{r.losses} ({p_text(r.p)})"
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
                   f"/ {r.iter_more} ({p_text(r.iter_p)}) | {r.iter_ratio_geomean:.3f} | {r.time_less} / {r.time_more} "
                   f"({p_text(r.time_p)}) | {r.time_ratio_geomean:.3f} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path, nargs="?", help="the zaidi_dbl results directory (records/ under it); read "
                    "only; none: the supplement alone")
    ap.add_argument("--supplement", type=Path, action="append", default=[],
                    help="an earlier summary.csv of this script: the pairs the store lacks (may be repeated)")
    ap.add_argument("--out", type=Path, default=OUT,
                    help=f"where the CSVs go (default {OUT.relative_to(HERE.parents[1])})")
    ap.add_argument("--experiment", type=Path, default=EXPERIMENT, help="the experiment YAML (its report tables)")
    ap.add_argument("--min-folds", type=int, default=10, help="folds a (dataset, model) needs to count (default 10)")
    ap.add_argument("--big-threshold", type=int, default=100_000, help="Big: more rows than this (the paper's)")
    args = ap.parse_args(argv)
    if args.store is None and not args.supplement:
        print("error: give a store, a --supplement or both", file=sys.stderr)
        return 2
    if args.store is not None and not (args.store / "records").is_dir():
        print(f"error: no records/ under {args.store}", file=sys.stderr)
        return 2
    for path in args.supplement:
        if not path.is_file():
            print(f"error: no such file: {path}", file=sys.stderr)
            return 2
    cfg = OmegaConf.to_container(OmegaConf.load(args.experiment), resolve=True)
    models = [m["label"] for m in cfg["models"]]
    tables = [(t["name"], [tuple(p.split(":")) for p in t["pairs"]]) for t in cfg["report"]["tables"]]
    records = load_results(args.store) if args.store is not None else pd.DataFrame()
    if len(records):
        records = records[records["model"].isin(models)]
    s = complete_summary(records, args.min_folds, args.big_threshold)
    for path in args.supplement:
        try:
            s = supplement(s, path, models, args.min_folds, args.big_threshold)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    params = experiment_params(args.experiment)
    if params is not None:
        try:
            s = named_params(s, records, params)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
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
    folds(records).to_csv(args.out / "folds.csv", index=False)
    for name, tex in latex(wdl).items():
        (args.out / name).write_text(tex)
    (args.out / "convergence.tex").write_text(convergence_latex(conv))
    md = markdown(cov, wdl, t56, conv)
    (args.out / "tables.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
