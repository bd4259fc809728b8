"""An RBF-kernel SVM as a baseline (Pernkopf et al., Tables 2–4): scikit-learn's ``SVC``.

By default the runner hands every model the same discretized codes and the SVM reads them as
numbers; with ``features="raw"`` the runner hands it the fold's attributes before discretization
instead (:mod:`bncbench.harness.raw_features`: numeric attributes as their values, nominal ones as their
codes), as the paper's SVM reads the continuous features (its §5: only the BNCs' features are
discretized). Either way each column is scaled to [0, 1] by its training range; a missing raw
value is replaced by its column's training mean. The paper
chooses ``C`` and the kernel width by cross tuning; with ``grid`` (``{"C": [...], "gamma": [...]}``)
this baseline does the same on a stratified held-out part of the training data
(:func:`bncbench.engine.validation.split`, ``validation_fraction`` and ``validation_seed``), keeps the
pair of highest held-out classification rate (ties: the first in grid order) and refits it on all
the training data. Its size (Table 4) is support vectors x attributes (``n_parameters_``). With
``train_rows`` it is fit on a stratified seeded subsample of that many training rows only (scaling,
tuning and the final fit alike), for a training set on which the full fit does not fit the time budget
(Pernkopf et al.'s MNIST: 60,000 rows); the experiment's label must say so.
"""

from __future__ import annotations

import itertools
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval

from bncbench.components import BASELINES
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, integer, options

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

GRID_KEYS = ("C", "gamma")


@BASELINES.register("svm_rbf", label="SVM", hyperparameters=[
    Hyperparameter("C", 1.0, [Interval(Real, 0, None, closed="neither")], "SVC's C (slack penalty)", float),
    Hyperparameter("gamma", "scale", [options(("scale", "auto")), Interval(Real, 0, None, closed="neither")],
                   "RBF width: SVC's gamma ('scale': 1 / (attributes x variance))"),
    Hyperparameter("grid", None, [dict, None], "cross tuning: {C: [...], gamma: [...]} chosen on a held-out part"),
    Hyperparameter("validation_fraction", 0.2, [Interval(Real, 0, 1, closed="neither")],
                   "cross tuning: the held-out fraction of the training data", float),
    Hyperparameter("validation_seed", 0, [integer(0)], "cross tuning: seed of the held-out split", int),
    Hyperparameter("features", "codes", [options(("codes", "raw"))],
                   "what the runner hands it: the discretized codes or the raw (continuous) features", str),
    Hyperparameter("train_rows", None, [integer(1), None],
                   "fit on a stratified subsample of at most this many training rows (seeded by validation_seed; "
                   "None: all)", int, omit_default=True)])
