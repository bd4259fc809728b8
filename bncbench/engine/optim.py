"""Optimizers with a per-iteration trace.

Every optimizer returns ``(x, trace, n_iter)``; the trace is a list of dicts
``{"iter", "nll", "n_fev", "time"}`` (plus ``"obj"`` when regularized), with
iteration 0 the starting point. ``nll`` is the negative training CLL
(summed), ``n_fev`` the full-data evaluations so far, ``time`` the seconds
since the optimizer started.

Options (``optimizer_options``), all optional. Each optimizer's defaults are declared once, in its
registration (:func:`declared_defaults`; ``python -m bncbench components`` lists them), and
:func:`optimize` hands them to it under the options given:

``stop``      ``"ebnc"`` (default): relative reduction
              ``(f_t - f_{t+1}) / max(|f_t|, |f_{t+1}|, 1) < 1e7 * eps``
              (L-BFGS-B's factr 1e7, what the EBNC reference code stops on),
              gradient max-norm < 1e-5, or 10^4 iterations;
              ``"paper"``: relative reduction < 1e-32 or 10^4 iterations (§7).
``ftol``, ``gtol``, ``maxiter``  override the preset of ``stop``.
``history``   L-BFGS memory (default 10); ``maxfun`` (L-BFGS, default 20 maxiter).
``maxls``     L-BFGS: line-search steps per iteration (default 40; 20 in L-BFGS-B
              3.0's Fortran, which the EBNC code runs).
``uniform_offset``  L-BFGS: minimize NLL − N ln nc (the EBNC code's objective; only
              the relative stopping test changes; default false).
``driver``    L-BFGS (speed only): ``"compact"`` (default; L-BFGS-B's iteration with its
              memory as the compact inverse, :mod:`bncbench.engine.lbfgs_compact`: two passes
              over the correction pairs an iteration where scipy's ``setulb`` makes about six;
              iterates equal to rounding) or ``"setulb"`` (scipy's routine,
              :mod:`bncbench.engine.lbfgsb`: ``minimize``'s iterates bit for bit).
``xtol``      CGB: Brent's relative precision (default 2e-4, Feelders & Ivanovs).
``method``    sgd: ``"adagrad"`` (default) or ``"sgd"``; ``lr`` (default 0.1),
              ``batch_size`` (default 256), ``seed`` (0); ``maxiter`` =
              epochs (default 20). One epoch = one trace iteration and one
              ``n_fev`` (the per-epoch monitoring evaluation is not counted).
``max_params`` BFGS: refuse problems with more parameters (default 10000;
              it stores a dense inverse Hessian).

``validation_fraction``, ``patience``, ``validation_seed``  early stopping on a
              stratified held-out part of the training rows (off by default):
              every optimizer's :class:`Tracer` scores each iterate there,
              the fit stops ``patience`` (default 10) iterations after the
              best and returns it (:mod:`bncbench.engine.validation`).
              ``validation_start``: ``"all"`` (default) counts the
              generative start on all training rows, ``"training_part"``
              on the rows not held out only.
``grid``      ``{hyperparameter: [values]}`` of the chosen parameterization,
              initialization or objective: one early-stopped fit per point on
              the same held-out split, the lowest held-out error kept
              (:mod:`bncbench.engine.tuning`; needs ``validation_fraction``).

``blas_threads`` BLAS threads while optimizing (default 1; ``None`` leaves the
              process setting). The optimizers' own linear algebra works on
              vectors of the parameter count (L-BFGS-B's two-loop recursion),
              far too small for threads: with OpenBLAS's default of one
              thread per core, L-BFGS-B spent 3.6x more time than our loss on
              adult on a loaded 2-core machine.

Engine options may travel in the same dict (:data:`ENGINE_KEYS`):
``backend`` (``"numba"`` or ``"scipy"``), ``compress`` (merge identical
training rows), ``two_class`` (the score-difference kernel for two classes;
false forces the general kernel) and ``materialize`` (attribute-subset
models, LRⁿ / DBLⁿ: build the ``(N, n_factors)`` row-index table instead of
finding the rows on the fly; the reference path, same results) and
``combine_subsets`` (attribute-subset models, two classes: one lookup per group
of subsets sharing attributes, :class:`~bncbench.engine.subset_design.SubsetGroups`,
where it applies; the sums in another order, so iterates equal to rounding;
false: the row table's order bit for bit). They change the speed, not the
results; their defaults are declared once
(:data:`bncbench.engine.loss.ENGINE_OPTIONS`, registered with every
optimizer as ``engine_default``) and read by :func:`engine_options`.

Within :func:`fit_progress` (the runner's tasks when it logs its progress), a
fit that runs longer than a minute prints its iteration, objective and elapsed
time to stderr once a minute.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import sys
import time
from typing import Any

from numbers import Real

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from sklearn.utils._param_validation import Interval

from bncbench.components import OPTIMIZERS
from bncbench.engine import checkpoint, lbfgs_compact, lbfgsb, nash
from bncbench.engine.loss import ENGINE_OPTIONS
from bncbench.engine.problem import Problem
from bncbench.engine.validation import KEYS as VALIDATION_KEYS
from bncbench.engine.validation import STARTS as VALIDATION_STARTS
from bncbench.engine.validation import EarlyStop
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, finite, integer, options

EPS = float(np.finfo(float).eps)
DRIVERS = {"compact": lbfgs_compact, "setulb": lbfgsb}
"""L-BFGS's drivers (option ``driver``, the first the default): name to module (``State``, ``run``, ``available``)."""
STOPS = {
    "paper": {"ftol": 1e-32, "gtol": 0.0, "maxiter": 10000},
    "ebnc": {"ftol": 1e7 * EPS, "gtol": 1e-5, "maxiter": 10000},
}
ENGINE_KEYS = tuple(h.name for h in ENGINE_OPTIONS)  # engine options that may travel in optimizer_options


