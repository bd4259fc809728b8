"""report --supplement: another run's summary.csv completes the records' summary."""

import json

import numpy as np
import pandas as pd
import pytest

from bncbench.errors import BNCBenchError
from bncbench.report.supplement import (PARAMS, SOURCE, read_supplement, rounded_mixes, supplement_summary,
                                       supplied_note, supplied_params, with_params)


def rows(spec):
    """(dataset, model, n_ok, zero_one, n_instances) tuples as a summary."""
    return pd.DataFrame([{"dataset": d, "model": m, "n_ok": k, "n_failed": 0, "zero_one": z, "n_instances": n,
                          "protocol": "cv", "big": False} for d, m, k, z, n in spec])


RECORDS = rows([("d1", "A", 10, 0.10, 100), ("d1", "B", 3, 0.20, 100), ("d2", "A", 10, 0.30, 200)])


def test_the_supplement_fills_what_the_records_lack_or_hold_with_fewer_folds():
    sup = rows([("d1", "A", 10, 0.11, 100),       # records as complete: records kept
                ("d1", "B", 10, 0.25, 100),       # records have 3 folds: supplied
                ("d2", "B", 10, 0.35, 200),       # not in the records: supplied
                ("d3", "A", 10, 0.40, 20000),     # a dataset the records lack: supplied, Big by its size
                ("d3", "C", 10, 0.50, 20000)])    # a model the records lack: left out
    merged, unknown = supplement_summary(RECORDS, sup, "old.csv")
    assert unknown == ["C"]
    got = {(r.dataset, r.model): (r.n_ok, r.zero_one, getattr(r, SOURCE), r.big) for r in merged.itertuples()}
    assert got == {("d1", "A"): (10, 0.10, "records", False), ("d2", "A"): (10, 0.30, "records", False),
                   ("d1", "B"): (10, 0.25, "old.csv", False), ("d2", "B"): (10, 0.35, "old.csv", False),
                   ("d3", "A"): (10, 0.40, "old.csv", True)}
    assert supplied_note(merged) == ("3 (dataset, model) means from old.csv, another run's summary without records "
                                     "(not in the task counts, the convergence figures or the environment line): "
                                     "B (2 datasets), A (1 dataset).")
    assert supplied_note(RECORDS) is None
    # laid out as the supplement: its pairs in its order, then the records' others
    assert list(zip(merged.dataset, merged.model)) == [("d1", "A"), ("d1", "B"), ("d2", "B"), ("d3", "A"),
                                                       ("d2", "A")]
    # a supplement that names C's parameters brings C in, and says which model it is
    named = with_params(sup, {"A": {"structure": "nb"}, "B": {"structure": "tan"}, "C": {"structure": "anje", "n": 2}})
    merged, unknown = supplement_summary(RECORDS, named, "old.csv")
    assert unknown == [] and list(merged.loc[merged.model == "C", SOURCE]) == ["old.csv"]
    assert supplied_params(merged, known=["A", "B"]) == {"C": {"n": 2, "structure": "anje"}}
    assert supplied_params(RECORDS) == {}
    with pytest.raises(BNCBenchError, match="params of model C is not JSON: {n"):
        supplied_params(merged.assign(params="{n"), known=["A", "B"])


def test_other_data_or_protocol_is_refused():
    with pytest.raises(BNCBenchError, match="dataset d2 has instances 200 in the records but 199 in the supplement"):
        supplement_summary(RECORDS, rows([("d2", "B", 10, 0.3, 199)]), "x")
    holdout = rows([("d1", "B", 1, 0.3, 100)]).assign(protocol="holdout")
    with pytest.raises(BNCBenchError, match="dataset d1 has protocol cv in the records but holdout"):
        supplement_summary(RECORDS, holdout, "x")


