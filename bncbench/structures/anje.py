"""Averaged n-join estimators, AnJE (Zaidi et al., deep-broad learning, §4.1, Eq. 8)."""

from __future__ import annotations

from bncbench.components import STRUCTURES
from bncbench.errors import BNCBenchError
from bncbench.structures.network import LearnedStructure, TrainingData
from bncbench.structures.subset_ensembles import N, SubsetMembers, anje_exponent


def _needs_n_of_one(params: dict) -> None:
    if int(params.get("n", N.default)) < 1:
        raise BNCBenchError("structure='anje' needs n >= 1 (A0JE is not defined)")


@STRUCTURES.register("anje", label="A${.n}JE", hyperparameters=[N], check=_needs_n_of_one)
def learn_anje(data: TrainingData, *, n: int) -> LearnedStructure:
    """Averaged n-join estimators: the class prior times every n-subset's class-conditional joint, to Eq. 8's power.

    The members are :class:`~bncbench.structures.subset_ensembles.SubsetMembers` (one network per n-subset:
    the chain over the subset, the other attributes left out), combined geometrically with the
    weight ``(n-1)!(a-n)!/(a-1)!`` each. The ``map`` estimator fits the class-conditional joints
    ``P(x_alpha | y)`` of all subsets at once (:mod:`bncbench.estimators.anje`). A1JE is naive Bayes.
    """
    members = SubsetMembers("anje", data.n_attributes, int(n))
    w = anje_exponent(data.n_attributes, int(n))
    return LearnedStructure(members, combine="geometric", weights=(w,) * len(members),
                            info={"ensemble": "anje", "n": int(n)})
