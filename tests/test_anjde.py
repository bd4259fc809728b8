"""AnDE and AnJE (issue #14, the generative half): hand-computed probabilities, Eq. 8's exponent,
the naive Bayes equivalences, the vectorized estimates against fitting every member network,
AnJE's factor rows, and the command line."""

import math
from fractions import Fraction as F

import numpy as np
import pytest
from conftest import run_cli

from bncbench import BNClassifier
from bncbench.components import ESTIMATORS
from bncbench.errors import BNCBenchError
from bncbench.estimators import EnsembleScorer, estimate
from bncbench.estimators import subset_rows as sr
from bncbench.estimators import ande as ande_module
from bncbench.estimators.ande import AnDEScorer, AnDETables
from bncbench.estimators.anje import AnJEScorer
from bncbench.estimators.mestimate import M_GRID, fit_mestimate
from bncbench.harness.store import load_results
from bncbench.structures import TrainingData
from bncbench.structures.ande import learn_ande
from bncbench.structures.anje import learn_anje
from bncbench.structures.subset_ensembles import SubsetMembers, anje_exponent, subsets

# The toy table: three attributes of cardinalities 2, 2, 3 (x2 = 2 never occurs), two classes.
TOY_X = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1], [1, 1, 1], [0, 1, 1], [1, 0, 0]])
TOY_Y = np.array([0, 0, 0, 1, 1, 1])
TOY_CARDS = [2, 2, 3]
A, B, C = [0, 1, 1], [1, 0, 2], [0, -1, 1]  # C: x1 unknown at prediction (code -1)


def toy(structure, **kw):
    return BNClassifier(structure=structure, cardinalities=TOY_CARDS, **kw).fit(TOY_X, TOY_Y)


def p1(odds):
    """P(y = 1) from the odds P(y=1, x) / P(y=0, x)."""
    return float(odds) / (1.0 + float(odds))


def test_a2je_by_hand():
    # w = 1!1!/2! = 1/2; P(x_alpha | y) = (N(x_alpha, y) + 1/|X_alpha|) / (N(y) + 1), N(y) = 3 for both
    # classes, so the priors (3 + 1/2) / 7 and the denominators cancel in the odds.
    # A = (0, 1, 1): (x0,x1) = (0,1): N = 1 | 1; (x0,x2) = (0,1): 0 | 1; (x1,x2) = (1,1): 1 | 2.
    odds_a = math.sqrt(((1 + 1 / 4) * (1 + 1 / 6) * (2 + 1 / 6)) / ((1 + 1 / 4) * (0 + 1 / 6) * (1 + 1 / 6)))
    # B = (1, 0, 2): (x0,x1) = (1,0): 0 | 1; the two subsets with x2 = 2 are unseen: 1/6 | 1/6.
    odds_b = math.sqrt((1 + 1 / 4) / (0 + 1 / 4))
    # C = (0, ?, 1): only (x0,x2) = (0,1) counts: 0 | 1.
    odds_c = math.sqrt((1 + 1 / 6) / (0 + 1 / 6))
    p = toy("anje", n=2, m=1.0).predict_proba(np.array([A, B, C]))
    np.testing.assert_allclose(p[:, 1], [p1(odds_a), p1(odds_b), p1(odds_c)], rtol=1e-12)
    assert p1(odds_a) == pytest.approx(math.sqrt(13) / (1 + math.sqrt(13)))


def _spode(joint, *children):
    out = joint
    for c in children:
        out *= c
    return out


