"""Tests for bncbench.model.discretize (Weka-compatible Fayyad–Irani MDL)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import load_iris

from bncbench.model.discretize import apply_cuts, mdl_cut_points

# Weka 3.x, weka.filters.supervised.attribute.Discretize, default options.
IRIS_CUTS = {
    0: [5.55, 6.15],  # sepal length
    1: [2.95, 3.35],  # sepal width
    2: [2.45, 4.75],  # petal length
    3: [0.8, 1.75],  # petal width
}


@pytest.fixture(scope="module")
def iris():
    data = load_iris()
    return data.data, data.target


# --------------------------------------------------------------------------
# A slow, instance-by-instance transliteration of Weka's cutPointsForSubset,
# used as an oracle on small random data.  It shares only the n*ln(n) table
# with the module (so that floating-point near-ties resolve identically).
# --------------------------------------------------------------------------


def _reference_cuts(x, y, n_classes):
    keep = [i for i in range(len(x)) if not math.isnan(x[i])]
    order = sorted(keep, key=lambda i: x[i])
    xs = [float(x[i]) for i in order]
    ys = [int(y[i]) for i in order]
    table = np.arange(len(xs) + 1, dtype=np.float64)
    table[1:] *= np.log(table[1:])
    ln2 = math.log(2.0)

    def ln_func(m):
        return float(table[int(m)])

    def entropy(counts):
        acc, total = 0.0, 0
        for m in counts:
            acc -= ln_func(m)
            total += m
        return 0.0 if total == 0 else (acc + ln_func(total)) / (total * ln2)

    def cond_entropy(rows):
        acc, total = 0.0, 0
        for row in rows:
            row_sum = 0
            for m in row:
                acc += ln_func(m)
                row_sum += m
            acc -= ln_func(row_sum)
            total += row_sum
        return -acc / (total * ln2)

    def subset(first, last_plus_one):
        n = last_plus_one - first
        if n < 2:
            return []
        left = [0] * n_classes
        right = [0] * n_classes
        for i in range(first, last_plus_one):
            right[ys[i]] += 1
        prior = list(right)
        prior_entropy = entropy(prior)
        best_entropy, best_index, best_cut = prior_entropy, -1, None
        best_counts = None
        for i in range(first, last_plus_one - 1):
            left[ys[i]] += 1
            right[ys[i]] -= 1
            if xs[i] < xs[i + 1]:
                e = cond_entropy([left, right])
                if e < best_entropy:
                    best_entropy, best_index = e, i
                    best_cut = (xs[i] + xs[i + 1]) / 2.0
                    best_counts = (list(left), list(right))
        gain = prior_entropy - best_entropy
        if gain <= 0:
            return []
        k = sum(1 for m in prior if m > 0)
        k1 = sum(1 for m in best_counts[0] if m > 0)
        k2 = sum(1 for m in best_counts[1] if m > 0)
        delta = math.log(3.0**k - 2.0) / ln2 - (
            k * prior_entropy - k2 * entropy(best_counts[1]) - k1 * entropy(best_counts[0])
        )
        if not gain > (math.log(n - 1) / ln2 + delta) / n:
            return []
        return (
            subset(first, best_index + 1)
            + [best_cut]
            + subset(best_index + 1, last_plus_one)
        )

    return subset(0, len(xs))


# --------------------------------------------------------------------------
# mdl_cut_points
# --------------------------------------------------------------------------


@pytest.mark.parametrize("column", range(4))
def test_iris_matches_weka(iris, column):
    x, y = iris
    cuts = mdl_cut_points(x[:, column], y)
    assert cuts.dtype == np.float64
    np.testing.assert_allclose(cuts, IRIS_CUTS[column], rtol=0, atol=1e-9)


def test_pure_two_class_split_is_accepted():
    # N=8, H(S)=1, the cut at 4.5 gives two pure halves: gain = 1.
    # Threshold: (log2(7) + log2(3**2 - 2) - (2*1 - 1*0 - 1*0)) / 8 = 0.4518.
    x = np.arange(1.0, 9.0)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(mdl_cut_points(x, y), [4.5])


def test_recursive_three_class_split():
    # Classes 0 x4, 1 x4, 2 x6 on 1..14.  Top split at 8.5 (cond. entropy
    # 8/14 = 0.571 beats 0.694 at 4.5); gain 0.985 > threshold 0.405.  The
    # left half is then the accepted example above, the right half is pure.
    x = np.arange(1.0, 15.0)
    y = np.array([0] * 4 + [1] * 4 + [2] * 6)
    np.testing.assert_array_equal(mdl_cut_points(x, y), [4.5, 8.5])


def test_mdl_rejects_weak_split():
    # N=6, y = 0 0 1 | 0 1 1.  Best cut at 2.5 (left (2,0), right (1,3)):
    # gain = 1 - (4/6) * H(1/4) = 0.4591, but the threshold is
    # (log2(5) + log2(7) - (2*1 - 2*0.8113 - 1*0)) / 6 = 0.7920.
    x = np.arange(1.0, 7.0)
    y = np.array([0, 0, 1, 0, 1, 1])
    cuts = mdl_cut_points(x, y)
    assert cuts.shape == (0,)
    assert cuts.dtype == np.float64


def test_first_of_tied_candidates_wins():
    # The pattern above with every row tripled (N=18) passes the MDL test.
    # Cuts 2.5 (left (6,0), right (3,9)) and 4.5 (left (9,3), right (0,6))
    # are mirror images with bit-identical entropies; like Weka's strict "<"
    # scan, the leftmost one is kept.  Neither half is split further.
    x = np.repeat(np.arange(1.0, 7.0), 3)
    y = np.repeat([0, 0, 1, 0, 1, 1], 3)
    np.testing.assert_array_equal(mdl_cut_points(x, y), [2.5])
    # Mirrored data (reversed x) keeps the leftmost cut, now at 2.5 again.
    np.testing.assert_array_equal(mdl_cut_points(7.0 - x, y), [2.5])


def test_cut_only_between_distinct_values():
    # The class changes inside the run of 2.0s, but the only candidates are
    # the boundaries 1|2 (left (10,0), right (1,12)) and 2|3 (left (11,2),
    # right (0,10)); the first has the lower entropy, 13/23*H(1/13).
    x = np.array([1.0] * 10 + [2.0] * 3 + [3.0] * 10)
    y = np.array([0] * 10 + [1, 0, 1] + [1] * 10)
    np.testing.assert_array_equal(mdl_cut_points(x, y), [1.5])


def test_nan_rows_are_ignored(iris):
    x, y = iris
    col = x[:, 2].copy()
    rng = np.random.default_rng(1)
    x_nan = np.concatenate([col, np.full(40, np.nan)])
    y_nan = np.concatenate([y, rng.integers(0, 3, 40)])
    perm = rng.permutation(x_nan.size)
    cuts = mdl_cut_points(x_nan[perm], y_nan[perm])
    np.testing.assert_array_equal(cuts, mdl_cut_points(col, y))
    np.testing.assert_allclose(cuts, IRIS_CUTS[2], atol=1e-9)


def test_permutation_invariance():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 3000)
    x = np.round(rng.normal(loc=np.array([0.0, 1.0, 2.5])[y]), 2)
    x[rng.random(x.size) < 0.05] = np.nan
    cuts = mdl_cut_points(x, y)
    assert cuts.size >= 2
    for _ in range(3):
        perm = rng.permutation(x.size)
        np.testing.assert_array_equal(mdl_cut_points(x[perm], y[perm]), cuts)


def test_matches_weka_transliteration_on_random_data():
    rng = np.random.default_rng(2024)
    n_with_cuts = 0
    for trial in range(150):
        n = int(rng.integers(2, 80))
        n_classes = int(rng.integers(2, 5))
        y = rng.integers(0, n_classes, n)
        # Few distinct values (many ties) and class-dependent shifts.
        x = rng.integers(0, 12, n) + 3 * y * rng.random()
        x = np.round(x, 1)
        x[rng.random(n) < 0.1] = np.nan
        expected = _reference_cuts(x, y, n_classes)
        got = mdl_cut_points(x, y, n_classes=n_classes)
        assert got.tolist() == expected, f"trial {trial}"
        n_with_cuts += bool(expected)
    assert n_with_cuts > 20  # the comparison is not vacuous


@pytest.mark.parametrize(
    "x, y",
    [
        ([], []),
        ([1.0], [0]),
        ([np.nan, np.nan, np.nan], [0, 1, 0]),
        ([np.nan, 2.0, np.nan], [0, 1, 1]),
        ([3.0] * 50, [0] * 25 + [1] * 25),  # all values equal
        (np.arange(50.0), [1] * 50),  # a single class
    ],
)
def test_degenerate_inputs_give_no_cuts(x, y):
    cuts = mdl_cut_points(np.asarray(x, dtype=float), np.asarray(y, dtype=int))
    assert cuts.shape == (0,)
    assert cuts.dtype == np.float64


def test_n_classes_is_validated():
    with pytest.raises(ValueError):
        mdl_cut_points([1.0, 2.0], [0, 3], n_classes=3)
    with pytest.raises(ValueError):
        mdl_cut_points([1.0, 2.0], [0, -1])
    with pytest.raises(ValueError):
        mdl_cut_points([1.0, 2.0, 3.0], [0, 1])
    # Unused classes do not change the result.
    x = np.arange(1.0, 9.0)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(mdl_cut_points(x, y, n_classes=5), [4.5])


# --------------------------------------------------------------------------
# apply_cuts
# --------------------------------------------------------------------------


def test_apply_cuts_boundary_goes_to_lower_bin():
    x = np.array([-np.inf, 0.5, 1.0, 1.0000001, 1.5, 2.0, 2.5, np.inf, np.nan])
    codes = apply_cuts(x, [1.0, 2.0])
    assert codes.dtype == np.int64
    np.testing.assert_array_equal(codes, [0, 0, 0, 1, 1, 1, 2, 2, -1])


def test_apply_cuts_without_cuts_and_shape():
    codes = apply_cuts(np.array([[1.0, np.nan], [3.0, 4.0]]), np.empty(0))
    np.testing.assert_array_equal(codes, [[0, -1], [0, 0]])
    with pytest.raises(ValueError):
        apply_cuts([1.0], [2.0, 1.0])


def test_apply_cuts_on_iris_petal_length(iris):
    x, y = iris
    codes = apply_cuts(x[:, 2], mdl_cut_points(x[:, 2], y))
    # Cuts 2.45 and 4.75: exactly the 50 setosa in bin 0.
    np.testing.assert_array_equal(codes == 0, y == 0)
    assert np.bincount(codes).tolist() == [50, 45, 55]
