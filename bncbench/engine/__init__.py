"""Discriminative parameter learning engine for Bayesian network classifiers.

``design``   factor layout: rows of the log-potential matrix ``Phi`` and the
             per-instance row indices (with back-off at prediction);
``loss``     the one vectorized NLL + gradient with respect to ``Phi``, over a
             design: ``row_table`` (materialized row indices) or
             ``subset_design`` (attribute-subset models: rows found on the fly
             from the codes, ``subset_lookup``);
``params``   parameter maps (discriminative, extended, weighted levels 1-4);
``problem``  objective = NLL + regularization, with evaluation counting;
``optim``    traced optimizers (registered in ``bncbench.components.OPTIMIZERS``).

See ``docs/engine.md``; the estimator-facing entry point is
:func:`bncbench.ccbn.fit_ccbn`.
"""

from bncbench.engine.design import Layout
from bncbench.engine.loss import CLL, Data, scores
from bncbench.engine.optim import STOPS, optimize
from bncbench.engine.params import make_map
from bncbench.engine.problem import REGS, Problem

__all__ = ["CLL", "Data", "Layout", "Problem", "REGS", "STOPS", "make_map", "optimize", "scores"]
