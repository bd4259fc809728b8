"""The proposed LR mapping of Feelders & Ivanovs (§3.2, §5.1) as an engine parameter map.

A classifier whose canonical graph is perfect (:mod:`bncbench.structures.canonical`) is a
multinomial logistic regression with one indicator ``I(X_C = x_C)`` per complete subgraph ``C``
not containing the class and per value combination ``x_C`` with no reference value, plus an
intercept; class 0's weights are fixed at 0. The reference value of each attribute is its most
frequent training value (the paper's "most frequent value coded 0", §5.1; ties: the smallest
code), read from the count tables.

On a perfect graph each complete set ``C`` lies in the family of its last node ``i``
(``C = {i} | S``, ``S`` a subset of ``i``'s parents), so the LR scores are a sum over the
engine's factors: the row of factor ``i`` for parent configuration ``k`` and value ``v`` holds
``sum_S w_{{i} | S}(x)`` over the subsets ``S`` of its parents whose values, and ``v``, are all
non-reference; the class row holds the intercept. The weights map linearly onto the rows of
``Phi``: ``Phi = M [0 | W]`` with ``M`` a sparse 0/1 matrix (rows of ``Phi`` x indicators),
``phi = M_t W``, ``pullback = M_t' G`` (``M_t`` the trained rows).

**Initialization.** ``init="generative"`` maps the generative estimate exactly: per factor, the
log-odds ``g(y, x_F) = log theta(x_i | x_pi, y) - log theta(x_i | x_pi, 0)`` over every
configuration ``x_F`` of its family (unseen parent configurations as the estimate backs them off)
is expanded by the reference-coded Moebius transform, ``u_T(x_T) = sum_{T' <= T} (-1)^{|T - T'|}
g(x_T', r_{F - T'})``, and ``u_T`` is added to the weight of ``(T, x_T)`` (``T`` empty: the
intercept); the class row adds ``log P(y) - log P(0)``. The LR model then has the generative
model's scores ``s(y, x) - s(0, x)`` on every complete instance, so every parameter space starts
from the same CLL (§5.3). ``init="zeros"``: all weights 0.

**Prediction rows.** A parent configuration never seen in training uses the layout's back-off
block (its longest seen prefix); that row holds the terms of the subsets of the kept parents
only (the dropped parents count as reference values). Instances with missing values back off in
the same way, in training too, where the mapped start then differs from the generative model's.

**Flops.** :meth:`LRMapping.flop_costs` gives §5.1's ``(cost_CLL, cost_grad)`` with ``|Z|``
counted from the training rows (the 1s of the design, intercept included); the Nash optimizers
read it (:mod:`bncbench.engine.flops`).

The constructor has the signature of every parameter map, ``LRMapping(layout, gen, init)``;
registering it as ``param=lr_mapping`` is the engine's business (``PARAMETERIZATIONS``).
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from bncbench.engine.flops import lr_costs
from bncbench.engine.inits import Start
from bncbench.engine.params import ParamMap
from bncbench.errors import BNCBenchError
from bncbench.structures.canonical import canonical_form, check_perfect


def reference_values(tables) -> np.ndarray:
    """The reference (most frequent, smallest on ties) training value of every column of ``tables``.

    Parameters
    ----------
    tables : CountTables
        Fitted count tables; each factor's level 0 counts its child's values per class.

    Returns
    -------
    ndarray of int64, shape (n_columns,)
        The reference value per column (0 for columns no factor has as child).
    """
    ref = np.zeros(len(tables.cards), dtype=np.int64)
    for f in tables.factors:
        counts = np.asarray(f.levels[0].counts, dtype=float).reshape(-1, f.card)  # (classes, card) summed below
        ref[f.child] = int(np.argmax(counts.sum(axis=0)))
    return ref


class LRMapping(ParamMap):
    """Feelders & Ivanovs' LR parameterization of a perfect BNC, as a map onto the layout's ``Phi``.

    Parameters
    ----------
    layout : Layout
        Rows of ``Phi`` of one network (ensembles are refused).
    gen : ndarray of shape (n_rows, n_classes)
        Generative log theta of every row (:meth:`Layout.generative_phi`).
    init : str or Init
        An initialization (:mod:`bncbench.engine.inits`): ``generative`` maps the generative
        estimate exactly (module docstring), ``zeros`` starts every weight at 0.

    Attributes
    ----------
    name : str
        ``"lr_mapping"``.
    reg_center : float
        0.
    n_params : int
        ``K (n_classes - 1)``: ``K`` indicators (intercept included) times the free classes.
    sets : list of tuple
        ``(columns, first_indicator)`` per complete set: its attributes (the parents in the factor's
        order, then the child) and the index of its first indicator (then mixed radix over the
        non-reference values, first attribute most significant).
    ref : ndarray of int64
        Reference value per column of the tables.
    M : scipy.sparse.csr_matrix of shape (n_rows, K)
        Rows of ``Phi`` x indicators (0/1).

    Raises
    ------
    BNCBenchError
        If ``init`` is unknown, the layout is not one network's, or its canonical graph is not
        perfect (the error names the cycle).
    """

    name = "lr_mapping"
    reg_center = 0.0

    def __init__(self, layout, gen: np.ndarray, init: str) -> None:
        """Check perfection, number the indicators and build ``M`` (see the class docstring)."""
        tables = getattr(layout, "tables", None)
        if tables is None or not hasattr(layout, "segments"):
            raise BNCBenchError("lr_mapping needs one network's layout (not an ensemble or attribute subsets)")
        super().__init__(layout, gen, init)
        factors = tables.factors
        attr_parents = [None] * len(tables.cards)
        for f in factors:
            attr_parents[f.child] = tuple(f.parents)
        check_perfect(canonical_form(attr_parents))
        cards = np.asarray(tables.cards, dtype=np.int64)
        self.ref = reference_values(tables)
        self.sets, self._set_index = [], {}
        K = 1
        for fi, f in enumerate(factors):
            ps = tuple(f.parents)
            for k in range(len(ps) + 1):
                for S in itertools.combinations(range(len(ps)), k):
                    cols = (*(ps[j] for j in S), f.child)
                    self._set_index[frozenset(cols)] = len(self.sets)
                    self.sets.append((cols, K))
                    K += int(np.prod([cards[c] - 1 for c in cols]))
        self.K = K
        self.n_params = K * (self.Y - 1)
        self.M = self._build_M(cards)
        self._Mt = self.M[: self.nt].tocsr()
        self._MtT = self._Mt.T.tocsr()

    # ------------------------------------------------------------------ indicators
    def _column(self, cols, values, cards):
        """Indicator index of the set ``cols`` at ``values`` (n, len(cols)), -1 where a value is the reference."""
        sid = self._set_index[frozenset(cols)]
        order, start = self.sets[sid]
        pos = {c: j for j, c in enumerate(cols)}
        idx = np.zeros(values.shape[0], dtype=np.int64)
        ok = np.ones(values.shape[0], dtype=bool)
        for c in order:
            v = values[:, pos[c]].astype(np.int64)
            r = self.ref[c]
            ok &= v != r
            idx = idx * (cards[c] - 1) + (v - (v > r))
        return np.where(ok, start + idx, -1)

    def _build_M(self, cards):
        layout, tables = self.layout, self.layout.tables
        rows, cols = [np.array([0], np.int64)], [np.array([0], np.int64)]
        for fi, lev, pos, start, card in layout.segments:
            f = tables.factors[fi]
            ps = tuple(f.parents[:lev])
            keys = np.asarray(f.levels[lev].keys, dtype=np.int64)[pos] if lev else np.zeros(pos.size, np.int64)
            pv = np.zeros((pos.size, lev), dtype=np.int64)
            rem = keys.copy()
            for j in range(lev - 1, -1, -1):  # mixed radix, first parent most significant
                pv[:, j] = rem % cards[ps[j]]
                rem //= cards[ps[j]]
            nb = pos.size
            r = start + np.arange(nb * card, dtype=np.int64)
            vals = np.tile(np.arange(card, dtype=np.int64), nb)
            par = np.repeat(pv, card, axis=0)
            for k in range(lev + 1):
                for S in itertools.combinations(range(lev), k):
                    cset = (*(ps[j] for j in S), f.child)
                    v = np.column_stack([par[:, list(S)], vals]) if S else vals[:, None]
                    c = self._column(cset, v, cards)
                    hit = c >= 0
                    rows.append(r[hit])
                    cols.append(c[hit])
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(layout.n_rows, self.K))

    # ------------------------------------------------------------------ the map
    def origin(self) -> Start:
        """Every weight 0 (the untrained rows follow the weights: ``phi_full``).

        Returns
        -------
        Start
        """
        return Start(np.zeros(self.n_params), np.zeros((0, self.Y)))

    def generative(self) -> Start:
        """The generative estimate mapped exactly: ``W`` (``K x (n_classes - 1)``) flattened.

        Returns
        -------
        Start
        """
        layout, tables = self.layout, self.layout.tables
        cards = np.asarray(tables.cards, dtype=np.int64)
        W = np.zeros((self.K, self.Y - 1))
        W[0] += self.gen[0, 1:] - self.gen[0, 0]
        for fi, f in enumerate(tables.factors):
            fam = (*f.parents, f.child)
            shape = tuple(int(cards[c]) for c in fam)
            grid = np.indices(shape, dtype=np.int64).reshape(len(fam), -1).T
            codes = np.tile(self.ref, (grid.shape[0], 1))
            codes[:, list(fam)] = grid
            rows = layout.factor_rows(fi, codes)
            if np.any(rows < 0):
                raise BNCBenchError(f"factor of attribute {f.child} has no row for some configuration")
            U = (self.gen[rows, 1:] - self.gen[rows, :1]).reshape(*shape, self.Y - 1)
            for a, c in enumerate(fam):  # reference-coded Moebius transform, one axis at a time
                base = np.take(U, [self.ref[c]], axis=a)
                U = U - base
                idx = [slice(None)] * U.ndim
                idx[a] = int(self.ref[c])
                U[tuple(idx)] = base.squeeze(axis=a)
            U = U.reshape(-1, self.Y - 1)
            nonref = grid != self.ref[list(fam)]
            for mask in np.unique(nonref, axis=0):
                sel = np.all(nonref == mask, axis=1)
                T = tuple(c for c, m in zip(fam, mask) if m)
                if not T:
                    W[0] += U[sel].sum(axis=0)
                    continue
                cidx = self._column(T, grid[sel][:, [j for j, m in enumerate(mask) if m]], cards)
                np.add.at(W, cidx, U[sel])
        return Start(W.ravel(), np.zeros((0, self.Y)))

    def _W(self, x):
        return x.reshape(self.K, self.Y - 1)

    def phi(self, x: np.ndarray) -> np.ndarray:
        """The trained rows of ``Phi``: ``M_t [0 | W]``.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The weights.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
            Log potentials of the trained rows (column 0 is 0).
        """
        out = np.zeros((self.nt, self.Y))
        out[:, 1:] = self._Mt @ self._W(x)
        return out

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """``dL/dW = M_t' G[:, 1:]``, flattened.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The weights (not read: the map is linear).
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
            The gradient with respect to ``x``.
        """
        return np.asarray(self._MtT @ np.ascontiguousarray(G[:, 1:])).ravel()

    def phi_full(self, x: np.ndarray) -> np.ndarray:
        """All rows of ``Phi``: ``M [0 | W]`` (back-off rows: module docstring).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The weights.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Log potentials of every row.
        """
        out = np.zeros((self.layout.n_rows, self.Y))
        out[:, 1:] = self.M @ self._W(x)
        return out

    # ------------------------------------------------------------------ costs
    def n_ones(self, data) -> int:
        """``|Z|``: the 1s of the LR design of the training rows (intercept included).

        Parameters
        ----------
        data : Data
            The problem's training rows (:class:`bncbench.engine.loss.Data`).

        Returns
        -------
        int
            ``sum_n (1 + #indicators of instance n)``.
        """
        nnz = np.diff(self.M.indptr)
        idx = np.asarray(data.idx)
        per_row = np.where(idx >= 0, nnz[np.maximum(idx, 0)], 0).sum(axis=1)
        return int(round(float(per_row @ data.csum)))

    def flop_costs(self, data) -> tuple[float, float]:
        """§5.1's ``(cost_CLL, cost_grad)`` with ``|Z|`` from the training rows.

        Parameters
        ----------
        data : Data
            The problem's training rows.

        Returns
        -------
        cost_cll, cost_grad : float
            Flops of one CLL and one gradient evaluation.
        """
        return lr_costs(self.n_ones(data), int(round(data.total)), self.Y)

    # ------------------------------------------------------------------ fused data term
    def fused(self, cll):
        """The data term on the LR design itself (:class:`bncbench.engine.lr_design.FusedLR`), where it applies.

        :class:`bncbench.engine.problem.Problem` evaluates the training data term through it instead
        of ``phi`` -> ``cll`` -> ``pullback``: the same value and gradient up to rounding, fewer
        gathers (``docs/benchmarks.md``).

        Parameters
        ----------
        cll : object
            The problem's data term.

        Returns
        -------
        callable or None
            ``fg(x, grad) -> (nll, dnll/dx or None)``, or None unless ``cll`` is the engine's CLL
            (:class:`bncbench.engine.loss.CLL`, numba backend) and there are more than two classes:
            another objective (the margin), the scipy reference backend and the two-class
            score-difference kernel (faster) keep the generic path.
        """
        from bncbench.engine.loss import CLL
        from bncbench.engine.lr_design import FusedLR

        if type(cll) is not CLL or cll.backend != "numba" or self.Y == 2:  # 2 classes: the score-difference kernel
            return None
        term = FusedLR(cll.data, self._Mt)
        shape = (self.K, self.Y - 1)

        def fg(x, grad):
            nll, gW = term(x.reshape(shape), grad)
            return nll, (gW.ravel() if grad else None)

        return fg
