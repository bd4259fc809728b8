"""The digit datasets: the idx reader, the downsample transform, given-split entries and the real MNIST / USPS.

Everything but the last tests runs on files written here by hand (``struct`` + ``gzip``); the
real digits are checked when their directory is there ($BNCBENCH_DIGITS_DIR, else digits/ beside
$BNCBENCH_DATA_DIR) and skipped with the reason otherwise.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from bncbench.__main__ import main as bncbench_main
from bncbench.data import uci
from bncbench.data.cli import main as data_main
from bncbench.data.formats.idx import IMAGES_MAGIC, LABELS_MAGIC, read_idx, read_idx_pair
from bncbench.data.images import downsample, downsample_frame
from bncbench.data.locate import entry_dir
from bncbench.errors import BNCBenchError


def idx_bytes(magic: int, dims, data) -> bytes:
    """An idx file's bytes: big-endian magic and dimensions, then unsigned bytes."""
    return struct.pack(f">i{len(dims)}i", magic, *dims) + bytes(np.asarray(data, dtype=np.uint8).ravel())


def write_gz(path: Path, payload: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(payload))
    return path


IMAGES = np.array([[[0, 1, 2], [3, 4, 5]],
                   [[250, 251, 252], [253, 254, 255]],
                   [[7, 0, 7], [0, 7, 0]]], dtype=np.uint8)  # 3 images of 2 x 3 pixels
LABELS = np.array([0, 2, 1], dtype=np.uint8)


# --------------------------------------------------------------------------- idx reader
def test_idx_reader_on_a_hand_made_file(tmp_path):
    img = write_gz(tmp_path / "img.gz", idx_bytes(IMAGES_MAGIC, (3, 2, 3), IMAGES))
    lab = write_gz(tmp_path / "lab.gz", idx_bytes(LABELS_MAGIC, (3,), LABELS))
    X, y = read_idx_pair(img, lab)
    assert X.dtype == np.uint8 and X.shape == (3, 2, 3)
    np.testing.assert_array_equal(X[1], [[250, 251, 252], [253, 254, 255]])
    np.testing.assert_array_equal(y, [0, 2, 1])
    plain = tmp_path / "plain-idx"  # not gzipped: recognized by its first bytes
    plain.write_bytes(idx_bytes(LABELS_MAGIC, (3,), LABELS))
    np.testing.assert_array_equal(read_idx(plain, LABELS_MAGIC), [0, 2, 1])


def _one_line(exc: pytest.ExceptionInfo, path: Path) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg, msg
    return msg


def test_idx_reader_truncated_file_is_one_line_naming_it(tmp_path):
    full = idx_bytes(IMAGES_MAGIC, (3, 2, 3), IMAGES)
    short = write_gz(tmp_path / "short.gz", full[:-5])  # a valid gzip stream of a cut idx file
    with pytest.raises(BNCBenchError) as exc:
        read_idx(short, IMAGES_MAGIC)
    assert "13 data bytes after the idx header, expected 18 (3 x 2 x 3): truncated" in _one_line(exc, short)
    cut = tmp_path / "cut.gz"  # a cut gzip stream
    cut.write_bytes(gzip.compress(full)[:-12])
    with pytest.raises(BNCBenchError) as exc:
        read_idx(cut, IMAGES_MAGIC)
    assert "truncated or corrupt gzip file" in _one_line(exc, cut)
    head = write_gz(tmp_path / "head.gz", full[:9])  # inside the header
    with pytest.raises(BNCBenchError, match="header of 3 dimensions cut short after 9 bytes") as exc:
        read_idx(head, IMAGES_MAGIC)
    _one_line(exc, head)
    longer = write_gz(tmp_path / "long.gz", full + b"\0\0")
    with pytest.raises(BNCBenchError, match="2 trailing bytes"):
        read_idx(longer, IMAGES_MAGIC)


def test_idx_reader_bad_magic_number(tmp_path):
    lab = write_gz(tmp_path / "labels-as-images.gz", idx_bytes(LABELS_MAGIC, (3,), LABELS))
    with pytest.raises(BNCBenchError) as exc:
        read_idx(lab, IMAGES_MAGIC)
    assert "bad idx magic number 2049 (expected 2051" in _one_line(exc, lab)
    junk = write_gz(tmp_path / "junk.gz", b"PK\x03\x04" + bytes(20))
    with pytest.raises(BNCBenchError, match="bad idx magic number 1347093252"):
        read_idx(junk, LABELS_MAGIC)


def test_idx_pair_counts_must_agree(tmp_path):
    img = write_gz(tmp_path / "img.gz", idx_bytes(IMAGES_MAGIC, (3, 2, 3), IMAGES))
    lab = write_gz(tmp_path / "lab.gz", idx_bytes(LABELS_MAGIC, (2,), LABELS[:2]))
    with pytest.raises(BNCBenchError, match="holds 3 images but .* holds 2 labels"):
        read_idx_pair(img, lab)


