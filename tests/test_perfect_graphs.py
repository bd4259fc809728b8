"""Feelders & Ivanovs' synthetic perfect-graph BNCs (§6): names, structure, and samples that follow the CPTs."""

import numpy as np
import pytest

from bncbench.data.perfect import load_perfect, parse_name, perfect_bnc
from bncbench.data.sources import sample_random_bnc
from bncbench.errors import BNCBenchError
from bncbench.structures.canonical import canonical_form, check_perfect


def test_names():
    assert parse_name("2.5.2-3.1000") == {"n_parents": 2, "n_attributes": 5, "domain": (2, 3), "n_samples": 1000}
    assert parse_name("3.5.5.1000")["domain"] == (5, 5)
    for bad in ("2.5.2-3", "0.5.2.100", "1.5.1.100", "1.5.3-2.100", "a.b.c.d"):
        with pytest.raises(BNCBenchError):
            parse_name(bad)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_structure_is_the_papers_and_perfect(p):
    m = perfect_bnc(p, 6, (2, 3), seed=p)
    assert m.parents == [tuple(range(max(0, i - p + 1), i)) for i in range(6)]
    assert set(m.cards) <= {2, 3}
    check_perfect(canonical_form(m.parents))
    for i, cpt in enumerate(m.cpts):
        assert cpt.shape == (2, *[m.cards[q] for q in m.parents[i]], m.cards[i])
        np.testing.assert_allclose(cpt.sum(axis=-1), 1.0)


def test_samples_follow_the_planted_conditional_probabilities():
    m = perfect_bnc(3, 4, (2, 3), seed=11)
    X, y = sample_random_bnc(m, 60000, seed=5)
    # class prior
    n = len(y)
    p = m.prior
    assert np.all(np.abs(np.bincount(y, minlength=2) / n - p) <= 5 * np.sqrt(p * (1 - p) / n))
    checked = 0
    for i in range(4):
        ps = m.parents[i]
        for cfg in np.ndindex(2, *[int(m.cards[q]) for q in ps]):
            sel = y == cfg[0]
            for q, v in zip(ps, cfg[1:]):
                sel &= X[:, q] == v
            k = int(sel.sum())
            if k < 300:
                continue
            theta = m.cpts[i][cfg]
            freq = np.bincount(X[sel, i], minlength=int(m.cards[i])) / k
            assert np.all(np.abs(freq - theta) <= 5 * np.sqrt(theta * (1 - theta) / k) + 1e-12), (i, cfg)
            checked += 1
    assert checked >= 20


def test_load_perfect_gives_a_dataset():
    ds = load_perfect("2.5.2-3.100", seed=3)
    assert ds.meta["parents"] == [(), (0,), (1,), (2,), (3,)]
    assert len(ds.y) == 100
