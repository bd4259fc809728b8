"""What a report contains: comparisons, reference model, model groups.

Read from the optional ``report:`` section of the experiment's composed
Hydra config (``results/<name>/hydra/run/.hydra/config.yaml`` or the newest
``hydra/multirun/<n>/.hydra/config.yaml``), then overridden by the command
line; what neither gives is derived from the model labels
(:func:`default_config`)::

    report:
      reference: NB                  # reference of the all-model geometric means, Friedman ordering
      metrics: [bias, variance, zero_one, rmse, train_time]
      tables:                        # W-D-L tables; `pairs: [...]` alone gives one table "wdl"
        - name: table4
          pairs: ["NB^w:NB", "TAN^w:TAN", "KDB-1^w:KDB-1"]
      groups:                        # panels of the geometric-mean and scatter plots
        - name: nb
          models: [NB, NB^w, NB^d, NB^e]
          reference: NB              # geometric means normalized to it
          x: NB^w                    # scatter plots: this model on x, the others on y
      convergence:
        datasets: [poker-hand, connect-4, shuttle, adult]   # NLL curves (default: 4 biggest)
        at: 5                        # histogram rule iteration
        aggregate: median            # over folds: median | mean | first
        pairs: ["DBL2:LR2"]          # explicit comparisons (faster-expected model first); replace the
                                     # families' w vs d/e; also the iteration and time scatters
      friedman:
        metrics: [zero_one, rmse]
        models: null                 # null: every model
      per_dataset_metrics: [zero_one, rmse, train_time]
      big_threshold: 100000          # Big = more rows than this (default: the stored big column, > 10,000)
      subsets: [Little, Big]         # dataset subsets of the tables and figures (default: All, Big)
      winloss_plots:                 # win/loss plots: W-D-L of series of pairs along an x axis
        - name: fig6b
          title: kDB-5 vs kDB-x
          metrics: [zero_one, rmse]  # or `metric: rmse`; default: report.metrics
          x: ["0 (NB)", 1, 2, 3, 4]  # tick labels, one per pair (default: the second model of each pair)
          xlabel: x                  # optional x axis label
          y: difference              # difference (wins - losses, default) | both (wins and losses)
          series:                    # curve name -> pairs 'A:B' (A's wins counted), same length
            HDP: ["KDB-5 HDP:NB HDP", "KDB-5 HDP:KDB-1 HDP"]
            m-estimate: ["KDB-5 m-est:NB m-est", "KDB-5 m-est:KDB-1 m-est"]

Models are named by their labels in the section; the defaults are derived from
the models' stored parameters (:mod:`bncbench.report.families`): a family is a
generative model and the optimized models over it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from bncbench.errors import BNCBenchError
from bncbench.harness.protocol import METRIC_TABLE
from bncbench.report.families import Family, families
from bncbench.report.slugs import slug
from bncbench.report.stats import SUBSET_NAMES, SUBSETS

DEFAULT_METRICS = ["bias", "variance", "zero_one", "rmse", "train_time"]
"""The metrics of a report's tables unless its config says (``metrics:``)."""
DEFAULT_FRIEDMAN_METRICS = ["zero_one", "rmse"]
"""The metrics of the Friedman tests unless the config says (``friedman.metrics``)."""
DEFAULT_PER_DATASET_METRICS = ["zero_one", "rmse", "train_time"]
"""The metrics of the per-dataset tables unless the config says (``per_dataset_metrics``)."""
KNOWN_METRICS = [m.name for m in METRIC_TABLE]
"""Every metric a report may name (:data:`bncbench.harness.protocol.METRIC_TABLE`)."""


@dataclass
class WDLSpec:
    """One W-D-L table of the report.

    Attributes
    ----------
    name : str
        File name of the table (``tables/<name>.*``).
    pairs : list of tuple of str
        ``(a, b)`` model pairs, one row each; ``a``'s wins are counted.
    metrics : list of str
        The metrics compared (column groups).
    """
    name: str
    pairs: list  # [(a, b)]
    metrics: list


