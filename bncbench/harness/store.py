"""The results store: one atomically written record per finished task.

Layout under ``results/<experiment>/``::

    records/<dataset>/<model>/r<round>f<fold>-<key>.json   # scalars, trace, status
    records/<dataset>/<model>/r<round>f<fold>-<key>.npz    # per-test-instance predictions
    records/<dataset>/<model>/r<round>f<fold>-<key>.fit<i>.npz  # while it runs: a long fit's checkpoint
    records/<dataset>/<model>/r<round>f<fold>-<key>.running     # while it runs: its running marker (JSON)
    .lock                                                     # while a run writes: its owner (ResultStore.lock)

``key`` is a hash of everything that determines the task (dataset identity,
model parameters, seed, protocol, round, fold). A record is written to a
temporary file in the same directory and renamed into place, predictions
first and the JSON last, so a sweep killed at any moment leaves no partial
record behind. A record is complete when its JSON parses and, for a success,
its predictions load (:func:`record_problem`): a rerun skips those and redoes
the others (a file damaged after it was written), and readers name and leave
them out. One run at a time writes into a store (:meth:`ResultStore.lock`).
A long L-BFGS fit saves its state beside the record to be
(``.fit<i>.npz``, :mod:`bncbench.engine.checkpoint`): the rerun of a killed
task goes on from there; the files are removed once the record is written.
A task's running marker (``.running``, :meth:`ResultStore.running_path`) is there while its
evaluation runs and stays only when the process died in it (a segfault, an out-of-memory kill,
SIGKILL): the runner counts those deaths (:func:`bncbench.harness.runner.run_task`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import socket
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import numpy as np
import pandas as pd

from bncbench.atomic import TMP_PREFIX, atomic_file, atomic_write_bytes  # noqa: F401 - atomic_file: the store's writes
from bncbench.errors import BNCBenchError, BNCBenchWarning

RECORD_VERSION = 1
ARRAYS = ("test_index", "y_true", "y_pred", "proba")
"""The per-test-instance arrays a successful record's ``.npz`` holds (:meth:`ResultStore.problem` checks them)."""


class UnreadableRecordWarning(BNCBenchWarning):
    """A stored record cannot be read (truncated JSON, a missing or corrupt ``.npz``): it is left out."""


def record_problem(path: str | os.PathLike) -> tuple[dict | None, str | None]:
    """A record read back, or why it cannot be used: a record is sound only when its JSON *and* its arrays load.

    The JSON must parse to an object; a record with ``status: ok`` must have a ``.npz`` beside it
    that opens as a zip archive holding every array of :data:`ARRAYS` (the archive's directory is
    read, not the arrays' data: a truncated, emptied or deleted file is caught without
    decompressing anything).

    Parameters
    ----------
    path : str or os.PathLike
        A record's JSON path.

    Returns
    -------
    record : dict or None
        The parsed JSON (``None`` if it cannot be read or parsed).
    problem : str or None
        ``None`` for a sound record, else one phrase: ``"no such file"``, ``"unreadable JSON
        (...)"``, ``"predictions missing (...npz)"``, ``"unreadable predictions (...)"``.
    """
    import zipfile

    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None, "no such file"
    except (OSError, ValueError) as exc:
        return None, f"unreadable JSON ({_short(exc)})"
    if not isinstance(record, dict):
        return None, "unreadable JSON (not an object)"
    if record.get("status") != "ok":
        return record, None
    npz = path.with_suffix(".npz")
    try:
        with zipfile.ZipFile(npz) as z:
            names = {n.removesuffix(".npy") for n in z.namelist()}
    except FileNotFoundError:
        return record, f"predictions missing ({npz.name})"
    except (OSError, zipfile.BadZipFile, ValueError, EOFError) as exc:
        return record, f"unreadable predictions {npz.name} ({_short(exc)})"
    lacking = [a for a in ARRAYS if a not in names]
    if lacking:
        return record, f"unreadable predictions {npz.name} (no {', '.join(lacking)})"
    return record, None


