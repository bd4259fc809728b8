"""The dataset loaders: registered datasets by name, unregistered ARFF / CSV / TSV files by path.

Each loader walks the loading steps once, one way (``docs/architecture.md``, "Data"):

locate (:mod:`bncbench.data.locate`: the file, its size and sha256) -> read and parse
(:mod:`bncbench.data.parse`, :mod:`bncbench.data.formats`) -> typed table, through the parsed-table
cache (:mod:`bncbench.data.table`, :mod:`bncbench.data.cache`) -> transforms
(:mod:`bncbench.data.transforms`) -> screening (:mod:`bncbench.data.screen`: identifiers, the
expected shape) -> :class:`~bncbench.data.dataset.Dataset`.

Files are read from the directory named by ``BNCBENCH_DATA_DIR`` (or a ``data_dir``
argument); the parsed and typed table is cached as parquet under ``BNCBENCH_CACHE_DIR``
(default ``~/.cache/bncbench``), keyed by the file's sha256 and the parse specification, so the
second load of a dataset only hashes the file and reads the parquet. A registered dataset whose
files hold a given train/test split is loaded by :mod:`bncbench.data.given_split`.

Public API
----------
``load_uci(name, data_dir=None)``, ``load_file(path, class_column, fmt=None, ...)``,
``check_file(name, data_dir=None)``; re-exported for backward compatibility:
``resolve_data_dir(data_dir=None)``, ``load_registry(path=None)``, ``REGISTRY`` (lazy),
``groups()``, ``resolve_names(names)``, ``registry_path()``, ``parse_arff(text, source)``,
``ArffAttribute``, ``ArffTable``, ``sha256_file(path)``, ``cache_dir()``, ``CACHE_VERSION``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Sequence

from bncbench.data.cache import CACHE_VERSION, cache_dir  # noqa: F401  (re-exported)
from bncbench.data.catalog import (  # noqa: F401  (re-exported)
    GROUP_NAMES,
    PAPERS,
    groups,
    load_registry,
    lookup,
    paper_shapes,
    registry_path,
    resolve_names,
)
from bncbench.data.dataset import BIG_THRESHOLD, Dataset, from_table  # noqa: F401  (BIG_THRESHOLD re-exported)
from bncbench.data.formats.arff import ArffAttribute, ArffTable, parse_arff  # noqa: F401
from bncbench.data.formats.common import FORMATS
from bncbench.data.given_split import load_given
from bncbench.data.locate import (  # noqa: F401  (resolve_data_dir, sha256_file re-exported)
    describe_directory,
    entry_dir,
    entry_files,
    resolve_data_dir,
    sha256_file,
    verify_file,
)
from bncbench.data.parse import infer_format, sniff_header
from bncbench.data.screen import check_shape, screen_identifiers
from bncbench.data.table import typed_table
from bncbench.errors import BNCBenchError

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


def __getattr__(attr: str) -> dict[str, dict]:  # lazy module attribute REGISTRY
    if attr == "REGISTRY":
        return load_registry()
    raise AttributeError(attr)


# --------------------------------------------------------------------------- public loaders


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
    entry = lookup(name, load_registry(registry))
    if "files" in entry:  # several files: a given train/test split (MNIST, USPS)
        return load_given(entry, data_dir, cache=cache)
    path = resolve_data_dir(data_dir) / entry["file"]
    sha = verify_file(path, entry)
    X, y = typed_table(path, entry, str(path), sha, cache)
    X, found = screen_identifiers(X, str(path), entry.get("drop_identifiers"),
                                  f"set drop_identifiers: true in the {name!r} registry entry to drop {{it}}")
    ds = from_table(name, X, y, {**_meta(entry, path, sha), **found})
    check_shape(name, path, ds, entry)
    return ds


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
        fmt, gz = infer_format(p)
    fmt = fmt.lower()
    if fmt.endswith(".gz"):
        fmt, gz = fmt[:-3], True
    if fmt not in FORMATS:
        raise BNCBenchError(f"{p}: unknown format {fmt!r} (expected one of {', '.join(FORMATS)})")
    sha = sha256_file(p)
    if sha256 and sha != sha256:
        raise BNCBenchError(f"{p}: sha256 {sha[:16]}… does not match the expected {sha256[:16]}…")
    if fmt != "arff" and header is None:
        header = sniff_header(p, gz, fmt, separator, class_column)
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
    X, y = typed_table(p, spec, str(p), sha, cache)
    X, found = screen_identifiers(X, str(p), drop_identifiers,
                                  "drop {it} with the dataset option drop_identifiers: true")
    nm = name or re.sub(r"\.(arff|csv|tsv|data|txt)$", "", p.name.lower().removesuffix(".gz"))
    return from_table(nm, X, y, {"path": str(p), "sha256": sha, "format": fmt, "registered": False, **found})


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
    entry = lookup(name, load_registry(registry))
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
