"""Identifier attributes (a distinct value on nearly every row): detection, the one-line warning,
``drop_identifiers``, and why it matters (TAN with an identifier is naive Bayes)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import run_cli

from bncbench import BNClassifier
from bncbench.data import uci
from bncbench.data.cli import main as data_main
from bncbench.data.identifiers import IDENTIFIER_MIN_ROWS, IDENTIFIER_SHARE, find_identifiers
from bncbench.errors import IdentifierWarning

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BNCBENCH_CACHE_DIR", str(tmp_path / "cache"))


def _identifier_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, IdentifierWarning)]


def splice_like(path: Path, n: int = 200, batch_values: int | None = None) -> Path:
    """An ARFF like splice: a string ``Instance_name`` unique per row, then a, b, c and the class.

    b copies a (90 %), a follows the class (80 %), c is noise; ``batch_values`` adds a nominal
    ``batch`` column with that many distinct values (a near-identifier when just below 0.9 n).
    """
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    b = np.where(rng.random(n) < 0.9, a, 1 - a)
    c = rng.integers(0, 3, n)
    head = ["@relation splice-like", "@attribute Instance_name string", "@attribute a {0,1}",
            "@attribute b {0,1}", "@attribute c {0,1,2}"]
    if batch_values:
        head.append("@attribute batch string")
    head += ["@attribute class {EI,N}", "@data"]
    rows = []
    for i in range(n):
        batch = f",B{i % batch_values}" if batch_values else ""
        rows.append(f"'HUMAGLOBIN-{i:04d}',{a[i]},{b[i]},{c[i]}{batch},{'EI' if y[i] else 'N'}")
    path.write_text("\n".join(head + rows) + "\n")
    return path


# --------------------------------------------------------------------------- the definition


def test_definition_hand_computed():
    assert (IDENTIFIER_SHARE, IDENTIFIER_MIN_ROWS) == (0.9, 20)
    n = 20
    codes = {
        "id": np.arange(20),                                  # 20 distinct on 20 rows
        "at_threshold": np.r_[np.arange(18), 0, 1],           # 18 = 0.9 * 20: an identifier
        "below": np.r_[np.arange(17), 0, 1, 2],               # 17 < 18
        "with_missing": np.r_[np.arange(18), -1, -1],         # 18 distinct present values, 2 missing
        "missing_code": np.r_[np.arange(17), 17, 17, 17],     # code 17 = the reserved missing code of card 17
    }
    cards = {"id": 20, "at_threshold": 18, "below": 17, "with_missing": 18, "missing_code": 17}
    found = find_identifiers(((k, v, cards[k]) for k, v in codes.items()), n)
    assert found == {"id": 20, "at_threshold": 18, "with_missing": 18}
    # 19 rows: not checked at all
    assert find_identifiers([("id", np.arange(19), 19)], 19) == {}
    # a column with fewer values than 0.9 n is skipped without reading it
    assert find_identifiers([("few", None, 17)], 20) == {}


# --------------------------------------------------------------------------- loaders


def test_load_file_warns_once_naming_the_column(tmp_path):
    p = splice_like(tmp_path / "splice.arff")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ds = uci.load_file(p, "class")
    (msg,) = _identifier_warnings(rec)
    assert "attribute 'Instance_name' (200 distinct values on 200 rows) is an identifier" in msg
    assert msg.startswith(f"{p}: ") and "\n" not in msg and "drop_identifiers: true" in msg
    assert ds.attribute_names == ["Instance_name", "a", "b", "c"]  # kept by default, as the papers did
    assert ds.meta["identifiers"] == {"Instance_name": 200} and not ds.meta["identifiers_dropped"]


def test_drop_identifiers_removes_it_without_a_warning(tmp_path):
    p = splice_like(tmp_path / "splice.arff")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ds = uci.load_file(p, "class", drop_identifiers=True)
        again = uci.load_file(p, "class", drop_identifiers=True)  # from the parse cache
    assert not _identifier_warnings(rec)
    assert ds.attribute_names == again.attribute_names == ["a", "b", "c"]
    assert ds.meta["identifiers"] == {"Instance_name": 200} and ds.meta["identifiers_dropped"]


def test_near_identifier_and_numeric_unique_columns_do_not_warn(tmp_path):
    # 179 batch values on 200 rows: 0.895 n, just below the threshold (180); Instance_name dropped
    p = splice_like(tmp_path / "near.arff", batch_values=179)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ds = uci.load_file(p, "class", drop_identifiers=True)
    assert not _identifier_warnings(rec)
    assert ds.attribute_names == ["a", "b", "c", "batch"] and ds.meta["identifiers"] == {"Instance_name": 200}
    # 180 values: at the threshold, flagged together with Instance_name, in one warning
    p = splice_like(tmp_path / "two.arff", batch_values=180)
    with pytest.warns(IdentifierWarning, match=r"attributes 'Instance_name' \(200 .*\), 'batch' \(180 "):
        uci.load_file(p, "class")
    # a numeric column unique on every row (a measurement) is discretized by MDL
    csv = tmp_path / "num.csv"
    csv.write_text("m,x,cls\n" + "".join(f"{np.sin(i):.6f},{i % 3},{'ab'[i % 2]}\n" for i in range(50)))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ds = uci.load_file(csv, "cls")
    assert not _identifier_warnings(rec) and ds.numeric_mask.tolist() == [True, True]
    # a numeric row index is a row identifier (issue #36: tests/test_reliability.py)
    csv.write_text("row,x,cls\n" + "".join(f"{i},{i % 3},{'ab'[i % 2]}\n" for i in range(50)))
    with pytest.warns(IdentifierWarning, match=r"numeric attribute 'row' \(a permutation of the row numbers"):
        uci.load_file(csv, "cls", cache=False)


def test_path_dataset_option_and_the_run_fingerprint(tmp_path):
    from bncbench.data import specs

    p = splice_like(tmp_path / "splice.arff")
    keep = {"name": "sp", "source": "file", "path": str(p), "class_column": "class"}
    drop = {**keep, "drop_identifiers": True}
    with pytest.warns(IdentifierWarning, match="'Instance_name'"):
        assert specs.load(keep).attribute_names[0] == "Instance_name"
    assert specs.load(drop).attribute_names == ["a", "b", "c"]
    assert specs.spec_fingerprint(keep) != specs.spec_fingerprint(drop)


def _registry_with_identifier(tmp_path: Path, drop: bool) -> tuple[Path, Path]:
    ddir = tmp_path / "data"
    ddir.mkdir(exist_ok=True)
    f = splice_like(ddir / "splice.arff")
    entry = {"file": "splice.arff", "format": "arff", "class_column": "class",
             "expected": {"rows": 200, "attributes": 3 if drop else 4, "classes": 2},
             "bytes": f.stat().st_size, "sha256": uci.sha256_file(f), "paper": {"name": "Splice-like"}}
    if drop:
        entry["drop_identifiers"] = True
    reg = tmp_path / f"registry-{drop}.yaml"
    reg.write_text(yaml.safe_dump({"datasets": {"splice": entry}}, sort_keys=False))
    return ddir, reg


def test_registered_entry_and_data_show(tmp_path, capsys):
    ddir, reg = _registry_with_identifier(tmp_path, drop=False)
    with pytest.warns(IdentifierWarning, match="set drop_identifiers: true in the 'splice' registry entry"):
        uci.load_uci("splice", ddir, registry=reg)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert data_main(["show", "splice", "--data-dir", str(ddir), "--registry", str(reg)]) == 0
    assert not _identifier_warnings(rec)  # show prints it instead
    out = capsys.readouterr().out
    assert "Instance_name                nominal    200        0  identifier" in out
    assert "attribute 'Instance_name' (200 distinct values on 200 rows) is an identifier: kept" in out
    ddir, reg = _registry_with_identifier(tmp_path, drop=True)
    assert uci.load_uci("splice", ddir, registry=reg).attribute_names == ["a", "b", "c"]
    assert data_main(["show", "splice", "--data-dir", str(ddir), "--registry", str(reg)]) == 0
    out = capsys.readouterr().out
    assert "is an identifier: dropped (drop_identifiers)" in out and "  identifier\n" not in out


def test_cli_prints_the_warning_as_one_line(tmp_path):
    ddir, reg = _registry_with_identifier(tmp_path, drop=False)
    res = run_cli(["data", "check", "--data-dir", str(ddir), "--registry", str(reg)], cwd=tmp_path,
                  env_extra={"BNCBENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert res.returncode == 0, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bncbench: warning: ") and "'Instance_name'" in lines[0]
    assert "Traceback" not in res.stderr and "warnings.warn" not in res.stderr


# --------------------------------------------------------------------------- BNClassifier


def test_fit_warns_on_tables_not_on_code_arrays():
    n = 60
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({"id": [f"row{i}" for i in range(n)], "a": np.where(y == 1, "u", "v"),
                      "x": rng.random(n)})  # x: numeric, unique on every row, discretized
    with pytest.warns(IdentifierWarning, match=r"^X: attribute 'id' \(60 distinct values on 60 rows\)") as rec:
        BNClassifier().fit(X, y)
    assert len(_identifier_warnings(rec)) == 1
    X.loc[[3, 4], "id"] = None  # 58 present values, 58 >= 0.9 * 60 = 54: still an identifier
    with pytest.warns(IdentifierWarning, match=r"'id' \(58 distinct values"):
        BNClassifier().fit(X, y)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        BNClassifier().fit(X.drop(columns="id"), y)
        codes = np.c_[np.arange(n), y]  # integer code arrays are the caller's encoding
        BNClassifier().fit(codes, y)
        BNClassifier().fit(X[["a"]].assign(b=[f"b{i % 50}" for i in range(n)]), y)  # 50 of 60 < 54
    assert not _identifier_warnings(rec)
    # an all-integer table is read as codes: every column is nominal
    with pytest.warns(IdentifierWarning, match="'code_id'"):
        BNClassifier().fit(pd.DataFrame({"code_id": np.arange(n), "a": y}), y)


def test_tan_with_an_identifier_is_naive_bayes_and_drop_gives_a_real_tree(tmp_path):
    p = splice_like(tmp_path / "splice.arff")
    with pytest.warns(IdentifierWarning):
        kept = uci.load_file(p, "class")
    train, test = np.arange(150), np.arange(150, 200)  # the test rows' identifiers are never seen
    with pytest.warns(IdentifierWarning):
        tan = BNClassifier(structure="tan").fit(kept.X.iloc[train], kept.y[train])
    # the failure: the identifier (attribute 0) is every other attribute's parent ...
    assert tan.structure_ == [(), (0,), (0,), (0,)]
    assert tan.n_parameters_ > 1000  # a parameter per (training identifier, class, value) of a, b, c
    # ... so on new rows every factor backs off to the class alone: exactly naive Bayes
    with pytest.warns(IdentifierWarning):
        nb = BNClassifier(structure="nb").fit(kept.X.iloc[train], kept.y[train])
    np.testing.assert_allclose(tan.predict_proba(kept.X.iloc[test]), nb.predict_proba(kept.X.iloc[test]))

    dropped = uci.load_file(p, "class", drop_identifiers=True)
    tan = BNClassifier(structure="tan").fit(dropped.X.iloc[train], dropped.y[train])
    assert dropped.attribute_names == ["a", "b", "c"]
    parents = tan.structure_
    # a real tree over a, b, c: one root, every other attribute has one attribute parent, and the
    # edge a-b (b copies a) is in it
    assert sorted(len(q) for q in parents) == [0, 1, 1]
    assert parents[1] == (0,) or parents[0] == (1,)
    assert tan.n_parameters_ < 20


# --------------------------------------------------------------------------- the registry's own identifiers


def _shared_dir() -> Path | None:
    d = os.environ.get("BNCBENCH_DATA_DIR")
    return Path(d) if d and Path(d).is_dir() else None


@pytest.mark.data
@pytest.mark.skipif(_shared_dir() is None, reason="BNCBENCH_DATA_DIR is unset or missing: real UCI data not available")
def test_columns_the_registry_drops_are_identifiers():
    """yeast's sequence names (1462 values on 1484 rows) are dropped by its entry; without the drop they warn."""
    e = uci.load_registry()["yeast"]
    if not (_shared_dir() / e["file"]).is_file():
        pytest.skip(f"{e['file']} not in BNCBENCH_DATA_DIR")
    with pytest.warns(IdentifierWarning, match=r"'col1' \(1462 distinct values on 1484 rows\)"):
        uci.load_file(_shared_dir() / e["file"], "last", fmt="whitespace", header=False)
