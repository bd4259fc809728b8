"""Sensitivity to the tuned hyperparameters: the held-out rate of every grid candidate (Pernkopf et al., Fig. 5).

A model fitted with a tuning grid (``optimizer_options.grid``, :mod:`bncbench.engine.tuning`; the SVM's
``grid``, :mod:`bncbench.baselines.svm_rbf`) stores in its record's ``tuning`` every candidate's values
and held-out error. :func:`tuning_curves` gathers them: per dataset and model, the held-out
classification rate of each candidate, averaged over the records (folds, rounds). The x axis is the
grid's **last** hyperparameter (the one that varies fastest in grid order: ``kappa`` in the
pernkopf experiments' ``{margin_lam, kappa}``, Fig. 5's axis); each combination of the others is a
line. :func:`sensitivity_section` writes them as a table and one figure per model (one panel per dataset).
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import pandas as pd

from bncbench.report.slugs import slug
from bncbench.report.sections import Section, frame_table

if TYPE_CHECKING:
    from bncbench.report.build import _Writer

RESULT_FIELDS = ("val_error", "val_nll", "best_iter", "n_iter", "time")
"""Fields of a tuning candidate that are results, not hyperparameter values."""

COLUMNS = ["dataset", "model", "x_name", "x", "line", "rate", "std", "n"]


def _candidates(tuning) -> list[dict]:
    if not isinstance(tuning, dict):
        return []
    return [c for c in tuning.get("candidates") or [] if isinstance(c, dict) and "val_error" in c]


def tuning_curves(records: pd.DataFrame) -> pd.DataFrame:
    """The held-out classification rate (%) of every tuning candidate, per dataset and model.

    Parameters
    ----------
    records : pandas.DataFrame
        :func:`bncbench.harness.store.load_results`; records without a ``tuning`` field are skipped.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, x_name, x, line, rate, std, n``: ``x_name`` the grid's last
        hyperparameter, ``x`` its value, ``line`` the other hyperparameters' values
        (``"margin_lam=0.05"``; empty when the grid has one name), ``rate`` the mean over the
        ``n`` records of ``100 * (1 - val_error)``, ``std`` its standard deviation over them
        (NaN for one record). Rows in the records' order of datasets and models and in grid order.
    """
    rows = []
    if "tuning" not in records:
        return pd.DataFrame(columns=COLUMNS)
    for rec in records.itertuples():
        cands = _candidates(getattr(rec, "tuning"))
        if not cands:
            continue
        names = [k for k in cands[0] if k not in RESULT_FIELDS]
        x_name, others = names[-1], names[:-1]
        for order, c in enumerate(cands):
            line = ", ".join(f"{k}={c[k]:g}" if isinstance(c[k], Real) else f"{k}={c[k]}" for k in others)
            rows.append({"dataset": rec.dataset, "model": rec.model, "x_name": x_name, "x": c[x_name],
                         "line": line, "order": order, "rate": 100.0 * (1.0 - float(c["val_error"]))})
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    df = pd.DataFrame(rows)
    g = df.groupby(["dataset", "model", "x_name", "line", "x"], sort=False)
    out = g.agg(rate=("rate", "mean"), std=("rate", "std"), n=("rate", "size"), order=("order", "min")).reset_index()
    keys = {k: i for i, k in enumerate(dict.fromkeys(zip(df["dataset"], df["model"])))}
    out["_dm"] = [keys[k] for k in zip(out["dataset"], out["model"])]
    return out.sort_values(["_dm", "order"], kind="stable")[COLUMNS].reset_index(drop=True)


def panels_of(curves: pd.DataFrame, model: str) -> dict:
    """One model's curves as :func:`bncbench.report.figures.xy_curves` panels: ``{dataset: {line: (x, rate)}}``.

    Only numeric ``x`` values are plotted (a string such as the SVM's ``gamma="scale"`` has no position
    on the axis); a line is sorted by ``x``.
    """
    out = {}
    mine = curves[curves["model"] == model]
    for dataset, d in mine.groupby("dataset", sort=False):
        lines = {}
        for line, l in d.groupby("line", sort=False):
            num = l[l["x"].map(lambda v: isinstance(v, Real) and not isinstance(v, bool))]
            if len(num):
                num = num.sort_values("x", kind="stable")
                lines[line or model] = (num["x"].to_numpy(dtype=float), num["rate"].to_numpy(dtype=float))
        if lines:
            out[dataset] = lines
    return out


def sensitivity_section(records: pd.DataFrame, figures: bool, w: _Writer) -> Section | None:
    """The section: the table of :func:`tuning_curves` and, with ``figures``, one figure per tuned model.

    Parameters
    ----------
    records : pandas.DataFrame
        The report's records.
    figures : bool
        Whether to draw figures (the report's ``figures`` setting).
    w : _Writer
        The report's writer.

    Returns
    -------
    Section or None
        None when no record has tuning candidates.
    """
    cur = tuning_curves(records)
    if cur.empty:
        return None
    sec = Section("Sensitivity to the tuned hyperparameters (Pernkopf et al., Fig. 5)")
    sec.items.append(("text", (
        "Every candidate of a model's tuning grid, fitted on the training part of each fold and scored on its "
        "held-out part: the held-out classification rate (%), mean over the folds (`n`), against the grid's last "
        "hyperparameter; one line per value of the others. The test rate is only known for the chosen candidate.")))
    sec.items.append(frame_table(w, "tuning_curves", cur))
    if figures:
        for model in dict.fromkeys(cur["model"]):
            panels = panels_of(cur, model)
            if not panels:
                continue
            x_name = cur.loc[cur["model"] == model, "x_name"].iloc[0]
            sec.items.append(("figure", f"{model}: held-out rate against {x_name}",
                              w.figure(f"figures/tuning_{slug(model)}", "xy_curves", panels, xlabel=x_name,
                                       ylabel="held-out classification rate [%]",
                                       title=f"{model}: sensitivity to {x_name}")))
    return sec
