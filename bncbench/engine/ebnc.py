"""The optimization of the authors' EBNC code (compatibility mode, off unless chosen).

Zaidi et al. (2017) ran their experiments with github ``nayyarzaidi/EBNC`` (classifier
``wdBayes``); ``../shared/anchors/ebnc/README.md`` has what it computes. Two of its departures
from the paper's formulas are engine plug-ins here (the estimate is ``estimator=ebnc``,
:mod:`bncbench.estimators.ebnc`; the structures ``tan_ebnc``, ``kdb_ebnc``):

``param=ebnc_e``  its "eCCBN": dCCBN's model (``Phi = beta``, as ``discriminative``) driven by
                  the true gradient multiplied, on every attribute row, by ``1 + softmax(beta)``
                  (the softmax over the attribute's values within the row's block, per class;
                  the class row keeps the plain gradient). That direction is **not the gradient
                  of any function**: :meth:`EBNCExtended.pullback` returns it where the engine
                  expects a gradient, so L-BFGS-B's curvature pairs and line searches are those of
                  their code, and it converges late or stops early (vote TAN: 266 iterations
                  against d's 52). It is not the paper's softmax-normalized ELR (``extended``).
``init=ebnc``     (:mod:`bncbench.engine.ebnc_start`) its start with the default ``-W 0``: every parameter 0, except the rows of the
                  attributes that have an attribute parent (TAN, KDB), which start at the
                  generative ``Phi`` (ln P̂ of ``estimator=ebnc``), whatever the parameterization
                  (so wCCBN's weights start at ln P̂ there: ``Phi = (ln P̂)²``).

Its stopping objective, NLL − N ln nc with 5 corrections and factr 1e7 (pgtol off), is
``conf/optimizer/lbfgs_ebnc.yaml`` (``lbfgs`` with ``uniform_offset``). Tests:
``tests/test_ebnc_compat.py``.
"""

from __future__ import annotations

import numpy as np

from bncbench.engine.params import Discriminative
from bncbench.engine.parameterizations import register_optimized


@register_optimized("ebnc_e", label="^e[EBNC]",
                    doc="the EBNC code's eCCBN: dCCBN's model driven by the gradient times (1 + softmax), "
                        "not a gradient (compatibility mode)")
class EBNCExtended(Discriminative):
    """dCCBN's model with the EBNC code's eCCBN direction (see the module docstring).

    ``phi`` is :class:`~bncbench.engine.params.Discriminative`'s; :meth:`pullback` is not the
    transpose of its Jacobian but the EBNC code's direction.
    """

    name = "ebnc_e"
    normalizes = True  # its softmax needs every value of a factor (refused over AnJE's seen combinations only)

    def __init__(self, layout, gen, init) -> None:
        super().__init__(layout, gen, init)
        bs = layout.block_start
        self._st = bs[bs < self.nt]  # first row of every trained block

    def factors(self, x: np.ndarray) -> np.ndarray:
        """``1 + softmax(beta)`` of every trained row and class (1 on the class row).

        The softmax is ``exp(beta) / Σ_block exp(beta)`` as the EBNC code computes it (no shift);
        where an exponential or the block's sum overflows, the code's factor is 1 (``1 + 1``).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            ``beta``.

        Returns
        -------
        ndarray of shape (n_trained, n_classes)
        """
        B = x.reshape(self.nt, self.Y)
        out = np.ones_like(B)
        if self._st.size:
            with np.errstate(over="ignore", invalid="ignore"):
                e = np.exp(B[1:])
                sums = np.add.reduceat(e, self._st - 1, axis=0)
                bid = np.repeat(np.arange(self._st.size), np.diff(np.r_[self._st, self.nt]))
                s = sums[bid]
                soft = np.where(np.isinf(e) | np.isinf(s), 1.0, e / s)
            out[1:] += soft
        return out

    def pullback(self, x: np.ndarray, G: np.ndarray) -> np.ndarray:
        """The EBNC code's eCCBN direction: ``G * (1 + softmax(beta))`` (not a gradient).

        Parameters
        ----------
        x : ndarray of shape (n_params,)
            ``beta``.
        G : ndarray of shape (n_trained, n_classes)
            ``dL/dPhi`` of the trained rows.

        Returns
        -------
        ndarray of shape (n_params,)
        """
        return (G * self.factors(x)).ravel()
