"""Figures from a fixture with optimized families, and the report CLI end to end on a tiny real run."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bncbench.errors import BNCBenchError
from bncbench.report.build import report_from_frames
from bncbench.report.cli import main as report_main
from bncbench.report.config import build_config, default_pairs, parse_pair
from bncbench.report.families import families


def params_of(label: str) -> dict:
    """The stored parameters of a fixture model: ``NB``, ``TAN``, ``NB^w``, ``NB^d (I)``, ..."""
    base, _, rest = label.partition("^")
    p = {"structure": base.lower(), "param": "generative", "estimator": "map", "m": 1.0}
    if rest:
        p.update(param={"w": "weighted", "d": "discriminative", "e": "extended"}[rest[0]], reg="none", lam=0.0,
                 init="generative" if "(I)" in rest else "zeros", optimizer="lbfgs")
    return p


def with_params(recs: pd.DataFrame) -> pd.DataFrame:
    """``param.*`` columns, as :func:`bncbench.harness.store.load_results` gives them."""
    cols = pd.DataFrame([params_of(m) for m in recs["model"]], index=recs.index)
    return recs.join(cols.add_prefix("param."))


def family_frames():
    """4 datasets (2 Big) x NB, NB^w, NB^d, NB^e with traces where w converges fastest."""
    rng = np.random.default_rng(1)
    rows = []
    for i, n in enumerate([300, 3000, 20000, 60000]):
        base = 0.1 + 0.05 * i
        for m, rate, t in (("NB", None, 0.01), ("NB^w", 0.5, 0.5), ("NB^d", 0.8, 1.0), ("NB^e", 0.9, 6.0)):
            for r in range(2):
                for f in range(2):
                    rec = {"dataset": f"ds{i}", "model": m, "round": r, "fold": f, "status": "ok",
                           "zero_one": base * (1 if rate is None else 0.8) * rng.uniform(0.95, 1.05),
                           "rmse": (base + 0.2) * rng.uniform(0.95, 1.05), "train_time": t * rng.uniform(0.9, 1.1),
                           "test_time": 0.001, "n_instances": n, "big": n > 10000}
                    if rate is not None:
                        rec["trace"] = [{"iter": k, "nll": 100 * rate**k + 5, "n_fev": k + 1, "time": 0.01 * k}
                                        for k in range(int(rng.integers(10, 40)))]
                    rows.append(rec)
    recs = with_params(pd.DataFrame(rows))
    summ = (recs.groupby(["dataset", "model"], sort=False)
            .agg(zero_one=("zero_one", "mean"), rmse=("rmse", "mean"), train_time=("train_time", "mean"),
                 test_time=("test_time", "mean"), n_instances=("n_instances", "first"), big=("big", "first"),
                 n_ok=("status", "size")).reset_index())
    summ["n_failed"] = 0
    summ["bias"] = summ["zero_one"] * 0.6
    summ["variance"] = summ["zero_one"] * 0.4
    return recs, summ


def test_every_figure_written_and_nonempty(tmp_path):
    recs, summ = family_frames()
    rep = report_from_frames(recs, summ, tmp_path / "rep", name="fam", overrides={"n_jobs": 1}, log=lambda m: None)
    figs = {p.relative_to(tmp_path / "rep").as_posix() for p in rep.figures()}
    stems = {f.rsplit(".", 1)[0] for f in figs}
    expected = {"figures/geomean_nb", "figures/geomean_time_nb", "figures/geomean_time_nb_vs_nb_w",
                "figures/scatter_nb", "figures/convergence_nb", "figures/convergence_hist_nb",
                "figures/cd_zero_one", "figures/cd_rmse"}
    assert expected <= stems
    for stem in stems:
        for ext, magic in (("pdf", b"%PDF"), ("png", b"\x89PNG")):
            p = tmp_path / "rep" / f"{stem}.{ext}"
            assert p.is_file() and p.stat().st_size > 1000, p
            assert p.read_bytes()[:4] == magic
    # every figure and table is linked from both index pages, and every link resolves
    _check_index(tmp_path / "rep", rep.files)
    gaps = pd.read_csv(tmp_path / "rep" / "tables" / "convergence_gaps.csv")
    assert set(gaps["other_model"]) == {"NB^d", "NB^e"}
    assert (gaps.loc[gaps.other_model == "NB^d", "gap"] > 0).all()  # w ahead everywhere
    wdl = pd.read_csv(tmp_path / "rep" / "tables" / "wdl.csv")
    assert set(zip(wdl.model_a, wdl.model_b)) == {("NB^w", "NB")}  # the Table 4 default pair
    assert set(wdl.subset) == {"All", "Big"}
    assert not list((tmp_path / "rep").rglob(".tmp-*"))


def test_a_model_only_a_supplement_has_keeps_its_role_by_its_parameters(tmp_path):
    """The default pairs come from the models' parameters; a supplied model's come from summary.csv."""
    from bncbench.report.supplement import SOURCE
    from bncbench.report.supplement import with_params as named

    recs, summ = family_frames()
    summ = named(summ, {m: params_of(m) for m in summ["model"].unique()})
    summ[SOURCE] = np.where(summ["model"] == "NB^w", "old.csv", "records")
    report_from_frames(recs[recs["model"] != "NB^w"], summ, tmp_path / "rep", name="fam",
                       overrides={"n_jobs": 1, "figures": False}, log=lambda m: None)
    wdl = pd.read_csv(tmp_path / "rep" / "tables" / "wdl.csv")
    assert set(zip(wdl.model_a, wdl.model_b)) == {("NB^w", "NB")}   # as with NB^w's records
    assert "4 models (3 with records)" in (tmp_path / "rep" / "index.md").read_text()


def _check_index(out: Path, files):
    md = (out / "index.md").read_text()
    page = (out / "index.html").read_text()
    md_links = set(re.findall(r"\]\(([^)#]+)\)", md))
    html_links = set(re.findall(r'(?:href|src)="([^"#]+)"', page))
    for link in md_links | html_links:
        assert (out / link).is_file(), link
    for f in files:
        rel = f.relative_to(out).as_posix()
        if rel not in ("index.md", "index.html"):
            assert rel in md_links and rel in html_links, rel


def test_config_defaults_and_errors():
    models = ["NB", "TAN", "NB^w", "NB^d", "NB^w (I)", "TAN^w"]
    params = {m: params_of(m) for m in models}
    fams = families(models, params)
    assert default_pairs(models, "NB", fams) == [("NB^w", "NB"), ("NB^w (I)", "NB"), ("TAN^w", "TAN")]
    assert [f.name for f in fams] == ["nb", "nb_i", "tan"]
    assert default_pairs(["NB", "TAN", "KDB-1"], "NB", []) == [("TAN", "NB"), ("KDB-1", "NB")]
    # families come from the parameters, not the labels: relabelled models keep their roles
    renamed = {"plain": params["NB"], "weighted one": params["NB^w"], "other": params["TAN"]}
    assert default_pairs(list(renamed), "plain", families(list(renamed), renamed)) == [("weighted one", "plain")]
    assert parse_pair(" NB^w : NB ") == ("NB^w", "NB")
    for bad in ("NB", "a:b:c", ":NB"):
        with pytest.raises(BNCBenchError):
            parse_pair(bad)
    cfg = build_config({"pairs": ["NB^d:NB^w"], "reference": "TAN"}, "x", models)
    assert cfg.tables[0].pairs == [("NB^d", "NB^w")] and cfg.reference == "TAN"
    cfg = build_config({"pairs": ["NB^d:NB^w"]}, "x", models, params=params, overrides={"pairs": ["TAN^w:TAN"]})
    assert cfg.tables[0].pairs == [("TAN^w", "TAN")]
    assert [f.w for f in cfg.convergence_families] == ["NB^w"]
    with pytest.raises(BNCBenchError, match="not in the results"):
        build_config({}, "x", models, overrides={"pairs": ["KDB-1^w:NB"]})
    with pytest.raises(BNCBenchError, match="unknown key"):
        build_config({"pair": ["NB^w:NB"]}, "x", models)
    with pytest.raises(BNCBenchError, match="unknown metric"):
        build_config({"metrics": ["accuracy"]}, "x", models)


# ------------------------------------------------------------------ end to end
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    import bncbench.data.specs as dataset_specs
    import bncbench.harness.model_specs as models
    import bncbench.harness.runner as runner

    root = tmp_path_factory.mktemp("run") / "x"
    runner.run_experiment(datasets=dataset_specs.resolve(["synth-nb", "synth-tree"]),
                          models=[models.ModelSpec("NB", {"structure": "nb"}), models.ModelSpec("TAN", {"structure": "tan"})],
                          results_root=root, protocol=runner.Protocol(0, 2, 2), progress=False)
    return root


def test_report_cli_end_to_end(tiny_run, tmp_path):
    cfg_dir = tiny_run / "hydra" / "run" / ".hydra"
    cfg_dir.mkdir(parents=True, exist_ok=True)
    (cfg_dir / "config.yaml").write_text(
        "name: tiny\nseed: 0\nreport:\n  reference: NB\n  tables:\n    - name: table4\n      pairs: ['TAN:NB']\n"
        "      metrics: [zero_one, rmse, bias, variance, train_time]\n")
    out = tmp_path / "rep"
    assert report_main([str(tiny_run), "--out", str(out), "--jobs", "1"]) == 0
    for name in ("index.md", "index.html", "summary.csv", "tables/table4.tex", "tables/table4.md", "tables/table4.csv",
                 "tables/friedman.tex", "tables/per_dataset_zero_one_all.tex", "figures/scatter_all.pdf",
                 "figures/geomean_all.png", "figures/cd_zero_one.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    wdl = pd.read_csv(out / "tables" / "table4.csv")
    assert list(wdl.metric) == ["zero_one", "rmse", "bias", "variance", "train_time"]
    assert (wdl.n == 2).all() and set(wdl.subset) == {"All"}  # two small datasets: no Big block
    assert (wdl.wins + wdl.draws + wdl.losses == 2).all()
    summary = pd.read_csv(out / "summary.csv")
    for _, r in wdl.iterrows():  # counts agree with the per-dataset means
        a = summary[summary.model == "TAN"].set_index("dataset")[r.metric]
        b = summary[summary.model == "NB"].set_index("dataset")[r.metric]
        assert r.wins == int((a < b).sum()) and r.losses == int((a > b).sum())
    index = (out / "index.md").read_text()
    assert "Report: tiny" in index
    line = next(l for l in index.splitlines() if l.startswith("Computed with: "))
    assert f"numpy {np.__version__}" in line and "not recorded" not in line
    # the store and its config by the store's name, not by this machine's path
    assert "Source: `x`, config `x/hydra/run/.hydra/config.yaml`." in index
    assert str(tmp_path.parent) not in index and str(tiny_run) not in (out / "index.html").read_text()

    # command-line pairs override the config; tables only
    out2 = tmp_path / "rep2"
    assert report_main([str(tiny_run), "--out", str(out2), "--pairs", "NB:TAN", "--metrics", "zero_one", "--no-figures"]) == 0
    wdl2 = pd.read_csv(out2 / "tables" / "wdl.csv")
    assert list(zip(wdl2.model_a, wdl2.model_b)) == [("NB", "TAN")]
    assert not (out2 / "figures").exists()


def test_report_cli_user_errors(tiny_run, tmp_path, capsys):
    from bncbench.__main__ import main

    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "results directory not found" in capsys.readouterr().err
    assert main(["report", str(tiny_run), "--out", str(tmp_path / "o"), "--pairs", "KDB-9:NB", "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert "KDB-9" in err and err.count("\n") == 1
    assert main(["report", str(tiny_run), "--bogus"]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BNCBenchError, match="no result records"):
        report_main([str(empty)])


def test_report_cli_bad_winloss_config(tiny_run, tmp_path, capsys):
    """A win/loss plot naming an unknown model or with series of different lengths: one line, exit code 2."""
    from bncbench.__main__ import main

    for plot, expect in (
        ("{name: wl, series: {a: ['TAN:NB', 'TAN:KDB-9']}}",
         "win/loss plot 'wl', series 'a': model 'KDB-9' of pair 'TAN:KDB-9' is not in the results"),
        ("{name: wl, series: {a: ['TAN:NB'], b: ['NB:TAN', 'TAN:NB']}}",
         "win/loss plot 'wl': every series needs the same number of pairs"),
        ("{name: wl, x: [1, 2], series: {a: ['TAN:NB']}}", "'x' has 2 labels but each series has 1 pair"),
    ):
        cfg = tmp_path / "bad.yaml"
        cfg.write_text(f"name: tiny\nreport:\n  winloss_plots:\n    - {plot}\n")
        assert main(["report", str(tiny_run), "--out", str(tmp_path / "o"), "--config", str(cfg), "--no-figures"]) == 2
        err = capsys.readouterr().err
        assert expect in err and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()


def test_environment_line_counts_tasks_per_environment_and_the_unrecorded():
    from bncbench.report.sections import _environment_notes

    recs = pd.DataFrame({"env.numpy": ["2.4.6", "2.4.6", "1.26.4", None], "env.cpu": ["EPYC", "EPYC", "Xeon", None],
                         "env.commit": ["31bbf5c7800f2ff7", "31bbf5c7800f2ff7", None, None]})
    assert _environment_notes(recs) == [("text", "Computed with: commit 31bbf5c7800f, numpy 2.4.6, cpu EPYC (2 tasks); "
                                                 "numpy 1.26.4, cpu Xeon (1 task); not recorded (1 task, written "
                                                 "before records named it).")]
    assert _environment_notes(recs.drop(columns=list(recs))) == []
    # every key of provenance.KEYS is named, in its order; a dirty checkout's commit keeps its mark
    recs = pd.DataFrame({"env.cpu": ["EPYC"], "env.scikit-learn": ["1.9.1"], "env.python": ["3.11.2"],
                         "env.commit": ["31bbf5c7800f2ff7-dirty"], "env.bncbench": ["0.1.0"]})
    assert _environment_notes(recs) == [("text", "Computed with: bncbench 0.1.0, commit 31bbf5c7800f-dirty, "
                                                 "python 3.11.2, scikit-learn 1.9.1, cpu EPYC (1 task).")]
    # several environments: what every recorded task shares is named once, then what sets each apart; a key
    # missing from one environment is not shared
    recs = pd.DataFrame({"env.numpy": ["2.4.6"] * 4 + [None], "env.cpu": ["EPYC", "EPYC", "Xeon", "Xeon", None],
                         "env.commit": ["31bbf5c7800f2ff7", "31bbf5c7800f2ff7", "aaaabbbbccccdddd", None, None]})
    assert _environment_notes(recs) == [("text", "Computed with: numpy 2.4.6 (all 4 recorded tasks), and commit "
                                                 "31bbf5c7800f, cpu EPYC (2 tasks); commit aaaabbbbcccc, cpu Xeon "
                                                 "(1 task); cpu Xeon (1 task); not recorded (1 task, written before "
                                                 "records named it).")]
    recs = pd.DataFrame({"env.numpy": ["2.4.6", "2.4.6"], "env.commit": ["31bbf5c7800f2ff7", None]})
    assert _environment_notes(recs) == [("text", "Computed with: numpy 2.4.6 (all 2 tasks), and commit 31bbf5c7800f "
                                                 "(1 task); no other key recorded (1 task).")]


def _tan_vs_nb_report(run, tmp_path, metrics, name):
    """A config with one W-D-L table ``t`` of TAN against NB on ``metrics``, and its report of ``run``."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("name: tiny\nreport:\n  reference: NB\n  tables:\n    - name: t\n      pairs: ['TAN:NB']\n"
                   f"      metrics: [{metrics}]\n")
    out = tmp_path / name
    assert report_main([str(run), "--out", str(out), "--config", str(cfg), "--no-figures"]) == 0
    return cfg, out


