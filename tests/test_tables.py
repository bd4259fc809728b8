"""Generative tables: hand-computed counts, m-estimates, back-off, agreement with scikit-learn."""

import numpy as np
import pytest
from sklearn.naive_bayes import CategoricalNB

from bncbench import BNClassifier
from bncbench.data.sources import random_bnc, sample_random_bnc
from bncbench.bn.count_tables import CountTables

# attribute 0 (card 2), attribute 1 (card 3) with parent 0; two classes
X = np.array([[0, 0], [0, 1], [1, 2], [1, 2], [0, 0], [1, 1]])
y = np.array([0, 0, 0, 1, 1, 1])


def test_counts_match_hand_tabulation():
    t = CountTables([(), (0,)], [2, 3], 2).fit(X, y)
    f0, f1 = t.factors
    # factor 0: N(x0, y)
    np.testing.assert_array_equal(f0.levels[0].counts[0], [[2, 1], [1, 2]])
    # factor 1 level 1: keys = parent values seen {0, 1}; counts N(x1, y, x0)
    np.testing.assert_array_equal(f1.levels[1].keys, [0, 1])
    np.testing.assert_array_equal(f1.levels[1].counts[0], [[1, 1, 0], [1, 0, 0]])  # x0 = 0
    np.testing.assert_array_equal(f1.levels[1].counts[1], [[0, 0, 1], [0, 1, 1]])  # x0 = 1
    # level 0 of factor 1 is the parent-free table N(x1, y)
    np.testing.assert_array_equal(f1.levels[0].counts[0], [[1, 1, 1], [1, 1, 1]])
    np.testing.assert_array_equal(t.class_counts, [3, 3])


def test_m_estimate_formula_by_hand():
    m = 1.0
    t = CountTables([(), (0,)], [2, 3], 2).fit(X, y)
    # theta(x1=0 | y=0, x0=0) = (1 + 1/3) / (2 + 1)
    lt = t.log_theta(t.factors[1], 1, m)
    assert np.exp(lt[0, 0, 0]) == pytest.approx((1 + 1 / 3) / 3)
    # theta(x1=2 | y=1, x0=0) = (0 + 1/3) / (1 + 1)
    assert np.exp(lt[0, 1, 2]) == pytest.approx((1 / 3) / 2)
    np.testing.assert_allclose(np.exp(t.log_prior(m)), [(3 + 0.5) / 7, (3 + 0.5) / 7])
    # the log joint of a training row, by hand
    row = np.array([[0, 1]])
    want = np.log([(3.5 / 7) * ((2 + 0.5) / 4) * ((1 + 1 / 3) / 3), (3.5 / 7) * ((1 + 0.5) / 4) * ((0 + 1 / 3) / 2)])
    np.testing.assert_allclose(t.log_joint(row, m)[0], want)


def test_backoff_to_longest_prefix_with_data_per_class():
    # attribute 2 has parents (0, 1); configuration (x0=1, x1=0) never occurs in training
    Xb = np.array([[0, 0, 1], [0, 1, 0], [1, 1, 1], [1, 1, 0], [0, 0, 0]])
    yb = np.array([0, 0, 1, 1, 1])
    t = CountTables([(), (), (0, 1)], [2, 2, 2], 2).fit(Xb, yb)
    f = t.factors[2]
    m = 1.0
    q = np.array([[1, 0, 1]])
    got = t.factor_log_theta(q, f, m)[0]
    # level 1 (x0=1): seen for class 1 only -> class 1 uses N(x2 | y=1, x0=1); class 0 falls to level 0
    lt0, lt1 = t.log_theta(f, 0, m), t.log_theta(f, 1, m)
    assert got[1] == pytest.approx(lt1[1, 1, 1])  # key 1 = x0=1
    assert got[0] == pytest.approx(lt0[0, 0, 1])
    # a fully seen configuration uses the full table
    q2 = np.array([[0, 0, 1]])
    lt2 = t.log_theta(f, 2, m)
    assert t.factor_log_theta(q2, f, m)[0][0] == pytest.approx(lt2[0, 0, 1])


def test_unknown_values_do_not_crash_and_contribute_nothing():
    t = CountTables([(), (0,)], [2, 3], 2).fit(X, y)
    # x1 = 7 is outside its range: factor 1 contributes 0; x0 = -1 unknown: factor 0 contributes 0,
    # and factor 1 backs off to its parent-free table
    out = t.log_joint(np.array([[0, 7], [-1, 2]]), 1.0)
    f0 = t.factor_log_theta(np.array([[0, 7]]), t.factors[0], 1.0)[0]
    np.testing.assert_allclose(out[0], t.log_prior(1.0) + f0)
    lt0 = t.log_theta(t.factors[1], 0, 1.0)
    np.testing.assert_allclose(out[1], t.log_prior(1.0) + lt0[0, :, 2])


def test_nb_matches_categorical_nb_without_smoothing():
    model = random_bnc(8, cardinality=(2, 4), p=0, n_classes=3, alpha=2.0, seed=3)
    Xs, ys = sample_random_bnc(model, 4000, seed=1)
    clf = BNClassifier(structure="nb", m=0.0, discretize=False).fit(Xs, ys)
    ref = CategoricalNB(alpha=1e-10, force_alpha=True).fit(Xs, ys)
    np.testing.assert_allclose(clf.predict_proba(Xs[:500]), ref.predict_proba(Xs[:500]), rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(clf.predict(Xs), ref.predict(Xs))


def test_sparse_and_dense_tables_agree(monkeypatch):
    import bncbench.bn.count_tables as tables

    model = random_bnc(6, cardinality=(3, 5), p=2, n_classes=2, alpha=0.5, seed=5)
    Xs, ys = sample_random_bnc(model, 3000, seed=2)
    structure = [(), (0,), (0, 1), (1, 2), (2, 3), (3, 4)]
    dense = CountTables(structure, model.cards, 2).fit(Xs, ys)
    monkeypatch.setattr(tables, "DENSE_LIMIT", 0)
    monkeypatch.setattr(tables, "DENSE_PER_ROW", 0)
    sparse = CountTables(structure, model.cards, 2).fit(Xs[:, :], ys)
    for fd, fs in zip(dense.factors, sparse.factors):
        for ld, ls in zip(fd.levels, fs.levels):
            np.testing.assert_array_equal(ld.keys, ls.keys)
            np.testing.assert_array_equal(ld.counts, ls.counts)
    q, _ = sample_random_bnc(model, 500, seed=9)
    np.testing.assert_allclose(dense.log_joint(q, 1.0), sparse.log_joint(q, 1.0))


def test_compiled_log_joint_equals_the_per_factor_reference():
    # the compiled prediction pass must give the per-factor back-off values exactly
    model = random_bnc(7, cardinality=(2, 5), p=3, n_classes=3, alpha=0.3, seed=11)
    Xs, ys = sample_random_bnc(model, 600, seed=4)
    structure = [(), (0,), (1, 0), (2, 1, 0), (3,), (4, 2), (5, 3, 1)]
    t = CountTables(structure, model.cards, 3).fit(Xs, ys)
    q, _ = sample_random_bnc(model, 2000, seed=8)
    q[::7, 2] = -1  # unknown values
    q[::11, 0] = 99
    reference = np.tile(t.log_prior(0.5), (q.shape[0], 1))
    for f in t.factors:
        reference += t.factor_log_theta(q, f, 0.5)
    np.testing.assert_allclose(t.log_joint(q, 0.5), reference, rtol=0, atol=1e-12)
