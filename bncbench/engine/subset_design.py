"""The design of attribute-subset models on the fly: codes in, no row-index table.

DBLⁿ / LRⁿ have one factor per n-subset of the attributes: ``C(a, 3)`` = 11,480 for connect-4's 42
attributes, 24,804 for covertype's 54. A row-index table (:class:`~bncbench.engine.row_table.RowTable`)
takes ``N x (1 + n_subsets) x 4`` bytes (3.1 GB for DBL³ on half of connect-4, 29 GB on half of
covertype). :class:`SubsetDesign` keeps the design rows' *attribute codes* instead (``a`` bytes per
row, compressed by equal code rows) and its kernels find every row of ``Phi`` when they need it
(:class:`~bncbench.engine.subset_lookup.SubsetLookup`), over blocks of design rows:

1. **gather**, subset by subset: the rows of a subset are found for the whole block (the key
   loops run over the block) and their potentials added to the block's scores; a subset's rows
   of ``Phi`` are a few consecutive rows, which stay in cache meanwhile;
2. the loss of every design row of the block;
3. **scatter**, design row by design row: its residual is added to the gradient rows it uses,
   read back from the block's row table (design rows x subsets, int32) that step 1 filled.

A block has at most :data:`CHUNK_ROWS` design rows (:func:`block_size`: fewer when the working
set stays in cache), so the scratch is at most ``2 KiB x n_subsets`` of row table plus the block's
codes and scores, whatever ``N``. Scatter subset by subset, or finding the rows again instead of
keeping the table, was slower: a subset's few gradient rows then take one addition after the
other (a chain through memory), while design row by design row the additions go to different
rows.

Same numbers as the row table: per design row the scores add ``Phi``'s class row, then the
subsets' rows in subset order, and every row of the gradient (which belongs to one subset, or is
the class row) receives its design rows' terms in design-row order, exactly as the row-table
kernels do, and the loss of a design row is their arithmetic in their order. Training data compressed by equal
*code* rows orders and merges them as the row table's compression does (every attribute is in
some subset and every training combination is seen), so a fit gives the same iterates bit for
bit.

Two classes with every subset densely mapped and every code known (:meth:`SubsetDesign.dense_exact`):
:func:`_subset_cll2_dense`, the same sums with fewer memory accesses (``D`` gathered per dense key
once, a table of dense keys, the scatter over tiles of subsets into per-key sums).
"""

from __future__ import annotations

import numba
import numpy as np

from bncbench.engine.row_table import unique_rows
from bncbench.engine.subset_lookup import SubsetLookup, chunk_rows, prefix_codes

CHUNK_ROWS = 512
"""Design rows per block at most (prediction scores, which keep no row table, always use this many)."""
CACHE_BYTES = 16 * 2**20
"""A working set (the rows of ``Phi`` and of the gradient, the dense maps) this small stays in cache: small
blocks then; beyond it, blocks of :data:`CHUNK_ROWS` design rows (see :func:`block_size`)."""
SMALL_TABLE_BYTES = 256 * 2**10
"""The row table of a block when the working set stays in cache (at least :data:`MIN_BLOCK_ROWS` design rows)."""
MIN_BLOCK_ROWS = 32
SCATTER_TILE = 64
"""Subsets per tile of the dense two-class kernel's scatter (:func:`_subset_cll2_dense`)."""
TABLE_PAD = 16
"""Entries added to a row of that kernel's table (``chunk + TABLE_PAD`` per subset): with 512 design rows, rows
2 KiB apart would share a few cache sets and evict each other in the scatter, which reads a tile's rows across."""


