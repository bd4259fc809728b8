"""Registry, loaders, cache and the ``data`` CLI (fast; real-data checks are marked ``data``)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import os
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from bncbench.data import table, uci
from bncbench.data.cli import main as data_main
from bncbench.data.locate import entry_files
from bncbench.errors import BNCBenchError

ROOT = Path(__file__).resolve().parents[1]

LEGACY_ARFF = """% a legacy Weka header
@RELATION 'legacy test'

@ATTRIBUTE Clump_Thickness INTEGER [1,10]
@attribute 'cell size' real
@attribute colour {red, 'light blue', 'a,b', '?'}
@attribute Class { benign, malignant}

@DATA
% comment inside data
5, 1.5, red, benign
3,?,'light blue',malignant

1 , 2 , 'a,b' , benign
?, 4e-1, ?, malignant
7,0.25,'?',benign
"""


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BNCBENCH_CACHE_DIR", str(tmp_path / "cache"))


# --------------------------------------------------------------------------- ARFF parsing


def test_parse_arff_legacy_header_quotes_and_missing():
    t = uci.parse_arff(LEGACY_ARFF, "legacy.arff")
    assert t.relation == "legacy test"
    assert [a.name for a in t.attributes] == ["Clump_Thickness", "cell size", "colour", "Class"]
    assert [a.kind for a in t.attributes] == ["numeric", "numeric", "nominal", "nominal"]
    df = t.frame
    assert df.shape == (5, 4)
    assert df["Clump_Thickness"].dtype == np.float64
    np.testing.assert_array_equal(df["Clump_Thickness"].isna(), [False, False, False, True, False])
    assert df["cell size"].iloc[3] == pytest.approx(0.4)
    assert list(df["colour"].cat.categories) == ["red", "light blue", "a,b", "?"]
    # unquoted ? is missing; quoted '?' is a declared value
    assert df["colour"].astype(object).tolist()[:3] == ["red", "light blue", "a,b"]
    assert pd.isna(df["colour"].iloc[3])
    assert df["colour"].iloc[4] == "?"


def test_parse_arff_malformed_line_reports_line_number():
    bad = LEGACY_ARFF.replace("1 , 2 , 'a,b' , benign", "1 , 2 , benign")
    with pytest.raises(BNCBenchError, match=r"bad\.arff, line 14: expected 4 values, found 3"):
        uci.parse_arff(bad, "bad.arff")


def test_parse_arff_undeclared_value_and_bad_number():
    with pytest.raises(BNCBenchError, match=r"x\.arff, line 12.*undeclared value 'green'"):
        uci.parse_arff(LEGACY_ARFF.replace("3,?,'light blue'", "3,?,green"), "x.arff")
    with pytest.raises(BNCBenchError, match=r"x\.arff, line 11.*numeric but has value 'abc'"):
        uci.parse_arff(LEGACY_ARFF.replace("5, 1.5, red", "5, abc, red"), "x.arff")
    with pytest.raises(BNCBenchError, match="no @data"):
        uci.parse_arff(LEGACY_ARFF.split("@DATA")[0], "x.arff")


def test_load_file_arff_unknown_class_value(tmp_path):
    p = tmp_path / "t.arff"
    p.write_text(LEGACY_ARFF.replace("7,0.25,'?',benign", "7,0.25,'?',unsure"))
    with pytest.raises(BNCBenchError, match=r"t\.arff, line 16.*'unsure'"):
        uci.load_file(p, "Class")
    p.write_text(LEGACY_ARFF)
    ds = uci.load_file(p, "Class")
    assert ds.classes == ["benign", "malignant"]
    assert ds.y.tolist() == [0, 1, 0, 1, 0]
    assert ds.n_attributes == 3


def test_load_file_csv_types_header_and_errors(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("a,b,c,label\n1,x,2.5,yes\n2,y,?,no\n3,x,1,yes\n")
    ds = uci.load_file(p, "label")
    assert ds.X["a"].dtype == np.float64 and ds.X["c"].dtype == np.float64
    assert isinstance(ds.X["b"].dtype, pd.CategoricalDtype)
    assert np.isnan(ds.X["c"].iloc[1])
    assert ds.classes == ["no", "yes"]
    ds2 = uci.load_file(p, "label", nominal=["a"])
    assert list(ds2.X["a"].cat.categories) == ["1", "2", "3"]
    # headerless, gzipped, class first
    g = tmp_path / "t.data.gz"
    g.write_bytes(gzip.compress(b"A 1 2\nB 3 4\n\nA 5 6\n"))
    ds3 = uci.load_file(g, "first", fmt="whitespace")
    assert ds3.attribute_names == ["col2", "col3"] and ds3.classes == ["A", "B"]
    # short row -> malformed line with its number
    p.write_text("a,b,c,label\n1,x,2.5,yes\n2,y,no\n")
    with pytest.raises(BNCBenchError, match=r"t\.csv, line 3: expected 4 fields, found 3"):
        uci.load_file(p, "label")


# --------------------------------------------------------------------------- registry + real-file errors


def _small_registry(tmp_path: Path) -> tuple[Path, Path]:
    """A data dir holding one ARFF and one CSV, and a registry describing them."""
    ddir = tmp_path / "data"
    ddir.mkdir()
    arff = ddir / "toy.arff"
    arff.write_text(LEGACY_ARFF)
    csvf = ddir / "toy2.csv.gz"
    csvf.write_bytes(gzip.compress(b"id,v,cls\n1,0.5,3\n2,1.5,9\n3,2.5,12\n4,?,10\n"))
    reg = {
        "groups": {"smoke": ["toy"]},
        "datasets": {
            "toy": {
                "file": "toy.arff", "format": "arff", "class_column": "Class",
                "expected": {"rows": 5, "attributes": 3, "classes": 2},
                "bytes": arff.stat().st_size, "sha256": uci.sha256_file(arff),
                "provenance": {"source": "hand-written fixture", "notes": ""},
                "paper": {"name": "Toy", "zaidi2017": {"table": 3, "rows": 5, "attributes_incl_class": 4, "classes": 2}},
                "differences": [],
            },
            "toy2": {
                "file": "toy2.csv.gz", "format": "csv", "gzip": True, "header": True, "class_column": "cls",
                "drop_columns": ["id"], "missing": ["?"], "types": {"default": "auto"},
                "transforms": [{"op": "bin_class", "upper_bounds": [8, 10], "labels": ["1-8", "9-10", "11+"]}],
                "expected": {"rows": 4, "attributes": 1, "classes": 3},
                "bytes": csvf.stat().st_size, "sha256": uci.sha256_file(csvf),
                "differences": ["binned class"],
            },
        },
    }
    rpath = tmp_path / "registry.yaml"
    rpath.write_text(yaml.safe_dump(reg, sort_keys=False))
    return ddir, rpath


def test_registry_groups_and_transform(tmp_path):
    ddir, rpath = _small_registry(tmp_path)
    g = uci.groups(rpath)
    assert g["all"] == ["toy", "toy2"] and g["smoke"] == ["toy"] and g["big"] == []
    assert uci.resolve_names(["smoke", "toy2", "toy"], rpath) == ["toy", "toy2"]
    ds = uci.load_uci("toy2", ddir, registry=rpath)
    assert ds.classes == ["1-8", "9-10", "11+"]
    assert ds.y.tolist() == [0, 1, 2, 1]
    assert ds.attribute_names == ["v"]
    with pytest.raises(BNCBenchError, match="unknown dataset 'nope'"):
        uci.load_uci("nope", ddir, registry=rpath)


def test_checksum_mismatch_and_truncation(tmp_path):
    ddir, rpath = _small_registry(tmp_path)
    f = ddir / "toy.arff"
    f.write_text(LEGACY_ARFF.replace("benign\n3", "benign\n4"))  # same size, different bytes
    with pytest.raises(BNCBenchError, match=r"toy\.arff has sha256 .* expected"):
        uci.load_uci("toy", ddir, registry=rpath)
    f.write_text(LEGACY_ARFF[: len(LEGACY_ARFF) // 2])
    with pytest.raises(BNCBenchError, match=r"toy\.arff is truncated \(\d+ of \d+ bytes\)"):
        uci.load_uci("toy", ddir, registry=rpath)
    g = ddir / "toy2.csv.gz"
    data = g.read_bytes()
    g.write_bytes(data[:-10])
    with pytest.raises(BNCBenchError, match=r"toy2\.csv\.gz is truncated"):
        uci.load_uci("toy2", ddir, registry=rpath)
    # an unregistered truncated gzip is caught by the decompressor
    with pytest.raises(BNCBenchError, match=r"truncated or corrupt gzip"):
        uci.load_file(g, "cls")


def test_real_file_errors_on_temp_copies(tmp_path):
    """Corrupt copies of a real shared file (skipped without the shared data)."""
    src_dir = os.environ.get("BNCBENCH_DATA_DIR")
    if not src_dir or not (Path(src_dir) / "iris.arff").is_file():
        pytest.skip("BNCBENCH_DATA_DIR not set or iris.arff absent")
    ddir = tmp_path / "d"
    ddir.mkdir()
    shutil.copy(Path(src_dir) / "iris.arff", ddir / "iris.arff")
    assert uci.load_uci("iris", ddir).n_instances == 150
    (ddir / "iris.arff").write_bytes((Path(src_dir) / "iris.arff").read_bytes()[:-500])
    with pytest.raises(BNCBenchError, match="iris.arff is truncated"):
        uci.load_uci("iris", ddir)


# --------------------------------------------------------------------------- cache


def test_cache_round_trip_preserves_dtypes(tmp_path, monkeypatch):
    ddir, rpath = _small_registry(tmp_path)
    a = uci.load_uci("toy", ddir, registry=rpath)
    files = list((tmp_path / "cache").glob("*.parquet"))
    assert len(files) == 1 and files[0].name.startswith(uci.sha256_file(ddir / "toy.arff"))
    assert not list((tmp_path / "cache").glob(".tmp-*"))
    monkeypatch.setattr(table, "parse_file", lambda *a, **k: pytest.fail("cache not used"))
    b = uci.load_uci("toy", ddir, registry=rpath)
    pd.testing.assert_frame_equal(a.X, b.X)
    assert a.classes == b.classes and a.y.tolist() == b.y.tolist()
    assert list(b.X["colour"].cat.categories) == ["red", "light blue", "a,b", "?"]  # order kept
    assert b.X["Clump_Thickness"].dtype == np.float64


def test_cache_keys_are_those_of_the_loader_before_its_split_into_steps(tmp_path, monkeypatch):
    # the key's spec part, as bncbench computed it when one module parsed, typed and cached (commit 81004f5, cache
    # version 1; version 2 reads empty and NaN class values as missing, so its keys differ by design):
    # a registered ARFF, a registered gzipped CSV with transforms, an unregistered CSV and ARFF
    from bncbench.data import cache

    monkeypatch.setattr(cache, "CACHE_VERSION", 1)
    ddir, rpath = _small_registry(tmp_path)
    csv_file, arff_file = tmp_path / "t.csv", tmp_path / "t.arff"
    csv_file.write_text("a,b,c\n1,x,p\n2,y,q\n3,x,p\n")
    arff_file.write_text("@relation t\n@attribute a numeric\n@attribute c {p,q}\n@data\n1,p\n2,q\n")
    uci.load_uci("toy", ddir, registry=rpath)
    uci.load_uci("toy2", ddir, registry=rpath)
    uci.load_file(csv_file, "c")
    uci.load_file(arff_file, "last")
    want = {ddir / "toy.arff": "9caaef477e8900a9", ddir / "toy2.csv.gz": "e4e394fbdbb9fccc",
            csv_file: "ced6727e78f1f88e", arff_file: "74b4382cad67f6e1"}
    got = sorted(f.name for f in (tmp_path / "cache").glob("*.parquet"))
    assert got == sorted(f"{uci.sha256_file(f)}-{key}.parquet" for f, key in want.items())


def test_cache_keeps_unused_categories(tmp_path):
    p = tmp_path / "u.arff"
    p.write_text("@relation u\n@attribute a {z,y,x}\n@attribute c {n,m,k}\n@data\nz,n\ny,m\nz,n\n")
    a = uci.load_file(p, "c")
    b = uci.load_file(p, "c")
    assert a.classes == b.classes == ["n", "m", "k"]
    assert list(b.X["a"].cat.categories) == ["z", "y", "x"]
    pd.testing.assert_frame_equal(a.X, b.X)


# --------------------------------------------------------------------------- CLI


def test_cli_list_check_show(tmp_path, capsys):
    ddir, rpath = _small_registry(tmp_path)
    common = ["--data-dir", str(ddir), "--registry", str(rpath)]
    assert data_main(["list", *common]) == 0
    out = capsys.readouterr().out
    assert "toy " in out and "toy2" in out and "2 present and intact" in out
    assert data_main(["check", *common]) == 0
    out = capsys.readouterr().out
    assert "2 intact, 0 bad, 0 missing" in out
    assert data_main(["show", "toy2", *common]) == 0
    out = capsys.readouterr().out
    for s in ("v ", "numeric", "class distribution", "1-8", "known differences", "binned class"):
        assert s in out
    # missing file: not a failure by itself; a bad file is
    (ddir / "toy2.csv.gz").unlink()
    assert data_main(["check", *common]) == 0
    assert "missing  toy2" in capsys.readouterr().out
    (ddir / "toy.arff").write_text(LEGACY_ARFF + "9,9,red,benign\n")
    assert data_main(["check", *common]) == 1
    out = capsys.readouterr().out
    assert "BAD      toy" in out and "sha256" in out and "bad files: toy.arff" in out
    assert data_main(["list", *common]) == 0
    assert "BAD" in capsys.readouterr().out
    with pytest.raises(BNCBenchError, match="unknown dataset"):
        data_main(["show", "nope", *common])
    with pytest.raises(BNCBenchError):
        data_main(["frobnicate"])


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_root(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield root, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_fetch_from_local_http_server(tmp_path, http_root, capsys):
    root, base = http_root
    payload = LEGACY_ARFF.encode()
    (root / "toy.arff").write_bytes(payload)
    sha = hashlib.sha256(payload).hexdigest()
    ddir = tmp_path / "fetched"
    reg = {"datasets": {
        "good": {"file": "toy.arff", "format": "arff", "class_column": "Class", "sha256": sha,
                 "bytes": len(payload), "url": f"{base}/toy.arff",
                 "expected": {"rows": 5, "attributes": 3, "classes": 2}},
        "wrong": {"file": "wrong.arff", "format": "arff", "class_column": "Class", "sha256": "0" * 64,
                  "url": f"{base}/toy.arff"},
        "nourl": {"file": "x.arff", "format": "arff"},
    }}
    rpath = tmp_path / "reg.yaml"
    rpath.write_text(yaml.safe_dump(reg))
    common = ["--data-dir", str(ddir), "--registry", str(rpath)]
    assert data_main(["fetch", "good", *common]) == 0
    assert (ddir / "toy.arff").read_bytes() == payload
    assert uci.load_uci("good", ddir, registry=rpath).n_instances == 5
    with pytest.raises(BNCBenchError, match="sha256 .* nothing was written"):
        data_main(["fetch", "wrong", *common])
    assert sorted(p.name for p in ddir.iterdir()) == ["toy.arff"]  # no partial file left
    with pytest.raises(BNCBenchError, match="no url"):
        data_main(["fetch", "nourl", *common])


# --------------------------------------------------------------------------- registry <-> configs


def test_dataset_configs_in_sync_with_registry():
    sys.path.insert(0, str(ROOT / "datasets"))
    import make_dataset_configs as mdc

    expected = mdc.expected_configs()
    assert len(expected) == len(uci.load_registry()) + len(uci.groups())
    stale = [f for f, c in expected.items()
             if not (ROOT / "conf" / "dataset" / f).exists() or (ROOT / "conf" / "dataset" / f).read_text() != c]
    assert not stale, f"run datasets/make_dataset_configs.py (stale: {stale})"


def test_registry_is_well_formed():
    reg = uci.load_registry()
    g = uci.groups()
    assert len(reg) == 69  # 64 UCI datasets, covertype-grouped, mnist14 and satimage (variants), mnist and usps
    assert set(g) >= {"all", "big", "little", "zaidi2017", "smoke"}
    assert 4 <= len(g["smoke"]) <= 6
    assert sorted(g["big"] + g["little"]) == sorted(g["all"])
    assert set(g["big"]) == {n for n, e in reg.items()
                             if e["expected"]["rows"] > 10_000 and "directory" not in e and "variant_of" not in e}
    assert len(g["all"]) == 64 and g["digits"] == ["mnist", "mnist14", "usps"]  # the digits are a group of their own
    assert "covertype-grouped" not in g["all"] and "covertype-grouped" in g["zaidi_dbl"]  # a variant: same data again
    assert "covertype" not in g["zaidi_dbl"]
    for n, e in reg.items():
        assert all(len(f["sha256"]) == 64 for f in entry_files(e)) and e["expected"]["rows"] > 0, n
        assert e["provenance"]["source"], n
        assert e["paper"]["name"], n


# --------------------------------------------------------------------------- the real data


def _shared_dir() -> Path | None:
    d = os.environ.get("BNCBENCH_DATA_DIR")
    return Path(d) if d and Path(d).is_dir() else None


@pytest.mark.data
@pytest.mark.skipif(_shared_dir() is None, reason="BNCBENCH_DATA_DIR is unset or missing: real UCI data not available")
# (the digits, with several files, are checked by tests/test_data_digits.py)
@pytest.mark.parametrize("name", [n for n, e in uci.load_registry().items() if "files" not in e])
def test_registered_dataset_loads_with_expected_shape(name):
    e = uci.load_registry()[name]
    if not (_shared_dir() / e["file"]).is_file():
        pytest.skip(f"{e['file']} not in BNCBENCH_DATA_DIR")
    ds = uci.load_uci(name)
    ex = e["expected"]
    assert (ds.n_instances, ds.n_attributes, ds.n_classes) == (ex["rows"], ex["attributes"], ex["classes"])
    assert np.unique(ds.y).size == ex["classes_present"]
    assert int(ds.numeric_mask.sum()) == ex["numeric_attributes"]
    assert bool(ds.missing_mask.any()) == ex["missing_values"]
    assert ds.meta["identifiers"] == {}  # identifier columns are dropped by the entries (drop_columns)


def _one_hot_registry(tmp_path: Path, rows: bytes) -> tuple[Path, Path]:
    ddir = tmp_path / "data"
    ddir.mkdir(exist_ok=True)
    f = ddir / "oh.csv"
    f.write_bytes(b"w1,v,s1,w2,s2,s3,cls\n" + rows)
    reg = {"datasets": {"oh": {
        "file": "oh.csv", "format": "csv", "header": True, "class_column": "cls", "missing": ["?"],
        "transforms": [{"op": "one_hot_to_nominal", "groups": {"W": ["w1", "w2"], "S": ["s1", "s2", "s3"]}}],
        "expected": {"rows": 4, "attributes": 3, "classes": 2},
        "bytes": f.stat().st_size, "sha256": uci.sha256_file(f)}}}
    rpath = tmp_path / "registry.yaml"
    rpath.write_text(yaml.safe_dump(reg, sort_keys=False))
    return ddir, rpath


def test_one_hot_to_nominal(tmp_path):
    """Indicator groups become one nominal attribute each, where the group's leftmost column was."""
    ddir, rpath = _one_hot_registry(tmp_path, b"1,0.5,0,0,1,0,a\n0,1.5,0,1,0,1,b\n1,2.5,1,0,0,0,a\n0,3.5,?,1,?,?,b\n")
    ds = uci.load_uci("oh", ddir, registry=rpath)
    assert ds.attribute_names == ["W", "v", "S"]
    assert ds.X["W"].astype(str).tolist() == ["w1", "w2", "w1", "w2"]
    assert list(ds.X["S"].cat.categories) == ["s1", "s2", "s3"]
    assert ds.X["S"].cat.codes.tolist() == [1, 2, 0, -1]  # a missing indicator: the group's value is missing
    assert ds.X["v"].tolist() == [0.5, 1.5, 2.5, 3.5]


@pytest.mark.parametrize("bad_row", [b"1,0.5,1,1,0,0,a\n", b"1,0.5,0,0,0,0,a\n", b"2,0.5,0,-1,1,0,a\n"])
def test_one_hot_to_nominal_rejects_rows_without_exactly_one_1(tmp_path, bad_row):
    ddir, rpath = _one_hot_registry(tmp_path, b"1,0.5,0,0,1,0,a\n" + bad_row)
    with pytest.raises(BNCBenchError, match=r"oh\.csv: one_hot_to_nominal group '(W|S)': 1 rows are not one 1"):
        uci.load_uci("oh", ddir, registry=rpath)