_PROGRESS: tuple[str, float] | None = None
"""``(label, every)`` while fits log their progress (:func:`fit_progress`), else ``None``."""


@contextlib.contextmanager
def fit_progress(label: str, every: float = 60.0):
    """Within the block, an optimization logs one line to stderr every ``every`` seconds.

    ``<label>: iteration <i>, objective <f>, <n> evaluations, <m> min``, first after ``every``
    seconds of optimizing, so short fits print nothing. A fit of hours on a Big dataset shows
    how far it is (the iteration counts of the records tell how many it may take).

    Parameters
    ----------
    label : str
        What is being fitted (the runner: dataset / model, round and fold).
    every : float, default=60.0
        Seconds between lines.
    """
    global _PROGRESS
    old, _PROGRESS = _PROGRESS, (label, float(every))
    try:
        yield
    finally:
        _PROGRESS = old


class Tracer:
    """Per-iteration trace of an optimization of ``problem``.

    Parameters
    ----------
    problem : Problem
        The problem being optimized; its ``n_fev`` and data term are read at every record.

    Attributes
    ----------
    problem : Problem
        As given.
    t0 : float
        ``time.perf_counter()`` at construction (the optimizer's start).
    c0 : float or None
        ``time.process_time()`` then: the optimizer's CPU seconds are measured from it (``None``: unknown,
        after a checkpoint that did not save them).
    trace : list of dict
        One record per call of :meth:`record`: ``{"iter", "nll", "n_fev", "time"}``, plus ``"obj"``
        when the problem is regularized.
    """
    def __init__(self, problem: Problem) -> None:
        """Start the clock with an empty trace.

        Parameters
        ----------
        problem : Problem
            The problem being optimized.
        """
        self.problem = problem
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        self._logged = 0.0  # ``time`` of the last progress line (the start: none yet)
        self.trace = []
        problem.tracer = self  # optimize() reads the trace of a run stopped early

    def record(self, x: np.ndarray, **extra) -> None:
        """Append the record of iterate ``x`` (iteration number ``len(trace)``).

        ``nll`` comes from the problem's cache when ``x`` was just evaluated (else it is computed and
        not counted in ``n_fev``); ``time`` is the seconds since the tracer was created. With a
        validation monitor on the problem (:mod:`bncbench.engine.validation`), its held-out error
        and NLL are recorded too, and :class:`~bncbench.engine.validation.EarlyStop` is raised once
        its patience is spent.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The current iterate.
        **extra
            Further fields an optimizer records (e.g. ``flops``).
        """
        p = self.problem
        hit = p.cached(x)  # (f, nll) of an iterate just evaluated: f is nll + penalty, as computed below
        rec = {"iter": len(self.trace), "nll": float(p.nll(x) if hit is None else hit[1]), "n_fev": int(p.n_fev),
               "time": time.perf_counter() - self.t0, **extra}
        if p.regularized:
            rec["obj"] = float(rec["nll"] + p._penalty(x, grad=False)[0] if hit is None else hit[0])
        if p.monitor is not None:
            rec.update(p.monitor(x))
        self.trace.append(rec)
        if p.monitor is not None and p.monitor.exhausted:
            raise EarlyStop
        if _PROGRESS is not None and rec["time"] - self._logged >= _PROGRESS[1]:
            self._logged = rec["time"]
            print(f"{_PROGRESS[0]}: iteration {rec['iter']}, objective {rec.get('obj', rec['nll']):.10g}, "
                  f"{rec['n_fev']} evaluations, {rec['time'] / 60:.1f} min", file=sys.stderr, flush=True)


def _rel_reduction(f0, f1):
    return (f0 - f1) / max(abs(f0), abs(f1), 1.0)


def _settings(opts: dict, extra: dict) -> dict:
    opts = dict(opts or {})
    stop = opts.pop("stop", "ebnc")
    if stop not in STOPS:
        raise BNCBenchError(f"unknown stop rule {stop!r}; choose one of {', '.join(STOPS)}")
    s = {**STOPS[stop], **extra}
    for k in list(opts):
        if k in ENGINE_KEYS or k in VALIDATION_KEYS:
            opts.pop(k)
        elif k in s:
            s[k] = opts.pop(k)
        else:
            raise BNCBenchError(f"unknown optimizer option {k!r}; known: {', '.join(sorted(s))}")
    s["maxiter"] = int(s["maxiter"])
    if s["maxiter"] < 0:
        raise BNCBenchError("maxiter must be >= 0")
    return s


