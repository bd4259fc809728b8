"""The six datasets registered after the first registry (nursery, pendigits, vote, covertype,
census-income, kddcup): shapes and class counts written down from the UCI documentation, not read
from the registry. Real-data tests are skipped, with the reason, without ``BNCBENCH_DATA_DIR``."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from bncbench.data import uci
from bncbench.errors import BNCBenchError


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


# --------------------------------------------------------------------------- groups


def test_groups_of_the_new_entries():
    g = uci.groups()
    new = set(EXPECTED)
    # Zaidi et al. 2017, Table 3 has all but Kddcup; its Big set (> 10,000 rows) is big ∩ zaidi2017: the
    # paper's twelve minus Localization, which the shared data lacks
    assert new - set(g["zaidi2017"]) == {"kddcup"}
    assert set(g["big"]) & set(g["zaidi2017"]) == {
        "poker-hand", "covertype", "census-income", "connect-4", "shuttle", "adult", "letter", "magic",
        "nursery", "sign", "pendigits"}
    # Petitjean et al. 2018, Table 6 stops at Connect-4 (67,557 rows)
    assert new & set(g["petitjean2018"]) == {"nursery", "pendigits", "vote"}
    # the deep-broad paper's Table 1 lists every registered dataset, covertype as its variant with the
    # wilderness and soil indicators grouped (the paper's results are that one's); Big: > 100,000 rows in our copies
    assert g["zaidi_dbl"] == [n if n != "covertype" else "covertype-grouped" for n in g["all"]]
    assert g["zaidi_dbl_big"] == ["census-income", "covertype-grouped", "kddcup"]
    assert "kddcup" in g["big"] and "vote" in g["little"]
    assert sorted(g["big"] + g["little"]) == sorted(g["all"])
    assert set(g) == set(uci.GROUP_NAMES)


def test_paper_tables_and_the_paper_big_group(tmp_path):
    """A paper's table in the entries or in the `papers:` section; zaidi_dbl_big: > 100,000 rows in our copy."""
    def entry(rows):
        return {"file": "x.arff", "expected": {"rows": rows},
                "paper": {"name": "X", "zaidi2017": {"table": 3, "rows": rows, "attributes_incl_class": 3,
                                                     "classes": 2} if rows > 150_000 else None}}

    shape = {"table": 1, "rows": 5_209_000, "attributes_incl_class": 41, "classes": 40}
    reg = {"papers": {"zaidi_dbl": {"at": shape, "above": shape}},
           "datasets": {"at": entry(100_000), "above": entry(100_001), "other": entry(200_000)}}
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(reg, sort_keys=False))
    g = uci.groups(path)
    assert g["zaidi_dbl"] == ["at", "above"] and g["zaidi2017"] == ["other"]
    assert g["zaidi_dbl_big"] == ["above"]  # our copy's rows, not the paper's
    assert g["big"] == ["at", "above", "other"] and g["little"] == []
    assert uci.resolve_names(["zaidi_dbl_big", "other"], path) == ["above", "other"]
    assert list(uci.paper_shapes("above", path)) == ["zaidi_dbl"]
    assert uci.paper_shapes("other", path)["zaidi2017"]["table"] == 3
    for papers, error in (({"nosuch": {"at": shape}}, "'papers' has 'nosuch'"),
                          ({"zaidi_dbl": {"gone": shape}}, "paper 'zaidi_dbl' names unknown dataset 'gone'")):
        path.write_text(yaml.safe_dump({**reg, "papers": papers}, sort_keys=False))
        with pytest.raises(BNCBenchError, match=error):
            uci.groups(path)


def test_real_registry_paper_shapes():
    """The deep-broad paper's Table 1 as printed (its Att column counts Kddcup's attributes without the label)."""
    assert uci.paper_shapes("kddcup") == {"zaidi_dbl": {"table": 1, "rows": 5209000, "attributes_incl_class": 41,
                                                        "classes": 40}}
    assert list(uci.paper_shapes("vote")) == ["zaidi2017", "petitjean2018", "zaidi_dbl"]
    assert list(uci.paper_shapes("covertype")) == ["zaidi2017"]
    assert uci.paper_shapes("covertype-grouped") == {"zaidi_dbl": {"table": 1, "rows": 581012,
                                                                   "attributes_incl_class": 55, "classes": 7}}
    assert uci.paper_shapes("poker-hand")["zaidi_dbl"]["attributes_incl_class"] == 10  # Zaidi 2017: 11
