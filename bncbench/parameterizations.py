"""Parameterizations and initializations, registered in :data:`~bncbench.components.PARAMETERIZATIONS`
and :data:`~bncbench.components.INITS`.

``generative``  the estimator's parameters as they are;
``discriminative``, ``extended``, ``weighted``  parameters optimized by the engine
(:mod:`bncbench.engine`; Zaidi et al. 2017, Table 2) over the factor layout of the
estimator's count tables, starting from an initialization, minimizing an objective
with an optimizer. The component object of an optimized parameterization is its
:class:`~bncbench.engine.params.ParamMap` class.
"""

from __future__ import annotations

from bncbench.components import INITS, OBJECTIVES, OPTIMIZERS, PARAMETERIZATIONS
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
                     "parameter by the training rows using it (rows, rows_one: the ALR code's penalty of LR^n/DBL^n)",
                     str)
LAM = Hyperparameter("lam", 0.0, [finite(0.0)], "regularization strength", float)
REG_SCALE = Hyperparameter("reg_scale", "sum", [options(REG_SCALES)],
                           "lam beside the summed NLL (sum) or the mean NLL (mean: the penalty times N)", str,
                           omit_default=True)
LEVEL = Hyperparameter("level", 4, [integer(1, 4)],
                       "weight tying (§5.4): 1 per attribute, 2 per value, 3 per value and class, 4 untied", int)
OPTIMIZED = (INIT, OPTIMIZER, OPTIMIZER_OPTIONS, OBJECTIVE, REG, LAM, REG_SCALE)
"""The hyperparameters every optimized parameterization reads."""


@PARAMETERIZATIONS.register("generative", label="", optimized=False,
                            doc="the estimator's generative parameters")
class Generative:
    """The estimator's parameters as they are (no optimization)."""


PARAMETERIZATIONS.register("discriminative", label="^d", hyperparameters=OPTIMIZED, optimized=True,
                           doc="free log-potentials beta (Zaidi et al. 2017 §3; NB^d is logistic regression)"
                           )(Discriminative)
PARAMETERIZATIONS.register("extended", label="^e", hyperparameters=OPTIMIZED, optimized=True,
                           doc="softmax(beta) per (attribute, class, parent configuration) (ELR; §4)")(Extended)
PARAMETERIZATIONS.register("weighted", label="^w", hyperparameters=(*OPTIMIZED, LEVEL), optimized=True,
                           doc="weights on the generative log theta, tied by level (§5)")(Weighted)

INITS.register("zeros", label="", doc="beta = 0, weights = 0")(object())
INITS.register("generative", label=" (I)", doc="beta = log theta, weights = 1 (the papers' '(I)')")(object())
