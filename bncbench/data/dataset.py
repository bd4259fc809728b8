"""The dataset model shared by every source, loader and experiment.

A :class:`Dataset` is a typed table: nominal attributes are pandas
``Categorical`` columns whose categories are the declared value labels, numeric
attributes are ``float64`` columns, and a missing value is ``NaN`` in either.
The class is a vector of integer codes into :attr:`Dataset.classes`.

Models never see this table directly: :class:`bncbench.model.preprocess.Discretizer`
turns it into integer category codes (fitting MDL cut points on the training
fold only), which is the form every model consumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

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

    Raises
    ------
    BNCBenchError
        At construction, if ``X`` and ``y`` differ in their number of rows, there is no row, a class
        code is outside ``[0, len(classes))``, fewer than two classes are present in ``y``, or a
        column of ``X`` is neither categorical nor floating point.
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
        """Number of instances (rows).

        Returns
        -------
        int
            ``X.shape[0]``.
        """
        return int(self.X.shape[0])

    @property
    def n_attributes(self) -> int:
        """Number of attributes (columns of ``X``; the class is not one).

        Returns
        -------
        int
            ``X.shape[1]``.
        """
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of class labels (declared, whether present in ``y`` or not).

        Returns
        -------
        int
            ``len(classes)``.
        """
        return len(self.classes)

    @property
    def attribute_names(self) -> list[str]:
        """The attribute names, in column order.

        Returns
        -------
        list of str
            ``str()`` of every column label of ``X``.
        """
        return [str(c) for c in self.X.columns]

    @property
    def numeric_mask(self) -> np.ndarray:
        """Boolean mask of numeric attributes.

        Returns
        -------
        ndarray of bool, shape (n_attributes,)
            True for a column whose dtype is not categorical (i.e. ``float64``).
        """
        return np.array(
            [not isinstance(self.X[c].dtype, pd.CategoricalDtype) for c in self.X.columns], dtype=bool
        )

    @property
    def missing_mask(self) -> np.ndarray:
        """Boolean mask of attributes that have at least one missing value.

        Returns
        -------
        ndarray of bool, shape (n_attributes,)
            True for a column with at least one ``NaN``.
        """
        return self.X.isna().any(axis=0).to_numpy()

    @property
    def is_big(self) -> bool:
        """Whether the dataset is *Big* in the sense of Zaidi et al. (2017, Table 4).

        Returns
        -------
        bool
            True if ``n_instances > BIG_THRESHOLD`` (10,000).
        """
        return self.n_instances > BIG_THRESHOLD

    def describe(self) -> dict:
        """A one-line summary of the dataset's shape (for listings and reports).

        Returns
        -------
        dict
            ``name`` (str), ``instances``, ``attributes``, ``numeric`` (number of numeric
            attributes) and ``classes`` (int), ``missing`` (bool: any attribute has a missing
            value) and ``big`` (bool: :attr:`is_big`).
        """
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
    cardinalities: ArrayLike | None = None,
    attribute_names: Sequence[str] | None = None,
    classes: Sequence[str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Dataset:
    """Build an all-nominal :class:`Dataset` from integer codes (``-1`` = missing).

    Parameters
    ----------
    name : str
        Name of the dataset.
    codes : ndarray of int, shape (N, n_attributes)
        Attribute codes in ``[0, cardinalities[j])``; ``-1`` marks a missing value.
    y : ndarray of int, shape (N,)
        Class codes in ``[0, len(classes))``.
    cardinalities : array-like of int, shape (n_attributes,), optional
        Number of values of every attribute; default one more than the largest code of each
        column (0 for every column when ``N == 0``).
    attribute_names : sequence of str, optional
        Column names; default ``x0, x1, ...`` (also when empty).
    classes : sequence of str, optional
        Class labels; default ``"0", "1", ...`` up to the largest code in ``y``.
    meta : mapping, optional
        Provenance, copied into :attr:`Dataset.meta`; default empty.

    Returns
    -------
    Dataset
        Every column categorical with the value labels ``"0", "1", ..., str(card - 1)``.

    Raises
    ------
    BNCBenchError
        If the resulting dataset is invalid (see :class:`Dataset`): e.g. no row, or fewer than
        two classes present.
    ValueError
        If a code is below -1 or not below its attribute's cardinality (raised by
        :meth:`pandas.Categorical.from_codes`).
    """
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


def from_table(name: str, X: pd.DataFrame, y: pd.Categorical, meta: Mapping[str, Any] | None = None) -> Dataset:
    """A :class:`Dataset` from a typed table and its class as a categorical (the loaders' last step).

    Parameters
    ----------
    name : str
        Name of the dataset.
    X : pandas.DataFrame
        The attributes: categorical and float64 columns.
    y : pandas.Categorical
        The class; its categories become :attr:`Dataset.classes`, in their order.
    meta : mapping, optional
        Provenance, copied into :attr:`Dataset.meta`; default empty.

    Returns
    -------
    Dataset
        The dataset.

    Raises
    ------
    BNCBenchError
        If the dataset is invalid (see :class:`Dataset`).
    """
    return Dataset(name, X, np.asarray(y.codes, dtype=np.int64), [str(c) for c in y.categories], dict(meta or {}))
