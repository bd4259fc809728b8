"""Per-parameter training-row counts: the weights of the authors' per-row L2 penalty.

Zaidi et al.'s implementation of LRⁿ and DBLⁿ (github ``nayyarzaidi/ALR``; deep-broad learning,
C = 10⁻²) adds its L2 penalty *per training row over the parameters that row uses*::

    R = lam/2 sum_i sum_{k used by row i} (theta_k - c)^2 = lam/2 sum_k n_k (theta_k - c)^2

where ``n_k`` is the number of training instances whose score uses parameter ``k`` for some class:
``N`` for the class parameters, and for a parameter of the row of value combination ``x_S`` (one
per class, or tied over classes) the number of training instances with that ``x_S``, whatever
their class. :func:`row_counts` counts the instances that use every row of ``Phi`` (through the
design's own kernel, so every layout is covered: one network, a geometric ensemble, AnJE's
subsets); :func:`parameter_counts` turns them into ``n_k`` for a parameter map, a tied weight
(:class:`~bncbench.engine.params.Weighted` at levels 1-3) counting each instance once however
many of its entries the weight multiplies. ``reg="rows"`` and ``reg="rows_one"``
(:class:`~bncbench.engine.problem.Problem`) use them.
"""

from __future__ import annotations

import numpy as np

from bncbench.engine.loss import Data
from bncbench.errors import BNCBenchError


def row_counts(data: Data, n_rows: int) -> np.ndarray:
    """The training instances that use each row of ``Phi``.

    Parameters
    ----------
    data : Data
        Training design rows and class counts (compressed or not).
    n_rows : int
        Rows of ``Phi`` the design refers to (the layout's ``n_trained``).

    Returns
    -------
    ndarray of shape (n_rows,)
        ``A.T @ csum``: per row, the instances (of every class) whose design row uses it; exact
        integers as floats. Computed by the design's one-class NLL kernel at ``Phi = 0`` with no
        class counts, whose gradient is exactly that sum.
    """
    G = np.zeros((int(n_rows), 1))
    data.design.nll(np.zeros((int(n_rows), 1)), np.zeros((data.n, 1)), data.csum, G, True)
    return G[:, 0]


def entry_parameters(pmap) -> np.ndarray:
    """The parameter of every entry (trained row, class) of ``Phi`` under a parameter map.

    Parameters
    ----------
    pmap : ParamMap
        A map with a tying index ``T`` (n_rows, n_classes) (tied weights), or one parameter per
        trained row and class in row-major order (``n_params == n_trained * n_classes``).

    Returns
    -------
    ndarray of shape (n_trained, n_classes)
        Index into the parameter vector.

    Raises
    ------
    BNCBenchError
        If the map has neither a tying index nor one parameter per entry.
    """
    nt, Y = int(pmap.nt), int(pmap.Y)
    T = getattr(pmap, "T", None)
    if T is not None:
        return np.asarray(T[:nt], dtype=np.int64)
    if int(pmap.n_params) != nt * Y:
        raise BNCBenchError(f"the per-row penalty needs one parameter per row and class or a tying index; "
                            f"{type(pmap).__name__} has {pmap.n_params} parameters for {nt} rows x {Y} classes")
    return np.arange(nt * Y, dtype=np.int64).reshape(nt, Y)


def parameter_counts(pmap, counts: np.ndarray) -> np.ndarray:
    """``n_k`` of every parameter: the training instances whose scores use it.

    Parameters
    ----------
    pmap : ParamMap
        The parameter map (:func:`entry_parameters`).
    counts : ndarray of shape (n_trained,)
        Instances per trained row (:func:`row_counts`).

    Returns
    -------
    ndarray of shape (n_params,)
        Per parameter, the sum of ``counts`` over the rows it appears in, each row once
        however many of its classes share the parameter. (A parameter's rows never meet in one
        instance: tied weights lie within one factor, whose rows are exclusive.)
    """
    P = entry_parameters(pmap)
    S = np.sort(P, axis=1)
    first = np.ones(S.shape, dtype=bool)
    first[:, 1:] = S[:, 1:] != S[:, :-1]
    w = np.broadcast_to(np.asarray(counts, dtype=float)[:, None], S.shape)
    return np.bincount(S[first], weights=w[first], minlength=int(pmap.n_params))


def penalty_weights(data: Data, pmap) -> np.ndarray:
    """The per-parameter weights ``n_k`` of the per-row penalty for training ``data``.

    Parameters
    ----------
    data : Data
        Training design rows and class counts.
    pmap : ParamMap
        The parameter map.

    Returns
    -------
    ndarray of shape (n_params,)
        :func:`parameter_counts` of :func:`row_counts`.
    """
    return parameter_counts(pmap, row_counts(data, pmap.nt))
