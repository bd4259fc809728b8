"""The sections of a report, one function each, in the order of ``index.md``.

Each ``_<name>_section`` function takes the (already filtered) records and/or
summary, the :class:`~bncbench.report.config.ReportConfig` and the report's
writer, writes its tables through the writer, queues its figures on it, and
returns the :class:`Section` that :func:`bncbench.report.build.report_from_frames`
lists in the index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from bncbench.harness import provenance
from bncbench.harness.protocol import TIME_METRICS
from bncbench.data.dataset import BIG_THRESHOLD
from bncbench.report import tabulate as T
from bncbench.report.config import GroupSpec, ReportConfig
from bncbench.report.slugs import slug
from bncbench.report.supplement import supplied_note
from bncbench.report.stats import (
    DRAW_ATOL,
    DRAW_RTOL,
    friedman,
    geometric_mean_ratios,
    incomplete,
    metric_matrix,
    metric_name,
    subset_datasets,
    wdl_table,
    winloss_data,
)

if TYPE_CHECKING:
    from bncbench.report.build import _Writer


@dataclass
class Section:
    """One section of the report's index.

    Attributes
    ----------
    title : str
        The heading.
    items : list of tuple
        In order: ``("text", markdown)``, ``("links", text, {fmt: relpath})``,
        ``("table", markdown, {fmt: relpath})`` or ``("figure", caption, {fmt: relpath})``.
    """
    title: str
    items: list = field(default_factory=list)  # ("text", str) | ("table", md, {fmt: relpath}) | ("figure", caption, {fmt: relpath})


def frame_table(w, name: str, frame: pd.DataFrame) -> tuple:
    """A section's table item for ``frame``: its Markdown, written as ``tables/<name>.md`` and ``.csv``.

    Parameters
    ----------
    w : _Writer
        The report's writer.
    name : str
        The file name without directory and suffix.
    frame : pandas.DataFrame
        The table.

    Returns
    -------
    tuple
        ``("table", markdown, {"md": path, "csv": path})``.
    """
    md = T.frame_markdown(frame, "{:.4g}")
    return ("table", md, {"md": w.text(f"tables/{name}.md", md),
                          "csv": w.text(f"tables/{name}.csv", frame.to_csv(index=False, float_format="%.10g"))})


def _holdout_note(summary: pd.DataFrame, metrics) -> list:
    """The line that stands where bias and variance would appear for datasets evaluated on a given split."""
    from bncbench.report.summary import HOLDOUT_NOTE

    shown = [m for m in ("bias", "variance") if m in set(metrics)]
    if not shown or "protocol" not in summary:
        return []
    names = list(dict.fromkeys(summary.loc[summary["protocol"] == "holdout", "dataset"]))
    if not names:
        return []
    what = " and ".join(metric_name(m).lower() for m in shown)
    return [("text", f"{what.capitalize()} of {', '.join(map(T.md_escape, names))}: {HOLDOUT_NOTE}; "
                     f"{'it is' if len(names) == 1 else 'they are'} left out of the {what} comparisons.")]


def _split_metrics(cfg: ReportConfig) -> tuple[list, list]:
    """The accuracy metrics of the report, and its time metrics (``train_time`` if none)."""
    time = [m for m in cfg.metrics if m in TIME_METRICS]
    return [m for m in cfg.metrics if m not in TIME_METRICS], time or ["train_time"]


# ------------------------------------------------------------------ overview
def _overview_section(records: pd.DataFrame, summary: pd.DataFrame, name: str, source: str,
                      cfg: ReportConfig) -> Section:
    """Counts of datasets, models and tasks, the draw rule, the source, and the failed tasks."""
    n_failed = int((records["status"] != "ok").sum())
    sec = Section("Overview")
    sec.items.append(("text", (
        f"Experiment **{T.md_escape(name)}**: {summary['dataset'].nunique()} datasets "
        f"({len(subset_datasets(summary, 'Big'))} Big, > {BIG_THRESHOLD if cfg.big_threshold is None else cfg.big_threshold:,} instances), "
        f"{_models_count(records, summary)}, {_tasks(len(records))} ({n_failed} failed). "
        f"Per-dataset values are means over the folds of every round; a (dataset, model) with a failed task is "
        f"left out of every comparison. Lower is better for every metric. "
        f"Draw tolerance: |a - b| <= {DRAW_ATOL:g} + {DRAW_RTOL:g} max(|a|, |b|). "
        f"Source: {source}. [summary.csv](summary.csv)")))
    if "protocol" in summary and (summary["protocol"] == "holdout").any():
        names = list(dict.fromkeys(summary.loc[summary["protocol"] == "holdout", "dataset"]))
        sec.items.append(("text", f"Evaluated once on their given train/test split (holdout protocol, one fold, "
                                  f"no bias and variance): {', '.join(map(T.md_escape, names))}."))
    if n_failed:
        bad = records[records["status"] != "ok"].groupby(["dataset", "model"]).size()
        sec.items.append(("text", "Failed tasks: " + ", ".join(f"{d} / {T.md_label(m)} ({k})" for (d, m), k in bad.items())))
    supplied = supplied_note(summary)
    if supplied:
        sec.items.append(("text", "Supplied: " + T.md_escape(supplied)))
    sec.items += _fold_notes(summary)
    sec.items += _environment_notes(records)
    return sec


def _models_count(records: pd.DataFrame, summary: pd.DataFrame) -> str:
    """"13 models", or "13 models (1 with records)" when a supplement gave the others."""
    n, k = summary["model"].nunique(), records["model"].nunique()
    return f"{n} models" + (f" ({k} with records)" if k != n else "")


def _tasks(k: int) -> str:
    return f"{k} task" + ("" if k == 1 else "s")


def _environment_notes(records: pd.DataFrame) -> list:
    """A line naming the environments the records were computed in, with their task counts.

    With several environments, what all the recorded tasks share is named once, first, and each environment
    then by what sets it apart (commit, cpu, ...), so a store computed over many commits stays readable.
    """
    cols = [f"env.{k}" for k in provenance.KEYS if f"env.{k}" in records]
    if not cols:
        return []
    envs = records[cols].fillna("?").astype(str).value_counts(sort=True)
    unknown = tuple("?" for _ in cols)
    n_unknown = int(envs.get(unknown, 0))
    envs = envs[[key != unknown for key in envs.index]]

    def named(pairs):
        return ", ".join(f"{c[4:]} {_short_commit(v) if c == 'env.commit' else v}" for c, v in pairs if v != "?")

    shared = [i for i in range(len(cols))
              if len(envs) > 1 and {key[i] for key in envs.index} == {envs.index[0][i]} != {"?"}]
    parts = [(named((c, v) for i, (c, v) in enumerate(zip(cols, key)) if i not in shared) or "no other key recorded")
             + f" ({_tasks(k)})" for key, k in envs.items()]
    if shared:
        n = int(envs.sum())
        common = named((cols[i], envs.index[0][i]) for i in shared)
        parts[0] = f"{common} (all {n}{' recorded' if n_unknown else ''} tasks), and " + parts[0]
    if n_unknown:
        parts.append(f"not recorded ({_tasks(n_unknown)}, written before records named it)")
    return [("text", "Computed with: " + "; ".join(T.md_escape(p) for p in parts) + ".")]


def _short_commit(commit: str) -> str:
    """A commit's first 12 hex digits, keeping its :data:`~bncbench.harness.provenance.DIRTY` mark."""
    dirty = commit.endswith(provenance.DIRTY)
    return commit[:12] + (provenance.DIRTY if dirty else "")


