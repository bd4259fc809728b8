"""Table 2's rule (Feelders & Ivanovs §6) on hand-made traces."""

import numpy as np
import pandas as pd
import pytest

from bncbench.report.thresholds import costs_to_threshold, has_flops, scaled_table


def _rec(d, fold, model, nlls, flops):
    tr = [{"iter": i, "nll": v, "flops_total": f} for i, (v, f) in enumerate(zip(nlls, flops))]
    return {"dataset": d, "round": 0, "fold": fold, "model": model, "status": "ok", "trace": tr}


def test_iterations_and_flops_to_the_threshold_by_hand():
    # start NLL 100, best 0 -> t: NLL <= 5
    recs = pd.DataFrame([
        _rec("a", 0, "A", [100, 50, 6, 5, 0], [10, 20, 30, 40, 50]),     # reaches at iteration 3, 40 flops
        _rec("a", 0, "B", [100, 4, 1], [10, 200, 400]),                  # iteration 1, 200 flops
        _rec("a", 1, "A", [100, 4, 0], [10, 20, 30]),                    # (fold 1) iteration 1, 20 flops
        _rec("a", 1, "B", [100, 30, 6], [10, 20, 30]),                   # never: NaN
        {"dataset": "a", "round": 0, "fold": 0, "model": "G", "status": "ok", "trace": None},
    ])
    assert has_flops(recs)
    c = costs_to_threshold(recs)
    r = c[(c["fold"] == 0)].set_index("model")
    assert r.loc["A", "threshold"] == pytest.approx(-5.0) and r.loc["A", "cll_ml"] == -100
    assert (r.loc["A", "iterations"], r.loc["A", "flops"]) == (3, 40)
    assert (r.loc["B", "iterations"], r.loc["B", "flops"]) == (1, 200)
    r1 = c[(c["fold"] == 1)].set_index("model")
    assert r1.loc["A", "iterations"] == 1 and np.isnan(r1.loc["B", "iterations"])
    it = scaled_table(c, "iterations")
    # medians over folds: A (3, 1) -> 2, B (1, NaN) -> 1; scaled by the row's smallest
    assert it.loc["a", "A"] == pytest.approx(2.0) and it.loc["a", "B"] == pytest.approx(1.0)
    fl = scaled_table(c, "flops")
    assert fl.loc["a", "B"] == pytest.approx(200 / 30) and fl.loc["a", "A"] == pytest.approx(1.0)
    assert fl.loc["mean", "B"] == pytest.approx(200 / 30)
