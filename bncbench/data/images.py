"""Image transforms of datasets whose attributes are the pixels of one image per row.

The registry's ``{op: downsample, factor: F, shape: [H, W]}`` transform
(:func:`downsample_frame`) reads the attributes as ``H x W`` images in row-major order and
replaces every ``F x F`` block of pixels by its mean (average pooling): MNIST's 28 x 28 becomes
14 x 14 with ``factor: 2``, as Pernkopf et al. use it, and USPS's 16 x 16 becomes 8 x 8.
One reshape and one mean over all images at once (:func:`downsample`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bncbench.errors import BNCBenchError

__all__ = ["downsample", "downsample_frame"]


def downsample(images: np.ndarray, factor: int) -> np.ndarray:
    """Average pooling of ``factor x factor`` blocks.

    Parameters
    ----------
    images : numpy.ndarray, shape (n, height, width)
        The images; ``height`` and ``width`` must be multiples of ``factor``.
    factor : int
        The side of a block (``>= 1``).

    Returns
    -------
    numpy.ndarray of float64, shape (n, height // factor, width // factor)
        The mean of every block.

    Raises
    ------
    BNCBenchError
        If ``images`` is not three-dimensional, or ``factor`` is not a positive integer or does
        not divide both sides.
    """
    images = np.asarray(images)
    if images.ndim != 3:
        raise BNCBenchError(f"downsample needs images of shape (n, height, width), got shape {images.shape}")
    n, h, w = images.shape
    if isinstance(factor, bool) or not isinstance(factor, (int, np.integer)) or factor < 1:
        raise BNCBenchError(f"downsample: factor must be a positive integer, got {factor!r}")
    if h % factor or w % factor:
        raise BNCBenchError(f"downsample: factor {factor} does not divide the image shape {h} x {w}")
    blocks = images.reshape(n, h // factor, factor, w // factor, factor)
    return blocks.mean(axis=(2, 4), dtype=np.float64)


def downsample_frame(X: pd.DataFrame, *, factor: int, shape: Sequence[int], source: str) -> pd.DataFrame:
    """The ``downsample`` transform of a table whose columns are the pixels of ``shape`` images.

    Parameters
    ----------
    X : pandas.DataFrame
        ``height * width`` numeric columns, the pixels of each row's image in row-major order.
    factor : int
        The side of the averaged blocks.
    shape : sequence of two int
        ``[height, width]`` of the images.
    source : str
        Where the table comes from, for error messages.

    Returns
    -------
    pandas.DataFrame
        ``(height // factor) * (width // factor)`` float64 columns ``p0, p1, ...`` (row-major).

    Raises
    ------
    BNCBenchError
        If ``shape`` is not two positive integers, the number of columns is not their
        product, a column is not numeric, or ``factor`` does not divide the shape.
    """
    try:
        h, w = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise BNCBenchError(f"{source}: downsample needs shape: [height, width], got {shape!r}") from None
    if h < 1 or w < 1:
        raise BNCBenchError(f"{source}: downsample needs a positive shape, got {shape!r}")
    if X.shape[1] != h * w:
        raise BNCBenchError(f"{source}: downsample of {h} x {w} images needs {h * w} attributes, "
                            f"the table has {X.shape[1]}")
    nominal = [c for c in X.columns if not pd.api.types.is_float_dtype(X[c].dtype)]
    if nominal:
        raise BNCBenchError(f"{source}: downsample needs numeric pixel attributes; {nominal[0]!r} is not")
    try:
        small = downsample(X.to_numpy().reshape(-1, h, w), factor)
    except BNCBenchError as exc:
        raise BNCBenchError(f"{source}: {exc}") from None
    flat = small.reshape(small.shape[0], -1)
    return pd.DataFrame(flat, columns=[f"p{k}" for k in range(flat.shape[1])], index=X.index)
