"""Checkpoints of long fits (``bncbench/engine/checkpoint.py``, ``lbfgsb.py``).

A fit killed after its state was saved, and run again, must end exactly where one that was never
stopped ends: the same parameters, probabilities, iteration count and trace (but its times).
Checked on DBL² (our stepping of scipy's L-BFGS-B against ``scipy.optimize.minimize``, kills at
several iterations, a file of another fit left aside), through the runner (a task killed in its
fit, then run again: the record equals an uninterrupted run's, and the file is gone) and on Dask
(a worker killed in the fit: its task, given to another worker, goes on from the checkpoint).
"""

import errno
import functools
import json
import os
import signal
from importlib.util import find_spec

import numpy as np
import pytest
from test_ccbn import _data

from bncbench import BNClassifier
from bncbench.engine import checkpoint, lbfgsb
from bncbench.engine.problem import Problem

pytestmark = pytest.mark.skipif(not lbfgsb.available(), reason="this scipy's L-BFGS-B cannot be stepped (not 1.15+)")


class Killed(BaseException):
    """Stands for the process being killed (not an Exception: nothing may catch it)."""


@pytest.fixture(scope="module")
def toy():
    X, y, cards = _data(600, seed=5, n_attr=7, card=(2, 4), n_classes=3, p=2)
    return X, y, cards


def _fit(toy, **kw):
    X, y, cards = toy
    params = {"structure": "anje", "n": 2, "param": "weighted", "init": "generative", "optimizer": "lbfgs",
              "reg": "l2", "lam": 0.01, **kw}
    return BNClassifier(discretize=False, cardinalities=cards, **params).fit(X, y)


def _same_fit(a, b, X):
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert [{k: v for k, v in r.items() if k != "time"} for r in a.trace_] == \
        [{k: v for k, v in r.items() if k != "time"} for r in b.trace_]


def _kill_after(monkeypatch, n_evaluations):
    fg, calls = Problem.fg, {"n": 0}

    def dying(self, x):
        calls["n"] += 1
        if calls["n"] > n_evaluations:
            raise Killed
        return fg(self, x)

    monkeypatch.setattr(Problem, "fg", dying)


@pytest.mark.parametrize("kw", [{}, {"reg": "rows", "param": "discriminative", "init": "zeros",
                                     "optimizer_options": {"history": 5, "uniform_offset": True}}])
def test_stepped_lbfgsb_is_minimize(toy, monkeypatch, kw):
    """``lbfgs`` with ``driver=setulb`` steps L-BFGS-B itself wherever it can (with or without a checkpoint):
    scipy's ``minimize``'s fit, iterates, trace and evaluations, bit for bit (the defaults; the authors' penalty,
    memory and offset)."""
    kw = {**kw, "optimizer_options": {**kw.get("optimizer_options", {}), "driver": "setulb"}}
    with monkeypatch.context() as m:
        m.setattr(lbfgsb, "available", lambda: False)  # scipy's minimize
        ref = _fit(toy, **kw)
    assert ref.n_iter_ > 30  # a fit long enough for the kills below
    plain = _fit(toy, **kw)
    _same_fit(plain, ref, toy[0])
    assert plain.n_fev_ == ref.n_fev_
    with checkpoint.fit_checkpoint("/nonexistent/never-written", every=1e9):
        ours = _fit(toy, **kw)
    _same_fit(ours, ref, toy[0])


def test_the_compact_driver_ends_where_setulb_ends(toy):
    """The default driver against ``setulb`` on DBL²: the trace's objective equal to rounding over the first 20
    iterations, then the same end to 1e-6 (factr 1e7 stops on 2e-9 relative progress in one iteration; a slow fit
    that stops there is further from its optimum, and the two paths stop at different places of that slope)."""
    a, b = _fit(toy), _fit(toy, optimizer_options={"driver": "setulb"})
    obj_a, obj_b = (np.array([r["obj"] for r in m.trace_]) for m in (a, b))
    np.testing.assert_allclose(obj_a[:21], obj_b[:21], rtol=1e-12)
    assert abs(a.n_iter_ - b.n_iter_) <= 0.1 * b.n_iter_
    np.testing.assert_allclose(obj_a[-1], obj_b[-1], rtol=1e-6)
    np.testing.assert_allclose(a.predict_proba(toy[0]), b.predict_proba(toy[0]), atol=1e-3)  # (max 1.8e-4 seen)
    np.testing.assert_array_equal(a.predict(toy[0]), b.predict(toy[0]))


