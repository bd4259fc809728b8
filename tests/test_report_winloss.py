"""Win/loss plots (Petitjean et al. 2018 Fig. 6b): hand-computed counts, the figure's curves, the report
files and index, config validation, and the petitjean2018 experiment's report section."""

import numpy as np
import pandas as pd
import pytest

from bncbench.errors import BNCBenchError
from bncbench.report import figures as F
from bncbench.report import tabulate as T
from bncbench.report.build import report_from_frames
from bncbench.report.config import build_config, read_report_section
from bncbench.report.stats import sign_test, wdl_table, winloss_data

MODELS = ["KDB-5 m-est", "NB m-est", "KDB-1 m-est", "KDB-5 HDP", "NB HDP", "KDB-1 HDP"]
# per-dataset RMSE: d1-d3 small, d4-d5 Big; NB HDP has no result on d3; on d2 KDB-1 HDP equals KDB-5 HDP up to
# round-off (0.1 + 0.2 = 0.30000000000000004 vs 0.3): a draw.
RMSE = {
    "d1": [0.30, 0.20, 0.25, 0.10, 0.20, 0.15],
    "d2": [0.40, 0.35, 0.45, 0.30, 0.25, 0.1 + 0.2],
    "d3": [0.50, 0.60, 0.55, 0.20, None, 0.22],
    "d4": [0.10, 0.15, 0.05, 0.05, 0.08, 0.06],
    "d5": [0.20, 0.10, 0.30, 0.09, 0.12, 0.07],
}
SIZES = {"d1": 500, "d2": 800, "d3": 1000, "d4": 20000, "d5": 50000}
SERIES = {"m-estimate": [("KDB-5 m-est", "NB m-est"), ("KDB-5 m-est", "KDB-1 m-est")],
          "HDP": [("KDB-5 HDP", "NB HDP"), ("KDB-5 HDP", "KDB-1 HDP")]}
X = ["0 (NB)", "1"]

# (subset, metric, series, position) -> (wins, draws, losses), counted by hand from RMSE above:
#   m-est vs NB:  d1 L, d2 L, d3 W, d4 W, d5 L       m-est vs KDB-1: d1 L, d2 W, d3 W, d4 L, d5 W
#   HDP vs NB:    d1 W, d2 L, d3 -, d4 W, d5 W       HDP vs KDB-1:   d1 W, d2 D, d3 W, d4 W, d5 L
# 0-1 loss = RMSE / 2 except KDB-5 m-est on d1 (0.05: now a win against both).
EXPECTED = {
    ("All", "rmse", "m-estimate", 0): (2, 0, 3), ("All", "rmse", "m-estimate", 1): (3, 0, 2),
    ("All", "rmse", "HDP", 0): (3, 0, 1), ("All", "rmse", "HDP", 1): (3, 1, 1),
    ("All", "zero_one", "m-estimate", 0): (3, 0, 2), ("All", "zero_one", "m-estimate", 1): (4, 0, 1),
    ("All", "zero_one", "HDP", 0): (3, 0, 1), ("All", "zero_one", "HDP", 1): (3, 1, 1),
    ("Big", "rmse", "m-estimate", 0): (1, 0, 1), ("Big", "rmse", "m-estimate", 1): (1, 0, 1),
    ("Big", "rmse", "HDP", 0): (2, 0, 0), ("Big", "rmse", "HDP", 1): (1, 0, 1),
    ("Big", "zero_one", "m-estimate", 0): (1, 0, 1), ("Big", "zero_one", "m-estimate", 1): (1, 0, 1),
    ("Big", "zero_one", "HDP", 0): (2, 0, 0), ("Big", "zero_one", "HDP", 1): (1, 0, 1),
}


def frames():
    """Records (one ok task per dataset and model) and their summary, from the hand-set means."""
    rows = []
    for d, vals in RMSE.items():
        for m, v in zip(MODELS, vals):
            if v is None:
                continue
            z = 0.05 if (d, m) == ("d1", "KDB-5 m-est") else v / 2
            rows.append({"dataset": d, "model": m, "round": 0, "fold": 0, "status": "ok", "rmse": v, "zero_one": z,
                         "bias": z * 0.6, "variance": z * 0.4, "train_time": 0.1, "test_time": 0.01,
                         "n_instances": SIZES[d], "big": SIZES[d] > 10000})
    recs = pd.DataFrame(rows)
    summ = recs.drop(columns=["round", "fold", "status"]).copy()
    summ["n_ok"], summ["n_failed"] = 1, 0
    return recs, summ