def lbfgs(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """L-BFGS-B without bounds (scipy's, or its iteration with the compact inverse), the papers' optimizer.

    Parameters
    ----------
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point (float).
    opts : dict or None
        ``stop``, ``ftol``, ``gtol``, ``maxiter``, ``history`` (memory, default 10), ``maxls`` (default 40),
        ``uniform_offset`` (stop on NLL − N ln nc), ``maxfun`` (evaluation limit, default
        ``20 * max(maxiter, 1)``) and ``driver`` (``compact`` or ``setulb``); engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        The final iterate (``x0`` itself when ``maxiter`` is 0).
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Iterations (``minimize``'s ``nit``).

    Raises
    ------
    BNCBenchError
        If an option, the stop rule or the driver is unknown, or ``maxiter`` is negative.
    """
    s = _settings(opts, {"history": None, "maxfun": None, "uniform_offset": None, "maxls": None,
                         "driver": None})  # declared
    tr = Tracer(problem)
    fg = _offset(problem) if s["uniform_offset"] else problem.fg
    f0, _ = fg(x0)
    tr.record(x0)
    if s["maxiter"] == 0:
        return x0, tr.trace, 0
    options = {"maxiter": s["maxiter"], "ftol": s["ftol"], "gtol": s["gtol"], "maxcor": int(s["history"]),
               "maxfun": int(s["maxfun"] or 20 * max(s["maxiter"], 1)), "maxls": int(s["maxls"])}
    if s["driver"] not in DRIVERS:
        raise BNCBenchError(f"unknown L-BFGS driver {s['driver']!r}; choose one of {', '.join(DRIVERS)}")
    driver = DRIVERS[s["driver"]]
    if driver.available():  # (setulb: minimize's iterates bit for bit, without its wrappers' work per evaluation)
        return _lbfgs_stepped(problem, x0, f0, options, tr, checkpoint.active(), fg, driver)

    def cb(intermediate_result):
        tr.record(intermediate_result.x)

    res = minimize(fg, x0, jac=True, method="L-BFGS-B", callback=cb, options=options)
    return res.x, tr.trace, int(res.nit)


def _offset(problem: Problem):
    """``problem.fg`` minus N ln nc, the NLL of uniform class probabilities (option ``uniform_offset``).

    The EBNC and ALR codes minimize NLL − N ln nc: the same minimizer and gradient, but L-BFGS-B's
    relative-reduction test (factr) then stops elsewhere (``bncbench.engine.ebnc``).
    """
    off = float(problem.cll.data.total) * float(np.log(problem.pmap.Y))

    def fg(x):
        f, g = problem.fg(x)
        return f - off, g

    return fg


def _lbfgs_stepped(problem: Problem, x0: np.ndarray, f0: float, options: dict, tr: Tracer,
                   ck: "checkpoint.FitCheckpoint | None", fg=None,
                   driver=lbfgs_compact) -> tuple[np.ndarray, list[dict], int]:
    """:func:`lbfgs`'s L-BFGS-B stepped by ``driver.run`` (:mod:`bncbench.engine.lbfgs_compact` or
    :mod:`bncbench.engine.lbfgsb`); with a checkpoint ``ck``, saved every ``ck.every`` seconds and resumed
    from a matching save.

    Whether or not the fit went on from a checkpoint (:mod:`bncbench.engine.checkpoint`), the same iterates,
    trace (but its times) and ``n_iter``; with :mod:`~bncbench.engine.lbfgsb`, those ``minimize`` gives (what
    :func:`bncbench.engine.lbfgsb.available` checks once per process), without ``minimize``'s wrappers (0.2-0.4 ms
    of an adult LR² evaluation in one comparison, ``docs/benchmarks.md``).
    """
    settings = options if driver is lbfgsb else {**options, "driver": driver.__name__}  # setulb's saves: as before
    saver = None if ck is None else ck.begin(checkpoint.fingerprint(x0, f0, settings), driver.State)
    if saver is not None and saver.state is not None:
        state = saver.state
        tr.trace, problem.n_fev = saver.trace, saver.n_fev
        tr.t0 -= saver.elapsed  # the trace's times go on from the saved run's
        tr.c0 = None if saver.cpu is None else tr.c0 - saver.cpu
    else:
        state = driver.State.start(x0, options["maxcor"])

    def times():
        return time.perf_counter() - tr.t0, None if tr.c0 is None else time.process_time() - tr.c0

    at_iteration = [problem.n_fev]  # the evaluation count at the end of the last iteration (or at the start)

    def on_iteration(st):
        tr.record(st.x)
        at_iteration[0] = problem.n_fev
        if saver is not None and not st.done:
            saver.maybe_save(st, tr.trace, problem.n_fev, *times())

    def on_interrupt(st):  # st as the interrupted iteration began: the trace and count as they were then
        saver.save_interrupted(st, tr.trace, at_iteration[0], *times())

    state = driver.run(fg or problem.fg, state, m=options["maxcor"], factr=options["ftol"] / EPS, pgtol=options["gtol"],
                       maxls=options["maxls"], maxiter=options["maxiter"], maxfun=options["maxfun"],
                       on_iteration=on_iteration, on_interrupt=None if saver is None else on_interrupt)
    return state.x, tr.trace, state.n_iter


def _callback(intermediate_result):  # noqa: ARG001 - the signature scipy's minimize looks for
    pass


_CALLBACK_SIGNATURE = inspect.signature(_callback)


def _scipy_method(method, problem, x0, opts, extra=None):
    s = _settings(opts, dict(extra or {}))
    if method == "BFGS" and x0.size > int(s.pop("max_params")):
        raise BNCBenchError(
            f"BFGS stores a dense {x0.size}x{x0.size} inverse Hessian; this model is too large "
            "(raise optimizer.max_params or use lbfgs)"
        )
    s.pop("max_params", None)
    tr = Tracer(problem)
    f0, _ = problem.fg(x0)
    tr.record(x0)
    if s["maxiter"] == 0:
        return x0, tr.trace, 0
    state = {"f": f0, "n": 0}

    def cb(intermediate_result):
        state["n"] += 1
        tr.record(intermediate_result.x)
        f1 = intermediate_result.fun
        if _rel_reduction(state["f"], f1) < s["ftol"]:
            raise StopIteration
        state["f"] = f1

    cb.__signature__ = _CALLBACK_SIGNATURE  # what inspect.signature finds anyway (scipy asks it at every minimize)
    # the value and the gradient as two functions, both served by problem.fg (one evaluation per point, from its
    # cache): the same points and values as jac=True, without scipy's MemoizeJac comparing and copying every point
    res = minimize(lambda x: problem.fg(x)[0], x0, jac=lambda x: problem.fg(x)[1], method=method, callback=cb,
                   options={"maxiter": s["maxiter"], "gtol": s["gtol"]})
    return res.x, tr.trace, int(state["n"])


def cg(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """Nonlinear conjugate gradient, Polak-Ribiere (scipy's CG, Wolfe line search).

    Stops on scipy's gradient test (``gtol``), on ``maxiter``, or when an iteration's relative
    reduction of the objective is below ``ftol``.

    Parameters
    ----------
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point (float).
    opts : dict or None
        ``stop``, ``ftol``, ``gtol``, ``maxiter``; engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        The final iterate (``x0`` itself when ``maxiter`` is 0).
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Iterations completed (callbacks).

    Raises
    ------
    BNCBenchError
        If an option or the stop rule is unknown, or ``maxiter`` is negative.
    """
    return _scipy_method("CG", problem, x0, opts)


def bfgs(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """BFGS (scipy; a dense inverse Hessian, for small models).

    Stops as :func:`cg` does.

    Parameters
    ----------
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point (float).
    opts : dict or None
        ``stop``, ``ftol``, ``gtol``, ``maxiter`` and ``max_params`` (largest parameter count,
        default 10000); engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        The final iterate (``x0`` itself when ``maxiter`` is 0).
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Iterations completed (callbacks).

    Raises
    ------
    BNCBenchError
        If an option or the stop rule is unknown, ``maxiter`` is negative, or the problem has more
        than ``max_params`` parameters.
    """
    return _scipy_method("BFGS", problem, x0, opts, {"max_params": None})  # declared in the registration


def cgb(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """CG (Polak-Ribiere+, restarts) with Brent's line search (Feelders & Ivanovs' CGB).

    Stops when the gradient max-norm is at most ``gtol``, a step's relative reduction is below
    ``ftol``, after ``maxiter`` steps, or when a line search along the steepest descent
    direction makes no progress.

    Parameters
    ----------
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point (copied).
    opts : dict or None
        ``stop``, ``ftol``, ``gtol``, ``maxiter`` and ``xtol`` (Brent's relative precision,
        default 2e-4); engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        The final iterate.
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Accepted steps.

    Raises
    ------
    BNCBenchError
        If an option or the stop rule is unknown, or ``maxiter`` is negative.
    """
    s = _settings(opts, {"xtol": None})  # declared in the registration
    tr = Tracer(problem)
    x = np.array(x0, dtype=float)
    f, g = problem.fg(x)
    tr.record(x)
    d = -g
    step = 1.0 / max(np.linalg.norm(g), 1e-12)
    it = 0
    while it < s["maxiter"]:
        if np.max(np.abs(g), initial=0.0) <= s["gtol"]:
            break
        if g @ d >= 0:  # not a descent direction: restart
            d = -g
        def line(a, x=x, d=d):
            return problem.f(x + a * d)
        try:
            r = minimize_scalar(line, bracket=(0.0, step), method="brent", options={"xtol": s["xtol"]})
            a, fa = float(r.x), float(r.fun)
        except (RuntimeError, ValueError, FloatingPointError):
            a, fa = 0.0, f
        if not np.isfinite(fa) or fa >= f or a == 0.0:
            if np.array_equal(d, -g):
                break  # no progress along steepest descent: converged
            d = -g
            continue
        x = x + a * d
        f1, g1 = problem.fg(x)
        it += 1
        tr.record(x)
        done = _rel_reduction(f, f1) < s["ftol"]
        beta = max(0.0, float(g1 @ (g1 - g)) / max(float(g @ g), 1e-300))
        d = -g1 + beta * d
        step = abs(a) if a else step
        f, g = f1, g1
        if done:
            break
    data = getattr(problem.cll, "data", None)
    if hasattr(problem.pmap, "flop_costs") and data is not None:  # Feelders & Ivanovs' flops (§4), as cg_nash's
        from bncbench.engine.flops import add_flops

        add_flops(tr.trace, int(problem.pmap.n_params), "cg", *problem.pmap.flop_costs(data))
    return x, tr.trace, it


def sgd(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """Minibatch SGD / AdaGrad over the (compressed) training rows; one epoch per iteration.

    Each epoch visits the design rows in a new random order, in batches of ``batch_size`` rows;
    a step uses the batch's gradient divided by its instance count. The run stops after
    ``maxiter`` epochs (declared default 20), when the NLL is not finite,
    or, with ``ftol > 0`` (default 0), when an epoch's relative reduction is below ``ftol``.

    Parameters
    ----------
    problem : Problem
        The objective; its ``n_fev`` grows by one per epoch.
    x0 : ndarray of shape (n_params,)
        Starting point (copied).
    opts : dict or None
        ``method`` (``"adagrad"``, default, or ``"sgd"``), ``lr`` (default 0.1),
        ``batch_size`` (256), ``seed`` (0), ``eps`` (AdaGrad, 1e-8), ``maxiter``, ``ftol``, ``stop``,
        ``gtol`` (accepted, not used); engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        The final iterate.
    trace : list of dict
        One record per epoch, iteration 0 at ``x0``.
    n_iter : int
        Epochs run.

    Raises
    ------
    BNCBenchError
        If ``method``, an option or the stop rule is unknown, or ``maxiter`` is negative.
    """
    o = dict(opts or {})
    method = o.pop("method")  # method, lr, batch_size, seed, maxiter: declared in the registration
    if method not in ("adagrad", "sgd"):
        raise BNCBenchError(f"unknown sgd method {method!r}; choose adagrad or sgd")
    s = _settings(o, {"lr": None, "batch_size": None, "seed": None, "eps": None})
    s["ftol"] = float(o.get("ftol", 0.0))
    data = problem.cll.data
    rng = np.random.default_rng(int(s["seed"]))
    x = np.array(x0, dtype=float)
    tr = Tracer(problem)
    problem.nll(x, count=True)
    tr.record(x)
    acc = np.zeros_like(x)
    bs = max(int(s["batch_size"]), 1)
    f_prev = tr.trace[-1]["nll"]
    for ep in range(1, s["maxiter"] + 1):
        order = rng.permutation(data.n)
        for b0 in range(0, data.n, bs):
            batch = data.subset(order[b0 : b0 + bs])
            g = problem.batch_grad(x, batch) / max(batch.total, 1e-300)
            if method == "adagrad":
                acc += g * g
                x -= s["lr"] * g / (np.sqrt(acc) + s["eps"])
            else:
                x -= s["lr"] * g
        problem.n_fev += 1
        f = problem.nll(x)
        tr.record(x)
        if not np.isfinite(f) or (s["ftol"] > 0 and _rel_reduction(f_prev, f) < s["ftol"]):
            break
        f_prev = f
    return x, tr.trace, len(tr.trace) - 1




def _option(name, typ, constraints, doc, engine_default=None):
    """An option, default None; ``engine_default``: its default, applied by the engine and left out of configs
    (:attr:`bncbench.registry.Hyperparameter.engine_default`)."""
    h = Hyperparameter(name, None, [*constraints, None], doc, typ)
    return h if engine_default is None else dataclasses.replace(h, default=engine_default, engine_default=True)


def _defaults(options: tuple, engine: bool = False, **values) -> tuple:
    """``options`` with the given defaults: one optimizer's own (the registry is their one home; the
    optimizers read them from there, :func:`declared_defaults`); ``engine``: defaults the engine applies,
    left out of configs and task keys (:attr:`bncbench.registry.Hyperparameter.engine_default`)."""
    unknown = set(values) - {h.name for h in options}
    assert not unknown, f"no such options: {unknown}"
    return tuple(dataclasses.replace(h, default=values[h.name], engine_default=engine or h.engine_default)
                 if h.name in values else h for h in options)


def declared_defaults(name: str, engine: bool = True) -> dict:
    """The options optimizer ``name`` declares with a default other than None: what it runs with.

    :func:`optimize` hands the optimizer these, overridden by the options given (``patience``,
    ``validation_seed`` and ``validation_start`` are read by :func:`bncbench.engine.fit.fit_ccbn`
    through :func:`option_value`).

    Parameters
    ----------
    name : str
        A name registered in :data:`bncbench.components.OPTIMIZERS`.
    engine : bool, default=True
        False: without the defaults the engine applies itself (``engine_default``: ``maxls``,
        ``patience``, ``blas_threads``, Nash's tolerances, ...), that is, those the optimizer's typed
        schema carries into a composed option (a model's ``optimizer_options``, and so its task key,
        holds an engine default only where a config states it). A plain
        ``conf/optimizer/<name>.yaml`` states none of them.

    Returns
    -------
    dict
        ``{option: default}`` in declaration order.
    """
    return {h.name: h.default for h in OPTIMIZERS[name].hyperparameters
            if h.default is not None and (engine or not h.engine_default)}


def engine_options(options: dict | None = None) -> dict:
    """The engine options (:data:`ENGINE_KEYS`) as given in ``options`` unless None, else their declared defaults.

    Every optimizer declares them alike (:data:`bncbench.engine.loss.ENGINE_OPTIONS`, their defaults' one home).

    Parameters
    ----------
    options : dict or None
        Optimizer options (other keys are ignored).

    Returns
    -------
    dict
        ``{"backend": ..., "compress": ..., "two_class": ..., "materialize": ...}``.
    """
    given = options or {}
    return {h.name: h.default if given.get(h.name) is None else given[h.name] for h in ENGINE_OPTIONS}


def option_value(name: str, options: dict | None, key: str):
    """Option ``key`` of optimizer ``name``: as given in ``options`` unless None, else its declared default.

    Parameters
    ----------
    name : str
        A name registered in :data:`bncbench.components.OPTIMIZERS`.
    options : dict or None
        The options given.
    key : str
        One of the optimizer's options.

    Returns
    -------
    object
        The value (None when neither given nor declared).
    """
    value = (options or {}).get(key)
    return declared_defaults(name).get(key) if value is None else value


_COMMON = (
    _option("stop", str, [options(STOPS)], "stopping preset: ebnc (L-BFGS-B's factr 1e7) or paper (§7)"),
    _option("ftol", float, [finite(0.0)], "relative-reduction tolerance (overrides the preset)"),
    _option("gtol", float, [finite(0.0)], "gradient max-norm tolerance (overrides the preset)"),
    _option("maxiter", int, [integer(0)], "iteration limit (sgd: epochs)"),
    _option("blas_threads", int, [integer(1)], "BLAS threads while optimizing (None from Python: the process's "
            "setting)", engine_default=1),
    *ENGINE_OPTIONS,
    _option("validation_fraction", float, [Interval(Real, 0, 1, closed="neither")],
            "early stopping: hold out this stratified fraction of the training rows and return the iterate of "
            "lowest held-out error (off by default)"),
    _option("patience", int, [integer(1)], "early stopping: iterations after the best one before stopping",
            engine_default=10),
    _option("validation_seed", int, [integer(0)], "early stopping: seed of the held-out split", engine_default=0),
    _option("validation_start", str, [options(VALIDATION_STARTS)], "early stopping: count the generative "
            "start on all the training rows ('all') or on the training part only ('training_part': "
            "the held-out rows shape nothing but the stop)", engine_default=VALIDATION_STARTS[0]),
    _option("grid", Any, [dict], "hyperparameters of the chosen components chosen on the held-out part: "
            "{name: [values]}, one early-stopped fit per point, the lowest held-out error kept (needs "
            "validation_fraction; bncbench/engine/tuning.py)"),
)
OPTIMIZERS.register("lbfgs", label="", hyperparameters=_defaults((
    *_COMMON, _option("history", int, [integer(1)], "L-BFGS memory"),
    _option("maxfun", int, [integer(1)], "evaluation limit (default 20 maxiter)"),
    _option("maxls", int, [integer(1)], "line-search steps per iteration (L-BFGS-B 3.0's Fortran, which "
            "the EBNC code runs, stops at 20)", engine_default=40),
    _option("uniform_offset", bool, [bool], "stop on NLL - N ln nc, the EBNC code's objective (changes only the "
            "relative stopping test; default false)"),
    _option("driver", str, [options(DRIVERS)], "L-BFGS-B's iteration (speed only): compact (its memory as the "
            "compact inverse, two passes over the pairs an iteration; iterates equal to rounding) or setulb "
            "(scipy's routine: minimize's iterates bit for bit)", engine_default=next(iter(DRIVERS)))),
    stop="ebnc", history=10))(lbfgs)
OPTIMIZERS.register("cg", label=" [CG]", hyperparameters=_defaults(_COMMON, stop="ebnc"))(cg)
OPTIMIZERS.register("cgb", label=" [CGB]", hyperparameters=_defaults((
    *_COMMON, _option("xtol", float, [finite(0.0)], "Brent's relative precision")), stop="ebnc", xtol=0.0002))(cgb)
OPTIMIZERS.register("bfgs", label=" [BFGS]", hyperparameters=_defaults((
    *_COMMON, _option("max_params", int, [integer(1)], "refuse larger problems")), stop="ebnc", max_params=10000))(bfgs)
OPTIMIZERS.register("sgd", label=" [SGD]", hyperparameters=_defaults((
    *_COMMON, _option("method", str, [options(("adagrad", "sgd"))], "adagrad or sgd"),
    _option("lr", float, [finite(0.0)], "learning rate"),
    _option("batch_size", int, [integer(1)], "minibatch size"),
    _option("seed", int, [integer(0)], "shuffling seed"),
    _option("eps", float, [finite(0.0)], "AdaGrad's epsilon", engine_default=1e-8)),
    method="adagrad", lr=0.1, batch_size=256, maxiter=20, seed=0))(sgd)


def optimize(name: str, problem: Problem, x0: np.ndarray,
             options: dict[str, Any] | None = None) -> tuple[np.ndarray, list[dict], int]:
    """Run optimizer ``name`` from ``x0``; returns ``(x, trace, n_iter)``.

    ``options["blas_threads"]`` (declared default 1) limits the BLAS threads for the
    duration (see the module docstring); the other options go to the optimizer.

    Parameters
    ----------
    name : str
        A name registered in :data:`bncbench.components.OPTIMIZERS`.
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point (converted to float).
    options : dict, optional
        The optimizer's options (see the module docstring), over its declared defaults
        (:func:`declared_defaults`); not modified.

    Returns
    -------
    x : ndarray of shape (n_params,)
        The final iterate.
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Iterations (epochs for ``sgd``).

    Raises
    ------
    BNCBenchError
        If ``name`` is not registered, ``blas_threads`` is neither None nor a positive integer, or
        the optimizer rejects its options.
    """
    run = OPTIMIZERS[name].obj
    opts = {**declared_defaults(name), **(options or {})}
    threads = opts.pop("blas_threads")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, (int, np.integer))
                                or threads < 1):
        raise BNCBenchError(f"blas_threads must be a positive integer or None, got {threads!r}")
    with contextlib.ExitStack() as stack:
        if threads is not None and not _blas_at(int(threads)):
            stack.enter_context(blas_controller().limit(limits=int(threads), user_api="blas"))
        try:
            out = run(problem, np.asarray(x0, dtype=float), opts)
        except EarlyStop:
            out = None
    monitor = problem.monitor
    if monitor is None:
        return out
    return monitor.best_x, problem.tracer.trace, monitor.best_iter


# --- Nash's CG and BFGS as R's optim runs them (Feelders & Ivanovs, §4; bncbench/engine/nash.py) ----

def _nash_settings(problem: Problem, opts: dict | None, known: dict) -> tuple[dict, float, float]:
    """Options of the Nash optimizers (R's defaults where absent) and the evaluation costs."""
    o = dict(opts or {})
    costs = o.pop("flop_costs", None)
    s = {"maxiter": None, "reltol": None, "abstol": None, **known}  # declared in the registrations
    for k in list(o):
        v = o.pop(k)
        if k in ENGINE_KEYS or k in VALIDATION_KEYS:
            continue
        if k not in s:
            raise BNCBenchError(f"unknown optimizer option {k!r}; known: {', '.join(sorted([*s, 'flop_costs']))}")
        if v is not None:
            s[k] = v
    s["maxiter"] = int(s["maxiter"])
    if s["maxiter"] < 0:
        raise BNCBenchError("maxiter must be >= 0")
    if costs is None and hasattr(problem.pmap, "flop_costs"):
        costs = problem.pmap.flop_costs(problem.cll.data)
    elif callable(costs):
        costs = costs(problem)
    cost_cll, cost_grad = (0.0, 0.0) if costs is None else (float(costs[0]), float(costs[1]))
    return s, cost_cll, cost_grad


def _nash_run(algo, problem: Problem, x0: np.ndarray, s: dict, cost_cll: float, cost_grad: float, **kw):
    tr = Tracer(problem)
    if s["maxiter"] == 0:
        problem.fg(x0)
        tr.record(x0)
        return x0, tr.trace, 0

    def on_iteration(x, rec):
        tr.record(x, **{k: rec[k] for k in ("n_f", "n_g", "count_cll", "flops", "flops_total")})

    res = algo(problem.f, lambda x: problem.fg(x)[1], x0, maxit=s["maxiter"], reltol=float(s["reltol"]),
               abstol=float(s["abstol"]), cost_cll=cost_cll, cost_grad=cost_grad, on_iteration=on_iteration, **kw)
    return res.x, tr.trace, len(tr.trace) - 1


def cg_nash(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """Nash's conjugate gradients as R's ``optim(method="CG")`` (:func:`bncbench.engine.nash.cgmin`).

    Polak-Ribiere directions (``cg_type`` 2) by default, the acceptable-point search and R's
    parabola step; stops as R does (gradient test ``reltol * r * sqrt(reltol)``, ``abstol``,
    ``maxiter`` gradient evaluations, default 100). Each trace record (one per gradient
    evaluation) adds ``n_f``, ``n_g``, ``count_cll``, ``flops`` and ``flops_total``
    (:mod:`bncbench.engine.flops`: where the evaluation costs come from).

    Parameters
    ----------
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point.
    opts : dict or None
        ``maxiter`` (default 100), ``reltol`` (sqrt(eps)), ``abstol`` (-inf), ``cg_type`` (2),
        ``parabola`` (``"r"``, or ``"nash"``), ``flop_costs``; engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        R's ``par``.
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Gradient evaluations after the first.

    Raises
    ------
    BNCBenchError
        If an option is unknown or out of range.
    """
    s, cc, cg_ = _nash_settings(problem, opts, {"cg_type": None, "parabola": None})  # declared
    return _nash_run(nash.cgmin, problem, x0, s, cc, cg_, type=int(s["cg_type"]), parabola=s["parabola"])


def bfgs_nash(problem: Problem, x0: np.ndarray, opts: dict | None) -> tuple[np.ndarray, list[dict], int]:
    """Nash's variable metric method as R's ``optim(method="BFGS")`` (:func:`bncbench.engine.nash.vmmin`).

    The acceptable-point search from step 1; stops as R does (relative reduction ``reltol``,
    ``abstol``, ``maxiter`` gradient evaluations, default 100). The inverse Hessian is dense (its
    lower triangle, as R keeps it): problems with more than ``max_params`` parameters (default
    10000, 400 MB) are refused. The
    trace records as :func:`cg_nash`'s.

    Parameters
    ----------
    problem : Problem
        The objective.
    x0 : ndarray of shape (n_params,)
        Starting point.
    opts : dict or None
        ``maxiter`` (default 100), ``reltol`` (sqrt(eps)), ``abstol`` (-inf), ``max_params``
        (10000), ``flop_costs``; engine options are ignored.

    Returns
    -------
    x : ndarray of shape (n_params,)
        R's ``par``.
    trace : list of dict
        The per-iteration trace, iteration 0 at ``x0``.
    n_iter : int
        Gradient evaluations after the first.

    Raises
    ------
    BNCBenchError
        If an option is unknown or out of range, or the problem has more than ``max_params``
        parameters.
    """
    s, cc, cg_ = _nash_settings(problem, opts, {"max_params": None})  # declared in the registration
    if x0.size > int(s["max_params"]):
        raise BNCBenchError(f"bfgs_nash stores a dense {x0.size}x{x0.size} inverse Hessian (its lower triangle), "
                            f"above max_params={int(s['max_params'])}; raise optimizer.max_params or use cg_nash")
    return _nash_run(nash.vmmin, problem, x0, s, cc, cg_)


_ENGINE_OPTIONS = tuple(h for h in _COMMON if h.name in (*ENGINE_KEYS, *VALIDATION_KEYS, "blas_threads", "maxiter",
                                                         "grid"))
_NASH = (
    _option("reltol", float, [finite(0.0)], "R's reltol (sqrt(eps))", engine_default=nash.RELTOL),
    _option("abstol", float, [Interval(Real, None, None, closed="both")], "R's abstol (-inf: none)",
            engine_default=nash.ABSTOL),
    _option("flop_costs", Any, [callable, tuple, list], "(cost_CLL, cost_grad) or a callable problem -> them, "
            "for the trace's flops (default: the parameter map's flop_costs, else 0)"),
)
_NASH_MAXITER = _defaults(_ENGINE_OPTIONS, engine=True, maxiter=nash.MAXIT)  # R's maxit
OPTIMIZERS.register("cg_nash", label=" [CG-Nash]", hyperparameters=(
    *_NASH_MAXITER, *_NASH, _option("cg_type", int, [integer(1, 3)], "1 Fletcher-Reeves, 2 Polak-Ribiere, "
                                    "3 Beale-Sorenson", engine_default=2),
    _option("parabola", str, [options(("r", "nash"))], "r: R's parabola step (half the acceptable step); nash: "
            "through the search's starting value", engine_default="r")))(cg_nash)
OPTIMIZERS.register("bfgs_nash", label=" [BFGS-Nash]", hyperparameters=_defaults((
    *_NASH_MAXITER, *_NASH, _option("max_params", int, [integer(1)], "refuse larger problems")),
    max_params=10000))(bfgs_nash)


_BLAS = []
_BLAS_LIBS = []


def _blas_at(threads: int) -> bool:
    """Whether every BLAS library of the process runs ``threads`` threads already (the limit would change nothing; it
    costs ~35 us to set and restore: a percent of a small fit)."""
    if not _BLAS_LIBS:
        _BLAS_LIBS.append(blas_controller().select(user_api="blas").lib_controllers)
    libs = _BLAS_LIBS[0]
    return bool(libs) and all(lib.num_threads == threads for lib in libs)


def blas_controller():
    """The process's threadpoolctl controller, made once (a ``threadpool_limits`` call scans the loaded libraries
    again: about 1 ms of CPU and up to 10 ms of wall time per fit on a loaded machine, as long as a small fit).

    Returns
    -------
    threadpoolctl.ThreadpoolController
        Made at the first call (after numpy's and scipy's BLAS are loaded: this module imports scipy.optimize).
    """
    if not _BLAS:
        from threadpoolctl import ThreadpoolController  # a scikit-learn dependency

        _BLAS.append(ThreadpoolController())
    return _BLAS[0]
