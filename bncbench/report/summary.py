"""Per dataset x model summaries of an experiment's records.

Means over the folds of 0-1 loss, RMSE and times, plus the Kohavi–Wolpert
bias and variance (Webb 2000) from the predictions of all rounds; a dataset
evaluated on its given holdout split has no bias and variance (``protocol``
column ``holdout``, :data:`HOLDOUT_NOTE`).
"""

from __future__ import annotations

import warnings
from typing import Iterable

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError
from bncbench.harness.protocol import METRIC_TABLE
from bncbench.metrics import kohavi_wolpert
from bncbench.harness.store import UnreadableRecordWarning, load_predictions, load_results

METRICS = tuple(m.name for m in METRIC_TABLE if m.core)
"""The metric columns of every summary (:data:`bncbench.harness.protocol.METRIC_TABLE`)."""
FOLD_MEANS = tuple(m.name for m in METRIC_TABLE if m.per_fold)
"""Metrics :func:`summarize` averages over the successful folds."""
FOLD_STD = tuple(m.name for m in METRIC_TABLE if m.std)
"""Metrics whose standard deviation over the folds :func:`summarize` keeps (:func:`std_column`), so
that a report's ``summary.csv`` given to another report (``--supplement``) has what the per-dataset
tables show."""


def std_column(metric: str) -> str:
    """The summary column of ``metric``'s standard deviation over the folds: ``zero_one_std`` ...

    Parameters
    ----------
    metric : str
        A metric of :data:`FOLD_STD`.

    Returns
    -------
    str
        The column name.
    """
    return f"{metric}_std"


HOLDOUT_NOTE = ("not computed under the holdout protocol (cv.mode=holdout): the given train/test split predicts "
                "each test instance once, and the Kohavi–Wolpert terms need the repeated rounds of cross-validation")
"""What the summary and the report say where a holdout dataset's bias and variance would be."""


def protocol_of(group: pd.DataFrame) -> str:
    """The protocol mode of a (dataset, model)'s records: ``"holdout"`` or ``"cv"`` (records before the field).

    Parameters
    ----------
    group : pandas.DataFrame
        Records of one (dataset, model), as :func:`~bncbench.harness.store.load_results` gives them.

    Returns
    -------
    str
        ``"holdout"`` when the records say so, else ``"cv"``.
    """
    if "protocol" in group and (group["protocol"] == "holdout").any():
        return "holdout"
    return "cv"


def bias_variance(group: pd.DataFrame, *, correction: bool = False) -> dict:
    """Kohavi–Wolpert terms from the records of one (dataset, model).

    Needs every fold of every round; returns NaNs otherwise, and for holdout records
    (one split: see :data:`HOLDOUT_NOTE`).

    The rounds are ``0 .. n_rounds - 1`` when the records store ``n_rounds`` (else every round
    with a record); each needs ``n_folds`` successful records, at least two rounds are needed, and
    every instance must have a prediction in every round. The predictions are read from the
    records' ``.npz`` files.

    Parameters
    ----------
    group : pandas.DataFrame
        The records (rows of :func:`bncbench.harness.store.load_results`) of one dataset and model.
    correction : bool, default=False
        Apply the finite-sample correction (see :func:`bncbench.metrics.kohavi_wolpert`).

    Returns
    -------
    dict
        ``{"bias", "variance", "kw_error"}`` as floats, or all NaN when the records are incomplete.
    """
    if protocol_of(group) == "holdout":
        return {"bias": np.nan, "variance": np.nan, "kw_error": np.nan}
    ok = group[group["status"] == "ok"]
    n = int(ok["n_instances"].iloc[0]) if len(ok) else 0
    n_folds = int(group["n_folds"].iloc[0]) if "n_folds" in group else 2
    if "n_rounds" in group and group["n_rounds"].notna().any():
        rounds = list(range(int(group["n_rounds"].max())))
    else:  # records before n_rounds was stored: every round that has a record, failed or not
        rounds = sorted(group["round"].unique())
    complete = len(ok) > 0 and all((ok["round"] == r).sum() == n_folds for r in rounds)
    if not complete or len(rounds) < 2:
        return {"bias": np.nan, "variance": np.nan, "kw_error": np.nan}
    preds = np.full((len(rounds), n), -1, dtype=np.int64)
    y_true = np.full(n, -1, dtype=np.int64)
    for path, rnd in zip(ok["path"], ok["round"]):
        try:
            arr = load_predictions(path, keys=("test_index", "y_true", "y_pred"))  # not the class probabilities
        except Exception as exc:  # noqa: BLE001 - corrupt within a sound archive (zlib, CRC, a short member)
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0]}" if str(exc) else type(exc).__name__
            warnings.warn(UnreadableRecordWarning(
                f"unreadable record {path}: predictions ({why}); no bias and variance for its dataset and model "
                "(a rerun of the experiment redoes it)"), stacklevel=2)
            return {"bias": np.nan, "variance": np.nan, "kw_error": np.nan}
        preds[rounds.index(rnd), arr["test_index"]] = arr["y_pred"]
        y_true[arr["test_index"]] = arr["y_true"]
    if (preds < 0).any():
        return {"bias": np.nan, "variance": np.nan, "kw_error": np.nan}
    kw = kohavi_wolpert(y_true, preds, int(ok["n_classes"].iloc[0]), correction=correction)
    return {"bias": kw["bias"], "variance": kw["variance"], "kw_error": kw["error"]}


