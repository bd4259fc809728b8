"""The dataset loaders: registered UCI datasets by name, unregistered ARFF / CSV / TSV files by path.

Files are read from the directory named by ``BNCBENCH_DATA_DIR`` (or a
``data_dir`` argument). Every load verifies the file's sha256; the parsed and
typed table is cached as parquet under ``BNCBENCH_CACHE_DIR`` (default
``~/.cache/bncbench``), keyed by the file's sha256 and the parse specification,
so the second load of a dataset only hashes the file and reads the parquet.

The other concerns live in their own modules: :mod:`bncbench.data.catalog`
(reading ``registry.yaml``, groups, name resolution), :mod:`bncbench.data.formats`
(the ARFF and delimited-text parsers) and :mod:`bncbench.data.cache` (hashing and
the parsed-table cache).

Public API
----------
``load_uci(name, data_dir=None)``, ``load_file(path, class_column, fmt=None, ...)``,
``check_file(name, data_dir=None)``, ``resolve_data_dir(data_dir=None)``; re-exported
for backward compatibility: ``load_registry(path=None)``, ``REGISTRY`` (lazy),
``groups()``, ``resolve_names(names)``, ``registry_path()``, ``parse_arff(text, source)``,
``ArffAttribute``, ``ArffTable``, ``sha256_file(path)``, ``cache_dir()``, ``CACHE_VERSION``.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from bncbench.data.cache import (  # noqa: F401  (re-exported)
    CACHE_VERSION,
    _cache_file,
    _cache_read,
    _cache_write,
    cache_dir,
    sha256_file,
)
from bncbench.data.catalog import (  # noqa: F401  (re-exported)
    GROUP_NAMES,
    PAPERS,
    _entry,
    groups,
    load_registry,
    paper_shapes,
    registry_path,
    resolve_names,
)
from bncbench.data.dataset import BIG_THRESHOLD, Dataset  # noqa: F401  (BIG_THRESHOLD re-exported)
from bncbench.data.formats.arff import ArffAttribute, ArffTable, parse_arff  # noqa: F401
from bncbench.data.formats.common import _FORMATS, _cat_index, _read_text, _resolve_column
from bncbench.data.formats.text import _fields, _parse_text
from bncbench.data.identifiers import screen
from bncbench.errors import BNCBenchError, BNCBenchWarning

__all__ = [
    "ArffAttribute",
    "ArffTable",
    "CACHE_VERSION",
    "cache_dir",
    "check_file",
    "resolve_data_dir",
    "groups",
    "load_file",
    "load_registry",
    "load_uci",
    "parse_arff",
    "registry_path",
    "resolve_names",
    "sha256_file",
]


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: the argument, else ``$BNCBENCH_DATA_DIR``.

    Parameters
    ----------
    data_dir : str or os.PathLike, optional
        The directory; ``None`` or ``""`` means ``$BNCBENCH_DATA_DIR``.

    Returns
    -------
    pathlib.Path
        The directory, ``~`` expanded (not checked for existence).

    Raises
    ------
    BNCBenchError
        If neither the argument nor ``$BNCBENCH_DATA_DIR`` is set.
    """
    d = data_dir if data_dir not in (None, "") else os.environ.get("BNCBENCH_DATA_DIR")
    if not d:
        raise BNCBenchError(
            "no data directory: set BNCBENCH_DATA_DIR or pass data_dir "
            "(e.g. BNCBENCH_DATA_DIR=/work/shared/datasets/uci)"
        )
    return Path(d).expanduser()


def __getattr__(attr: str) -> dict[str, dict]:  # lazy module attribute REGISTRY
    if attr == "REGISTRY":
        return load_registry()
    raise AttributeError(attr)


# --------------------------------------------------------------------------- parse pipeline


