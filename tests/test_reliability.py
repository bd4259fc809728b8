"""A store that heals itself and refuses what it cannot trust (issue #36): unreadable records named and
redone, one line for every system error, one run at a time per store, suspicious data warned about."""

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from bncbench.data import registry
from bncbench.errors import BNCBenchError
from bncbench.models import ModelSpec
from bncbench.runner import Protocol, run_experiment
from bncbench.store import ResultStore, UnreadableRecordWarning, load_results, record_files
from bncbench.summary import summarize

MODELS = [ModelSpec("NB", {"structure": "nb"}), ModelSpec("TAN", {"structure": "tan"})]


def _run(root, *, retry_failed=True, seed=3):
    return run_experiment(registry.resolve(["sklearn-iris"]), MODELS, results_root=root,
                          protocol=Protocol(seed=seed, rounds=2, folds=2), progress=False, retry_failed=retry_failed)


def _frame(root):
    df = load_results(root).drop(columns=["train_time", "test_time", "path", "environment"], errors="ignore")
    return df.sort_values(["dataset", "model", "round", "fold"]).reset_index(drop=True)


def _damage(root):
    """Truncate one record's .npz to 300 bytes, delete another's, truncate a third's JSON; return their paths."""
    files = record_files(root)
    a, b, c = files[0], files[3], files[5]
    os.truncate(a.with_suffix(".npz"), 300)
    b.with_suffix(".npz").unlink()
    c.write_text(c.read_text()[:40])
    return a, b, c


# ----------------------------------------------------------------------------- (2) unreadable records
@pytest.mark.parametrize("retry_failed", [True, False])
def test_unreadable_records_are_named_left_out_and_redone(tmp_path, capsys, retry_failed):
    _run(tmp_path)
    want = _frame(tmp_path)
    damaged = _damage(tmp_path)
    with pytest.warns(UnreadableRecordWarning) as caught:
        df = load_results(tmp_path)
    assert len(df) == 8 - 3
    messages = [str(w.message) for w in caught if issubclass(w.category, UnreadableRecordWarning)]
    assert len(messages) == 3
    for p, m in zip(sorted(damaged), messages):
        assert str(p) in m and "\n" not in m
    assert "predictions missing" in " ".join(messages) and "unreadable JSON" in " ".join(messages)
    with pytest.warns(UnreadableRecordWarning):
        s = summarize(tmp_path)  # goes on: the incomplete pairs have no bias/variance
    assert s["n_ok"].sum() == 5 and s["bias"].isna().all()
    with pytest.raises(BNCBenchError, match=r"3 unreadable record\(s\)"):
        load_results(tmp_path, strict=True)

    capsys.readouterr()
    counts = _run(tmp_path, retry_failed=retry_failed)
    assert (counts["skipped"], counts["ok"]) == (5, 3)
    err = capsys.readouterr().err
    for p in damaged:
        assert f"redoing unreadable record {p}" in err
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableRecordWarning)
        got = _frame(tmp_path)
    assert got.drop(columns=["environment"], errors="ignore").equals(want)


def test_corrupt_predictions_inside_a_sound_archive_do_not_stop_the_summary(tmp_path):
    _run(tmp_path)
    npz = record_files(tmp_path)[0].with_suffix(".npz")
    blob = bytearray(npz.read_bytes())
    blob[60:90] = b"\xff" * 30  # the first member's compressed data: the directory still opens
    npz.write_bytes(bytes(blob))
    with pytest.warns(UnreadableRecordWarning, match=str(record_files(tmp_path)[0])):
        s = summarize(tmp_path)
    assert len(s) == 2


def test_a_json_write_that_fails_leaves_no_predictions_and_strays_are_cleaned(tmp_path, monkeypatch):
    import bncbench.store as store_mod

    real = store_mod.atomic_write_bytes

    def full_disk(path, data):
        if path.suffix == ".json":
            raise OSError(28, "No space left on device", str(path))
        return real(path, data)

    monkeypatch.setattr(store_mod, "atomic_write_bytes", full_disk)
    with pytest.raises(OSError):
        _run(tmp_path)
    assert not list(tmp_path.glob("records/**/*.npz")) and not list(tmp_path.glob("records/**/.tmp-*"))
    monkeypatch.undo()
    # a stray left by a kill between the two writes is removed by the next run; checkpoints stay
    _run(tmp_path)
    d = record_files(tmp_path)[0].parent
    (d / "r9f9-0123.npz").write_bytes(b"x")
    (d / "r9f9-0123.fit0.npz").write_bytes(b"x")
    _run(tmp_path)
    assert not (d / "r9f9-0123.npz").exists() and (d / "r9f9-0123.fit0.npz").exists()


CLI_ARGS = ["run", "+experiment=quickstart", "dataset.names=[sklearn-iris]", "cv.rounds=2", "progress=false", "name=iris"]


def test_cli_run_and_report_name_unreadable_records_and_go_on(tmp_path):
    res = run_cli([*CLI_ARGS, f"results_dir={tmp_path}"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    root = tmp_path / "iris"
    a = record_files(root)[1]
    os.truncate(a.with_suffix(".npz"), 300)
    rep = run_cli(["report", str(root), "--no-figures", "--out", str(tmp_path / "rep")], cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "Traceback" not in rep.stderr
    assert [ln for ln in rep.stderr.splitlines() if str(a) in ln] == [
        f"bncbench: warning: unreadable record {a}: unreadable predictions {a.with_suffix('.npz').name} "
        "(BadZipFile: File is not a zip file); left out (a rerun of the experiment redoes it)"]
    strict = run_cli(["report", str(root), "--strict", "--no-figures", "--out", str(tmp_path / "rep2")], cwd=tmp_path)
    assert strict.returncode == 2 and strict.stderr.strip().splitlines() == [
        f"bncbench: error: 1 unreadable record(s) under {root}, first {a}: unreadable predictions "
        f"{a.with_suffix('.npz').name} (BadZipFile: File is not a zip file) (rerun the experiment to redo them)"]
    again = run_cli([*CLI_ARGS, f"results_dir={tmp_path}"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"bncbench: redoing unreadable record {a}" in again.stderr and "Traceback" not in again.stderr
    assert "11 already done, 1 ran ok" in again.stdout
