"""The dataset model shared by every source, loader and experiment.

A :class:`Dataset` is a typed table: nominal attributes are pandas
``Categorical`` columns whose categories are the declared value labels, numeric
attributes are ``float64`` columns, and a missing value is ``NaN`` in either.
The class is a vector of integer codes into :attr:`Dataset.classes`.

Models never see this table directly: :class:`bncbench.preprocess.Discretizer`
turns it into integer category codes (fitting MDL cut points on the training
fold only), which is the form every model consumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError

BIG_THRESHOLD = 10_000
"""A dataset with more instances than this is *Big* (Zaidi et al. 2017, Table 4)."""

DBL_BIG_THRESHOLD = 100_000
"""A dataset with more instances than this is *Big* in the deep-broad paper (Zaidi et al., §6)."""


@dataclass
class Dataset:
    """A classification dataset with typed attributes.

    Attributes
    ----------
    name : str
        Registry name of the dataset.
    X : pandas.DataFrame
        One column per attribute: ``category`` dtype for nominal attributes
        (categories are the value labels), ``float64`` for numeric ones;
        ``NaN`` marks a missing value.
    y : ndarray of int64, shape (n_instances,)
        Class codes into :attr:`classes`.
    classes : list of str
        Class labels.
    meta : dict
        Free-form provenance (source, notes, paper name, ...).
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    classes: list[str]
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.y = np.asarray(self.y, dtype=np.int64)
        if self.X.shape[0] != self.y.shape[0]:
            raise BNCBenchError(
                f"dataset {self.name!r}: {self.X.shape[0]} rows of attributes but "
                f"{self.y.shape[0]} class values"
            )
        if self.X.shape[0] == 0:
            raise BNCBenchError(f"dataset {self.name!r} has no rows")
        if self.y.size and (self.y.min() < 0 or self.y.max() >= len(self.classes)):
            raise BNCBenchError(f"dataset {self.name!r}: class codes outside its class labels")
        present = np.unique(self.y).size
        if present < 2:
            raise BNCBenchError(
                f"dataset {self.name!r} has only {present} class present; a classifier needs at least 2"
            )
        for col in self.X.columns:
            dt = self.X[col].dtype
            if not (isinstance(dt, pd.CategoricalDtype) or np.issubdtype(dt, np.floating)):
                raise BNCBenchError(
                    f"dataset {self.name!r}: column {col!r} has dtype {dt}; expected category or float"
                )

    @property
    def n_instances(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_attributes(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def attribute_names(self) -> list[str]:
        return [str(c) for c in self.X.columns]

    @property
    def numeric_mask(self) -> np.ndarray:
        """Boolean mask of numeric attributes."""
        return np.array(
            [not isinstance(self.X[c].dtype, pd.CategoricalDtype) for c in self.X.columns], dtype=bool
        )

    @property
    def missing_mask(self) -> np.ndarray:
        """Boolean mask of attributes that have at least one missing value."""
        return self.X.isna().any(axis=0).to_numpy()

    @property
    def is_big(self) -> bool:
        return self.n_instances > BIG_THRESHOLD

    def describe(self) -> dict:
        return {
            "name": self.name,
            "instances": self.n_instances,
            "attributes": self.n_attributes,
            "numeric": int(self.numeric_mask.sum()),
            "classes": self.n_classes,
            "missing": bool(self.missing_mask.any()),
            "big": self.is_big,
        }


def from_codes(
    name: str,
    codes: np.ndarray,
    y: np.ndarray,
    *,
    cardinalities=None,
    attribute_names=None,
    classes=None,
    meta=None,
) -> Dataset:
    """Build an all-nominal :class:`Dataset` from integer codes (``-1`` = missing)."""
    codes = np.asarray(codes)
    n, d = codes.shape
    if cardinalities is None:
        cardinalities = codes.max(axis=0, initial=-1) + 1 if n else np.zeros(d, int)
    names = attribute_names or [f"x{i}" for i in range(d)]
    cols = {}
    for j in range(d):
        cats = [str(v) for v in range(int(cardinalities[j]))]
        cols[names[j]] = pd.Categorical.from_codes(codes[:, j].astype(np.int64), categories=cats)
    y = np.asarray(y, dtype=np.int64)
    if classes is None:
        classes = [str(c) for c in range(int(y.max()) + 1 if y.size else 0)]
    return Dataset(name, pd.DataFrame(cols), y, list(classes), dict(meta or {}))
