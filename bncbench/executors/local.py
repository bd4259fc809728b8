"""The ``joblib`` executor: tasks in worker processes on this machine (the default)."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from bncbench.components import EXECUTORS
from bncbench.errors import BNCBenchError
from bncbench.executors.executor import R, T, abandon, in_worker
from bncbench.registry import Hyperparameter


def check_n_jobs(n: int) -> int:
    """``n`` as a joblib worker count (>= 1, or -1 for one per core); one clear error otherwise.

    Parameters
    ----------
    n : int
        The requested number of worker processes (anything ``int()`` accepts).

    Returns
    -------
    int
        ``int(n)``.

    Raises
    ------
    BNCBenchError
        If ``int(n)`` is 0 or below -1.
    """
    n = int(n)
    if n == 0 or n < -1:
        raise BNCBenchError(f"n_jobs must be >= 1 or -1, got {n}")
    return n


@EXECUTORS.register("joblib", label="", check=lambda values: check_n_jobs(values["n_jobs"]),
                    hyperparameters=[
    Hyperparameter("n_jobs", 1, [int], "worker processes (1: in this process; -1: one per core)", int)])
class JoblibExecutor:
    """Tasks in ``n_jobs`` joblib (loky) worker processes on this machine; ``n_jobs=1`` runs them in-process.

    Made by :func:`bncbench.executors.make_executor`, which fills in the registered default.

    Parameters
    ----------
    n_jobs : int
        Worker processes; 1 runs the tasks lazily in this process, -1 starts one per core.

    Attributes
    ----------
    n_jobs : int
        ``int(n_jobs)``.
    """

    def __init__(self, *, n_jobs: int) -> None:
        """Store the worker count (not validated here: :func:`make_executor` checks it).

        Parameters
        ----------
        n_jobs : int
            Worker processes; converted with ``int()``.
        """
        self.n_jobs = int(n_jobs)

    @property
    def shared_fate(self) -> bool:
        """Whether a worker's death ends the other workers' tasks: with several workers, loky kills the whole
        pool when one dies (the runner then runs a task whose process died before alone,
        :func:`bncbench.harness.runner.run_experiment`); in-process (``n_jobs=1``) there are no others."""
        return self.n_jobs != 1

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Apply ``fn`` to every item, in this process or in joblib's loky workers.

        The parameters are :meth:`bncbench.executors.Executor.map_unordered`'s.

        Returns
        -------
        iterator
            ``fn(item)`` for every item. With ``n_jobs == 1`` a lazy generator in the order of ``items``;
            otherwise joblib's ``generator_unordered`` (batch size 1), in completion order.
        """
        if self.n_jobs == 1:
            return (fn(t) for t in items)
        import os

        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs, return_as="generator_unordered", batch_size=1)(
            delayed(_orphan_safe)(fn, t, os.getpid()) for t in items)


_WATCHING: set = set()
"""The parent pids this worker process watches (one watchdog thread per parent)."""


def _orphan_safe(fn, item, parent: int):
    """:func:`~bncbench.executors.executor.in_worker` in a loky worker that exits once ``parent`` (the run) is gone.

    A run killed alone (``kill -9`` of its main process) would otherwise leave its workers
    computing their tasks for minutes, results nobody stores. A daemon thread per worker checks
    every second whether the worker was re-parented and ends the process if so (:func:`abandon`: the
    task it was running is not counted as a crash of its own).
    """
    if parent not in _WATCHING:
        import os
        import threading
        import time

        def watch():
            while os.getppid() == parent:
                time.sleep(1.0)
            abandon(1)

        _WATCHING.add(parent)
        threading.Thread(target=watch, name="bncbench-orphan-watch", daemon=True).start()
    return in_worker(fn, item)
