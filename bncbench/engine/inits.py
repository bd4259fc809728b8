"""Initializations of optimized parameters, registered in :data:`~bncbench.components.INITS`.

An initialization is a class whose instances (built with the component's hyperparameters)
choose where a parameter map starts::

    start = init.start(pmap)      # a Start: the first iterate and the untrained rows of Phi

Every parameter map (:class:`~bncbench.engine.params.ParamMap`) offers two reference points an
initialization builds on: :meth:`~bncbench.engine.params.ParamMap.origin` (all parameters 0)
and :meth:`~bncbench.engine.params.ParamMap.generative` (the parameters that give the generative
model). A reference point also fixes the rows of ``Phi`` no training instance reaches: a plug-in
that perturbs the origin keeps the origin's untrained rows (see ``docs/extending.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from bncbench.components import INITS

if TYPE_CHECKING:
    from bncbench.engine.params import ParamMap


@dataclass(frozen=True)
class Start:
    """Where an optimization starts.

    Attributes
    ----------
    x : ndarray of shape (n_params,)
        The first iterate.
    rest : ndarray of shape (n_rows - n_trained, n_classes)
        The log potentials of the rows of ``Phi`` no training instance reaches (kept at
        prediction; parameter maps whose untrained rows do not depend on the start ignore it).
    """

    x: np.ndarray
    rest: np.ndarray


class Init(Protocol):
    """What the engine asks of an initialization."""

    def start(self, pmap: "ParamMap") -> Start:
        """The start of ``pmap``'s optimization."""


@INITS.register("zeros", label="", doc="beta = 0, weights = 0")
class Zeros:
    """All parameters 0: uniform class probabilities for every parameterization."""

    def start(self, pmap: "ParamMap") -> Start:
        """:meth:`ParamMap.origin <bncbench.engine.params.ParamMap.origin>`."""
        return pmap.origin()


@INITS.register("generative", label=" (I)", doc="beta = log theta, weights = 1 (the papers' '(I)')")
class Generative:
    """The parameters of the generative model (the papers' "(I)")."""

    def start(self, pmap: "ParamMap") -> Start:
        """:meth:`ParamMap.generative <bncbench.engine.params.ParamMap.generative>`."""
        return pmap.generative()


def make_init(init, **hyperparameters) -> Init:
    """An initialization: a registered name (built with its hyperparameters) or an object with ``start``.

    Parameters
    ----------
    init : str or Init
        A name in :data:`~bncbench.components.INITS`, or an initialization object.
    **hyperparameters
        The registered initialization's hyperparameters (its declared defaults otherwise); keys it
        does not declare are ignored.

    Returns
    -------
    Init

    Raises
    ------
    BNCBenchError
        If ``init`` is a name that is not registered.
    """
    if not isinstance(init, str):
        return init
    comp = INITS[init]
    return comp.obj(**comp.params(hyperparameters))
