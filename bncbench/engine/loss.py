"""The shared CLL + gradient over design rows.

Scores ``S = A @ Phi`` where ``A`` is the one-hot design (one 1 per factor
and instance, at the instance's row), the loss is the negative conditional
log-likelihood summed over instances and the gradient with respect to
``Phi`` is ``A.T @ (csum * softmax(S) - C)``.

The design rows come from a *design*: a materialized row-index table
(:class:`~bncbench.engine.row_table.RowTable`), or, for attribute-subset
models, their attribute codes with the rows found on the fly
(:class:`~bncbench.engine.subset_design.SubsetDesign`); :class:`Data` holds
one with the class counts, and :class:`CLL` runs its kernels.

Training data is *compressed*: instances with the same design row are merged
and carry per-class counts ``C`` (n_unique, Y), which gives exactly the same
objective and gradient with fewer rows. Two backends: ``"numba"`` (the
design's fused, single-threaded kernels: gather, log-sum-exp, scatter) and
``"scipy"`` (CSR sparse products over the materialized rows; reference
implementation).

With two classes the numba backend uses a dedicated kernel on score
*differences*: the loss of a row depends on ``d = S_1 - S_0 = A @ D`` only,
``D = Phi[:, 1] - Phi[:, 0]``, as ``csum * softplus(d) - C_1 * d``, and the
gradient rows sum to zero over the classes, ``dL/dPhi[:, 1] = A.T @ (csum *
sigmoid(d) - C_1) = -dL/dPhi[:, 0]``. It gathers one value and scatters one
value per (row, factor) instead of two: the same objective and gradient
(equal to rounding), about three times faster.
"""

from __future__ import annotations

import numpy as np

from bncbench.components import OBJECTIVES
from bncbench.engine.row_table import RowTable, design_matrix
from bncbench.errors import BNCBenchError
from bncbench.registry import Hyperparameter, options

BACKENDS = ("numba", "scipy")
ENGINE_OPTIONS = (
    Hyperparameter("backend", BACKENDS[0], [options(BACKENDS), None], "loss backend (speed only): the fused numba "
                   "kernels or CSR sparse products (the reference)", str, engine_default=True),
    Hyperparameter("compress", True, [bool, None], "merge identical training rows (speed only)", bool,
                   engine_default=True),
    Hyperparameter("two_class", True, [bool, None], "score-difference kernel for two classes (speed only; false "
                   "forces the general kernel)", bool, engine_default=True),
    Hyperparameter("materialize", False, [bool, None], "subset models: build the row-index table instead of "
                   "finding rows on the fly (memory and speed only; the reference path)", bool, engine_default=True),
    Hyperparameter("combine_subsets", True, [bool, None], "subset models, two classes: one lookup per group of "
                   "subsets sharing attributes where it applies (speed only: the sums in another order, iterates "
                   "equal to rounding; false: the row table's order bit for bit)", bool, engine_default=True),
)
"""The engine's speed options, declared once: every optimizer registers them
(:mod:`bncbench.engine.optim`), and their defaults here are the engine's
(:func:`bncbench.engine.optim.engine_options`) and those of :class:`CLL` and :class:`Data`."""
ENGINE = {h.name: h.default for h in ENGINE_OPTIONS}
"""``{option: default}`` of :data:`ENGINE_OPTIONS`."""