@dataclass
class GroupSpec:
    """One panel of the geometric-mean and scatter plots.

    Attributes
    ----------
    name : str
        The panel's name.
    models : list of str
        Its models, in order.
    reference : str
        The model its geometric means are normalized to.
    x : str or None, default=None
        The scatter plots' model on the x axis.
    """
    name: str
    models: list
    reference: str
    x: str | None = None  # scatter x model


@dataclass
class WinLossSpec:
    """A win/loss plot: for each series (a curve), the W-D-L of its pairs along the x axis.

    Attributes
    ----------
    name : str
        File name of the plot and its table.
    series : dict of str to list of tuple of str
        Curve name -> ``(a, b)`` pairs, one per x position; every list of the same length.
    x : list of str
        Tick labels, one per position.
    metrics : list of str
        One panel per metric.
    title : str or None, default=None
        Plot title.
    xlabel : str or None, default=None
        Label of the x axis.
    y : {"difference", "both"}, default="difference"
        Plot wins minus losses, or wins and losses.
    """

    name: str
    series: dict  # {series name: [(a, b)]}, every list of the same length
    x: list  # tick labels, one per position
    metrics: list
    title: str | None = None
    xlabel: str | None = None
    y: str = "difference"  # difference | both


WINLOSS_KEYS = ("name", "title", "metric", "metrics", "x", "xlabel", "y", "series")
WINLOSS_Y = ("difference", "both")
RESERVED_NAMES = ("geomean", "friedman", "convergence_gaps")
RESERVED_PREFIXES = ("geomean_", "scatter_", "convergence_", "cd_", "per_dataset_")
"""Names of files the report writes itself: a W-D-L table or win/loss plot may not take them."""


@dataclass
class ConvergenceFamily:
    """A §7.4 comparison: a weighted model and the discriminative / extended models of its family.

    Attributes
    ----------
    name : str
        The family's name.
    w : str
        Label of the weighted model.
    others : list of str
        Labels of the family's discriminative and extended models present.
    """
    name: str
    w: str
    others: list  # [d, e] labels present


@dataclass
class ReportConfig:
    """Everything a report contains, after the ``report:`` section, overrides and defaults are combined.

    Attributes
    ----------
    name : str
        The experiment's name.
    reference : str or None
        Reference model of the all-model geometric means and the Friedman ordering.
    metrics : list of str
        Metrics of the W-D-L tables and geometric means.
    tables : list of WDLSpec
        The W-D-L tables.
    groups : list of GroupSpec
        The plot panels.
    convergence_datasets : list of str or None
        Datasets of the NLL curves (None: the biggest).
    convergence_at : int
        Iteration of the convergence-histogram rule.
    convergence_aggregate : {"median", "mean", "first"}
        How the folds are aggregated in the histograms.
    convergence_families : list of ConvergenceFamily
        The §7.4 comparisons: ``report.convergence.pairs`` when given (one per pair), else each
        family's weighted model against its discriminative and extended ones.
    convergence_pairs : list of tuple of str
        The ``report.convergence.pairs`` as given (empty: the comparisons come from the families).
    friedman_metrics : list of str
        Metrics of the Friedman tests.
    friedman_models : list of str or None
        Models of the Friedman tests (every model once built).
    per_dataset_metrics : list of str
        Metrics of the per-dataset tables.
    models : list of str or None
        Restrict the report to these models.
    figures : bool
        Draw figures (False: tables only).
    winloss_plots : list of WinLossSpec
        The win/loss plots.
    big_threshold : int or None
        Big datasets have more rows than this; None keeps the stored ``big`` column (> 10,000,
        Zaidi et al. 2017). The deep-broad paper's Big is > 100,000.
    subsets : list of str
        Dataset subsets of the tables and figures (``All``, ``Little``, ``Big``).
    """
    name: str
    reference: str | None = None
    metrics: list = field(default_factory=lambda: list(DEFAULT_METRICS))
    tables: list = field(default_factory=list)  # WDLSpec
    groups: list = field(default_factory=list)  # GroupSpec
    convergence_datasets: list | None = None
    convergence_at: int = 5
    convergence_aggregate: str = "median"
    convergence_families: list = field(default_factory=list)
    convergence_pairs: list = field(default_factory=list)  # [(w, other)] of report.convergence.pairs
    friedman_metrics: list = field(default_factory=lambda: list(DEFAULT_FRIEDMAN_METRICS))
    friedman_models: list | None = None
    per_dataset_metrics: list = field(default_factory=lambda: list(DEFAULT_PER_DATASET_METRICS))
    models: list | None = None  # restrict the report to these models
    figures: bool = True
    winloss_plots: list = field(default_factory=list)  # WinLossSpec
    big_threshold: int | None = None  # Big = more rows than this; None: the stored big column (> 10,000)
    subsets: list = field(default_factory=lambda: list(SUBSETS))  # subsets of the tables and figures


