"""A task that kills its process must not loop a sweep: running markers, deaths counted, a limit.

The sweeps run in child processes (a real ``SIGKILL`` of the process evaluating one task); the
interrupt, progress and store cases run here.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bncbench.data import specs
from bncbench.harness import runner
from bncbench.harness.model_specs import ModelSpec
from bncbench.harness.runner import MAX_CRASHES, Protocol, Task, crash_count, run_task
from bncbench.harness.store import ResultStore, read_marker, record_files, write_marker

REPO = Path(__file__).resolve().parents[1]
MODELS = [ModelSpec("NB", {"structure": "nb"}), ModelSpec("TAN", {"structure": "tan"})]
PROTOCOL = Protocol(seed=0, rounds=1, folds=2)

# The evaluation of TAN r0f0, the victim, appends a line to a file and then, with CRASH_MODE=kill, kills
# its own process with SIGKILL (as the out-of-memory killer would), after CRASH_DELAY seconds; NB r0f0
# sleeps CRASH_SLEEP seconds first. A sitecustomize module, so that joblib's worker processes have it too.
PATCH = """
import os
if os.environ.get("CRASH_MODE"):
    import signal, time
    from bncbench.harness import runner

    real = runner.evaluate_task

    def evaluate(task):
        if task.fold == 0 and task.model.label == "NB":
            time.sleep(float(os.environ["CRASH_SLEEP"]))
        if task.fold == 0 and task.model.label == "TAN":
            with open(os.environ["CRASH_CALLS"], "a") as fh:
                fh.write("ran\\n")
            if os.environ["CRASH_MODE"] == "kill":
                time.sleep(float(os.environ["CRASH_DELAY"]))
                os.kill(os.getpid(), signal.SIGKILL)
        return real(task)

    runner.evaluate_task = evaluate
"""
# A sweep of NB and TAN on iris: 1 round x 2 folds, 4 tasks, in this order: f0 NB, f0 TAN, f1 NB, f1 TAN.
SWEEP = """
import json, sys
from bncbench.data import specs
from bncbench.harness import runner
from bncbench.harness.model_specs import ModelSpec

root, limit, n_jobs = sys.argv[1:4]
counts = runner.run_experiment(specs.resolve(["sklearn-iris"]),
                               [ModelSpec("NB", {"structure": "nb"}), ModelSpec("TAN", {"structure": "tan"})],
                               results_root=root, protocol=runner.Protocol(seed=0, rounds=1, folds=2),
                               progress=False, max_crashes=None if limit == "none" else int(limit),
                               n_jobs=int(n_jobs))