def _fold_notes(summary: pd.DataFrame) -> list:
    """Lines naming the datasets run with fewer folds than the others, and the incomplete (dataset, model)s."""
    if "n_ok" not in summary or summary.empty:
        return []
    cv = summary[summary["protocol"] != "holdout"] if "protocol" in summary else summary
    per_ds = cv["n_ok"].fillna(0).groupby(cv["dataset"]).max()
    items = []
    short = per_ds[per_ds < per_ds.max()]
    if len(short):
        items.append(("text", "Evaluated on fewer folds than the other datasets (every model on the same folds; "
                              "bias and variance are computed only from every round of the protocol): " + ", ".join(
                                  f"{T.md_escape(d)} ({int(k)} of {int(per_ds.max())})" for d, k in short.items()) + "."))
    inc = summary[incomplete(summary) & (summary["n_failed"].fillna(0) == 0 if "n_failed" in summary else True)]
    if len(inc):
        items.append(("text", "Incomplete, left out of every comparison (fewer folds than the dataset's other models): "
                              + ", ".join(f"{T.md_escape(r.dataset)} / {T.md_label(r.model)} ({int(r.n_ok)} of "
                                          f"{int(per_ds.get(r.dataset, r.n_ok))})" for r in inc.itertuples()) + "."))
    return items