class SVMBaseline(ClassifierMixin, BaseEstimator):
    """RBF-kernel SVM (scikit-learn's ``SVC``) on attribute codes or raw features, scaled to [0, 1].

    Parameters
    ----------
    C : float, default=1.0
        Slack penalty.
    gamma : {"scale", "auto"} or float, default="scale"
        RBF kernel coefficient.
    grid : dict, optional
        ``{"C": [...], "gamma": [...]}`` (either key may be absent: its value above is used):
        every pair is fit on the training part and scored on the held-out part.
    validation_fraction : float, default=0.2
        Held-out fraction of the training data for ``grid``.
    validation_seed : int, default=0
        Seed of the held-out split.
    features : {"codes", "raw"}, default="codes"
        What the runner gives it to fit and predict (:func:`bncbench.harness.raw_features.reads_raw`): the
        discretized codes, or the attributes before discretization. The SVM itself treats both
        as numbers.
    train_rows : int, optional
        Fit on a stratified subsample of this many training rows (``round(train_rows / n * n_c)`` of
        each class ``c``; :func:`bncbench.engine.validation.split` seeded by ``validation_seed``) and
        ignore the others; None (default) or at least the number of rows: all of them.
    cardinalities, discretize :
        Accepted for the keyword interface of :class:`bncbench.BNClassifier`; not used.

    Attributes
    ----------
    svc_ : sklearn.svm.SVC
        The fitted SVM.
    classes_ : ndarray
        Class labels.
    n_parameters_ : int
        Support vectors x attributes (Pernkopf et al., Table 4).
    tuning_ : dict or None
        With ``grid``: the chosen ``C`` and ``gamma`` and every candidate's held-out error.
    """

    def __init__(self, *, C: float = 1.0, gamma: Any = "scale", grid: dict | None = None,
                 validation_fraction: float = 0.2, validation_seed: int = 0, features: str = "codes",
                 train_rows: int | None = None, cardinalities: ArrayLike | None = None, discretize: bool | str = False) -> None:
        """Store the hyperparameters unchanged (scikit-learn convention; see the class docstring)."""
        self.C = C
        self.gamma = gamma
        self.grid = grid
        self.validation_fraction = validation_fraction
        self.validation_seed = validation_seed
        self.features = features
        self.train_rows = train_rows
        self.cardinalities = cardinalities
        self.discretize = discretize

    def _scaled(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        X = np.where(np.isnan(X), self.fill_, X)
        return (X - self.low_) / self.span_

    def fit(self, X: ArrayLike, y: ArrayLike) -> SVMBaseline:
        """Scale, cross-tune if asked, and fit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Attribute codes, or raw features (numbers; ``NaN``: missing).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : SVMBaseline

        Raises
        ------
        BNCBenchError
            If ``grid`` has a key other than ``C`` and ``gamma``, or an empty list.
        """
        from bncbench.engine.validation import split

        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.train_rows is not None and int(self.train_rows) < y.size:
            _, rows = split(codes, int(self.train_rows) / y.size, int(self.validation_seed))
            X, codes = X[rows], codes[rows]
        seen = ~np.isnan(X)
        self.fill_ = np.divide(np.where(seen, X, 0.0).sum(axis=0), seen.sum(axis=0),
                               out=np.zeros(X.shape[1]), where=seen.any(axis=0))
        X = np.where(seen, X, self.fill_)
        self.low_ = X.min(axis=0)
        self.span_ = np.where(X.max(axis=0) > self.low_, X.max(axis=0) - self.low_, 1.0)
        Z = self._scaled(X)
        C, gamma, self.tuning_ = self.C, self.gamma, None
        if self.grid:
            bad = sorted(set(self.grid) - set(GRID_KEYS))
            if bad or any(len(list(v)) == 0 for v in self.grid.values()):
                raise BNCBenchError(f"svm_rbf grid takes non-empty lists of {' and '.join(GRID_KEYS)}; got "
                                    f"{dict(self.grid)!r}")
            tr, held = split(codes, float(self.validation_fraction), int(self.validation_seed))
            rows, best = [], None
            for c, g in itertools.product(self.grid.get("C", [C]), self.grid.get("gamma", [gamma])):
                svc = SVC(kernel="rbf", C=float(c), gamma=g if isinstance(g, str) else float(g)).fit(Z[tr], codes[tr])
                err = float(np.mean(svc.predict(Z[held]) != codes[held]))
                rows.append({"C": c, "gamma": g, "val_error": err})
                if best is None or err < best[0]:
                    best = (err, c, g)
            _, C, gamma = best
            self.tuning_ = {"chosen": {"C": C, "gamma": gamma}, "candidates": rows}
        self.svc_ = SVC(kernel="rbf", C=float(C), gamma=gamma if isinstance(gamma, str) else float(gamma))
        self.svc_.fit(Z, codes)
        self.n_features_in_ = X.shape[1]
        self.n_parameters_ = int(self.svc_.support_.size * X.shape[1])
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted class labels."""
        return self.classes_[self.svc_.predict(self._scaled(X))]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """The predicted class with probability 1 (the SVM gives no probabilities; the record's RMSE is then
        that of hard predictions)."""
        pred = self.svc_.predict(self._scaled(X))
        out = np.zeros((pred.size, self.classes_.size))
        out[np.arange(pred.size), pred] = 1.0
        return out
