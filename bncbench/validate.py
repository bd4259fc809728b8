"""One validation pass: values against the registries' declarations, one line for a bad one, whatever the route.

A model's, an optimizer's and an executor's values are checked here and nowhere else, from the
declarations of :mod:`bncbench.registry` (constraints, the component's ``check``): by
:class:`bncbench.BNClassifier` at ``fit``, by :func:`bncbench.harness.runner.run_experiment` before any task,
by :func:`bncbench.executors.make_executor`, and on the command line by ``bncbench.harness.app.prepare``
(:func:`bncbench.harness.model_specs.check_model`) and when Hydra refuses a value's type at composition
(:func:`config_value_error`, which reruns the value through :func:`check_values`). So a bad value
gets the same line from Python and from the command line (there prefixed with the model's label,
``model 'KDB-1': ...``, or ``bad configuration: ...``); ``tests/test_validation_routes.py`` walks bad
values through both.
"""

from __future__ import annotations

from typing import Any, Iterable

from sklearn.utils._param_validation import InvalidParameterError, make_constraint, validate_parameter_constraints

from bncbench.components import (ESTIMATORS, EXECUTORS, FLAT_KINDS, INITS, MODEL_KINDS, OBJECTIVES, OPTIMIZERS,
                                 PARAMETERIZATIONS, STRUCTURES)
from bncbench.errors import BNCBenchError, did_you_mean
from bncbench.registry import LIVE_CONSTRAINTS, Component, ParameterError

__all__ = ["check_classifier", "check_constraints", "check_keys", "check_values", "config_value_error", "owner"]

CLASSIFIER = "BNClassifier"
"""The owner named for :class:`bncbench.BNClassifier`'s keywords (scikit-learn's ``caller_name``)."""


def owner(comp: Component) -> str:
    """Who a hyperparameter of ``comp`` belongs to, as messages name it.

    Parameters
    ----------
    comp : Component
        A registered component.

    Returns
    -------
    str
        ``"BNClassifier"`` for the kinds whose hyperparameters are its keywords
        (:data:`bncbench.components.FLAT_KINDS`), else ``"<kind> '<name>'"`` (``optimizer 'lbfgs'``).
    """
    if any(comp.kind == reg.kind for reg in FLAT_KINDS):
        return CLASSIFIER
    return f"{comp.kind} {comp.name!r}"


def check_constraints(constraints: dict, values: dict, who: str) -> None:
    """scikit-learn's check of ``values`` against ``constraints``, raised as one :class:`ParameterError` line.

    Parameters
    ----------
    constraints : dict
        ``{name: [constraint, ...]}``; names without constraints are not checked.
    values : dict
        ``{name: value}``.
    who : str
        The owner named in the message (``BNClassifier``, ``optimizer 'lbfgs'``).

    Raises
    ------
    ParameterError
        ``The 'k' parameter of BNClassifier must be an int in the range [0, inf). Got -1 instead.``
    """
    # scikit-learn's own test of each value (a constraint object's ``is_satisfied_by``), on constraint objects made
    # once per declaration; a value none satisfies (or an undeclared form) goes to scikit-learn's function, which
    # raises its message (it makes every constraint object anew at each call: half the cost of a small fit's check)
    rest = {}
    for name, value in values.items():
        cons = constraints.get(name)
        if cons is None:
            continue
        key = (id(cons), type(value), value) if type(value) in _SCALARS else None
        if key is not None and key in _ACCEPTED and _MADE.get(id(cons), (None,))[0] is cons:
            continue  # this declaration accepted this immutable value before
        made = _made(cons)
        if made is None or not any(c.is_satisfied_by(value) for c in made):
            rest[name] = value
        elif key is not None and _MADE[id(cons)][2]:
            _ACCEPTED[key] = True
    if not rest:
        return
    try:
        validate_parameter_constraints(constraints, rest, caller_name=who)
    except InvalidParameterError as exc:
        raise ParameterError(" ".join(str(exc).split())) from None


_MADE: dict = {}
_ACCEPTED: dict = {}
"""``(id of a declared list, type, value)`` of immutable values it accepted (the test is a function of the value)."""
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _made(cons):
    """scikit-learn's constraint objects of a declared list (``make_constraint`` of each), made once per list; None
    for another form (``"no_validation"``)."""
    hit = _MADE.get(id(cons))
    if hit is not None and hit[0] is cons:
        return hit[1]
    if not isinstance(cons, (list, tuple)):
        return None
    made = [make_constraint(c) for c in cons]
    # an acceptance is remembered only where every test depends on the value alone: not a registry's names, which
    # plug-ins extend (and tests take back)
    fixed = not any(isinstance(c, LIVE_CONSTRAINTS) for c in made)
    if len(_MADE) > 4096 or len(_ACCEPTED) > 65536:  # declarations are few; lists built per call would pile up
        _MADE.clear()
        _ACCEPTED.clear()  # its keys hold ids of the lists _MADE kept alive
    _MADE[id(cons)] = (cons, made, fixed)  # the list is kept, so its id is not reused
    return made


def _noun(comp: Component) -> str:
    return "option" if comp.kind == EXECUTORS.kind else "hyperparameter"


