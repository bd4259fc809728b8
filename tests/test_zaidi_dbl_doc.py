"""docs/reproductions/zaidi_dbl.md shows the committed rerun CSVs' numbers: every W-D-L cell of its tables
(Tables 2-4, DBLⁿ vs LRⁿ, DBL2-one) and its §6.3 table are read back and compared with ``wdl.csv`` and
``convergence_summary.csv`` (Little), so the page cannot drift from the store's CSVs; and its table of what the
rest costs is ``little_left.csv``, which its script gives back; ``zaidi_dbl_page.py``, which writes those tables,
leaves the committed page as it is; the paragraphs on single datasets' folds are ``folds.csv``."""

import math
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "reproductions" / "zaidi_dbl.md"
CSV = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "reg_rows"
METRICS = {"bias": "bias", "variance": "variance", "0-1 loss": "zero_one", "RMSE": "rmse",
           "training time": "train_time"}
LEFT = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "big_cost" / "little_left.csv"
QUARTILES = ("cpu_h_q25", "cpu_h_q50", "cpu_h_q75")
THIRD = {"DBL3": "DBL³", "LR3": "LR³"}  # the record's model label -> the page's
CELL = re.compile(r"^\**(\d+)/(\d+)/(\d+) \((<?[\d.]+)\)\**$")


def _p(p):
    return "<0.001" if p < 0.001 else f"{p:.3f}"


@pytest.fixture(scope="module")
def wdl():
    w = pd.read_csv(CSV / "wdl.csv")
    w = w[w["subset"] == "Little"]
    return {(f"{a} vs {b}", m): r for (a, b, m), r in
            w.set_index(["model_a", "model_b", "metric"]).iterrows()}


def _rows(text, header):
    """The body rows of the Markdown table whose header line starts with ``header``."""
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(header))
    out = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        out.append([c.strip() for c in line.strip("|").split("|")])
    return lines[i], out


def _check(cell, r):
    m = CELL.match(cell)
    assert m, cell
    assert tuple(int(v) for v in m.groups()[:3]) == (r.wins, r.draws, r.losses), cell
    assert m.group(4) == _p(r.p), cell
    assert cell.startswith("**") == bool(r.p <= 0.05), cell


def test_tables_2_to_4_are_the_csvs(wdl):
    text = DOC.read_text()
    _, rows = _rows(text, "| table | pair | metric | paper (75 Little) | ours (")
    assert len(rows) == 24
    for _, pair, metric, _, ours in rows:
        _check(ours, wdl[(pair, METRICS[metric])])


@pytest.mark.parametrize("first", ["| DBL1 vs LR1 |", "| DBL2-one vs DBL2 |"])
def test_per_metric_tables_are_the_csvs(wdl, first):
    text = DOC.read_text()
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(first) and "/" in line.split("|")[2])
    header = [c.strip() for c in lines[i - 2].strip("|").split("|")]
    k = i
    while lines[k].startswith("|"):
        cells = [c.strip() for c in lines[k].strip("|").split("|")]
        for name, cell in zip(header[1:], cells[1:]):
            _check(cell, wdl[(cells[0], METRICS[name])])
        k += 1
    assert k - i >= 3


# The claims table's W-D-L citations: (the start of the claim's cell, [(model_a, model_b, metric), ...]).
CLAIM_CELLS = [
    ("DBLⁿ has lower bias than AnJE", [("DBL2", "A2JE", "bias"), ("DBL3", "A3JE", "bias")]),
    ("DBLⁿ has higher variance than AnJE", [("DBL2", "A2JE", "variance"), ("DBL3", "A3JE", "variance")]),
    ("no significant 0-1 loss difference", [("DBL2", "A2JE", "zero_one"), ("DBL3", "A3JE", "zero_one"),
                                            ("DBL2", "A2JE", "rmse"), ("DBL3", "A3JE", "rmse")]),
    ("lower bias and higher variance than AnDE", [("DBL2", "A1DE", "variance"), ("DBL3", "A2DE", "variance"),
                                                  ("DBL2", "A1DE", "bias"), ("DBL3", "A2DE", "bias")]),
    ("A2DE has lower RMSE than DBL³", [("DBL3", "A2DE", "rmse"), ("DBL2", "A1DE", "rmse")]),
    ("DBLⁿ has lower bias than RF", [("DBL2", "RF", "bias"), ("DBL3", "RF", "bias")]),
    ("RF has lower RMSE on Little data", [("DBL2", "RF", "rmse"), ("DBL3", "RF", "rmse"), ("DBL2", "RF", "zero_one"),
                                         ("DBL3", "RF", "zero_one")]),
]


def _p_prose(p):
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _convergence():
    """convergence_summary.csv's Little rows of DBL¹, DBL² and DBL³ (against LRⁿ)."""
    c = pd.read_csv(CSV / "convergence_summary.csv")
    c = c[c["subset"] == "Little"].set_index("w_model")
    return c.loc["DBL1"], c.loc["DBL2"], c.loc["DBL3"]


def _reach():
    """reach_summary.csv (one fold of each dataset's paths), indexed by (pair, measure)."""
    return pd.read_csv(CSV.parent / "figures" / "reach_summary.csv").set_index(["pair", "measure"])


