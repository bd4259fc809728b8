"""The §7.4 convergence-histogram rule (Zaidi et al. 2017, Figs. 15-17) on hand-made traces."""

import numpy as np
import pandas as pd
import pytest

from bncbench.report import convergence as C


def trace(nlls, iters=None):
    iters = range(len(nlls)) if iters is None else iters
    return [{"iter": i, "nll": v, "n_fev": i + 1, "time": 0.1 * i} for i, v in zip(iters, nlls)]


def test_nll_curve_sorts_and_fills_gaps():
    c = C.nll_curve(trace([10, 8, 5], iters=[0, 1, 4])[::-1])
    assert c.tolist() == [10, 8, 8, 8, 5]
    assert C.nll_curve([]).size == 0


def test_weighted_ahead_positive():
    w = [10, 8, 6, 5, 4, 3, 2.5, 2.4]
    d = [10, 9.5, 9, 8.5, 8, 7, 5, 4, 3, 2.9]
    # w reaches 3 at iteration 5; d first gets to <= 3 at iteration 8: 3 more iterations
    g = C.convergence_gap(w, d)
    assert g.value == 3 and not g.censored


def test_weighted_behind_negative():
    w = [10, 9, 8, 7, 6, 5, 4, 3]
    d = [10, 8, 6, 5, 4, 3.5, 3.4, 3.3]
    # d is at 3.5 at iteration 5; w needs until iteration 7 (3 <= 3.5): -2
    g = C.convergence_gap(w, d)
    assert g.value == -2 and not g.censored


def test_equal_at_iteration_five_is_zero():
    w = [10, 9, 8, 7, 6, 5, 4]
    assert C.convergence_gap(w, list(w)).value == 0
    assert C.convergence_gap(w, [10, 1, 1, 1, 1, 5 * (1 + 1e-12), 1]).value == 0


def test_reaching_within_same_iteration_counts_zero_after_five():
    # d is behind at 5 only in... no: w ahead, d reaches w's value at iteration 6 -> 1
    w = [10, 9, 8, 7, 6, 5]
    d = [10, 9, 8, 7, 6, 5.5, 4.9]
    assert C.convergence_gap(w, d).value == 1


def test_short_trace_keeps_final_value():
    w = [10, 5, 3, 2]  # converged at iteration 3: its NLL at iteration 5 is 2
    d = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1.9]
    assert C.convergence_gap(w, d).value == 3


def test_never_reached_is_censored_lower_bound():
    w = [10, 8, 6, 4, 3, 2, 1.5]
    d = [10, 9, 8, 7, 6, 5, 4]  # stops at iteration 6 above 2
    g = C.convergence_gap(w, d)
    assert g.censored and g.value == 2  # ran 1 iteration after 5, so at least 2
    g = C.convergence_gap(d, w)  # roles swapped: negative and censored
    assert g.censored and g.value == -2


def test_other_iteration_than_five():
    w = [10, 5, 4, 3]
    d = [10, 8, 6, 4, 3]
    assert C.convergence_gap(w, d, at=1).value == 2  # d needs iteration 3 to reach 5


def _records(gaps_traces):
    rows = []
    for (r, f), (tw, td) in gaps_traces.items():
        for m, t in (("NB^w", tw), ("NB^d", td)):
            rows.append({"dataset": "ds", "model": m, "round": r, "fold": f, "status": "ok", "trace": trace(t)})
    return pd.DataFrame(rows)


def test_dataset_gaps_aggregate_over_folds():
    w = [10, 8, 6, 5, 4, 3]
    d3 = [10, 9, 8, 7, 6, 5, 4, 3.5, 3.0]  # gap 3
    d5 = [10, 9, 8, 7, 6, 5, 4.5, 4, 3.5, 3.2, 3.0]  # gap 5
    d_neg = [10, 5, 3, 2, 2, 2, 2]  # w behind: w never reaches 2 -> censored -1
    recs = _records({(0, 0): (w, d3), (0, 1): (w, d5), (1, 0): (w, d5), (1, 1): (w, d_neg)})
    med = C.dataset_gaps(recs, "NB^w", "NB^d")
    assert med.loc[0, "gap"] == 4.0 and med.loc[0, "n_folds"] == 4 and not med.loc[0, "censored"]
    assert C.dataset_gaps(recs, "NB^w", "NB^d", aggregate="first").loc[0, "gap"] == 3.0
    assert C.dataset_gaps(recs, "NB^w", "NB^d", aggregate="mean").loc[0, "gap"] == pytest.approx((3 + 5 + 5 - 1) / 4)


def test_dataset_gaps_pairs_folds_and_skips_failed():
    w = [10, 8, 6, 5, 4, 3]
    recs = _records({(0, 0): (w, [10, 9, 8, 7, 6, 5, 3])})
    extra = pd.DataFrame([{"dataset": "ds", "model": "NB^d", "round": 0, "fold": 1, "status": "ok",
                           "trace": trace([10, 1])},  # no w trace for this fold: not paired
                          {"dataset": "ds", "model": "NB^w", "round": 0, "fold": 1, "status": "failed",
                           "trace": None}])
    g = C.dataset_gaps(pd.concat([recs, extra], ignore_index=True), "NB^w", "NB^d")
    assert g.loc[0, "n_folds"] == 1 and g.loc[0, "gap"] == 1


def test_median_trace():
    recs = _records({(0, 0): ([4, 3, 2], [4, 3]), (0, 1): ([6, 5], [4, 3])})
    assert C.median_trace(recs, "ds", "NB^w").tolist() == [5, 4, 3.5]
    assert C.median_trace(recs, "ds", "nope").size == 0
    assert np.isnan(C.convergence_gap([], [1.0]).value)