print(json.dumps({k: v for k, v in counts.items() if k != "keys"}))
"""


def _sweep(tmp_path, mode, limit=MAX_CRASHES, n_jobs=1, sleep=0.0, delay=0.0):
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(PATCH)
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP)
    env = dict(os.environ, PYTHONPATH=f"{REPO}{os.pathsep}{site}", MPLBACKEND="Agg", CRASH_MODE=mode,
               CRASH_CALLS=str(tmp_path / "calls"), CRASH_SLEEP=str(sleep), CRASH_DELAY=str(delay))
    return subprocess.run([sys.executable, str(script), str(tmp_path / "res"), str(limit), str(n_jobs)], env=env,
                          capture_output=True, text=True, timeout=120)


def _calls(tmp_path):
    path = tmp_path / "calls"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _victim(root):
    task = Task(specs.resolve(["sklearn-iris"])[0], MODELS[1], 0, 0, PROTOCOL)
    where = (task.dataset["name"], task.model.label, task.round, task.fold, task.key)
    return task, ResultStore(root).running_path(*where), ResultStore(root).record_path(*where)


def _records(root):
    return {(r["model"], r["fold"]): r for r in (json.loads(p.read_text()) for p in record_files(root))}


def test_a_task_that_kills_its_process_is_recorded_failed_after_max_crashes_deaths(tmp_path):
    root = tmp_path / "res"
    _, marker, record = _victim(root)
    for death in range(MAX_CRASHES):  # each run dies in the victim: the sweep stops there, its marker stays
        res = _sweep(tmp_path, "kill")
        assert res.returncode == -signal.SIGKILL, res.stderr
        assert _calls(tmp_path) == death + 1
        assert sorted(p.name for p in root.rglob("*.running")) == [marker.name]  # that task's only
        got = read_marker(marker)
        assert got["deaths"] == death and got["progress"] == 0 and got["pid"] > 0 and got["host"]
        assert not record.exists()
    assert set(_records(root)) == {("NB", 0)}  # the task before the victim; none after it ran
    assert "died (death 1 in a row without progress" in res.stderr

    res = _sweep(tmp_path, "kill")  # the limit: the victim is recorded failed unrun, the sweep finishes
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == {"total": 4, "skipped": 1, "ok": 2, "failed": 1}
    assert _calls(tmp_path) == MAX_CRASHES
    recs = _records(root)
    assert {k: r["status"] for k, r in recs.items()} == {("NB", 0): "ok", ("TAN", 0): "failed", ("NB", 1): "ok",
                                                         ("TAN", 1): "ok"}
    error = recs["TAN", 0]["error"]
    assert error.startswith(f"the process running this task died {MAX_CRASHES} times in a row without progress "
                            "(segfault, out-of-memory kill or SIGKILL; last start ")
    assert error.endswith(f"; to try again, remove {marker} or raise max_crashes")
    assert f"pid {got['pid']}" in error and got["started"] in error and f"on {got['host']}" in error
    assert marker.exists()  # kept: the retry of failed tasks must not run it again

    # a dry run lists it, and says it would not be run
    from bncbench.harness.app import Plan, dry_run

    plan = Plan("res", root, specs.resolve(["sklearn-iris"]), MODELS, PROTOCOL, None, max_crashes=MAX_CRASHES)
    out = dry_run(plan)
    assert out.splitlines()[1].split() == ["sklearn-iris", "TAN", "1", "1", "0", "1", "2"]
    assert out.endswith(f"; 1 of them died max_crashes={MAX_CRASHES} times in a row and would be recorded failed "
                        f"unrun (remove their .running marker to try again, first {marker})")

    res = _sweep(tmp_path, "kill")  # retry of failed tasks (the default): recorded again, not executed
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == {"total": 4, "skipped": 3, "ok": 0, "failed": 1}
    assert _calls(tmp_path) == MAX_CRASHES and marker.exists()

    res = _sweep(tmp_path, "kill", limit=MAX_CRASHES + 1)  # a higher limit: one more attempt, which dies
    assert res.returncode == -signal.SIGKILL and _calls(tmp_path) == MAX_CRASHES + 1
    assert read_marker(marker)["deaths"] == MAX_CRASHES

    marker.unlink()  # the user's way to try again: it runs, and (mended) succeeds
    res = _sweep(tmp_path, "ok")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == {"total": 4, "skipped": 3, "ok": 1, "failed": 0}
    assert _calls(tmp_path) == MAX_CRASHES + 2
    assert _records(root)["TAN", 0]["status"] == "ok" and list(root.rglob("*.running")) == []


def test_with_joblib_workers_the_task_beside_a_crash_is_not_counted_into_the_limit(tmp_path):
    """joblib's pool kills every worker when one dies, so a task running beside a crash dies too and keeps
    its marker (seen with loky: both f0 tasks' markers stay when the victim dies beside NB r0f0). The next
    run runs each task whose process died alone: NB r0f0 ends ok, and only the victim's death is counted."""
    root = tmp_path / "res"
    task, marker, _ = _victim(root)
    store = ResultStore(root)
    nb = Task(task.dataset, MODELS[0], 0, 0, PROTOCOL)
    beside = store.running_path(nb.dataset["name"], "NB", 0, 0, nb.key)
    for path in (marker, beside):  # what the first death left
        write_marker(path, {"deaths": 0, "pid": 1, "host": "here", "started": "2026-01-01T00:00:00+00:00",
                            "progress": 0})
    res = _sweep(tmp_path, "kill", n_jobs=2, sleep=3.0, delay=0.5)  # together, NB r0f0 would be killed again
    assert res.returncode == 1 and "TerminatedWorkerError" in res.stderr, res.stderr
    assert [p.name for p in root.rglob("*.running")] == [marker.name] and read_marker(marker)["deaths"] == 1
    assert {k: r["status"] for k, r in _records(root).items()} == {("NB", 0): "ok"}
    assert _calls(tmp_path) == 1


@pytest.mark.parametrize("limit, expected", [
    (2, [["TAN0"], ["NB0", "NB1", "TAN1"]]),  # NB r0f0 progressed: in parallel with the unmarked
    (None, [["TAN0"], ["NB0", "NB1", "TAN1"]]),  # no limit: the same
    (1, [["NB0"], ["TAN0", "NB1", "TAN1"]]),  # one death is the limit: a progressed task still runs alone,
    # and TAN r0f0, at the limit, is recorded failed unrun in the group
])
def test_a_task_that_died_after_saving_a_checkpoint_runs_in_parallel(tmp_path, limit, expected):
    """The joblib grouping: a task that died without progress runs alone; one whose fit saved a later
    checkpoint before it died (a long fit killed at a session's end) runs with the others, unless one
    death beside it would reach the limit of the others."""
    store = ResultStore(tmp_path)
    tasks = [Task(specs.resolve(["sklearn-iris"])[0], m, 0, f, PROTOCOL) for f in (0, 1) for m in MODELS]
    dead = {"deaths": 0, "pid": 1, "host": "here", "started": "2026-01-01T00:00:00+00:00", "progress": 3}
    for t in tasks[:2]:
        write_marker(store.running_path(*t.where), dead)
    with open(store.running_path(*tasks[0].where).with_suffix(".fit0.npz"), "wb") as fh:  # NB r0f0 saved
        np.savez(fh, n_iter=np.array(7))  # iteration 7 since; TAN r0f0 nothing

    class Pool:
        shared_fate = True

    groups = runner._crash_groups(store, tasks, Pool(), limit)
    assert [[f"{t.model.label}{t.fold}" for t in g] for g in groups] == expected
    Pool.shared_fate = False  # workers that die alone (SLURM, Dask): one group, as planned
    assert runner._crash_groups(store, tasks, Pool(), limit) == [tasks]


def test_counting_deaths():
    assert crash_count(None, 0) == 0  # no marker: the last attempt ended as Python saw it
    assert crash_count({"deaths": 0, "progress": 0}, 0) == 1
    assert crash_count({"deaths": 1, "progress": 40}, 40) == 2  # died again where it was
    assert crash_count({"deaths": 5, "progress": 40}, 41) == 0  # it saved a later checkpoint: no crash loop
    assert crash_count({"deaths": 1, "progress": 40}, 0) == 2  # its checkpoint gone: no progress either
    assert crash_count({}, 0) == 1  # a marker that cannot be read is a death


def test_a_checkpoint_saved_since_the_death_resets_the_count(tmp_path):
    """A long fit killed at a session's end after checkpointing is no crash loop: it runs again."""
    task, marker, record = _victim(tmp_path)
    dead = {"deaths": MAX_CRASHES - 1, "pid": 1, "host": "node7", "started": "2026-01-01T00:00:00+00:00",
            "progress": 3}
    write_marker(marker, dead)
    fit0 = marker.with_suffix(".fit0.npz")  # beside the record to be, as the runner's checkpoints
    with open(fit0, "wb") as fh:  # what a later save of the killed fit would leave: iteration 7
        np.savez(fh, n_iter=np.array(7))
    assert run_task(task, tmp_path, checkpoint_every=None).status == "ok"
    assert not marker.exists()

    record.unlink()  # the same death without that progress: at the limit, recorded failed unrun
    fit0.unlink()
    write_marker(marker, {**dead, "progress": 7})
    rec = run_task(task, tmp_path, checkpoint_every=None)
    assert rec.status == "failed" and "died 2 times in a row" in rec.error and "on node7, pid 1" in rec.error
    assert read_marker(marker) == {**dead, "progress": 7}  # left as it was


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit, ValueError])
def test_an_interrupt_or_an_exception_leaves_no_marker(tmp_path, monkeypatch, stop):
    task, marker, record = _victim(tmp_path)
    seen = []

    def evaluate(t):
        seen.append(read_marker(marker))  # marked while it runs
        raise stop("stopped")

    monkeypatch.setattr(runner, "evaluate_task", evaluate)
    with pytest.raises(stop):
        run_task(task, tmp_path, checkpoint_every=None)
    assert seen[0]["deaths"] == 0 and seen[0]["pid"] == os.getpid()
    assert not marker.exists() and not record.exists()