def parse_pair(text: str | Sequence[Any]) -> tuple[str, str]:
    """``"NB^w:NB"`` -> ``("NB^w", "NB")`` (the first model's wins are counted).

    Parameters
    ----------
    text : str or sequence
        ``"A:B"`` (spaces around the names are stripped), or a pair ``(A, B)``.

    Returns
    -------
    tuple of str
        ``(A, B)``.

    Raises
    ------
    BNCBenchError
        If ``text`` is neither a string with exactly one ``:`` between two non-empty names nor a
        pair.
    """
    if not isinstance(text, str):
        if isinstance(text, (list, tuple)) and len(text) == 2:
            return str(text[0]), str(text[1])
        raise BNCBenchError(f"bad model pair {text!r}; write 'A:B'")
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise BNCBenchError(f"bad model pair {text!r}; write 'A:B', e.g. 'NB^w:NB'")
    return parts[0].strip(), parts[1].strip()


# ------------------------------------------------------------ hydra config files
def find_run_config(results_dir: str | os.PathLike) -> Path | None:
    """The composed config of the experiment's newest Hydra run, if any.

    Parameters
    ----------
    results_dir : str or os.PathLike
        ``results/<name>`` of a run.

    Returns
    -------
    pathlib.Path or None
        The most recently modified of ``hydra/run/.hydra/config.yaml`` and
        ``hydra/multirun/*/.hydra/config.yaml``, or None when there is none.
    """
    results_dir = Path(results_dir)
    cands = [results_dir / "hydra" / "run" / ".hydra" / "config.yaml"]
    cands += list((results_dir / "hydra" / "multirun").glob("*/.hydra/config.yaml"))
    cands = [c for c in cands if c.is_file()]
    if not cands:
        return None
    return max(cands, key=lambda p: p.stat().st_mtime)


def read_report_section(path: str | os.PathLike | None) -> tuple[dict, str | None]:
    """``(report section as a dict, experiment name)`` from a composed config file.

    Parameters
    ----------
    path : str or os.PathLike or None
        A YAML config; None gives ``({}, None)``.

    Returns
    -------
    section : dict
        The ``report:`` section, interpolations not resolved (empty without one).
    name : str or None
        The config's ``name``.

    Raises
    ------
    BNCBenchError
        If the file cannot be read or parsed, or ``report`` is not a mapping.
    """
    if path is None:
        return {}, None
    from omegaconf import OmegaConf

    try:
        cfg = OmegaConf.load(path)
        section = cfg.get("report")
        rep = OmegaConf.to_container(section, resolve=False) if section is not None else {}
        name = cfg.get("name")
    except Exception as exc:
        raise BNCBenchError(f"cannot read {path}: {' '.join(str(exc).split())}") from None
    if not isinstance(rep, dict):
        raise BNCBenchError(f"{path}: 'report' must be a mapping")
    return rep, (str(name) if name is not None else None)


def _as_list(v, what=""):
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    raise BNCBenchError(f"report.{what} must be a list")


def _check_metrics(ms, what):
    for m in ms:
        if m not in KNOWN_METRICS:
            raise BNCBenchError(f"unknown metric {m!r} in {what}; choose from {', '.join(KNOWN_METRICS)}")
    return ms


def _threshold(value) -> int | None:
    """A Big threshold (rows) from the config: ``None`` keeps the stored ``big`` column (> 10,000)."""
    if value is None:
        return None
    text = str(value).replace("_", "").replace(",", "")
    if isinstance(value, bool) or not text.isdigit():
        raise BNCBenchError(f"big_threshold must be a number of rows >= 0, got {value!r}")
    return int(text)


