"""The optimization problem: NLL (summed over training instances) + regularization."""

from __future__ import annotations

import numpy as np

from bncbench.engine.loss import CLL, Data
from bncbench.engine.params import ParamMap, same_point
from bncbench.engine.row_penalty import penalty_weights
from bncbench.errors import BNCBenchError

REGS = ("none", "l2", "l2_one", "rows", "rows_one", "rows_gen")
ROW_REGS = ("rows", "rows_one", "rows_gen")
"""The regularizations weighted per parameter by its training rows ``n_k`` (the authors' penalty of LRⁿ and
DBLⁿ: :mod:`bncbench.engine.row_penalty`)."""


def _generative_center(pmap: ParamMap) -> np.ndarray:
    """The generative model's parameters (``pmap.generative().x``), or one line for a map without them."""
    try:
        return np.array(pmap.generative().x, dtype=float)
    except NotImplementedError:
        raise BNCBenchError("reg=rows_gen pulls toward the generative model's parameters, which the "
                            f"{pmap.name} parameterization does not define") from None


CENTERS = {"l2_one": lambda pmap: 1.0, "rows_one": lambda pmap: 1.0, "rows_gen": _generative_center}
"""The centre ``c`` of each regularization that does not pull toward 0, from the map: 1 (``l2_one``, ``rows_one``),
or the generative model's parameters (``rows_gen``: the map's :meth:`~bncbench.engine.params.ParamMap.generative`
point, DBLⁿ's weights toward AnJE's exponent, LRⁿ's toward AnJE's potentials ``e log theta``; the centre §4.4 of
deep-broad learning describes, which for the weights of one network is 1)."""

REG_SCALES = ("sum", "mean")
"""How ``lam`` meets the data term: beside the summed NLL (``"sum"``), or beside the mean NLL
(``"mean"``: the penalty is multiplied by the number of training instances)."""


class Problem:
    """``f(x) = -CLL(x) + lam/2 sum_k n_k (x_k - c_k)^2``, ``c`` = 0, 1 or the generative model's parameters
    (:data:`CENTERS`).

    ``n_k = 1`` for ``"l2"`` and ``"l2_one"``; for ``"rows"`` and ``"rows_one"`` (the authors' per-row
    penalty of LRⁿ and DBLⁿ), the training instances that use parameter ``k``
    (:func:`bncbench.engine.row_penalty.penalty_weights`).

    ``n_fev`` counts evaluations of the data term (value, or value and
    gradient) over the full training set; repeated calls at the same point
    are served from a small cache and not counted.

    Parameters
    ----------
    cll : CLL
        The data term over ``Phi``.
    pmap : ParamMap
        Maps the parameter vector ``x`` to ``Phi`` and gradients back.
    reg : {"none", "l2", "l2_one", "rows", "rows_one", "rows_gen"}, default="none"
        Regularization.
    lam : float, default=0.0
        Its weight (finite, >= 0); 0 disables it.

    Attributes
    ----------
    cll : CLL
        As given.
    pmap : ParamMap
        As given.
    reg : str
        As given.
    lam : float
        ``float(lam)``.
    center : float or ndarray of shape (n_params,)
        ``c`` of the penalty: 1.0 for ``"l2_one"`` and ``"rows_one"``, ``pmap.generative().x`` for ``"rows_gen"``,
        else 0.0.
    weights : ndarray of shape (n_params,) or None
        ``n_k`` of ``"rows"``, ``"rows_one"`` and ``"rows_gen"``; None (all 1) otherwise.
    n_fev : int
        Full-data evaluations so far.
    monitor : Validation or None
        Scores each traced iterate on held-out rows (early stopping); None by default.
    """

    def __init__(self, cll: CLL, pmap: ParamMap, reg: str = "none", lam: float = 0.0) -> None:
        """Check the regularization and start counting evaluations at 0.

        Parameters
        ----------
        cll : CLL
            The data term.
        pmap : ParamMap
            The parameter map.
        reg : {"none", "l2", "l2_one", "rows", "rows_one", "rows_gen"}, default="none"
            Regularization.
        lam : float, default=0.0
            Weight of the regularization.

        Raises
        ------
        BNCBenchError
            If ``reg`` is not one of :data:`REGS`, or ``lam`` is negative or not finite, or ``reg`` is
            ``"rows_gen"`` on a map without a generative point.
        """
        if reg not in REGS:
            raise BNCBenchError(f"unknown regularization {reg!r}; choose one of {', '.join(REGS)}")
        if not np.isfinite(lam) or lam < 0:
            raise BNCBenchError(f"lam must be a finite number >= 0, got {lam}")
        self.cll, self.pmap = cll, pmap
        self.reg, self.lam = reg, float(lam)
        self.center = CENTERS[reg](pmap) if reg in CENTERS else 0.0
        self._zero_center = np.isscalar(self.center) and self.center == 0.0
        self.weights = None
        if reg in ROW_REGS and self.lam > 0:
            self.weights = penalty_weights(cll.data, pmap)
        self.n_fev = 0
        self.monitor = None  # a validation monitor (bncbench.engine.validation.Validation), set by fit_ccbn
        self._cache = []  # [(x, f, nll, g or None)], most recent last
        # a map may evaluate the training data term on its own design (LRMapping.fused): same value and gradient
        self._fused = pmap.fused(cll) if hasattr(pmap, "fused") else None

    def _data_term(self, x, grad):
        """The training data term and, if ``grad``, its gradient in ``x`` (fused where the map offers it)."""
        if self._fused is not None:
            return self._fused(x, grad)
        nll, G = self.cll(self.pmap.phi(x), grad=grad)
        return nll, (self.pmap.pullback(x, G) if grad else None)

    @property
    def regularized(self) -> bool:
        """Whether the penalty is active: a regularization other than ``"none"`` with ``lam > 0``.

        Returns
        -------
        bool
            True when the penalty contributes.
        """
        return self.reg != "none" and self.lam > 0

    def _penalty(self, x, grad=True):
        """The penalty at ``x`` and its gradient (a new array; None unless ``grad``), or ``(0.0, None)`` without one.

        Three passes over the parameters and one new array: ``d = x - c`` is ``x`` itself for
        ``c = 0`` (the same bits), and the gradient ``lam * n_k d_k`` is formed in the array of
        ``n_k d_k``. The value's dot product is BLAS's, as it always was: a fit's path depends on
        these bits.
        """
        if not self.regularized:
            return 0.0, None
        d = x if self._zero_center else x - self.center
        if self.weights is not None:
            wd = self.weights * d
            pen = 0.5 * self.lam * float(wd @ d)
        else:
            pen = 0.5 * self.lam * float(d @ d)
            if not grad:
                return pen, None
            wd = d if d is not x else x.copy()
        return pen, (np.multiply(wd, self.lam, out=wd) if grad else None)

    def _lookup(self, x, need_grad):
        for xc, f, nll, g in reversed(self._cache):
            if (g is not None or not need_grad) and same_point(xc, x):
                return f, nll, g
        return None

    def cached(self, x: np.ndarray) -> tuple[float, float] | None:
        """The objective and data term at ``x`` if ``x`` was just evaluated (from the cache), else None.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameter vector.

        Returns
        -------
        (float, float) or None
            ``(f, nll)``: ``f`` is ``nll`` plus the penalty at ``x``, as :meth:`fg` and :meth:`f` computed it.
        """
        hit = self._lookup(x, False)
        return None if hit is None else (hit[0], hit[1])

    def _store(self, x, f, nll, g):
        self._cache.append((x.copy(), f, nll, g))
        del self._cache[:-4]

    def fg(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Objective and gradient.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameter vector.

        Returns
        -------
        f : float
            The objective at ``x``.
        g : ndarray of shape (n_params,)
            Its gradient (a copy: the caller may modify it).
        """
        hit = self._lookup(x, True)
        if hit is not None:
            return hit[0], hit[2].copy()
        nll, g = self._data_term(x, True)
        self.n_fev += 1
        pen, pg = self._penalty(x)
        f = nll + pen
        if pg is not None:
            g = np.add(g, pg, out=pg)  # g + pg, in the penalty's own array
        self._store(x, f, nll, g)
        return f, g.copy()

    def f(self, x: np.ndarray) -> float:
        """Objective only (cheaper: no gradient scatter).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameter vector.

        Returns
        -------
        float
            The objective at ``x``.
        """
        hit = self._lookup(x, False)
        if hit is not None:
            return hit[0]
        nll, _ = self._data_term(x, False)
        self.n_fev += 1
        f = nll + self._penalty(x, grad=False)[0]
        self._store(x, f, nll, None)
        return f

    def nll(self, x: np.ndarray, count: bool = False) -> float:
        """Data term at ``x`` (from the cache when possible; not counted unless asked).

        A value computed here is not cached.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameter vector.
        count : bool, default=False
            Count a computed value in ``n_fev``.

        Returns
        -------
        float
            The negative CLL at ``x`` (no penalty).
        """
        hit = self._lookup(x, False)
        if hit is not None:
            return hit[1]
        nll, _ = self._data_term(x, False)
        if count:
            self.n_fev += 1
        return nll

    def batch_grad(self, x: np.ndarray, batch: Data) -> np.ndarray:
        """Gradient of the batch's data term plus the share ``batch.total / N`` of the penalty.

        Neither cached nor counted in ``n_fev``.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameter vector.
        batch : Data
            A subset of the training rows (e.g. :meth:`Data.subset`).

        Returns
        -------
        ndarray of shape (n_params,)
            The stochastic gradient.
        """
        _, G = self.cll(self.pmap.phi(x), grad=True, data=batch)
        g = self.pmap.pullback(x, G)
        if self.regularized:
            d = x - self.center if self.weights is None else self.weights * (x - self.center)
            g = g + (batch.total / self.cll.data.total) * self.lam * d
        return g
