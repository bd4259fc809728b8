"""LaTeX / Markdown / CSV tables against golden files, and LaTeX compiled with pdflatex when installed."""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bncbench.report import stats as S
from bncbench.report import tabulate as T

GOLDEN = Path(__file__).parent / "fixtures" / "report"
UPDATE = os.environ.get("BNCBENCH_UPDATE_GOLDEN") == "1"


def summary_fixture() -> pd.DataFrame:
    """8 datasets (3 Big), generative and weighted models of two families with hand-set means."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(8):
        n = [150, 300, 600, 1200, 5000, 12000, 40000, 100000][i]
        for base in ("NB", "KDB-1"):
            gz = round(rng.uniform(0.1, 0.3), 3)
            for label, f in ((base, 1.0), (f"{base}^w", 0.9 if i != 2 else 1.1), (f"{base}^w (I)", 0.9 if i != 3 else 1.0)):
                rows.append({"dataset": f"ds_{i}", "model": label, "zero_one": gz * f, "rmse": gz * f + 0.1,
                             "bias": gz * f * 0.7, "variance": gz * 0.3 / f, "train_time": 0.01 if f == 1.0 else 1.0,
                             "n_instances": n, "big": n > 10000, "n_ok": 10, "n_failed": 0})
    return pd.DataFrame(rows)


PAIRS = [("NB^w", "NB"), ("KDB-1^w", "KDB-1"), ("NB^w (I)", "NB")]
METRICS = ["bias", "variance", "zero_one", "rmse", "train_time"]


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from the golden file (BNCBENCH_UPDATE_GOLDEN=1 rewrites it)"


def test_wdl_latex_golden():
    tab = S.wdl_table(summary_fixture(), PAIRS, METRICS)
    tex = T.wdl_latex(tab, caption_comment="fixture")
    check_golden("wdl_table.tex", tex)
    # what the golden file must show: booktabs, both blocks, the superscript labels, bold significance
    assert "\\toprule" in tex and "\\bottomrule" in tex and "\\begin{table}" not in tex
    assert "\\emph{All datasets}" in tex and "\\emph{Big datasets}" in tex
    assert "NB$^{\\mathrm{w}}$ (I) vs NB" in tex
    assert "0-1 Loss & 7/0/1 & \\textbf{0.0703}" not in tex  # 0.0703 > 0.05 is not bold
    assert "7/0/1 & 0.0703" in tex
    assert "\\textbf{0.00781}" in tex  # 8/0/0


def test_wdl_markdown_and_csv_golden():
    tab = S.wdl_table(summary_fixture(), PAIRS, METRICS)
    check_golden("wdl_table.md", T.wdl_markdown(tab))
    csv = T.wdl_csv(tab)
    check_golden("wdl_table.csv", csv)
    back = pd.read_csv(GOLDEN / "wdl_table.csv")
    assert list(back.columns) == ["subset", "metric", "model_a", "model_b", "wins", "draws", "losses", "n", "p", "significant"]
    assert ((back.wins + back.draws + back.losses) == back.n).all()


def test_format_p_and_labels():
    assert T.format_p(0.0004) == "<0.001"
    assert T.format_p(0.0104) == "0.0104"
    assert T.format_p(1.0) == "1"
    assert T.tex_label("KDB-1^d (I)") == "KDB-1$^{\\mathrm{d}}$ (I)"
    assert T.tex_label("a_b & c") == "a\\_b \\& c"
    assert T.md_label("NB^w") == "NB<sup>w</sup>"


def per_dataset_records():
    rows = []
    for d, vals in (("ds_a", {"NB": [0.1, 0.3], "TAN": [0.2, 0.2]}), ("ds_b", {"NB": [0.5, 0.5], "TAN": [0.4, 0.6]})):
        for m, v in vals.items():
            for f, x in enumerate(v):
                rows.append({"dataset": d, "model": m, "round": 0, "fold": f, "status": "ok", "zero_one": x})
    recs = pd.DataFrame(rows)
    summ = recs.groupby(["dataset", "model"], as_index=False)["zero_one"].mean()
    return recs, summ


def test_per_dataset_table():
    recs, summ = per_dataset_records()
    frame = T.per_dataset_frame(recs, summ, "zero_one", ["NB", "TAN"])
    assert frame.loc["ds_a", ("NB", "mean")] == pytest.approx(0.2)
    assert frame.loc["ds_a", ("NB", "std")] == pytest.approx(np.std([0.1, 0.3], ddof=1))
    assert frame.loc["ds_a", ("TAN", "std")] == pytest.approx(0.0)
    tex = T.per_dataset_latex(frame, "zero_one", ["NB", "TAN"])
    # ties for best are both bold
    assert "\\textbf{0.2000 $\\pm$ 0.1414} & \\textbf{0.2000 $\\pm$ 0.0000}" in tex
    md = T.per_dataset_markdown(frame, "zero_one", ["NB", "TAN"])
    assert "| ds\\_b | **0.5000 ± 0.0000** | **0.5000 ± 0.1414** |" in md


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_tables_compile(tmp_path):
    tab = S.wdl_table(summary_fixture(), PAIRS, METRICS)
    (tmp_path / "wdl.tex").write_text(T.wdl_latex(tab))
    recs, summ = per_dataset_records()
    (tmp_path / "per.tex").write_text(T.per_dataset_latex(T.per_dataset_frame(recs, summ, "zero_one", ["NB", "TAN"]),
                                                          "zero_one", ["NB", "TAN"]))
    mat = pd.DataFrame({"NB": [0.1, 0.2, 0.3], "TAN^w": [0.2, 0.1, 0.25]})
    (tmp_path / "fr.tex").write_text(T.friedman_latex([S.friedman(mat, metric="zero_one")]))
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
        "\\begin{table}\\centering\\input{wdl}\\end{table}\n\\input{per}\n\\input{fr}\n\\end{document}\n")
    res = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


def test_scatter_figure_with_a_model_missing_on_every_big_dataset():
    """A panel with no dataset where both models ran (DBL3 on no Big dataset) is labelled, not a crash."""
    import matplotlib

    matplotlib.use("Agg")
    from bncbench.report.figures import scatter_figure

    s = summary_fixture()
    s = s[~(s["big"] & (s["model"] == "NB^w"))]  # NB^w ran on no Big dataset
    fig = scatter_figure(s, "NB", ["NB^w"], metrics=("zero_one", "train_time"), subsets=("All", "Big"))
    big_time = fig.axes[3]
    assert big_time.get_xscale() == "linear"  # no positive time to put on a log axis
    assert [t.get_text() for t in big_time.texts] == ["no dataset with both models"]
    all_time = fig.axes[1]
    assert all_time.get_xscale() == "log" and not all_time.texts
