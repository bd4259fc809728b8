"""The materialized design: a row-index table ``idx`` (n, n_factors) and its compiled kernels.

Row ``n`` of ``idx`` holds, per factor, the row of ``Phi`` that design row ``n`` uses (-1: the
factor contributes nothing); it *is* the CSR one-hot design ``A`` of :mod:`bncbench.engine.loss`.
:class:`RowTable` is the design of every layout whose rows are few per instance (one network, a
geometric ensemble); attribute-subset models compute their rows on the fly instead
(:class:`bncbench.engine.subset_design.SubsetDesign`), through the same interface:

``n``                        design rows;
``take(rows)``               the design rows ``rows`` as a new design;
``keys()``                   an int64 code per design row, equal iff the rows are equal (compression);
``rows()``                   the row-index table itself;
``nll(Phi, C, csum, G, grad)``   NLL and, into ``G``, its gradient (the general kernel);
``nll2(D, C1, csum, g, grad)``   the same from score differences (two classes);
``scores(Phi)``              unnormalized log scores ``A @ Phi``.

:func:`design_of` picks a layout's design of some codes.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp


class RowTable:
    """A materialized design: the row of ``Phi`` of every design row and factor.

    Parameters
    ----------
    idx : ndarray of shape (n, n_factors)
        Row indices per design row and factor; -1 for no contribution.

    Attributes
    ----------
    idx : ndarray of shape (n, n_factors)
        ``idx`` as contiguous int32.
    """

    def __init__(self, idx: np.ndarray) -> None:
        """Keep ``idx`` as a contiguous int32 array.

        Parameters
        ----------
        idx : ndarray of shape (n, n_factors)
            Row indices per design row and factor; -1 for no contribution.
        """
        self.idx = np.ascontiguousarray(idx, dtype=np.int32)

    @property
    def n(self) -> int:
        """Number of design rows."""
        return int(self.idx.shape[0])

    def take(self, rows: np.ndarray) -> RowTable:
        """The design rows ``rows`` (integer positions or a boolean mask) as a new table."""
        return RowTable(self.idx[rows])

    def keys(self) -> np.ndarray:
        """An int64 code per design row, equal iff the rows are equal (see :func:`unique_rows`)."""
        return unique_rows(self.idx)

    def rows(self) -> np.ndarray:
        """The row-index table: (n, n_factors) int32."""
        return self.idx

    def nll(self, Phi: np.ndarray, C: np.ndarray, csum: np.ndarray, G: np.ndarray, grad: bool) -> float:
        """NLL at ``Phi`` (any number of classes); adds the gradient into ``G`` when ``grad``."""
        return _cll_kernel(self.idx, C, csum, Phi, G, grad)

    def nll2(self, D: np.ndarray, C1: np.ndarray, csum: np.ndarray, g: np.ndarray, grad: bool) -> float:
        """Two classes: NLL from ``D = Phi[:, 1] - Phi[:, 0]``; adds ``dL/dPhi[:, 1]`` into ``g`` when ``grad``."""
        return _cll2_kernel(self.idx, C1, csum, D, g, grad)

    def scores(self, Phi: np.ndarray) -> np.ndarray:
        """``A @ Phi``: (n, n_classes)."""
        S = np.zeros((self.n, Phi.shape[1]))
        _score_kernel(self.idx, np.ascontiguousarray(Phi, dtype=np.float64), S)
        return S


def design_of(layout, codes: np.ndarray, materialize: bool = False, combine: bool | None = None):
    """The design of ``codes`` under ``layout``.

    Parameters
    ----------
    layout : Layout, CompositeLayout or SubsetLayout
        Offers ``rows(codes)``; a layout that also offers ``design(codes)`` (attribute subsets)
        computes its rows on the fly.
    codes : ndarray of shape (N, n)
        The codes ``layout.rows`` reads.
    materialize : bool, default=False
        Build the row table even where the layout offers an on-the-fly design (the reference path:
        ``N * n_factors * 4`` bytes).
    combine : bool, optional
        An on-the-fly design's :attr:`~bncbench.engine.subset_design.SubsetDesign.combine` (None: its default).

    Returns
    -------
    RowTable or SubsetDesign
        One design row per instance, in order.
    """
    lazy = getattr(layout, "design", None)
    if lazy is not None and not materialize:
        return lazy(codes) if combine is None else lazy(codes, combine=combine)
    return RowTable(layout.rows(codes))


def unique_rows(idx: np.ndarray) -> np.ndarray:
    """An int64 code per row, equal iff the rows are equal (iterative mixed radix).

    When the code space would overflow int64, the codes so far are renumbered densely first. The
    codes increase with the rows in lexicographic order (the renumbering keeps the order).

    Parameters
    ----------
    idx : ndarray of shape (N, F)
        Integer rows with values >= -1.

    Returns
    -------
    ndarray of shape (N,)
        int64 codes (not dense, not in order of appearance).
    """
    N, F = idx.shape
    code = np.zeros(N, np.int64)
    if N and idx.dtype.kind == "i" and _mixed_radix_rows(idx, code):
        return code  # the same codes in one compiled pass (no renumbering was needed)
    code = np.zeros(N, np.int64)
    space = 1
    for c in range(F):
        v = idx[:, c].astype(np.int64) + 1
        card = int(v.max()) + 1 if N else 1
        if space * card >= (1 << 62):
            _, code = np.unique(code, return_inverse=True)
            code = code.astype(np.int64).ravel()
            space = int(code.max()) + 1
        code = code * card + v
        space *= card
    return code


@numba.njit(cache=True, nogil=True)
def _mixed_radix_rows(idx, code):  # pragma: no cover - compiled
    """:func:`unique_rows`' codes into ``code`` (zeros) column by column, ``(code * card + v)`` with ``v = idx + 1`` and
    ``card`` the column's largest ``v`` plus one; False, as soon as the code space would reach 2**62 (where the numpy
    form renumbers), for the caller to take that form."""
    N, F = idx.shape
    space = 1
    for c in range(F):
        card = 0
        for n in range(N):
            card = max(card, np.int64(idx[n, c]) + 1)
        card += 1
        if space > ((1 << 62) - 1) // card:  # space * card >= 2**62
            return False
        for n in range(N):
            code[n] = code[n] * card + (np.int64(idx[n, c]) + 1)
        space *= card
    return True


def design_matrix(idx: np.ndarray, n_rows: int) -> sp.csr_matrix:
    """The CSR one-hot design ``A`` (N, n_rows) of row indices (-1 entries dropped).

    Parameters
    ----------
    idx : ndarray of shape (N, n_factors)
        Integer row indices per instance and factor; -1 for no contribution.
    n_rows : int
        Columns of ``A`` (rows of ``Phi``).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (N, n_rows)
        A 1 at ``(n, idx[n, f])`` for every ``idx[n, f] >= 0``.
    """
    ok = idx >= 0
    indptr = np.zeros(idx.shape[0] + 1, np.int64)
    np.cumsum(ok.sum(axis=1), out=indptr[1:])
    return sp.csr_matrix((np.ones(int(indptr[-1])), idx[ok].astype(np.int64), indptr), shape=(idx.shape[0], n_rows))


@numba.njit(cache=True, nogil=True)
def _cll_kernel(idx, C, csum, Phi, G, want_grad):  # pragma: no cover - compiled
    N, F = idx.shape
    Y = Phi.shape[1]
    s = np.empty(Y)
    nll = 0.0
    for n in range(N):
        for y in range(Y):
            s[y] = 0.0
        for f in range(F):
            r = idx[n, f]
            if r >= 0:
                for y in range(Y):
                    s[y] += Phi[r, y]
        mx = s[0]
        for y in range(1, Y):
            mx = max(mx, s[y])
        z = 0.0
        acc = 0.0
        for y in range(Y):
            acc -= C[n, y] * s[y]
            s[y] = np.exp(s[y] - mx)  # s now holds exp(S - max), reused by the gradient
            z += s[y]
        cs = csum[n]
        nll += acc + cs * (mx + np.log(z))
        if want_grad:
            sc = cs / z
            for y in range(Y):
                s[y] = sc * s[y] - C[n, y]  # csum * softmax - C
            for f in range(F):
                r = idx[n, f]
                if r >= 0:
                    for y in range(Y):
                        G[r, y] += s[y]
    return nll


@numba.njit(cache=True, nogil=True)
def _cll2_kernel(idx, C1, csum, D, g, want_grad):  # pragma: no cover - compiled
    """Two classes: NLL from score differences ``d = sum_f D[idx]``; ``g`` = dL/dPhi[:, 1]."""
    N, F = idx.shape
    nll = 0.0
    for n in range(N):
        d = 0.0
        for f in range(F):
            r = idx[n, f]
            if r >= 0:
                d += D[r]
        e = np.exp(-abs(d))  # softplus(d) = max(d, 0) + log1p(e); sigmoid from the same e
        cs = csum[n]
        nll += cs * (max(d, 0.0) + np.log1p(e)) - C1[n] * d
        if want_grad:
            p = 1.0 / (1.0 + e)
            if d < 0.0:
                p *= e
            t = cs * p - C1[n]  # csum * P(class 1) - C_1
            for f in range(F):
                r = idx[n, f]
                if r >= 0:
                    g[r] += t
    return nll


@numba.njit(cache=True, nogil=True)
def _score_kernel(idx, Phi, S):  # pragma: no cover - compiled
    N, F = idx.shape
    Y = Phi.shape[1]
    for n in range(N):
        for f in range(F):
            r = idx[n, f]
            if r >= 0:
                for y in range(Y):
                    S[n, y] += Phi[r, y]


def scatter(idx: np.ndarray, R: np.ndarray, n_rows: int) -> np.ndarray:
    """``A.T @ R``: the sum of each design row's ``R`` into the rows of ``Phi`` it reads.

    Parameters
    ----------
    idx : ndarray of shape (n, n_factors)
        Row indices per design row and factor; -1 for no contribution.
    R : ndarray of shape (n, n_classes)
        A value per design row and class (e.g. ``dL/dS``).
    n_rows : int
        Rows of the result.

    Returns
    -------
    ndarray of shape (n_rows, n_classes)
    """
    G = np.zeros((int(n_rows), R.shape[1]))
    _scatter_kernel(np.ascontiguousarray(idx, dtype=np.int32), np.ascontiguousarray(R, dtype=np.float64), G)
    return G


@numba.njit(cache=True, nogil=True)
def _scatter_kernel(idx, R, G):  # pragma: no cover - compiled
    N, F = idx.shape
    Y = R.shape[1]
    for n in range(N):
        for f in range(F):
            r = idx[n, f]
            if r >= 0:
                for y in range(Y):
                    G[r, y] += R[n, y]
