"""Parameterizations, registered in :data:`~bncbench.components.PARAMETERIZATIONS`.

``generative``  the estimator's parameters as they are;
``discriminative``, ``extended``, ``weighted``  parameters optimized by the engine
(:mod:`bncbench.engine`; Zaidi et al. 2017, Table 2) over the factor layout of the
estimator's count tables, starting from an initialization, minimizing an objective
with an optimizer. The component object of an optimized parameterization is its
:class:`~bncbench.engine.params.ParamMap` class; :func:`register_optimized` registers one with
the hyperparameters every optimized parameterization reads (:data:`OPTIMIZED`) and its own.
"""

from __future__ import annotations

import sys
from typing import Iterable

from bncbench.components import INITS, OBJECTIVES, OPTIMIZERS, PARAMETERIZATIONS
from bncbench.engine.lr_mapping import LRMapping
from bncbench.engine.params import Discriminative, Extended, Weighted
from bncbench.engine.problem import REG_SCALES, REGS
from bncbench.registry import Hyperparameter, finite, integer, options

INIT = Hyperparameter("init", "generative", [options(INITS)], "initialization of optimized parameters", str,
                      from_group="init")
OPTIMIZER = Hyperparameter("optimizer", "lbfgs", [options(OPTIMIZERS)], "optimizer of optimized parameters", str,
                           from_group="optimizer")
OPTIMIZER_OPTIONS = Hyperparameter("optimizer_options", None, [dict, None],
                                   "options of the optimizer (stop rule, tolerances, ...; see the optimizer)",
                                   from_group="optimizer")
OBJECTIVE = Hyperparameter("objective", "cll", [options(OBJECTIVES)], "objective of optimized parameters", str,
                           omit_default=True, from_group="objective")
REG = Hyperparameter("reg", "none", [options(REGS)],
                     "regularization: none, lam/2 ||x||^2 (l2), lam/2 ||x - 1||^2 (l2_one), or the same weighted per "
                     "parameter by the training rows using it (rows, rows_one: the ALR code's penalty of LR^n/DBL^n; "
                     "rows_gen: toward the generative model's parameters, AnJE's exponent for DBL^n)",
                     str)
LAM = Hyperparameter("lam", 0.0, [finite(0.0)], "regularization strength", float)
REG_SCALE = Hyperparameter("reg_scale", "sum", [options(REG_SCALES)],
                           "lam beside the summed NLL (sum) or the mean NLL (mean: the penalty times N)", str,
                           omit_default=True)
LEVEL = Hyperparameter("level", 4, [integer(1, 4)],
                       "weight tying (§5.4): 1 per attribute, 2 per value, 3 per value and class, 4 untied", int)
OPTIMIZED = (INIT, OPTIMIZER, OPTIMIZER_OPTIONS, OBJECTIVE, REG, LAM, REG_SCALE)
"""The hyperparameters every optimized parameterization reads."""




def register_optimized(name: str, *, hyperparameters: Iterable[Hyperparameter] = (), label: str = "",
                       doc: str | None = None, replace: bool = False, **info):
    """Decorator registering a :class:`~bncbench.engine.params.ParamMap` class as an optimized parameterization.

    The component reads :data:`OPTIMIZED` (init, optimizer, objective, regularization) and
    ``hyperparameters``, its own, which the engine passes to the class as keyword arguments
    after ``(layout, gen, init)`` (:func:`bncbench.engine.params.make_map`).

    Parameters
    ----------
    name : str
        The parameterization's name (``param=NAME``).
    hyperparameters : iterable of Hyperparameter, default=()
        The map's own hyperparameters.
    label, doc, replace, **info
        As :meth:`bncbench.registry.Registry.register`.

    Returns
    -------
    callable
        The decorator; it returns the class unchanged.
    """
    own = tuple(hyperparameters)
    return PARAMETERIZATIONS.register(name, label=label, hyperparameters=(*OPTIMIZED, *own), doc=doc,
                                      replace=replace, module=sys._getframe(1).f_globals.get("__name__", ""),
                                      optimized=True, own=tuple(h.name for h in own), **info)


@PARAMETERIZATIONS.register("generative", label="", optimized=False,
                            doc="the estimator's generative parameters")
class Generative:
    """The estimator's parameters as they are (no optimization)."""


register_optimized("discriminative", label="^d",
                   doc="free log-potentials beta (Zaidi et al. 2017 §3; NB^d is logistic regression)")(Discriminative)
register_optimized("extended", label="^e",
                   doc="softmax(beta) per (attribute, class, parent configuration) (ELR; §4)")(Extended)
register_optimized("weighted", label="^w", hyperparameters=(LEVEL,),
                   doc="weights on the generative log theta, tied by level (§5)")(Weighted)
register_optimized("lr_mapping", label="^LR",
                   doc="Feelders & Ivanovs' LR mapping: one weight per complete subgraph's non-reference value "
                       "combination and free class (perfect canonical graphs)")(LRMapping)

from bncbench.engine.roos import BNSpace, LRRoos  # noqa: E402  (Feelders & Ivanovs' other two spaces)

register_optimized("lr_roos", label="^Roos",
                   doc="Roos et al.'s LR mapping: one weight per family configuration and free class, class 0 "
                       "fixed at 0 (the discriminative map with the reference class fixed)")(LRRoos)
register_optimized("bn_space", label="^BN",
                   doc="Feelders & Ivanovs' BN space: softmax-parameterized theta (the extended map) with §5.2's "
                       "flop costs")(BNSpace)