def _apply_transforms(X: pd.DataFrame, y: pd.Categorical, transforms: list, source: str):
    """Declarative transforms from the registry (see datasets/registry.yaml header)."""
    for t in transforms or []:
        op = t.get("op")
        if op == "downsample":  # average pooling of image pixels (bncbench.data.images)
            from bncbench.data.images import downsample_frame

            X = downsample_frame(X, factor=t.get("factor"), shape=t.get("shape"), source=source)
        elif op == "bin_class":
            # class values are numbers; value <= upper_bounds[i] -> labels[i], above all -> labels[-1]
            bounds = [float(b) for b in t["upper_bounds"]]
            labels = [str(l) for l in t["labels"]]
            if len(labels) != len(bounds) + 1:
                raise BNCBenchError(f"{source}: bin_class needs len(labels) == len(upper_bounds) + 1")
            vals = pd.to_numeric(pd.Series(np.asarray(y, dtype=object)), errors="coerce").to_numpy(float)
            if np.isnan(vals).any():
                raise BNCBenchError(f"{source}: bin_class on a class with non-numeric values")
            codes = np.searchsorted(np.asarray(bounds), vals, side="left")
            y = pd.Categorical.from_codes(codes, categories=_cat_index(labels))
        elif op == "drop_unused_classes":
            y = y.remove_unused_categories()
        elif op == "drop_constant_attributes":
            keep = [c for c in X.columns if X[c].nunique(dropna=True) > 1]
            X = X[keep]
        elif op == "one_hot_to_nominal":
            X = _one_hot_to_nominal(X, t.get("groups"), source)
        else:
            raise BNCBenchError(f"{source}: unknown transform {op!r}")
    return X, y


def _one_hot_to_nominal(X: pd.DataFrame, groups, source: str) -> pd.DataFrame:
    """Each group of 0/1 indicator columns becomes one nominal attribute, where its leftmost column was.

    ``groups`` maps the new attribute's name to its indicator columns; its value is the name of
    the column holding the row's 1 (a missing indicator makes it missing). A row whose
    indicators are not exactly one 1 among 0s is an error, as is a value other than 0 and 1.
    """
    if not isinstance(groups, dict) or not groups or not all(isinstance(c, list) and c for c in groups.values()):
        raise BNCBenchError(f"{source}: one_hot_to_nominal needs groups: {{name: [indicator columns]}}")
    for name, cols in groups.items():
        cols = [_resolve_column(c, X.columns, source, "indicator column") for c in cols]
        block = X[cols].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        present = ~np.isnan(block).any(axis=1)
        bad = present & ~np.all((block == 0) | (block == 1), axis=1)
        bad |= present & (np.nansum(block, axis=1) != 1)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise BNCBenchError(f"{source}: one_hot_to_nominal group {name!r}: {int(bad.sum())} rows are not one 1 "
                                f"among 0s (first: row {k + 1}, values {block[k].tolist()})")
        codes = np.where(present, np.argmax(np.nan_to_num(block, nan=-1), axis=1), -1)  # NaN rows: missing
        at = min(X.columns.get_loc(c) for c in cols)
        X = X.drop(columns=cols)
        X.insert(at, str(name), pd.Categorical.from_codes(codes, categories=_cat_index(cols)))
    return X


def _finish(
    X: pd.DataFrame,
    y: pd.Categorical,
    source: str,
    *,
    drop_columns: Sequence[str] = (),
    missing_class: str = "error",
    transforms: list | None = None,
    linenos: Sequence[int] | None = None,
) -> tuple[pd.DataFrame, pd.Categorical]:
    drop = [_resolve_column(c, X.columns, source, "column to drop") for c in drop_columns or []]
    if drop:
        X = X.drop(columns=drop)
    codes = np.asarray(y.codes)
    miss = codes < 0
    if miss.any():
        if missing_class == "drop":
            warnings.warn(BNCBenchWarning(f"{source}: dropped {int(miss.sum())} of {miss.size} rows without a class "
                                          "value (missing_class: drop)"), stacklevel=2)
            keep = ~miss
            X = X.loc[keep]
            y = y[keep]
        else:
            k = int(np.flatnonzero(miss)[0])
            line = f", line {linenos[k]}" if linenos is not None else ""
            raise BNCBenchError(
                f"{source}{line}: missing class value ({int(miss.sum())} rows); "
                "set missing_class: drop to discard them"
            )
    X = X.reset_index(drop=True)
    X, y = _apply_transforms(X, y, transforms or [], source)
    return X, y


