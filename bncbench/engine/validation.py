"""Early stopping on a validation part of the training data ("cross tuning", Pernkopf et al. §5).

With ``optimizer_options={"validation_fraction": f, "patience": p}``, :func:`bncbench.engine.fit.fit_ccbn`
holds out a stratified fraction ``f`` of the training rows (:func:`split`), optimizes on the
rest, and the :class:`Validation` monitor scores every iterate on the held-out rows: its
classification error and NLL go into the trace (``val_error``, ``val_nll``), and the fit stops
``p`` iterations after the best one (lowest error, ties broken by NLL) and returns that iterate.
With ``validation_start="all"`` (the default) the generative start (the ML estimate the parameters
start from, and the count tables that lay them out) is counted on all the training rows, the
held-out ones included: a mild leak, since the held-out rows then shape the start they judge.
``validation_start="training_part"`` counts it on the training part only (:func:`start_scorer`),
so that the held-out rows influence nothing but where the fit stops (and, with a grid, which
candidate is kept). The structure is learned before, on all the training rows, either way.
Every optimizer gets this through its :class:`~bncbench.engine.optim.Tracer`; nothing in an
optimizer knows about it.
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from bncbench.engine.block_softmax import _pairwise
from bncbench.errors import BNCBenchError

KEYS = ("validation_fraction", "patience", "validation_seed", "validation_start")
"""Options of ``optimizer_options`` that set up early stopping (read by ``fit_ccbn``)."""

STARTS = ("all", "training_part")
"""``validation_start``: where the generative start of an early-stopped fit is counted (:func:`start_scorer`)."""


class EarlyStop(Exception):
    """Raised by :class:`Validation` through the tracer when the patience is spent."""


def split(y: np.ndarray, fraction: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A stratified split of rows ``0..len(y)-1``: ``round(fraction * n_c)`` rows of each class held out.

    Parameters
    ----------
    y : ndarray of shape (N,)
        Class codes.
    fraction : float
        In (0, 1).
    seed : int, default=0
        Seed of the permutation.

    Returns
    -------
    train, held_out : ndarray of int
        Sorted row positions; every class keeps at least one training row.

    Raises
    ------
    BNCBenchError
        If ``fraction`` is not in (0, 1) or nothing would be held out.
    """
    if not 0.0 < fraction < 1.0:
        raise BNCBenchError(f"validation_fraction must be in (0, 1), got {fraction!r}")
    y = np.asarray(y)
    perm = _permutation(int(seed), int(y.size))
    # of each class, its first round(fraction * n_c) rows in the permutation's order (at most n_c - 1) are held out
    held = np.zeros(y.size, dtype=np.bool_)
    if y.dtype.kind not in "iu" or not _held_rows(perm, y.astype(np.int64, copy=False), float(fraction), held):
        np.bincount(y)  # not class codes: numpy's error, as before
    train, held = np.flatnonzero(~held), np.flatnonzero(held)
    if held.size == 0:
        raise BNCBenchError(f"validation_fraction {fraction} of {y.size} training rows holds out none")
    return train, held


@functools.lru_cache(maxsize=64)
def _permutation(seed: int, n: int) -> np.ndarray:
    """``np.random.default_rng(seed).permutation(n)``, read-only, remembered: a fresh generator costs ~60 us in a fit
    (more than the rest of the split), and the folds of a dataset ask the same few (seed, size) again."""
    perm = np.random.default_rng(seed).permutation(n)
    perm.setflags(write=False)
    return perm


@numba.njit(cache=True, nogil=True)
def _held_rows(perm, y, fraction, held):  # pragma: no cover - compiled
    """Mark in ``held`` the first ``min(rint(fraction * n_c), max(n_c - 1, 0))`` rows of each class ``c`` in the order
    of ``perm`` (the former numpy form: rows grouped by class in that order by a stable sort, each one's rank within
    its class; ``tests/test_small_fit_costs.py``); False, marking nothing, if a code is negative."""
    n_cls = 0
    for i in range(y.size):
        if y[i] < 0:
            return False
        n_cls = max(n_cls, y[i] + 1)
    counts = np.zeros(n_cls, np.int64)
    for i in range(y.size):
        counts[y[i]] += 1
    take = np.empty(n_cls, np.int64)
    for c in range(n_cls):
        take[c] = np.int64(min(np.rint(fraction * counts[c]), max(counts[c] - 1, 0)))
    seen = np.zeros(n_cls, np.int64)
    for p in perm:
        c = y[p]
        if seen[c] < take[c]:
            held[p] = True
            seen[c] += 1
    return True


