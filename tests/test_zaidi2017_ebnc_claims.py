"""docs/reproductions/zaidi2017_ebnc_claims.py: the claims both ways come from the committed reports, and
zaidi2017.md shows them as the script computes them."""

import sys
from pathlib import Path

import pandas as pd
from conftest import assert_same_output

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "docs" / "reproductions"
sys.path.insert(0, str(HERE))
import zaidi2017_ebnc_claims as claims  # noqa: E402


def test_committed_claims_are_what_the_reports_give(tmp_path):
    assert claims.main(HERE, tmp_path) == 0
    for name in ("claims.csv", "generative.csv", "datasets.txt"):
        assert_same_output(tmp_path / name, HERE / "zaidi2017_ebnc_claims" / name)
    assert len((tmp_path / "datasets.txt").read_text().split()) == 62


def test_the_doc_shows_table4_as_computed():
    table = claims.table4_markdown(pd.read_csv(HERE / "zaidi2017_ebnc_claims" / "claims.csv"))
    assert table in (HERE / "zaidi2017.md").read_text()


def test_labels_name_the_reports_models():
    for mode, report in (("default", "zaidi2017_subset"), ("ebnc", "zaidi2017_ebnc")):
        models = set(pd.read_csv(HERE / report / "summary.csv")["model"])
        assert {claims.label(mode, s, p) for s in claims.STRUCTURES for p in claims.PARAMS} <= models


def test_the_doc_shows_the_times_and_iterations_as_computed():
    table = claims.timing_markdown(pd.read_csv(HERE / "zaidi2017_ebnc_claims" / "claims.csv"))
    assert table in (HERE / "zaidi2017.md").read_text()
