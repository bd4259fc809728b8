"""Supervised Fayyad–Irani MDL discretization, as in Weka.

This reproduces ``weka.filters.supervised.attribute.Discretize`` with its
default options (``useBetterEncoding=false``, ``useKononenko=false``):

* instances whose attribute value is missing (``NaN``) are ignored when
  finding cuts;
* the remaining instances are sorted by value and split recursively at the
  boundary that minimises the count-weighted class entropy of the two halves;
  only boundaries between two *distinct* adjacent values are candidates, and
  of several equally good boundaries the leftmost one wins;
* a split must strictly lower the entropy and pass Fayyad and Irani's MDL
  test ``gain > (log2(N - 1) + log2(3**k - 2) - [k H(S) - k1 H(S1) - k2 H(S2)]) / N``
  where ``N`` is the number of instances in ``S`` (Weka's "worse" encoding:
  ``N - 1`` rather than the number of candidate boundaries) and ``k``, ``k1``,
  ``k2`` count the classes present in ``S``, ``S1``, ``S2``;
* the cut is the midpoint ``(a + b) / 2`` of the two adjacent values, and
  both halves are processed the same way.

The values are sorted once and collapsed to one row of class counts per
distinct value; every node of the recursion then scores all its candidate
boundaries at once from cumulative counts.  The entropy sums are accumulated
in the same order as Weka's ``ContingencyTables`` so that near-ties between
candidates resolve as they do in Weka.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["apply_cuts", "mdl_cut_points"]

_LN2 = math.log(2.0)


def mdl_cut_points(x, y, n_classes: int | None = None) -> np.ndarray:
    """Find Fayyad–Irani MDL cut points of one numeric attribute.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Attribute values; ``NaN`` marks a missing value, and such rows are
        ignored.
    y : array_like of int, shape (n,)
        Class codes ``0 .. n_classes - 1`` (no missing classes).
    n_classes : int, optional
        Number of classes; defaults to ``y.max() + 1``.  It does not change
        the result, only the validation of ``y``.

    Returns
    -------
    numpy.ndarray of float64
        The cut points in increasing order; empty when no split is accepted
        (the attribute then becomes a single value).

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length, are not one-dimensional, or
        ``y`` holds anything but class codes in ``0 .. n_classes - 1``.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("x and y must be one-dimensional")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x has {x.shape[0]} rows but y has {y.shape[0]}")
    y = _class_codes(y, n_classes)
    empty = np.empty(0, dtype=np.float64)

    present = ~np.isnan(x)
    if not present.all():
        x, y = x[present], y[present]
    n = x.shape[0]
    if n < 2:
        return empty
    n_cls = int(y.max()) + 1 if n_classes is None else int(n_classes)

    order = np.argsort(x)  # stability is irrelevant: ties are pooled below
    xs = x[order]
    ys = y[order]

    # Collapse runs of equal values: one row of class counts per distinct value.
    new_value = np.empty(n, dtype=bool)
    new_value[0] = True
    np.not_equal(xs[1:], xs[:-1], out=new_value[1:])
    starts = np.flatnonzero(new_value)
    n_blocks = starts.shape[0]
    if n_blocks < 2:
        return empty
    values = xs[starts]
    block = np.cumsum(new_value) - 1
    counts = np.bincount(ys * n_blocks + block, minlength=n_cls * n_blocks)
    # cum[c, b] = number of instances of class c in blocks 0 .. b-1.
    cum = np.zeros((n_cls, n_blocks + 1), dtype=np.int64)
    np.cumsum(counts.reshape(n_cls, n_blocks), axis=1, out=cum[:, 1:])

    # xlogx[m] = m * ln(m), Weka's lnFunc on integer counts (0 for m = 0).
    xlogx = np.arange(n + 1, dtype=np.float64)
    xlogx[1:] *= np.log(xlogx[1:])

    cuts: list[float] = []
    stack = [(0, n_blocks)]  # half-open ranges of distinct-value blocks
    while stack:
        lo, hi = stack.pop()
        if hi - lo < 2:
            continue
        best = _best_split(cum, xlogx, lo, hi)
        if best is None:
            continue
        cuts.append((values[best - 1] + values[best]) / 2.0)
        stack.append((lo, best))
        stack.append((best, hi))
    return np.sort(np.asarray(cuts, dtype=np.float64))