def block_size(n_subsets: int, working_set: int) -> int:
    """Design rows per block of the gradient kernels.

    With a working set that stays in cache (``working_set <= CACHE_BYTES``: every subset of
    connect-4) a small block keeps its row table in cache too: ``SMALL_TABLE_BYTES / (4 n_subsets)``
    design rows, within ``[MIN_BLOCK_ROWS, CHUNK_ROWS]``. A larger one (census-income, covertype
    for n = 3) misses the cache on most lookups, and a subset's rows of ``Phi`` and its dense map
    are reused the more design rows a block holds: :data:`CHUNK_ROWS` (a row table of
    ``2 KiB x n_subsets``, 20 MiB for census-income, 48 MiB for covertype).

    Parameters
    ----------
    n_subsets : int
        Subsets (columns of the block's row table).
    working_set : int
        Bytes of the rows of ``Phi`` (or ``D``) and of the gradient, and of the dense maps.

    Returns
    -------
    int
        Design rows per block, in ``[1, CHUNK_ROWS]``.
    """
    if working_set > CACHE_BYTES:
        return int(CHUNK_ROWS)
    return int(max(1, min(CHUNK_ROWS, max(MIN_BLOCK_ROWS, SMALL_TABLE_BYTES // (4 * max(int(n_subsets), 1))))))


class SubsetDesign:
    """Design rows of an attribute-subset layout as compact attribute codes.

    Parameters
    ----------
    codes : ndarray of shape (n, a)
        Compact codes (:func:`bncbench.estimators.subset_rows.compact_codes`: -1 for a value out of
        range) of every design row.
    lookup : SubsetLookup
        Finds the rows of ``Phi`` of every subset.

    Attributes
    ----------
    codes : ndarray of shape (n, a)
        ``codes``, C-contiguous.
    lookup : SubsetLookup
        As given.
    """

    def __init__(self, codes: np.ndarray, lookup: SubsetLookup) -> None:
        """Keep the codes (contiguous) and the lookup.

        Parameters
        ----------
        codes : ndarray of shape (n, a)
            Compact codes of every design row.
        lookup : SubsetLookup
            The rows of ``Phi`` per subset and key.
        """
        self.codes = np.ascontiguousarray(codes)
        self.lookup = lookup
        self._dense = None  # dense_exact, found when first asked
        self._all_seen = None

    @property
    def n(self) -> int:
        """Number of design rows."""
        return int(self.codes.shape[0])

    def take(self, rows: np.ndarray) -> SubsetDesign:
        """The design rows ``rows`` (integer positions or a boolean mask) as a new design."""
        return SubsetDesign(self.codes[rows], self.lookup)

    def keys(self) -> np.ndarray:
        """An int64 code per design row, equal iff the code rows are equal (lexicographic order)."""
        return unique_rows(self.codes)

    def rows(self) -> np.ndarray:
        """The materialized row-index table: (n, 1 + n_subsets) int32 (reference path; large)."""
        return self.lookup.table(self.codes)

    def nll(self, Phi: np.ndarray, C: np.ndarray, csum: np.ndarray, G: np.ndarray, grad: bool) -> float:
        """NLL at ``Phi`` (any number of classes); adds the gradient into ``G`` when ``grad``."""
        B = block_size(self.lookup.n_subsets, 2 * Phi.nbytes + self.lookup.nbytes())
        return _subset_cll(self.codes, C, csum, Phi, G, grad, B, *self.lookup.kernel_arrays())

    def nll2(self, D: np.ndarray, C1: np.ndarray, csum: np.ndarray, g: np.ndarray, grad: bool) -> float:
        """Two classes: NLL from ``D = Phi[:, 1] - Phi[:, 0]``; adds ``dL/dPhi[:, 1]`` into ``g`` when ``grad``.

        Through :func:`_subset_cll2_dense` where :meth:`dense_exact` holds and, with ``grad``, ``g``
        is zero (as :class:`~bncbench.engine.loss.CLL` passes it): the same numbers, faster.
        """
        B = block_size(self.lookup.n_subsets, 2 * D.nbytes + self.lookup.nbytes())
        if self.dense_exact(grad) and not (grad and g.any()):
            return _subset_cll2_dense(self.codes, C1, csum, D, g, grad, B, SCATTER_TILE, *self.lookup.kernel_arrays())
        return _subset_cll2(self.codes, C1, csum, D, g, grad, B, *self.lookup.kernel_arrays())

    def dense_exact(self, grad: bool) -> bool:
        """Whether :func:`_subset_cll2_dense` gives this design's numbers exactly.

        It needs every subset densely mapped and every code known (``>= 0``); with ``grad``, also
        that no design row falls on a subset's unseen row (training codes never do), since it
        gathers the gradient per dense key and adds each key's sum into the key's row at the end:
        one key per row, the same sum in the same order. Found once per design.

        Parameters
        ----------
        grad : bool
            Whether the gradient is wanted.

        Returns
        -------
        bool
            True when the dense kernel applies.
        """
        if self._dense is None:
            lk = self.lookup
            self._dense = bool((lk.dense_off >= 0).all() and (self.codes >= 0).all())
        if not self._dense or not grad:
            return self._dense
        if self._all_seen is None:
            self._all_seen = not _hits_unseen(self.codes, CHUNK_ROWS, *self.lookup.kernel_arrays())
        return self._all_seen

    def scores(self, Phi: np.ndarray) -> np.ndarray:
        """``A @ Phi``: (n, n_classes), block by block."""
        S = np.zeros((self.n, Phi.shape[1]))
        _subset_scores(self.codes, np.ascontiguousarray(Phi, dtype=np.float64), S, CHUNK_ROWS,
                       *self.lookup.kernel_arrays())
        return S


@numba.njit(cache=True, nogil=True)
def _softmax_nll(s, C, n, cs, want_grad):  # pragma: no cover - compiled
    """NLL of design row ``n`` with scores ``s`` (one per class); ``want_grad``: ``s`` becomes ``cs * softmax - C[n]``.

    The arithmetic of :func:`bncbench.engine.row_table._cll_kernel`, in the same order.
    """
    Y = s.shape[0]
    mx = s[0]
    for y in range(1, Y):
        mx = max(mx, s[y])
    z = 0.0
    acc = 0.0
    for y in range(Y):
        acc -= C[n, y] * s[y]
        s[y] = np.exp(s[y] - mx)  # s now holds exp(S - max), reused by the gradient
        z += s[y]
    nll = acc + cs * (mx + np.log(z))
    if want_grad:
        sc = cs / z
        for y in range(Y):
            s[y] = sc * s[y] - C[n, y]  # csum * softmax - C
    return nll


@numba.njit(cache=True, nogil=True)
def _logistic_nll(d, c1, cs, want_grad):  # pragma: no cover - compiled
    """Two classes: ``(nll, t)`` of a design row with score difference ``d``, ``t = cs * sigmoid(d) - c1`` (or 0).

    The arithmetic of :func:`bncbench.engine.row_table._cll2_kernel`, in the same order.
    """
    e = np.exp(-abs(d))  # softplus(d) = max(d, 0) + log1p(e); sigmoid from the same e
    nll = cs * (max(d, 0.0) + np.log1p(e)) - c1 * d
    t = 0.0
    if want_grad:
        p = 1.0 / (1.0 + e)
        if d < 0.0:
            p *= e
        t = cs * p - c1  # csum * P(class 1) - C_1
    return nll, t


@numba.njit(cache=True, nogil=True, inline="always")
def _block(codes, b0, B):  # pragma: no cover - compiled
    """Codes of design rows ``b0 .. b0 + B - 1`` as a contiguous (attributes x B) block; and whether all are >= 0."""
    A = codes.shape[1]
    ct = np.empty((A, B), dtype=np.int32)
    low = 0
    for b in range(B):
        for j in range(A):
            v = codes[b0 + b, j]
            ct[j, b] = v
            low = min(low, v)
    return ct, low >= 0


@numba.njit(cache=True, nogil=True)
def _subset_cll(codes, C, csum, Phi, G, want_grad, chunk, subsets, strides, dense_off, dense_rows, row_start, keys,
                unseen_base, last, radix, prefix_strides, new_prefix):  # pragma: no cover - compiled
    N = codes.shape[0]
    S, Y = subsets.shape[0], Phi.shape[1]
    table = np.empty((chunk, S) if want_grad else (1, 1), dtype=dense_rows.dtype)  # the block's rows, for the scatter
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, valid = _block(codes, b0, B)
        kb = np.empty(B, dtype=np.int64)
        bad = np.empty(B, dtype=np.int32)
        prefix = np.zeros(B, dtype=np.int64)
        sc = np.zeros((B, Y))
        for b in range(B):
            for y in range(Y):
                sc[b, y] += Phi[0, y]
        for s in range(S):  # gather, subset by subset: a subset's rows of Phi stay in cache
            off = dense_off[s]
            if valid and new_prefix[s]:
                prefix_codes(ct, s, subsets, prefix_strides, prefix)
            if valid and off >= 0:
                col = ct[last[s]]
                m = radix[s]
                for b in range(B):
                    r = np.uint64(dense_rows[np.uint64(off + prefix[b] * m + col[b])])
                    if want_grad:
                        table[b, s] = r
                    for y in range(Y):
                        sc[b, y] += Phi[r, y]
            else:
                chunk_rows(ct, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, kb, bad)
                for b in range(B):
                    r = kb[b]
                    if want_grad:
                        table[b, s] = r
                    if r >= 0:
                        for y in range(Y):
                            sc[b, y] += Phi[np.uint64(r), y]
        for b in range(B):
            nll += _softmax_nll(sc[b], C, b0 + b, csum[b0 + b], want_grad)
        if want_grad:  # scatter, design row by design row (the row table's order)
            for b in range(B):
                for y in range(Y):
                    G[0, y] += sc[b, y]
                for s in range(S):
                    r = table[b, s]
                    if r >= 0:
                        for y in range(Y):
                            G[np.uint64(r), y] += sc[b, y]
    return nll


@numba.njit(cache=True, nogil=True, inline="always")
def _class_scores(D, B):  # pragma: no cover - compiled
    """A block's score differences, started at the class row's (``0 + D[0]``, as the sums are taken)."""
    d = np.zeros(B)
    for b in range(B):
        d[b] += D[0]
    return d


@numba.njit(cache=True, nogil=True, inline="always")
def _block_logistic(nll, d, C1, csum, b0, B, want_grad):  # pragma: no cover - compiled
    """``nll`` plus the block's losses, added row by row; ``d`` becomes each row's dL/d(score difference)."""
    for b in range(B):
        v, t = _logistic_nll(d[b], C1[b0 + b], csum[b0 + b], want_grad)
        nll += v
        d[b] = t
    return nll


@numba.njit(cache=True, nogil=True)
def _subset_cll2(codes, C1, csum, D, g, want_grad, chunk, subsets, strides, dense_off, dense_rows, row_start, keys,
                 unseen_base, last, radix, prefix_strides, new_prefix):  # pragma: no cover - compiled
    """Two classes: NLL from score differences; ``g`` = dL/dPhi[:, 1]."""
    N = codes.shape[0]
    S = subsets.shape[0]
    table = np.empty((chunk, S) if want_grad else (1, 1), dtype=dense_rows.dtype)
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, valid = _block(codes, b0, B)
        kb = np.empty(B, dtype=np.int64)
        bad = np.empty(B, dtype=np.int32)
        prefix = np.zeros(B, dtype=np.int64)
        d = _class_scores(D, B)
        for s in range(S):
            off = dense_off[s]
            if valid and new_prefix[s]:
                prefix_codes(ct, s, subsets, prefix_strides, prefix)
            if valid and off >= 0:
                col = ct[last[s]]
                m = radix[s]
                for b in range(B):
                    r = dense_rows[np.uint64(off + prefix[b] * m + col[b])]
                    if want_grad:
                        table[b, s] = r
                    d[b] += D[np.uint64(r)]
            else:
                chunk_rows(ct, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, kb, bad)
                for b in range(B):
                    r = kb[b]
                    if want_grad:
                        table[b, s] = r
                    if r >= 0:
                        d[b] += D[np.uint64(r)]
        nll = _block_logistic(nll, d, C1, csum, b0, B, want_grad)
        if want_grad:
            for b in range(B):
                t = d[b]
                g[0] += t
                for s in range(S):
                    r = table[b, s]
                    if r >= 0:
                        g[np.uint64(r)] += t
    return nll


@numba.njit(cache=True, nogil=True)
def _subset_cll2_dense(codes, C1, csum, D, g, want_grad, chunk, tile, subsets, strides, dense_off, dense_rows,
                       row_start, keys, unseen_base, last, radix, prefix_strides, new_prefix):  # pragma: no cover
    """:func:`_subset_cll2` when every subset is densely mapped and every code known (:meth:`SubsetDesign.dense_exact`).

    The same sums in the same order, fewer memory accesses: ``D`` is gathered per dense key once
    (``Dd``), so a lookup is one load instead of two dependent ones; the block's table holds dense
    keys subset by subset (contiguous writes); the scatter goes over tiles of ``tile`` subsets,
    design row by design row within a tile (every gradient row belongs to one subset, so each
    still receives its terms in design-row order), into per-key sums ``gd`` that are added into
    ``g`` at the end. With ``g`` zero and no key on an unseen row (one key per row), ``g`` is
    :func:`_subset_cll2`'s bit for bit.
    """
    N = codes.shape[0]
    S = subsets.shape[0]
    K = dense_rows.shape[0]
    Dd = np.empty(K)
    for k in range(K):
        Dd[k] = D[np.uint64(dense_rows[k])]
    gd = np.zeros(K if want_grad else 1)
    # rows padded off a multiple of 512 bytes: a tile's rows, read across, fall in different cache sets
    table = np.empty((S, chunk + TABLE_PAD) if want_grad else (1, 1), dtype=dense_rows.dtype)
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, _ = _block(codes, b0, B)
        prefix = np.zeros(B, dtype=np.int64)
        d = _class_scores(D, B)
        for s in range(S):
            off = dense_off[s]
            if new_prefix[s]:
                prefix_codes(ct, s, subsets, prefix_strides, prefix)
            col = ct[last[s]]
            m = radix[s]
            if want_grad:
                row = table[s]
                for b in range(B):
                    k = off + prefix[b] * m + col[b]
                    row[b] = k
                    d[b] += Dd[np.uint64(k)]
            else:
                for b in range(B):
                    d[b] += Dd[np.uint64(off + prefix[b] * m + col[b])]
        nll = _block_logistic(nll, d, C1, csum, b0, B, want_grad)
        if want_grad:
            for b in range(B):
                g[0] += d[b]
            for s0 in range(0, S, tile):
                s1 = min(S, s0 + tile)
                for b in range(B):
                    t = d[b]
                    for s in range(s0, s1):
                        gd[np.uint64(table[s, b])] += t
    if want_grad:
        for k in range(K):
            g[np.uint64(dense_rows[k])] += gd[k]
    return nll


@numba.njit(cache=True, nogil=True)
def _hits_unseen(codes, chunk, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, last, radix,
                 prefix_strides, new_prefix):  # pragma: no cover - compiled
    """Whether a design row (codes all known, subsets all dense) falls on some subset's unseen row."""
    N = codes.shape[0]
    S = subsets.shape[0]
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, _ = _block(codes, b0, B)
        prefix = np.zeros(B, dtype=np.int64)
        for s in range(S):
            if new_prefix[s]:
                prefix_codes(ct, s, subsets, prefix_strides, prefix)
            col = ct[last[s]]
            off, m = dense_off[s], radix[s]
            for b in range(B):
                if dense_rows[np.uint64(off + prefix[b] * m + col[b])] >= unseen_base:
                    return True
    return False


@numba.njit(cache=True, nogil=True)
def _subset_scores(codes, Phi, out, chunk, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, last,
                   radix, prefix_strides, new_prefix):  # pragma: no cover - compiled
    N = codes.shape[0]
    S, Y = subsets.shape[0], Phi.shape[1]
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, valid = _block(codes, b0, B)
        kb = np.empty(B, dtype=np.int64)
        bad = np.empty(B, dtype=np.int32)
        prefix = np.zeros(B, dtype=np.int64)
        for b in range(B):
            for y in range(Y):
                out[b0 + b, y] += Phi[0, y]
        for s in range(S):
            off = dense_off[s]
            if valid and new_prefix[s]:
                prefix_codes(ct, s, subsets, prefix_strides, prefix)
            if valid and off >= 0:
                col = ct[last[s]]
                m = radix[s]
                for b in range(B):
                    r = np.uint64(dense_rows[np.uint64(off + prefix[b] * m + col[b])])
                    for y in range(Y):
                        out[b0 + b, y] += Phi[r, y]
            else:
                chunk_rows(ct, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, kb, bad)
                for b in range(B):
                    r = kb[b]
                    if r >= 0:
                        for y in range(Y):
                            out[b0 + b, y] += Phi[np.uint64(r), y]
