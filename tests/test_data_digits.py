"""The digit datasets: the idx reader and the downsample transform, on files written here by hand."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bncbench.data.formats.idx import IMAGES_MAGIC, LABELS_MAGIC, read_idx, read_idx_pair
from bncbench.data.images import downsample, downsample_frame
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
