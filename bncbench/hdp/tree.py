"""Context trees of the HDP estimates and the sampler's layout of them.

For every attribute ``X_c`` the tree's root is P(X_c), depth 1 branches on the
class, depth ``d >= 2`` on the ``(d-1)``-th attribute parent (ordered by
:func:`_cmi_order`); nodes exist only for the parent configurations seen in
training. Here: building a tree (:func:`_build_tree`), its concentration groups
per tying (:func:`_groups`), the initial pseudo-counts (Eq. 15,
:func:`_initialise`), the invariants (:func:`check_invariants`) and the arrays
the compiled sampler reads (:func:`_pairs`, :func:`_reciprocal_offsets`,
:func:`_frozen`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import digamma

from bncbench.errors import BNCBenchError

TYINGS = ("level", "single", "same_parent", "none")
"""Concentration tying strategies: one per tree level (the paper's L,
default), one per tree (S), one per set of siblings (SP), one per node."""

ROOT_CONCENTRATION = 2.0


@dataclass
class _Tree:
    """One context tree: nodes in breadth-first order (root first)."""

    child: int
    parents: tuple  # attribute parents in tree order (depth 2, 3, ...)
    card: int
    radices: list  # cardinality of the variable branched on at depth 1, 2, ... (class first)
    keys: list  # keys[d]: sorted int64 mixed-radix codes of the depth-d nodes (keys[0] = [0])
    offsets: np.ndarray  # first node index of each depth
    parent: np.ndarray
    depth: np.ndarray
    n: np.ndarray  # int64 (n_nodes, card)
    t: np.ndarray
    grp: np.ndarray = None
    alpha: np.ndarray = None
    gsize: np.ndarray = None
    rng: np.ndarray = None
    est: np.ndarray = None  # averaged estimates (n_nodes, card)
    data_max: int = 0  # largest count of one child value (bounds every n in the tree)

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(self.keys[-1].shape[0])


def _cmi_order(X, y, cards, n_classes, child, parents):
    """Parents sorted by decreasing I(X_child; X_p | Y) (stable: ties keep the structure order)."""
    if len(parents) < 2:
        return tuple(parents)
    x = X[:, child]
    Kc = int(cards[child])
    scores = []
    for p in parents:
        Kp = int(cards[p])
        xp = X[:, p]
        ok = (x >= 0) & (x < Kc) & (xp >= 0) & (xp < Kp)
        joint = np.bincount((y[ok] * Kp + xp[ok]) * Kc + x[ok], minlength=n_classes * Kp * Kc).astype(float)
        joint = joint.reshape(n_classes, Kp, Kc)
        # N I(X_c; X_p | Y) = sum n(y,p,c) log n(y,p,c) + sum n(y) log n(y) - sum n(y,p) log n(y,p) - sum n(y,c) log n(y,c)
        scores.append(_xlogx(joint) + _xlogx(joint.sum(axis=(1, 2)))
                      - _xlogx(joint.sum(axis=2)) - _xlogx(joint.sum(axis=1)))
    order = np.argsort(-np.asarray(scores), kind="stable")
    return tuple(parents[i] for i in order)


def _xlogx(a):
    a = a[a > 0]
    return float(np.sum(a * np.log(a)))


def _build_tree(X, y, cards, n_classes, child, parents) -> _Tree:
    K = int(cards[child])
    x = X[:, child]
    ok = (x >= 0) & (x < K) & (y >= 0) & (y < n_classes)
    for p in parents:
        ok &= (X[:, p] >= 0) & (X[:, p] < cards[p])
    radices = [int(n_classes)] + [int(cards[p]) for p in parents]
    code = y[ok].astype(np.int64)
    for p in parents:
        code = code * int(cards[p]) + X[ok, p]
    xs = x[ok]
    L = len(radices)
    keys = [None] * (L + 1)
    links = [None] * (L + 1)  # links[d][i]: position at depth d-1 of the parent of node i at depth d
    keys[L], inv = np.unique(code, return_inverse=True)
    leaf_n = np.bincount(inv * K + xs, minlength=keys[L].size * K).reshape(keys[L].size, K)
    for d in range(L, 0, -1):
        up = keys[d] // radices[d - 1]
        keys[d - 1], links[d] = np.unique(up, return_inverse=True)
    if keys[0].size == 0:  # no usable training row: a lone root
        keys[0] = np.zeros(1, dtype=np.int64)
    sizes = np.array([k.size for k in keys], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    nn = int(offsets[-1])
    parent = np.full(nn, -1, dtype=np.int64)
    depth = np.zeros(nn, dtype=np.int64)
    for d in range(1, L + 1):
        parent[offsets[d] : offsets[d + 1]] = offsets[d - 1] + links[d]
        depth[offsets[d] : offsets[d + 1]] = d
    n = np.zeros((nn, K), dtype=np.int64)
    n[offsets[L] :] = leaf_n
    data_max = int(np.bincount(xs, minlength=K).max()) if xs.size else 0
    return _Tree(child, tuple(parents), K, radices, [np.asarray(k, dtype=np.int64) for k in keys],
                 offsets, parent, depth, n, np.zeros_like(n), data_max=data_max)


def _groups(tree: _Tree, tying: str):
    """Concentration group of every node; group 0 is the root's (fixed, never sampled)."""
    nn = tree.n_nodes
    if tying == "level":
        grp = tree.depth.copy()
    elif tying == "single":
        grp = np.minimum(tree.depth, 1)
    elif tying == "same_parent":
        grp = np.zeros(nn, dtype=np.int64)
        grp[1:] = tree.parent[1:] + 1
    elif tying == "none":
        grp = np.arange(nn, dtype=np.int64)
    else:
        raise BNCBenchError(f"unknown tying {tying!r}; choose one of {', '.join(TYINGS)}")
    G = int(grp.max()) + 1
    gsize = np.bincount(grp, minlength=G).astype(np.int64)
    alpha = np.full(G, ROOT_CONCENTRATION)
    return grp.astype(np.int64), alpha, gsize