def test_the_claims_table_cites_the_csvs():
    """Every number the claims table cites is the committed CSVs': its W-D-L cells (``wdl.csv``, Little, in the
    order cited, each with its p), §6.3's counts (``convergence_summary.csv``), the paths' and the starts' counts
    (``reach_summary.csv``, ``start_objective_summary.csv``), and the dataset counts in its header. A store that
    grows moves them; this says which to write again."""
    text = DOC.read_text()
    head, rows = _rows(text, "| the paper's claim | ours (")
    cells = {r[0]: r[1] for r in rows}
    w = pd.read_csv(CSV / "wdl.csv")
    w = w[w["subset"] == "Little"].set_index(["model_a", "model_b", "metric"])
    counts = sorted({int(n) for n in w["n"]}, reverse=True)
    assert f"ours ({' / '.join(map(str, counts))} Little datasets" in head
    for claim, cited in CLAIM_CELLS:
        cell = next(v for k, v in cells.items() if k.startswith(claim))
        at = 0
        for key in cited:
            r = w.loc[key]
            m = re.compile(re.escape(f"{r.wins}/{r.draws}/{r.losses}") + r"[^/]{0,60}?" +
                           re.escape(_p_prose(r.p))).search(cell, at)
            assert m, (claim, key, f"{r.wins}/{r.draws}/{r.losses} ({_p_prose(r.p)})")
            at = m.end()
    cell = next(v for k, v in cells.items() if k.startswith("DBLⁿ converges in far fewer iterations"))
    c1, c2, c3 = _convergence()
    assert f"DBL² needs fewer iterations than LR² on {c2.iter_fewer} of {c2.n_datasets} datasets, more on " \
           f"{c2.iter_more} ({_p_prose(c2.iter_p)}), {c2.iter_ratio_geomean:.3f}× in geometric mean" in cell
    assert f"DBL³ vs LR³ {c3.iter_fewer}/{c3.iter_more} of {c3.n_datasets}, {c3.iter_ratio_geomean:.3f}×" in cell
    assert f"DBL¹ needs *more* than LR¹ on {c1.iter_more} of {c1.n_datasets} ({_p_prose(c1.iter_p)}, " \
           f"{c1.iter_ratio_geomean:.3f}×)" in cell
    assert f"Training time: DBL² less on {c2.time_less}, more on {c2.time_more} ({c2.time_ratio_geomean:.3f}×)" in cell
    figures = CSV.parent / "figures"
    reach = _reach()
    for n, sup in ((1, "¹"), (2, "²"), (3, "³")):
        r = reach.loc[(f"DBL{n}-zero vs LR{n}", "n_iter")]
        assert f"DBL{sup} from 0 fewer than LR{sup} on {r.fewer:.0f} of {r.n_datasets:.0f}, {_p_prose(r.p)}, " \
               f"{r.ratio_geomean:.3f}×" in cell
    start = pd.read_csv(figures / "start_objective_summary.csv").set_index(["fits", "model", "measure"])
    s2, s1 = start.loc[("penalty, all", "DBL2", "n_iter")], start.loc[("penalty, all", "DBL1", "n_iter")]
    s3 = start.loc[("penalty, reach.csv", "DBL3", "n_iter")]
    assert s1.more == s1.n_datasets
    assert f"DBL² from AnJE's weights stops later than from 0 on {s2.more:.0f} of {s2.n_datasets:.0f} " \
           f"({s2.ratio_geomean:.2f}×; DBL¹ from naive Bayes' on all {s1.n_datasets:.0f}, {s1.ratio_geomean:.2f}×; " \
           f"DBL³ on {s3.more:.0f} of {s3.n_datasets:.0f}, {s3.ratio_geomean:.2f}×)" in cell
    o = start.loc[("penalty, all", "DBL2", "obj_e4")]
    assert f"comes within 10⁻⁴·N ln K of its end later on {o.more:.0f} of {o.n_datasets:.0f}" in cell
    loose = [start.loc[("none, loose", m, "obj_e4")] for m in ("DBL2", "DBL1", "DBL3")]
    assert "sooner on {} of {}; DBL¹ {} of {}; DBL³ {} of {}".format(
        *[int(v) for r in loose for v in (r.fewer, r.n_datasets)]) in cell
    cell = next(v for k, v in cells.items() if k.startswith("DBLⁿ's training NLL falls along a steeper path"))
    e3 = [reach.loc[(f"DBL{n} vs LR{n}", "reach_e3")] for n in (1, 2, 3)]
    assert "on {} of {} datasets (n = 1), {} of {} (n = 2) and {} of {} (n = 3".format(
        *[int(v) for r in e3 for v in (r.fewer, r.n_datasets)]) in cell
    ratios = [r.ratio_geomean for r in e3]
    assert f"({min(ratios):.2f}–{max(ratios):.2f}×)" in cell
    z = [reach.loc[(f"DBL{n}-zero vs LR{n}", "reach_e3")] for n in (1, 2, 3)]
    assert "DBL¹ {} of {}, {:.2f}×; DBL² {} of {}, {:.2f}×; DBL³ {} of {}, {:.2f}×".format(
        *[v for r in z for v in (int(r.fewer), int(r.n_datasets), r.ratio_geomean)]) in cell


def test_section_6_3s_bullet_cites_the_csvs():
    """The bullet under §6.3's table (DBLⁿ vs LRⁿ: iterations and training time) cites convergence_summary.csv's
    current counts and reach_summary.csv's fits from 0."""
    text = DOC.read_text()
    start = text.index("* **§6.3's claim that DBLⁿ converges in far fewer iterations")
    b = " ".join(text[start:text.index("\n* ", start + 1)].split())
    c1, c2, c3 = _convergence()
    assert f"DBL² fewer on {c2.iter_fewer} of {c2.n_datasets}, {_p_prose(c2.iter_p)}, " \
           f"{c2.iter_ratio_geomean:.3f}×" in b
    assert f"DBL³ {c3.iter_fewer} of {c3.n_datasets}, {c3.iter_ratio_geomean:.3f}×" in b
    assert f"*more* iterations than LR¹ on {c1.iter_more} of {c1.n_datasets} datasets ({_p_prose(c1.iter_p)}) " \
           f"and more training time on {c1.time_more} ({_p_prose(c1.time_p)})" in b
    assert f"DBL² less on {c2.time_less} of {c2.n_datasets}, {c2.time_ratio_geomean:.3f}×; DBL³ {c3.time_less} of " \
           f"{c3.n_datasets}, {c3.time_ratio_geomean:.3f}×" in b
    reach = _reach()
    z2, z3 = reach.loc[("DBL2-zero vs LR2", "n_iter")], reach.loc[("DBL3-zero vs LR3", "n_iter")]
    assert f"DBL² needs fewer on {z2.fewer:.0f} of {z2.n_datasets:.0f} datasets, {z2.ratio_geomean:.3f}×, and DBL³ " \
           f"on {z3.fewer:.0f} of {z3.n_datasets:.0f}, {z3.ratio_geomean:.3f}×" in b


def test_section_6_3_table_is_the_csv():
    conv = pd.read_csv(CSV / "convergence_summary.csv")
    conv = conv[conv["subset"] == "Little"].set_index("w_model")
    _, rows = _rows(DOC.read_text(), "| pair | datasets | DBL fewer / equal / more iterations (p) |")
    assert len(rows) == 3
    for pair, n, it, it_ratio, time, time_ratio in rows:
        r = conv.loc[pair.split(" vs ")[0]]
        assert int(n) == r.n_datasets
        assert it == f"{r.iter_fewer} / {r.iter_equal} / {r.iter_more} ({_p(r.iter_p)})"
        assert float(it_ratio) == round(r.iter_ratio_geomean, 3)
        assert time == f"{r.time_less} / {r.time_more} ({_p(r.time_p)})"
        assert float(time_ratio) == round(r.time_ratio_geomean, 3)


