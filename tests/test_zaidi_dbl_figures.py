"""docs/reproductions/zaidi_dbl_figures.py: the thinned paths of Figs. 15-17, the iterations a fit needs to come near
its final NLL, their sign tests, and the committed ``reach_summary.csv`` (and the page's table of it) as the script
computes them from the committed ``reach.csv``."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "reproductions"))
import zaidi_dbl_figures as zf  # noqa: E402

sys.path.pop(0)
FIGURES = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "figures"


@pytest.mark.parametrize("n_iter", [0, 7, 100, 101, 5000])
def test_thin_keeps_the_first_hundred_the_last_and_about_the_points_asked(n_iter):
    keep = zf.thin(n_iter)
    assert keep[0] == 0 and keep[-1] == n_iter and (np.diff(keep) > 0).all()
    assert set(range(min(n_iter, 100) + 1)) <= set(keep)
    assert len(keep) <= 101 + zf.POINTS
    if n_iter >= 1000:  # beyond 100, consecutive kept iterations are about evenly spaced on log(iteration + 1)
        late = np.log(keep[keep > 100] + 1.0)
        assert np.diff(late).max() < 2.5 * np.log(n_iter + 1) / zf.POINTS


def test_reach_is_the_first_iteration_within_each_level_of_the_shared_scale():
    nll = np.array([10.0, 5.0, 2.0, 1.05, 1.005, 1.0])  # final 1.0; levels of 100: 1.0, 0.1, 0.01 above it
    assert zf.reach(nll, 100.0) == {"reach_e2": 2, "reach_e3": 3, "reach_e4": 4}
    assert zf.reach(nll, 1.0) == {"reach_e2": 4, "reach_e3": 5, "reach_e4": 5}  # a smaller scale: later


def test_path_fills_iterations_not_logged_with_the_last_value():
    t = zf.path([{"iter": 0, "nll": 3.0}, {"iter": 2, "nll": 1.0, "obj": 1.5}, {"iter": 2, "nll": 0.5, "obj": 0.7}])
    assert t.index.tolist() == [0, 1, 2]
    assert t["nll"].tolist() == [3.0, 3.0, 0.5]  # a repeated iteration: its last entry


def test_reach_summary_counts_and_tests_by_hand():
    r = pd.DataFrame({"dataset": ["a", "b", "c", "a", "b", "c"], "model": ["DBL2"] * 3 + ["LR2"] * 3,
                      "n_iter": [10, 20, 30, 20, 20, 15], **{k: [1, 2, 4, 2, 4, 8] for k in zf.LEVELS}})
    s = zf.reach_summary(r).set_index(["pair", "measure"])
    it = s.loc[("DBL2 vs LR2", "n_iter")]
    assert (it.n_datasets, it.fewer, it.equal, it.more) == (3, 1, 1, 1)
    assert it.p == pytest.approx(1.0)
    assert it.ratio_geomean == pytest.approx((0.5 * 1.0 * 2.0) ** (1 / 3))
    e3 = s.loc[("DBL2 vs LR2", "reach_e3")]
    assert (e3.fewer, e3.more, e3.p) == (3, 0, pytest.approx(0.25))  # two-tailed: 2 * 0.5 ** 3
    assert e3.ratio_geomean == pytest.approx(0.5)
    assert ("DBL1 vs LR1", "n_iter") not in s.index  # no DBL1 in the records: no row


def test_committed_reach_summary_is_the_scripts_and_the_page_shows_it():
    committed = pd.read_csv(FIGURES / "reach_summary.csv")
    again = zf.reach_summary(pd.read_csv(FIGURES / "reach.csv"))
    pd.testing.assert_frame_equal(again.reset_index(drop=True), committed, check_exact=False, rtol=1e-5,
                                  check_dtype=False)
    doc = (REPO / "docs" / "reproductions" / "zaidi_dbl.md").read_text()
    lines = doc.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("| pair | measure | datasets |"))
    shown = 0
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        pair, measure, n, wdl, ratio, med = (c.strip() for c in line.strip("|").split("|"))
        r = committed[(committed["pair"] == pair) & (committed["measure"] == measure.strip("`"))].iloc[0]
        p = "<0.001" if r.p < 0.001 else f"{r.p:.3f}"
        assert int(n) == r.n_datasets
        assert wdl.strip("*") == f"{r.fewer}/{r.equal}/{r.more} ({p})"
        assert wdl.startswith("**") == bool(r.p <= 0.05)
        assert float(ratio) == round(r.ratio_geomean, 3)
        assert med == f"{r.median_dbl:g} / {r.median_lr:g}"
        shown += 1
    assert shown >= 6


def test_objective_reach_reads_the_kept_iterations_against_lr2s_scale():
    c = pd.DataFrame({"dataset": "d", "model": "DBL2", "iter": [0, 1, 2, 50, 120],
                      "nll": 0.0, "obj": [20.0, 11.0, 10.05, 10.0005, 10.0]})
    r = pd.DataFrame({"dataset": ["d"], "model": ["LR2"], "nll_uniform": [100.0]})
    row = zf.objective_reach(c, r, ["d", "e"], ["DBL2", "LR2"]).iloc[0]  # no curve: no row
    assert (row.n_iter, row.obj_final) == (120, 10.0)
    # within 0.1, 0.01, 0.001, 0.0001 of the final objective: iterations 2, 50, 50 and 120
    assert [row[k] for k in zf.OBJ_LEVELS] == [2, 50, 50, 120]


def test_committed_objective_reach_is_the_scripts():
    c, r = pd.read_csv(FIGURES / "curves.csv"), pd.read_csv(FIGURES / "reach.csv")
    again = zf.objective_reach(c, r, zf.FIG15, ["DBL2", zf.ZERO, "LR2"])
    pd.testing.assert_frame_equal(again, pd.read_csv(FIGURES / "objective_reach.csv"), check_dtype=False)


def test_the_one_fold_refits_are_of_the_little_datasets_only():
    """convergence.csv has DBL¹/LR¹ rows of Big datasets too (the Big store); Figs. 11-17 and the refits behind
    reach.csv take the Little ones (summary.csv's big false), each pair of each n."""
    tasks = zf._tasks()
    big = set(pd.read_csv(zf.ROWS / "summary.csv").query("big")["dataset"])
    assert {"census-income", "covertype-grouped"} <= big and not big & {d for d, _ in tasks}
    assert len(tasks) == len(set(tasks)) and {n for _, n in tasks} == {1, 2, 3}
    assert len({d for d, _ in tasks}) == int(pd.read_csv(zf.ROWS / "coverage.csv")["little_complete"].max())
