"""Non-BNC baselines evaluated under the same protocol, on the same discretized codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier

from bncbench.components import BASELINES
from bncbench.registry import Hyperparameter, integer

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@BASELINES.register("random_forest", label="RF", hyperparameters=[
    Hyperparameter("n_estimators", 100, [integer(1)], "trees", int),
    Hyperparameter("random_state", 0, [integer(0)], "seed", int),
    Hyperparameter("n_jobs", 1, [int], "threads of the forest", int)])
class RandomForestBaseline(ClassifierMixin, BaseEstimator):
    """Random forest on the discretized attribute codes (Petitjean et al. 2018, Table 3).

    100 trees and ``floor(log2(n)) + 1`` attributes tried per split, as in the
    paper's Weka baseline. Codes are used as ordinal values (scikit-learn's
    trees have no nominal splits); a missing value is its own code.

    Parameters
    ----------
    n_estimators : int, default=100
        Trees of the forest.
    random_state : int, default=0
        Seed of the forest.
    n_jobs : int, default=1
        Threads of the forest (scikit-learn's ``n_jobs``).
    cardinalities : array-like of int, default=None
        Accepted for the keyword interface of :class:`bncbench.BNClassifier`; not used.
    discretize : bool, default=False
        Accepted for the keyword interface of :class:`bncbench.BNClassifier`; not used (the
        codes are fed to the forest as they are).

    Attributes
    ----------
    forest_ : sklearn.ensemble.RandomForestClassifier
        The fitted forest.
    classes_ : ndarray of shape (n_classes,)
        The class labels, as the forest found them.
    n_features_in_ : int
        Number of attributes seen in :meth:`fit`.
    n_parameters_ : int
        Total number of tree nodes of the forest (its size, reported like a BNC's parameter count).
    """

    def __init__(self, *, n_estimators: int = 100, random_state: int = 0, n_jobs: int = 1,
                 cardinalities: ArrayLike | None = None, discretize: bool | str = False) -> None:
        """Store the hyperparameters unchanged (scikit-learn convention; see the class docstring).

        Parameters
        ----------
        n_estimators : int, default=100
            Trees of the forest.
        random_state : int, default=0
            Seed of the forest.
        n_jobs : int, default=1
            Threads of the forest.
        cardinalities : array-like of int, default=None
            Not used.
        discretize : bool, default=False
            Not used.
        """
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.cardinalities = cardinalities
        self.discretize = discretize

    def fit(self, X: ArrayLike, y: ArrayLike) -> RandomForestBaseline:
        """Fit the forest on attribute codes.

        With ``n`` attributes, each split tries ``min(n, int(log2(max(n, 1))) + 1)`` of them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Attribute codes (numbers; used as ordinal values).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        RandomForestBaseline
            ``self``, fitted.
        """
        X = np.asarray(X)
        n = X.shape[1]
        self.forest_ = RandomForestClassifier(
            n_estimators=int(self.n_estimators),
            max_features=min(n, int(np.log2(max(n, 1))) + 1),
            random_state=self.random_state,
            n_jobs=self.n_jobs,
        ).fit(X, y)
        self.classes_ = self.forest_.classes_
        self.n_features_in_ = n
        self.n_parameters_ = int(sum(t.tree_.node_count for t in self.forest_.estimators_))
        return self

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities of the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Attribute codes, coded as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities, columns in the order of ``classes_``.
        """
        return self.forest_.predict_proba(np.asarray(X))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Most probable class of each row, as the forest predicts it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Attribute codes, coded as in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels (values of ``classes_``).
        """
        return self.forest_.predict(np.asarray(X))