def _parse_any(path: Path, spec: dict, source: str) -> tuple[pd.DataFrame, pd.Categorical]:
    fmt = spec["format"]
    text = _read_text(path, bool(spec.get("gzip")))
    if fmt == "arff":
        table = parse_arff(text, source)
        cols = [a.name for a in table.attributes]
        cls = _resolve_column(spec.get("class_column", "last"), cols, source)
        if table.attributes[cols.index(cls)].kind != "nominal":
            raise BNCBenchError(f"{source}: class attribute {cls!r} is numeric; a nominal class is needed")
        X = table.frame.drop(columns=[cls])
        y = table.frame[cls].array
        linenos = None
    else:
        sep = {"csv": spec.get("separator") or ",", "tsv": "\t", "whitespace": "whitespace"}[fmt]
        if fmt == "csv" and spec.get("separator") == "whitespace":
            sep = "whitespace"
        X, y, linenos = _parse_text(
            text,
            source,
            sep=sep,
            header=bool(spec.get("header", False)),
            names=spec.get("column_names"),
            missing=spec.get("missing", ["?"]),
            class_column=spec.get("class_column", "last"),
            types=spec.get("types"),
            class_values=spec.get("class_values"),
            skip_lines=spec.get("skip_lines", ()),
        )
    X, y = _finish(
        X, y, source,
        drop_columns=spec.get("drop_columns", ()),
        missing_class=spec.get("missing_class", "error"),
        transforms=spec.get("transforms"),
        linenos=linenos,
    )
    return X, pd.Categorical(y)


_SPEC_KEYS = (
    "format", "gzip", "header", "separator", "class_column", "column_names", "drop_columns",
    "missing", "types", "class_values", "skip_lines", "missing_class", "transforms",
)


def _load_typed(path: Path, spec: dict, source: str, sha: str, use_cache: bool):
    spec = {k: spec.get(k) for k in _SPEC_KEYS if spec.get(k) is not None}
    cfile = _cache_file(sha, spec)
    if use_cache:
        hit = _cache_read(cfile)
        if hit is not None:
            return hit
    X, y = _parse_any(path, spec, source)
    if use_cache:
        _cache_write(cfile, X, y)
    return X, y


def _make_dataset(name: str, X: pd.DataFrame, y: pd.Categorical, meta: dict) -> Dataset:
    classes = [str(c) for c in y.categories]
    return Dataset(name, X, np.asarray(y.codes, dtype=np.int64), classes, meta)


def _screen(X: pd.DataFrame, where: str, drop, advice: str) -> tuple[pd.DataFrame, dict]:
    """Identifiers dropped (``drop``) or warned about, and the meta entries that record them."""
    X, found = screen(X, where, bool(drop), advice, stacklevel=3)  # the warning points at the loader's caller
    return X, {"identifiers": found, "identifiers_dropped": bool(found) and bool(drop)}


# --------------------------------------------------------------------------- public loaders


def _verify(path: Path, entry: dict) -> str:
    """Check presence, size and sha256 of a registered file; return its sha256."""
    name = entry["name"]
    if not path.is_file():
        raise BNCBenchError(
            f"dataset {name!r}: file {path} not found (set BNCBENCH_DATA_DIR or run "
            f"`python -m bncbench data fetch {name}` if it has a URL)"
        )
    size = path.stat().st_size
    want_size = entry.get("bytes")
    if want_size is not None and size < int(want_size):
        raise BNCBenchError(f"dataset {name!r}: {path} is truncated ({size} of {want_size} bytes)")
    sha = sha256_file(path)
    want = entry.get("sha256")
    if want and sha != want:
        extra = f", {size} bytes instead of {want_size}" if want_size is not None and size != int(want_size) else ""
        raise BNCBenchError(
            f"dataset {name!r}: {path} has sha256 {sha[:16]}…, expected {str(want)[:16]}…{extra} "
            "(corrupt or a different version of the file)"
        )
    return sha


def _check_shape(name: str, path: Path, ds: Dataset, entry: dict) -> None:
    exp = entry.get("expected") or {}
    got = {"rows": ds.n_instances, "attributes": ds.n_attributes, "classes": ds.n_classes}
    diffs = [f"{k} {got[k]} (expected {exp[k]})" for k in got if k in exp and int(exp[k]) != got[k]]
    if diffs:
        raise BNCBenchError(f"dataset {name!r}: {path} parsed to an unexpected shape: {', '.join(diffs)}")


def _meta(entry: dict, path: Path, sha: str) -> dict:
    keys = ("file", "format", "provenance", "paper", "differences", "transforms", "url", "drop_identifiers")
    m = {k: entry[k] for k in keys if k in entry}
    m.update({"path": str(path), "sha256": sha, "registered": True})
    return m


