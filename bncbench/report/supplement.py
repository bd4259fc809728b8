"""A report's summary completed by another run's per-dataset means (``report --supplement SUMMARY.csv``).

Records are not committed and do not survive a change of machine; a committed report's
``summary.csv`` does. Every W-D-L table, sign test, geometric mean and Friedman test of a report
is computed from the per-dataset means, so a new run of the missing (dataset, model) pairs plus an
earlier report's ``summary.csv`` give the whole report without rerunning what was done. The
supplied rows carry no records: they are in no convergence figure, task count or "Computed with"
line, and the overview names them.

A report's summary names each model's parameters (:data:`PARAMS`), so a supplement whose label
stands for another model (another ``lam``, ``reg_scale``, structure ...) is refused rather than
compared under the wrong name, and a model the records lack joins the report with the parameters
the supplement names (a run of one missing model on a fresh machine gives the whole report). A
summary written before that column existed cannot be checked, and its models that the records lack
are left out: the report selects models by their parameters, never by their labels.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from bncbench.data.dataset import BIG_THRESHOLD
from bncbench.errors import BNCBenchError
from bncbench.harness.store import json_default

SOURCE = "source"
"""Column of a supplemented summary: :data:`RECORDS`, or the supplement whose records gave the row (the file as
given)."""
RECORDS = "records"
"""The :data:`SOURCE` of a row summarized from the records."""
PARAMS = "params"
"""Column of a report's summary: the model's parameters (the records' ``param.*``) as JSON with sorted keys."""
REQUIRED = ("dataset", "model", "n_ok", "n_instances")
"""Columns a supplement must have (besides its metrics): the completeness rule and the data check need them."""


def with_params(summary: pd.DataFrame, params: dict[str, dict]) -> pd.DataFrame:
    """``summary`` with a :data:`PARAMS` column: each row's model's parameters as JSON with sorted keys.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary with a ``model`` column.
    params : dict of str to dict
        ``{label: parameters}`` (:func:`bncbench.report.families.model_params`).

    Returns
    -------
    pandas.DataFrame
        A copy; a model missing from ``params`` gets no value.
    """
    text = {m: json.dumps(p, sort_keys=True, default=json_default) for m, p in params.items()}
    return summary.assign(**{PARAMS: summary["model"].map(text)})


def read_supplement(path: str | Path) -> pd.DataFrame:
    """A ``summary.csv`` written by ``python -m bncbench report``.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.

    Returns
    -------
    pandas.DataFrame
        Its rows, one per (dataset, model).

    Raises
    ------
    BNCBenchError
        If the file is missing or unreadable, lacks a column of :data:`REQUIRED`, or holds a
        (dataset, model) twice.
    """
    path = Path(path)
    if not path.is_file():
        raise BNCBenchError(f"supplement not found: {path}")
    try:
        sup = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as e:
        raise BNCBenchError(f"supplement {path} is not a readable CSV: {e}") from None
    missing = [c for c in REQUIRED if c not in sup]
    if missing:
        raise BNCBenchError(f"supplement {path} is not a report's summary.csv: no column {', '.join(missing)}")
    dup = sup.duplicated(["dataset", "model"])
    if dup.any():
        r = sup[dup].iloc[0]
        raise BNCBenchError(f"supplement {path} holds {r['dataset']} / {r['model']} twice")
    return sup


def supplement_summary(summary: pd.DataFrame, sup: pd.DataFrame, name: str) -> tuple[pd.DataFrame, list[str]]:
    """``summary`` with the rows of ``sup`` for the pairs it lacks or holds with fewer successful folds.

    A (dataset, model) of the records is kept unless the supplement has it with more successful
    folds. A model the records do not have joins with its rows if the supplement names its
    parameters (:data:`PARAMS`; :func:`supplied_params` reads them); without them it is left out.

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary of the records (:func:`bncbench.report.summary.summarize`).
    sup : pandas.DataFrame
        Another run's summary (:func:`read_supplement`).
    name : str
        What the :data:`SOURCE` column says of the supplied rows (the file as given); a row whose
        :data:`SOURCE` in ``sup`` names yet another run keeps that name.

    Returns
    -------
    pandas.DataFrame
        The merged summary with a :data:`SOURCE` column, in the supplement's order (its pairs,
        from the records or supplied), then the records' other pairs in their order.
    list of str
        The supplement's models that the records do not have and whose parameters it does not
        name (left out).

    Raises
    ------
    BNCBenchError
        If a dataset has another number of instances or another protocol in the supplement than
        in the records (not the same data or not the same experiment), or a model has other
        parameters (:data:`PARAMS`, when both summaries have the column: not the same model).
    """
    models = set(summary["model"])
    named = set(sup.loc[sup[PARAMS].notna(), "model"]) if PARAMS in sup else set()
    unknown = sorted(set(sup["model"]) - models - named)
    sup = sup[~sup["model"].isin(unknown)]
    check_same_data(summary, sup)
    _check_same_models(summary, sup)
    return merge_by_folds(summary, sup, name), unknown


def merge_by_folds(summary: pd.DataFrame, sup: pd.DataFrame, name: str) -> pd.DataFrame:
    """``summary`` with the rows of ``sup`` for the pairs it lacks or holds with fewer successful folds.

    The rule of :func:`supplement_summary`, without its choice of models: every model of ``sup``
    is taken (a caller that selects its models by other means, such as a reproduction script
    reading an experiment's labels, passes only those).

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary of the records, with ``dataset``, ``model`` and ``n_ok``.
    sup : pandas.DataFrame
        Another run's summary, of the same data (:func:`check_same_data`).
    name : str
        What the :data:`SOURCE` column says of the supplied rows; a row whose :data:`SOURCE` in
        ``sup`` names yet another run keeps that name, and so does a row of ``summary`` that an
        earlier supplement gave (its :data:`SOURCE` is set); ``summary``'s other rows are
        :data:`RECORDS`.

    Returns
    -------
    pandas.DataFrame
        ``summary``'s columns (and :data:`REQUIRED`, :data:`PARAMS` where ``sup`` has them) with
        :data:`SOURCE`, in the supplement's order (its pairs, from the records or supplied), then
        the records' other pairs in their order; ``big`` of a supplied row as a record's flag says.
    """
    have = summary.set_index(["dataset", "model"])["n_ok"].fillna(0)
    offered = sup.set_index(["dataset", "model"])["n_ok"].fillna(0)
    better = offered[offered > have.reindex(offered.index).fillna(-1)].index
    drop = summary.set_index(["dataset", "model"]).index.isin(better)
    rows = sup.set_index(["dataset", "model"]).loc[better].reset_index()
    # a row the supplement itself took from another run's summary keeps that run's name
    source = rows[SOURCE].where(rows[SOURCE].notna() & (rows[SOURCE] != RECORDS), name) if SOURCE in rows else name
    rows = rows[[c for c in rows if c in summary or c in REQUIRED or c == PARAMS]]
    rows["big"] = rows["n_instances"] > BIG_THRESHOLD     # as a record's flag says (the report may re-split)
    kept = summary[~drop]
    # a row an earlier supplement gave (supplements taken in turn) keeps its name
    kept = kept.assign(**{SOURCE: kept[SOURCE].fillna(RECORDS) if SOURCE in kept else RECORDS})
    parts = [kept, rows.assign(**{SOURCE: source})]
    merged = pd.concat([f for f in parts if len(f)] or parts[:1], ignore_index=True)
    # laid out as the supplement's run was (its pairs in its order, the others after them in the
    # records' order), so that the datasets and models of the tables come in the same order
    at = pd.Series(range(len(sup)), index=pd.MultiIndex.from_frame(sup[["dataset", "model"]]))
    pos = at.reindex(pd.MultiIndex.from_frame(merged[["dataset", "model"]])).to_numpy(dtype=float)
    order = np.lexsort((np.arange(len(merged)), np.where(np.isnan(pos), len(sup), pos)))
    return merged.iloc[order].reset_index(drop=True)


def check_same_data(summary: pd.DataFrame, sup: pd.DataFrame) -> None:
    """Refuse a supplement of other data: a dataset with another number of instances or protocol.

    Parameters
    ----------
    summary, sup : pandas.DataFrame
        The records' summary and the supplement; a column either lacks is not compared.

    Raises
    ------
    BNCBenchError
        Naming the first dataset that differs.
    """
    for col, what in (("n_instances", "instances"), ("protocol", "protocol")):
        if col not in summary or col not in sup:
            continue
        ours = summary.dropna(subset=[col]).groupby("dataset")[col].first()
        theirs = sup.dropna(subset=[col]).groupby("dataset")[col].first()
        both = ours.index.intersection(theirs.index)
        bad = [d for d in both if ours[d] != theirs[d]]
        if bad:
            d = bad[0]
            raise BNCBenchError(f"dataset {d} has {what} {ours[d]} in the records but {theirs[d]} in the supplement: "
                                f"not the same data or protocol")


def _check_same_models(summary: pd.DataFrame, sup: pd.DataFrame) -> None:
    if PARAMS not in summary or PARAMS not in sup:
        return
    ours = summary.dropna(subset=[PARAMS]).groupby("model")[PARAMS].first()
    for model, text in sup.dropna(subset=[PARAMS]).drop_duplicates(["model", PARAMS])[["model", PARAMS]].itertuples(
            index=False):
        if model not in ours:
            continue
        a = json.loads(ours[model])
        b = _parse_params(model, text)
        if a != b:        # parsed, so 2 and 2.0 (an int column with gaps is float) are the same value
            diff = ", ".join(f"{k} {a.get(k, '(unset)')} vs {b.get(k, '(unset)')}"
                             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
            raise BNCBenchError(f"model {model} has other parameters in the records than in the supplement "
                                f"({diff}): not the same model")


def supplied_params(summary: pd.DataFrame, known: Iterable[str] = ()) -> dict[str, dict]:
    """``{label: parameters}`` of the models in ``summary`` but not in ``known``, from :data:`PARAMS`.

    The report takes its models' parameters from the records (:func:`bncbench.report.families.
    model_params`); these are those of the models only a supplement has.

    Parameters
    ----------
    summary : pandas.DataFrame
        A (supplemented) summary.
    known : iterable of str, default=()
        Labels whose parameters the caller has (the records' models).

    Returns
    -------
    dict of str to dict
        Per label, in the summary's order, the parameters of its first row that names them; a
        model with no such row is not in it.

    Raises
    ------
    BNCBenchError
        If a value is not JSON.
    """
    if PARAMS not in summary:
        return {}
    known = set(known)
    rows = summary[~summary["model"].isin(known) & summary[PARAMS].notna()].drop_duplicates("model")
    out = {}
    for model, text in rows[["model", PARAMS]].itertuples(index=False):
        out[model] = _parse_params(model, text)
    return out


def _parse_params(model: str, text: str) -> dict:
    try:
        return json.loads(text)
    except ValueError:
        raise BNCBenchError(f"the supplement's {PARAMS} of model {model} is not JSON: {text[:60]}") from None


def rounded_mixes(sup: pd.DataFrame, merged: pd.DataFrame, digits: int = 6) -> list[str]:
    """Datasets whose pairs come from both sources when the supplement's means are rounded.

    A summary written before November 2026 holds its means to ``digits`` significant digits.
    Comparing such a mean with a record's full-precision mean on the same dataset can turn a
    draw (both 241/1130) into a win or a loss; a dataset whose models all come from one source
    compares like with like.

    Parameters
    ----------
    sup : pandas.DataFrame
        The supplement as read (:func:`read_supplement`).
    merged : pandas.DataFrame
        The supplemented summary (:func:`supplement_summary`).
    digits : int, default=6
        The precision to test for.

    Returns
    -------
    list of str
        The datasets with rows from the records and from the supplement, when every mean of the
        supplement has at most ``digits`` significant digits; else an empty list.
    """
    cols = [c for c in ("zero_one", "rmse", "bias", "variance") if c in sup]
    v = sup[cols].to_numpy(dtype=float).ravel()
    v = v[np.isfinite(v) & (v != 0)]
    if not v.size or not np.all(v == np.array([float(f"{x:.{digits}g}") for x in v])):
        return []
    src = merged.assign(_sup=supplied(merged)).groupby("dataset", sort=False)["_sup"]
    return [d for d, any_sup, all_sup in zip(src.any().index, src.any(), src.all()) if any_sup and not all_sup]


def supplied(summary: pd.DataFrame) -> pd.Series:
    """Whether each row of ``summary`` came from a supplement (all False without a :data:`SOURCE` column).

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary, supplemented or not.

    Returns
    -------
    pandas.Series of bool
        Aligned with ``summary``.
    """
    if SOURCE not in summary:
        return pd.Series(False, index=summary.index)
    return summary[SOURCE] != RECORDS


def supplied_note(summary: pd.DataFrame) -> str | None:
    """The overview's line naming the supplied pairs per model, or None without any.

    Parameters
    ----------
    summary : pandas.DataFrame
        A summary with or without a :data:`SOURCE` column.

    Returns
    -------
    str or None
        Markdown-free text; the caller escapes it.
    """
    sup = summary[supplied(summary)]
    if sup.empty:
        return None
    parts = []
    for src, g in sup.groupby(SOURCE, sort=False):
        per_model = g.groupby("model", sort=False)["dataset"].nunique()
        parts.append(f"{len(g)} (dataset, model) means from {src}, another run's summary without records "
                     f"(not in the task counts, the convergence figures or the environment line): "
                     + ", ".join(f"{m} ({k} dataset{'' if k == 1 else 's'})" for m, k in per_model.items()))
    return "; ".join(parts) + "."


__all__ = ["RECORDS", "REQUIRED", "SOURCE", "check_same_data", "merge_by_folds", "read_supplement", "rounded_mixes",
           "supplement_summary", "supplied", "supplied_note", "supplied_params"]