def test_a1de_by_hand_with_the_frequency_limit():
    # P(y, x_p) = (N(y, x_p) + 1/(2 |X_p|)) / 7; P(x_i | y, x_p) = (N(x_i, y, x_p) + 1/|X_i|) / (N(y, x_p) + 1).
    # A = (0, 1, 1), every parent value seen: the mean of three SPODEs per class.
    a0 = [_spode(F(9, 4) / 7, F(3, 2) / 3, F(1, 3) / 3),  # parent x0=0: N(y=0, x0=0) = 2
          _spode(F(9, 4) / 7, F(3, 2) / 3, F(4, 3) / 3),  # parent x1=1: N = 2
          _spode(F(7, 6) / 7, F(1, 2) / 2, F(3, 2) / 2)]  # parent x2=1: N = 1
    a1 = [_spode(F(5, 4) / 7, F(3, 2) / 2, F(4, 3) / 2),
          _spode(F(9, 4) / 7, F(3, 2) / 3, F(7, 3) / 3),
          _spode(F(13, 6) / 7, F(3, 2) / 3, F(5, 2) / 3)]
    # B = (1, 0, 2): x2 = 2 was never seen: parent x2 is left out (min_count = 1).
    b0 = [_spode(F(5, 4) / 7, F(1, 2) / 2, F(1, 3) / 2), _spode(F(5, 4) / 7, F(1, 2) / 2, F(1, 3) / 2)]
    b1 = [_spode(F(9, 4) / 7, F(3, 2) / 3, F(1, 3) / 3), _spode(F(5, 4) / 7, F(3, 2) / 2, F(1, 3) / 2)]
    # C = (0, ?, 1): parents x0 and x2, children without x1.
    c0 = [_spode(F(9, 4) / 7, F(1, 3) / 3), _spode(F(7, 6) / 7, F(1, 2) / 2)]
    c1 = [_spode(F(5, 4) / 7, F(4, 3) / 2), _spode(F(13, 6) / 7, F(3, 2) / 3)]
    p = toy("ande", n=1, m=1.0, min_count=1).predict_proba(np.array([A, B, C]))
    expected = [p1(sum(x1) / sum(x0)) for x0, x1 in ((a0, a1), (b0, b1), (c0, c1))]
    np.testing.assert_allclose(p[:, 1], expected, rtol=1e-12)
    assert expected[0] == pytest.approx(0.74011, abs=1e-5)

    # min_count = 0: B's unseen parent x2 = 2 joins with zero counts: (0 + 1/6) / 7 and 1/|X_i| = 1/2.
    unseen = _spode(F(1, 6) / 7, F(1, 2), F(1, 2))
    p = toy("ande", n=1, m=1.0, min_count=0).predict_proba(np.array([B]))
    assert p[0, 1] == pytest.approx(p1((sum(b1) + unseen) / (sum(b0) + unseen)), rel=1e-12)

    # min_count = 4: N(x1=1) = 4 is the only parent value that qualifies. A keeps one SPODE; B has
    # none and falls back to naive Bayes: P(x | y) = (N(x, y) + 1/|X|) / (3 + 1), priors equal.
    p = toy("ande", n=1, m=1.0, min_count=4).predict_proba(np.array([A, B]))
    nb_odds = (F(5, 2) * F(3, 2) * F(1, 3)) / (F(3, 2) * F(3, 2) * F(1, 3))
    np.testing.assert_allclose(p[:, 1], [p1(a1[1] / a0[1]), p1(nb_odds)], rtol=1e-12)
    assert p[1, 1] == pytest.approx(5 / 8)


def test_anje_exponent_is_eq_8():
    assert anje_exponent(4, 2) == pytest.approx(1 / 3)  # 1! 2! / 3!
    assert anje_exponent(4, 2) == math.factorial(1) * math.factorial(2) / math.factorial(3)
    assert anje_exponent(10, 3) == pytest.approx(math.factorial(2) * math.factorial(7) / math.factorial(9))
    assert anje_exponent(7, 1) == 1.0 and anje_exponent(7, 7) == 1.0
    data = TrainingData(np.zeros((2, 4), dtype=np.int64), np.array([0, 1]), np.full(4, 2), 2)
    st = learn_anje(data, n=2)
    assert st.combine == "geometric" and len(st.members) == 6
    np.testing.assert_allclose(st.member_weights(), 1 / 3)
    ande = learn_ande(data, n=2, min_count=1)
    assert ande.combine == "arithmetic" and len(ande.members) == 6
    np.testing.assert_allclose(ande.member_weights(), 1 / 6)


def test_members_are_the_papers_networks():
    assert subsets(4, 2).tolist() == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert subsets(3, 0).shape == (1, 0)
    spode = SubsetMembers("ande", 4, 2)[1]  # alpha = (0, 2): x2 | x0, the others | x0, x2
    assert spode.parents == ((), (0, 2), (0,), (0, 2))
    joint = SubsetMembers("anje", 4, 2)[1]
    assert joint.parents == ((), None, (0,), None) and joint.columns.tolist() == [0, 2]
    assert len(SubsetMembers("anje", 5, 3)[2:5]) == 3


def _random_codes(seed, n=400, cards=(3, 2, 4, 3, 2)):
    rng = np.random.default_rng(seed)
    cards = np.asarray(cards)
    X = rng.integers(0, cards, size=(n, len(cards)))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.integers(0, 2, n)) % 3
    return X, y, cards


