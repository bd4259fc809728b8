"""The deep-broad paper's convergence figures (Figs. 11-17) from a store: ``report.convergence.pairs``.

DBLⁿ and LRⁿ start from different points (AnJE's weights, 0), so the model families do not pair
them; ``report.convergence.pairs: ["DBL1:LR1", ...]`` does. Checked on hand-made records (means
over the folds both models ran, counts and geometric means by hand) and end to end on a tiny store
run here (the report's tables against the records themselves).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from bncbench.errors import BNCBenchError
from bncbench.report import convergence as C
from bncbench.report.config import build_config


def _rec(dataset, model, r, f, n_iter, t, status="ok"):
    return {"dataset": dataset, "model": model, "round": r, "fold": f, "status": status, "n_iter": n_iter,
            "train_time": t}


def test_pair_iterations_by_hand():
    recs = pd.DataFrame([
        _rec("a", "D", 0, 0, 10, 1.0), _rec("a", "D", 0, 1, 20, 3.0), _rec("a", "D", 1, 0, 99, 9.0),
        _rec("a", "L", 0, 0, 40, 2.0), _rec("a", "L", 0, 1, 60, 6.0),   # L lacks (1, 0): D's 99 left out
        _rec("b", "D", 0, 0, 50, 5.0), _rec("b", "L", 0, 0, 25, 1.0),
        _rec("b", "L", 0, 1, 7, 1.0, status="failed"), _rec("b", "D", 0, 1, 7, 1.0),  # a failed fold: not common
        _rec("c", "D", 0, 0, None, 1.0), _rec("c", "L", 0, 0, 5, 1.0),   # no iteration count: no row
    ])
    t = C.pair_iterations(recs, [("D", "L")]).set_index("dataset")
    assert list(t.index) == ["a", "b"]
    assert t.loc["a", ["n_iter_w", "n_iter_other", "train_time_w", "train_time_other", "n_folds"]].tolist() == \
        [15.0, 50.0, 2.0, 4.0, 2]
    assert t.loc["b", ["n_iter_w", "n_iter_other", "n_folds"]].tolist() == [50.0, 25.0, 1]
    s = C.pair_iterations_summary(t.reset_index(), {"All": ["a", "b"], "Big": ["b"], "None": ["z"]})
    assert list(s["subset"]) == ["All", "Big"]
    row = s.iloc[0]
    assert (row.iter_fewer, row.iter_equal, row.iter_more, row.time_less, row.time_more) == (1, 0, 1, 1, 1)
    assert row.iter_ratio_geomean == pytest.approx(math.sqrt(15 / 50 * 50 / 25))
    assert row.time_ratio_geomean == pytest.approx(math.sqrt(2 / 4 * 5 / 1))
    assert C.pair_iterations(recs.drop(columns="n_iter"), [("D", "L")]).empty
    assert not set(C.CPU_COLUMNS) & set(t) and not set(C.CPU_SUMMARY) & set(s)  # records without CPU seconds


def test_pair_cpu_seconds_by_hand():
    """With ``train_cpu``: its means over the common folds, unknown for a dataset where one fold lacks it, and the
    summary's counts and ratio over the datasets where both models have it."""
    recs = pd.DataFrame([
        {**_rec("a", "D", 0, 0, 10, 9.0), "train_cpu": 1.0}, {**_rec("a", "D", 0, 1, 10, 9.0), "train_cpu": 3.0},
        {**_rec("a", "L", 0, 0, 10, 1.0), "train_cpu": 4.0}, {**_rec("a", "L", 0, 1, 10, 1.0), "train_cpu": 4.0},
        {**_rec("b", "D", 0, 0, 10, 1.0), "train_cpu": 1.0}, {**_rec("b", "D", 0, 1, 10, 1.0), "train_cpu": None},
        {**_rec("b", "L", 0, 0, 10, 2.0), "train_cpu": 2.0}, {**_rec("b", "L", 0, 1, 10, 2.0), "train_cpu": 2.0},
        {**_rec("c", "D", 0, 0, 10, 1.0), "train_cpu": 6.0}, {**_rec("c", "L", 0, 0, 10, 2.0), "train_cpu": 3.0},
    ])
    t = C.pair_iterations(recs, [("D", "L")]).set_index("dataset")
    assert t.loc["a", C.CPU_COLUMNS].tolist() == [2.0, 4.0] and t.loc["b", "train_cpu_other"] == 2.0
    assert np.isnan(t.loc["b", "train_cpu_w"]) and t.loc["c", C.CPU_COLUMNS].tolist() == [6.0, 3.0]
    (row,) = C.pair_iterations_summary(t.reset_index(), {"All": ["a", "b", "c"]}).itertuples()
    assert (row.time_less, row.time_more) == (2, 1)  # wall seconds: b and c less, a more
    assert (row.cpu_datasets, row.cpu_less, row.cpu_more) == (2, 1, 1)  # CPU seconds: a less, c more; b unknown
    assert row.cpu_ratio_geomean == pytest.approx(math.sqrt(2 / 4 * 6 / 3))


