"""The experiment runner: 5x2-fold cross-validation tasks in parallel, resumable.

A *task* is one (dataset, model, round, fold). Tasks run in joblib workers;
each worker writes its own record atomically (see :mod:`bncbench.store`), so
a sweep killed at any moment loses at most the tasks in flight. A rerun skips
every task whose record is complete. A task that raises is recorded as
failed with its error message and the sweep goes on.
"""

from __future__ import annotations

import functools
import json
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from bncbench.data import registry
from bncbench.models import ModelSpec
from bncbench.preprocess import Discretizer
from bncbench.protocol import cv_folds, rmse, zero_one_loss
from bncbench.errors import BNCBenchError
from bncbench.store import RECORD_VERSION, ResultStore, _safe, task_key


@dataclass(frozen=True)
class Task:
    dataset: dict  # resolved dataset spec
    model: ModelSpec
    round: int
    fold: int


@dataclass
class Protocol:
    seed: int = 0
    rounds: int = 5
    folds: int = 2


def _task_payload(task: Task, protocol: Protocol) -> dict:
    return {
        "dataset": task.dataset,
        "dataset_id": registry.spec_fingerprint(task.dataset),
        "model": task.model.params,
        "seed": protocol.seed,
        "folds": protocol.folds,
        "round": task.round,
        "fold": task.fold,
        "version": RECORD_VERSION,
    }


@functools.lru_cache(maxsize=4)
def _prepared_fold(spec_json: str, data_dir, seed: int, folds: int, round_: int, fold: int):
    """Load, split and discretize once per (dataset, round, fold) in each worker."""
    spec = json.loads(spec_json)
    ds = registry.load(spec, data_dir)
    assign = cv_folds(ds.y, seed=seed, dataset=ds.name, round_=round_, folds=folds)
    test = np.flatnonzero(assign == fold)
    train = np.flatnonzero(assign != fold)
    disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X.iloc[train], ds.y[train])
    codes = disc.transform(ds.X)
    return ds, train, test, codes, disc.cardinalities_


def run_task(task: Task, protocol: Protocol, data_dir, store_root) -> dict:
    """Run one task and write its record; returns the record's scalars."""
    from bncbench.baselines import make_estimator

    store = ResultStore(store_root)
    key = task_key(_task_payload(task, protocol))
    path = store.record_path(task.dataset["name"], task.model.label, task.round, task.fold, key)
    base = {
        "dataset": task.dataset["name"],
        "model": task.model.label,
        "round": task.round,
        "fold": task.fold,
        "seed": protocol.seed,
        "n_folds": protocol.folds,
        "n_rounds": protocol.rounds,
        "key": key,
        "model_params": task.model.params,
    }
    try:
        ds, train, test, codes, cards = _prepared_fold(
            json.dumps(task.dataset, sort_keys=True, default=str),
            data_dir,
            protocol.seed,
            protocol.folds,
            task.round,
            task.fold,
        )
        clf = make_estimator(task.model.params, cards)
        t0 = time.perf_counter()
        clf.fit(codes[train], ds.y[train])
        t1 = time.perf_counter()
        proba_fit = clf.predict_proba(codes[test])
        t2 = time.perf_counter()
        # columns of classes absent from the training fold are zero
        proba = np.zeros((test.size, ds.n_classes))
        proba[:, clf.classes_] = proba_fit
        y_pred = clf.classes_[np.argmax(proba_fit, axis=1)]
        y_true = ds.y[test]
        record = {
            **base,
            "status": "ok",
            "zero_one": zero_one_loss(y_true, y_pred),
            "rmse": rmse(y_true, proba),
            "train_time": t1 - t0,
            "test_time": t2 - t1,
            "n_parameters": int(clf.n_parameters_),
            "n_train": int(train.size),
            "n_test": int(test.size),
            "n_instances": ds.n_instances,
            "n_attributes": ds.n_attributes,
            "n_classes": ds.n_classes,
            "big": bool(ds.is_big),
        }
        for attr in ("n_iter_", "n_fev_", "train_cll_"):
            if hasattr(clf, attr):
                record[attr.rstrip("_")] = getattr(clf, attr)
        if getattr(clf, "trace_", None) is not None:
            record["trace"] = clf.trace_
        arrays = {
            "test_index": test.astype(np.int32),
            "y_true": y_true.astype(np.int16),
            "y_pred": y_pred.astype(np.int16),
            "proba": proba.astype(np.float32),
        }
        store.write(path, record, arrays)
        return record
    except Exception as exc:  # recorded, the sweep goes on
        record = {
            **base,
            "status": "failed",
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=8),
        }
        store.write(path, record)
        return record


