"""Parameter maps: free parameters -> log potentials ``Phi`` and their chain rules.

Every parameterization of Zaidi et al. (2017, Table 2) is a map from a free
vector ``x`` to the trained rows of ``Phi`` (``phi``), the transpose of its
Jacobian applied to ``dL/dPhi`` (``pullback``), and the full ``Phi`` used at
prediction (``phi_full``), which also fills the untrained prefix rows:

``discriminative``  ``Phi = beta``; untrained rows keep their initial values
                    (0 with zeros init, generative log theta with generative init).
``extended``        ``Phi = log softmax(beta)`` within each (factor, parent
                    configuration, class) block over the attribute values, and
                    over the classes for the class row; untrained rows: the map
                    of the initial beta (uniform, or generative log theta). A
                    layout's ``row_scale`` (an ensemble's member weights) is a
                    fixed factor on the map.
``weighted``        ``Phi = W * log theta_MAP`` (theta fixed, per-class back-off)
                    with the weight tying of §5.4: level 1 one weight per
                    attribute (and one for the class), 2 per attribute value,
                    3 per attribute value and class, 4 per attribute value, class
                    and parent configuration (class row: one weight per class at
                    levels 2-4). Untrained rows use their tied weight at levels
                    1-3 and weight 1 (generative log theta) at level 4. With a
                    layout's ``row_scale`` (ensemble member weights, AnJE's
                    exponent) the weights still multiply log theta, as in DBL^n
                    (Zaidi et al., deep-broad learning, Eq. 11); generative
                    initialization starts them at the scale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bncbench.components import PARAMETERIZATIONS
from bncbench.engine.block_softmax import log_softmax_blocks, pullback_blocks
from bncbench.engine.design import Layout
from bncbench.engine.inits import Init, Start, make_init
from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from bncbench.engine.composite import CompositeLayout



def same_point(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.array_equal(a, b)`` for two parameter vectors, cheaper: a point differs from a cached one mostly in its
    first entry, which is compared before the whole (the caches of the maps and of ``Problem`` ask several times
    per evaluation).

    Parameters
    ----------
    a, b : ndarray of shape (n,)
        Parameter vectors.

    Returns
    -------
    bool
        Same shape and equal entries (NaN unequal, as ``np.array_equal``).
    """
    if a.shape != b.shape:
        return False
    if a.size <= _SMALL_POINT and a.dtype == _F8 and b.dtype == _F8:
        # a small vector (a small fit asks ~100 times): the buffers compared as C doubles, element by element, which is
        # ``==`` on each entry (NaN unequal, -0.0 equal to 0.0) without numpy's per-call overhead
        return memoryview(a) == memoryview(b)
    return a.size == 0 or (a.flat[0] == b.flat[0] and bool((a == b).all()))


_F8 = np.dtype(np.float64)
_SMALL_POINT = 512
"""Up to this size :func:`same_point` compares float64 vectors as buffers (faster below, slower above, than numpy)."""


