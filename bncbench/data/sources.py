"""Embedded data sources that need no data directory.

* scikit-learn's bundled datasets (``sklearn-iris``, ``sklearn-wine``,
  ``sklearn-breast_cancer``, ``sklearn-digits``): numeric attributes,
  discretized per training fold like any other numeric data.
* Synthetic data sampled from a random Bayesian network classifier
  (:func:`sample_random_bnc`): the class is a parent of every attribute, each
  attribute takes up to ``p`` further parents among earlier attributes, and
  every conditional probability table row is drawn from a symmetric
  Dirichlet(``alpha``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bncbench.data.dataset import Dataset, from_codes
from bncbench.errors import BNCBenchError

SKLEARN_LOADERS = {
    "sklearn-iris": "load_iris",
    "sklearn-wine": "load_wine",
    "sklearn-breast_cancer": "load_breast_cancer",
    "sklearn-digits": "load_digits",
}


def load_sklearn(name: str) -> Dataset:
    """One of scikit-learn's bundled datasets as a :class:`Dataset` of numeric attributes.

    Parameters
    ----------
    name : str
        A key of :data:`SKLEARN_LOADERS` (``sklearn-iris``, ``sklearn-wine``,
        ``sklearn-breast_cancer``, ``sklearn-digits``).

    Returns
    -------
    Dataset
        Every attribute ``float64`` (named by the bunch's ``feature_names``, else ``x0, x1, ...``),
        the classes labelled by its ``target_names`` (else its distinct targets); ``meta["source"]``
        names the loader.

    Raises
    ------
    BNCBenchError
        If ``name`` is not a key of :data:`SKLEARN_LOADERS`.
    """
    import sklearn.datasets

    if name not in SKLEARN_LOADERS:
        raise BNCBenchError(f"unknown scikit-learn dataset {name!r}")
    bunch = getattr(sklearn.datasets, SKLEARN_LOADERS[name])()
    names = [str(f) for f in getattr(bunch, "feature_names", [])] or [
        f"x{i}" for i in range(bunch.data.shape[1])
    ]
    X = pd.DataFrame(np.asarray(bunch.data, dtype=float), columns=names)
    classes = [str(c) for c in getattr(bunch, "target_names", np.unique(bunch.target))]
    return Dataset(name, X, bunch.target, classes, {"source": f"sklearn.datasets.{SKLEARN_LOADERS[name]}"})


@dataclass
class RandomBNC:
    """A random BNC: parent lists, cardinalities, class prior and CPTs.

    Attributes
    ----------
    parents : list of tuple of int
        Attribute parents of every attribute (sorted, all earlier attributes); the class is a
        parent of every attribute implicitly.
    cards : ndarray of int64, shape (n_attributes,)
        Cardinality of every attribute.
    prior : ndarray of float, shape (n_classes,)
        Class prior ``P(y)``.
    cpts : list of ndarray
        ``cpts[i]`` of shape ``(n_classes, *cards[parents[i]], cards[i])``: ``P(x_i | y, x_parents)``,
        each row (last axis) summing to 1.
    """

    parents: list  # list[tuple[int, ...]] attribute parents per attribute
    cards: np.ndarray
    prior: np.ndarray  # (Y,)
    cpts: list  # cpts[i]: (Y, *parent cards, card_i)


def random_bnc(
    n_attributes: int,
    cardinality: int | tuple[int, int] = (2, 4),
    p: int = 1,
    n_classes: int = 2,
    alpha: float = 1.0,
    seed: int = 0,
) -> RandomBNC:
    """Draw a random BNC (structure and parameters).

    Parameters
    ----------
    n_attributes : int
        Number of attributes (>= 1).
    cardinality : int or (int, int), default=(2, 4)
        One cardinality for every attribute, or ``(low, high)``: each attribute's cardinality
        drawn uniformly from ``low..high`` inclusive.
    p : int, default=1
        Maximum number of attribute parents (>= 0); attribute ``i`` gets a number of parents drawn
        uniformly from ``0..min(p, i)``, chosen uniformly among attributes ``0..i-1``.
    n_classes : int, default=2
        Number of classes (>= 2).
    alpha : float, default=1.0
        Concentration of the symmetric Dirichlet every CPT row and the class prior are drawn from
        (> 0).
    seed : int, default=0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    RandomBNC
        The structure, cardinalities, prior and CPTs.

    Raises
    ------
    BNCBenchError
        If ``n_attributes < 1``, ``n_classes < 2``, ``p < 0``, ``alpha <= 0``, or a cardinality is
        below 1.
    """
    if n_attributes < 1 or n_classes < 2 or p < 0 or alpha <= 0:
        raise BNCBenchError(
            "synthetic data needs n_attributes >= 1, n_classes >= 2, p >= 0, alpha > 0"
        )
    rng = np.random.default_rng(seed)
    if np.isscalar(cardinality):
        cards = np.full(n_attributes, int(cardinality))
    else:
        lo, hi = (int(c) for c in cardinality)
        cards = rng.integers(lo, hi + 1, size=n_attributes)
    if cards.min() < 1:
        raise BNCBenchError("synthetic attribute cardinality must be >= 1")
    parents = []
    for i in range(n_attributes):
        k = int(rng.integers(0, min(p, i) + 1)) if i else 0
        parents.append(tuple(sorted(int(v) for v in rng.choice(i, size=k, replace=False))) if k else ())
    prior = rng.dirichlet(np.full(n_classes, alpha))
    cpts = []
    for i in range(n_attributes):
        shape = (n_classes, *[int(cards[q]) for q in parents[i]])
        cpts.append(rng.dirichlet(np.full(int(cards[i]), alpha), size=shape))
    return RandomBNC(parents, cards, prior, cpts)


def sample_random_bnc(model: RandomBNC, n_samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Ancestral sampling, vectorized per attribute: returns codes (N, n) and y (N,).

    Parameters
    ----------
    model : RandomBNC
        The network to sample from.
    n_samples : int
        Number of instances ``N``.
    seed : int, default=0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    X : ndarray of int64, shape (N, n_attributes)
        Attribute codes in ``[0, model.cards[i])``.
    y : ndarray of int64, shape (N,)
        Class codes in ``[0, n_classes)``.
    """
    rng = np.random.default_rng(seed)
    n = len(model.parents)
    y = _sample_rows(np.broadcast_to(model.prior, (n_samples, model.prior.size)), rng)
    X = np.empty((n_samples, n), dtype=np.int64)
    for i in range(n):
        index = (y, *[X[:, q] for q in model.parents[i]])
        X[:, i] = _sample_rows(model.cpts[i][index], rng)
    return X, y


def _sample_rows(probs: np.ndarray, rng) -> np.ndarray:
    cum = np.cumsum(probs, axis=1)
    u = rng.random(probs.shape[0]) * cum[:, -1]
    return (u[:, None] >= cum).sum(axis=1).astype(np.int64)


SYNTHETIC_PRESETS = {
    "synth-nb": dict(n_attributes=10, cardinality=(2, 4), p=0, n_classes=2, n_samples=1000, alpha=1.0, seed=4),
    "synth-tree": dict(n_attributes=12, cardinality=(2, 4), p=1, n_classes=3, n_samples=2000, alpha=0.5, seed=9),
    "synth-kdb2": dict(n_attributes=12, cardinality=(2, 5), p=2, n_classes=2, n_samples=3000, alpha=0.5, seed=8),
    "synth-wide": dict(n_attributes=30, cardinality=(2, 3), p=2, n_classes=4, n_samples=2000, alpha=1.0, seed=10),
}


def load_synthetic(name: str, **spec: Any) -> Dataset:
    """A dataset sampled from a random BNC; ``spec`` as :data:`SYNTHETIC_PRESETS`.

    The network is drawn by :func:`random_bnc` with ``seed``, the instances sampled with
    ``seed + 7919``.

    Parameters
    ----------
    name : str
        The dataset's name; a key of :data:`SYNTHETIC_PRESETS` takes that preset's options as
        defaults, any other name those of ``synth-nb``.
    **spec
        Options overriding the defaults: ``n_attributes``, ``cardinality``, ``p``, ``n_classes``,
        ``alpha``, ``seed`` (as for :func:`random_bnc`) and ``n_samples`` (number of instances,
        >= 1).

    Returns
    -------
    Dataset
        All-nominal (value labels ``"0", "1", ...``), classes ``"0" .. str(n_classes - 1)``;
        ``meta`` holds the source, the full ``spec`` and the network's ``parents``.

    Raises
    ------
    BNCBenchError
        If an option is unknown, ``n_samples < 1``, an option is out of range (see
        :func:`random_bnc`), or the sample has fewer than two classes present.
    """
    allowed = {"n_attributes", "cardinality", "p", "n_classes", "n_samples", "alpha", "seed"}
    unknown = set(spec) - allowed
    if unknown:
        raise BNCBenchError(f"synthetic dataset {name!r}: unknown option(s) {sorted(unknown)}")
    spec = {**SYNTHETIC_PRESETS.get(name, SYNTHETIC_PRESETS["synth-nb"]), **spec}
    n_samples = int(spec.pop("n_samples"))
    if n_samples < 1:
        raise BNCBenchError(f"synthetic dataset {name!r} needs n_samples >= 1")
    model = random_bnc(**spec)
    X, y = sample_random_bnc(model, n_samples, seed=spec["seed"] + 7919)
    meta = {"source": "synthetic random BNC", "spec": {**spec, "n_samples": n_samples}, "parents": model.parents}
    return from_codes(
        name, X, y, cardinalities=model.cards, classes=[str(c) for c in range(spec["n_classes"])], meta=meta
    )