def check_keys(comp: Component, keys: Iterable[str]) -> None:
    """Refuse, in one line naming the closest, a key ``comp`` does not declare.

    Parameters
    ----------
    comp : Component
        The component (hyperparameters set through another group, ``from_group``, or from the dataset, ``from_dataset``, are not its keys).
    keys : iterable of str
        The keys given (``name`` and ``label`` of a config node excluded by the caller).

    Raises
    ------
    BNCBenchError
        ``optimizer 'lbfgs' has no hyperparameter 'histry' (optimizer.histry) (did you mean
        'optimizer.history'?); its hyperparameters: ...``
    """
    declared = [h.name for h in comp.hyperparameters if not (h.from_group or h.from_dataset)]
    unknown = sorted(set(keys) - set(declared))
    if unknown:
        noun = _noun(comp)
        raise BNCBenchError(f"{comp.kind} {comp.name!r} has no {noun} {', '.join(map(repr, unknown))} "
                            f"({', '.join(f'{comp.kind}.{k}' for k in unknown)})"
                            f"{did_you_mean(f'{comp.kind}.{unknown[0]}', [f'{comp.kind}.{k}' for k in declared])}; "
                            f"its {noun}s: {', '.join(sorted(declared)) or 'none'}")


def check_values(comp: Component, values: dict, *, who: str | None = None) -> dict:
    """``comp``'s hyperparameter values, checked against its declarations: constraints, then ``comp.check``.

    Parameters
    ----------
    comp : Component
        The component.
    values : dict
        Values by name; other keys are ignored, missing hyperparameters take their declared default.
    who : str, optional
        The owner named in messages; default :func:`owner`.

    Returns
    -------
    dict
        :meth:`Component.params` of ``values``: one entry per declared hyperparameter.

    Raises
    ------
    ParameterError
        If a value is outside its declared constraints.
    BNCBenchError
        If ``comp.check`` rejects the values.
    """
    full = comp.params(values)
    check_constraints({h.name: h.constraints for h in comp.hyperparameters}, full, who or owner(comp))
    if comp.check is not None:
        comp.check(full)
    return full


def check_classifier(params: dict, keywords: dict) -> dict:
    """Validate :class:`bncbench.BNClassifier`'s keywords: every constraint, then the chosen components.

    Every keyword is checked against its constraints (scikit-learn's rule: those of components not
    chosen too); then the chosen structure, estimator and parameterization (and, for an optimized
    parameterization, the initialization, objective and the optimizer's ``optimizer_options``) run
    their ``check``; an optimized parameterization needs an estimator with count tables.

    Parameters
    ----------
    params : dict
        ``BNClassifier.get_params(deep=False)`` (missing keywords take their defaults).
    keywords : dict
        ``{keyword: (default, constraints)}``: the classifier's keyword table, built from the
        registries (``bncbench.model.classifier._hyperparameters``).

    Returns
    -------
    dict
        The chosen components by kind (``structure``, ``estimator``, ``param``; and ``init``,
        ``objective``, ``optimizer`` when optimized).

    Raises
    ------
    ParameterError
        If a value is outside its constraints (scikit-learn's message, owner ``BNClassifier``; an
        optimizer option's owner is ``optimizer '<name>'``).
    BNCBenchError
        If an optimizer option is undeclared, a component's ``check`` rejects the values, or the
        estimator has no count tables for an optimized parameterization.
    """
    spec = keywords
    values = {name: params.get(name, default) for name, (default, _) in spec.items()}
    check_constraints({name: cons for name, (_, cons) in spec.items()}, values, CLASSIFIER)
    comps = {"structure": STRUCTURES[values["structure"]], "estimator": ESTIMATORS[values["estimator"]],
             "param": PARAMETERIZATIONS[values["param"]]}
    optimized = bool(comps["param"].info.get("optimized"))
    if optimized:
        comps.update(init=INITS[values["init"]], objective=OBJECTIVES[values["objective"]],
                     optimizer=OPTIMIZERS[values["optimizer"]])
        opts = dict(values.get("optimizer_options") or {})
        check_keys(comps["optimizer"], opts)
        check_values(comps["optimizer"], opts)
    for kind, comp in comps.items():
        if kind != "optimizer" and comp.check is not None:
            comp.check(values)
    if optimized and not comps["estimator"].info.get("counts"):
        raise BNCBenchError(f"estimator={values['estimator']!r} gives generative parameters only; param="
                            f"{values['param']!r} needs an estimator with count tables (map)")
    return comps


def config_value_error(exc: BaseException) -> str | None:
    """A value Hydra refused at composition (its type), as :func:`check_values` words it; None for another error.

    Hydra checks a component option's values against its typed schema (``structure.k=abc``) before
    anything else sees them; its message names the schema's field type. The value is rerun here
    through the component's declarations, so the line is the one Python gives for it, followed by
    Hydra's reason.

    Parameters
    ----------
    exc : BaseException
        The composition error (its causes are searched for omegaconf's ``ValidationError``).

    Returns
    -------
    str or None
        ``The 'k' parameter of BNClassifier must be an int in the range [0, inf). Got 'abc' instead.
        (structure.k=abc: Value 'abc' of type 'str' could not be converted to Integer)``, or None when
        the error is not about a registered component's hyperparameter or the declarations accept
        the value.
    """
    from omegaconf.errors import ValidationError

    while exc is not None and not isinstance(exc, ValidationError):
        exc = exc.__cause__
    if exc is None:
        return None
    group, _, key = str(getattr(exc, "full_key", "") or "").partition(".")
    node = getattr(exc, "parent_node", None)
    reg = next((r for r in (*MODEL_KINDS, EXECUTORS) if r.kind == group), None)
    if reg is None or "." in key or node is None or not hasattr(node, "get") or node.get("name") not in reg:
        return None
    comp = reg[node.get("name")]
    if key not in {h.name for h in comp.hyperparameters}:
        return None
    value: Any = getattr(exc, "value", None)
    try:
        check_constraints({h.name: h.constraints for h in comp.hyperparameters if h.name == key}, {key: value},
                          owner(comp))
    except ParameterError as err:
        reason = " ".join((str(exc).splitlines() or [""])[0].split())  # without omegaconf's full_key lines
        return f"{err} ({group}.{key}={value}: {reason})"
    return None
