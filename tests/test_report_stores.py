"""Several stores of one experiment read as one (bncbench.harness.store.load_stores) and reported as one:
a later store's record of a task replaces an earlier one's, models matched by their parameters."""

import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from bncbench.errors import BNCBenchError
from bncbench.harness.store import ReplacedRecordWarning, load_results, load_stores, merge_stores, record_files
from bncbench.report.cli import main as report_main

NB, TAN, KDB1 = {"structure": "nb"}, {"structure": "tan"}, {"structure": "kdb", "k": 1}


def run(root, models, datasets=("synth-nb", "synth-tree"), rounds=2, seed=0):
    import bncbench.data.specs as dataset_specs
    import bncbench.harness.model_specs as model_specs
    import bncbench.harness.runner as runner

    runner.run_experiment(datasets=dataset_specs.resolve(list(datasets)),
                          models=[model_specs.ModelSpec(label, params) for label, params in models],
                          results_root=root, protocol=runner.Protocol(seed, rounds, 2), progress=False)
    return root


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """``a``: NB and TAN, 2 rounds x 2 folds on two datasets; ``b`` (another name, as a second run's ``name=``):
    TAN again on synth-nb's first round (2 records replacing a's) and KDB-1, new; ``union``: one store holding
    what ``a`` then ``b`` hold, the replaced records left out (made by copying their record files)."""
    base = tmp_path_factory.mktemp("stores")
    a = run(base / "a", [("NB", NB), ("TAN", TAN)])
    b = run(base / "b", [("TAN", TAN)], datasets=["synth-nb"], rounds=1)
    run(base / "b", [("KDB-1", KDB1)])
    union = base / "union"
    shutil.copytree(a, union)
    for p in record_files(union):
        if p.parent.name == "TAN" and p.parent.parent.name == "synth-nb" and p.name.startswith("r0"):
            p.unlink()
            p.with_suffix(".npz").unlink()
    for p in record_files(b):
        dest = union / p.relative_to(b)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, dest)
        shutil.copy2(p.with_suffix(".npz"), dest.with_suffix(".npz"))
    return a, b, union


def test_a_later_stores_record_of_a_task_replaces_the_earlier_ones(stores):
    a, b, union = stores
    said = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplacedRecordWarning)  # deterministic refits: same results, no warning
        df = load_stores([a, b], say=said.append)
    assert len(load_results(a)) == 16 and len(load_results(b)) == 2 + 8
    assert len(df) == 16 + 10 - 2 == len(load_results(union))
    assert said == ["bncbench: 2 stores read as one: 2 record(s) replaced by a later store's"]
    tan = df[(df["model"] == "TAN") & (df["dataset"] == "synth-nb")].set_index(["round", "fold"])["store"]
    assert tan.to_dict() == {(0, 0): str(b), (0, 1): str(b), (1, 0): str(a), (1, 1): str(a)}
    assert df["path"].str.startswith(str(b)).sum() == 10
    # one store alone is load_results, with the store named
    alone = load_stores([a])
    assert alone.drop(columns="store").equals(load_results(a)) and set(alone["store"]) == {str(a)}
    # the other order: a's records win
    back = load_stores([b, a])
    assert len(back) == 24 and set(back[(back["model"] == "TAN")]["store"]) == {str(a)}


