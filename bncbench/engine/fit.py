"""Class-conditional BNs (CCBN): discriminative, extended and weighted parameters.

The entry point of the optimized parameterizations::

    model = fit_ccbn(scorer, codes, y_codes, param="weighted", init="zeros", optimizer="lbfgs")
    model.log_joint(codes)  # (N, n_classes) unnormalized log scores

``scorer`` is the estimator's :class:`~bncbench.estimators.mestimate.CountScorer`
(its count tables, columns and m), or a geometric ensemble of them; every other
choice is an explicit argument.
The engine lives in :mod:`bncbench.engine` (see ``docs/engine.md``).
"""

from __future__ import annotations

import functools

import numpy as np

from bncbench.components import INITS, OBJECTIVES, PARAMETERIZATIONS
from bncbench.engine import Data, Layout, Problem, make_map, optimize, tuning, validation
from bncbench.engine.composite import CompositeLayout
from bncbench.engine.inits import make_init
from bncbench.engine.optim import engine_options, option_value
from bncbench.engine.problem import REG_SCALES
from bncbench.engine.row_table import design_of
from bncbench.engine.subset_layout import SubsetLayout
from bncbench.errors import BNCBenchError
from bncbench.registry import union


class CCBNModel:
    """A fitted CCBN: layout, parameter map, free parameters and the full ``Phi``.

    Attributes
    ----------
    x : ndarray           free parameters at the end of optimization
    phi : ndarray         (n_rows, n_classes) log potentials used at prediction
    trace : list of dict  per-iteration ``{"iter", "nll", "n_fev", "time"}``
    n_iter, n_fev : int   optimizer iterations and full-data evaluations
    train_cll : float     training CLL (summed over instances) at ``x``
    columns : ndarray     the attributes the network uses
    n_parameters : int    the parameters the optimizer adjusts
    base : CountScorer    the generative estimate it was built on
    materialize : bool    score through the row table even where the layout has an on-the-fly design
    """

    def __init__(self, layout, pmap, problem, x, trace, n_iter, columns=None, materialize=False):
        self.layout, self.pmap = layout, pmap
        self.materialize = bool(materialize)
        self.x = x
        self.phi = pmap.phi_full(x)
        self.trace = trace
        self.n_iter = int(n_iter)
        self.n_fev = int(problem.n_fev)
        self.train_cll = -float(problem.nll(x))
        self.columns = None if columns is None else np.asarray(columns, dtype=np.int64)
        self.n_classes = int(layout.n_classes)
        self.n_parameters = int(pmap.n_params)
        self.tuning = None  # with optimizer option "grid": the chosen values and every candidate's (engine/tuning.py)

    def _codes(self, codes):
        return codes if self.columns is None else codes[:, self.columns]

    def rows(self, codes) -> np.ndarray:
        return self.layout.rows(self._codes(codes))

    def log_prior(self) -> np.ndarray:
        """The class row of ``Phi`` (a log prior up to a constant)."""
        return self.phi[0].copy()

    def log_joint(self, codes) -> np.ndarray:
        """Unnormalized log scores of every class: (N, n_classes)."""
        return design_of(self.layout, self._codes(codes), self.materialize).scores(self.phi)

    log_potentials = log_joint


def effective_lam(lam: float, reg_scale: str, n_instances: int) -> float:
    """The weight of the penalty beside the summed NLL that the engine minimizes.

    ``"sum"``: ``lam`` itself; ``"mean"``: ``lam * n_instances``, so that the optimum is that of
    ``mean NLL + lam/2 ||x - c||^2`` (the convention of a C that multiplies a per-instance loss).

    Raises
    ------
    BNCBenchError
        If ``reg_scale`` is not one of :data:`~bncbench.engine.problem.REG_SCALES`.
    """
    if reg_scale not in REG_SCALES:
        raise BNCBenchError(f"unknown reg_scale {reg_scale!r}; choose one of {', '.join(REG_SCALES)}")
    return float(lam) * (int(n_instances) if reg_scale == "mean" else 1)


