"""Features missing at test time, in the protocol (Pernkopf et al., §5.1–5.2, Fig. 6).

With ``cv.missing_features: {ks: [...], repeats: R}`` every task, after its ordinary scoring,
evaluates its fitted model again on the test part with ``k`` features removed per test row, drawn
uniformly per row, ``R`` times for each ``k`` (:func:`bncbench.harness.missing_features.missing_feature_curve`).
The draws depend on the experiment's seed, the option's ``seed``, the round and the fold only, so
every model of a task's fold sees the same removed sets. What a model is given:

- a model that takes missing values (scikit-learn's ``allow_nan`` tag: :class:`~bncbench.BNClassifier`)
  gets the removed features as unknown codes (-1), which it ignores or sums out exactly as its
  ``missing`` keyword says (``missing: marginalize`` in a ``models:`` item); the rates are
  ``rate``; with ``impute: true`` it is also given the removed features filled with the most frequent
  value of their ``neighbours`` nearest training rows (Hamming distance on the observed codes), the
  paper's imputation baseline for the BNC: ``rate_knn_mode``;
- any other model (the SVM) gets them filled with the mean of the nearest training rows' values
  (Euclidean), the paper's SVM baseline: ``rate``, with ``method: knn_mean``.

The record's ``missing_features`` holds ``k``, ``method`` and the rates, one list of ``R`` per
``k``; :func:`curves` gathers them from a results directory. The option enters a task's key
(records computed without it are not reused for a run with it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError


@dataclass
class MissingFeaturesConfig:
    """The typed ``cv.missing_features`` node (unset: no evaluation with missing features).

    Attributes
    ----------
    ks : list of int
        Numbers of features removed per test row (a ``k`` above a dataset's number of attributes
        is skipped for that dataset).
    repeats : int, default=10
        Random draws of the removed features per ``k``.
    seed : int, default=0
        Seed of the draws (combined with the experiment's seed, the round and the fold).
    impute : bool, default=True
        Also evaluate models that take missing values with kNN most-frequent-value imputation.
    neighbours : int, default=5
        Neighbours of the kNN imputations.
    max_rows : int, optional
        Evaluate on at most this many test rows (a seeded random subset; kNN imputation
        compares every test row with every training row).
    """

    ks: List[int] = field(default_factory=list)
    repeats: int = 10
    seed: int = 0
    impute: bool = True
    neighbours: int = 5
    max_rows: Optional[int] = None


def settings(node: Any) -> dict | None:
    """The validated settings of a ``cv.missing_features`` node, or None when unset.

    Parameters
    ----------
    node : mapping or None
        The node (a ``DictConfig`` or a dict).

    Returns
    -------
    dict or None
        ``{"ks", "repeats", "seed", "impute", "neighbours", "max_rows"}`` as plain values.

    Raises
    ------
    BNCBenchError
        If a key is unknown, ``ks`` is empty or has a negative entry, or ``repeats``,
        ``neighbours`` or ``max_rows`` is below 1.
    """
    if node is None:
        return None
    node = dict(node)
    known = MissingFeaturesConfig.__dataclass_fields__
    unknown = sorted(set(node) - set(known))
    if unknown:
        raise BNCBenchError(f"unknown key(s) cv.missing_features.{', '.join(unknown)}; known: {', '.join(known)}")
    s = {**{k: f.default for k, f in known.items() if k != "ks"}, **node}
    ks = [int(k) for k in (s.get("ks") or [])]
    if not ks or min(ks) < 0:
        raise BNCBenchError(f"cv.missing_features.ks must be a non-empty list of counts >= 0, got {ks}")
    for key in ("repeats", "neighbours"):
        if int(s[key]) < 1:
            raise BNCBenchError(f"cv.missing_features.{key} must be >= 1, got {s[key]}")
    if s["max_rows"] is not None and int(s["max_rows"]) < 1:
        raise BNCBenchError(f"cv.missing_features.max_rows must be >= 1 or null, got {s['max_rows']}")
    return {"ks": ks, "repeats": int(s["repeats"]), "seed": int(s["seed"]), "impute": bool(s["impute"]),
            "neighbours": int(s["neighbours"]), "max_rows": None if s["max_rows"] is None else int(s["max_rows"])}


def _takes_missing(clf) -> bool:
    try:
        return bool(clf.__sklearn_tags__().input_tags.allow_nan)
    except AttributeError:
        return False


def evaluate(clf, X_train: np.ndarray, X_test: np.ndarray, y_test: np.ndarray, s: dict,
             seed_parts: tuple) -> dict:
    """The classification rates of a fitted model with features removed from its test rows.

    Parameters
    ----------
    clf : fitted classifier
        ``clf.predict(X)`` on codes.
    X_train : ndarray of shape (n_train, d)
        The training codes (the imputations' neighbours).
    X_test, y_test : ndarray
        The complete test codes and labels.
    s : dict
        :func:`settings`.
    seed_parts : tuple of int
        With ``s["seed"]``, the seed of the draws (experiment seed, round, fold).

    Returns
    -------
    dict
        ``{"k": [...], "repeats": R, "n_rows": n, "method": "missing" | "knn_mean", "rate": [[R rates]
        per k]}``, and ``rate_knn_mode`` for a model that takes missing values when ``s["impute"]``.
    """
    from bncbench.model.impute import knn_impute
    from bncbench.harness.missing_features import missing_feature_curve

    X_test, y_test = np.asarray(X_test), np.asarray(y_test)
    entropy = [int(s["seed"]), *map(int, seed_parts)]
    seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
    if s["max_rows"] is not None and X_test.shape[0] > s["max_rows"]:
        rows = np.sort(np.random.default_rng(seed).permutation(X_test.shape[0])[: s["max_rows"]])
        X_test, y_test = X_test[rows], y_test[rows]
    ks = [k for k in s["ks"] if k <= X_test.shape[1]]
    out = {"k": ks, "repeats": s["repeats"], "n_rows": int(X_test.shape[0])}

    def curve(impute=None, code=-1):
        df = missing_feature_curve(clf.predict, X_test, y_test, ks, s["repeats"], seed, impute=impute,
                                   missing_code=code)
        return df.groupby("k", sort=False)["rate"].apply(list).reindex(ks).tolist()

    def filled(how):
        return lambda Xm, mask: knn_impute(X_train, Xm, mask, k=s["neighbours"], how=how)

    if _takes_missing(clf):
        out["method"], out["rate"] = "missing", curve()
        if s["impute"]:
            out["rate_knn_mode"] = curve(filled("mode"))
    else:
        out["method"], out["rate"] = "knn_mean", curve(filled("mean"))
    return out


def curves(records: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6's curves from :func:`bncbench.harness.store.load_results`: one row per (dataset, model, method, k).

    Parameters
    ----------
    records : pandas.DataFrame
        Records with a ``missing_features`` column (others are skipped).

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, model, method, k, mean, std, n`` (``n``: rates pooled over folds and
        draws; ``method``: ``missing``, ``knn_mean`` or ``knn_mode``).
    """
    rows = []
    if "missing_features" not in records:
        return pd.DataFrame(columns=["dataset", "model", "method", "k", "mean", "std", "n"])
    for rec in records.itertuples():
        mf = getattr(rec, "missing_features")
        if not isinstance(mf, dict):
            continue
        for key, method in (("rate", mf["method"]), ("rate_knn_mode", "knn_mode")):
            for k, rates in zip(mf["k"], mf.get(key) or []):
                rows += [{"dataset": rec.dataset, "model": rec.model, "method": method, "k": k, "rate": r}
                         for r in rates]
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=["dataset", "model", "method", "k", "mean", "std", "n"])
    g = df.groupby(["dataset", "model", "method", "k"], sort=False)["rate"]
    return g.agg(mean="mean", std="std", n="size").reset_index()
