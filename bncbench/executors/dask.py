"""The ``dask`` executor: the runner's tasks on a Dask cluster (distributed).

Without ``address`` it starts a local cluster of ``n_workers`` single-threaded worker processes
for the run; with one it connects to a running scheduler: started by hand (``dask scheduler`` and
``dask worker`` on the nodes) or by dask-jobqueue (``SLURMCluster(...).scheduler_address``).
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
from bncbench.executors.base import R, T, in_worker, require
from bncbench.registry import Hyperparameter, integer


@EXECUTORS.register("dask", label="", check=lambda values: require("distributed", "dask", "dask"), hyperparameters=[
    Hyperparameter("address", None, [str, None], "scheduler address (tcp://host:8786); None: a local cluster", str),
    Hyperparameter("n_workers", 1, [integer(1)], "worker processes of the local cluster (address None)", int),
])
class DaskExecutor:
    """Tasks on a Dask cluster: a scheduler's ``address``, or a local cluster of ``n_workers`` processes.

    Made by :func:`bncbench.executors.make_executor`, which fills in the registered defaults.

    Parameters
    ----------
    address : str or None
        A running scheduler (``tcp://host:8786``); None starts a local cluster for the run and
        closes it after.
    n_workers : int
        Worker processes of the local cluster, one thread each (fits are single-threaded).
    """

    def __init__(self, *, address: str | None, n_workers: int) -> None:
        """Store the options (:func:`bncbench.executors.make_executor` validates them first)."""
        self.address = address
        self.n_workers = int(n_workers)

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
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if self.address is None:
            cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.CRITICAL)  # failures: one line, below
        try:
            client = Client(self.address or cluster)
        except OSError as exc:  # no scheduler at the address
            raise BNCBenchError(f"executor dask: cannot reach the scheduler at {self.address}: {exc}") from None
        futures = client.map(functools.partial(in_worker, fn), items, pure=False)
        failed = []
        try:
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as exc:  # the call raised, or its worker was lost too often (KilledWorker)
                    failed.append(exc)
                    continue
                finally:
                    fut.release()
                yield result
        except BaseException:  # Ctrl-C, or the runner stopped reading: nothing should keep computing for it
            client.cancel(futures)
            raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
        if failed:
            first = str(failed[0]).strip().splitlines()
            raise BNCBenchError(f"executor dask: {len(failed)} of {len(items)} task(s) ended without returning; "
                                f"first: {type(failed[0]).__name__}: {first[0] if first else ''}; the same command "
                                "reruns them")
