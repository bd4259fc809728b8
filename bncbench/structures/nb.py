"""Naive Bayes: the class is the only parent of every attribute."""

from __future__ import annotations

from bncbench.components import STRUCTURES
from bncbench.structures.base import LearnedStructure, TrainingData


def naive_bayes(n_attributes: int) -> list:
    """NB parent lists: no attribute parents."""
    return [() for _ in range(n_attributes)]


@STRUCTURES.register("nb", label="NB")
def learn_nb(data: TrainingData) -> LearnedStructure:
    """Naive Bayes."""
    return LearnedStructure.single(naive_bayes(data.n_attributes))