# --------------------------------------------------------------------------- downsample
def test_downsample_a_hand_made_4x4_image():
    img = np.arange(1, 17, dtype=np.uint8).reshape(1, 4, 4)  # rows 1-4, 5-8, 9-12, 13-16
    # (1+2+5+6)/4, (3+4+7+8)/4 / (9+10+13+14)/4, (11+12+15+16)/4
    np.testing.assert_array_equal(downsample(img, 2), [[[3.5, 5.5], [11.5, 13.5]]])
    np.testing.assert_array_equal(downsample(img, 4), [[[8.5]]])
    np.testing.assert_array_equal(downsample(img, 1), img)
    with pytest.raises(BNCBenchError, match="factor 3 does not divide the image shape 4 x 4"):
        downsample(img, 3)


def test_downsample_transform_on_a_table_of_pixels():
    a = np.arange(1, 17, dtype=float)
    X = pd.DataFrame(np.vstack([a, 16 - a]), columns=[f"q{k}" for k in range(16)])
    out = downsample_frame(X, factor=2, shape=[4, 4], source="toy")
    assert list(out.columns) == ["p0", "p1", "p2", "p3"]
    np.testing.assert_array_equal(out.to_numpy(), [[3.5, 5.5, 11.5, 13.5], [12.5, 10.5, 4.5, 2.5]])
    with pytest.raises(BNCBenchError, match="toy: downsample of 5 x 5 images needs 25 attributes, the table has 16"):
        downsample_frame(X, factor=2, shape=[5, 5], source="toy")
    usps_like = pd.DataFrame(np.ones((3, 256)))
    assert downsample_frame(usps_like, factor=2, shape=[16, 16], source="usps").shape == (3, 64)  # 16x16 -> 8x8


# --------------------------------------------------------------------------- given-split entries (hand-made)
TRAIN = np.array([[[0, 0], [0, 8]], [[4, 4], [4, 4]], [[255, 255], [255, 251]]], dtype=np.uint8)
TEST = np.array([[[1, 2], [3, 6]], [[200, 200], [100, 100]]], dtype=np.uint8)


def toy_digits(root: Path) -> dict:
    """Four idx files of a tiny given split (3 training, 2 test images of 2 x 2) and their file records."""
    payloads = {
        "toy/train-images.gz": idx_bytes(IMAGES_MAGIC, (3, 2, 2), TRAIN),
        "toy/train-labels.gz": idx_bytes(LABELS_MAGIC, (3,), [0, 1, 1]),
        "toy/test-images.gz": idx_bytes(IMAGES_MAGIC, (2, 2, 2), TEST),
        "toy/test-labels.gz": idx_bytes(LABELS_MAGIC, (2,), [1, 0]),
    }
    recs = {}
    for rel, payload in payloads.items():
        p = write_gz(root / rel, payload)
        recs[rel] = {"file": rel, "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    return {"train": [recs["toy/train-images.gz"], recs["toy/train-labels.gz"]],
            "test": [recs["toy/test-images.gz"], recs["toy/test-labels.gz"]]}


def toy_registry(tmp_path: Path, files: dict, **extra) -> Path:
    entry = {"format": "idx", "files": files, "class_values": ["0", "1"],
             "expected": {"rows": 5, "train": 3, "test": 2, "attributes": 4, "classes": 2},
             "paper": {"name": "toy"}, "provenance": {"source": "hand-made"},
             "variants": {"toy1": {"transforms": [{"op": "downsample", "factor": 2, "shape": [2, 2]}],
                                   "expected": {"rows": 5, "attributes": 1, "classes": 2}}}, **extra}
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump({"datasets": {"toy": entry}}))
    return path


def test_given_split_entry_stacks_train_then_test_and_its_variant_downsamples(tmp_path):
    ddir = tmp_path / "uci"
    ddir.mkdir()
    reg = toy_registry(tmp_path, toy_digits(ddir))
    ds = uci.load_uci("toy", ddir, registry=reg)
    assert ds.meta["split"] == {"train": 3, "test": 2}
    assert list(ds.X.columns) == ["p0", "p1", "p2", "p3"] and ds.numeric_mask.all()
    np.testing.assert_array_equal(ds.X.to_numpy(), [[0, 0, 0, 8], [4, 4, 4, 4], [255, 255, 255, 251],
                                                    [1, 2, 3, 6], [200, 200, 100, 100]])
    np.testing.assert_array_equal(ds.y, [0, 1, 1, 1, 0])
    assert [f["part"] for f in ds.meta["files"]] == ["train", "train", "test", "test"]
    small = uci.load_uci("toy1", ddir, registry=reg)  # the variant: same files, 2x2 -> 1 pixel
    assert uci.load_registry(reg)["toy1"]["variant_of"] == "toy"
    np.testing.assert_array_equal(small.X.to_numpy().ravel(), [2.0, 4.0, 254.0, 3.0, 150.0])
    assert small.meta["split"] == {"train": 3, "test": 2}


