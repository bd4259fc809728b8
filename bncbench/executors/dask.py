"""The ``dask`` executor: the runner's tasks on a Dask cluster (distributed).

Without ``address`` it starts a cluster for the run: ``n_workers`` single-threaded worker
processes on this machine, or with ``jobqueue=slurm`` up to ``n_workers`` workers as SLURM jobs
(dask-jobqueue, :mod:`bncbench.executors.jobqueue`), each a job of one CPU, ``mem_gb`` and
``timeout_min`` that lives while there are tasks for it and is replaced if it ends before them.
With ``address`` it connects to a running scheduler, started by hand (``dask scheduler`` and
``dask worker`` on the nodes) or by dask-jobqueue in a process of its own.
As with every executor the tasks write their records into the store themselves, so a remote
cluster's workers need the results directory, the data directory and the environment on a shared
file system. Tasks whose worker was lost more often than the scheduler allows
(``distributed.scheduler.allowed-failures``) stay pending: the run says so in one line once the
others have ended, and the same command runs them again. Stopping the run cancels what it submitted.
"""

from __future__ import annotations

import functools
import logging
from typing import Callable, Iterable, Iterator

from bncbench.components import EXECUTORS
from bncbench.errors import BNCBenchError
from bncbench.executors.executor import R, T, in_worker, require
from bncbench.executors.slurm_jobs import JOB_OPTIONS, require_commands
from bncbench.registry import Hyperparameter, integer, options

JOBQUEUES = ("slurm",)


def _check(values: dict) -> None:
    """Before any task: distributed importable; for ``jobqueue=slurm`` dask-jobqueue, sbatch, a memory, no address."""
    require("distributed", "dask", "dask")
    if values["address"] is not None and values["jobqueue"] is None:
        check_address(values["address"])
    if values["jobqueue"] is None:
        return
    from bncbench.executors.jobqueue import load

    load()
    if values["address"] is not None:
        raise BNCBenchError("executor dask: address (a running scheduler) and jobqueue (a cluster started for the "
                            "run) exclude each other")
    if values["mem_gb"] is None:
        raise BNCBenchError("executor dask: jobqueue=slurm needs executor.mem_gb, the memory of one worker job "
                            "(its worker is stopped beyond it)")
    require_commands("dask", ("sbatch",), " (jobqueue=slurm; without it the workers are local processes)")