def build_config(section: dict, name: str, models: list, *, params: dict | None = None,
                 overrides: dict | None = None) -> ReportConfig:
    """The report config from a ``report:`` section, CLI overrides and defaults.

    ``models``: labels present in the results (in first-seen order); ``params``: each
    label's stored model parameters (:func:`bncbench.report.families.model_params`), from
    which the default pairs, groups and convergence comparisons are derived.

    Parameters
    ----------
    section : dict
        The ``report:`` section (may be empty).
    name : str
        The experiment's name.
    models : list of str
        Labels present in the results.
    params : dict, optional
        Stored parameters by label.
    overrides : dict, optional
        Command-line options (see :func:`bncbench.report.build.make_report`); None values are
        ignored, others take precedence over the section.

    Returns
    -------
    ReportConfig
        The validated config. Without a reference, the first model that is not an optimized
        member of a family is the reference.

    Raises
    ------
    BNCBenchError
        On an unknown section key or metric; a model, reference, pair or Friedman model not in
        the results; no models left; a table without pairs, or with a bad, duplicate or reserved
        name; a bad win/loss plot (see :func:`parse_winloss_plots`) or one named like a table; a
        negative convergence iteration or an unknown aggregate.
    """
    params = dict(params or {})
    section = dict(section or {})
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    unknown = set(section) - {"reference", "metrics", "pairs", "tables", "groups", "convergence", "friedman",
                              "per_dataset_metrics", "models", "figures", "winloss_plots", "big_threshold",
                              "subsets"}
    if unknown:
        raise BNCBenchError(f"unknown key(s) in the report section: {', '.join(sorted(unknown))}")
    cfg = ReportConfig(name=name)
    cfg.models = _as_list(overrides.get("models", section.get("models")), "models")
    if cfg.models:
        missing = [m for m in cfg.models if m not in models]
        if missing:
            raise BNCBenchError(f"model(s) not in the results: {', '.join(missing)}; have {', '.join(models)}")
        models = [m for m in models if m in cfg.models]
    if not models:
        raise BNCBenchError("no results to report")
    cfg.big_threshold = _threshold(overrides.get("big_threshold", section.get("big_threshold")))
    cfg.subsets = _as_list(overrides.get("subsets", section.get("subsets")), "subsets") or list(SUBSETS)
    bad = [s for s in cfg.subsets if s not in SUBSET_NAMES]
    if bad:
        raise BNCBenchError(f"unknown subset(s) {', '.join(map(str, bad))}; choose from {', '.join(SUBSET_NAMES)}")
    cfg.metrics = _check_metrics(_as_list(overrides.get("metrics", section.get("metrics"))
                                          or DEFAULT_METRICS, "metrics"), "metrics")
    cfg.reference = overrides.get("reference", section.get("reference"))
    fams = families(models, params)
    if cfg.reference is None:
        optimized = {m for f in fams for p, m in f.members.items() if p != "generative"}
        gens = [m for m in models if m not in optimized]
        cfg.reference = gens[0] if gens else models[0]
    if cfg.reference not in models:
        raise BNCBenchError(f"reference model {cfg.reference!r} is not in the results; have {', '.join(models)}")

    # W-D-L tables
    if "pairs" in overrides:
        cfg.tables = [WDLSpec("wdl", [parse_pair(p) for p in overrides["pairs"]], cfg.metrics)]
    elif section.get("tables"):
        for i, t in enumerate(section["tables"]):
            if not isinstance(t, dict) or "pairs" not in t:
                raise BNCBenchError("each report.tables item needs 'pairs'")
            ms = _check_metrics(_as_list(t.get("metrics")) if t.get("metrics") else cfg.metrics, "report.tables")
            cfg.tables.append(WDLSpec(str(t.get("name", f"wdl{i + 1}")), [parse_pair(p) for p in t["pairs"]], ms))
    elif section.get("pairs"):
        cfg.tables = [WDLSpec("wdl", [parse_pair(p) for p in section["pairs"]], cfg.metrics)]
    else:
        cfg.tables = [WDLSpec("wdl", default_pairs(models, cfg.reference, fams), cfg.metrics)]
    names = [t.name for t in cfg.tables]
    if len(set(names)) != len(names):
        raise BNCBenchError("report.tables names must be unique")
    for t in cfg.tables:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", t.name):
            raise BNCBenchError(f"bad table name {t.name!r} (letters, digits, _ . - only)")
        for a, b in t.pairs:
            for m in (a, b):
                if m not in models:
                    raise BNCBenchError(f"model {m!r} of pair '{a}:{b}' is not in the results; have {', '.join(models)}")
        if not t.pairs:
            raise BNCBenchError("a W-D-L table needs at least one pair (only one model in the results?)")
        _check_file_name(t.name, "table")

    cfg.winloss_plots = parse_winloss_plots(section.get("winloss_plots"), models, cfg.metrics)
    clash = sorted(set(names) & {p.name for p in cfg.winloss_plots})
    if clash:
        raise BNCBenchError(f"report.winloss_plots name(s) {', '.join(clash)} also name a W-D-L table "
                            f"(both write tables/<name>.*); rename one")

    # plot groups
    if section.get("groups"):
        for i, g in enumerate(section["groups"]):
            gm = _as_list(g.get("models"), "groups.models") or []
            gm = [m for m in gm if m in models]
            if len(gm) < 1:
                continue
            ref = g.get("reference") or gm[0]
            cfg.groups.append(GroupSpec(str(g.get("name", f"group{i + 1}")), gm, ref, g.get("x")))
    else:
        cfg.groups = default_groups(models, cfg.reference, fams)

    conv = dict(section.get("convergence") or {})
    unknown = set(conv) - {"datasets", "at", "aggregate", "pairs"}
    if unknown:
        raise BNCBenchError(f"unknown key(s) in report.convergence: {', '.join(sorted(map(str, unknown)))}; "
                            "allowed: datasets, at, aggregate, pairs")
    cfg.convergence_datasets = _as_list(overrides.get("convergence_datasets", conv.get("datasets")),
                                        "convergence.datasets")
    cfg.convergence_at = int(overrides.get("at", conv.get("at", 5)))
    if cfg.convergence_at < 0:
        raise BNCBenchError("convergence iteration must be >= 0")
    cfg.convergence_aggregate = str(overrides.get("aggregate", conv.get("aggregate", "median")))
    if cfg.convergence_aggregate not in ("median", "mean", "first"):
        raise BNCBenchError(f"convergence aggregate must be median, mean or first, not {cfg.convergence_aggregate!r}")
    cfg.convergence_pairs = _convergence_pairs(conv.get("pairs"), models)
    cfg.convergence_families = (explicit_convergence_families(cfg.convergence_pairs) if cfg.convergence_pairs
                                else convergence_families(fams))

    fr = dict(section.get("friedman") or {})
    cfg.friedman_metrics = _check_metrics(_as_list(overrides.get("friedman_metrics", fr.get("metrics")))
                                          or DEFAULT_FRIEDMAN_METRICS, "friedman.metrics")
    fm = _as_list(overrides.get("friedman_models", fr.get("models")), "friedman.models")
    if fm:
        missing = [m for m in fm if m not in models]
        if missing:
            raise BNCBenchError(f"friedman model(s) not in the results: {', '.join(missing)}")
    cfg.friedman_models = fm or list(models)
    cfg.per_dataset_metrics = _check_metrics(_as_list(section.get("per_dataset_metrics"))
                                             or DEFAULT_PER_DATASET_METRICS, "per_dataset_metrics")
    cfg.figures = bool(overrides.get("figures", section.get("figures", True)))
    return cfg