# ------------------------------------------------------------------ W-D-L tables and win/loss plots
def _wdl_section(summary: pd.DataFrame, cfg: ReportConfig, w: _Writer, name: str) -> Section:
    """The W-D-L tables with sign tests, one per ``cfg.tables`` entry."""
    sec = Section("Win-draw-loss tables")
    sec.items += _holdout_note(summary, [m for spec in cfg.tables for m in spec.metrics])
    for spec in cfg.tables:
        tab = wdl_table(summary, spec.pairs, spec.metrics, subsets=cfg.subsets)
        links = {
            "tex": w.text(f"tables/{spec.name}.tex", T.wdl_latex(tab, caption_comment=f"W-D-L table '{spec.name}' of {name}")),
            "md": w.text(f"tables/{spec.name}.md", T.wdl_markdown(tab)),
            "csv": w.text(f"tables/{spec.name}.csv", T.wdl_csv(tab)),
        }
        sec.items.append(("table", f"**{T.md_escape(spec.name)}**\n\n" + T.wdl_markdown(tab), links))
    return sec


def _winloss_section(summary: pd.DataFrame, cfg: ReportConfig, w: _Writer, name: str) -> Section:
    """The win/loss plots of ``cfg.winloss_plots`` and the W-D-L counts behind them."""
    sec = Section("Win-loss plots")
    sec.items.append(("text", (
        "Each curve is a series of pairs A:B, one per x position; the plot shows A's wins minus its losses "
        "over the datasets where both models have a result (draws, by the W-D-L tables' rule, are ignored; "
        "`y: both` plots wins and losses instead). The tables give every W/D/L count.")))
    sec.items += _holdout_note(summary, [m for spec in cfg.winloss_plots for m in spec.metrics])
    for spec in cfg.winloss_plots:
        data = winloss_data(summary, spec.series, spec.metrics, x=spec.x, subsets=cfg.subsets)
        comment = f"win/loss plot '{spec.name}' of {name}" + (f": {spec.title}" if spec.title else "")
        links = {
            "tex": w.text(f"tables/{spec.name}.tex", T.winloss_latex(data, caption_comment=comment)),
            "md": w.text(f"tables/{spec.name}.md", T.winloss_markdown(data)),
            "csv": w.text(f"tables/{spec.name}.csv", T.wdl_csv(data)),
        }
        if cfg.figures:
            what = "wins (solid) and losses (dashed)" if spec.y == "both" else "wins - losses (draws ignored)"
            cap = (f"{spec.name}: {spec.title + '; ' if spec.title else ''}y = {what} of the first model of each "
                   f"pair; curves: {', '.join(spec.series)}")
            sec.items.append(("figure", cap, w.figure(f"figures/{spec.name}", "winloss_figure", data, title=spec.title,
                                                      y=spec.y, xlabel=spec.xlabel)))
        sec.items.append(("table", f"**{T.md_escape(spec.name)}**\n\n" + T.winloss_markdown(data), links))
    return sec


# ------------------------------------------------------------------ geometric means and scatter plots
def _geomean_refs(g: GroupSpec) -> list:
    """``[(reference, models)]`` of a group: its reference, then its x model against the non-reference models."""
    refs = [(g.reference, list(g.models))]
    if g.x and g.x != g.reference and len([m for m in g.models if m != g.reference]) >= 2:
        refs.append((g.x, [m for m in g.models if m != g.reference]))
    return refs


def _geomean_frame(summary: pd.DataFrame, cfg: ReportConfig) -> pd.DataFrame:
    """Geometric-mean ratios of every group, reference, subset (All / Big) and metric."""
    acc_metrics, time_metrics = _split_metrics(cfg)
    rows = []
    for g in cfg.groups:
        for ref, ms in _geomean_refs(g):
            for subset in cfg.subsets:
                dsets = subset_datasets(summary, subset)
                if not dsets:
                    continue
                for metric in [*acc_metrics, *time_metrics]:
                    r = geometric_mean_ratios(summary, metric, ms, ref, datasets=dsets)
                    for m, v in r["ratios"].items():
                        rows.append({"group": g.name, "reference": ref, "subset": subset, "metric": metric,
                                     "model": m, "ratio": v, "n_datasets": r["n"], "n_dropped": len(r["dropped"])})
    return pd.DataFrame(rows, columns=["group", "reference", "subset", "metric", "model", "ratio", "n_datasets", "n_dropped"])


