"""The six datasets registered after the first registry (nursery, pendigits, vote, covertype,
census-income, kddcup): shapes and class counts written down from the UCI documentation, not read
from the registry. Real-data tests are skipped, with the reason, without ``BNCBENCH_DATA_DIR``."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest

from bncbench.data import uci


def _shared_dir() -> Path | None:
    d = os.environ.get("BNCBENCH_DATA_DIR")
    return Path(d) if d and Path(d).is_dir() else None


# name: rows, attributes (without the class), classes, has missing values, class counts in label order
# (UCI: nursery.names, pendigits.names, house-votes-84.names, covtype.info, census-income.names
# (train 187,141 / 12,382 + test 93,576 / 6,186), kddcup 10 %: smurf / neptune / normal)
EXPECTED = {
    "nursery": (12960, 8, 5, False, {"not_recom": 4320, "recommend": 2, "very_recom": 328, "priority": 4266,
                                    "spec_prior": 4044}),
    "pendigits": (10992, 16, 10, False, dict(zip("0123456789", (1143, 1143, 1144, 1055, 1144, 1055, 1056, 1142,
                                                                1055, 1055)))),
    "vote": (435, 16, 2, True, {"democrat": 267, "republican": 168}),
    "covertype": (581012, 54, 7, False, dict(zip("1234567", (211840, 283301, 35754, 2747, 9493, 17367, 20510)))),
    "census-income": (299285, 40, 2, True, {"- 50000.": 187141 + 93576, "50000+.": 12382 + 6186}),
    "kddcup": (494021, 41, 23, False, {"smurf.": 280790, "neptune.": 107201, "normal.": 97278}),
}


@functools.lru_cache(maxsize=None)
def _load(name: str):
    e = uci.load_registry()[name]
    if not (_shared_dir() / e["file"]).is_file():
        pytest.skip(f"{e['file']} not in BNCBENCH_DATA_DIR")
    return uci.load_uci(name)


@pytest.mark.data
@pytest.mark.skipif(_shared_dir() is None, reason="BNCBENCH_DATA_DIR is unset or missing: real UCI data not available")
@pytest.mark.parametrize("name", list(EXPECTED))
def test_new_entry_shape_and_class_counts(name):
    rows, attributes, classes, missing, counts = EXPECTED[name]
    ds = _load(name)
    assert (ds.n_instances, ds.n_attributes, ds.n_classes) == (rows, attributes, classes)
    assert bool(ds.missing_mask.any()) is missing
    got = dict(zip(ds.classes, np.bincount(ds.y, minlength=ds.n_classes).tolist()))
    assert {k: got[k] for k in counts} == counts


@pytest.mark.data
@pytest.mark.skipif(_shared_dir() is None, reason="BNCBENCH_DATA_DIR is unset or missing: real UCI data not available")
def test_new_entries_parse_options():
    cov = _load("covertype")
    names = (_shared_dir() / "covtype.columns.txt").read_text().split()
    assert cov.attribute_names == names[:-1]  # the class Cover_Type is the 55th name
    census = _load("census-income")
    assert "instance_weight" not in census.attribute_names  # census-income.names: not an attribute
    assert int(census.numeric_mask.sum()) == 7  # 7 continuous, 33 nominal
    assert census.X["year"].cat.categories.tolist() == ["94", "95"]
    kdd = _load("kddcup")
    nominal = [c for c, num in zip(kdd.attribute_names, kdd.numeric_mask) if not num]
    assert nominal == ["protocol_type", "service", "flag", "land", "logged_in", "is_host_login", "is_guest_login"]
    vote = _load("vote")
    assert int(vote.X.isna().to_numpy().sum()) == 392  # the unquoted ? of house-votes-84


def test_arff_values_padded_with_blanks():
    """pendigits.arff writes ' 8' for the declared value 8 (scipy.io.arff rejects it); we strip blanks."""
    t = uci.parse_arff("@relation p\n@attribute a numeric\n@attribute class {0,1,8}\n@data\n 47, 8\n  0, 1\n", "p")
    assert t.frame["class"].astype(str).tolist() == ["8", "1"]
    assert t.frame["a"].tolist() == [47.0, 0.0]