def plan_tasks(datasets: list[dict], models: list[ModelSpec], protocol: Protocol) -> list[Task]:
    """Every task, ordered so that tasks sharing a prepared fold are adjacent."""
    return [
        Task(d, m, r, f)
        for d in datasets
        for r in range(protocol.rounds)
        for f in range(protocol.folds)
        for m in models
    ]


_clock = time.monotonic  # the progress log's clock (tests replace it)


class _ProgressLog:
    """``tasks: done/total (pct), failed, elapsed, ETA`` on stderr at most every ``every`` seconds."""

    def __init__(self, total: int, every: float = 60.0):
        self.total, self.every, self.done = total, every, 0
        self.start = self.last = _clock()

    def update(self, failed: int = 0) -> None:
        self.done += 1
        now = _clock()
        if now - self.last < self.every and self.done < self.total:
            return
        self.last = now
        el = now - self.start
        eta = el / self.done * (self.total - self.done)
        print(f"tasks: {self.done}/{self.total} ({100 * self.done / self.total:.1f} %), {failed} failed, "
              f"elapsed {_hms(el)}, ETA {_hms(eta)}", file=sys.stderr, flush=True)


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def run_experiment(
    datasets: list[dict],
    models: list[ModelSpec],
    *,
    results_root,
    protocol: Protocol | None = None,
    data_dir=None,
    n_jobs: int = 1,
    progress: bool | None = None,
    retry_failed: bool = True,
) -> dict:
    """Run every pending task; returns counts of ``total, skipped, ok, failed`` and the task ``keys``.

    Raises :class:`BNCBenchError` before running anything when the results
    directory already holds records of another configuration under one of
    the plan's (dataset, model label) pairs, so summaries never mix them.
    """
    protocol = protocol or Protocol()
    store = ResultStore(results_root)
    seen: dict[str, str] = {}
    for m in models:
        other = seen.setdefault(_safe(m.label), m.label)
        if other != m.label:
            raise BNCBenchError(f"model labels {other!r} and {m.label!r} map to the same directory; rename one")
    tasks = plan_tasks(datasets, models, protocol)
    pending = []
    keys = set()
    for t in tasks:
        key = task_key(_task_payload(t, protocol))
        keys.add(key)
        path = store.record_path(t.dataset["name"], t.model.label, t.round, t.fold, key)
        if store.is_done(path, retry_failed=retry_failed):
            continue
        if store.conflicts(t.dataset["name"], t.model.label, t.round, t.fold, key):
            raise BNCBenchError(
                f"{results_root} already holds results of {t.model.label!r} on {t.dataset['name']!r} from a "
                "different configuration (parameters, seed, folds or data); use another name=, a model "
                f"'label', or remove {path.parent}"
            )
        pending.append(t)
    store.clean_temp()
    counts = {"total": len(tasks), "skipped": len(tasks) - len(pending), "ok": 0, "failed": 0}
    if not pending:
        return {**counts, "keys": keys}
    from tqdm.auto import tqdm

    bar = tqdm(total=len(pending), desc="tasks", unit="task", disable=(None if progress is None else not progress))
    # Without a terminal (cluster logs, nohup) tqdm stays silent: log one line a minute instead.
    log = _ProgressLog(len(pending), every=60.0) if bar.disable and progress is None else None
    jobs = (delayed(run_task)(t, protocol, data_dir, str(results_root)) for t in pending)
    if n_jobs == 1:
        results = (run_task(t, protocol, data_dir, str(results_root)) for t in pending)
    else:
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1)(jobs)
    for rec in results:
        counts[rec["status"]] += 1
        bar.update(1)
        if log is not None:
            log.update(counts["failed"])
        if rec["status"] == "failed":
            bar.write(f"failed: {rec['dataset']} / {rec['model']} r{rec['round']}f{rec['fold']}: {rec['error']}")
    bar.close()
    return {**counts, "keys": keys}


def evaluate(dataset_spec, model_params: dict, *, seed=0, rounds=5, folds=2, data_dir=None, label=None) -> pd.DataFrame:
    """Run one model's cross-validation on one dataset in a temporary store.

    Convenience for tests and notebooks; returns the per-fold records.
    """
    import tempfile

    from bncbench.store import load_results

    if isinstance(dataset_spec, str):
        dataset_spec = registry.resolve([dataset_spec])[0]
    spec = ModelSpec(label or "model", dict(model_params))
    with tempfile.TemporaryDirectory() as tmp:
        run_experiment([dataset_spec], [spec], results_root=Path(tmp), protocol=Protocol(seed, rounds, folds),
                       data_dir=data_dir, progress=False)
        return load_results(tmp)
