"""The delimited-text parser: CSV / TSV / whitespace-separated text to typed attributes and a class."""

from __future__ import annotations

import csv
import io
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from bncbench.data.formats.common import cat_index, resolve_column, to_float
from bncbench.errors import BNCBenchError

__all__ = ["parse_text", "split_fields"]


def split_fields(line: str, sep: str) -> list[str]:
    """The fields of one line: ``sep`` a separator character or ``"whitespace"`` (runs of blanks).

    Parameters
    ----------
    line : str
        The line.
    sep : str
        The separator.

    Returns
    -------
    list of str
        The fields, double quotes honoured when the line has some.
    """
    if sep == "whitespace":
        return line.split()
    if '"' in line:
        return next(csv.reader([line], delimiter=sep, skipinitialspace=True))
    return line.split(sep)


def _natural_sorted(values: Iterable[str]) -> list[str]:
    vals = list(values)
    try:
        return sorted(vals, key=lambda v: (float(v), v))
    except ValueError:
        return sorted(vals)


def parse_text(
    text: str,
    source: str,
    *,
    sep: str,
    header: bool,
    names: list[str] | None,
    missing: Sequence[str],
    class_column: Any,
    types: dict | None,
    class_values: list[str] | None,
    skip_lines: Sequence[int] = (),
) -> tuple[pd.DataFrame, pd.Categorical, list[int]]:
    """Parse delimited text into typed attributes, the class and each row's line number.

    Parameters
    ----------
    text : str
        The whole file.
    source : str
        Its origin (usually its path), for error messages.
    sep : str
        A separator character or ``"whitespace"``.
    header : bool
        Whether the first non-blank line holds the column names.
    names : list of str or None
        The column names (default: the header's, else ``col1..colN``).
    missing : sequence of str
        The strings read as missing values.
    class_column : str or int
        The class column (:func:`bncbench.data.formats.common.resolve_column`).
    types : dict or None
        ``{"default": "auto"|"nominal"|"numeric", "nominal": [...], "numeric": [...]}``.
    class_values : list of str or None
        The allowed class values, in order (default: the values seen, in natural order).
    skip_lines : sequence of int, default ()
        Line numbers (from 1) to skip.

    Returns
    -------
    X : pandas.DataFrame
        The attributes: float64 or categorical columns.
    y : pandas.Categorical
        The class.
    linenos : list of int
        Each row's line number.

    Raises
    ------
    BNCBenchError
        Naming the source and the line of the first malformed row or value.
    """
    lines = text.splitlines()
    skip = {int(k) for k in skip_lines}
    keep = [i for i, ln in enumerate(lines) if ln.strip() and (i + 1) not in skip]
    if not keep:
        raise BNCBenchError(f"{source}: no data")
    if header:
        head = [h.strip().strip("'\"") for h in split_fields(lines[keep[0]], sep)]
        keep = keep[1:]
        if names is None:
            names = head
    if not keep:
        raise BNCBenchError(f"{source}: no data rows")
    if names is None:
        names = [f"col{j + 1}" for j in range(len(split_fields(lines[keep[0]], sep)))]
    names = [str(n) for n in names]
    ncols = len(names)
    if len(names) != len(set(names)):
        raise BNCBenchError(f"{source}: duplicate column names")
    # field-count check per line (pandas silently pads short rows)
    body = [lines[i] for i in keep]
    if sep == "whitespace":
        counts = [len(ln.split()) for ln in body]
    elif '"' in text:
        counts = [len(split_fields(ln, sep)) for ln in body]
    else:
        counts = [ln.count(sep) + 1 for ln in body]
    bad = np.flatnonzero(np.asarray(counts) != ncols)
    if bad.size:
        k = int(bad[0])
        raise BNCBenchError(
            f"{source}, line {keep[k] + 1}: expected {ncols} fields, found {counts[k]} "
            "(malformed or truncated line)"
        )
    linenos = [i + 1 for i in keep]
    cls = resolve_column(class_column, names, source)

    types = types or {}
    default = types.get("default", "auto")
    nominal = set(types.get("nominal", []) or [])
    numeric = set(types.get("numeric", []) or [])
    for c in nominal | numeric:
        if c not in names:
            raise BNCBenchError(f"{source}: typing names unknown column {c!r}")
    if default not in ("auto", "nominal", "numeric"):
        raise BNCBenchError(f"{source}: unknown default column type {default!r}")
    kinds = {c: "nominal" if c in nominal else "numeric" if c in numeric else default for c in names}
    kinds[cls] = "nominal"
    dtypes = {c: object for c, k in kinds.items() if k == "nominal"}
    dtypes.update({c: np.float64 for c, k in kinds.items() if k == "numeric"})

    def read(dt):
        return pd.read_csv(
            io.StringIO("\n".join(body)),
            sep=r"\s+" if sep == "whitespace" else sep,
            header=None,
            names=names,
            dtype=dt,
            keep_default_na=False,
            na_values=list(missing),
            skipinitialspace=True,
            skip_blank_lines=False,
            engine="c",
        )

    try:
        frame = read(dtypes)
    except ValueError:
        # a declared-numeric column holds a non-number: re-read as text to report the line
        frame = read(object)
        for c, k in kinds.items():
            if k == "numeric":
                vals = [None if v is None or (isinstance(v, float) and np.isnan(v)) else v
                        for v in frame[c].to_numpy(object)]
                to_float(vals, linenos, source, c)
        raise BNCBenchError(f"{source}: cannot parse") from None
    except pd.errors.ParserError as exc:
        raise BNCBenchError(f"{source}: cannot parse ({exc})") from None
    if len(frame) != len(body):
        raise BNCBenchError(f"{source}: parsed {len(frame)} rows from {len(body)} lines")

    out: dict[str, Any] = {}
    y = None
    for c in names:
        s = frame[c]
        if kinds[c] != "nominal" and s.dtype != object and not pd.api.types.is_bool_dtype(s.dtype) \
                and not pd.api.types.is_string_dtype(s.dtype):
            if c != cls:
                out[c] = s.to_numpy(dtype=np.float64)
            continue
        cat = pd.Categorical(s.astype(object).where(s.notna(), None))
        labels = [str(v).strip() for v in cat.categories]
        if c == cls and class_values:
            target = [str(v) for v in class_values]
        else:
            target = _natural_sorted(set(labels))
        pos = {v: i for i, v in enumerate(target)}
        remap = np.array([pos.get(v, -2) for v in labels] + [-1], dtype=np.int64)
        codes = remap[np.asarray(cat.codes, dtype=np.int64)]  # code -1 indexes the trailing -1
        if (codes == -2).any():
            k = int(np.flatnonzero(codes == -2)[0])
            what = "class" if c == cls else "attribute"
            kind = "unknown class value" if c == cls else "undeclared value"
            shown = target if len(target) <= 12 else target[:12] + ["..."]
            raise BNCBenchError(
                f"{source}, line {linenos[k]}: {kind} {str(s.iloc[k]).strip()!r} for {what} {c!r} "
                f"(allowed: {shown})"
            )
        catv = pd.Categorical.from_codes(codes, categories=cat_index(target))
        if c == cls:
            y = catv
        else:
            out[c] = catv
    return pd.DataFrame(out), y, linenos