def summarize(records: pd.DataFrame | str, *, correction: bool = False,
              keys: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per (dataset, model): fold means, KW bias/variance, failures.

    ``keys`` restricts the summary to those task keys (one run's plan).
    Raises :class:`BNCBenchError` when a (dataset, model label) holds two
    records of the same (round, fold): results of different configurations
    that must not be averaged together.

    Parameters
    ----------
    records : pandas.DataFrame or str
        Records as :func:`bncbench.harness.store.load_results` returns them, or an experiment directory
        to load them from.
    correction : bool, default=False
        Finite-sample correction of the Kohavi–Wolpert terms (see :func:`bias_variance`).
    keys : iterable of str, optional
        Task keys to keep; all records when None.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset``, ``model``, ``n_ok``, ``n_failed``, the means over successful folds of
        :data:`FOLD_MEANS` (``zero_one``, ``rmse``, ``train_time``, ``test_time``; ``n_parameters``,
        ``train_cpu`` and ``test_cpu`` where some record has them; NaN without a successful fold or where
        one of them lacks the metric), the standard deviations over those folds of :data:`FOLD_STD`
        (``zero_one_std`` ...; NaN with fewer than 2), ``n_instances`` and ``big`` (when a fold succeeded), and
        ``bias``, ``variance``, ``kw_error``; in the order the (dataset, model) pairs first appear. Without records, an
        empty frame with the columns ``dataset``, ``model``, :data:`METRICS`, ``n_ok``, ``n_failed``.

    Raises
    ------
    BNCBenchError
        If two records share dataset, model label, round and fold.
    """
    if not isinstance(records, pd.DataFrame):
        records = load_results(records)
    if records.empty:
        return pd.DataFrame(columns=["dataset", "model", *METRICS, "n_ok", "n_failed", "protocol"])
    if keys is not None:
        records = records[records["key"].isin(set(keys))]
    dup = records.duplicated(["dataset", "model", "round", "fold"], keep=False)
    if dup.any():
        d = records[dup].iloc[0]
        raise BNCBenchError(
            f"records of different configurations share the label {d['model']!r} on {d['dataset']!r} "
            f"(round {d['round']}, fold {d['fold']}); give them different labels or experiment names"
        )
    means = [m for m in FOLD_MEANS if m in METRICS or m in records]  # a model's property: where a record has it
    stds = [m for m in FOLD_STD if m in METRICS or m in records]
    rows = []
    for (dataset, model), g in records.groupby(["dataset", "model"], sort=False):
        ok = g[g["status"] == "ok"]
        row = {"dataset": dataset, "model": model, "n_ok": len(ok), "n_failed": int((g["status"] != "ok").sum()),
               "protocol": protocol_of(g)}
        for m in means:  # a fold without the metric makes it unknown: not a mean of the other folds
            row[m] = float(ok[m].mean(skipna=False)) if len(ok) and m in ok else np.nan
        for m in stds:
            row[std_column(m)] = float(ok[m].std(skipna=False)) if len(ok) > 1 and m in ok else np.nan
        if len(ok):
            row["n_instances"] = int(ok["n_instances"].iloc[0])
            row["big"] = bool(ok["big"].iloc[0])
        row.update(bias_variance(g, correction=correction))
        rows.append(row)
    return pd.DataFrame(rows)


def format_table(summary: pd.DataFrame) -> str:
    """A plain-text table for the terminal.

    Parameters
    ----------
    summary : pandas.DataFrame
        A frame of :func:`summarize`.

    Returns
    -------
    str
        Its dataset, model, 0-1 loss, RMSE, bias, variance, training time and task counts (the
        columns present), floats with four decimals; ``"(no results)"`` for an empty frame.
    """
    if summary.empty:
        return "(no results)"
    cols = ["dataset", "model", "zero_one", "rmse", "bias", "variance", "train_time", "n_ok", "n_failed"]
    show = summary[[c for c in cols if c in summary]].copy()
    holdout = (summary["protocol"] == "holdout").to_numpy() if "protocol" in summary else np.zeros(len(show), bool)
    for c in ("bias", "variance"):
        if c in show and holdout.any():  # a holdout's bias and variance are not NaNs but "not computed"
            show[c] = ["n/a" if h else "NaN" if np.isnan(v) else f"{v:.4f}" for v, h in zip(show[c], holdout)]
    show = show.rename(columns={"zero_one": "0-1 loss", "train_time": "train s"})
    text = show.to_string(index=False, float_format=lambda v: f"{v:.4f}")
    if holdout.any():
        names = ", ".join(dict.fromkeys(summary.loc[holdout, "dataset"]))
        text += f"\nbias, variance n/a for {names}: {HOLDOUT_NOTE}"
    return text
