"""Pair-class counts from per-class Gram matrices (bncbench/bn/cmi_gram.py): the same counts as the kernel, to the unit."""

import numpy as np
import pytest

from bncbench.bn import cmi_gram, counts, flat
from bncbench.bn.counts import _pair_counts, conditional_mutual_information, pair_class_counts


def _kernel_counts(X, y, cards, K, offsets):
    out = np.zeros(offsets[-1], dtype=np.int64)
    assert _pair_counts(np.asarray(X, np.int64), np.asarray(y, np.int64), np.asarray(cards, np.int64), K, offsets, out)
    return out


@pytest.mark.parametrize("N,cards,K,seed", [(500, [2, 3, 4, 2, 5, 3], 3, 0), (300, [2] * 12, 2, 1),
                                            (5000, [3, 1, 7, 4, 2, 6, 5, 2], 10, 2), (40, [4, 4, 4], 5, 3)])
def test_gram_counts_equal_the_kernel_counts(N, cards, K, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, c, N) for c in cards])
    y = rng.integers(0, K - 1 if K > 2 else K, N)  # K > 2: the last class has no rows
    assert cmi_gram.fits(cards)
    pairs, offsets, got = pair_class_counts(X, y, cards, K)  # takes the Gram path
    want = _kernel_counts(X, y, cards, K, offsets)
    assert got.dtype == np.float64 and np.array_equal(got, want)
    i, j = pairs[-1]  # one table by hand
    t = got[offsets[-2]:].reshape(cards[i], cards[j], K)
    assert t[1, 0, 0] == np.sum((X[:, i] == 1) & (X[:, j] == 0) & (y == 0))


def test_the_gram_path_is_taken_where_it_fits_and_the_cmi_is_unchanged(monkeypatch):
    assert cmi_gram.fits([3] * 50) and not cmi_gram.fits([3]) and not cmi_gram.fits([20] * 10)
    assert not cmi_gram.fits([4] * 2000)  # V = 8000: the V x V matrices would be too large
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(200, 6))
    y = rng.integers(0, 3, 200)
    new = conditional_mutual_information(X, y, [3] * 6, 3)
    monkeypatch.setattr(cmi_gram, "fits", lambda cards: False)
    old = conditional_mutual_information(X, y, [3] * 6, 3)
    assert np.array_equal(new, old)  # the same counts: the same CMI, to the bit


def test_codes_out_of_range_raise():
    offsets = np.array([0, 12])
    with pytest.raises(ValueError, match="codes in"):
        cmi_gram.pair_counts_gram(np.array([[0, 1], [1, 3]]), np.array([0, 1]), np.array([2, 3]), 2, offsets)
    with pytest.raises(ValueError, match="codes in"):
        cmi_gram.pair_counts_gram(np.array([[0, 1], [1, 2]]), np.array([0, 2]), np.array([2, 3]), 2, offsets)
    with pytest.raises(ValueError, match="codes in"):
        counts.conditional_mutual_information(np.array([[0, 1], [1, 5]]), np.array([0, 1]), [2, 3], 2)


def _loop_cmi(pairs, offsets, counts, cards, class_counts, n):
    """The former per-pair loop of cmi_from_pair_counts (the reference to the bit)."""
    from bncbench.bn.counts import _xlogx_sum

    ny = np.asarray(class_counts, dtype=float)
    N, K = ny.sum(), ny.size
    cmi = np.zeros((n, n))
    h_y = _xlogx_sum(ny)
    for k, (i, j) in enumerate(pairs):
        t = counts[offsets[k] : offsets[k + 1]].reshape(cards[i], cards[j], K)
        v = (_xlogx_sum(t) + h_y - _xlogx_sum(t.sum(axis=1)) - _xlogx_sum(t.sum(axis=0))) / N
        cmi[i, j] = cmi[j, i] = max(v, 0.0)
    return cmi


@pytest.mark.parametrize("N,cards,K,seed", [(500, [2, 3, 4, 2, 5, 3], 3, 0), (60, [7, 1, 6, 2, 5, 4, 3], 4, 1),
                                            (5000, [3, 1, 7, 4, 2, 6, 5, 2, 1, 3] * 3, 10, 2),
                                            (2000, [2] * 40, 2, 3), (10, [3, 3, 2], 2, 4)])
def test_cmi_from_pair_counts_equals_the_former_loop_to_the_bit(N, cards, K, seed):
    from bncbench.bn.counts import cmi_from_pair_counts

    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, c, N) for c in cards])
    X[:, 2] = np.where(rng.random(N) < 0.7, X[:, 0] % cards[2], X[:, 2])  # dependence, and many zero counts
    X[:, 1] = X[:, 0] % cards[1]
    y = np.minimum(rng.integers(0, K, N), np.maximum(X[:, 0], 0))
    pairs, offsets, counts = pair_class_counts(X, y, cards, K)
    ny = np.bincount(y, minlength=K)
    got = cmi_from_pair_counts(pairs, offsets, counts, np.asarray(cards), ny, len(cards))
    want = _loop_cmi(pairs, offsets, counts, np.asarray(cards), ny, len(cards))
    assert np.array_equal(got, want) and got.max() > 0


@pytest.mark.parametrize("path", ["gram", "blocks", "kernel"])
def test_every_pair_count_path_refuses_a_code_out_of_range_with_one_message(monkeypatch, path):
    """The Gram matrices, the blocked kernel (N >= BLOCKED_MIN_ROWS) and the plain kernel: the same error."""
    rng = np.random.default_rng(6)
    cards = [3] * 6
    X = rng.integers(0, 3, size=(counts.BLOCKED_MIN_ROWS if path == "blocks" else 300, 6))
    y = rng.integers(0, 2, X.shape[0])
    if path != "gram":
        monkeypatch.setattr(cmi_gram, "fits", lambda cards: False)
    if path == "kernel":
        monkeypatch.setattr(counts, "_blocked_pair_counts", lambda *a: None)
    pairs, offsets, ok = pair_class_counts(X, y, cards, 2)
    np.testing.assert_array_equal(offsets, flat.offsets_of([9 * 2] * len(pairs)))
    assert offsets[0] == 0 and offsets[-1] == ok.size == 15 * 18
    for bad_X, bad_y in ((np.where(np.arange(X.shape[0])[:, None] == 7, 3, X), y), (X, np.where(y == 1, 2, y))):
        with pytest.raises(ValueError) as err:
            pair_class_counts(bad_X, bad_y, cards, 2)
        assert str(err.value) == flat.CODE_RANGE