def _geomean_figures(summary: pd.DataFrame, cfg: ReportConfig, g: GroupSpec, w: _Writer) -> list:
    """The figure items of a group: accuracy and time relative to its reference, time relative to its x model."""
    from bncbench.report import figures as F

    acc_metrics, time_metrics = _split_metrics(cfg)
    items = []
    if acc_metrics:
        items.append(("figure", f"{g.name}: {', '.join(metric_name(m) for m in acc_metrics)} relative to {g.reference}",
                      w.figure(f"figures/geomean_{g.name}", "geomean_figure", summary, g.models, g.reference,
                               acc_metrics, subsets=cfg.subsets,
                               title=f"Geometric means relative to {F.display_label(g.reference)}")))
    items.append(("figure", f"{g.name}: time relative to {g.reference}",
                  w.figure(f"figures/geomean_time_{g.name}", "geomean_figure", summary, g.models, g.reference,
                           time_metrics, log=True, subsets=cfg.subsets,
                           title=f"Time relative to {F.display_label(g.reference)}")))
    refs = _geomean_refs(g)
    if len(refs) > 1:
        ref, ms = refs[1]
        items.append(("figure", f"{g.name}: time relative to {ref}",
                      w.figure(f"figures/geomean_time_{g.name}_vs_{slug(ref)}", "geomean_figure", summary, ms,
                               ref, time_metrics, log=True, subsets=cfg.subsets,
                               title=f"Time relative to {F.display_label(ref)}")))
    return items


def _geomean_section(summary: pd.DataFrame, cfg: ReportConfig, w: _Writer) -> Section:
    """The geometric-mean table and, with figures, each group's accuracy and time bar charts."""
    sec = Section("Geometric means (normalized to a reference model)")
    if cfg.figures:
        for g in cfg.groups:
            sec.items += _geomean_figures(summary, cfg, g, w)
    gm = _geomean_frame(summary, cfg)
    links = {"md": w.text("tables/geomean.md", T.frame_markdown(gm)), "csv": w.text("tables/geomean.csv", gm.to_csv(index=False, float_format="%.6g"))}
    sec.items.insert(0, ("links", "Geometric means of metric(model) / metric(reference) over the datasets where every "
                         "model of the group has a positive mean (n_dropped: datasets left out, e.g. a 0-1 loss of 0)", links))
    sec.items[1:1] = _holdout_note(summary, _split_metrics(cfg)[0])
    return sec


def _scatter_section(summary: pd.DataFrame, cfg: ReportConfig, w: _Writer) -> Section:
    """One scatter plot per group: its x model against the others (figures only)."""
    from bncbench.report import figures as F

    time_metrics = _split_metrics(cfg)[1]
    sec = Section("Comparative scatter plots")
    for g in cfg.groups:
        x = g.x or g.reference
        ys = [m for m in g.models if m not in (x, g.reference)] or [m for m in g.models if m != x]
        if not ys:
            continue
        ms = [m for m in ["zero_one", "rmse", *time_metrics[:1]] if m in summary]
        sec.items.append(("figure", f"{g.name}: {x} (x) vs {', '.join(ys)}",
                          w.figure(f"figures/scatter_{g.name}", "scatter_figure", summary, x, ys, ms,
                                   subsets=cfg.subsets, title=f"{F.display_label(x)} on x; above the diagonal: {F.display_label(x)} wins")))
    return sec