def test_given_split_entry_checks_files_and_shapes(tmp_path):
    ddir = tmp_path / "uci"
    ddir.mkdir()
    files = toy_digits(ddir)
    files["test"][0]["sha256"] = "0" * 64
    with pytest.raises(BNCBenchError, match="test-images.gz has sha256 .* expected 0000"):
        uci.load_uci("toy", ddir, registry=toy_registry(tmp_path, files))
    files = toy_digits(ddir)
    reg = toy_registry(tmp_path, files, expected={"rows": 5, "train": 4, "test": 1, "attributes": 4, "classes": 2})
    with pytest.raises(BNCBenchError, match=r"given split in .* has train 3 \(expected 4\), test 2 \(expected 1\)"):
        uci.load_uci("toy", ddir, registry=reg)


def test_truncated_idx_file_is_one_error_line_on_the_command_line(tmp_path, capsys):
    ddir = tmp_path / "uci"
    ddir.mkdir()
    files = toy_digits(ddir)
    img = ddir / "toy/test-images.gz"
    img.write_bytes(gzip.compress(idx_bytes(IMAGES_MAGIC, (2, 2, 2), TEST)[:-3]))  # 3 pixels short
    files["test"][0].update(bytes=img.stat().st_size, sha256=hashlib.sha256(img.read_bytes()).hexdigest())
    reg = toy_registry(tmp_path, files)
    assert bncbench_main(["data", "show", "toy", "--data-dir", str(ddir), "--registry", str(reg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("bncbench: error: ") and str(img) in err and "truncated" in err
    assert data_main(["check", "toy", "--data-dir", str(ddir), "--registry", str(reg)]) == 1
    assert "BAD      toy " in capsys.readouterr().out


def test_directory_of_its_own_env_then_sibling_and_check_skips_without_it(tmp_path, monkeypatch, capsys):
    uci_dir, digits = tmp_path / "uci", tmp_path / "digits"
    uci_dir.mkdir()
    files = toy_digits(digits)
    reg = toy_registry(tmp_path, files, directory={"env": "TOY_DIGITS_DIR", "sibling": "digits"})
    entry = uci.load_registry(reg)["toy"]
    monkeypatch.delenv("TOY_DIGITS_DIR", raising=False)
    assert entry_dir(entry, uci_dir) == digits  # the sibling of the data directory
    assert uci.load_uci("toy", uci_dir, registry=reg).n_instances == 5
    monkeypatch.setenv("TOY_DIGITS_DIR", str(tmp_path / "elsewhere"))
    assert entry_dir(entry, uci_dir) == tmp_path / "elsewhere"  # the variable wins
    assert data_main(["check", "--data-dir", str(uci_dir), "--registry", str(reg)]) == 1
    out = capsys.readouterr().out
    assert f"skipped  {'toy':<16} directory {tmp_path / 'elsewhere'} not found (looked for in $TOY_DIGITS_DIR" in out
    assert "0 intact, 0 bad, 0 missing, 2 skipped" in out
    monkeypatch.delenv("TOY_DIGITS_DIR")
    assert data_main(["list", "--data-dir", str(uci_dir), "--registry", str(reg)]) == 0
    assert f"directory of toy, toy1: {digits}; looked for in $TOY_DIGITS_DIR, else in digits/" in capsys.readouterr().out


# --------------------------------------------------------------------------- the real MNIST and USPS
def _digits_dir_or_skip(name: str) -> Path:
    entry = uci.load_registry()[name]
    try:
        d = entry_dir(entry)
    except BNCBenchError as exc:
        pytest.skip(f"the digits directory is unknown: {exc}")
    if not d.is_dir():
        pytest.skip(f"the digits directory {d} is absent (set BNCBENCH_DIGITS_DIR, or put digits/ beside "
                    "BNCBENCH_DATA_DIR)")
    return d


REAL = {  # name: rows, train, test, attributes, training class counts 0-9
    "mnist": (70000, 60000, 10000, 784, [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]),
    "mnist14": (70000, 60000, 10000, 196, [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]),
    "usps": (9298, 7291, 2007, 256, [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]),
}


@pytest.mark.data
@pytest.mark.parametrize("name", list(REAL))
def test_real_digit_datasets_have_the_registered_shapes(name):
    _digits_dir_or_skip(name)
    rows, train, test, attrs, counts = REAL[name]
    e = uci.load_registry()[name]
    assert (e["expected"]["rows"], e["expected"]["train"], e["expected"]["test"]) == (rows, train, test)
    ds = uci.load_uci(name)
    assert (ds.n_instances, ds.n_attributes, ds.n_classes) == (rows, attrs, 10)
    assert ds.meta["split"] == {"train": train, "test": test}
    assert ds.numeric_mask.all() and not ds.missing_mask.any()
    assert np.bincount(ds.y[:train], minlength=10).tolist() == counts
    assert ds.classes == [str(d) for d in range(10)]
    pixels = ds.X.to_numpy()
    assert pixels.min() == 0 and pixels.max() == (1.0 if name == "usps" else 255)
    if name == "mnist14":  # the first training image, 2 x 2 block means of mnist's
        big = uci.load_uci("mnist").X.iloc[0].to_numpy().reshape(14, 2, 14, 2).mean(axis=(1, 3)).ravel()
        np.testing.assert_array_equal(pixels[0], big)
