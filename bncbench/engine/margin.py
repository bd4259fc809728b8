"""The maximum-margin objective of Pernkopf et al. (§3.1, Eqs. 3–6, 8): the per-row part.

For a row with unnormalized log joint class scores ``S_c = log P(c, x)`` the approximate
multiclass log-margin of class ``c`` is (Eq. 4, the maximum over the other classes replaced by a
soft maximum of sharpness ``eta``)::

    log d_c = S_c - (1/eta) log sum_{c' != c} exp(eta S_c'),

which tends to ``S_c - max_{c' != c} S_c'`` (the log of Eq. 3's margin) as ``eta`` grows.
Sample ``m`` is classified correctly when ``log d > 0`` (for large ``eta``). The paper
**maximizes** ``M = sum_m h_kappa(lam log d_m)`` (Eq. 6), ``h_kappa`` the smooth hinge of Eq. 5::

    h_kappa(y) = y + kappa                   if y <= 1 - 2 kappa
                 1 - (y - 1)^2 / (4 kappa)   if 1 - 2 kappa < y < 1
                 1                           if y >= 1.

Here the loss to be **minimized** is ``f = sum_m (1 - h_kappa(lam log d_m)) = (number of samples) - M``:
the same optimum and, up to sign, the same gradient as the paper's ``M``; ``f >= 0``, and
``f = 0`` exactly when every sample has ``lam log d_m >= 1`` (zero hinge loss). ``f``'s derivative
with respect to ``lam log d_m`` is ``-h'_kappa``, so ``-lam h'_kappa`` is the paper's sample
weight ``s^{m,lam}`` of Eq. 8 with the opposite sign (``lam``, ``-lam (lam log d - 1) / (2 kappa)``, 0
on the three pieces).

Rows are the (compressed) rows of the engine: ``C[n, c]`` counts the training instances of class
``c`` that share row ``n``'s attribute values, so ``f = sum_{n, c} C[n, c] (1 - h_kappa(lam log d_c(S_n)))``.
The gradient with respect to the scores is (``V`` the soft-max weights of Eq. 8's ``V^m_i``)::

    df/dS_k = -lam sum_c C[n, c] h'_kappa(y_nc) (1[k = c] - 1[k != c] V_{n,c,k}),
    V_{n,c,k} = exp(eta S_k) / sum_{c' != c} exp(eta S_c').

The engine turns ``dS`` into the gradient of its parameters (the chain rule through ``S = A Phi``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from bncbench.components import OBJECTIVES
from bncbench.engine.loss import ENGINE
from bncbench.engine.margin_kernel import margin_rows
from bncbench.engine.score_loss import ScoreLoss
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter


def smooth_hinge(y: np.ndarray, kappa: float) -> np.ndarray:
    """The smooth hinge ``h_kappa(y)`` of Pernkopf et al., Eq. 5 (maximized by the paper).

    Parameters
    ----------
    y : array-like
        Arguments (the scaled log-margins ``lam log d``).
    kappa : float
        Width of the quadratic piece, ``> 0``; ``h_kappa -> min(1, y)`` as ``kappa -> 0``.

    Returns
    -------
    ndarray
        ``h_kappa(y)``, the shape of ``y``.

    Raises
    ------
    BNCBenchError
        If ``kappa <= 0``.
    """
    _check_kappa(kappa)
    y = np.asarray(y, dtype=float)
    return np.where(y <= 1 - 2 * kappa, y + kappa, np.where(y < 1, 1 - (y - 1) ** 2 / (4 * kappa), 1.0))


def smooth_hinge_derivative(y: np.ndarray, kappa: float) -> np.ndarray:
    """``h'_kappa(y)``: 1 on the linear piece, ``(1 - y) / (2 kappa)`` on the quadratic one, 0 from 1 on.

    Continuous: 1 at ``y = 1 - 2 kappa`` and 0 at ``y = 1`` from both sides.

    Parameters
    ----------
    y : array-like
        Arguments.
    kappa : float
        ``> 0``.

    Returns
    -------
    ndarray
        ``h'_kappa(y)``, the shape of ``y``.

    Raises
    ------
    BNCBenchError
        If ``kappa <= 0``.
    """
    _check_kappa(kappa)
    y = np.asarray(y, dtype=float)
    return np.where(y <= 1 - 2 * kappa, 1.0, np.where(y < 1, (1 - y) / (2 * kappa), 0.0))


def _check_kappa(kappa: float) -> None:
    if not kappa > 0:
        raise BNCBenchError(f"the smooth hinge needs kappa > 0, got {kappa}")


def _soft_max_others(S: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """Per (row, class c): ``(1/eta) log sum_{c' != c} exp(eta S_c')`` and the weights ``V[n, c, k]``.

    A stable log-sum-exp: the largest other score is taken out before exponentiating.
    """
    n, K = S.shape
    E = eta * S
    others = np.broadcast_to(E[:, None, :], (n, K, K)).copy()  # [n, c, k]: eta S_k, k != c
    idx = np.arange(K)
    others[:, idx, idx] = -np.inf
    top = others.max(axis=2, keepdims=True)
    w = np.exp(others - top)
    total = w.sum(axis=2, keepdims=True)
    lse = (top + np.log(total))[:, :, 0]
    return lse / eta, w / total


def log_margin(S: np.ndarray, eta: float) -> np.ndarray:
    """``log d_c = S_c - (1/eta) log sum_{c' != c} exp(eta S_c')`` for every row and class (Eq. 4).

    Parameters
    ----------
    S : ndarray of shape (n, K)
        Log joint scores per row and class, ``K >= 2``, finite.
    eta : float
        Sharpness of the soft maximum, ``>= 1`` in the paper (``> 0`` here).

    Returns
    -------
    ndarray of shape (n, K)
        The approximate log-margin of each class against the others.

    Raises
    ------
    BNCBenchError
        If ``S`` has fewer than two classes or ``eta <= 0``.
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape[1] < 2:
        raise BNCBenchError(f"the margin needs scores of shape (rows, classes >= 2), got {S.shape}")
    if not eta > 0:
        raise BNCBenchError(f"the soft maximum needs eta > 0, got {eta}")
    soft, _ = _soft_max_others(S, float(eta))
    return S - soft


