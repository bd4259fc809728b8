"""Generative parameter estimates, registered in :data:`bncbench.components.ESTIMATORS`.

An estimator is a function ``fit(network: Network, data: TrainingData, **hyperparameters) -> Scorer``
for one network; :func:`bncbench.estimators.scorer.estimate` applies it to every member of a structure.
"""

from bncbench.estimators.scorer import EnsembleScorer, Scorer, estimate

__all__ = ["EnsembleScorer", "Scorer", "estimate"]