class Data:
    """Design rows with class counts.

    Parameters
    ----------
    design : RowTable, SubsetDesign or ndarray of shape (n, n_factors)
        The design rows: a design object, or a row-index table (row of ``Phi`` per design row and
        factor; -1 for no contribution), which becomes a :class:`RowTable`.
    C : ndarray of shape (n, n_classes)
        Class counts of each design row (one-hot rows for uncompressed data).

    Attributes
    ----------
    design : RowTable or SubsetDesign
        The design rows (``n``, ``take``, ``keys``, ``rows`` and the kernels ``nll``, ``nll2``,
        ``scores``; see :mod:`bncbench.engine.row_table`).
    C : ndarray of shape (n, n_classes)
        ``C`` as contiguous float64.
    csum : ndarray of shape (n,)
        Instances per design row (``C.sum(axis=1)``).
    total : float
        Instances in all (``csum.sum()``).
    """

    def __init__(self, design, C: np.ndarray) -> None:
        """Store the design and the counts as a contiguous float64 array.

        Parameters
        ----------
        design : RowTable, SubsetDesign or ndarray of shape (n, n_factors)
            The design rows, or their row-index table.
        C : ndarray of shape (n, n_classes)
            Class counts per design row.
        """
        self.design = RowTable(design) if isinstance(design, np.ndarray) else design
        self.C = np.ascontiguousarray(C, dtype=np.float64)
        self.csum = self.C.sum(axis=1)
        self.total = float(self.csum.sum())
        self._C1 = None

    @property
    def idx(self) -> np.ndarray:
        """The row-index table (n, n_factors) int32; built on every call for an on-the-fly design."""
        return self.design.rows()

    @property
    def C1(self) -> np.ndarray:
        """Contiguous counts of class 1 (used by the two-class kernel)."""
        if self._C1 is None:
            self._C1 = np.ascontiguousarray(self.C[:, 1])
        return self._C1

    @property
    def n(self) -> int:
        """Number of design rows.

        Returns
        -------
        int
            ``design.n``.
        """
        return self.design.n

    @classmethod
    def from_rows(cls, idx: np.ndarray, y: np.ndarray, n_classes: int, compress: bool = ENGINE["compress"]) -> "Data":
        """Training data from per-instance row indices and class codes, merging equal design rows.

        Parameters
        ----------
        idx : ndarray of shape (N, n_factors)
            Row indices per instance and factor (e.g. :meth:`Layout.rows`).
        y : ndarray of shape (N,)
            Class codes in ``[0, n_classes)``.
        n_classes : int
            Number of classes.
        compress : bool, default=True
            Merge instances with equal rows into one design row with class counts (the objective
            and gradient are unchanged); otherwise one one-hot row per instance, in order.

        Returns
        -------
        Data
            With compression, one design row per distinct row of ``idx`` (ordered by
            :func:`~bncbench.engine.row_table.unique_rows` code, not by first appearance).
        """
        return cls.from_design(RowTable(idx), y, n_classes, compress)

    @classmethod
    def from_design(cls, design, y: np.ndarray, n_classes: int, compress: bool = ENGINE["compress"]) -> "Data":
        """Training data from a design of one row per instance and class codes, merging equal design rows.

        Parameters
        ----------
        design : RowTable or SubsetDesign
            One design row per instance (e.g. :func:`~bncbench.engine.row_table.design_of`).
        y : ndarray of shape (N,)
            Class codes in ``[0, n_classes)``.
        n_classes : int
            Number of classes.
        compress : bool, default=True
            Merge instances with equal design rows (equal ``design.keys()``) into one design row
            with class counts; otherwise one one-hot row per instance, in order.

        Returns
        -------
        Data
            With compression, one design row per distinct key, in increasing key order.
        """
        y = np.asarray(y, dtype=np.int64)
        N = design.n
        if not compress or N == 0:
            C = np.zeros((N, n_classes))
            C[np.arange(N), y] = 1.0
            return cls(design, C)
        uniq, first, inv = np.unique(design.keys(), return_index=True, return_inverse=True)
        C = np.bincount(inv * n_classes + y, minlength=uniq.size * n_classes).astype(float)
        return cls(design.take(first), C.reshape(uniq.size, n_classes))

    def subset(self, rows: np.ndarray) -> "Data":
        """The design rows ``rows`` as a new :class:`Data`.

        Parameters
        ----------
        rows : ndarray
            Integer positions or a boolean mask over the design rows.

        Returns
        -------
        Data
            Copies of the selected rows and their counts.
        """
        return Data(self.design.take(rows), self.C[rows])


