"""Flop counts of Feelders & Ivanovs (§4, §5): per iteration, and per evaluation in each parameter space.

An iteration of BFGS costs ``12 r^2 + 8 r + (4 r + cost_CLL) count_CLL + cost_grad`` flops and
one of CG or CGB ``10 r + (4 r + cost_CLL) count_CLL + cost_grad`` (§4;
:func:`bncbench.engine.nash.bfgs_flops`, :func:`bncbench.engine.nash.cg_flops`), with ``r`` the
parameter count, ``count_CLL`` the CLL evaluations of the iteration and the evaluation costs of
§5:

* LR spaces (§5.1; the proposed mapping and Roos's): ``cost_CLL = |Z| (d0 - 1) + N (d0 + 2)``,
  ``cost_grad = |Z| d0 + 2 N d0``, with ``|Z|`` the number of 1s in the ``N x k`` 0/1 design
  (the intercept's column included). For Roos's mapping every row has ``1 + n - |pa(0)|`` ones.
* BN space (§5.2): ``cost_CLL = 3 |beta| + N (n d0 + 2 d0 + 2)``,
  ``cost_grad = 3 |beta| + N (2 n d0 + n + (2 d0 + 1)(3 + d_1 + ... + d_n))``.

**The seam.** The engine's Nash optimizers (``cg_nash``, ``bfgs_nash`` in
:mod:`bncbench.engine.optim`) take the two evaluation costs from, in this order: the optimizer
option ``flop_costs`` (a callable ``problem -> (cost_CLL, cost_grad)``, or a pair of numbers);
the parameter map's method ``flop_costs(data) -> (cost_CLL, cost_grad)`` when it has one (``data``
the problem's :class:`bncbench.engine.loss.Data`); else both are 0 and the traces' ``flops``
count the optimizers' own vector and matrix work only. :func:`bn_space_costs` and
:func:`roos_space_costs` are such callables for problems in BN space (the ``extended`` map) and in
Roos's space; :class:`bncbench.engine.lr_mapping.LRMapping` has the method.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def lr_costs(n_ones: int, n: int, n_classes: int) -> tuple[float, float]:
    """``(cost_CLL, cost_grad)`` of multinomial logistic regression on a sparse 0/1 design (§5.1).

    Parameters
    ----------
    n_ones : int
        ``|Z|``: the 1s of the design matrix, intercept column included.
    n : int
        ``N``: training instances.
    n_classes : int
        ``d0``.

    Returns
    -------
    cost_cll, cost_grad : float
        ``|Z|(d0 - 1) + N(d0 + 2)`` and ``|Z| d0 + 2 N d0``.
    """
    d0 = float(n_classes)
    return float(n_ones) * (d0 - 1) + n * (d0 + 2), float(n_ones) * d0 + 2.0 * n * d0


def roos_ones(n: int, n_attributes: int, n_class_parents: int) -> int:
    """``|Z|`` of Roos's mapping: ``N (1 + n - |pa(0)|)`` (§5.1).

    Parameters
    ----------
    n : int
        ``N``: training instances.
    n_attributes : int
        ``n``: attributes of the canonical graph.
    n_class_parents : int
        ``|pa(0)|``.

    Returns
    -------
    int
        The 1s of Roos's design.
    """
    return int(n) * (1 + int(n_attributes) - int(n_class_parents))


def bn_costs(n_beta: int, n: int, n_classes: int, cards: Sequence[int]) -> tuple[float, float]:
    """``(cost_CLL, cost_grad)`` in BN space (softmax-parameterized theta, §5.2).

    Parameters
    ----------
    n_beta : int
        ``|beta|``: the softmax parameters.
    n : int
        ``N``: training instances.
    n_classes : int
        ``d0``.
    cards : sequence of int
        ``d_1, ..., d_n``: the attributes' domain sizes.

    Returns
    -------
    cost_cll, cost_grad : float
        ``3|beta| + N(n d0 + 2 d0 + 2)`` and
        ``3|beta| + N(2 n d0 + n + (2 d0 + 1)(3 + d_1 + ... + d_n))``.
    """
    d0 = float(n_classes)
    k = len(cards)
    dsum = float(np.sum(np.asarray(cards, dtype=float)))
    cll = 3.0 * n_beta + n * (k * d0 + 2 * d0 + 2)
    grad = 3.0 * n_beta + n * (2 * k * d0 + k + (2 * d0 + 1) * (3 + dsum))
    return cll, grad


def add_flops(trace: list, r: int, method: str, cost_cll: float, cost_grad: float) -> list:
    """Add §4's ``flops`` and ``flops_total`` to a trace of ``{"iter", "n_fev", ...}`` records.

    For optimizers whose iteration is function evaluations and then one value-and-gradient
    evaluation, all counted in ``n_fev`` (the engine's ``cgb``, ``cg``, ``bfgs``): iteration ``t``'s
    ``count_CLL`` is ``n_fev[t] - n_fev[t-1] - 1``; record 0 costs ``cost_CLL + cost_grad``.
    The Nash optimizers record their flops themselves.

    Parameters
    ----------
    trace : list of dict
        An optimizer's trace (modified in place).
    r : int
        Number of parameters.
    method : {"bfgs", "cg"}
        Which formula: BFGS's, or CG's (CG and CGB).
    cost_cll, cost_grad : float
        Flops of one CLL and one gradient evaluation.

    Returns
    -------
    list of dict
        ``trace``, each record with ``count_cll``, ``flops`` and ``flops_total``.

    Raises
    ------
    ValueError
        If ``method`` is neither ``"bfgs"`` nor ``"cg"``.
    """
    from bncbench.engine.nash import bfgs_flops, cg_flops

    if method not in ("bfgs", "cg"):
        raise ValueError(f"method must be 'bfgs' or 'cg', got {method!r}")
    per = bfgs_flops if method == "bfgs" else cg_flops
    total, prev = 0.0, None
    for rec in trace:
        if prev is None:
            rec["count_cll"] = 0
            fl = float(cost_cll) + float(cost_grad)
        else:
            rec["count_cll"] = int(rec["n_fev"]) - int(prev) - 1
            fl = per(r, rec["count_cll"], cost_cll, cost_grad)
        prev = rec["n_fev"]
        total += fl
        rec["flops"], rec["flops_total"] = fl, total
    return trace


def bn_space_costs(problem) -> tuple[float, float]:
    """§5.2's ``(cost_CLL, cost_grad)`` of an engine problem in BN space: ``flop_costs=bn_space_costs``.

    ``|beta|`` is the parameter map's ``n_params`` (the ``extended`` map's softmax parameters),
    ``N`` the training instances, ``n`` and ``d_1..d_n`` the layout's attributes and their sizes.

    Parameters
    ----------
    problem : Problem
        An engine problem over one network's layout.

    Returns
    -------
    cost_cll, cost_grad : float
        See :func:`bn_costs`.
    """
    layout = problem.pmap.layout
    return bn_costs(int(problem.pmap.n_params), int(round(problem.cll.data.total)), int(layout.n_classes),
                    [int(c) for c in layout.cards])


def roos_space_costs(problem) -> tuple[float, float]:
    """§5.1's ``(cost_CLL, cost_grad)`` of an engine problem in Roos's space: ``flop_costs=roos_space_costs``.

    The class has no parents in bncbench's structures, so ``|Z| = N (1 + n)``.

    Parameters
    ----------
    problem : Problem
        An engine problem over one network's layout.

    Returns
    -------
    cost_cll, cost_grad : float
        See :func:`lr_costs` and :func:`roos_ones`.
    """
    layout = problem.pmap.layout
    N = int(round(problem.cll.data.total))
    return lr_costs(roos_ones(N, int(layout.n_attributes), 0), N, int(layout.n_classes))
