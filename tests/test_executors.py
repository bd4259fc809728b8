"""Executors: slurm (submitit job arrays; its local cluster here) and dask against joblib."""

import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from importlib.util import find_spec

import numpy as np
import pytest
from conftest import run_cli

from bncbench.errors import BNCBenchError
from bncbench.executors import make_executor
from bncbench.registry import ParameterError
from bncbench.harness.protocol import TIME_METRICS
from bncbench.harness.store import load_predictions, load_results, record_files

needs_submitit = pytest.mark.skipif(find_spec("submitit") is None, reason="submitit is not installed (.[slurm])")
needs_dask = pytest.mark.skipif(find_spec("distributed") is None, reason="distributed is not installed (.[dask])")
needs_jobqueue = pytest.mark.skipif(find_spec("dask_jobqueue") is None or find_spec("distributed") is None,
                                    reason="dask-jobqueue is not installed (.[dask])")


def _no_slurm_cluster() -> str | None:
    """Why the tests that submit real SLURM jobs are skipped (None: they run)."""
    if os.environ.get("BNCBENCH_TEST_SLURM") != "1":
        return ("submits jobs to SLURM only with BNCBENCH_TEST_SLURM=1 (scripts/slurm-test-cluster starts a "
                "throwaway one-node cluster)")
    if find_spec("submitit") is None:
        return "submitit is not installed (.[slurm])"
    try:
        res = subprocess.run(["sinfo", "--noheader"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"no SLURM controller answers sinfo: {exc}"
    return None if res.returncode == 0 and res.stdout.strip() else f"sinfo: {res.stderr.strip()[:200]}"


NO_SLURM = _no_slurm_cluster()
needs_slurm_cluster = pytest.mark.skipif(NO_SLURM is not None, reason=NO_SLURM or "")

TIMING = [*TIME_METRICS, "path", "trace", "env.commit"]
RUN = ["run", "structure=nb", "dataset.names=[synth-nb,synth-tree]", "cv.rounds=2", "progress=false", "name=ex"]


def _local(tmp_path, **opts):
    return make_executor("slurm", cluster="local", folder=str(tmp_path / "sub" / "%j"), poll_seconds=0.1, **opts)


def _records(root):
    df = load_results(root)
    df = df.drop(columns=[c for c in TIMING if c in df]).sort_values(["dataset", "model", "round", "fold"])
    return df.reset_index(drop=True)


EXECUTORS = [
    pytest.param(["executor=slurm", "executor.cluster=local", "executor.tasks_per_job=3", "executor.max_array_size=2",
                  "executor.poll_seconds=0.2"], "8 task(s) submitted as 3 job(s) in 2 array(s)", marks=needs_submitit,
                 id="slurm"),
    pytest.param(["executor=slurm", "executor.cluster=slurm", "executor.mem_gb=1", "executor.tasks_per_job=3",
                  "executor.max_array_size=2", "executor.poll_seconds=0.5"],
                 "8 task(s) submitted as 3 job(s) in 2 array(s)", marks=needs_slurm_cluster, id="slurm-cluster"),
    pytest.param(["executor=dask", "executor.n_workers=2"], None, marks=needs_dask, id="dask"),
    pytest.param(["executor=dask", "executor.jobqueue=slurm", "executor.mem_gb=1", "executor.n_workers=2",
                  "executor.poll_seconds=0.5"], None, marks=[needs_slurm_cluster, needs_jobqueue], id="dask-slurm"),
]


@pytest.mark.parametrize("options, submitted", EXECUTORS)
def test_executors_write_the_records_joblib_writes(tmp_path, options, submitted):
    """The whole path through the CLI: the config group, the pickled run_task in other processes
    (slurm: batches of 3 tasks in arrays of 2 elements, logs in the results directory)."""
    a = run_cli([*RUN, f"results_dir={tmp_path / 'a'}"], cwd=tmp_path)
    b = run_cli([*RUN, f"results_dir={tmp_path / 'b'}", *options], cwd=tmp_path, timeout=600)
    assert a.returncode == 0 and b.returncode == 0, b.stderr[-3000:]
    ra, rb = _records(tmp_path / "a" / "ex"), _records(tmp_path / "b" / "ex")
    assert len(ra) == 8 and (rb["status"] == "ok").all()
    assert ra.equals(rb)
    for pa, pb in zip(sorted(record_files(tmp_path / "a" / "ex")), sorted(record_files(tmp_path / "b" / "ex"))):
        xa, xb = load_predictions(pa), load_predictions(pb)
        for k in xa:
            np.testing.assert_array_equal(xa[k], xb[k])
    if submitted:
        assert submitted in b.stderr
        logs = list((tmp_path / "b" / "ex" / "submitit").glob("*/*_log.out"))
        assert len({p.parent for p in logs}) == 3, "each job has its folder in the experiment's results directory"
    again = run_cli([*RUN, f"results_dir={tmp_path / 'b'}", *options], cwd=tmp_path)
    assert again.returncode == 0 and "submitted" not in again.stderr, again.stderr
    assert "8 total, 8 already done, 0 ran ok" in again.stdout + again.stderr, "a complete store runs nothing"


def _gather(executor, fn, items):
    got = []
    try:
        for r in executor.map_unordered(fn, items):
            got.append(r)
    except BNCBenchError as exc:
        return got, str(exc)
    return got, None


@needs_submitit
def test_results_of_jobs_that_ended_are_yielded_and_the_others_are_one_error(tmp_path):
    got, err = _gather(_local(tmp_path), math.sqrt, [4.0, -1.0, 9.0])
    assert sorted(got) == [2.0, 3.0]
    assert err is not None and "\n" not in err
    assert "1 of 3 job(s) ended without returning (1 task(s), pending unless they wrote their records)" in err
    assert "ValueError: math domain error" in err and "_log.err" in err


@needs_dask
def test_dask_on_a_running_scheduler_yields_what_ended_and_one_error_line():
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        got, err = _gather(make_executor("dask", address=cluster.scheduler_address), math.sqrt, [4.0, -1.0, 9.0])
    assert sorted(got) == [2.0, 3.0]
    assert err == ("executor dask: 1 of 3 task(s) ended without returning; first: ValueError: math domain "
                   "error; the same command reruns them")


@needs_submitit
def test_a_job_killed_without_output_names_its_state(tmp_path):
    with pytest.raises(BNCBenchError, match=r"1 of 1 job\(s\).*first: job \S+ \(FINISHED\): no result") as info:
        list(_local(tmp_path).map_unordered(os._exit, [3]))
    assert "\n" not in str(info.value)


@needs_slurm_cluster
def test_on_a_slurm_cluster_a_failed_or_killed_job_is_one_line(tmp_path):
    """Real sbatch jobs: an exception, and a process that dies without its result (on a cluster
    without accounting only squeue tells that it ended)."""
    ex = make_executor("slurm", cluster="slurm", folder=str(tmp_path / "sub" / "%j"), poll_seconds=0.5, mem_gb=1.0)
    got, err = _gather(ex, math.sqrt, [4.0, -1.0, 9.0])
    assert sorted(got) == [2.0, 3.0]
    assert "1 of 3 job(s) ended without returning" in err and "ValueError: math domain error" in err
    out = []  # in a thread: without the squeue fallback this waits forever
    waiter = threading.Thread(target=lambda: out.append(_gather(ex, os._exit, [3])), daemon=True)
    waiter.start()
    waiter.join(timeout=300)
    assert out, "the runner still waits for a job that ended without its result"
    got, err = out[0]
    assert got == [] and "1 of 1 job(s) ended without returning (1 task(s)" in err and "no result" in err
    assert "\n" not in err


class _Job:
    def __init__(self, job_id, state="UNKNOWN"):
        self.job_id, self.state, self.finished = job_id, state, False

    def done(self):
        return self.finished


@needs_submitit
def test_jobs_count_as_ended_once_squeue_has_missed_them_for_the_grace_time(monkeypatch):
    from bncbench.executors import slurm, slurm_jobs

    listed = [{"7_0", "7_1"}]
    calls = []
    now = [0.0]
    monkeypatch.setattr(slurm_jobs, "queued", lambda: calls.append(1) or listed[0])
    jobs = {0: _Job("7_0"), 1: _Job("7_1"), 2: _Job("7_2"), 3: _Job("8", state="RUNNING")}
    watch = slurm_jobs.Vanished(grace=60.0, clock=lambda: now[0])
    assert slurm._vanished(watch, jobs) == [] and len(calls) == 1  # 7_2 missed once
    now[0] = 59.0
    assert slurm._vanished(watch, jobs) == []  # missed again, but within the grace time
    now[0] = 60.0
    assert slurm._vanished(watch, jobs) == [2]
    listed[0] = {"7_0"}
    assert slurm._vanished(watch, jobs) == [2]  # 7_1 missed once
    now[0] = 200.0
    jobs[1].finished = True  # its result showed in between: it ended with one
    assert slurm._vanished(watch, jobs) == [2]
    listed[0] = None  # squeue failed: decides nothing, and the count starts again
    assert slurm._vanished(watch, jobs) == []
    listed[0] = {"7_0"}
    assert slurm._vanished(watch, jobs) == []
    now[0] = 260.0
    assert slurm._vanished(watch, jobs) == [2]
    calls.clear()
    assert slurm._vanished(watch, {3: jobs[3]}) == [] and calls == [], "jobs with a sacct state never ask squeue"


def _slow_unless_marked(args):
    """A task of :func:`test_an_element_at_its_time_limit_is_requeued_and_goes_on`: task 2 outlasts the
    element's time limit the first time it runs."""
    marker, x = args
    with open(marker + ".calls", "a") as fh:
        fh.write(f"{x}\n")
    if x == 2 and not os.path.exists(marker):
        open(marker, "w").close()
        time.sleep(120)
    return x * x


@needs_submitit
def test_an_element_at_its_time_limit_is_requeued_and_goes_on(tmp_path, monkeypatch):
    """SLURM signals an element before its time limit; submitit requeues what RunBatch.checkpoint
    gives: the same batch, going on with its first task that had not returned (its fit from its
    checkpoint, tests/test_fit_checkpoint.py). Here submitit's local processes, signalled 30 s
    before a 60 s limit: a requeued element has 30 s to start Python, import and finish. (With 10 s,
    20 s before a 30 s limit, two CI runs side by side beside a long fit, a load of 5-6 on 2 cores,
    both failed here on November 28: the element timed out and left no result.)"""
    import submitit

    from bncbench.executors.slurm import RunBatch

    here = os.path.dirname(__file__)  # the job unpickles this module's task
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    ex = submitit.LocalExecutor(folder=tmp_path / "sub", max_num_timeout=2)
    ex.update_parameters(timeout_min=1.0, signal_delay_s=30)
    marker = str(tmp_path / "marker")
    job = ex.submit(RunBatch(_slow_unless_marked), [(marker, 1), (marker, 2), (marker, 3)])
    assert job.result() == [1, 4, 9]
    assert open(marker + ".calls").read().split() == ["1", "2", "2", "3"]  # task 1 ran once, task 2 again


@needs_submitit
def test_batches_keep_the_order_and_every_task():
    ex = make_executor("slurm", cluster="local", tasks_per_job=3)
    assert ex.batches(list(range(7))) == [[0, 1, 2], [3, 4, 5], [6]]
    assert make_executor("slurm", cluster="local").batches([5, 6]) == [[5], [6]]
    assert list(ex.map_unordered(math.sqrt, [])) == []


@needs_submitit
@pytest.mark.parametrize("opts, message", [
    ({"cluster": "pbs"}, "'cluster' parameter of executor 'slurm' must be a str among ['slurm', 'local']"),
    ({"cluster": "local", "timeout_min": 0}, "'timeout_min' parameter of executor 'slurm' must be an int in the range [1, inf)"),
    ({"cluster": "local", "sbatch": "account=x"}, "'sbatch' parameter of executor 'slurm' must be an instance of 'dict'"),
    ({"cluster": "local", "mem_gb": -1.0}, "'mem_gb' parameter of executor 'slurm' must be a finite float >= 0.0"),
])
def test_options_out_of_their_declared_range_are_refused(opts, message):
    with pytest.raises(ParameterError) as info:
        make_executor("slurm", **opts)
    assert message in str(info.value)


def test_the_signal_before_the_time_limit_must_come_before_it():
    with pytest.raises(BNCBenchError, match=r"signal_delay_s \(300\) must be shorter than the time limit, "
                                            r"timeout_min \(5\) minutes"):
        make_executor("slurm", timeout_min=5)


@needs_dask
def test_dask_options_are_checked_by_the_registry():
    with pytest.raises(ParameterError) as info:
        make_executor("dask", n_workers=0)
    assert "'n_workers' parameter of executor 'dask' must be an int in the range [1, inf)" in str(info.value)
    with pytest.raises(ParameterError) as info:
        make_executor("dask", address=8786)
    assert "'address' parameter of executor 'dask' must be an instance of 'str' or None" in str(info.value)


def test_joblib_options_are_checked_by_the_registry_too():
    with pytest.raises(ParameterError, match="'n_jobs' parameter of executor 'joblib' must be an instance of 'int'"):
        make_executor("joblib", n_jobs="two")
    with pytest.raises(BNCBenchError, match="n_jobs must be >= 1 or -1, got 0"):
        make_executor("joblib", n_jobs=0)


@needs_submitit
def test_slurm_executor_without_sbatch_is_one_line_before_any_task(tmp_path):
    if shutil.which("sbatch"):
        pytest.skip("sbatch is on this machine: executor=slurm would submit real jobs")
    res = run_cli([*RUN, f"results_dir={tmp_path / 'r'}", "executor=slurm", "executor.partition=short"], cwd=tmp_path)
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "no sbatch" in lines[0] and "executor.cluster=local" in lines[0], res.stderr
    assert not (tmp_path / "r").exists()


@needs_submitit
def test_a_bad_executor_option_on_the_command_line_is_one_line(tmp_path):
    res = run_cli([*RUN, f"results_dir={tmp_path / 'r'}", "executor=slurm", "executor.cluster=local",
                   "executor.tasks_per_job=0"], cwd=tmp_path)
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "'tasks_per_job' parameter of executor 'slurm'" in lines[0], res.stderr
    assert not (tmp_path / "r").exists()


@needs_submitit
def test_options_reach_the_sbatch_script(tmp_path, monkeypatch):
    """A stand-in ``sbatch`` keeps the script submitit hands it: the options are its #SBATCH lines."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "sbatch"
    fake.write_text(f'#!/bin/sh\ncp "$1" {tmp_path}/script.sh\necho "Submitted batch job 4242"\n')
    fake.chmod(0o755)
    (bin_dir / "srun").write_text("#!/bin/sh\nexit 0\n")  # submitit runs the job's tasks with srun: never here
    (bin_dir / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    ex = make_executor("slurm", folder=str(tmp_path / "sub" / "%j"), partition="long", timeout_min=600,
                       mem_gb=8.0, tasks_per_job=2, array_parallelism=2, sbatch={"account": "me"},
                       setup=["source /x/venv/bin/activate"], signal_delay_s=240, max_requeue=7)
    jobs = ex._submitter().map_array(math.sqrt, ex.batches([1.0, 4.0, 9.0, 16.0, 25.0]))
    assert [j.job_id for j in jobs] == ["4242_0", "4242_1", "4242_2"]
    script = (tmp_path / "script.sh").read_text()
    for line in ["#SBATCH --partition=long", "#SBATCH --array=0-2%2", "#SBATCH --time=600", "#SBATCH --mem=8GB",
                 "#SBATCH --cpus-per-task=1", "#SBATCH --account=me", "#SBATCH --job-name=bncbench",
                 "#SBATCH --signal=USR2@240", "source /x/venv/bin/activate"]:
        assert line in script.splitlines(), (line, script)
    assert ex._submitter()._executor.max_num_timeout == 7  # times a timed-out element is requeued


def _fake_sbatch(tmp_path, monkeypatch, test_only: str) -> None:
    """A stand-in ``sbatch`` on PATH: ``--test-only`` runs the shell line ``test_only`` after keeping the
    script it was given; a real submission fails (no worker must start)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "sbatch"
    fake.write_text(f'#!/bin/sh\nif [ "$1" = --test-only ]; then cp "$2" {tmp_path}/script.sh; {test_only}; fi\n'
                    'echo "sbatch: error: not a real cluster" >&2; exit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


@needs_jobqueue
def test_dask_jobqueue_options_reach_the_worker_job_script(tmp_path, monkeypatch):
    from bncbench.executors.jobqueue import start_cluster

    _fake_sbatch(tmp_path, monkeypatch, 'echo "sbatch: Job 3 to start at now" >&2; exit 0')
    ex = make_executor("dask", jobqueue="slurm", partition="long", timeout_min=4330, mem_gb=8.0, n_workers=30,
                       sbatch={"account": "me"}, setup=["source /x/venv/bin/activate"], log_dir=str(tmp_path / "logs"))
    cluster = start_cluster(ex, n_tasks=130)
    try:
        assert cluster.job_script() == (tmp_path / "script.sh").read_text(), "the script tried is the one submitted"
    finally:
        cluster.close()
    script = (tmp_path / "script.sh").read_text().splitlines()
    for line in ["#SBATCH -p long", "#SBATCH -t 72:10:00", "#SBATCH --mem=8G", "#SBATCH --cpus-per-task=1",
                 "#SBATCH --account=me", "#SBATCH -J bncbench-dask", f"#SBATCH -e {tmp_path}/logs/bncbench-dask-%J.err",
                 "source /x/venv/bin/activate"]:
        assert line in script, (line, script)
    worker = [ln for ln in script if "distributed.cli.dask_worker" in ln]
    assert len(worker) == 1 and "--nthreads 1" in worker[0], "one single-threaded worker per job"
    assert "--memory-limit 8.00GiB" in worker[0], "the worker's limit is the job's memory"


@needs_jobqueue
def test_dask_jobqueue_refused_by_sbatch_is_one_line_before_any_task(tmp_path, monkeypatch):
    _fake_sbatch(tmp_path, monkeypatch, 'echo "sbatch: error: invalid partition specified: nosuch" >&2; '
                 'echo "allocation failure: Invalid partition name specified" >&2; exit 1')
    ran = tmp_path / "ran"
    ex = make_executor("dask", jobqueue="slurm", partition="nosuch", mem_gb=1.0, log_dir=str(tmp_path / "logs"))
    got, err = _gather(ex, ran.mkdir, [None])
    assert got == [] and not ran.exists()
    assert err == "executor dask: sbatch refuses the worker job: invalid partition specified: nosuch"
    res = run_cli([*RUN, f"results_dir={tmp_path / 'r'}", "executor=dask", "executor.jobqueue=slurm",
                   "executor.mem_gb=1", "executor.partition=nosuch"], cwd=tmp_path)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and lines[-1].endswith("sbatch refuses the worker job: invalid partition specified: "
                                                      "nosuch"), res.stderr
    assert not list((tmp_path / "r").rglob("*.json")), "no record"


@needs_jobqueue
@pytest.mark.parametrize("opts, message", [
    ({"jobqueue": "slurm"}, "jobqueue=slurm needs executor.mem_gb"),
    ({"jobqueue": "slurm", "mem_gb": 1.0, "address": "tcp://h:8786"}, "address (a running scheduler) and jobqueue"),
    ({"jobqueue": "pbs"}, "'jobqueue' parameter of executor 'dask' must be a str among ['slurm'] or None"),
])
def test_dask_jobqueue_options_are_checked_before_any_task(opts, message):
    with pytest.raises(BNCBenchError, match=re.escape(message)):
        make_executor("dask", **opts)


class _WorkerJob:
    def __init__(self, job_id=None, refused=None):
        self.job_id, self.refused = job_id, refused


class _Cluster:
    def __init__(self, **jobs):
        self.workers = jobs


@needs_jobqueue
def test_a_jobqueue_run_stops_once_no_worker_can_start(tmp_path, monkeypatch, capsys):
    """A job that left the queue without its worker ever registering (or that sbatch refused) is lost: one
    line; the run raises at the second look in a row with no worker registered and none waiting."""
    from bncbench.executors import jobqueue, slurm_jobs

    listed = [{"41", "42", "43"}]
    now = [0.0]
    monkeypatch.setattr(slurm_jobs, "queued", lambda: listed[0])
    (tmp_path / "bncbench-dask-41.err").write_text("line 1\nsource: no such file: /x/venv/bin/activate\n")
    (tmp_path / "bncbench-dask-42.err").write_text("distributed.worker - INFO -  Registered to: tcp://h:1\n")
    cluster = _Cluster(a=_WorkerJob("41"), b=_WorkerJob("42"), c=_WorkerJob("43"))
    stalled = jobqueue.Stalled(cluster, str(tmp_path), grace=60.0, clock=lambda: now[0])
    stalled(set())
    listed[0] = {"43"}  # 41 and 42 left the queue; 42's worker had registered (its log says so)
    stalled(set())
    now[0] = 60.0
    stalled(set())  # 41 lost: one line; 43 still queued
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "worker job 41 ended before its worker reached the scheduler" in err
    assert "bncbench-dask-41.err: source: no such file: /x/venv/bin/activate" in err
    listed[0] = set()  # 43 left too, after its worker registered
    stalled({"c"})
    stalled(set())  # nothing registered, nothing waiting, one lost: the first look
    with pytest.raises(BNCBenchError, match=r"^executor dask: no worker can start: worker job 41 ended before .*"
                                            r"; 1 worker job\(s\) lost$"):
        stalled(set())
    assert "42" not in capsys.readouterr().err, "a worker that registered and ended is not lost: it is replaced"

    refused = jobqueue.Stalled(_Cluster(a=_WorkerJob(refused="QOSMaxSubmitJobPerUserLimit")), str(tmp_path))
    refused({"b"})  # another worker runs: go on
    refused(set())
    with pytest.raises(BNCBenchError, match="no worker can start: sbatch refused a worker job: QOSMaxSubmitJob"):
        refused(set())


@needs_slurm_cluster
@needs_jobqueue
def test_on_a_slurm_cluster_dask_workers_that_cannot_start_are_one_line(tmp_path, monkeypatch):
    """Real sbatch: a worker job whose setup fails ends before its worker registers; dask-jobqueue alone
    waits for it for ever."""
    from bncbench.executors import jobqueue

    monkeypatch.setattr(jobqueue, "VANISHED_GRACE", 1.0)
    ex = make_executor("dask", jobqueue="slurm", mem_gb=1.0, setup=["exit 3"], poll_seconds=0.5,
                       log_dir=str(tmp_path / "logs"))
    out = []
    waiter = threading.Thread(target=lambda: out.append(_gather(ex, math.sqrt, [4.0, 9.0])), daemon=True)
    waiter.start()
    waiter.join(timeout=300)
    assert out, "the run still waits for a worker that will never come"
    got, err = out[0]
    assert got == [] and err.startswith("executor dask: no worker can start: worker job ") and "\n" not in err
    ex = make_executor("dask", jobqueue="slurm", mem_gb=1.0, poll_seconds=0.5, log_dir=str(tmp_path / "logs"))
    got, err = _gather(ex, math.sqrt, [4.0, -1.0, 9.0])
    assert sorted(got) == [2.0, 3.0] and "1 of 3 task(s) ended without returning" in err


@needs_jobqueue
def test_ctrl_c_stays_an_interrupt_once_dask_jobqueue_is_imported(tmp_path):
    """dask_jobqueue's import turns SIGINT into sys.exit(): Ctrl-C would end a run with status 0."""
    code = ("import signal, sys\n"
            "from bncbench.errors import BNCBenchError\n"
            "from bncbench.executors import make_executor\n"
            "before = signal.getsignal(signal.SIGINT)\n"
            "try:\n"
            "    make_executor('dask', jobqueue='slurm', mem_gb=1.0)\n"
            "except BNCBenchError:\n"
            "    pass  # no sbatch here: the check imported dask_jobqueue all the same\n"
            "assert 'dask_jobqueue' in sys.modules\n"
            "print(signal.getsignal(signal.SIGINT) is before)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.strip() == "True", res.stdout + res.stderr[-2000:]


STOPPABLE = [
    # stop_grace=0: the workers are closed without waiting for their fits' saves (a wait of up to a minute for fits
    # still setting up; the saves are test_fit_checkpoint's test_a_run_with_workers_stopped_by_sigterm_...)
    pytest.param(["executor=joblib", "executor.n_jobs=2", "stop_grace=0"], id="joblib"),
    pytest.param(["executor=slurm", "executor.cluster=local", "executor.poll_seconds=0.2"], marks=needs_submitit,
                 id="slurm-local"),
    pytest.param(["executor=dask", "executor.n_workers=2"], marks=needs_dask, id="dask"),
]


@pytest.mark.skipif(find_spec("psutil") is None, reason="psutil is not installed (it comes with distributed)")
@pytest.mark.parametrize("options", STOPPABLE)
def test_a_run_stopped_by_sigterm_leaves_no_process_computing(tmp_path, options):
    """``kill`` (or a batch system ending the job the run is in) stops a run as Ctrl-C does: the
    jobs it submitted are cancelled and its workers closed, not left computing for nobody (SIGTERM's
    default would kill the runner alone). One line, exit 143, no record written."""
    import psutil

    cmd = [sys.executable, "-m", "bncbench", "run", "structure=anje", "structure.n=3", "param=weighted",
           "dataset.names=[sklearn-digits]", "cv.rounds=1", "progress=false", "name=stop",
           f"results_dir={tmp_path}", *options]
    # (SIGINT as in a terminal: a shell's background jobs ignore it, and so would submitit's local
    # jobs, which it cancels with SIGINT; their tracebacks then come on the run's stderr too)
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MPLBACKEND": "Agg"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    runner, seen = psutil.Process(proc.pid), {}
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:  # until the workers have computed for a while
        for p in runner.children(recursive=True):
            seen.setdefault(p.pid, p)
        busy = 0.0
        for p in seen.values():
            with contextlib.suppress(psutil.Error):
                busy += p.cpu_times().user
        if busy > 4:
            break
        time.sleep(0.5)
    assert proc.poll() is None and seen, "the run ended, or started no worker, before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert "bncbench: stopped by SIGTERM (finished tasks are saved; rerun to resume)" in err.splitlines(), err[-3000:]

    def computing(p):
        with contextlib.suppress(psutil.Error):
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        return False

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(computing(p) for p in seen.values()):
        time.sleep(0.5)
    assert [p.pid for p in seen.values() if computing(p)] == []
    assert record_files(tmp_path / "stop") == []