def _short(exc: BaseException) -> str:
    """An exception as ``Type: first line``."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class TaskRecord:
    """The outcome of one (dataset, model, round, fold) task, as the store writes it.

    The scalars go to the record's JSON (fields left ``None`` are not written);
    ``arrays`` (per-test-instance ``test_index``, ``y_true``, ``y_pred``,
    ``proba``) to its ``.npz``. ``model`` is the label, ``model_params`` the
    model's parameters: reports select models by the latter.

    Attributes
    ----------
    dataset : str
        Dataset name.
    model : str
        Model label.
    round, fold : int
        Round and fold of the task (0-based).
    seed : int
        The experiment's seed.
    n_folds, n_rounds : int
        Folds per round and rounds of the protocol.
    key : str
        The task's key (:attr:`bncbench.harness.runner.Task.key`).
    model_params : dict
        The model's parameters.
    status : {"ok", "failed"}, default="ok"
        Whether the task completed.
    zero_one, rmse : float, optional
        0-1 loss and RMSE (:func:`bncbench.metrics.rmse`) on the test part.
    train_time, test_time : float, optional
        Wall time in seconds of fitting and of predicting the test part.
    train_cpu, test_cpu : float, optional
        The same spans in CPU seconds of the process (all its threads): unlike the wall times, without the
        time it waited for a core or was stopped (``SIGSTOP``). ``train_cpu`` is absent from records written
        before it existed and from a fit that went on from a checkpoint saved without it.
    n_parameters : int, optional
        Free parameters of the fitted model.
    n_train, n_test : int, optional
        Training and test instances.
    n_instances, n_attributes, n_classes : int, optional
        Shape of the whole dataset.
    big : bool, optional
        Whether the dataset is *Big* (:attr:`bncbench.data.dataset.Dataset.is_big`).
    n_iter, n_fev : int, optional
        Optimizer iterations and function evaluations, for models that report them.
    train_cll : float, optional
        Training conditional log-likelihood, for models that report it.
    trace : list, optional
        Per-iteration records of the optimizer, for models that report them.
    tuning : dict, optional
        Hyperparameters chosen on the held-out part (optimizer option ``grid``): the chosen values
        and every candidate's held-out error (:mod:`bncbench.engine.tuning`).
    missing_features : dict, optional
        Classification rates with features removed at test time (``cv.missing_features``;
        :func:`bncbench.harness.missing_protocol.evaluate`).
    resumed : list of int, optional
        The iterations at which the fit went on from a checkpoint of an earlier, killed run of
        the task (:mod:`bncbench.engine.checkpoint`); its ``train_time`` and ``train_cpu`` include the
        optimizer's seconds of those runs up to the checkpoint. Absent for a fit run in one go.
    error : str, optional
        ``"ExceptionType: message"`` of a failed task.
    traceback : str, optional
        The failed task's traceback (at most 8 frames).
    protocol : {"cv", "holdout"}, optional
        The protocol mode (absent from records written before it existed: cv).
    environment : dict of str to str, optional
        Software versions, processor and git commit of the process that computed the record
        (:func:`bncbench.harness.provenance.environment`; absent from records written before it existed).
        Not part of the key.
    arrays : dict of str to ndarray, optional
        Per-test-instance ``test_index``, ``y_true``, ``y_pred`` (shape (n_test,)) and ``proba``
        (shape (n_test, n_classes)); ``None`` for a failed task or a :meth:`summary`.
    """

    dataset: str
    model: str
    round: int
    fold: int
    seed: int
    n_folds: int
    n_rounds: int
    key: str
    model_params: dict
    status: str = "ok"
    zero_one: Optional[float] = None
    rmse: Optional[float] = None
    train_time: Optional[float] = None
    test_time: Optional[float] = None
    train_cpu: Optional[float] = None
    test_cpu: Optional[float] = None
    n_parameters: Optional[int] = None
    n_train: Optional[int] = None
    n_test: Optional[int] = None
    n_instances: Optional[int] = None
    n_attributes: Optional[int] = None
    n_classes: Optional[int] = None
    big: Optional[bool] = None
    n_iter: Optional[int] = None
    n_fev: Optional[int] = None
    train_cll: Optional[float] = None
    trace: Optional[list] = None
    tuning: Optional[dict] = None
    missing_features: Optional[dict] = None
    resumed: Optional[list] = None
    error: Optional[str] = None
    traceback: Optional[str] = None
    protocol: Optional[str] = None  # "cv" or "holdout" (records before it: cv)
    environment: Optional[dict] = None
    arrays: Optional[dict] = field(default=None, repr=False)

    def to_json(self) -> dict:
        """The JSON fields: every field but ``arrays``, without the unset ones.

        Returns
        -------
        dict
            Field name to value for every field except ``arrays`` whose value is not ``None``.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "arrays" and getattr(self, f.name) is not None}

    def summary(self) -> "TaskRecord":
        """The same record without its arrays and trace (what a runner sends back to the driver).

        Returns
        -------
        TaskRecord
            A copy with ``arrays`` and ``trace`` set to ``None``; ``self`` is not modified.
        """
        return dataclasses.replace(self, arrays=None, trace=None)


