"""The CLL and its gradient in the LR space in one fused kernel (fewer exponentials and gathers).

The generic path of :class:`bncbench.engine.problem.Problem` goes through ``Phi``: ``Phi_t = M_t W``
(:meth:`~bncbench.engine.lr_mapping.LRMapping.phi`), the engine's row kernel over every (design
row, factor) and every class, then ``M_t' G``. In the LR space that gathers and scatters, per
design row, one row of ``Phi`` per factor, the rows of reference values included (all zero) and
class 0's column (fixed at 0). :class:`FusedLR` computes the same objective and gradient with ``S = A M_t W``
(``A`` the one-hot design of the training rows), class 0's score being 0:

``nll = sum_n csum_n logsumexp(0, S_n) - sum_{n, y>0} C[n, y] S_{n, y-1}``,
``dnll/dW = M_t' A' (csum * softmax - C)[:, 1:]``,

one pass over the design rows (:func:`_lr_kernel`, numba, single-threaded) on
``Phi_t[:, 1:] = M_t W`` (a cheap sparse product), then ``dnll/dW = M_t' G`` as before. What it
saves:

- **exponentials**: the row kernel takes ``n_classes`` exps per design row (on letter, 26 x
  16,676: most of its time); here ``exp(S_{n,y})`` is the product of ``E = exp(Phi_t[:, 1:])``
  over the row's factor rows, ``E`` computed once per evaluation, and a design row costs one
  log. A row whose products overflow, or underflow to 0, is redone exactly (log-sum-exp of the
  summed scores, as the row kernel);
- **the linear term**: ``sum_y C[n, y] S[n, y]`` sums the scores of the row's classes only, and
  the gradient's ``-A' C`` is computed once at construction;
- **gathers**: the factor rows of reference values hold no indicator (``Phi`` is 0 there) and
  are left out of the design (letter, NB: 10.7 factor rows per design row of 17), and class 0's
  column (0) is never read or written.

Equal to the generic path up to rounding (``tests/test_lr_design.py``). With two classes the
engine's score-difference kernel is faster and :meth:`LRMapping.fused` keeps the generic path.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from bncbench.engine.row_table import design_matrix


class FusedLR:
    """The data term of the LR space on ``W`` (``K x (n_classes - 1)``): value and gradient.

    Parameters
    ----------
    data : bncbench.engine.loss.Data
        The training design rows and their class counts.
    Mt : scipy.sparse.csr_matrix of shape (n_trained, K)
        The LR map's trained rows (:attr:`LRMapping.M`, first ``n_trained`` rows).

    Attributes
    ----------
    A : scipy.sparse.csr_matrix of shape (n, n_trained)
        The one-hot design of the training rows without its entries at the zero rows of ``M_t``
        (a reference value's row: it holds no indicator, so ``Phi`` is 0 there), indices sorted.
    """

    def __init__(self, data, Mt: sp.csr_matrix) -> None:
        """Build the design once and keep the counts."""
        keep = (np.diff(Mt.indptr) > 0).astype(np.float64)
        A = (design_matrix(data.idx, Mt.shape[0]) @ sp.diags(keep)).tocsr()
        A.eliminate_zeros()
        A.sum_duplicates()
        A.sort_indices()
        self.A, self.Mt, self.MtT = A, Mt, Mt.T.tocsr()
        self._indptr = A.indptr.astype(np.int64)
        self._indices = A.indices.astype(np.int64)
        self._vals = np.ascontiguousarray(A.data, dtype=np.float64)
        C1 = sp.csr_matrix(np.asarray(data.C, dtype=np.float64)[:, 1:])  # the counts of classes 1, 2, ..., by row
        C1.sort_indices()
        self._Cn = (C1.indptr.astype(np.int64), C1.indices.astype(np.int64), np.ascontiguousarray(C1.data))
        self._csum = np.ascontiguousarray(data.csum, dtype=np.float64)
        self._AtC = np.ascontiguousarray((A.T @ C1).toarray(), dtype=np.float64)  # the gradient's -C part, once

    def __call__(self, W: np.ndarray, grad: bool = True) -> tuple[float, np.ndarray | None]:
        """The negative CLL at ``W`` and, if asked, its gradient with respect to ``W``.

        Parameters
        ----------
        W : ndarray of shape (K, n_classes - 1)
            The weights of classes 1, 2, ... (class 0's are 0).
        grad : bool, default=True
            Compute the gradient too.

        Returns
        -------
        nll : float
        gW : ndarray of shape (K, n_classes - 1) or None
        """
        P = np.ascontiguousarray(self.Mt @ W, dtype=np.float64)  # Phi_t of classes 1, 2, ...
        gP = np.zeros(P.shape if grad else (1, P.shape[1]))
        with np.errstate(over="ignore"):  # an overflow is handled row by row (the exact path)
            E = np.exp(P)
        nll = _lr_kernel(self._indptr, self._indices, self._vals, P, E, *self._Cn, self._csum, self._AtC, gP, grad)
        return float(nll), (np.asarray(self.MtT @ gP) if grad else None)


@numba.njit(cache=True, nogil=True)
def _lr_kernel(indptr, indices, vals, W, E, cptr, cidx, cval, csum, ZtC, gW, want_grad):  # pragma: no cover - compiled
    """Scores ``S = Z W`` of classes 1, 2, ... (class 0's: 0) over the CSR design ``Z``: the loss and ``Z' (csum *
    softmax - C)`` into ``gW``. Products of ``E = exp(W)`` instead of one exp per (row, class); the exact
    log-sum-exp where they over- or underflow. The gradient's ``-C`` part is ``-Z' C`` (``ZtC``, precomputed),
    subtracted at the end."""
    N = indptr.size - 1
    Y1 = W.shape[1]
    p = np.empty(Y1)
    s = np.empty(Y1)
    nll = 0.0
    for n in range(N):
        a, b = indptr[n], indptr[n + 1]
        for y in range(Y1):
            p[y] = 1.0
        for q in range(a, b):
            c = indices[q]
            v = vals[q]
            if v == 1.0:
                for y in range(Y1):
                    p[y] *= E[c, y]
            else:
                for y in range(Y1):
                    p[y] *= E[c, y] ** v
        z0, z1, z2, z3 = 1.0, 0.0, 0.0, 0.0  # z = 1 (class 0: exp(0)) + sum p, four chains (latency)
        m0, m1, m2, m3 = np.inf, np.inf, np.inf, np.inf  # min p: an underflow to 0 is not exact
        y4 = Y1 - Y1 % 4
        for y in range(0, y4, 4):
            z0 += p[y]
            z1 += p[y + 1]
            z2 += p[y + 2]
            z3 += p[y + 3]
            m0 = min(m0, p[y])
            m1 = min(m1, p[y + 1])
            m2 = min(m2, p[y + 2])
            m3 = min(m3, p[y + 3])
        for y in range(y4, Y1):
            z0 += p[y]
            m0 = min(m0, p[y])
        z = (z0 + z1) + (z2 + z3)
        acc = 0.0  # - sum_y C[n, y] S[n, y], over the classes > 0 of the row only (CSR of C[:, 1:])
        for t in range(cptr[n], cptr[n + 1]):
            y = cidx[t]
            sy = 0.0
            for q in range(a, b):
                sy += vals[q] * W[indices[q], y]
            acc -= cval[t] * sy
        cs = csum[n]
        if np.isfinite(z) and min(min(m0, m1), min(m2, m3)) > 0.0:
            nll += acc + cs * np.log(z)
            if want_grad:
                sc = cs / z
                for y in range(Y1):
                    p[y] *= sc
        else:  # the exact log-sum-exp of the scores, as the engine's row kernel
            for y in range(Y1):
                s[y] = 0.0
            for q in range(a, b):
                c = indices[q]
                v = vals[q]
                for y in range(Y1):
                    s[y] += v * W[c, y]
            mx = 0.0
            for y in range(Y1):
                mx = max(mx, s[y])
            z = np.exp(-mx)
            for y in range(Y1):
                p[y] = np.exp(s[y] - mx)
                z += p[y]
            nll += acc + cs * (mx + np.log(z))
            if want_grad:
                sc = cs / z
                for y in range(Y1):
                    p[y] *= sc
        if want_grad:
            for q in range(a, b):
                c = indices[q]
                v = vals[q]
                for y in range(Y1):
                    gW[c, y] += v * p[y]
    if want_grad:
        for c in range(gW.shape[0]):
            for y in range(Y1):
                gW[c, y] -= ZtC[c, y]
    return nll
