"""Class-conditional BNs (CCBN): discriminative, extended and weighted parameters.

The entry point of the optimized parameterizations::

    model = fit_ccbn(scorer, codes, y_codes, param="weighted", init="zeros", optimizer="lbfgs")
    model.log_joint(codes)  # (N, n_classes) unnormalized log scores

``scorer`` is the estimator's :class:`~bncbench.estimators.mestimate.CountScorer`
(its count tables, columns and m); every other choice is an explicit argument.
The engine lives in :mod:`bncbench.engine` (see ``docs/engine.md``).
"""

from __future__ import annotations

import numpy as np

from bncbench.components import OBJECTIVES
from bncbench.engine import Data, Layout, Problem, make_map, optimize, scores
from bncbench.engine.optim import ENGINE_KEYS
from bncbench.errors import BNCBenchError


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
    """

    def __init__(self, layout, pmap, problem, x, trace, n_iter, columns=None):
        self.layout, self.pmap = layout, pmap
        self.x = x
        self.phi = pmap.phi_full(x)
        self.trace = trace
        self.n_iter = int(n_iter)
        self.n_fev = int(problem.n_fev)
        self.train_cll = -float(problem.nll(x))
        self.columns = None if columns is None else np.asarray(columns, dtype=np.int64)
        self.n_classes = int(layout.n_classes)
        self.n_parameters = int(pmap.n_params)

    def _codes(self, codes):
        return codes if self.columns is None else codes[:, self.columns]

    def rows(self, codes) -> np.ndarray:
        return self.layout.rows(self._codes(codes))

    def log_prior(self) -> np.ndarray:
        """The class row of ``Phi`` (a log prior up to a constant)."""
        return self.phi[0].copy()

    def log_joint(self, codes) -> np.ndarray:
        """Unnormalized log scores of every class: (N, n_classes)."""
        return scores(self.rows(codes), self.phi)

    log_potentials = log_joint


def build_problem(tables, codes, y_codes, *, param, init="zeros", level=4, m=1.0, reg="none", lam=0.0,
                  objective="cll", backend="numba", compress=True, two_class=True):
    """Layout, parameter map and objective for training codes (without optimizing).

    ``codes`` are the columns of ``tables``. ``backend``, ``compress`` and
    ``two_class`` configure the loss (:class:`bncbench.engine.CLL`,
    :meth:`bncbench.engine.Data.from_rows`); they change the speed, not the objective.
    """
    layout = Layout(tables, codes)
    gen = layout.generative_phi(float(m))
    pmap = make_map(param, layout, gen, init, int(level))
    data = Data.from_rows(layout.rows(codes), y_codes, tables.n_classes, compress=bool(compress))
    loss = OBJECTIVES[objective].obj(data, layout.n_trained, backend, bool(two_class))
    problem = Problem(loss, pmap, reg, float(lam))
    return layout, pmap, problem


def fit_ccbn(scorer, codes, y_codes, *, param: str, init: str = "generative", optimizer: str = "lbfgs",
             optimizer_options: dict | None = None, objective: str = "cll", reg: str = "none", lam: float = 0.0,
             level: int = 4) -> CCBNModel:
    """Optimize parameterization ``param`` over the count tables of ``scorer``.

    Parameters
    ----------
    scorer : CountScorer
        The generative estimate: count tables of one network, its columns and m.
    codes, y_codes : ndarray
        Training codes of all attributes, and class codes.
    param, init, optimizer, objective : str
        Names in the registries of :mod:`bncbench.components`.
    optimizer_options : dict, optional
        Optimizer options (:mod:`bncbench.engine.optim`), engine options included.
    reg, lam, level
        Regularization, its strength, and the weight tying of ``"weighted"``.

    Returns
    -------
    CCBNModel
    """
    if hasattr(scorer, "members"):
        raise BNCBenchError(f"param {param!r} over an ensemble of {len(scorer.members)} networks ({scorer.combine} "
                            "rule): the engine's layout of several networks is not implemented yet")
    tables = getattr(scorer, "tables", None)
    if tables is None:
        raise BNCBenchError(f"param {param!r} optimizes parameters over count tables, which this "
                            f"{type(scorer).__name__} has not (use estimator=map)")
    opts = dict(optimizer_options or {})
    engine = {k: opts[k] for k in ENGINE_KEYS if k in opts}
    cols = scorer.columns
    sub = codes[:, cols]
    layout, pmap, problem = build_problem(tables, sub, y_codes, param=param, init=init, level=level, m=scorer.m,
                                          reg=reg, lam=lam, objective=objective, **engine)
    x, trace, n_iter = optimize(optimizer, problem, pmap.x0(), opts)
    model = CCBNModel(layout, pmap, problem, x, trace, n_iter, cols)
    model.base = scorer  # the generative estimate it started from
    return model
