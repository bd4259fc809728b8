"""Naive Bayes: the class is the only parent of every attribute."""

from __future__ import annotations

from bncbench.components import STRUCTURES
from bncbench.structures.network import LearnedStructure, TrainingData


def naive_bayes(n_attributes: int) -> list[tuple[int, ...]]:
    """NB parent lists: no attribute parents.

    Parameters
    ----------
    n_attributes : int
        Number of attributes.

    Returns
    -------
    list of tuple
        ``n_attributes`` empty tuples.
    """
    return [() for _ in range(n_attributes)]


@STRUCTURES.register("nb", label="NB")
def learn_nb(data: TrainingData) -> LearnedStructure:
    """Naive Bayes.

    Parameters
    ----------
    data : TrainingData
        Training data (only its number of attributes is read).

    Returns
    -------
    LearnedStructure
        One network in which no attribute has an attribute parent.
    """
    return LearnedStructure.single(naive_bayes(data.n_attributes))
