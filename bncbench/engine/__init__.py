"""Discriminative parameter learning engine for Bayesian network classifiers.

``design``   factor layout: rows of the log-potential matrix ``Phi`` and the
             per-instance row indices (with back-off at prediction);
``loss``     the one vectorized NLL + gradient with respect to ``Phi``, over a
             design: ``row_table`` (materialized row indices) or
             ``subset_design`` (attribute-subset models: rows found on the fly
             from the codes, ``subset_lookup``);
``params``   parameter maps (discriminative, extended, weighted levels 1-4);
``problem``  objective = NLL + regularization, with evaluation counting;
``optim``    traced optimizers (registered in ``bncbench.components.OPTIMIZERS``);
``lbfgs_compact``  L-BFGS-B's unbounded iteration with its memory as the
             compact inverse (``lbfgs``'s default driver);
``lbfgsb``   scipy's L-BFGS-B stepped with its state in hand; either state
``checkpoint`` saves during long fits and resumes exactly.

See ``docs/engine.md``; the estimator-facing entry point is
:func:`bncbench.engine.fit.fit_ccbn`.
"""

import importlib

_EXPORTS = {
    "Layout": "design", "CLL": "loss", "Data": "loss", "scores": "loss", "STOPS": "optim", "optimize": "optim",
    "make_map": "params", "REGS": "problem", "Problem": "problem",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """The exports, imported when first asked for: ``bncbench.engine.checkpoint`` (read by the run
    config's schema) must not load the compiled kernels."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"bncbench.engine.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
