"""Model specifications: composed config groups -> estimator parameters and a label.

A model is one option of each model config group (``structure``, ``param``,
``estimator``, ``init``, ``optimizer``, ``objective``; the registries of
:data:`bncbench.components.MODEL_KINDS`). Hydra composes every option
(``conf/<group>/<option>.yaml`` extends the component's typed schema), and
:func:`model_spec` turns one composed option per group into the keyword
arguments of :class:`bncbench.BNClassifier` (the model's *parameters*, stored
in every record) and its label, the concatenation of the options' ``label``
fields (``NB``, ``TAN^w``, ``KDB-1^d (I)``, ``KDB-5 HDP``). Parameters hold the
hyperparameters of the chosen components only: ``init``, ``optimizer`` and
``objective`` only matter, and only appear, for optimized parameterizations.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from omegaconf import DictConfig, ListConfig, OmegaConf

from bncbench.components import BASELINES, FLAT_KINDS, MODEL_KINDS, PARAMETERIZATIONS
from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

GROUPS = tuple(reg.kind for reg in MODEL_KINDS)
"""The model config groups, in label order."""
SPEC_KEYS = ("label", "model")
"""Keys of a ``models:`` item that are neither a group nor a hyperparameter."""
CLASSIFIER_KEYS = ("missing",)
"""Keywords of :class:`bncbench.BNClassifier` (not of a component) a ``models:`` item may set; left out of
the parameters while they have their default (``missing: marginalize``: unknown test values summed out)."""


@dataclass(frozen=True)
class ModelSpec:
    """A model of an experiment: its label and its estimator parameters.

    ``params`` are :class:`bncbench.BNClassifier` keywords, or a baseline's
    (``{"model": "random_forest", ...}``); they identify the model in task keys.

    Attributes
    ----------
    label : str
        The model's name in results and reports (``NB``, ``KDB-1^d (I)``, ``RF``).
    params : dict
        Keyword arguments of its estimator (see :func:`bncbench.harness.model_specs.make_estimator`).
    """

    label: str
    params: dict


def _plain(node) -> dict:
    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=True)
    return dict(node or {})


def _normalized(value, default):
    # one spelling per value, so `m: 1` and `m: 1.0` give the same task key
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def model_spec(parts: dict, extra: dict | None = None) -> ModelSpec:
    """Parameters and label from one composed option per group (mappings with ``name`` and ``label``).

    ``extra`` holds a ``models:`` item's other keys: hyperparameters that override the
    options' values, a ``label``, or ``model: NAME`` for a baseline.

    For a Bayesian network classifier, the parameters are the names of the ``structure``,
    ``param`` and ``estimator`` components and the hyperparameters of the active components
    (``init``, ``optimizer`` and ``objective`` are active only for an optimized
    parameterization); a hyperparameter whose value is None, or that equals its default while
    declared ``omit_default``, is left out. An integer given for a float hyperparameter becomes a
    float (one task key per value). The label is ``extra["label"]`` or the active options' labels
    concatenated.

    Parameters
    ----------
    parts : dict
        One composed option (``DictConfig`` or mapping) per group of :data:`GROUPS`, by group name.
        Not read for a baseline.
    extra : dict, optional
        The other keys of a ``models:`` item. Not modified.

    Returns
    -------
    ModelSpec
        The model's label and parameters. For a baseline, the parameters are ``extra`` without
        ``label``, and the label defaults to the baseline's name.

    Raises
    ------
    BNCBenchError
        If ``model`` names no registered baseline, an option names an unregistered component or
        has a key its component does not declare, or ``extra`` has a key that is none of
        ``label``, ``model`` or a hyperparameter of the chosen components.
    KeyError
        If ``parts`` lacks one of the groups.
    """
    extra = dict(extra or {})
    if extra.get("model", "bnc") != "bnc":  # a baseline: its own parameters only
        BASELINES[extra["model"]]
        return ModelSpec(str(extra.get("label") or extra["model"]), {k: v for k, v in extra.items() if k != "label"})
    parts = {g: _plain(parts[g]) for g in GROUPS}
    for reg in MODEL_KINDS:
        _check_keys(reg, parts[reg.kind])
    optimized = bool(PARAMETERIZATIONS[parts["param"]["name"]].info.get("optimized"))
    active = [g for g in GROUPS if optimized or g in ("structure", "param", "estimator")]
    params: dict = {}
    for reg in FLAT_KINDS:
        if reg.kind not in active:
            continue
        node = parts[reg.kind]
        comp = reg[node["name"]]
        if reg.kind in ("structure", "param", "estimator"):
            params[reg.kind] = comp.name
        for h in comp.hyperparameters:
            if h.from_dataset:  # the dataset's fact, filled in per task (bncbench.harness.dataset_values)
                continue
            if h.from_group == h.name:
                value = parts[h.name]["name"]
            elif h.from_group:
                value = {k: v for k, v in parts[h.from_group].items() if k not in ("name", "label") and v is not None}
                value = value or None
            else:
                value = node.get(h.name, h.default)
            value = _normalized(extra.pop(h.name, value), h.default)
            if value is None or (h.omit_default and value == h.default):
                continue
            params[h.name] = value
    for key in CLASSIFIER_KEYS:
        if key in extra:
            from bncbench.model.classifier import GENERAL  # the keyword's one declaration

            default, constraints = GENERAL[key]
            value = _normalized(extra.pop(key), default)
            if not any(getattr(c, "is_satisfied_by", lambda v: False)(value) for c in constraints):
                raise BNCBenchError(f"bad {key}={value!r}: {constraints[0]}")
            if value != default:
                params[key] = value
    unknown = sorted(set(extra) - set(SPEC_KEYS))
    if unknown:
        raise BNCBenchError(f"unknown model key(s) {', '.join(unknown)} for {params['structure']}/{params['param']}"
                            f"/{params['estimator']}; hyperparameters of these components: "
                            f"{', '.join(sorted(params)) or 'none'}")
    label = extra.get("label") or "".join(str(parts[g].get("label") or "") for g in active)
    return ModelSpec(str(label), params)


def _check_keys(reg, node: dict) -> None:
    """Every key of a composed option is ``name``, ``label`` or a hyperparameter its component declares.

    Hydra's ``+group.key=value`` adds keys even to typed configs: without this check a
    misspelled or foreign hyperparameter would be dropped silently.
    """
    from bncbench.validate import check_keys  # one wording for Python and the command line

    check_keys(reg[node.get("name")], set(node) - {"name", "label"})


def config_model(cfg) -> ModelSpec:
    """The single model of a composed config's groups (``cfg.structure`` etc.; a ``models:`` list is not read).

    What a run without ``models:`` evaluates (:func:`expand_models`): the model of
    ``compose_config(["optimizer=lbfgs_ebnc", "param=discriminative"])``, say, with the schema's and
    the options' defaults.

    Parameters
    ----------
    cfg : omegaconf.DictConfig or mapping
        A composed run config (:func:`bncbench.harness.app.compose_config`).

    Returns
    -------
    ModelSpec
        As :func:`model_spec`.

    Raises
    ------
    BNCBenchError
        As :func:`model_spec`.
    """
    return model_spec({g: cfg.get(g) for g in GROUPS})


def expand_models(cfg: DictConfig, compose_option: Callable[[str, str], Any]) -> list[ModelSpec]:
    """The experiment's model list.

    ``cfg.models`` is a list of items; each item maps some groups to one
    option or a list of options (crossed within the item); groups not named
    take the run's composed group (``cfg.structure`` etc., command-line
    overrides included); any other key is a hyperparameter (``m: 5``), a
    ``label``, or ``model: NAME`` for a baseline. Without ``cfg.models`` the
    single model of the composed groups is used. ``compose_option(group,
    option)`` returns Hydra's composition of ``conf/<group>/<option>.yaml``.

    Parameters
    ----------
    cfg : omegaconf.DictConfig
        The composed run config.
    compose_option : callable
        ``compose_option(group, option)`` -> the composed option (see
        :func:`bncbench.harness.app.option_composer`); its ``prefetch(pairs)``, if it has one, is called
        first with every ``(group, option)`` the grid names.

    Returns
    -------
    list of ModelSpec
        One spec per distinct label, in the order of first appearance (models with equal label
        and parameters are listed once).

    Raises
    ------
    BNCBenchError
        If two different models share a label, or a model fails :func:`model_spec` (or an
        option cannot be composed).
    """
    items = cfg.get("models")
    if not items:
        return [config_model(cfg)]
    defaults = {g: cfg.get(g) for g in GROUPS}
    items = [_plain(item) for item in items]
    prefetch = getattr(compose_option, "prefetch", None)
    if prefetch is not None:  # every option of the grid in one composition
        prefetch([(g, o) for item in items for g in GROUPS if item.get(g) is not None
                  for o in (item[g] if isinstance(item[g], list) else [item[g]])])
    specs: dict[str, ModelSpec] = {}
    for item in items:
        choices = []
        for g in GROUPS:
            opt = item.get(g)
            opts = [None] if opt is None else (opt if isinstance(opt, list) else [opt])
            choices.append([defaults[g] if o is None else compose_option(g, str(o)) for o in opts])
        extra = {k: v for k, v in item.items() if k not in GROUPS}
        for combo in itertools.product(*choices):
            spec = model_spec(dict(zip(GROUPS, combo)), extra)
            key = repr(sorted(spec.params.items()))
            if spec.label in specs and repr(sorted(specs[spec.label].params.items())) != key:
                raise BNCBenchError(f"two different models share the label {spec.label!r}; give one a 'label'")
            specs[spec.label] = spec
    return list(specs.values())


def make_estimator(params: dict[str, Any], cardinalities: ArrayLike | None) -> Any:
    """The estimator of a model spec: a baseline (``model: NAME``) or a BNClassifier.

    Parameters
    ----------
    params : dict
        A model's parameters (:attr:`bncbench.harness.model_specs.ModelSpec.params`). The key ``model`` (default
        ``"bnc"``) chooses the estimator; the other keys are its keyword arguments. Not modified.
    cardinalities : array-like of int or None
        Attribute cardinalities, passed to a :class:`~bncbench.BNClassifier` only (baselines do
        not take them).

    Returns
    -------
    estimator
        An unfitted :class:`bncbench.BNClassifier` (with ``discretize=False``: the data are codes)
        or an instance of the baseline registered as ``model`` in
        :data:`bncbench.components.BASELINES`.

    Raises
    ------
    BNCBenchError
        If ``model`` names no registered baseline.
    TypeError
        If a baseline does not accept one of the keys (a :class:`~bncbench.BNClassifier` only
        raises on unknown keywords when it is fitted or checked).
    """
    params = dict(params)
    kind = params.pop("model", "bnc")
    if kind == "bnc":
        from bncbench.model.classifier import BNClassifier

        return BNClassifier(**params, discretize=False, cardinalities=cardinalities)
    return BASELINES[kind].obj(**params)


def check_model(params: dict, label: str | None = None) -> None:
    """Validate one model of an experiment (a :class:`ModelSpec`'s parameters), fitting nothing.

    What the command line runs on every model before any task, and
    :func:`bncbench.harness.runner.run_experiment` too (:mod:`bncbench.validate`: one pass, one line).

    Parameters
    ----------
    params : dict
        The model's parameters: :class:`bncbench.BNClassifier` keywords, or a baseline's
        (``{"model": "random_forest", ...}``).
    label : str, optional
        The model's label, prefixed to the message (``model 'KDB-1': ...``).

    Raises
    ------
    BNCBenchError
        One line: an unknown keyword, or what :func:`bncbench.validate.check_classifier` refuses.
    """
    prefix = f"model {label!r}: " if label is not None else ""
    try:
        clf = make_estimator(params, None)
        if hasattr(clf, "_check_components"):  # a BNClassifier: bncbench.validate.check_classifier
            clf._check_components()
    except TypeError as exc:
        raise BNCBenchError(f"{prefix}{exc}") from None
    except BNCBenchError as exc:
        raise BNCBenchError(f"{prefix}{exc}") from None
