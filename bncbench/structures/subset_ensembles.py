"""Attribute subsets of the deep-broad ensembles: AnDE and AnJE (Zaidi et al., deep-broad learning, §4-§5).

Both models are ensembles over every n-subset ``alpha`` of the ``a`` attributes (``C(a, n)`` of
them, in lexicographic order: ``(0, 1), (0, 2), ..., (a-2, a-1)`` for n = 2):

* **AnDE** (Webb et al. 2005, 2012): member ``alpha`` is the SPnDE ``P(y, x_alpha) prod_{i not in
  alpha} P(x_i | y, x_alpha)``; the model is their arithmetic mean. As a :class:`Network`: the
  attributes of ``alpha`` form a chain (``alpha[j]`` has parents ``alpha[:j]``), every other
  attribute has the parents ``alpha``.
* **AnJE** (Eq. 8): member ``alpha`` is the class-conditional joint ``P(x_alpha | y)``; the model is
  ``P(y) prod_alpha P(x_alpha | y)^w`` with ``w = (n-1)!(a-n)!/(a-1)! = 1 / C(a-1, n-1)``. As a
  :class:`Network`: the chain over ``alpha`` alone, every other attribute left out (``None``).

:class:`SubsetMembers` is the sequence of these member networks, built when read: an A3JE over
42 attributes has 11,480 members, and the estimators that know these ensembles (the ``map``
estimator, :mod:`bncbench.estimators.ande` and :mod:`~bncbench.estimators.anje`) work on the
subset array :attr:`SubsetMembers.subsets` directly, vectorized over all subsets at once.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, integer
from bncbench.structures.network import Network

ENSEMBLES = ("ande", "anje")
"""The subset ensembles: the ``info["ensemble"]`` of their :class:`LearnedStructure`."""
MAX_SUBSETS = 5_000_000
"""More subsets than this is a clear error rather than an out-of-memory."""

N = Hyperparameter("n", 1, [integer(0)],
                   "attributes per subset: AnDE's parents of every attribute, AnJE's joint size (AnJE: n >= 1)", int)


def subsets(n_attributes: int, n: int) -> np.ndarray:
    """Every n-subset of ``range(n_attributes)`` in lexicographic order: (C(a, n), n) int64."""
    a, n = int(n_attributes), int(n)
    if n < 0 or n > a:
        raise BNCBenchError(f"subsets of {n} attributes need 0 <= n <= {a} (the data has {a} attributes)")
    count = math.comb(a, n)
    if count > MAX_SUBSETS:
        raise BNCBenchError(f"{count:,} subsets of {n} of {a} attributes: more than {MAX_SUBSETS:,}; use a smaller n")
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(a), n)), dtype=np.int64,
                       count=count * n)
    return flat.reshape(count, n)


def anje_exponent(n_attributes: int, n: int) -> float:
    """The weight of every factor of AnJE, Eq. 8: ``(n-1)!(a-n)!/(a-1)! = 1 / C(a-1, n-1)``."""
    if not 1 <= n <= n_attributes:
        raise BNCBenchError(f"AnJE needs 1 <= n <= a (n={n}, a={n_attributes})")
    return 1.0 / math.comb(int(n_attributes) - 1, int(n) - 1)


class SubsetMembers(Sequence):
    """The member networks of an AnDE or AnJE, one per n-subset, built when read.

    Parameters
    ----------
    ensemble : {"ande", "anje"}
    n_attributes : int
    n : int
        Attributes per subset.

    Attributes
    ----------
    subsets : ndarray (C(a, n), n) of int64
        The subsets, member ``s`` is ``subsets[s]`` (see :func:`subsets`).
    """

    def __init__(self, ensemble: str, n_attributes: int, n: int):
        if ensemble not in ENSEMBLES:
            raise BNCBenchError(f"unknown subset ensemble {ensemble!r}; choose one of {', '.join(ENSEMBLES)}")
        self.ensemble, self.n_attributes, self.n = ensemble, int(n_attributes), int(n)
        self.subsets = subsets(self.n_attributes, self.n)

    def __len__(self) -> int:
        return int(self.subsets.shape[0])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        alpha = tuple(int(v) for v in self.subsets[index])
        parents: list = [None] * self.n_attributes
        for j, att in enumerate(alpha):
            parents[att] = alpha[:j]
        if self.ensemble == "ande":
            parents = [alpha if p is None else p for p in parents]
        return Network(tuple(parents))

    def __eq__(self, other) -> bool:
        return isinstance(other, SubsetMembers) and (self.ensemble, self.n_attributes, self.n) == (
            other.ensemble, other.n_attributes, other.n)

    def __hash__(self) -> int:
        return hash((self.ensemble, self.n_attributes, self.n))

    def __repr__(self) -> str:
        return f"SubsetMembers({self.ensemble!r}, n_attributes={self.n_attributes}, n={self.n}: {len(self)} members)"
