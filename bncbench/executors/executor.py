"""What every executor is: the :class:`Executor` protocol, and the call a worker makes."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs ``fn`` on every item; yields the results in completion order.

    A structural protocol: any object with a :meth:`map_unordered` method of this signature is an
    executor (the classes registered in :data:`bncbench.components.EXECUTORS` are). An executor
    whose workers die together (one worker's death ends the tasks of the others: joblib's pool)
    says so with a true attribute ``shared_fate``; the runner then runs a task whose process died
    before alone, so that deaths are counted against the task that caused them.
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


def require(module: str, executor: str, extra: str) -> None:
    """Before any task: one line naming the extra to install when ``module`` cannot be imported.

    Parameters
    ----------
    module : str
        The module the executor needs (``submitit``, ``distributed``).
    executor : str
        The executor's registered name.
    extra : str
        The project's extra that installs it.

    Raises
    ------
    BNCBenchError
        If ``module`` cannot be imported.
    """
    import importlib

    from bncbench.errors import BNCBenchError

    try:
        importlib.import_module(module)
    except ImportError:
        raise BNCBenchError(f"executor {executor} needs {module}: pip install -e '.[{extra}]'") from None


_ON_ABANDON: list = []


def on_abandon(fn) -> None:
    """Have ``fn()`` called when this worker process is ended because its run is gone (:func:`abandon`).

    The runner removes the running markers of the tasks this process is running with it
    (:func:`bncbench.harness.runner.run_task`): their end is their run's, not a crash of theirs.

    Parameters
    ----------
    fn : callable
        Called without arguments; registered once (a second registration of it is ignored).
    """
    if fn not in _ON_ABANDON:
        _ON_ABANDON.append(fn)


def abandon(code: int) -> None:
    """End this worker process at once (``os._exit``), after the callables of :func:`on_abandon`.

    Parameters
    ----------
    code : int
        The exit status.
    """
    import os

    for fn in list(_ON_ABANDON):
        try:
            fn()
        except Exception:  # noqa: BLE001 - the process ends whatever
            pass
    os._exit(code)


def in_worker(fn, item):
    """``fn(item)`` in a worker process, which reloads datasets the parent has loaded: their identifier
    warnings were given there, when the run was checked (:func:`bncbench.data.specs.check_available`)."""
    import warnings

    from bncbench.errors import IdentifierWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IdentifierWarning)
        return fn(item)