def component_values(param: str, init: str, objective: str, hyperparameters: dict) -> dict:
    """The hyperparameter values of the parameterization's own, the initialization's and the objective's.

    Parameters
    ----------
    param, init, objective : str
        Registered names.
    hyperparameters : dict
        Values by name; each component's undeclared ones take its declared defaults.

    Returns
    -------
    dict
        ``{"param": ..., "init": ..., "objective": ...}``, each the keyword arguments of that
        component (the parameterization's own hyperparameters only, not the shared ones).

    Raises
    ------
    BNCBenchError
        If a name is not registered, or ``hyperparameters`` has a key that no registered
        parameterization, initialization or objective declares (a key another one of them declares,
        such as ``level`` given to ``discriminative``, is not read).
    """
    pcomp, icomp, ocomp = PARAMETERIZATIONS[param], INITS[init], OBJECTIVES[objective]
    own = pcomp.info.get("own", ())
    out = {"param": {k: v for k, v in pcomp.params(hyperparameters).items() if k in own},
           "init": icomp.params(hyperparameters), "objective": ocomp.params(hyperparameters)}
    known = {h.name for comp in (pcomp, icomp, ocomp) for h in comp.hyperparameters}
    unknown = sorted(set(hyperparameters) - known)  # the union of every component's is needed only then
    if unknown:
        unknown = sorted(set(unknown) - set(union((PARAMETERIZATIONS, INITS, OBJECTIVES))))
    if unknown:
        raise BNCBenchError(f"unknown hyperparameter(s) {', '.join(map(repr, unknown))} for param {param!r}, "
                            f"init {init!r} and objective {objective!r}")
    return out


def _problem(layout, gen, codes, y_codes, *, param, init, reg, lam, objective, reg_scale="sum",
             backend=None, compress=None, two_class=None, materialize=None, combine_subsets=None, _shared=None,
             **hyperparameters):
    engine = engine_options({"backend": backend, "compress": compress, "two_class": two_class,
                             "materialize": materialize, "combine_subsets": combine_subsets})  # None: the default
    values = component_values(param, init, objective, hyperparameters)
    lam = effective_lam(lam, reg_scale, len(y_codes))
    # with _shared (the candidates of a grid, engine/tuning.py): the training rows and a parameter map of the same
    # parameterization and initialization values are built once (its generative start with it), not per candidate
    shared = {} if _shared is None else _shared
    key = ("pmap", param, init, repr(sorted(values["param"].items())), repr(sorted(values["init"].items())))
    pmap = shared.get(key)
    if pmap is None:
        pmap = shared[key] = make_map(param, layout, gen, make_init(init, **values["init"]), **values["param"])
    data = shared.get("data")
    if data is None:
        design = design_of(layout, codes, bool(engine["materialize"]), engine["combine_subsets"])
        data = shared["data"] = Data.from_design(design, y_codes, layout.n_classes, compress=bool(engine["compress"]))
        del design  # uncompressed: free it before the loss is built
    loss = OBJECTIVES[objective].obj(data, layout.n_trained, backend=engine["backend"],
                                     two_class=bool(engine["two_class"]),
                                     **values["objective"])
    return pmap, Problem(loss, pmap, reg, float(lam))


def build_problem(tables, codes, y_codes, *, param, init="zeros", m=1.0, reg="none", lam=0.0,
                  reg_scale="sum", objective="cll", backend=None, compress=None, two_class=None,
                  **hyperparameters):
    """Layout, parameter map and objective for training codes (without optimizing).

    ``codes`` are the columns of ``tables``. ``backend``, ``compress`` and
    ``two_class`` configure the loss (:class:`bncbench.engine.CLL`,
    :meth:`bncbench.engine.Data.from_rows`); they change the speed, not the objective.
    None: the engine default (:func:`bncbench.engine.optim.engine_options`).
    ``hyperparameters`` are the parameterization's own (``level``), the initialization's and the
    objective's (:func:`component_values`).
    """
    layout = Layout(tables, codes)
    pmap, problem = _problem(layout, layout.generative_phi(float(m)), codes, y_codes, param=param, init=init,
                             reg=reg, lam=lam, reg_scale=reg_scale, objective=objective,
                             backend=backend, compress=compress, two_class=two_class, **hyperparameters)
    return layout, pmap, problem