def test_convergence_pairs_config():
    models = ["DBL1", "LR1", "DBL2", "LR2"]
    cfg = build_config({"convergence": {"pairs": ["DBL1:LR1", "DBL2:LR2"]}}, "x", models)
    assert cfg.convergence_pairs == [("DBL1", "LR1"), ("DBL2", "LR2")]
    assert [(f.name, f.w, f.others) for f in cfg.convergence_families] == [("dbl1_vs_lr1", "DBL1", ["LR1"]),
                                                                          ("dbl2_vs_lr2", "DBL2", ["LR2"])]
    with pytest.raises(BNCBenchError, match="convergence pair 'DBL3:LR3'"):
        build_config({"convergence": {"pairs": ["DBL3:LR3"]}}, "x", models)
    with pytest.raises(BNCBenchError, match="unknown key.*report.convergence"):
        build_config({"convergence": {"pair": ["DBL1:LR1"]}}, "x", models)
    with pytest.raises(BNCBenchError, match="twice"):
        build_config({"convergence": {"pairs": ["DBL1:LR1", "DBL1:LR1"]}}, "x", models)


# ------------------------------------------------------------------ end to end on a tiny store
DBL = {"structure": "anje", "param": "weighted", "init": "generative", "optimizer": "lbfgs", "reg": "rows", "lam": 0.01}
LR = {**DBL, "param": "discriminative", "init": "zeros"}


@pytest.fixture(scope="module")
def dbl_store(tmp_path_factory):
    import bncbench.data.specs as dataset_specs
    import bncbench.harness.model_specs as models
    import bncbench.harness.runner as runner

    root = tmp_path_factory.mktemp("dbl") / "store"
    dsets = [{"name": f"synth-{i}", "source": "synthetic", "n_attributes": 5, "n_samples": n, "seed": i}
             for i, n in enumerate([300, 500, 800])]
    specs = [models.ModelSpec(f"{kind}{n}", {**base, "n": n}) for n in (1, 2) for kind, base in (("DBL", DBL), ("LR", LR))]
    runner.run_experiment(datasets=dataset_specs.resolve(dsets), models=specs, results_root=root,
                          protocol=runner.Protocol(0, 1, 2), progress=False)
    cfg_dir = root / "hydra" / "run" / ".hydra"
    cfg_dir.mkdir(parents=True, exist_ok=True)
    (cfg_dir / "config.yaml").write_text(
        "name: dbl\nseed: 0\nreport:\n  reference: DBL2\n  big_threshold: 600\n  subsets: [Little, Big]\n"
        "  convergence:\n    pairs: ['DBL1:LR1', 'DBL2:LR2']\n    datasets: [synth-2, synth-1]\n")
    return root


def test_report_draws_the_dbl_figures(dbl_store, tmp_path):
    from bncbench.report.cli import main as report_main
    from bncbench.harness.store import load_results

    out = tmp_path / "rep"
    assert report_main([str(dbl_store), "--out", str(out), "--jobs", "1"]) == 0
    for stem in ("convergence_scatter_iterations", "convergence_scatter_time", "convergence_pairs",
                 "convergence_dbl1_vs_lr1", "convergence_dbl2_vs_lr2", "convergence_hist_dbl2_vs_lr2"):
        for ext, magic in (("pdf", b"%PDF"), ("png", b"\x89PNG")):
            p = out / "figures" / f"{stem}.{ext}"
            assert p.is_file() and p.read_bytes()[:4] == magic, p
    index = (out / "index.md").read_text()
    assert "figures/convergence_scatter_iterations.png" in index and "tables/convergence_iterations.csv" in index

    # the per-dataset table is the records' own means
    recs = load_results(dbl_store)
    table = pd.read_csv(out / "tables" / "convergence_iterations.csv")
    assert len(table) == 6 and set(zip(table.w_model, table.other_model)) == {("DBL1", "LR1"), ("DBL2", "LR2")}
    for row in table.itertuples(index=False):
        for model, col, tcol in ((row.w_model, "n_iter_w", "train_time_w"),
                                 (row.other_model, "n_iter_other", "train_time_other")):
            sel = recs[(recs.dataset == row.dataset) & (recs.model == model)]
            assert len(sel) == row.n_folds == 2
            assert getattr(row, col) == pytest.approx(sel.n_iter.mean(), rel=1e-6)
            assert getattr(row, tcol) == pytest.approx(sel.train_time.mean(), rel=1e-5)
            assert (sel.n_iter > 0).all()
    # the counts of the summary table follow from it (Little: synth-0, synth-1; Big: synth-2, > 600 rows)
    md = (out / "tables" / "convergence_iterations.md").read_text()
    for (w, o), g in table.groupby(["w_model", "other_model"]):
        for subset, dsets in (("Little", ["synth-0", "synth-1"]), ("Big", ["synth-2"])):
            s = g[g.dataset.isin(dsets)]
            fewer, more = int((s.n_iter_w < s.n_iter_other).sum()), int((s.n_iter_w > s.n_iter_other).sum())
            ratio = float(np.exp(np.mean(np.log(s.n_iter_w / s.n_iter_other))))
            line = next(ln for ln in md.splitlines() if f"| {w} " in ln.replace("\\", "") and f"| {subset} " in ln)
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert cells[3:6] == [str(len(s)), str(fewer), str(len(s) - fewer - more)]
            assert float(cells[7]) == pytest.approx(ratio, rel=1e-3)
    gaps = pd.read_csv(out / "tables" / "convergence_gaps.csv")
    assert set(zip(gaps.w_model, gaps.other_model)) == {("DBL1", "LR1"), ("DBL2", "LR2")}