def task_key(payload: dict) -> str:
    """The key of a task: a hash of the payload that determines its result.

    Parameters
    ----------
    payload : dict
        JSON-serializable description of the task (values JSON cannot encode are hashed by
        their ``str()``); key order does not matter.

    Returns
    -------
    str
        The first 20 hexadecimal digits of the sha256 of the payload's compact, key-sorted JSON.
    """
    blob = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def safe_name(name: str) -> str:
    """``name`` as a file-name component (what the store calls a label's directory).

    Parameters
    ----------
    name : str
        A dataset name or model label (converted with ``str()``).

    Returns
    -------
    str
        ``name`` with every run of characters other than ASCII letters, digits and ``._+-``
        replaced by one ``_``. Distinct names may map to the same result.
    """
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", str(name))


class ResultStore:
    """Records of one experiment under ``root`` (``results/<experiment>``).

    Parameters
    ----------
    root : str or os.PathLike
        The experiment's results directory (need not exist yet).

    Attributes
    ----------
    root : pathlib.Path
        ``Path(root)``.
    """

    def __init__(self, root: str | os.PathLike) -> None:
        """Store the root; nothing is read or created.

        Parameters
        ----------
        root : str or os.PathLike
            The experiment's results directory.
        """
        self.root = Path(root)

    def record_path(self, dataset: str, model: str, round_: int, fold: int, key: str) -> Path:
        """Where the JSON of a task's record is written.

        Parameters
        ----------
        dataset : str
            Dataset name.
        model : str
            Model label.
        round_, fold : int
            Round and fold of the task.
        key : str
            The task's key.

        Returns
        -------
        pathlib.Path
            ``root/records/<dataset>/<model>/r<round_>f<fold>-<key>.json``, names passed through
            :func:`safe_name`; the predictions go beside it with the suffix ``.npz``.
        """
        return self.root / "records" / safe_name(dataset) / safe_name(model) / f"r{round_}f{fold}-{key}.json"

    def fit_prefix(self, dataset: str, model: str, round_: int, fold: int, key: str) -> Path:
        """Where a task's fit checkpoints go while it runs (:mod:`bncbench.engine.checkpoint`).

        Parameters
        ----------
        dataset, model : str
            Dataset name and model label.
        round_, fold : int
            Round and fold.
        key : str
            The task's key.

        Returns
        -------
        pathlib.Path
            :meth:`record_path` without its suffix: the files are ``<prefix>.fit<i>.npz``.
        """
        return self.record_path(dataset, model, round_, fold, key).with_suffix("")

    def running_path(self, dataset: str, model: str, round_: int, fold: int, key: str) -> Path:
        """Where a task's running marker is while it runs (:func:`bncbench.harness.runner.run_task`).

        Parameters
        ----------
        dataset, model : str
            Dataset name and model label.
        round_, fold : int
            Round and fold.
        key : str
            The task's key.

        Returns
        -------
        pathlib.Path
            :meth:`record_path` with the suffix ``.running`` (not ``.json``: no reader of
            records takes it for one). Read and written with :func:`read_marker` and
            :func:`write_marker`.
        """
        return self.record_path(dataset, model, round_, fold, key).with_suffix(".running")

    def is_done(self, path: Path, *, retry_failed: bool = True) -> bool:
        """Whether the record at ``path`` means its task need not run again.

        Parameters
        ----------
        path : pathlib.Path
            A record's JSON path (:meth:`record_path`).
        retry_failed : bool, default=True
            Count only a record with ``status: ok`` as done; otherwise any existing record is.

        Returns
        -------
        bool
            False if ``path`` does not exist or the record is not sound (:func:`record_problem`:
            its JSON or, for a success, its predictions cannot be read), whatever ``retry_failed``;
            with ``retry_failed``, also False if its status is not ``"ok"``.
        """
        record, problem = record_problem(path)
        if problem is not None:
            return False
        return not retry_failed or record.get("status") == "ok"

    def problem(self, path: Path) -> str | None:
        """Why the stored record at ``path`` cannot be used; ``None`` if it is sound or absent.

        Parameters
        ----------
        path : pathlib.Path
            A record's JSON path.

        Returns
        -------
        str or None
            :func:`record_problem`'s phrase for an existing record that is not sound.
        """
        _, problem = record_problem(path)
        return None if problem == "no such file" else problem

    def path_of(self, rec: TaskRecord) -> Path:
        """Where ``rec`` is written.

        Parameters
        ----------
        rec : TaskRecord
            A record.

        Returns
        -------
        pathlib.Path
            :meth:`record_path` of its dataset, model label, round, fold and key.
        """
        return self.record_path(rec.dataset, rec.model, rec.round, rec.fold, rec.key)

    def put(self, rec: TaskRecord) -> Path:
        """Write a task record atomically (predictions first, the JSON last); returns its path.

        Parameters
        ----------
        rec : TaskRecord
            The record; its ``arrays`` (if any) go to the ``.npz``, :meth:`TaskRecord.to_json` to
            the JSON.

        Returns
        -------
        pathlib.Path
            The JSON's path (:meth:`path_of`).

        Raises
        ------
        OSError
            If a file cannot be written.
        """
        path = self.path_of(rec)
        self.write(path, rec.to_json(), rec.arrays)
        return path

    def write(self, path: Path, record: dict, arrays: dict | None = None) -> None:
        """Write a record's arrays and JSON at ``path``, each atomically, the JSON last.

        Parameters
        ----------
        path : pathlib.Path
            The JSON's path; the arrays go to ``path.with_suffix(".npz")``.
        record : dict
            The JSON fields; ``record_version`` (:data:`RECORD_VERSION`) is added (not in
            ``record`` itself). NumPy scalars and arrays are written as numbers and lists, other
            values JSON cannot encode as their ``str()``.
        arrays : dict of str to ndarray, optional
            Saved with :func:`numpy.savez_compressed`; no ``.npz`` is written when ``None`` or
            empty.

        Raises
        ------
        OSError
            If a file cannot be written.
        """
        record = {**record, "record_version": RECORD_VERSION}
        blob = json.dumps(record, default=json_default).encode()
        if arrays:
            import io

            buf = io.BytesIO()
            np.savez_compressed(buf, **arrays)
            atomic_write_bytes(path.with_suffix(".npz"), buf.getvalue())
        try:
            atomic_write_bytes(path, blob)
        except BaseException:
            if arrays and not path.exists():  # no predictions without their JSON (a full disk, a kill)
                path.with_suffix(".npz").unlink(missing_ok=True)
            raise

    def clean_temp(self) -> int:
        """Remove temporary files left by killed writers; returns how many.

        A temporary file is named ``.tmp-<host>-<pid>-...``; only files of this
        host whose writer process is gone are removed, so a concurrent sweep
        job writing into the same directory is never disturbed.

        Returns
        -------
        int
            Number of files removed.
        """
        n = 0
        host = socket.gethostname()
        for tmp in self.root.glob(f"records/**/{TMP_PREFIX}*"):
            rest = tmp.name[len(TMP_PREFIX):]
            if not rest.startswith(host + "-"):
                continue
            try:
                pid = int(rest[len(host) + 1:].split("-", 1)[0])
            except ValueError:
                continue
            if _alive(pid):
                continue
            tmp.unlink(missing_ok=True)
            n += 1
        return n

    def clean_strays(self) -> int:
        """Remove predictions without their JSON (``.npz`` files a killed or failed write left); returns how many.

        A record's ``.npz`` is written before its JSON, so a process stopped between the two
        (a kill, a full disk) leaves one behind; it is never read, and a rerun rewrites it.
        Fit checkpoints (``.fit<i>.npz``) are not strays, nor are running markers (``.running``).
        Call it while holding :meth:`lock`.

        Returns
        -------
        int
            Number of files removed.
        """
        n = 0
        for npz in self.root.glob("records/*/*/*.npz"):
            if re.search(r"\.fit\d+$", npz.stem) or npz.with_suffix(".json").exists():
                continue
            npz.unlink(missing_ok=True)
            n += 1
        return n

    @property
    def lock_path(self) -> Path:
        """The store's lock file, ``root/.lock`` (:meth:`lock`)."""
        return self.root / LOCK_NAME

    @contextlib.contextmanager
    def lock(self, *, poll: float = 1.0, say=None):
        """Hold the store's lock for the block: one run at a time writes into a store; a second one waits.

        The lock is the file :attr:`lock_path`, created exclusively, holding its owner's host,
        pid, process start time and command line. A run that finds it held by a live process
        says so once (``say``) and waits until it is released; a lock whose owner is dead (this
        host, and its pid gone or reused by another process) is stale, and is taken over, so a
        run killed with ``kill -9`` never blocks the next one. The owner refreshes the file's
        modification time every :data:`LOCK_HEARTBEAT` seconds; a lock held from another host,
        whose pid cannot be checked, is stale once not refreshed for :data:`LOCK_STALE_AFTER`
        seconds (a job killed on another node), and until then the run waits, its message
        saying which file to remove if that run is gone. The lock is re-entrant within one
        process.

        Parameters
        ----------
        poll : float, default=1.0
            Seconds between attempts while waiting.
        say : callable, optional
            Receives the one waiting message; default: printed to stderr.

        Yields
        ------
        None

        Raises
        ------
        OSError
            If the results directory cannot be created or the lock file written.
        """
        import time

        me = _owner()
        path = self.lock_path
        held = _read_lock(path)
        if held is not None and _same_process(held, me):  # re-entrant
            yield
            return
        self.root.mkdir(parents=True, exist_ok=True)
        told = False
        while True:
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = _read_lock(path)
                if owner is None:  # being written this instant, or left empty by a writer killed at once
                    with contextlib.suppress(OSError):
                        if time.time() - path.stat().st_mtime > 10:
                            _break_lock(path, None)
                            continue
                elif _owner_dead(owner, path):
                    _break_lock(path, owner)
                    continue
                if not told:
                    told = True
                    msg = (f"bncbench: {self.root} is locked by the run of pid {owner.get('pid')} on "
                           f"{owner.get('host')} (since {owner.get('since')}); waiting for it to end"
                           if owner else f"bncbench: {self.root} is locked; waiting")
                    if owner and owner.get("host") != me["host"]:
                        msg += (f" (remove {path} if that run is gone; it is taken over once not refreshed for "
                                f"{LOCK_STALE_AFTER / 60:g} minutes)")
                    (say or (lambda m: print(m, file=sys.stderr, flush=True)))(msg)
                time.sleep(poll)
                continue
            try:
                with os.fdopen(fd, "w") as fh:
                    json.dump(me, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
            except BaseException:
                path.unlink(missing_ok=True)
                raise
            break
        import threading

        stop = threading.Event()

        def heartbeat():  # a run on another host tells a live lock from a dead one by this
            while not stop.wait(LOCK_HEARTBEAT):
                with contextlib.suppress(OSError):
                    os.utime(path)

        threading.Thread(target=heartbeat, name="bncbench-lock", daemon=True).start()
        try:
            yield
        finally:
            stop.set()
            if _same_process(_read_lock(path) or {}, me):
                path.unlink(missing_ok=True)

    def rekey(self, old: Path, new: Path, key: str) -> bool:
        """Move the record at ``old`` (JSON and predictions) to ``new``, under ``key``.

        For a change of how keys are computed that does not change results. Safe to repeat
        after a kill at any point: the running marker (:meth:`running_path`, a task's count of
        deaths) and the predictions move first, then the JSON is written at ``new`` (atomically,
        with ``key`` in place of its old one), and the old JSON goes last. An old record beside
        an existing new one is removed, with its marker.

        Parameters
        ----------
        old, new : pathlib.Path
            The record's JSON under its old key and under its new one (:meth:`record_path`).
        key : str
            The new key.

        Returns
        -------
        bool
            Whether a record was moved (``False`` if ``old`` does not exist or cannot be read).
        """
        if old == new or not old.exists():
            return False
        if not new.exists():
            try:
                record = json.loads(old.read_text())
            except (OSError, ValueError):
                return False
            marker = old.with_suffix(".running")
            if marker.exists() and not new.with_suffix(".running").exists():
                os.replace(marker, new.with_suffix(".running"))
            npz = old.with_suffix(".npz")
            if npz.exists():
                os.replace(npz, new.with_suffix(".npz"))
            self.write(new, {**record, "key": key})
        else:  # the task has run again under its new key: the old record is a stale copy
            old.with_suffix(".npz").unlink(missing_ok=True)
        old.with_suffix(".running").unlink(missing_ok=True)
        old.unlink(missing_ok=True)
        return True

    def conflicts(self, dataset: str, model: str, round_: int, fold: int, key: str) -> list:
        """Completed records of the same (dataset, model label, round, fold) under another key.

        Parameters
        ----------
        dataset : str
            Dataset name.
        model : str
            Model label.
        round_, fold : int
            Round and fold of the task.
        key : str
            The task's key.

        Returns
        -------
        list of pathlib.Path
            The JSON files ``r<round_>f<fold>-*.json`` in the task's directory other than its own
            (whatever their status, ``ok`` or ``failed``).
        """
        path = self.record_path(dataset, model, round_, fold, key)
        return [p for p in path.parent.glob(f"r{round_}f{fold}-*.json") if p != path]


LOCK_NAME = ".lock"
LOCK_HEARTBEAT = 60.0
"""Seconds between two refreshes of a held lock file's modification time (:meth:`ResultStore.lock`)."""
LOCK_STALE_AFTER = 600.0
"""A lock of another host not refreshed for this many seconds is stale (its run is gone)."""


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux ``/proc``), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _owner() -> dict:
    """This process as a lock owner: host, pid, start time, when and the command line."""
    import datetime

    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "start": _start_time(pid),
            "since": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "argv": " ".join(sys.argv)}