def scores(idx: np.ndarray, Phi: np.ndarray) -> np.ndarray:
    """Unnormalized log scores ``A @ Phi``: (N, n_classes).

    Parameters
    ----------
    idx : ndarray of shape (N, n_factors)
        Integer row indices per instance and factor; -1 for no contribution.
    Phi : ndarray of shape (n_rows, n_classes)
        Log potentials (float64).

    Returns
    -------
    ndarray of shape (N, n_classes)
        ``S[n, y] = sum_f Phi[idx[n, f], y]`` over the factors with ``idx >= 0``.
    """
    return RowTable(idx).scores(Phi)


@OBJECTIVES.register("cll", label="", doc="negative conditional log-likelihood, summed over instances")
class CLL:
    """Negative CLL (summed) and its gradient with respect to ``Phi`` over ``n_rows`` rows.

    Parameters
    ----------
    data : Data
        Training rows and class counts.
    n_rows : int
        Rows of ``Phi`` (and of the gradient).
    backend : {"numba", "scipy"}, default="numba"
        Fused numba kernel, or CSR sparse products (reference).
    two_class : bool, default=True
        With the numba backend and two classes, use the score-difference
        kernel (same objective and gradient); ``False`` forces the general
        kernel.
    """

    def __init__(self, data: Data, n_rows: int, backend: str = ENGINE["backend"],
                 two_class: bool = ENGINE["two_class"]) -> None:
        """Check the backend and keep the data (the CSR design is built once for ``"scipy"``).

        Parameters
        ----------
        data : Data
            Training rows and class counts.
        n_rows : int
            Rows of ``Phi``.
        backend : {"numba", "scipy"}, default="numba"
            Implementation.
        two_class : bool, default=True
            Allow the score-difference kernel for two classes.

        Raises
        ------
        BNCBenchError
            If ``backend`` is not one of :data:`BACKENDS`.
        """
        if backend not in BACKENDS:
            raise BNCBenchError(f"unknown engine backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self.data = data
        self.n_rows = int(n_rows)
        self.backend = backend
        self.two_class = bool(two_class)
        self._A = design_matrix(data.idx, self.n_rows) if backend == "scipy" else None

    def __call__(self, Phi: np.ndarray, grad: bool = True,
                 data: Data | None = None) -> tuple[float, np.ndarray | None]:
        """The negative CLL at ``Phi`` and, if asked, its gradient with respect to ``Phi``.

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
        nll : float
            ``sum_n csum_n * logsumexp(S_n) - sum_{n,y} C[n, y] * S[n, y]`` with ``S = A @ Phi``.
        G : ndarray of shape (n_rows, n_classes) or None
            ``A.T @ (csum * softmax(S) - C)``; None when ``grad`` is false.
        """
        d = self.data if data is None else data
        Phi = np.ascontiguousarray(Phi, dtype=np.float64)
        if self.backend == "numba" and self.two_class and Phi.shape[1] == 2:
            g = np.zeros(self.n_rows if grad else 1)
            nll = d.design.nll2(Phi[:, 1] - Phi[:, 0], d.C1, d.csum, g, grad)
            if not grad:
                return float(nll), None
            G = np.empty((self.n_rows, 2))
            G[:, 1] = g
            np.negative(g, out=G[:, 0])
            return float(nll), G
        if self.backend == "numba":
            G = np.zeros((self.n_rows, Phi.shape[1])) if grad else np.zeros((1, 1))
            nll = d.design.nll(Phi, d.C, d.csum, G, grad)
            return float(nll), (G if grad else None)
        A = self._A if data is None else design_matrix(d.idx, self.n_rows)
        S = A @ Phi
        mx = S.max(axis=1, keepdims=True)
        lse = mx + np.log(np.exp(S - mx).sum(axis=1, keepdims=True))
        nll = float((d.csum * lse[:, 0]).sum() - (d.C * S).sum())
        if not grad:
            return nll, None
        R = d.csum[:, None] * np.exp(S - lse) - d.C
        return nll, np.asarray(A.T @ R)

