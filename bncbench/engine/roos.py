"""Roos's mapping and the BN space of Feelders & Ivanovs (§3.1, §5.2) as engine parameter maps.

**Roos's mapping (``lr_roos``).** Roos et al. (2005) map a BNC whose canonical graph is perfect to
a logistic regression with one indicator per configuration of the class's parents and per
configuration ``x_phi(i)`` of each child's family (the child and its attribute parents), one weight
per indicator and class, and class 0's weights fixed at 0; the start is ``w^(y) = ln theta``.
In the engine's layout the class row is the indicator of the (empty) parent configuration of the
class (bncbench's class has no parents: the intercept) and every other trained row is one family
configuration ``(x_i, x_pa(i))``: the ``discriminative`` map (free log-potentials ``Phi = beta``)
is Roos's mapping *without* the reference class fixed, ``n_trained * n_classes`` parameters
instead of ``n_trained * (n_classes - 1)``. :class:`LRRoos` fixes column 0 of ``Phi`` at 0;
``init="generative"`` maps the generative estimate to ``w^(y) = ln theta(y) - ln theta(0)`` per row,
which shifts every instance's class scores by the same amount (the CLL is unchanged; Roos's
``w = ln theta`` followed by the subtraction the fixed reference class needs).
Unlike the paper's count, only the family configurations seen in training are parameters (an
unseen one's gradient is 0 throughout, so the optimum and the CLL path are the same; ``r``, and
hence BFGS's ``12 r^2`` flops, is smaller where configurations are unseen).

**BN space (``bn_space``).** §5.2's softmax-parameterized ``theta`` is exactly the ``extended``
map (``Phi = log softmax(beta)`` per (factor, parent configuration, class) block and over the
classes for the class row; ``tests/test_feelders_spaces.py`` checks the identity);
:class:`BNSpace` is that map with §5.2's flop costs (:func:`bncbench.engine.flops.bn_costs`).
"""

from __future__ import annotations

import numpy as np

from bncbench.engine.flops import bn_costs, lr_costs
from bncbench.engine.inits import Start
from bncbench.engine.params import Extended, ParamMap


class LRRoos(ParamMap):
    """Roos's LR mapping: one weight per trained row of ``Phi`` and class ``1..d0-1``; class 0 fixed at 0.

    Parameters
    ----------
    layout : Layout
        Rows of ``Phi`` (the class row is the intercept, every other trained row one family
        configuration).
    gen : ndarray of shape (n_rows, n_classes)
        Generative log theta of every row.
    init : str or Init
        ``generative``: ``ln theta(y) - ln theta(0)`` per row; ``zeros``: every weight 0.

    Attributes
    ----------
    name : str
        ``"lr_roos"``.
    n_params : int
        ``n_trained * (n_classes - 1)``.
    """

    name = "lr_roos"
    reg_center = 0.0

    def __init__(self, layout, gen: np.ndarray, init) -> None:
        """Set up the map (see the class docstring)."""
        super().__init__(layout, gen, init)
        self.n_params = self.nt * (self.Y - 1)

    def origin(self) -> Start:
        """Every weight 0, the untrained rows too.

        Returns
        -------
        Start
        """
        return Start(np.zeros(self.n_params), np.zeros((self.layout.n_rows - self.nt, self.Y)))

    def generative(self) -> Start:
        """``ln theta(y) - ln theta(0)`` on every row (trained: the start; untrained: kept).

        Returns
        -------
        Start
        """
        shifted = self.gen - self.gen[:, :1]
        return Start(shifted[: self.nt, 1:].ravel().copy(), shifted[self.nt :])

    def phi(self, x: np.ndarray) -> np.ndarray:
        """The trained rows of ``Phi``: ``[0 | W]``.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The weights.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
            Log potentials of the trained rows.
        """
        out = np.zeros((self.nt, self.Y))
        out[:, 1:] = x.reshape(self.nt, self.Y - 1)
        return out

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """``dL/dW = G[:, 1:]``, flattened.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The weights (not read).
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
        """
        return np.ascontiguousarray(G[:, 1:]).ravel()

    def phi_full(self, x: np.ndarray) -> np.ndarray:
        """All rows of ``Phi``: the trained rows from ``x``, the untrained rows at their start.

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            The weights.

        Returns
        -------
        ndarray of shape (n_rows, n_classes)
        """
        return np.vstack([self.phi(x), self._untrained()])

    def n_ones(self, data) -> int:
        """``|Z|``: the indicators set in the training rows (intercept included), ``N (1 + n)`` when complete.

        Parameters
        ----------
        data : Data
            The problem's training rows.

        Returns
        -------
        int
        """
        per_row = (np.asarray(data.idx) >= 0).sum(axis=1)
        return int(round(float(per_row @ data.csum)))

    def flop_costs(self, data) -> tuple[float, float]:
        """§5.1's ``(cost_CLL, cost_grad)`` with Roos's ``|Z|``.

        Parameters
        ----------
        data : Data
            The problem's training rows.

        Returns
        -------
        cost_cll, cost_grad : float
        """
        return lr_costs(self.n_ones(data), int(round(data.total)), self.Y)


class BNSpace(Extended):
    """§5.2's BN space: the ``extended`` map (softmax per parent configuration) with the BN space's flop costs.

    Parameters
    ----------
    layout, gen, init
        As :class:`~bncbench.engine.params.Extended`.
    """

    name = "bn_space"

    def flop_costs(self, data) -> tuple[float, float]:
        """§5.2's ``(cost_CLL, cost_grad)``: ``|beta|`` the parameters, ``N`` the instances.

        Parameters
        ----------
        data : Data
            The problem's training rows.

        Returns
        -------
        cost_cll, cost_grad : float
        """
        layout = self.layout
        return bn_costs(int(self.n_params), int(round(data.total)), int(self.Y), [int(c) for c in layout.cards])