# ------------------------------------------------------------------ convergence
def _convergence_section(records: pd.DataFrame, summary: pd.DataFrame, cfg: ReportConfig, w: _Writer, log) -> Section:
    """NLL curves, §7.4 iteration-gap histograms and the gap table of each optimized family."""
    from bncbench.report import convergence as C

    sec = Section("Convergence (training NLL)")
    sec.items.append(("text", (
        f"Curves: element-wise median over folds of the training NLL, iteration 1 = before optimization, log x axis. "
        f"Histograms (§7.4): per dataset, the iterations the other parameterization needs after iteration "
        f"{cfg.convergence_at} to reach the NLL the weighted one reached at iteration {cfg.convergence_at} (positive), "
        f"or minus the iterations the weighted one needs to reach the other's (negative); computed per fold on the "
        f"same training data and aggregated over folds by the {cfg.convergence_aggregate}. A gap is censored when the "
        f"lagging model stopped before reaching the target (value = iterations it ran after iteration "
        f"{cfg.convergence_at} + 1).")))
    has_trace = "trace" in records
    by_size = summary.drop_duplicates("dataset").sort_values("n_instances", ascending=False)
    gap_rows = []
    for fam in cfg.convergence_families:
        fam_models = [fam.w, *fam.others]
        sel = records[records["model"].isin(fam_models) & (records["status"] == "ok")]
        traced = set(sel.loc[sel["trace"].map(lambda t: isinstance(t, list) and len(t) > 0), "dataset"]) if has_trace else set()
        if cfg.convergence_datasets:
            dsets = [d for d in cfg.convergence_datasets if d in traced]
            missing = [d for d in cfg.convergence_datasets if d not in traced]
            if missing:
                sec.items.append(("text", f"{T.md_label(fam.w)}: no traces for {', '.join(missing)}"))
        else:
            dsets = [d for d in by_size["dataset"] if d in traced][:4]
        if not traced:
            sec.items.append(("text", f"{T.md_label(fam.w)}: the records hold no optimization traces."))
            continue
        gaps = {}
        for other in fam.others:
            g = C.dataset_gaps(records, fam.w, other, at=cfg.convergence_at, aggregate=cfg.convergence_aggregate)
            gaps[other] = g
            for r in g.itertuples(index=False):
                gap_rows.append({"family": fam.name, "w_model": fam.w, "other_model": other, "dataset": r.dataset,
                                 "gap": r.gap, "censored": r.censored, "n_folds": r.n_folds})
        if cfg.figures:
            from bncbench.report import figures as F

            curves = {d: {m: C.median_trace(records, d, m) for m in fam_models} for d in dsets}
            sec.items.append(("figure", f"{fam.name}: NLL vs iteration on {', '.join(dsets) or 'no dataset'}",
                              w.figure(f"figures/convergence_{fam.name}", "convergence_figure", curves,
                                       title=f"Training NLL, {F.display_label(fam.w)} and "
                                             f"{', '.join(F.display_label(o) for o in fam.others)}")))
            sec.items.append(("figure", f"{fam.name}: iterations after {cfg.convergence_at} (§7.4 rule)",
                              w.figure(f"figures/convergence_hist_{fam.name}", "convergence_histogram", gaps,
                                       w_model=fam.w, at=cfg.convergence_at)))
    sec.items += _pair_convergence_items(records, summary, cfg, w, by_size)
    gdf = pd.DataFrame(gap_rows, columns=["family", "w_model", "other_model", "dataset", "gap", "censored", "n_folds"])
    if len(gdf):
        agg = (gdf.groupby(["family", "w_model", "other_model"], sort=False)
               .agg(n_datasets=("gap", "size"), mean_gap=("gap", "mean"), median_gap=("gap", "median"),
                    n_negative=("gap", lambda s: int((s < 0).sum())), n_censored=("censored", "sum"))
               .reset_index())
        links = {"md": w.text("tables/convergence_gaps.md", T.frame_markdown(agg)),
                 "csv": w.text("tables/convergence_gaps.csv", gdf.to_csv(index=False, float_format="%.6g"))}
        sec.items.insert(1, ("table", T.frame_markdown(agg), links))
    return sec


