"""Convergence analysis of optimized models (Zaidi et al. 2017 §7.4, Figs. 13-17).

A *trace* is the list of per-iteration dicts a record keeps for an optimized
model, ``{"iter", "nll", "n_fev", "time"}``, with iteration 0 the training
NLL before optimization.

The histogram rule (§7.4, Figs. 15-17), for a weighted model ``w`` and
another parameterization ``o`` (discriminative ``d`` or extended ``e``) of
the same structure and initialization, trained on the same fold, at
iteration ``at = 5``:

* ``w`` ahead (``nll_w[5] < nll_o[5]``): the number of iterations ``o``
  needs *after* iteration 5 to reach ``nll_w[5]``, i.e. ``j - 5`` for the
  first ``j >= 5`` with ``nll_o[j] <= nll_w[5]``; positive.
* ``w`` behind (``nll_w[5] > nll_o[5]``): minus the number of iterations
  ``w`` needs after iteration 5 to reach ``nll_o[5]``; negative.
* equal at iteration 5 (within ``rtol``): 0.

Conventions the paper leaves open, fixed here:

* An optimizer that stopped before iteration ``j`` keeps its last NLL
  (the trace is extended with its final value), so a model that converged
  in 3 iterations is compared at iteration 5 with its final NLL.
* If the lagging model never reaches the target (it stopped above it), the
  gap is *censored*: its magnitude is the number of iterations it ran after
  iteration 5 plus one (a lower bound), and ``censored`` is set.
* "Reaching" a target allows a relative tolerance ``rtol`` (default 1e-9) to
  absorb round-off.
* Folds: the gap is computed per (round, fold) on the two models' traces of
  that same training fold; a dataset's value is the **median over its
  folds** (``aggregate="median"``; ``"first"`` uses round 0 fold 0 only and
  ``"mean"`` the mean). A dataset's gap is censored if more than half of
  its folds are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

AT = 5
RTOL = 1e-9


def nll_curve(trace: Sequence[Mapping[str, Any]] | float | None) -> np.ndarray:
    """NLL by iteration (index = iteration, 0 = before optimization) from a trace.

    Missing iterations take the last NLL seen before them.

    Parameters
    ----------
    trace : list of dict, float or None
        A record's trace (dicts with ``"iter"`` and ``"nll"``); None or NaN (a record without one)
        gives an empty curve.

    Returns
    -------
    ndarray of shape (last_iteration + 1,)
        The NLL per iteration (float); NaN before the first logged iteration.
    """
    if trace is None or (isinstance(trace, float) and math.isnan(trace)) or len(trace) == 0:
        return np.empty(0)
    pts = sorted((int(t["iter"]), float(t["nll"])) for t in trace)
    last = pts[-1][0]
    out = np.full(last + 1, np.nan)
    for i, v in pts:
        out[i] = v
    # forward fill (an iteration not logged keeps the previous value)
    for i in range(1, out.size):
        if np.isnan(out[i]):
            out[i] = out[i - 1]
    return out


def _at(curve: np.ndarray, i: int) -> float:
    return float(curve[min(i, curve.size - 1)])


def _reached(value: float, target: float, rtol: float) -> bool:
    return value <= target + rtol * max(abs(target), 1.0)


def iterations_to_reach(curve: np.ndarray, target: float, start: int = AT, rtol: float = RTOL) -> tuple[int, bool]:
    """``(j - start, False)`` for the first ``j >= start`` with ``curve[j] <= target``.

    If the curve never reaches the target: ``(iterations run after start + 1, True)``
    (a censored lower bound).

    Parameters
    ----------
    curve : ndarray of shape (n_iter,)
        An NLL curve (:func:`nll_curve`), non-empty; past its end it keeps its last value.
    target : float
        The NLL to reach (within ``rtol``: ``curve[j] <= target + rtol * max(|target|, 1)``).
    start : int, default=5
        First iteration considered.
    rtol : float, default=1e-9
        Relative tolerance.

    Returns
    -------
    n : int
        Iterations after ``start`` (or the censored lower bound).
    censored : bool
        True when the target is never reached.
    """
    for j in range(start, max(curve.size, start + 1)):
        if _reached(_at(curve, j), target, rtol):
            return j - start, False
    return max(curve.size - 1 - start, 0) + 1, True


@dataclass(frozen=True)
class Gap:
    """The §7.4 histogram value of one pair of NLL curves.

    Attributes
    ----------
    value : float
        Positive: ``w`` ahead by that many iterations of the other model; negative: ``w`` behind;
        0: equal at the comparison iteration; NaN without curves.
    censored : bool
        The lagging model never reached the target (``value`` is a lower bound in magnitude).
    """
    value: float  # positive: w ahead by that many iterations of the other; negative: w behind
    censored: bool


def convergence_gap(w_curve: ArrayLike, other_curve: ArrayLike, at: int = AT, rtol: float = RTOL) -> Gap:
    """The §7.4 histogram value for one pair of NLL curves (see the module docstring).

    Parameters
    ----------
    w_curve : array-like of float
        NLL curve of the weighted model.
    other_curve : array-like of float
        NLL curve of the other parameterization, on the same fold.
    at : int, default=5
        Comparison iteration.
    rtol : float, default=1e-9
        Relative tolerance of equality and of reaching a target.

    Returns
    -------
    Gap
        The signed gap; ``Gap(nan, False)`` when a curve is empty.
    """
    w = np.asarray(w_curve, dtype=float)
    o = np.asarray(other_curve, dtype=float)
    if w.size == 0 or o.size == 0:
        return Gap(math.nan, False)
    w5, o5 = _at(w, at), _at(o, at)
    if abs(w5 - o5) <= rtol * max(abs(w5), abs(o5), 1.0):
        return Gap(0.0, False)
    if w5 < o5:
        n, cens = iterations_to_reach(o, w5, at, rtol)
        return Gap(float(n), cens)
    n, cens = iterations_to_reach(w, o5, at, rtol)
    return Gap(float(-n), cens)


def dataset_gaps(records: pd.DataFrame, w_model: str, other_model: str, *, at: int = AT,
                 aggregate: str = "median", rtol: float = RTOL) -> pd.DataFrame:
    """Per-dataset gaps of ``w_model`` over ``other_model`` from records with traces.

    Returns columns ``dataset, gap, censored, n_folds`` (folds with both traces).

    Parameters
    ----------
    records : pandas.DataFrame
        Records with a ``trace`` column (``load_results(..., with_trace=True)``); failed tasks are
        ignored.
    w_model : str
        Label of the weighted model.
    other_model : str
        Label of the other model.
    at : int, default=5
        Comparison iteration.
    aggregate : {"median", "mean", "first"}, default="median"
        How a dataset's fold gaps are combined (``"first"``: the first (round, fold) with both
        traces).
    rtol : float, default=1e-9
        Relative tolerance.

    Returns
    -------
    pandas.DataFrame
        One row per dataset with both traces on some fold, sorted by dataset; ``censored`` when
        more than half of its folds are. Empty (with the columns) without a ``trace`` column.

    Raises
    ------
    ValueError
        If ``aggregate`` is unknown.
    """
    if aggregate not in ("median", "mean", "first"):
        raise ValueError(f"unknown aggregate {aggregate!r}")
    cols = ["dataset", "gap", "censored", "n_folds"]
    if "trace" not in records:
        return pd.DataFrame(columns=cols)
    ok = records[(records["status"] == "ok") & records["model"].isin([w_model, other_model])]
    rows = []
    for dataset, g in ok.groupby("dataset", sort=True):
        w = {(r, f): t for r, f, t in g.loc[g["model"] == w_model, ["round", "fold", "trace"]].itertuples(index=False)}
        o = {(r, f): t for r, f, t in g.loc[g["model"] == other_model, ["round", "fold", "trace"]].itertuples(index=False)}
        keys = sorted(set(w) & set(o))
        gaps = []
        for key in keys:
            cw, co = nll_curve(w[key]), nll_curve(o[key])
            if cw.size and co.size:
                gaps.append(convergence_gap(cw, co, at, rtol))
        if not gaps:
            continue
        if aggregate == "first":
            gaps = gaps[:1]
        vals = np.array([x.value for x in gaps])
        cens = np.array([x.censored for x in gaps])
        value = float(np.median(vals) if aggregate in ("median", "first") else vals.mean())
        rows.append({"dataset": dataset, "gap": value, "censored": bool(cens.mean() > 0.5), "n_folds": len(gaps)})
    return pd.DataFrame(rows, columns=cols)


def median_trace(records: pd.DataFrame, dataset: str, model: str) -> np.ndarray:
    """The element-wise median NLL curve over a dataset's folds (curves extended with their final value).

    Parameters
    ----------
    records : pandas.DataFrame
        Records with a ``trace`` column.
    dataset : str
        Dataset name.
    model : str
        Model label.

    Returns
    -------
    ndarray of shape (n_iter,)
        Median NLL per iteration over the successful folds, as long as the longest curve; empty
        without traces.
    """
    sel = records[(records["dataset"] == dataset) & (records["model"] == model) & (records["status"] == "ok")]
    curves = [nll_curve(t) for t in sel["trace"]] if "trace" in sel else []
    curves = [c for c in curves if c.size]
    if not curves:
        return np.empty(0)
    n = max(c.size for c in curves)
    stack = np.vstack([np.pad(c, (0, n - c.size), mode="edge") for c in curves])
    return np.median(stack, axis=0)


# ------------------------------------------------------------------ iterations and time (deep-broad Figs. 11-14)
PAIR_COLUMNS = ["w_model", "other_model", "dataset", "n_iter_w", "n_iter_other", "train_time_w",
                "train_time_other", "n_folds"]
CPU_COLUMNS = ["train_cpu_w", "train_cpu_other"]
"""Added to :data:`PAIR_COLUMNS` where the records carry ``train_cpu`` (CPU seconds; records before it have none)."""
CPU_SUMMARY = ["cpu_datasets", "cpu_less", "cpu_more", "cpu_ratio_geomean"]
"""Added to :func:`pair_iterations_summary`'s columns with :data:`CPU_COLUMNS`."""


