"""docs/reproductions/zaidi_dbl_rerun_cmp.py: two runs' summaries compared on the pairs complete in both."""

import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "reproductions"))
import zaidi_dbl_rerun_cmp as cmp  # noqa: E402

METRICS = {"rmse": 0.3, "bias": 0.1, "variance": 0.05}


def summary(zero_one: dict, n_ok: dict | None = None) -> pd.DataFrame:
    """A summary.csv with the given 0-1 losses per (dataset, model), other metrics constant, 10 folds."""
    rows = [{"dataset": d, "model": m, "zero_one": v, "n_ok": (n_ok or {}).get((d, m), 10), "n_failed": 0,
             "protocol": "cv", **METRICS} for (d, m), v in zero_one.items()]
    return pd.DataFrame(rows)


OLD = {("d1", "A"): 0.10, ("d1", "B"): 0.20, ("d2", "A"): 0.20, ("d2", "B"): 0.10,
       ("d3", "A"): 0.30, ("d3", "B"): 0.30, ("d4", "A"): 0.40, ("d4", "B"): 0.50,
       ("d5", "A"): 0.10, ("d5", "B"): 0.90}


def test_a_changed_mean_is_counted_and_its_cell_marked():
    new = {**OLD, ("d3", "B"): 0.25}                 # A vs B on d3: draw -> loss
    old_s, new_s = summary(OLD), summary(new, n_ok={("d5", "B"): 9})   # d5/B incomplete in the rerun
    m = cmp.common_pairs(old_s, new_s)
    assert sorted(zip(m["dataset"], m["model"])) == sorted(k for k in OLD if k != ("d5", "B"))
    diff = cmp.model_differences(m, atol=1e-6).set_index(["model", "metric"])
    assert diff.loc[("B", "zero_one"), "differ"] == 1
    assert diff.loc[("B", "zero_one"), "max"] == pytest.approx(0.05)
    assert diff.loc[("B", "zero_one"), "at"] == "d3"
    assert diff.loc[("A", "zero_one"), "differ"] == 0 and diff.loc[("B", "rmse"), "differ"] == 0
    cells = cmp.moved_cells(old_s, new_s, m[["dataset", "model"]], [("A", "B"), ("A", "C")]).set_index("metric")
    # d5 is left out of both runs (B incomplete there): old d1 win, d2 loss, d3 draw, d4 win
    assert cells.loc["zero_one", "old"] == "2/1/1 (1.000)"
    assert cells.loc["zero_one", "new"] == "2/0/2 (1.000)"
    assert cells.loc["zero_one", "moved"] and not cells.loc["rmse", "moved"]
    assert set(cells["model_b"]) == {"B"}          # a pair with a model absent from the runs is skipped
    # rows a report supplied from the first run's summary are not the second run's: left out
    supplied = new_s.assign(source=["records"] * 8 + ["old.csv"] * 2)   # d5 supplied
    assert set(cmp.common_pairs(old_s, supplied)["dataset"]) == {"d1", "d2", "d3", "d4"}


def test_committed_report_against_itself_moves_nothing():
    path = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "summary.csv"
    s = pd.read_csv(path)
    m = cmp.common_pairs(s, s)
    assert len(m) == int((~cmp.incomplete(s)).sum())
    assert (cmp.model_differences(m, atol=0.0)["differ"] == 0).all()
    pairs = cmp.table_pairs(REPO / "conf" / "experiment" / "zaidi_dbl.yaml")
    assert ("DBL2", "A2JE") in pairs and len(pairs) == len(set(pairs))
    cells = cmp.moved_cells(s, s, m[["dataset", "model"]], pairs)
    # the config's pairs whose two models that summary has (it predates LR1 and LR3)
    present = [p for p in pairs if set(p) <= set(s["model"])]
    assert len(present) < len(pairs) and len(cells) == 4 * len(present) and not cells["moved"].any()


def test_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    assert cmp.main([str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no such file")
