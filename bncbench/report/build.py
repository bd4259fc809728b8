"""Build a report directory from an experiment's results.

Layout of ``reports/<name>/``::

    index.md, index.html          links to (and shows) every table and figure
    summary.csv                   per (dataset, model) means (bncbench.summary.summarize)
    tables/<wdl name>.{tex,md,csv}       W-D-L tables with sign tests (All / Big)
    tables/<win/loss plot name>.{tex,md,csv}   the W-D-L counts behind a win/loss plot
    tables/geomean.{md,csv}              geometric means normalized to each group's reference
    tables/friedman.{tex,md,csv}         Friedman test, average ranks, Nemenyi CD
    tables/per_dataset_<metric>_<group>.{tex,md,csv}   mean ± std over folds (appendix)
    tables/convergence_gaps.{md,csv}     §7.4 iteration gaps per dataset
    figures/*.{pdf,png}
"""

from __future__ import annotations

import html
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError
from bncbench.report import tables as T
from bncbench.report.config import ReportConfig, build_config, find_run_config, read_report_section
from bncbench.report.stats import (
    DRAW_ATOL,
    DRAW_RTOL,
    friedman,
    geometric_mean_ratios,
    metric_matrix,
    metric_name,
    subset_datasets,
    wdl_table,
    winloss_data,
)
from bncbench.store import atomic_write_bytes, load_results

TIME = ("train_time", "test_time")


@dataclass
class Section:
    title: str
    items: list = field(default_factory=list)  # ("text", str) | ("table", md, {fmt: relpath}) | ("figure", caption, {fmt: relpath})


@dataclass
class Report:
    out: Path
    config: ReportConfig
    sections: list
    files: list  # every written path

    def figures(self) -> list[Path]:
        return [p for p in self.files if p.suffix in (".pdf", ".png")]


class _Writer:
    def __init__(self, out: Path):
        self.out = out
        self.files: list[Path] = []
        self.jobs: list = []

    def text(self, rel: str, content: str) -> str:
        path = self.out / rel
        atomic_write_bytes(path, content.encode("utf-8"))
        self.files.append(path)
        return rel

    def figure(self, rel_base: str, fn: str, *args, **kwargs) -> dict:
        """Queue ``figures.<fn>(*args, **kwargs)`` saved as ``rel_base.{pdf,png}``; rendered by :meth:`render`."""
        from bncbench.report.figures import FORMATS

        self.jobs.append((rel_base, fn, args, kwargs))
        return {fmt: f"{rel_base}.{fmt}" for fmt in FORMATS}

    def render(self, n_jobs: int = 1) -> None:
        """Draw the queued figures, in ``n_jobs`` processes (matplotlib is the slow part of a report)."""
        jobs, self.jobs = self.jobs, []
        if not jobs:
            return
        if n_jobs == 1 or len(jobs) < 4:
            done = [_render_figure(str(self.out), *j) for j in jobs]
        else:
            from joblib import Parallel, delayed

            done = Parallel(n_jobs=n_jobs)(delayed(_render_figure)(str(self.out), *j) for j in jobs)
        for paths in done:
            self.files.extend(Path(p) for p in paths)


def _render_figure(out: str, rel_base: str, fn: str, args, kwargs) -> list[str]:
    from bncbench.report import figures as F

    fig = getattr(F, fn)(*args, **kwargs)
    return [str(p) for p in F.save(fig, Path(out) / rel_base)]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_").lower() or "x"


def make_report(results_dir, out_dir=None, *, overrides: dict | None = None, log=None) -> Report:
    """Tables, figures and index of the experiment in ``results_dir``; returns what was written."""
    t0 = time.perf_counter()
    log = log or (lambda msg: print(msg, file=sys.stderr))
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise BNCBenchError(f"results directory not found: {results_dir}")
    if not any(results_dir.glob("records/*/*/*.json")):
        raise BNCBenchError(f"no result records under {results_dir}/records (run the experiment first)")
    overrides = dict(overrides or {})
    cfg_override = overrides.pop("config", None)
    if cfg_override:
        cfg_path = Path(cfg_override)
        if not cfg_path.is_file():
            raise BNCBenchError(f"config file not found: {cfg_path}")
    else:
        cfg_path = find_run_config(results_dir)
    section, exp_name = read_report_section(cfg_path)
    name = exp_name or results_dir.resolve().name
    out = Path(out_dir) if out_dir else Path("reports") / name

    records = load_results(results_dir, with_trace=True)
    if overrides.get("models"):
        missing = [m for m in overrides["models"] if m not in set(records["model"])]
        if missing:
            raise BNCBenchError(f"model(s) not in the results: {', '.join(missing)}")
        records = records[records["model"].isin(overrides["models"])]
    elif section.get("models"):
        records = records[records["model"].isin(list(section["models"]))]
    from bncbench.summary import summarize

    summary = summarize(records.drop(columns=["trace"], errors="ignore"), correction=_read_correction(cfg_path))
    return report_from_frames(records, summary, out, section=section, name=name, overrides=overrides,
                              source=f"`{results_dir}`, config `{cfg_path if cfg_path else 'none (defaults)'}`",
                              log=log, t0=t0)


