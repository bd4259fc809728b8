"""The experiment runner: 5x2-fold cross-validation (or holdout) tasks through an executor, resumable.

A *task* (:class:`Task`) is one (dataset, model, round, fold) with the protocol
and the data directory: typed, picklable and self-contained.
:func:`evaluate_task` is a pure function of it returning a
:class:`~bncbench.harness.store.TaskRecord`; :func:`run_experiment` plans the pending
tasks and hands :func:`run_task` (evaluate, then write the record atomically)
to an executor (:mod:`bncbench.executors`; joblib on this machine by default),
knowing nothing else of where tasks run. A sweep killed at any moment loses at
most the tasks in flight; a rerun skips every task whose record is complete. A
task that raises is recorded as failed with its error message and the sweep
goes on. A task that kills its process (a segfault, an out-of-memory kill) leaves
its running marker; after ``max_crashes`` such deaths in a row without progress it is
recorded as failed without being run (:func:`run_task`), so no sweep loops on it.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import os
import socket
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from bncbench.data import specs
from bncbench.engine import checkpoint
from bncbench.harness import allocator
from bncbench.data.given_split import holdout_indices
from bncbench.errors import BNCBenchError
from bncbench.harness.model_specs import ModelSpec
from bncbench.model.preprocess import Discretizer
from bncbench.harness.provenance import environment
from bncbench.harness.protocol import Protocol, cv_folds  # noqa: F401 - Protocol: bncbench.harness.runner.Protocol
from bncbench.metrics import rmse, zero_one_loss
from bncbench.harness.store import (RECORD_VERSION, ResultStore, TaskRecord, read_marker, safe_name, task_key,
                                    write_marker)

if TYPE_CHECKING:
    from bncbench.data.dataset import Dataset
    from bncbench.executors import Executor


@dataclass(frozen=True)
class Task:
    """One (dataset, model, round, fold) of an experiment, with everything needed to evaluate it.

    Parameters
    ----------
    dataset : dict
        A resolved dataset spec (:func:`bncbench.data.specs.resolve`).
    model : ModelSpec
        The model's label and parameters.
    round, fold : int
        Round and fold of the task (0-based; both 0 for holdout).
    protocol : Protocol, default=Protocol()
        The evaluation protocol.
    data_dir : str, optional
        The data directory of registered datasets; default ``$BNCBENCH_DATA_DIR``.
    """

    dataset: dict  # resolved dataset spec
    model: ModelSpec
    round: int
    fold: int
    protocol: Protocol = field(default_factory=Protocol)
    data_dir: str | None = None

    @functools.cached_property
    def key(self) -> str:
        """Hash of everything that determines the result (not where the data lies).

        A holdout task's key names its mode and leaves out the seed and the number of
        folds, which do not change its split; a CV task's key is what it always was.

        Returns
        -------
        str
            :func:`bncbench.harness.store.task_key` of the dataset spec and its fingerprint
            (:func:`bncbench.data.specs.spec_fingerprint`), the model's parameters (not its
            label), the split fields, round, fold and :data:`bncbench.harness.store.RECORD_VERSION`.
            Computed once per task.

        Raises
        ------
        BNCBenchError or KeyError
            As :func:`bncbench.data.specs.spec_fingerprint` (a registered dataset missing from
            the registry, or the registry file missing or invalid).
        """
        return self._key(specs.spec_fingerprint(self.dataset))

    @property
    def where(self) -> tuple[str, str, int, int, str]:
        """``(dataset name, model label, round, fold, key)``: the task's address in a results store.

        Returns
        -------
        tuple
            The arguments of :meth:`~bncbench.harness.store.ResultStore.record_path` and of its
            siblings (``fit_prefix``, ``running_path``, ``conflicts``).
        """
        return self.dataset["name"], self.model.label, self.round, self.fold, self.key

    @functools.cached_property
    def legacy_key(self) -> str | None:
        """The key this task had before the registry's descriptive fields left the fingerprint.

        Returns
        -------
        str or None
            :attr:`key` with :func:`bncbench.data.specs.legacy_spec_fingerprint` in place of
            the fingerprint; ``None`` where the two are equal (every dataset source but ``uci``).
        """
        old = specs.legacy_spec_fingerprint(self.dataset)
        return None if old is None else self._key(old)

    def _key(self, dataset_id: str) -> str:
        p = self.protocol
        split = {"seed": p.seed, "folds": p.folds} if p.mode == "cv" else {"protocol": p.mode}
        if p.missing_features:  # only when set: the keys of records without it stay
            split["missing_features"] = p.missing_features
        return task_key({
            "dataset": self.dataset,
            "dataset_id": dataset_id,
            "model": self.model.params,
            **split,
            "round": self.round,
            "fold": self.fold,
            "version": RECORD_VERSION,
        })


@functools.lru_cache(maxsize=4)
def _prepared_fold(spec_json: str, data_dir, seed: int, folds: int, round_: int, fold: int, mode: str = "cv"):
    """Load, split and discretize once per (dataset, round, fold) in each worker."""
    spec = json.loads(spec_json)
    ds = specs.load(spec, data_dir)
    if mode == "holdout":
        train, test = holdout_indices(ds)
    else:
        assign = cv_folds(ds.y, seed=seed, dataset=ds.name, round_=round_, folds=folds)
        test = np.flatnonzero(assign == fold)
        train = np.flatnonzero(assign != fold)
    disc = Discretizer(reserve_missing=ds.missing_mask).fit(ds.X.iloc[train], ds.y[train])
    codes = disc.transform(ds.X)
    return ds, train, test, codes, disc.cardinalities_


@dataclass(frozen=True)
class TaskInputs:
    """What :func:`evaluate_task` fits and scores for a task, built exactly as it builds them.

    Attributes
    ----------
    dataset : Dataset
        The loaded dataset (:func:`bncbench.data.specs.load`; shared: do not modify it).
    estimator : estimator
        The model, unfitted: :func:`bncbench.harness.model_specs.make_estimator` of the task's
        parameters (with their ``from_dataset`` values) and the fold's cardinalities.
    params : dict
        The parameters it was built from.
    cardinalities : ndarray of int
        The cardinalities it was built with (:func:`bncbench.model.classifier.model_cardinalities`).
    X : ndarray of shape (n_instances, n_attributes)
        Every row as the model reads it (:func:`bncbench.harness.raw_features.model_matrix`):
        codes discretized with cut points fitted on the training part, or raw features.
    train, test : ndarray of int
        The fold's training and test rows.
    """

    dataset: Dataset
    estimator: object
    params: dict
    cardinalities: np.ndarray
    X: np.ndarray
    train: np.ndarray
    test: np.ndarray

    @property
    def y(self) -> np.ndarray:
        """The class codes of every row."""
        return self.dataset.y

    @property
    def training(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X[train], y[train])``: the timed fit's inputs."""
        return self.X[self.train], self.dataset.y[self.train]

    @property
    def testing(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X[test], y[test])``: the scored rows."""
        return self.X[self.test], self.dataset.y[self.test]


def task_inputs(task: Task) -> TaskInputs:
    """The dataset, unfitted model and rows of a task, as :func:`evaluate_task` builds them (its one home).

    Benchmarks and tests that time or probe one fit of an experiment start here; the dataset is
    loaded, split and discretized once per (dataset, round, fold) and process (the four most
    recent are kept).

    Parameters
    ----------
    task : Task
        The task.

    Returns
    -------
    TaskInputs

    Raises
    ------
    BNCBenchError, KeyError or OSError
        If the dataset cannot be loaded or the model cannot be built.
    """
    from bncbench.harness import raw_features
    from bncbench.harness.dataset_values import dataset_values
    from bncbench.harness.model_specs import make_estimator
    from bncbench.model.classifier import model_cardinalities

    p = task.protocol
    ds, train, test, codes, cards = _prepared_fold(
        json.dumps(task.dataset, sort_keys=True, default=str), task.data_dir, p.seed, p.folds, task.round,
        task.fold, p.mode)
    params = dataset_values(task.model.params, ds.meta)  # hyperparameters that are the dataset's facts
    cards = model_cardinalities(task.model.params, cards, ds.missing_mask)  # missing="first_value": no missing code
    clf = make_estimator(params, cards)
    X = raw_features.model_matrix(clf, ds.X, codes)  # codes, or the raw features of a model that asks for them
    return TaskInputs(ds, clf, params, cards, X, train, test)


_WARM: set[str] = set()  # the models this process has already run once (see _warm_up)
WARM_UP_ROWS = 64


def _warm_up(params: dict, cards, X: np.ndarray, y: np.ndarray) -> None:
    """Fit and predict a model once, untimed, on a few rows, the first time this process meets it.

    ``X`` and ``y`` are the timed fit's own training inputs (its rows of
    :func:`bncbench.harness.raw_features.model_matrix`), of which the first :data:`WARM_UP_ROWS` are used.

    The first fit in a process loads (or compiles) the numba kernels of its components, which
    takes up to a second or so: without this, the first task of every worker would carry that
    cost in its ``train_time`` and ``test_time``. Any exception is ignored (the timed fit reports
    it); nothing of the warm-up reaches the record.
    """
    from bncbench.harness.model_specs import make_estimator

    key = json.dumps(params, sort_keys=True, default=str)
    if key in _WARM:
        return
    _WARM.add(key)
    rows = np.arange(min(WARM_UP_ROWS, len(y)))
    try:
        clf = make_estimator(params, cards)
        clf.fit(X[rows], y[rows])
        clf.predict_proba(X[rows[:8]])
    except Exception:  # noqa: BLE001 - the timed fit reports it
        pass


def evaluate_task(task: Task) -> TaskRecord:
    """Fit and score one task; a failure is a record too (``status="failed"``). Writes nothing.

    The model and rows are :func:`task_inputs`' (cut points fitted on the training part only).

    Parameters
    ----------
    task : Task
        The task.

    Returns
    -------
    TaskRecord
        With ``status="ok"``: the metrics, timings, sizes and optimizer diagnostics, and
        ``arrays`` holding ``test_index`` (int32), ``y_true`` and ``y_pred`` (int16), shape
        (n_test,), and ``proba`` (float64, shape (n_test, n_classes); zero in the columns of
        classes absent from the training part). With ``status="failed"``: ``error`` and
        ``traceback`` of the exception, no metrics.

    Raises
    ------
    BNCBenchError or KeyError
        Only from computing :attr:`Task.key`, before the evaluation starts; every exception
        of loading, fitting and scoring is recorded instead.
    KeyboardInterrupt
        Ctrl-C or a kill (the CLI's ``Terminated``) during the evaluation, also when a compiled
        kernel hands it on as the cause of a ``SystemError``: nothing is recorded.
    """
    p = task.protocol
    rec = _new_record(task)
    try:
        inputs = task_inputs(task)
        ds, clf, X, train, test = inputs.dataset, inputs.estimator, inputs.X, inputs.train, inputs.test
        params, cards = inputs.params, inputs.cardinalities
        with checkpoint.suspended():  # the task's checkpoints are its timed fit's
            _warm_up(params, cards, X[train], ds.y[train])  # the very inputs of the timed fit
        t0, c0 = time.perf_counter(), time.process_time()
        clf.fit(X[train], ds.y[train])
        t1, c1 = time.perf_counter(), time.process_time()
        proba_fit = clf.predict_proba(X[test])
        t2, c2 = time.perf_counter(), time.process_time()
        # columns of classes absent from the training fold are zero
        proba = np.zeros((test.size, ds.n_classes))
        proba[:, clf.classes_] = proba_fit
        y_pred = clf.classes_[np.argmax(proba_fit, axis=1)]
        y_true = ds.y[test]
        rec.zero_one, rec.rmse = zero_one_loss(y_true, y_pred), rmse(y_true, proba)
        rec.train_time, rec.test_time = t1 - t0, t2 - t1
        rec.train_cpu, rec.test_cpu = c1 - c0, c2 - c1
        rec.n_parameters, rec.n_train, rec.n_test = int(clf.n_parameters_), int(train.size), int(test.size)
        rec.n_instances, rec.n_attributes, rec.n_classes = ds.n_instances, ds.n_attributes, ds.n_classes
        rec.big = bool(ds.is_big)
        for attr in ("n_iter", "n_fev", "train_cll", "trace", "tuning"):
            if hasattr(clf, attr + "_"):
                setattr(rec, attr, getattr(clf, attr + "_"))
        if p.missing_features:  # features removed at test time (bncbench/harness/missing_protocol.py), untimed
            from bncbench.harness import missing_protocol

            rec.missing_features = missing_protocol.evaluate(clf, X[train], X[test], y_true,
                                                             p.missing_features, (p.seed, task.round, task.fold))
        rec.arrays = {"test_index": test.astype(np.int32), "y_true": y_true.astype(np.int16),
                      "y_pred": y_pred.astype(np.int16), "proba": proba}
    except Exception as exc:  # recorded, the sweep goes on
        stop = _interrupt_within(exc)
        if stop is not None:  # Ctrl-C or a kill within a compiled kernel: the run stops, nothing is recorded
            raise stop from None
        rec.status, rec.error = "failed", f"{type(exc).__name__}: {exc}"
        rec.traceback = traceback.format_exc(limit=8)
    return rec


def _new_record(task: Task) -> TaskRecord:
    """The record of ``task`` before its outcome: who, what, and the environment computing it."""
    p = task.protocol
    return TaskRecord(task.dataset["name"], task.model.label, task.round, task.fold, p.seed, p.folds, p.rounds,
                      task.key, task.model.params, protocol=p.mode, environment=environment())


def _interrupt_within(exc: BaseException) -> BaseException | None:
    """The interrupt behind ``exc``, if any: an interrupt that comes while a numba kernel runs
    is raised as a ``SystemError`` ("returned a result with an exception set") caused by it."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit, the CLI's Terminated
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


STOP_GRACE = 60.0
"""Seconds a run stopped by Ctrl-C or SIGTERM waits at most for the fits in its worker processes to save
(:func:`_saves_before_stop`) before it closes the workers (the run config's ``stop_grace``)."""


MAX_CRASHES = 2
"""Deaths of a task's process in a row, without progress, after which it is recorded failed unrun (``max_crashes``).

Two, not one: a single death may be another's doing (the out-of-memory killer takes the largest
process of a node, a node is lost, a whole sweep is killed with ``kill -9``) and costs one more
attempt; a second death at the same task with no checkpoint saved in between is the task's own,
and each further attempt could cost hours before it dies again."""


def check_max_crashes(value) -> int | None:
    """``max_crashes`` as the runner takes it: an integer of at least 1, or None (no limit).

    Parameters
    ----------
    value : int or None
        The run option.

    Returns
    -------
    int or None

    Raises
    ------
    BNCBenchError
        If ``value`` is not None and not an integer >= 1 (one line).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise BNCBenchError(f"max_crashes must be an integer >= 1 (deaths of a task's process in a row before it is "
                            f"recorded failed) or null (no limit), got {value!r}")
    return int(value)


def check_stop_grace(value) -> float:
    """``stop_grace`` as the runner takes it: seconds, a number of at least 0 (:data:`STOP_GRACE`).

    Parameters
    ----------
    value : float
        The run option.

    Returns
    -------
    float

    Raises
    ------
    BNCBenchError
        If ``value`` is not a number >= 0 (one line).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value >= 0:
        raise BNCBenchError(f"stop_grace must be a number of seconds >= 0 (how long a stopped run waits for its "
                            f"workers' fits to save), got {value!r}")
    return float(value)


def crash_count(marker: dict | None, progress: int) -> int:
    """Deaths in a row without progress of a task's process, counting the one a found marker tells of.

    Parameters
    ----------
    marker : dict or None
        The running marker the task's previous attempt left (:func:`bncbench.harness.store.read_marker`):
        its ``deaths`` (those before that attempt) and ``progress`` (the checkpoint iteration it
        went on from); None: no marker, the previous attempt ended as Python saw it (or there was none).
    progress : int
        Where the task's fit would go on from now (:func:`bncbench.engine.checkpoint.saved_iterations`).

    Returns
    -------
    int
        0 without a marker, or when the fit saved a later checkpoint than the marker's (the dead
        attempt progressed: a long fit killed at the end of a session is no crash loop);
        otherwise the marker's ``deaths`` plus one.
    """
    if marker is None:
        return 0
    try:
        before, deaths = int(marker.get("progress", 0)), int(marker.get("deaths", 0))
    except (TypeError, ValueError):
        before, deaths = 0, 0
    return 0 if progress > before else deaths + 1


_RUNNING: set = set()
"""The running markers of the tasks this process runs now (removed if the process is abandoned)."""


def _drop_running() -> None:
    for marker in list(_RUNNING):
        with contextlib.suppress(OSError):
            marker.unlink(missing_ok=True)


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def run_task(task: Task, store_root: str | os.PathLike, progress_every: float | None = None,
             checkpoint_every: float | None = None, max_crashes: int | None = MAX_CRASHES) -> TaskRecord:
    """Evaluate one task and write its record where the task ran; returns the record without its arrays.

    While the task is evaluated its running marker (:meth:`~bncbench.harness.store.ResultStore.running_path`,
    written atomically) holds ``deaths`` (its process's deaths in a row without progress before
    this attempt), ``pid``, ``host``, ``started`` (UTC) and ``progress`` (the checkpoint iteration the
    fit goes on from, :func:`bncbench.engine.checkpoint.saved_iterations`; 0 without one). The
    marker is removed whenever Python sees the task end: its record written (ok or failed), an
    exception, an interrupt (Ctrl-C, SIGTERM, ``SystemExit``), or its joblib worker ended because
    the run is gone. A marker found at the start therefore tells of a process that died in the
    task (a segfault, an out-of-memory kill, SIGKILL, a lost node); :func:`crash_count` counts it,
    unless the fit saved a later checkpoint since. Once the count reaches ``max_crashes`` the task
    is not run: a failed record says so, and the marker stays, so that a retry of failed tasks
    records the same failure without running it, until the marker is removed or the limit raised.

    Parameters
    ----------
    task : Task
        The task.
    store_root : str or os.PathLike
        The experiment's results directory (:class:`~bncbench.harness.store.ResultStore` root).
    progress_every : float, optional
        An optimization that runs longer logs its progress to stderr this often, in seconds
        (:func:`bncbench.engine.optim.fit_progress`); ``None``: silent.
    checkpoint_every : float, optional
        An L-BFGS fit saves its state beside the record to be this often, in seconds, and a
        rerun of the task goes on from it (:mod:`bncbench.engine.checkpoint`); the files are
        removed once the record is written. The record's ``train_time`` and ``train_cpu`` then include
        the optimizer's seconds before the checkpoint (no ``train_cpu`` where a checkpoint did not save
        its CPU seconds), and ``resumed`` the iterations it went on from. The files of a failed task
        stay, for its retry. ``None``: no checkpoints.
    max_crashes : int, optional, default=:data:`MAX_CRASHES`
        Deaths in a row without progress after which the task is recorded failed unrun; ``None``:
        it always runs (the marker is still written and counted).

    Returns
    -------
    TaskRecord
        The record's :meth:`~bncbench.harness.store.TaskRecord.summary`: without its arrays and its
        trace (both are written; ``proba`` as float32).

    Raises
    ------
    OSError
        If the record cannot be written.
    BNCBenchError or KeyError
        As :func:`evaluate_task`.
    """
    from bncbench.executors.executor import on_abandon

    allocator.keep_freed_memory()  # once per process: the same numbers, fewer page faults
    checkpoint.save_on_signal()  # once per process: SIGUSR1 asks its fits to save now (instead of ending it)
    on_abandon(_drop_running)
    store = ResultStore(store_root)
    label = f"{task.dataset['name']} / {task.model.label} r{task.round}f{task.fold}"
    where = task.where
    prefix = store.fit_prefix(*where)
    marker = store.running_path(*where)
    progress = checkpoint.saved_iterations(prefix)
    previous = read_marker(marker)
    deaths = crash_count(previous, progress)
    if max_crashes is not None and deaths >= max_crashes:  # not run: recorded failed, the marker stays
        rec = _new_record(task)
        rec.status, rec.error = "failed", crashed_message(previous, deaths, marker)
        store.put(rec)
        return rec.summary()
    if deaths:
        print(f"bncbench: {label}: the process running it died (death {deaths} in a row without progress, "
              f"max_crashes={max_crashes}; last start {previous.get('started')} on {previous.get('host')}, pid "
              f"{previous.get('pid')}); running it again", file=sys.stderr, flush=True)
    write_marker(marker, {"deaths": deaths, "pid": os.getpid(), "host": socket.gethostname(),
                          "started": _utc_now(), "progress": progress})
    _RUNNING.add(marker)
    try:
        ck = None
        with contextlib.ExitStack() as stack:
            if progress_every is not None:
                from bncbench.engine.optim import fit_progress

                stack.enter_context(fit_progress(label, progress_every))
            if checkpoint_every is not None:
                ck = stack.enter_context(checkpoint.fit_checkpoint(prefix, checkpoint_every, label))
            rec = evaluate_task(task)
        if ck is not None and ck.resumed and rec.status == "ok":
            rec.train_time += ck.credited
            rec.train_cpu = None if ck.credited_cpu is None else rec.train_cpu + ck.credited_cpu
            rec.resumed = list(ck.resumed)
        if rec.arrays is not None:
            rec.arrays = {**rec.arrays, "proba": rec.arrays["proba"].astype(np.float32)}
        store.put(rec)
        if ck is not None and rec.status == "ok":  # a failed task's retry may go on from them
            ck.clear()
    finally:  # Python saw the task end (a record, an exception, an interrupt): no death to count
        _RUNNING.discard(marker)
        marker.unlink(missing_ok=True)
    return rec.summary()


def crashed_message(marker: dict, deaths: int, path: Path) -> str:
    """The error of a task recorded failed because its process died ``deaths`` times in a row.

    Parameters
    ----------
    marker : dict
        Its running marker (:func:`bncbench.harness.store.read_marker`).
    deaths : int
        :func:`crash_count`.
    path : pathlib.Path
        The marker's path.

    Returns
    -------
    str
        One line: how many deaths, the last start's time, host and pid, and how to try again.
    """
    return (f"the process running this task died {deaths} times in a row without progress (segfault, "
            f"out-of-memory kill or SIGKILL; last start {marker.get('started', '?')} on {marker.get('host', '?')}, "
            f"pid {marker.get('pid', '?')}); to try again, remove {path} or raise max_crashes")


def plan_tasks(
    datasets: list[dict], models: list[ModelSpec], protocol: Protocol, data_dir: str | None = None
) -> list[Task]:
    """Every task, ordered so that tasks sharing a prepared fold are adjacent.

    Parameters
    ----------
    datasets : list of dict
        Resolved dataset specs.
    models : list of ModelSpec
        The models.
    protocol : Protocol
        The protocol (its ``rounds`` and ``folds``).
    data_dir : str, optional
        Stored in every task.

    Returns
    -------
    list of Task
        ``len(datasets) * protocol.rounds * protocol.folds * len(models)`` tasks: datasets
        outermost, then rounds, folds, and models innermost.
    """
    return [
        Task(d, m, r, f, protocol, data_dir)
        for d in datasets
        for r in range(protocol.rounds)
        for f in range(protocol.folds)
        for m in models
    ]


_clock = time.monotonic  # the progress log's clock (tests replace it)


class _ProgressLog:
    """``tasks: done/total (pct), failed, elapsed, ETA`` on stderr at most every ``every`` seconds.

    The ETA is the elapsed time per task's worth of work done here, times the tasks left. A task that went on
    from a checkpoint counts by the part of its iterations run here: a resumed sweep's first tasks, nearly done
    before it started, do not make the rest look nearly free.
    """

    def __init__(self, total: int, every: float = 60.0):
        self.total, self.every, self.done, self.work = total, every, 0, 0.0
        self.start = self.last = _clock()

    def update(self, failed: int = 0, done_before: float = 0.0) -> None:
        """Count one task ended, ``done_before`` (in [0, 1]) of its work done before this run."""
        self.done += 1
        self.work += 1.0 - done_before
        now = _clock()
        if now - self.last < self.every and self.done < self.total:
            return
        self.last = now
        el = now - self.start
        eta = el / (self.work if self.work > 0 else self.done) * (self.total - self.done)
        print(f"tasks: {self.done}/{self.total} ({100 * self.done / self.total:.1f} %), {failed} failed, "
              f"elapsed {_hms(el)}, ETA {_hms(eta)}", file=sys.stderr, flush=True)


def _done_before(rec: TaskRecord) -> float:
    """The part of a task's iterations run before the process that ended it (0 unless it went on from a checkpoint)."""
    if not rec.resumed or not rec.n_iter:
        return 0.0
    return min(1.0, rec.resumed[-1] / rec.n_iter)


def stored_state(store: ResultStore, task: Task, *, retry_failed: bool = True,
                 move: bool = True) -> tuple[Path, Path | None, bool]:
    """Where the task's record goes, after moving it from its :attr:`Task.legacy_key` if stored there.

    Parameters
    ----------
    store : ResultStore
        The experiment's store.
    task : Task
        A planned task.
    retry_failed : bool, default=True
        A stored failure does not count as done (:meth:`bncbench.harness.store.ResultStore.is_done`).
    move : bool, default=True
        Move a record stored under the legacy key (:meth:`bncbench.harness.store.ResultStore.rekey`);
        otherwise (a dry run) leave it there and judge the task as if it had been moved.

    Returns
    -------
    path : Path
        The record's path under the task's key.
    moved_from : Path or None
        The legacy record that was (``move``) or would be moved there or removed as a stale copy.
    done : bool
        Whether the task needs no run.
    """
    path = store.record_path(*task.where)
    legacy = None if task.legacy_key is None else store.record_path(*task.where[:4], task.legacy_key)
    if not move:
        moved_from = legacy if legacy is not None and legacy != path and legacy.exists() else None
        judged = moved_from if moved_from is not None and not path.exists() else path
        return path, moved_from, store.is_done(judged, retry_failed=retry_failed)
    moved_from = legacy if legacy is not None and store.rekey(legacy, path, task.key) else None
    return path, moved_from, store.is_done(path, retry_failed=retry_failed)


def pending_tasks(
    datasets: list[dict],
    models: list[ModelSpec],
    *,
    results_root: str | os.PathLike,
    protocol: Protocol,
    data_dir: str | None = None,
    retry_failed: bool = True,
    move: bool = True,
) -> tuple[list[Task], list[Task]]:
    """Every planned task, and those of them the store does not hold as done.

    Parameters
    ----------
    datasets : list of dict
        Resolved dataset specs.
    models : list of ModelSpec
        The models; their labels must map to distinct directories (:func:`bncbench.harness.store.safe_name`).
    results_root : str or os.PathLike
        The experiment's results directory (need not exist).
    protocol : Protocol
        The protocol.
    data_dir : str, optional
        Stored in every task.
    retry_failed : bool, default=True
        A stored failure is pending.
    move : bool, default=True
        Move records stored under a legacy key to their key (and say so on stderr); False reads
        only (a dry run).

    Returns
    -------
    tasks : list of Task
        Every task (:func:`plan_tasks`).
    pending : list of Task
        The tasks to run, in the same order.

    Raises
    ------
    BNCBenchError
        If two model labels map to the same directory, or the results directory holds a record of
        another configuration for a pending task.
    """
    store = ResultStore(results_root)
    seen: dict[str, str] = {}
    for m in models:
        other = seen.setdefault(safe_name(m.label), m.label)
        if other != m.label:
            raise BNCBenchError(f"model labels {other!r} and {m.label!r} map to the same directory; rename one")
    tasks = plan_tasks(datasets, models, protocol, data_dir)
    pending = []
    rekeyed = 0
    for t in tasks:
        path, moved_from, done = stored_state(store, t, retry_failed=retry_failed, move=move)
        rekeyed += moved_from is not None
        if done:
            continue
        problem = store.problem(path)
        if problem is not None:  # a truncated JSON, a missing or corrupt .npz: the task runs again
            print(f"bncbench: {'redoing' if move else 'would redo'} unreadable record {path}: {problem}",
                  file=sys.stderr)
        # a dry run leaves the legacy record where it is; a real run has moved it already
        others = [p for p in store.conflicts(*t.where)
                  if p != moved_from]
        if others:
            raise BNCBenchError(
                f"{results_root} already holds results of {t.model.label!r} on {t.dataset['name']!r} from a "
                "different configuration (parameters, seed, folds, protocol mode or data); use another name=, a model "
                f"'label', or remove {path.parent}"
            )
        pending.append(t)
    if rekeyed and move:
        print(f"bncbench: re-keyed {rekeyed} stored record(s) of {results_root} to the current dataset "
              "fingerprint (registry prose no longer enters task keys)", file=sys.stderr)
    return tasks, pending


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _holding_store_lock(run):
    """``run`` (:func:`run_experiment`) within its store's lock (:meth:`bncbench.harness.store.ResultStore.lock`),
    after removing the predictions a killed or failed write left without their JSON. The models are
    validated first, as the command line validates them (:func:`bncbench.validate.check_model`), and so are the
    run's options ``max_crashes`` and ``stop_grace``: a bad one is one line, before the store is touched."""
    from bncbench.harness.model_specs import check_model

    @functools.wraps(run)
    def locked(*args, results_root, **kwargs):
        for m in (kwargs["models"] if "models" in kwargs else args[1]):
            check_model(m.params, m.label)
        for option, check in (("max_crashes", check_max_crashes), ("stop_grace", check_stop_grace)):
            if option in kwargs:
                kwargs[option] = check(kwargs[option])
        store = ResultStore(results_root)
        with store.lock():
            store.clean_strays()
            return run(*args, results_root=results_root, **kwargs)
    return locked


@_holding_store_lock
def run_experiment(
    datasets: list[dict],
    models: list[ModelSpec],
    *,
    results_root: str | os.PathLike,
    protocol: Protocol | None = None,
    data_dir: str | None = None,
    n_jobs: int = 1,
    executor: Executor | None = None,
    progress: bool | None = None,
    retry_failed: bool = True,
    checkpoint_every: float | None = checkpoint.EVERY,
    max_crashes: int | None = MAX_CRASHES,
    stop_grace: float = STOP_GRACE,
) -> dict:
    """Run every pending task; returns counts of ``total, skipped, ok, failed`` and the task ``keys``.

    ``executor`` (:class:`bncbench.executors.Executor`) runs the tasks; by
    default joblib with ``n_jobs`` workers. Raises :class:`BNCBenchError`
    before running anything when the results directory already holds records
    of another configuration under one of the plan's (dataset, model label)
    pairs, so summaries never mix them. The run holds the store's lock throughout
    (:meth:`bncbench.harness.store.ResultStore.lock`): a second run into the same store waits for it
    (saying once whose run it waits for), then finds its tasks done; a killed run's lock is
    taken over. A record that is not sound (:func:`bncbench.harness.store.record_problem`) is redone,
    and said so on stderr.

    Parameters
    ----------
    datasets : list of dict
        Resolved dataset specs (:func:`bncbench.data.specs.resolve`).
    models : list of ModelSpec
        The models; their labels must map to distinct directories (:func:`bncbench.harness.store.safe_name`).
    results_root : str or os.PathLike
        The experiment's results directory (created as needed).
    protocol : Protocol, optional
        Default ``Protocol()``: 5 x 2-fold CV from seed 0.
    data_dir : str, optional
        The data directory of registered datasets; default ``$BNCBENCH_DATA_DIR``.
    n_jobs : int, default=1
        Workers of the default joblib executor (ignored when ``executor`` is given).
    executor : Executor, optional
        Runs the tasks; default ``make_executor("joblib", n_jobs=n_jobs)``.
    progress : bool, optional
        ``True``/``False`` show/hide the tqdm bar; ``None`` shows it on a terminal only, and
        otherwise prints one progress line to stderr at most every 60 seconds.
    retry_failed : bool, default=True
        Run again the tasks whose stored record has failed; otherwise any stored record counts
        as done.
    checkpoint_every : float, optional
        Seconds between the saves of a long L-BFGS fit's state, from which the task's rerun goes
        on if this run is killed (:func:`run_task`); ``None``: no checkpoints.
    max_crashes : int, optional, default=:data:`MAX_CRASHES`
        A task whose process died this many times in a row without progress (a segfault, an
        out-of-memory kill) is recorded failed without being run (:func:`run_task`), also when
        failed tasks are retried, until its running marker is removed or the limit raised;
        ``None``: no limit. A task in flight when this run is interrupted (Ctrl-C, SIGTERM) is
        not counted, also where the executor's workers were killed to stop it. Where one
        worker's death ends the others' tasks (joblib with several workers), a task whose process
        died before runs first, alone, unless its fit saved a checkpoint since (:func:`_crash_groups`).
    stop_grace : float, default=:data:`STOP_GRACE`
        Seconds a run stopped by Ctrl-C or SIGTERM waits at most for the fits of its worker processes to save
        (:func:`_saves_before_stop`).

    Returns
    -------
    dict
        ``total`` (planned tasks), ``skipped`` (already done), ``ok`` and ``failed`` (of those
        run now), all int, and ``keys``: the set of the planned tasks' keys (str).

    Raises
    ------
    BNCBenchError
        Before any task runs: if a model's parameters are bad (the command line's one line,
        :func:`bncbench.validate.check_model`), two model labels map to the same directory, the results
        directory holds a record of another configuration for a pending task, ``max_crashes`` is
        not an integer >= 1 or None, ``stop_grace`` is not a number >= 0, or the default executor rejects
        ``n_jobs``. Errors of :attr:`Task.key` (see there) propagate too.
    """
    from bncbench.executors import make_executor

    protocol = protocol or Protocol()
    executor = executor if executor is not None else make_executor("joblib", n_jobs=n_jobs)
    tasks, pending = pending_tasks(datasets, models, results_root=results_root, protocol=protocol,
                                   data_dir=data_dir, retry_failed=retry_failed)
    ResultStore(results_root).clean_temp()
    keys = {t.key for t in tasks}
    counts = {"total": len(tasks), "skipped": len(tasks) - len(pending), "ok": 0, "failed": 0}
    if not pending:
        return {**counts, "keys": keys}
    from tqdm.auto import tqdm

    bar = tqdm(total=len(pending), desc="tasks", unit="task", disable=(None if progress is None else not progress))
    # Without a terminal (cluster logs, nohup) tqdm stays silent: log one line a minute instead.
    log = _ProgressLog(len(pending), every=60.0) if bar.disable and progress is None else None
    every = log.every if log is not None else None  # fits of an hour say how far they are, as the tasks do
    fn = functools.partial(run_task, store_root=str(results_root), progress_every=every,
                           checkpoint_every=checkpoint_every, max_crashes=max_crashes)
    started, returned = _utc_now(), set()
    store = ResultStore(results_root)

    def in_flight():
        return [t for t in pending if t.key not in returned]

    try:
        with _saves_before_stop(store, in_flight, stop_grace):
            for group in _crash_groups(store, pending, executor, max_crashes):
                for rec in executor.map_unordered(fn, group):
                    returned.add(rec.key)
                    counts[rec.status] += 1
                    bar.update(1)
                    if log is not None:
                        log.update(counts["failed"], _done_before(rec))
                    if rec.status == "failed":
                        bar.write(f"failed: {rec.dataset} / {rec.model} r{rec.round}f{rec.fold}: {rec.error}")
    except BaseException as exc:
        if not isinstance(exc, Exception):  # an interrupt: the executor has stopped its tasks in flight itself
            _forget_stopped(store, in_flight(), started)
        raise
    bar.close()
    return {**counts, "keys": keys}


def _crash_groups(store: ResultStore, pending: list[Task], executor, max_crashes: int | None) -> list[list[Task]]:
    """The pending tasks in the groups the executor is handed, one after another.

    One group, unless the executor's workers share their fate (``executor.shared_fate``: joblib
    with several workers, whose pool kills every worker when one dies) and a task whose process
    died before will run again: each such task then runs first, alone, so that its death is
    counted against it only, and the tasks that happened to run beside a crash are not counted
    into a limit that is not theirs (they run alone once, and their markers go).

    Except a task whose dead attempt progressed (its fit saved a later checkpoint: :func:`crash_count`
    is 0, a long fit killed at a session's end or a node's loss rather than a crash loop) when
    ``max_crashes`` is None or at least 2: it runs with the others, in parallel. Should it be the
    one that dies, the others' first death still leaves them below the limit, and the next run
    runs each of them alone.
    """
    if not getattr(executor, "shared_fate", False):
        return [pending]
    alone, rest = [], []
    for t in pending:
        where = t.where
        marker = read_marker(store.running_path(*where))
        if marker is None:
            rest.append(t)
            continue
        deaths = crash_count(marker, checkpoint.saved_iterations(store.fit_prefix(*where)))
        progressed = deaths == 0 and (max_crashes is None or max_crashes >= 2)
        again = max_crashes is None or deaths < max_crashes  # else recorded failed unrun: no need to isolate
        (alone if again and not progressed else rest).append(t)
    return [[t] for t in alone] + ([rest] if rest else [])


@contextlib.contextmanager
def _saves_before_stop(store: ResultStore, in_flight, grace: float = STOP_GRACE):
    """Within the block, Ctrl-C and SIGTERM first make the fits in this run's worker processes save, then stop the run.

    The executors close their workers when the run is stopped (joblib kills its pool), which would lose each fit's
    work since its last periodic save (a fit in this process saves on the interrupt itself:
    :func:`bncbench.engine.lbfgs_compact.run`). So the first of these signals sends SIGUSR1 to the child processes
    that catch it (:func:`bncbench.engine.checkpoint.saving_children`: the workers that run a task), then waits, at
    most ``grace`` seconds, until each task ``in_flight()`` whose running marker names one of them has saved a
    checkpoint since or ended, and only then goes on as the signal's own handler would (Ctrl-C's
    ``KeyboardInterrupt``, the CLI's ``Terminated``). A second signal stops the waiting at once. Installed from the
    main thread only, for the signals not ignored; restored after the block.

    Parameters
    ----------
    store : ResultStore
        The run's store (markers and checkpoint files).
    in_flight : callable
        The tasks submitted and not returned, now.
    grace : float, default=STOP_GRACE
        Seconds of waiting at most.
    """
    import signal
    import threading

    wanted = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) not in (signal.SIG_IGN, None)]
    if threading.current_thread() is not threading.main_thread() or not wanted:
        yield
        return
    previous = {s: signal.getsignal(s) for s in wanted}
    waiting = []

    def restore():
        for sig, h in previous.items():
            signal.signal(sig, h)

    def stop(signum, frame):
        if not waiting:
            waiting.append(signum)
            try:
                _wait_for_saves(store, in_flight(), grace)
            except Exception:  # noqa: BLE001 - a stop that cannot wait for the saves still stops
                pass
        restore()
        h = previous[signum]
        if callable(h):
            h(signum, frame)
        else:  # SIG_DFL: as if this handler had not been there
            os.kill(os.getpid(), signum)

    for sig in wanted:
        signal.signal(sig, stop)
    try:
        yield
    finally:
        if not waiting:  # (after a stop the handlers are the previous ones, as they left themselves)
            restore()


