"""Dask workers as SLURM jobs (dask-jobqueue), for ``executor=dask jobqueue=slurm``: started, checked, watched.

dask-jobqueue's ``SLURMCluster`` submits one job per worker and, adapting, replaces a worker whose
job ended. Two failures it only logs, and a run would wait for ever on them: ``sbatch`` refusing a
worker job, and a worker job that ends before its worker reaches the scheduler (a setup line that
fails, no Python environment on the node). So the job script is first tried with
``sbatch --test-only`` (a refused option is one line before any task), refused submissions are
recorded instead of logged (:func:`job_class`), and :class:`Stalled` stops the run once nothing can
progress any more.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from bncbench.errors import BNCBenchError
from bncbench.executors.executor import require
from bncbench.executors.slurm_jobs import VANISHED_GRACE, Vanished

JOB_NAME = "bncbench-dask"
"""The worker jobs' SLURM name; their logs are ``<log_dir>/bncbench-dask-<job id>.err`` (and ``.out``)."""


def walltime(minutes: int) -> str:
    """``minutes`` as SLURM's ``HH:MM:00`` (hours may exceed 24).

    Parameters
    ----------
    minutes : int
        The time limit.

    Returns
    -------
    str
        E.g. ``"72:00:00"`` for 4320.
    """
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00"


def start_cluster(ex, n_tasks: int):
    """A ``SLURMCluster`` of single-threaded workers with ``ex``'s options, tried and adapting.

    Parameters
    ----------
    ex : DaskExecutor
        Its ``partition``, ``timeout_min``, ``mem_gb``, ``sbatch``, ``setup``, ``log_dir``,
        ``interface`` and ``n_workers`` (the most worker jobs at once).
    n_tasks : int
        The run's tasks: no more workers than that.

    Returns
    -------
    dask_jobqueue.SLURMCluster
        Adapting between 0 and ``min(n_workers, n_tasks)`` worker jobs.

    Raises
    ------
    BNCBenchError
        If ``sbatch --test-only`` refuses the worker job (the cluster is closed first).
    """
    Path(ex.log_dir).mkdir(parents=True, exist_ok=True)
    cluster = _cluster_class()(
        cores=1, processes=1, memory=f"{ex.mem_gb}GiB", walltime=walltime(ex.timeout_min), queue=ex.partition,
        job_name=JOB_NAME, log_directory=str(ex.log_dir), job_script_prologue=list(ex.setup),
        job_extra_directives=[f"--{k}={v}" for k, v in ex.sbatch.items()], interface=ex.interface)
    try:
        try_script(cluster.job_script())
    except BaseException:
        cluster.close()
        raise
    cluster.adapt(minimum_jobs=0, maximum_jobs=min(ex.n_workers, n_tasks))
    return cluster


