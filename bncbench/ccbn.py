"""Class-conditional BNs (CCBN): discriminative, extended and weighted parameters.

Entry point of :class:`bncbench.BNClassifier` for ``param != "generative"``::

    model = fit_ccbn(clf, codes, y_codes)
    model.log_potentials(codes)  # (N, n_classes) unnormalized log scores

The engine lives in :mod:`bncbench.engine` (see ``docs/engine.md``).
"""

from __future__ import annotations

import numpy as np

from bncbench.engine import CLL, Data, Layout, Problem, make_map, optimize, scores
from bncbench.engine.optim import ENGINE_KEYS


class CCBNModel:
    """A fitted CCBN: layout, parameter map, free parameters and the full ``Phi``.

    Attributes
    ----------
    x : ndarray           free parameters at the end of optimization
    phi : ndarray         (n_rows, n_classes) log potentials used at prediction
    trace : list of dict  per-iteration ``{"iter", "nll", "n_fev", "time"}``
    n_iter, n_fev : int   optimizer iterations and full-data evaluations
    train_cll : float     training CLL (summed over instances) at ``x``
    """

    def __init__(self, layout, pmap, problem, x, trace, n_iter):
        self.layout, self.pmap, self.problem = layout, pmap, problem
        self.x = x
        self.phi = pmap.phi_full(x)
        self.trace = trace
        self.n_iter = int(n_iter)
        self.n_fev = int(problem.n_fev)
        self.train_cll = -float(problem.nll(x))
        self.problem = None  # drop the training data reference

    def rows(self, codes) -> np.ndarray:
        return self.layout.rows(codes)

    def log_potentials(self, codes) -> np.ndarray:
        return scores(self.layout.rows(codes), self.phi)


def build_problem(tables, codes, y_codes, *, param, init="zeros", level=4, m=1.0, reg="none", lam=0.0,
                  backend="numba", compress=True, two_class=True):
    """Layout, parameter map and objective for training codes (without optimizing).

    ``backend``, ``compress`` and ``two_class`` configure the loss
    (:class:`bncbench.engine.CLL`, :meth:`bncbench.engine.Data.from_rows`);
    they change the speed, not the objective.
    """
    layout = Layout(tables, codes)
    gen = layout.generative_phi(float(m))
    pmap = make_map(param, layout, gen, init, int(level))
    data = Data.from_rows(layout.rows(codes), y_codes, tables.n_classes, compress=bool(compress))
    problem = Problem(CLL(data, layout.n_trained, backend, bool(two_class)), pmap, reg, float(lam))
    return layout, pmap, problem


def fit_ccbn(clf, codes, y_codes) -> CCBNModel:
    """Optimize the parameters of ``clf.param`` on the estimator's fitted tables."""
    opts = dict(clf.optimizer_options or {})
    engine = {k: opts[k] for k in ENGINE_KEYS if k in opts}
    layout, pmap, problem = build_problem(
        clf.tables_, codes, y_codes, param=clf.param, init=clf.init, level=getattr(clf, "level", 4),
        m=clf.m_, reg=getattr(clf, "reg", "none"), lam=getattr(clf, "lam", 0.0), **engine,
    )
    x, trace, n_iter = optimize(clf.optimizer, problem, pmap.x0(), opts)
    return CCBNModel(layout, pmap, problem, x, trace, n_iter)
