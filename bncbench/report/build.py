"""Build a report directory from an experiment's results.

Layout of ``reports/<name>/``::

    index.md, index.html          links to (and shows) every table and figure
    summary.csv                   per (dataset, model) means (bncbench.report.summary.summarize), each model's parameters
    tables/<wdl name>.{tex,md,csv}       W-D-L tables with sign tests (All / Big)
    tables/<win/loss plot name>.{tex,md,csv}   the W-D-L counts behind a win/loss plot
    tables/geomean.{md,csv}              geometric means normalized to each group's reference
    tables/friedman.{tex,md,csv}         Friedman test, average ranks, Nemenyi CD
    tables/per_dataset_<metric>_<group>.{tex,md,csv}   mean ± std over folds (appendix)
    tables/convergence_gaps.{md,csv}     §7.4 iteration gaps per dataset
    tables/missing_features.{md,csv}     rates with features removed at test time (cv.missing_features)
    figures/*.{pdf,png}

Each section of the index is built by one function of :mod:`bncbench.report.sections`;
this module loads the results, calls them in order, draws the queued figures and
writes the index.
"""

from __future__ import annotations

import html
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from bncbench.errors import BNCBenchError
from bncbench.report import tabulate as T
from bncbench.report.config import ReportConfig, build_config, find_run_config, read_report_section
from bncbench.report.families import model_params
from bncbench.report.slugs import heading_anchor
from bncbench.report.sections import (  # noqa: F401  (Section is part of this module's interface)
    Section,
    _convergence_section,
    _thresholds_section,
    _friedman_section,
    _geomean_section,
    _overview_section,
    _per_dataset_section,
    _scatter_section,
    _wdl_section,
    _winloss_section,
)
from bncbench.report.supplement import (read_supplement, rounded_mixes, supplement_summary, supplied_params,
                                       with_params)
from bncbench.atomic import atomic_write_bytes
from bncbench.harness.store import load_stores


@dataclass
class Report:
    """What a report build wrote.

    Attributes
    ----------
    out : pathlib.Path
        The report directory.
    config : ReportConfig
        The report config used (section, overrides and defaults combined).
    sections : list of Section
        The index's sections, in order.
    files : list of pathlib.Path
        Every written file (tables, figures, ``summary.csv``, ``index.md``, ``index.html``).
    """
    out: Path
    config: ReportConfig
    sections: list[Section]
    files: list[Path]  # every written path

    def figures(self) -> list[Path]:
        """The written figure files.

        Returns
        -------
        list of pathlib.Path
            The ``.pdf`` and ``.png`` files of :attr:`files`, in writing order.
        """
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


def shown_path(path: str | os.PathLike, results_dir: str | os.PathLike) -> str:
    """How a report names a file or directory it was built from: never by a machine's absolute path.

    A path inside the repository (:data:`bncbench.paths.REPO_ROOT`) is shown relative to it
    (``conf/experiment/feelders.yaml``, ``results/quickstart``); one inside the results directory
    relative to that directory's parent, that is, from the store's name on (``zaidi_dbl``,
    ``zaidi_dbl/hydra/run/.hydra/config.yaml``); any other by its directory's name and its own
    (``old_run/summary.csv``). Relative paths are taken from the working directory.

    Parameters
    ----------
    path : str or os.PathLike
        The path to show.
    results_dir : str or os.PathLike
        The report's results directory (the store).

    Returns
    -------
    str
        A POSIX path with no machine prefix.
    """
    from bncbench.paths import REPO_ROOT

    p, store, repo = Path(path).resolve(), Path(results_dir).resolve(), REPO_ROOT.resolve()
    if p.is_relative_to(repo) and p != repo:
        return p.relative_to(repo).as_posix()
    if p.is_relative_to(store):
        return (Path(store.name) / p.relative_to(store)).as_posix()
    return (Path(p.parent.name) / p.name).as_posix()


