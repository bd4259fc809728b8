"""docs/reproductions/pernkopf_tables.py: the SVM's row names and the digit sets beside the paper, on hand-made rates."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "reproductions"))
import pernkopf_tables as pt  # noqa: E402


def test_the_svm_row_names_its_features_its_training_subsample_and_a_fixed_c_and_gamma():
    svm = {"param.model": "svm_rbf", "param.grid": {"C": [1.0], "gamma": [0.2]}}
    assert pt.kind(pd.Series({**svm, "param.features": "raw"})) == ("SVM", "SVM")
    assert pt.kind(pd.Series({**svm, "param.features": np.nan})) == ("SVM (codes)", "SVM")
    assert pt.kind(pd.Series({**svm, "param.features": "raw", "param.train_rows": 10000.0})) == (
        "SVM (raw, 10k rows)", "SVM")
    assert pt.kind(pd.Series({**svm, "param.train_rows": 2500})) == ("SVM (codes, 2500 rows)", "SVM")
    assert pt.kind(pd.Series({**svm, "param.features": "raw", "param.train_rows": np.nan})) == ("SVM", "SVM")
    fixed = {"param.model": "svm_rbf", "param.features": "raw", "param.grid": np.nan, "param.C": 10.0,
             "param.gamma": 0.2}
    assert pt.kind(pd.Series(fixed)) == ("SVM (raw, C=10, gamma=0.2)", "SVM")


def test_vs_paper_puts_every_paper_cell_beside_ours():
    r = pd.DataFrame([
        {"dataset": "mnist14", "structure": "NB", "learning": "ML", "rate": 84.68},
        {"dataset": "mnist14", "structure": "SVM (raw, 10k rows)", "learning": "SVM", "rate": 96.0},
        {"dataset": "mnist14", "structure": "SVM (codes, 10k rows)", "learning": "SVM", "rate": 95.0},
        {"dataset": "satellite", "structure": "NB", "learning": "ML", "rate": 82.0}])
    r = r.assign(binomial_std=0.3, n_parameters=100.0, train_s=1.0)
    t = pt.vs_paper(r)
    assert set(t["dataset"]) == {"mnist14", "usps"}  # the UCI stand-ins have no paper value here
    assert len(t) == 2 * 13 + 1  # 12 BNCs + the SVM per digit set; MNIST's SVM paper value beside 2 SVMs of ours
    cell = t.set_index(["dataset", "structure", "learning"])
    assert cell.loc[("mnist14", "NB", "ML"), "paper"] == 83.73
    assert cell.loc[("mnist14", "NB", "ML"), "difference"] == pytest.approx(84.68 - 83.73)
    assert cell.loc[("mnist14", "SVM (raw, 10k rows)", "SVM"), "paper"] == 96.40
    assert cell.loc[("mnist14", "SVM (codes, 10k rows)", "SVM"), "difference"] == pytest.approx(95.0 - 96.40)
    assert np.isnan(cell.loc[("mnist14", "TAN-CR", "MM"), "ours"]) and cell.loc[("mnist14", "TAN-CR", "MM"), "paper"] == 95.12
    assert cell.loc[("usps", "SVM", "SVM"), "paper"] == 97.86 and np.isnan(cell.loc[("usps", "SVM", "SVM"), "ours"])
    assert list(t[t["dataset"] == "mnist14"]["learning"].drop_duplicates()) == ["ML", "CL", "MM", "SVM"]


def test_paired_counts_the_folds_each_learning_wins_on_the_same_folds():
    rows = []
    for fold, (ml, cl, mm) in enumerate([(80, 85, 86), (81, 84, 84), (79, 86, 85), (80, 83, 88)]):
        for learning, rate in (("ML", ml), ("CL", cl), ("MM", mm)):
            rows.append({"dataset": "d", "structure": "NB", "round": fold // 2, "fold": fold % 2,
                         "learning": learning, "rate": float(rate)})
    rows.append({"dataset": "d", "structure": "NB", "round": 9, "fold": 0, "learning": "MM", "rate": 99.0})  # no CL
    t = pt.paired(pd.DataFrame(rows)).set_index("pair")
    assert t.loc["MM vs CL", ["folds", "wins", "draws", "losses"]].tolist() == [4, 2, 1, 1]
    assert t.loc["MM vs CL", "mean_difference"] == pytest.approx((1 + 0 - 1 + 5) / 4)
    assert t.loc["MM vs CL", "sign_p"] == pytest.approx(1.0)
    assert t.loc["CL vs ML", ["wins", "losses"]].tolist() == [4, 0]
    assert t.loc["CL vs ML", "sign_p"] == pytest.approx(0.125)  # 2 * 0.5**4
    assert t.loc["MM vs ML", "folds"] == 4
