"""docs/reproductions/zaidi_dbl_paper.py: the paper's W-D-L cells beside one or more reports'."""

import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "docs" / "reproductions"))
import zaidi_dbl_paper as paper  # noqa: E402


def report(tmp_path: Path, name: str, dbl3_little_bias: tuple) -> Path:
    """A report whose Tables 2-4 hold DBL3's Little-bias cell of every pair; the rest not run (n = 0)."""
    root = tmp_path / name
    (root / "tables").mkdir(parents=True)
    (root / "summary.csv").write_text("dataset,model\n")
    for table, pairs in paper.TABLES.items():
        rows = []
        for a, b in pairs:
            for subset, metric in paper.ROWS:
                w, d, l, p = dbl3_little_bias if (a, subset, metric) == ("DBL3", "Little", "bias") else (0, 0, 0, 1.0)
                rows.append({"model_a": a, "model_b": b, "subset": subset, "metric": metric, "n": w + d + l,
                             "wins": w, "draws": d, "losses": l, "p": p, "significant": p <= 0.05})
        pd.DataFrame(rows).to_csv(root / "tables" / f"{table}.csv", index=False)
    return root


def lines(text: str, start: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith(start)]


def test_a_cell_that_differs_from_the_baseline_is_marked_and_an_equal_one_is_not(tmp_path):
    first = report(tmp_path, "first", (10, 1, 2, 0.039))
    same = report(tmp_path, "same", (10, 1, 2, 0.039))
    moved = report(tmp_path, "moved", (11, 1, 2, 0.022))
    text = paper.wdl_section({"first": first, "same": same, "moved": moved},
                             against={"same": "first", "moved": "first"}, only="DBL3")
    assert lines(text, "| comparison")[0][4:] == ["first", "same", "moved"]
    bias = lines(text, "| DBL3 vs A3JE | Little | Bias")
    assert len(bias) == 1
    assert bias[0][3] == "**58/2/15 (<0.001)**"                       # the paper's Table 2 cell
    assert bias[0][4:] == ["**10/1/2 (0.039)**", "**10/1/2 (0.039)**", "**11/1/2 (0.022)** ·"]
    big = lines(text, "| DBL3 vs A3JE | Big | RMSE")[0]
    assert big[4:] == ["–", "–", "–"]                                 # not run anywhere: no mark
    assert not lines(text, "| DBL2 vs")                                # --only DBL3


def test_the_cli_refuses_a_model_the_tables_do_not_compare(tmp_path, capsys):
    first = report(tmp_path, "first", (10, 1, 2, 0.039))
    assert paper.main(["--report", str(first), "--only", "DBL4"]) == 2
    assert "DBL2 and DBL3" in capsys.readouterr().err
    assert paper.main(["--report", str(first), "--baseline-10k", str(first)]) == 2