class Validation:
    """Scores iterates on held-out rows; remembers the best; stops after ``patience`` iterates without a better one.

    Parameters
    ----------
    pmap : ParamMap
        The parameter map (its ``phi_full`` scores the held-out rows, back-off included).
    design : RowTable or SubsetDesign
        The held-out rows' design (:func:`~bncbench.engine.row_table.design_of`).
    y : ndarray of shape (n,)
        Their class codes.
    patience : int
        Iterates after the best one before :class:`EarlyStop` is raised.

    Attributes
    ----------
    best_x : ndarray or None
        The best iterate so far.
    best_iter : int
        Its iteration number.
    """

    def __init__(self, pmap, design, y: np.ndarray, patience: int) -> None:
        self.pmap, self.design = pmap, design
        self.y = np.asarray(y, dtype=np.int64)
        self.patience = int(patience)
        self.best_x, self.best_iter, self._best, self._seen = None, 0, None, 0

    def __call__(self, x: np.ndarray) -> dict:
        """The held-out error and NLL at ``x``; updates the best iterate.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The iterate (iteration ``k``: the ``k``-th call).

        Returns
        -------
        dict
            ``{"val_error": ..., "val_nll": ...}``.
        """
        S = self.design.scores(self.pmap.phi_full(x))
        err, nll = error_and_nll(S, self.y)
        k = self._seen
        self._seen += 1
        if self._best is None or (err, nll) < self._best:
            self._best, self.best_x, self.best_iter = (err, nll), np.array(x, dtype=float), k
        return {"val_error": err, "val_nll": nll}

    @property
    def exhausted(self) -> bool:
        """Whether ``patience`` iterates have followed the best one."""
        return self._seen - 1 - self.best_iter >= self.patience


def start_scorer(scorer, codes: np.ndarray, y: np.ndarray, train: np.ndarray, start: str | None):
    """The generative estimate an early-stopped fit starts from: ``scorer``, or its counts on the training part.

    Parameters
    ----------
    scorer : CountScorer
        The generative estimate, counted on all the training rows.
    codes : ndarray of shape (N, n_attributes)
        All the training codes.
    y : ndarray of shape (N,)
        Their class codes.
    train : ndarray of int
        The training part's rows (:func:`split`).
    start : {"all", "training_part"} or None
        ``validation_start``; None is ``"all"``.

    Returns
    -------
    scorer
        ``scorer`` itself for ``"all"``; for ``"training_part"`` a copy whose count tables (same
        structure, cardinalities, classes and back-off rule, same ``m``) are counted on ``train`` only.

    Raises
    ------
    BNCBenchError
        If ``start`` is not one of :data:`STARTS`, or ``"training_part"`` is asked of a scorer that
        is not one network's count tables.
    """
    import dataclasses

    start = STARTS[0] if start is None else start
    if start not in STARTS:
        raise BNCBenchError(f"validation_start must be one of {', '.join(STARTS)}; got {start!r}")
    if start == STARTS[0]:
        return scorer
    tables = getattr(scorer, "tables", None)
    if tables is None or getattr(scorer, "members", None) is not None or not dataclasses.is_dataclass(scorer):
        raise BNCBenchError(f"validation_start='training_part' recounts one network's tables; a "
                            f"{type(scorer).__name__} has none (use validation_start='all')")
    fresh = type(tables)(tables.structure, tables.cards, tables.n_classes, backoff=tables.backoff)
    rows = np.asarray(train)
    return dataclasses.replace(scorer, tables=fresh.fit(codes[np.ix_(rows, scorer.columns)], y[rows]))