def test_a_label_that_stands_for_other_parameters_is_refused():
    ours = with_params(RECORDS, {"A": {"structure": "anje", "n": np.float64(2.0), "lam": 0.01},
                                 "B": {"structure": "nb", "options": {"stop": "ebnc"}}})
    assert json.loads(ours.loc[0, PARAMS]) == {"lam": 0.01, "n": 2.0, "structure": "anje"}
    # a NumPy bool (a param column without gaps) is written as the JSON bool that a column with gaps gives
    flags = [with_params(RECORDS, {"A": {"flag": v}})[PARAMS].iloc[0] for v in (np.bool_(True), True)]
    assert flags == ['{"flag": true}'] * 2
    assert list(ours[PARAMS][ours.model == "A"].str[:6]) == ['{"lam"'] * 2          # sorted keys
    same = rows([("d1", "B", 10, 0.25, 100), ("d2", "A", 10, 0.3, 200)])
    same = with_params(same, {"A": {"n": 2, "lam": 0.01, "structure": "anje"}, "B": {"options": {"stop": "ebnc"},
                                                                                 "structure": "nb"}})
    merged, _ = supplement_summary(ours, same, "old.csv")           # 2 and 2.0 are the same value
    assert (merged.loc[merged[SOURCE] == "old.csv", "model"] == "B").all()
    other = with_params(rows([("d1", "B", 10, 0.25, 100), ("d2", "A", 10, 0.3, 200)]),
                        {"A": {"n": 2, "lam": 0.01, "structure": "anje", "reg_scale": "mean"},
                         "B": {"options": {"stop": "ebnc"}, "structure": "nb"}})
    with pytest.raises(BNCBenchError, match=r"^model A has other parameters in the records than in the supplement "
                                            r"\(reg_scale \(unset\) vs mean\): not the same model$"):
        supplement_summary(ours, other, "x")
    nested = with_params(rows([("d1", "B", 10, 0.25, 100)]), {"B": {"options": {"stop": "pgtol"}, "structure": "nb"}})
    with pytest.raises(BNCBenchError, match="model B .*options {'stop': 'ebnc'} vs {'stop': 'pgtol'}"):
        supplement_summary(ours, nested, "x")
    with pytest.raises(BNCBenchError, match="the supplement's params of model B is not JSON: {stop"):
        supplement_summary(ours, nested.assign(params="{stop"), "x")
    # a summary written before the column existed (or records without it) cannot be checked
    for recs, sup in ((ours, other.drop(columns=[PARAMS])), (RECORDS, other)):
        merged, _ = supplement_summary(recs, sup, "x")
        assert list(merged.loc[merged[SOURCE] == "x", "model"]) == ["B"]    # d1 / B: 10 folds against 3


def test_unreadable_supplements_are_one_line(tmp_path):
    with pytest.raises(BNCBenchError, match="supplement not found"):
        read_supplement(tmp_path / "none.csv")
    (tmp_path / "a.csv").write_text("dataset,model,zero_one\nd1,A,0.1\n")
    with pytest.raises(BNCBenchError, match="no column n_ok, n_instances"):
        read_supplement(tmp_path / "a.csv")
    pd.concat([RECORDS, RECORDS.iloc[:1]]).to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(BNCBenchError, match="holds d1 / A twice"):
        read_supplement(tmp_path / "b.csv")


def test_a_rounded_supplement_mixed_with_records_is_named():
    """A supplement at 6 significant digits (summaries before November 2026) against full-precision
    records on one dataset: the datasets where the two meet are named; at full precision, none."""
    sup = rows([("d1", "B", 10, 0.25, 100), ("d3", "A", 10, 0.4, 20000), ("d3", "B", 10, 0.41, 20000)])
    merged, _ = supplement_summary(RECORDS, sup, "old.csv")
    assert rounded_mixes(sup, merged) == ["d1"]                 # d3 is all supplied, d2 all records
    exact = sup.assign(zero_one=[1 / 3, 2 / 7, 3 / 11])
    assert rounded_mixes(exact, supplement_summary(RECORDS, exact, "x")[0]) == []