def _pair_convergence_items(records: pd.DataFrame, summary: pd.DataFrame, cfg: ReportConfig, w: _Writer,
                            by_size: pd.DataFrame) -> list:
    """Iterations and training time of each compared pair, per dataset (the deep-broad paper's
    Figs. 11-14), and with two or more ``report.convergence.pairs`` their NLL curves together (its Fig. 17)."""
    from bncbench.report import convergence as C

    pairs = [(fam.w, o) for fam in cfg.convergence_families for o in fam.others]
    table = C.pair_iterations(records, pairs)
    if not len(table):
        return []
    subsets = {s: subset_datasets(summary, s) for s in cfg.subsets}
    agg = C.pair_iterations_summary(table, {s: d for s, d in subsets.items() if d})
    links = {"md": w.text("tables/convergence_iterations.md", T.frame_markdown(agg)),
             "csv": w.text("tables/convergence_iterations.csv", table.to_csv(index=False, float_format="%.6g"))}
    items = [("table", "Iterations and training time, per pair and subset: datasets where the first model needs "
              "fewer / as many / more iterations (less / more time; CPU seconds too where the records have them) than "
              "the second, and geometric means of first / second (csv: the per-dataset means over the folds both "
              "ran)\n\n" + T.frame_markdown(agg), links)]
    if not cfg.figures:
        return items
    from bncbench.report import figures as F

    panels = {s: d for s, d in subsets.items() if d}
    items.append(("figure", "Iterations of each pair, one point per dataset (above the diagonal: the first model "
                  "needs fewer)", w.figure("figures/convergence_scatter_iterations", "pair_scatter_figure", table,
                                          pairs, "n_iter", panels, title="Iterations to converge")))
    items.append(("figure", "Training time of each pair, one point per dataset (above the diagonal: the first model "
                  "is faster)", w.figure("figures/convergence_scatter_time", "pair_scatter_figure", table, pairs,
                                        "train_time", panels, title="Training time (s)")))
    if len(cfg.convergence_pairs) >= 2:
        models = list(dict.fromkeys(m for p in cfg.convergence_pairs for m in p))
        ok = records[records["model"].isin(models) & (records["status"] == "ok")]
        traced = ok[ok["trace"].map(lambda t: isinstance(t, list) and len(t) > 0)] if "trace" in ok else ok.iloc[:0]
        every = [d for d, g in traced.groupby("dataset") if set(models) <= set(g["model"])]
        dsets = ([d for d in cfg.convergence_datasets if d in every] if cfg.convergence_datasets
                 else [d for d in by_size["dataset"] if d in every][:4])
        if dsets:
            colors = ["tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple", "tab:brown"]
            styles = {m: (colors[i % len(colors)], "-" if j == 0 else "--")
                      for i, p in enumerate(cfg.convergence_pairs) for j, m in enumerate(p)}
            curves = {d: {m: C.median_trace(records, d, m) for m in models} for d in dsets}
            items.append(("figure", f"All pairs' NLL vs iteration on {', '.join(dsets)}",
                          w.figure("figures/convergence_pairs", "convergence_figure", curves, styles=styles,
                                   title="Training NLL, " + ", ".join(" vs ".join(F.display_label(m) for m in p)
                                                                      for p in cfg.convergence_pairs))))
    return items


# ------------------------------------------------------------------ Friedman / Nemenyi and per-dataset tables
def _friedman_section(summary: pd.DataFrame, cfg: ReportConfig, w: _Writer) -> Section:
    """Friedman tests with average ranks and Nemenyi CDs, and their critical-difference diagrams."""
    sec = Section("Friedman test and Nemenyi critical differences")
    sec.items += _holdout_note(summary, cfg.friedman_metrics)
    fres = []
    metrics = cfg.friedman_metrics if len(cfg.friedman_models) >= 2 else []  # a test needs two models
    for metric in metrics:
        mat = metric_matrix(summary, metric, models=cfg.friedman_models)
        if mat.dropna().shape[0] < 2:
            sec.items.append(("text", f"{metric_name(metric)}: fewer than two datasets with results for every model; no test."))
            continue
        r = friedman(mat, metric=metric)
        fres.append(r)
        if cfg.figures:
            sec.items.append(("figure", f"Critical-difference diagram, {metric_name(metric)}", w.figure(f"figures/cd_{metric}", "cd_diagram", r)))
    if fres:
        ff = T.friedman_frame(fres)
        links = {"tex": w.text("tables/friedman.tex", T.friedman_latex(fres)),
                 "md": w.text("tables/friedman.md", T.frame_markdown(ff)),
                 "csv": w.text("tables/friedman.csv", ff.to_csv(index=False, float_format="%.6g"))}
        sec.items.insert(0, ("table", T.frame_markdown(ff[["metric", "model", "avg_rank", "n_datasets", "chi2", "p", "cd"]]), links))
    return sec


