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

from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

from bncbench.components import EXECUTORS
from bncbench.executors.executor import Executor, in_worker
from bncbench.executors.dask import DaskExecutor
from bncbench.executors.local import JoblibExecutor, check_n_jobs
from bncbench.executors.slurm import SlurmExecutor
from bncbench.registry import ParameterError

__all__ = ["DaskExecutor", "Executor", "JoblibExecutor", "SlurmExecutor", "check_n_jobs", "in_worker", "make_executor"]


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
        If ``name`` is not registered, a value is outside its declared range
        (:class:`~bncbench.registry.ParameterError`), or the executor's ``check`` rejects the
        values (``joblib``: an ``n_jobs`` of 0 or below -1; ``slurm``: no ``sbatch`` or ``srun`` here).
    """
    comp = EXECUTORS[name]
    values = comp.params(options)
    try:
        validate_parameter_constraints({h.name: h.constraints for h in comp.hyperparameters}, values,
                                       caller_name=f"executor {name!r}")
    except InvalidParameterError as exc:
        raise ParameterError(str(exc)) from None
    if comp.check is not None:
        comp.check(values)
    return comp.obj(**values)