def _check_file_name(name: str, what: str) -> None:
    if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES):
        raise BNCBenchError(f"{what} name {name!r} would overwrite a file of the report; choose another "
                            f"(reserved: {', '.join(RESERVED_NAMES)} and names starting {', '.join(RESERVED_PREFIXES)})")


def parse_winloss_plots(items: Sequence[dict] | None, models: list[str],
                        default_metrics: list[str]) -> list[WinLossSpec]:
    """The :class:`WinLossSpec` list of ``report.winloss_plots``, validated against the model labels.

    Every error is one :class:`BNCBenchError` line naming the plot (and series).

    Parameters
    ----------
    items : list of dict or None
        The section's ``winloss_plots`` (None: no plots).
    models : list of str
        Labels present in the results.
    default_metrics : list of str
        Metrics of a plot that gives none.

    Returns
    -------
    list of WinLossSpec
        One per item, in order. A plot without ``x`` takes the second model of each pair of its
        first series as tick labels.

    Raises
    ------
    BNCBenchError
        If an item is not a mapping, has an unknown key, no or a bad or reserved ``name``, both
        ``metric`` and ``metrics`` or an unknown metric, a bad ``series`` (empty, pairs not in the
        results, series of different lengths), an ``x`` of the wrong length, or an unknown ``y``;
        or if two plots share a name.
    """
    if items is None:
        return []
    if not isinstance(items, (list, tuple)):
        raise BNCBenchError("report.winloss_plots must be a list of plots (each with 'name' and 'series')")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BNCBenchError(f"report.winloss_plots item {i + 1} must be a mapping with 'name' and 'series'")
        where = f"report.winloss_plots[{i}]" if item.get("name") is None else f"win/loss plot {str(item['name'])!r}"
        unknown = sorted(set(item) - set(WINLOSS_KEYS))
        if unknown:
            raise BNCBenchError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}; "
                                f"allowed: {', '.join(WINLOSS_KEYS)}")
        if item.get("name") is None:
            raise BNCBenchError(f"{where} needs a 'name'")
        name = str(item["name"])
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise BNCBenchError(f"bad win/loss plot name {name!r} (letters, digits, _ . - only)")
        _check_file_name(name, "win/loss plot")
        if "metric" in item and "metrics" in item:
            raise BNCBenchError(f"{where}: give 'metric' or 'metrics', not both")
        ms = item.get("metrics", item.get("metric"))
        ms = _as_list(ms, f"winloss_plots.{name}.metrics") if ms is not None else list(default_metrics)
        if not ms:
            raise BNCBenchError(f"{where}: no metric")
        _check_metrics(ms, f"{where}")
        series_raw = item.get("series")
        if not isinstance(series_raw, dict) or not series_raw:
            raise BNCBenchError(f"{where}: 'series' must be a non-empty mapping of curve name -> list of pairs 'A:B'")
        series = {}
        for sname, pairs in series_raw.items():
            sname = str(sname)
            if isinstance(pairs, str) or not isinstance(pairs, (list, tuple)) or not pairs:
                raise BNCBenchError(f"{where}, series {sname!r}: give a non-empty list of pairs 'A:B'")
            parsed = [parse_pair(p) for p in pairs]
            for a, b in parsed:
                for m in (a, b):
                    if m not in models:
                        raise BNCBenchError(f"{where}, series {sname!r}: model {m!r} of pair '{a}:{b}' is not in "
                                            f"the results; have {', '.join(models)}")
            series[sname] = parsed
        lengths = {s: len(p) for s, p in series.items()}
        if len(set(lengths.values())) != 1:
            raise BNCBenchError(f"{where}: every series needs the same number of pairs (one per x position); have "
                                + ", ".join(f"{s}: {n}" for s, n in lengths.items()))
        n = next(iter(lengths.values()))
        x = item.get("x")
        if x is None:
            x = [b for _, b in next(iter(series.values()))]
        elif isinstance(x, (list, tuple)):
            x = [str(v) for v in x]
        else:
            raise BNCBenchError(f"{where}: 'x' must be a list of tick labels, one per pair")
        if len(x) != n:
            raise BNCBenchError(f"{where}: 'x' has {len(x)} label{'s' * (len(x) != 1)} but each series has "
                                f"{n} pair{'s' * (n != 1)}")
        y = str(item.get("y", "difference"))
        if y not in WINLOSS_Y:
            raise BNCBenchError(f"{where}: y must be {' or '.join(WINLOSS_Y)}, not {y!r}")
        title = item.get("title")
        xlabel = item.get("xlabel")
        out.append(WinLossSpec(name, series, x, ms, None if title is None else str(title),
                               None if xlabel is None else str(xlabel), y))
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise BNCBenchError("report.winloss_plots names must be unique")
    return out


