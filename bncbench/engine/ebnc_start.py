"""The start of the authors' EBNC code, ``init=ebnc`` (compatibility mode; :mod:`bncbench.engine.ebnc`).

A module of its own: the initializations' registry imports it while ``bncbench.engine.params``
(which the parameter maps of :mod:`bncbench.engine.ebnc` need) is still being imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bncbench.components import INITS
from bncbench.engine.inits import Start
from bncbench.errors import BNCBenchError

if TYPE_CHECKING:
    from bncbench.engine.params import ParamMap


@INITS.register("ebnc", label=" (EBNC start)",
                doc="the EBNC code's -W 0: 0, but rows of attributes with a parent at the generative Phi "
                    "(compatibility mode)")
class EBNCStart:
    """The EBNC code's start (see the module docstring)."""

    def start(self, pmap: "ParamMap") -> Start:
        """0 everywhere but on the trained rows of attributes with attribute parents: the generative ``Phi``.

        Parameters
        ----------
        pmap : ParamMap
            A map with one parameter per trained row and class (``discriminative``, ``weighted``
            at level 4, ``ebnc_e``) over one network's layout.

        Returns
        -------
        Start

        Raises
        ------
        BNCBenchError
            If the layout is not one network's (an ensemble, AnJE's subsets).
        """
        origin = pmap.origin()
        lay = pmap.layout
        factors = getattr(getattr(lay, "tables", None), "factors", None)
        if factors is None:
            raise BNCBenchError(f"init 'ebnc' starts one network's factors; this {type(lay).__name__} is not one "
                                "(use NB, TAN or KDB)")
        has_parent = np.array([False] + [len(f.parents) > 0 for f in factors])
        rows = has_parent[lay.row_factor[: pmap.nt]]
        x = np.where(rows[:, None], pmap.gen[: pmap.nt], 0.0).ravel()
        return Start(x, origin.rest)
