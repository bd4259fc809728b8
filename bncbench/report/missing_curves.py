"""Features removed at test time: each model's classification rate against the number of removed features
(Pernkopf et al., Fig. 6).

A run with ``cv.missing_features`` stores in each record the rates with ``k`` features removed per test row
(:mod:`bncbench.harness.missing_protocol`): for a BNC, with them summed out (``missing``) and, with
``impute: true``, filled by kNN imputation (``knn_mode``); for a model that takes no missing values (the SVM),
filled with the neighbours' mean (``knn_mean``). :func:`missing_features_section` writes
:func:`~bncbench.harness.missing_protocol.curves` as a table and one figure per model (one panel per dataset,
one line per method).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from bncbench.harness.missing_protocol import curves
from bncbench.report.slugs import slug
from bncbench.report.sections import Section, frame_table

if TYPE_CHECKING:
    from bncbench.report.build import _Writer

METHODS = {"missing": "marginalized", "knn_mode": "kNN imputation (most frequent value)",
           "knn_mean": "kNN imputation (mean)"}
"""How each ``method`` of a record's curves is named in the figures."""


def panels_of(table: pd.DataFrame, model: str) -> dict:
    """One model's curves as :func:`bncbench.report.figures.xy_curves` panels: ``{dataset: {method: (k, rate %)}}``.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~bncbench.harness.missing_protocol.curves` of the records.
    model : str
        The model's label.

    Returns
    -------
    dict
        Per dataset, per method name (:data:`METHODS`), the removed-feature counts (sorted) and the mean
        classification rates in %.
    """
    out = {}
    for dataset, d in table[table["model"] == model].groupby("dataset", sort=False):
        out[dataset] = {METHODS.get(m, m): (g["k"].to_numpy(dtype=float), 100.0 * g["mean"].to_numpy(dtype=float))
                        for m, g in ((m, g.sort_values("k", kind="stable"))
                                     for m, g in d.groupby("method", sort=False))}
    return out


def missing_features_section(records: pd.DataFrame, figures: bool, w: _Writer) -> Section | None:
    """The section: the curves' table and, with ``figures``, one figure per model.

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
        None when no record has missing-features rates.
    """
    table = curves(records)
    if table.empty:
        return None
    sec = Section("Features removed at test time (Pernkopf et al., Fig. 6)")
    sec.items.append(("text", (
        "Classification rate on the test part with `k` features removed per test row, drawn per row "
        "(`cv.missing_features`), the same draws for every model of a fold: `mean` and `std` over the "
        "`n` rates (folds x draws). `missing`: the removed features summed out by the model "
        "(`missing: marginalize`) or ignored; `knn_mode`: filled with the most frequent value of the nearest "
        "training rows; `knn_mean`: filled with their mean (a model that takes no missing values).")))
    sec.items.append(frame_table(w, "missing_features", table))
    if figures:
        for model in dict.fromkeys(table["model"]):
            sec.items.append(("figure", f"{model}: classification rate with features removed at test time",
                              w.figure(f"figures/missing_{slug(model)}", "xy_curves", panels_of(table, model),
                                       xlabel="features removed per test row", ylabel="classification rate [%]",
                                       title=f"{model}: features removed at test time")))
    return sec
