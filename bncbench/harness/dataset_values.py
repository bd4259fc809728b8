"""Hyperparameters whose value is a fact of the dataset (``Hyperparameter.from_dataset``).

A model's parameters are the same on every dataset of an experiment; a few components need
something only the dataset knows, such as the network a synthetic dataset was sampled from
(``structure=planted``). Such a hyperparameter is declared ``from_dataset=KEY``: it has no config
field and is not part of the model's parameters (nor of its task key: the dataset's fingerprint
already is); for each task the runner sets it to the dataset's ``meta[KEY]``
(:func:`dataset_values`). Before any task, :func:`check_dataset_values` lets each component that
declares a ``dataset_check`` (registration info) refuse a dataset that lacks the fact, in one line.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from bncbench.components import ESTIMATORS, PARAMETERIZATIONS, STRUCTURES

SELECTING = (("structure", STRUCTURES), ("estimator", ESTIMATORS), ("param", PARAMETERIZATIONS))
"""The model parameters that name a component, and their registries."""


def _components(params: Mapping[str, Any]) -> list:
    """The registered components a model's parameters choose (none for a baseline)."""
    if "model" in params:  # a baseline: its own parameters only
        return []
    return [reg[params[key]] for key, reg in SELECTING if key in params]


def dataset_values(params: Mapping[str, Any], meta: Mapping[str, Any]) -> dict:
    """A model's parameters with its ``from_dataset`` hyperparameters set from a dataset's ``meta``.

    Parameters
    ----------
    params : mapping
        The model's parameters (:attr:`bncbench.harness.model_specs.ModelSpec.params`). Not modified.
    meta : mapping
        The dataset's :attr:`~bncbench.data.dataset.Dataset.meta`.

    Returns
    -------
    dict
        A copy of ``params``; every hyperparameter a chosen component declares
        ``from_dataset=KEY`` is ``meta[KEY]`` where ``meta`` has ``KEY`` (not None), otherwise
        as in ``params`` (absent: its default).
    """
    out = dict(params)
    for comp in _components(params):
        for h in comp.hyperparameters:
            if h.from_dataset and meta.get(h.from_dataset) is not None:
                value = meta[h.from_dataset]
                out[h.name] = [list(v) if isinstance(v, tuple) else v for v in value] \
                    if isinstance(value, (list, tuple)) else value
    return out


def check_dataset_values(models: Iterable, datasets: Iterable[dict], data_dir: str | None = None) -> None:
    """Fail early, with one line, where a model needs a fact a dataset does not have.

    For every (model, dataset) whose model chooses a component with a ``dataset_check``
    (``check(values, dataset_name)``, registration info), the check is called with the model's
    parameters filled from the dataset (:func:`dataset_values`, the chosen component's
    hyperparameters, defaults included).

    Parameters
    ----------
    models : iterable of ModelSpec
        The experiment's models.
    datasets : iterable of dict
        Resolved dataset specs (:func:`bncbench.data.specs.resolve`); loaded (cached) only
        when some model needs it.
    data_dir : str, optional
        The data directory.

    Raises
    ------
    BNCBenchError
        What a component's ``dataset_check`` raises (e.g. ``dataset 'glass' has no planted network ...``).
    """
    from bncbench.data import specs as dataset_specs

    checked = [(m, comp) for m in models for comp in _components(m.params) if comp.info.get("dataset_check")]
    if not checked:
        return
    for spec in datasets:
        meta = dataset_specs.load(spec, data_dir).meta
        for m, comp in checked:
            comp.info["dataset_check"](comp.params(dataset_values(m.params, meta)), spec["name"])