def test_the_cost_of_what_is_left_is_its_script_on_the_committed_files(capsys):
    """``little_left.csv`` is what ``zaidi_dbl_left_cost.py`` computes from the committed files now (re-run it when
    ``store2/`` gains folds), the page's table is its ``--table``, and its cells read the CSV as they say."""
    sys.path.insert(0, str(REPO / "docs" / "reproductions"))
    try:
        import zaidi_dbl_left_cost
    finally:
        sys.path.pop(0)
    zaidi_dbl_left_cost.main([])
    assert capsys.readouterr().out == LEFT.read_text()
    zaidi_dbl_left_cost.main(["--table"])
    shown = capsys.readouterr().out
    assert shown in DOC.read_text().split("## What the rest costs")[1].split("\n## ")[0]
    left = pd.read_csv(LEFT).set_index(["dataset", "model"], drop=False)
    _, rows = _rows(shown, "| dataset | model | training rows | weights | peak MiB |")
    assert len(rows) == len(left)
    for dataset, model, n_train, n_params, peak, ev, n2, done, cpu in rows:
        if dataset == "**all**":
            r = left[left["dataset"] == "total"].iloc[0]
            assert cpu == "**" + " / ".join(f"{r[c]:.1f}" for c in QUARTILES) + "**"
            lo, hi = r.cpu_h_q25, r.cpu_h_q75  # the time bullet: at 4-5 CPU h a session
            if hi == 0:
                assert "Nothing is left on Little data" in " ".join(DOC.read_text().split())
                continue
            few, many = math.ceil(lo / 5), math.ceil(hi / 4)
            hours = f"{lo:.1f}" if lo == hi else f"{lo:.0f}–{hi:.0f}"
            sessions = f"{few}" if few == many else f"{few}–{many}"
            plural = "s" if many > 1 else ""
            assert f"{hours} CPU hours are then about {sessions} session{plural}" in " ".join(DOC.read_text().split())
            continue
        r = left.loc[(dataset, model)]
        assert (n_train, n_params, peak) == tuple(f"{int(r[c]):,}" for c in ("n_train", "n_parameters", "peak_mib"))
        assert (ev, n2) == (f"{r.eval_cpu:.2f}", f"{round(r.n2_iter):,}")
        assert r.folds_done + r.folds_left == 10
        if r.folds_done:  # the folds left at the mean of those done: measured, one number
            assert done == f"{int(r.folds_done)} ({r.done_cpu_h:.2f})"
            assert cpu == f"{r.cpu_h_q50:.2f} (measured)" and r.cpu_h_q25 == r.cpu_h_q75 == r.cpu_h_q50
        else:
            assert done == "0"
            assert cpu == " / ".join(f"{r[c]:.2f}" for c in QUARTILES)


def test_what_is_left_on_the_big_three_is_its_script_on_the_committed_files(capsys):
    """``big_left.csv`` is ``zaidi_dbl_left_cost.py --big`` on the committed files now (re-run it when
    ``store_big_nov29/folds.csv`` gains folds); the page's prose sums, calibration and kddcup's n = 3 memory and cost
    per evaluation are that CSV's and ``big_fold_nov29.json``'s."""
    import json

    script = _script("zaidi_dbl_left_cost")
    script.main(["--big"])
    big = LEFT.parent / "big_left.csv"
    assert capsys.readouterr().out == big.read_text()
    left = pd.read_csv(big)
    left = left[left["dataset"] != "total"]
    text = " ".join(DOC.read_text().split())
    n3 = left["model"].isin(["DBL3", "LR3"])
    assert (left["folds_done"] + left["folds_left"] == 10).all() and not left.loc[n3, "folds_done"].any()
    n2_cap, n2_mid = left.loc[~n3, "cpu_h_10000"].sum(), left.loc[~n3, "cpu_h_3000"].sum()
    n3_cap, n3_mid = left.loc[n3, "cpu_h_10000"].sum(), left.loc[n3, "cpu_h_3000"].sum()
    assert (f"about {5 * round(n2_cap / 5)} CPU hours for DBL², LR² and DBL2-one at the cap" in text
            and f"{round(n2_mid)} at 3,000 iterations" in text)
    assert f"about {10 * round(n3_mid / 10)} (at 3,000 iterations) to {10 * round(n3_cap / 10):,} (at the cap)" in text
    assert f"the n = 2 ones about {5 * round(n2_cap / 4.5 / 5)} sessions here" in text
    fold = {n: left.loc[n3, f"cpu_h_{n}"] / left.loc[n3, "folds_left"] for n in (3000, 10000)}
    lo, hi = fold[3000], fold[10000]
    assert (f"{n3.sum() * 10} folds, about {10 * round(n3_mid / 10)} CPU hours at 3,000 iterations and "
            f"{10 * round(n3_cap / 10):,} at the cap, the table above: {lo.min():.0f}–{lo.max():.0f} "
            f"CPU hours a fold at 3,000 iterations, {hi.min():.0f}–{hi.max():.0f} at the cap") in text
    cal = left.set_index(["dataset", "model"])
    dbl2, lr2 = cal.loc[("census-income", "DBL2")], cal.loc[("census-income", "LR2")]
    assert (f"`k`, {dbl2.k:.2f} for DBL² and {lr2.k:.2f} for LR², and {dbl2.evals_per_iter:.2f} and "
            f"{lr2.evals_per_iter:.2f} evaluations per iteration") in text
    runs = {(r["dataset"], r["model"]): r for r in json.loads((LEFT.parent / "big_fold_nov29.json").read_text())}
    kdd = [runs[("kddcup", m)] for m in THIRD]
    assert f"a peak of {kdd[0]['peak_mib'] / 1024:.1f} and {kdd[1]['peak_mib'] / 1024:.1f} GiB" in text
    filled = json.loads((LEFT.parent / "kddcup_dbl3_8iter.json").read_text())[0]
    assert filled["n_iter"] == 8 and f"its 5 pairs filled, peaked at {filled['peak_mib'] / 1024:.1f} GiB" in text
    per = sorted(cal.loc[("kddcup", m), "eval_cpu"] for m in THIRD)
    assert f"an evaluation takes {per[0]:.1f}–{per[1]:.1f} CPU s" in text


def test_optdigits_measured_again_is_its_json():
    """The time bullet's second measurement of optdigits' CPU s per evaluation: each run of
    ``optdigits_remeasured.json`` as ``bench_big_fold.costs`` splits it, beside the table's (``little_left.csv``)."""
    import json

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_big_fold import costs
    finally:
        sys.path.pop(0)
    runs = json.loads((LEFT.parent / "optdigits_remeasured.json").read_text())
    left = pd.read_csv(LEFT).set_index(["dataset", "model"])
    text = " ".join(DOC.read_text().split())
    for model, name in THIRD.items():
        per = [f"{costs(r)[3]:.2f}" for r in sorted(runs, key=lambda r: r["run"]) if r["model"] == model]
        assert len(per) == 3 and all(r["dataset"] == "optdigits" and r["n_iter"] == 10 for r in runs)
        assert f"{name} {per[0]}, {per[1]} and {per[2]} ({left.loc[('optdigits', model), 'eval_cpu']:.2f}" in text