def test_an_interrupted_run_does_not_count_the_tasks_it_stopped(tmp_path):
    """Ctrl-C of a run with workers: the executor kills them, their tasks' markers are this run's to remove."""
    store = ResultStore(tmp_path)
    tasks = [Task(specs.resolve(["sklearn-iris"])[0], m, 0, f, PROTOCOL) for m in MODELS for f in (0, 1)]
    paths = [store.running_path(t.dataset["name"], t.model.label, 0, t.fold, t.key) for t in tasks]
    write_marker(paths[0], {"deaths": 1, "started": "2026-01-01T00:00:00+00:00"})  # a death before this run
    since = runner._utc_now()
    for p in paths[1:]:
        write_marker(p, {"deaths": 0, "started": runner._utc_now()})
    runner._forget_stopped(store, tasks[:3], since)
    assert [p.exists() for p in paths] == [True, False, False, True]


def test_an_abandoned_worker_drops_the_markers_of_its_tasks(tmp_path):
    """A joblib worker whose run is gone exits through executor.abandon, which runs the runner's clean-up first."""
    from bncbench.executors import executor

    _, marker, _ = _victim(tmp_path)
    write_marker(marker, {"deaths": 0})
    run_task(_victim(tmp_path / "other")[0], tmp_path / "other", checkpoint_every=None)  # registers the clean-up
    assert runner._drop_running in executor._ON_ABANDON
    runner._RUNNING.add(marker)
    try:
        runner._drop_running()
    finally:
        runner._RUNNING.discard(marker)
    assert not marker.exists()


