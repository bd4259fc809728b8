"""Factor layout: the rows of the log-potential matrix and the per-instance row indices.

A BNC is a log-linear model over indicator features. Its parameters live in a
log-potential matrix ``Phi`` of shape ``(n_rows, n_classes)``; the score of
class ``y`` for an instance is ``sum_f Phi[row_f(x), y]``, one row per *factor*:

* row 0 is the class factor (the bias row, ``log theta_y`` for a BN);
* an attribute factor ``i`` with ordered parents ``(p_1..p_k)`` owns one
  *block* of ``card_i`` consecutive rows per parent configuration seen in
  training, at every prefix length ``l = 0..k`` (``Factor.levels``); row
  ``block + x_i`` holds the potentials of ``x_i`` for all classes.

Blocks used by training instances (all full-depth configurations, plus prefix
configurations reached by back-off when a training parent value is missing)
are *trained* and come first: rows ``[0, n_trained)``. The remaining prefix
blocks are only used at prediction, for parent configurations never seen in
training: an instance uses, per factor, the block of the *longest seen
prefix* of its parent configuration (seen = with any class in training); an
attribute value outside ``[0, card)`` contributes nothing (index -1).

A new factor set (AnJE / DBL attribute subsets, ...) only needs to produce
row indices and blocks; the loss and the parameter maps work on rows. A
geometric ensemble of networks lays its members side by side
(:class:`bncbench.engine.composite.CompositeLayout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba
import numpy as np

from bncbench.bn.counts import mixed_radix
from bncbench.bn.count_tables import CountTables

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from bncbench.bn.count_tables import Factor

LOG_FLOOR = float(np.log(np.finfo(float).tiny))  # ~ -708: replaces log 0 (only reachable with m = 0)


def backed_off_log_theta(tables: CountTables, factor: Factor, m: float) -> list[np.ndarray]:
    """Per level, log theta[key, y, x] with the generative model's back-off (per class, or any class).

    For class ``y`` a configuration with ``N(y, prefix) = 0`` takes the values
    of its longest prefix with data for ``y`` (level 0 is used as is); with the
    tables' ``backoff="any_class"`` every level is used as is. These are exactly
    the values :meth:`CountTables.factor_log_theta` uses.

    Parameters
    ----------
    tables : CountTables
        Fitted count tables.
    factor : Factor
        One of ``tables.factors``.
    m : float
        Total mass of the Dirichlet prior of the m-estimate.

    Returns
    -------
    list of ndarray
        Per prefix level ``0..len(factor.parents)``, an array of shape (n_keys, n_classes, card);
        ``-inf`` and NaN (possible with ``m = 0``) are replaced by :data:`LOG_FLOOR`.
    """
    out = []
    pcards = [int(tables.cards[p]) for p in factor.parents]
    with np.errstate(divide="ignore", invalid="ignore"):
        for lev, level in enumerate(factor.levels):
            lt = tables.log_theta(factor, lev, m)
            if lev and level.n_keys and tables.backoff != "any_class":
                has = level.counts.sum(axis=2) > 0
                ppos = factor.levels[lev - 1].lookup(level.keys // pcards[lev - 1])
                lt = np.where(has[:, :, None], lt, out[lev - 1][ppos])
            out.append(lt)
    # (a table with no NaN or infinity, as with any m > 0, is returned as is: nan_to_num's copy would equal it)
    return [t if np.isfinite(t).all() else np.nan_to_num(t, nan=LOG_FLOOR, neginf=LOG_FLOOR) for t in out]


class Layout:
    """Rows of ``Phi`` for a fitted :class:`CountTables` and the training codes.

    Attributes
    ----------
    n_rows, n_trained : int
        All rows, and the trained rows (the first ``n_trained``).
    n_factors : int
        Columns of the row-index matrix (class factor + one per attribute).
    row_factor : ndarray (n_rows,)
        Factor of every row (0 = class, ``1 + i`` = attribute ``i``).
    row_value : ndarray (n_rows,)
        Attribute value of every row (0 for the class row).
    row_level : ndarray (n_rows,)
        Prefix length of the row's block (0 for the class row).
    block_start : ndarray
        First row of every attribute block, increasing (class row excluded).
    value_offset : ndarray (n_attributes + 1,)
        Offsets of the attribute values of each attribute in a flat
        attribute-value index (``value_offset[i] + x``).
    row_scale : None
        A fixed factor of every row's potentials: none for one network (see
        :class:`~bncbench.engine.composite.CompositeLayout` for ensembles).
    """

    row_scale = None

    def __init__(self, tables: CountTables, codes: np.ndarray) -> None:
        """Lay out the rows of the fitted tables; which prefix blocks are trained depends on ``codes``.

        Parameters
        ----------
        tables : CountTables
            Fitted count tables (their factors, in order, become factors ``1..n_attributes``).
        codes : ndarray of shape (N, n)
            The training codes the tables were fitted on.
        """
        self.tables = tables
        codes = np.asarray(codes)
        factors = tables.factors
        self.n_attributes = len(factors)
        self.n_factors = 1 + self.n_attributes
        self.n_classes = tables.n_classes
        # which prefix configurations training instances reach (back-off with missing parents)
        # (a factor without parents has one level, its last: every key is reached, no mask to build)
        used = [None if len(f.levels) == 1 else [np.zeros(lv.n_keys, bool) for lv in f.levels] for f in factors]
        for fi, f in enumerate(factors):
            if used[fi] is None:
                continue
            used[fi][-1][:] = True
            for lev, pos, _ in self._resolve(f, codes):
                used[fi][lev][pos] = True
        # assign rows: trained blocks first, then untrained prefix blocks
        self.block_row = [[np.full(lv.n_keys, -1, np.int64) for lv in f.levels] for f in factors]
        segs = []  # (factor index, level, key positions)
        for trained in (True, False):
            for fi, f in enumerate(factors):
                if used[fi] is None:
                    if trained and f.levels[0].n_keys:
                        segs.append((fi, 0, np.arange(f.levels[0].n_keys), trained))
                    continue
                for lev in range(len(f.levels)):
                    pos = np.flatnonzero(used[fi][lev] == trained)
                    if pos.size:
                        segs.append((fi, lev, pos, trained))
        start = 1
        bs, seg_f, seg_l, seg_c, seg_n = [], [], [], [], []
        self.segments = []
        n_trained = 1
        for fi, lev, pos, trained in segs:
            card = factors[fi].card
            rows = start + np.arange(pos.size, dtype=np.int64) * card
            self.block_row[fi][lev][pos] = rows
            self.segments.append((fi, lev, pos, start, card))
            bs.append(rows)
            n = pos.size * card
            seg_f.append(fi + 1)
            seg_l.append(lev)
            seg_c.append(card)
            seg_n.append(n)
            start += n
            if trained:
                n_trained = start
        self.n_rows = start
        self.n_trained = n_trained
        # per row after the class row: its segment's factor and level, its value (position in its block)
        seg_n = np.array(seg_n, dtype=np.int64)
        zero = np.zeros(1, np.int64)
        self.row_factor = np.concatenate([zero, np.repeat(np.array(seg_f, dtype=np.int64), seg_n)])
        self.row_level = np.concatenate([zero, np.repeat(np.array(seg_l, dtype=np.int64), seg_n)])
        local = np.arange(start - 1, dtype=np.int64) - np.repeat(np.cumsum(seg_n) - seg_n, seg_n)
        self.row_value = np.concatenate([zero, local % np.repeat(np.array(seg_c, dtype=np.int64), seg_n)])
        self.block_start = np.concatenate(bs) if bs else np.zeros(0, np.int64)
        self.cards = np.array([f.card for f in factors], dtype=np.int64)
        self.value_offset = np.zeros(self.n_attributes + 1, np.int64)
        np.cumsum(self.cards, out=self.value_offset[1:])

    # ------------------------------------------------------------------ lookup
    def _resolve(self, factor, codes):
        """Yield (level, key positions) of instances resolved at each level (longest seen prefix)."""
        x = codes[:, factor.child].astype(np.int64, copy=False)
        todo = np.flatnonzero((x >= 0) & (x < factor.card))
        for lev in range(len(factor.levels) - 1, -1, -1):
            if todo.size == 0:
                break
            level = factor.levels[lev]
            if lev:
                # only the parent columns of the rows still to resolve (codes[todo] copied every column)
                par = np.asarray(factor.parents[:lev], dtype=np.int64)
                pos = level.lookup(mixed_radix(codes[todo[:, None], par], range(lev),
                                               np.asarray(self.tables.cards)[par]))
            else:
                pos = np.full(todo.size, 0 if level.n_keys else -1, np.int64)
            hit = pos >= 0
            yield lev, pos[hit], todo[hit]
            todo = todo[~hit]

    def rows(self, codes: np.ndarray, dtype: DTypeLike = np.int32) -> np.ndarray:
        """Row index per instance and factor: (N, n_factors); -1 = no contribution.

        Column 0 is the class row (0); column ``1 + i`` is the row of attribute ``i``'s value in the
        block of the longest seen prefix of its parent configuration, or -1 when the value is
        outside ``[0, card)`` (or the factor has no counts at all).

        Parameters
        ----------
        codes : ndarray of shape (N, n)
            Attribute codes.
        dtype : dtype, default=np.int32
            Integer type of the result.

        Returns
        -------
        ndarray of shape (N, n_factors)
            Row indices into ``Phi``.
        """
        codes = np.asarray(codes)
        N = codes.shape[0]
        idx = np.full((N, self.n_factors), -1, dtype=dtype)
        idx[:, 0] = 0
        flat = [fi for fi, f in enumerate(self.tables.factors) if len(f.levels) == 1]
        if flat and codes.dtype.kind in "iu" and codes.ndim == 2 and idx.dtype.kind == "i":
            # the same rows in one compiled pass (the numpy form below: tests/test_small_fit_costs.py)
            _flat_rows(codes, *self._flat_plan(flat), idx)
        elif flat:  # factors without parents (all of NB's): the value's row in the one block, every such column at once
            fs = [self.tables.factors[fi] for fi in flat]
            x = codes[:, [f.child for f in fs]].astype(np.int64, copy=False)
            first = np.array([self.block_row[fi][0][0] if f.levels[0].n_keys else -1 for fi, f in zip(flat, fs)],
                             dtype=np.int64)
            ok = (x >= 0) & (x < np.array([f.card for f in fs], dtype=np.int64)) & (first >= 0)
            idx[:, np.asarray(flat) + 1] = np.where(ok, first + x, -1)
        for fi in range(self.n_attributes):
            if len(self.tables.factors[fi].levels) > 1:
                self._fill_rows(fi, codes, idx[:, fi + 1])
        return idx

    def _parentless_log_theta(self, m: float) -> np.ndarray | None:
        """Where every factor is parentless with counts (NB), their :func:`backed_off_log_theta` side by side, computed
        for all of them at once: ``(n_classes, sum of cardinalities)``, the rows of ``Phi`` after the class row in
        order; None otherwise. The same elementwise operations as :meth:`CountTables.log_theta` per factor, so the
        same values to the bit (the per-class totals are sums of integer counts: exact in any order)."""
        tables, factors = self.tables, self.tables.factors
        if (not factors or type(tables).log_theta is not CountTables.log_theta
                or any(len(f.levels) != 1 or f.levels[0].n_keys != 1 for f in factors)
                or len(self.segments) != len(factors)
                or any(seg[0] != fi or seg[2].size != 1 for fi, seg in enumerate(self.segments))):
            return None
        C = np.concatenate([f.levels[0].counts[0] for f in factors], axis=1)  # (Y, V), float counts
        cards = self.cards
        total = np.add.reduceat(C, np.cumsum(cards) - cards, axis=1)  # (Y, n_factors)
        with np.errstate(divide="ignore", invalid="ignore"):  # m = 0 (MLE): log 0 = -inf is meant
            lt = np.log((C + np.repeat(m / cards, cards)) / np.repeat(total + m, cards, axis=1))
            if tables.backoff == "any_class":
                lt = np.where(np.repeat(total > 0, cards, axis=1), lt, np.repeat(-np.log(cards), cards))
        return lt if np.isfinite(lt).all() else np.nan_to_num(lt, nan=LOG_FLOOR, neginf=LOG_FLOOR)

    def _flat_plan(self, flat):
        """Per factor without parents, made once: its code column, the first row of its block (-1: no counts), its
        cardinality and its column of :meth:`rows`."""
        plan = self.__dict__.get("_flat_plan_")
        if plan is None:
            fs = [self.tables.factors[fi] for fi in flat]
            plan = self._flat_plan_ = (
                np.array([f.child for f in fs], dtype=np.int64),
                np.array([self.block_row[fi][0][0] if f.levels[0].n_keys else -1 for fi, f in zip(flat, fs)],
                         dtype=np.int64),
                np.array([f.card for f in fs], dtype=np.int64),
                np.asarray(flat, dtype=np.int64) + 1)
        return plan

    def factor_rows(self, fi: int, codes: np.ndarray) -> np.ndarray:
        """Column ``1 + fi`` of :meth:`rows`: the row of attribute ``fi``'s value per instance (-1: none).

        Parameters
        ----------
        fi : int
            The factor (attribute) index.
        codes : ndarray of shape (N, n)
            Attribute codes.

        Returns
        -------
        ndarray of int64, shape (N,)
            Row indices into ``Phi``.
        """
        codes = np.asarray(codes)
        col = np.full(codes.shape[0], -1, dtype=np.int64)
        self._fill_rows(fi, codes, col)
        return col

    def _fill_rows(self, fi: int, codes: np.ndarray, col: np.ndarray) -> None:
        f = self.tables.factors[fi]
        x = codes[:, f.child]
        for lev, pos, inst in self._resolve(f, codes):
            col[inst] = self.block_row[fi][lev][pos] + x[inst]

    # ------------------------------------------------------------------ values
    def generative_phi(self, m: float) -> np.ndarray:
        """log theta_MAP of every row with per-class back-off: (n_rows, n_classes).

        Row 0 is the log class prior; attribute rows hold :func:`backed_off_log_theta` of their
        block; ``log 0`` (only with ``m = 0``) becomes :data:`LOG_FLOOR`.

        Parameters
        ----------
        m : float
            Total mass of the Dirichlet prior of the m-estimate.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            The generative ``Phi``.
        """
        custom = getattr(self.tables, "generative_phi", None)
        if custom is not None:  # tables with an estimate of their own (bncbench.estimators.ebnc)
            return custom(self, m)
        Y = self.n_classes
        out = np.empty((self.n_rows, Y))
        prior = self.tables.log_prior(m)
        out[0] = prior if np.isfinite(prior).all() else np.nan_to_num(prior, nan=LOG_FLOOR, neginf=LOG_FLOOR)
        flat = self._parentless_log_theta(m)
        if flat is not None:
            out[1:] = flat.T
            return out
        tabs = [backed_off_log_theta(self.tables, f, m) for f in self.tables.factors]
        for fi, lev, pos, start, card in self.segments:
            t = tabs[fi][lev][pos]  # (nb, Y, card)
            out[start : start + pos.size * card] = t.transpose(0, 2, 1).reshape(-1, Y)
        return out


@numba.njit(cache=True, nogil=True)
def _flat_rows(codes, child, first, cards, cols, idx):  # pragma: no cover - compiled
    """:meth:`Layout.rows` of the factors without parents: ``first + x`` where the code ``x`` is in ``[0, card)`` and
    the factor has counts, else -1."""
    for n in range(codes.shape[0]):
        for j in range(child.size):
            x = np.int64(codes[n, child[j]])
            idx[n, cols[j]] = first[j] + x if (x >= 0 and x < cards[j] and first[j] >= 0) else -1
