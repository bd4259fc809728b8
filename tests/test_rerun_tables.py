"""docs/reproductions/zaidi_dbl_rerun_tables.py: Tables 2-6 and §6.3's counts from a store, on hand-made records;
and the committed stores: the lost store's summary gives back its CSVs, store2's records are the experiment's tasks."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "reproductions"))
import zaidi_dbl_rerun_tables as rt  # noqa: E402
from conftest import assert_same_output, data_dir_or_skip, run_cli  # noqa: E402

STORE2 = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "store2"

# (dataset, model) -> (0-1 loss, folds, mean iterations); d4 is Big (200,000 rows)
CELLS = {
    ("d1", "DBL2"): (0.10, 10, 50), ("d1", "A2JE"): (0.20, 10, None), ("d1", "LR2"): (0.10, 10, 80),
    ("d2", "DBL2"): (0.30, 10, 20), ("d2", "A2JE"): (0.20, 10, None), ("d2", "LR2"): (0.40, 10, 30),
    ("d3", "DBL2"): (0.25, 10, 90), ("d3", "A2JE"): (0.25, 10, None), ("d3", "LR2"): (0.20, 9, 10),
    ("d4", "DBL2"): (0.05, 10, 500), ("d4", "A2JE"): (0.07, 10, None), ("d4", "LR2"): (0.06, 10, 100),
}
ROWS = {"d1": 100, "d2": 200, "d3": 300, "d4": 200_000}


def records() -> pd.DataFrame:
    """Long-format records as load_results gives them: one per fold, the cell's loss and iterations."""
    out = []
    for (d, m), (loss, folds, it) in CELLS.items():
        for k in range(folds):
            out.append({"dataset": d, "model": m, "round": k // 2, "fold": k % 2, "status": "ok",
                        "zero_one": loss, "rmse": loss, "train_time": 1.0 if it is None else it / 100.0,
                        "test_time": 0.01, "n_iter": np.nan if it is None else float(it),
                        "n_instances": ROWS[d]})
    return pd.DataFrame(out)


def fake_summarize(recs: pd.DataFrame) -> pd.DataFrame:
    """What summarize computes, for the columns the script reads (bias and variance = the loss)."""
    g = recs.groupby(["dataset", "model"], sort=False)
    s = g.agg(n_ok=("round", "size"), zero_one=("zero_one", "mean"), rmse=("rmse", "mean"),
              train_time=("train_time", "mean"), test_time=("test_time", "mean"),
              n_instances=("n_instances", "first")).reset_index()
    return s.assign(n_failed=0, bias=s["zero_one"], variance=s["zero_one"], n_parameters=10.0)


@pytest.fixture
def summary(monkeypatch):
    monkeypatch.setattr(rt, "summarize", fake_summarize)
    return rt.complete_summary(records(), min_folds=10, big_threshold=100_000)


def test_completeness_and_coverage(summary):
    s = summary.set_index(["dataset", "model"])
    assert not s.loc[("d3", "LR2"), "complete"] and s.loc[("d3", "DBL2"), "complete"]
    assert s.loc[("d4", "DBL2"), "big"] and not s.loc[("d1", "DBL2"), "big"]
    assert s.loc[("d1", "LR2"), "n_iter"] == 80 and np.isnan(s.loc[("d1", "A2JE"), "n_iter"])
    cov = rt.coverage(summary, ["DBL2", "LR2"]).set_index("model")
    assert cov.loc["DBL2", "little_complete"] == 3 and cov.loc["DBL2", "big_complete"] == 1
    assert cov.loc["LR2", "little_complete"] == 2 and cov.loc["LR2", "little_lacking"] == "d3"


