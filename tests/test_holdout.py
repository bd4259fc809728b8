"""The holdout protocol (``cv.mode=holdout``): one fold on a dataset's given train/test split, no bias/variance."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import yaml
from test_data_digits import idx_bytes, write_gz

from bncbench.__main__ import main as bncbench_main
from bncbench.harness.app import compose_config, plan
from bncbench.data import specs
from bncbench.data.catalog import load_registry
from bncbench.data.formats.idx import IMAGES_MAGIC, LABELS_MAGIC
from bncbench.data.locate import entry_dir
from bncbench.errors import BNCBenchError
from bncbench.harness.model_specs import ModelSpec
from bncbench.report.build import report_from_frames
from bncbench.harness.runner import Protocol, Task, evaluate_task, run_experiment
from bncbench.harness.store import RECORD_VERSION, load_predictions, load_results, task_key
from bncbench.report.summary import HOLDOUT_NOTE, format_table, summarize

NB = ModelSpec("NB", {"structure": "nb"})
TAN = ModelSpec("TAN", {"structure": "tan"})


def reversed_split(tmp_path, name):
    """A given split whose test part reverses the training part's class association.

    Training: 3 dark images of class 0, 3 bright of class 1. Test: 5 bright images of class
    0, 5 dark of class 1. A model trained on the 6 training rows only predicts every test
    image wrong (0-1 loss 1); trained on all 16 rows, or on CV folds, it would not.
    """
    rng = np.random.default_rng(3)
    dark, bright = (lambda k: rng.integers(0, 11, (k, 2, 2))), (lambda k: rng.integers(245, 256, (k, 2, 2)))
    train, test = np.concatenate([dark(3), bright(3)]), np.concatenate([bright(5), dark(5)])
    ddir = tmp_path / "data"
    files = {}
    for part, images, labels in (("train", train, [0, 0, 0, 1, 1, 1]), ("test", test, [0] * 5 + [1] * 5)):
        recs = []
        for kind, payload in (("images", idx_bytes(IMAGES_MAGIC, images.shape, images)),
                              ("labels", idx_bytes(LABELS_MAGIC, (len(labels),), labels))):
            p = write_gz(ddir / f"{part}-{kind}.gz", payload)
            recs.append({"file": p.name, "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()})
        files[part] = recs
    entry = {"format": "idx", "files": files, "class_values": ["0", "1"], "paper": {"name": name},
             "expected": {"rows": 16, "train": 6, "test": 10, "attributes": 4, "classes": 2}}
    reg = tmp_path / "registry.yaml"
    reg.write_text(yaml.safe_dump({"datasets": {name: entry}}))
    return reg, ddir


def test_holdout_records_one_fold_on_exactly_the_given_split(tmp_path, monkeypatch):
    reg, ddir = reversed_split(tmp_path, "reversed-a")
    monkeypatch.setenv("BNCBENCH_REGISTRY", str(reg))
    root = tmp_path / "results"
    run = dict(results_root=root, protocol=Protocol(0, 1, 1, "holdout"), data_dir=str(ddir), progress=False)
    counts = run_experiment(specs.resolve(["reversed-a"]), [NB, TAN], **run)
    assert (counts["total"], counts["ok"], counts["failed"]) == (2, 2, 0)
    df = load_results(root)
    assert sorted(df["model"]) == ["NB", "TAN"]
    assert set(df["round"]) == {0} and set(df["fold"]) == {0} and set(df["protocol"]) == {"holdout"}
    assert set(df["n_rounds"]) == {1} and set(df["n_folds"]) == {1}
    assert set(df["n_train"]) == {6} and set(df["n_test"]) == {10}  # the given training / test parts
    for path in df["path"]:
        pred = load_predictions(path)
        np.testing.assert_array_equal(pred["test_index"], np.arange(6, 16))  # exactly the test part
        np.testing.assert_array_equal(pred["y_true"], [0] * 5 + [1] * 5)
    assert (df["zero_one"] == 1.0).all()  # trained on the 6 training rows alone (see reversed_split)
    summary = summarize(root)
    assert set(summary["protocol"]) == {"holdout"}
    assert summary[["bias", "variance"]].isna().all().all()
    table = format_table(summary)
    assert "n/a" in table and f"bias, variance n/a for reversed-a: {HOLDOUT_NOTE}" in table
    report = report_from_frames(load_results(root, with_trace=True), summary, tmp_path / "report",
                                overrides={"figures": False}, log=lambda msg: None)
    index = (report.out / "index.md").read_text()
    wdl = index[index.index("## Win-draw-loss tables"):index.index("## Geometric means")]
    assert f"Bias and variance of reversed-a: {HOLDOUT_NOTE}" in wdl
    again = run_experiment(specs.resolve(["reversed-a"]), [NB, TAN], **run)  # a rerun resumes: nothing to do
    assert (again["skipped"], again["ok"]) == (2, 0)


def test_holdout_and_cv_task_keys_never_collide_and_cv_keys_are_unchanged():
    spec = specs.resolve(["sklearn-iris"])[0]
    cv = Task(spec, NB, 0, 0, Protocol(0, 5, 2)).key
    holdout = Task(spec, NB, 0, 0, Protocol(0, 1, 1, "holdout")).key
    assert cv != holdout
    assert holdout == Task(spec, NB, 0, 0, Protocol(7, 1, 1, "holdout")).key  # the seed does not change the split
    assert cv == task_key({"dataset": spec, "dataset_id": specs.spec_fingerprint(spec), "model": NB.params,
                           "seed": 0, "folds": 2, "round": 0, "fold": 0, "version": RECORD_VERSION})


def test_holdout_on_a_dataset_without_a_given_split_is_one_error_line(tmp_path, capsys):
    with pytest.raises(BNCBenchError, match=r"dataset 'sklearn-iris' has no given train/test split, so the "
                                            r"holdout protocol \(cv.mode=holdout\) cannot evaluate it; "
                                            r"datasets with one: mnist, mnist14, usps"):
        plan(["dataset.names=[sklearn-iris]", "cv.mode=holdout"])
    assert bncbench_main(["run", "dataset.names=[sklearn-iris]", "cv.mode=holdout", f"results_dir={tmp_path}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "no given train/test split" in err, err
    assert not any(tmp_path.iterdir())  # nothing written
    spec = specs.resolve(["sklearn-iris"])[0]  # a task on its own fails as a record, with the same reason
    rec = evaluate_task(Task(spec, NB, 0, 0, Protocol(0, 1, 1, "holdout")))
    assert rec.status == "failed" and "no given train/test split" in rec.error


def test_protocol_mode_is_typed_config():
    cfg = compose_config(["+experiment=digits_smoke"])
    assert cfg.cv.mode.value == "holdout" and list(cfg.dataset.names) == ["usps"]
    assert compose_config([]).cv.mode.value == "cv"
    with pytest.raises(BNCBenchError, match=r"Invalid value 'holdot', expected one of \[cv, holdout\]"):
        compose_config(["cv.mode=holdot"])
    with pytest.raises(BNCBenchError, match="unknown protocol mode 'loo'"):
        Protocol(mode="loo")
    with pytest.raises(BNCBenchError, match="one round of one fold"):
        Protocol(0, 5, 2, "holdout")


@pytest.mark.data
def test_holdout_on_the_real_usps_split(tmp_path):
    try:
        d = entry_dir(load_registry()["usps"])
    except BNCBenchError as exc:
        pytest.skip(f"the digits directory is unknown: {exc}")
    if not d.is_dir():
        pytest.skip(f"the digits directory {d} is absent (set BNCBENCH_DIGITS_DIR)")
    run_experiment(specs.resolve(["usps"]), [NB], results_root=tmp_path, protocol=Protocol(0, 1, 1, "holdout"),
                   progress=False)
    df = load_results(tmp_path)
    assert len(df) == 1 and (df["status"] == "ok").all(), df.get("error")
    assert (int(df["n_train"].iloc[0]), int(df["n_test"].iloc[0])) == (7291, 2007)
    np.testing.assert_array_equal(load_predictions(df["path"].iloc[0])["test_index"], np.arange(7291, 9298))
    assert 0.05 < float(df["zero_one"].iloc[0]) < 0.25