def test_the_big_three_fold_cost_table_is_fold_cost_md():
    """The page's table of one capped fold per model (the Big three and connect-4) is ``fold_cost.md``'s, row for row
    (which ``bench_big_fold.py --from-json`` prints): no hand edit, nor another table's update, changes a cell."""
    header = "| dataset | model | training rows | parameters | iterations / evaluations |"

    def table(text):
        lines = text.splitlines()
        i = next(k for k, line in enumerate(lines) if line.startswith(header))
        rows = []
        for line in lines[i:]:
            if not line.startswith("|"):
                break
            rows.append(line.strip())
        return rows

    shown = table(DOC.read_text())
    assert len(shown) > 10
    assert shown == table((CSV.parent / "big_cost" / "fold_cost.md").read_text())


def _script(name="zaidi_dbl_page"):
    """``docs/reproductions/<name>.py``, imported."""
    import importlib

    sys.path.insert(0, str(REPO / "docs" / "reproductions"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def test_the_pages_tables_are_what_its_script_writes():
    """``zaidi_dbl_page.py`` recomputes every table cell of the page from the CSVs: the committed page is a fixed point,
    and a cell set back to an older count is written anew and reported."""
    zaidi_dbl_page = _script()
    text = DOC.read_text()
    assert zaidi_dbl_page.rewrite(text) == (text, [])
    old = "| 2 | DBL3 vs A3JE | bias | **58/2/15 (<0.001)** | **39/4/14 (<0.001)** |"
    row = next(line for line in text.splitlines() if line.startswith("| 2 | DBL3 vs A3JE | bias |"))
    again, moved = zaidi_dbl_page.rewrite(text.replace(row, old))
    assert again == text and moved == [f"Table 2: DBL3 vs A3JE / bias / ours: **39/4/14 (<0.001)** -> {row[-22:-2]}"]


def _paragraph(text, dataset):
    """The page's paragraph on one dataset's DBL³/LR³ folds (it opens with ``**dataset** (`store2/```)."""
    start = text.index(f"**{dataset}** (`store2/`")
    return " ".join(text[start:text.index("\n\n", start)].split())


def _num(s):
    return float(s.replace(",", ""))


@pytest.fixture(scope="module")
def folds():
    """folds.csv's DBL³ and LR³ records, as (dataset) -> frame indexed by (round, fold) with a column per model."""
    f = pd.read_csv(CSV / "folds.csv")
    f = f[f["model"].isin(list(THIRD))]
    values = ["n_iter", "zero_one", "train_cpu", "train_cll", "n_parameters"]
    # a dataset begun with one model only has the other's columns, empty
    columns = pd.MultiIndex.from_product([values, list(THIRD)], names=[None, "model"])
    return {d: g.pivot_table(index=["round", "fold"], columns="model", values=values).reindex(columns=columns)
            for d, g in f.groupby("dataset")}


def test_the_per_fold_paragraphs_are_folds_csv(folds):
    """The per-fold prose of musk1, letter, thyroid and optdigits: iterations, losses, NLLs and CPU read back from
    folds.csv."""
    text = DOC.read_text()
    m = folds["musk1"]
    para = _paragraph(text, "musk1")
    pairs = re.search(r"fewer iterations than LR³ \(([\d,/ ]+(?:, [\d,/ ]+)*); ([\d.]+)× in the mean\)", para)
    assert pairs, para
    got = [tuple(int(_num(v)) for v in p.split(" / ")) for p in re.findall(r"[\d,]+ / [\d,]+", pairs.group(1))]
    assert got == list(zip(m["n_iter", "DBL3"].astype(int), m["n_iter", "LR3"].astype(int)))
    assert pairs.group(2) == f"{m['n_iter', 'DBL3'].mean() / m['n_iter', 'LR3'].mean():.2f}"
    L = folds["letter"]
    para = _paragraph(text, "letter").replace("five", "5")
    d, r = L["n_iter", "DBL3"], L["n_iter", "LR3"]
    short = d < r
    assert f"({L['zero_one', 'DBL3'].mean():.4f} against {L['zero_one', 'LR3'].mean():.4f} in the mean)" in para
    assert f"fewer than LR³'s in {short.sum()} folds ({d[short].min():,.0f}–{d[short].max():,.0f} against " \
           f"{r[short].min():,.0f}–{r[short].max():,.0f})" in para
    assert f"in the other {(~short).sum()} ({d[~short].min():,.0f}–{d[~short].max():,.0f} against " \
           f"{r[~short].min():,.0f}–{r[~short].max():,.0f})" in para
    assert f"{d.mean():.0f} against {r.mean():.0f} in the mean" in para
    assert f"{L['train_cpu', 'DBL3'].mean() / L['train_cpu', 'LR3'].mean():.2f}× LR³'s CPU time" in para
    for dataset, places in (("thyroid", 1), ("optdigits", 3)):
        T = folds[dataset]
        para = _paragraph(text, dataset)
        d, r = T["n_iter", "DBL3"], T["n_iter", "LR3"]
        nll_d, nll_r = -T["train_cll", "DBL3"], -T["train_cll", "LR3"]
        z_d, z_r = T["zero_one", "DBL3"], T["zero_one", "LR3"]
        assert f"fewer iterations than LR³ in {(d < r).sum()} of {len(d)} folds ({d.min():,.0f}–{d.max():,.0f} " \
               f"against {r.min():,.0f}–{r.max():,.0f}; {d.mean():,.0f} against {r.mean():,.0f} in the mean, " \
               f"{d.mean() / r.mean():.2f}×)" in para, dataset
        assert (nll_d < nll_r).all() and f"lower training NLL in all {len(d)} ({nll_d.min():.{places}f}–" \
               f"{nll_d.max():.{places}f} against {nll_r.min():.{places}f}–{nll_r.max():.{places}f})" in para, dataset
        assert f"({z_d.mean():.4f} against {z_r.mean():.4f} in the mean; lower in {(z_d < z_r).sum()} folds, " \
               f"equal in {(z_d == z_r).sum()})" in para, dataset
        cpu_d, cpu_r = T["train_cpu", "DBL3"].mean(), T["train_cpu", "LR3"].mean()
        assert f"CPU time {cpu_d / cpu_r:.2f}× LR³'s ({cpu_d / 3600:.2f} against {cpu_r / 3600:.2f} CPU h a fold)" \
               in para, dataset
    w = folds["optdigits"]["n_parameters"].stack() / 1e6
    assert f"{w.min():.1f}–{w.max():.1f} million weights" in _paragraph(text, "optdigits")


def test_the_folds_begun_table_is_folds_csv(folds):
    """The table of optdigits' folds and of those of any dataset begun but not complete: a row per (round, fold) of
    optdigits and of every dataset with fewer than 10 DBL³ or LR³ folds, each model's iterations, CPU h, training NLL
    and 0-1 loss read back."""
    PER_FOLD = _script().PER_FOLD
    _, rows = _rows(DOC.read_text(), "| dataset | fold | DBL³ iterations |")
    begun = [d for d, g in folds.items() if g["n_iter"].notna().sum().min() < 10]
    shown = list(PER_FOLD) + [d for d in begun if d not in PER_FOLD]
    assert PER_FOLD == ("optdigits",) and [r[0] for r in rows] == [d for d in shown for _ in folds[d].index]
    for d in shown:
        got = [r for r in rows if r[0] == d]
        assert [r[1] for r in got] == [f"r{i}f{j}" for i, j in folds[d].index]
        for r, ((i, j), f) in zip(got, folds[d].iterrows()):
            for k, model in ((2, "DBL3"), (6, "LR3")):
                if pd.isna(f["n_iter", model]):
                    assert r[k:k + 4] == ["—"] * 4, r
                    continue
                assert _num(r[k]) == f["n_iter", model], r
                assert abs(_num(r[k + 1]) - f["train_cpu", model] / 3600) <= 0.005, r
                assert abs(_num(r[k + 2]) + f["train_cll", model]) <= 0.005, r
                assert abs(_num(r[k + 3]) - f["zero_one", model]) <= 0.00005, r


def test_connect_4s_folds_are_folds_csv_and_little_left_csv(folds):
    """connect-4's paragraph and the cost bullet on it: the ranges of its folds' iterations, CPU, NLLs and losses
    from folds.csv, the guess's median fold and the folds left from little_left.csv. Every LR³ fold at the cap."""
    text = DOC.read_text()
    C = folds["connect-4"]
    para = _paragraph(text, "connect-4")
    it_d, it_r = C["n_iter", "DBL3"].dropna(), C["n_iter", "LR3"].dropna()
    cpu_d, cpu_r = C["train_cpu", "DBL3"].dropna() / 3600, C["train_cpu", "LR3"].dropna() / 3600
    nll_d, nll_r = -C["train_cll", "DBL3"].dropna(), -C["train_cll", "LR3"].dropna()
    z_d, z_r = C["zero_one", "DBL3"], C["zero_one", "LR3"]
    both = z_d.notna() & z_r.notna()
    assert (it_r == 10_000).all() and (z_d[both] > z_r[both]).all() and nll_d.max() < nll_r.min()
    assert f"DBL³ took {it_d.min():,.0f}–{it_d.max():,.0f} iterations and {cpu_d.min():.2f}–{cpu_d.max():.2f} " \
           f"CPU h a fold" in para
    assert f"cap of 10,000 iterations, unconverged, in all {len(it_r)} of its folds ({cpu_r.min():.2f}–" \
           f"{cpu_r.max():.2f} CPU h)" in para
    w = C["n_parameters"]
    assert f"{int(w.min().min()):,}–{int(w.max().max()):,} weights" in para
    assert f"({nll_d.min():.2f}–{nll_d.max():.2f} against {nll_r.min():.2f}–{nll_r.max():.2f})" in para
    assert f"higher 0-1 loss in every fold ({z_d[both].mean():.4f} against {z_r[both].mean():.4f} in the mean of " \
           f"the folds with both)" in para
    s = pd.read_csv(CSV / "summary.csv").set_index(["dataset", "model"])
    assert f"DBL² and LR² average {s.loc[('connect-4', 'DBL2'), 'zero_one']:.4f} and " \
           f"{s.loc[('connect-4', 'LR2'), 'zero_one']:.4f} over their 10 folds" in para
    left = pd.read_csv(LEFT).set_index(["dataset", "model"])
    d, r = left.loc[("connect-4", "DBL3")], left.loc[("connect-4", "LR3")]
    assert (d.folds_done, r.folds_done) == (len(it_d), len(it_r))
    cost = " ".join(text.split("* **The iterations are the guess**")[1].split("* **What that is in time")[0].split())
    assert f"took {cpu_d.min():.2f}–{cpu_d.max():.2f} CPU h (DBL³, {it_d.min():,.0f}–{it_d.max():,.0f} iterations) " \
           f"and {cpu_r.min():.2f}–{cpu_r.max():.2f} (LR³, 10,000 each: the `stop=ebnc` cap)" in cost
    g_d, g_r = d.guess_fold_cpu_h_q50, r.guess_fold_cpu_h_q50
    assert f"{cpu_d.mean() / g_d:.1f} and {cpu_r.mean() / g_r:.1f} times the guess's median fold in the mean " \
           f"({g_d:.2f} and {g_r:.2f} CPU h" in cost
    assert d.folds_left == r.folds_left == 0
    assert f"All ten took {cpu_d.sum():.1f} and {cpu_r.sum():.1f} CPU h, where the guess gave {10 * g_d:.1f} and " \
           f"{10 * g_r:.1f}." in cost
    lost = pd.read_csv(CSV.parent / "lost_saves.csv")
    assert f"reached {lost.n_iter.iloc[0]:,} and {lost.n_iter.iloc[1]:,} iterations" in cost, lost
    o = folds["optdigits"]
    for model, name in THIRD.items():
        it_o, cpu_o = o["n_iter", model].dropna(), o["train_cpu", model].dropna() / 3600
        g_o = left.loc[("optdigits", model), "guess_fold_cpu_h_q50"]
        its = f"{it_o.min():,.0f}" + ("" if it_o.min() == it_o.max() else f"–{it_o.max():,.0f}")
        mean = "" if len(it_o) == 1 else " in the mean"
        n = "(all 10)" if len(it_o) == 10 else f"in so far ({len(it_o)})"
        assert f"its {name} folds {n} took {cpu_o.mean():.2f} CPU h{mean} ({its} iterations), " \
               f"{cpu_o.mean() / g_o:.2f} times the guess's median fold ({g_o:.2f} CPU h" in cost, model
    assert (left.cpu_h_q25 == left.cpu_h_q75).all() and "none at the guess" in cost
    flat = " ".join(text.split())
    cpu_o = pd.concat([o["train_cpu", m].dropna() for m in THIRD]) / 3600
    so_far = "" if o.notna().all().all() else " so far"
    assert f"(connect-4's LR³ folds, at the cap, took {cpu_r.min():.2f}–{cpu_r.max():.2f}; optdigits' folds{so_far} " \
           f"{cpu_o.min():.2f}–{cpu_o.max():.2f})" in flat
    assert f"each {cpu_o.min():.2f}–{cpu_o.max():.2f} CPU h, in about 7 GiB" in _paragraph(text, "optdigits")
    capped = {(d, m) for d, g in folds.items() for m in THIRD if (g["n_iter", m] >= 10_000).any()}
    assert capped == {("connect-4", "LR3")}
    assert "only connect-4's LR³ folds have reached the cap, every one of them" in flat


def test_the_folds_lost_with_the_third_machine_are_lost_folds_csv():
    lost = pd.read_csv(CSV.parent / "lost_folds.csv", dtype={"train_nll": str})
    places = lost.train_nll.str.split(".").str[1].str.len()
    lost["train_nll"] = lost.train_nll.astype(float)
    text = DOC.read_text()
    flat = " ".join(text.split())
    n_opt = (lost.dataset == "optdigits").sum()
    assert f"with {len(lost)} of them, {lost.train_cpu_h.sum():.1f} CPU h of fitting (connect-4's last LR³ fold " \
           f"and {n_opt} of optdigits'" in flat
    row = text.split("| Nov 28, 18:23–21:16 |")[1].split("\n")[0]
    for r in lost.itertuples():
        assert f"{THIRD[r.model]} r{r.round}f{r.fold} at {r.finished_at_utc[-5:]}" in row, r
    # run again on the fourth machine: the same numbers, to the places the note kept
    lost["places"] = places
    f = pd.read_csv(CSV / "folds.csv").merge(lost, on=["dataset", "model", "round", "fold"], suffixes=("", "_lost"))
    assert len(f), "none of the lost folds is in store2 yet"
    for r in f.itertuples():
        assert r.n_iter == r.n_iter_lost and f"{r.zero_one:.4f}" == f"{r.zero_one_lost:.4f}", r
        assert pd.isna(r.train_nll) or round(-r.train_cll, int(r.places)) == r.train_nll, r
    again = [(d + ("'" if d.endswith("s") else "'s") + " "
              + ", ".join(f"{THIRD[r.model]} r{r.round}f{r.fold}" for r in g.itertuples()))
             for d, g in f.groupby("dataset", sort=False)]
    assert f"{' and '.join(again)} are in `store2/` from the fourth with the same numbers" in flat


BIG = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "store_big_nov29"
BAYESIAN = ["A1JE", "A2JE", "A3JE", "A1DE", "A2DE", "DBL1"]  # Table 5's models that ran on census-income, but RF


def _bullet(text, opening):
    start = text.index(opening)
    return " ".join(text[start:text.index("\n* ", start + 1)].split())


def _claims_row(text, claim):
    """The claims table's "ours" cell of the row that opens with ``claim``, its whitespace joined."""
    cells = next(c for c in _rows(text, "| the paper's claim | ours (")[1] if c[0].startswith(claim))
    return " ".join(cells[1].split())


def _ceil4(x):
    return f"{math.ceil(x * 10_000) / 10_000:.4f}"


def test_tables_5_and_6s_prose_is_tables5_6_csv():
    """The Big datasets' bullets and the claims row: census-income's largest gap to the paper over the Bayesian
    models, RF's, and `covertype-grouped`'s cells, each read from ``tables5_6.csv`` (all 10 folds)."""
    t = pd.read_csv(CSV / "tables5_6.csv")
    t = t[t["folds"] == 10].set_index(["dataset", "metric", "model"])
    gap = (t["ours"] - t["paper"]).abs()
    text = DOC.read_text()
    claims = _claims_row(text, "Tables 5 and 6")
    ci = _bullet(text, "* **census-income reproduces**")
    co = _bullet(text, "* **covertype-grouped: partly, by the cut points.**")
    c01 = _ceil4(max(gap[("census-income", "zero_one", m)] for m in BAYESIAN))
    crmse = _ceil4(max(gap[("census-income", "rmse", m)] for m in BAYESIAN))
    assert f"within {c01} of the paper's 0-1 loss" in ci and f"within {c01} of the paper's 0-1 loss" in claims
    assert f"within {crmse} of its RMSE" in ci and f"{crmse} of its RMSE" in claims

    def cell(d, metric, m):
        return t.loc[(d, metric, m), "ours"], t.loc[(d, metric, m), "paper"]

    for m in ("A1JE", "A2DE", "DBL1"):
        ours, paper = cell("census-income", "zero_one", m)
        assert f"{ours:.4f} against {paper:.4f}" in ci, m
    ours, paper = cell("census-income", "zero_one", "RF")
    assert f"RF's 0-1 loss is {ours:.4f} against the paper's {paper:.4f}, lower by {paper - ours:.4f}" in ci
    assert f"RF {paper - ours:.4f} lower" in claims
    ours, paper = cell("census-income", "rmse", "RF")
    assert f"(RMSE {ours:.4f} against {paper:.4f})" in ci
    near = _ceil4(max(gap[("covertype-grouped", "zero_one", m)] for m in ("A1DE", "A2DE", "DBL1")))
    assert f"DBL¹ are within {near} of it" in co and f"DBL¹ within {near}" in claims
    a1, a1p = cell("covertype-grouped", "zero_one", "A1JE")
    assert f"{a1:.4f}" == f"{a1p:.4f}" and f"to four decimals ({a1:.4f})" in co
    (a2, a2p), (a3, a3p) = cell("covertype-grouped", "zero_one", "A2JE"), cell("covertype-grouped", "zero_one", "A3JE")
    assert f"{a2:.4f} against {a2p:.4f} and {a3:.4f} against {a3p:.4f} (higher by {a2 - a2p:.4f} and " \
           f"{a3 - a3p:.4f})" in co
    assert f"({a2 - a2p:.4f} and {a3 - a3p:.4f} higher: the cut points;" in claims
    rf, rfp = cell("covertype-grouped", "zero_one", "RF")
    assert f"RF is lower by {rfp - rf:.4f} ({rf:.4f} against {rfp:.4f})" in co and f"RF {rfp - rf:.4f} lower" in claims
    kdd = t.loc["kddcup"]
    assert len(kdd) == 2 * 7 and (kdd["ours"] < kdd["paper"]).all()  # Table 5's models but DBL², DBL³; both metrics
    kd = _bullet(text, "* **kddcup**")
    (a1, a1p), (rf, rfp) = cell("kddcup", "zero_one", "A1JE"), cell("kddcup", "zero_one", "RF")
    assert f"A1JE {a1:.4f} against {a1p:.4f} and RF {rf:.4f} against {rfp:.4f}" in kd
    close = [t.loc[("kddcup", "zero_one", m), "ours"] for m in ("A2DE", "DBL1", "RF")]
    assert max(close) - min(close) < 0.0001 and "A2DE, DBL¹ and RF within 0.0001 of each other" in kd


def test_section_6_3s_big_bullet_is_convergence_csv():
    """DBL¹ against LR¹ on the Big datasets: each one's mean iterations (``convergence.csv``) and the geometric means
    of the ratios (``convergence_summary.csv``, Big); and their 0-1 losses in Tables 5 and 6's bullet."""
    big = ["census-income", "covertype-grouped", "kddcup"]
    per = pd.read_csv(CSV / "convergence.csv")
    per = per[(per["w_model"] == "DBL1") & per["dataset"].isin(big)].set_index("dataset")
    s = pd.read_csv(CSV / "convergence_summary.csv").set_index(["w_model", "subset"]).loc[("DBL1", "Big")]
    assert s.n_datasets == len(per) == 3 and s.iter_more == 3 and s.time_more == 3
    text = DOC.read_text()
    b = _bullet(text, "* **On Big data only DBL¹ and LR¹ have run**")
    c, v, k = (per.loc[d] for d in big)
    assert f"{c.n_iter_w:,.0f} against {c.n_iter_other:,.0f} on census-income, {v.n_iter_w:,.0f} against " \
           f"{v.n_iter_other:,.0f} on `covertype-grouped` and {k.n_iter_w:,.0f} against {k.n_iter_other:,.0f} on " \
           f"kddcup ({s.iter_ratio_geomean:.3f}× in geometric mean)" in b
    assert f"training time ({s.time_ratio_geomean:.3f}×)" in b
    summ = pd.read_csv(CSV / "summary.csv").set_index(["dataset", "model"])["zero_one"]
    b = _bullet(text, "* **DBL¹ against LR¹ on Big data**")
    assert "census-income {:.4f} against {:.4f}; `covertype-grouped` {:.4f} against {:.4f}".format(
        *[summ[(d, m)] for d in ("census-income", "covertype-grouped") for m in ("DBL1", "LR1")]) in b


def test_the_big_stores_summary_is_its_folds():
    """store_big_nov29's records are not committed; its summary.csv and folds.csv, both written from them, agree:
    each pair's successful folds, mean 0-1 loss, RMSE and iterations."""
    s = pd.read_csv(BIG / "summary.csv").set_index(["dataset", "model"])
    f = pd.read_csv(BIG / "folds.csv")
    ok = f[f["status"] == "ok"].groupby(["dataset", "model"])
    assert sorted(s.index) == sorted(ok.groups)
    assert (s["n_ok"] == ok.size().reindex(s.index)).all()
    for col in ("zero_one", "rmse"):
        assert ok[col].mean().reindex(s.index).to_numpy() == pytest.approx(s[col].to_numpy(), rel=1e-12)
    it = ok["n_iter"].mean().reindex(s.index)
    assert it.isna().equals(s["n_iter"].isna()) and it.dropna().to_numpy() == pytest.approx(s["n_iter"].dropna())
    assert (s["big"] & (s["source"] == "records")).all()


CUTS = REPO / "docs" / "reproductions" / "zaidi_dbl_rerun" / "cut_points"


def test_the_cut_points_rows_of_the_training_fold_are_the_big_stores_records():
    """zaidi_dbl_cut_points.py's ``fold`` variant refits the experiment's own inputs: each fold's 0-1 loss and RMSE
    are the Big store's record's (``store_big_nov29/folds.csv``), so the other variants differ by the cut points
    alone."""
    losses = pd.read_csv(CUTS / "losses.csv").query("variant == 'fold'")
    f = pd.read_csv(BIG / "folds.csv").set_index(["dataset", "model", "round", "fold"])
    keys = list(zip(losses["dataset"], losses["model"], losses["round"], losses["fold"]))
    assert len(keys) == len(set(keys)) == 10 * losses.groupby(["dataset", "model"]).ngroups
    for col in ("zero_one", "rmse"):
        assert losses[col].to_numpy() == pytest.approx(f.loc[keys, col].to_numpy(), rel=1e-12, abs=0)


def test_the_cut_points_prose_is_its_csvs():
    """The covertype-grouped bullet's and the claims row's numbers on the cut points: ``cut_points/summary.csv``
    (means over the 10 folds) and ``cuts.csv`` (census-income's numbers of cut points)."""
    s = pd.read_csv(CUTS / "summary.csv").set_index(["dataset", "variant", "model"])
    cov = s.loc["covertype-grouped"]
    text = DOC.read_text()
    co = _bullet(text, "* **covertype-grouped: partly, by the cut points.**")
    claims = _claims_row(text, "Tables 5 and 6")
    generative = ["A1JE", "A2JE", "A3JE", "A1DE", "A2DE"]
    gap = _ceil4(max(abs(cov.loc[("whole", m), "zero_one"] - cov.loc[("whole", m), "paper_zero_one"])
                     for m in generative))
    assert f"all five generative models are within {gap} of the paper's 0-1 loss" in co
    assert f"every generative model is within {gap}," in claims

    def two(variant):
        return "{:.4f}, {:.4f}".format(*(cov.loc[(variant, m), "zero_one"] for m in ("A2JE", "A3JE")))

    assert f"(A2JE {cov.loc[('whole', 'A2JE'), 'zero_one']:.4f}, A3JE {cov.loc[('whole', 'A3JE'), 'zero_one']:.4f})" \
        in co
    assert f"as close ({two('fold_twice')})" in co and f"where the experiment has them ({two('test')})" in co
    d, f = cov.loc[("whole", "DBL1")], cov.loc[("fold", "DBL1")]
    assert abs(d.zero_one - d.paper_zero_one) < abs(f.zero_one - f.paper_zero_one)
    assert f"DBL¹ comes closer ({d.zero_one:.4f} against {d.paper_zero_one:.4f}; {f.zero_one:.4f} from the training " \
           "fold's)" in co
    census = s.loc["census-income"]
    move = _ceil4(max(abs(census.loc[("whole", m), "zero_one"] - census.loc[("fold", m), "zero_one"])
                      for m in generative))
    n = _script("zaidi_dbl_cut_points").cut_counts(pd.read_csv(CUTS / "cuts.csv"), "census-income")
    assert f"cut points ({n['whole']:.0f} against {n['fold']:.1f} from a training fold) move no model by more than " \
           f"{move}" in co


def test_the_cut_points_summary_is_its_losses():
    """``cut_points/summary.csv`` is ``zaidi_dbl_cut_points.summary`` of the committed ``losses.csv``: 10 folds a row,
    the paper's Tables 5 and 6 beside."""
    zc = _script("zaidi_dbl_cut_points")

    again = zc.summary(pd.read_csv(CUTS / "losses.csv"))
    pd.testing.assert_frame_equal(again, pd.read_csv(CUTS / "summary.csv"), check_dtype=False)
    assert (again["folds"] == len(zc.FOLDS)).all()
    assert {(d, m, v) for d, models, variants in zc.RUNS for m in models for v in variants} == \
        set(zip(again["dataset"], again["model"], again["variant"]))


def test_the_first_big_n2_folds_are_folds_csv():
    """census-income's DBL² and LR² folds in so far, as Tables 5 and 6's paragraph cites them: how many, their mean
    0-1 loss and range, iterations and CPU hours from ``store_big_nov29/folds.csv``; Table 5's cell counts them, and
    the claims row says how many."""
    folds = pd.read_csv(BIG / "folds.csv").query("dataset == 'census-income' and status == 'ok'")
    d, lr = (folds[folds["model"] == m] for m in ("DBL2", "LR2"))
    text = " ".join(DOC.read_text().split())
    paper = pd.read_csv(CSV / "tables5_6.csv").set_index(["dataset", "metric", "model"])
    cell = paper.loc[("census-income", "zero_one", "DBL2")]
    assert cell.folds == len(d) and 0 < len(d) < 10 and 0 < len(lr) < 10
    at_cap = int((lr["n_iter"] == 10_000).sum())
    assert (f"Of census-income's DBL² and LR² folds, {len(d)} and {len(lr)} of ten are in" in text
            and f"DBL² {d.zero_one.mean():.4f} in their mean against the paper's {cell.paper:.4f} (folds "
                f"{d.zero_one.min():.4f}–{d.zero_one.max():.4f}; {d.n_iter.min():,.0f}–{d.n_iter.max():,.0f} "
                f"iterations, {d.train_cpu.mean() / 3600:.2f} CPU h a fold), LR² {lr.zero_one.mean():.4f} (folds "
                f"{lr.zero_one.min():.4f}–{lr.zero_one.max():.4f}; {at_cap} of {len(lr)} at the 10,000-iteration "
                f"cap, {lr.train_cpu.mean() / 3600:.2f} CPU h a fold)" in text)
    assert f"(but {len(d)} folds of DBL² on census-income)" in _claims_row(DOC.read_text(), "DBLⁿ wins on Big data")


def test_the_pull_toward_one_and_toward_anje_is_its_report():
    """§4.4's run (``toward_one/``): the report's W-D-L tables are ``wdl_table`` on its committed ``summary.csv``, its
    A2JE equals the rerun's bit for bit (the same folds), and each count the prose and the claims row cite, with its
    p, is the CSVs'."""
    from bncbench.report.stats import wdl_table

    out = CSV.parent / "toward_one"
    summary = pd.read_csv(out / "summary.csv")
    tables = pd.concat([pd.read_csv(f) for f in sorted((out / "tables").glob("toward_*.csv"))])
    pairs = sorted({(a, b) for a, b in zip(tables.model_a, tables.model_b)})
    again = wdl_table(summary, pairs, sorted(set(tables.metric)), subsets=["Little"])
    key = ["metric", "model_a", "model_b"]
    merged = tables.merge(again, on=key, suffixes=("", "_again"))
    assert len(merged) == len(tables) == len(again)
    for c in ("wins", "draws", "losses"):
        assert (merged[c] == merged[f"{c}_again"]).all()
    rerun = pd.read_csv(CSV / "summary.csv").query("model == 'A2JE'").set_index("dataset")
    ours = summary.query("model == 'A2JE'").set_index("dataset")
    assert len(ours) == 36 and (ours["zero_one"] == rerun.loc[ours.index, "zero_one"]).all()
    w = tables.set_index(key)
    text = " ".join(DOC.read_text().split())
    section = text.split("**§4.4's large penalty toward 1, on the smaller datasets**")[1].split("## Tables 5 and 6")[0]

    def cited(a, b, metric):
        r = w.loc[(metric, a, b)]
        return f"{r.wins}/{r.draws}/{r.losses}, p {'< 0.001' if r.p < 0.001 else f'= {r.p:.3f}'}"

    for a, b, metric in [("DBL2-gen", "DBL2", "zero_one"), ("DBL2-gen-lam0.1", "DBL2", "zero_one"),
                         ("DBL2-gen-lam0.1", "DBL2", "rmse"), ("DBL2-lam1", "DBL2", "zero_one"),
                         ("DBL2-lam1", "DBL2", "rmse"), ("DBL2-gen-lam1", "DBL2-lam1", "zero_one"),
                         ("DBL2-gen-lam1", "DBL2-lam1", "rmse"), ("DBL2-one-lam1", "DBL2-lam1", "rmse"),
                         ("DBL2-one-lam0.1", "DBL2", "zero_one"), ("LR2-gen-lam1", "DBL2", "zero_one"),
                         ("DBL2-gen-lam1", "DBL2", "zero_one"), ("LR2-gen-lam1", "DBL2", "rmse")]:
        assert cited(a, b, metric) in section, (a, b, metric)
    for a, b in [("DBL2-gen", "DBL2"), ("DBL2-gen-lam0.1", "DBL2"), ("DBL2-gen-lam1", "DBL2"),
                 ("DBL2-gen-lam10", "DBL2"), ("DBL2-lam1", "DBL2")]:  # "every one of these has the lower variance"
        r = w.loc[("variance", a, b)]
        assert r.wins > r.losses and r.p <= 0.05
    one = [w.loc[("rmse", f"DBL2-one{lam}", "DBL2")] for lam in ("", "-lam0.1", "-lam1", "-lam10")]
    assert all(r.wins < r.losses and r.p <= 0.05 for r in one)  # "raises RMSE at every one"
    assert all(w.loc[("zero_one", f"DBL2-one{lam}", "DBL2")].p > 0.05 for lam in ("", "-lam0.1", "-lam1", "-lam10"))
    vs = w.loc[("rmse", "DBL2-one-lam10", "A2JE")]
    assert (vs.wins, vs.draws, vs.losses) == (0, 0, 36) and "(0/0/36)" in section
    claim = _claims_row(DOC.read_text(), "§4.4: on smaller datasets")
    for a, b in [("DBL2-gen-lam0.1", "DBL2"), ("DBL2-lam1", "DBL2")]:
        r = w.loc[("zero_one", a, b)]
        assert f"{r.wins}/{r.draws}/{r.losses}, p = {r.p:.3f}" in claim