def _same_process(a: dict, b: dict) -> bool:
    return (a.get("host"), a.get("pid"), a.get("start")) == (b.get("host"), b.get("pid"), b.get("start"))


def _read_lock(path: Path) -> dict | None:
    try:
        owner = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) and "pid" in owner else None


def _owner_dead(owner: dict, path: Path) -> bool:
    """Whether a lock's owner is gone: on this host, its pid does not exist or now names a later process;
    on another host, the lock has not been refreshed for :data:`LOCK_STALE_AFTER` seconds."""
    if owner.get("host") != socket.gethostname():
        import time

        try:
            return time.time() - path.stat().st_mtime > LOCK_STALE_AFTER
        except OSError:
            return False
    try:
        pid = int(owner["pid"])
    except (TypeError, ValueError):
        return True
    if not _alive(pid):
        return True
    start = owner.get("start")
    now = _start_time(pid)
    return start is not None and now is not None and now != start


def _break_lock(path: Path, owner: dict | None) -> None:
    """Remove a stale lock, unless another run has broken and retaken it meanwhile."""
    aside = path.with_name(f"{path.name}.stale-{socket.gethostname()}-{os.getpid()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    taken = _read_lock(aside)
    if taken is not None and (owner is None or not _same_process(taken, owner)):
        # a live lock taken by another run after our check: put it back where it was
        with contextlib.suppress(OSError):
            os.link(aside, path)
    aside.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_marker(path: str | os.PathLike) -> dict | None:
    """A task's running marker (:meth:`ResultStore.running_path`), or None if there is none.

    Parameters
    ----------
    path : str or os.PathLike
        The marker's path.

    Returns
    -------
    dict or None
        Its fields (:func:`bncbench.harness.runner.run_task`: ``deaths``, ``pid``, ``host``,
        ``started``, ``progress``); None if the file does not exist. A marker that cannot be
        parsed (written by hand) is an empty dict: a death with nothing else known.
    """
    try:
        marker = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def write_marker(path: str | os.PathLike, marker: dict) -> None:
    """Write a task's running marker atomically (:func:`bncbench.atomic.atomic_write_bytes`).

    Parameters
    ----------
    path : str or os.PathLike
        The marker's path (:meth:`ResultStore.running_path`); its directories are created.
    marker : dict
        JSON-serializable fields.

    Raises
    ------
    OSError
        If it cannot be written.
    """
    atomic_write_bytes(Path(path), json.dumps(marker, default=json_default).encode())


def json_default(o):
    """What ``json.dumps(..., default=json_default)`` writes for a value JSON cannot encode itself.

    NumPy booleans, integers and floats become the Python values they hold (a DataFrame's
    ``param.*`` column yields them), arrays become lists, anything else its ``str()``.

    Parameters
    ----------
    o : object
        The value.

    Returns
    -------
    bool, int, float, list or str
    """
    if isinstance(o, (np.bool_, np.integer, np.floating)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def record_files(root: str | os.PathLike) -> list[Path]:
    """Every record JSON of an experiment directory.

    Parameters
    ----------
    root : str or os.PathLike
        The experiment's results directory.

    Returns
    -------
    list of pathlib.Path
        ``root/records/*/*/*.json``, sorted; empty if there is none.
    """
    return sorted(Path(root).glob("records/*/*/*.json"))


def load_results(root: str | os.PathLike, *, with_trace: bool = False, strict: bool = False) -> pd.DataFrame:
    """All records of an experiment directory as one long-format DataFrame.

    One row per (dataset, model, round, fold) task. Columns include
    ``dataset, model, round, fold, status, zero_one, rmse, train_time,
    test_time, n_parameters, n_train, n_test, big``, the model's
    parameters as ``param.*`` columns and the record's environment as ``env.*`` columns
    (``env.numpy``, ``env.cpu``, ...); ``trace`` (a list of per-iteration
    dicts) is kept only with ``with_trace=True``. ``path`` points at the record.

    A record that is not sound (:func:`record_problem`: its JSON cannot be parsed, or a
    successful record's predictions are missing or unreadable) is left out, and one
    :class:`UnreadableRecordWarning` per such record names it and why (the command line prints
    each as one ``bncbench: warning:`` line); rerunning the experiment redoes them.

    Parameters
    ----------
    root : str or os.PathLike
        The experiment's results directory.
    with_trace : bool, default=False
        Keep the ``trace`` column.
    strict : bool, default=False
        Refuse a store with an unsound record instead of leaving it out.

    Returns
    -------
    pandas.DataFrame
        One row per sound record of :func:`record_files`, in their order; a ``param.*`` value
        that is a list or dict is its JSON text. An empty frame without columns when there is no
        record.

    Raises
    ------
    BNCBenchError
        With ``strict``, if a record is not sound (one line: how many, and the first of them).
    """
    rows = []
    bad = []
    for p in record_files(root):
        rec, problem = record_problem(p)
        if problem is not None:
            bad.append((p, problem))
            continue
        if not with_trace:
            rec.pop("trace", None)
        model_params = rec.pop("model_params", {}) or {}
        for k, v in model_params.items():
            rec[f"param.{k}"] = v if not isinstance(v, (list, dict)) else json.dumps(v)
        for k, v in (rec.pop("environment", None) or {}).items():
            rec[f"env.{k}"] = v
        rec["path"] = str(p)
        rows.append(rec)
    if bad and strict:
        raise BNCBenchError(f"{len(bad)} unreadable record(s) under {root}, first {bad[0][0]}: {bad[0][1]} "
                            "(rerun the experiment to redo them)")
    for p, problem in bad:
        warnings.warn(UnreadableRecordWarning(f"unreadable record {p}: {problem}; left out (a rerun of the "
                                              "experiment redoes it)"), stacklevel=2)
    return pd.DataFrame(rows)


def load_predictions(record_path: str | os.PathLike, keys: Iterable[str] | None = None) -> dict:
    """The per-test-instance arrays of one record (``test_index``, ``y_true``, ``y_pred``, ``proba``).

    ``keys`` limits what is read (each array is decompressed only when asked for).

    Parameters
    ----------
    record_path : str or os.PathLike
        The record's JSON path (e.g. the ``path`` column of :func:`load_results`); the arrays
        are read from the same path with the suffix ``.npz``.
    keys : iterable of str, optional
        The arrays to read; default all of them.

    Returns
    -------
    dict of str to ndarray
        ``test_index`` and ``y_true``, ``y_pred`` of shape (n_test,), ``proba`` of shape
        (n_test, n_classes), as the runner stores them (int32, int16, int16, float32).

    Raises
    ------
    FileNotFoundError
        If the record has no ``.npz`` (a failed task writes none).
    KeyError
        If a key is not one of the record's arrays.
    """
    with np.load(Path(record_path).with_suffix(".npz")) as z:
        return {k: z[k] for k in (z.files if keys is None else keys)}


class ReplacedRecordWarning(BNCBenchWarning):
    """A later store's record replaced an earlier store's record of the same task with different results."""


SPLIT_FIELDS = ("seed", "n_folds", "protocol")
"""The record fields that fix a (dataset, round, fold)'s split (:func:`bncbench.harness.protocol.cv_folds`):
stores read as one must agree on them per dataset (:func:`load_stores`). ``n_rounds`` is not one: a model run
with fewer rounds has the first rounds of the others'."""


def _absent(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def _model_ids(df: pd.DataFrame) -> pd.Series:
    """A record's model as text: every stored ``param.*`` value (a parameter the record lacks is left out)."""
    params = sorted(c for c in df.columns if c.startswith("param."))
    rows = df[params].to_dict("records") if params else [{}] * len(df)
    return pd.Series([json.dumps({k: v for k, v in p.items() if not _absent(v)}, sort_keys=True, default=json_default)
                      for p in rows], index=df.index)


def _curve(rec: pd.Series):
    mf = rec.get("missing_features")
    return mf.get("rate") if isinstance(mf, dict) else None


def load_stores(roots: Iterable[str | os.PathLike], *, with_trace: bool = False, strict: bool = False,
                labels: bool = True, say=None) -> pd.DataFrame:
    """The records of several stores of one experiment, read as one store: a later store's record of the same
    task replaces an earlier one's.

    Stores are read in the order given (:func:`load_results` each). Two records are of the same task when
    they have the same dataset, round, fold and model parameters (every ``param.*`` value; a parameter one
    record lacks is absent, not a difference of label): the later store's is kept, except that a failed
    record never replaces a successful one. A replaced record whose test 0-1 loss, RMSE or marginalized
    missing-features curve differs from its replacement's gives one :class:`ReplacedRecordWarning`;
    ``say`` gets one line with how many were replaced.

    The stores must be of one experiment. They are refused when, for one dataset, their records disagree
    on the split of a (round, fold) (:data:`SPLIT_FIELDS`: the seed, the folds per round, cv or holdout),
    and, with ``labels`` (what a report needs: it names models by label), when one model label names two
    different sets of parameters; then one set of parameters stored under two labels (a label renamed
    between runs) takes the latest store's label.

    Parameters
    ----------
    roots : iterable of str or os.PathLike
        The stores (results directories), earliest first.
    with_trace, strict : bool, default=False
        As for :func:`load_results`.
    labels : bool, default=True
        One label per model and one model per label (refused or relabelled as above); False leaves labels as
        stored, for a reader that tells models apart by their parameters only.
    say : callable, optional
        Receives one summary line when records were replaced or relabelled.

    Returns
    -------
    pandas.DataFrame
        As :func:`load_results`, with a ``store`` column (the root the record was read from, as given),
        in the order one store holding the kept records would give (:func:`record_files`, by the record's
        path inside its store).

    Raises
    ------
    BNCBenchError
        If no store is given, or the stores disagree as described above (one line naming the dataset or
        label and two of the stores).
    """
    roots = [str(r) for r in roots]
    if not roots:
        raise BNCBenchError("no results store given")
    frames = []
    for r in roots:
        f = load_results(r, with_trace=with_trace, strict=strict)
        if not f.empty:
            frames.append(f.assign(store=r))
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True)
    return merge_stores(df, labels=labels, say=say) if len(frames) > 1 else df


def merge_stores(df: pd.DataFrame, *, labels: bool = True, say=None) -> pd.DataFrame:
    """Records of several stores as one store's: the merge of :func:`load_stores`, on loaded records.

    Parameters
    ----------
    df : pandas.DataFrame
        Records as :func:`load_results` gives them, with a ``store`` column, the earlier stores' records
        first. Not modified.
    labels : bool, default=True
        As for :func:`load_stores`.
    say : callable, optional
        As for :func:`load_stores`.

    Returns
    -------
    pandas.DataFrame
        One record per task (the latest store's, a successful one before a failed one), ordered as one store
        holding them would read them (by the record's path inside its store; ``df``'s order without a
        ``path`` column).

    Raises
    ------
    BNCBenchError
        As :func:`load_stores`.
    """
    df = df.reset_index(drop=True).copy()
    n_stores = df["store"].nunique()
    split = df.reindex(columns=list(SPLIT_FIELDS)).astype(object)
    split["protocol"] = split["protocol"].where(split["protocol"].notna(), "cv")  # records before it: cv
    split_text = split.astype(str).agg(" ".join, axis=1)
    for dataset, g in split_text.groupby(df["dataset"], sort=False):
        if g.nunique() > 1:
            first = g.iloc[0]
            other = g[g != first].index[0]
            a = df.loc[g.index[0], "store"]
            raise BNCBenchError(
                f"stores {a} and {df.loc[other, 'store']} split {dataset} differently (seed, folds, protocol: "
                f"{first} against {g[other]}): not one experiment, not merged")
    model_id = _model_ids(df)
    for label, g in model_id.groupby(df["model"], sort=False):
        if labels and g.nunique() > 1:
            first = g.iloc[0]
            other = g[g != first].index[0]
            raise BNCBenchError(f"the label {label!r} names different models in {df.loc[g.index[0], 'store']} and "
                                f"{df.loc[other, 'store']} (parameters {first} against {g[other]}): not merged")
    ident = df["dataset"] + "\0" + df["round"].astype(str) + "\0" + df["fold"].astype(str) + "\0" + model_id
    ok = (df["status"] == "ok").to_numpy()
    order = np.lexsort((np.arange(len(df)), ok))  # within a task: failed first, then successful, each by store
    keep_pos = pd.Series(np.arange(len(df))[order], index=ident.iloc[order].to_numpy())
    kept = keep_pos.groupby(level=0, sort=False).last()
    kept_of = pd.Series(kept.reindex(ident.to_numpy()).to_numpy(), index=df.index)
    replaced = kept_of.to_numpy() != np.arange(len(df))
    for i in np.flatnonzero(replaced):
        old, new = df.iloc[i], df.iloc[kept_of.iloc[i]]
        changes = [f"{c} {old.get(c)} -> {new.get(c)}" for c in ("status", "zero_one", "rmse")
                   if not (old.get(c) == new.get(c) or (_absent(old.get(c)) and _absent(new.get(c))))]
        if _curve(old) is not None and _curve(new) is not None and _curve(old) != _curve(new):
            changes.append("missing-features curve differs")
        task = f"{old['dataset']} {old['model']} round {old['round']} fold {old['fold']}"
        if kept_of.iloc[i] < i:  # a later store's failed record
            warnings.warn(ReplacedRecordWarning(
                f"{task}: the failed record of {old['store']} left out, {new['store']}'s successful one kept"),
                stacklevel=2)
        elif changes:
            warnings.warn(ReplacedRecordWarning(
                f"{task}: the record of {old['store']} replaced by {new['store']}'s, which differs "
                f"({'; '.join(changes)})"), stacklevel=2)
    renamed = 0
    if labels:  # one label per model: the latest store's
        latest = df.loc[~replaced].groupby(model_id[~replaced], sort=False)["model"].last()
        relabel = model_id.map(latest)
        renamed = int((relabel != df["model"])[~replaced].sum())
        df["model"] = relabel
    if say is not None and (replaced.any() or renamed):
        say(f"bncbench: {n_stores} stores read as one: {int(replaced.sum())} record(s) replaced by a later "
            f"store's" + (f", {renamed} relabelled as the latest store names their model" if renamed else ""))
    out = df.loc[~replaced]
    if "path" in out:  # in the order one store holding them would give (record_files: by path in the store)
        inside = [Path(p).relative_to(r).parts if Path(p).is_relative_to(r) else Path(p).parts
                  for p, r in zip(out["path"], out["store"])]  # parts: as sorted(Path) orders them
        out = out.iloc[sorted(range(len(inside)), key=inside.__getitem__)]
    return out.reset_index(drop=True)