def test_report_with_a_supplement_counts_the_supplied_dataset(tiny_run, tmp_path, capsys):
    """A dataset only in another run's summary.csv joins the W-D-L counts and the per-dataset tables."""
    from bncbench.__main__ import main

    cfg, base = _tan_vs_nb_report(tiny_run, tmp_path, "zero_one, rmse", "base")
    old = pd.read_csv(base / "summary.csv")
    extra = old[old.dataset == "synth-nb"].assign(dataset="synth-extra")
    extra.loc[extra.model == "TAN", ["zero_one", "rmse"]] = [0.9, 0.9]      # TAN loses there
    extra.loc[extra.model == "NB", ["zero_one", "rmse"]] = [0.1, 0.1]
    pd.concat([old, extra]).to_csv(tmp_path / "old.csv", index=False)
    out = tmp_path / "sup"
    assert report_main([str(tiny_run), "--out", str(out), "--config", str(cfg), "--no-figures",
                        "--supplement", str(tmp_path / "old.csv")]) == 0
    before = pd.read_csv(base / "tables" / "t.csv").set_index("metric")
    after = pd.read_csv(out / "tables" / "t.csv").set_index("metric")
    assert (after.n == 3).all() and (after.losses == before.losses + 1).all() and (after.wins == before.wins).all()
    per = pd.read_csv(out / "tables" / "per_dataset_zero_one_all.csv")
    assert "synth-extra" in per.to_string() and "0.9" in per[per.iloc[:, 0] == "synth-extra"].to_string()
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary.loc[summary.dataset == "synth-extra", "source"]) == {f"{tmp_path.name}/old.csv"}
    assert set(summary.loc[summary.dataset != "synth-extra", "source"]) == {"records"}
    index = (out / "index.md").read_text()
    assert re.search(r"Supplied: 2 \(dataset, model\) means from [\w\\-]+/old\.csv, another run's", index)
    assert "3 datasets" in index
    # a supplement of other data: one line, exit code 2, no report
    extra.assign(dataset="synth-nb", n_instances=7).to_csv(tmp_path / "bad.csv", index=False)
    capsys.readouterr()
    assert main(["report", str(tiny_run), "--out", str(tmp_path / "o"), "--config", str(cfg),
                 "--supplement", str(tmp_path / "bad.csv")]) == 2
    err = capsys.readouterr().err
    assert "dataset synth-nb has instances" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    # each model's parameters are in summary.csv; a supplement whose NB stands for another model is refused
    assert {m: json.loads(p)["structure"] for m, p in zip(summary.model, summary.params)} == {"NB": "nb", "TAN": "tan"}
    tan = extra.loc[extra.model == "TAN", "params"].iloc[0]
    extra.assign(params=tan).to_csv(tmp_path / "relabelled.csv", index=False)
    assert main(["report", str(tiny_run), "--out", str(tmp_path / "o"), "--config", str(cfg),
                 "--supplement", str(tmp_path / "relabelled.csv")]) == 2
    err = capsys.readouterr().err
    assert "model NB has other parameters in the records than in the supplement (structure nb vs tan" in err
    assert err.count("\n") == 1 and not (tmp_path / "o").exists()