def test_a_state_saved_by_the_other_driver_is_left_aside(toy, tmp_path, monkeypatch, capsys):
    prefix = tmp_path / "r0f0-key"
    _kill_after(monkeypatch, 12)
    with pytest.raises(Killed), checkpoint.fit_checkpoint(prefix, every=0.0):
        _fit(toy, optimizer_options={"driver": "setulb"})
    monkeypatch.undo()
    with checkpoint.fit_checkpoint(prefix, every=0.0) as ck:
        got = _fit(toy)
    assert ck.resumed == [] and "is of another fit" in capsys.readouterr().err
    _same_fit(got, _fit(toy), toy[0])


@pytest.mark.parametrize(("kill_at", "driver"), [(3, "compact"), (17, "compact"), (40, "compact"), (17, "setulb")])
def test_killed_fit_goes_on_to_the_same_end(toy, tmp_path, monkeypatch, kill_at, driver):
    """Either driver's saved state (the default ``compact``'s and ``setulb``'s) gives back the uninterrupted fit."""
    kw = {"optimizer_options": {"driver": driver}}
    ref = _fit(toy, **kw)
    prefix = tmp_path / "r0f0-key"
    _kill_after(monkeypatch, kill_at)
    with pytest.raises(Killed), checkpoint.fit_checkpoint(prefix, every=0.0):
        _fit(toy, **kw)
    monkeypatch.undo()
    saved = list(tmp_path.glob("r0f0-key.fit*.npz"))
    assert [p.name for p in saved] == ["r0f0-key.fit0.npz"]
    with checkpoint.fit_checkpoint(prefix, every=0.0) as ck:
        got = _fit(toy, **kw)
    assert len(ck.resumed) == 1 and 0 < ck.resumed[0] < ref.n_iter_ and ck.credited > 0 and ck.credited_cpu > 0
    _same_fit(got, ref, toy[0])
    assert got.n_fev_ == ref.n_fev_


def test_twice_killed_fit_and_time_carried_over(toy, tmp_path, monkeypatch):
    ref = _fit(toy)
    prefix = tmp_path / "r1f1-key"
    for kill_at in (10, 10):  # the second run resumes and is killed again, 10 evaluations on
        _kill_after(monkeypatch, kill_at)
        with pytest.raises(Killed), checkpoint.fit_checkpoint(prefix, every=0.0):
            _fit(toy)
        monkeypatch.undo()
    with checkpoint.fit_checkpoint(prefix, every=0.0) as ck:
        got = _fit(toy)
    _same_fit(got, ref, toy[0])
    times = [r["time"] for r in got.trace_]
    assert times == sorted(times)  # the trace's clock goes on from the saved run's
    assert len(ck.resumed) == 2 and 0 < ck.resumed[0] < ck.resumed[1] < ref.n_iter_  # went on twice


def test_file_of_another_fit_is_left_aside(toy, tmp_path, monkeypatch, capsys):
    prefix = tmp_path / "r0f0-key"
    _kill_after(monkeypatch, 12)
    with pytest.raises(Killed), checkpoint.fit_checkpoint(prefix, every=0.0):
        _fit(toy, lam=0.02)  # another penalty: another optimization
    monkeypatch.undo()
    with checkpoint.fit_checkpoint(prefix, every=0.0) as ck:
        got = _fit(toy)
    assert ck.resumed == [] and "is of another fit" in capsys.readouterr().err
    _same_fit(got, _fit(toy), toy[0])