def test_wdl_counts_and_the_papers_cell(summary):
    w = rt.wdl_rows(summary, [("table2", [("DBL2", "A2JE")]), ("dbl_vs_lr", [("DBL2", "LR2")])])
    cell = w[(w.table == "table2") & (w.subset == "Little") & (w.metric == "zero_one")].iloc[0]
    # d1 win (0.10 < 0.20), d2 loss, d3 draw
    assert (cell.wins, cell.draws, cell.losses, cell.n) == (1, 1, 1, 3)
    assert (cell.paper_wins, cell.paper_draws, cell.paper_losses, cell.paper_p) == (42, 5, 28, "0.119")
    big = w[(w.table == "table2") & (w.subset == "Big") & (w.metric == "zero_one")].iloc[0]
    assert (big.wins, big.losses) == (1, 0) and big.paper_wins == 7
    lr = w[(w.table == "dbl_vs_lr") & (w.subset == "Little") & (w.metric == "zero_one")].iloc[0]
    # d3 left out (LR2 has 9 folds): d1 draw, d2 win
    assert (lr.wins, lr.draws, lr.losses) == (1, 1, 0) and np.isnan(lr.paper_wins)
    assert (w[w.table == "dbl_vs_lr"]["paper_p"] == "").all()


def test_each_tables_latex_holds_its_wdl_cells(summary):
    """A table's .tex has a row per metric and subset with the pair's W-D-L and p (bold where significant), the
    datasets counted in its comment; while no Big dataset is complete it has the Little block only."""
    w = rt.wdl_rows(summary, [("table2", [("DBL2", "A2JE")]), ("dbl_vs_lr", [("DBL2", "LR2")])])
    tex = rt.latex(w)
    assert sorted(tex) == ["dbl_vs_lr.tex", "paper_vs_ours.tex", "table2.tex"]
    side = tex["paper_vs_ours.tex"]                                # only table2 has the paper's cells
    assert "\n2 & DBL2 vs A2JE & 0-1 Loss & 42/5/28 & 0.119 & 1/1/1 & 1 \\\\\n" in side
    assert "\n2 & DBL2 vs A2JE & Bias & 66/4/5 & \\textbf{$<$0.001} & 1/1/1 & 1 \\\\\n" in side
    assert side.count("\\emph{") == 2 and "Big datasets" in side and "DBL2 vs LR2" not in side
    t2 = tex["table2.tex"]
    assert "Datasets counted: DBL2 vs A2JE: 3 Little, 1 Big, 4 All." in " ".join(
        line[2:] for line in t2.splitlines() if line.startswith("% "))
    blocks = t2.split("\\emph{")[1:]
    assert [b.split("}")[0] for b in blocks] == ["Little datasets", "Big datasets", "All datasets"]
    little = blocks[0]
    assert "\n0-1 Loss & 1/1/1 & 1 \\\\\n" in little            # d1 win, d2 loss, d3 draw: p = 1
    assert "\nTraining time & " in little and "$p$" in t2
    no_big = rt.wdl_rows(summary[summary.dataset != "d4"], [("dbl_vs_lr", [("DBL2", "LR2")])])
    assert set(no_big.subset) == {"Little", "All"}
    little_only = rt.latex(no_big)["dbl_vs_lr.tex"]
    assert "Big datasets" not in little_only and "All datasets" not in little_only
    assert "0-1 Loss & 1/1/0 & 1 \\\\" in little_only                # d3 left out: LR2 has 9 folds
    # a table none of whose pairs has a Big dataset keeps no All block though another table's pair has one
    mixed = rt.latex(rt.wdl_rows(summary, [("table2", [("DBL2", "A2JE")]), ("dbl_vs_lr", [("DBL2", "LR2")])])
                     .pipe(lambda w: w[~((w.table == "table2") & (w.subset == "Big"))]))
    assert "All datasets" not in mixed["table2.tex"] and "All datasets" in mixed["dbl_vs_lr.tex"]


def test_convergences_latex_is_its_summary(summary):
    """convergence.tex has a row per pair and subset with convergence_summary's counts, p and geometric means (All
    left out while no Big dataset is complete)."""
    _, summ = rt.convergence(records(), summary, {"Little": ["d1", "d2", "d3"], "Big": ["d4"],
                                                  "All": ["d1", "d2", "d3", "d4"]})
    tex = rt.convergence_latex(summ)
    little = summ.set_index("subset").loc["Little"]
    assert (f"\nDBL2 vs LR2 & Little & 2 & 2/0/0 & 0.5 & {np.sqrt(50 / 80 * 20 / 30):.3f} & "
            f"{little.time_less}/{little.time_more} & ") in tex
    assert "\nDBL2 vs LR2 & Big & 1 & 0/0/1 & 1 & 5.000 & 0/1 & 1 & 5.000 \\\\\n" in tex  # d4: 500 against 100
    assert "& All &" in tex
    assert "& All &" not in rt.convergence_latex(summ[summ.subset != "Big"])


