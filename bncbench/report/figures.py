"""Figures of the report (matplotlib, Agg backend), each saved as PDF and PNG.

* :func:`geomean_figure` — geometric means normalized to a reference model,
  All and Big datasets (Zaidi et al. 2017 Figs. 5, 6, 8, 9, 11, 12);
* :func:`scatter_figure` — comparative scatter plots, one model on x, the
  others on y, with the diagonal, log axes for time (Figs. 4, 7, 10);
* :func:`convergence_figure` — training NLL against iteration, log x axis
  (Figs. 13, 14);
* :func:`convergence_histogram` — the §7.4 iteration gaps (Figs. 15-17);
* :func:`pair_scatter_figure` — iterations or training time of one model against another, one
  point per dataset (the deep-broad paper's Figs. 11-14);
* :func:`cd_diagram` — Friedman / Nemenyi critical-difference diagram;
* :func:`winloss_figure` — win/loss plots: wins minus losses of series of
  pairs along an x axis (Petitjean et al. 2018 Figs. 4, 5, 6b).

Every function returns a :class:`matplotlib.figure.Figure`; :func:`save`
writes it atomically as ``<base>.pdf`` and ``<base>.png``.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from bncbench.harness.protocol import TIME_METRICS  # noqa: E402
from bncbench.report.stats import geometric_mean_ratios, metric_matrix, metric_name, subset_datasets  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from bncbench.report.stats import FriedmanResult

FORMATS = ("pdf", "png")
DPI = 150
MARKERS = ["x", "^", "o", "s", "D", "v", "P", "*"]
COLORS = ["tab:red", "tab:green", "tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:gray"]
DODGE = 0.06
"""Sideways offset between the series of a win/loss plot (x positions are 0, 1, 2, ...)."""


def display_label(label: str) -> str:
    r"""``NB^w (I)`` -> mathtext ``NB$^{\mathrm{w}}$ (I)``.

    Parameters
    ----------
    label : str
        A model label.

    Returns
    -------
    str
        The label with its first ``^suffix`` (letters and digits) as a mathtext superscript; a
        label without one is returned with ``$`` escaped.
    """
    import re

    m = re.match(r"^([^\^]*)\^([A-Za-z0-9]+)(.*)$", str(label))
    if not m:
        return str(label).replace("$", r"\$")
    return f"{m[1]}$^{{\\mathrm{{{m[2]}}}}}${m[3]}"


def _plain_log(ax, which="both") -> None:
    """Log scale with plain tick labels (``0.01``, ``10``): mathtext ``10^x`` labels are slow to lay out."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    for axis, on in ((ax.xaxis, which in ("x", "both")), (ax.yaxis, which in ("y", "both"))):
        if on:
            axis.set_major_locator(LogLocator(base=10, numticks=6))
            axis.set_major_formatter(fmt)
            axis.set_minor_formatter(NullFormatter())


def save(fig: Figure, base: str | os.PathLike, *, tight: bool = False) -> list[Path]:
    """Write ``fig`` to ``base.pdf`` and ``base.png`` (temp file + rename) and close it.

    Figures are laid out by ``tight_layout`` when built; ``tight=True`` also
    crops to the drawn artists (for text outside the axes).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure; figures of :func:`cd_diagram` ask for ``tight`` themselves.
    base : str or os.PathLike
        Path without extension (any suffix is replaced).
    tight : bool, default=False
        Crop to the drawn artists.

    Returns
    -------
    list of pathlib.Path
        The written files, PDF first. PDF and PNG carry no creation date or software metadata.
    """
    from bncbench.atomic import atomic_write_bytes

    base = Path(base)
    tight = tight or getattr(fig, "_bncbench_tight", False)
    out = []
    for fmt in FORMATS:
        buf = io.BytesIO()
        meta = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
        fig.savefig(buf, format=fmt, dpi=DPI, bbox_inches="tight" if tight else None, metadata=meta)
        path = base.with_suffix(f".{fmt}")
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    plt.close(fig)
    return out