def test_saves_every_interval_only(tmp_path):
    now = {"t": 0.0}
    ck = checkpoint.FitCheckpoint(tmp_path / "p", every=60.0, clock=lambda: now["t"])
    saver = ck.begin("fp", lbfgsb.State)
    state = lbfgsb.State.start(np.zeros(3), 2)
    saved = []
    for t in (10.0, 59.0, 61.0, 100.0, 122.0):
        now["t"] = t
        saved.append(saver.maybe_save(state, [], 0, t, t / 2))
    assert saved == [False, False, True, False, True]
    assert [p.name for p in ck.files()] == ["p.fit0.npz"]
    ck.clear()
    assert ck.files() == []


def _wine_task():
    from bncbench.data import specs
    from bncbench.harness.model_specs import ModelSpec
    from bncbench.harness.runner import Protocol, Task

    spec = ModelSpec("DBL2", {"structure": "anje", "n": 2, "param": "weighted", "init": "generative",
                              "optimizer": "lbfgs", "reg": "l2", "lam": 0.01})
    return Task(specs.resolve(["sklearn-wine"])[0], spec, 0, 1, Protocol(seed=0, rounds=1, folds=2))


def _record(root):
    from bncbench.harness.store import record_files

    (path,) = record_files(root)
    return json.loads(path.read_text()), path


def _same_record(got, ref):
    """A resumed task's record is the uninterrupted one's: its results, counts, trace and probabilities."""
    (got, got_path), (ref, ref_path) = got, ref
    assert list(got_path.parent.glob("*.fit*.npz")) == []  # removed with the record written
    assert 0 < got["resumed"][0] < ref["n_iter"] and "resumed" not in ref
    for k in ("zero_one", "rmse", "n_iter", "n_fev", "train_cll", "n_parameters"):
        assert got[k] == ref[k], k
    assert [{k: v for k, v in r.items() if k != "time"} for r in got["trace"]] == \
        [{k: v for k, v in r.items() if k != "time"} for r in ref["trace"]]
    assert got["train_time"] >= got["trace"][-1]["time"]  # the optimizer's time before the kill is in it
    with np.load(got_path.with_suffix(".npz")) as a, np.load(ref_path.with_suffix(".npz")) as b:
        np.testing.assert_array_equal(a["proba"], b["proba"])


def test_runner_task_killed_in_its_fit_resumes_to_the_same_record(tmp_path, monkeypatch):
    from bncbench.harness import runner
    from bncbench.harness.runner import run_task
    from bncbench.harness.store import record_files

    task = _wine_task()
    run_task(task, tmp_path / "ref", checkpoint_every=None)

    runner._WARM.clear()  # as in a new worker: its first fit of the model is preceded by a warm-up fit
    save, saves = checkpoint.Saver.maybe_save, []

    def dying(self, *args):  # killed right after the 10th save
        saves.append(save(self, *args))
        if sum(saves) == 10:
            raise Killed
        return saves[-1]

    monkeypatch.setattr(checkpoint.Saver, "maybe_save", dying)
    with pytest.raises(Killed):
        run_task(task, tmp_path / "res", checkpoint_every=0.0)
    monkeypatch.undo()
    assert record_files(tmp_path / "res") == []
    (saved,) = (tmp_path / "res").glob("records/sklearn-wine/DBL2/r0f1-*.fit0.npz")
    assert saved.name == f"r0f1-{task.key}.fit0.npz"
    with np.load(saved) as z:
        before = float(z["cpu"])  # the killed run's CPU seconds of optimizing, saved with its state
    run_task(task, tmp_path / "res", checkpoint_every=0.0)  # warmed up already (the warm-up never saves)
    _same_record(_record(tmp_path / "res"), _record(tmp_path / "ref"))
    got = _record(tmp_path / "res")[0]
    assert 0 < before < got["train_cpu"]  # credited, as the wall seconds are