def report_from_frames(records: pd.DataFrame, summary: pd.DataFrame, out, *, section: dict | None = None,
                       name: str = "report", overrides: dict | None = None, source: str = "", log=None,
                       t0: float | None = None) -> Report:
    """The report of already loaded records (``load_results(..., with_trace=True)``) and their
    :func:`~bncbench.summary.summarize` table; what :func:`make_report` does after loading."""
    t0 = time.perf_counter() if t0 is None else t0
    log = log or (lambda msg: print(msg, file=sys.stderr))
    out = Path(out)
    if records.empty or summary.empty:
        raise BNCBenchError("no result records to report")
    models_all = list(dict.fromkeys(records["model"]))
    cfg = build_config(section or {}, name, models_all, overrides=overrides)
    if cfg.models:
        records = records[records["model"].isin(cfg.models)]
        summary = summary[summary["model"].isin(cfg.models)]
    models = list(dict.fromkeys(records["model"]))
    summary = summary.copy()
    summary["big"] = summary["big"].fillna(False).astype(bool) if "big" in summary else False
    w = _Writer(out)
    sections: list[Section] = []
    w.text("summary.csv", summary.to_csv(index=False, float_format="%.6g"))

    # ---- overview
    n_ds = summary["dataset"].nunique()
    n_big = len(subset_datasets(summary, "Big"))
    n_failed = int((records["status"] != "ok").sum())
    ov = Section("Overview")
    ov.items.append(("text", (
        f"Experiment **{T.md_escape(name)}**: {n_ds} datasets ({n_big} Big, > 10,000 instances), "
        f"{len(models)} models, {len(records)} tasks ({n_failed} failed). "
        f"Per-dataset values are means over the folds of every round; a (dataset, model) with a failed task is "
        f"left out of every comparison. Lower is better for every metric. "
        f"Draw tolerance: |a - b| <= {DRAW_ATOL:g} + {DRAW_RTOL:g} max(|a|, |b|). "
        f"Source: {source}. [summary.csv](summary.csv)")))
    if n_failed:
        bad = records[records["status"] != "ok"].groupby(["dataset", "model"]).size()
        ov.items.append(("text", "Failed tasks: " + ", ".join(f"{d} / {T.md_label(m)} ({k})" for (d, m), k in bad.items())))
    sections.append(ov)

    # ---- W-D-L
    sec = Section("Win-draw-loss tables")
    for spec in cfg.tables:
        tab = wdl_table(summary, spec.pairs, spec.metrics)
        links = {
            "tex": w.text(f"tables/{spec.name}.tex", T.wdl_latex(tab, caption_comment=f"W-D-L table '{spec.name}' of {name}")),
            "md": w.text(f"tables/{spec.name}.md", T.wdl_markdown(tab)),
            "csv": w.text(f"tables/{spec.name}.csv", T.wdl_csv(tab)),
        }
        sec.items.append(("table", f"**{T.md_escape(spec.name)}**\n\n" + T.wdl_markdown(tab), links))
    sections.append(sec)

    # ---- win/loss plots
    if cfg.winloss_plots:
        sections.append(_winloss_section(summary, cfg, w, name))

    # ---- geometric means
    sec = Section("Geometric means (normalized to a reference model)")
    acc_metrics = [m for m in cfg.metrics if m not in TIME]
    time_metrics = [m for m in cfg.metrics if m in TIME] or ["train_time"]
    gm_rows = []
    for g in cfg.groups:
        refs = [(g.reference, [m for m in g.models])]
        if g.x and g.x != g.reference and len([m for m in g.models if m != g.reference]) >= 2:
            refs.append((g.x, [m for m in g.models if m != g.reference]))
        for ref, ms in refs:
            for subset in ("All", "Big"):
                dsets = subset_datasets(summary, subset)
                if not dsets:
                    continue
                for metric in [*acc_metrics, *time_metrics]:
                    r = geometric_mean_ratios(summary, metric, ms, ref, datasets=dsets)
                    for m, v in r["ratios"].items():
                        gm_rows.append({"group": g.name, "reference": ref, "subset": subset, "metric": metric,
                                        "model": m, "ratio": v, "n_datasets": r["n"], "n_dropped": len(r["dropped"])})
        if not cfg.figures:
            continue
        from bncbench.report import figures as F

        if acc_metrics:
            sec.items.append(("figure", f"{g.name}: {', '.join(metric_name(m) for m in acc_metrics)} relative to {g.reference}",
                              w.figure(f"figures/geomean_{g.name}", "geomean_figure", summary, g.models, g.reference,
                                       acc_metrics, title=f"Geometric means relative to {F.display_label(g.reference)}")))
        sec.items.append(("figure", f"{g.name}: time relative to {g.reference}",
                          w.figure(f"figures/geomean_time_{g.name}", "geomean_figure", summary, g.models, g.reference,
                                   time_metrics, log=True, title=f"Time relative to {F.display_label(g.reference)}")))
        if len(refs) > 1:
            ref, ms = refs[1]
            sec.items.append(("figure", f"{g.name}: time relative to {ref}",
                              w.figure(f"figures/geomean_time_{g.name}_vs_{_slug(ref)}", "geomean_figure", summary, ms,
                                       ref, time_metrics, log=True, title=f"Time relative to {F.display_label(ref)}")))
    gm = pd.DataFrame(gm_rows, columns=["group", "reference", "subset", "metric", "model", "ratio", "n_datasets", "n_dropped"])
    links = {"md": w.text("tables/geomean.md", T.frame_markdown(gm)), "csv": w.text("tables/geomean.csv", gm.to_csv(index=False, float_format="%.6g"))}
    sec.items.insert(0, ("links", "Geometric means of metric(model) / metric(reference) over the datasets where every "
                         "model of the group has a positive mean (n_dropped: datasets left out, e.g. a 0-1 loss of 0)", links))
    sections.append(sec)

    # ---- scatter plots
    if cfg.figures:
        from bncbench.report import figures as F

        sec = Section("Comparative scatter plots")
        for g in cfg.groups:
            x = g.x or g.reference
            ys = [m for m in g.models if m not in (x, g.reference)] or [m for m in g.models if m != x]
            if not ys:
                continue
            ms = [m for m in ["zero_one", "rmse", *time_metrics[:1]] if m in summary]
            sec.items.append(("figure", f"{g.name}: {x} (x) vs {', '.join(ys)}",
                              w.figure(f"figures/scatter_{g.name}", "scatter_figure", summary, x, ys, ms,
                                       title=f"{F.display_label(x)} on x; above the diagonal: {F.display_label(x)} wins")))
        sections.append(sec)

    # ---- convergence
    if cfg.convergence_families:
        sections.append(_convergence_section(records, summary, cfg, w, log))

    # ---- Friedman
    sec = Section("Friedman test and Nemenyi critical differences")
    fres = []
    for metric in cfg.friedman_metrics:
        if len(cfg.friedman_models) < 2:
            break
        mat = metric_matrix(summary, metric, models=cfg.friedman_models)
        if mat.dropna().shape[0] < 2:
            sec.items.append(("text", f"{metric_name(metric)}: fewer than two datasets with results for every model; no test."))
            continue
        r = friedman(mat, metric=metric)
        fres.append(r)
        if cfg.figures:
            from bncbench.report import figures as F

            sec.items.append(("figure", f"Critical-difference diagram, {metric_name(metric)}", w.figure(f"figures/cd_{metric}", "cd_diagram", r)))
    if fres:
        ff = T.friedman_frame(fres)
        links = {"tex": w.text("tables/friedman.tex", T.friedman_latex(fres)),
                 "md": w.text("tables/friedman.md", T.frame_markdown(ff)),
                 "csv": w.text("tables/friedman.csv", ff.to_csv(index=False, float_format="%.6g"))}
        sec.items.insert(0, ("table", T.frame_markdown(ff[["metric", "model", "avg_rank", "n_datasets", "chi2", "p", "cd"]]), links))
    sections.append(sec)

    # ---- per-dataset tables
    sec = Section("Per-dataset results (appendix)")
    groups = cfg.groups or []
    for metric in cfg.per_dataset_metrics:
        for g in groups:
            frame = T.per_dataset_frame(records, summary, metric, g.models)
            base = f"tables/per_dataset_{metric}_{g.name}"
            links = {"tex": w.text(base + ".tex", T.per_dataset_latex(frame, metric, g.models)),
                     "md": w.text(base + ".md", T.per_dataset_markdown(frame, metric, g.models)),
                     "csv": w.text(base + ".csv", T.per_dataset_csv(frame))}
            sec.items.append(("links", f"{metric_name(metric)}, {g.name}", links))
    sections.append(sec)

    w.render(n_jobs=_n_jobs(overrides))
    _write_index(w, name, sections)
    log(f"bncbench: report of {name}: {len(w.files)} files in {out} ({time.perf_counter() - t0:.1f} s); open {out / 'index.html'}")
    return Report(out, cfg, sections, list(w.files))


