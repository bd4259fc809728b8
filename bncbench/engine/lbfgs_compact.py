"""L-BFGS-B's iteration on an unbounded problem, with its memory in the compact form of the inverse.

scipy's ``setulb`` (:mod:`bncbench.engine.lbfgsb`) keeps the correction pairs as two ``n x m`` arrays and,
for a problem without bounds, passes over them about six times an iteration (the middle matrix's new
row, the reduced gradient, the subspace step, the update's inner products): with DBL³'s 12.4 million
weights on satellite and 10 pairs that is 2 GB a pass and 1.4 s an iteration, more than the objective
and its gradient. Without bounds L-BFGS-B's step is the quasi-Newton step ``-H g`` of the same memory,
so it can be formed from the compact representation of ``H`` (Byrd, Nocedal & Schnabel 1994, eq. 3.1)
in two passes, ``S'g, Y'g`` then ``d = -gamma g - S u + gamma Y p``, and one for the new pair's inner
products (BLAS's; a fused numba pass measured no faster here). Everything else is L-BFGS-B's: the
first step ``1/||g||`` along ``-g`` and 1 after; Moré and Thuente's line search (scipy's
:class:`~scipy.optimize._dcsrch.DCSRCH` with L-BFGS-B's ``ftol=1e-3, gtol=0.9, xtol=0.1``); ``s'y``
from the directional derivatives; the update skipped when ``s'y <= eps * (-g'd) stp``; a failed line
search (``maxls`` steps, or an ascent direction) restoring the iterate and restarting the memory, or
ending the fit when the memory is empty; the stop tests (projected gradient, relative reduction
``factr * eps``, ``maxiter``, scipy's ``maxfun`` count). In exact arithmetic the iterates are
L-BFGS-B's; in floating point they agree to rounding, which a long fit may turn into a few more or
fewer iterations (``tests/test_lbfgs_compact.py`` compares the two).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.linalg import solve_triangular

from bncbench.engine.checkpoint import SavedState

EPS = float(np.finfo(np.float64).eps)
FTOL, GTOL, XTOL = 1e-3, 0.9, 0.1  # L-BFGS-B's line search (lnsrlb)
STPMAX = 1e10  # lnsrlb's "big": no bound on the step of an unbounded problem
RUNNING, CONVERGED, REL_REDUCTION, MAXITER, MAXFUN, ABNORMAL = 0, 1, 2, 3, 4, 5
"""``State.status``: going on, or why it stopped."""


@dataclass
class State(SavedState):
    """What the iteration carries from one step to the next (at the end of an iteration).

    Attributes
    ----------
    x, g : ndarray of shape (n,)
        The iterate and the gradient there.
    f : float
        The objective at ``x``.
    S, Y : ndarray of shape (m, n)
        The correction pairs ``s = x_{k+1} - x_k``, ``y = g_{k+1} - g_k``, a ring of ``m`` rows.
    SY, YY : ndarray of shape (m, m)
        ``s_i'y_j`` and ``y_i'y_j`` of the stored rows.
    head, col : int
        The ring's oldest row and the number of stored pairs.
    n_iter : int
        Iterations completed.
    nfev : int
        Evaluations as scipy's ``ScalarFunction`` counts them (the start point's included).
    status : int
        :data:`RUNNING`, or the reason it stopped.
    """

    x: np.ndarray
    g: np.ndarray
    f: float
    S: np.ndarray
    Y: np.ndarray
    SY: np.ndarray
    YY: np.ndarray
    head: int = 0
    col: int = 0
    n_iter: int = 0
    nfev: int = 0
    status: int = RUNNING

    @classmethod
    def start(cls, x0: np.ndarray, m: int) -> "State":
        """The state before the start point is evaluated.

        Parameters
        ----------
        x0 : ndarray of shape (n,)
            The starting point (copied, as float64).
        m : int
            The memory (correction pairs).

        Returns
        -------
        State
        """
        x = np.array(x0, dtype=np.float64).ravel()
        n = x.size
        return cls(x=x, g=np.zeros(n), f=np.nan, S=np.zeros((m, n)), Y=np.zeros((m, n)), SY=np.zeros((m, m)),
                   YY=np.zeros((m, m)))

    @property
    def done(self) -> bool:
        """Whether the fit has ended (:attr:`status` not :data:`RUNNING`).

        Returns
        -------
        bool
        """
        return self.status != RUNNING

    def _rows(self) -> tuple[int, np.ndarray]:
        """The stored rows ``0..k-1`` (``k = col``: the ring fills from row 0 and turns only when full) and
        their order from the oldest."""
        return self.col, (self.head + np.arange(self.col)) % self.S.shape[0]

    def direction(self) -> np.ndarray:
        """``-H g``: L-BFGS's step with the stored pairs (``-g`` without any).

        Two passes over the pairs: ``S g`` and ``Y g``, then ``d = -gamma g - S u + gamma Y p`` (Byrd, Nocedal &
        Schnabel 1994, eq. 3.1, with ``R`` the upper triangle of ``S'Y`` in time order).

        Returns
        -------
        ndarray of shape (n,)
        """
        k, o = self._rows()
        if k == 0:
            return -self.g
        newest = o[-1]
        gamma = self.SY[newest, newest] / self.YY[newest, newest]  # 1/theta: H0 = gamma I
        S, Y = self.S[:k], self.Y[:k]  # views: the stored rows in storage order
        a, b = (S @ self.g)[o], (Y @ self.g)[o]
        SY = self.SY[np.ix_(o, o)]
        p = solve_triangular(SY, a, lower=False, check_finite=False)  # reads the upper triangle only
        u = solve_triangular(SY, SY.diagonal() * p + gamma * (self.YY[np.ix_(o, o)] @ p) - gamma * b,
                             lower=False, trans="T", check_finite=False)
        cy, cs = np.empty(k), np.empty(k)
        cy[o], cs[o] = gamma * p, -u  # back to storage order
        d = cy @ Y
        d += cs @ S
        d -= gamma * self.g
        return d

    def update(self, stp: float, d: np.ndarray, g: np.ndarray, gold: np.ndarray, sy: float) -> None:
        """Store the pair ``s = stp d``, ``y = g - gold`` with ``s'y = sy``, in place of the oldest when the ring is
        full (formed in its row: no new arrays).

        One pass over the pairs: ``S y`` (the new column of ``R``) and ``Y y``.
        """
        m = self.S.shape[0]
        if self.col < m:
            t = self.col
            self.col += 1
        else:
            t = self.head
            self.head = (self.head + 1) % m
        np.multiply(d, stp, out=self.S[t])
        y = np.subtract(g, gold, out=self.Y[t])
        k = self.col
        self.SY[:k, t] = self.S[:k] @ y
        self.SY[t, t] = sy
        yy = self.Y[:k] @ y
        self.YY[:k, t] = yy
        self.YY[t, :k] = yy

    def forget(self) -> None:
        """Empty the memory (L-BFGS-B's restart after a failed line search)."""
        self.head = self.col = 0


def run(fg: Callable, state: State, *, m: int, factr: float, pgtol: float, maxls: int, maxiter: int, maxfun: int,
        on_iteration: Callable[[State], None] | None = None,
        on_interrupt: Callable[[State], None] | None = None) -> State:
    """Run the iteration from ``state`` to its end; the arguments are those of :func:`bncbench.engine.lbfgsb.run`.

    Parameters
    ----------
    fg : callable
        ``fg(x) -> (f, g)``; called with a new array it must not modify, once per point.
    state : State
        :meth:`State.start` for a new fit, or a state saved by ``on_iteration``; updated in place.
    m, factr, pgtol, maxls : int, float, float, int
        The memory (``state``'s rows), ``factr`` (``ftol / eps``), the projected-gradient tolerance and the
        line search's steps, as :func:`scipy.optimize.minimize`'s ``maxcor``, ``ftol``, ``gtol``, ``maxls``.
    maxiter, maxfun : int
        Stop after this many iterations, or once the evaluation count exceeds ``maxfun``.
    on_iteration : callable, optional
        Called with ``state`` after every iteration (its ``status`` not :data:`RUNNING` when the
        iteration ends the fit): the place to record a trace and to save the state.
    on_interrupt : callable, optional
        Called with ``state`` when Ctrl-C, SIGTERM or ``SystemExit`` (:class:`KeyboardInterrupt` or
        :class:`SystemExit`) stops an evaluation of the line search, before it propagates: ``state`` is
        then as at the end of the last iteration (the line search changes nothing of it but the
        evaluation count, which is set back), so a save of it goes on exactly as a save by
        ``on_iteration`` would. Not called for an interrupt elsewhere (the direction, the update: a
        small part of an iteration) nor for other exceptions.

    Returns
    -------
    State
        ``state`` at the end: ``x`` the result, ``n_iter`` the iterations.
    """
    from scipy.optimize._dcsrch import DCSRCH

    s = state
    if s.S.shape[0] != m:
        raise ValueError(f"the state keeps {s.S.shape[0]} pairs, not m={m}")
    if s.nfev == 0:
        s.f, g = fg(s.x.copy())
        s.g = np.asarray(g, dtype=np.float64)
        s.nfev = 1
        if np.max(np.abs(s.g), initial=0.0) <= pgtol:
            s.status = CONVERGED
    first = s.n_iter == 0 and s.col == 0
    while s.status == RUNNING:
        d = s.direction()
        gd0 = float(s.g @ d)
        stp = min(1.0 / float(np.sqrt(d @ d)), STPMAX) if first else 1.0
        if gd0 >= 0:
            ok = False
        else:
            search = DCSRCH(None, None, FTOL, GTOL, XTOL, 0.0, STPMAX)
            ft, gdt, task, trials = s.f, gd0, b"START", 0
            xt = gt = None
            nfev0 = s.nfev
            try:
                while True:
                    stp, ft, gdt, task = search._iterate(stp, ft, gdt, task)
                    if task[:2] != b"FG":
                        ok = task[:4] in (b"CONV", b"WARN")
                        break
                    if trials >= maxls:
                        ok = False
                        break
                    xt = d * stp
                    xt += s.x  # s.x + stp d, in one new array
                    ft, gt = fg(xt)
                    gt = np.asarray(gt, dtype=np.float64)
                    s.nfev += 1
                    trials += 1
                    gdt = float(gt @ d)
            except (KeyboardInterrupt, SystemExit):
                s.nfev = nfev0  # the state as the iteration began: a run from it repeats this line search
                if on_interrupt is not None:
                    on_interrupt(s)
                raise
        if not ok or xt is None:
            if s.col == 0:  # L-BFGS-B's abnormal end: the iterate before the search stays; no iteration counted
                s.status = ABNORMAL
                break
            s.forget()
            first = False
            continue
        first = False
        fold, gold = s.f, s.g
        s.x, s.f, s.g = xt, ft, gt
        s.n_iter += 1
        if np.max(np.abs(s.g), initial=0.0) <= pgtol:
            s.status = CONVERGED
        elif fold - s.f <= factr * EPS * max(abs(fold), abs(s.f), 1.0):
            s.status = REL_REDUCTION
        else:
            sy = (gdt - gd0) * stp
            if sy > EPS * (-gd0 * stp):
                s.update(stp, d, s.g, gold, sy)
            if s.n_iter >= maxiter:
                s.status = MAXITER
            elif s.nfev > maxfun:
                s.status = MAXFUN
        if on_iteration is not None:
            on_iteration(s)
    return s


def available() -> bool:
    """Whether this scipy has the line search :func:`run` steps (``scipy.optimize._dcsrch.DCSRCH``, 1.11 and later).

    Returns
    -------
    bool
    """
    try:
        from scipy.optimize._dcsrch import DCSRCH
    except ImportError:
        return False
    return hasattr(DCSRCH, "_iterate")