def test_the_report_of_two_stores_is_the_report_of_one_store_holding_their_union(stores, tmp_path, capsys):
    a, b, union = stores
    for store in (a, union):
        cfg = store / "hydra" / "run" / ".hydra"
        cfg.mkdir(parents=True, exist_ok=True)
        (cfg / "config.yaml").write_text("name: tiny\nseed: 0\nreport:\n  reference: NB\n")
    args = ["--pairs", "TAN:NB", "KDB-1:NB", "KDB-1:TAN", "--metrics", "zero_one", "rmse", "bias", "variance",
            "train_time", "--no-figures", "--jobs", "1"]
    assert report_main([str(a), str(b), "--out", str(tmp_path / "two"), *args]) == 0
    assert "2 record(s) replaced" in capsys.readouterr().err
    assert report_main([str(union), "--out", str(tmp_path / "one"), *args]) == 0
    for table in ("summary.csv", "tables/wdl.csv", "tables/geomean.csv"):
        two, one = pd.read_csv(tmp_path / "two" / table), pd.read_csv(tmp_path / "one" / table)
        pd.testing.assert_frame_equal(two, one, check_exact=True)
    wdl = pd.read_csv(tmp_path / "two" / "tables" / "wdl.csv")
    assert set(zip(wdl.model_a, wdl.model_b)) == {("TAN", "NB"), ("KDB-1", "NB"), ("KDB-1", "TAN")}
    index = (tmp_path / "two" / "index.md").read_text()
    assert "Report: tiny" in index  # the first store's config
    assert ("Source: `a`, `b` (read as one: a later store's record of a task replaces an earlier one's), "
            "config `a/hydra/run/.hydra/config.yaml`.") in index
    assert str(tmp_path.parent) not in index