@pytest.mark.parametrize("m", [0.5, 1.0, 5.0])
def test_a0de_and_a1je_are_naive_bayes(m):
    X, y, cards = _random_codes(1)
    test = X.copy()
    test[::7, 2] = 3  # in range, rare or never seen in training
    test[::5, 1] = -1  # unknown
    train = X[X[:, 2] != 3]
    nb = BNClassifier(structure="nb", m=m, cardinalities=cards).fit(train, y[X[:, 2] != 3]).predict_proba(test)
    for kw in (dict(structure="ande", n=0, min_count=1), dict(structure="ande", n=0, min_count=10 ** 6),
               dict(structure="anje", n=1)):
        clf = BNClassifier(m=m, cardinalities=cards, **kw).fit(train, y[X[:, 2] != 3])
        np.testing.assert_allclose(clf.predict_proba(test), nb, rtol=0, atol=1e-12, err_msg=str(kw))
        assert clf.n_parameters_ == BNClassifier(structure="nb", m=m, cardinalities=cards).fit(
            train, y[X[:, 2] != 3]).n_parameters_


@pytest.fixture(params=["dense", "seen", "sparse"])
def lookup_paths(request, monkeypatch):
    """Every counting path (whole histogram, histogram of the keys met, sorted keys) and both lookups
    (dense map, binary search)."""
    if request.param == "seen":
        monkeypatch.setattr(sr, "FULL_COUNT_PER_ROW", 0)
    if request.param == "sparse":
        monkeypatch.setattr(sr, "DENSE_MAP_MIN", 0)
        monkeypatch.setattr(sr, "DENSE_MAP_FACTOR", 0)
        monkeypatch.setattr(sr, "DENSE_COUNT_LIMIT", 1)
    return request.param


@pytest.mark.parametrize("ensemble,n", [("ande", 0), ("ande", 1), ("ande", 2), ("ande", 3), ("anje", 1),
                                        ("anje", 2), ("anje", 3), ("anje", 5)])
def test_vectorized_estimates_equal_fitting_every_member(ensemble, n, lookup_paths):
    """With m = 0 (MLE) the chain of a member network is its joint, and AnDE with min_count = 0 is the
    plain mean: the vectorized estimates equal the generic ensemble of per-network m-estimates."""
    X, y, cards = _random_codes(2, n=3000, cards=(3, 2, 3, 2, 2))
    data = TrainingData(X, y, cards, 3)
    st = learn_ande(data, n=n, min_count=0) if ensemble == "ande" else learn_anje(data, n=n)
    fast = estimate(fit_mestimate, st, data, ensembles=ESTIMATORS["map"].info["ensembles"], m=0.0)
    slow = estimate(fit_mestimate, st, data, m=0.0)
    assert isinstance(fast, AnDEScorer if ensemble == "ande" else AnJEScorer)
    assert isinstance(slow, EnsembleScorer)
    test = np.random.default_rng(3).integers(0, cards, size=(500, 5))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(fast.log_joint(test), slow.log_joint(test), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast.log_prior(), slow.log_prior(), rtol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("n,min_count", [(1, 1), (1, 0), (1, 30), (2, 1), (2, 0)])
@pytest.mark.parametrize("m", [1.0, 0.0])
def test_ande_products_equal_sums_of_logs(n_classes, n, min_count, m):
    """The kernel multiplies probabilities where no product can underflow and adds logs otherwise: the
    two give the same log joint (lanes of 2, 4 and 8 classes; unseen parents, unknown values, the
    frequency limit's naive Bayes fallback, and m = 0's zero probabilities)."""
    rng = np.random.default_rng(11)
    cards = np.array([3, 2, 4, 3, 5, 2, 3])
    X = rng.integers(0, cards, size=(700, 7))
    X[X[:, 4] == 4, 4] = 3  # value 4 of x4 never seen in training: no row
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.integers(0, 2, 700)) % n_classes
    tables = AnDETables(SubsetMembers("ande", 7, n), cards, n_classes, min_count).fit(X, y)
    test = rng.integers(-1, cards, size=(400, 7))  # unknown values (-1) and x4 = 4
    lin, log = tables.log_tables(m, linear=True), tables.log_tables(m, linear=False)
    assert lin["linear"] and not log["linear"]
    assert tables.log_tables(m)["linear"] == (m > 0)  # these products are safe; m = 0 always takes logs
    with np.errstate(divide="ignore"):
        got, expected = tables.log_joint(test, m, lin), tables.log_joint(test, m, log)
    assert np.isfinite(expected).any() and (m > 0 or np.isinf(expected).any())
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_ande_takes_logs_where_products_would_underflow():
    """800 ternary attributes: one SPODE's product is about 3^-800 = 1e-382, below the smallest double.
    The automatic choice takes logs and gives what the forced log path does; forced products lose
    every instance (0, or a subnormal's few digits)."""
    rng = np.random.default_rng(12)
    cards = np.full(800, 3)
    X = rng.integers(0, 3, size=(200, 800))
    y = rng.integers(0, 2, 200)
    tables = AnDETables(SubsetMembers("ande", 800, 1), cards, 2, 1).fit(X, y)
    auto = tables.log_tables(1.0)
    assert not auto["linear"]
    test = rng.integers(0, 3, size=(20, 800))
    expected = tables.log_joint(test, 1.0, tables.log_tables(1.0, linear=False))
    assert np.isfinite(expected).all() and expected.max() < -800
    np.testing.assert_array_equal(tables.log_joint(test, 1.0, auto), expected)
    with np.errstate(divide="ignore"):
        forced = tables.log_joint(test, 1.0, tables.log_tables(1.0, linear=True))
    assert not np.isclose(forced, expected, rtol=1e-6).any()


