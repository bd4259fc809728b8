"""Feelders & Ivanovs' Table 2: iterations and flops to reach a CLL threshold (§6), and Fig. 3's curves.

For each dataset and training fold, ``CLL_ML`` is the CLL every model starts from (the generative
estimate mapped into its space: iteration 0 of its trace) and ``CLL_max`` the largest CLL any model
reached; the threshold is ``t = CLL_max - bound (CLL_max - CLL_ML)`` (``bound = 0.05``). A model's
cost is the iteration, and the ``flops_total``, of the first trace record with ``CLL >= t`` (``NaN``
if it never gets there). Per dataset the costs are the median over the folds, then divided by the
row's smallest (the paper's scaling), with the column means in a last row.

Columns are the models whose traces record ``flops_total`` (the Nash optimizers, and CGB over a map
with ``flop_costs``), in the order of the records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BOUND = 0.05


def _ok_traced(records: pd.DataFrame) -> pd.DataFrame:
    if "trace" not in records:
        return records.iloc[0:0]
    ok = records[(records["status"] == "ok")]
    has = ok["trace"].map(lambda t: isinstance(t, list) and len(t) > 0 and "flops_total" in t[-1])
    return ok[has]


def has_flops(records: pd.DataFrame) -> bool:
    """Whether any record's trace counts flops (the section is then added to the report).

    Parameters
    ----------
    records : pandas.DataFrame
        The long-format records (:func:`bncbench.harness.store.load_results`).

    Returns
    -------
    bool
    """
    return len(_ok_traced(records)) > 0


def costs_to_threshold(records: pd.DataFrame, bound: float = BOUND) -> pd.DataFrame:
    """Per (dataset, round, fold, model): the iterations and flops to the threshold, and the CLLs.

    Parameters
    ----------
    records : pandas.DataFrame
        The records; those with flop-counting traces are used.
    bound : float, default=0.05
        The threshold's fraction of ``CLL_max - CLL_ML``.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, round, fold, model, cll_ml, cll_start, cll_max, threshold, cll_final,
        iterations, flops``.
    """
    sel = _ok_traced(records)
    rows = []
    for (d, r, f), g in sel.groupby(["dataset", "round", "fold"], sort=False):
        curves = {m: np.array([-float(t["nll"]) for t in tr]) for m, tr in zip(g["model"], g["trace"])}
        traces = dict(zip(g["model"], g["trace"]))
        cll_ml = float(np.median([c[0] for c in curves.values()]))
        cll_max = max(float(c.max()) for c in curves.values())
        t = cll_max - bound * (cll_max - cll_ml)
        for m, c in curves.items():
            hit = np.flatnonzero(c >= t)
            k = int(hit[0]) if hit.size else None
            tr = traces[m]
            rows.append({"dataset": d, "round": r, "fold": f, "model": m, "cll_ml": cll_ml, "cll_start": float(c[0]),
                         "cll_max": cll_max, "threshold": t, "cll_final": float(c[-1]),
                         "iterations": np.nan if k is None else float(tr[k]["iter"]),
                         "flops": np.nan if k is None else float(tr[k]["flops_total"])})
    return pd.DataFrame(rows, columns=["dataset", "round", "fold", "model", "cll_ml", "cll_start", "cll_max",
                                       "threshold", "cll_final", "iterations", "flops"])


def scaled_table(costs: pd.DataFrame, what: str, datasets=None, models=None) -> pd.DataFrame:
    """Table 2's half for ``what`` (``"iterations"`` or ``"flops"``): per dataset, scaled by the row's smallest.

    Parameters
    ----------
    costs : pandas.DataFrame
        From :func:`costs_to_threshold`.
    what : {"iterations", "flops"}
        The cost.
    datasets, models : list of str, optional
        Row and column order (default: order of appearance).

    Returns
    -------
    pandas.DataFrame
        Index the datasets and ``mean``, columns the models; median over folds, divided by the
        row's minimum (a model with 0 iterations counts as 1: it started at the threshold).
    """
    med = costs.groupby(["dataset", "model"], sort=False)[what].median().unstack("model")
    datasets = list(dict.fromkeys(costs["dataset"])) if datasets is None else datasets
    models = list(dict.fromkeys(costs["model"])) if models is None else models
    med = med.reindex(index=datasets, columns=models)
    med = med.clip(lower=1.0) if what == "iterations" else med
    scaled = med.div(med.min(axis=1), axis=0)
    scaled.loc["mean"] = scaled.mean(axis=0)
    return scaled


def curves(records: pd.DataFrame, dataset: str, x: str, fold: tuple = (0, 0)) -> dict:
    """Fig. 3's curves: ``{model: (x values, CLL)}`` on one training fold of ``dataset``.

    Parameters
    ----------
    records : pandas.DataFrame
        The records.
    dataset : str
        The dataset.
    x : {"iter", "flops_total"}
        The x axis.
    fold : (int, int), default=(0, 0)
        ``(round, fold)``.

    Returns
    -------
    dict
    """
    sel = _ok_traced(records)
    sel = sel[(sel["dataset"] == dataset) & (sel["round"] == fold[0]) & (sel["fold"] == fold[1])]
    return {m: (np.array([float(t[x]) for t in tr]), np.array([-float(t["nll"]) for t in tr]))
            for m, tr in zip(sel["model"], sel["trace"])}