def make_report(results_dir: str | os.PathLike | Sequence[str | os.PathLike],
                out_dir: str | os.PathLike | None = None, *,
                overrides: dict | None = None, log: Callable[[str], None] | None = None) -> Report:
    """Tables, figures and index of the experiment in ``results_dir``; returns what was written.

    The ``report:`` section and the experiment's name come from ``overrides["config"]`` or the
    newest composed Hydra config under ``results_dir`` (its first store's;
    :func:`~bncbench.report.config.find_run_config`; defaults without one); the summary is recomputed
    from the records with the run's ``correction`` setting.

    Parameters
    ----------
    results_dir : str or os.PathLike, or a sequence of them
        ``results/<name>`` of a run, or several stores of one experiment read as one in the order given,
        a later store's record of a task replacing an earlier one's
        (:func:`~bncbench.harness.store.load_stores`).
    out_dir : str or os.PathLike, optional
        Report directory; ``reports/<name>`` (relative to the working directory) by default, with
        ``<name>`` the config's experiment name or the (first) results directory's name.
    overrides : dict, optional
        Command-line options (keys ``config``, ``supplement``, ``pairs``, ``reference``, ``metrics``,
        ``models``, ``convergence_datasets``, ``at``, ``aggregate``, ``friedman_metrics``,
        ``friedman_models``, ``figures``, ``n_jobs``, ``strict``: refuse an unreadable record instead
        of naming and leaving it out, :func:`~bncbench.harness.store.load_results`); None values are
        ignored. Not modified.
        ``supplement`` is another run's ``summary.csv`` whose rows complete the summary, its
        models that the records lack included when it names their parameters
        (:func:`~bncbench.report.supplement.supplement_summary`).
    log : callable, optional
        Progress messages; printed to stderr by default.

    Returns
    -------
    Report
        The written report.

    Raises
    ------
    BNCBenchError
        If a results directory does not exist or holds no records, the stores cannot be read as one
        (:func:`~bncbench.harness.store.load_stores`), the config file or the supplement is missing or unreadable, the supplement's data differ from the records', a requested
        model is not in the results, the report config is invalid (see
        :func:`~bncbench.report.config.build_config`), or ``n_jobs`` is 0 or below -1.
    """
    t0 = time.perf_counter()
    log = log or (lambda msg: print(msg, file=sys.stderr))
    stores = [Path(results_dir)] if isinstance(results_dir, (str, os.PathLike)) else [Path(r) for r in results_dir]
    if not stores:
        raise BNCBenchError("no results directory given")
    for store in stores:
        if not store.is_dir():
            raise BNCBenchError(f"results directory not found: {store}")
        if not any(store.glob("records/*/*/*.json")):
            raise BNCBenchError(f"no result records under {store}/records (run the experiment first)")
    if len(set(s.resolve() for s in stores)) < len(stores):
        raise BNCBenchError("a results directory is given twice")
    results_dir = stores[0]
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

    records = load_stores(stores, with_trace=True, strict=bool(overrides.pop("strict", False)), say=log)
    wanted = overrides.get("models") or section.get("models")
    if wanted:
        records = records[records["model"].isin(list(wanted))]
    from bncbench.report.summary import summarize

    summary = summarize(records.drop(columns=["trace"], errors="ignore"), correction=_read_correction(cfg_path))
    summary = with_params(summary, model_params(records))
    supplement = overrides.pop("supplement", None)
    if supplement:
        sup = read_supplement(supplement)
        summary, unknown = supplement_summary(summary, sup, shown_path(supplement, results_dir))
        mixed = rounded_mixes(sup, summary)
        if mixed:
            log(f"bncbench: report: the supplement's means have 6 significant digits (a summary.csv written before "
                f"November 2026); on {', '.join(mixed)} they are compared with the records' full-precision means, "
                f"which can turn a draw into a win or a loss: run those datasets whole, or leave their records out")
        if unknown:
            log(f"bncbench: report: the supplement's models {', '.join(unknown)} are not in the records and it does "
                f"not name their parameters: left out")
    if overrides.get("models"):
        missing = [m for m in overrides["models"] if m not in set(summary["model"])]
        if missing:
            raise BNCBenchError(f"model(s) not in the results: {', '.join(missing)}")
    source = ", ".join(f"`{shown_path(store, store)}`" for store in stores)
    if len(stores) > 1:
        source += " (read as one: a later store's record of a task replaces an earlier one's)"
    source += (f", config `{shown_path(cfg_path, results_dir) if cfg_path else 'none (defaults)'}`"
               + (f", supplement `{shown_path(supplement, results_dir)}`" if supplement else ""))
    return report_from_frames(records, summary, out, section=section, name=name, overrides=overrides, source=source,
                              log=log, t0=t0)


