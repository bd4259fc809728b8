"""One fold of an experiment's model, exactly as the runner fits it, for the benchmarks that time one fit.

The task is planned as ``python -m bncbench run +experiment=...`` plans it
(:func:`bncbench.harness.app.experiment_task`) and its model and rows are the runner's own
(:func:`bncbench.harness.runner.task_inputs`): the data loaded, split and discretized on the training
part, the model built with the dataset's hyperparameters and the fold's cardinalities. Imported by
the scripts' child processes (``python -c``), which put this directory on ``sys.path`` with
:data:`PATH_LINE`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

PATH_LINE = f"import sys; sys.path.insert(1, {str(Path(__file__).resolve().parent)!r})\n"
"""The first line of a child's code: this directory on its ``sys.path`` (after ``-c``'s working directory)."""

THREADS = {k: "1" for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
"""The environment of a single-threaded child: numba, OpenMP and BLAS with one thread each."""


def capped(task, maxiter: int | None):
    """``task`` with its optimizer stopped after ``maxiter`` iterations (a model without one: unchanged).

    Parameters
    ----------
    task : bncbench.harness.runner.Task
        The task.
    maxiter : int or None
        Iterations; None: the model's own stopping rule.

    Returns
    -------
    bncbench.harness.runner.Task
        A task of another model (its key differs): for timing, not for the store.
    """
    params = task.model.params
    if maxiter is None or "optimizer" not in params:
        return task
    params = {**params, "optimizer_options": {**params.get("optimizer_options", {}), "maxiter": maxiter}}
    return dataclasses.replace(task, model=dataclasses.replace(task.model, params=params))


def fold_inputs(experiment: str, dataset: str, label: str, *, round: int = 0, fold: int = 0,
                maxiter: int | None = None):
    """The model and rows of one fold of an experiment's model (:func:`capped` at ``maxiter``).

    Parameters
    ----------
    experiment, dataset, label : str
        As :func:`bncbench.harness.app.experiment_task`.
    round, fold : int, default=0
        The fold.
    maxiter : int, optional
        See :func:`capped`.

    Returns
    -------
    bncbench.harness.runner.TaskInputs
    """
    from bncbench.harness.app import experiment_task
    from bncbench.harness.runner import task_inputs

    return task_inputs(capped(experiment_task(experiment, dataset, label, round=round, fold=fold), maxiter))


def warm_up(inputs, rows) -> None:
    """Fit a second model of the same parameters on ``rows`` of the training part: numba compiled, untimed.

    Parameters
    ----------
    inputs : bncbench.harness.runner.TaskInputs
        The fold.
    rows : ndarray of int
        Training rows (indices into the dataset); the first training row of every class they lack is added
        (a classifier needs two classes: musk1's first 64 rows hold one).
    """
    import numpy as np

    from bncbench.harness.model_specs import make_estimator

    train_y = inputs.y[inputs.train]
    _, first = np.unique(train_y, return_index=True)
    missing = ~np.isin(train_y[first], inputs.y[rows])
    rows = np.concatenate([np.asarray(rows), inputs.train[first[missing]]])
    make_estimator(inputs.params, inputs.cardinalities).fit(inputs.X[rows], inputs.y[rows])
