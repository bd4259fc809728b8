"""Runner and results store: determinism, resume after SIGKILL, failures, atomic records."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import REPO, run_cli

from bncbench.data import specs
from bncbench.errors import BNCBenchError
from bncbench.harness.model_specs import ModelSpec
from bncbench.harness.protocol import TIME_METRICS
from bncbench.harness.runner import Protocol, evaluate, run_experiment
from bncbench.harness.store import load_predictions, load_results, record_files
from bncbench.report.summary import summarize

TIMING = {*TIME_METRICS, "path", "trace"}


def _comparable(root):
    df = load_results(root).drop(columns=[c for c in TIMING if c in load_results(root)])
    return df.sort_values(["dataset", "model", "round", "fold"]).reset_index(drop=True)


def _run(root, models=None, datasets=("synth-nb", "sklearn-iris"), rounds=2, n_jobs=1):
    models = models or [ModelSpec("NB", {"structure": "nb"}), ModelSpec("KDB-1", {"structure": "kdb", "k": 1})]
    return run_experiment(specs.resolve(list(datasets)), models, results_root=root,
                          protocol=Protocol(seed=3, rounds=rounds, folds=2), n_jobs=n_jobs, progress=False)


def test_two_runs_give_identical_records(tmp_path):
    c1 = _run(tmp_path / "a")
    c2 = _run(tmp_path / "b", n_jobs=2)
    assert c1 == c2
    assert {k: c1[k] for k in ("total", "skipped", "ok", "failed")} == {"total": 16, "skipped": 0, "ok": 16, "failed": 0}
    assert len(c1["keys"]) == 16
    a, b = _comparable(tmp_path / "a"), _comparable(tmp_path / "b")
    assert len(a) == 16
    assert a.equals(b)
    for pa, pb in zip(sorted(record_files(tmp_path / "a")), sorted(record_files(tmp_path / "b"))):
        xa, xb = load_predictions(pa), load_predictions(pb)
        for k in xa:
            np.testing.assert_array_equal(xa[k], xb[k])


def test_rerun_skips_completed_tasks(tmp_path):
    _run(tmp_path)
    mtimes = {p: p.stat().st_mtime_ns for p in record_files(tmp_path)}
    counts = _run(tmp_path)
    assert {k: counts[k] for k in ("total", "skipped", "ok", "failed")} == {"total": 16, "skipped": 16, "ok": 0, "failed": 0}
    assert {p: p.stat().st_mtime_ns for p in record_files(tmp_path)} == mtimes


def test_a_failing_task_is_recorded_and_the_sweep_goes_on(tmp_path):
    models = [ModelSpec("NB", {"structure": "nb"}), ModelSpec("bad", {"structure": "custom", "parents": [[0]]})]  # wrong length
    counts = _run(tmp_path, models=models, datasets=("synth-nb",))
    assert counts["ok"] == 4 and counts["failed"] == 4
    df = load_results(tmp_path)
    bad = df[df["model"] == "bad"]
    assert (bad["status"] == "failed").all()
    assert bad["error"].str.contains("parent list per attribute").all()
    s = summarize(tmp_path)
    assert s.set_index("model").loc["bad", "n_failed"] == 4
    assert s.set_index("model").loc["NB", "n_ok"] == 4


def test_summary_bias_plus_variance_is_the_mean_error(tmp_path):
    _run(tmp_path, rounds=3)
    s = summarize(tmp_path)
    np.testing.assert_allclose(s["bias"] + s["variance"], s["zero_one"], atol=1e-12)
    np.testing.assert_allclose(s["kw_error"], s["zero_one"], atol=1e-12)
    # the fold standard deviations a summary.csv carries for another report's --supplement
    df = load_results(tmp_path)
    for m in ("zero_one", "rmse", "train_time"):
        want = df.groupby(["dataset", "model"], sort=False)[m].apply(lambda v: np.sqrt(((v - v.mean()) ** 2).sum()
                                                                                        / (len(v) - 1)))
        np.testing.assert_allclose(s[f"{m}_std"], want.to_numpy(), rtol=1e-12)


def test_models_see_identical_splits(tmp_path):
    _run(tmp_path, datasets=("synth-tree",))
    df = load_results(tmp_path)
    for (r, f), g in df.groupby(["round", "fold"]):
        idx = [load_predictions(p)["test_index"] for p in g["path"]]
        assert len(idx) == 2
        np.testing.assert_array_equal(idx[0], idx[1])
    # the two folds of a round partition the data
    r0 = df[df["round"] == 0]
    both = np.concatenate([load_predictions(p)["test_index"] for p in r0[r0["model"] == "NB"]["path"]])
    np.testing.assert_array_equal(np.sort(both), np.arange(int(df["n_instances"].iloc[0])))


def test_evaluate_helper():
    a = evaluate("synth-tree", {"structure": "nb"}, rounds=2)
    assert len(a) == 4 and (a["status"] == "ok").all()
    assert (a["n_train"] + a["n_test"] == 2000).all()
    assert a["zero_one"].between(0, 0.2).all()


RUN_ARGS = ["run", "+experiment=quickstart", "dataset.names=[synth-nb,synth-tree,sklearn-wine]",
            "cv.rounds=3", "n_jobs=2", "progress=false"]


@pytest.mark.slow
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path):
    ref = run_cli([*RUN_ARGS, f"results_dir={tmp_path / 'ref'}"], cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr
    total = len(record_files(tmp_path / "ref" / "quickstart"))
    assert total == 3 * 3 * 3 * 2

    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.Popen([sys.executable, "-m", "bncbench", *RUN_ARGS, f"results_dir={tmp_path / 'k'}"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    root = tmp_path / "k" / "quickstart"
    deadline = time.time() + 120
    while time.time() < deadline and len(record_files(root)) < 5:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = record_files(root)
    assert 5 <= len(partial) < total, "the sweep was not interrupted mid-way"
    for p in partial:  # every record that exists is complete
        assert json.loads(p.read_text())["status"] == "ok"
        assert p.with_suffix(".npz").exists()

    again = run_cli([*RUN_ARGS, f"results_dir={tmp_path / 'k'}"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"{len(partial)} already done" in again.stdout
    assert len(record_files(root)) == total
    assert not list(root.glob("records/**/.tmp-*"))
    assert _comparable(root).equals(_comparable(tmp_path / "ref" / "quickstart"))


def test_random_forest_baseline_runs_on_the_same_folds(tmp_path):
    models = [ModelSpec("RF", {"model": "random_forest", "n_estimators": 20}), ModelSpec("NB", {"structure": "nb"})]
    counts = _run(tmp_path, models=models, datasets=("synth-tree",))
    assert counts["ok"] == 8
    df = load_results(tmp_path)
    for (r, f), g in df.groupby(["round", "fold"]):
        a, b = (load_predictions(p)["test_index"] for p in g["path"])
        np.testing.assert_array_equal(a, b)
    assert df[df["model"] == "RF"]["zero_one"].mean() < 0.2


def test_another_configuration_under_the_same_label_is_refused(tmp_path):
    from bncbench.errors import BNCBenchError

    from bncbench.harness.app import plan

    (first,) = plan(["structure=nb", "estimator.m=1.0", "dataset.names=[synth-nb]"]).models
    _run(tmp_path, models=[first], datasets=("synth-nb",))
    before = sorted(record_files(tmp_path))
    with pytest.raises(BNCBenchError, match="different configuration"):
        _run(tmp_path, models=[ModelSpec("NB", {"structure": "nb", "m": 20.0})], datasets=("synth-nb",))
    assert sorted(record_files(tmp_path)) == before
    # the same configuration is recognised, whatever the spelling of its numbers
    (spec,) = plan(["structure=nb", "estimator.m=1", "dataset.names=[synth-nb]"]).models
    assert spec == first
    counts = _run(tmp_path, models=[spec], datasets=("synth-nb",))
    assert counts["skipped"] == counts["total"] == 4
    with pytest.raises(BNCBenchError, match="same directory"):
        _run(tmp_path / "x", models=[ModelSpec("A (I)", {"structure": "nb"}), ModelSpec("A [I]", {"structure": "tan"})])


def test_summary_refuses_mixed_records_and_needs_every_round(tmp_path):
    import shutil

    from bncbench.errors import BNCBenchError

    _run(tmp_path / "a", models=[ModelSpec("NB", {"structure": "nb"})], datasets=("synth-nb",), rounds=3)
    s = summarize(tmp_path / "a")
    assert np.isfinite(s["bias"]).all()
    # a round with no successful fold: bias/variance cannot be estimated from the others
    for p in record_files(tmp_path / "a"):
        if p.name.startswith("r1"):
            rec = json.loads(p.read_text())
            rec["status"] = "failed"
            p.write_text(json.dumps(rec))
    assert np.isnan(summarize(tmp_path / "a")["bias"]).all()
    # records of two configurations under one label are never averaged
    _run(tmp_path / "b", models=[ModelSpec("NB", {"structure": "nb", "m": 5.0})], datasets=("synth-nb",), rounds=3)
    for p in record_files(tmp_path / "b"):
        dest = tmp_path / "a" / p.relative_to(tmp_path / "b")
        shutil.copy(p, dest)
        shutil.copy(p.with_suffix(".npz"), dest.with_suffix(".npz"))
    with pytest.raises(BNCBenchError, match="share the label"):
        summarize(tmp_path / "a")


def test_a_failed_task_makes_the_command_exit_1(tmp_path):
    res = run_cli(["run", "structure.name=custom", "+structure.parents=[[0]]", "dataset.names=[synth-nb]",
                   "cv.rounds=1", "progress=false", f"results_dir={tmp_path}"], cwd=tmp_path)
    # a parent list of the wrong length is only seen when the data is: every task fails, the run goes on
    assert res.returncode == 1, res.stdout + res.stderr
    assert "failed" in res.stdout


def test_stale_temp_files_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    import socket

    from bncbench.harness.store import ResultStore

    d = tmp_path / "records" / "ds" / "m"
    d.mkdir(parents=True)
    host = socket.gethostname()
    dead = d / f".tmp-{host}-999999999-abc"
    live = d / f".tmp-{host}-{os.getpid()}-abc"
    other = d / ".tmp-otherhost-1-abc"
    for p in (dead, live, other):
        p.write_text("x")
    assert ResultStore(tmp_path).clean_temp() == 1
    assert not dead.exists() and live.exists() and other.exists()


def test_progress_is_logged_without_a_terminal(tmp_path, capsys, monkeypatch):
    """No TTY (pytest captures stderr): tqdm is silent, one progress line a minute and a final one."""
    from bncbench.harness import runner

    clock = iter(float(60 * i) for i in range(1000))  # every task "takes" a minute
    monkeypatch.setattr(runner, "_clock", lambda: next(clock))
    run_experiment(specs.resolve(["synth-nb"]), [ModelSpec("NB", {"structure": "nb"})], results_root=tmp_path,
                   protocol=Protocol(seed=0, rounds=2, folds=2), progress=None)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("tasks:")]
    assert len(lines) == 4
    assert lines[0] == "tasks: 1/4 (25.0 %), 0 failed, elapsed 0:01:00, ETA 0:03:00"
    assert lines[-1] == "tasks: 4/4 (100.0 %), 0 failed, elapsed 0:04:00, ETA 0:00:00"
    run_experiment(specs.resolve(["synth-nb"]), [ModelSpec("KDB-1", {"structure": "kdb", "k": 1})],
                   results_root=tmp_path, protocol=Protocol(seed=0, rounds=2, folds=2), progress=False)
    assert "tasks:" not in capsys.readouterr().err  # progress=False: silent
    # the fits of the tasks say how far they are at the same rate (here: at every iteration)
    real = runner._ProgressLog
    monkeypatch.setattr(runner, "_ProgressLog", lambda total, every: real(total, every=0.0))
    run_experiment(specs.resolve(["synth-nb"]), [ModelSpec("NB^w", {"structure": "nb", "param": "weighted"})],
                   results_root=tmp_path, protocol=Protocol(seed=0, rounds=2, folds=2), progress=None)
    err = capsys.readouterr().err.splitlines()
    for r, f in ((0, 0), (0, 1), (1, 0), (1, 1)):
        assert f"synth-nb / NB^w r{r}f{f}: iteration 0, objective " in "\n".join(err)
    assert len([ln for ln in err if ln.startswith("synth-nb / NB^w r")]) > 4 * 3  # several per fit


def test_progress_log_is_rate_limited(capsys, monkeypatch):
    from bncbench.harness import runner

    t = iter([0.0, 10.0, 20.0, 70.0, 80.0, 90.0])  # start, then one reading per task
    monkeypatch.setattr(runner, "_clock", lambda: next(t))
    log = runner._ProgressLog(5, every=60.0)
    for _ in range(5):
        log.update(failed=1)
    err = capsys.readouterr().err.splitlines()
    assert err == ["tasks: 3/5 (60.0 %), 1 failed, elapsed 0:01:10, ETA 0:00:47",
                   "tasks: 5/5 (100.0 %), 1 failed, elapsed 0:01:30, ETA 0:00:00"]


def test_the_eta_counts_a_resumed_task_by_the_part_run_here(capsys, monkeypatch):
    """A task nine tenths done from a checkpoint ends after 10 minutes: a task's work takes 100 minutes here,
    so the 4 tasks left are 6 h 40 (not 40 minutes); a fresh one ending 100 minutes later keeps that rate. A task
    resumed at its last iteration counts as no work, one that did not resume as a whole task."""
    from bncbench.harness import runner
    from bncbench.harness.store import TaskRecord

    t = iter([0.0, 600.0, 6600.0])
    monkeypatch.setattr(runner, "_clock", lambda: next(t))
    log = runner._ProgressLog(5, every=0.0)
    rec = TaskRecord(dataset="d", model="m", round=0, fold=0, seed=0, n_folds=2, n_rounds=1, key="k",
                     model_params={}, status="ok", n_iter=1000, resumed=[100, 900])
    log.update(0, runner._done_before(rec))
    log.update(0, 0.0)
    assert capsys.readouterr().err.splitlines() == [
        "tasks: 1/5 (20.0 %), 0 failed, elapsed 0:10:00, ETA 6:40:00",
        "tasks: 2/5 (40.0 %), 0 failed, elapsed 1:50:00, ETA 5:00:00"]
    assert runner._done_before(TaskRecord(dataset="d", model="m", round=0, fold=0, seed=0, n_folds=2, n_rounds=1,
                                          key="k", model_params={}, status="ok", n_iter=50, resumed=[50])) == 1.0
    fresh = TaskRecord(dataset="d", model="m", round=0, fold=0, seed=0, n_folds=2, n_rounds=1, key="k",
                       model_params={}, status="ok", n_iter=50)
    assert runner._done_before(fresh) == 0.0


def test_only_selects_models_of_the_grid_by_label_with_the_same_keys():
    from bncbench.harness.app import plan
    from bncbench.errors import BNCBenchError
    from bncbench.harness.runner import Task

    base = ["+experiment=zaidi_dbl", "dataset.names=[synth-nb]"]
    full = plan(base)
    part = plan(base + ["only=[RF,A2JE]"])
    assert [m.label for m in part.models] == ["A2JE", "RF"]  # the grid's order, not the list's
    by_label = {m.label: m for m in full.models}
    for m in part.models:
        assert m == by_label[m.label]
        t1 = Task(full.datasets[0], m, 0, 0, full.protocol, None)
        t2 = Task(part.datasets[0], by_label[m.label], 0, 0, part.protocol, None)
        assert t1.key == t2.key
    with pytest.raises(BNCBenchError, match=r"unknown model label\(s\) \['DBL9'\].*'DBL3'"):
        plan(base + ["only=[DBL2,DBL9]"])
    with pytest.raises(BNCBenchError, match="empty list"):
        plan(base + ["only=[]"])


def test_the_first_task_of_a_model_in_a_process_is_warmed_up_untimed_once(monkeypatch, tmp_path, recorded_fits):
    import bncbench.harness.runner as runner

    nb, tan = ModelSpec("NB", {"structure": "nb"}), ModelSpec("TAN", {"structure": "tan"})
    _run(tmp_path, models=[nb, tan], datasets=("synth-nb",), rounds=2)
    fits = [(params["structure"], len(y)) for params, _, y in recorded_fits]
    n_train = [n for s, n in fits if n != runner.WARM_UP_ROWS]
    warm = [s for s, n in fits if n == runner.WARM_UP_ROWS]
    assert sorted(warm) == ["nb", "tan"]          # once per model and process, on 64 rows
    assert len(n_train) == 2 * 2 * 2              # every task's own fit, on its training fold
    assert fits[0] == ("nb", runner.WARM_UP_ROWS) and fits[1][0] == "nb" and fits[1][1] != runner.WARM_UP_ROWS
    # the warm-up changes nothing in the records: with both models already warm, the same results
    monkeypatch.setattr(runner, "_WARM", {json.dumps(m.params, sort_keys=True, default=str) for m in (nb, tan)})
    _run(tmp_path / "again", models=[nb, tan], datasets=("synth-nb",), rounds=2)
    a, b = load_results(tmp_path), load_results(tmp_path / "again")
    np.testing.assert_array_equal(a.sort_values(["model", "round", "fold"])["zero_one"].to_numpy(),
                                  b.sort_values(["model", "round", "fold"])["zero_one"].to_numpy())


def test_cpu_seconds_count_the_work_of_a_fit_not_its_waiting(monkeypatch, tmp_path):
    """``train_cpu`` / ``test_cpu``: the process's CPU seconds of the fit and the prediction, beside their wall
    times; a fit that computes for 0.2 s and then waits (sleeps, as a stopped or descheduled process does) for
    0.3 s has about 0.2 CPU seconds and 0.5 wall seconds. Summaries average them like the wall times."""
    import bncbench.harness.model_specs as model_specs
    import bncbench.harness.runner as runner

    real = model_specs.make_estimator

    def busy(seconds):
        c = time.process_time()
        while time.process_time() - c < seconds:
            pass

    def slow(params, cards):
        clf = real(params, cards)
        fit, proba = clf.fit, clf.predict_proba

        def slow_fit(X, y):
            busy(0.2)
            time.sleep(0.3)
            return fit(X, y)

        def slow_proba(X):
            time.sleep(0.2)
            return proba(X)

        clf.fit, clf.predict_proba = slow_fit, slow_proba
        return clf

    monkeypatch.setattr(model_specs, "make_estimator", slow)
    monkeypatch.setattr(runner, "_WARM", set())
    _run(tmp_path, models=[ModelSpec("NB", {"structure": "nb"})], datasets=("synth-nb",), rounds=2)
    df = load_results(tmp_path)
    assert len(df) == 4
    assert (df["train_time"] >= 0.5).all() and (df["train_cpu"] >= 0.2).all() and (df["train_cpu"] < 0.45).all()
    assert (df["test_time"] >= 0.2).all() and (df["test_cpu"] < 0.1).all()
    s = summarize(load_results(tmp_path))
    assert s["train_cpu"].iloc[0] == pytest.approx(df["train_cpu"].mean())
    assert s["train_cpu_std"].iloc[0] == pytest.approx(df["train_cpu"].std())


def test_a_summary_metric_some_fold_lacks_is_unknown_and_absent_metrics_add_no_column(tmp_path):
    """Records written before ``train_cpu`` existed: no such column in their summary; a model with it on some
    folds only has none (NaN), not the mean of the other folds."""
    _run(tmp_path, models=[ModelSpec("NB", {"structure": "nb"})], datasets=("synth-nb",), rounds=2)
    df = load_results(tmp_path)
    assert "train_cpu" in summarize(df)
    old = df.drop(columns=["train_cpu", "test_cpu"])
    assert not {"train_cpu", "train_cpu_std", "test_cpu"} & set(summarize(old))
    some = df.assign(train_cpu=[1.0, np.nan, 2.0, 3.0])
    assert np.isnan(summarize(some)["train_cpu"].iloc[0]) and summarize(some)["zero_one"].notna().all()
    from bncbench.report.stats import metric_matrix

    with pytest.raises(BNCBenchError, match=r"'train_cpu' is not in the results .* have zero_one, rmse"):
        metric_matrix(summarize(old), "train_cpu")


def _tiny_registry(tmp_path, **fields):
    """A registry of one small ARFF dataset ``tiny`` (its data directory, registry file)."""
    import yaml

    from bncbench.data import uci

    ddir = tmp_path / "data"
    ddir.mkdir(exist_ok=True)
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 40)
    a = np.where(rng.random(40) < 0.8, y, 1 - y)
    f = ddir / "tiny.arff"
    f.write_text("@relation tiny\n@attribute a {0,1}\n@attribute c {u,v}\n@data\n"
                 + "".join(f"{ai},{'uv'[yi]}\n" for ai, yi in zip(a, y)))
    entry = {"file": "tiny.arff", "format": "arff", "class_column": "c",
             "expected": {"rows": 40, "attributes": 1, "classes": 2},
             "bytes": f.stat().st_size, "sha256": uci.sha256_file(f), **fields}
    reg = tmp_path / "registry.yaml"
    reg.write_text(yaml.safe_dump({"datasets": {"tiny": entry}}, sort_keys=False))
    return ddir, reg


def test_registry_prose_stays_out_of_task_keys_and_old_keys_are_migrated(tmp_path, monkeypatch, capsys):
    from bncbench.harness.runner import Task

    ddir, reg = _tiny_registry(tmp_path, provenance={"source": "hand-made"}, differences=["none"])
    monkeypatch.setenv("BNCBENCH_REGISTRY", str(reg))
    nb = ModelSpec("NB", {"structure": "nb"})

    def run():
        specs._fingerprint.cache_clear()  # computed once per spec and process
        return run_experiment(specs.resolve(["tiny"]), [nb], results_root=tmp_path / "res", data_dir=str(ddir),
                              protocol=Protocol(seed=0, rounds=1, folds=2), progress=False)

    keys = run()["keys"]
    records = {p.name: json.loads(p.read_text()) for p in record_files(tmp_path / "res")}
    assert len(records) == 2 and {r["key"] for r in records.values()} == keys

    # prose and paper notes are not part of the data: same keys, nothing runs again
    ddir, reg = _tiny_registry(tmp_path, provenance={"source": "edited"}, differences=["a new note"],
                               paper={"zaidi2017": None}, url="https://example.org/tiny.arff")
    counts = run()
    assert counts["keys"] == keys and counts["skipped"] == 2
    # a parse option is: another configuration under the same label
    ddir, reg = _tiny_registry(tmp_path, missing_class="drop")
    specs._fingerprint.cache_clear()
    task = Task(specs.resolve(["tiny"])[0], nb, 0, 0, Protocol(seed=0, rounds=1, folds=2), str(ddir))
    assert task.key not in keys

    # a store written when the whole entry was hashed: its records move to the new keys, nothing reruns
    ddir, reg = _tiny_registry(tmp_path, provenance={"source": "hand-made"}, differences=["none"])
    specs._fingerprint.cache_clear()
    for p in record_files(tmp_path / "res"):
        rec = json.loads(p.read_text())
        t = Task(specs.resolve(["tiny"])[0], nb, rec["round"], rec["fold"], Protocol(seed=0, rounds=1, folds=2))
        assert t.key == rec["key"] and t.legacy_key not in (None, t.key)
        old = p.with_name(f"r{rec['round']}f{rec['fold']}-{t.legacy_key}.json")
        p.with_suffix(".npz").rename(old.with_suffix(".npz"))
        old.write_text(json.dumps({**rec, "key": t.legacy_key}))
        p.unlink()
    # a dry run counts them as done where they are and moves nothing
    from bncbench.harness.runner import pending_tasks

    legacy = sorted(p.name for p in record_files(tmp_path / "res"))
    assert not set(legacy) & set(records)
    tasks, pending = pending_tasks(specs.resolve(["tiny"]), [nb], results_root=tmp_path / "res",
                                   protocol=Protocol(seed=0, rounds=1, folds=2), data_dir=str(ddir), move=False)
    assert len(tasks) == 2 and pending == []
    assert sorted(p.name for p in record_files(tmp_path / "res")) == legacy
    capsys.readouterr()
    counts = run()
    assert counts["skipped"] == 2 and counts["ok"] == 0
    assert "re-keyed 2 stored record(s)" in capsys.readouterr().err
    after = {p.name: json.loads(p.read_text()) for p in record_files(tmp_path / "res")}
    assert after == records  # same names, same contents (the key field included)
    assert all(load_predictions(p)["proba"].shape == (20, 2) for p in record_files(tmp_path / "res"))
    assert len(list((tmp_path / "res").glob("records/*/*/*.npz"))) == 2


def test_rekey_after_a_kill_at_any_step(tmp_path):
    from bncbench.harness.store import ResultStore

    store = ResultStore(tmp_path)
    old, new = store.record_path("d", "m", 0, 0, "old"), store.record_path("d", "m", 0, 0, "new")
    store.write(old, {"key": "old", "status": "ok"}, {"proba": np.eye(2)})
    assert not store.rekey(store.record_path("d", "m", 0, 1, "old"), new, "new")  # nothing there
    old.with_suffix(".npz").rename(new.with_suffix(".npz"))  # killed after moving the predictions
    assert store.rekey(old, new, "new") and not old.exists()
    assert json.loads(new.read_text())["key"] == "new" and load_predictions(new)["proba"].shape == (2, 2)
    store.write(old, {"key": "old", "status": "ok"}, {"proba": np.eye(2)})  # killed before removing the old JSON
    assert store.rekey(old, new, "new")
    assert sorted(p.name for p in old.parent.iterdir()) == ["r0f0-new.json", "r0f0-new.npz"]


def test_records_name_their_environment_which_stays_out_of_the_key(tmp_path):
    import numba
    import scipy

    from bncbench import __version__
    from bncbench.harness.provenance import KEYS

    _run(tmp_path, datasets=("synth-nb",), rounds=1)
    df = load_results(tmp_path)
    assert (df["env.numpy"] == np.__version__).all() and (df["env.scipy"] == scipy.__version__).all()
    assert (df["env.numba"] == numba.__version__).all() and (df["env.bncbench"] == __version__).all()
    if (REPO / ".git").exists():
        git = lambda *a: subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True).stdout.strip()  # noqa: E731
        dirty = "-dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
        assert (df["env.commit"] == git("rev-parse", "HEAD") + dirty).all()
    # the report names every key a record has (provenance.KEYS)
    assert {c[4:] for c in df if c.startswith("env.")} <= set(KEYS) and {"python", "cpu", "machine"} <= set(KEYS)
    # a record computed elsewhere (another numpy, another processor) is still this task's record
    for p in record_files(tmp_path):
        rec = json.loads(p.read_text())
        rec["environment"] = {**rec["environment"], "numpy": "0.0.0", "cpu": "elsewhere"}
        p.write_text(json.dumps(rec))
    counts = _run(tmp_path, datasets=("synth-nb",), rounds=1)
    assert counts["skipped"] == counts["total"] == 4 and counts["ok"] == 0
    assert set(load_results(tmp_path)["env.cpu"]) == {"elsewhere"}


@pytest.mark.parametrize("cause, recorded", [(KeyboardInterrupt, False), (ValueError, True)])
def test_an_interrupt_within_a_compiled_kernel_stops_the_task_unrecorded(monkeypatch, cause, recorded):
    """numba hands an interrupt (Ctrl-C, the CLI's SIGTERM) that comes while a kernel runs on as the
    cause of a SystemError; the task must stop, not be recorded as failed with that SystemError."""
    from bncbench.model.classifier import BNClassifier
    from bncbench.harness.runner import Task, evaluate_task

    def fit(self, X, y):
        try:
            raise cause()
        except BaseException as exc:
            raise SystemError("CPUDispatcher(<function _seen_rows>) returned a result with an exception set") \
                from exc

    monkeypatch.setattr(BNClassifier, "fit", fit)
    task = Task(specs.resolve(["synth-nb"])[0], ModelSpec("NB", {"structure": "nb"}), 0, 0,
                Protocol(seed=0, rounds=1, folds=2))
    if recorded:
        rec = evaluate_task(task)
        assert rec.status == "failed" and rec.error.startswith("SystemError: CPUDispatcher")
    else:
        with pytest.raises(KeyboardInterrupt):
            evaluate_task(task)


def test_experiment_task_and_task_inputs_are_the_runs_own(tmp_path):
    """The task ``experiment_task`` plans has the key of the CLI's run, and fitting ``task_inputs``' model on
    its training rows gives the stored record's predictions, bit for bit."""
    from bncbench.harness.app import experiment_task
    from bncbench.harness.runner import task_inputs

    assert run_cli(["run", "+experiment=quickstart", "dataset.names=[synth-nb]", "n_jobs=1",
                    f"results_dir={tmp_path}"], cwd=tmp_path).returncode == 0
    task = experiment_task("quickstart", "synth-nb", "TAN", round=1, fold=1)
    (path,) = [p for p in record_files(tmp_path / "quickstart") if task.key in p.name and "/TAN/" in str(p)]
    inputs = task_inputs(task)
    proba = inputs.estimator.fit(*inputs.training).predict_proba(inputs.testing[0])
    stored = load_predictions(path)
    np.testing.assert_array_equal(stored["test_index"], inputs.test)
    np.testing.assert_array_equal(stored["proba"], proba.astype(np.float32))
    with pytest.raises(BNCBenchError, match="2 fold"):
        experiment_task("quickstart", "synth-nb", "TAN", fold=2)
    with pytest.raises(BNCBenchError, match="unknown model label"):
        experiment_task("quickstart", "synth-nb", "TAN-9")