def try_script(script: str) -> None:
    """``sbatch --test-only`` on a worker's job script: SLURM's verdict without submitting.

    Parameters
    ----------
    script : str
        The job script (``SLURMCluster.job_script()``).

    Raises
    ------
    BNCBenchError
        One line with sbatch's reason if it refuses (unknown partition, account or QOS, more time
        or memory than the partition allows).
    """
    with tempfile.NamedTemporaryFile("w", suffix=".sh", prefix="bncbench-dask-") as f:
        f.write(script)
        f.flush()
        try:
            res = subprocess.run(["sbatch", "--test-only", f.name], capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            raise BNCBenchError(f"executor dask: cannot run sbatch: {exc}") from None
    if res.returncode != 0:
        raise BNCBenchError(f"executor dask: sbatch refuses the worker job: {sbatch_reason(res.stderr)}")


def sbatch_reason(stderr: str) -> str:
    """The informative line of sbatch's complaint: its last ``error:`` line, else its last line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln.split("error:", 1)[1].strip() for ln in lines if "error:" in ln]
    return errors[-1] if errors else (lines[-1] if lines else "no reason given")


def load() -> None:
    """Import dask-jobqueue without the SIGINT handler its import installs.

    ``dask_jobqueue.runner`` sets ``signal.signal(SIGINT, lambda *_: sys.exit())`` when imported:
    Ctrl-C would then raise ``SystemExit()`` and end the run with status 0, as if it had
    succeeded. The handler in place before the import is put back.

    Raises
    ------
    BNCBenchError
        If dask-jobqueue is not installed (one line naming the extra).
    """
    import signal
    import threading

    main = threading.current_thread() is threading.main_thread()  # handlers are the main thread's only
    previous = signal.getsignal(signal.SIGINT) if main else None
    try:
        require("dask_jobqueue", "dask", "dask")
    finally:
        if main and previous is not None and signal.getsignal(signal.SIGINT) is not previous:
            signal.signal(signal.SIGINT, previous)


@functools.cache
def _cluster_class():
    """``SLURMCluster`` whose jobs record a refused submission (:func:`job_class`) instead of raising it."""
    load()
    from dask_jobqueue import SLURMCluster

    return type("BNCBenchSLURMCluster", (SLURMCluster,), {"job_cls": job_class()})


@functools.cache
def job_class():
    """dask-jobqueue's ``SLURMJob``, but a refused ``sbatch`` leaves ``refused`` (sbatch's reason) and no job id.

    dask-jobqueue raises the refusal inside the cluster's event loop, where it is logged as a
    traceback and the run waits for a worker that will never come; recorded, :class:`Stalled`
    reports it.
    """
    from dask_jobqueue.slurm import SLURMJob

    class Job(SLURMJob):
        refused: str | None = None

        async def _submit_job(self, script_filename):
            try:
                return await super()._submit_job(script_filename)
            except RuntimeError as exc:  # dask-jobqueue's "Command exited with non-zero exit code", stderr inside
                self.refused = sbatch_reason(str(exc).split("stderr:", 1)[-1])
                return ""

        def _job_id_from_submit_output(self, out):
            return None if self.refused else super()._job_id_from_submit_output(out)

    return Job


class Stalled:
    """Stops a run on a ``SLURMCluster`` that can no longer progress.

    Called once per poll with the names of the workers registered with the scheduler. A worker
    job is *lost* if ``sbatch`` refused it, or if it left the queue (``squeue`` has missed it for
    :data:`~bncbench.executors.slurm_jobs.VANISHED_GRACE` seconds) without its worker ever having
    registered (seen at a poll, or ``Registered to`` in its log). Each lost job is one line on
    stderr; the run goes on while a worker is registered or another job is queued or starting,
    and raises once, at two polls in a row, none is and some job was lost (a worker that ran and
    ended, at its time limit say, is not lost: the cluster replaces it).

    Parameters
    ----------
    cluster : SLURMCluster
        From :func:`start_cluster`.
    log_dir : str
        The worker jobs' log directory.
    grace : float, optional
        Seconds a job must be missing from ``squeue``; :data:`VANISHED_GRACE` when None.
    clock : callable, default=time.monotonic
        Seconds (tests pass their own).
    """

    def __init__(self, cluster, log_dir: str, grace: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cluster, self.log_dir = cluster, Path(log_dir)
        self.vanished = Vanished(VANISHED_GRACE if grace is None else grace, clock)
        self.seen: set[str] = set()
        self.ended: set[str] = set()
        self.lost: dict[str, str] = {}
        self.idle = 0

    def __call__(self, registered: set[str]) -> None:
        """Look at the jobs once more.

        Parameters
        ----------
        registered : set of str
            Names of the workers the scheduler has now.

        Raises
        ------
        BNCBenchError
            At the second poll in a row with no worker registered, no job waiting or starting, and
            a lost job: one line with the first lost job's reason.
        """
        self.seen |= registered
        try:
            jobs = dict(self.cluster.workers)
        except RuntimeError:  # changed while copied (the cluster's own thread): look again next time
            return
        for name, job in jobs.items():
            if getattr(job, "refused", None) and name not in self.lost:
                self._lose(name, f"sbatch refused a worker job: {job.refused}")
        # refused jobs have no job id; a job lost after it left the queue is in ``ended``
        waiting = {name: job.job_id for name, job in jobs.items()
                   if job.job_id and name not in self.seen and name not in self.ended}
        for name in self.vanished(waiting):
            self.ended.add(name)
            log = self.log_dir / f"{JOB_NAME}-{waiting[name]}.err"
            lines = _log_lines(log)
            if lines is None or not any("Registered to" in ln for ln in lines):
                last = "(no log)" if lines is None else lines[-1][:300] if lines else "(empty)"
                self._lose(name, f"worker job {waiting[name]} ended before its worker reached the scheduler "
                                 f"(a setup line, the Python environment on the node?); its log: {log}: {last}")
        stuck = not registered and not set(waiting) - self.ended and self.lost
        self.idle = self.idle + 1 if stuck else 0
        jobs = job = None  # the traceback keeps this frame: the jobs must not outlive the cluster's close
        if self.idle >= 2:
            raise BNCBenchError(f"executor dask: no worker can start: {next(iter(self.lost.values()))}; "
                                f"{len(self.lost)} worker job(s) lost")

    def _lose(self, name: str, why: str) -> None:
        self.lost[name] = why
        print(f"bncbench: {why}", file=sys.stderr, flush=True)


def _log_lines(log: Path) -> list[str] | None:
    """The non-blank lines of a worker job's log, stripped; None if it cannot be read."""
    try:
        return [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return None
