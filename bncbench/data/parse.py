"""From one data file and its parse specification to typed columns: read, then parse as its format says.

The second step of loading (``docs/architecture.md``, "Data"): the file's text
(:func:`bncbench.data.formats.common.read_text`) goes to the ARFF parser or the delimited-text
parser, and the class column is split off (:func:`parse_file`). What a specification may say is
the registry's parse fields (``datasets/registry.yaml``'s header); :func:`infer_format` and
:func:`sniff_header` fill in the format and the header of an unregistered file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from bncbench.data.formats.arff import parse_arff
from bncbench.data.formats.common import read_text, resolve_column
from bncbench.data.formats.text import parse_text, split_fields
from bncbench.errors import BNCBenchError

__all__ = ["infer_format", "parse_file", "separator", "sniff_header"]


def separator(fmt: str, sep: str | None) -> str:
    """The field separator of a text format.

    Parameters
    ----------
    fmt : str
        ``csv``, ``tsv`` or ``whitespace``.
    sep : str or None
        The specification's ``separator`` (``csv`` only; default ``,``).

    Returns
    -------
    str
        A separator character, or ``"whitespace"`` for runs of blanks.
    """
    return {"csv": sep or ",", "tsv": "\t", "whitespace": "whitespace"}[fmt]


def parse_file(path: Path, spec: dict, source: str) -> tuple[pd.DataFrame, pd.Categorical, list[int] | None]:
    """Parse one data file into its attributes and its class.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    spec : dict
        Its parse specification: ``format`` (required), ``gzip``, ``class_column``, and for text
        formats ``separator``, ``header``, ``column_names``, ``missing``, ``types``,
        ``class_values``, ``skip_lines``.
    source : str
        What the file is called in error messages (its path).

    Returns
    -------
    X : pandas.DataFrame
        The attributes: categorical and float64 columns.
    y : pandas.Categorical
        The class.
    linenos : list of int or None
        Each row's line number (text formats; ``None`` for ARFF).

    Raises
    ------
    BNCBenchError
        If the file cannot be read or parsed, or an ARFF file's class attribute is numeric.
    """
    fmt = spec["format"]
    text = read_text(path, bool(spec.get("gzip")))
    if fmt == "arff":
        table = parse_arff(text, source)
        cols = [a.name for a in table.attributes]
        cls = resolve_column(spec.get("class_column", "last"), cols, source)
        if table.attributes[cols.index(cls)].kind != "nominal":
            raise BNCBenchError(f"{source}: class attribute {cls!r} is numeric; a nominal class is needed")
        return table.frame.drop(columns=[cls]), table.frame[cls].array, None
    return parse_text(
        text,
        source,
        sep=separator(fmt, spec.get("separator")),
        header=bool(spec.get("header", False)),
        names=spec.get("column_names"),
        missing=spec.get("missing", ["?"]),
        class_column=spec.get("class_column", "last"),
        types=spec.get("types"),
        class_values=spec.get("class_values"),
        skip_lines=spec.get("skip_lines", ()),
    )


def infer_format(path: Path) -> tuple[str, bool]:
    """The format of an unregistered file, from its extension, else from its first line.

    Parameters
    ----------
    path : pathlib.Path
        The file (a ``.gz`` suffix means gzipped).

    Returns
    -------
    fmt : str
        ``arff``, ``csv``, ``tsv`` or ``whitespace``: by extension, else ARFF when the first
        non-blank line starts an ARFF header, else ``tsv`` with a tab, ``csv`` with a comma,
        ``whitespace`` otherwise.
    gz : bool
        Whether it is gzipped.

    Raises
    ------
    BNCBenchError
        If the file must be read and cannot be.
    """
    n = path.name.lower()
    gz = n.endswith(".gz")
    if gz:
        n = n[:-3]
    ext = n.rsplit(".", 1)[-1] if "." in n else ""
    if ext == "arff":
        return "arff", gz
    if ext == "csv":
        return "csv", gz
    if ext == "tsv":
        return "tsv", gz
    # sniff .data/.txt/...: tab, comma, else whitespace
    head = read_text(path, gz)[:4096].splitlines()
    line = next((ln for ln in head if ln.strip()), "")
    if line.lstrip().lower().startswith(("@relation", "%", "@attribute")):
        return "arff", gz
    if "\t" in line:
        return "tsv", gz
    if "," in line:
        return "csv", gz
    return "whitespace", gz


def sniff_header(path: Path, gz: bool, fmt: str, sep: str | None, class_column: Any) -> bool:
    """Whether a text file's first non-blank line is a header: it has ``class_column`` as a field.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    gz : bool
        Whether it is gzipped.
    fmt : str
        ``csv``, ``tsv`` or ``whitespace``.
    sep : str or None
        The ``csv`` separator (:func:`separator`).
    class_column : str or int
        The class column; an index never names a header field.

    Returns
    -------
    bool
        True when ``class_column`` is a string among the line's fields (quotes stripped).
    """
    text = read_text(path, gz)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    fields = [f.strip().strip("'\"") for f in split_fields(first, separator(fmt, sep))]
    return isinstance(class_column, str) and class_column in fields
