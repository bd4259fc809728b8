"""Executors: where the runner's tasks run, registered in :data:`bncbench.components.EXECUTORS`.

An executor is the runner's one seam to compute resources. It maps a function
over tasks and yields the results as they finish, in any order; the function
and the tasks are picklable (tasks are typed, pure; see :mod:`bncbench.harness.runner`).
A backend is one module here registering one class:

``joblib`` (:mod:`.local`)   worker processes on this machine (the default)
``slurm`` (:mod:`.slurm`)    SLURM job arrays through submitit, from a login node
``dask`` (:mod:`.dask`)      a Dask cluster: local, or a scheduler's address (dask-jobqueue)
"""

from __future__ import annotations

from typing import Any

from bncbench.components import EXECUTORS
from bncbench.executors.executor import Executor, in_worker
from bncbench.executors.dask import DaskExecutor
from bncbench.executors.local import JoblibExecutor, check_n_jobs
from bncbench.executors.slurm import SlurmExecutor
from bncbench.validate import check_keys, check_values

__all__ = ["DaskExecutor", "Executor", "JoblibExecutor", "SlurmExecutor", "check_n_jobs", "in_worker", "make_executor"]


def make_executor(name: str = "joblib", **options: Any) -> Executor:
    """The executor ``name`` with its options (validated against its declaration).

    Parameters
    ----------
    name : str, default="joblib"
        A name registered in :data:`bncbench.components.EXECUTORS`.
    **options
        Option values; declared options missing here take their declared default.

    Returns
    -------
    Executor
        The registered class called with the executor's hyperparameter values.

    Raises
    ------
    BNCBenchError
        If ``name`` is not registered, an option is not declared, a value is outside its declared
        range (:class:`~bncbench.registry.ParameterError`), or the executor's ``check`` rejects the
        values (``joblib``: an ``n_jobs`` of 0 or below -1; ``slurm``: no ``sbatch`` or ``srun`` here);
        the command line's lines (:mod:`bncbench.validate`).
    """
    comp = EXECUTORS[name]
    check_keys(comp, options)
    return comp.obj(**check_values(comp, options))