def test_a1de_pair_counts_equal_counting_every_parent(lookup_paths):
    """A1DE counts each pair of attributes once and mirrors it: the same table as counting every parent
    subset (a value never seen in training has no row; every lookup path)."""
    rng = np.random.default_rng(13)
    cards = np.array([3, 40, 2, 5, 4])  # x1: 40 values, few seen (binary search unless the map is dense)
    X = rng.integers(0, cards, size=(500, 5))
    X[:, 1] = rng.choice([0, 7, 39], size=500)
    X[X[:, 3] == 2, 3] = 1
    y = rng.integers(0, 3, 500)
    tables = AnDETables(SubsetMembers("ande", 5, 1), cards, 3, 1).fit(X, y)
    codes = sr.compact_codes(X, cards)
    cols = ande_module._columns(codes, tables.att_off, y, 3, -1)
    every = ande_module._child_counts(sr.transposed(codes), *tables.rows.arrays(), cols, int(cards.sum()) * 3,
                                      tables.rows.n_rows)
    np.testing.assert_array_equal(tables.child_counts.reshape(tables.rows.n_rows, -1), every)
    # and by hand: N(x1 = 7, y = 2, x3 = 4) in the row of x3 = 4 (parent) and of x1 = 7 (mirrored)
    n = int(((X[:, 1] == 7) & (X[:, 3] == 4) & (y == 2)).sum())
    assert n > 0
    row3, row1 = tables.rows.lookup(codes[(X[:, 3] == 4) & (X[:, 1] == 7)][:1])[0, [3, 1]]
    assert tables.child_counts[row3, tables.att_off[1] + 7, 2] == n == tables.child_counts[row1, tables.att_off[3] + 4, 2]


def test_anje_factor_rows_make_its_log_joint(lookup_paths):
    X, y, cards = _random_codes(4, n=300, cards=(3, 5, 4, 3, 2, 6))
    scorer = BNClassifier(structure="anje", n=3, m=1.0, cardinalities=cards).fit(X, y).scorer_
    S = math.comb(6, 3)
    rows = scorer.factor_rows(X)
    assert rows.shape == (300, S) and rows.dtype == np.int32
    assert (rows >= 0).all() and (rows < scorer.n_trained_rows).all()  # training rows are all seen
    assert (scorer.row_subset[rows] == np.arange(S)).all()
    theta = scorer.generative_log_theta()
    assert theta.shape == (scorer.n_rows, 3) and scorer.n_rows == scorer.n_trained_rows + S
    test = np.random.default_rng(5).integers(-1, cards, size=(200, 6))  # unseen combinations and unknowns
    rows = scorer.factor_rows(test)
    unseen = rows >= scorer.n_trained_rows
    assert unseen.any() and (rows == -1).any()
    assert (rows[unseen] - scorer.n_trained_rows == np.nonzero(unseen)[1]).all()  # unseen row of its subset
    terms = np.where((rows >= 0)[:, :, None], theta[np.maximum(rows, 0)], 0.0).sum(axis=1)
    expected = scorer.log_prior()[None, :] + scorer.exponent * terms
    np.testing.assert_allclose(scorer.log_joint(test), expected, rtol=1e-12)
    # an unseen row holds the m-estimate of a zero count: (0 + m/|X_alpha|) / (N(y) + m)
    s = 7
    alpha = scorer.members.subsets[s]
    ny = np.bincount(y, minlength=3)
    np.testing.assert_allclose(theta[scorer.n_trained_rows + s], np.log((1.0 / np.prod(cards[alpha])) / (ny + 1.0)))