def test_a_run_of_one_model_and_a_supplement_give_the_whole_report(tiny_run, tmp_path, capsys):
    """On a fresh machine a run of the missing model alone, plus the committed summary.csv, reports
    every model: the same W-D-L counts and means as the report of all the records."""
    import shutil

    from bncbench.__main__ import main
    from bncbench.harness.store import load_results
    from bncbench.report.summary import summarize

    cfg, whole = _tan_vs_nb_report(tiny_run, tmp_path, "zero_one, rmse, bias, variance", "whole")
    # the committed summary lost TAN (say its run was cut short); TAN alone is run again elsewhere
    old = pd.read_csv(whole / "summary.csv")
    exact = summarize(load_results(tiny_run))          # summary.csv holds the means to the last bit
    for col in ("zero_one", "rmse", "train_time", "rmse_std", "bias", "variance"):
        np.testing.assert_array_equal(old[col].to_numpy(), exact[col].to_numpy())
    old[old.model == "NB"].to_csv(tmp_path / "committed.csv", index=False)
    tan_only = tmp_path / "tan_only"
    shutil.copytree(tiny_run, tan_only)
    for d in (tan_only / "records").glob("*/NB"):
        shutil.rmtree(d)
    out = tmp_path / "out"
    assert report_main([str(tan_only), "--out", str(out), "--config", str(cfg), "--no-figures",
                        "--supplement", str(tmp_path / "committed.csv")]) == 0
    before = pd.read_csv(whole / "tables" / "t.csv").set_index("metric")
    after = pd.read_csv(out / "tables" / "t.csv").set_index("metric")
    assert (after[["wins", "draws", "losses", "n"]] == before[["wins", "draws", "losses", "n"]]).all().all()
    assert np.allclose(after["p"], before["p"])
    summary = pd.read_csv(out / "summary.csv").set_index(["dataset", "model"])
    ref = old.set_index(["dataset", "model"])
    assert sorted(summary.index) == sorted(ref.index)
    assert np.allclose(summary.loc[ref.index, "zero_one"], ref["zero_one"], rtol=1e-5)
    assert set(summary.xs("NB", level="model")["source"]) == {f"{tmp_path.name}/committed.csv"}
    assert set(summary.xs("TAN", level="model")["source"]) == {"records"}
    index = (out / "index.md").read_text()
    assert "2 models (1 with records)" in index and "NB (2 datasets)" in index
    # the per-dataset tables too: summary.csv carries each fold metric's standard deviation
    for metric in ("zero_one", "rmse"):
        a = pd.read_csv(whole / "tables" / f"per_dataset_{metric}_all.csv", index_col=0)
        b = pd.read_csv(out / "tables" / f"per_dataset_{metric}_all.csv", index_col=0)
        assert list(b.columns) == list(a.columns) and list(b.index) == list(a.index)   # the same layout
        assert a.notna().all().all() and np.allclose(a, b, rtol=1e-5)
    # that report's summary.csv passed on again: its rows keep the name of the run they came from
    again = tmp_path / "again"
    assert report_main([str(tan_only), "--out", str(again), "--config", str(cfg), "--no-figures",
                        "--supplement", str(out / "summary.csv")]) == 0
    chained = pd.read_csv(again / "summary.csv").set_index(["dataset", "model"])
    assert set(chained.xs("NB", level="model")["source"]) == {f"{tmp_path.name}/committed.csv"}
    assert set(chained.xs("TAN", level="model")["source"]) == {"records"}
    tan_only_less = tmp_path / "tan_less"                 # TAN on one dataset from the records, one from `out`
    shutil.copytree(tan_only, tan_only_less)
    shutil.rmtree(tan_only_less / "records" / "synth-tree")
    assert report_main([str(tan_only_less), "--out", str(tmp_path / "less"), "--config", str(cfg), "--no-figures",
                        "--supplement", str(out / "summary.csv")]) == 0
    less = pd.read_csv(tmp_path / "less" / "summary.csv").set_index(["dataset", "model"])["source"]
    assert less.to_dict() == {("synth-nb", "TAN"): "records", ("synth-tree", "TAN"): "out/summary.csv",
                              ("synth-nb", "NB"): f"{tmp_path.name}/committed.csv",
                              ("synth-tree", "NB"): f"{tmp_path.name}/committed.csv"}
    # without the params column the supplement cannot say which model its NB is: left out, logged
    old[old.model == "NB"].drop(columns=["params"]).to_csv(tmp_path / "unnamed.csv", index=False)
    capsys.readouterr()
    assert main(["report", str(tan_only), "--out", str(tmp_path / "o"), "--config", str(cfg), "--no-figures",
                 "--supplement", str(tmp_path / "unnamed.csv")]) == 2
    err = capsys.readouterr().err
    assert "the supplement's models NB are not in the records and it does not name their parameters" in err
    assert "NB" in err.splitlines()[-1] and not (tmp_path / "o").exists()


def test_a_report_shows_paths_relative_to_the_repository_or_the_store_never_absolute(tmp_path):
    from bncbench.paths import REPO_ROOT
    from bncbench.report.build import shown_path

    store = tmp_path / "runs" / "zaidi_dbl"
    assert shown_path(store, store) == "zaidi_dbl"
    config = store / "hydra" / "run" / ".hydra" / "config.yaml"
    assert shown_path(config, store) == "zaidi_dbl/hydra/run/.hydra/config.yaml"
    assert shown_path(tmp_path / "elsewhere" / "summary.csv", store) == "elsewhere/summary.csv"
    assert shown_path(REPO_ROOT / "conf" / "experiment" / "feelders.yaml", store) == "conf/experiment/feelders.yaml"
    inside = REPO_ROOT / "results" / "quickstart"
    assert shown_path(inside, inside) == "results/quickstart"
    assert shown_path(inside / "hydra" / "config.yaml", inside) == "results/quickstart/hydra/config.yaml"