class ParamMap:
    """Base class. ``gen`` is the generative log theta of every row (n_rows, Y).

    A map from a free parameter vector ``x`` of length ``n_params`` (set by the subclass) to the
    log potentials ``Phi``; subclasses implement :meth:`phi`, :meth:`pullback` and
    :meth:`phi_full`, and the two reference points initializations build on, :meth:`origin` and
    :meth:`generative`. A subclass with hyperparameters of its own takes them as keyword
    arguments after ``init`` (:func:`bncbench.engine.parameterizations.register_optimized` declares them).

    Parameters
    ----------
    layout : Layout or CompositeLayout
        Rows of ``Phi``.
    gen : ndarray of shape (n_rows, n_classes)
        Generative log theta of every row (:meth:`Layout.generative_phi`, or a composite's
        scaled ``Phi``).
    init : str or Init
        An initialization (:mod:`bncbench.engine.inits`), or the name of one registered in
        :data:`bncbench.components.INITS` (built with its default hyperparameters).

    Attributes
    ----------
    name : str
        The parameterization's name.
    reg_center : float
        Centre of the ``"l2_one"`` regularization for this map (1 only for weights).
    layout, gen
        As given.
    init : Init
        The initialization object.
    nt : int
        Trained rows of ``Phi`` (``layout.n_trained``).
    Y : int
        Number of classes.

    Raises
    ------
    BNCBenchError
        If ``init`` is a name that is not registered.
    """

    name = "base"
    reg_center = 0.0  # centre of "l2_one" is 1 only for weights
    normalizes = False  # True: the map normalizes each factor over all its values

    def __init__(self, layout: Layout | CompositeLayout, gen: np.ndarray, init: str | Init) -> None:
        """Resolve ``init`` and keep the layout and the generative values.

        Parameters
        ----------
        layout : Layout or CompositeLayout
            Rows of ``Phi``.
        gen : ndarray of shape (n_rows, n_classes)
            Generative log theta of every row.
        init : str or Init
            An initialization or a registered initialization's name.

        Raises
        ------
        BNCBenchError
            If ``init`` is a name that is not registered.
        """
        self.init = make_init(init)
        self.layout, self.gen = layout, gen
        self.nt, self.Y = layout.n_trained, layout.n_classes
        self._start = None

    @property
    def start(self) -> Start:
        """Where the optimization starts: ``init.start(self)``, computed once.

        Returns
        -------
        Start
        """
        if self._start is None:
            start = self.init.start(self)
            x = np.asarray(start.x, dtype=float)
            if x.shape != (self.n_params,):
                raise BNCBenchError(f"initialization {type(self.init).__name__} gave a start of shape {x.shape}; "
                                    f"the {self.name} parameterization has {self.n_params} parameters")
            self._start = Start(x, start.rest)
        return self._start

    def x0(self) -> np.ndarray:
        """The starting point of the optimization.

        Returns
        -------
        ndarray of shape (n_params,)
            A new array: the initialization's first iterate.
        """
        return self.start.x.copy()

    def origin(self) -> Start:
        """The reference point "every parameter 0" and the untrained rows that go with it.

        Returns
        -------
        Start
        """
        raise NotImplementedError

    def generative(self) -> Start:
        """The reference point whose ``Phi`` is the generative model, and the untrained rows that go with it.

        Returns
        -------
        Start
        """
        raise NotImplementedError

    def _untrained(self) -> np.ndarray:
        """The untrained rows of ``Phi`` at the start (for maps whose untrained rows follow it)."""
        return self.start.rest

    def phi(self, x: np.ndarray) -> np.ndarray:
        """The trained rows of ``Phi`` at ``x``.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
            Log potentials of the trained rows.
        """
        raise NotImplementedError

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The gradient with respect to ``x`` from the gradient with respect to the trained rows of ``Phi``.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters.
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
            ``dL/dx``, the transpose of the Jacobian of :meth:`phi` applied to ``G``.
        """
        raise NotImplementedError

    def phi_full(self, x: np.ndarray) -> np.ndarray:
        """All rows of ``Phi`` at ``x``, as used at prediction (untrained prefix rows included).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Log potentials of every row.
        """
        raise NotImplementedError


class Discriminative(ParamMap):
    """Free log potentials: ``Phi = beta``, one parameter per trained row and class.

    Untrained rows keep their initial values: generative log theta with the generative
    initialization, 0 with zeros.

    Parameters
    ----------
    layout : Layout or CompositeLayout
        Rows of ``Phi``.
    gen : ndarray of shape (n_rows, n_classes)
        Generative log theta of every row.
    init : str
        A registered initialization.

    Attributes
    ----------
    n_params : int
        ``n_trained * n_classes``.
    """
    name = "discriminative"

    def __init__(self, layout: Layout | CompositeLayout, gen: np.ndarray, init: str) -> None:
        """Set up the map (see the class docstring).

        Parameters
        ----------
        layout : Layout or CompositeLayout
            Rows of ``Phi``.
        gen : ndarray of shape (n_rows, n_classes)
            Generative log theta of every row.
        init : str
            A registered initialization.

        Raises
        ------
        BNCBenchError
            If ``init`` is not registered.
        """
        super().__init__(layout, gen, init)
        self.n_params = self.nt * self.Y

    def origin(self) -> Start:
        """``beta = 0``; the untrained rows 0 too.

        Returns
        -------
        Start
        """
        return Start(np.zeros(self.n_params), np.zeros((self.layout.n_rows - self.nt, self.Y)))

    def generative(self) -> Start:
        """``beta`` = generative log theta, on the trained and the untrained rows.

        Returns
        -------
        Start
        """
        return Start(self.gen[: self.nt].ravel().copy(), self.gen[self.nt :])

    def phi(self, x: np.ndarray) -> np.ndarray:
        """The trained rows of ``Phi``: ``x`` reshaped.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
            A view of ``x``.
        """
        return x.reshape(self.nt, self.Y)

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The gradient with respect to ``x``: ``G`` flattened (the map is the identity).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters (not read).
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
            ``G.ravel()``.
        """
        return G.ravel()

    def phi_full(self, x: np.ndarray) -> np.ndarray:
        """All rows of ``Phi``: the trained rows from ``x``, the untrained rows at their initial values.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Log potentials of every row.
        """
        return np.vstack([self.phi(x), self._untrained()])