def report_from_frames(records: pd.DataFrame, summary: pd.DataFrame, out: str | os.PathLike, *,
                       section: dict | None = None, name: str = "report", overrides: dict | None = None,
                       source: str = "", log: Callable[[str], None] | None = None,
                       t0: float | None = None) -> Report:
    """The report of already loaded records and their summary: what :func:`make_report` does after loading.

    Parameters
    ----------
    records : pandas.DataFrame
        Records as ``load_results(..., with_trace=True)`` returns them.
    summary : pandas.DataFrame
        Their :func:`~bncbench.report.summary.summarize` table.
    out : str or os.PathLike
        Report directory (created as needed).
    section : dict, optional
        The ``report:`` section of the experiment's config.
    name : str, default="report"
        The experiment's name (titles, captions).
    overrides : dict, optional
        Command-line options (see :func:`make_report`); ``n_jobs`` (figure processes, default
        ``min(4, CPUs)``) is read here.
    source : str, default=""
        Where the results came from, for the overview (Markdown).
    log : callable, optional
        Progress messages; printed to stderr by default.
    t0 : float, optional
        ``time.perf_counter()`` at the start, for the reported duration.

    Returns
    -------
    Report
        The written report.

    Raises
    ------
    BNCBenchError
        If ``records`` or ``summary`` is empty, the report config is invalid (see
        :func:`~bncbench.report.config.build_config`), or ``n_jobs`` is 0 or below -1.
    """
    t0 = time.perf_counter() if t0 is None else t0
    log = log or (lambda msg: print(msg, file=sys.stderr))
    out = Path(out)
    if records.empty or summary.empty:
        raise BNCBenchError("no result records to report")
    params = model_params(records)
    params.update(supplied_params(summary, known=params))     # the models only a --supplement has
    models = list(dict.fromkeys([*summary["model"], *records["model"]]))     # a supplement's order, if any
    cfg = build_config(section or {}, name, models, params=params, overrides=overrides)
    records, summary = _restrict(records, summary, cfg)
    if cfg.big_threshold is not None:
        summary = summary.assign(big=summary["n_instances"] > cfg.big_threshold)
    w = _Writer(out)
    # full precision (shortest round trip): passed on as another report's --supplement, its means
    # must compare as the records' do (6 digits turn differences below 1e-6 into draws)
    w.text("summary.csv", summary.to_csv(index=False))
    sections = [_overview_section(records, summary, name, source, cfg), _wdl_section(summary, cfg, w, name)]
    if cfg.winloss_plots:
        sections.append(_winloss_section(summary, cfg, w, name))
    sections.append(_geomean_section(summary, cfg, w))
    if cfg.figures:
        sections.append(_scatter_section(summary, cfg, w))
    if cfg.convergence_families:
        sections.append(_convergence_section(records, summary, cfg, w, log))
    from bncbench.report.thresholds import has_flops

    if has_flops(records):  # traces that count flops: Feelders & Ivanovs' Table 2 and Fig. 3
        sections.append(_thresholds_section(records, cfg, w))
    sections.append(_friedman_section(summary, cfg, w))
    sections.append(_per_dataset_section(records, summary, cfg, w))
    from bncbench.report.sensitivity import sensitivity_section

    tuned = sensitivity_section(records, cfg.figures, w)  # records with tuning candidates: Pernkopf et al.'s Fig. 5
    if tuned is not None:
        sections.append(tuned)
    from bncbench.report.missing_curves import missing_features_section

    removed = missing_features_section(records, cfg.figures, w)  # cv.missing_features: Pernkopf et al.'s Fig. 6
    if removed is not None:
        sections.append(removed)
    w.render(n_jobs=_n_jobs(overrides))
    _write_index(w, name, sections)
    log(f"bncbench: report of {name}: {len(w.files)} files in {out} ({time.perf_counter() - t0:.1f} s); open {out / 'index.html'}")
    return Report(out, cfg, sections, list(w.files))


def _restrict(records: pd.DataFrame, summary: pd.DataFrame, cfg: ReportConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The records and summary of the report's models; the summary's ``big`` column as bool."""
    if cfg.models:
        records = records[records["model"].isin(cfg.models)]
        summary = summary[summary["model"].isin(cfg.models)]
    summary = summary.copy()
    summary["big"] = summary["big"].fillna(False).astype(bool) if "big" in summary else False
    return records, summary


def _n_jobs(overrides) -> int:
    n = (overrides or {}).get("n_jobs")
    if n is None:
        n = min(4, os.cpu_count() or 1)
    from bncbench.executors import check_n_jobs

    return check_n_jobs(n)


def _read_correction(cfg_path) -> bool:
    if cfg_path is None:
        return False
    from omegaconf import OmegaConf

    try:
        return bool(OmegaConf.load(cfg_path).get("correction", False))
    except Exception:
        return False


# ------------------------------------------------------------------ index
def _links_md(links: dict) -> str:
    return " · ".join(f"[{fmt}]({rel})" for fmt, rel in links.items())


def _write_index(w: _Writer, name: str, sections: list) -> None:
    md = [f"# Report: {T.md_escape(name)}", ""]
    body = [f"<h1>Report: {html.escape(name)}</h1>"]
    toc_md, toc_html = [], ["<ul>"]
    for i, s in enumerate(sections):
        anchor = f"s{i}"
        toc_md.append(f"- [{s.title}](#{heading_anchor(s.title)})")
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
