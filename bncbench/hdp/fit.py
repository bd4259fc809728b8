"""Fitting HDP estimates: :func:`fit_hdp` and the per-tree driver :func:`_run`."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Sequence

import numpy as np

from bncbench.errors import BNCBenchError
from bncbench.hdp.kernels import AGG_DEPTH, _record, _run_tree
from bncbench.hdp.stirling import _STIRLING
from bncbench.hdp.estimates import HDPTables
from bncbench.hdp.tree import (
    TYINGS,
    _build_tree,
    _cmi_order,
    _frozen,
    _groups,
    _initialise,
    _pairs,
    _reciprocal_offsets,
    _Tree,
    check_invariants,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def _run(tree: _Tree, iterations, burn_in, conc_every, window, debug):
    nn, K = tree.n.shape
    Nm = tree.n.sum(axis=1)
    Tm = tree.t.sum(axis=1)
    acc = np.zeros((nn, K))
    acc_n = np.zeros(1, dtype=np.int64)
    p = np.empty((nn, K))
    n_int = int(tree.offsets[-2])  # the first leaf
    frozen = _frozen(tree)
    live = np.flatnonzero(~frozen[:n_int])
    frozen_int = np.flatnonzero(frozen[:n_int])
    psum = np.zeros((n_int, K))
    max_t = np.array([int(tree.t.max()) if tree.t.size else 0], dtype=np.int64)
    rows = tree.data_max + window + 2
    pairs = _pairs(tree, window)
    roff = _reciprocal_offsets(tree, window)
    agg_row = np.full(tree.alpha.shape[0], -1, dtype=np.int64)
    big = np.flatnonzero(tree.gsize > 4 * AGG_DEPTH)
    big = big[big > 0]
    agg_row[big] = np.arange(big.size)
    it = 0
    while it < iterations:
        up_t, up_n = _STIRLING.ensure(rows, max_t[0] + 2 * window + 2)
        it = _run_tree(tree.parent, tree.grp, tree.gsize, agg_row, big.size, pairs,
                       tree.n, tree.t, Nm, Tm, tree.alpha, up_t, up_n, roff, tree.rng, acc, acc_n, p, psum, live, frozen_int,
                       n_int,
                       it, iterations, burn_in, conc_every, window, max_t, debug)
        if debug:
            check_invariants(tree)
            assert np.array_equal(Nm, tree.n.sum(axis=1)) and np.array_equal(Tm, tree.t.sum(axis=1))
    if acc_n[0] == 0:  # no post-burn-in iteration: estimates of the final state
        _record(tree.parent, tree.grp, tree.n, Nm, tree.alpha, p, np.arange(nn), acc, np.empty(nn))  # acc = p
        acc_n[0] = 1
    tree.est = acc / acc_n[0]


def fit_hdp(
    X: ArrayLike,
    y: ArrayLike,
    structure: Sequence[Sequence[int] | None],
    cards: ArrayLike,
    n_classes: int,
    *,
    iterations: int = 5000,
    tying: str = "level",
    seed: int = 0,
    burn_in: int | None = None,
    debug: bool = False,
    conc_every: int = 5,
    window: int = 10,
    parent_order: str = "cmi",
    prior_m: float = 1.0,
    n_jobs: int = 1,
) -> HDPTables:
    """Fit HDP estimates of every probability table of a BNC.

    Parameters
    ----------
    X : int array (N, n)
        Attribute codes in ``[0, cards[i])``; rows with an out-of-range code
        in a table's child or parents are left out of that table.
    y : int array (N,)
        Class codes in ``[0, n_classes)``.
    structure : list
        Attribute parents of every attribute (class implicit); ``None`` leaves
        an attribute out of the model (e.g. not selected by SkDB).
    cards : array-like of int (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    iterations : int
        Gibbs iterations (the reference default 5,000; the paper used 50,000).
    tying : {"level", "single", "same_parent", "none"}
        Concentration tying (§4.4.2).
    seed : int
        Seed of the random streams (one per tree); results are identical for
        equal seeds whatever ``n_jobs``.
    burn_in : int, optional
        Iterations before averaging; default ``min(1000, iterations // 10)``.
    debug : bool
        Check the sampler invariants after every sweep (slow).
    conc_every : int
        Concentrations resampled every this many iterations (reference: 5).
    window : int
        Pseudo-counts are sampled within +-window of their value (paper: 10).
    parent_order : {"cmi", "structure"}
        Tree order of the attribute parents: by decreasing I(X_i; X_p | Y)
        (the paper, §3.3) or as listed in ``structure``.
    prior_m : float
        m of the class prior's m-estimate (1 as the reference classifiers).
    n_jobs : int
        Threads sampling trees in parallel (``-1``: all cores).

    Returns
    -------
    HDPTables
        The averaged estimates of every modelled attribute, with ``fit_seconds`` and ``info``
        (node count, final concentrations per tree, shape of the shared Stirling tables) set.

    Raises
    ------
    BNCBenchError
        If ``tying`` or ``parent_order`` is unknown, ``iterations`` is negative, ``conc_every``
        or ``window`` is below 1, or ``X`` is not two-dimensional with one ``structure`` entry
        per column and one class per row.
    """
    X = np.ascontiguousarray(X, dtype=np.int64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    cards = np.asarray(cards, dtype=np.int64)
    n_classes = int(n_classes)
    if tying not in TYINGS:
        raise BNCBenchError(f"unknown tying {tying!r}; choose one of {', '.join(TYINGS)}")
    if parent_order not in ("cmi", "structure"):
        raise BNCBenchError(f"unknown parent_order {parent_order!r}; choose cmi or structure")
    iterations = int(iterations)
    if iterations < 0 or conc_every < 1 or window < 1:
        raise BNCBenchError("iterations must be >= 0, conc_every and window >= 1")
    if burn_in is None:
        burn_in = min(1000, iterations // 10)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or len(structure) != X.shape[1]:
        raise BNCBenchError("X must be (N, n) with one structure entry per column and N class values")
    start = time.perf_counter()
    ok_y = (y >= 0) & (y < n_classes)
    counts = np.bincount(y[ok_y], minlength=n_classes).astype(float)
    log_prior = np.log((counts + prior_m / n_classes) / (counts.sum() + prior_m))

    trees = []
    for i, parents in enumerate(structure):
        if parents is None:
            continue
        parents = tuple(int(p) for p in parents)
        if parent_order == "cmi":
            parents = _cmi_order(X[ok_y], y[ok_y], cards, n_classes, i, parents)
        tree = _build_tree(X, y, cards, n_classes, i, parents)
        tree.grp, tree.alpha, tree.gsize = _groups(tree, tying)
        _initialise(tree)
        trees.append(tree)
    states = np.random.SeedSequence(int(seed)).spawn(max(len(trees), 1))
    for tree, ss in zip(trees, states):
        tree.rng = ss.generate_state(4, dtype=np.uint64)
        if debug:
            check_invariants(tree)

    jobs = (os.cpu_count() or 1) if n_jobs == -1 else max(1, int(n_jobs))
    args = (iterations, int(burn_in), int(conc_every), int(window), bool(debug))
    by_size = sorted(trees, key=lambda t: -t.n_nodes * t.card)
    if jobs == 1 or len(trees) <= 1:
        for tree in by_size:
            _run(tree, *args)
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for f in [pool.submit(_run, tree, *args) for tree in by_size]:
                f.result()
    tables = HDPTables(
        structure=[None if p is None else tuple(int(v) for v in p) for p in structure],
        cards=cards, n_classes=n_classes, trees=trees, log_prior=log_prior,
        iterations=iterations, burn_in=int(burn_in), tying=tying, seed=int(seed),
    )
    tables.fit_seconds = time.perf_counter() - start
    tables.info = {
        "n_nodes": tables.n_nodes(),
        "concentrations": [t.alpha.copy() for t in trees],
        "stirling_table_shape": (_STIRLING.up_t.shape[0], _STIRLING.up_n.shape[0]),
    }
    return tables