def counts(data):
    return {(r.subset, r.metric, r.series, r.position): (r.wins, r.draws, r.losses) for r in data.itertuples()}


def test_winloss_data_hand_computed():
    _, summ = frames()
    data = winloss_data(summ, SERIES, ["rmse", "zero_one"], x=X)
    assert counts(data) == EXPECTED
    assert len(data) == len(EXPECTED)
    assert (data.wins_minus_losses == data.wins - data.losses).all()
    assert (data.n == data.wins + data.draws + data.losses).all()
    row = data[(data.subset == "All") & (data.metric == "rmse") & (data.series == "HDP")].set_index("position")
    assert list(row.n) == [4, 5]  # d3 has no NB HDP; the draw on d2 is counted in n but not in wins - losses
    assert list(row.wins_minus_losses) == [2, 2]
    assert list(row.x) == X and list(row.model_b) == ["NB HDP", "KDB-1 HDP"]
    assert row.loc[1, "p"] == pytest.approx(sign_test(3, 1)) == pytest.approx(0.625)
    # the same numbers as the W-D-L table of the same pairs
    for name, pairs in SERIES.items():
        tab = wdl_table(summ, pairs, ["rmse", "zero_one"])
        for r in tab.itertuples():
            pos = pairs.index((r.model_a, r.model_b))
            assert EXPECTED[(r.subset, r.metric, name, pos)] == (r.wins, r.draws, r.losses)
    # default x labels: the second model of the first series' pairs
    assert list(winloss_data(summ, SERIES, ["rmse"]).drop_duplicates("position").x) == ["NB m-est", "KDB-1 m-est"]


def test_winloss_data_no_big_and_failed_task():
    _, summ = frames()
    small = summ[~summ.big].copy()
    data = winloss_data(small, SERIES, ["rmse"], x=X)
    assert set(data.subset) == {"All"}
    # d1-d3 only: HDP vs KDB-1 is W, D, W
    assert counts(data)[("All", "rmse", "HDP", 1)] == (2, 1, 0)
    # a failed task leaves the (dataset, model) out, as in the W-D-L tables: KDB-1 HDP failed on d5
    summ.loc[(summ.dataset == "d5") & (summ.model == "KDB-1 HDP"), "n_failed"] = 1
    data = winloss_data(summ, SERIES, ["rmse"], x=X)
    assert counts(data)[("All", "rmse", "HDP", 1)] == (3, 1, 0)
    assert counts(data)[("Big", "rmse", "HDP", 1)] == (1, 0, 0)


def _curves(ax):
    return {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}


def test_winloss_figure_curves(tmp_path):
    _, summ = frames()
    data = winloss_data(summ, SERIES, ["rmse", "zero_one"], x=X)
    fig = F.winloss_figure(data, title="kDB-5 vs kDB-x", xlabel="x")
    axes = fig.axes
    assert len(axes) == 4  # (All, Big) x (rmse, zero_one)
    titles = [ax.get_title() for ax in axes]
    assert titles == ["RMSE, All datasets (n = 4-5)", "0-1 Loss, All datasets (n = 4-5)",
                      "RMSE, Big datasets (n = 2)", "0-1 Loss, Big datasets (n = 2)"]
    panels = [("All", "rmse"), ("All", "zero_one"), ("Big", "rmse"), ("Big", "zero_one")]
    for ax, (subset, metric) in zip(axes, panels):
        curves = _curves(ax)
        assert list(curves) == ["m-estimate", "HDP"]  # one curve per series, in config order
        for i, (name, ln) in enumerate(curves.items()):
            xs, ys = ln.get_xdata(), ln.get_ydata()
            assert len(xs) == 2  # one point per x position
            want = [EXPECTED[(subset, metric, name, p)][0] - EXPECTED[(subset, metric, name, p)][2] for p in (0, 1)]
            assert list(ys) == want
            assert np.allclose(xs, np.array([0, 1]) + F.DODGE * (i - 0.5))
        zero = [ln for ln in ax.get_lines() if ln.get_label().startswith("_")]
        assert len(zero) == 1 and list(zero[0].get_ydata()) == [0, 0]
        assert [t.get_text() for t in ax.get_xticklabels()] == X
        lo, hi = ax.get_ylim()
        assert lo < min(0, *[ln.get_ydata().min() for ln in _curves(ax).values()])
    # HDP vs KDB-1 on All RMSE: 3 wins, 1 draw, 1 loss -> +2; m-estimate vs NB: 2 - 3 = -1
    assert list(_curves(axes[0])["HDP"].get_ydata()) == [2, 2]
    assert list(_curves(axes[0])["m-estimate"].get_ydata()) == [-1, 1]
    paths = F.save(fig, tmp_path / "wl")
    assert [p.name for p in paths] == ["wl.pdf", "wl.png"]
    assert paths[0].read_bytes()[:4] == b"%PDF" and paths[1].read_bytes()[:4] == b"\x89PNG"

    both = F.winloss_figure(data[data.metric == "rmse"], y="both")
    assert len(both.axes) == 2
    curves = _curves(both.axes[0])
    assert list(curves) == ["m-estimate: wins", "m-estimate: losses", "HDP: wins", "HDP: losses"]
    assert list(curves["HDP: wins"].get_ydata()) == [3, 3] and list(curves["HDP: losses"].get_ydata()) == [1, 1]
    assert curves["HDP: losses"].get_linestyle() == "--"
    assert not [ln for ln in both.axes[0].get_lines() if ln.get_label().startswith("_")]  # no zero line
    F.plt.close(both)