# ------------------------------------------------------------ geometric means
def geomean_figure(summary: pd.DataFrame, models: list[str], reference: str, metrics: Sequence[str], *,
                   subsets: Sequence[str] = ("All", "Big"), title: str | None = None,
                   log: bool | None = None) -> Figure:
    """Grouped bars: geometric mean of ``metric(model) / metric(reference)`` per metric, one panel per subset.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means (:func:`bncbench.report.summary.summarize`).
    models : list of str
        Models of the bars (the reference is put first, in gray, and not repeated).
    reference : str
        The model the ratios are relative to.
    metrics : sequence of str
        One bar group per metric.
    subsets : sequence of str, default=("All", "Big")
        Dataset subsets, one panel each; subsets without datasets are left out.
    title : str, optional
        Figure title.
    log : bool, optional
        Log y axis; by default when a time metric is shown.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (a NaN ratio is drawn as an empty bar).
    """
    subsets = [s for s in subsets if subset_datasets(summary, s)]
    models = list(dict.fromkeys([reference, *models]))
    metrics = list(metrics)
    if log is None:
        log = any(m in TIME_METRICS for m in metrics)
    fig, axes = plt.subplots(1, len(subsets), figsize=(max(3.0, 1.2 + 0.22 * len(models) * len(metrics)) * len(subsets), 3.4),
                             squeeze=False, sharey=True)
    width = 0.8 / len(models)
    for ax, subset in zip(axes[0], subsets):
        dsets = subset_datasets(summary, subset)
        ns = []
        for j, metric in enumerate(metrics):
            res = geometric_mean_ratios(summary, metric, models, reference, datasets=dsets)
            ns.append(res["n"])
            for i, m in enumerate(models):
                v = res["ratios"].get(m, np.nan)
                ax.bar(j + (i - (len(models) - 1) / 2) * width, v if np.isfinite(v) else 0, width,
                       color=("lightgray" if m == reference else COLORS[(i - 1) % len(COLORS)]),
                       edgecolor="black", linewidth=0.5, label=display_label(m) if j == 0 else None)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(metrics)))
        ax.set_xticklabels([f"{metric_name(m)}\n(n={n})" for m, n in zip(metrics, ns)], fontsize=8)
        ax.set_title(f"{subset} datasets", fontsize=9)
        if log:
            ax.set_yscale("log")
            _plain_log(ax, "y")
    axes[0][0].set_ylabel(f"geometric mean relative to {display_label(reference)}", fontsize=8)
    axes[0][-1].legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# -------------------------------------------------------------- scatter plots
