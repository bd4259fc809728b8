"""SkDB: the incremental leave-one-out equals refitting on N - 1 rows."""

import numpy as np
import pytest

from bncbench.structures.skdb import SkDB, loo_rmse_grid, restrict, skdb, skdb_search
from bncbench.structures.kdb import kdb
from bncbench.bn.counts import mutual_information
from bncbench.bn.count_tables import CountTables


def _data(seed=0, N=60, cards=(3, 2, 4, 3, 2), n_classes=3):
    rng = np.random.default_rng(seed)
    cards = np.array(cards)
    y = rng.integers(0, n_classes, N)
    X = np.column_stack([(rng.integers(0, c, N) + (y if j % 2 == 0 else 0)) % c for j, c in enumerate(cards)])
    X[:, 3] = (X[:, 0] + X[:, 1] + rng.integers(0, 2, N)) % cards[3]  # some dependence for the parents
    return X.astype(np.int64), y.astype(np.int64), cards, n_classes


def _brute_force_grid(X, y, cards, n_classes, k, m, backoff="per_class"):
    N, n = X.shape
    order = np.argsort(-mutual_information(X, y, cards, n_classes), kind="stable")
    full = kdb(X, y, cards, n_classes, k)
    sq = np.zeros((k + 1, n + 1))
    for i in range(N):
        keep = np.arange(N) != i
        for kk in range(k + 1):
            for nn in range(n + 1):
                sel = set(int(a) for a in order[:nn])
                structure = [tuple(ps[:kk]) if a in sel else None for a, ps in enumerate(full)]
                cols, sub = restrict(structure)
                ct = CountTables(sub, cards[cols], n_classes, backoff).fit(X[keep][:, cols], y[keep])
                lj = ct.log_joint(X[i : i + 1, cols], m)[0]
                p = np.exp(lj - lj.max())
                p /= p.sum()
                sq[kk, nn] += np.sum((p - np.eye(n_classes)[y[i]]) ** 2)
    return np.sqrt(sq / (N * n_classes))


@pytest.mark.parametrize("backoff", ["per_class", "any_class"])
@pytest.mark.parametrize("m", [1.0, 0.2])
def test_incremental_loo_equals_refitting(m, backoff):
    X, y, cards, n_classes = _data()
    k = 2
    brute = _brute_force_grid(X, y, cards, n_classes, k, m, backoff)
    order = np.argsort(-mutual_information(X, y, cards, n_classes), kind="stable")
    fast = loo_rmse_grid(X, y, kdb(X, y, cards, n_classes, k), order, cards, n_classes, k, m, backoff)
    np.testing.assert_allclose(fast, brute, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backoff", ["per_class", "any_class"])
def test_loo_backs_off_when_own_count_is_the_only_one(backoff):
    # a parent configuration seen once: leaving that row out must back off, as refitting does
    # (any class: the authors' rule, descend while the configuration's count over classes is >= 2)
    X, y, cards, n_classes = _data(seed=3, N=25, cards=(4, 4, 3, 2, 2))
    brute = _brute_force_grid(X, y, cards, n_classes, 2, 1.0, backoff)
    order = np.argsort(-mutual_information(X, y, cards, n_classes), kind="stable")
    fast = loo_rmse_grid(X, y, kdb(X, y, cards, n_classes, 2), order, cards, n_classes, 2, 1.0, backoff)
    np.testing.assert_allclose(fast, brute, rtol=1e-10, atol=1e-12)
    other = "any_class" if backoff == "per_class" else "per_class"
    assert np.abs(fast - loo_rmse_grid(X, y, kdb(X, y, cards, n_classes, 2), order, cards, n_classes, 2, 1.0,
                                       other)).max() > 1e-3  # the rules differ on this data


@pytest.mark.parametrize("backoff", ["per_class", "any_class"])
def test_loo_by_binary_search_equals_refitting(monkeypatch, backoff):
    # levels found by binary search over their seen keys (no direct index) give the same grid
    import bncbench.structures.skdb as mod

    X, y, cards, n_classes = _data(seed=5, N=40)
    order = np.argsort(-mutual_information(X, y, cards, n_classes), kind="stable")
    structure = kdb(X, y, cards, n_classes, 2)
    dense = loo_rmse_grid(X, y, structure, order, cards, n_classes, 2, 1.0, backoff)
    monkeypatch.setattr(mod, "LOO_DENSE_LIMIT", 0)
    sparse = loo_rmse_grid(X, y, structure, order, cards, n_classes, 2, 1.0, backoff)
    np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-14)
    np.testing.assert_allclose(dense, _brute_force_grid(X, y, cards, n_classes, 2, 1.0, backoff), rtol=1e-10,
                               atol=1e-12)


def test_skdb_selects_argmin_and_marks_unselected():
    X, y, cards, n_classes = _data(seed=1, N=200)
    search = skdb_search(X, y, cards, n_classes, k=3)
    res = skdb(X, y, cards, n_classes, k=3)
    assert isinstance(res, SkDB)
    assert res.k == search.k_star <= 3
    assert len(res.selected) == search.n_star >= 1
    assert search.rmse[search.k_star, search.n_star] == search.rmse[:, 1:].min()
    assert res.selected == [int(a) for a in search.order[: search.n_star]]
    for a, ps in enumerate(res.structure):
        if a in res.selected:
            assert ps is not None and len(ps) <= res.k and set(ps) <= set(res.selected)
        else:
            assert ps is None
    cols, sub = restrict(res.structure)
    assert cols == sorted(res.selected) and len(sub) == len(cols)
    # the restricted structure fits and predicts
    CountTables(sub, cards[cols], n_classes).fit(X[:, cols], y).log_joint(X[:5, cols], 1.0)


def test_informative_attribute_is_selected_and_noise_dropped():
    rng = np.random.default_rng(7)
    N = 400
    y = rng.integers(0, 2, N)
    informative = np.where(rng.random(N) < 0.9, y, 1 - y)
    noise = rng.integers(0, 5, (N, 4))
    X = np.column_stack([noise[:, :2], informative, noise[:, 2:]]).astype(np.int64)
    cards = np.array([5, 5, 2, 5, 5])
    res = skdb(X, y, cards, 2, k=2)
    assert res.selected[0] == 2
    assert len(res.selected) < 5


def test_m_zero_never_selects_an_undefined_loo_score():
    from bncbench.structures.skdb import skdb_search

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(60, 6))
    y = rng.integers(0, 2, size=60)
    s = skdb_search(X, y, np.full(6, 3), 2, 2, m=0.0)
    assert np.isnan(s.rmse).any()  # m = 0 leaves some leave-one-out estimates at 0/0
    chosen = s.rmse[s.k_star, s.n_star]
    assert np.isfinite(chosen) and chosen == np.nanmin(s.rmse[:, 1:])