# ------------------------------------------------------------------ defaults
def default_pairs(models: list[str], reference: str, fams: list[Family]) -> list[tuple[str, str]]:
    """Each weighted model against its generative base (Table 4); else each model against the reference.

    Falls back, in order: weighted vs generative member of each family; every optimized member
    vs its family's generative model; every other model vs ``reference``.

    Parameters
    ----------
    models : list of str
        Labels in report order.
    reference : str
        The reference model.
    fams : list of Family
        The families among ``models``.

    Returns
    -------
    list of tuple of str
        ``(a, b)`` pairs (possibly empty, with a single model).
    """
    pairs = [(f.members["weighted"], f.members["generative"]) for f in fams
             if "weighted" in f.members and "generative" in f.members]
    if not pairs:
        pairs = [(m, f.members["generative"]) for f in fams if "generative" in f.members
                 for p, m in f.members.items() if p != "generative"]
    if not pairs:
        pairs = [(m, reference) for m in models if m != reference]
    return pairs


def default_groups(models: list[str], reference: str, fams: list[Family]) -> list[GroupSpec]:
    """One panel per family (``NB, NB^w, NB^d, NB^e`` normalized to ``NB``, x = ``NB^w``), else one of all models.

    Families with fewer than two labels are skipped; a family without a generative model is
    normalized to its first label.

    Parameters
    ----------
    models : list of str
        Labels in report order.
    reference : str
        Reference (and x model) of the single all-model panel.
    fams : list of Family
        The families among ``models``.

    Returns
    -------
    list of GroupSpec
        The panels (empty only without models).
    """
    out = []
    for f in fams:
        labels = f.labels()
        if len(labels) < 2:
            continue
        ref = f.members.get("generative", labels[0])
        x = f.members.get("weighted", labels[0] if labels[0] != ref else labels[1])
        out.append(GroupSpec(f.name, labels, ref, x))
    if not out and len(models) >= 1:
        out.append(GroupSpec("all", list(models), reference, reference))
    return out