def scatter_figure(summary: pd.DataFrame, x_model: str, y_models: list[str],
                   metrics: Sequence[str] = ("zero_one", "rmse", "train_time"), *,
                   subsets: Sequence[str] = ("All", "Big"), title: str | None = None) -> Figure:
    """One panel per (subset, metric): each dataset's mean of ``x_model`` (x) vs each of ``y_models`` (y).

    Points above the diagonal: ``x_model`` has the lower loss (wins).

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means.
    x_model : str
        Model on the x axis.
    y_models : list of str
        Models on the y axis, one marker each.
    metrics : sequence of str, default=("zero_one", "rmse", "train_time")
        One column of panels per metric; time metrics on log axes (non-positive times dropped).
    subsets : sequence of str, default=("All", "Big")
        One row of panels per subset with datasets.
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    subsets = [s for s in subsets if subset_datasets(summary, s)]
    metrics = list(metrics)
    fig, axes = plt.subplots(len(subsets), len(metrics), figsize=(3.0 * len(metrics), 3.0 * len(subsets)), squeeze=False)
    for r, subset in enumerate(subsets):
        dsets = subset_datasets(summary, subset)
        for c, metric in enumerate(metrics):
            ax = axes[r][c]
            mat = metric_matrix(summary, metric, models=[x_model, *y_models], datasets=dsets)
            vals = []
            for i, m in enumerate(y_models):
                xy = mat[[x_model, m]].dropna()
                if metric in TIME_METRICS:
                    xy = xy[(xy > 0).all(axis=1)]
                ax.scatter(xy[x_model], xy[m], marker=MARKERS[i % len(MARKERS)], color=COLORS[i % len(COLORS)],
                           s=18, linewidths=0.9, label=display_label(m),
                           facecolors="none" if MARKERS[i % len(MARKERS)] not in ("x", "+") else None)
                vals.append(xy.to_numpy().ravel())
            allv = np.concatenate(vals) if vals else np.empty(0)
            allv = allv[np.isfinite(allv)]
            if metric in TIME_METRICS:
                allv = allv[allv > 0]
                if allv.size:  # log axes need a positive value (else matplotlib raises at layout)
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    _plain_log(ax)
            if not allv.size:
                ax.text(0.5, 0.5, "no dataset with both models", ha="center", va="center", fontsize=8,
                        transform=ax.transAxes)
            else:
                lo, hi = float(allv.min()), float(allv.max())
                if metric in TIME_METRICS:
                    lo, hi = lo / 1.5, hi * 1.5
                else:
                    pad = 0.05 * (hi - lo or 1.0)
                    lo, hi = max(0.0, lo - pad), hi + pad
                ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
                ax.set_xlim(lo, hi)
                ax.set_ylim(lo, hi)
            if metric not in TIME_METRICS or not allv.size:  # at most 5 ticks: narrow ranges crowd the axis
                ax.xaxis.set_major_locator(MaxNLocator(5))
                ax.yaxis.set_major_locator(MaxNLocator(5))
            ax.set_aspect("equal", adjustable="box")
            ax.set_xlabel(display_label(x_model), fontsize=8)
            ax.set_title(f"{metric_name(metric)}, {subset}", fontsize=9)
            ax.tick_params(labelsize=7)
            if c == 0:
                ax.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# --------------------------------------------------------- convergence curves
def convergence_figure(curves: dict[str, dict[str, ArrayLike]], *, title: str | None = None,
                       styles: dict[str, tuple[str, str]] | None = None) -> Figure:
    """``curves``: ``{dataset: {model: nll array indexed by iteration}}``; one panel per dataset.

    The x axis is ``iteration + 1`` on a log scale, so 1 is the NLL before
    optimization (as in the paper's Figs. 13-14).

    Parameters
    ----------
    curves : dict
        NLL curves by dataset and model label; empty curves are skipped.
    title : str, optional
        Figure title.
    styles : dict of str to tuple of str, optional
        ``{model: (color, linestyle)}``; models not in it cycle through four colors and styles.

    Returns
    -------
    matplotlib.figure.Figure
        Panels in two columns; a single "no traces" panel without datasets.
    """
    datasets = list(curves)
    n = max(len(datasets), 1)
    cols = min(n, 2)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.0 * rows), squeeze=False)
    for k, d in enumerate(datasets):
        ax = axes[k // cols][k % cols]
        for i, (m, c) in enumerate(curves[d].items()):
            c = np.asarray(c, dtype=float)
            if c.size == 0:
                continue
            color, style = (styles or {}).get(m, (["tab:blue", "tab:red", "tab:green", "tab:orange"][i % 4],
                                                  ["-", "--", ":", "-."][i % 4]))
            ax.plot(np.arange(1, c.size + 1), c, color=color, linestyle=style, linewidth=1.2, label=display_label(m))
        ax.set_xscale("log")
        _plain_log(ax, "x")
        ax.set_title(d, fontsize=9)
        ax.set_xlabel("iteration (1 = before optimization)", fontsize=8)
        ax.set_ylabel("training NLL", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    for k in range(len(datasets), rows * cols):
        axes[k // cols][k % cols].axis("off")
    if not datasets:
        axes[0][0].text(0.5, 0.5, "no traces", ha="center", va="center")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def pair_scatter_figure(table: pd.DataFrame, pairs: Sequence[tuple[str, str]], metric: str,
                        subsets: dict[str, Sequence[str]], *, title: str | None = None) -> Figure:
    """One panel per (subset, pair): each dataset's ``metric`` of the pair's first model (x) against
    the second's (y), log axes, with the diagonal (the deep-broad paper's Figs. 11-14).

    Points above the diagonal: the first model needs fewer iterations (less time).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`bncbench.report.convergence.pair_iterations`.
    pairs : sequence of tuple of str
        ``(w, other)``: one column of panels each.
    metric : {"n_iter", "train_time"}
        Iterations or training time (seconds).
    subsets : dict of str to sequence of str
        One row of panels per subset (name -> datasets); subsets without a point are dropped.
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; a single "no data" panel when no pair has a dataset.
    """
    what = {"n_iter": "iterations", "train_time": "training time (s)"}[metric]
    panels = []
    for subset, dsets in subsets.items():
        row = []
        for w, o in pairs:
            t = table[(table["w_model"] == w) & (table["other_model"] == o) & table["dataset"].isin(list(dsets))]
            xy = t[[f"{metric}_w", f"{metric}_other"]].to_numpy(dtype=float)
            row.append(xy[(xy > 0).all(axis=1) & np.isfinite(xy).all(axis=1)])
        if any(len(v) for v in row):
            panels.append((subset, row))
    if not panels:
        fig, ax = plt.subplots(figsize=(3.2, 3.0))
        ax.text(0.5, 0.5, "no dataset with both models", ha="center", va="center", transform=ax.transAxes)
        ax.axis("off")
        return fig
    fig, axes = plt.subplots(len(panels), len(pairs), figsize=(3.2 * len(pairs), 3.2 * len(panels)), squeeze=False)
    for r, (subset, row) in enumerate(panels):
        for c, ((w, o), xy) in enumerate(zip(pairs, row)):
            ax = axes[r][c]
            if not len(xy):
                ax.text(0.5, 0.5, "no dataset with both models", ha="center", va="center", fontsize=8,
                        transform=ax.transAxes)
            else:
                ax.scatter(xy[:, 0], xy[:, 1], marker="o", s=18, facecolors="none", edgecolors="tab:blue",
                           linewidths=0.9)
                lo, hi = float(xy.min()) / 1.5, float(xy.max()) * 1.5
                ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlim(lo, hi)
                ax.set_ylim(lo, hi)
                _plain_log(ax)
                if hi / lo < 30:  # less than ~1.5 decades: label the 2..9 ticks too, else an axis may show no number
                    from matplotlib.ticker import FuncFormatter, LogLocator

                    for axis in (ax.xaxis, ax.yaxis):
                        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
                        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                ax.set_aspect("equal", adjustable="box")
            ax.set_xlabel(f"{display_label(w)} {what}", fontsize=8)
            ax.set_ylabel(f"{display_label(o)} {what}", fontsize=8)
            ax.set_title(f"{subset} (n={len(xy)})", fontsize=9)
            ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def convergence_histogram(gaps: dict[str, pd.DataFrame], *, w_model: str, at: int = 5,
                          title: str | None = None) -> Figure:
    """``gaps``: ``{other_model: DataFrame(dataset, gap, censored)}``; one histogram per other model.

    Parameters
    ----------
    gaps : dict of str to pandas.DataFrame
        Per other model, the per-dataset gaps of :func:`bncbench.report.convergence.dataset_gaps`.
    w_model : str
        Label of the weighted model (axis label).
    at : int, default=5
        The comparison iteration (axis label).
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        One histogram per other model, titled with the mean, median, count and censored count.
    """
    others = list(gaps)
    fig, axes = plt.subplots(1, max(len(others), 1), figsize=(4.0 * max(len(others), 1), 3.0), squeeze=False)
    for ax, (m, df) in zip(axes[0], gaps.items()):
        vals = df["gap"].to_numpy(dtype=float) if len(df) else np.empty(0)
        vals = vals[np.isfinite(vals)]
        if vals.size:
            lo, hi = np.floor(vals.min()), np.ceil(vals.max())
            width = max(1.0, np.ceil((hi - lo + 1) / 40))
            bins = np.arange(lo - 0.5 * width, hi + width, width)
            ax.hist(vals, bins=bins, color="tab:gray", edgecolor="black", linewidth=0.5)
            ax.axvline(0, color="black", linewidth=0.8)
            ncens = int(df["censored"].sum()) if "censored" in df else 0
            note = f"mean {vals.mean():.1f}, median {np.median(vals):.1f}, n={vals.size}"
            if ncens:
                note += f", {ncens} censored"
            ax.set_title(note, fontsize=8)
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            ax.text(0.5, 0.5, "no paired traces", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel(f"iterations after {at} ({display_label(m)} vs {display_label(w_model)})", fontsize=8)
        ax.set_ylabel("datasets", fontsize=8)
        ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------ win/loss plots
def winloss_figure(data: pd.DataFrame, *, title: str | None = None, y: str = "difference",
                   xlabel: str | None = None) -> Figure:
    """Win/loss plot of :func:`~bncbench.report.stats.winloss_data`: one panel per (subset, metric).

    ``y="difference"``: one curve per series, ``wins - losses`` of the first
    model of each pair (draws ignored), with a line at 0. ``y="both"``: per
    series a solid curve of the wins and a dashed one of the losses.
    Curves carry the series name as label; the x axis is categorical with
    the ``x`` labels in ``position`` order, each series dodged sideways by
    ``DODGE`` (so equal curves stay visible).

    Parameters
    ----------
    data : pandas.DataFrame
        Rows of :func:`~bncbench.report.stats.winloss_data`.
    title : str, optional
        Figure title.
    y : {"difference", "both"}, default="difference"
        What the curves show.
    xlabel : str, optional
        Label of the x axes.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``y`` is unknown or ``data`` is empty.
    """
    if y not in ("difference", "both"):
        raise ValueError(f"y must be 'difference' or 'both', not {y!r}")
    if data.empty:
        raise ValueError("no win/loss data to plot")
    subsets = list(dict.fromkeys(data["subset"]))
    metrics = list(dict.fromkeys(data["metric"]))
    series = list(dict.fromkeys(data["series"]))
    xs = data.drop_duplicates("position").sort_values("position")
    positions, labels = list(xs["position"]), [display_label(v) for v in xs["x"]]
    width = max(3.2, 0.2 + 0.55 * len(positions))
    fig, axes = plt.subplots(len(subsets), len(metrics), figsize=(width * len(metrics), 2.9 * len(subsets)),
                             squeeze=False)
    for r, subset in enumerate(subsets):
        for c, metric in enumerate(metrics):
            ax = axes[r][c]
            panel = data[(data["subset"] == subset) & (data["metric"] == metric)]
            if y == "difference":
                ax.axhline(0, color="black", linewidth=0.8)
            for i, s in enumerate(series):
                d = panel[panel["series"] == s].sort_values("position")
                color, marker = COLORS[i % len(COLORS)], ["o", "s", "^", "D", "v", "P", "*", "x"][i % 8]
                px = d["position"].to_numpy(dtype=float) + DODGE * (i - (len(series) - 1) / 2)
                if y == "difference":
                    ax.plot(px, d["wins_minus_losses"], color=color, marker=marker, markersize=4,
                            linewidth=1.2, label=display_label(s))
                else:
                    ax.plot(px, d["wins"], color=color, marker=marker, markersize=4, linewidth=1.2,
                            label=f"{display_label(s)}: wins")
                    ax.plot(px, d["losses"], color=color, marker=marker, markersize=4, linewidth=1.2,
                            linestyle="--", markerfacecolor="none", label=f"{display_label(s)}: losses")
            ax.set_xticks(positions)
            ax.set_xticklabels(labels, fontsize=7)
            ax.set_xlim(min(positions) - 0.3, max(positions) + 0.3)
            vals = panel["wins_minus_losses"] if y == "difference" else pd.concat([panel["wins"], panel["losses"]])
            lo, hi = min(0, int(vals.min()) if len(vals) else 0), max(0, int(vals.max()) if len(vals) else 0)
            pad = max(0.5, 0.06 * (hi - lo))
            ax.set_ylim(lo - pad, hi + pad)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.tick_params(labelsize=7)
            ns = sorted({int(v) for v in panel["n"]})
            n_txt = f"n = {ns[0]}" if len(ns) == 1 else (f"n = {ns[0]}-{ns[-1]}" if ns else "no data")
            ax.set_title(f"{metric_name(metric)}, {subset} datasets ({n_txt})", fontsize=9)
            ax.set_ylabel("wins - losses" if y == "difference" else "datasets", fontsize=8)
            if xlabel:
                ax.set_xlabel(xlabel, fontsize=8)
            if r == 0 and c == 0:
                ax.legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(display_label(title), fontsize=10)
    fig.tight_layout()
    return fig


# -------------------------------------------------------------- CD diagram
def cd_diagram(result: FriedmanResult, *, title: str | None = None) -> Figure:
    """Demšar (2006) critical-difference diagram of a :class:`~bncbench.report.stats.FriedmanResult`.

    Models on the rank axis (1 = best, left); thick bars join models whose
    average ranks differ by less than the Nemenyi critical difference.

    Parameters
    ----------
    result : FriedmanResult
        The Friedman test of one metric.
    title : str, optional
        Figure title; by default the metric, Friedman p-value, number of datasets and alpha.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, marked to be cropped when saved (labels sit outside the axes).
    """
    from bncbench.report.stats import nemenyi_cliques

    ranks = result.avg_ranks
    k = len(ranks)
    lo, hi = 1, max(k, 2)
    half = (k + 1) // 2
    nrows = max(half, k - half, 1)
    cliques = nemenyi_cliques(ranks, result.cd)
    row_h, clique_h = 0.32, 0.12
    first = -0.25 - clique_h * len(cliques)
    bottom = first - row_h * (nrows - 1) - 0.25
    fig, ax = plt.subplots(figsize=(7.0, 0.9 + 1.6 * (0.8 - bottom) / 2.2))
    ax.set_xlim(lo - 0.5, hi + 0.5)
    ax.set_ylim(bottom, 0.8)
    ax.axis("off")
    ax.plot([lo, hi], [0, 0], color="black", linewidth=1)
    for t in range(lo, hi + 1):
        ax.plot([t, t], [0, 0.06], color="black", linewidth=1)
        ax.text(t, 0.1, str(t), ha="center", va="bottom", fontsize=8)
    ax.plot([lo, lo + result.cd], [0.5, 0.5], color="black", linewidth=1.5)
    for xx in (lo, lo + result.cd):
        ax.plot([xx, xx], [0.46, 0.54], color="black", linewidth=1)
    ax.text(lo + result.cd / 2, 0.57, f"CD = {result.cd:.2f}", ha="center", va="bottom", fontsize=7)
    for i, (m, r) in enumerate(ranks.items()):
        if i < half:  # best on the left
            y = first - i * row_h
            ax.plot([r, r, lo - 0.1], [0, y, y], color="black", linewidth=0.7)
            ax.text(lo - 0.15, y, f"{display_label(m)} ({r:.2f})", ha="right", va="center", fontsize=7)
        else:
            y = first - (k - 1 - i) * row_h
            ax.plot([r, r, hi + 0.1], [0, y, y], color="black", linewidth=0.7)
            ax.text(hi + 0.15, y, f"({r:.2f}) {display_label(m)}", ha="left", va="center", fontsize=7)
    for j, clique in enumerate(cliques):
        y = -0.12 - j * clique_h
        ax.plot([ranks[clique[0]] - 0.03, ranks[clique[-1]] + 0.03], [y, y], color="black", linewidth=2.5)
    sub = f"{metric_name(result.metric)}: Friedman p = {result.pvalue:.3g}, n = {result.n} datasets, alpha = {result.alpha:g}"
    ax.set_title(title or sub, fontsize=9)
    fig._bncbench_tight = True  # labels sit outside the axes: crop when saving
    return fig


def xy_curves(panels: dict, *, xlabel: str, ylabel: str = "training CLL", title: str | None = None,
              logx: bool = False, ylim: tuple | None = None) -> Figure:
    """Curves ``{panel title: {label: (x, y)}}``, one panel each (Feelders & Ivanovs' Fig. 3).

    Parameters
    ----------
    panels : dict
        Per panel, per curve label, the x and y arrays.
    xlabel, ylabel : str
        Axis labels.
    title : str, optional
        Figure title.
    logx : bool, default=False
        Log-scaled x axis.
    ylim : (float, float), optional
        The y range.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = max(len(panels), 1)
    fig, axes = plt.subplots(1, n, figsize=(5.0 * n, 3.6), squeeze=False)
    colors = ["tab:blue", "tab:red", "tab:green"]
    styles = ["-", "--", ":"]
    for k, (name, cs) in enumerate(panels.items()):
        ax = axes[0][k]
        for i, (lab, (x, y)) in enumerate(cs.items()):
            ax.plot(x, y, color=colors[i % 3], linestyle=styles[(i // 3) % 3], linewidth=1.1, label=display_label(lab))
        if logx:
            ax.set_xscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def structure_graph(parents: list, names: list, *, class_name: str = "class", title: str | None = None) -> Figure:
    """A BNC's graph: the class in the centre (a parent of every attribute), attributes on a circle, arcs.

    Parameters
    ----------
    parents : list of tuple of int
        Attribute parents per attribute.
    names : list of str
        Attribute names.
    class_name : str, default="class"
        The class node's label.
    title : str, optional
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    n = len(parents)
    ang = np.pi / 2 - 2 * np.pi * np.arange(n) / max(n, 1)
    pos = np.column_stack([np.cos(ang), np.sin(ang)])
    fig, ax = plt.subplots(figsize=(5.0, 5.0))
    for i in range(n):  # class -> attribute
        ax.annotate("", xy=pos[i] * 0.86, xytext=(0, 0),
                    arrowprops=dict(arrowstyle="->", color="0.7", lw=0.8, shrinkA=12))
    for c, ps in enumerate(parents):
        for p in ps:
            ax.annotate("", xy=pos[c], xytext=pos[p],
                        arrowprops=dict(arrowstyle="->", color="tab:blue", lw=1.4, shrinkA=14, shrinkB=14,
                                        connectionstyle="arc3,rad=0.15"))
    for i in range(n):
        ax.text(*pos[i], names[i], ha="center", va="center", fontsize=8,
                bbox=dict(boxstyle="round", fc="white", ec="tab:blue"))
    ax.text(0, 0, class_name, ha="center", va="center", fontsize=9, bbox=dict(boxstyle="round", fc="0.9", ec="k"))
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return fig
