"""Checkpoints of long fits (``bncbench/engine/checkpoint.py``, ``lbfgsb.py``).

A fit killed after its state was saved, and run again, must end exactly where one that was never
stopped ends: the same parameters, probabilities, iteration count and trace (but its times).
Checked on DBL² (our stepping of scipy's L-BFGS-B against ``scipy.optimize.minimize``, kills at
several iterations, a file of another fit left aside), through the runner (a task killed in its
fit, then run again: the record equals an uninterrupted run's, and the file is gone) and on Dask
(a worker killed in the fit: its task, given to another worker, goes on from the checkpoint). A fit
stopped by an interrupt (Ctrl-C, SIGTERM, a SLURM requeue's ``SystemExit``) saves where it was, and
SIGUSR1 makes fits save now: the same bits as a periodic save, through the CLI with real signals and
through submitit's requeue.
"""

import errno
import functools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from importlib.util import find_spec

import numpy as np
import pytest
from conftest import REPO
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
    assert abs(a.n_iter_ - b.n_iter_) <= 0.15 * b.n_iter_  # within 10 % on an Intel Xeon; 724 / 658 on an AMD EPYC
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


def test_a_fresh_optimization_saves_first_after_a_minute_then_every_interval(tmp_path):
    """``every`` ten minutes: afresh, the first save comes at ``FIRST`` (60 s), the next ``every`` after it; an
    optimization that goes on from that save waits the whole ``every`` (a task dying where it died is counted)."""
    assert checkpoint.FIRST == 60.0
    now = {"t": 0.0}
    clock = lambda: now["t"]  # noqa: E731
    state = lbfgsb.State.start(np.zeros(3), 2)

    def saves(saver, times):
        out = []
        for t in times:
            now["t"] = t
            out.append(saver.maybe_save(state, [], 0, t, t))
        return out

    fresh = checkpoint.FitCheckpoint(tmp_path / "p", every=600.0, clock=clock).begin("fp", lbfgsb.State)
    assert saves(fresh, (30.0, 59.0, 60.5, 120.0, 600.0, 661.0)) == [False, False, True, False, False, True]
    now["t"] = 1000.0
    again = checkpoint.FitCheckpoint(tmp_path / "p", every=600.0, clock=clock).begin("fp", lbfgsb.State)
    assert again.state is not None  # went on from the save
    assert saves(again, (1061.0, 1500.0, 1601.0)) == [False, False, True]
    now["t"] = 2000.0
    short = checkpoint.FitCheckpoint(tmp_path / "q", every=20.0, clock=clock).begin("fp", lbfgsb.State)
    assert saves(short, (2019.0, 2021.0, 2040.0, 2041.0)) == [False, True, False, True]  # every < FIRST: every


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


def _arrays(path):
    """A checkpoint's arrays but its clocks (``elapsed``, ``cpu``, the trace's times): what the fit goes on from."""
    with np.load(path) as z:
        out = {k: z[k] for k in z.files if k not in ("elapsed", "cpu")}
    trace = [{k: v for k, v in r.items() if k != "time"} for r in json.loads(str(out["trace"]))]
    return {**out, "trace": np.array(json.dumps(trace))}


def _saved_at(toy, tmp_path, iteration, **kw):
    """The arrays of the periodic save (``every=0``) of iteration ``iteration`` of ``_fit(toy, **kw)``."""
    prefix = tmp_path / "periodic" / "r0f0-key"
    prefix.parent.mkdir()
    real = checkpoint.Saver.maybe_save

    def then_killed(self, state, *args):
        saved = real(self, state, *args)
        if state.n_iter == iteration:
            raise Killed
        return saved

    with pytest.MonkeyPatch.context() as m:
        m.setattr(checkpoint.Saver, "maybe_save", then_killed)
        with pytest.raises(Killed), checkpoint.fit_checkpoint(prefix, every=0.0):
            _fit(toy, **kw)
    return _arrays(checkpoint.files(prefix)[0])


def _interrupt_at(monkeypatch, n_evaluations, exc):
    """``Problem.fg`` raises ``exc`` in its evaluation ``n_evaluations + 1`` (counted as the problem counts them, cache
    hits not); returns a dict that gets ``n_fev``, the problem's count when it raised."""
    fg, at = Problem.fg, {}

    def interrupted(self, x):
        if self.n_fev >= n_evaluations and self._lookup(x, True) is None:
            at["n_fev"] = self.n_fev
            raise exc()
        return fg(self, x)

    monkeypatch.setattr(Problem, "fg", interrupted)
    return at


def _terminated():
    from bncbench.__main__ import Terminated

    return Terminated


@pytest.mark.parametrize(("exc", "n_evaluations", "later_trial"),
                         [(KeyboardInterrupt, 3, False), (SystemExit, 7, True), ("terminated", 40, False)])