def load_uci(
    name: str,
    data_dir: str | os.PathLike | None = None,
    *,
    cache: bool = True,
    registry: str | os.PathLike | None = None,
) -> Dataset:
    """Load a registered dataset by name, verifying its sha256 and shape.

    Parameters
    ----------
    name : str
        A dataset name of the registry.
    data_dir : str or os.PathLike, optional
        Where the files are; default ``$BNCBENCH_DATA_DIR``.
    cache : bool, default True
        Read and write the parsed-table cache (:mod:`bncbench.data.cache`).
    registry : str or os.PathLike, optional
        The registry file; default :func:`bncbench.data.catalog.registry_path`.

    Returns
    -------
    Dataset
        The typed dataset; its ``meta`` records the entry's provenance, the
        path and the sha256.

    Raises
    ------
    BNCBenchError
        If the name is unknown, the file is missing, truncated or has another
        sha256, it cannot be parsed, or it parses to an unexpected shape.
    """
    entry = _entry(name, load_registry(registry))
    if "files" in entry:  # several files: a given train/test split (MNIST, USPS)
        from bncbench.data.given_split import load_given

        return load_given(entry, data_dir, cache=cache)
    path = resolve_data_dir(data_dir) / entry["file"]
    sha = _verify(path, entry)
    X, y = _load_typed(path, entry, str(path), sha, cache)
    X, found = _screen(X, str(path), entry.get("drop_identifiers"),
                       f"set drop_identifiers: true in the {name!r} registry entry to drop {{it}}")
    ds = _make_dataset(name, X, y, {**_meta(entry, path, sha), **found})
    _check_shape(name, path, ds, entry)
    return ds


def _infer_format(path: Path) -> tuple[str, bool]:
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
    head = _read_text(path, gz)[:4096].splitlines()
    line = next((ln for ln in head if ln.strip()), "")
    if line.lstrip().lower().startswith(("@relation", "%", "@attribute")):
        return "arff", gz
    if "\t" in line:
        return "tsv", gz
    if "," in line:
        return "csv", gz
    return "whitespace", gz