def test_sigterm_to_the_cli_leaves_no_marker(tmp_path):
    script = tmp_path / "cli.py"
    script.write_text(
        "import sys, time\n"
        "from bncbench.harness import runner\n"
        "def evaluate(task):\n"
        "    open(sys.argv[1], 'w').close()\n"
        "    time.sleep(60)\n"
        "runner.evaluate_task = evaluate\n"
        "from bncbench.__main__ import main\n"
        "sys.exit(main(sys.argv[2:]))\n")
    started = tmp_path / "started"
    env = dict(os.environ, PYTHONPATH=str(REPO), MPLBACKEND="Agg")
    proc = subprocess.Popen([sys.executable, str(script), str(started), "run", "dataset.names=[sklearn-iris]",
                             "cv.rounds=1", "progress=false", "name=t", f"results_dir={tmp_path}"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 90
        while not started.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert started.exists(), proc.communicate()[1]
        assert len(list(tmp_path.rglob("*.running"))) == 1  # marked while it runs
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert list(tmp_path.rglob("*.running")) == []


def test_the_store_keeps_markers_out_of_records_and_strays_and_moves_them_with_a_rekey(tmp_path):
    store = ResultStore(tmp_path)
    old = store.record_path("d", "M", 0, 1, "oldkey")
    new = store.record_path("d", "M", 0, 1, "newkey")
    store.write(old, {"status": "failed", "key": "oldkey"})
    write_marker(old.with_suffix(".running"), {"deaths": 1})
    assert store.clean_strays() == 0 and old.with_suffix(".running").exists()
    assert record_files(tmp_path) == [old] and store.conflicts("d", "M", 0, 1, "oldkey") == []
    assert store.rekey(old, new, "newkey")
    assert read_marker(store.running_path("d", "M", 0, 1, "newkey")) == {"deaths": 1}
    assert not old.with_suffix(".running").exists() and record_files(tmp_path) == [new]