def check_address(address: str, timeout: float = 5.0) -> None:
    """Before any task, and before anything is written: a TCP scheduler ``address`` must accept a connection.

    Parameters
    ----------
    address : str
        ``tcp://host:port`` (or ``host:port``); other protocols (``tls://``, ``ucx://``, ...) are
        left to Dask.
    timeout : float, default=5.0
        Seconds to wait for the connection.

    Raises
    ------
    BNCBenchError
        If the address has no port, or nothing accepts a connection there within ``timeout``
        (one line; Dask itself would wait 30 seconds and more).
    """
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(address if "://" in address else f"tcp://{address}")
    if url.scheme != "tcp":
        return
    try:
        host, port = url.hostname, url.port
    except ValueError:
        host = port = None
    if not host or port is None:
        raise BNCBenchError(f"executor dask: address {address!r} is not tcp://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise BNCBenchError(f"executor dask: no scheduler answers at {address} ({reason}); start one (`dask "
                            "scheduler`) or leave executor.address unset for a cluster of the run") from None


@EXECUTORS.register("dask", label="", check=_check, hyperparameters=[
    Hyperparameter("address", None, [str, None], "scheduler address (tcp://host:8786); None: a cluster for the run",
                   str),
    Hyperparameter("n_workers", 1, [integer(1)],
                   "worker processes of the local cluster; with jobqueue, the most worker jobs at once", int),
    Hyperparameter("jobqueue", None, [options(JOBQUEUES), None],
                   "slurm: the run's workers are SLURM jobs (dask-jobqueue); None: local processes", str),
    Hyperparameter("log_dir", "dask-jobqueue", [str], "log directory of the SLURM worker jobs (jobqueue=slurm)", str),
    Hyperparameter("interface", None, [str, None],
                   "network interface of the scheduler and the workers (ib0, eth0; None: the default)", str),
    *JOB_OPTIONS,
])
class DaskExecutor:
    """Tasks on a Dask cluster: a scheduler's ``address``, or a cluster of ``n_workers`` for the run.

    Made by :func:`bncbench.executors.make_executor`, which fills in the registered defaults.

    Parameters
    ----------
    address : str or None
        A running scheduler (``tcp://host:8786``); None starts a cluster for the run and closes
        it after.
    n_workers : int
        Worker processes of the local cluster, one thread each (fits are single-threaded); with
        ``jobqueue``, the most SLURM worker jobs at once.
    jobqueue : {"slurm"} or None
        ``slurm``: the workers are SLURM jobs of one CPU each (dask-jobqueue), submitted as
        tasks wait for them; None: local processes.
    log_dir : str
        Log directory of the worker jobs (``conf/executor/dask.yaml``: the experiment's results
        directory).
    interface : str or None
        Network interface the scheduler and the workers listen on, when the default one does not
        reach the compute nodes.
    partition, timeout_min, mem_gb, sbatch, setup, poll_seconds
        A worker job's SLURM options (:data:`~bncbench.executors.slurm_jobs.JOB_OPTIONS`), and
        the seconds between two looks at the jobs; used with ``jobqueue`` only.
    """

    def __init__(self, *, address: str | None, n_workers: int, jobqueue: str | None, log_dir: str,
                 interface: str | None, partition: str | None, timeout_min: int, mem_gb: float | None,
                 sbatch: dict, setup: list, poll_seconds: float) -> None:
        """Store the options (:func:`bncbench.executors.make_executor` validates them first)."""
        self.address = address
        self.n_workers = int(n_workers)
        self.jobqueue = jobqueue
        self.log_dir = log_dir
        self.interface = interface
        self.partition = partition
        self.timeout_min = int(timeout_min)
        self.mem_gb = mem_gb
        self.sbatch = dict(sbatch)
        self.setup = list(setup)
        self.poll_seconds = float(poll_seconds)

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Submit ``fn`` over ``items`` to the cluster; yield the results as they finish.

        The parameters are :meth:`bncbench.executors.Executor.map_unordered`'s.

        Returns
        -------
        iterator
            ``fn(item)`` for every item whose call returned, in completion order.

        Raises
        ------
        BNCBenchError
            Once every call has ended, if some raised or lost their worker too often: one line
            with their count and the first one's error.
        """
        return self._run(fn, list(items))

    def _run(self, fn, items):
        if not items:
            return
        from distributed import Client, LocalCluster, wait

        cluster = stalled = None
        if self.jobqueue is not None:
            from bncbench.executors.jobqueue import Stalled, start_cluster

            cluster = start_cluster(self, len(items))
            stalled = Stalled(cluster, self.log_dir)
        elif self.address is None:
            cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.CRITICAL)  # failures: one line, below
        try:
            client = Client(self.address or cluster)
        except OSError as exc:  # no scheduler at the address
            if cluster is not None:
                _close(cluster)
            raise BNCBenchError(f"executor dask: cannot reach the scheduler at {self.address}: {exc}") from None
        futures = client.map(functools.partial(in_worker, fn), items, pure=False)
        remaining = set(futures)
        failed = []
        try:
            while remaining:
                try:  # without a watch, wait until one ends; with one, look at the jobs between
                    done = wait(list(remaining), timeout=self.poll_seconds if stalled else None,
                                return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    done = set()
                for fut in done:
                    remaining.discard(fut)
                    try:
                        result = fut.result()
                    except Exception as exc:  # the call raised, or its worker was lost too often (KilledWorker)
                        failed.append(exc)
                        continue
                    finally:
                        fut.release()
                    yield result
                if stalled is not None and remaining:
                    stalled({w["name"] for w in client.scheduler_info()["workers"].values()})
        except BaseException:  # Ctrl-C, a stalled cluster, or the runner stopped reading: nothing should keep computing
            client.cancel(list(remaining))
            raise
        finally:
            client.close()
            if cluster is not None:
                _close(cluster)
        if failed:
            first = str(failed[0]).strip().splitlines()
            raise BNCBenchError(f"executor dask: {len(failed)} of {len(items)} task(s) ended without returning; "
                                f"first: {type(failed[0]).__name__}: {first[0] if first else ''}; the same command "
                                "reruns them")


def _close(cluster) -> None:
    """Close the run's cluster (its jobs cancelled); distributed's check that every worker it made has
    closed fails while a traceback still refers to a worker job: the jobs are cancelled by then."""
    try:
        cluster.close()
    except AssertionError:
        pass