def test_winloss_tables():
    _, summ = frames()
    data = winloss_data(summ, SERIES, ["rmse"], x=X)
    md = T.winloss_markdown(data)
    assert "| Datasets | Metric | Series | 0 (NB) | 1 |" in md
    assert "| All | RMSE | m-estimate | 2/0/3 | 3/0/2 |" in md
    assert "| All | RMSE | HDP | 3/0/1 | 3/1/1 |" in md
    assert "| Big | RMSE | HDP | 2/0/0 | 1/0/1 |" in md
    assert "HDP: KDB-5 HDP vs NB HDP, KDB-5 HDP vs KDB-1 HDP" in md
    tex = T.winloss_latex(data)
    assert "\\emph{All datasets}" in tex and "\\emph{Big datasets}" in tex
    assert "RMSE & HDP & 3/0/1 & 3/1/1 \\\\" in tex
    assert "\\begin{tabular}{llrr}" in tex
    # a significant cell is bold: make KDB-5 HDP win everywhere against NB HDP on 6 datasets
    many = pd.DataFrame([{"dataset": f"e{i}", "model": m, "rmse": v, "big": False}
                         for i in range(6) for m, v in (("A", 0.1), ("B", 0.2))])
    d = winloss_data(many, {"s": [("A", "B")]}, ["rmse"])
    assert "| All | RMSE | s | **6/0/0** |" in T.winloss_markdown(d)
    assert "\\textbf{6/0/0}" in T.winloss_latex(d)


SECTION = {
    "metrics": ["zero_one", "rmse"],
    "groups": [{"name": "hdp", "models": ["KDB-5 HDP", "NB HDP"], "reference": "NB HDP"}],
    "friedman": {"metrics": ["rmse"]},
    "per_dataset_metrics": ["rmse"],
    "winloss_plots": [{"name": "fig6b", "title": "kDB-5 vs kDB-x", "metric": "rmse", "x": ["0 (NB)", 1],
                       "series": {"m-estimate": ["KDB-5 m-est:NB m-est", "KDB-5 m-est:KDB-1 m-est"],
                                  "HDP": ["KDB-5 HDP:NB HDP", "KDB-5 HDP:KDB-1 HDP"]}}],
}


def test_winloss_in_report(tmp_path):
    from test_report_cli import _check_index

    recs, summ = frames()
    out = tmp_path / "rep"
    rep = report_from_frames(recs, summ, out, section=SECTION, name="wl", overrides={"n_jobs": 1}, log=lambda m: None)
    spec = rep.config.winloss_plots[0]
    assert spec.metrics == ["rmse"] and spec.x == ["0 (NB)", "1"] and spec.y == "difference"
    csv = pd.read_csv(out / "tables" / "fig6b.csv")
    assert counts(csv) == {k: v for k, v in EXPECTED.items() if k[1] == "rmse"}
    assert list(csv.columns[:5]) == ["subset", "metric", "series", "position", "x"]
    assert "| All | RMSE | HDP | 3/0/1 | 3/1/1 |" in (out / "tables" / "fig6b.md").read_text()
    assert "\\begin{tabular}" in (out / "tables" / "fig6b.tex").read_text()
    for ext, magic in (("pdf", b"%PDF"), ("png", b"\x89PNG")):
        p = out / "figures" / f"fig6b.{ext}"
        assert p.stat().st_size > 1000 and p.read_bytes()[:4] == magic
    md = (out / "index.md").read_text()
    sec = md[md.index("## Win-loss plots"):md.index("## Geometric means")]
    assert "![fig6b: kDB-5 vs kDB-x; y = wins - losses" in sec and "(figures/fig6b.png)" in sec
    assert "[csv](tables/fig6b.csv)" in sec and "| All | RMSE | HDP | 3/0/1 | 3/1/1 |" in sec
    page = (out / "index.html").read_text()
    assert '<img src="figures/fig6b.png"' in page and "<td>3/1/1</td>" in page
    _check_index(out, rep.files)

    # tables only: the counts are still written, no figure
    out2 = tmp_path / "rep2"
    report_from_frames(recs, summ, out2, section=SECTION, overrides={"figures": False}, log=lambda m: None)
    assert (out2 / "tables" / "fig6b.csv").is_file() and not (out2 / "figures").exists()
    assert pd.read_csv(out2 / "tables" / "fig6b.csv").equals(csv)


