"""The maximum-margin loss fused over a row table: gather, margin, smooth hinge and scatter in one pass.

:class:`~bncbench.engine.margin.MarginLoss` over a materialized design (a
:class:`~bncbench.engine.row_table.RowTable`, every one-network layout and geometric ensemble) calls
:func:`margin_rows`: per design row it sums the class scores ``S = A @ Phi`` from the row's factor
rows, takes the soft maximum over the other classes only for the classes the row counts
(``C[n, c] > 0``: one class for most compressed rows, where
:func:`~bncbench.engine.margin.margin_loss` computes all ``K`` of them and a ``(n, K, K)`` weight
array), and adds ``dL/dS`` of the row straight into the rows of ``dL/dPhi`` it reads. The same
loss and gradient as :func:`~bncbench.engine.margin.margin_loss` followed by
:func:`~bncbench.engine.row_table.scatter` (``tests/test_margin_kernel.py``: equal to rounding),
without the ``(n, K)`` score and gradient arrays and the ``(n, K, K)`` soft-max weights in between.
"""

from __future__ import annotations

import numba
import numpy as np


def margin_rows(idx: np.ndarray, C: np.ndarray, Phi: np.ndarray, lam: float, kappa: float, eta: float,
                G: np.ndarray | None) -> float:
    """The margin loss ``sum_{n,c} C[n,c] (1 - h_kappa(lam log d_c(S_n)))`` at ``S = A @ Phi``; its gradient into ``G``.

    Parameters
    ----------
    idx : ndarray of shape (n, n_factors), int32
        Row of ``Phi`` per design row and factor (-1: no contribution).
    C : ndarray of shape (n, K), float64
        Class counts per design row.
    Phi : ndarray of shape (n_rows, K), float64
        Log potentials (contiguous).
    lam, kappa, eta : float
        The margin's scale, the smooth hinge's width and the soft maximum's sharpness (checked by
        the caller: all ``> 0``).
    G : ndarray of shape (n_rows, K) or None
        Zeroed float64 array that receives ``dL/dPhi`` (added into); None for the loss only.

    Returns
    -------
    float
        The loss.
    """
    n_rows, K = Phi.shape
    Kp = -(-K // 4) * 4
    P = np.zeros((n_rows, Kp))
    P[:, :K] = Phi
    Gp = np.zeros((n_rows if G is not None else 1, Kp))
    loss = float(_margin_kernel(idx, np.ascontiguousarray(C, dtype=np.float64), P, float(lam), float(kappa),
                                float(eta), Gp, G is not None))
    if G is not None:
        G += Gp[:, :K]
    return loss


@numba.njit(cache=True, nogil=True)
def _margin_kernel(idx, C, P, lam, kappa, eta, G, want_grad):  # pragma: no cover - compiled
    """``P`` and ``G`` have the ``K`` class columns padded with zeros to a multiple of 4: the gather and the scatter
    run over 4 columns at a time in registers (each class's score still summed over the factors in order)."""
    N, F = idx.shape
    K = C.shape[1]
    Kp = P.shape[1]
    s = np.empty(Kp)   # class scores of the row
    e = np.empty(Kp)   # exp(eta S_k - top) of the other classes
    dS = np.zeros(Kp)  # dL/dS of the row (padding columns stay 0)
    lo = 1.0 - 2.0 * kappa
    loss = 0.0
    for n in range(N):
        for kb in range(0, Kp, 4):
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for f in range(F):
                r = idx[n, f]
                if r >= 0:
                    a0 += P[r, kb]
                    a1 += P[r, kb + 1]
                    a2 += P[r, kb + 2]
                    a3 += P[r, kb + 3]
            s[kb] = a0
            s[kb + 1] = a1
            s[kb + 2] = a2
            s[kb + 3] = a3
        for k in range(K):
            dS[k] = 0.0
        any_w = False
        for c in range(K):
            cnt = C[n, c]
            if cnt == 0.0:
                continue
            # (1/eta) log sum_{k != c} exp(eta S_k), the largest other term taken out first
            top = -np.inf
            for k in range(K):
                if k != c:
                    top = max(top, eta * s[k])
            tot = 0.0
            for k in range(K):
                if k != c:
                    e[k] = np.exp(eta * s[k] - top)
                    tot += e[k]
            y = lam * (s[c] - (top + np.log(tot)) / eta)
            if y <= lo:
                h, dh = y + kappa, 1.0
            elif y < 1.0:
                h, dh = 1.0 - (y - 1.0) ** 2 / (4.0 * kappa), (1.0 - y) / (2.0 * kappa)
            else:
                h, dh = 1.0, 0.0
            loss += cnt * (1.0 - h)
            if want_grad and dh != 0.0:
                w = lam * cnt * dh
                dS[c] -= w
                for k in range(K):
                    if k != c:
                        dS[k] += w * e[k] / tot
                any_w = True
        if any_w:
            for kb in range(0, Kp, 4):
                d0 = dS[kb]
                d1 = dS[kb + 1]
                d2 = dS[kb + 2]
                d3 = dS[kb + 3]
                for f in range(F):
                    r = idx[n, f]
                    if r >= 0:
                        G[r, kb] += d0
                        G[r, kb + 1] += d1
                        G[r, kb + 2] += d2
                        G[r, kb + 3] += d3
    return loss