def test_convergence_counts_only_complete_pairs(summary):
    subsets = {"Little": ["d1", "d2", "d3"], "Big": ["d4"]}
    per, summ = rt.convergence(records(), summary, subsets)
    pair = per[per.w_model == "DBL2"].set_index("dataset")
    assert sorted(pair.index) == ["d1", "d2", "d4"]             # d3: LR2 incomplete
    assert pair.loc["d1", "n_iter_w"] == 50 and pair.loc["d1", "n_iter_other"] == 80
    s = summ.set_index("subset")
    assert (s.loc["Little", "iter_fewer"], s.loc["Little", "iter_more"]) == (2, 0)
    assert s.loc["Little", "iter_ratio_geomean"] == pytest.approx(np.sqrt(50 / 80 * 20 / 30))
    assert (s.loc["Big", "iter_fewer"], s.loc["Big", "iter_more"]) == (0, 1)
    assert s.loc["Little", "iter_p"] == pytest.approx(0.5)       # 2 wins, 0 losses: two-tailed 2 * 0.5^2


def test_tables5_6_paper_beside_ours(summary):
    t = rt.tables5_6(summary)
    row = t[(t.dataset == "census-income") & (t.metric == "zero_one") & (t.model == "DBL2")].iloc[0]
    assert row.paper == 0.0686 and row.folds == 0 and np.isnan(row.ours)
    assert len(t) == 4 * 2 * 9


def _sup_rows(cells: dict) -> pd.DataFrame:
    """An earlier summary.csv of the script: (dataset, model) -> (0-1 loss, folds, mean iterations)."""
    rows = [{"dataset": d, "model": m, "n_ok": folds, "n_failed": 0, "complete": folds >= 10,
             "n_instances": ROWS.get(d, 400), "big": False, "zero_one": loss, "rmse": loss, "bias": loss,
             "variance": loss, "train_time": 2.0, "test_time": 0.01, "n_iter": it, "n_parameters": 10.0}
            for (d, m), (loss, folds, it) in cells.items()]
    return pd.DataFrame(rows)


def test_supplement_fills_the_pairs_the_store_lacks(summary, tmp_path):
    path = tmp_path / "summary.csv"
    _sup_rows({("d3", "LR2"): (0.15, 10, 40),          # the store has 9 folds: the supplement's 10 win
               ("d1", "DBL2"): (0.99, 10, 1),          # as many folds as the store's: the store's stays
               ("d5", "DBL2"): (0.30, 10, 60), ("d5", "LR2"): (0.30, 10, 30),
               ("d5", "XX"): (0.5, 10, 5)}).to_csv(path, index=False)   # not a model of the experiment
    s = rt.supplement(summary, path, ["DBL2", "LR2", "A2JE"], min_folds=10, big_threshold=100_000)
    s = s.set_index(["dataset", "model"])
    assert s.loc[("d3", "LR2"), "zero_one"] == 0.15 and s.loc[("d3", "LR2"), "complete"]
    assert s.loc[("d3", "LR2"), rt.SOURCE] == str(path) and s.loc[("d1", "DBL2"), rt.SOURCE] == rt.RECORDS
    assert s.loc[("d1", "DBL2"), "zero_one"] == 0.10 and ("d5", "XX") not in s.index
    assert len(s) == len(CELLS) + 2 and not s.index.duplicated().any()
    per, summ = rt.convergence(records(), s.reset_index(), {"Little": ["d1", "d2", "d3", "d5"], "Big": ["d4"]})
    pair = per.set_index("dataset")
    assert sorted(pair.index) == ["d1", "d2", "d3", "d4", "d5"]
    # d3: DBL2's means from the store's summary, LR2's from the supplement; d5 all from the supplement
    assert (pair.loc["d3", "n_iter_w"], pair.loc["d3", "n_iter_other"]) == (90, 40)
    assert (pair.loc["d5", "n_iter_w"], pair.loc["d5", "n_iter_other"], pair.loc["d5", "n_folds"]) == (60, 30, 10)
    assert pair.loc["d1", "n_iter_other"] == 80                 # from the records
    little = summ.set_index("subset").loc["Little"]
    assert (little.iter_fewer, little.iter_more) == (2, 2)      # d1, d2 fewer; d3, d5 more