def _per_dataset_section(records: pd.DataFrame, summary: pd.DataFrame, cfg: ReportConfig, w: _Writer) -> Section:
    """Mean ± std over folds per dataset, one table per metric and group (the appendix)."""
    sec = Section("Per-dataset results (appendix)")
    sec.items += _holdout_note(summary, cfg.per_dataset_metrics)
    for metric in cfg.per_dataset_metrics:
        for g in cfg.groups or []:
            frame = T.per_dataset_frame(records, summary, metric, g.models)
            base = f"tables/per_dataset_{metric}_{g.name}"
            links = {"tex": w.text(base + ".tex", T.per_dataset_latex(frame, metric, g.models)),
                     "md": w.text(base + ".md", T.per_dataset_markdown(frame, metric, g.models)),
                     "csv": w.text(base + ".csv", T.per_dataset_csv(frame))}
            sec.items.append(("links", f"{metric_name(metric)}, {g.name}", links))
    return sec


# ------------------------------------------------------------------ Feelders & Ivanovs' Table 2
def _thresholds_section(records: pd.DataFrame, cfg: ReportConfig, w: _Writer) -> Section:
    """Iterations and flops to the 5 % CLL threshold, scaled per dataset (Feelders & Ivanovs, Table 2; Fig. 3)."""
    from bncbench.report import thresholds as TH

    sec = Section("Convergence to the threshold (Feelders & Ivanovs, Table 2)")
    costs = TH.costs_to_threshold(records)
    sec.items.append(("text", (
        "Per dataset and training fold: CLL_ML the CLL every model starts from, CLL_max the largest CLL any model "
        f"reached, threshold t = CLL_max - {TH.BOUND:g} (CLL_max - CLL_ML); the iterations and the flops (§4-5 "
        "formulas, `flops_total` of the trace) of the first record with CLL >= t, median over the folds, divided by "
        "the row's smallest; last row: column means. Empty: never reached.")))
    raw = w.text("tables/threshold_costs.csv", costs.to_csv(index=False, float_format="%.10g"))
    for what in ("iterations", "flops"):
        order = [m for m in (cfg.models or []) if m in set(costs["model"])] or None  # report.models: column order
        tab = TH.scaled_table(costs, what, models=order)
        md = T.frame_markdown(tab.round(1).reset_index().rename(columns={"index": "dataset"}))
        links = {"md": w.text(f"tables/table2_{what}.md", md),
                 "csv": w.text(f"tables/table2_{what}.csv", tab.to_csv(float_format="%.6g")), "raw csv": raw}
        sec.items.append(("table", md, links))
    spread = (costs["cll_start"] - costs["cll_ml"]).abs().max() if len(costs) else 0.0
    sec.items.append(("text", f"Largest difference between a model's starting CLL and the row's CLL_ML: {spread:.3g}."))
    if cfg.figures:
        dsets = [d for d in (cfg.convergence_datasets or list(dict.fromkeys(costs["dataset"]))[:1])
                 if d in set(costs["dataset"])]
        for d in dsets:
            panels = {f"{d}: CLL vs iterations": TH.curves(records, d, "iter"),
                      f"{d}: CLL vs flops": TH.curves(records, d, "flops_total")}
            row = costs[(costs["dataset"] == d) & (costs["round"] == 0) & (costs["fold"] == 0)]
            ylim = None
            if len(row):
                lo, hi = float(row["cll_ml"].iloc[0]), float(row["cll_max"].iloc[0])
                ylim = (lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo))
            sec.items.append(("figure", f"{d}: training CLL of every model (round 0, fold 0; Fig. 3)",
                              w.figure(f"figures/threshold_curves_{slug(d)}", "xy_curves", panels,
                                       xlabel="iterations / flops", ylim=ylim,
                                       title=f"Convergence on {d} (training fold 0)")))
            zoom = {k: {m: (x, y) for m, (x, y) in v.items()} for k, v in panels.items()}
            if len(row):
                t, hi = float(row["threshold"].iloc[0]), float(row["cll_max"].iloc[0])
                sec.items.append(("figure", f"{d}: the same near the threshold (t = {t:.3f})",
                                  w.figure(f"figures/threshold_zoom_{slug(d)}", "xy_curves", zoom,
                                           xlabel="iterations / flops", logx=True,
                                           ylim=(t - 3 * (hi - t), hi + 0.5 * (hi - t)),
                                           title=f"Convergence on {d} near the 5 % threshold")))
    return sec
