"""The fitted HDP estimates: :class:`HDPTables` and its queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from bncbench.errors import BNCBenchError
from bncbench.hdp.tree import _Tree


@dataclass
class HDPTables:
    """HDP estimates for a structure; same prediction contract as :class:`CountTables`.

    Attributes
    ----------
    structure : list
        Attribute parents per attribute as given (``None`` = attribute not modelled).
    trees : list of _Tree
        One context tree per modelled attribute (``tree.parents`` in tree order).
    log_prior : ndarray (n_classes,)
        log P(y): the m-estimate with ``prior_m`` (1 in the reference code).
    cards : ndarray of int (n,)
        Cardinality of each attribute.
    n_classes : int
        Number of classes.
    iterations, burn_in : int
        Gibbs iterations of the fit, and those before averaging.
    tying : str
        Concentration tying of the fit.
    seed : int
        Seed of the fit's random streams.
    fit_seconds : float, default=0.0
        Wall time of :func:`~bncbench.hdp.fit_hdp`.
    info : dict
        Diagnostics set by :func:`~bncbench.hdp.fit_hdp`: ``n_nodes``, ``concentrations`` (per
        tree), ``stirling_table_shape``.
    """

    structure: list
    cards: np.ndarray
    n_classes: int
    trees: list
    log_prior: np.ndarray
    iterations: int
    burn_in: int
    tying: str
    seed: int
    fit_seconds: float = 0.0
    info: dict = field(default_factory=dict)

    # ------------------------------------------------------------ queries
    def _nodes(self, X: np.ndarray, tree: _Tree) -> np.ndarray:
        """Deepest existing node of ``tree`` for every instance and class: (N, n_classes)."""
        N, Y = X.shape[0], self.n_classes
        node = np.zeros((N, Y), dtype=np.int64)
        alive = np.ones((N, Y), dtype=bool)
        pc = np.zeros(N, dtype=np.int64)  # mixed-radix code of the parent values so far
        pvalid = np.ones(N, dtype=bool)
        span = 1  # product of the parent radices so far
        classes = np.arange(Y, dtype=np.int64)
        for d in range(1, len(tree.keys)):
            if d >= 2:
                p = tree.parents[d - 2]
                v = X[:, p].astype(np.int64)
                r = tree.radices[d - 1]
                pvalid &= (v >= 0) & (v < r)
                pc = pc * r + np.where(pvalid, v, 0)
                span *= r
            keys = tree.keys[d]
            if keys.size == 0:
                break
            code = classes[None, :] * span + pc[:, None]
            pos = np.minimum(np.searchsorted(keys, code), keys.size - 1)
            alive &= (keys[pos] == code) & pvalid[:, None]
            if not alive.any():
                break
            node = np.where(alive, tree.offsets[d] + pos, node)
        return node

    def factor_log_theta(self, X: np.ndarray, i: int) -> np.ndarray:
        """log theta(x_i | y, pi_i) for every instance and class (N, n_classes); 0 where x_i is out of range.

        Each instance and class uses the deepest node of the attribute's context tree that exists
        for its parent values (a parent value out of range stops the descent).

        Parameters
        ----------
        X : ndarray of shape (N, n)
            Integer attribute codes.
        i : int
            A modelled attribute.

        Returns
        -------
        ndarray of shape (N, n_classes)
            Log conditional probabilities.

        Raises
        ------
        BNCBenchError
            If attribute ``i`` is not modelled.
        """
        X = np.asarray(X)
        tree = self._tree_of(i)
        node = self._nodes(X, tree)
        x = X[:, tree.child].astype(np.int64)
        ok = (x >= 0) & (x < tree.card)
        out = np.log(tree.est[node, np.where(ok, x, 0)[:, None]])
        out[~ok] = 0.0
        return out

    def log_joint(self, X: np.ndarray) -> np.ndarray:
        """log P(y) + sum_i log theta(x_i | y, pi_i) for every instance and class: (N, n_classes).

        Parameters
        ----------
        X : ndarray of shape (N, n)
            Integer attribute codes.

        Returns
        -------
        ndarray of shape (N, n_classes)
            Unnormalized log joint probabilities (attributes not modelled contribute nothing).
        """
        X = np.asarray(X)
        out = np.tile(self.log_prior, (X.shape[0], 1))
        for tree in self.trees:
            out += self.factor_log_theta(X, tree.child)
        return out

    def query(self, i: int, y: int, parent_values: Sequence[int] = ()) -> np.ndarray:
        """Estimated distribution of attribute ``i`` given class ``y`` and its parents' values.

        ``parent_values`` follow ``self.structure[i]`` (the structure's order);
        an unseen configuration uses the deepest existing node.

        Parameters
        ----------
        i : int
            A modelled attribute.
        y : int
            Class code.
        parent_values : sequence of int, default=()
            Values of the parents in ``structure[i]`` order; parents without a value given take 0.

        Returns
        -------
        ndarray of shape (cards[i],)
            The estimate (a copy).

        Raises
        ------
        BNCBenchError
            If attribute ``i`` is not modelled.
        """
        tree = self._tree_of(i)
        parents = tuple(self.structure[i])
        row = np.zeros((1, len(self.cards)), dtype=np.int64)
        for p, v in zip(parents, parent_values):
            row[0, p] = v
        node = self._nodes(row, tree)[0, int(y)]
        return tree.est[node].copy()

    def _tree_of(self, i: int) -> _Tree:
        for tree in self.trees:
            if tree.child == i:
                return tree
        raise BNCBenchError(f"attribute {i} is not modelled")

    def n_parameters(self) -> int:
        """Free parameters of the leaf distributions: sum over trees of leaves * (card - 1), plus n_classes - 1."""
        return int(sum(t.n_leaves * (t.card - 1) for t in self.trees) + self.n_classes - 1)

    def n_nodes(self) -> int:
        """Number of nodes of all context trees.

        Returns
        -------
        int
            Sum of the trees' node counts.
        """
        return int(sum(t.n_nodes for t in self.trees))
