"""The results store: one atomically written record per finished task.

Layout under ``results/<experiment>/``::

    records/<dataset>/<model>/r<round>f<fold>-<key>.json   # scalars, trace, status
    records/<dataset>/<model>/r<round>f<fold>-<key>.npz    # per-test-instance predictions

``key`` is a hash of everything that determines the task (dataset identity,
model parameters, seed, protocol, round, fold). A record is written to a
temporary file in the same directory and renamed into place, predictions
first and the JSON last, so the JSON's presence means the task is complete;
a sweep killed at any moment leaves no partial record behind and a rerun
skips what is done.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

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
    error: Optional[str] = None
    traceback: Optional[str] = None
    protocol: Optional[str] = None  # "cv" or "holdout" (records before it: cv)
    arrays: Optional[dict] = field(default=None, repr=False)

    def to_json(self) -> dict:
        """The JSON fields: every field but ``arrays``, without the unset ones."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "arrays" and getattr(self, f.name) is not None}

    def summary(self) -> "TaskRecord":
        """The same record without its arrays and trace (what a runner sends back to the driver)."""
        return dataclasses.replace(self, arrays=None, trace=None)


def task_key(payload: dict) -> str:
    blob = json.dumps(payload, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def safe_name(name: str) -> str:
    """``name`` as a file-name component (what the store calls a label's directory)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", str(name))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
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
    """Records of one experiment under ``root`` (``results/<experiment>``)."""

    def __init__(self, root):
        self.root = Path(root)

    def record_path(self, dataset: str, model: str, round_: int, fold: int, key: str) -> Path:
        return self.root / "records" / safe_name(dataset) / safe_name(model) / f"r{round_}f{fold}-{key}.json"

    def is_done(self, path: Path, *, retry_failed: bool = True) -> bool:
        if not path.exists():
            return False
        if not retry_failed:
            return True
        try:
            return json.loads(path.read_text()).get("status") == "ok"
        except (OSError, ValueError):
            return False

    def path_of(self, rec: TaskRecord) -> Path:
        """Where ``rec`` is written."""
        return self.record_path(rec.dataset, rec.model, rec.round, rec.fold, rec.key)

    def put(self, rec: TaskRecord) -> Path:
        """Write a task record atomically (predictions first, the JSON last); returns its path."""
        path = self.path_of(rec)
        self.write(path, rec.to_json(), rec.arrays)
        return path

    def write(self, path: Path, record: dict, arrays: dict | None = None) -> None:
        if arrays:
            import io

            buf = io.BytesIO()
            np.savez_compressed(buf, **arrays)
            atomic_write_bytes(path.with_suffix(".npz"), buf.getvalue())
        record = {**record, "record_version": RECORD_VERSION}
        atomic_write_bytes(path, json.dumps(record, default=_json_default).encode())

    def clean_temp(self) -> int:
        """Remove temporary files left by killed writers; returns how many.

        A temporary file is named ``.tmp-<host>-<pid>-...``; only files of this
        host whose writer process is gone are removed, so a concurrent sweep
        job writing into the same directory is never disturbed.
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

    def conflicts(self, dataset: str, model: str, round_: int, fold: int, key: str) -> list:
        """Completed records of the same (dataset, model label, round, fold) under another key."""
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


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def record_files(root) -> list[Path]:
    return sorted(Path(root).glob("records/*/*/*.json"))


def load_results(root, *, with_trace: bool = False) -> pd.DataFrame:
    """All records of an experiment directory as one long-format DataFrame.

    One row per (dataset, model, round, fold) task. Columns include
    ``dataset, model, round, fold, status, zero_one, rmse, train_time,
    test_time, n_parameters, n_train, n_test, big`` and the model's
    parameters as ``param.*`` columns; ``trace`` (a list of per-iteration
    dicts) is kept only with ``with_trace=True``. ``path`` points at the record.
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
        rec["path"] = str(p)
        rows.append(rec)
    return pd.DataFrame(rows)


def load_predictions(record_path, keys=None) -> dict:
    """The per-test-instance arrays of one record (``test_index``, ``y_true``, ``y_pred``, ``proba``).

    ``keys`` limits what is read (each array is decompressed only when asked for).
    """
    with np.load(Path(record_path).with_suffix(".npz")) as z:
        return {k: z[k] for k in (z.files if keys is None else keys)}