def _winloss_section(summary, cfg, w: _Writer, name: str) -> Section:
    sec = Section("Win-loss plots")
    sec.items.append(("text", (
        "Each curve is a series of pairs A:B, one per x position; the plot shows A's wins minus its losses "
        "over the datasets where both models have a result (draws, by the W-D-L tables' rule, are ignored; "
        "`y: both` plots wins and losses instead). The tables give every W/D/L count.")))
    for spec in cfg.winloss_plots:
        data = winloss_data(summary, spec.series, spec.metrics, x=spec.x)
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


def _n_jobs(overrides) -> int:
    n = (overrides or {}).get("n_jobs")
    if n is None:
        n = min(4, os.cpu_count() or 1)
    n = int(n)
    if n == 0 or n < -1:
        raise BNCBenchError(f"n_jobs must be >= 1 or -1, got {n}")
    return n


def _read_correction(cfg_path) -> bool:
    if cfg_path is None:
        return False
    from omegaconf import OmegaConf

    try:
        return bool(OmegaConf.load(cfg_path).get("correction", False))
    except Exception:
        return False


def _convergence_section(records, summary, cfg, w: _Writer, log) -> Section:
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
                                       title=f"Training NLL, {F.display_label(fam.w)} and its d/e counterparts")))
            sec.items.append(("figure", f"{fam.name}: iterations after {cfg.convergence_at} (§7.4 rule)",
                              w.figure(f"figures/convergence_hist_{fam.name}", "convergence_histogram", gaps,
                                       w_model=fam.w, at=cfg.convergence_at)))
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


