"""The scikit-learn estimator for Bayesian network classifiers, assembled from registered parts."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from bncbench.components import (ESTIMATORS, FLAT_KINDS, INITS, OBJECTIVES, PARAMETERIZATIONS,
                                 STRUCTURES)
from bncbench.data.identifiers import find_identifiers, warn_identifiers
from bncbench.errors import BNCBenchError
from bncbench.estimators import estimate
from bncbench.model.preprocess import Discretizer
from bncbench.registry import Component, integer, options, union
from bncbench.structures import TrainingData
from bncbench.validate import check_classifier

SELECTORS = (("structure", "nb", STRUCTURES), ("param", "generative", PARAMETERIZATIONS),
             ("estimator", "map", ESTIMATORS))
"""The keywords that choose a component, their defaults and registries."""
GENERAL = {"random_state": (0, [integer(0)]), "discretize": ("auto", [StrOptions({"auto"}), "boolean"]),
           "cardinalities": (None, ["array-like", None]),
           "missing": ("ignore", [StrOptions({"ignore", "marginalize", "first_value"})])}
FIRST_VALUE = "first_value"
"""``missing=``'s value that reads a missing value as the attribute's first value (the EBNC code's '?')."""


@functools.lru_cache(maxsize=1)
def _hyperparameters() -> dict:
    """Every keyword of :class:`BNClassifier`: ``{name: (default, constraints)}``, read from the registries.

    Cached until a component is registered (:func:`_refresh_signature` clears it).
    """
    out = {name: (default, [options(reg)]) for name, default, reg in SELECTORS}
    for name, h in union(FLAT_KINDS).items():
        out.setdefault(name, (h.default, list(h.constraints)))
    for name, spec in GENERAL.items():
        out.setdefault(name, spec)
    return out


class _RegistryConstraints:
    """``BNClassifier._parameter_constraints``, built from the registries when read (plug-ins included)."""

    def __get__(self, obj, objtype=None) -> dict:
        return {name: cons for name, (_, cons) in _hyperparameters().items()}


@dataclass
class _Parts:
    structure: Component
    estimator: Component
    param: Component
    values: dict  # the estimator's parameters

    def kwargs(self, comp: Component) -> dict:
        """The keywords ``comp`` reads: its hyperparameters and the ones it ``uses``."""
        out = comp.params(self.values)
        for name in comp.info.get("uses", ()):
            out[name] = self.values[name]
        return out


def _class_codes(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)``; integer labels of a small range by counting instead of sorting."""
    if y.dtype.kind in "iu" and y.size:
        low, high = int(y.min()), int(y.max())
        span = high - low + 1
        if span <= 4 * y.size + 1024 and high < 2**62:
            offset = y.astype(np.intp) - low
            present = np.bincount(offset, minlength=span) > 0
            classes = (np.flatnonzero(present) + low).astype(y.dtype)
            return classes, (np.cumsum(present) - 1)[offset]
    return np.unique(y, return_inverse=True)


def _integer_array(a, ndim: int) -> bool:
    """Whether ``a`` is an integer (or boolean) ndarray of ``ndim`` dimensions, none of them empty but the rows.

    Such an ``X`` is what ``check_array(X, dtype=None, ensure_all_finite=False, ensure_min_samples=0)`` returns
    unchanged, and such a ``y`` what ``column_or_1d`` returns unchanged, with no missing value and a target type
    (binary or multiclass) that ``check_classification_targets`` accepts: :meth:`BNClassifier.fit` skips those
    checks for them (a third of a small fit's time).
    """
    return type(a) is np.ndarray and a.ndim == ndim and a.dtype.kind in "iub" and (ndim == 1 or a.shape[1] > 0)


def _reset_features(est, X: np.ndarray) -> None:
    """What ``validate_data(est, X, reset=True, skip_check_array=True)`` does for a 2-d ndarray (no feature names):
    ``n_features_in_`` set to its columns, a former fit's ``feature_names_in_`` removed (scikit-learn's
    ``_check_feature_names`` and ``_check_n_features``; its tags are read only when ``y`` is None), without its
    per-call cost (~30 us of a 3 ms fit)."""
    if hasattr(est, "feature_names_in_"):
        delattr(est, "feature_names_in_")
    est.n_features_in_ = X.shape[1]


class BNClassifier(ClassifierMixin, BaseEstimator):
    """Bayesian network classifier: a structure, an estimate and a parameterization.

    The keywords are those of the registered components (:mod:`bncbench.components`;
    ``docs/configuration.md`` lists them all): ``structure``, ``estimator`` and ``param``
    choose one component each, and every hyperparameter any component declares is a
    keyword of its own (``k``, ``m``, ``hdp_iterations``, ``tying``, ``init``,
    ``optimizer``, ``optimizer_options``, ``objective``, ``reg``, ``lam``, ``level``, ...),
    used when its component is chosen. Plus:

    Parameters
    ----------
    structure : str, default="nb"
        Structure learner: ``nb``, ``tan``, ``kdb`` (k parents), ``skdb`` (selective KDB),
        ``custom`` (the parent lists in ``parents``), or a plug-in.
    estimator : str, default="map"
        Generative estimate: ``map`` (m-estimates with back-off, prior mass ``m``; ``m="auto"``
        chooses m on a holdout) or ``hdp`` (hierarchical Dirichlet processes).
    param : str, default="generative"
        Parameterization (Zaidi et al. 2017, Table 2): ``generative``, or ``discriminative``,
        ``extended``, ``weighted`` optimized from ``init`` by ``optimizer`` on ``objective``.
    random_state : int, default=0
        Seed of every random choice (HDP sampler, holdout of ``m="auto"``).
    discretize : {"auto", True, False}, default="auto"
        ``"auto"`` discretizes a table with any non-integer column (MDL on numeric columns,
        categories on nominal ones); integer arrays and all-integer DataFrames are codes.
    cardinalities : array-like of int, default=None
        Number of codes per attribute for integer input (default: largest code + 1).
    missing : {"ignore", "marginalize", "first_value"}, default="ignore"
        An unknown value at prediction time (a code outside ``[0, card)``: -1, NaN in integer
        input, an unseen category, NaN in an attribute that had no missing value in training):
        ``"ignore"`` leaves its factor out and its children back off to the parent prefix seen
        without it; ``"marginalize"`` sums the model's joint over its values exactly (Pernkopf
        et al., §5.1; :mod:`bncbench.model.marginal`), for one network whose attributes have at most one
        attribute parent (NB, TAN, KDB-1) with ``estimator=map`` or ``hdp`` or an optimized
        parameterization. A NaN in an attribute that had NaN in training is a value of its own
        (its missing code) with either. ``"first_value"`` is the authors' EBNC code's reading of
        '?' (Zaidi et al. 2017's published numbers; ``docs/reproductions/zaidi2017.md``): every
        missing or unknown value, in ``fit`` and at prediction, is read as the attribute's first
        value (code 0; the first interval of a discretized attribute), and a table is discretized
        without a missing code; the experiment runner hands such a model the dataset's missing
        values as missing (:func:`model_cardinalities`).

    A nominal column of a table (a DataFrame, or an array that is discretized) with a distinct
    value on at least 90 % of 20 or more rows is an identifier, not evidence: ``fit`` issues one
    :class:`~bncbench.errors.IdentifierWarning` naming it (:mod:`bncbench.data.identifiers`).
    Integer code arrays are taken as they are.

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    learned_structure_ : LearnedStructure
        The structure learner's result (one network, or an ensemble with its rule).
    scorer_ : Scorer
        The one source of scores: ``scorer_.log_joint(codes)``.
    structure_ : list of tuple of int or None
        Attribute parents of every attribute of a one-network model (``None``: left out).
    columns_ : ndarray of int
        The attributes a one-network model uses.
    cardinalities_ : ndarray of int
        Number of codes per attribute.
    discretizer_ : Discretizer or None
        The fitted discretization step, if any.
    n_parameters_ : int
        Free parameters: of the fitted full-depth tables (generative; HDP: of its
        estimates), or the parameters the optimizer adjusts (optimized).
    n_features_in_ : int
        Number of attributes seen in ``fit``.
    m_, tables_, hdp_, model_ :
        The m used, the count tables, the HDP tables and the optimized model, where they exist.
    forest_ : Forest or None
        With ``missing="marginalize"``: the log-potentials the sum runs over
        (:class:`bncbench.model.marginal.Forest`); None otherwise.
    trace_, n_iter_, n_fev_, train_cll_ :
        Optimized parameterizations: per-iteration ``{"iter", "nll", "n_fev", "time"}``,
        iterations, full-data evaluations and the training CLL.
    tuning_ : dict or None
        Optimized parameterizations with the optimizer option ``grid``: the chosen hyperparameter
        values and every candidate's held-out error (:mod:`bncbench.engine.tuning`); else None.
    """

    _parameter_constraints = _RegistryConstraints()

    def __init__(self, **params):
        spec = _hyperparameters()
        unknown = sorted(set(params) - set(spec))
        if unknown:
            raise TypeError(f"BNClassifier got unexpected keyword argument(s) {', '.join(unknown)}; "
                            f"known: {', '.join(spec)}")
        for name, (default, _) in spec.items():
            setattr(self, name, params.get(name, default))

    @classmethod
    def _get_param_names(cls) -> list:
        return sorted(_hyperparameters())

    # ------------------------------------------------------------------ fit
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
        parts = self._check_components()
        X, y_codes = self._check_training_data(X, y)
        data = self._encode(X, y_codes)
        if isinstance(X, pd.DataFrame) or self.discretizer_ is not None:
            self._warn_identifiers(X, data.codes)
        self.learned_structure_ = parts.structure.obj(data, **parts.kwargs(parts.structure))
        self.scorer_ = estimate(parts.estimator.obj, self.learned_structure_, data,
                                ensembles=parts.estimator.info.get("ensembles"), **parts.kwargs(parts.estimator))
        if parts.param.info.get("optimized"):
            from bncbench.engine.fit import fit_ccbn  # the discriminative parameter learning engine

            kwargs = parts.kwargs(parts.param)
            for comp in (INITS[self.init], OBJECTIVES[self.objective]):
                kwargs.update(parts.kwargs(comp))
            self.scorer_ = fit_ccbn(self.scorer_, data.codes, data.y, param=self.param, **kwargs)
        self.n_parameters_ = int(self.scorer_.n_parameters)
        self.forest_ = None
        if self.missing == "marginalize":
            from bncbench.model.marginal import forest_of

            self.forest_ = forest_of(self.scorer_, f"structure={self.structure!r} with estimator={self.estimator!r}"
                                                   f" and param={self.param!r}")
        return self

    def _check_components(self) -> _Parts:
        """Validate every keyword against the registries (the one pass, :mod:`bncbench.validate`); the chosen components."""
        values = self.get_params(deep=False)
        comps = check_classifier(values, _hyperparameters())
        return _Parts(comps["structure"], comps["estimator"], comps["param"], values)

    def _check_training_data(self, X, y):
        if y is None:
            raise BNCBenchError("requires y to be passed, but the target y is None")
        if _integer_array(X, 2):  # integer codes pass scikit-learn's check unchanged: skip its cost
            _reset_features(self, X)
        else:
            if not isinstance(X, pd.DataFrame):
                X = check_array(X, dtype=None, ensure_all_finite=False, ensure_min_samples=0)
            validate_data(self, X, reset=True, skip_check_array=True)
        if _integer_array(y, 1):  # 1-d integer labels: no NaN, and always binary or multiclass targets
            if len(y) == 0:
                raise BNCBenchError("cannot fit on a dataset with no rows")
        else:
            y = column_or_1d(y, warn=True)
            if len(y) == 0:
                raise BNCBenchError("cannot fit on a dataset with no rows")
            if pd.isna(pd.Series(y)).any():
                raise BNCBenchError("the class has missing values")
            check_classification_targets(y)
        self.classes_, y_codes = _class_codes(y)
        if len(self.classes_) < 2:
            raise BNCBenchError(
                f"the training data has only one class ({self.classes_[0]!r}); a classifier needs at least 2")
        if X.shape[0] != y.shape[0]:
            raise BNCBenchError(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
        return X, y_codes

    def _needs_discretizer(self, X) -> bool:
        if self.discretize is True or self.discretize is False:
            return bool(self.discretize)
        if isinstance(X, pd.DataFrame):
            # a table of integer columns only is read as category codes, like an integer array
            return not all(pd.api.types.is_integer_dtype(t) for t in X.dtypes)
        return np.asarray(X).dtype.kind not in "iub"

    def _encode(self, X, y_codes) -> TrainingData:
        """Discretize (if needed) and check the training codes."""
        reserve = False if self.missing == FIRST_VALUE else None  # '?' read as the first value: no code of its own
        self.discretizer_ = Discretizer(reserve_missing=reserve).fit(X, y_codes) if self._needs_discretizer(X) else None
        codes = self._codes(X)
        if self.discretizer_ is not None:
            cards = self.discretizer_.cardinalities_
        elif self.cardinalities is not None:
            cards = np.asarray(self.cardinalities, dtype=np.int64)
            if cards.shape != (codes.shape[1],):
                raise BNCBenchError("cardinalities must have one entry per attribute")
        else:
            cards = codes.max(axis=0, initial=-1) + 1
        self.cardinalities_ = np.maximum(np.asarray(cards, dtype=np.int64), 1)
        codes = self._read_missing(codes)
        bad = (codes < 0) | (codes >= self.cardinalities_)
        if bad.any():
            j = int(np.flatnonzero(bad.any(axis=0))[0])
            raise BNCBenchError(
                f"training codes of attribute {j} are outside [0, {self.cardinalities_[j]}) (e.g. "
                f"{int(codes[bad[:, j], j][0])}); a missing value needs a code of its own, or pass a table "
                "with NaN and discretize=True")
        return TrainingData(codes, y_codes.astype(np.int64), self.cardinalities_, len(self.classes_),
                            int(self.random_state))

    def _warn_identifiers(self, X, codes: np.ndarray) -> None:
        """One IdentifierWarning naming the nominal columns with a distinct value on (nearly) every row.

        Nominal: what the discretizer keeps as categories, or every column of a table read as codes.
        """
        disc = self.discretizer_
        names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else [f"x{j}" for j in range(codes.shape[1])]
        nominal = [j for j in range(codes.shape[1]) if disc is None or disc.kinds_[j] == "nominal"]
        # the discretizer's missing code is the last one: outside [0, card) it counts as missing
        cards = self.cardinalities_ - (disc.has_missing_code_ if disc is not None else 0)
        found = find_identifiers(((names[j], codes[:, j], int(cards[j])) for j in nominal), codes.shape[0])
        warn_identifiers(found, codes.shape[0], "X", "drop {it} before fit (loaders: drop_identifiers)", stacklevel=3)

    def _codes(self, X) -> np.ndarray:
        if self.discretizer_ is not None:
            return self.discretizer_.transform(X)
        arr = np.asarray(X)
        if arr.dtype.kind == "f":
            arr = np.where(np.isfinite(arr), arr, -1)
        return arr.astype(np.int64)

    def _read_missing(self, codes: np.ndarray) -> np.ndarray:
        """With ``missing="first_value"``: every code outside ``[0, card)`` becomes 0; else ``codes``."""
        if self.missing != FIRST_VALUE:
            return codes
        return np.where((codes < 0) | (codes >= self.cardinalities_), 0, codes)

    # ------------------------------------------------------------------ predict
    def _joint_log_likelihood(self, X) -> np.ndarray:
        check_is_fitted(self, "scorer_")
        if not isinstance(X, pd.DataFrame):
            X = check_array(X, dtype=None, ensure_all_finite=False)
        validate_data(self, X, reset=False, skip_check_array=True)
        codes = self._read_missing(self._codes(X))
        forest = getattr(self, "forest_", None)
        gap = forest.missing(codes) if forest is not None else None
        if gap is None or not gap.any():
            return self.scorer_.log_joint(codes)
        jll = np.empty((codes.shape[0], forest.n_classes))
        jll[gap] = forest.log_joint(codes[gap])          # the exact sum where a value is missing
        if not gap.all():
            jll[~gap] = self.scorer_.log_joint(codes[~gap])
        return jll

    def predict_log_proba(self, X) -> np.ndarray:
        """Log class probabilities, normalized in log space."""
        # classes x instances: the reductions over the classes are elementwise (numpy's reductions along
        # a short last axis took more time than the AnDE kernel's prediction)
        jt = np.ascontiguousarray(self._joint_log_likelihood(X).T)
        top = jt.max(axis=0)
        dead = ~np.isfinite(top)  # with m = 0 an instance can have probability 0 under every class: uniform
        if dead.any():
            jt[:, dead] = 0.0
            top[dead] = 0.0
        jt -= top + np.log(np.exp(jt - top).sum(axis=0))
        return np.ascontiguousarray(jt.T)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities P(y | x), shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        """Most probable class (ties go to the first class in ``classes_``)."""
        jll = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(jll, axis=1)]

    # ------------------------------------------------------------------ views of the fitted parts
    @property
    def structure_(self) -> list:
        return self.learned_structure_.parents

    @property
    def columns_(self) -> np.ndarray:
        return self.learned_structure_.members[0].columns if len(self.learned_structure_.members) == 1 \
            else np.arange(self.n_features_in_)

    @property
    def model_(self):
        return self.scorer_ if hasattr(self.scorer_, "trace") else None

    @property
    def tables_(self):
        return _base_scorer(self.scorer_).tables

    @property
    def m_(self) -> float:
        return _base_scorer(self.scorer_).m

    @property
    def hdp_(self):
        return getattr(self.scorer_, "hdp", None)

    trace_ = property(lambda self: _optimized(self).trace)
    n_iter_ = property(lambda self: _optimized(self).n_iter)
    n_fev_ = property(lambda self: _optimized(self).n_fev)
    train_cll_ = property(lambda self: _optimized(self).train_cll)
    tuning_ = property(lambda self: _optimized(self).tuning)  # optimizer option "grid": bncbench/engine/tuning.py

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        return tags


def _optimized(clf: BNClassifier):
    model = clf.model_
    if model is None:
        raise AttributeError("only optimized parameterizations have an optimizer trace")
    return model


def _base_scorer(scorer):
    """The generative scorer under an optimized one (it keeps the tables and m)."""
    base = getattr(scorer, "base", scorer)
    if not hasattr(base, "tables"):
        raise AttributeError(f"a {type(base).__name__} has no count tables")
    return base


def _refresh_signature(_component=None) -> None:
    """``inspect.signature(BNClassifier)``: keyword-only, one keyword per registered hyperparameter."""
    _hyperparameters.cache_clear()
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
               for name, (default, _) in _hyperparameters().items()]
    BNClassifier.__init__.__signature__ = inspect.Signature(params)


for _reg in FLAT_KINDS:
    _reg.on_register(_refresh_signature)
_refresh_signature()


def model_cardinalities(params: dict, cardinalities: np.ndarray, missing_code: np.ndarray) -> np.ndarray:
    """The cardinalities the experiment runner builds a model with, from the fold's discretizer.

    The runner codes a dataset's missing value as a code of its own, the last of its attribute
    (``missing_code``). A model with ``missing="first_value"`` must see it as missing, to read it
    as the first value: its cardinalities leave that code out (it is then outside ``[0, card)``).

    Parameters
    ----------
    params : dict
        The model's parameters (:attr:`bncbench.harness.model_specs.ModelSpec.params`).
    cardinalities : ndarray of int
        The discretizer's cardinalities, missing codes included.
    missing_code : ndarray of bool
        Whether each attribute has a missing code (its last code).

    Returns
    -------
    ndarray of int
        ``cardinalities``, less the missing codes for ``missing="first_value"``.
    """
    if params.get("missing", GENERAL["missing"][0]) != FIRST_VALUE:
        return cardinalities
    return np.asarray(cardinalities) - np.asarray(missing_code, dtype=np.int64)