def margin_loss(S: np.ndarray, C: np.ndarray, lam: float, kappa: float, eta: float,
                grad: bool = True) -> tuple[float, np.ndarray | None]:
    """The smooth-hinge margin loss to be minimized, ``f = sum_{n,c} C[n,c] (1 - h_kappa(lam log d_c(S_n)))``.

    ``f = (sum of C) - M`` with ``M`` the objective Pernkopf et al. maximize (Eq. 6); see the
    module docstring for the definitions and the gradient.

    Parameters
    ----------
    S : ndarray of shape (n, K)
        Unnormalized log joint scores per (compressed) row and class, finite.
    C : ndarray of shape (n, K)
        Class counts of each row (non-negative; one-hot rows for uncompressed data).
    lam : float
        Scale of the log-margin, ``> 0`` (the paper's lambda, 0.001–0.5 in its experiments).
    kappa : float
        Smooth hinge width, ``> 0`` (0.01–0.5 in the paper).
    eta : float
        Soft maximum sharpness, ``> 0`` (the paper finds ``eta >= 5`` insensitive).
    grad : bool, default=True
        Also return ``dS = df/dS``.

    Returns
    -------
    f : float
        The loss, ``>= 0``; 0 exactly when every counted (row, class) has ``lam log d >= 1``.
    dS : ndarray of shape (n, K) or None
        Its gradient with respect to ``S`` (None unless ``grad``).

    Raises
    ------
    BNCBenchError
        If a shape or a hyperparameter is invalid.
    """
    S = np.asarray(S, dtype=float)
    C = np.asarray(C, dtype=float)
    if S.shape != C.shape:
        raise BNCBenchError(f"scores {S.shape} and class counts {C.shape} must have the same shape")
    if not lam > 0:
        raise BNCBenchError(f"the margin scale needs lam > 0, got {lam}")
    _check_kappa(kappa)
    if S.ndim != 2 or S.shape[1] < 2:
        raise BNCBenchError(f"the margin needs scores of shape (rows, classes >= 2), got {S.shape}")
    if not eta > 0:
        raise BNCBenchError(f"the soft maximum needs eta > 0, got {eta}")
    soft, V = _soft_max_others(S, float(eta))
    y = lam * (S - soft)
    f = float(np.sum(C * (1.0 - smooth_hinge(y, kappa))))
    if not grad:
        return f, None
    w = C * smooth_hinge_derivative(y, kappa)  # [n, c]
    # d log d_c / d S_k = 1[k = c] - V[n, c, k] (V is 0 on the diagonal)
    dS = -lam * (w - np.einsum("nc,nck->nk", w, V))
    return f, dS


