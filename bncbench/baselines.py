"""Non-BNC baselines evaluated under the same protocol, on the same discretized codes."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier

from bncbench.components import BASELINES
from bncbench.registry import Hyperparameter, integer


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
    random_state : int, default=0
    n_jobs : int, default=1
    """

    def __init__(self, *, n_estimators=100, random_state=0, n_jobs=1, cardinalities=None, discretize=False):
        self.n_estimators = n_estimators
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.cardinalities = cardinalities
        self.discretize = discretize

    def fit(self, X, y):
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

    def predict_proba(self, X):
        return self.forest_.predict_proba(np.asarray(X))

    def predict(self, X):
        return self.forest_.predict(np.asarray(X))


def make_estimator(params: dict, cardinalities):
    """The estimator of a model spec: a baseline (``model: NAME``) or a BNClassifier."""
    params = dict(params)
    kind = params.pop("model", "bnc")
    if kind == "bnc":
        from bncbench.classifier import BNClassifier

        return BNClassifier(**params, discretize=False, cardinalities=cardinalities)
    return BASELINES[kind].obj(**params)
