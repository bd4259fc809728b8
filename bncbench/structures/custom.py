"""A structure given by the user: one parent list per attribute."""

from __future__ import annotations

from typing import Sequence

from bncbench.components import STRUCTURES
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter
from bncbench.structures.network import LearnedStructure, TrainingData

PARENTS = Hyperparameter("parents", None, [list, None], "attribute parents of every attribute (structure=custom)")


def validate_parents(parents: Sequence[Sequence[int]] | None, n_attributes: int) -> list[tuple[int, ...]]:
    """Check a user-given parent list: right length, valid indices, acyclic.

    Parameters
    ----------
    parents : sequence of sequence of int, or None
        Attribute parents per attribute.
    n_attributes : int
        Number of attributes of the data.

    Returns
    -------
    list of tuple of int
        The parent lists with ``int`` entries, in the given order.

    Raises
    ------
    BNCBenchError
        If ``parents`` is None or does not have ``n_attributes`` entries, names an attribute out
        of range or the attribute itself, or the graph has a directed cycle.
    """
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
def learn_custom(data: TrainingData, *, parents: Sequence[Sequence[int]] | None) -> LearnedStructure:
    """The parent lists in ``parents``.

    Parameters
    ----------
    data : TrainingData
        Training data (only its number of attributes is read).
    parents : sequence of sequence of int, or None
        Attribute parents per attribute.

    Returns
    -------
    LearnedStructure
        One network with these parents.

    Raises
    ------
    BNCBenchError
        If the parent lists are invalid (see :func:`validate_parents`).
    """
    return LearnedStructure.single(validate_parents(parents, data.n_attributes))