def _bad(plot, **section):
    item = {"name": "wl", "series": {"a": ["KDB-5 HDP:NB HDP", "KDB-5 HDP:KDB-1 HDP"]}}
    item.update(plot)
    with pytest.raises(BNCBenchError) as exc:
        build_config({"winloss_plots": [item], **section}, "x", MODELS)
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_winloss_config_errors():
    msg = _bad({"series": {"HDP": ["KDB-5 HDP:NB HDP", "KDB-5 HDP:KDB-9 HDP"]}})
    assert msg.startswith("win/loss plot 'wl', series 'HDP': model 'KDB-9 HDP' of pair 'KDB-5 HDP:KDB-9 HDP' is not "
                          "in the results; have KDB-5 m-est")
    msg = _bad({"series": {"a": ["KDB-5 HDP:NB HDP"], "b": ["KDB-5 m-est:NB m-est", "KDB-5 m-est:KDB-1 m-est"]}})
    assert msg == "win/loss plot 'wl': every series needs the same number of pairs (one per x position); have a: 1, b: 2"
    assert _bad({"x": [0, 1, 2]}) == "win/loss plot 'wl': 'x' has 3 labels but each series has 2 pairs"
    assert "unknown key(s) pairs" in _bad({"pairs": ["KDB-5 HDP:NB HDP"]})
    assert "y must be difference or both" in _bad({"y": "ratio"})
    assert "unknown metric 'accuracy'" in _bad({"metric": "accuracy"})
    assert "'metric' or 'metrics', not both" in _bad({"metric": "rmse", "metrics": ["rmse"]})
    assert "non-empty mapping" in _bad({"series": ["KDB-5 HDP:NB HDP"]})
    assert "bad model pair" in _bad({"series": {"a": ["KDB-5 HDP"]}})
    assert "would overwrite" in _bad({"name": "geomean"})
    assert "also name a W-D-L table" in _bad({}, tables=[{"name": "wl", "pairs": ["KDB-5 HDP:NB HDP"]}])
    with pytest.raises(BNCBenchError, match="must be a list"):
        build_config({"winloss_plots": {"name": "wl"}}, "x", MODELS)
    # valid: metrics default to report.metrics, x to the second models
    cfg = build_config({"metrics": ["rmse"], "winloss_plots": [{"name": "wl", "series": {"a": ["KDB-5 HDP:NB HDP"]}}]},
                       "x", MODELS)
    assert cfg.winloss_plots[0].metrics == ["rmse"] and cfg.winloss_plots[0].x == ["NB HDP"]


def _petitjean_labels():
    from omegaconf import OmegaConf

    from bncbench.harness.app import compose_config, plan

    overrides = ["+experiment=petitjean2018", "dataset.names=[synth-nb]"]
    return [m.label for m in plan(overrides).models], OmegaConf.to_container(compose_config(overrides).report)