def _count_tables(scorer, param):
    tables = getattr(scorer, "tables", None)
    if tables is None:
        raise BNCBenchError(f"param {param!r} optimizes parameters over count tables, which this "
                            f"{type(scorer).__name__} has not (use estimator=map)")
    return tables


def factor_layout(scorer, codes, param: str = "discriminative"):
    """The engine's layout of a generative estimate, its generative ``Phi`` and the columns it reads.

    Parameters
    ----------
    scorer : CountScorer, EnsembleScorer or a scorer with ``factor_rows``
        One network's m-estimates, a geometric ensemble of them, or an
        attribute-subset model such as AnJE (:class:`~bncbench.engine.subset_layout.SubsetLayout`).
    codes : ndarray (n, a)
        Training codes of all the attributes.
    param : str
        The parameterization asking (for the error messages).

    Returns
    -------
    layout : Layout, CompositeLayout or SubsetLayout
    gen : ndarray (n_rows, n_classes)
        The generative log potentials (``w_m log theta`` on an ensemble member's rows).
    columns : ndarray of int or None
        The columns ``layout.rows`` reads; ``None``: it reads the codes of all attributes.
    """
    if callable(getattr(scorer, "factor_rows", None)):  # attribute-subset factors (AnJE): LR^n, DBL^n
        if getattr(PARAMETERIZATIONS[param].obj, "normalizes", False):
            raise BNCBenchError(f"param {param!r} normalizes every factor over its values; AnJE stores only the "
                                "value combinations seen in training, so use 'discriminative' (LR^n) or 'weighted' "
                                "(DBL^n)")
        layout = SubsetLayout(scorer)
        return layout, layout.generative_phi(), None
    members = getattr(scorer, "members", None)
    if members is None:
        layout = Layout(_count_tables(scorer, param), codes[:, scorer.columns])
        return layout, layout.generative_phi(float(scorer.m)), np.asarray(scorer.columns)
    if scorer.combine != "geometric":
        raise BNCBenchError(f"param {param!r} needs a log-linear model; the {scorer.combine} mean of "
                            f"{len(members)} networks is not one (use a geometric combination)")
    layouts = [Layout(_count_tables(mem, param), codes[:, mem.columns]) for mem in members]
    layout = CompositeLayout(layouts, [mem.columns for mem in members], scorer.weights)
    gen = layout.stack([lay.generative_phi(float(mem.m)) for lay, mem in zip(layouts, members)])
    return layout, gen, None


def _factor_rows(scorer, codes, param):
    """:func:`factor_layout` of ``scorer`` and the columns of ``codes`` its layout reads."""
    layout, gen, cols = factor_layout(scorer, codes, param)
    return layout, gen, cols, (codes if cols is None else codes[:, cols])


def scorer_problem(scorer, codes, y_codes, *, param: str, init: str = "generative", objective: str = "cll",
                   reg: str = "none", lam: float = 0.0, reg_scale: str = "sum", **options):
    """The layout, parameter map and objective :func:`fit_ccbn` optimizes for a generative estimate (not optimized).

    For benchmarks and probes of one objective (its value, gradient and cost per evaluation) on the
    very problem a fit solves; a held-out validation part (``validation_fraction``) is not made here.

    Parameters
    ----------
    scorer : CountScorer, EnsembleScorer or a scorer with ``factor_rows``
        The generative estimate (:func:`factor_layout`).
    codes, y_codes : ndarray
        Training codes of all the attributes, and class codes.
    param, init, objective : str
        Names in the registries of :mod:`bncbench.components`.
    reg, lam, reg_scale
        As :func:`fit_ccbn`.
    **options
        Engine options (``backend``, ``compress``, ``two_class``, ``materialize``, ``combine_subsets``;
        None or absent: the default) and the components' hyperparameters (``level`` of ``weighted``).

    Returns
    -------
    layout : Layout, CompositeLayout or SubsetLayout
    pmap : ParamMap
    problem : Problem
    """
    layout, gen, _, sub = _factor_rows(scorer, codes, param)
    pmap, problem = _problem(layout, gen, sub, y_codes, param=param, init=init, reg=reg, lam=lam,
                             reg_scale=reg_scale, objective=objective, **options)
    return layout, pmap, problem