# ------------------------------------------------------------------ index
def _links_md(links: dict) -> str:
    return " · ".join(f"[{fmt}]({rel})" for fmt, rel in links.items())


def _write_index(w: _Writer, name: str, sections: list) -> None:
    md = [f"# Report: {T.md_escape(name)}", ""]
    body = [f"<h1>Report: {html.escape(name)}</h1>"]
    toc_md, toc_html = [], ["<ul>"]
    for i, s in enumerate(sections):
        anchor = f"s{i}"
        toc_md.append(f"- [{s.title}](#{_slug(s.title).replace('_', '-')})")
        toc_html.append(f'<li><a href="#{anchor}">{html.escape(s.title)}</a></li>')
    toc_html.append("</ul>")
    md += toc_md + [""]
    body += toc_html
    for i, s in enumerate(sections):
        md += [f"## {s.title}", ""]
        body.append(f'<h2 id="s{i}">{html.escape(s.title)}</h2>')
        for item in s.items:
            kind = item[0]
            if kind == "text":
                md += [item[1], ""]
                body.append(f"<p>{_md_inline_html(item[1])}</p>")
            elif kind == "links":
                md += [f"{item[1]}: {_links_md(item[2])}", ""]
                body.append(f"<p>{html.escape(item[1])}: {_links_html(item[2])}</p>")
            elif kind == "table":
                md += [item[1].rstrip(), "", f"Files: {_links_md(item[2])}", ""]
                body.append(_md_to_html(item[1]))
                body.append(f"<p>Files: {_links_html(item[2])}</p>")
            elif kind == "figure":
                cap, links = item[1], item[2]
                png = links.get("png")
                md += [f"![{cap}]({png})", "", f"*{T.md_escape(cap)}* — {_links_md(links)}", ""]
                body.append(f'<figure><a href="{html.escape(png)}"><img src="{html.escape(png)}" alt="{html.escape(cap)}" '
                            f'style="max-width:100%"></a><figcaption>{html.escape(cap)} — {_links_html(links)}'
                            f"</figcaption></figure>")
    w.text("index.md", "\n".join(md) + "\n")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Report: {html.escape(name)}</title><style>"
            "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
            "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
            "td:first-child,th:first-child{text-align:left}figure{margin:1.5em 0}"
            "</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    w.text("index.html", page)


def _links_html(links: dict) -> str:
    return " · ".join(f'<a href="{html.escape(rel)}">{html.escape(fmt)}</a>' for fmt, rel in links.items())


def _md_inline_html(text: str) -> str:
    s = html.escape(text, quote=False)
    s = re.sub(r"&lt;(/?)sup&gt;", r"<\1sup>", s)
    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', s)
    return s.replace(r"\|", "|").replace(r"\*", "*").replace(r"\_", "_")


def _md_to_html(md: str) -> str:
    """The report's own Markdown (pipe tables, paragraphs, bold, <sup>) as HTML."""
    out, rows = [], []

    def flush():
        if rows:
            head, *rest = rows
            out.append("<table><thead><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr></thead><tbody>"
                       + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rest)
                       + "</tbody></table>")
            rows.clear()

    for line in md.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            rows.append([_md_inline_html(c) for c in cells])
        else:
            flush()
            if line.strip():
                out.append(f"<p>{_md_inline_html(line)}</p>")
    flush()
    return "\n".join(out)