def _wait_for_saves(store: ResultStore, tasks: list, grace: float) -> None:
    """SIGUSR1 to this process's saving children, then wait (at most ``grace`` s) until each of ``tasks`` that one of
    them runs (its running marker's ``pid``) has a checkpoint file written since, or has ended (its marker gone)."""
    kids = set(checkpoint.saving_children(os.getpid()))
    if not kids:
        return
    runs = {}
    for t in tasks:
        marker = read_marker(store.running_path(*t.where))
        if marker is not None and marker.get("pid") in kids:
            runs[t.key] = (store.running_path(*t.where), store.fit_prefix(*t.where))
    if not runs:
        return
    print(f"bncbench: stopping: asking the {len(runs)} fit(s) of its workers to save first (at most {grace:g} s; "
          "again to stop at once)", file=sys.stderr, flush=True)
    since = time.time()
    checkpoint.ask_to_save(kids)
    deadline = time.monotonic() + grace
    while runs and time.monotonic() < deadline:
        for key, (marker, prefix) in list(runs.items()):
            if not marker.exists() or any(_mtime(p) >= since for p in checkpoint.files(prefix)):
                del runs[key]
        if runs:
            time.sleep(0.1)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _forget_stopped(store: ResultStore, tasks: list[Task], since: str) -> None:
    """Remove the running markers that this run's tasks in flight left when it was interrupted.

    An interrupted run stops its tasks itself (joblib kills its workers with SIGKILL, the slurm
    executor cancels its jobs): those ends are not crashes of the tasks. A marker is this run's
    when it was written at or after ``since`` (UTC, :func:`_utc_now`); older ones (a death before
    this run) stay.
    """
    for t in tasks:
        path = store.running_path(*t.where)
        marker = read_marker(path)
        if marker is not None and str(marker.get("started", "")) >= since:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def evaluate(dataset_spec: str | dict, model_params: dict, *, seed: int = Protocol.seed,
             rounds: int = Protocol.rounds, folds: int = Protocol.folds, data_dir: str | None = None,
             label: str | None = None, mode: str = Protocol.mode) -> pd.DataFrame:
    """Run one model's cross-validation (or, with ``mode="holdout"``, its given split) on one dataset.

    Convenience for tests and notebooks, in a temporary store; returns the per-fold records.

    Parameters
    ----------
    dataset_spec : str or dict
        A dataset name (resolved with :func:`bncbench.data.specs.resolve`; a group name
        gives its first dataset) or a resolved spec.
    model_params : dict
        The model's parameters (:attr:`bncbench.harness.model_specs.ModelSpec.params`).
    seed : int, default=0
        The experiment's seed.
    rounds : int, default=5
        Rounds of CV (ignored for holdout).
    folds : int, default=2
        Folds per round (ignored for holdout).
    data_dir : str, optional
        The data directory of registered datasets; default ``$BNCBENCH_DATA_DIR``.
    label : str, optional
        The model's label; default ``"model"``.
    mode : {"cv", "holdout"}, default="cv"
        The protocol mode.

    Returns
    -------
    pandas.DataFrame
        :func:`bncbench.harness.store.load_results` of the run: one row per (round, fold), failed tasks
        included (``status="failed"``). The ``path`` column names files of the temporary store,
        which no longer exist.

    Raises
    ------
    BNCBenchError
        If the dataset name is unknown or the protocol's values are bad (:meth:`Protocol.of`).
    """
    import tempfile

    from bncbench.harness.store import load_results

    if isinstance(dataset_spec, str):
        dataset_spec = specs.resolve([dataset_spec])[0]
    spec = ModelSpec(label or "model", dict(model_params))
    with tempfile.TemporaryDirectory() as tmp:
        protocol = Protocol.of(seed, rounds, folds, mode)
        run_experiment([dataset_spec], [spec], results_root=Path(tmp), protocol=protocol, data_dir=data_dir,
                       progress=False)
        return load_results(tmp)
