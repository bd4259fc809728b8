"""docs/reproductions/zaidi_dbl_start.py: DBLⁿ from AnJE's weights against DBLⁿ from 0 on the penalized objective.

By hand: a fit's row (the objective's and the NLL's levels, the penalty at the start) and the summary's counts; the
committed ``start_objective.csv`` against ``reach.csv`` (the same fits, made by ``zaidi_dbl_figures.py --fit`` at an
earlier commit: the same iterations, NLL levels and NLL) and ``start_objective_lam0.csv`` (without the penalty) on the
datasets the script chooses; the committed summary against the script, and the page's table against the summary."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "reproductions"))
import zaidi_dbl_start as zs  # noqa: E402

sys.path.pop(0)
FIGURES = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "figures"


def test_a_fits_row_reads_its_trace_against_the_shared_scale():
    trace = [{"iter": 0, "nll": 50.0, "obj": 80.0}, {"iter": 1, "nll": 20.0, "obj": 30.0},
             {"iter": 3, "nll": 10.0, "obj": 10.001}, {"iter": 4, "nll": 10.0, "obj": 10.0}]
    r = zs.row("d", "DBL2", "anje", trace, 100.0, "x")  # iteration 2, not logged, keeps iteration 1's values
    assert (r["n_iter"], r["nll_start"], r["obj_final"], r["pen_start"]) == (4, 50.0, 10.0, 30.0)
    # the objective within 1e-4 * 100 = 0.01 of 10.0 from iteration 3 (0.001 above), within 1e-6 * 100 only at 4;
    # the NLL within 1e-3 * 100 of 10.0 from iteration 3
    assert (r["obj_e4"], r["obj_e6"], r["reach_e3"]) == (3, 4, 3)


def test_the_summary_counts_by_hand():
    r = pd.DataFrame({"dataset": ["a", "b", "c"] * 2, "model": "DBL2", "start": ["anje"] * 3 + ["zero"] * 3,
                      **{m: [10, 20, 30, 20, 20, 15] for m in zs.MEASURES}})
    s = zs.summary(r).set_index("measure")
    row = s.loc["n_iter"]
    assert (row.n_datasets, row.fewer, row.equal, row.more, row.p) == (3, 1, 1, 1, pytest.approx(1.0))
    assert row.ratio_geomean == pytest.approx((0.5 * 1.0 * 2.0) ** (1 / 3))
    assert (row.median_anje, row.median_zero) == (20.0, 20.0)


def test_the_committed_fits_are_reach_csvs_and_the_summary_the_scripts():
    s = pd.read_csv(FIGURES / "start_objective.csv")
    r = pd.read_csv(FIGURES / "reach.csv")
    m = s.assign(model=s["model"].where(s["start"] == "anje", s["model"] + "-zero")).merge(
        r, on=["dataset", "model"], suffixes=("", "_reach"), validate="one_to_one")
    assert len(m) == len(s) == 2 * len(s.drop_duplicates(["dataset", "model"]))
    assert set(s["model"]) <= set(zs.MODELS)
    assert (m["n_iter"] == m["n_iter_reach"]).all() and (m["reach_e3"] == m["reach_e3_reach"]).all()
    np.testing.assert_allclose(m["nll_final"], m["nll_final_reach"], rtol=1e-9)  # (reach.csv keeps 10 digits)
    assert (s.loc[s["start"] == "zero", "pen_start"] == 0).all() and (s["obj_final"] <= s["obj_start"]).all()
    free = pd.read_csv(FIGURES / "start_objective_lam0.csv")  # without the penalty: the objective is the NLL
    for model in set(s["model"]):
        mine = free[free["model"] == model]
        chosen = zs.loose(r, model)
        assert sorted(mine["dataset"].unique()) == sorted(chosen) and len(mine) == 2 * len(chosen)
    assert (free["pen_start"] == 0).all() and np.allclose(free["obj_final"], free["nll_final"], rtol=0, atol=0)
    committed = pd.read_csv(FIGURES / "start_objective_summary.csv")
    pd.testing.assert_frame_equal(zs.summaries(FIGURES), committed, check_exact=False, rtol=1e-5, check_dtype=False)
    # DBL3, not refitted from both starts: reach.csv's fit against its control from 0, counted here directly
    pair = r[r["model"].isin(["DBL3", "DBL3-zero"])].pivot(index="dataset", columns="model", values="n_iter").dropna()
    row = committed.set_index(["fits", "model", "measure"]).loc[("penalty, reach.csv", "DBL3", "n_iter")]
    assert (row.n_datasets, row.fewer, row.more) == (len(pair), (pair["DBL3"] < pair["DBL3-zero"]).sum(),
                                                     (pair["DBL3"] > pair["DBL3-zero"]).sum())


def test_the_pages_table_is_the_summary():
    committed = pd.read_csv(FIGURES / "start_objective_summary.csv").set_index(["fits", "model", "measure"])
    doc = (REPO / "docs" / "reproductions" / "zaidi_dbl.md").read_text().splitlines()
    head = "| fits | model | measure | datasets | from AnJE"
    i = next(k for k, line in enumerate(doc) if line.lstrip().startswith(head))
    shown = set()
    for line in doc[i + 2:]:
        line = line.strip()
        if not line.startswith("|"):
            break
        fits, model, measure, n, wdl, ratio, med = (c.strip() for c in line.strip("|").split("|"))
        c = committed.loc[(fits, model, measure.strip("`"))]
        p = "<0.001" if c.p < 0.001 else f"{c.p:.3f}"
        want = (c.n_datasets, f"{c.fewer:.0f}/{c.equal:.0f}/{c.more:.0f} ({p})", round(c.ratio_geomean, 3))
        assert (int(n), wdl.strip("*"), float(ratio)) == want
        assert wdl.startswith("**") == bool(c.p <= 0.05) and med == f"{c.median_anje:g} / {c.median_zero:g}"
        shown.add((fits, model, measure))
    assert len(shown) >= 9