@OBJECTIVES.register("margin", label=" [MM]", hyperparameters=(
    Hyperparameter("margin_lam", 0.02, [Interval(Real, 0, None, closed="neither")],
                   "scale lambda of the log-margin inside the hinge (Eq. 6; the paper tunes 0.001-0.5)", float),
    Hyperparameter("kappa", 0.1, [Interval(Real, 0, 0.5, closed="right")],
                   "width of the smooth hinge (Eq. 5; the paper tunes 0.01-0.5)", float),
    Hyperparameter("eta", 10.0, [Interval(Real, 0, None, closed="neither")],
                   "sharpness of the soft maximum over the other classes (Eq. 4; insensitive for >= 5)", float)),
    doc="smooth-hinge maximum margin, sum of 1 - h_kappa(lambda log d) (Pernkopf et al., Eqs. 3-6)")
class MarginLoss(ScoreLoss):
    """Pernkopf et al.'s maximum-margin objective as an engine objective: :func:`margin_loss` over the training rows.

    With ``param=extended`` (``Phi = log softmax(beta)`` per block: the model stays a normalized
    Bayesian network, Eq. 7), this is the paper's MM learning; with ``objective=cll`` the same
    parameterization is its CL baseline.

    Parameters
    ----------
    data : Data
        Training rows and class counts.
    n_rows : int
        Rows of ``Phi``.
    margin_lam, kappa, eta : float
        The hyperparameters above.
    **engine
        The engine's speed options (:data:`bncbench.engine.loss.ENGINE_OPTIONS`): ``backend="numba"`` runs the
        fused kernel over a materialized design, ``"scipy"`` the reference path (same loss and gradient to rounding); the others are not read.
    """

    def __init__(self, data, n_rows: int, *, margin_lam: float, kappa: float, eta: float, **engine) -> None:
        super().__init__(data, n_rows, **engine)
        self.lam, self.kappa, self.eta = float(margin_lam), float(kappa), float(eta)
        self.fused = engine.get("backend", ENGINE["backend"]) == "numba"  # "scipy": the reference path below

    def __call__(self, Phi: np.ndarray, grad: bool = True, data=None) -> tuple[float, np.ndarray | None]:
        """The loss at ``Phi`` and, if asked, its gradient with respect to ``Phi``.

        Over a materialized design with the numba backend, one fused pass
        (:func:`bncbench.engine.margin_kernel.margin_rows`); otherwise :meth:`ScoreLoss.__call__`
        (scores, :func:`margin_loss`, scatter), the reference it equals to rounding.

        Parameters
        ----------
        Phi : ndarray of shape (n_rows, n_classes)
            Log potentials.
        grad : bool, default=True
            Compute the gradient too.
        data : Data, optional
            Rows to evaluate instead of the training data.

        Returns
        -------
        loss : float
        G : ndarray of shape (n_rows, n_classes) or None
        """
        d = self.data if data is None else data
        idx = getattr(d.design, "idx", None)
        if not self.fused or idx is None or not (self.lam > 0 and self.kappa > 0 and self.eta > 0):
            return super().__call__(Phi, grad, data)  # (a bad hyperparameter raises there)
        Phi = np.ascontiguousarray(Phi, dtype=np.float64)
        if Phi.shape[1] < 2:
            raise BNCBenchError(f"the margin needs scores of shape (rows, classes >= 2), got {(d.n, Phi.shape[1])}")
        G = np.zeros((self.n_rows, Phi.shape[1])) if grad else None
        f = margin_rows(idx, d.C, Phi, self.lam, self.kappa, self.eta, G)
        return f, G

    def row_loss(self, S: np.ndarray, C: np.ndarray, grad: bool) -> tuple[float, np.ndarray | None]:
        """:func:`margin_loss` of the rows' scores and class counts."""
        return margin_loss(S, C, self.lam, self.kappa, self.eta, grad)
