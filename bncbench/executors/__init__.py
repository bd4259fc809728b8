"""Executors: where the runner's tasks run, registered in :data:`bncbench.components.EXECUTORS`.

An executor is the runner's one seam to compute resources. It maps a function
over tasks and yields the results as they finish, in any order; the function
and the tasks are picklable (tasks are typed, pure; see :mod:`bncbench.runner`).
A backend for Dask or SLURM job arrays is one more class registered here.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Protocol, TypeVar

from bncbench.components import EXECUTORS
from bncbench.registry import Hyperparameter

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` on every item; yields the results in completion order.

    A structural protocol: any object with a :meth:`map_unordered` method of this signature is an
    executor (the classes registered in :data:`bncbench.components.EXECUTORS` are).
    """

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Apply ``fn`` to every item of ``items``.

        Parameters
        ----------
        fn : callable
            A picklable function of one task.
        items : iterable
            The tasks (picklable).

        Returns
        -------
        iterator
            ``fn(item)`` for every item, in the order the calls finish (not necessarily the order
            of ``items``).
        """
        ...


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
        from bncbench.errors import BNCBenchError

        raise BNCBenchError(f"n_jobs must be >= 1 or -1, got {n}")
    return n


@EXECUTORS.register("joblib", label="", check=lambda values: check_n_jobs(values.get("n_jobs", 1)),
                    hyperparameters=[
    Hyperparameter("n_jobs", 1, [int], "worker processes (1: in this process; -1: one per core)", int)])
class JoblibExecutor:
    """Tasks in ``n_jobs`` joblib (loky) worker processes on this machine; ``n_jobs=1`` runs them in-process.

    Parameters
    ----------
    n_jobs : int, default=1
        Worker processes; 1 runs the tasks lazily in this process, -1 starts one per core.

    Attributes
    ----------
    n_jobs : int
        ``int(n_jobs)``.
    """

    def __init__(self, n_jobs: int = 1) -> None:
        """Store the worker count (not validated here: :func:`make_executor` checks it).

        Parameters
        ----------
        n_jobs : int, default=1
            Worker processes; converted with ``int()``.
        """
        self.n_jobs = int(n_jobs)

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Apply ``fn`` to every item, in this process or in joblib's loky workers.

        Parameters
        ----------
        fn : callable
            A picklable function of one task.
        items : iterable
            The tasks.

        Returns
        -------
        iterator
            ``fn(item)`` for every item. With ``n_jobs == 1`` a lazy generator in the order of ``items``;
            otherwise joblib's ``generator_unordered`` (batch size 1), in completion order.
        """
        if self.n_jobs == 1:
            return (fn(t) for t in items)
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs, return_as="generator_unordered", batch_size=1)(
            delayed(_in_worker)(fn, t) for t in items)


def _in_worker(fn, item):
    """``fn(item)`` in a worker process, which reloads datasets the parent has loaded: their identifier
    warnings were given there, when the run was checked (:func:`bncbench.data.registry.check_available`)."""
    import warnings

    from bncbench.errors import IdentifierWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifierWarning)
        return fn(item)


def make_executor(name: str = "joblib", **options: Any) -> Executor:
    """The executor ``name`` with its options (validated against its declaration).

    Parameters
    ----------
    name : str, default="joblib"
        A name registered in :data:`bncbench.components.EXECUTORS`.
    **options
        Hyperparameter values; keys the executor does not declare are ignored, declared
        hyperparameters missing here take their declared default.

    Returns
    -------
    Executor
        The registered class called with the executor's hyperparameter values.

    Raises
    ------
    BNCBenchError
        If ``name`` is not registered, or the executor's ``check`` rejects the values (for
        ``joblib``: an ``n_jobs`` of 0 or below -1).
    """
    comp = EXECUTORS[name]
    values = comp.params(options)
    if comp.check is not None:
        comp.check(values)
    return comp.obj(**values)
