"""Hyperparameters chosen on the validation part of the training data (Pernkopf et al. §5, "cross tuning").

With ``optimizer_options={"grid": {name: [values...], ...}, "validation_fraction": f, ...}``,
:func:`bncbench.engine.fit.fit_ccbn` fits one model per point of the grid's Cartesian product, each with
early stopping (:mod:`bncbench.engine.validation`) on the **same** held-out split, and keeps the
one of lowest held-out error (ties: lowest held-out NLL, then the first in grid order). The grid
names hyperparameters of the chosen components: the parameterization's (``lam``, ``reg``,
``level``, ...), the initialization's and the objective's (``margin_lam``, ``kappa``, ``eta`` of
``objective=margin``); each value is checked against the hyperparameter's declared constraints.
The kept model carries :attr:`~bncbench.engine.fit.CCBNModel.tuning`: the chosen values and, per
candidate, its values, held-out error and NLL at its best iterate, that iterate and its fit time.
Its ``trace`` (with ``val_error`` per iteration) is the chosen candidate's validation curve.

Nothing here knows a component by name: any optimizer, parameterization or objective can be tuned.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import Callable

from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

from bncbench.components import INITS, OBJECTIVES, PARAMETERIZATIONS
from bncbench.errors import BNCBenchError

KEY = "grid"
"""The option of ``optimizer_options`` that holds the grid."""

SELECTORS = ("init", "optimizer", "optimizer_options", "objective")
"""Hyperparameters of an optimized parameterization that choose components: not tunable here."""


def tunable(param: str, init: str, objective: str) -> dict:
    """The hyperparameters a grid may name for these components, with their constraints.

    Parameters
    ----------
    param, init, objective : str
        Registered names.

    Returns
    -------
    dict
        ``{name: constraints}`` of the parameterization's hyperparameters (the component
        selectors excepted), the initialization's and the objective's.
    """
    out = {}
    for comp in (PARAMETERIZATIONS[param], INITS[init], OBJECTIVES[objective]):
        out.update({h.name: h.constraints for h in comp.hyperparameters if h.name not in SELECTORS})
    return out


def candidates(grid: dict, param: str, init: str, objective: str) -> list[dict]:
    """The points of ``grid``'s Cartesian product, in grid order (the last name varies fastest).

    Parameters
    ----------
    grid : dict
        ``{name: list of values}``.
    param, init, objective : str
        The chosen components (:func:`tunable`).

    Returns
    -------
    list of dict

    Raises
    ------
    BNCBenchError
        If the grid is empty, names a hyperparameter these components do not read, has an empty
        list, or a value outside its hyperparameter's constraints.
    """
    if not isinstance(grid, dict) or not grid:
        raise BNCBenchError(f"optimizer option {KEY!r} must be a non-empty mapping of hyperparameter to values")
    known = tunable(param, init, objective)
    unknown = sorted(set(grid) - set(known))
    if unknown:
        raise BNCBenchError(f"cannot tune {', '.join(map(repr, unknown))}: not read by param {param!r}, init "
                            f"{init!r} or objective {objective!r}; tunable: {', '.join(known)}")
    values = {}
    for name, vals in grid.items():
        vals = list(vals) if isinstance(vals, Sequence) and not isinstance(vals, str) else [vals]
        if not vals:
            raise BNCBenchError(f"the grid of {name!r} is empty")
        for v in vals:
            try:
                validate_parameter_constraints({name: known[name]}, {name: v}, caller_name="grid")
            except InvalidParameterError as exc:
                raise BNCBenchError(str(exc)) from None
        values[name] = vals
    names = list(values)
    return [dict(zip(names, point)) for point in itertools.product(*values.values())]


def best_of(trace: list[dict]) -> tuple[float, float, int]:
    """The held-out error, NLL and iteration of a trace's best iterate (lowest error, then NLL)."""
    scored = [(t["val_error"], t["val_nll"], t["iter"]) for t in trace if "val_error" in t]
    if not scored:
        raise BNCBenchError("a tuned fit recorded no held-out scores")
    return min(scored)


def fit_grid(fit: Callable, *, param: str, init: str, objective: str, optimizer_options: dict,
             hyperparameters: dict):
    """Fit every candidate of the grid with early stopping on one split; the best model, its tuning attached.

    Parameters
    ----------
    fit : callable
        ``fit(optimizer_options=..., **hyperparameters)`` -> a model with a ``trace``
        (:func:`bncbench.engine.fit.fit_ccbn` with its other arguments bound).
    param, init, objective : str
        The chosen components.
    optimizer_options : dict
        With :data:`KEY` and ``validation_fraction``; the candidates get it without :data:`KEY`.
    hyperparameters : dict
        The components' values; a candidate's grid values replace them.

    Returns
    -------
    model
        The chosen candidate's model, with ``tuning = {"chosen": {...}, "candidates": [...]}``; each
        candidate ``{**values, "val_error", "val_nll", "best_iter", "n_iter", "time"}``
        (``n_iter``: iterations run, up to the early stop).

    Raises
    ------
    BNCBenchError
        If ``validation_fraction`` is not set, or as :func:`candidates`.
    """
    opts = dict(optimizer_options)
    grid = opts.pop(KEY)
    if opts.get("validation_fraction") is None:
        raise BNCBenchError(f"optimizer option {KEY!r} chooses hyperparameters on a held-out part: set "
                            "validation_fraction too")
    best, best_key, rows = None, None, []
    for cand in candidates(grid, param, init, objective):
        t0 = time.perf_counter()
        model = fit(optimizer_options=opts, **{**hyperparameters, **cand})
        err, nll, it = best_of(model.trace)
        rows.append({**cand, "val_error": float(err), "val_nll": float(nll), "best_iter": int(it),
                     "n_iter": int(model.trace[-1]["iter"]), "time": time.perf_counter() - t0})
        if best_key is None or (err, nll) < best_key:
            best, best_key, chosen = model, (err, nll), cand
    best.tuning = {"chosen": dict(chosen), "candidates": rows}
    return best