def pair_iterations(records: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Per pair and dataset, each model's mean iterations and training time over the folds both ran.

    The deep-broad paper's Figs. 11-14 (iterations and training time of DBLⁿ against LRⁿ, one
    point per dataset).

    Parameters
    ----------
    records : pandas.DataFrame
        Records with ``n_iter`` and ``train_time`` (``load_results``); failed tasks and folds
        without an iteration count are ignored.
    pairs : sequence of tuple of str
        ``(w, other)`` model labels.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PAIR_COLUMNS`: one row per pair and dataset where both models have at
        least one successful (round, fold) in common with an iteration count; the means are over
        those common folds (``n_folds``). Where the records have ``train_cpu``, also
        :data:`CPU_COLUMNS`: their means over the same folds, NaN where one of them lacks it. Empty
        (with the columns) without ``n_iter``.
    """
    cpu = "train_cpu" in records
    columns = PAIR_COLUMNS + (CPU_COLUMNS if cpu else [])
    if "n_iter" not in records or not len(pairs):
        return pd.DataFrame(columns=columns)
    ok = records[(records["status"] == "ok") & records["n_iter"].notna()]
    cols = ["dataset", "round", "fold", "n_iter", "train_time"] + (["train_cpu"] if cpu else [])
    frames = []
    for w, o in pairs:
        a = ok.loc[ok["model"] == w, cols]
        b = ok.loc[ok["model"] == o, cols]
        m = a.merge(b, on=["dataset", "round", "fold"], suffixes=("_w", "_other"))
        if not len(m):
            continue
        whole = {c: (c, lambda v: v.mean(skipna=False)) for c in CPU_COLUMNS} if cpu else {}  # all folds or none
        g = (m.groupby("dataset", sort=True)
             .agg(n_iter_w=("n_iter_w", "mean"), n_iter_other=("n_iter_other", "mean"),
                  train_time_w=("train_time_w", "mean"), train_time_other=("train_time_other", "mean"),
                  n_folds=("round", "size"), **whole)
             .reset_index())
        frames.append(g.assign(w_model=w, other_model=o))
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def pair_iterations_summary(table: pd.DataFrame, subsets: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Per pair and dataset subset: on how many datasets ``w`` needs fewer / as many / more
    iterations (and less / more time) than the other, and the geometric means of the ratios.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`pair_iterations`.
    subsets : mapping of str to sequence of str
        Subset name -> its datasets (e.g. ``{"Little": [...], "Big": [...]}``).

    Returns
    -------
    pandas.DataFrame
        Columns ``w_model, other_model, subset, n_datasets, iter_fewer, iter_equal, iter_more,
        iter_ratio_geomean, time_less, time_more, time_ratio_geomean`` (ratios ``w / other``,
        over the datasets where both are positive); with the table's :data:`CPU_COLUMNS`, also
        ``cpu_datasets, cpu_less, cpu_more, cpu_ratio_geomean``: the same for CPU seconds, over the
        datasets where both models have them. A subset without a dataset of the pair is left out.
    """
    cpu = set(CPU_COLUMNS) <= set(table.columns)
    rows = []
    for (w, o), g in table.groupby(["w_model", "other_model"], sort=False):
        for subset, dsets in subsets.items():
            s = g[g["dataset"].isin(list(dsets))]
            if not len(s):
                continue
            iw, io = s["n_iter_w"].to_numpy(float), s["n_iter_other"].to_numpy(float)
            tw, to = s["train_time_w"].to_numpy(float), s["train_time_other"].to_numpy(float)
            row = {"w_model": w, "other_model": o, "subset": subset, "n_datasets": len(s),
                   "iter_fewer": int((iw < io).sum()), "iter_equal": int((iw == io).sum()),
                   "iter_more": int((iw > io).sum()), "iter_ratio_geomean": geomean_ratio(iw, io),
                   "time_less": int((tw < to).sum()), "time_more": int((tw > to).sum()),
                   "time_ratio_geomean": geomean_ratio(tw, to)}
            if cpu:
                cw, co = s["train_cpu_w"].to_numpy(float), s["train_cpu_other"].to_numpy(float)
                both = np.isfinite(cw) & np.isfinite(co)
                cw, co = cw[both], co[both]
                row.update(cpu_datasets=int(both.sum()), cpu_less=int((cw < co).sum()), cpu_more=int((cw > co).sum()),
                           cpu_ratio_geomean=geomean_ratio(cw, co))
            rows.append(row)
    return pd.DataFrame(rows, columns=["w_model", "other_model", "subset", "n_datasets", "iter_fewer", "iter_equal",
                                       "iter_more", "iter_ratio_geomean", "time_less", "time_more",
                                       "time_ratio_geomean"] + (CPU_SUMMARY if cpu else []))


def geomean_ratio(a: np.ndarray, b: np.ndarray) -> float:
    """Geometric mean of ``a / b`` over the entries where both are positive and finite (NaN where none is)."""
    keep = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)
    return float(np.exp(np.mean(np.log(a[keep] / b[keep])))) if keep.any() else math.nan