def fit_ccbn(scorer, codes, y_codes, *, param: str, init: str = "generative", optimizer: str = "lbfgs",
             optimizer_options: dict | None = None, objective: str = "cll", reg: str = "none", lam: float = 0.0,
             reg_scale: str = "sum", _shared: dict | None = None, **hyperparameters) -> CCBNModel:
    """Optimize parameterization ``param`` over the count tables of ``scorer``.

    Parameters
    ----------
    scorer : CountScorer or EnsembleScorer
        The generative estimate: count tables of one network (its columns and
        m), or a geometric ensemble of such networks (:func:`factor_layout`).
    codes, y_codes : ndarray
        Training codes of all attributes, and class codes.
    param, init, optimizer, objective : str
        Names in the registries of :mod:`bncbench.components`.
    optimizer_options : dict, optional
        Optimizer options (:mod:`bncbench.engine.optim`), engine options included; with
        ``validation_fraction`` (and ``patience``, ``validation_seed``), the fit holds out that
        stratified fraction of the training rows and returns the iterate of lowest held-out error
        (:mod:`bncbench.engine.validation`): the parameters are then those of a fit on the rest.
        With ``grid`` (``{hyperparameter: [values]}``) too, one such fit per point of the grid on
        the same split, the one of lowest held-out error kept (:mod:`bncbench.engine.tuning`).
    reg, lam, reg_scale
        Regularization, its strength, and whether ``lam`` is per summed or per mean NLL
        (:func:`effective_lam`).
    **hyperparameters
        The parameterization's own hyperparameters (``level`` of ``weighted``), the
        initialization's and the objective's, each passed to the component that declares it.

    Returns
    -------
    CCBNModel

    Raises
    ------
    BNCBenchError
        If a name is not registered or a hyperparameter is declared by none of the components.
    """
    opts = dict(optimizer_options or {})
    if opts.get(tuning.KEY) is not None:  # a grid of hyperparameters chosen on the held-out part
        fit = functools.partial(fit_ccbn, scorer, codes, y_codes, param=param, init=init, optimizer=optimizer,
                                objective=objective, _shared={})  # what the candidates share, built once
        return tuning.fit_grid(fit, param=param, init=init, objective=objective, optimizer_options=opts,
                               hyperparameters={"reg": reg, "lam": lam, "reg_scale": reg_scale, **hyperparameters})
    engine = engine_options(opts)
    prep = None if _shared is None else _shared.get("prep")
    if prep is None:
        layout, gen, cols, sub = _factor_rows(scorer, codes, param)
        held = held_design = held_y = None
        if opts.get("validation_fraction") is not None:
            train, held = validation.split(y_codes, float(opts["validation_fraction"]),
                                            int(option_value(optimizer, opts, "validation_seed")))
            start = option_value(optimizer, opts, "validation_start")
            if start != validation.STARTS[0]:  # the start counted on `train` only
                scorer = validation.start_scorer(scorer, codes, y_codes, train, start)
                layout, gen, cols, sub = _factor_rows(scorer, codes, param)
            sub, y_codes, held_codes, held_y = sub[train], y_codes[train], sub[held], y_codes[held]
            held_design = design_of(layout, held_codes, engine["materialize"], engine["combine_subsets"])
        prep = (scorer, layout, gen, cols, sub, y_codes, held, held_design, held_y)
        if _shared is not None:
            _shared["prep"] = prep
    scorer, layout, gen, cols, sub, y_codes, held, held_design, held_y = prep
    pmap, problem = _problem(layout, gen, sub, y_codes, param=param, init=init, reg=reg, lam=lam,
                             reg_scale=reg_scale, objective=objective, _shared=_shared, **engine, **hyperparameters)
    if held is not None:
        patience = int(option_value(optimizer, opts, "patience"))
        problem.monitor = validation.Validation(pmap, held_design, held_y, patience)
    x, trace, n_iter = optimize(optimizer, problem, pmap.x0(), opts)
    model = CCBNModel(layout, pmap, problem, x, trace, n_iter, cols, engine["materialize"])
    model.base = scorer  # the generative estimate it started from
    return model