def apply_cuts(x, cuts) -> np.ndarray:
    """Map values to bin codes with Weka's convention.

    Parameters
    ----------
    x : array_like of float
        Values of any shape; ``NaN`` marks a missing value.
    cuts : array_like of float, shape (k,)
        Strictly increasing cut points, e.g. from :func:`mdl_cut_points`.

    Returns
    -------
    numpy.ndarray of int64
        Same shape as ``x``.  The code of a value is the number of cuts
        strictly below it, so a value equal to ``cuts[j]`` falls in bin ``j``
        (bins are ``(-inf, c0], (c0, c1], ..., (c_{k-1}, inf)``).  Missing
        values get ``-1``.  With no cuts every present value gets ``0``.

    Raises
    ------
    ValueError
        If ``cuts`` is not one-dimensional and strictly increasing.
    """
    x = np.asarray(x, dtype=np.float64)
    cuts = np.asarray(cuts, dtype=np.float64)
    if cuts.ndim != 1:
        raise ValueError("cuts must be one-dimensional")
    if cuts.size and not np.all(np.diff(cuts) > 0):
        raise ValueError("cuts must be strictly increasing")
    codes = np.searchsorted(cuts, x, side="left").astype(np.int64, copy=False)
    codes[np.isnan(x)] = -1
    return codes


def _class_codes(y: np.ndarray, n_classes: int | None) -> np.ndarray:
    """Validate ``y`` as class codes and return it as ``intp``."""
    if y.size == 0:
        return y.astype(np.intp)
    if not np.issubdtype(y.dtype, np.integer):
        if not np.issubdtype(y.dtype, np.floating) or not np.all(
            np.isfinite(y) & (y == np.round(y))
        ):
            raise ValueError("y must hold integer class codes")
    y = y.astype(np.intp)
    lo, hi = int(y.min()), int(y.max())
    if lo < 0:
        raise ValueError(f"class codes must be >= 0, got {lo}")
    if n_classes is not None and hi >= n_classes:
        raise ValueError(f"class code {hi} out of range for n_classes={n_classes}")
    return y


def _entropy(counts: np.ndarray, total: int, xlogx: np.ndarray) -> float:
    """Class entropy in bits of one count vector (Weka's ``entropy``)."""
    if total == 0:
        return 0.0
    acc = 0.0
    for m in counts:
        acc -= xlogx[m]
    return (acc + xlogx[total]) / (total * _LN2)


def _best_split(cum: np.ndarray, xlogx: np.ndarray, lo: int, hi: int) -> int | None:
    """Accepted split of blocks ``lo .. hi-1``, as the first block of the right half.

    Returns ``None`` if no boundary lowers the entropy or the best one fails
    the MDL test.
    """
    prior = cum[:, hi] - cum[:, lo]  # class counts of S
    n = int(prior.sum())
    n_cls = cum.shape[0]

    # Candidate j (0-based) puts blocks lo .. lo+j on the left.
    left = cum[:, lo + 1 : hi] - cum[:, lo : lo + 1]  # (n_cls, m)
    # Weka's entropyConditionedOnRows, summed in its order: left row's cells,
    # minus lnFunc(left total), then the right row likewise.
    acc = np.zeros(left.shape[1], dtype=np.float64)
    for c in range(n_cls):
        acc += xlogx[left[c]]
    n_left = left.sum(axis=0)
    acc -= xlogx[n_left]
    for c in range(n_cls):
        acc += xlogx[cum[c, hi] - cum[c, lo + 1 : hi]]  # right-hand counts
    acc -= xlogx[n - n_left]
    cond = -acc / (n * _LN2)

    j = int(np.argmin(cond))  # first minimum, as Weka's strict "<" scan
    prior_entropy = _entropy(prior, n, xlogx)
    best_entropy = float(cond[j])
    gain = prior_entropy - best_entropy
    if gain <= 0.0:
        return None

    left_counts = left[:, j]
    right_counts = prior - left_counts
    k = int(np.count_nonzero(prior))
    k_left = int(np.count_nonzero(left_counts))
    k_right = int(np.count_nonzero(right_counts))
    n_left_j = int(n_left[j])
    ent_left = _entropy(left_counts, n_left_j, xlogx)
    ent_right = _entropy(right_counts, n - n_left_j, xlogx)
    delta = math.log(3.0**k - 2.0) / _LN2 - (
        k * prior_entropy - k_right * ent_right - k_left * ent_left
    )
    if gain > (math.log(n - 1) / _LN2 + delta) / n:
        return lo + j + 1
    return None