def test_petitjean2018_report_section():
    """Every label of the experiment's report section is a label the experiment produces; Fig. 6(b) has both curves."""
    from bncbench.harness.app import conf_dir

    labels, section = _petitjean_labels()
    assert {"NB m-est", "KDB-5 m-est", "NB HDP", "KDB-4 HDP", "SkDB-5 HDP", "TAN HDP", "RF"} <= set(labels)
    # the composed config (what `report` reads from a run) and the experiment file (`report --config FILE`) agree
    file_section, _ = read_report_section(conf_dir() / "experiment" / "petitjean2018.yaml")
    assert file_section == section
    cfg = build_config(section, "petitjean2018", labels)
    (fig,) = cfg.winloss_plots
    assert fig.name == "fig6b" and fig.metrics == ["zero_one", "rmse"]
    assert fig.x == ["0 (NB)", "1", "2", "3", "4"]
    assert list(fig.series) == ["m-estimate", "m-estimate (any class)", "HDP"]
    for tag, name in (("m-est", "m-estimate"), ("m-est (any class)", "m-estimate (any class)"), ("HDP", "HDP")):
        assert fig.series[name] == [(f"KDB-5 {tag}", f"{b} {tag}") for b in ("NB", "KDB-1", "KDB-2", "KDB-3", "KDB-4")]
    tables = {t.name: t for t in cfg.tables}
    assert set(tables) == {"table2", "table2_any_class", "backoff", "table3", "table3_any_class", "kdb5_vs_skdb5"}
    assert len(tables["table2"].pairs) == 8 and len(tables["table3"].pairs) == 4
    structures = ("NB", "TAN", "KDB-1", "KDB-2", "KDB-3", "KDB-4", "KDB-5", "SkDB-5")
    assert tables["table2"].pairs == [(f"{s} HDP", f"{s} m-est") for s in structures]
    assert tables["table2_any_class"].pairs == [(f"{s} HDP", f"{s} m-est (any class)") for s in structures]
    assert tables["backoff"].pairs == [(f"{s} m-est (any class)", f"{s} m-est") for s in structures]
    assert tables["kdb5_vs_skdb5"].pairs == [("KDB-5 HDP", "SkDB-5 HDP")]
    assert cfg.reference == "KDB-5 HDP"


def test_petitjean2018_names_both_backoff_rules():
    """Both m-estimate back-off rules are in the experiment, each label naming one model: "m-est" is
    per class (the committed run's models, unchanged), "m-est (any class)" the authors' C++ learner's rule."""
    from bncbench.harness.app import plan

    models = {m.label: m.params for m in plan(["+experiment=petitjean2018", "dataset.names=[synth-nb]"]).models}
    for s in ("NB", "TAN", "KDB-1", "KDB-2", "KDB-3", "KDB-4", "KDB-5", "SkDB-5"):
        per, anyc = models[f"{s} m-est"], models[f"{s} m-est (any class)"]
        assert per.get("backoff", "per_class") == "per_class" and anyc["backoff"] == "any_class"
        assert {k: v for k, v in anyc.items() if k != "backoff"} == {k: v for k, v in per.items() if k != "backoff"}
    assert len(models) == 25  # 8 structures x {per class, any class, HDP} + RF: no label stands for two models


def test_big_threshold_and_little_subset(tmp_path):
    """The deep-broad paper's Big (> 100,000 rows; here > 30,000: d5 only) and its Little, counted by hand."""
    recs, summ = frames()
    section = {"reference": "NB m-est", "tables": [{"name": "t", "pairs": ["KDB-5 HDP:KDB-1 HDP"],
                                                    "metrics": ["rmse"]}],
               "big_threshold": 30000, "subsets": ["Little", "Big"], "figures": False}
    rep = report_from_frames(recs, summ, tmp_path / "rep", section=section, name="t", log=lambda m: None)
    assert rep.config.big_threshold == 30000 and rep.config.subsets == ["Little", "Big"]
    tab = pd.read_csv(tmp_path / "rep" / "tables" / "t.csv")
    # KDB-5 HDP vs KDB-1 HDP: d1 W, d2 D, d3 W, d4 W (Little: 3/1/0), d5 L (Big: 0/0/1)
    got = {r.subset: (r.wins, r.draws, r.losses) for r in tab.itertuples()}
    assert got == {"Little": (3, 1, 0), "Big": (0, 0, 1)}
    assert "1 Big, > 30,000 instances" in (tmp_path / "rep" / "index.md").read_text()
    # the command line overrides the section; bad values are one clear error
    rep = report_from_frames(recs, summ, tmp_path / "rep2", section=section, name="t", log=lambda m: None,
                             overrides={"big_threshold": 10000, "subsets": ["All", "Big"]})
    tab = pd.read_csv(tmp_path / "rep2" / "tables" / "t.csv")
    assert {r.subset: (r.wins, r.draws, r.losses) for r in tab.itertuples()} == {"All": (3, 1, 1), "Big": (1, 0, 1)}
    for bad, match in (({"subsets": ["Huge"]}, "unknown subset"), ({"big_threshold": "many"}, "big_threshold")):
        with pytest.raises(BNCBenchError, match=match):
            build_config({**section, **bad}, "t", MODELS)