def test_supplements_taken_in_turn_keep_their_sources(summary, tmp_path):
    """A second supplement neither renames the pairs the first gave nor takes a pair it holds with as many folds."""
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    _sup_rows({("d3", "LR2"): (0.15, 10, 40), ("d5", "DBL2"): (0.30, 10, 60)}).to_csv(first, index=False)
    _sup_rows({("d5", "DBL2"): (0.99, 10, 1), ("d6", "LR2"): (0.20, 10, 50)}).to_csv(second, index=False)
    s = rt.supplement(summary, first, ["DBL2", "LR2"], min_folds=10, big_threshold=100_000)
    s = rt.supplement(s, second, ["DBL2", "LR2"], min_folds=10, big_threshold=100_000).set_index(["dataset", "model"])
    assert s.loc[("d3", "LR2"), rt.SOURCE] == str(first) and s.loc[("d6", "LR2"), rt.SOURCE] == str(second)
    assert s.loc[("d5", "DBL2"), rt.SOURCE] == str(first) and s.loc[("d5", "DBL2"), "zero_one"] == 0.30
    assert s.loc[("d1", "DBL2"), rt.SOURCE] == rt.RECORDS and not s.index.duplicated().any()


def test_supplement_of_other_data_is_refused(summary, tmp_path):
    path = tmp_path / "summary.csv"
    _sup_rows({("d2", "LR2"): (0.1, 10, 5)}).assign(n_instances=201).to_csv(path, index=False)
    with pytest.raises(ValueError, match="d2 has instances 200 in the records but 201"):
        rt.supplement(summary, path, ["LR2"], min_folds=10, big_threshold=100_000)
    path.write_text("dataset,model\nd1,LR2\n")
    with pytest.raises(ValueError, match="not a summary.csv of this script"):
        rt.supplement(summary, path, ["LR2"], min_folds=10, big_threshold=100_000)


def test_the_lost_stores_summary_alone_gives_back_its_csvs(tmp_path):
    """The store read on November 26, 2026 no longer exists; its committed summary gives back every CSV it wrote."""
    old = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "store_nov26"
    assert rt.main(["--supplement", str(old / "summary.csv"), "--out", str(tmp_path)]) == 0
    for name in ("coverage", "wdl", "tables5_6", "convergence", "convergence_summary"):
        assert_same_output(tmp_path / f"{name}.csv", old / f"{name}.csv")
    s = pd.read_csv(tmp_path / "summary.csv")
    assert s[rt.CPU].isna().all()                               # that store's records had no CPU seconds
    # written before the script named each model's parameters (rt.named_params, from the experiment)
    pd.testing.assert_frame_equal(s.drop(columns=[rt.CPU, rt.SOURCE, rt.PARAMS]), pd.read_csv(old / "summary.csv"))


def test_the_generic_report_takes_the_reruns_summary():
    """summary.csv names each model's parameters as the experiment's plan gives them, so ``python -m bncbench report
    store2 --supplement reg_rows/summary.csv`` takes all 13 models (none left out as unknown), with the same means
    for every pair the script counts; parameters other than the experiment's are refused."""
    from bncbench.report.families import model_params
    from bncbench.report.summary import summarize
    from bncbench.report.supplement import read_supplement, supplement_summary, with_params

    rows = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "reg_rows" / "summary.csv"
    records = rt.load_results(STORE2)
    ours = read_supplement(rows)
    assert ours[rt.PARAMS].notna().all() and ours["model"].nunique() == 13
    merged, unknown = supplement_summary(with_params(summarize(records), model_params(records)), ours, "x")
    assert unknown == []
    got = merged.set_index(["dataset", "model"])
    for r in ours[ours["complete"]].itertuples():
        assert got.loc[(r.dataset, r.model), "zero_one"] == pytest.approx(r.zero_one, rel=1e-12), (r.dataset, r.model)
    params = rt.experiment_params(rt.EXPERIMENT)
    assert params["DBL3"]["reg"] == "rows" and params["LR3"]["init"] == "zeros"
    other = {**params, "DBL3": {**params["DBL3"], "lam": 0.1}}
    with pytest.raises(ValueError, match="the store's records of DBL3 name other parameters"):
        rt.named_params(ours.drop(columns=[rt.PARAMS]), records, other)
    with pytest.raises(ValueError, match="the supplement's A1JE name other parameters"):
        rt.named_params(ours, records.iloc[:0], {**params, "A1JE": {**params["A1JE"], "n": 2}})