def error_and_nll(S: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The error rate and the NLL of scores ``S`` for classes ``y``, as the former numpy form computes them.

    That form (``tests/test_small_fit_costs.py`` keeps it as the reference) is
    ``np.count_nonzero(np.argmax(S, axis=1) != y) / n`` (``np.mean``'s value: an exact count divided by ``n``) and
    ``(logsumexp_rows(S) - S[rows, y]).sum()``; here the maxima, counts, gathers and sums run in compiled passes, in
    numpy's summation order, around numpy's own ``exp``, ``log1p`` and ``log`` (numba's differ in the last bit), so
    both values are the former ones to the bit, in 6 calls instead of about 20 (a validation scores every iterate).

    Parameters
    ----------
    S : ndarray of shape (n, K)
        Scores, ``n >= 1``.
    y : ndarray of shape (n,), int64
        Class codes in ``[0, K)``.

    Returns
    -------
    err, nll : float
    """
    S = np.ascontiguousarray(S, dtype=np.float64)
    n, K = S.shape
    D = np.empty((n, K))
    mx = np.empty((n, 1))
    m = np.empty((n, 1))
    Sy = np.empty(n)
    wrong = _shift_rows(S, y, D, mx, m, Sy)
    np.exp(D, out=D)
    s = np.empty((n, 1))
    _row_sums(D, m, s)
    return float(wrong / n), float(_nll_sum(np.log1p(s), np.log(m), mx, Sy))


@numba.njit(cache=True, nogil=True)
def _shift_rows(S, y, D, mx, m, Sy):  # pragma: no cover - compiled
    """Per row: ``mx`` its maximum, ``m`` the number of entries equal to it, ``D = S - mx`` with -inf at those,
    ``Sy`` the score of its class; returns the rows whose first maximal class (``np.argmax``) is not theirs."""
    n, K = S.shape
    wrong = 0
    for i in range(n):
        best = 0
        top = S[i, 0]
        for k in range(1, K):
            v = S[i, k]
            if top != top:
                break
            if v > top or v != v:
                best, top = k, v
        if best != y[i]:
            wrong += 1
        cnt = 0
        for k in range(K):
            if S[i, k] == top:
                cnt += 1
                D[i, k] = -np.inf
            else:
                D[i, k] = S[i, k] - top
        mx[i, 0] = top
        m[i, 0] = cnt
        Sy[i] = S[i, y[i]]
    return wrong


@numba.njit(cache=True, nogil=True)
def _row_sums(E, m, s):  # pragma: no cover - compiled
    """``s = sum of the row`` (numpy's pairwise order), divided by ``m`` where it is not 0."""
    n, K = E.shape
    flat = E.ravel()
    for i in range(n):
        t = _pairwise(flat, i * K, (i + 1) * K, 1)
        s[i, 0] = t if t == 0 else t / m[i, 0]


@numba.njit(cache=True, nogil=True)
def _nll_sum(l1p, lm, mx, Sy):  # pragma: no cover - compiled
    """``((log1p(s) + log m + mx) - Sy).sum()`` in numpy's order."""
    n = Sy.size
    d = np.empty(n)
    for i in range(n):
        d[i] = ((l1p[i, 0] + lm[i, 0]) + mx[i, 0]) - Sy[i]
    return _pairwise(d, 0, n, 1)


def logsumexp_rows(S: np.ndarray) -> np.ndarray:
    """``scipy.special.logsumexp(S, axis=1)`` as scipy 1.17 computes it, without its array-API overhead.

    The maxima of a row are taken out of its sum (``log1p(s / m) + log m + max``, ``m`` the number of
    maxima), as scipy does, so the values are scipy's to the bit (``tests/test_margin_kernel.py``):
    a validation's NLL breaks ties between iterates of equal held-out error. On a small fit scipy's
    function took a fifth of the time.

    Parameters
    ----------
    S : ndarray of shape (n, K)
        Finite scores.

    Returns
    -------
    ndarray of shape (n,)
    """
    mx = S.max(axis=1, keepdims=True)
    top = S == mx
    m = top.sum(axis=1, keepdims=True).astype(S.dtype)
    s = np.exp(np.where(top, -np.inf, S) - mx).sum(axis=1, keepdims=True)
    s = np.where(s == 0, s, s / m)
    return (np.log1p(s) + np.log(m) + mx)[:, 0]
