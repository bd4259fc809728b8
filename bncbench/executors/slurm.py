"""The ``slurm`` executor: the runner's tasks as SLURM job arrays, submitted through submitit.

The runner stays on the login node (in ``tmux``, ``screen`` or a small job of its own): it plans
the pending tasks, submits them as job arrays and waits, while every array element evaluates its
tasks and writes their records into the results store itself, as the local workers do. So the
store, the data directory (``$BNCBENCH_DATA_DIR``), the cache and the Python environment must be
on a file system the compute nodes share. A job that ends without its records (time limit, memory,
a node lost) leaves its tasks pending; the runner reports it in one line once every other job has
ended, and the same command submits only what is still missing. Stopping the runner (Ctrl-C)
cancels the jobs it submitted; records already written stay.

``cluster=local`` runs the same submission as local subprocesses (submitit's local executor):
a way to try a configuration, pickling included, before a cluster sees it.

submitit learns that a job ended from its result file or from ``sacct``. On a cluster without
job accounting ``sacct`` says nothing, and a job killed before it wrote its result (memory, a lost
node) would be waited for forever; so a job whose state stays unknown and that ``squeue`` has no
longer listed for a minute counts as ended without returning
(:class:`~bncbench.executors.slurm_jobs.Vanished`).
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Iterable, Iterator

from bncbench.components import EXECUTORS
from bncbench.errors import BNCBenchError
from bncbench.executors.executor import R, T, in_worker, require
from bncbench.executors.slurm_jobs import JOB_OPTIONS, VANISHED_GRACE, Vanished, require_commands
from bncbench.registry import Hyperparameter, integer, options

CLUSTERS = ("slurm", "local")


def _check(values: dict) -> None:
    """Before any task: the signal before the time limit, submitit importable, and ``sbatch`` and ``srun``
    here for ``cluster=slurm``."""
    if values["cluster"] == "slurm" and values["signal_delay_s"] >= 60 * values["timeout_min"]:
        raise BNCBenchError(f"executor slurm: signal_delay_s ({values['signal_delay_s']}) must be shorter than "
                            f"the time limit, timeout_min ({values['timeout_min']}) minutes")
    require("submitit", "slurm", "slurm")
    if values["cluster"] == "slurm":
        require_commands("slurm", ("sbatch", "srun"),
                         " (executor.cluster=local tries the same submission with local processes)")


class RunBatch:
    """What one array element runs: ``fn`` on each task of its batch, in order; requeued at its time limit.

    SLURM signals an element ``signal_delay_s`` seconds before its time limit; submitit then calls
    :meth:`checkpoint`, requeues the element (at most ``max_requeue`` times) and exits. The
    requeued element goes on with the first task of its batch that had not returned, and that
    task's fit goes on from its last checkpoint (the runner's ``checkpoint_every``,
    :mod:`bncbench.engine.checkpoint`): a fold longer than the cluster's time limit still ends.

    Parameters
    ----------
    fn : callable
        A picklable function of one task (the runner's ``run_task``).

    Attributes
    ----------
    done : list
        The results of the batch's tasks that returned, in order (pickled with the requeued element).
    """

    def __init__(self, fn: Callable[[T], R]) -> None:
        self.fn = fn
        self.done: list = []

    def __call__(self, batch: list) -> list:
        """Run the tasks of ``batch`` not yet done; return every task's result, in order.

        Parameters
        ----------
        batch : list
            The element's tasks.

        Returns
        -------
        list
            ``fn(task)`` for every task of ``batch``.
        """
        for task in batch[len(self.done):]:
            self.done.append(in_worker(self.fn, task))
        return list(self.done)

    def checkpoint(self, batch: list):
        """What submitit requeues: this batch, with the results so far (called on the node, at the signal).

        Parameters
        ----------
        batch : list
            The element's tasks.

        Returns
        -------
        submitit.helpers.DelayedSubmission
        """
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self, batch)


@EXECUTORS.register("slurm", label="", check=_check, hyperparameters=[
    Hyperparameter("cluster", "slurm", [options(CLUSTERS)],
                   "slurm: sbatch job arrays; local: the same submission as local processes", str),
    Hyperparameter("folder", "submitit", [str], "submission scripts, pickles and logs (%j: the job id)", str),
    Hyperparameter("cpus_per_task", 1, [integer(1)], "CPUs per array element (a fit uses one)", int),
    Hyperparameter("tasks_per_job", 1, [integer(1)], "tasks one array element runs, one after another", int),
    Hyperparameter("array_parallelism", 256, [integer(1)], "array elements running at once (sbatch --array %)",
                   int),
    Hyperparameter("max_array_size", 1000, [integer(1)],
                   "elements per array (below the cluster's MaxArraySize); more tasks: more arrays", int),
    Hyperparameter("max_requeue", 3, [integer(0)],
                   "times an element at its time limit is requeued to go on (its fit from its checkpoint)", int),
    Hyperparameter("signal_delay_s", 300, [integer(1)],
                   "seconds before the time limit an element is told to requeue (> one objective evaluation)", int),
    *JOB_OPTIONS,
])
class SlurmExecutor:
    """Tasks as SLURM job arrays (submitit); the records are written by the jobs, on a shared file system.

    Made by :func:`bncbench.executors.make_executor`, which fills in the registered defaults
    (``python -m bncbench components``).

    Parameters
    ----------
    cluster : {"slurm", "local"}
        ``slurm`` submits with ``sbatch``; ``local`` runs the same submission as local processes.
    folder : str
        Where submitit writes each job's script, pickles and logs (relative to the working
        directory; ``conf/executor/slurm.yaml`` puts it in the experiment's results directory).
    partition : str or None
        The SLURM partition; the cluster's default when None.
    timeout_min : int
        Time limit of one array element (its whole batch), in minutes.
    cpus_per_task : int
        CPUs of one array element. Fits are single-threaded (numba kernels, BLAS at one thread).
    mem_gb : float or None
        Memory of one array element, GB; the cluster's default when None.
    tasks_per_job : int
        Tasks one array element runs one after another: a few seconds of scheduling per element
        are worth sharing among short tasks.
    array_parallelism : int
        Array elements running at once (``--array=0-N%K``).
    max_array_size : int
        Elements per array; more batches are submitted as several arrays (SLURM's MaxArraySize
        is 1001 unless the site raised it).
    max_requeue : int
        Times an element that reaches its time limit is requeued (:class:`RunBatch`); 0: never.
    signal_delay_s : int
        Seconds before its time limit that SLURM signals an element to requeue itself. The signal
        is handled between two evaluations of the objective (the compiled kernels hold the
        process), so this must exceed one: 116 s for DBL³ on one-hot covertype.
    sbatch : dict
        More ``#SBATCH`` options, e.g. ``{"account": "x", "qos": "y"}``.
    setup : list of str
        Shell lines each job runs before Python (``module load ...``, ``source venv/bin/activate``).
    poll_seconds : float
        Seconds between two looks at the jobs' states.
    """

    def __init__(self, *, cluster: str, folder: str, partition: str | None, timeout_min: int, cpus_per_task: int,
                 mem_gb: float | None, tasks_per_job: int, array_parallelism: int, max_array_size: int,
                 max_requeue: int, signal_delay_s: int, sbatch: dict, setup: list, poll_seconds: float) -> None:
        """Store the options (:func:`bncbench.executors.make_executor` validates them first)."""
        self.cluster = cluster
        self.folder = folder
        self.partition = partition
        self.timeout_min = int(timeout_min)
        self.cpus_per_task = int(cpus_per_task)
        self.mem_gb = mem_gb
        self.tasks_per_job = int(tasks_per_job)
        self.array_parallelism = int(array_parallelism)
        self.max_array_size = int(max_array_size)
        self.max_requeue = int(max_requeue)
        self.signal_delay_s = int(signal_delay_s)
        self.sbatch = dict(sbatch)
        self.setup = list(setup)
        self.poll_seconds = float(poll_seconds)

    def _submitter(self):
        import submitit

        c = self.cluster
        ex = submitit.AutoExecutor(folder=self.folder, cluster=c, **{f"{c}_max_num_timeout": self.max_requeue})
        params = {"name": "bncbench", "timeout_min": self.timeout_min, "cpus_per_task": self.cpus_per_task}
        if self.mem_gb is not None:
            params["mem_gb"] = self.mem_gb
        if self.cluster == "slurm":  # (submitit's local processes are signalled 30 s before their limit)
            params["slurm_signal_delay_s"] = self.signal_delay_s
            params["slurm_array_parallelism"] = self.array_parallelism
            if self.partition:
                params["slurm_partition"] = self.partition
            if self.sbatch:
                params["slurm_additional_parameters"] = self.sbatch
            if self.setup:
                params["slurm_setup"] = self.setup
        ex.update_parameters(**params)
        return ex

    def batches(self, items: list) -> list[list]:
        """``items`` in batches of ``tasks_per_job``, in order (one array element each).

        Parameters
        ----------
        items : list
            The tasks.

        Returns
        -------
        list of list
            Consecutive slices of ``items``; all of ``tasks_per_job`` tasks but the last.
        """
        return _chunks(items, self.tasks_per_job)

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Submit ``fn`` over ``items`` as job arrays; yield the results as the jobs end.

        The parameters are :meth:`bncbench.executors.Executor.map_unordered`'s.

        Returns
        -------
        iterator
            ``fn(item)`` for every item of every job that ended with its results, a job's in the
            order of its batch.

        Raises
        ------
        BNCBenchError
            If a submission fails (the jobs submitted before are cancelled), or, once every job has
            ended, if some ended without returning: one line with their count, the first one's
            state, error and log.
        """
        return self._run(fn, list(items))

    def _run(self, fn, items):
        if not items:
            return
        from submitit.core.utils import FailedSubmissionError

        ex = self._submitter()
        batches = self.batches(items)
        call = RunBatch(fn)
        arrays = _chunks(batches, self.max_array_size)
        jobs = []
        try:
            for array in arrays:
                jobs += ex.map_array(call, array)
        except FailedSubmissionError as exc:
            _cancel(jobs)
            raise BNCBenchError(f"executor slurm: submission failed: {_error_line(exc)}") from None
        print(f"bncbench: {len(items)} task(s) submitted as {len(jobs)} job(s) in {len(arrays)} array(s) "
              f"({_job_ids(jobs)}); logs in {str(ex.folder).replace('%j', '<job id>')}", file=sys.stderr, flush=True)
        pending = dict(enumerate(jobs))
        failed = []
        vanished = Vanished(grace=VANISHED_GRACE) if self.cluster == "slurm" else None
        try:
            while pending:
                for i in [i for i, job in pending.items() if job.done()]:
                    job = pending.pop(i)
                    try:
                        results = job.result()
                    except Exception as exc:  # the job's process ended without returning: time, memory, node
                        failed.append((job, len(batches[i]), _error_line(exc)))
                        continue
                    yield from results
                for i in _vanished(vanished, pending) if vanished and pending else ():
                    failed.append((pending.pop(i), len(batches[i]), _VANISHED))
                if pending:
                    time.sleep(self.poll_seconds)
        except BaseException:  # Ctrl-C, or the runner stopped reading: nothing should keep computing for it
            _cancel(pending.values())
            raise
        if failed:
            job, _, error = failed[0]
            raise BNCBenchError(
                f"executor slurm: {len(failed)} of {len(jobs)} job(s) ended without returning "
                f"({sum(n for _, n, _ in failed)} task(s), pending unless they wrote their records); "
                f"first: job {job.job_id} ({job.state}): {error}; its log: {job.paths.stderr}; the same command reruns their tasks")


def _vanished(vanished: Vanished, pending: dict) -> list[int]:
    """The pending jobs without a ``sacct`` state (``UNKNOWN``: no accounting) that left the queue without a
    result: ``squeue`` has missed them for :data:`VANISHED_GRACE` seconds and their result has not shown."""
    unknown = {i: str(job.job_id) for i, job in pending.items() if job.state == "UNKNOWN"}
    return [i for i in vanished(unknown) if not pending[i].done()]


_VANISHED = "no result, and squeue no longer lists it (killed, or out of time or memory? no sacct state here)"
def _chunks(seq: list, size: int) -> list[list]:
    """Consecutive slices of ``seq`` of ``size`` items (the last one shorter)."""
    return [seq[i:i + size] for i in range(0, len(seq), size)]


def _cancel(jobs) -> None:
    for job in jobs:
        try:
            job.cancel(check=False)
        except Exception:  # already ended, or the scheduler gone: nothing left to stop
            pass


def _job_ids(jobs) -> str:
    arrays = sorted({str(j.job_id).split("_")[0] for j in jobs})
    return "job " + ", ".join(arrays) if len(arrays) <= 3 else f"jobs {arrays[0]} … {arrays[-1]}"


def _error_line(exc: BaseException) -> str:
    """The informative line of submitit's error: the exception a job raised (the last line of its
    traceback), "no result" for a job killed before it wrote one, else the first line (a refused
    submission: sbatch's message)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    if any(ln.startswith("has not produced any output") for ln in lines[:3]):  # its state is in our message
        return "no result (killed, or out of time or memory?)"
    if "failed during processing" in lines[0]:  # then the traceback, between rules, then where the logs are
        trace = []
        for ln in lines[1:]:
            if ln.startswith("You can check full logs"):
                break
            if set(ln) != {"-"}:
                trace.append(ln)
        return trace[-1] if trace else lines[0]
    return lines[0]
