"""The scikit-learn estimator for Bayesian network classifiers."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from bncbench.errors import BNCBenchError
from bncbench.preprocess import Discretizer
from bncbench.structure import learn_structure
from bncbench.tables import CountTables

PARAMS = ("generative", "discriminative", "extended", "weighted")
STRUCTURES = ("nb", "tan", "kdb", "skdb", "custom")


class BNClassifier(ClassifierMixin, BaseEstimator):
    """Bayesian network classifier: a structure plus a parameterization.

    Parameters
    ----------
    structure : {"nb", "tan", "kdb", "skdb", "custom"}, default="nb"
        Structure learner: naive Bayes, tree-augmented naive Bayes
        (Friedman et al. 1997), k-dependence Bayes (Sahami 1996), selective
        KDB (Martínez et al. 2016: the number of attributes and k* <= k chosen
        by incremental leave-one-out RMSE), or the parent lists in ``parents``.
    k : int, default=1
        Number of attribute parents per attribute for ``structure="kdb"``
        (the largest k for ``"skdb"``).
    parents : list of list of int, default=None
        Attribute parents per attribute for ``structure="custom"``.
    estimator : {"map", "hdp"}, default="map"
        Generative estimate of the probability tables: the m-estimate with
        back-off to the longest parent prefix that has data, or hierarchical
        Dirichlet process estimates (Petitjean et al. 2018; ``bncbench.hdp``).
    m : float or "auto", default=1.0
        Total mass of the uniform Dirichlet prior of every table row.
        ``"auto"`` chooses m from {0, 0.05, 0.2, 1, 5, 20} by RMSE on a
        holdout of min(N/10, 5000) training instances (Petitjean et al. 2018,
        §6.1), then refits on all training data.
    param : {"generative", "discriminative", "extended", "weighted"}, default="generative"
        Parameterization (Zaidi et al. 2017, Table 2).
    init : {"zeros", "generative"}, default="generative"
        Initialization of discriminatively learned parameters.
    optimizer : str, default="lbfgs"
        Optimizer for discriminative parameterizations.
    optimizer_options : dict, default=None
        Extra options for the optimizer (see :mod:`bncbench.engine.optim`),
        e.g. ``{"stop": "paper"}``, ``{"maxiter": 50}``.
    level : {1, 2, 3, 4}, default=4
        Weight tying of ``param="weighted"`` (Zaidi et al. 2017, §5.4): one
        weight per attribute, per attribute value, per attribute value and
        class, or per attribute value, class and parent configuration.
    reg : {"none", "l2", "l2_one"}, default="none"
        Regularization of optimized parameters: none, ``lam/2 ||x||^2``, or
        ``lam/2 ||x - 1||^2`` (for weights: pulls towards the generative model).
    lam : float, default=0.0
        Regularization strength.
    hdp_iterations : int, default=5000
        Gibbs iterations of ``estimator="hdp"``.
    tying : {"level", "single", "same_parent", "none"}, default="level"
        Concentration tying of ``estimator="hdp"``.
    random_state : int, default=0
        Seed of the HDP sampler and of the holdout of ``m="auto"``.
    discretize : {"auto", True, False}, default="auto"
        ``"auto"`` discretizes a table with any non-integer column (MDL on
        numeric columns, categories on nominal ones); integer arrays and
        all-integer DataFrames are used as category codes.
    cardinalities : array-like of int, default=None
        Number of codes per attribute for integer input (default: the largest
        code seen in training plus one).

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    structure_ : list of tuple of int or None
        Attribute parents of every attribute (most informative first);
        ``None`` for an attribute SkDB left out.
    columns_ : ndarray of int
        The attributes the model uses (all but those SkDB left out).
    m_ : float
        The m used (chosen on a holdout when ``m="auto"``).
    hdp_ : HDPTables or None
        HDP estimates (``estimator="hdp"``).
    cardinalities_ : ndarray of int
        Number of codes per attribute.
    tables_ : CountTables
        Training counts per factor and parent-prefix level.
    discretizer_ : Discretizer or None
        The fitted discretization step, if any.
    n_parameters_ : int
        Number of free parameters. Generative: of the fitted full-depth
        tables, ``sum_i n_configs_i * |Y| * (|X_i| - 1) + |Y| - 1`` (HDP: of
        the HDP estimates). Optimized parameterizations: the number of
        parameters the optimizer adjusts (``model_.x.size``), one per
        (class, trained row of ``Phi``) for ``"discriminative"`` and
        ``"extended"`` (every β; a trained row is a value of the class, or
        of an attribute under a parent configuration seen in training); for
        ``"weighted"`` the number of weights: ``n_attributes + 1`` at
        ``level=1``, ``|Y| + sum_i |X_i|`` at 2, ``|Y| (1 + sum_i |X_i|)``
        at 3, and one per log θ entry of the trained rows at 4 (as many as
        ``"discriminative"``).
    n_features_in_ : int
        Number of attributes seen in ``fit``.
    model_ : CCBNModel or None
        The optimized model (``param != "generative"``).
    trace_ : list of dict
        Optimized parameterizations only: per iteration ``{"iter", "nll",
        "n_fev", "time"}`` (iteration 0 = before optimization; ``nll`` is the
        negative training CLL summed over instances).
    n_iter_, n_fev_ : int
        Optimizer iterations and full-data objective evaluations.
    train_cll_ : float
        Training CLL (summed over instances) of the optimized parameters.
    """

    def __init__(
        self,
        *,
        structure="nb",
        k=1,
        parents=None,
        estimator="map",
        m=1.0,
        param="generative",
        init="generative",
        optimizer="lbfgs",
        optimizer_options=None,
        level=4,
        reg="none",
        lam=0.0,
        hdp_iterations=5000,
        tying="level",
        random_state=0,
        discretize="auto",
        cardinalities=None,
    ):
        self.structure = structure
        self.k = k
        self.parents = parents
        self.estimator = estimator
        self.m = m
        self.param = param
        self.init = init
        self.optimizer = optimizer
        self.optimizer_options = optimizer_options
        self.level = level
        self.reg = reg
        self.lam = lam
        self.hdp_iterations = hdp_iterations
        self.tying = tying
        self.random_state = random_state
        self.discretize = discretize
        self.cardinalities = cardinalities

    # ------------------------------------------------------------------ helpers
    def _needs_discretizer(self, X) -> bool:
        if self.discretize is True or self.discretize is False:
            return bool(self.discretize)
        if isinstance(X, pd.DataFrame):
            # a table of integer columns only is read as category codes, like an integer array
            return not all(pd.api.types.is_integer_dtype(t) for t in X.dtypes)
        return np.asarray(X).dtype.kind not in "iub"

    def _check_params(self):
        if self.param not in PARAMS:
            raise BNCBenchError(f"unknown param {self.param!r}; choose one of {', '.join(PARAMS)}")
        if self.estimator not in ("map", "hdp"):
            raise BNCBenchError(f"unknown estimator {self.estimator!r}; available: map, hdp")
        if self.m != "auto":
            try:
                m = float(self.m)
            except (TypeError, ValueError):
                raise BNCBenchError(f"m must be a number >= 0 or 'auto', got {self.m!r}") from None
            if not np.isfinite(m) or m < 0:
                raise BNCBenchError(f"m must be a finite number >= 0, got {self.m}")
        if self.structure not in STRUCTURES:
            raise BNCBenchError(f"unknown structure {self.structure!r}; choose one of {', '.join(STRUCTURES)}")
        if self.structure in ("kdb", "skdb"):
            if isinstance(self.k, bool) or not isinstance(self.k, (int, float, np.integer)) or int(self.k) != self.k \
                    or self.k < 0:
                raise BNCBenchError(f"KDB needs an integer k >= 0, got k={self.k}")
        if self.structure == "custom" and self.parents is None:
            raise BNCBenchError("structure='custom' needs parents (one parent list per attribute)")
        if self.param != "generative":
            from bncbench.engine.optim import OPTIMIZERS

            if self.init not in ("zeros", "generative"):
                raise BNCBenchError(f"unknown init {self.init!r}; choose zeros or generative")
            if self.optimizer not in OPTIMIZERS:
                raise BNCBenchError(f"unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
            if self.param == "weighted" and self.level not in (1, 2, 3, 4):
                raise BNCBenchError(f"weighted level must be 1, 2, 3 or 4, got {self.level!r}")
            if self.reg not in ("none", "l2", "l2_one"):
                raise BNCBenchError(f"unknown reg {self.reg!r}; choose none, l2 or l2_one")
            if not np.isfinite(float(self.lam)) or float(self.lam) < 0:
                raise BNCBenchError(f"lam must be a finite number >= 0, got {self.lam}")
        if self.estimator == "hdp":
            from bncbench.hdp import TYINGS

            if self.tying not in TYINGS:
                raise BNCBenchError(f"unknown tying {self.tying!r}; choose one of {', '.join(TYINGS)}")
            if int(self.hdp_iterations) < 1:
                raise BNCBenchError(f"hdp_iterations must be >= 1, got {self.hdp_iterations}")
            if self.param != "generative":
                raise BNCBenchError("estimator='hdp' gives generative parameters; use it with param='generative'")

    def _codes(self, X, fitting: bool, y=None) -> np.ndarray:
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise BNCBenchError("sparse input is not supported: pass a dense array or DataFrame")
        if not isinstance(X, pd.DataFrame):
            kind = np.asarray(X).dtype.kind
            if kind == "c":
                raise BNCBenchError("Complex data not supported")
        if fitting:
            self.discretizer_ = Discretizer().fit(X, y) if self._needs_discretizer(X) else None
        if self.discretizer_ is not None:
            return self.discretizer_.transform(X)
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise BNCBenchError(f"expected a 2-d array of category codes, got shape {arr.shape}; Reshape your data")
        if arr.dtype.kind == "f":
            arr = np.where(np.isfinite(arr), arr, -1)
        return arr.astype(np.int64)

    # ------------------------------------------------------------------ API
    def fit(self, X, y):
        """Learn the structure, then the parameters, from training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or DataFrame
            Integer category codes, or a table to discretize.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : BNClassifier
        """
        self._check_params()
        if y is None:
            raise BNCBenchError("requires y to be passed, but the target y is None")
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            from sklearn.utils.validation import column_or_1d

            y = column_or_1d(y, warn=True)
        if y.ndim != 1:
            raise BNCBenchError(f"y should be a 1d array, got shape {y.shape}")
        if len(y) == 0:
            raise BNCBenchError("cannot fit on a dataset with no rows")
        if pd.isna(pd.Series(y)).any():
            raise BNCBenchError("the class has missing values")
        from sklearn.utils.multiclass import type_of_target

        kind = type_of_target(y)
        if kind not in ("binary", "multiclass"):
            raise BNCBenchError(f"Unknown label type: the class must be discrete labels, got a {kind} target")
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise BNCBenchError(
                f"the training data has only one class ({self.classes_[0]!r}); a classifier needs at least 2"
            )
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        codes = self._codes(X, True, y_codes)
        if codes.shape[0] != y.shape[0]:
            raise BNCBenchError(f"X has {codes.shape[0]} rows but y has {y.shape[0]}")
        if codes.shape[1] == 0:
            raise BNCBenchError(
                f"0 feature(s) (shape=({codes.shape[0]}, 0)) while a minimum of 1 is required."
            )
        self.n_features_in_ = codes.shape[1]
        if self.discretizer_ is not None:
            cards = self.discretizer_.cardinalities_
        elif self.cardinalities is not None:
            cards = np.asarray(self.cardinalities, dtype=np.int64)
            if cards.shape != (codes.shape[1],):
                raise BNCBenchError("cardinalities must have one entry per attribute")
        else:
            cards = codes.max(axis=0, initial=-1) + 1
        self.cardinalities_ = np.maximum(np.asarray(cards, dtype=np.int64), 1)
        bad = (codes < 0) | (codes >= self.cardinalities_)
        if bad.any():
            j = int(np.flatnonzero(bad.any(axis=0))[0])
            raise BNCBenchError(
                f"training codes of attribute {j} are outside [0, {self.cardinalities_[j]}) (e.g. "
                f"{int(codes[bad[:, j], j][0])}); a missing value needs a code of its own, or pass a table "
                "with NaN and discretize=True"
            )
        n_classes = len(self.classes_)
        if self.structure == "skdb":
            from bncbench.skdb import restrict, skdb

            m_sel = 1.0 if self.m == "auto" else float(self.m)
            self.structure_ = skdb(codes, y_codes, self.cardinalities_, n_classes, int(self.k), m=m_sel).structure
            columns, sub = restrict(self.structure_)
        else:
            self.structure_ = learn_structure(
                self.structure, codes, y_codes, self.cardinalities_, n_classes, k=self.k, parents=self.parents
            )
            columns, sub = list(range(codes.shape[1])), self.structure_
        self.columns_ = np.asarray(columns, dtype=np.int64)
        codes = codes[:, self.columns_]
        cards = self.cardinalities_[self.columns_]
        self.m_ = self._choose_m(sub, cards, codes, y_codes) if self.m == "auto" else float(self.m)
        self.tables_ = CountTables(sub, cards, n_classes).fit(codes, y_codes)
        self.n_parameters_ = self.tables_.n_parameters()
        self.hdp_ = None
        if self.estimator == "hdp":
            from bncbench.hdp import fit_hdp

            self.hdp_ = fit_hdp(codes, y_codes, sub, cards, n_classes, iterations=int(self.hdp_iterations),
                                tying=self.tying, seed=int(self.random_state))
            self.n_parameters_ = self.hdp_.n_parameters()
        self.model_ = None
        for attr in ("trace_", "n_iter_", "n_fev_", "train_cll_"):
            self.__dict__.pop(attr, None)
        if self.param != "generative":
            from bncbench.ccbn import fit_ccbn  # discriminative parameter learning engine

            self.model_ = fit_ccbn(self, codes, y_codes)
            self.trace_ = self.model_.trace
            self.n_iter_ = self.model_.n_iter
            self.n_fev_ = self.model_.n_fev
            self.train_cll_ = self.model_.train_cll
            self.n_parameters_ = int(self.model_.pmap.n_params)  # the optimized parameters, not the tables
        return self

    M_GRID = (0.0, 0.05, 0.2, 1.0, 5.0, 20.0)

    def _choose_m(self, structure, cards, codes, y_codes) -> float:
        """m with the lowest holdout RMSE (ties: the first in :attr:`M_GRID`)."""
        from bncbench.protocol import rmse

        n = codes.shape[0]
        n_hold = min(n // 10, 5000)
        if n_hold < 1:
            return 1.0
        rng = np.random.default_rng(int(self.random_state))
        hold = np.zeros(n, dtype=bool)
        hold[rng.choice(n, size=n_hold, replace=False)] = True
        t = CountTables(structure, cards, len(self.classes_)).fit(codes[~hold], y_codes[~hold])
        best, best_score = 1.0, np.inf
        for m in self.M_GRID:
            with np.errstate(divide="ignore", invalid="ignore"):
                jll = t.log_joint(codes[hold], m)
                p = np.exp(jll - logsumexp(jll, axis=1, keepdims=True))
            score = rmse(y_codes[hold], p) if np.isfinite(p).all() else np.inf
            if score < best_score:
                best, best_score = m, score
        return best

    def _joint_log_likelihood(self, X) -> np.ndarray:
        check_is_fitted(self, "tables_")
        codes = self._codes(X, False)
        if codes.shape[1] != self.n_features_in_:
            raise BNCBenchError(
                f"X has {codes.shape[1]} features, but BNClassifier is expecting {self.n_features_in_} features as input"
            )
        codes = codes[:, self.columns_]
        if self.model_ is not None:
            return self.model_.log_potentials(codes)
        if self.hdp_ is not None:
            return self.hdp_.log_joint(codes)
        return self.tables_.log_joint(codes, self.m_)

    def predict_log_proba(self, X) -> np.ndarray:
        """Log class probabilities, normalized in log space."""
        jll = self._joint_log_likelihood(X)
        # with m = 0 an instance can have probability 0 under every class: predict uniformly
        dead = ~np.isfinite(jll.max(axis=1))
        if dead.any():
            jll[dead] = 0.0
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities P(y | x), shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        """Most probable class (ties go to the first class in ``classes_``)."""
        jll = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(jll, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags
