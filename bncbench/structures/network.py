"""What a structure learner returns, and the training data every component receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from bncbench.errors import BNCBenchError

COMBINE_RULES = ("product", "arithmetic", "geometric")
"""How the members of a :class:`LearnedStructure` make one classifier:

``product``     a single network; its joint is the model's joint.
``arithmetic``  ``log sum_m w_m P_m(y, x)`` (AnDE: the mean of the members' joints; ``w_m = 1/M`` by default).
``geometric``   ``log P(y) + sum_m w_m log P_m(x | y)`` (AnJE: a weighted product of the members'
                class-conditionals with the class prior once; ``w_m = 1`` by default). A log-linear
                model, so the optimized parameterizations apply to it as to a single network.
"""


@dataclass(frozen=True)
class TrainingData:
    """Integer codes of the training data as every component sees them.

    Attributes
    ----------
    codes : ndarray (n, a) of int
        Attribute codes in ``[0, cards[j])``.
    y : ndarray (n,) of int
        Class codes in ``[0, n_classes)``.
    cards : ndarray (a,) of int
        Number of codes per attribute.
    n_classes : int
    random_state : int
        Seed of every random choice a component makes.
    """

    codes: np.ndarray
    y: np.ndarray
    cards: np.ndarray
    n_classes: int
    random_state: int = 0

    @property
    def n_attributes(self) -> int:
        """Number of attributes (columns of ``codes``).

        Returns
        -------
        int
            ``codes.shape[1]``.
        """
        return int(self.codes.shape[1])


@dataclass(frozen=True)
class Network:
    """One Bayesian network classifier's graph: the attribute parents of every attribute.

    ``parents[i]`` is the tuple of attribute ``i``'s attribute parents, most
    important first (back-off drops parents from the end; the class is a parent
    of every attribute), or ``None`` when the network leaves attribute ``i`` out.

    Attributes
    ----------
    parents : tuple of (tuple of int or None)
        One entry per attribute; entries are normalized to tuples of ``int`` at construction.
    """

    parents: tuple

    def __post_init__(self):
        object.__setattr__(self, "parents", tuple(None if p is None else tuple(int(q) for q in p)
                                                  for p in self.parents))

    @property
    def columns(self) -> np.ndarray:
        """The attributes the network uses, in increasing order."""
        return np.asarray([i for i, p in enumerate(self.parents) if p is not None], dtype=np.int64)

    def restricted(self) -> list:
        """The parent lists re-indexed on ``codes[:, self.columns]``.

        Returns
        -------
        list of tuple of int
            One parent tuple per used attribute, in :attr:`columns` order, parents as positions in
            :attr:`columns`.

        Raises
        ------
        BNCBenchError
            If a used attribute has a parent the network leaves out.
        """
        index = {int(c): j for j, c in enumerate(self.columns)}
        try:
            return [tuple(index[p] for p in self.parents[c]) for c in self.columns]
        except KeyError as exc:
            raise BNCBenchError(f"a used attribute has the left-out parent {exc.args[0]}") from None


@dataclass(frozen=True)
class LearnedStructure:
    """The result of a structure learner: one network, or an ensemble with its combination rule.

    Attributes
    ----------
    members : tuple of Network
        The member networks (at least one).
    combine : {"product", "arithmetic", "geometric"}
        See :data:`COMBINE_RULES`; ``"product"`` needs exactly one member.
    weights : tuple of float or None
        Per-member weights of the rule (default: ``1/M`` for arithmetic, 1 for geometric).
    info : dict
        What the learner found besides the graph (e.g. SkDB's selected ``k*``).

    Raises
    ------
    BNCBenchError
        At construction, if ``combine`` is unknown, there is no member, ``"product"`` has more
        than one member, or ``weights`` does not have one weight per member.
    """

    members: tuple
    combine: str = "product"
    weights: tuple | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.combine not in COMBINE_RULES:
            raise BNCBenchError(f"unknown combination rule {self.combine!r}; choose one of {', '.join(COMBINE_RULES)}")
        if not self.members:
            raise BNCBenchError("a learned structure needs at least one member network")
        if self.combine == "product" and len(self.members) != 1:
            raise BNCBenchError("combine='product' is for one network; an ensemble needs 'arithmetic' or 'geometric'")
        if self.weights is not None and len(self.weights) != len(self.members):
            raise BNCBenchError("one weight per member network")

    @classmethod
    def single(cls, parents: Sequence[Sequence[int] | None], **info: Any) -> "LearnedStructure":
        """A one-network structure from its parent lists.

        Parameters
        ----------
        parents : sequence of (sequence of int or None)
            Attribute parents per attribute, most important first; None leaves an attribute out.
        **info
            Stored as :attr:`info`.

        Returns
        -------
        LearnedStructure
            One member, ``combine="product"``, default weights.
        """
        return cls((Network(tuple(parents)),), info=info)

    def member_weights(self) -> np.ndarray:
        """The weights of the combination rule, defaults filled in."""
        if self.weights is not None:
            return np.asarray(self.weights, dtype=float)
        M = len(self.members)
        return np.full(M, 1.0 / M if self.combine == "arithmetic" else 1.0)

    @property
    def parents(self) -> list:
        """The parent lists of a one-network structure (``None`` for a left-out attribute)."""
        if len(self.members) != 1:
            raise BNCBenchError("an ensemble has one parent list per member: read .members")
        return list(self.members[0].parents)
