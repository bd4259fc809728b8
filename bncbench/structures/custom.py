"""A structure given by the user: one parent list per attribute."""

from __future__ import annotations

from bncbench.components import STRUCTURES
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter
from bncbench.structures.base import LearnedStructure, TrainingData

PARENTS = Hyperparameter("parents", None, [list, None], "attribute parents of every attribute (structure=custom)")


def validate_parents(parents, n_attributes: int) -> list:
    """Check a user-given parent list: right length, valid indices, acyclic."""
    if parents is None or len(parents) != n_attributes:
        raise BNCBenchError(f"custom structure needs one parent list per attribute ({n_attributes})")
    out = [tuple(int(p) for p in ps) for ps in parents]
    for i, ps in enumerate(out):
        for p in ps:
            if not 0 <= p < n_attributes or p == i:
                raise BNCBenchError(f"attribute {i}: invalid parent {p}")
    # acyclicity: repeatedly remove attributes without remaining parents
    remaining = set(range(n_attributes))
    while remaining:
        free = [i for i in remaining if not (set(out[i]) & remaining)]
        if not free:
            raise BNCBenchError("custom structure has a directed cycle")
        remaining -= set(free)
    return out


def _needs_parents(params: dict) -> None:
    if params.get("parents") is None:
        raise BNCBenchError("structure='custom' needs parents (one parent list per attribute)")


@STRUCTURES.register("custom", label="CUSTOM", hyperparameters=[PARENTS], check=_needs_parents)
def learn_custom(data: TrainingData, *, parents) -> LearnedStructure:
    """The parent lists in ``parents``."""
    return LearnedStructure.single(validate_parents(parents, data.n_attributes))