def test_a_checkpoint_saved_without_cpu_seconds_resumes_to_a_record_without_them(tmp_path, monkeypatch):
    """A file of an earlier version (no ``cpu``): the fit goes on from it to the same results; its record has the
    wall time (credited) but no ``train_cpu``, which would leave out the killed run's part; the saves of the
    resumed run keep it unknown."""
    from bncbench.harness.runner import run_task

    task = _wine_task()
    run_task(task, tmp_path / "ref", checkpoint_every=None)
    _kill_after(monkeypatch, 12)
    with pytest.raises(Killed):
        run_task(task, tmp_path / "res", checkpoint_every=0.0)
    monkeypatch.undo()
    (saved,) = (tmp_path / "res").glob("records/sklearn-wine/DBL2/r0f1-*.fit0.npz")
    with np.load(saved) as z:
        old = {k: z[k] for k in z.files if k != "cpu"}
        assert "cpu" in z.files
    np.savez(saved.with_name("old.npz"), **old)
    saved.with_name("old.npz").replace(saved)
    saves = []
    real = checkpoint.Saver.maybe_save
    monkeypatch.setattr(checkpoint.Saver, "maybe_save", lambda self, *a: saves.append(a[-1]) or real(self, *a))
    run_task(task, tmp_path / "res", checkpoint_every=0.0)
    got, ref = _record(tmp_path / "res")[0], _record(tmp_path / "ref")[0]
    assert got["resumed"] and got["zero_one"] == ref["zero_one"] and got["n_iter"] == ref["n_iter"]
    assert "train_cpu" not in got and "train_cpu" in ref and got["train_time"] > 0 and got["test_cpu"] >= 0
    assert saves and set(saves) == {None}


def _killed_at_the_third_save_once(marker, root, task):
    """``run_task`` in a Dask worker; the first time, the worker process is killed (SIGKILL) right
    after the fit's third checkpoint, as a lost node or an out-of-memory kill would."""
    from bncbench.harness.runner import run_task

    if not os.path.exists(marker):
        open(marker, "w").close()
        save, saves = checkpoint.Saver.maybe_save, []

        def dying(self, *args):
            saves.append(save(self, *args))
            if sum(saves) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            return saves[-1]

        checkpoint.Saver.maybe_save = dying  # this process dies with it
    return run_task(task, root, checkpoint_every=0.0)


@pytest.mark.skipif(find_spec("distributed") is None, reason="distributed is not installed (.[dask])")
def test_a_task_whose_dask_worker_is_killed_goes_on_from_its_checkpoint(tmp_path):
    """executor=dask: the scheduler gives a lost worker's task to another worker (here the one the
    nanny starts again), and the task's fit goes on from its checkpoint to the uninterrupted record."""
    from bncbench.executors import make_executor
    from bncbench.harness.runner import run_task

    task = _wine_task()
    run_task(task, tmp_path / "ref", checkpoint_every=None)
    marker = str(tmp_path / "killed")
    fn = functools.partial(_killed_at_the_third_save_once, marker, str(tmp_path / "res"))
    (rec,) = make_executor("dask", n_workers=1).map_unordered(fn, [task])
    assert os.path.exists(marker) and rec.resumed == [3]
    _same_record(_record(tmp_path / "res"), _record(tmp_path / "ref"))


def test_a_save_that_fails_leaves_the_fit_going_and_is_tried_again(toy, tmp_path, monkeypatch, capsys):
    from bncbench import atomic

    real, calls = atomic.atomic_file, {"n": 0}

    def full_disk_twice(path):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path)

    monkeypatch.setattr(atomic, "atomic_file", full_disk_twice)
    prefix = tmp_path / "r0f0-key"
    with checkpoint.fit_checkpoint(prefix, every=0.0):
        got = _fit(toy)
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert err.count("cannot save the checkpoint") == 1 and "No space left on device" in err
    assert calls["n"] == got.n_iter_ - 1  # every iteration but the last (the fit's end) tried, the first two in vain
    _same_fit(got, _fit(toy), toy[0])
    assert [p.name for p in tmp_path.glob("r0f0-key.fit*.npz")] == ["r0f0-key.fit0.npz"]  # later saves wrote it


def test_unreadable_file_is_left_aside(toy, tmp_path, capsys):
    prefix = tmp_path / "r0f0-key"
    (tmp_path / "r0f0-key.fit0.npz").write_bytes(b"PK\x03\x04 not a zip")
    with checkpoint.fit_checkpoint(prefix, every=1e9) as ck:
        got = _fit(toy)
    assert ck.resumed == [] and "cannot be read" in capsys.readouterr().err
    _same_fit(got, _fit(toy), toy[0])
