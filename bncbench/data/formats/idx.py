"""The idx format of the MNIST files (LeCun et al.), plain or gzipped.

An idx file is a big-endian header, then the data as unsigned bytes in C order:

* a 4-byte magic number ``0x0000TTDD``: ``TT`` the data type (``0x08``, unsigned byte, the
  only one MNIST uses) and ``DD`` the number of dimensions; images have magic ``2051``
  (``0x0803``: count, rows, columns) and labels ``2049`` (``0x0801``: count);
* one big-endian int32 per dimension;
* ``prod(dimensions)`` bytes.

:func:`read_idx` checks the magic number against the one expected, and the header's
dimensions against the number of data bytes, so that a truncated or corrupt file gives one
error line that names it. :func:`read_idx_pair` reads an image file and its label file and
checks that their counts agree. Everything is read with ``numpy.frombuffer``, without a
Python loop over instances or pixels.
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from bncbench.errors import BNCBenchError

__all__ = ["IMAGES_MAGIC", "LABELS_MAGIC", "read_idx", "read_idx_pair"]

IMAGES_MAGIC = 2051
"""Magic number of an idx file of unsigned-byte images (``0x00000803``: three dimensions)."""
LABELS_MAGIC = 2049
"""Magic number of an idx file of unsigned-byte labels (``0x00000801``: one dimension)."""

_WHAT = {IMAGES_MAGIC: "images (count, rows, columns)", LABELS_MAGIC: "labels (count)"}
_GZIP = b"\x1f\x8b"


def _file_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BNCBenchError(f"{path}: file not found") from None
    except OSError as exc:
        raise BNCBenchError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == _GZIP:
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise BNCBenchError(f"{path}: truncated or corrupt gzip file ({exc})") from None
    return raw


def read_idx(path: str | os.PathLike, magic: int) -> np.ndarray:
    """Read one idx file of unsigned bytes whose magic number must be ``magic``.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzipped or not (recognized by its first two bytes).
    magic : int
        The magic number expected: :data:`IMAGES_MAGIC` or :data:`LABELS_MAGIC`.

    Returns
    -------
    numpy.ndarray of uint8
        The data, shaped by the header: ``(count, rows, columns)`` for images,
        ``(count,)`` for labels. A read-only view of the file's bytes.

    Raises
    ------
    BNCBenchError
        One line naming the file: missing, a corrupt or truncated gzip stream, a header
        too short, another magic number, or a number of data bytes other than the
        product of the header's dimensions (truncated, or trailing bytes).
    """
    path = Path(path)
    raw = _file_bytes(path)
    what = _WHAT.get(magic, f"magic {magic}")
    if len(raw) < 4:
        raise BNCBenchError(f"{path}: {len(raw)} bytes, too short for an idx header (truncated?)")
    (got,) = struct.unpack(">i", raw[:4])
    if got != magic:
        raise BNCBenchError(f"{path}: bad idx magic number {got} (expected {magic}: {what}); "
                            "not an idx file of this kind, or corrupt")
    ndim = magic & 0xFF
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise BNCBenchError(f"{path}: idx header of {ndim} dimensions cut short after {len(raw)} bytes (truncated)")
    dims = struct.unpack(f">{ndim}i", raw[4:head])
    if min(dims) < 0:
        raise BNCBenchError(f"{path}: negative idx dimension in the header {dims} (corrupt)")
    want = int(np.prod(dims, dtype=np.int64))
    have = len(raw) - head
    if have != want:
        shape = " x ".join(map(str, dims))
        problem = "truncated" if have < want else f"{have - want} trailing bytes"
        raise BNCBenchError(f"{path}: {have} data bytes after the idx header, expected {want} "
                            f"({shape}): {problem}")
    return np.frombuffer(raw, dtype=np.uint8, offset=head).reshape(dims)


def read_idx_pair(images: str | os.PathLike, labels: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Read an idx image file and its label file, and check that they describe the same instances.

    Parameters
    ----------
    images : str or os.PathLike
        The images (magic 2051).
    labels : str or os.PathLike
        Their labels (magic 2049).

    Returns
    -------
    X : numpy.ndarray of uint8, shape (count, rows, columns)
        The images.
    y : numpy.ndarray of uint8, shape (count,)
        The labels.

    Raises
    ------
    BNCBenchError
        As :func:`read_idx`, or when the two files hold different numbers of instances.
    """
    X = read_idx(images, IMAGES_MAGIC)
    y = read_idx(labels, LABELS_MAGIC)
    if X.shape[0] != y.shape[0]:
        raise BNCBenchError(f"{images} holds {X.shape[0]} images but {labels} holds {y.shape[0]} labels")
    return X, y
