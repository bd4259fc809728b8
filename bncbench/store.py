"""The results store: one atomically written record per finished task.

Layout under ``results/<experiment>/``::

    records/<dataset>/<model>/r<round>f<fold>-<key>.json   # scalars, trace, status
    records/<dataset>/<model>/r<round>f<fold>-<key>.npz    # per-test-instance predictions
    records/<dataset>/<model>/r<round>f<fold>-<key>.fit<i>.npz  # while it runs: a long fit's checkpoint

``key`` is a hash of everything that determines the task (dataset identity,
model parameters, seed, protocol, round, fold). A record is written to a
temporary file in the same directory and renamed into place, predictions
first and the JSON last, so the JSON's presence means the task is complete;
a sweep killed at any moment leaves no partial record behind and a rerun
skips what is done. A long L-BFGS fit saves its state beside the record to be
(``.fit<i>.npz``, :mod:`bncbench.engine.checkpoint`): the rerun of a killed
task goes on from there; the files are removed once the record is written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import numpy as np
import pandas as pd

RECORD_VERSION = 1
TMP_PREFIX = ".tmp-"


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
        The task's key (:attr:`bncbench.runner.Task.key`).
    model_params : dict
        The model's parameters.
    status : {"ok", "failed"}, default="ok"
        Whether the task completed.
    zero_one, rmse : float, optional
        0-1 loss and RMSE (:func:`bncbench.protocol.rmse`) on the test part.
    train_time, test_time : float, optional
        Wall time in seconds of fitting and of predicting the test part.
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
        :func:`bncbench.missing_protocol.evaluate`).
    resumed : list of int, optional
        The iterations at which the fit went on from a checkpoint of an earlier, killed run of
        the task (:mod:`bncbench.engine.checkpoint`); its ``train_time`` includes the optimizer's
        seconds of those runs up to the checkpoint. Absent for a fit run in one go.
    error : str, optional
        ``"ExceptionType: message"`` of a failed task.
    traceback : str, optional
        The failed task's traceback (at most 8 frames).
    protocol : {"cv", "holdout"}, optional
        The protocol mode (absent from records written before it existed: cv).
    environment : dict of str to str, optional
        Software versions, processor and git commit of the process that computed the record
        (:func:`bncbench.provenance.environment`; absent from records written before it existed).
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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (:func:`atomic_file`).

    Parameters
    ----------
    path : pathlib.Path
        The destination; replaced if it exists.
    data : bytes
        The content.

    Raises
    ------
    OSError
        If a directory or the file cannot be written; ``path`` is left as it was.
    """
    with atomic_file(path) as fh:
        fh.write(data)


@contextlib.contextmanager
def atomic_file(path: Path):
    """A binary file to write that replaces ``path`` at the end of the block, or not at all.

    The file is a temporary one in the same directory, named ``.tmp-<host>-<pid>-...`` (see
    :meth:`ResultStore.clean_temp`), synced to disk and renamed into place when the block ends
    without an exception; the parent directories are created if missing.

    Parameters
    ----------
    path : pathlib.Path
        The destination; replaced if it exists.

    Yields
    ------
    file object
        The temporary file, open for binary writing.

    Raises
    ------
    OSError
        If a directory or the file cannot be written; on this or any exception in the block the
        temporary file is removed and ``path`` is left as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


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
            False if ``path`` does not exist; with ``retry_failed``, also False if it cannot be
            read or parsed or its status is not ``"ok"``.
        """
        if not path.exists():
            return False
        if not retry_failed:
            return True
        try:
            return json.loads(path.read_text()).get("status") == "ok"
        except (OSError, ValueError):
            return False

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
        if arrays:
            import io

            buf = io.BytesIO()
            np.savez_compressed(buf, **arrays)
            atomic_write_bytes(path.with_suffix(".npz"), buf.getvalue())
        record = {**record, "record_version": RECORD_VERSION}
        atomic_write_bytes(path, json.dumps(record, default=json_default).encode())

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

    def rekey(self, old: Path, new: Path, key: str) -> bool:
        """Move the record at ``old`` (JSON and predictions) to ``new``, under ``key``.

        For a change of how keys are computed that does not change results. Safe to repeat
        after a kill at any point: the predictions move first, then the JSON is written at
        ``new`` (atomically, with ``key`` in place of its old one), and the old JSON goes last.
        An old record beside an existing new one is removed.

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
            npz = old.with_suffix(".npz")
            if npz.exists():
                os.replace(npz, new.with_suffix(".npz"))
            self.write(new, {**record, "key": key})
        else:  # the task has run again under its new key: the old record is a stale copy
            old.with_suffix(".npz").unlink(missing_ok=True)
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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


def load_results(root: str | os.PathLike, *, with_trace: bool = False) -> pd.DataFrame:
    """All records of an experiment directory as one long-format DataFrame.

    One row per (dataset, model, round, fold) task. Columns include
    ``dataset, model, round, fold, status, zero_one, rmse, train_time,
    test_time, n_parameters, n_train, n_test, big``, the model's
    parameters as ``param.*`` columns and the record's environment as ``env.*`` columns
    (``env.numpy``, ``env.cpu``, ...); ``trace`` (a list of per-iteration
    dicts) is kept only with ``with_trace=True``. ``path`` points at the record.

    Parameters
    ----------
    root : str or os.PathLike
        The experiment's results directory.
    with_trace : bool, default=False
        Keep the ``trace`` column.

    Returns
    -------
    pandas.DataFrame
        One row per readable record of :func:`record_files`, in their order (a record that
        cannot be read or parsed is skipped); a ``param.*`` value that is a list or dict is
        its JSON text. An empty frame without columns when there is no record.
    """
    rows = []
    for p in record_files(root):
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            continue  # unreadable records cannot exist (atomic writes), but never crash a report
        if not with_trace:
            rec.pop("trace", None)
        model_params = rec.pop("model_params", {}) or {}
        for k, v in model_params.items():
            rec[f"param.{k}"] = v if not isinstance(v, (list, dict)) else json.dumps(v)
        for k, v in (rec.pop("environment", None) or {}).items():
            rec[f"env.{k}"] = v
        rec["path"] = str(p)
        rows.append(rec)
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
