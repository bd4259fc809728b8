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

import numpy as np

from bncbench.components import INITS, PARAMETERIZATIONS
from bncbench.engine.design import Layout
from bncbench.errors import BNCBenchError


def _check_init(init):
    INITS[init]  # unknown names: one clear error listing the registered ones


class ParamMap:
    """Base class. ``gen`` is the generative log theta of every row (n_rows, Y)."""

    name = "base"
    reg_center = 0.0  # centre of "l2_one" is 1 only for weights

    def __init__(self, layout: Layout, gen: np.ndarray, init: str):
        _check_init(init)
        self.layout, self.gen, self.init = layout, gen, init
        self.nt, self.Y = layout.n_trained, layout.n_classes

    def x0(self) -> np.ndarray:
        raise NotImplementedError

    def phi(self, x):
        raise NotImplementedError

    def pullback(self, x, G):
        raise NotImplementedError

    def phi_full(self, x):
        raise NotImplementedError


class Discriminative(ParamMap):
    name = "discriminative"

    def __init__(self, layout, gen, init):
        super().__init__(layout, gen, init)
        self.n_params = self.nt * self.Y
        self._rest = gen[self.nt :] if init == "generative" else np.zeros((layout.n_rows - self.nt, self.Y))

    def x0(self):
        return self.gen[: self.nt].ravel().copy() if self.init == "generative" else np.zeros(self.n_params)

    def phi(self, x):
        return x.reshape(self.nt, self.Y)

    def pullback(self, x, G):
        return G.ravel()

    def phi_full(self, x):
        return np.vstack([self.phi(x), self._rest])


def _blocks(starts: np.ndarray, end: int):
    """Block id of every row in [starts[0], end) for blocks starting at ``starts``."""
    lengths = np.diff(np.r_[starts, end])
    return np.repeat(np.arange(starts.size), lengths)


class Extended(ParamMap):
    name = "extended"

    def __init__(self, layout, gen, init):
        super().__init__(layout, gen, init)
        self.n_params = self.nt * self.Y
        bs = layout.block_start
        self._st = bs[bs < self.nt]
        self._bid = _blocks(self._st, self.nt)
        self._st_all, self._bid_all = bs, _blocks(bs, layout.n_rows)
        scale = getattr(layout, "row_scale", None)
        self._scale = None if scale is None else np.asarray(scale, dtype=float)[:, None]
        self._beta0 = gen if self._scale is None else gen / self._scale  # log theta before the fixed scale
        beta_all = self._beta0 if init == "generative" else np.zeros((layout.n_rows, self.Y))
        self._rest = self._scaled(self._map(beta_all, self._st_all, self._bid_all))[self.nt :]

    def _scaled(self, phi, rows=None):
        if self._scale is None:
            return phi
        return phi * (self._scale if rows is None else self._scale[:rows])

    @staticmethod
    def _map(beta, st, bid):
        out = np.empty_like(beta)
        b0 = beta[0]
        out[0] = b0 - (b0.max() + np.log(np.exp(b0 - b0.max()).sum()))
        if st.size:
            body = beta[1:]
            off = st - 1
            mx = np.maximum.reduceat(body, off, axis=0)
            e = np.exp(body - mx[bid])
            lse = mx + np.log(np.add.reduceat(e, off, axis=0))
            out[1:] = body - lse[bid]
        return out

    def x0(self):
        return self._beta0[: self.nt].ravel().copy() if self.init == "generative" else np.zeros(self.n_params)

    def phi(self, x):
        return self._scaled(self._map(x.reshape(self.nt, self.Y), self._st, self._bid), self.nt)

    def pullback(self, x, G):
        P = np.exp(self._map(x.reshape(self.nt, self.Y), self._st, self._bid))
        G = self._scaled(G, self.nt)
        g = np.empty_like(G)
        g[0] = G[0] - P[0] * G[0].sum()
        if self._st.size:
            sums = np.add.reduceat(G[1:], self._st - 1, axis=0)
            g[1:] = G[1:] - P[1:] * sums[self._bid]
        return g.ravel()

    def phi_full(self, x):
        return np.vstack([self.phi(x), self._rest])


class Weighted(ParamMap):
    name = "weighted"
    reg_center = 1.0

    def __init__(self, layout, gen, init, level: int = 4):
        super().__init__(layout, gen, init)
        if level not in (1, 2, 3, 4):
            raise BNCBenchError(f"weighted level must be 1, 2, 3 or 4, got {level!r}")
        self.level = int(level)
        Y = self.Y
        scale = getattr(layout, "row_scale", None)
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

    def x0(self):
        if self.init != "generative":
            return np.zeros(self.n_params)
        if self._scale is None:
            return np.ones(self.n_params)
        if self.T is None:
            return np.repeat(self._scale[: self.nt], self.Y)
        w = np.ones(self.n_params)  # every group lies within one scaled factor; groups of untrained rows too
        w[self.T.ravel()] = np.repeat(self._scale, self.Y)
        return w

    def phi(self, x):
        if self.T is None:
            return x.reshape(self.nt, self.Y) * self._L
        return x[self.T[: self.nt]] * self._L

    def pullback(self, x, G):
        GL = G * self._L
        if self.T is None:
            return GL.ravel()
        return np.bincount(self._Tt, weights=GL.ravel(), minlength=self.n_params)

    def phi_full(self, x):
        if self.T is None:
            return np.vstack([self.phi(x), self.gen[self.nt :]])
        return x[self.T] * self._Lfull


def make_map(param: str, layout: Layout, gen: np.ndarray, init: str, level: int = 4) -> ParamMap:
    """The parameter map of the optimized parameterization ``param`` (a name of ``PARAMETERIZATIONS``)."""
    comp = PARAMETERIZATIONS[param]
    if not comp.info.get("optimized"):
        raise BNCBenchError(f"param {param!r} is not optimized: it has no parameter map")
    if "level" in comp.params({}):
        return comp.obj(layout, gen, init, level)
    return comp.obj(layout, gen, init)
