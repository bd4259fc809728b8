"""A store that heals itself and refuses what it cannot trust (issue #36): unreadable records named and
redone, one line for every system error, one run at a time per store, suspicious data warned about."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from conftest import run_cli

from bncbench.data import specs
from bncbench.errors import BNCBenchError
from bncbench.harness.model_specs import ModelSpec
from bncbench.harness.protocol import TIME_METRICS
from bncbench.harness.runner import Protocol, run_experiment
from bncbench.harness.store import ResultStore, UnreadableRecordWarning, load_results, record_files
from bncbench.report.summary import summarize

MODELS = [ModelSpec("NB", {"structure": "nb"}), ModelSpec("TAN", {"structure": "tan"})]


def _run(root, *, retry_failed=True, seed=3):
    return run_experiment(specs.resolve(["sklearn-iris"]), MODELS, results_root=root,
                          protocol=Protocol(seed=seed, rounds=2, folds=2), progress=False, retry_failed=retry_failed)


def _frame(root):
    df = load_results(root).drop(columns=[*TIME_METRICS, "path", "environment"], errors="ignore")
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
    import bncbench.harness.store as store_mod

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


# ----------------------------------------------------------------------------- (4) one run at a time per store
HOLD = ("import sys\nfrom bncbench.harness.store import ResultStore\n"
        "with ResultStore(sys.argv[1]).lock():\n    print('held', flush=True)\n    sys.stdin.read()\n")


def _holder(root):
    """A real process holding ``root``'s lock until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ))
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_run_waits_for_the_first_then_finds_its_work_done(tmp_path):
    root = tmp_path / "iris"
    holder = _holder(root)
    err = tmp_path / "b.err"
    with open(err, "w") as fh:
        b = subprocess.Popen([sys.executable, "-m", "bncbench", *CLI_ARGS, f"results_dir={tmp_path}"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=fh, text=True, env=dict(os.environ, MPLBACKEND="Agg"))
        deadline = time.time() + 120
        while "waiting" not in err.read_text() and b.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        line = [ln for ln in err.read_text().splitlines() if "locked" in ln]
        assert line == [f"bncbench: {root} is locked by the run of pid {holder.pid} on {os.uname().nodename} "
                        f"(since {json.loads((root / '.lock').read_text())['since']}); waiting for it to end"], \
            err.read_text()
        assert b.poll() is None and not record_files(root)  # it waits, writing no record
        holder.stdin.close()
        holder.wait()
        out, _ = b.communicate(timeout=300)
    assert b.returncode == 0, err.read_text()
    assert "12 ran ok" in out and not (root / ".lock").exists()


def test_two_concurrent_runs_with_different_seeds_never_mix_records(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-m", "bncbench", *CLI_ARGS, f"seed={s}", f"results_dir={tmp_path}"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, MPLBACKEND="Agg")) for s in (0, 1)]
    results = [(p.wait(timeout=600), *p.communicate()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    refused = next(r for r in results if r[0] == 2)
    errs = [ln for ln in refused[2].splitlines() if ln.startswith("bncbench: error:")]
    assert len(errs) == 1 and "different configuration" in errs[0] and "Traceback" not in refused[2]
    df = load_results(tmp_path / "iris")
    assert len(df) == 12 and not df.duplicated(["dataset", "model", "round", "fold"]).any()


def test_a_killed_runs_lock_is_taken_over(tmp_path):
    root = tmp_path / "r"
    holder = _holder(root)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert (root / ".lock").exists()  # left behind by kill -9
    said = []
    with ResultStore(root).lock(say=said.append):
        assert json.loads((root / ".lock").read_text())["pid"] == os.getpid()
    assert said == [] and not (root / ".lock").exists()
    # a pid reused by another process (its start time differs) is a dead owner too
    root.mkdir(exist_ok=True)
    (root / ".lock").write_text(json.dumps({"host": os.uname().nodename, "pid": 1, "start": "-1", "since": "x"}))
    with ResultStore(root).lock(say=said.append):
        pass
    assert said == []


def test_a_lock_of_another_host_is_waited_for_and_named(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    lock = root / ".lock"
    lock.write_text(json.dumps({"host": "node17", "pid": 4242, "start": "9", "since": "2026-11-25T10:00:00+00:00"}))
    said = []

    def say(msg):  # the other host's run ends: its lock goes
        said.append(msg)
        lock.unlink()

    with ResultStore(root).lock(poll=0.01, say=say):
        pass
    assert said == [f"bncbench: {root} is locked by the run of pid 4242 on node17 (since 2026-11-25T10:00:00+00:00); "
                    f"waiting for it to end (remove {lock} if that run is gone; it is taken over once not refreshed "
                    "for 10 minutes)"]
    # a lock of another host that its owner stopped refreshing (a job killed on another node) is stale
    lock.write_text(json.dumps({"host": "node17", "pid": 4242, "start": "9", "since": "x"}))
    old = time.time() - 601
    os.utime(lock, (old, old))
    said.clear()
    with ResultStore(root).lock(poll=0.01, say=said.append):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert said == []


def test_a_held_lock_is_refreshed(tmp_path, monkeypatch):
    import bncbench.harness.store as store_mod

    monkeypatch.setattr(store_mod, "LOCK_HEARTBEAT", 0.01)
    root = tmp_path / "r"
    with ResultStore(root).lock():
        lock = root / ".lock"
        old = time.time() - 1000
        os.utime(lock, (old, old))
        deadline = time.time() + 30
        while lock.stat().st_mtime < old + 500 and time.time() < deadline:
            time.sleep(0.01)
        assert lock.stat().st_mtime > old + 500


# ----------------------------------------------------------------------------- (5) silent wrong data
def _csv(path, columns, cls):
    import pandas as pd

    pd.DataFrame({**columns, "cls": cls}).to_csv(path, index=False)
    return path


def _load(path, **kw):
    from bncbench.data.uci import load_file

    return load_file(path, "cls", cache=False, **kw)


def test_numeric_row_identifiers_are_warned_about(tmp_path):
    from bncbench.errors import IdentifierWarning

    rng = np.random.default_rng(0)
    n = 200
    cls = np.repeat(["a", "b"], n // 2)  # a file sorted by class
    age = np.sort(rng.integers(18, 70, n))  # sorted by an ordinary attribute too: few distinct values
    cols = {"id": np.arange(n), "shuffled": rng.permutation(n) + 1, "stamp": 1.7e9 + np.cumsum(rng.random(n)),
            "gappy": np.delete(np.arange(n + 10), rng.choice(n + 10, 10, replace=False)),
            "x": rng.normal(size=n), "age": age}
    path = _csv(tmp_path / "ids.csv", cols, cls)
    with pytest.warns(IdentifierWarning) as caught:
        ds = _load(path)
    msgs = [str(w.message) for w in caught if "numeric attribute" in str(w.message)]
    assert msgs == [f"{path}: numeric attributes 'id' (a permutation of the row numbers, 200 distinct values on 200 "
                    "rows), 'shuffled' (a permutation of the row numbers, 200 distinct values on 200 rows), 'stamp' "
                    "(monotone with the row order, 200 distinct values on 200 rows), 'gappy' (a permutation of the row "
                    "numbers, 200 distinct values on 200 rows) look like a row identifier, not evidence (discretized, a "
                    "row number in a file sorted by class predicts the class perfectly and means nothing); drop them "
                    "with the dataset option drop_identifiers: true"]
    assert set(ds.meta["identifiers"]) == {"id", "shuffled", "stamp", "gappy"}
    kept = _load(path, drop_identifiers=True)
    assert list(kept.X.columns) == ["x", "age"]
    # a measurement, a near-permutation with too many gaps, and tiny tables are left alone
    ok = {"x": rng.normal(size=n), "sparse": rng.choice(10 * n, n, replace=False).astype(float)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdentifierWarning)
        _load(_csv(tmp_path / "ok.csv", ok, cls))
        _load(_csv(tmp_path / "tiny.csv", {"id": np.arange(10)}, cls[:: n // 10]))


def test_missing_class_values_are_refused_or_dropped_with_a_warning(tmp_path):
    from bncbench.errors import BNCBenchWarning

    path = tmp_path / "nan.csv"
    path.write_text("a,cls\n" + "".join(f"{i % 3},{c}\n" for i, c in
                                        enumerate(["yes", "no", "NaN", "yes", "", "no", "nan", "yes", "no", "no"])))
    with pytest.raises(BNCBenchError, match=r"line 4: missing class value \(3 rows\); set missing_class: drop"):
        _load(path)
    with pytest.warns(BNCBenchWarning, match=r"dropped 3 of 10 rows without a class value \(missing_class: drop\)"):
        ds = _load(path, missing_class="drop")
    assert ds.classes == ["no", "yes"] and ds.n_instances == 7


# ----------------------------------------------------------------------------- (3) system errors: one line
def _one_error_line(res):
    assert "Traceback" not in res.stderr + res.stdout, res.stderr
    errs = [ln for ln in res.stderr.splitlines() if ln.startswith("bncbench: error:")]
    assert len(errs) == 1, res.stderr
    return errs[0]


@pytest.mark.parametrize("under", ["", "sub/dir"])
def test_results_dir_that_is_or_is_under_a_file(tmp_path, under):
    f = tmp_path / "afile"
    f.write_text("x")
    res = run_cli([*CLI_ARGS, f"results_dir={f / under if under else f}"], cwd=tmp_path)
    assert res.returncode == 2
    assert _one_error_line(res) == (f"bncbench: error: results_dir: {f} is a file, not a directory (the results "
                                    f"would go to {f / under / 'iris' if under else f / 'iris'})")
    assert f.read_text() == "x" and sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory this process cannot write: a read-only tmpfs for root (which ignores modes), else mode 555."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)
        return
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(d)], capture_output=True).returncode:
        pytest.skip("running as root without the right to mount a read-only tmpfs")
    try:
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=True)


def test_a_read_only_results_dir_is_one_line(tmp_path, read_only_dir):
    res = run_cli([*CLI_ARGS, f"results_dir={read_only_dir}"], cwd=tmp_path)
    assert res.returncode == 2
    line = _one_error_line(res)
    assert line.startswith(f"bncbench: error: results_dir: {read_only_dir} is ") and "choose another results_dir" in line
    assert not list(read_only_dir.iterdir())
    rep = run_cli(["report", str(tmp_path), "--out", str(read_only_dir / "rep")], cwd=tmp_path)  # nothing there
    assert rep.returncode == 2 and "no result records" in _one_error_line(rep)


FULL_DISK = """import errno, sys
import bncbench.harness.store as store
real, n = store.atomic_write_bytes, [0]
def full(path, data):
    if path.suffix == ".json" and "records" in path.parts:
        n[0] += 1
        if n[0] > 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
    return real(path, data)
store.atomic_write_bytes = full
from bncbench.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_full_disk_is_one_line_leaves_nothing_half_written_and_the_rerun_completes(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    res = subprocess.run([sys.executable, "-c", FULL_DISK, *CLI_ARGS, "n_jobs=1", f"results_dir={tmp_path}"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 74, res.stderr
    line = _one_error_line(res)
    assert line.startswith("bncbench: error: no space left on the device of ") and "rerun the same command" in line
    root = tmp_path / "iris"
    assert len(record_files(root)) == 3
    assert len(list(root.glob("records/*/*/*.npz"))) == 3  # the fourth's predictions went with its JSON
    assert not list(root.glob("records/**/.tmp-*")) and not (root / ".lock").exists()
    again = run_cli([*CLI_ARGS, f"results_dir={tmp_path}"], cwd=tmp_path)
    assert again.returncode == 0 and "3 already done, 9 ran ok" in again.stdout


# ----------------------------------------------------------------------------- (6) the smaller items
@pytest.mark.parametrize("rows,message", [
    ("1,x,yes\n2,y,no\n", "dataset 'tiny' has 2 rows; 2-fold cross-validation needs at least 4 (a test row in every "
                          "fold, two training rows in every training part)"),
    ("".join(f"{i},{'xy'[i % 2]},{i * 0.37:.2f}\n" for i in range(40)),
     "dataset 'tiny': its class has 40 distinct values on 40 rows, fewer than two rows per class (a continuous "
     "target?); a classifier needs a nominal class (discretize the target first)"),
])
def test_datasets_the_protocol_cannot_evaluate_are_refused_before_any_task(tmp_path, rows, message):
    csv = tmp_path / "tiny.csv"
    csv.write_text("a,b,cls\n" + rows)
    res = run_cli(["run", f"dataset.names=[{{name:tiny,path:{csv},class_column:cls}}]", f"results_dir={tmp_path / 'r'}"],
                  cwd=tmp_path)
    assert res.returncode == 2
    assert _one_error_line(res) == f"bncbench: error: {message}"
    assert not (tmp_path / "r").exists()


def test_min_rows_is_the_fewest_rows_every_fold_can_use():
    from bncbench.harness.protocol import cv_folds, min_rows

    for k in range(2, 8):
        n = min_rows(k)
        for m, ok in ((n, True), (n - 1, False)):
            fold = cv_folds(np.arange(m) % 2, seed=0, dataset="d", round_=0, folds=k)
            sizes = np.bincount(fold, minlength=k)
            assert ((sizes >= 1).all() and (m - sizes >= 2).all()) == ok, (k, m)


def test_a_class_column_missing_from_a_headerless_file_says_so(tmp_path):
    csv = tmp_path / "nohead.csv"
    csv.write_text("".join(f"{i},{i % 3},x,y,{'ab'[i % 2]}\n" for i in range(30)))
    with pytest.raises(BNCBenchError) as exc:
        _load(csv)
    assert str(exc.value) == (f"{csv}: no class column 'cls': the file has no header line naming it, so its first line "
                              "(0, 0, x, y, a) was read as data and the columns are col1..col5; add a header line, or "
                              "name the class column by position (class_column: last, first or an index)")


def test_a_multirun_whose_tasks_all_fail_exits_1_on_the_submitit_launcher(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="hydra-submitit-launcher is not installed")
    res = run_cli(["run", "-m", "hydra/launcher=submitit_local", "structure.name=custom", "+structure.parents=[[0]]",
                   "dataset.names=[synth-nb]", "cv.rounds=1", "name=j0,j1", "progress=false", f"results_dir={tmp_path}"],
                  cwd=tmp_path, timeout=600)
    assert res.returncode == 1, res.stdout + res.stderr
    for job in ("j0", "j1"):  # each job ran (in a process of its own) and recorded its failures
        df = load_results(tmp_path / job)
        assert len(df) == 2 and (df["status"] == "failed").all()


def test_an_unreachable_dask_scheduler_fails_fast_in_one_line():
    import socket

    from bncbench.executors.dask import check_address

    with socket.socket() as srv:  # a port nobody listens on: bound, never listening
        srv.bind(("127.0.0.1", 0))
        port = srv.getsockname()[1]
        t0 = time.monotonic()
        with pytest.raises(BNCBenchError, match=rf"executor dask: no scheduler answers at tcp://127.0.0.1:{port} "
                                                r"\(Connection refused\); start one"):
            check_address(f"tcp://127.0.0.1:{port}")
        assert time.monotonic() - t0 < 5  # refused at once, not Dask's 30 s
        srv.listen()
        check_address(f"tcp://127.0.0.1:{port}")  # a listening scheduler passes
    with pytest.raises(BNCBenchError, match="is not tcp://HOST:PORT"):
        check_address("tcp://somewhere")
    check_address("ucx://10.0.0.1:13337")  # other protocols are Dask's


def test_an_unreachable_dask_scheduler_stops_the_run_before_anything_is_written(tmp_path):
    pytest.importorskip("distributed", reason="dask is not installed (pip install -e '.[dask]')")
    res = run_cli(["run", "executor=dask", "executor.address=tcp://127.0.0.1:1", "dataset.names=[synth-nb]",
                   f"results_dir={tmp_path / 'r'}"], cwd=tmp_path, timeout=60)
    assert res.returncode == 2 and "no scheduler answers at tcp://127.0.0.1:1" in _one_error_line(res)
    assert not (tmp_path / "r").exists()


_ORPHAN_SCRIPT = """
import os, sys, time
from bncbench.executors.local import JoblibExecutor

def busy(i):
    t = time.time()
    while time.time() - t < 90:
        pass
    return os.getpid()

if __name__ == "__main__":
    for r in JoblibExecutor(n_jobs=2).map_unordered(busy, range(4)):
        print(r, flush=True)
"""


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def _running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f.read().replace("\0", " ")
    except OSError:
        return ""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find the worker processes (Linux)")
def test_killing_only_the_main_process_ends_its_joblib_workers(tmp_path):
    """issue #36: kill -9 of the run's process alone; its loky workers must not go on computing."""
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN_SCRIPT)
    main = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path)
    workers: list[int] = []
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(workers) < 2:
            workers = [p for p in _children(main.pid) if "popen_loky" in _cmdline(p)]
            time.sleep(0.5)
        assert len(workers) == 2, "the loky workers did not start"
        time.sleep(3)  # the workers are inside their 90-second tasks
        os.kill(main.pid, signal.SIGKILL)
        main.wait()
        deadline = time.time() + 15
        while time.time() < deadline and any(_running(p) for p in workers):
            time.sleep(0.5)
        alive = [p for p in workers if _running(p)]
        assert not alive, f"workers {alive} still computing 15 s after their run was killed"
    finally:
        for p in [main.pid, *workers]:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