def test_an_interrupted_fit_saves_where_it_was_and_goes_on_to_the_same_end(toy, tmp_path, monkeypatch, capsys, exc,
                                                                           n_evaluations, later_trial):
    """Ctrl-C, ``SystemExit`` (submitit's requeue) or SIGTERM (``Terminated``) in an evaluation: with no save due
    (``every`` a day), the state as the interrupted iteration began is saved, the same bits as a periodic save at
    that iteration's start, and the fit goes on from it to the uninterrupted end. Evaluation 8 is the second trial
    of iteration 6's line search (``later_trial``): the driver's evaluation count, one up then, is set back."""
    exc = _terminated() if exc == "terminated" else exc
    ref = _fit(toy)
    prefix = tmp_path / "r0f0-key"
    at = _interrupt_at(monkeypatch, n_evaluations, exc)
    with pytest.raises(exc), checkpoint.fit_checkpoint(prefix, every=86400.0):
        _fit(toy)
    monkeypatch.undo()
    (saved,) = checkpoint.files(prefix)
    got_arrays = _arrays(saved)
    began = int(got_arrays["n_iter"])  # the iteration the interrupt stopped began after this many
    assert ref.trace_[began]["n_fev"] <= at["n_fev"] < ref.trace_[began + 1]["n_fev"]
    assert (at["n_fev"] > ref.trace_[began]["n_fev"]) == later_trial
    assert f"interrupted; saved the checkpoint at iteration {began}" in capsys.readouterr().err
    if began > 0:  # (a periodic save comes at the end of an iteration, none before the first)
        want = _saved_at(toy, tmp_path, began)
        assert sorted(got_arrays) == sorted(want)
        for k in want:
            np.testing.assert_array_equal(got_arrays[k], want[k], err_msg=k)
    with checkpoint.fit_checkpoint(prefix, every=86400.0) as ck:
        got = _fit(toy)
    assert ck.resumed == [began]
    _same_fit(got, ref, toy[0])
    assert got.n_fev_ == ref.n_fev_


def test_setulb_saves_nothing_on_interrupt(toy, tmp_path, monkeypatch):
    """``driver=setulb``: its work arrays hold a line search in progress during an evaluation, which no save could go
    on from; an interrupt leaves the last periodic save (here none) as it is."""
    prefix = tmp_path / "r0f0-key"
    _interrupt_at(monkeypatch, 17, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt), checkpoint.fit_checkpoint(prefix, every=86400.0):
        _fit(toy, optimizer_options={"driver": "setulb"})
    assert checkpoint.files(prefix) == []


def test_a_save_asked_for_comes_at_the_end_of_the_iteration_and_the_fit_goes_on(toy, tmp_path, monkeypatch, capsys):
    """SIGUSR1 (``save_on_signal``): the fit saves at the end of the iteration it is in, whatever ``every``, goes on to
    the uninterrupted end, and saves no more; the file is a periodic save's of that iteration."""
    if not hasattr(signal, "SIGUSR1") or threading.current_thread() is not threading.main_thread():
        pytest.skip("no SIGUSR1 here, or not the main thread")
    ref = _fit(toy)
    previous = signal.getsignal(signal.SIGUSR1)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # (a test before may have installed it: as in a new process)
    try:
        assert checkpoint.save_on_signal()
        fg, asked = Problem.fg, {}

        def asking(self, x):
            if self.n_fev == 12 and not asked:
                asked["n_fev"] = self.n_fev
                os.kill(os.getpid(), signal.SIGUSR1)  # the handler runs in this thread, before the next bytecode
            return fg(self, x)

        monkeypatch.setattr(Problem, "fg", asking)
        prefix = tmp_path / "r0f0-key"
        with checkpoint.fit_checkpoint(prefix, every=86400.0):
            got = _fit(toy)
        monkeypatch.undo()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    _same_fit(got, ref, toy[0])
    end = next(i for i, r in enumerate(ref.trace_) if r["n_fev"] > asked["n_fev"])  # the iteration it was asked in
    (saved,) = checkpoint.files(prefix)
    assert int(_arrays(saved)["n_iter"]) == end
    assert capsys.readouterr().err.count("as asked (SIGUSR1)") == 1
    want = _saved_at(toy, tmp_path, end)
    got_arrays = _arrays(saved)
    for k in want:
        np.testing.assert_array_equal(got_arrays[k], want[k], err_msg=k)