def _initialise(tree: _Tree):
    """Eq. 15 bottom-up (Algorithm 2): t = n if n <= 1 else max(1, floor(a (psi(a + n) - psi(a))))."""
    n, t = tree.n, tree.t
    off = tree.offsets
    L = len(off) - 2
    for d in range(L, 0, -1):
        sl = slice(off[d], off[d + 1])
        a = tree.alpha[tree.grp[sl]][:, None]
        nd = n[sl]
        exp_t = np.floor(a * (digamma(a + nd) - digamma(a)))
        t[sl] = np.where(nd <= 1, nd, np.maximum(1, exp_t)).astype(np.int64)
        np.add.at(n, tree.parent[sl], t[sl])
    t[0] = np.minimum(1, n[0])


def check_invariants(tree: _Tree) -> None:
    """Raise AssertionError unless the sampler state of ``tree`` is consistent.

    1 <= t <= n where n > 0, t = 0 where n = 0, root t = min(1, n), and a
    node's n equals the sum of its children's t (leaves keep their data counts).

    Parameters
    ----------
    tree : _Tree
        A context tree with counts ``n`` and pseudo-counts ``t`` of shape (n_nodes, card).

    Raises
    ------
    AssertionError
        Naming the attribute and the first violation found.
    """
    n, t = tree.n, tree.t
    pos = n > 0
    if not (np.all(t[pos] >= 1) and np.all(t[pos] <= n[pos]) and np.all(t[~pos] == 0)):
        bad = np.argwhere((pos & ((t < 1) | (t > n))) | (~pos & (t != 0)))[0]
        raise AssertionError(f"tree of attribute {tree.child}: bad t={t[tuple(bad)]} for n={n[tuple(bad)]} at {bad}")
    if not np.array_equal(t[0], np.minimum(1, n[0])):
        raise AssertionError(f"tree of attribute {tree.child}: root t != min(1, n)")
    internal = tree.offsets[-2]
    sums = np.zeros_like(n[:internal])
    np.add.at(sums, tree.parent[1:], t[1:])
    if not np.array_equal(sums, n[:internal]):
        j = int(np.argwhere((sums != n[:internal]).any(axis=1))[0, 0])
        raise AssertionError(f"tree of attribute {tree.child}: node {j} has n={n[j]} but children's t sum to {sums[j]}")


