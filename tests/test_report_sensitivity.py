"""The report's tuning-sensitivity section (Pernkopf et al., Fig. 5): its table and its drawn lines are the records'."""

import json

import numpy as np
import pandas as pd
import pytest

from bncbench.data import specs
from bncbench.harness.model_specs import ModelSpec
from bncbench.report import figures as F
from bncbench.report.build import make_report
from bncbench.report.sensitivity import panels_of, tuning_curves
from bncbench.harness.runner import Protocol, run_experiment

KAPPAS = [0.05, 0.3, 0.5]
LAMS = [0.01, 0.2]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("tuned")
    mm = {"structure": "nb", "param": "extended", "objective": "margin", "optimizer": "cg",
          "optimizer_options": {"validation_fraction": 0.25, "patience": 3, "maxiter": 15,
                                "grid": {"margin_lam": LAMS, "kappa": KAPPAS}}}
    models = [ModelSpec("MM", mm), ModelSpec("NB", {"structure": "nb"})]
    counts = run_experiment(specs.resolve(["synth-nb"]), models, results_root=root,
                            protocol=Protocol(seed=0, rounds=1, folds=2), progress=False)
    assert counts["ok"] == 4
    return root


def _from_json(root):
    """Per (line, kappa): the held-out rates (%) of the stored candidates, read from the JSON files directly."""
    out = {}
    for path in sorted(root.glob("records/*/MM/*.json")):
        for c in json.loads(path.read_text())["tuning"]["candidates"]:
            out.setdefault((f"margin_lam={c['margin_lam']:g}", c["kappa"]), []).append(100 * (1 - c["val_error"]))
    return out


def test_the_curves_are_the_mean_held_out_rates_of_the_stored_candidates(store):
    from bncbench.harness.store import load_results

    cur = tuning_curves(load_results(store))
    assert set(cur["model"]) == {"MM"}  # the untuned NB has none
    assert (cur["x_name"] == "kappa").all() and (cur["n"] == 2).all()
    assert list(cur["x"]) == KAPPAS * len(LAMS)  # grid order: kappa varies fastest
    expected = _from_json(store)
    assert len(expected) == len(cur) == len(LAMS) * len(KAPPAS)
    for row in cur.itertuples():
        vals = expected[(row.line, row.x)]
        assert row.rate == pytest.approx(np.mean(vals)) and row.std == pytest.approx(np.std(vals, ddof=1))


def test_the_report_draws_and_tabulates_exactly_those_numbers(store, tmp_path, monkeypatch):
    drawn = []
    real = F.xy_curves

    def spy(panels, **kw):
        fig = real(panels, **kw)
        drawn.append((kw, {name: {line.get_label(): line.get_xydata().copy() for line in ax.lines}
                           for name, ax in zip(panels, fig.axes)}))
        return fig

    monkeypatch.setattr(F, "xy_curves", spy)
    rep = make_report(store, tmp_path / "rep", overrides={"n_jobs": 1})
    assert (tmp_path / "rep" / "figures" / "tuning_mm.pdf").exists()
    table = pd.read_csv(tmp_path / "rep" / "tables" / "tuning_curves.csv")
    expected = _from_json(store)
    for row in table.itertuples():
        assert row.rate == pytest.approx(np.mean(expected[(row.line, row.x)]), rel=1e-9)
    (kw, panels), = [d for d in drawn if d[0].get("xlabel") == "kappa"]
    assert list(panels) == ["synth-nb"]
    lines = panels["synth-nb"]
    assert sorted(lines) == sorted({line for line, _ in expected})
    for line, xy in lines.items():
        np.testing.assert_allclose(xy[:, 0], KAPPAS)
        np.testing.assert_allclose(xy[:, 1], [np.mean(expected[(line, k)]) for k in KAPPAS], rtol=1e-12)
    assert any("Fig. 5" in s.title for s in rep.sections)


def test_string_values_are_tabulated_not_plotted():
    recs = pd.DataFrame([{"dataset": "d", "model": "SVM", "tuning": {"chosen": {}, "candidates": [
        {"C": 1.0, "gamma": "scale", "val_error": 0.2}, {"C": 1.0, "gamma": 0.5, "val_error": 0.1}]}}])
    cur = tuning_curves(recs)
    assert list(cur["rate"]) == pytest.approx([80.0, 90.0])
    (x, y), = panels_of(cur, "SVM")["d"].values()
    assert list(x) == [0.5] and list(y) == pytest.approx([90.0])
