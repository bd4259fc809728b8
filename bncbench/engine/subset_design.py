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

By default (the engine option ``combine_subsets``), with every subset dense and every code known (any
number of classes), consecutive subsets that combine share one lookup (:class:`SubsetGroups`,
:func:`_grouped_cll2`, :func:`_grouped_cll`): a table per group keyed by its attributes' union. The
same objective with the sums in another order, so equal to rounding (connect-4's A2JE: 178 lookups per
design row instead of 861, about 0.37x the time per evaluation). With two classes, from a design's second
evaluation on, every design row's entry in every table is stored (:meth:`SubsetDesign.group_keys`,
:func:`_keyed_cll2`): the same sums in the same order, bit for bit, without finding the keys from the codes again
(adult's A2JE: about 0.7x the time per evaluation).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bncbench.engine.loss import ENGINE
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
"""Subsets per tile of the kernels' scatter where it goes over tiles (:func:`_subset_cll2_dense` beyond
:data:`KEYS_KEPT_BYTES`, the combined tables' kernels)."""
GROUP_KEYS = 729
"""Keys of a combined table at most (:class:`SubsetGroups`): consecutive subsets share one lookup while the
value combinations of their attributes' union number at most this many (3**6: six ternary attributes, 5.7 KiB of
table and as much of its gradient; 243 to 2,187 measured within noise on connect-4). The same bound for more classes
(a row of potentials per entry): smaller bounds were no faster on nursery, letter and pendigits."""
GROUP_RATIO = 0.9
"""The combined tables are used where they need at most this many lookups per subset (groups / subsets). Measured
(one evaluation of A2JE): adult 65 / 91 pairs 0.82-0.88x the per-subset kernel's time, letter (26 classes) 95 / 120
about 0.9x, pendigits 108 / 120 and letter at a bound of 28 keys, 118 / 120, no faster."""
GROUP_BUDGET = 256 * 2**20
"""Bytes of the combined tables at most: their values and gradient (16 bytes per entry, per evaluation) and the
rows every entry reads (:attr:`SubsetGroups.entry_rows`, once); beyond it, the per-subset kernels. Connect-4's
A3JE on half the rows: 2.0 million entries, about 65 MB."""
KEY_BUDGET = 256 * 2**20
"""Bytes of a design's stored group keys at most (:meth:`SubsetDesign.group_keys`: every design row's entry in every
combined table, 2 bytes each, by block); beyond it the kernel finds the keys from the codes at every evaluation
(:func:`_grouped_cll2`). On half the rows: adult's A2JE 1.7 MiB, connect-4's 12 MiB, census-income's 108 MiB,
connect-4's A3JE 193 MiB."""
SCORE_BLOCK_BYTES = 2**20
"""The block's scores (8 bytes per design row and class) in the softmax kernels (:func:`_subset_cll`,
:func:`_grouped_cll`) at most: the block is read once per subset (group) in the gather and again in the scatter, so
it should stay in cache, while every block reads every subset's rows of ``Phi`` (and of the gradient) once.
Measured (one evaluation of DBL³, half the rows, paired against blocks of 512 design rows and the scatter over tiles of subsets these kernels had before; ``docs/benchmarks.md``,
the medians of three rounds): letter (26 classes, blocks of 5,041 rows) 0.54x, pendigits 0.43x, satellite 0.49x,
thyroid (combined tables) 0.70x, optdigits (2,810 rows in one block) 0.90x; blocks of 1,024 to all rows within noise
of each other, 512 rows slower."""
KEYS_KEPT_BYTES = 8 * 2**20
"""The dense two-class kernel (:func:`_subset_cll2_dense`) keeps a block's dense keys of every subset for the
scatter while that table takes at most this many bytes; beyond, it finds a tile's keys again from the codes (the
softmax kernel :func:`_subset_cll` always finds them again, subset by subset). Measured (one evaluation, the
same bits either way; ``docs/benchmarks.md``): musk1's LR³ (748,660 triples, 187 design rows: a 1.6 GB table)
0.39-0.59x the time with the rows found again; 4,060-7,140 triples in blocks of 32 rows, 1.8-2.5x the time found
again by a first version, kept 0.9-1.0x."""
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


def score_block_rows(n_classes: int) -> int:
    """Design rows per block of the softmax kernels (:func:`_subset_cll`, :func:`_grouped_cll`): as many as keep the
    block's scores within :data:`SCORE_BLOCK_BYTES`.

    Parameters
    ----------
    n_classes : int
        Classes (scores per design row).

    Returns
    -------
    int
        Design rows per block, at least 1.
    """
    return int(max(1, SCORE_BLOCK_BYTES // (8 * max(int(n_classes), 1))))


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
    combine : bool
        As given.
    """

    def __init__(self, codes: np.ndarray, lookup: SubsetLookup, combine: bool = ENGINE["combine_subsets"]) -> None:
        """Keep the codes (contiguous) and the lookup.

        Parameters
        ----------
        codes : ndarray of shape (n, a)
            Compact codes of every design row.
        lookup : SubsetLookup
            The rows of ``Phi`` per subset and key.
        combine : bool, default=ENGINE["combine_subsets"]
            Evaluate over combined tables (:meth:`combined`) where they apply (the engine option
            ``combine_subsets``, :data:`bncbench.engine.loss.ENGINE_OPTIONS`).
        """
        self.codes = np.ascontiguousarray(codes)
        self.lookup = lookup
        self.combine = bool(combine)
        self._dense = None  # dense_exact, found when first asked
        self._all_seen = None
        self._keys = None  # ((groups, chunk), stored group keys or None), see group_keys

    @property
    def n(self) -> int:
        """Number of design rows."""
        return int(self.codes.shape[0])

    def take(self, rows: np.ndarray) -> SubsetDesign:
        """The design rows ``rows`` (integer positions or a boolean mask) as a new design."""
        return SubsetDesign(self.codes[rows], self.lookup, self.combine)

    def keys(self) -> np.ndarray:
        """An int64 code per design row, equal iff the code rows are equal (lexicographic order)."""
        return unique_rows(self.codes)

    def rows(self) -> np.ndarray:
        """The materialized row-index table: (n, 1 + n_subsets) int32 (reference path; large)."""
        return self.lookup.table(self.codes)

    def nll(self, Phi: np.ndarray, C: np.ndarray, csum: np.ndarray, G: np.ndarray, grad: bool) -> float:
        """NLL at ``Phi`` (any number of classes); adds the gradient into ``G`` when ``grad``.

        Through :func:`_grouped_cll` where :meth:`combined` gives tables (the sums in another order).
        """
        Y = Phi.shape[1]
        groups = self.combined(Y)
        if groups is not None:
            return _grouped_cll(self.codes, C, csum, Phi, G, grad, score_block_rows(Y), *groups.arrays())
        return _subset_cll(self.codes, C, csum, Phi, G, grad, score_block_rows(Y), *self.lookup.kernel_arrays())

    def nll2(self, D: np.ndarray, C1: np.ndarray, csum: np.ndarray, g: np.ndarray, grad: bool) -> float:
        """Two classes: NLL from ``D = Phi[:, 1] - Phi[:, 0]``; adds ``dL/dPhi[:, 1]`` into ``g`` when ``grad``.

        Through :func:`_grouped_cll2` where :meth:`combined` gives tables (the sums in another order), from the
        second evaluation on through :func:`_keyed_cll2` with the keys stored (:meth:`group_keys`, the same numbers);
        otherwise through :func:`_subset_cll2_dense` where :meth:`dense_exact` holds and, with ``grad``,
        ``g`` is zero (as :class:`~bncbench.engine.loss.CLL` passes it): the same numbers, faster.
        """
        groups = self.combined()
        if groups is not None:
            B = block_size(groups.n_groups, 2 * D.nbytes + groups.nbytes(1))
            keys = self.group_keys(groups, B)
            if keys is not None:
                return _keyed_cll2(keys, C1, csum, D, g, grad, B, SCATTER_TILE, groups.table_off, groups.entry_start,
                                   groups.entry_n, groups.entry_rows, groups.key_offsets)
            return _grouped_cll2(self.codes, C1, csum, D, g, grad, B, SCATTER_TILE, *groups.arrays())
        B = block_size(self.lookup.n_subsets, 2 * D.nbytes + self.lookup.nbytes())
        if self.dense_exact(grad) and not (grad and g.any()):
            return _subset_cll2_dense(self.codes, C1, csum, D, g, grad, B, SCATTER_TILE, KEYS_KEPT_BYTES,
                                      *self.lookup.kernel_arrays())
        return _subset_cll2(self.codes, C1, csum, D, g, grad, B, *self.lookup.kernel_arrays())

    def combined(self, values: int = 1):
        """The combined tables this design's evaluations use, or None (the per-subset kernels).

        Tables when :attr:`combine` is set, every subset is densely mapped, every code known, the
        subsets combine (:class:`SubsetGroups` of at most :data:`GROUP_KEYS` keys: at most
        :data:`GROUP_RATIO` groups per subset) and the tables fit :data:`GROUP_BUDGET` with ``values``
        per entry. Built once per lookup.

        Parameters
        ----------
        values : int, default=1
            Values per table entry: 1 for two classes (score differences), the classes otherwise.

        Returns
        -------
        SubsetGroups or None
        """
        if not self.combine or not self.dense_exact(False):
            return None
        lk = self.lookup
        if lk.groups is None:
            lk.groups = SubsetGroups(lk, GROUP_KEYS, GROUP_BUDGET)
        g = lk.groups
        ok = g.fits and g.nbytes(values) <= GROUP_BUDGET and g.n_groups <= GROUP_RATIO * lk.n_subsets
        return g if ok else None

    def group_keys(self, groups: SubsetGroups, chunk: int) -> np.ndarray | None:
        """Every design row's entry in every combined table, stored by block, or None (found at each evaluation).

        The entries depend on the codes only, so a design evaluated again (a fit's every evaluation) reads them
        instead of finding them from the codes (:func:`_group_key_table`): the gather is then one load of the key
        and one of the table, and the scatter reads the same keys. Stored at the second call for these ``groups``
        and ``chunk`` (a design evaluated once, such as a minibatch, stores nothing), while they take at most
        :data:`KEY_BUDGET` bytes. A key is the entry in the concatenated tables while they hold at most 65,536
        entries, else the entry within its group's table (:attr:`SubsetGroups.key_offsets`): uint16 either way
        (int32 only for a :data:`GROUP_KEYS` above 65,536).

        Parameters
        ----------
        groups : SubsetGroups
            The combined tables (:meth:`combined`).
        chunk : int
            Design rows per block of the kernel.

        Returns
        -------
        ndarray of shape (n_blocks, n_groups, chunk + TABLE_PAD) or None
            ``keys[k, grp, b]``: the entry of design row ``k * chunk + b`` in group ``grp``'s table, less
            ``key_offsets[grp]`` where those are not None.
        """
        tag = (groups, int(chunk))
        if self._keys is None or self._keys[0][0] is not groups or self._keys[0][1] != tag[1]:
            self._keys = (tag, None, False)  # first call for these: nothing stored
            return None
        if self._keys[1] is None and not self._keys[2]:
            n_blocks = -(-self.n // int(chunk))
            off, dtype = groups.key_offsets, groups.key_dtype
            shape = (n_blocks, groups.n_groups, int(chunk) + TABLE_PAD)
            keys = None
            if np.prod(shape, dtype=np.float64) * np.dtype(dtype).itemsize <= KEY_BUDGET:
                keys = np.zeros(shape, dtype)
                _group_key_table(self.codes, int(chunk), groups.attrs, groups.strides, groups.n_attrs,
                                 groups.table_off if off is None else np.zeros_like(off), keys)
            self._keys = (tag, keys, True)
        return self._keys[1]

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


@numba.njit(cache=True, nogil=True, inline="always")
def _subset_rows(ct, valid, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, last, radix,
                 prefix_strides, new_prefix, prefix, kb, bad, B):  # pragma: no cover - compiled
    """``kb[:B]``: subset ``s``'s engine rows of the block's design rows (-1: none), ``prefix`` carried along.

    Subsets must be visited in order (a subset's prefix code is computed where it changes); the fast path
    (a dense subset, a block of known codes) reads the dense map, the other :func:`chunk_rows`.
    """
    off = dense_off[s]
    if valid and new_prefix[s]:
        prefix_codes(ct, s, subsets, prefix_strides, prefix)
    if valid and off >= 0:
        col = ct[last[s]]
        m = radix[s]
        for b in range(B):
            kb[b] = dense_rows[np.uint64(off + prefix[b] * m + col[b])]
    else:
        chunk_rows(ct, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, kb, bad)


@numba.njit(cache=True, nogil=True)
def _subset_cll(codes, C, csum, Phi, G, want_grad, chunk, subsets, strides, dense_off, dense_rows, row_start, keys,
                unseen_base, last, radix, prefix_strides, new_prefix):  # pragma: no cover - compiled
    """More than two classes: NLL, and with ``want_grad`` ``dL/dPhi`` added into ``G``.

    Per block of ``chunk`` design rows (:func:`score_block_rows`: the block's scores stay in cache), subset by
    subset: the gather adds a subset's rows of ``Phi`` to the block's scores, and the scatter finds the subset's
    rows of the block again from the codes and adds the block's ``dL/dscores`` into them, design row by design
    row. A subset's rows of ``Phi`` and ``G`` stay in cache while the block's scores are read in order. Every row
    of ``G`` belongs to one subset and so receives its terms in design-row order, and every score its terms in
    subset order: the row table's numbers, at any block size.
    """
    N = codes.shape[0]
    S, Y = subsets.shape[0], Phi.shape[1]
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
        for s in range(S):  # gather
            _subset_rows(ct, valid, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base, last,
                         radix, prefix_strides, new_prefix, prefix, kb, bad, B)
            for b in range(B):
                r = kb[b]
                if r >= 0:
                    for y in range(Y):
                        sc[b, y] += Phi[np.uint64(r), y]
        for b in range(B):
            nll += _softmax_nll(sc[b], C, b0 + b, csum[b0 + b], want_grad)
        if want_grad:  # scatter
            for b in range(B):
                for y in range(Y):
                    G[0, y] += sc[b, y]
            for s in range(S):
                _subset_rows(ct, valid, s, subsets, strides, dense_off, dense_rows, row_start, keys, unseen_base,
                             last, radix, prefix_strides, new_prefix, prefix, kb, bad, B)
                for b in range(B):
                    r = kb[b]
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
def _tile_scatter(g, gk, table, d, B, S, tile, off):  # pragma: no cover - compiled
    """A block's two-class scatter over a table of keys: ``d[b]`` into ``g[0]`` (the class row) and into
    ``gk[table[s, b]]`` for every column ``s < S``, over tiles of ``tile`` columns, design row by design
    row within a tile (the order of :func:`_subset_cll2_dense` and :func:`_grouped_cll2`). With ``off`` (an
    array, not None: numba compiles each case apart) the keys are column ``s``'s own, ``gk[off[s] + table[s, b]]``."""
    for b in range(B):
        g[0] += d[b]
    for s0 in range(0, S, tile):
        s1 = min(S, s0 + tile)
        for b in range(B):
            t = d[b]
            for s in range(s0, s1):
                if off is None:
                    gk[np.uint64(table[s, b])] += t
                else:
                    gk[np.uint64(off[s] + table[s, b])] += t


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


@numba.njit(cache=True, nogil=True, inline="always")
def _dense_keys(ct, s, subsets, last, radix, prefix_strides, new_prefix, dense_off, prefix, out,
                B):  # pragma: no cover - compiled
    """``out[:B]``: subset ``s``'s dense keys (offsets into the dense maps) of the block's design rows, ``prefix``
    carried along (subsets visited in order; every code known, the subset densely mapped)."""
    if new_prefix[s]:
        prefix_codes(ct, s, subsets, prefix_strides, prefix)
    col = ct[last[s]]
    m = radix[s]
    off = dense_off[s]
    for b in range(B):
        out[b] = off + prefix[b] * m + col[b]


@numba.njit(cache=True, nogil=True)
def _subset_cll2_dense(codes, C1, csum, D, g, want_grad, chunk, tile, keep_bytes, subsets, strides, dense_off,
                       dense_rows, row_start, keys, unseen_base, last, radix, prefix_strides,
                       new_prefix):  # pragma: no cover - compiled
    """:func:`_subset_cll2` when every subset is densely mapped and every code known (:meth:`SubsetDesign.dense_exact`).

    The same sums in the same order, fewer memory accesses: ``D`` is gathered per dense key once
    (``Dd``), so a lookup is one load instead of two dependent ones; the scatter goes over tiles of
    ``tile`` subsets (their keys kept from the gather while that table takes at most ``keep_bytes``,
    :data:`KEYS_KEPT_BYTES`, else found again from the codes), design row by design row within a tile
    (every gradient row belongs to one subset, so each still receives its terms in design-row order),
    into per-key sums ``gd`` that are added into ``g`` at the end. With ``g`` zero and no key
    on an unseen row (one key per row), ``g`` is :func:`_subset_cll2`'s bit for bit. ``D`` and ``g``
    may stop before the unseen rows (the trained rows only): a key whose row lies beyond them is never
    a design row's, and is neither read nor written.
    """
    N = codes.shape[0]
    S = subsets.shape[0]
    K = dense_rows.shape[0]
    n_rows = D.shape[0]
    Dd = np.zeros(K)
    for k in range(K):
        r = dense_rows[k]
        if r < n_rows:
            Dd[k] = D[np.uint64(r)]
    gd = np.zeros(K if want_grad else 1)
    keep = want_grad and S * (chunk + TABLE_PAD) * dense_rows.itemsize <= keep_bytes
    # rows padded off a multiple of 512 bytes: a tile's rows, read across, fall in different cache sets
    table = np.empty(((S if keep else tile) if want_grad else 1, chunk + TABLE_PAD), dtype=dense_rows.dtype)
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, _ = _block(codes, b0, B)
        prefix = np.zeros(B, dtype=np.int64)
        d = _class_scores(D, B)
        for s in range(S):
            if new_prefix[s]:
                prefix_codes(ct, s, subsets, prefix_strides, prefix)
            col = ct[last[s]]
            m = radix[s]
            off = dense_off[s]
            if keep:
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
                base = s0 if keep else 0
                if not keep:
                    for s in range(s0, s1):
                        _dense_keys(ct, s, subsets, last, radix, prefix_strides, new_prefix, dense_off, prefix,
                                    table[s - s0], B)
                for b in range(B):
                    t = d[b]
                    for j in range(s1 - s0):
                        gd[np.uint64(table[base + j, b])] += t
    if want_grad:
        n_rows = g.shape[0]
        for k in range(K):
            r = dense_rows[k]
            if r < n_rows:
                g[np.uint64(r)] += gd[k]
    return nll


class SubsetGroups:
    """Consecutive subsets combined into tables keyed by their attributes' union: one lookup serves a group.

    A group's table holds, for every value combination of the union of its subsets' attributes,
    the sum of its subsets' potentials (``D`` at their engine rows), so that a design row's score
    difference takes one lookup per group instead of one per subset; its gradient is scattered
    once per group into the combined table's entries and reduced to the subsets' rows at the end
    (each entry's sum added to every row it was built from). The groups are formed greedily in
    subset order while the union's key space stays at most ``max_keys`` (in lexicographic order
    consecutive subsets share their prefix: A2JE's pairs ``(a, b), (a, b+1), ...``; 243 keys for
    four pairs of ternary attributes).

    Parameters
    ----------
    lookup : SubsetLookup
        Every subset densely mapped (``dense_off >= 0``).
    max_keys : int, default=GROUP_KEYS
        Keys of a combined table at most (a single subset with a larger key space is a group of its own).
    max_bytes : int, default=GROUP_BUDGET
        Bytes of the tables at most (:meth:`nbytes` of one value per entry); beyond it the tables are
        not built (``fits`` false).

    Attributes
    ----------
    fits : bool
        Whether the tables are within ``max_bytes`` (else ``entry_rows`` is None).
    n_groups : int
    attrs, strides : ndarray (n_groups, u) of int64
        The union's attributes (padded with attribute 0, stride 0) and their mixed-radix strides.
    n_attrs : ndarray (n_groups,) of int64
    table_off : ndarray (n_groups + 1,) of int64
        Offset of each group's table in the concatenated tables.
    entry_start, entry_n : ndarray (n_groups,) of int64
        Offset of a group's first entry in ``entry_rows``; its subsets.
    entry_rows : ndarray of int32 or int64
        Per group, per table entry, per subset of the group: the engine row the entry reads.
    """

    def __init__(self, lookup, max_keys: int = GROUP_KEYS, max_bytes: int = GROUP_BUDGET) -> None:
        """Group the subsets and list every table entry's engine rows.

        Parameters
        ----------
        lookup : SubsetLookup
            The subsets' dense maps.
        max_keys : int, default=GROUP_KEYS
            Keys of a combined table at most.
        max_bytes : int, default=GROUP_BUDGET
            Bytes of the tables at most.
        """
        subsets, strides, space = lookup.subsets, lookup.strides, lookup.space
        S, n = subsets.shape
        cards = {}
        for s in range(S):  # card of a_j = strides[j-1] / strides[j]; of a_0, space / strides[0]
            for j in range(n):
                hi = space[s] if j == 0 else strides[s, j - 1]
                cards[int(subsets[s, j])] = int(hi // strides[s, j])
        groups, cur, union = [], [], set()
        for s in range(S):
            u = union | {int(a) for a in subsets[s]}
            if cur and math.prod(cards[a] for a in u) > int(max_keys):  # exact; np.prod of a short list: 10x slower
                groups.append((cur, sorted(union)))
                cur, u = [], {int(a) for a in subsets[s]}
            cur.append(s)
            union = u
        if cur:
            groups.append((cur, sorted(union)))
        G = len(groups)
        width = max(len(u) for _, u in groups) if G else 1
        self.n_groups = G
        self.attrs = np.zeros((G, width), np.int64)
        self.strides = np.zeros((G, width), np.int64)
        self.n_attrs = np.array([len(u) for _, u in groups], np.int64)
        sizes = np.array([math.prod(cards[a] for a in u) for _, u in groups], np.int64)
        self.table_off = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        self.entry_n = np.array([len(c) for c, _ in groups], np.int64)
        self.entry_start = np.r_[0, np.cumsum(sizes * self.entry_n)[:-1]].astype(np.int64)
        self._row_bytes = lookup.dense_rows.itemsize * int((sizes * self.entry_n).sum())
        self.fits = self.nbytes(1) <= int(max_bytes)
        self.entry_rows = None
        if not self.fits:
            return
        parts = []
        for g, (members, u) in enumerate(groups):
            cu = [cards[a] for a in u]
            st = np.r_[np.cumprod(cu[::-1])[::-1][1:], 1].astype(np.int64)
            self.attrs[g, :len(u)] = u
            self.strides[g, :len(u)] = st
            values = np.indices(cu).reshape(len(u), -1)  # (union attributes, entries), last fastest
            pos = {a: i for i, a in enumerate(u)}
            keys = np.empty((sizes[g], len(members)), np.int64)
            for i, s in enumerate(members):
                keys[:, i] = lookup.dense_off[s] + sum(values[pos[int(a)]] * strides[s, j]
                                                       for j, a in enumerate(subsets[s]))
            parts.append(lookup.dense_rows[keys].ravel())
        self.entry_rows = np.ascontiguousarray(np.concatenate(parts) if parts else lookup.dense_rows[:0])

    def nbytes(self, values: int = 1) -> int:
        """Bytes of the tables: ``values`` per entry and their gradient (per evaluation), and :attr:`entry_rows`."""
        return 16 * int(values) * int(self.table_off[-1]) + self._row_bytes

    @property
    def key_offsets(self) -> np.ndarray | None:
        """What a stored key (:meth:`SubsetDesign.group_keys`) is relative to: ``None`` while the tables hold at most
        65,536 entries in all (a key is the entry in the concatenated tables, uint16: the kernel adds nothing), else
        :attr:`table_off` (a key is the entry within its group's table, uint16 while a group holds at most 65,536, as
        :data:`GROUP_KEYS` keeps it; the kernel adds the group's offset: on adult's A2JE, whose keys fit either way,
        the global keys are about 0.85x the time of a fit)."""
        return None if int(self.table_off[-1]) <= 2**16 else self.table_off

    @property
    def key_dtype(self) -> np.dtype:
        """The dtype of a stored key: uint16 while every key relative to :attr:`key_offsets` is below 65,536 (all
        tables together, or the largest group's), else int32."""
        off = self.key_offsets
        span = int(self.table_off[-1]) if off is None else int(np.diff(off).max(initial=0))
        return np.dtype(np.uint16 if span <= 2**16 else np.int32)

    def arrays(self) -> tuple:
        """The arrays :func:`_grouped_cll2` and :func:`_grouped_cll` read after their block arguments."""
        return (self.attrs, self.strides, self.n_attrs, self.table_off, self.entry_start, self.entry_n,
                self.entry_rows)


@numba.njit(cache=True, nogil=True, inline="always")
def _group_keys(key, ct, B, base, attrs, strides, n):  # pragma: no cover - compiled
    """``key[b]``: the combined table entry of design row ``b`` of the block (columns ``ct``), a group's
    ``base`` plus its ``n`` attributes' codes times their strides."""
    for b in range(B):
        key[b] = base
    for j in range(n):
        col = ct[attrs[j]]
        st = strides[j]
        for b in range(B):
            key[b] += col[b] * st


@numba.njit(cache=True, nogil=True, inline="always")
def _group_tables(D, table_off, entry_start, entry_n, entry_rows):  # pragma: no cover - compiled
    """The combined tables of score differences: entry ``e`` of group ``grp`` the sum of its subsets' ``D`` rows,
    in subset order.

    ``D`` holds the loss's rows, the trained ones (``CLL(data, layout.n_trained)``), while an entry names every
    subset's row for its values, a subset's unseen row (beyond them) included: such a row is left out (an entry
    with one is never met by a training row, which is what the loss evaluates)."""
    G = entry_n.shape[0]
    R = D.shape[0]
    T = np.empty(table_off[G])
    for grp in range(G):
        m = entry_n[grp]
        p = entry_start[grp]
        for e in range(table_off[grp], table_off[grp + 1]):
            v = 0.0
            for i in range(m):
                r = entry_rows[p + i]
                if r < R:
                    v += D[np.uint64(r)]
            T[e] = v
            p += m
    return T


@numba.njit(cache=True, nogil=True, inline="always")
def _group_reduce(g, gt, table_off, entry_start, entry_n, entry_rows):  # pragma: no cover - compiled
    """Each table entry's gradient ``gt[e]`` added into every row of ``g`` it was built from, group by group (the rows
    ``g`` holds: :func:`_group_tables`)."""
    G = entry_n.shape[0]
    R = g.shape[0]
    for grp in range(G):
        m = entry_n[grp]
        p = entry_start[grp]
        for e in range(table_off[grp], table_off[grp + 1]):
            v = gt[e]
            for i in range(m):
                r = entry_rows[p + i]
                if r < R:
                    g[np.uint64(r)] += v
            p += m


@numba.njit(cache=True, nogil=True, inline="always")
def _row_group_tables(Phi, table_off, entry_start, entry_n, entry_rows):  # pragma: no cover - compiled
    """:func:`_group_tables` with a row of ``Y`` potentials per entry: entry ``e`` the sum of its subsets' rows of
    ``Phi`` (the trained ones), in subset order, from zero."""
    NG = entry_n.shape[0]
    R, Y = Phi.shape
    T = np.zeros((table_off[NG], Y))
    for grp in range(NG):
        m = entry_n[grp]
        p = entry_start[grp]
        for e in range(table_off[grp], table_off[grp + 1]):
            for i in range(m):
                r = entry_rows[p + i]
                if r < R:
                    for y in range(Y):
                        T[e, y] += Phi[np.uint64(r), y]
            p += m
    return T


@numba.njit(cache=True, nogil=True, inline="always")
def _row_group_reduce(G, gt, table_off, entry_start, entry_n, entry_rows):  # pragma: no cover - compiled
    """:func:`_group_reduce` with rows: each entry's gradient row added into every row of ``G`` it was built from."""
    NG = entry_n.shape[0]
    R, Y = G.shape
    for grp in range(NG):
        m = entry_n[grp]
        p = entry_start[grp]
        for e in range(table_off[grp], table_off[grp + 1]):
            for i in range(m):
                r = entry_rows[p + i]
                if r < R:
                    for y in range(Y):
                        G[np.uint64(r), y] += gt[e, y]
            p += m


@numba.njit(cache=True, nogil=True)
def _grouped_cll2(codes, C1, csum, D, g, want_grad, chunk, tile, attrs, strides, n_attrs, table_off, entry_start,
                  entry_n, entry_rows):  # pragma: no cover - compiled
    """Two classes over combined tables (:class:`SubsetGroups`): NLL; adds ``dL/dPhi[:, 1]`` into ``g``.

    Every code known. Per evaluation the groups' tables ``T`` (sums of ``D``) are built, then per
    block of design rows: the gather group by group (the union's key, one load), the losses, the
    scatter over tiles of ``tile`` groups design row by design row into the tables' gradient
    ``gt``, reduced to ``g`` at the end. The sums are :func:`_subset_cll2`'s in another order.
    """
    N = codes.shape[0]
    G = n_attrs.shape[0]
    E = table_off[G]
    T = _group_tables(D, table_off, entry_start, entry_n, entry_rows)
    gt = np.zeros(E if want_grad else 1)
    table = np.empty((G, chunk + TABLE_PAD) if want_grad else (1, 1), dtype=np.int32)
    key = np.empty(chunk, dtype=np.int64)
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, _ = _block(codes, b0, B)
        d = _class_scores(D, B)
        for grp in range(G):
            _group_keys(key, ct, B, table_off[grp], attrs[grp], strides[grp], n_attrs[grp])
            if want_grad:
                row = table[grp]
                for b in range(B):
                    k = key[b]
                    row[b] = k
                    d[b] += T[np.uint64(k)]
            else:
                for b in range(B):
                    d[b] += T[np.uint64(key[b])]
        nll = _block_logistic(nll, d, C1, csum, b0, B, want_grad)
        if want_grad:
            _tile_scatter(g, gt, table, d, B, G, tile, None)
    if want_grad:
        _group_reduce(g, gt, table_off, entry_start, entry_n, entry_rows)
    return nll


@numba.njit(cache=True, nogil=True)
def _keyed_cll2(keys, C1, csum, D, g, want_grad, chunk, tile, table_off, entry_start, entry_n, entry_rows,
                off):  # pragma: no cover - compiled
    """:func:`_grouped_cll2` with the design rows' table entries stored (:meth:`SubsetDesign.group_keys`; relative
    to ``off``, :attr:`SubsetGroups.key_offsets`, unless it is None: numba compiles each case apart): the same sums
    in the same order, so the same numbers bit for bit, without finding the keys from the codes."""
    N = C1.shape[0]
    G = table_off.shape[0] - 1
    E = table_off[G]
    T = _group_tables(D, table_off, entry_start, entry_n, entry_rows)
    gt = np.zeros(E if want_grad else 1)
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        kb = keys[b0 // chunk]
        d = _class_scores(D, B)
        for grp in range(G):
            row = kb[grp]
            if off is None:
                for b in range(B):
                    d[b] += T[np.uint64(row[b])]
            else:
                base = off[grp]
                for b in range(B):
                    d[b] += T[np.uint64(base + row[b])]
        nll = _block_logistic(nll, d, C1, csum, b0, B, want_grad)
        if want_grad:
            _tile_scatter(g, gt, kb, d, B, G, tile, off)
    if want_grad:
        _group_reduce(g, gt, table_off, entry_start, entry_n, entry_rows)
    return nll


@numba.njit(cache=True, nogil=True)
def _group_key_table(codes, chunk, attrs, strides, n_attrs, base, out):  # pragma: no cover - compiled
    """``out[k, grp, b]``: ``base[grp]`` plus the entry of design row ``k * chunk + b`` within group ``grp``'s
    combined table (``base`` the tables' offsets: what :func:`_grouped_cll2` finds at every evaluation; zeros: the
    entries within each table), block by block."""
    N = codes.shape[0]
    G = n_attrs.shape[0]
    key = np.empty(chunk, dtype=np.int64)
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, _ = _block(codes, b0, B)
        kb = out[b0 // chunk]
        for grp in range(G):
            _group_keys(key, ct, B, base[grp], attrs[grp], strides[grp], n_attrs[grp])
            row = kb[grp]
            for b in range(B):
                row[b] = key[b]


@numba.njit(cache=True, nogil=True)
def _grouped_cll(codes, C, csum, Phi, G, want_grad, chunk, attrs, strides, n_attrs, table_off, entry_start, entry_n,
                 entry_rows):  # pragma: no cover - compiled
    """Any number of classes over combined tables (:class:`SubsetGroups`): NLL; adds the gradient into ``G``.

    :func:`_grouped_cll2` with a row of ``Y`` potentials per table entry and the softmax loss and block order of
    :func:`_subset_cll` (blocks of :func:`score_block_rows`; the scatter group by group, finding a group's keys of
    the block again from the codes; every code known); the sums in another order than the row table's.
    """
    N = codes.shape[0]
    Y = Phi.shape[1]
    NG = n_attrs.shape[0]
    E = table_off[NG]
    T = _row_group_tables(Phi, table_off, entry_start, entry_n, entry_rows)  # as in _grouped_cll2: trained rows only
    gt = np.zeros((E if want_grad else 1, Y))
    key = np.empty(chunk, dtype=np.int64)
    nll = 0.0
    for b0 in range(0, N, chunk):
        B = min(chunk, N - b0)
        ct, _ = _block(codes, b0, B)
        sc = np.zeros((B, Y))
        for b in range(B):
            for y in range(Y):
                sc[b, y] += Phi[0, y]
        for grp in range(NG):  # gather
            _group_keys(key, ct, B, table_off[grp], attrs[grp], strides[grp], n_attrs[grp])
            for b in range(B):
                k = np.uint64(key[b])
                for y in range(Y):
                    sc[b, y] += T[k, y]
        for b in range(B):
            nll += _softmax_nll(sc[b], C, b0 + b, csum[b0 + b], want_grad)
        if want_grad:  # scatter: a group's table gradient stays in cache, the block's scores are read in order
            for b in range(B):
                for y in range(Y):
                    G[0, y] += sc[b, y]
            for grp in range(NG):
                _group_keys(key, ct, B, table_off[grp], attrs[grp], strides[grp], n_attrs[grp])
                for b in range(B):
                    k = np.uint64(key[b])
                    for y in range(Y):
                        gt[k, y] += sc[b, y]
    if want_grad:
        _row_group_reduce(G, gt, table_off, entry_start, entry_n, entry_rows)
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