def test_the_committed_store_resumes(tmp_path):
    """A run of zaidi_dbl into a copy of the committed store2 redoes none of its tasks: their keys are the
    experiment's."""
    data_dir_or_skip()
    recs = sorted((STORE2 / "records").glob("*/*/*.json"))
    assert recs, "store2 holds no record"
    ok = [json.loads(r.read_text()) for r in recs]
    assert all(r["status"] == "ok" and r["model"] in ("DBL3", "LR3") for r in ok)
    assert all(r.with_suffix(".npz").is_file() for r in recs)
    shutil.copytree(STORE2, tmp_path / "zaidi_dbl")
    datasets = sorted({r["dataset"] for r in ok})
    res = run_cli(["run", "+experiment=zaidi_dbl", f"dataset.names=[{','.join(datasets)}]", "only=[DBL3,LR3]",
                   f"results_dir={tmp_path}", "dry_run=true", "progress=false"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    total = 20 * len(datasets)
    assert res.stdout.splitlines()[-1] == (f"tasks: {total} total, {len(ok)} already done, {total - len(ok)} pending "
                                            "(dry run: nothing ran)")


def test_the_committed_csvs_are_the_scripts_output_on_the_committed_stores(tmp_path, monkeypatch):
    """reg_rows/ is what the page's one command writes from store2's records, the lost store's summary and the Big
    run's (byte for byte but the last bits of floats, :func:`conftest.assert_same_output`): a record added to store2
    without the CSVs regenerated (or a CSV edited by hand) fails here."""
    rerun = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun"
    monkeypatch.chdir(REPO)  # the command as the page gives it, from the root: summary.csv names its sources so
    sups = [arg for s in ("store_nov26", "store_big_nov29")
            for arg in ("--supplement", str((rerun / s / "summary.csv").relative_to(REPO)))]
    assert rt.main([str(STORE2.relative_to(REPO)), *sups, "--out", str(tmp_path)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(p.name for p in (rerun / "reg_rows").iterdir())
    for name in names:
        assert_same_output(tmp_path / name, rerun / "reg_rows" / name)
    folds = pd.read_csv(tmp_path / "folds.csv")
    assert list(folds.columns) == rt.FOLD_COLUMNS and len(folds) == len(list((STORE2 / "records").glob("*/*/*.json")))


def test_cross_cpu_csv_is_the_scripts_output(tmp_path, monkeypatch, capsys):
    """cross_cpu.csv (zaidi_dbl.md, provenance) is zaidi_dbl_cross_cpu.py's output on the committed records: letter's
    DBL3 r4f0 on the Intel machine against the AMD one (the same 0-1 loss, a few iterations apart), and on the AMD
    machine at two commits (the same bits)."""
    import zaidi_dbl_cross_cpu as cc

    rerun = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun"
    monkeypatch.chdir(REPO)
    cc.main([str(rerun / s) for s in ("store2", "cross_cpu", "cross_cpu", "cross_cpu_a65cacc")])
    (tmp_path / "cross_cpu.csv").write_text(capsys.readouterr().out)
    assert_same_output(tmp_path / "cross_cpu.csv", rerun / "cross_cpu.csv")
    intel, amd = pd.read_csv(rerun / "cross_cpu.csv").to_dict("records")
    assert intel["cpu_a"].startswith("Intel") and intel["cpu_b"].startswith("AMD") and intel["n_iter_a"] != intel[
        "n_iter_b"] and intel["zero_one_a"] == intel["zero_one_b"]
    assert amd["commit_a"] != amd["commit_b"] and amd["proba_max_abs_diff"] == 0 and amd["n_iter_a"] == amd["n_iter_b"]
