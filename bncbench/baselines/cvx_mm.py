"""CVX-MM: Guo et al.'s convex relaxation of maximum-margin BNC parameter learning (Pernkopf et al., §5.3.1, Eq. 9).

For a naive Bayes structure, with ``w`` the log-parameters (class prior ``w_c = log theta_c`` and
``w_{i,c,v} = log theta(x_i = v | c)``) and ``phi(c, x)`` the indicator features, so that
``log P(c, x) = phi(c, x)^T w``, the problem solved is Eq. 9::

    minimize_{gamma, w, eps}   1 / (2 gamma^2) + B sum_m eps_m
    subject to   Delta_{m,c} w >= gamma - eps_m     for every sample m and class c != c_m,
                 gamma >= 0,   eps_m >= 0,
                 sum_v exp(w_{i,c,v}) <= 1  and  sum_c exp(w_c) <= 1   (every table, every class),
                 w >= log(min_prob)                                       (see below)

with ``Delta_{m,c} = phi(c_m, x_m) - phi(c, x_m)``. The paper's text prints the first term as
``1/2 gamma^2``; minimizing that would be solved by ``gamma = 0``, and maximizing the smallest
margin ``gamma`` is the point of the problem (the unrelaxed form above it maximizes ``gamma``), so
the term is read as Guo et al.'s ``1 / (2 gamma^2)`` (convex and decreasing for ``gamma > 0``).
The relaxation is the one of Eq. 9: the normalization equalities ``sum exp(w) = 1`` become the
convex ``sum exp(w) <= 1`` (exponential cones), which makes the problem convex.

One addition: every probability is bounded below by ``min_prob`` (``w >= log min_prob``). Without
it the problem has no minimizer on separable data (sending the log-probability of a value never
seen with a class to ``-inf`` makes every margin, hence ``gamma``, unbounded, and the objective
only tends to 0); the paper replaces zero probabilities by a small ``epsilon`` for the same reason.

The problem is handed to cvxpy with the Clarabel interior-point solver (the paper used IPOPT),
and to SCS when Clarabel stops without progress.
After solving, the sub-normalized parameters are renormalized without changing ``P(c | x)``: each
attribute table's mass ``s_{i,c} = sum_v exp(w_{i,c,v})`` is divided out and moved into the class
prior (``theta_c`` proportional to ``exp(w_c) prod_i s_{i,c}``), so the fitted model is a proper
naive Bayes with the same decisions (Pernkopf et al. note this is possible for such structures).
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from bncbench.components import BASELINES
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, finite, integer

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def nb_margin_design(X: np.ndarray, y: np.ndarray, cards: np.ndarray, n_classes: int):
    """The rows ``Delta_{m,c}`` of Eq. 9 for a naive Bayes, as a sparse matrix.

    Parameters
    ----------
    X : ndarray of shape (M, n)
        Attribute codes in ``[0, cards[i])``.
    y : ndarray of shape (M,)
        Class codes in ``[0, n_classes)``.
    cards : ndarray of shape (n,)
        Attribute cardinalities.
    n_classes : int
        Number of classes ``K``.

    Returns
    -------
    delta : scipy.sparse.csr_matrix of shape (M (K - 1), P)
        ``phi(c_m, x_m) - phi(c, x_m)`` for every sample ``m`` and class ``c != c_m`` (rows sample-major).
    sample : ndarray of shape (M (K - 1),)
        The sample of each row.
    offsets : ndarray of shape (n + 1,)
        Attribute ``i``'s block of ``w`` starts at ``offsets[i]`` (after the ``K`` class entries) and
        is laid out ``[c, v]``: index ``offsets[i] + c * cards[i] + v``.
    """
    M, n = X.shape
    K = int(n_classes)
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[0] = K
    offsets[1:] = K + np.cumsum(cards * K)
    others = np.array([[c for c in range(K) if c != k] for k in range(K)], dtype=np.int64)  # (K, K-1)
    sample = np.repeat(np.arange(M), K - 1)
    wrong = others[y].reshape(-1)  # class c of each row
    true = y[sample]
    # features of the true class (+1) and of the other class (-1): the class entry and one per attribute
    cols_t = np.concatenate([true[:, None], offsets[:-1][None, :] + true[:, None] * cards[None, :] + X[sample]],
                            axis=1)
    cols_w = np.concatenate([wrong[:, None], offsets[:-1][None, :] + wrong[:, None] * cards[None, :] + X[sample]],
                            axis=1)
    R = sample.size
    rows = np.repeat(np.arange(R), n + 1)
    data = np.concatenate([np.ones(cols_t.size), -np.ones(cols_w.size)])
    delta = sp.csr_matrix((data, (np.concatenate([rows, rows]), np.concatenate([cols_t.ravel(), cols_w.ravel()]))),
                          shape=(R, int(offsets[-1])))
    delta.sum_duplicates()
    return delta, sample, offsets


@BASELINES.register("cvx_mm", label="NB-CVX-MM", hyperparameters=[
    Hyperparameter("B", 1.0, [finite(0.0)], "slack penalty of Eq. 9 (like an SVM's C)", float),
    Hyperparameter("min_prob", 1e-4, [finite(0.0)], "lower bound on every probability (keeps Eq. 9 bounded)", float),
    Hyperparameter("solver_max_iter", 100, [integer(1)], "interior-point iterations (the paper: up to 100)", int)])
class CVXMMBaseline(ClassifierMixin, BaseEstimator):
    """Naive Bayes with Guo et al.'s convex-relaxation max-margin parameters (CVX-MM; Pernkopf et al., Eq. 9).

    Solved with cvxpy and Clarabel; see :mod:`bncbench.baselines.cvx_mm` for the problem, how it
    follows Eq. 9 and the renormalization. For small data (the paper runs it on up to a few
    thousand samples): the problem has one constraint per sample and wrong class.

    Parameters
    ----------
    B : float, default=1.0
        Penalty of the slacks.
    min_prob : float, default=1e-4
        Lower bound on every probability, in ``(0, 1)``.
    solver_max_iter : int, default=100
        Solver iterations.
    cardinalities : array-like of int, default=None
        Attribute cardinalities (default: the largest code of each column + 1).
    discretize : bool, default=False
        Accepted for the keyword interface of :class:`bncbench.BNClassifier`; the input are codes.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    log_prior_ : ndarray of shape (n_classes,)
        Normalized log class prior.
    log_theta_ : list of ndarray of shape (n_classes, card)
        Normalized log P(x_i = v | c) per attribute.
    gamma_ : float
        The solved smallest margin ``gamma`` (before renormalization, which keeps every margin).
    solve_seconds_ : float
        Wall time of the solver call.
    status_ : str
        cvxpy's status of the solve.
    solver_ : str
        ``"CLARABEL"``, or ``"SCS"`` when Clarabel failed and SCS solved the problem instead.
    n_parameters_ : int
        Number of probabilities of the network.
    """

    def __init__(self, *, B: float = 1.0, min_prob: float = 1e-4, solver_max_iter: int = 100,
                 cardinalities: ArrayLike | None = None, discretize: bool | str = False) -> None:
        """Store the hyperparameters unchanged (scikit-learn convention; see the class docstring).

        Parameters
        ----------
        B : float, default=1.0
            Slack penalty.
        min_prob : float, default=1e-4
            Lower bound on every probability.
        solver_max_iter : int, default=100
            Solver iterations.
        cardinalities : array-like of int, default=None
            Attribute cardinalities.
        discretize : bool, default=False
            Not used.
        """
        self.B = B
        self.min_prob = min_prob
        self.solver_max_iter = solver_max_iter
        self.cardinalities = cardinalities
        self.discretize = discretize

    def fit(self, X: ArrayLike, y: ArrayLike) -> CVXMMBaseline:
        """Solve Eq. 9 on attribute codes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Integer attribute codes in ``[0, card)``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        CVXMMBaseline
            ``self``, fitted.

        Raises
        ------
        BNCBenchError
            If the codes are not in range, there is one class only, ``min_prob`` is not in
            ``(0, 1)``, cvxpy is missing, or the solver fails.
        """
        try:
            import cvxpy as cp
        except ImportError:  # pragma: no cover - an optional dependency
            raise BNCBenchError("CVX-MM needs cvxpy with Clarabel: pip install cvxpy clarabel") from None
        X = np.asarray(X)
        if X.ndim != 2 or X.dtype.kind not in "iub":
            raise BNCBenchError("CVX-MM takes a 2-d array of integer attribute codes")
        X = X.astype(np.int64)
        self.classes_, yc = np.unique(np.asarray(y), return_inverse=True)
        K = len(self.classes_)
        if K < 2:
            raise BNCBenchError(f"the training data has only one class ({self.classes_[0]!r}); a classifier needs at least 2")
        if not 0 < self.min_prob < 1:
            raise BNCBenchError(f"min_prob must be in (0, 1), got {self.min_prob}")
        cards = (np.asarray(self.cardinalities, dtype=np.int64) if self.cardinalities is not None
                 else X.max(axis=0, initial=0) + 1)
        if cards.shape != (X.shape[1],) or np.any(X < 0) or np.any(X >= cards):
            raise BNCBenchError("CVX-MM needs codes in [0, card) with one cardinality per attribute")
        self.cards_ = cards
        self.n_features_in_ = X.shape[1]
        delta, sample, offsets = nb_margin_design(X, yc, cards, K)
        M = X.shape[0]
        w = cp.Variable(int(offsets[-1]))
        gamma = cp.Variable(nonneg=True)
        eps = cp.Variable(M, nonneg=True)
        cons = [delta @ w >= gamma - eps[sample], w >= np.log(self.min_prob), cp.log_sum_exp(w[:K]) <= 0]
        for i, card in enumerate(cards):
            block = cp.reshape(w[int(offsets[i]) : int(offsets[i + 1])], (K, int(card)), order="C")
            cons.append(cp.log_sum_exp(block, axis=1) <= 0)
        # 1 / (2 gamma^2) as (1/gamma)^2 / 2: Clarabel converges on it where power(gamma, -2) stalls
        prob = cp.Problem(cp.Minimize(0.5 * cp.square(cp.inv_pos(gamma)) + self.B * cp.sum(eps)), cons)
        t = time.perf_counter()
        self.solver_ = "CLARABEL"
        try:
            with warnings.catch_warnings():  # "solution may be inaccurate": status_ says so
                warnings.simplefilter("ignore", UserWarning)
                prob.solve(solver=cp.CLARABEL, max_iter=int(self.solver_max_iter))
        except cp.error.SolverError:
            self.solver_ = "SCS"  # Clarabel stalled (insufficient progress): SCS, first-order, on the same problem
            try:
                prob.solve(solver=cp.SCS)
            except cp.error.SolverError as exc:
                raise BNCBenchError(f"CVX-MM: the solvers failed ({exc})") from None
        self.solve_seconds_ = time.perf_counter() - t
        self.status_ = str(prob.status)
        if w.value is None:
            raise BNCBenchError(f"CVX-MM: no solution (solver status {prob.status})")
        wv = np.asarray(w.value, dtype=float)
        self.gamma_ = float(gamma.value)
        # renormalize: each table's mass moves into the class prior, P(c | x) unchanged
        log_prior = wv[:K].copy()
        self.log_theta_ = []
        for i, card in enumerate(cards):
            block = wv[int(offsets[i]) : int(offsets[i + 1])].reshape(K, int(card))
            mass = np.logaddexp.reduce(block, axis=1)
            self.log_theta_.append(block - mass[:, None])
            log_prior += mass
        self.log_prior_ = log_prior - np.logaddexp.reduce(log_prior)
        self.n_parameters_ = int(K + sum(K * int(c) for c in cards))
        return self

    def _joint(self, X: ArrayLike) -> np.ndarray:
        X = np.asarray(X).astype(np.int64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise BNCBenchError(f"X must have {self.n_features_in_} attribute columns")
        out = np.tile(self.log_prior_, (X.shape[0], 1))
        for i, lt in enumerate(self.log_theta_):
            x = X[:, i]
            known = (x >= 0) & (x < self.cards_[i])  # an unknown value contributes nothing
            out[known] += lt[:, x[known]].T
        return out

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Class probabilities ``P(c | x)`` of the renormalized network.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Attribute codes; a code outside ``[0, card)`` is ignored.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        lj = self._joint(X)
        lj -= lj.max(axis=1, keepdims=True)
        p = np.exp(lj)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Most probable class of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_attributes)
            Attribute codes.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted labels (values of ``classes_``).
        """
        return self.classes_[np.argmax(self._joint(X), axis=1)]
