"""Flat arrays of count tables: where each table starts, and the one error for codes out of range.

The count kernels (:mod:`bncbench.bn.counts`, :mod:`bncbench.bn.cmi_gram`,
:mod:`bncbench.bn.count_tables`) lay many tables end to end in one flat array and find table ``k`` at
``flat[offsets[k]:offsets[k + 1]]``.
"""

from __future__ import annotations

import numpy as np

CODE_RANGE = "conditional mutual information needs codes in [0, card) and classes in [0, n_classes)"
"""The message of every pair-count path (kernel, blocks, Gram matrices) for a code or class out of range."""


def offsets_of(sizes) -> np.ndarray:
    """Where each of consecutive tables of these sizes starts in their flat array, and the total size last.

    Parameters
    ----------
    sizes : array-like of int, shape (m,)
        The tables' sizes.

    Returns
    -------
    ndarray of int64, shape (m + 1,)
        ``0``, then the cumulative sums: table ``k`` is ``flat[offsets[k]:offsets[k + 1]]``.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets
