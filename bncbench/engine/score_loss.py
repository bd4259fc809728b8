"""Objectives that are a sum over rows of a function of each row's class scores.

A subclass of :class:`ScoreLoss` writes the per-row part only; the gather of the scores and the
scatter of the gradient into the rows of ``Phi`` are shared (``docs/extending.md``). No
registration here: objective modules import it without importing a registry's built-ins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bncbench.engine.row_table import scatter

if TYPE_CHECKING:
    from bncbench.engine.loss import Data


class ScoreLoss:
    """Base class of objectives that are a sum over rows of a function of each row's class scores.

    A subclass implements :meth:`row_loss`: from the scores ``S = A @ Phi`` of every (compressed)
    design row and its class counts ``C``, the loss and ``dL/dS``. The gather of the scores and the
    scatter of ``A.T @ dL/dS`` into the gradient with respect to ``Phi`` are done here, over any
    design (an on-the-fly attribute-subset design is materialized for the scatter). The
    registered class is built as ``cls(data, n_rows, backend=..., two_class=..., **hyperparameters)``
    (the engine's speed options are accepted and not read), with the objective's own
    hyperparameters as keyword arguments; see ``docs/extending.md``.

    Parameters
    ----------
    data : Data
        Training rows and class counts.
    n_rows : int
        Rows of ``Phi`` (and of the gradient).
    backend, two_class
        The engine's speed options (not read).
    """

    def __init__(self, data: Data, n_rows: int, backend: str | None = None, two_class: bool | None = None) -> None:
        self.data = data
        self.n_rows = int(n_rows)

    def row_loss(self, S: np.ndarray, C: np.ndarray, grad: bool) -> tuple[float, np.ndarray | None]:
        """The loss summed over the rows and, if asked, its gradient with respect to ``S``.

        Parameters
        ----------
        S : ndarray of shape (n, n_classes)
            Unnormalized log joint scores of every design row.
        C : ndarray of shape (n, n_classes)
            Class counts of every design row (instances merged by compression).
        grad : bool
            Compute ``dL/dS`` too.

        Returns
        -------
        loss : float
        dS : ndarray of shape (n, n_classes) or None
        """
        raise NotImplementedError

    def __call__(self, Phi: np.ndarray, grad: bool = True,
                 data: Data | None = None) -> tuple[float, np.ndarray | None]:
        """The loss at ``Phi`` and, if asked, its gradient with respect to ``Phi``.

        Parameters
        ----------
        Phi : ndarray of shape (n_rows, n_classes)
            Log potentials.
        grad : bool, default=True
            Compute the gradient too.
        data : Data, optional
            Rows to evaluate instead of the training data (e.g. a mini-batch).

        Returns
        -------
        loss : float
        G : ndarray of shape (n_rows, n_classes) or None
        """
        d = self.data if data is None else data
        S = d.design.scores(np.ascontiguousarray(Phi, dtype=np.float64))
        f, dS = self.row_loss(S, d.C, grad)
        if not grad:
            return float(f), None
        return float(f), scatter(d.idx, dS, self.n_rows)