def _pairs(tree: _Tree, window: int) -> np.ndarray:
    """The (node, value) pairs that can ever need sampling, as :func:`_sweep` reads them.

    Leaves with n >= 2 and internal nodes with n >= 1 (the set of nonzero n
    never changes; an internal n may drop to 1), deepest nodes first. Within a
    depth they are ordered by their initial n (capped at 2 window + 2) and then
    by node: pairs of equal n have equal numbers of candidates, so the sweep's
    loops are predictable. Any fixed order is a valid Gibbs scan; the
    deepest-first order of the reference code is kept.
    """
    nn, K = tree.n.shape
    first_leaf = tree.offsets[-2]
    need = np.where(np.arange(1, nn) < first_leaf, 1, 2)
    jj, kk = np.nonzero(tree.n[1:] >= need[:, None])
    j, k = jj + 1, kk
    order = np.lexsort((j, np.minimum(tree.n[j, k], 2 * window + 2), -tree.depth[j]))
    j, k = j[order], k[order]
    par = tree.parent[j]
    return np.ascontiguousarray(np.stack([j * K + k, par * K + k, j, par, tree.grp[j], tree.grp[par]], axis=1),
                                dtype=np.int64)


def _reciprocal_offsets(tree: _Tree, window: int) -> np.ndarray:
    """Offsets of each concentration group's reciprocals ``1 / (a_g + m)`` in one flat cache.

    A parent's N (the sum of its children's t) never exceeds the number of
    training rows below it, D, so the sweep reads ``m = N + d <= D + window``:
    group g gets ``max D + window + 1`` entries over its internal nodes (none
    for a group of leaves only). Allocated once; only the first ``rhi[g]``
    entries are computed, as far as the parents' totals have reached (N is
    usually far below D), grown by the sweep and refilled after each
    concentration draw.
    """
    D = tree.n.sum(axis=1)  # leaves: their data counts; internal nodes: recomputed below
    off = tree.offsets
    for d in range(len(off) - 3, -1, -1):  # internal depths, deepest first
        lo, hi = off[d], off[d + 1]
        D[lo:hi] = 0
        kids = slice(off[d + 1], off[d + 2])
        np.add.at(D, tree.parent[kids], D[kids])
    G = tree.alpha.shape[0]
    size = np.zeros(G, dtype=np.int64)
    first_leaf = off[-2]
    np.maximum.at(size, tree.grp[:first_leaf], D[:first_leaf] + window + 1)
    return np.concatenate([[0], np.cumsum(size)]).astype(np.int64)


def _frozen(tree: _Tree) -> np.ndarray:
    """Nodes whose counts never change: the leaves, and the internal nodes all of whose
    children are frozen with every n <= 1 (so their t = n is forced and never sampled)."""
    nn = tree.n.shape[0]
    off = tree.offsets
    frozen = np.zeros(nn, dtype=bool)
    frozen[off[-2]:] = True
    for d in range(len(off) - 3, -1, -1):  # internal depths, deepest first
        kids = np.arange(off[d + 1], off[d + 2])
        moving = ~frozen[kids] | (tree.n[kids].max(axis=1, initial=0) > 1)
        blocked = np.zeros(nn, dtype=bool)
        blocked[tree.parent[kids[moving]]] = True
        frozen[off[d]:off[d + 1]] = ~blocked[off[d]:off[d + 1]]
    return frozen