def load_file(
    path: str | os.PathLike,
    class_column: str | int = "last",
    fmt: str | None = None,
    *,
    name: str | None = None,
    header: bool | None = None,
    separator: str | None = None,
    missing: Sequence[str] = ("?",),
    nominal: Sequence[str] | None = None,
    numeric: Sequence[str] | None = None,
    default_type: str = "auto",
    drop_columns: Sequence[str] = (),
    missing_class: str = "error",
    drop_identifiers: bool = False,
    sha256: str | None = None,
    cache: bool = True,
) -> Dataset:
    """Load an unregistered ARFF / CSV / TSV / whitespace file by path.

    ``fmt`` is ``arff``, ``csv``, ``tsv`` or ``whitespace`` (inferred from the
    extension, ``.gz`` allowed). For text formats, ``header=None`` means "the
    first line is a header if ``class_column`` is one of its fields"; columns
    of a headerless file are named ``col1..colN``. Columns are typed numeric if
    every present value parses as a number, unless listed in ``nominal`` /
    ``numeric`` (``default_type`` may be ``nominal`` or ``numeric`` instead of
    ``auto``). If ``sha256`` is given the file must match it.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    class_column : str or int, default ``"last"``
        The class column: a name (case-insensitive if unambiguous), an index,
        ``"first"`` or ``"last"``.
    fmt : str, optional
        ``arff``, ``csv``, ``tsv`` or ``whitespace`` (a ``.gz`` suffix means
        gzipped); inferred from the file when ``None``.
    name : str, optional
        The dataset's name; default the file name without its extensions.
    header : bool, optional
        Whether a text file's first line is a header (see above).
    separator : str, optional
        The CSV separator (default ``,``; ``whitespace`` for runs of blanks).
    missing : sequence of str, default ``("?",)``
        Strings read as missing values in text files.
    nominal, numeric : sequence of str, optional
        Columns forced to be nominal / numeric.
    default_type : str, default ``"auto"``
        Type of the other columns: ``auto``, ``nominal`` or ``numeric``.
    drop_columns : sequence of str, default ()
        Columns to discard.
    missing_class : str, default ``"error"``
        ``error`` or ``drop`` (discard rows without a class value).
    drop_identifiers : bool, default False
        Drop the identifier attributes (:mod:`bncbench.data.identifiers`: a
        nominal attribute with a distinct value on at least 90 % of the rows);
        by default they are kept and one :class:`~bncbench.errors.IdentifierWarning`
        names them.
    sha256 : str, optional
        The sha256 the file must have.
    cache : bool, default True
        Read and write the parsed-table cache (:mod:`bncbench.data.cache`).

    Returns
    -------
    Dataset
        The typed dataset; its ``meta`` records the path, sha256 and format.

    Raises
    ------
    BNCBenchError
        If the file is missing, has an unknown format or another sha256, or
        cannot be parsed.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise BNCBenchError(f"{p}: file not found")
    gz = p.name.lower().endswith(".gz")
    if fmt is None:
        fmt, gz = _infer_format(p)
    fmt = fmt.lower()
    if fmt.endswith(".gz"):
        fmt, gz = fmt[:-3], True
    if fmt not in _FORMATS:
        raise BNCBenchError(f"{p}: unknown format {fmt!r} (expected one of {', '.join(_FORMATS)})")
    sha = sha256_file(p)
    if sha256 and sha != sha256:
        raise BNCBenchError(f"{p}: sha256 {sha[:16]}… does not match the expected {sha256[:16]}…")
    if fmt != "arff" and header is None:
        text = _read_text(p, gz)
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        sep = {"csv": separator or ",", "tsv": "\t", "whitespace": "whitespace"}[fmt]
        fields = [f.strip().strip("'\"") for f in _fields(first, sep)]
        header = isinstance(class_column, str) and class_column in fields
    spec: dict[str, Any] = {
        "format": fmt,
        "gzip": gz,
        "header": bool(header),
        "separator": separator,
        "class_column": class_column,
        "missing": list(missing),
        "types": {"default": default_type, "nominal": list(nominal or []), "numeric": list(numeric or [])},
        "drop_columns": list(drop_columns),
        "missing_class": missing_class,
    }
    X, y = _load_typed(p, spec, str(p), sha, cache)
    X, found = _screen(X, str(p), drop_identifiers, "drop {it} with the dataset option drop_identifiers: true")
    nm = name or re.sub(r"\.(arff|csv|tsv|data|txt)$", "", p.name.lower().removesuffix(".gz"))
    return _make_dataset(nm, X, y, {"path": str(p), "sha256": sha, "format": fmt, "registered": False, **found})


def check_file(
    name: str,
    data_dir: str | os.PathLike | None = None,
    *,
    registry: str | os.PathLike | None = None,
) -> tuple[str, str]:
    """Status of one registered dataset's files: ``("ok"|"missing"|"skipped"|"bad", detail)``.

    Never raises for data problems.

    Parameters
    ----------
    name : str
        A dataset name of the registry.
    data_dir : str or os.PathLike, optional
        Where the files are; default ``$BNCBENCH_DATA_DIR``.
    registry : str or os.PathLike, optional
        The registry file; default :func:`bncbench.data.catalog.registry_path`.

    Returns
    -------
    tuple of (str, str)
        ``"ok"`` with the shape, ``"missing"`` with the path, ``"skipped"`` with the
        reason when an entry with a ``directory`` of its own (the digit datasets) has
        none, or ``"bad"`` with the loader's error message.

    Raises
    ------
    BNCBenchError
        If the name is unknown or there is no data directory.
    """
    from bncbench.data.locate import describe_directory, entry_dir, entry_files

    entry = _entry(name, load_registry(registry))
    if "directory" in entry:  # a directory of its own: skipped, with the reason, when it is absent
        try:
            ddir = entry_dir(entry, data_dir)
        except BNCBenchError as exc:
            return "skipped", str(exc)
        if not ddir.is_dir():
            return "skipped", f"directory {ddir} not found ({describe_directory(entry)})"
    else:
        ddir = resolve_data_dir(data_dir)
    absent = [ddir / f["file"] for f in entry_files(entry) if not (ddir / f["file"]).is_file()]
    if absent:
        return "missing", f"{absent[0]} not found"
    try:
        ds = load_uci(name, data_dir, registry=registry)
    except BNCBenchError as exc:
        return "bad", str(exc)
    split = ds.meta.get("split")
    given = f" (given split: {split['train']} train, {split['test']} test)" if split else ""
    return "ok", f"{ds.n_instances} rows, {ds.n_attributes} attributes, {ds.n_classes} classes{given}"
