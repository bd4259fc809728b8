"""Statistics of the reporting stage: sign tests, W-D-L counts, geometric means,
the Friedman test and the Nemenyi critical difference.

All comparisons work on *per-dataset means* (one value per dataset and model,
see :func:`bncbench.report.summary.summarize`), as in Zaidi et al. (2017) §7 and
Demšar (2006).

Conventions
-----------
* Every metric reported here is a loss: lower is better (0-1 loss, RMSE,
  bias, variance, training and test time).
* ``A`` *wins* against ``B`` on a dataset when ``A``'s mean is lower.
* A *draw* is a pair of means equal within ``|a - b| <= DRAW_ATOL +
  DRAW_RTOL * max(|a|, |b|)``: equal up to floating-point round-off (the
  same predictions averaged in a different order), nothing coarser. Two
  classifiers with the same 0-1 loss on every fold therefore draw, while any
  genuine difference, however small, counts as a win or a loss, as in the
  papers.
* The sign test is the exact two-tailed binomial test of ``wins`` successes
  in ``wins + losses`` trials with probability 1/2; draws are excluded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
from scipy import stats as _st

from bncbench.errors import BNCBenchError
from bncbench.harness.protocol import METRIC_TABLE

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

DRAW_RTOL = 1e-9
DRAW_ATOL = 1e-12
ALPHA = 0.05

METRIC_NAMES = {m.name: m.title for m in METRIC_TABLE}
"""Display names of the metrics (all lower-is-better; :data:`bncbench.harness.protocol.METRIC_TABLE`)."""


def metric_name(metric: str) -> str:
    """Display name of a metric.

    Parameters
    ----------
    metric : str
        A metric column (``zero_one``, ``rmse``, ...).

    Returns
    -------
    str
        Its entry of :data:`METRIC_NAMES`, or ``metric`` itself when it has none.
    """
    return METRIC_NAMES.get(metric, metric)


# --------------------------------------------------------------------- sign test
def sign_test(wins: int, losses: int) -> float:
    """Two-tailed exact binomial sign test p-value (draws already excluded).

    ``p = min(1, 2 * P[X <= min(wins, losses)])`` with ``X ~ Bin(wins + losses, 1/2)``,
    which equals ``scipy.stats.binomtest(wins, wins + losses).pvalue``.
    With no decided dataset (``wins + losses == 0``) the p-value is 1.

    Parameters
    ----------
    wins : int
        Datasets won.
    losses : int
        Datasets lost.

    Returns
    -------
    float
        The p-value.

    Raises
    ------
    ValueError
        If ``wins`` or ``losses`` is negative.
    """
    wins, losses = int(wins), int(losses)
    if wins < 0 or losses < 0:
        raise ValueError("wins and losses must be non-negative")
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    # exact sum in integers, then one division: no round-off for n < ~1000
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return float(min(1.0, 2 * tail / 2**n))


def is_draw(a: float, b: float, *, rtol: float = DRAW_RTOL, atol: float = DRAW_ATOL) -> bool:
    """Whether two means are equal up to round-off: ``|a - b| <= atol + rtol * max(|a|, |b|)``.

    Parameters
    ----------
    a, b : float
        The two values.
    rtol : float, default=1e-9
        Relative tolerance.
    atol : float, default=1e-12
        Absolute tolerance.

    Returns
    -------
    bool
        True for a draw.
    """
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


@dataclass(frozen=True)
class WDL:
    """Wins, draws and losses of model ``a`` against model ``b`` (lower is better).

    Attributes
    ----------
    wins : int
        Datasets where ``a``'s mean is lower.
    draws : int
        Datasets where the means are equal up to round-off (:func:`is_draw`).
    losses : int
        Datasets where ``a``'s mean is higher.
    p : float
        Two-tailed sign test p-value of wins against losses (:func:`sign_test`).
    """

    wins: int
    draws: int
    losses: int
    p: float

    @property
    def n(self) -> int:
        """Number of datasets compared.

        Returns
        -------
        int
            ``wins + draws + losses``.
        """
        return self.wins + self.draws + self.losses

    @property
    def significant(self) -> bool:
        """Whether the sign test is significant at :data:`ALPHA`.

        Returns
        -------
        bool
            ``p <= ALPHA``.
        """
        return self.p <= ALPHA

    def __str__(self) -> str:
        return f"{self.wins}/{self.draws}/{self.losses}"


def wdl(a: pd.Series | Sequence[float], b: pd.Series | Sequence[float], *, rtol: float = DRAW_RTOL,
        atol: float = DRAW_ATOL) -> WDL:
    """W-D-L of ``a`` vs ``b`` over the datasets where both are defined.

    ``a`` and ``b`` are per-dataset means (Series indexed by dataset, or
    equal-length sequences); NaNs drop the dataset.

    Parameters
    ----------
    a : pandas.Series or sequence of float
        Per-dataset means of the first model (its wins are counted).
    b : pandas.Series or sequence of float
        Per-dataset means of the second model, aligned with ``a`` by index.
    rtol : float, default=1e-9
        Relative tolerance of a draw.
    atol : float, default=1e-12
        Absolute tolerance of a draw.

    Returns
    -------
    WDL
        The counts and the sign test.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` are plain sequences of different lengths.
    """
    a = pd.Series(a, dtype=float) if not isinstance(a, pd.Series) else a.astype(float)
    b = pd.Series(b, dtype=float) if not isinstance(b, pd.Series) else b.astype(float)
    if isinstance(a.index, pd.RangeIndex) and isinstance(b.index, pd.RangeIndex) and len(a) != len(b):
        raise ValueError("a and b have different lengths")
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1).dropna()
    w = d = l = 0
    for x, y in zip(both["a"], both["b"]):
        if is_draw(x, y, rtol=rtol, atol=atol):
            d += 1
        elif x < y:
            w += 1
        else:
            l += 1
    return WDL(w, d, l, sign_test(w, l))


SUBSETS = ("All", "Big")
"""The default dataset subsets of the tables and figures."""
SUBSET_NAMES = ("All", "Little", "Big")
"""Every subset a report may ask for (``Little``: the datasets that are not Big)."""


def subset_datasets(summary: pd.DataFrame, subset: str) -> list[str]:
    """Datasets of a subset: ``All``, ``Big`` (the ``big`` column: > 10,000 instances unless the report
    sets another threshold) or ``Little`` (the others).

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means (:func:`bncbench.report.summary.summarize`).
    subset : {"All", "Little", "Big"}
        The subset.

    Returns
    -------
    list of str
        The datasets, in order of first appearance (``Big`` is empty without a ``big`` column).

    Raises
    ------
    ValueError
        If ``subset`` is unknown.
    """
    ds = summary.drop_duplicates("dataset")
    if subset == "All":
        return list(ds["dataset"])
    if subset in ("Big", "Little"):
        big = ds["big"].fillna(False).astype(bool) if "big" in ds else pd.Series(False, index=ds.index)
        keep = big.to_numpy() if subset == "Big" else ~big.to_numpy()
        return list(ds.loc[keep, "dataset"])
    raise ValueError(f"unknown subset {subset!r}")


def metric_matrix(summary: pd.DataFrame, metric: str, models: Sequence[str] | None = None,
                  datasets: Sequence[str] | None = None) -> pd.DataFrame:
    """Datasets x models matrix of one metric's per-dataset means.

    A (dataset, model) with a failed task (``n_failed > 0``), no successful
    task, or fewer successful folds than the dataset's most complete model
    (``n_ok`` below the dataset's maximum: a sweep still running or stopped)
    is NaN: a mean over fewer folds is not comparable. A dataset on which every
    model has the same, smaller number of folds (e.g. one round of a huge
    dataset) stays comparable: the models share those folds.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means.
    metric : str
        A column of ``summary``.
    models : sequence of str, optional
        Columns of the result, in this order (missing models give NaN columns); all by default.
    datasets : sequence of str, optional
        Rows of the result, in this order (missing datasets give NaN rows); all by default.

    Returns
    -------
    pandas.DataFrame
        Float matrix, index ``dataset``, columns ``model``.

    Raises
    ------
    BNCBenchError
        If ``metric`` is not a column of ``summary``.
    """
    if metric not in summary:
        have = [m for m in METRIC_NAMES if m in summary]
        raise BNCBenchError(f"metric {metric!r} is not in the results (their records have none); they have "
                            f"{', '.join(have)}")
    s = summary
    if "n_failed" in s:
        s = s.assign(**{metric: s[metric].where((s["n_failed"].fillna(0) == 0) & (s.get("n_ok", 1) != 0))})
    if "n_ok" in s:
        s = s.assign(**{metric: s[metric].where(~incomplete(s))})
    m = s.pivot_table(index="dataset", columns="model", values=metric, aggfunc="first", dropna=False)
    if models is not None:
        m = m.reindex(columns=list(models))
    if datasets is not None:
        m = m.reindex(index=[d for d in datasets])
    return m.astype(float)


def incomplete(summary: pd.DataFrame) -> pd.Series:
    """Whether each (dataset, model) has fewer successful folds than its dataset's most complete model.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means with ``dataset`` and ``n_ok`` columns.

    Returns
    -------
    pandas.Series of bool
        Aligned with ``summary``; all False without an ``n_ok`` column.
    """
    if "n_ok" not in summary:
        return pd.Series(False, index=summary.index)
    n_ok = summary["n_ok"].fillna(0)
    return n_ok < n_ok.groupby(summary["dataset"]).transform("max")


def wdl_table(summary: pd.DataFrame, pairs: Sequence[tuple[str, str]], metrics: Sequence[str], *,
              subsets: Sequence[str] = SUBSETS, rtol: float = DRAW_RTOL, atol: float = DRAW_ATOL) -> pd.DataFrame:
    """Long-format W-D-L table: one row per (subset, metric, pair).

    Columns: ``subset, metric, model_a, model_b, wins, draws, losses, n, p,
    significant``; ``wins`` count datasets where ``model_a``'s mean is lower.
    Subset ``Big`` rows are omitted when the results hold no big dataset.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means.
    pairs : sequence of tuple of str
        ``(model_a, model_b)`` pairs.
    metrics : sequence of str
        Metrics compared.
    subsets : sequence of str, default=("All", "Big")
        Dataset subsets.
    rtol, atol : float
        Tolerances of a draw (see :func:`is_draw`).

    Returns
    -------
    pandas.DataFrame
        The table (empty, with its columns, when no subset has datasets).

    Raises
    ------
    BNCBenchError
        If a model of a pair or a metric is not in the results.
    ValueError
        If a subset is unknown.
    """
    known = set(summary["model"]) if len(summary) else set()
    for a, b in pairs:
        for m in (a, b):
            if m not in known:
                raise BNCBenchError(f"model {m!r} is not in the results; models: {', '.join(sorted(known))}")
    rows = []
    for subset in subsets:
        dsets = subset_datasets(summary, subset)
        if not dsets:
            continue
        for metric in metrics:
            mat = metric_matrix(summary, metric, datasets=dsets)
            for a, b in pairs:
                r = wdl(mat[a], mat[b], rtol=rtol, atol=atol)
                rows.append({"subset": subset, "metric": metric, "model_a": a, "model_b": b,
                             "wins": r.wins, "draws": r.draws, "losses": r.losses, "n": r.n,
                             "p": r.p, "significant": r.significant})
    cols = ["subset", "metric", "model_a", "model_b", "wins", "draws", "losses", "n", "p", "significant"]
    return pd.DataFrame(rows, columns=cols)


WINLOSS_COLUMNS = ["subset", "metric", "series", "position", "x", "model_a", "model_b", "wins", "draws", "losses",
                   "n", "wins_minus_losses", "p", "significant"]


def winloss_data(summary: pd.DataFrame, series: dict[str, Sequence[tuple[str, str]]], metrics: Sequence[str], *,
                 x: Sequence[Any] | None = None, subsets: Sequence[str] = SUBSETS,
                 rtol: float = DRAW_RTOL, atol: float = DRAW_ATOL) -> pd.DataFrame:
    """The data of a win/loss plot: W-D-L of every pair of every series, by subset and metric.

    ``series``: ``{curve name: [(a, b), ...]}``, all lists of the same length;
    position ``i`` of every series is plotted at ``x[i]`` (default: the
    second model of the first series' pairs). Counts are those of
    :func:`wdl_table` (same draw rule, datasets where both models have a
    result, subset ``Big`` omitted when no dataset is big). One row per
    (subset, metric, series, position), columns :data:`WINLOSS_COLUMNS`;
    ``wins_minus_losses`` is what the plot shows by default (draws ignored).

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means.
    series : dict of str to sequence of tuple of str
        Curve name -> ``(a, b)`` pairs.
    metrics : sequence of str
        Metrics compared.
    x : sequence, optional
        Tick labels, one per position (converted to str).
    subsets : sequence of str, default=("All", "Big")
        Dataset subsets.
    rtol, atol : float
        Tolerances of a draw.

    Returns
    -------
    pandas.DataFrame
        The rows described above.

    Raises
    ------
    BNCBenchError
        If there is no series, the series are empty or of different lengths, ``x`` has the wrong
        length, or a model or metric is not in the results.
    """
    series = {str(k): [tuple(p) for p in v] for k, v in series.items()}
    if not series:
        raise BNCBenchError("a win/loss plot needs at least one series")
    lengths = {len(v) for v in series.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise BNCBenchError("every series of a win/loss plot needs the same, non-zero number of pairs")
    n_pos = lengths.pop()
    x = [b for _, b in next(iter(series.values()))] if x is None else [str(v) for v in x]
    if len(x) != n_pos:
        raise BNCBenchError(f"a win/loss plot has {len(x)} x labels for {n_pos} pairs per series")
    pairs = list(dict.fromkeys(p for ps in series.values() for p in ps))
    table = wdl_table(summary, pairs, metrics, subsets=subsets, rtol=rtol, atol=atol)
    rows = []
    for (subset, metric), g in table.groupby(["subset", "metric"], sort=False):
        by_pair = {(r["model_a"], r["model_b"]): r for r in g.to_dict("records")}
        for name, ps in series.items():
            for i, (a, b) in enumerate(ps):
                r = by_pair[(a, b)]
                rows.append({**r, "series": name, "position": i, "x": x[i],
                             "wins_minus_losses": r["wins"] - r["losses"]})
    return pd.DataFrame(rows, columns=WINLOSS_COLUMNS)


# --------------------------------------------------------------- geometric means
def geometric_mean_ratios(summary: pd.DataFrame, metric: str, models: Sequence[str], reference: str,
                          datasets: Sequence[str] | None = None) -> dict[str, Any]:
    """Geometric mean over datasets of ``metric(model) / metric(reference)``.

    Only datasets where every listed model (and the reference) has a
    positive, finite mean are used (a 0-1 loss of 0 has no logarithm); the
    number used and dropped is returned with the ratios:
    ``{"ratios": {model: gm}, "n": n_used, "dropped": [datasets]}``.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-dataset means.
    metric : str
        The metric.
    models : sequence of str
        Models to compare (the reference is added first if missing).
    reference : str
        The reference model (its ratio is 1).
    datasets : sequence of str, optional
        Datasets considered; all by default.

    Returns
    -------
    dict
        ``ratios`` (NaN for every model when no dataset is usable), ``n`` and ``dropped``.

    Raises
    ------
    BNCBenchError
        If ``metric`` is not in the results.
    """
    models = list(dict.fromkeys([reference, *models]))
    mat = metric_matrix(summary, metric, models=models, datasets=datasets)
    ok = np.isfinite(mat).all(axis=1) & (mat > 0).all(axis=1)
    used = mat[ok]
    dropped = list(mat.index[~ok])
    if used.empty:
        return {"ratios": {m: np.nan for m in models}, "n": 0, "dropped": dropped}
    logs = np.log(used.to_numpy())
    rel = logs - logs[:, [0]]
    gm = np.exp(rel.mean(axis=0))
    return {"ratios": dict(zip(models, gm.tolist())), "n": int(len(used)), "dropped": dropped}


# ------------------------------------------------------------ Friedman / Nemenyi
def rank_matrix(values: ArrayLike) -> np.ndarray:
    """Per-row ranks (1 = lowest value = best), ties get the average rank.

    Parameters
    ----------
    values : array-like of shape (n, k)
        One row per dataset, one column per model.

    Returns
    -------
    ndarray of shape (n, k)
        Float ranks.
    """
    return np.apply_along_axis(_st.rankdata, 1, np.asarray(values, dtype=float))


def nemenyi_q(k: int, alpha: float = ALPHA) -> float:
    """Critical value q_alpha of the Nemenyi test: studentized range / sqrt(2) (Demšar 2006, Table 5).

    Parameters
    ----------
    k : int
        Number of models (>= 2).
    alpha : float, default=0.05
        Significance level.

    Returns
    -------
    float
        ``q_alpha``.

    Raises
    ------
    ValueError
        If ``k < 2``.
    """
    if k < 2:
        raise ValueError("need at least two models")
    return float(_st.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2))


def nemenyi_cd(k: int, n: int, alpha: float = ALPHA) -> float:
    """Critical difference of average ranks: ``q_alpha * sqrt(k (k + 1) / (6 n))``.

    Parameters
    ----------
    k : int
        Number of models (>= 2).
    n : int
        Number of datasets.
    alpha : float, default=0.05
        Significance level.

    Returns
    -------
    float
        The critical difference.

    Raises
    ------
    ValueError
        If ``k < 2``.
    """
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


@dataclass
class FriedmanResult:
    """The Friedman test of one metric, with the Iman–Davenport F and the Nemenyi critical difference.

    Attributes
    ----------
    metric : str
        The metric tested.
    models : list of str
        Models, in the matrix's column order.
    datasets : list of str
        Datasets with results for every model.
    avg_ranks : pandas.Series
        Average rank by model, ascending (best first).
    statistic : float
        Friedman chi-square, tie-corrected as ``scipy.stats.friedmanchisquare``.
    pvalue : float
        Its p-value (chi-square with ``k - 1`` degrees of freedom).
    iman_davenport : float
        F statistic of Iman & Davenport (1980); ``inf`` when the rankings agree perfectly.
    iman_davenport_p : float
        Its p-value.
    cd : float
        Nemenyi critical difference at ``alpha``.
    alpha : float
        Significance level.
    """
    metric: str
    models: list
    datasets: list
    avg_ranks: pd.Series  # by model, ascending (best first)
    statistic: float  # Friedman chi-square, tie-corrected as scipy.stats.friedmanchisquare
    pvalue: float
    iman_davenport: float  # F statistic of Iman & Davenport (1980)
    iman_davenport_p: float
    cd: float  # Nemenyi critical difference at alpha
    alpha: float

    @property
    def n(self) -> int:
        """Number of datasets.

        Returns
        -------
        int
            ``len(datasets)``.
        """
        return len(self.datasets)

    @property
    def k(self) -> int:
        """Number of models.

        Returns
        -------
        int
            ``len(models)``.
        """
        return len(self.models)

    def table(self) -> pd.DataFrame:
        """The average ranks as a table.

        Returns
        -------
        pandas.DataFrame
            Columns ``model`` and ``avg_rank``, best first.
        """
        return pd.DataFrame({"model": self.avg_ranks.index, "avg_rank": self.avg_ranks.to_numpy()})


def friedman(matrix: pd.DataFrame, *, metric: str = "", alpha: float = ALPHA) -> FriedmanResult:
    """Friedman test over a datasets x models matrix of losses (rows with NaN dropped).

    Statistic (with the usual tie correction, so it equals
    ``scipy.stats.friedmanchisquare``)::

        chi2 = 12 n / (k (k+1)) * sum_j (R_j - (k+1)/2)^2 / (1 - sum_i sum_t (t^3 - t) / (n k (k^2 - 1)))

    with ``R_j`` the average rank of model ``j``; also the Iman–Davenport F
    and the Nemenyi critical difference (Demšar 2006).

    Parameters
    ----------
    matrix : pandas.DataFrame
        Datasets x models (e.g. :func:`metric_matrix`); lower is better.
    metric : str, default=""
        Name stored in the result.
    alpha : float, default=0.05
        Significance level of the critical difference.

    Returns
    -------
    FriedmanResult
        The test.

    Raises
    ------
    BNCBenchError
        If there are fewer than two models, or fewer than two datasets with results for every model.
    """
    mat = matrix.dropna(axis=0, how="any")
    n, k = mat.shape
    if k < 2:
        raise BNCBenchError("the Friedman test needs at least two models")
    if n < 2:
        raise BNCBenchError(f"the Friedman test needs at least two datasets with results for every model (have {n})")
    ranks = rank_matrix(mat.to_numpy())
    avg = ranks.mean(axis=0)
    ties = 0.0
    for row in mat.to_numpy():
        _, counts = np.unique(row, return_counts=True)
        ties += float(((counts**3) - counts).sum())
    denom = 1.0 - ties / (n * k * (k * k - 1))
    chi2 = 12.0 * n / (k * (k + 1)) * float(((avg - (k + 1) / 2.0) ** 2).sum())
    chi2 = chi2 / denom if denom > 0 else 0.0
    p = float(_st.chi2.sf(chi2, k - 1))
    if n * (k - 1) - chi2 > 0:
        ff = (n - 1) * chi2 / (n * (k - 1) - chi2)
        ffp = float(_st.f.sf(ff, k - 1, (k - 1) * (n - 1)))
    else:  # perfect agreement of the rankings
        ff, ffp = math.inf, 0.0
    avg_ranks = pd.Series(avg, index=list(mat.columns)).sort_values(kind="stable")
    return FriedmanResult(metric, list(mat.columns), list(mat.index), avg_ranks, chi2, p, ff, ffp,
                          nemenyi_cd(k, n, alpha), alpha)


def nemenyi_cliques(avg_ranks: pd.Series, cd: float) -> list[list[str]]:
    """Maximal groups of models (sorted by rank) whose rank range is below ``cd``.

    These are the bars of the critical-difference diagram: models joined by
    a bar are not significantly different.

    Parameters
    ----------
    avg_ranks : pandas.Series
        Average rank by model, ascending.
    cd : float
        The critical difference.

    Returns
    -------
    list of list of str
        Each group's models in rank order; groups of at least two models, none inside another.
    """
    names = list(avg_ranks.index)
    r = avg_ranks.to_numpy()
    cliques = []
    for i in range(len(r)):
        j = i
        while j + 1 < len(r) and r[j + 1] - r[i] < cd:
            j += 1
        if j > i and not any(c[0] <= i and j <= c[1] for c in cliques):
            cliques.append((i, j))
    return [names[i : j + 1] for i, j in cliques]
