"""Nash's conjugate gradients and BFGS as R's ``optim`` runs them (Feelders & Ivanovs, §4).

:func:`cgmin` and :func:`vmmin` are line-by-line ports of ``cgmin`` and ``vmmin`` in R's
``src/appl/optim.c`` (J. C. Nash, *Compact Numerical Methods for Computers*, 2nd ed., 1990,
converted by p2c and re-crafted by B. D. Ripley), with R's constants: step reduction 0.2,
acceptance tolerance 1e-4, ``reltest`` 10 (a coordinate "does not change" when
``10 + x == 10 + x_new``), CG's step growth 1.7. Their sums run in R's order (compiled loops),
so on the same function the iterates agree with R's to rounding (``tests/test_nash.py`` checks
them evaluation by evaluation against ``Rscript``).

``cgmin`` (``optim(method="CG")``; ``type`` 1 Fletcher-Reeves, 2 Polak-Ribiere, 3
Beale-Sorenson): each cycle of at most ``n`` directions starts from steepest descent; along a
direction the acceptable-point search starts at the previous step times 1.7 (at most 1) and
shrinks it by 0.2 until ``f <= f0 + 1e-4 * step * g'd``, then a parabola step is tried and kept
when it is lower. The run stops when a cycle's first direction finds no acceptable point, when
``G1 = g'(g - c)`` (PR) is at most ``reltol * n * sqrt(reltol)``, when ``f <= abstol``, or after
``maxit`` gradient evaluations. **R's parabola**: R sets ``Fmin`` to the acceptable point's value
*before* fitting the parabola through ``(0, Fmin)``, slope ``g'd`` and ``(step, f)``, so its
vertex is always at half the acceptable step (``parabola="r"``, the default, what R runs). Nash's
Pascal code (and R before the line ``else *Fmin = f`` was added) fits it through the value at the
start of the line search; ``parabola="nash"`` does that (the paper's description, §4).

``vmmin`` (``optim(method="BFGS")``): the inverse Hessian ``B`` (lower triangle, dense) starts at
the identity; the acceptable-point search starts at step 1; a step whose relative reduction is at
most ``reltol`` (``|f - f0| <= reltol (|f0| + reltol)``) or whose value is at most ``abstol`` ends
the run; ``B`` gets the BFGS update when ``s'y > 0`` and is reset to the identity otherwise, after
an uphill direction, when the search finds no acceptable point (once; twice in a row ends the
run) and every ``2n`` gradients; ``maxit`` counts gradient evaluations (the first included).

R's defaults: ``maxit`` 100, ``reltol`` sqrt(machine epsilon) ~1.49e-8, ``abstol`` -Inf.

**Iterations and flops.** An iteration is one gradient evaluation (R's ``iter`` of BFGS and its
``grcount`` of CG, the paper's "iterations of the update direction calculation"). Each trace
record is an iterate where the gradient was evaluated: ``iter`` (0 at ``x0``), ``f``, ``n_f`` and
``n_g`` (R's ``fncount`` and ``grcount`` so far), ``count_cll`` (function evaluations since the
previous record) and ``flops``: the paper's cost of the iteration (§4),

* BFGS: ``12 r^2 + 8 r + (4 r + cost_CLL) count_CLL + cost_grad``,
* CG: ``10 r + (4 r + cost_CLL) count_CLL + cost_grad``,

with ``r`` the parameter count and ``cost_CLL``, ``cost_grad`` the caller's (see
:mod:`bncbench.engine.flops` for §5's formulas per parameter space). Record 0 costs the first
evaluations, ``cost_CLL + cost_grad``. ``flops_total`` is the running sum. The function
evaluations of the search that ends a run (after the last gradient) are in the result's ``n_f``
but in no record.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from bncbench.errors import BNCBenchError

STEPREDN = 0.2
"""Step reduction of the acceptable-point search (R's ``stepredn``)."""
ACCTOL = 1e-4
"""Sufficient-decrease factor of an acceptable point (R's ``acctol``)."""
RELTEST = 10.0
"""A coordinate is unchanged when ``RELTEST + x == RELTEST + x_new`` (R's ``reltest``)."""
SETSTEP = 1.7
"""CG: the next direction's first step is the last accepted one times this, at most 1."""
MAXIT = 100
"""R's default ``maxit`` for CG and BFGS."""
RELTOL = math.sqrt(np.finfo(float).eps)
"""R's default ``reltol``."""
ABSTOL = -math.inf
"""R's default ``abstol``."""
CG_TYPES = {1: "Fletcher-Reeves", 2: "Polak-Ribiere", 3: "Beale-Sorenson"}
PARABOLAS = ("r", "nash")


def bfgs_flops(r: int, count_cll: int, cost_cll: float, cost_grad: float) -> float:
    """The paper's cost of one BFGS iteration (§4): ``12r^2 + 8r + (4r + cost_CLL) count_CLL + cost_grad``.

    Parameters
    ----------
    r : int
        Number of parameters.
    count_cll : int
        CLL evaluations in the iteration.
    cost_cll, cost_grad : float
        Flops of one CLL and one gradient evaluation.

    Returns
    -------
    float
        Flops of the iteration.
    """
    return 12.0 * r * r + 8.0 * r + (4.0 * r + cost_cll) * count_cll + cost_grad


def cg_flops(r: int, count_cll: int, cost_cll: float, cost_grad: float) -> float:
    """The paper's cost of one CG or CGB iteration (§4): ``10r + (4r + cost_CLL) count_CLL + cost_grad``.

    Parameters
    ----------
    r : int
        Number of parameters.
    count_cll : int
        CLL evaluations in the iteration.
    cost_cll, cost_grad : float
        Flops of one CLL and one gradient evaluation.

    Returns
    -------
    float
        Flops of the iteration.
    """
    return 10.0 * r + (4.0 * r + cost_cll) * count_cll + cost_grad


@dataclass
class NashResult:
    """What :func:`cgmin` or :func:`vmmin` returns (R's ``optim`` list, plus the trace).

    Attributes
    ----------
    x : ndarray of shape (n,)
        R's ``par``: CG's last gradient point (``X``), BFGS's last point tried (``b``).
    f : float
        R's ``value`` (``Fmin``).
    n_f, n_g : int
        R's ``counts``: function and gradient evaluations.
    fail : int
        R's ``convergence``: 0, or 1 when ``maxit`` was reached.
    trace : list of dict
        One record per iteration (gradient evaluation), see the module docstring.
    """
    x: np.ndarray
    f: float
    n_f: int
    n_g: int
    fail: int
    trace: list = field(default_factory=list)


@njit(cache=True)
def _cg_sums(g, c, t, kind):  # pragma: no cover - compiled
    G1 = 0.0
    G2 = 0.0
    for i in range(g.shape[0]):
        if kind == 1:
            G1 += g[i] * g[i]
            G2 += c[i] * c[i]
        elif kind == 2:
            G1 += g[i] * (g[i] - c[i])
            G2 += c[i] * c[i]
        else:
            G1 += g[i] * (g[i] - c[i])
            G2 += t[i] * (g[i] - c[i])
    return G1, G2


@njit(cache=True)
def _cg_direction(t, g, G3):  # pragma: no cover - compiled
    gradproj = 0.0
    for i in range(g.shape[0]):
        t[i] = t[i] * G3 - g[i]
        gradproj += t[i] * g[i]
    return gradproj


# B is R's lower triangle, packed by rows: B[i, j] (j <= i) at i (i + 1) / 2 + j.

@njit(cache=True)
def _bfgs_reset(B, n):  # pragma: no cover - compiled
    for i in range(n):
        base = i * (i + 1) // 2
        for j in range(i):
            B[base + j] = 0.0
        B[base + i] = 1.0


@njit(cache=True)
def _bfgs_direction(B, g, t):  # pragma: no cover - compiled
    n = g.shape[0]
    gradproj = 0.0
    for i in range(n):
        s = 0.0
        base = i * (i + 1) // 2
        for j in range(i + 1):
            s -= B[base + j] * g[j]
        for j in range(i + 1, n):
            s -= B[j * (j + 1) // 2 + i] * g[j]
        t[i] = s
        gradproj += s * g[i]
    return gradproj


@njit(cache=True)
def _bfgs_update(B, t, c, X):  # pragma: no cover - compiled
    """R's update with ``t`` the step and ``c`` the gradient change; returns D1 (no update if <= 0)."""
    n = t.shape[0]
    D1 = 0.0
    for i in range(n):
        D1 += t[i] * c[i]
    if D1 > 0:
        D2 = 0.0
        for i in range(n):
            s = 0.0
            base = i * (i + 1) // 2
            for j in range(i + 1):
                s += B[base + j] * c[j]
            for j in range(i + 1, n):
                s += B[j * (j + 1) // 2 + i] * c[j]
            X[i] = s
            D2 += s * c[i]
        D2 = 1.0 + D2 / D1
        for i in range(n):
            base = i * (i + 1) // 2
            for j in range(i + 1):
                B[base + j] += (D2 * t[i] * t[j] - X[i] * t[j] - t[i] * X[j]) / D1
    return D1


def _unchanged(X, trial):
    return int(np.count_nonzero(RELTEST + X == RELTEST + trial))


class _Counter:
    """Evaluation counts and the per-iteration trace of one run."""

    def __init__(self, r, flops, cost_cll, cost_grad, on_iteration):
        self.r, self.flops, self.cost_cll, self.cost_grad = r, flops, float(cost_cll), float(cost_grad)
        self.on_iteration = on_iteration
        self.n_f = self.n_g = 0
        self._f_at_last = 0
        self.trace = []
        self.total = 0.0

    def record(self, x, f):
        count = self.n_f - self._f_at_last
        self._f_at_last = self.n_f
        if not self.trace:
            fl = self.cost_cll * count + self.cost_grad
        else:
            fl = self.flops(self.r, count, self.cost_cll, self.cost_grad)
        self.total += fl
        rec = {"iter": len(self.trace), "f": float(f), "n_f": self.n_f, "n_g": self.n_g,
               "count_cll": count, "flops": fl, "flops_total": self.total}
        self.trace.append(rec)
        if self.on_iteration is not None:
            self.on_iteration(x, rec)


def _check(x0, maxit, name):
    x = np.array(x0, dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        raise BNCBenchError(f"{name}: the starting point has non-finite values")
    if int(maxit) != maxit:
        raise BNCBenchError(f"{name}: maxit must be an integer, got {maxit!r}")
    return x


def cgmin(f: Callable[[np.ndarray], float], grad: Callable[[np.ndarray], np.ndarray], x0, *,
          type: int = 2, maxit: int = MAXIT, reltol: float = RELTOL, abstol: float = ABSTOL,
          parabola: str = "r", cost_cll: float = 0.0, cost_grad: float = 0.0,
          on_iteration: Callable[[np.ndarray, dict], None] | None = None) -> NashResult:
    """Minimize ``f`` by Nash's conjugate gradients, as ``optim(method="CG")`` does.

    Parameters
    ----------
    f : callable
        ``f(x) -> float``, the objective (a non-finite value is not acceptable).
    grad : callable
        ``grad(x) -> ndarray``, its gradient (read, not kept).
    x0 : array_like of shape (n,)
        Starting point (finite).
    type : {1, 2, 3}, default=2
        R's ``control$type``: Fletcher-Reeves, Polak-Ribiere (the paper's), Beale-Sorenson.
    maxit : int, default=100
        Gradient evaluations allowed (R's ``maxit``).
    reltol : float, default=sqrt(eps)
        R's ``reltol``: the gradient test is ``G1 <= reltol * n * sqrt(reltol)``.
    abstol : float, default=-inf
        Stop when the value is at most this.
    parabola : {"r", "nash"}, default="r"
        ``"r"``: R's code (the parabola through the acceptable point's own value, i.e. half the
        step); ``"nash"``: the parabola through the line search's starting value (module docstring).
    cost_cll, cost_grad : float, default=0
        Flops of one function and one gradient evaluation, for the trace's ``flops``.
    on_iteration : callable, optional
        Called as ``on_iteration(x, record)`` at every gradient evaluation (after it).

    Returns
    -------
    NashResult
        ``x`` is R's ``par`` (the last point where the gradient was evaluated).

    Raises
    ------
    BNCBenchError
        If ``type`` or ``parabola`` is unknown, ``x0`` is not finite, or ``f(x0)`` is not finite.
    """
    if type not in CG_TYPES:
        raise BNCBenchError(f"unknown CG type {type!r}; choose 1 (FR), 2 (PR) or 3 (BS)")
    if parabola not in PARABOLAS:
        raise BNCBenchError(f"unknown parabola {parabola!r}; choose one of {', '.join(PARABOLAS)}")
    Bvec = _check(x0, maxit, "cgmin")
    n = Bvec.size
    X = Bvec.copy()
    ctr = _Counter(n, cg_flops, cost_cll, cost_grad, on_iteration)
    if maxit <= 0:
        return NashResult(Bvec, float(f(Bvec)), 0, 0, 0, [])
    cyclimit = n
    tol = reltol * n * math.sqrt(reltol)
    fv = float(f(Bvec))
    if not math.isfinite(fv):
        raise BNCBenchError("cgmin: the function cannot be evaluated at the initial parameters")
    Fmin = fv
    ctr.n_f = 1
    steplength = 1.0
    c = np.zeros(n)
    t = np.zeros(n)
    while True:  # outer do ... while
        t[:] = 0.0
        c[:] = 0.0
        cycle = 0
        oldstep = 1.0
        count = 0
        while True:  # inner do ... while
            cycle += 1
            ctr.n_g += 1
            if ctr.n_g > maxit:  # R returns here, its grcount maxit + 1
                return NashResult(X.copy(), Fmin, ctr.n_f, ctr.n_g, 1, ctr.trace)
            g = np.array(grad(Bvec), dtype=float)
            X[:] = Bvec
            G1, G2 = _cg_sums(g, c, t, type)
            c[:] = g
            ctr.record(X, Fmin)
            if G1 > tol:
                G3 = G1 / G2 if G2 > 0.0 else 1.0
                gradproj = _cg_direction(t, g, G3)
                steplength = oldstep
                f_start = Fmin
                accpoint = False
                while True:
                    Bvec = X + steplength * t
                    count = _unchanged(X, Bvec)
                    if count < n:
                        fv = float(f(Bvec))
                        ctr.n_f += 1
                        accpoint = math.isfinite(fv) and fv <= Fmin + gradproj * steplength * ACCTOL
                        if not accpoint:
                            steplength *= STEPREDN
                        else:
                            Fmin = fv
                    if count == n or accpoint:
                        break
                if count < n:
                    f0 = Fmin if parabola == "r" else f_start
                    newstep = 2 * (fv - f0 - gradproj * steplength)
                    if newstep > 0:
                        newstep = -(gradproj * steplength * steplength / newstep)
                        Bvec = X + newstep * t
                        Fmin = fv
                        fv = float(f(Bvec))
                        ctr.n_f += 1
                        if fv < Fmin:
                            Fmin = fv
                        else:
                            Bvec = X + steplength * t
            oldstep = min(SETSTEP * steplength, 1.0)
            if not (count != n and G1 > tol and cycle != cyclimit):
                break
        if not (cycle != 1 or (count != n and G1 > tol and Fmin > abstol)):
            break
    return NashResult(X.copy(), Fmin, ctr.n_f, ctr.n_g, 0, ctr.trace)


def vmmin(f: Callable[[np.ndarray], float], grad: Callable[[np.ndarray], np.ndarray], x0, *,
          maxit: int = MAXIT, reltol: float = RELTOL, abstol: float = ABSTOL,
          cost_cll: float = 0.0, cost_grad: float = 0.0,
          on_iteration: Callable[[np.ndarray, dict], None] | None = None) -> NashResult:
    """Minimize ``f`` by Nash's variable metric method (BFGS), as ``optim(method="BFGS")`` does.

    The inverse Hessian is dense (its lower triangle, ``n (n + 1) / 2`` floats, as R stores it):
    callers refuse large problems.

    Parameters
    ----------
    f : callable
        ``f(x) -> float``, the objective.
    grad : callable
        ``grad(x) -> ndarray``, its gradient.
    x0 : array_like of shape (n,)
        Starting point (finite).
    maxit : int, default=100
        Iterations (gradient evaluations, the first included) allowed.
    reltol : float, default=sqrt(eps)
        Stop when a step's reduction is at most ``reltol * (|f| + reltol)``.
    abstol : float, default=-inf
        Stop when the value is at most this.
    cost_cll, cost_grad : float, default=0
        Flops of one function and one gradient evaluation, for the trace's ``flops``.
    on_iteration : callable, optional
        Called as ``on_iteration(x, record)`` at every gradient evaluation (after it).

    Returns
    -------
    NashResult
        ``x`` is R's ``par`` (the last point tried).

    Raises
    ------
    BNCBenchError
        If ``x0`` or ``f(x0)`` is not finite.
    """
    b = _check(x0, maxit, "vmmin")
    n = b.size
    ctr = _Counter(n, bfgs_flops, cost_cll, cost_grad, on_iteration)
    if maxit <= 0:
        return NashResult(b, float(f(b)), 0, 0, 0, [])
    fv = float(f(b))
    if not math.isfinite(fv):
        raise BNCBenchError("vmmin: the initial value is not finite")
    Fmin = fv
    ctr.n_f = ctr.n_g = 1
    g = np.array(grad(b), dtype=float)
    it = 1
    ctr.record(b, Fmin)
    ilast = ctr.n_g
    B = np.zeros(n * (n + 1) // 2)  # R's lower triangle, packed
    t = np.zeros(n)
    X = np.zeros(n)
    c = np.zeros(n)
    while True:
        if ilast == ctr.n_g:
            _bfgs_reset(B, n)
        X[:] = b
        c[:] = g
        gradproj = _bfgs_direction(B, g, t)
        if gradproj < 0.0:
            steplength = 1.0
            accpoint = False
            while True:
                b = X + steplength * t
                count = _unchanged(X, b)
                if count < n:
                    fv = float(f(b))
                    ctr.n_f += 1
                    accpoint = math.isfinite(fv) and fv <= Fmin + gradproj * steplength * ACCTOL
                    if not accpoint:
                        steplength *= STEPREDN
                if count == n or accpoint:
                    break
            enough = fv > abstol and abs(fv - Fmin) > reltol * (abs(Fmin) + reltol)
            if not enough:
                count = n
                Fmin = fv
            if count < n:
                Fmin = fv
                g = np.array(grad(b), dtype=float)
                ctr.n_g += 1
                it += 1
                ctr.record(b, Fmin)
                t *= steplength
                c = g - c
                D1 = _bfgs_update(B, t, c, X)
                if not D1 > 0:
                    ilast = ctr.n_g
            else:
                if ilast < ctr.n_g:
                    count = 0
                    ilast = ctr.n_g
        else:
            count = 0
            if ilast == ctr.n_g:
                count = n
            else:
                ilast = ctr.n_g
        if it >= maxit:
            break
        if ctr.n_g - ilast > 2 * n:
            ilast = ctr.n_g
        if not (count != n or ilast != ctr.n_g):
            break
    return NashResult(b, Fmin, ctr.n_f, ctr.n_g, 0 if it < maxit else 1, ctr.trace)
