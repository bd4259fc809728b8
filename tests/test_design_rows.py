"""Layout.rows's vectorized path for parentless factors equals the per-factor resolution it replaces."""

import numpy as np
import pytest

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.engine.design import Layout


def _per_factor(layout, codes):
    """The former computation: every factor's column resolved on its own (Layout._fill_rows)."""
    idx = np.full((codes.shape[0], layout.n_factors), -1, dtype=np.int32)
    idx[:, 0] = 0
    for fi in range(layout.n_attributes):
        layout._fill_rows(fi, codes, idx[:, fi + 1])
    return idx


@pytest.mark.parametrize("structure,kw", [("nb", {}), ("tan", {}), ("kdb", {"k": 2}), ("skdb", {"k": 1, "m": 3})])
def test_rows_equal_the_per_factor_resolution(structure, kw):
    model = random_bnc(8, (2, 5), p=2, n_classes=3, alpha=0.5, seed=5)
    X, y = sample_random_bnc(model, 300, seed=6)
    clf = BNClassifier(structure=structure, discretize=False, cardinalities=model.cards, **kw).fit(X[:120], y[:120])
    sc = clf.scorer_
    layout = Layout(sc.tables, X[:120][:, sc.columns])
    test = X[120:][:, sc.columns].copy()
    test[::7, 0] = -1                                   # unknown values
    test[::11, -1] = model.cards[sc.columns[-1]] + 2    # out of range
    for codes in (X[:120][:, sc.columns], test):
        got = layout.rows(codes)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, _per_factor(layout, codes))
