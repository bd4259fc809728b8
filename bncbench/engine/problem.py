"""The optimization problem: NLL (summed over training instances) + regularization."""

from __future__ import annotations

import numpy as np

from bncbench.engine.loss import CLL, Data
from bncbench.engine.params import ParamMap
from bncbench.errors import BNCBenchError

REGS = ("none", "l2", "l2_one")


class Problem:
    """``f(x) = -CLL(x) + lam/2 ||x - c||^2`` with ``c = 0`` ("l2") or ``c = 1`` ("l2_one").

    ``n_fev`` counts evaluations of the data term (value, or value and
    gradient) over the full training set; repeated calls at the same point
    are served from a small cache and not counted.
    """

    def __init__(self, cll: CLL, pmap: ParamMap, reg: str = "none", lam: float = 0.0):
        if reg not in REGS:
            raise BNCBenchError(f"unknown regularization {reg!r}; choose one of {', '.join(REGS)}")
        if not np.isfinite(lam) or lam < 0:
            raise BNCBenchError(f"lam must be a finite number >= 0, got {lam}")
        self.cll, self.pmap = cll, pmap
        self.reg, self.lam = reg, float(lam)
        self.center = 1.0 if reg == "l2_one" else 0.0
        self.n_fev = 0
        self._cache = []  # [(x, f, nll, g or None)], most recent last

    @property
    def regularized(self) -> bool:
        return self.reg != "none" and self.lam > 0

    def _penalty(self, x):
        if not self.regularized:
            return 0.0, None
        d = x - self.center
        return 0.5 * self.lam * float(d @ d), self.lam * d

    def _lookup(self, x, need_grad):
        for xc, f, nll, g in reversed(self._cache):
            if (g is not None or not need_grad) and xc.shape == x.shape and np.array_equal(xc, x):
                return f, nll, g
        return None

    def _store(self, x, f, nll, g):
        self._cache.append((x.copy(), f, nll, g))
        del self._cache[:-4]

    def fg(self, x):
        """Objective and gradient."""
        hit = self._lookup(x, True)
        if hit is not None:
            return hit[0], hit[2].copy()
        nll, G = self.cll(self.pmap.phi(x), grad=True)
        self.n_fev += 1
        g = self.pmap.pullback(x, G)
        pen, pg = self._penalty(x)
        f = nll + pen
        if pg is not None:
            g = g + pg
        self._store(x, f, nll, g)
        return f, g.copy()

    def f(self, x):
        """Objective only (cheaper: no gradient scatter)."""
        hit = self._lookup(x, False)
        if hit is not None:
            return hit[0]
        nll, _ = self.cll(self.pmap.phi(x), grad=False)
        self.n_fev += 1
        f = nll + self._penalty(x)[0]
        self._store(x, f, nll, None)
        return f

    def nll(self, x, count: bool = False) -> float:
        """Data term at ``x`` (from the cache when possible; not counted unless asked)."""
        hit = self._lookup(x, False)
        if hit is not None:
            return hit[1]
        nll, _ = self.cll(self.pmap.phi(x), grad=False)
        if count:
            self.n_fev += 1
        return nll

    def batch_grad(self, x, batch: Data):
        """Gradient of the batch's data term plus the share ``batch.total / N`` of the penalty."""
        _, G = self.cll(self.pmap.phi(x), grad=True, data=batch)
        g = self.pmap.pullback(x, G)
        if self.regularized:
            g = g + (batch.total / self.cll.data.total) * self.lam * (x - self.center)
        return g
