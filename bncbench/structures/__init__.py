"""Structure learners: one module each, registered in :data:`bncbench.components.STRUCTURES`.

A learner is a function ``learn(data: TrainingData, **hyperparameters) -> LearnedStructure``.
"""

from bncbench.structures.network import COMBINE_RULES, LearnedStructure, Network, TrainingData

__all__ = ["COMBINE_RULES", "LearnedStructure", "Network", "TrainingData"]
