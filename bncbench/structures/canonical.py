"""The canonical form of a Bayesian network classifier and its perfection (Feelders & Ivanovs, §3.1).

Roos et al.'s canonical form keeps the Markov blanket of the class (its parents, its children
and its children's other parents) and marries the class's unmarried parents, which leaves the
conditional distribution of the class unchanged. When the canonical graph is *perfect* (any two
parents of a node are connected) the classifier is equivalent to a logistic regression (§3.2,
:mod:`bncbench.engine.lr_mapping`), and the graph's complete subgraphs not containing the class
are the LR's interaction terms: in a perfect graph each complete set lies in the family of its
last node (in a topological order), so they are the sets ``{i} | S`` with ``S`` a subset of
``i``'s attribute parents, each found once. A perfect DAG's skeleton is chordal (the reverse
topological order eliminates perfectly), so it is also its own moral graph.

Which classifiers pass: NB, TAN, KDB-1 and every forest-augmented NB always (one attribute
parent each; the class is a parent of all). KDB-k with k >= 2 passes only when the parents of
each attribute happen to be connected (KDB picks each attribute's parents by conditional mutual
information, independently of the other attributes' choices), so it depends on the data:
:func:`check_perfect` says which pair fails. Attributes are named by their 0-based column index.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bncbench.errors import BNCBenchError


@dataclass(frozen=True)
class CanonicalGraph:
    """A classifier's canonical graph over the attributes of the class's Markov blanket.

    Attributes
    ----------
    attributes : tuple of int
        The Markov blanket of the class (attribute column indices), increasing.
    parents : dict of int to tuple of int
        Attribute parents of each blanket attribute in the canonical graph (the class's parents
        married: an arc from the earlier to the later in a topological order of the input).
    class_parents : tuple of int
        The class's parents.
    class_children : tuple of int
        The class's children.
    input_parents : dict of int to tuple of int
        Attribute parents of each blanket attribute before the class's parents are married
        (Roos's ``pi(i)``).
    """
    attributes: tuple
    parents: dict
    class_parents: tuple
    class_children: tuple
    input_parents: dict

    def adjacent(self, a: int, b: int) -> bool:
        """Whether attributes ``a`` and ``b`` are joined by an arc (either way)."""
        return a in self.parents.get(b, ()) or b in self.parents.get(a, ())

    def neighbours(self, a: int) -> set:
        """Attributes joined to ``a`` by an arc (class excluded)."""
        out = set(self.parents.get(a, ()))
        out.update(b for b, ps in self.parents.items() if a in ps)
        return out

    def complete_sets(self) -> list:
        """Every complete subgraph not containing the class, as sorted tuples (check perfection first).

        On a perfect graph each is ``(i,) + S`` sorted, ``S`` a subset of ``i``'s parents, found once
        (at its last node). Returns them ordered by last node, then by size, then lexicographically.

        Returns
        -------
        list of tuple of int
            The non-empty complete attribute sets.
        """
        out = []
        for i in self.attributes:
            ps = sorted(self.parents[i])
            for k in range(len(ps) + 1):
                for S in itertools.combinations(ps, k):
                    out.append(tuple(sorted((i, *S))))
        return out

    def roos_families(self) -> list:
        """The predictor groups of Roos et al.'s mapping (§3.1): ``pa(0)`` (when not empty), then ``phi(i)``
        (the child and its attribute parents, sorted) for every child ``i`` of the class.

        Returns
        -------
        list of tuple of int
            One attribute set per group; ``()`` stands for the empty ``pa(0)`` (one indicator, the
            intercept) and is listed first when the class has no parents.
        """
        fams = [tuple(sorted(self.class_parents))]
        for i in self.class_children:
            fams.append(tuple(sorted((i, *self.input_parents[i]))))
        return fams


def canonical_form(attribute_parents: Sequence[Sequence[int] | None], class_children: Iterable[int] | None = None,
                   class_parents: Sequence[int] = ()) -> CanonicalGraph:
    """The canonical graph of a classifier: the class's Markov blanket, its parents married (§3.1).

    Parameters
    ----------
    attribute_parents : sequence of (sequence of int or None)
        Per attribute, its attribute parents (the class not listed), or None for an attribute
        the network leaves out (a :class:`~bncbench.structures.network.Network`'s ``parents``).
    class_children : iterable of int, optional
        Attributes with the class as a parent; default every attribute not left out (the
        convention of every structure of bncbench).
    class_parents : sequence of int, default=()
        Attributes that are parents of the class.

    Returns
    -------
    CanonicalGraph
        The blanket's attributes and their parents in the canonical graph.

    Raises
    ------
    BNCBenchError
        If the graph names an unknown or left-out attribute, or has a directed cycle.
    """
    n = len(attribute_parents)
    pars = {i: tuple(int(p) for p in ps) for i, ps in enumerate(attribute_parents) if ps is not None}
    children = tuple(sorted(pars) if class_children is None else sorted({int(c) for c in class_children}))
    cparents = tuple(sorted({int(p) for p in class_parents}))
    for i, ps in pars.items():
        for p in ps:
            if p not in pars:
                raise BNCBenchError(f"attribute {i} has the parent {p}, which is not an attribute of the network")
    for a in (*children, *cparents):
        if a not in pars:
            raise BNCBenchError(f"attribute {a} (a child or parent of the class) is not an attribute of the network")
    if set(children) & set(cparents):
        raise BNCBenchError("an attribute cannot be both a parent and a child of the class")
    order = _topological(pars, cparents, children, n)
    blanket = set(children) | set(cparents)
    for c in children:
        blanket.update(pars[c])
    attrs = tuple(sorted(blanket))
    rank = {a: k for k, a in enumerate(order)}
    canon = {a: set(p for p in pars[a] if p in blanket) for a in attrs}
    for a, b in itertools.combinations(cparents, 2):  # marry the class's parents
        if a not in canon[b] and b not in canon[a]:
            lo, hi = (a, b) if rank[a] < rank[b] else (b, a)
            canon[hi].add(lo)
    return CanonicalGraph(attrs, {a: tuple(sorted(canon[a], key=rank.__getitem__)) for a in attrs}, cparents,
                          children, {a: tuple(pars[a]) for a in attrs})


def _topological(pars, cparents, children, n):
    """A topological order of the attributes (class parents before the class before its children)."""
    CLASS = -1
    nodes = list(pars) + [CLASS]
    preds = {a: set(ps) for a, ps in pars.items()}
    preds[CLASS] = set(cparents)
    for c in children:
        preds[c].add(CLASS)
    indeg = {a: len(preds[a]) for a in nodes}
    succ = {a: [] for a in nodes}
    for a in nodes:
        for p in preds[a]:
            succ[p].append(a)
    q = deque(sorted(a for a in nodes if indeg[a] == 0))
    out = []
    while q:
        a = q.popleft()
        out.append(a)
        for b in succ[a]:
            indeg[b] -= 1
            if indeg[b] == 0:
                q.append(b)
    if len(out) != len(nodes):
        raise BNCBenchError("the network has a directed cycle")
    return [a for a in out if a != CLASS]


def check_perfect(g: CanonicalGraph) -> None:
    """Refuse a canonical graph that is not perfect, naming the unmarried parents and a cycle through them.

    Parameters
    ----------
    g : CanonicalGraph
        From :func:`canonical_form`.

    Raises
    ------
    BNCBenchError
        ``canonical graph not perfect: attributes a and b, parents of attribute c, are not
        connected (cycle c - a - ... - b - c); marry them ...`` for the first such pair (by child,
        then parents; when no attribute path joins ``a`` and ``b`` the cycle goes through the
        class), or the same with "attribute a and the class" when a child of the class has a
        parent that is neither a parent nor a child of the class.
    """
    near_class = set(g.class_children) | set(g.class_parents)
    for c in g.class_children:
        for a in g.parents[c]:
            if a not in near_class:
                raise BNCBenchError(
                    f"canonical graph not perfect: attribute {a} and the class, parents of attribute {c}, are not "
                    f"connected; marry them or use another structure")
    for c in g.attributes:
        ps = g.parents[c]
        for a, b in itertools.combinations(sorted(ps), 2):
            if not g.adjacent(a, b):
                path = _path(g, a, b, avoid=c)
                cycle = [c, *path, c] if path else [c, a, "class", b, c]
                raise BNCBenchError(
                    f"canonical graph not perfect: attributes {a} and {b}, parents of attribute {c}, are not "
                    f"connected (cycle {' - '.join(map(str, cycle))}); marry them or use another structure")


def _path(g, a, b, avoid):
    """A shortest attribute path from ``a`` to ``b`` avoiding ``avoid`` (breadth first), or None."""
    prev = {a: None}
    q = deque([a])
    while q:
        u = q.popleft()
        if u == b:
            out = []
            while u is not None:
                out.append(u)
                u = prev[u]
            return out[::-1]
        for v in sorted(g.neighbours(u)):
            if v != avoid and v not in prev:
                prev[v] = u
                q.append(v)
    return None


def is_chordal(g: CanonicalGraph) -> bool:
    """Whether the skeleton of the canonical graph (class and its arcs included) is chordal.

    Maximum cardinality search, then the check that every node's earlier-numbered neighbours
    are pairwise adjacent (Tarjan & Yannakakis, 1984).

    Parameters
    ----------
    g : CanonicalGraph
        From :func:`canonical_form`.

    Returns
    -------
    bool
        True when every cycle of length >= 4 has a chord.
    """
    CLASS = -1
    nodes = [CLASS, *g.attributes]
    nb = {u: set() for u in nodes}
    for a in g.attributes:
        for p in g.parents[a]:
            nb[a].add(p)
            nb[p].add(a)
    for a in (*g.class_children, *g.class_parents):
        nb[a].add(CLASS)
        nb[CLASS].add(a)
    weight = {u: 0 for u in nodes}
    numbered = []
    left = set(nodes)
    while left:
        u = max(sorted(left, key=str), key=weight.__getitem__)
        left.discard(u)
        numbered.append(u)
        for v in nb[u]:
            if v in left:
                weight[v] += 1
    pos = {u: k for k, u in enumerate(numbered)}
    for u in numbered:
        earlier = [v for v in nb[u] if pos[v] < pos[u]]
        for a, b in itertools.combinations(earlier, 2):
            if b not in nb[a]:
                return False
    return True


def lr_parameter_count(g: CanonicalGraph, cards: Sequence[int], n_classes: int) -> int:
    """Parameters of the proposed LR mapping (§3.2): ``(d0 - 1)(1 + sum_C prod_{j in C} (d_j - 1))``.

    Parameters
    ----------
    g : CanonicalGraph
        A perfect canonical graph.
    cards : sequence of int
        Domain size of every attribute.
    n_classes : int
        ``d0``.

    Returns
    -------
    int
        The free weights (class 0's are fixed at 0).
    """
    return (n_classes - 1) * (1 + sum(int(np.prod([cards[j] - 1 for j in C])) for C in g.complete_sets()))


def roos_parameter_count(g: CanonicalGraph, cards: Sequence[int], n_classes: int) -> int:
    """Parameters of Roos et al.'s mapping (§3.1): ``(d0 - 1)(|X_pa(0)| + sum_{i in ch(0)} |X_phi(i)|)``.

    Parameters
    ----------
    g : CanonicalGraph
        A perfect canonical graph.
    cards : sequence of int
        Domain size of every attribute.
    n_classes : int
        ``d0``.

    Returns
    -------
    int
        The free weights (class 0's are fixed at 0).
    """
    return (n_classes - 1) * sum(int(np.prod([cards[j] for j in F])) for F in g.roos_families())
