"""scipy's L-BFGS-B, driven step by step so that a long fit can be saved and resumed exactly.

:func:`scipy.optimize.minimize` keeps the state of L-BFGS-B (the memory of 10 correction pairs,
the line search's place, the counters) in local arrays that it passes to the compiled routine
``setulb`` at every step; a fit killed after hours starts again from its first iteration.
:func:`run` is the same loop as ``scipy.optimize._lbfgsb_py._minimize_lbfgsb`` (unbounded, its
evaluation counting and its stop tests), with the state in a :class:`State` that can be written
to a file and read back: a fit resumed from a state saved at iteration *k* makes the same steps,
bit for bit, as one that never stopped (``tests/test_fit_checkpoint.py``).

``setulb`` is private to scipy; its arguments are those of scipy's C translation of L-BFGS-B
(1.15 and later). :func:`available` checks, once per process, that this scipy's routine takes
them and that :func:`run` retraces :func:`scipy.optimize.minimize` on a small problem; where it
does, :func:`bncbench.engine.optim.lbfgs` steps every fit through :func:`run` (checkpointed or not: the
same iterates, without ``minimize``'s wrappers), and where it does not, it uses ``minimize`` and does not
checkpoint.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from bncbench.engine.checkpoint import SavedState

NEW_X, FG, START = 1, 3, 0  # scipy's task codes: an iteration ended / f and g wanted / start
STOP, STOP_MAXITER, STOP_MAXFUN = 5, 504, 502  # task[0] 5 (stop), with the reason in task[1]


@dataclass
class State(SavedState):
    """Everything L-BFGS-B carries from one step to the next.

    Attributes
    ----------
    x, g : ndarray of shape (n,), float64
        The iterate and the gradient there.
    f : float
        The objective at ``x``.
    wa, iwa, task, ln_task, lsave, isave, dsave : ndarray
        ``setulb``'s work and save arrays (float64 and int32; their sizes as scipy allocates them).
    n_iter : int
        Iterations completed.
    nfev : int
        Evaluations as scipy's ``ScalarFunction`` counts them (the start point's included), for
        the ``maxfun`` test.
    """

    x: np.ndarray
    g: np.ndarray
    f: float
    wa: np.ndarray
    iwa: np.ndarray
    task: np.ndarray
    ln_task: np.ndarray
    lsave: np.ndarray
    isave: np.ndarray
    dsave: np.ndarray
    n_iter: int = 0
    nfev: int = 1

    @classmethod
    def start(cls, x0: np.ndarray, m: int) -> "State":
        """The state before the first step, as scipy allocates it.

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
        return cls(x=x, g=np.zeros(n), f=0.0, wa=np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m),
                   iwa=np.zeros(3 * n, np.int32), task=np.zeros(2, np.int32), ln_task=np.zeros(2, np.int32),
                   lsave=np.zeros(4, np.int32), isave=np.zeros(44, np.int32), dsave=np.zeros(29))

    @property
    def done(self) -> bool:
        """Whether the fit ends with this iteration (``maxiter`` or ``maxfun``; the other tests come at the next step).

        Returns
        -------
        bool
        """
        return int(self.task[0]) == STOP


def run(fg: Callable, state: State, *, m: int, factr: float, pgtol: float, maxls: int, maxiter: int, maxfun: int,
        on_iteration: Callable[[State], None] | None = None,
        on_interrupt: Callable[[State], None] | None = None) -> State:
    """Run L-BFGS-B (no bounds) from ``state`` to its end, as :func:`scipy.optimize.minimize` does.

    Parameters
    ----------
    fg : callable
        ``fg(x) -> (f, g)``; called with a copy of the iterate, which it must not modify, once per
        point (a point asked for again in a row is not evaluated again, as scipy's
        ``ScalarFunction`` caches it). ``g`` becomes the state's: ``fg`` must not keep it.
    state : State
        :meth:`State.start` for a new fit, or a state saved by ``on_iteration``; updated in place.
    m, factr, pgtol, maxls : int, float, float, int
        L-BFGS-B's memory, ``factr`` (``ftol / eps``), projected-gradient tolerance and
        line-search steps, as ``minimize``'s ``maxcor``, ``ftol``, ``gtol`` and ``maxls``.
    maxiter, maxfun : int
        Stop after this many iterations, or once scipy's evaluation count exceeds ``maxfun``.
    on_iteration : callable, optional
        Called with ``state`` after every iteration (``minimize``'s callback point; ``state.task[0]``
        is :data:`STOP` when the iteration ends the fit): the place to record a trace and to save
        the state.
    on_interrupt : callable, optional
        Never called: during an evaluation ``setulb``'s work arrays hold a line search in progress, which
        a saved state cannot go on from (:func:`bncbench.engine.lbfgs_compact.run` calls it).

    Returns
    -------
    State
        ``state`` at the end: ``x`` the result, ``n_iter`` the iterations (``minimize``'s ``nit``).
    """
    from scipy.optimize import _lbfgsb

    s = state
    low = up = np.zeros(s.x.size)
    nbd = np.zeros(s.x.size, np.int32)
    last = s.x.copy() if s.task[0] != START else None  # the point scipy's cache holds
    if last is None:  # minimize evaluates the start point when it sets up its ScalarFunction
        last = s.x.copy()  # fg reads its argument only: the copy it is given is also the point last evaluated
        s.f, s.g = fg(last)
    while True:
        if s.g.dtype != np.float64:  # fg's gradient is the caller's to keep: converted only when it must be
            s.g = s.g.astype(np.float64)
        _lbfgsb.setulb(m, s.x, low, up, nbd, s.f, s.g, factr, pgtol, s.wa, s.iwa, s.task, s.lsave, s.isave,
                       s.dsave, maxls, s.ln_task)
        if s.task[0] == FG:
            if not np.array_equal(s.x, last):
                last = s.x.copy()
                s.f, s.g = fg(last)
                s.nfev += 1
        elif s.task[0] == NEW_X:
            s.n_iter += 1
            if s.n_iter >= maxiter:
                s.task[:] = STOP, STOP_MAXITER
            elif s.nfev > maxfun:
                s.task[:] = STOP, STOP_MAXFUN
            if on_iteration is not None:
                on_iteration(s)
        else:
            return s


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether :func:`run` drives this scipy's L-BFGS-B exactly as :func:`scipy.optimize.minimize`.

    Checked once per process: ``setulb`` takes the arguments of scipy's C translation, and
    :func:`run` ends at ``minimize``'s iterate, bit for bit, on a small ill-conditioned problem.

    Returns
    -------
    bool
    """
    from scipy.optimize import minimize

    a = np.array([1.0, 10.0, 100.0, 3.0, 0.5])

    def fg(x):
        r = x - np.arange(x.size)
        return float(0.5 * a @ r**2 + np.sum(np.cosh(r)) ** 0.5), a * r + 0.5 * np.sinh(r) / np.sum(np.cosh(r)) ** 0.5

    x0 = np.full(a.size, 3.0)
    try:
        ours = run(fg, State.start(x0, 4), m=4, factr=1e7, pgtol=1e-10, maxls=20, maxiter=50, maxfun=1000)
    except Exception:  # noqa: BLE001 - another scipy's private routine: not available
        return False
    ref = minimize(fg, x0, jac=True, method="L-BFGS-B",
                   options={"maxcor": 4, "ftol": 1e7 * np.finfo(float).eps, "gtol": 1e-10, "maxiter": 50,
                            "maxfun": 1000, "maxls": 20})
    return bool(np.array_equal(ours.x, ref.x) and ours.n_iter == ref.nit)