def test_a_save_asked_for_before_a_task_is_not_its_to_serve(tmp_path):
    """Requests counted before a task's checkpoint began (served by the fits then running, or by none) do not make
    its first iteration save; one made during the task does, once."""
    now = {"t": 0.0}
    checkpoint.request_save()
    ck = checkpoint.FitCheckpoint(tmp_path / "p", every=60.0, clock=lambda: now["t"])
    saver = ck.begin("fp", lbfgsb.State)
    state = lbfgsb.State.start(np.zeros(3), 2)
    first = saver.maybe_save(state, [], 0, 1.0, 1.0)
    checkpoint.request_save()
    assert [first, saver.maybe_save(state, [], 0, 2.0, 2.0), saver.maybe_save(state, [], 0, 3.0, 3.0)] == \
        [False, True, False]


_SLOWED = """import os, sys, time
from bncbench.engine import checkpoint
from bncbench.engine.problem import Problem
fg = Problem.fg
def slowed(self, x):  # from the 6th evaluation on: waits for SIGUSR1, then, once saved, for SIGTERM
    ck = checkpoint.active()
    if self.n_fev >= 5 and ck is not None:
        open(sys.argv[1], "a").close()
        while checkpoint._REQUESTS == 0:
            time.sleep(0.02)
        if ck.files():
            time.sleep(600)
    return fg(self, x)
Problem.fg = slowed
from bncbench.__main__ import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="no SIGUSR1 on this platform")
def test_the_cli_saves_when_asked_and_when_stopped_and_its_rerun_goes_on_to_the_uninterrupted_record(tmp_path):
    """``python -m bncbench run`` (real signals, serial tasks, no periodic save due): SIGUSR1 makes the fit save and go
    on, SIGTERM stops the run (exit 143) after a save where the fit was, and the rerun goes on from that save to the
    records of a run never stopped."""
    args = ["run", "structure=anje", "structure.n=2", "param=weighted", "dataset.names=[sklearn-wine]",
            "cv.rounds=1", "progress=false", "checkpoint_every=86400", "name=t"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    script, started = tmp_path / "slowed.py", tmp_path / "started"
    script.write_text(_SLOWED)
    proc = subprocess.Popen([sys.executable, str(script), str(started), *args, f"results_dir={tmp_path / 'res'}"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()

    def wait_for(cond, what):
        deadline = time.monotonic() + 120
        while not cond() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cond(), f"{what}: {''.join(lines)[-3000:]}"

    try:
        wait_for(started.exists, "the fit did not start")
        proc.send_signal(signal.SIGUSR1)
        wait_for(lambda: any("as asked (SIGUSR1)" in line for line in lines), "no save when asked")
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 143, err[-3000:]
    assert "interrupted; saved the checkpoint at iteration" in err and "stopped by SIGTERM" in err
    (saved,) = (tmp_path / "res").rglob("*.fit0.npz")
    with np.load(saved) as z:
        at = int(z["n_iter"])
    # the fit waited in the iteration after the asked save: the interrupt saved the same iteration's end
    assert f"saved the checkpoint at iteration {at}, as asked (SIGUSR1)" in err
    assert f"interrupted; saved the checkpoint at iteration {at}:" in err
    runs = {}
    for root in ("res", "ref"):
        runs[root] = subprocess.run([sys.executable, "-m", "bncbench", *args, f"results_dir={tmp_path / root}"],
                                    cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert runs[root].returncode == 0, runs[root].stderr[-3000:]
    assert f"going on from the checkpoint at iteration {at} " in runs["res"].stderr
    from bncbench.harness.store import record_files

    got = {p.name: json.loads(p.read_text()) for p in record_files(tmp_path / "res" / "t")}
    ref = {p.name: json.loads(p.read_text()) for p in record_files(tmp_path / "ref" / "t")}
    assert sorted(got) == sorted(ref) and len(got) == 2
    resumed = [name for name, r in got.items() if r.get("resumed")]
    assert len(resumed) == 1 and got[resumed[0]]["resumed"] == [at] and at > 0
    for name in got:
        for k in ("zero_one", "rmse", "n_iter", "n_fev", "train_cll"):
            assert got[name][k] == ref[name][k], (name, k)
    assert list((tmp_path / "res").rglob("*.fit*.npz")) == []


def _slowed_the_first_time(args):
    """A job of :func:`test_a_requeued_slurm_element_goes_on_from_where_its_fit_was_signalled`: ``run_task`` on
    ``task``; the first time its fit's sixth evaluation waits for the signal of the time limit (up to 10 minutes)."""
    from bncbench.harness.runner import run_task

    marker, root, task = args
    if not os.path.exists(marker):
        open(marker, "w").close()
        fg = Problem.fg

        def slowed(self, x):
            if self.n_fev >= 5 and checkpoint.active() is not None:  # (not the runner's warm-up fit)
                time.sleep(600.0)  # submitit's handler raises SystemExit in it
            return fg(self, x)

        Problem.fg = slowed  # this job's process only
    return run_task(task, root, checkpoint_every=86400.0)


