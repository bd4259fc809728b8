"""Sign test, W-D-L counts with the All/Big split, geometric means, Friedman / Nemenyi."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bncbench.errors import BNCBenchError
from bncbench.report import stats as S


def summary_fixture() -> pd.DataFrame:
    """Per-dataset means by hand: 6 datasets (2 Big), models A, B and C."""
    rows = [
        # dataset, n_instances, big, {model: zero_one}
        ("d1", 100, False, {"A": 0.10, "B": 0.20, "C": 0.30}),  # A wins
        ("d2", 200, False, {"A": 0.1 + 0.2, "B": 0.3, "C": 0.30}),  # draw up to round-off
        ("d3", 300, False, {"A": 0.40, "B": 0.35, "C": 0.20}),  # A loses
        ("d4", 400, False, {"A": 0.05, "B": np.nan, "C": 0.10}),  # B missing: no comparison
        ("d5", 20000, True, {"A": 0.01, "B": 0.02, "C": 0.03}),  # A wins (Big)
        ("d6", 50000, True, {"A": 0.02, "B": 0.03, "C": 0.01}),  # A wins (Big)
    ]
    out = []
    for d, n, big, vals in rows:
        for m, v in vals.items():
            out.append({"dataset": d, "model": m, "zero_one": v, "rmse": 2 * v if m != "C" else v,
                        "train_time": {"A": 1.0, "B": 2.0, "C": 4.0}[m] * n / 100,
                        "n_instances": n, "big": big, "n_ok": 10, "n_failed": 0})
    return pd.DataFrame(out)


@pytest.mark.parametrize("wins", range(0, 26, 1))
def test_sign_test_matches_scipy_binomtest(wins):
    for losses in (0, 1, 2, 5, 11, 25, 40):
        if wins + losses == 0:
            assert S.sign_test(0, 0) == 1.0
            continue
        expected = stats.binomtest(wins, wins + losses, 0.5, alternative="two-sided").pvalue
        assert S.sign_test(wins, losses) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_sign_test_paper_values():
    # Zaidi et al. 2017 Table 4: 45/4/23 -> 0.010, 45/3/24 -> 0.015, 34/3/35 -> 1, 11/1/0 -> < 0.001
    assert S.sign_test(45, 23) == pytest.approx(0.0104, abs=5e-4)
    assert S.sign_test(45, 24) == pytest.approx(0.0152, abs=5e-4)
    assert S.sign_test(34, 35) == pytest.approx(1.0)
    assert S.sign_test(11, 0) < 0.001
    assert S.sign_test(11, 0) == pytest.approx(2 / 2**11)


def test_wdl_counts_draw_and_missing():
    s = summary_fixture()
    mat = S.metric_matrix(s, "zero_one")
    r = S.wdl(mat["A"], mat["B"])
    # d1 win, d2 draw (0.1 + 0.2 != 0.3 in floating point), d3 loss, d4 skipped (NaN), d5 d6 wins
    assert (r.wins, r.draws, r.losses) == (3, 1, 1)
    assert r.n == 5
    assert r.p == pytest.approx(stats.binomtest(3, 4).pvalue)
    assert not r.significant
    # a genuine difference is never a draw
    r2 = S.wdl(pd.Series([0.30, 0.30]), pd.Series([0.3000001, 0.30]))
    assert (r2.wins, r2.draws, r2.losses) == (1, 1, 0)


def test_wdl_table_all_big_split():
    s = summary_fixture()
    t = S.wdl_table(s, [("A", "B"), ("A", "C")], ["zero_one", "train_time"])
    assert list(t["subset"].unique()) == ["All", "Big"]
    get = lambda sub, met, b: t[(t.subset == sub) & (t.metric == met) & (t.model_b == b)].iloc[0]  # noqa: E731
    r = get("All", "zero_one", "B")
    assert (r.wins, r.draws, r.losses, r.n) == (3, 1, 1, 5)
    r = get("Big", "zero_one", "B")
    assert (r.wins, r.draws, r.losses) == (2, 0, 0)
    assert r.p == pytest.approx(0.5)
    r = get("All", "zero_one", "C")  # d1 W, d2 D, d3 L, d4 W, d5 W, d6 L
    assert (r.wins, r.draws, r.losses) == (3, 1, 2)
    r = get("Big", "zero_one", "C")
    assert (r.wins, r.draws, r.losses) == (1, 0, 1)
    r = get("All", "train_time", "C")  # A is 4x faster everywhere
    assert (r.wins, r.draws, r.losses) == (6, 0, 0)
    assert r.p == pytest.approx(2 / 64) and bool(r.significant)


def test_wdl_table_failed_task_excluded_and_no_big():
    s = summary_fixture()
    s.loc[(s.dataset == "d1") & (s.model == "A"), "n_failed"] = 1  # a mean over fewer folds: not compared
    s = s[~s["big"]]
    t = S.wdl_table(s, [("A", "B")], ["zero_one"])
    assert list(t["subset"]) == ["All"]  # no Big block without big datasets
    assert (t.wins[0], t.draws[0], t.losses[0]) == (0, 1, 1)


def test_fewer_folds_not_compared_unless_shared():
    s = summary_fixture()
    # a sweep stopped on d1: A has 4 folds, B and C 10 -> A's mean on d1 is not comparable
    s.loc[(s.dataset == "d1") & (s.model == "A"), "n_ok"] = 4
    # d5 ran one round only, for every model: the models share those 2 folds and stay comparable
    s.loc[s.dataset == "d5", "n_ok"] = 2
    assert list(S.incomplete(s)) == [d == "d1" and m == "A" for d, m in zip(s.dataset, s.model)]
    mat = S.metric_matrix(s, "zero_one")
    assert np.isnan(mat.loc["d1", "A"]) and mat.loc["d1", "B"] == 0.20
    assert mat.loc["d5", "A"] == 0.01
    r = S.wdl(mat["A"], mat["B"])  # d1 left out: d2 draw, d3 loss, d5 d6 wins
    assert (r.wins, r.draws, r.losses) == (2, 1, 1)


def test_wdl_table_unknown_model():
    with pytest.raises(BNCBenchError, match="not in the results"):
        S.wdl_table(summary_fixture(), [("A", "Z")], ["zero_one"])


def test_geometric_mean_ratios():
    s = summary_fixture()
    r = S.geometric_mean_ratios(s, "train_time", ["B", "C"], "A")
    assert r["ratios"]["A"] == pytest.approx(1.0)
    assert r["ratios"]["B"] == pytest.approx(2.0)
    assert r["ratios"]["C"] == pytest.approx(4.0)
    assert r["n"] == 6 and r["dropped"] == []
    r = S.geometric_mean_ratios(s, "zero_one", ["B"], "A")
    assert r["n"] == 5 and r["dropped"] == ["d4"]  # B has no value on d4
    r = S.geometric_mean_ratios(s, "zero_one", ["C"], "A", datasets=["d5", "d6"])
    assert r["ratios"]["C"] == pytest.approx(math.sqrt(3.0 * 0.5))


def test_friedman_hand_computed():
    mat = pd.DataFrame([[1, 2, 3], [1, 3, 2], [2, 1, 3], [1, 2, 3]], columns=["A", "B", "C"], dtype=float)
    r = S.friedman(mat, metric="x")
    assert r.avg_ranks.to_dict() == pytest.approx({"A": 1.25, "B": 2.0, "C": 2.75})
    assert r.statistic == pytest.approx(4.5)  # 12*4/(3*4) * (0.75^2 + 0 + 0.75^2)
    assert r.pvalue == pytest.approx(math.exp(-4.5 / 2))  # chi2 with 2 df
    assert r.iman_davenport == pytest.approx(3 * 4.5 / (4 * 2 - 4.5))
    assert r.cd == pytest.approx(2.343 * math.sqrt(3 * 4 / (6 * 4)), abs=2e-3)
    sp = stats.friedmanchisquare(*mat.to_numpy().T)
    assert r.statistic == pytest.approx(sp.statistic) and r.pvalue == pytest.approx(sp.pvalue)


def test_friedman_matches_scipy_with_ties_and_drops_nan():
    rng = np.random.default_rng(3)
    vals = np.round(rng.uniform(size=(15, 5)), 1)  # many ties
    mat = pd.DataFrame(vals, columns=list("ABCDE"))
    mat.iloc[2, 1] = np.nan
    r = S.friedman(mat)
    clean = mat.dropna()
    sp = stats.friedmanchisquare(*clean.to_numpy().T)
    assert r.n == 14
    assert r.statistic == pytest.approx(sp.statistic, rel=1e-10)
    assert r.pvalue == pytest.approx(sp.pvalue, rel=1e-8)
    ranks = clean.rank(axis=1).mean()
    assert r.avg_ranks.sort_index().to_numpy() == pytest.approx(ranks.sort_index().to_numpy())


def test_nemenyi_critical_values_demsar_table():
    # Demšar (2006) Table 5a, q_0.05 for k = 2..10
    table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in zip(range(2, 11), table):
        assert S.nemenyi_q(k) == pytest.approx(q, abs=2e-3)
    assert S.nemenyi_cd(4, 14) == pytest.approx(2.569 * math.sqrt(4 * 5 / (6 * 14)), abs=1e-3)


def test_nemenyi_cliques():
    ranks = pd.Series({"a": 1.0, "b": 1.5, "c": 3.0, "d": 3.2})
    assert S.nemenyi_cliques(ranks, 1.0) == [["a", "b"], ["c", "d"]]
    assert S.nemenyi_cliques(ranks, 2.5) == [["a", "b", "c", "d"]]
    assert S.nemenyi_cliques(ranks, 0.1) == []


def test_friedman_needs_data():
    with pytest.raises(BNCBenchError):
        S.friedman(pd.DataFrame({"A": [1.0]}))
    with pytest.raises(BNCBenchError):
        S.friedman(pd.DataFrame({"A": [1.0], "B": [2.0]}))


def test_fold_notes_name_short_datasets_and_incomplete_models():
    from bncbench.report.sections import _fold_notes

    s = summary_fixture()
    s.loc[(s.dataset == "d1") & (s.model == "A"), "n_ok"] = 4  # stopped sweep
    s.loc[s.dataset == "d5", "n_ok"] = 2  # one round for every model
    s.loc[(s.dataset == "d3") & (s.model == "C"), ["n_ok", "n_failed"]] = (9, 1)  # failed: listed elsewhere
    lines = [t for _, t in _fold_notes(s)]
    assert len(lines) == 2
    assert "fewer folds than the other datasets" in lines[0] and "d5 (2 of 10)" in lines[0] and "d1" not in lines[0]
    assert lines[1].startswith("Incomplete") and "d1 / A (4 of 10)" in lines[1] and "d3" not in lines[1]
    assert _fold_notes(summary_fixture()) == []
