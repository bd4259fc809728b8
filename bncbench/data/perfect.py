"""Feelders & Ivanovs' synthetic perfect-graph BNCs (§6) and their names.

A dataset ``[parents].[attributes].[domain].[sample size]`` (``1.5.2-3.100``, ``3.30.2-3.1000``,
``2.5.5.1000``) is sampled from a BNC whose attribute ``i`` (0-based) has ``parents`` parents:
the class and the ``parents - 1`` previous attributes ``i - parents + 1 .. i - 1`` where they
exist (fewer for the first attributes). Each attribute's domain size is ``domain`` (``5``) or
drawn uniformly from a range (``2-3``: 2 or 3 with equal probabilities); every row of every
conditional probability table and the class prior are drawn from Dirichlet(1). The graph is
perfect: the parents of attribute ``i`` are consecutive attributes, each a parent of the later
ones, and the class is a parent of all (:func:`bncbench.structures.canonical.check_perfect`).
The paper does not give the class's domain size; binary by default here.
"""

from __future__ import annotations

import re

import numpy as np

from bncbench.data.dataset import Dataset, from_codes
from bncbench.data.sources import RandomBNC, sample_random_bnc
from bncbench.errors import BNCBenchError

NAME = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-(\d+))?\.(\d+)$")

PAPER_NAMES = (
    "1.5.2-3.100", "2.5.2-3.100", "3.5.2-3.100",
    "1.5.2-3.1000", "2.5.2-3.1000", "3.5.2-3.1000",
    "1.30.2-3.1000", "2.30.2-3.1000", "3.30.2-3.1000",
    "1.5.5.1000", "2.5.5.1000", "3.5.5.1000",
)
"""The 12 synthetic datasets of the paper's Table 2, in its order (the dataset group ``feelders_synthetic``)."""


def parse_name(name: str) -> dict:
    """The parts of a name ``[parents].[attributes].[domain].[sample size]``.

    Parameters
    ----------
    name : str
        For example ``"2.5.2-3.1000"``.

    Returns
    -------
    dict
        ``n_parents``, ``n_attributes``, ``domain`` (a ``(low, high)`` pair; ``low == high`` for a
        fixed size) and ``n_samples``.

    Raises
    ------
    BNCBenchError
        If the name does not have that form, or a part is out of range (parents >= 1,
        attributes >= 1, domain sizes >= 2 and increasing, sample size >= 1).
    """
    m = NAME.match(str(name))
    if not m:
        raise BNCBenchError(f"{name!r} is not a perfect-graph dataset name [parents].[attributes].[domain]"
                            ".[sample size], e.g. 2.5.2-3.1000")
    p, n, lo, hi, N = m.groups()
    lo = int(lo)
    hi = int(hi) if hi is not None else lo
    out = {"n_parents": int(p), "n_attributes": int(n), "domain": (lo, hi), "n_samples": int(N)}
    if out["n_parents"] < 1 or out["n_attributes"] < 1 or lo < 2 or hi < lo or out["n_samples"] < 1:
        raise BNCBenchError(f"{name!r}: needs parents >= 1, attributes >= 1, domain sizes >= 2 (low <= high) "
                            "and a sample size >= 1")
    return out


def perfect_bnc(n_parents: int, n_attributes: int, domain: tuple[int, int] | int = (2, 3), n_classes: int = 2,
                alpha: float = 1.0, seed: int = 0) -> RandomBNC:
    """Draw the paper's perfect-graph BNC: structure fixed by ``n_parents``, parameters from Dirichlet(alpha).

    Parameters
    ----------
    n_parents : int
        Parents of each attribute, the class included (the paper's 1, 2 or 3).
    n_attributes : int
        Number of attributes.
    domain : int or (int, int), default=(2, 3)
        A fixed domain size, or a range each attribute's size is drawn from uniformly.
    n_classes : int, default=2
        Number of classes.
    alpha : float, default=1.0
        Concentration of the symmetric Dirichlet of every CPT row and of the class prior.
    seed : int, default=0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    RandomBNC
        Attribute ``i``'s parents are ``(max(0, i - n_parents + 1), ..., i - 1)``; CPTs of shape
        ``(n_classes, *parent cards, card)``.

    Raises
    ------
    BNCBenchError
        If a count or size is out of range.
    """
    lo, hi = (int(domain), int(domain)) if np.isscalar(domain) else (int(domain[0]), int(domain[1]))
    if n_parents < 1 or n_attributes < 1 or n_classes < 2 or lo < 2 or hi < lo or alpha <= 0:
        raise BNCBenchError("a perfect-graph BNC needs n_parents >= 1, n_attributes >= 1, n_classes >= 2, "
                            "domain sizes >= 2 and alpha > 0")
    rng = np.random.default_rng(seed)
    cards = rng.integers(lo, hi + 1, size=n_attributes).astype(np.int64)
    parents = [tuple(range(max(0, i - n_parents + 1), i)) for i in range(n_attributes)]
    prior = rng.dirichlet(np.full(n_classes, alpha))
    cpts = [rng.dirichlet(np.full(int(cards[i]), alpha), size=(n_classes, *[int(cards[q]) for q in parents[i]]))
            for i in range(n_attributes)]
    return RandomBNC(parents, cards, prior, cpts)


def default_seed(name: str, min_class: float = 0.2) -> int:
    """The seed a registry name stands for: the smallest whose class prior gives every class at least ``min_class``.

    The paper draws every parameter, the class prior included, from Dirichlet(1) and does not say
    which class distributions its datasets had; seed 0 draws a prior of (0.004, 0.996) for every
    ``x.5.2-3.y`` name, which leaves a 50-row training fold with one class. The first seed whose
    prior is at least ``min_class`` per class is used instead (a rejection of extreme priors,
    nothing else). With the default this is 2 for the ``x.5.2-3.y`` names and 0 for the others.

    Parameters
    ----------
    name : str
        ``[parents].[attributes].[domain].[sample size]``.
    min_class : float, default=0.2
        The smallest class probability accepted.

    Returns
    -------
    int
    """
    spec = parse_name(name)
    for seed in range(10_000):
        prior = perfect_bnc(spec["n_parents"], spec["n_attributes"], spec["domain"], seed=seed).prior
        if prior.min() >= min_class:
            return seed
    raise BNCBenchError(f"{name!r}: no seed below 10000 draws a class prior with every class >= {min_class}")


def load_perfect(name: str, seed: int = 0, n_classes: int = 2) -> Dataset:
    """The dataset a paper name stands for, sampled from :func:`perfect_bnc` (network seed ``seed``,
    instances ``seed + 7919``).

    Parameters
    ----------
    name : str
        ``[parents].[attributes].[domain].[sample size]``.
    seed : int, default=0
        Seed of the network; the sample's is ``seed + 7919``.
    n_classes : int, default=2
        Number of classes.

    Returns
    -------
    Dataset
        All-nominal codes; ``meta`` holds the source, the parsed name, the seed and the parents.

    Raises
    ------
    BNCBenchError
        If the name is malformed or the sample has fewer than two classes.
    """
    spec = parse_name(name)
    model = perfect_bnc(spec["n_parents"], spec["n_attributes"], spec["domain"], n_classes=n_classes, seed=seed)
    X, y = sample_random_bnc(model, spec["n_samples"], seed=seed + 7919)
    meta = {"source": "synthetic perfect-graph BNC (Feelders & Ivanovs, §6)", "spec": {**spec, "seed": seed,
            "n_classes": n_classes}, "parents": model.parents}
    return from_codes(name, X, y, cardinalities=model.cards, classes=[str(c) for c in range(n_classes)], meta=meta)