def test_stores_that_split_a_dataset_differently_are_refused(stores, tmp_path, capsys):
    from bncbench.__main__ import main

    a, _, _ = stores
    other_seed = run(tmp_path / "seed1", [("KDB-1", KDB1)], datasets=["synth-nb"], rounds=1, seed=1)
    with pytest.raises(BNCBenchError, match="split synth-nb differently .*0 2 cv against 1 2 cv"):
        load_stores([a, other_seed])
    assert main(["report", str(a), str(other_seed), "--out", str(tmp_path / "o"), "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert "split synth-nb differently" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    assert main(["report", str(a), str(a), "--out", str(tmp_path / "o")]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["report", str(a), str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "results directory not found" in capsys.readouterr().err


def frame(*recs):
    base = {"dataset": "mnist14", "round": 0, "fold": 0, "seed": 0, "n_folds": 1, "protocol": "holdout",
            "status": "ok", "param.structure": "nb", "param.kappa": 0.25, "param.grid": np.nan, "zero_one": 0.1,
            "rmse": 0.2, "missing_features": {"rate": [[0.9]]}}
    return pd.DataFrame([{**base, **r} for r in recs])


def test_records_are_matched_by_every_parameter_and_a_differing_replacement_is_named():
    df = frame({"model": "NB-MM", "store": "mnist"},
               {"model": "NB-MM k", "store": "kappa", "param.kappa": 0.5},  # another kappa: another model
               {"model": "NB-MM", "store": "mnist", "fold": 1},
               {"model": "NB-MM", "store": "mnist", "round": 1},  # no later record: kept, relabelled
               {"model": "renamed", "store": "impute", "missing_features": {"rate": [[0.9]], "rate_knn_mode": [[0.95]]}},
               {"model": "renamed", "store": "impute", "fold": 1, "zero_one": 0.2, "missing_features": {"rate": [[0.8]]}})
    said = []
    with pytest.warns(ReplacedRecordWarning) as caught:
        out = merge_stores(df, say=said.append)
    assert sorted(zip(out["store"], out["round"], out["fold"], out["param.kappa"])) == [
        ("impute", 0, 0, 0.25), ("impute", 0, 1, 0.25), ("kappa", 0, 0, 0.5), ("mnist", 1, 0, 0.25)]
    assert "rate_knn_mode" in out[(out["store"] == "impute") & (out["fold"] == 0)]["missing_features"].iloc[0]
    assert [str(w.message) for w in caught] == [
        "mnist14 NB-MM round 0 fold 1: the record of mnist replaced by impute's, which differs (zero_one 0.1 -> 0.2; "
        "missing-features curve differs)"]  # fold 0's replacement has the same rate and curve: counted, not named
    # one label per model, the latest store's; the other reader keeps the stored labels
    assert set(out.loc[out["param.kappa"] == 0.25, "model"]) == {"renamed"}
    assert said == ["bncbench: 3 stores read as one: 2 record(s) replaced by a later store's, "
                    "1 relabelled as the latest store names their model"]
    with pytest.warns(ReplacedRecordWarning):
        kept = merge_stores(df, labels=False)
    assert sorted(kept["model"]) == ["NB-MM", "NB-MM k", "renamed", "renamed"]
    assert df["model"].tolist()[0] == "NB-MM"  # not modified


def test_a_failed_record_never_replaces_a_successful_one_and_labels_name_one_model():
    df = frame({"model": "NB", "store": "first"}, {"model": "NB", "store": "second", "status": "failed",
                                                   "zero_one": np.nan, "rmse": np.nan, "missing_features": None},
               {"model": "NB", "store": "second", "fold": 1, "status": "failed", "zero_one": np.nan})
    with pytest.warns(ReplacedRecordWarning, match="the failed record of second left out, first's successful one kept"):
        out = merge_stores(df)
    assert list(zip(out["store"], out["status"])) == [("first", "ok"), ("second", "failed")]
    clash = frame({"model": "NB", "store": "first"}, {"model": "NB", "store": "second", "param.kappa": 0.5})
    with pytest.raises(BNCBenchError, match="the label 'NB' names different models in first and second"):
        merge_stores(clash)
    assert len(merge_stores(clash, labels=False)) == 2
    holdout = frame({"model": "NB", "store": "first"}, {"model": "TAN", "store": "second", "protocol": "cv",
                                                        "n_folds": 2, "param.structure": "tan"})
    with pytest.raises(BNCBenchError, match="stores first and second split mnist14 differently"):
        merge_stores(holdout)


def test_the_report_draws_each_models_rates_with_features_removed_marginalized_and_imputed(tmp_path):
    """Fig. 6's curves: a record's ``missing_features`` (from one store, its imputed curve from a later one)."""
    from bncbench.report.build import report_from_frames
    from bncbench.report.missing_curves import panels_of
    from bncbench.harness.missing_protocol import curves

    recs = []
    for fold, (m0, m5, i5) in enumerate([(0.9, 0.6, 0.8), (0.8, 0.4, 0.7)]):
        for model, params in (("NB", NB), ("TAN", TAN)):
            recs.append({"dataset": "d", "model": model, "round": 0, "fold": fold, "status": "ok", "zero_one": 0.1,
                         "rmse": 0.3, "train_time": 1.0, "test_time": 0.1, "n_instances": 100, "big": False,
                         **{f"param.{k}": v for k, v in params.items()},
                         "missing_features": {"k": [0, 5], "method": "missing", "rate": [[m0, m0], [m5, m5 + 0.1]],
                                              **({"rate_knn_mode": [[m0, m0], [i5, i5]]} if model == "TAN" else {})}})
    recs = pd.DataFrame(recs)
    table = curves(recs)
    tan = panels_of(table, "TAN")["d"]
    assert list(tan) == ["marginalized", "kNN imputation (most frequent value)"]
    assert tan["marginalized"][0].tolist() == [0, 5]
    np.testing.assert_allclose(tan["marginalized"][1], [85.0, 100 * (0.6 + 0.7 + 0.4 + 0.5) / 4])
    np.testing.assert_allclose(tan["kNN imputation (most frequent value)"][1], [85.0, 75.0])
    assert list(panels_of(table, "NB")["d"]) == ["marginalized"]
    summ = recs.groupby(["dataset", "model"], sort=False).agg(
        zero_one=("zero_one", "mean"), rmse=("rmse", "mean"), train_time=("train_time", "mean"),
        test_time=("test_time", "mean"), n_instances=("n_instances", "first"), big=("big", "first"),
        n_ok=("status", "size")).reset_index().assign(n_failed=0, bias=0.05, variance=0.05)
    rep = report_from_frames(recs, summ, tmp_path / "rep", name="mf", overrides={"n_jobs": 1}, log=lambda m: None)
    written = pd.read_csv(tmp_path / "rep" / "tables" / "missing_features.csv")
    assert len(written) == 2 * 2 + 2 and set(written["method"]) == {"missing", "knn_mode"}
    figs = {p.name for p in rep.figures()}
    assert {"missing_nb.png", "missing_tan.png", "missing_tan.pdf"} <= figs
    index = (tmp_path / "rep" / "index.md").read_text()
    assert "## Features removed at test time (Pernkopf et al., Fig. 6)" in index and "figures/missing_tan.png" in index