def convergence_families(fams: list[Family]) -> list[ConvergenceFamily]:
    """Families with a weighted model and at least one of d / e: the §7.4 comparisons.

    Parameters
    ----------
    fams : list of Family
        The families of the report's models.

    Returns
    -------
    list of ConvergenceFamily
        One per qualifying family, in order.
    """
    out = []
    for f in fams:
        others = [f.members[p] for p in ("discriminative", "extended") if p in f.members]
        if "weighted" in f.members and others:
            out.append(ConvergenceFamily(f.name, f.members["weighted"], others))
    return out


def _convergence_pairs(items, models: list[str]) -> list[tuple[str, str]]:
    """The ``report.convergence.pairs`` as ``(a, b)`` tuples, each model in the results."""
    pairs = [parse_pair(p) for p in (_as_list(items, "convergence.pairs") or [])]
    for a, b in pairs:
        for m in (a, b):
            if m not in models:
                raise BNCBenchError(f"model {m!r} of convergence pair '{a}:{b}' is not in the results; "
                                    f"have {', '.join(models)}")
    if len(set(pairs)) != len(pairs):
        raise BNCBenchError("report.convergence.pairs has a pair twice")
    return pairs


def explicit_convergence_families(pairs: list[tuple[str, str]]) -> list[ConvergenceFamily]:
    """One comparison per ``report.convergence.pairs`` item ``"A:B"``: ``A`` in the weighted model's role.

    The deep-broad paper compares models the families do not pair (DBLⁿ starts from AnJE's
    weights, LRⁿ from 0: different initializations, so different families).

    Parameters
    ----------
    pairs : list of tuple of str
        ``(a, b)``: ``a`` is the model expected to converge faster (the histograms' positive side).

    Returns
    -------
    list of ConvergenceFamily
        Named ``<a>_vs_<b>`` (file-name slugs), in the given order.
    """
    return [ConvergenceFamily(f"{slug(a)}_vs_{slug(b)}", a, [b]) for a, b in pairs]
