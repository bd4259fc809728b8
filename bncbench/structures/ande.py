"""Averaged n-dependence estimators, AnDE (Webb, Boughton & Wang 2005; Webb et al. 2012)."""

from __future__ import annotations

from bncbench.components import STRUCTURES
from bncbench.registry import Hyperparameter, integer
from bncbench.structures.network import LearnedStructure, TrainingData
from bncbench.structures.subset_ensembles import N, SubsetMembers

MIN_COUNT = Hyperparameter(
    "min_count", 1, [integer(0)],
    "AnDE frequency limit: a parent subset whose values were seen fewer times in training is left out of "
    "that instance's mean (Weka AODE's -F)", int)


@STRUCTURES.register("ande", label="A${.n}DE", hyperparameters=[N, MIN_COUNT])
def learn_ande(data: TrainingData, *, n: int, min_count: int) -> LearnedStructure:
    """Averaged n-dependence estimators: the mean of the SPnDEs of every n-subset of parents.

    The members are :class:`~bncbench.structures.subset_ensembles.SubsetMembers` (one SPnDE network per
    n-subset), combined by the arithmetic mean. The ``map`` estimator fits them all at once and
    applies the frequency limit ``min_count`` per instance (:mod:`bncbench.estimators.ande`); an
    estimator without that vectorized path fits every member network and averages all of them.
    A0DE is naive Bayes.
    """
    members = SubsetMembers("ande", data.n_attributes, int(n))
    return LearnedStructure(members, combine="arithmetic",
                            info={"ensemble": "ande", "n": int(n), "min_count": int(min_count)})
