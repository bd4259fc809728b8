"""From typed tables to integer category codes.

:class:`Discretizer` is fitted on a training fold only: numeric attributes get
supervised Fayyad–Irani MDL cut points (as Weka's supervised ``Discretize``),
nominal attributes keep their declared categories. A missing value is a value
of its own (the last code of the attribute); a value never seen when fitting
(an unknown category, or a missing value in an attribute that had none and for
which no missing code was reserved) becomes ``-1``, which models ignore.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from bncbench.model.discretize import apply_cuts, mdl_cut_points
from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def as_frame(X: pd.DataFrame | ArrayLike) -> pd.DataFrame:
    """A table of attributes as a DataFrame.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_attributes)
        The table.

    Returns
    -------
    pandas.DataFrame
        ``X`` itself if it is a DataFrame (not copied), else a new frame over ``np.asarray(X)``
        with columns ``x0, x1, ...``.

    Raises
    ------
    BNCBenchError
        If ``X`` is not a DataFrame and not two-dimensional.
    """
    if isinstance(X, pd.DataFrame):
        return X
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise BNCBenchError(f"expected a 2-d table of attributes, got shape {arr.shape}; Reshape your data")
    return pd.DataFrame(arr, columns=[f"x{i}" for i in range(arr.shape[1])])


def _coerce(col: pd.Series) -> pd.Series:
    """Object columns: numbers if every present value is one, else strings."""
    if col.dtype != object:
        return col
    num = pd.to_numeric(col, errors="coerce")
    if int(num.notna().sum()) == int(col.notna().sum()):
        return num.astype(float)
    return col.astype("string")


def _is_nominal(col: pd.Series) -> bool:
    return isinstance(col.dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(col.dtype)


class Discretizer(TransformerMixin, BaseEstimator):
    """Turn a table of nominal and numeric attributes into integer codes.

    Parameters
    ----------
    reserve_missing : None, bool or array-like of bool, default=None
        Whether each attribute gets a code for "missing". ``None`` reserves one
        where the fitted data has a missing value; the experiment runner passes
        the dataset-wide mask so every fold shares one value space.

    Attributes
    ----------
    kinds_ : list of {"nominal", "numeric"}
        Kind of each attribute.
    categories_ : list of list or None
        Value labels of nominal attributes.
    cuts_ : list of ndarray or None
        MDL cut points of numeric attributes.
    cardinalities_ : ndarray of int
        Number of codes per attribute (including the missing code).
    has_missing_code_ : ndarray of bool
        Whether each attribute has a missing code (its last code).
    value_labels_ : list of list of str
        Label of each code per attribute: categories, intervals ``(lo, hi]``, ``"?"`` for missing.
    feature_names_in_ : ndarray of str
        Column names seen in :meth:`fit` (``x0, x1, ...`` for arrays).
    n_features_in_ : int
        Number of attributes seen in :meth:`fit`.
    """

    def __init__(self, *, reserve_missing: bool | ArrayLike | None = None) -> None:
        """Store the hyperparameter unchanged (scikit-learn convention).

        Parameters
        ----------
        reserve_missing : None, bool or array-like of bool, default=None
            Whether each attribute gets a code for "missing" (see the class docstring).
        """
        self.reserve_missing = reserve_missing

    def fit(self, X: pd.DataFrame | ArrayLike, y: ArrayLike) -> Discretizer:
        """Learn each attribute's value space: categories of nominal attributes, MDL cut points of numeric ones.

        An object column whose present values are all numbers is numeric; other non-numeric or
        categorical columns are nominal, with the categorical's categories or the sorted distinct
        values (as strings) as categories. A numeric attribute gets one code per interval between
        its cut points. A reserved missing code is the last code of its attribute.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_attributes)
            Training table; NaN/None marks a missing value.
        y : array-like of shape (n_samples,)
            Class codes ``0 .. n_classes - 1`` (converted to int64).

        Returns
        -------
        Discretizer
            ``self``, fitted; also sets ``feature_names_in_`` and ``n_features_in_``.

        Raises
        ------
        BNCBenchError
            If ``X`` is not a DataFrame and not two-dimensional.
        ValueError
            If ``y`` holds anything but class codes, or its length differs from ``X``'s (checked
            when a numeric attribute is discretized).
        """
        X = as_frame(X)
        y = np.asarray(y, dtype=np.int64)
        d = X.shape[1]
        if self.reserve_missing is None:
            reserve = X.isna().any(axis=0).to_numpy()
        else:
            reserve = np.broadcast_to(np.asarray(self.reserve_missing, dtype=bool), (d,)).copy()
        self.kinds_, self.categories_, self.cuts_, cards, labels = [], [], [], [], []
        for j, name in enumerate(X.columns):
            col = _coerce(X[name])
            if _is_nominal(col):
                if isinstance(col.dtype, pd.CategoricalDtype):
                    cats = [str(c) for c in col.cat.categories]
                else:
                    cats = sorted(str(v) for v in pd.unique(col.dropna()))
                self.kinds_.append("nominal")
                self.categories_.append(cats)
                self.cuts_.append(None)
                lab = list(cats)
            else:
                cuts = mdl_cut_points(col.to_numpy(dtype=float), y)
                self.kinds_.append("numeric")
                self.categories_.append(None)
                self.cuts_.append(cuts)
                edges = [-np.inf, *cuts, np.inf]
                lab = [f"({edges[b]:.6g}, {edges[b + 1]:.6g}]" for b in range(len(cuts) + 1)]
            if reserve[j]:
                lab = lab + ["?"]
            labels.append(lab)
            cards.append(len(lab))
        self.cardinalities_ = np.asarray(cards, dtype=np.int64)
        self.has_missing_code_ = reserve
        self.value_labels_ = labels
        self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self.n_features_in_ = d
        return self

    def transform(self, X: pd.DataFrame | ArrayLike) -> np.ndarray:
        """Integer codes of a table, in the value space learned by :meth:`fit`.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_attributes)
            A table with the fitted attributes, in the fitted order (columns matched by position).

        Returns
        -------
        ndarray of shape (n_samples, n_attributes)
            int64 codes in ``[0, cardinalities_[j])``: a missing value gets the attribute's missing
            code if one was reserved; an unknown category, or a missing value without a missing code,
            gets -1.

        Raises
        ------
        BNCBenchError
            If ``X`` is not two-dimensional or has a different number of attributes than in :meth:`fit`.
        """
        X = as_frame(X)
        if X.shape[1] != self.n_features_in_:
            raise BNCBenchError(
                f"X has {X.shape[1]} features, but Discretizer is expecting {self.n_features_in_} features as input"
            )
        out = np.empty(X.shape, dtype=np.int64, order="F")  # column by column; one transposing copy at the end
        for j, name in enumerate(X.columns):
            col = _coerce(X[name])
            missing = col.isna().to_numpy()
            if self.kinds_[j] == "nominal":
                cats = self.categories_[j]
                if isinstance(col.dtype, pd.CategoricalDtype) and [str(c) for c in col.cat.categories] == cats:
                    codes = col.cat.codes.to_numpy().astype(np.int64)
                else:
                    vals = col.astype("string")
                    codes = pd.Categorical(vals.where(vals.isin(cats)), categories=cats).codes.astype(np.int64)
            else:
                codes = apply_cuts(col.to_numpy(dtype=float), self.cuts_[j])
            codes = np.where(missing, self.cardinalities_[j] - 1 if self.has_missing_code_[j] else -1, codes)
            out[:, j] = codes
        return np.ascontiguousarray(out)