def test_m_auto_and_ensembles_of_other_estimators():
    X, y, cards = _random_codes(6, n=600)
    for kw in (dict(structure="ande", n=1), dict(structure="anje", n=2)):
        clf = BNClassifier(m="auto", cardinalities=cards, **kw).fit(X, y)
        assert clf.m_ in M_GRID and clf.tables_ is clf.scorer_.tables
        assert np.isfinite(clf.predict_proba(X)).all()


def test_bad_subset_sizes_are_one_clear_error():
    X, y, cards = _random_codes(7, n=50)
    with pytest.raises(BNCBenchError, match="n >= 1"):
        BNClassifier(structure="anje", n=0).fit(X, y)
    with pytest.raises(BNCBenchError, match="0 <= n <= 5"):
        BNClassifier(structure="ande", n=6).fit(X, y)
    with pytest.raises(BNCBenchError, match=r"arithmetic mean of \d+ networks is not one"):
        BNClassifier(structure="ande", n=1, param="weighted").fit(X, y)  # AnDE is not log-linear (DBL^n: AnJE)


def test_configs_run_through_the_command_line(tmp_path):
    for args in (["structure=ande", "structure.n=2"], ["structure=anje", "structure.n=3"], ["structure=a2je"],
                 ["structure=anje"]):
        res = run_cli(["run", *args, "dataset.names=[synth-nb]", "cv.rounds=1", "progress=false",
                       f"results_dir={tmp_path}", "name=anjde"], cwd=tmp_path)
        assert res.returncode == 0, res.stderr[-3000:]
    df = load_results(tmp_path / "anjde")
    assert (df["status"] == "ok").all(), df.get("error")
    assert df["zero_one"].between(0, 0.5).all()
    params = {r["model"]: (r["param.structure"], r["param.n"]) for _, r in df.iterrows()}
    # the plain option is the registry's default (n = 1, as BNClassifier(structure="anje")); a2je the preset
    assert params == {"A2DE": ("ande", 2), "A3JE": ("anje", 3), "A2JE": ("anje", 2), "A1JE": ("anje", 1)}
    assert set(df[df["model"] == "A2DE"]["param.min_count"]) == {1}


@pytest.mark.parametrize("args,message", [
    (["structure=anje", "structure.n=0"], "structure='anje' needs n >= 1"),
    (["structure=ande", "structure.n=-1"], "The 'n' parameter of BNClassifier must be an int in the range [0, inf)"),
    (["structure=ande", "structure.min_count=-2"], "The 'min_count' parameter of BNClassifier must be an int"),
])
def test_bad_configs_are_one_line(tmp_path, args, message):
    res = run_cli(["run", *args, "dataset.names=[synth-nb]", f"results_dir={tmp_path / 'r'}"], cwd=tmp_path)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2 and len(lines) == 1 and message in lines[0], res.stderr
    assert not (tmp_path / "r").exists()


def test_ensemble_rules_are_checked():
    with pytest.raises(BNCBenchError, match="'arithmetic' or 'geometric'"):
        EnsembleScorer([object()], "geometrc", np.ones(1))
    with pytest.raises(BNCBenchError, match="0 member"):
        EnsembleScorer([], "geometric", np.ones(0))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8, np.uint64, np.float64])
def test_compact_codes_keep_codes_in_range_and_mark_the_rest(dtype):
    rng = np.random.default_rng(14)
    cards = np.array([3, 200, 40000, 2])
    low = 0 if np.dtype(dtype).kind == "u" else -3
    X = rng.integers(low, 120 if dtype in (np.int8, np.uint8) else 50000, size=(60, 4)).astype(dtype)
    Xf = X.astype(np.float64)
    want = np.where((Xf >= 0) & (Xf < cards), Xf, -1).astype(np.int64)
    for cols, kind in ((slice(None), np.int32), (slice(0, 2), np.int16), (slice(0, 1), np.int8)):
        out = sr.compact_codes(X[:, cols], cards[cols])
        assert out.dtype == kind and out.flags.c_contiguous
        np.testing.assert_array_equal(out, want[:, cols])
    with pytest.raises(BNCBenchError, match="codes of 4 attributes"):
        sr.compact_codes(X[:, :3], cards)