@pytest.mark.skipif(find_spec("submitit") is None, reason="submitit is not installed (.[slurm])")
def test_a_requeued_slurm_element_goes_on_from_where_its_fit_was_signalled(tmp_path, monkeypatch):
    """At an element's time limit submitit's signal handler raises ``SystemExit`` in the fit; the fit saves where it
    was (no periodic save due: ``checkpoint_every`` a day) and the requeued element goes on from there to the record
    of a task never stopped. submitit's local processes, signalled 20 s before a 45 s limit (time for a loaded machine
    to start the job and reach the fit)."""
    import submitit

    from bncbench.executors.slurm import RunBatch
    from bncbench.harness.runner import run_task

    task = _wine_task()
    run_task(task, tmp_path / "ref", checkpoint_every=None)
    here = os.path.dirname(__file__)  # the job unpickles this module's function
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    ex = submitit.LocalExecutor(folder=tmp_path / "sub", max_num_timeout=2)
    ex.update_parameters(timeout_min=0.75, signal_delay_s=20)
    marker = str(tmp_path / "slowed")
    (rec,) = ex.submit(RunBatch(_slowed_the_first_time), [(marker, str(tmp_path / "res"), task)]).result()
    began = max(r["iter"] for r in _record(tmp_path / "ref")[0]["trace"] if r["n_fev"] <= 5)  # the 6th's iteration
    assert os.path.exists(marker) and rec.resumed == [began] and began > 0
    _same_record(_record(tmp_path / "res"), _record(tmp_path / "ref"))


_ASKED_CHILD = """import sys, time
from bncbench.engine import checkpoint
if sys.argv[1] == "saving":
    assert checkpoint.save_on_signal()
print("ready", flush=True)
deadline = time.monotonic() + 60
while checkpoint._REQUESTS == 0 and time.monotonic() < deadline:
    time.sleep(0.02)
print("asked" if checkpoint._REQUESTS else "never asked", flush=True)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="no Linux /proc: SIGUSR1 is not passed on here")
def test_a_run_passes_sigusr1_on_to_the_children_that_save_and_to_no_other(tmp_path):
    """The run's handler (``request_save_here_and_below``) sends SIGUSR1 to its child processes that catch it (a
    worker that ran a task), not to those it would end (loky's resource trackers, Dask's processes)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    kids = {how: subprocess.Popen([sys.executable, "-c", _ASKED_CHILD, how], stdout=subprocess.PIPE, text=True,
                                  env=env) for how in ("saving", "default")}
    try:
        for proc in kids.values():
            assert proc.stdout.readline().strip() == "ready"
        assert checkpoint.saving_children(os.getpid()) == [kids["saving"].pid]
        before = checkpoint._REQUESTS
        checkpoint.request_save_here_and_below()
        assert checkpoint._REQUESTS == before + 1  # this process's own fits too
        assert kids["saving"].communicate(timeout=60)[0].strip() == "asked"
        assert kids["saving"].returncode == 0
        assert kids["default"].poll() is None  # not signalled: SIGUSR1 would have ended it
    finally:
        for proc in kids.values():
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="no Linux /proc: the run cannot find its workers")
def test_a_run_with_workers_stopped_by_sigterm_first_has_their_fits_save(tmp_path):
    """``n_jobs=2``: SIGTERM to the run asks both workers' fits to save (SIGUSR1), waits for the two files, then stops
    (exit 143, no running marker left); the checkpoint of each fit stays for the rerun (which goes on from it:
    ``test_runner_task_killed_in_its_fit_resumes_to_the_same_record``). A3JE^w's fits on digits take tens of seconds
    to set up, over a minute beside other work (a rerun's two fits and a test suite on 2 cores), and a fit still
    setting up saves at its first iteration: ``stop_grace=600`` keeps a loaded machine's setup inside the wait (the
    default, a minute, did not always)."""
    cmd = [sys.executable, "-m", "bncbench", "run", "structure=anje", "structure.n=3", "param=weighted",
           "dataset.names=[sklearn-digits]", "cv.rounds=1", "progress=false", "n_jobs=2", "name=w",
           "stop_grace=600", f"results_dir={tmp_path}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"})
    try:
        deadline = time.monotonic() + 180
        while len(list(tmp_path.rglob("*.running"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(list(tmp_path.rglob("*.running"))) == 2, "both folds did not start"
        time.sleep(3)  # (in their fits, or about to be: a save asked for before the first iteration comes at it)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=700)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err[-3000:]
    assert "bncbench: stopping: asking the 2 fit(s) of its workers to save first (at most 600 s" in err, err[-3000:]
    assert err.count(", as asked (SIGUSR1)") == 2 and "stopped by SIGTERM" in err
    assert len(list(tmp_path.rglob("*.fit0.npz"))) == 2 and list(tmp_path.rglob("*.running")) == []