def _blocks(starts: np.ndarray, end: int):
    """Block id of every row in [starts[0], end) for blocks starting at ``starts``."""
    lengths = np.diff(np.r_[starts, end])
    return np.repeat(np.arange(starts.size), lengths)


class Extended(ParamMap):
    """Log-softmax potentials: ``Phi = s * log softmax(beta)`` per block, one parameter per trained row and class.

    The softmax runs over the attribute values within each (factor, parent configuration) block,
    separately for each class, and over the classes for the class row; ``s`` is the layout's fixed
    ``row_scale`` (an ensemble's member weights; 1 without one). Untrained rows hold the map of
    the initial beta (generative log theta, or uniform with zeros).

    Parameters
    ----------
    layout : Layout or CompositeLayout
        Rows of ``Phi``.
    gen : ndarray of shape (n_rows, n_classes)
        Generative log theta of every row (already scaled by ``row_scale`` for a composite).
    init : str
        A registered initialization.

    Attributes
    ----------
    n_params : int
        ``n_trained * n_classes``.
    """
    name = "extended"
    normalizes = True  # needs every value of a factor (refused over AnJE's seen combinations only)

    def __init__(self, layout: Layout | CompositeLayout, gen: np.ndarray, init: str) -> None:
        """Set up the blocks, the fixed scale and the untrained rows (see the class docstring).

        Parameters
        ----------
        layout : Layout or CompositeLayout
            Rows of ``Phi``.
        gen : ndarray of shape (n_rows, n_classes)
            Generative log theta of every row.
        init : str
            A registered initialization.

        Raises
        ------
        BNCBenchError
            If ``init`` is not registered.
        """
        super().__init__(layout, gen, init)
        self.n_params = self.nt * self.Y
        bs = layout.block_start
        self._st = bs[bs < self.nt]
        self._st_all = bs
        scale = layout.row_scale
        self._scale = None if scale is None else np.asarray(scale, dtype=float)[:, None]
        self._beta0 = gen if self._scale is None else gen / self._scale  # log theta before the fixed scale

    @property
    def _bid(self):
        """The block of every trained row after row 0 (the map and the pullback read the blocks' starts only)."""
        return _blocks(self._st, self.nt)

    def _rest_of(self, beta_all):
        """The untrained rows of ``Phi`` when every row's ``beta`` is ``beta_all``."""
        if self.nt == self.layout.n_rows:  # none (every row of a network without back-off blocks is trained)
            return np.empty((0, self.Y))
        return self._scaled(self._map(beta_all, self._st_all, None))[self.nt :]

    def _scaled(self, phi, rows=None):
        if self._scale is None:
            return phi
        return phi * (self._scale if rows is None else self._scale[:rows])

    @staticmethod
    def _map(beta, st, bid):
        """``log softmax`` per block (row 0 over the classes, each block of rows ``st`` per class), compiled around
        numpy's ``exp`` and ``log``: numpy's former map to the bit (:mod:`bncbench.engine.block_softmax`; ``bid``,
        the block of every row, is implied by ``st``)."""
        return log_softmax_blocks(np.ascontiguousarray(beta, dtype=np.float64), st)

    def origin(self) -> Start:
        """``beta = 0``: uniform distributions, on the untrained rows too.

        Returns
        -------
        Start
        """
        return Start(np.zeros(self.n_params), self._rest_of(np.zeros((self.layout.n_rows, self.Y))))

    def generative(self) -> Start:
        """``beta`` = the unscaled generative log theta, on the trained and the untrained rows.

        Returns
        -------
        Start
        """
        return Start(self._beta0[: self.nt].ravel().copy(), self._rest_of(self._beta0))

    def phi(self, x: np.ndarray) -> np.ndarray:
        """The trained rows of ``Phi``: the scaled log-softmax of ``x`` per block.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters ``beta``.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
            Log potentials of the trained rows.
        """
        m = self._mapped(x)
        return m.copy() if self._scale is None else self._scaled(m, self.nt)

    def _mapped(self, x: np.ndarray) -> np.ndarray:
        """The unscaled log-softmax of ``x`` per block, the last two kept: an optimizer's ``phi``, ``pullback`` and
        the validation's ``phi_full`` ask for it at the same point (do not modify the result)."""
        cache = self.__dict__.setdefault("_map_cache", [])
        for xc, m in cache:
            if same_point(xc, x):
                return m
        m = self._map(x.reshape(self.nt, self.Y), self._st, None)
        cache.append((np.array(x, copy=True), m))
        del cache[:-2]
        return m

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The gradient with respect to ``beta`` through the scaled log-softmax.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters ``beta``.
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
            ``dL/dbeta``: per block, ``sG - softmax(beta) * sum(sG)``.
        """
        P = np.exp(self._mapped(x))
        G = np.ascontiguousarray(self._scaled(G, self.nt), dtype=np.float64)
        return pullback_blocks(G, P, self._st).ravel()  # numpy's former pullback to the bit (block_softmax)

    def phi_full(self, x: np.ndarray) -> np.ndarray:
        """All rows of ``Phi``: the trained rows from ``x``, the untrained rows from the initial beta.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Parameters ``beta``.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Log potentials of every row.
        """
        return np.vstack([self.phi(x), self._untrained()])


class Weighted(ParamMap):
    """Weights on the generative log theta: ``Phi = W * log theta_MAP``, weights tied by ``level``.

    Level 1: one weight per attribute and one for the class row; 2: one per attribute value
    (class row: one per class); 3: one per attribute value and class (class row: one per class);
    4: one per trained row and class. Untrained rows use their tied weight at levels 1-3 and
    the generative potentials at level 4. On a layout with a ``row_scale`` (an ensemble's member
    weights, AnJE's exponent), ``gen`` is ``s * log theta`` and the weights multiply ``log theta``
    itself, as DBLⁿ does (deep-broad learning, Eq. 11).

    Parameters
    ----------
    layout : Layout, CompositeLayout or SubsetLayout
        Rows of ``Phi``.
    gen : ndarray of shape (n_rows, n_classes)
        Generative potentials of every row (per-class back-off; scaled by ``row_scale``).
    init : str
        A registered initialization (``"generative"``: the generative model, weights 1 or the
        row scale; ``"zeros"``: all 0).
    level : {1, 2, 3, 4}, default=4
        Weight tying.

    Attributes
    ----------
    level : int
        As given.
    n_params : int
        Number of weights.
    T : ndarray of shape (n_rows, n_classes) or None
        Index of the weight of every row and class (levels 1-3); None at level 4.
    """
    name = "weighted"
    reg_center = 1.0

    def __init__(self, layout: Layout | CompositeLayout, gen: np.ndarray, init: str, level: int = 4) -> None:
        """Check the level and build the weight tying (see the class docstring).

        Parameters
        ----------
        layout : Layout or CompositeLayout
            Rows of ``Phi``.
        gen : ndarray of shape (n_rows, n_classes)
            Generative log theta of every row.
        init : str
            A registered initialization.
        level : {1, 2, 3, 4}, default=4
            Weight tying.

        Raises
        ------
        BNCBenchError
            If ``init`` is not registered, or ``level`` is not 1, 2, 3 or 4.
        """
        super().__init__(layout, gen, init)
        if level not in (1, 2, 3, 4):
            raise BNCBenchError(f"weighted level must be 1, 2, 3 or 4, got {level!r}")
        self.level = int(level)
        Y = self.Y
        scale = layout.row_scale
        # the weights multiply log theta itself; a layout's fixed row scale (an ensemble's member
        # weights, AnJE's exponent) is where generative initialization starts them
        self._scale = None if scale is None else np.asarray(scale, dtype=float)
        self._Lfull = gen if self._scale is None else gen / self._scale[:, None]
        self._L = self._Lfull[: self.nt]
        if self.level == 4:
            self.T = None
            self.n_params = self.nt * Y
            return
        lay = layout
        f = lay.row_factor
        av = lay.value_offset[np.maximum(f - 1, 0)] + lay.row_value  # flat attribute-value index
        cls = np.arange(Y)[None, :]
        if self.level == 1:
            T = np.repeat(f[:, None], Y, axis=1)
            n = lay.n_attributes + 1
        elif self.level == 2:
            T = np.repeat((Y + av)[:, None], Y, axis=1)
            n = Y + int(lay.value_offset[-1])
        else:
            T = Y + av[:, None] * Y + cls
            n = Y + int(lay.value_offset[-1]) * Y
        T[0] = 0 if self.level == 1 else np.arange(Y)
        self.T = np.ascontiguousarray(T, dtype=np.int64)
        self._Tt = self.T[: self.nt].ravel()
        self.n_params = int(n)

    def _rest(self) -> np.ndarray:
        # untrained rows: their tied weights (levels 1-3, through phi_full) or the generative model (level 4),
        # whatever the start
        return self.gen[self.nt :]

    def origin(self) -> Start:
        """All weights 0 (the untrained rows do not follow the start: see the class docstring).

        Returns
        -------
        Start
        """
        return Start(np.zeros(self.n_params), self._rest())

    def generative(self) -> Start:
        """The weights of the generative model.

        They are 1, or, on a layout with a ``row_scale``, the scale of each weight's rows
        (every tied group lies within one scaled factor; groups of untrained rows included).

        Returns
        -------
        Start
        """
        if self._scale is None:
            w = np.ones(self.n_params)
        elif self.T is None:
            w = np.repeat(self._scale[: self.nt], self.Y)
        else:
            w = np.ones(self.n_params)
            w[self.T.ravel()] = np.repeat(self._scale, self.Y)
        return Start(w, self._rest())

    def phi(self, x: np.ndarray) -> np.ndarray:
        """The trained rows of ``Phi``: each row's tied weights times its generative log theta.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Weights.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
            Log potentials of the trained rows.
        """
        if self.T is None:
            return x.reshape(self.nt, self.Y) * self._L
        return x[self.T[: self.nt]] * self._L

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The gradient with respect to the weights: ``G * log theta`` summed over each weight's entries.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Weights (not read).
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
            ``dL/dx``.
        """
        GL = G * self._L
        if self.T is None:
            return GL.ravel()
        return np.bincount(self._Tt, weights=GL.ravel(), minlength=self.n_params)

    def phi_full(self, x: np.ndarray) -> np.ndarray:
        """All rows of ``Phi``: tied weights on every row (levels 1-3), weight 1 on untrained rows (level 4).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            Weights.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
            Log potentials of every row.
        """
        if self.T is None:
            return np.vstack([self.phi(x), self.gen[self.nt :]])
        return x[self.T] * self._Lfull


def make_map(param: str, layout: Layout | CompositeLayout, gen: np.ndarray, init: str | Init,
             **hyperparameters) -> ParamMap:
    """The parameter map of the optimized parameterization ``param`` (a name of ``PARAMETERIZATIONS``).

    Parameters
    ----------
    param : str
        A registered parameterization with ``optimized=True`` (``discriminative``, ``extended``,
        ``weighted``, or a plug-in's).
    layout : Layout or CompositeLayout
        Rows of ``Phi``.
    gen : ndarray of shape (n_rows, n_classes)
        Generative log theta of every row.
    init : str or Init
        An initialization, or a registered initialization's name.
    **hyperparameters
        Values of the map's own hyperparameters (``level`` of ``weighted``); the ones it declares
        and is not given take their declared defaults, others are ignored.

    Returns
    -------
    ParamMap
        The registered class called with ``(layout, gen, init, **own hyperparameters)``.

    Raises
    ------
    BNCBenchError
        If ``param`` is not registered or not optimized, ``init`` is not registered, or the map
        rejects a hyperparameter's value.
    """
    comp = PARAMETERIZATIONS[param]
    if not comp.info.get("optimized"):
        raise BNCBenchError(f"param {param!r} is not optimized: it has no parameter map")
    own = comp.info.get("own", ())
    return comp.obj(layout, gen, init, **{k: v for k, v in comp.params(hyperparameters).items() if k in own})
