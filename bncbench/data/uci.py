"""The registry of UCI benchmark datasets and the loaders for ARFF / CSV / TSV files.

The registry (``datasets/registry.yaml`` at the repository root, or the file named
by ``BNCBENCH_REGISTRY``) has one entry per dataset: where the file is, how to
parse it, which column is the class, which columns to drop, how the attributes
are typed, the shape and sha256 we expect, where the copy came from, the shape
the papers report and declarative transformations for derived versions (e.g.
abalone's rings binned into three classes).

Files are read from the directory named by ``BNCBENCH_DATA_DIR`` (or a
``data_dir`` argument). Every load verifies the file's sha256; the parsed and
typed table is cached as parquet under ``BNCBENCH_CACHE_DIR`` (default
``~/.cache/bncbench``), keyed by the file's sha256 and the parse specification,
so the second load of a dataset only hashes the file and reads the parquet.

Public API
----------
``load_registry(path=None)``, ``REGISTRY`` (lazy), ``groups()``,
``resolve_names(names)``, ``load_uci(name, data_dir=None)``,
``load_file(path, class_column, fmt=None, ...)``, ``parse_arff(text, source)``,
``check_file(name, data_dir=None)``, ``sha256_file(path)``.
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import io
import json
import os
import re
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from bncbench.data.dataset import BIG_THRESHOLD, Dataset
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

CACHE_VERSION = 1
"""Bumped whenever the parsed representation changes; part of every cache key."""

GROUP_NAMES = ("all", "big", "little", "zaidi2017", "smoke")

_CLASS_COL = "__class__"
_TEXT_FORMATS = ("csv", "tsv", "whitespace")
_FORMATS = ("arff",) + _TEXT_FORMATS


# --------------------------------------------------------------------------- paths


def registry_path() -> Path:
    """The registry file: ``$BNCBENCH_REGISTRY`` or ``<repo>/datasets/registry.yaml``."""
    env = os.environ.get("BNCBENCH_REGISTRY")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "datasets" / "registry.yaml"


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: the argument, else ``$BNCBENCH_DATA_DIR``."""
    d = data_dir if data_dir not in (None, "") else os.environ.get("BNCBENCH_DATA_DIR")
    if not d:
        raise BNCBenchError(
            "no data directory: set BNCBENCH_DATA_DIR or pass data_dir "
            "(e.g. BNCBENCH_DATA_DIR=/work/shared/datasets/uci)"
        )
    return Path(d).expanduser()


def cache_dir() -> Path:
    """The parse cache: ``$BNCBENCH_CACHE_DIR`` or ``~/.cache/bncbench``."""
    d = os.environ.get("BNCBENCH_CACHE_DIR")
    return Path(d).expanduser() if d else Path.home() / ".cache" / "bncbench"


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --------------------------------------------------------------------------- registry


@functools.lru_cache(maxsize=8)
def _load_registry_cached(path: str, mtime: float) -> dict[str, dict]:
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except FileNotFoundError:
        raise BNCBenchError(f"dataset registry not found: {path}") from None
    except yaml.YAMLError as exc:
        raise BNCBenchError(f"dataset registry {path} is not valid YAML: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("datasets"), dict):
        raise BNCBenchError(f"dataset registry {path}: expected a top-level 'datasets' mapping")
    out: dict[str, dict] = {}
    for name, entry in raw["datasets"].items():
        if not isinstance(entry, dict) or "file" not in entry:
            raise BNCBenchError(f"dataset registry {path}: entry {name!r} has no 'file'")
        fmt = entry.get("format", "arff")
        if fmt not in _FORMATS:
            raise BNCBenchError(f"dataset registry {path}: entry {name!r} has unknown format {fmt!r}")
        if name in GROUP_NAMES:
            raise BNCBenchError(f"dataset registry {path}: {name!r} is a group name")
        e = dict(entry)
        e["name"] = str(name)
        out[str(name)] = e
    extra = raw.get("groups") or {}
    if not isinstance(extra, dict):
        raise BNCBenchError(f"dataset registry {path}: 'groups' must be a mapping")
    out_groups = {str(k): [str(n) for n in v] for k, v in extra.items()}
    for g, members in out_groups.items():
        for n in members:
            if n not in out:
                raise BNCBenchError(f"dataset registry {path}: group {g!r} names unknown dataset {n!r}")
    _EXTRA_GROUPS[path] = out_groups
    return out


_EXTRA_GROUPS: dict[str, dict[str, list[str]]] = {}


def load_registry(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """Return ``{name: entry}`` for every registered dataset (entries are dicts)."""
    p = Path(path) if path is not None else registry_path()
    try:
        mtime = p.stat().st_mtime
    except FileNotFoundError:
        raise BNCBenchError(f"dataset registry not found: {p}") from None
    return _load_registry_cached(str(p), mtime)


def __getattr__(attr: str):  # lazy module attribute REGISTRY
    if attr == "REGISTRY":
        return load_registry()
    raise AttributeError(attr)


def _entry(name: str, registry: dict | None = None) -> dict:
    reg = registry if registry is not None else load_registry()
    if name not in reg:
        close = [n for n in reg if n.startswith(name[:3])][:5]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise BNCBenchError(f"unknown dataset {name!r}{hint}; see `python -m bncbench data list`")
    return reg[name]


def _is_big(entry: dict) -> bool:
    return int(entry.get("expected", {}).get("rows", 0)) > BIG_THRESHOLD


def groups(path: str | os.PathLike | None = None) -> dict[str, list[str]]:
    """Dataset groups: ``all``, ``big`` (> 10,000 rows), ``little``, ``zaidi2017``, ``petitjean2018``, ``smoke``.

    ``smoke`` (and any other extra group) comes from the registry's ``groups``
    section; the others are derived from the entries.
    """
    reg = load_registry(path)
    p = str(Path(path) if path is not None else registry_path())
    extra = _EXTRA_GROUPS.get(p, {})
    names = list(reg)
    out = {
        "all": names,
        "big": [n for n in names if _is_big(reg[n])],
        "little": [n for n in names if not _is_big(reg[n])],
        "zaidi2017": [n for n in names if (reg[n].get("paper") or {}).get("zaidi2017")],
        "petitjean2018": [n for n in names if (reg[n].get("paper") or {}).get("petitjean2018")],
        "smoke": list(extra.get("smoke", [])),
    }
    for g, members in extra.items():
        out.setdefault(g, list(members))
    return out


def resolve_names(names: str | Iterable[str], path: str | os.PathLike | None = None) -> list[str]:
    """Expand group names into dataset names (order kept, duplicates removed)."""
    if isinstance(names, str):
        names = [names]
    reg = load_registry(path)
    gr = groups(path)
    out: list[str] = []
    for n in names:
        n = str(n)
        members = gr.get(n, [n])
        for m in members:
            _entry(m, reg)
            if m not in out:
                out.append(m)
    return out


# --------------------------------------------------------------------------- ARFF


@dataclass
class ArffAttribute:
    name: str
    kind: str  # "numeric" | "nominal" | "string"
    values: list[str] | None = None


@dataclass
class ArffTable:
    relation: str
    attributes: list[ArffAttribute]
    frame: pd.DataFrame  # typed: category (declared values) / float64


_NUMERIC_TYPES = {"numeric", "real", "integer"}


def _tokenize_quoted(s: str, seps: str, where: str) -> list[tuple[str, bool]]:
    """Split ``s`` on any char in ``seps`` honouring '...' and "..." quotes and backslash escapes.

    Returns ``(value, was_quoted)`` pairs with surrounding whitespace stripped.
    """
    out: list[tuple[str, bool]] = []
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] in "'\"":
            q = s[i]
            i += 1
            buf = []
            while i < n and s[i] != q:
                if s[i] == "\\" and i + 1 < n:
                    i += 1
                    buf.append({"n": "\n", "t": "\t", "r": "\r"}.get(s[i], s[i]))
                else:
                    buf.append(s[i])
                i += 1
            if i >= n:
                raise BNCBenchError(f"{where}: unterminated quote")
            i += 1
            while i < n and s[i] in " \t":
                i += 1
            if i < n and s[i] not in seps:
                raise BNCBenchError(f"{where}: unexpected text after a quoted value")
            out.append(("".join(buf), True))
        else:
            j = i
            while j < n and s[j] not in seps:
                j += 1
            out.append((s[i:j].strip(), False))
            i = j
        if i >= n:
            return out
        i += 1  # skip separator


def _split_data_line(line: str, where: str) -> list[str | None]:
    """One ARFF data line → values, ``None`` for a missing (unquoted ``?``) value."""
    if "\\" not in line:
        out: list[str | None] = []
        for t in line.split(","):
            t = t.strip()
            if t == "?":
                out.append(None)
            elif t[:1] in ("'", '"'):
                q = t[0]
                if len(t) < 2 or t[-1] != q or q in t[1:-1]:
                    break  # quoted value containing a comma or quote: use the full tokenizer
                out.append(t[1:-1])
            else:
                out.append(t)
        else:
            return out
    return [None if (v == "?" and not q) else v for v, q in _tokenize_quoted(line, ",", where)]


def _parse_attribute_decl(rest: str, where: str) -> ArffAttribute:
    rest = rest.strip()
    if not rest:
        raise BNCBenchError(f"{where}: @attribute without a name")
    if rest[0] in "'\"":
        q = rest[0]
        end = rest.find(q, 1)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find(q, end + 1)
        if end < 0:
            raise BNCBenchError(f"{where}: unterminated quoted attribute name")
        name = rest[1:end].replace("\\" + q, q)
        typ = rest[end + 1 :].strip()
    else:
        m = re.match(r"([^\s{]+)\s*(.*)$", rest)
        if not m:
            raise BNCBenchError(f"{where}: cannot read the attribute declaration")
        name, typ = m.group(1), m.group(2).strip()
    if not typ:
        raise BNCBenchError(f"{where}: attribute {name!r} has no type")
    if typ.startswith("{"):
        close = typ.rfind("}")
        if close < 0:
            raise BNCBenchError(f"{where}: attribute {name!r}: nominal value list has no closing '}}'")
        body = typ[1:close].strip()
        values = [v for v, _ in _tokenize_quoted(body, ",", where)] if body else []
        if len(set(values)) != len(values):
            dup = sorted({v for v in values if values.count(v) > 1})
            raise BNCBenchError(f"{where}: attribute {name!r} declares duplicate values {dup}")
        return ArffAttribute(name, "nominal", values)
    word = typ.split()[0].split("[")[0].lower()
    if word in _NUMERIC_TYPES:  # legacy Weka 'INTEGER [lo,hi]' / 'REAL [lo,hi]' ranges are ignored
        return ArffAttribute(name, "numeric")
    if word == "string":
        return ArffAttribute(name, "string")
    raise BNCBenchError(f"{where}: attribute {name!r} has unsupported type {typ.split()[0]!r}")


def parse_arff(text: str, source: str = "<string>") -> ArffTable:
    """Parse ARFF text into a typed table.

    Handles ``@relation``/``@attribute``/``@data`` in any case, ``%`` comments,
    quoted names and values (with spaces or commas), legacy Weka range syntax
    (``INTEGER [1,10]``), ``?`` for missing (a *quoted* ``'?'`` is a value), and
    ``string`` attributes (read as nominal). Errors name ``source`` and the line.
    """
    lines = text.splitlines()
    relation = ""
    attrs: list[ArffAttribute] = []
    data_start = None
    for idx, raw in enumerate(lines):
        s = raw.strip()
        if not s or s.startswith("%"):
            continue
        where = f"{source}, line {idx + 1}"
        low = s[:10].lower()
        if low.startswith("@relation"):
            relation = s[9:].strip().strip("'\"")
        elif low.startswith("@attribute"):
            attrs.append(_parse_attribute_decl(s[10:], where))
        elif low.startswith("@data"):
            data_start = idx + 1
            break
        else:
            raise BNCBenchError(f"{where}: unexpected header line {s[:60]!r}")
    if data_start is None:
        raise BNCBenchError(f"{source}: no @data section (truncated or not an ARFF file?)")
    if not attrs:
        raise BNCBenchError(f"{source}: no @attribute declarations")
    names = [a.name for a in attrs]
    if len(set(names)) != len(names):
        raise BNCBenchError(f"{source}: duplicate attribute names")

    d = len(attrs)
    rows: list[list[str | None]] = []
    linenos: list[int] = []
    for idx in range(data_start, len(lines)):
        s = lines[idx].strip()
        if not s or s.startswith("%"):
            continue
        where = f"{source}, line {idx + 1}"
        if s.startswith("{"):
            raise BNCBenchError(f"{where}: sparse ARFF instances are not supported")
        vals = _split_data_line(s, where)
        if len(vals) != d:
            raise BNCBenchError(
                f"{where}: expected {d} values, found {len(vals)} (malformed or truncated line)"
            )
        rows.append(vals)
        linenos.append(idx + 1)
    if not rows:
        raise BNCBenchError(f"{source}: the @data section is empty")

    cols = list(zip(*rows))
    frame: dict[str, Any] = {}
    for j, a in enumerate(attrs):
        vals = cols[j]
        if a.kind == "numeric":
            frame[a.name] = _to_float(vals, linenos, f"{source}", a.name)
        else:
            if a.kind == "string":
                a.values = sorted({v for v in vals if v is not None})
                a.kind = "nominal"
            frame[a.name] = _to_categorical(vals, a.values or [], linenos, source, a.name)
    return ArffTable(relation, attrs, pd.DataFrame(frame))


def _cat_index(labels: Sequence[str]) -> pd.Index:
    """Category labels as an Index of the default string dtype (``str`` in pandas 3)."""
    return pd.Index([str(v) for v in labels])


def _to_float(vals: Sequence[str | None], linenos: Sequence[int], source: str, col: str) -> np.ndarray:
    arr = np.array(["nan" if v is None else v for v in vals], dtype=object)
    try:
        return arr.astype(np.float64)
    except ValueError:
        pass
    num = pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(np.isnan(num) & np.array([v is not None and v.lower() != "nan" for v in vals]))
    k = int(bad[0])
    raise BNCBenchError(
        f"{source}, line {linenos[k]}: attribute {col!r} is numeric but has value {vals[k]!r}"
    )


def _to_categorical(
    vals: Sequence[str | None], categories: list[str], linenos: Sequence[int], source: str, col: str,
    what: str = "attribute",
) -> pd.Categorical:
    index = _cat_index(categories)
    arr = np.array(vals, dtype=object)
    codes = index.get_indexer(arr)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        bad = bad[np.array([arr[k] is not None for k in bad], dtype=bool)]
    if bad.size:
        k = int(bad[0])
        line = f", line {linenos[k]}" if linenos is not None else ""
        shown = categories if len(categories) <= 12 else categories[:12] + ["..."]
        kind = "unknown class value" if what == "class" else "undeclared value"
        raise BNCBenchError(
            f"{source}{line}: {kind} {vals[k]!r} for {what} {col!r} (declared: {shown})"
        )
    return pd.Categorical.from_codes(codes, categories=index)


# --------------------------------------------------------------------------- text formats


def _read_text(path: Path, gz: bool) -> str:
    try:
        raw = path.read_bytes()
        if gz:
            raw = gzip.decompress(raw)
    except FileNotFoundError:
        raise BNCBenchError(f"{path}: file not found") from None
    except (EOFError, OSError, zlib.error) as exc:
        raise BNCBenchError(f"{path}: truncated or corrupt gzip file ({exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _fields(line: str, sep: str) -> list[str]:
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


def _parse_text(
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
    """Parse delimited text into typed attributes, the class and each row's line number."""
    lines = text.splitlines()
    skip = {int(k) for k in skip_lines}
    keep = [i for i, ln in enumerate(lines) if ln.strip() and (i + 1) not in skip]
    if not keep:
        raise BNCBenchError(f"{source}: no data")
    if header:
        head = [h.strip().strip("'\"") for h in _fields(lines[keep[0]], sep)]
        keep = keep[1:]
        if names is None:
            names = head
    if not keep:
        raise BNCBenchError(f"{source}: no data rows")
    if names is None:
        names = [f"col{j + 1}" for j in range(len(_fields(lines[keep[0]], sep)))]
    names = [str(n) for n in names]
    ncols = len(names)
    if len(names) != len(set(names)):
        raise BNCBenchError(f"{source}: duplicate column names")
    # field-count check per line (pandas silently pads short rows)
    body = [lines[i] for i in keep]
    if sep == "whitespace":
        counts = [len(ln.split()) for ln in body]
    elif '"' in text:
        counts = [len(_fields(ln, sep)) for ln in body]
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
    cls = _resolve_column(class_column, names, source)

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
                _to_float(vals, linenos, source, c)
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
        catv = pd.Categorical.from_codes(codes, categories=_cat_index(target))
        if c == cls:
            y = catv
        else:
            out[c] = catv
    return pd.DataFrame(out), y, linenos


# --------------------------------------------------------------------------- common pipeline


def _resolve_column(spec: Any, columns: Sequence[str], source: str, what: str = "class column") -> str:
    cols = list(columns)
    if isinstance(spec, int):
        if not -len(cols) <= spec < len(cols):
            raise BNCBenchError(f"{source}: {what} index {spec} out of range ({len(cols)} columns)")
        return cols[spec]
    s = str(spec)
    if s == "last":
        return cols[-1]
    if s == "first":
        return cols[0]
    if s in cols:
        return s
    low = [c for c in cols if c.lower() == s.lower()]
    if len(low) == 1:
        return low[0]
    shown = cols if len(cols) <= 15 else cols[:15] + ["..."]
    raise BNCBenchError(f"{source}: no {what} {s!r} (columns: {shown})")


def _apply_transforms(X: pd.DataFrame, y: pd.Categorical, transforms: list, source: str):
    """Declarative transforms from the registry (see datasets/registry.yaml header)."""
    for t in transforms or []:
        op = t.get("op")
        if op == "bin_class":
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
        else:
            raise BNCBenchError(f"{source}: unknown transform {op!r}")
    return X, y


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


def _spec_key(spec: dict) -> str:
    blob = json.dumps({"v": CACHE_VERSION, **spec}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _cache_file(sha: str, spec: dict) -> Path:
    return cache_dir() / f"{sha}-{_spec_key(spec)}.parquet"


def _cache_read(path: Path) -> tuple[pd.DataFrame, pd.Categorical] | None:
    if not path.exists():
        return None
    try:
        df = pd.read_parquet(path)
    except Exception:  # corrupt cache entry: ignore and re-parse
        return None
    if _CLASS_COL not in df.columns:
        return None
    y = df.pop(_CLASS_COL)
    return df, pd.Categorical(y)


def _cache_write(path: Path, X: pd.DataFrame, y: pd.Categorical) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        df = X.copy()
        df[_CLASS_COL] = y
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".parquet", dir=path.parent)
        os.close(fd)
        try:
            df.to_parquet(tmp, index=False)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        pass  # an unwritable cache only costs speed


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
    keys = ("file", "format", "provenance", "paper", "differences", "transforms", "url")
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
    """Load a registered dataset by name, verifying its sha256 and shape."""
    entry = _entry(name, load_registry(registry))
    path = resolve_data_dir(data_dir) / entry["file"]
    sha = _verify(path, entry)
    X, y = _load_typed(path, entry, str(path), sha, cache)
    ds = _make_dataset(name, X, y, _meta(entry, path, sha))
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
    nm = name or re.sub(r"\.(arff|csv|tsv|data|txt)$", "", p.name.lower().removesuffix(".gz"))
    return _make_dataset(nm, X, y, {"path": str(p), "sha256": sha, "format": fmt, "registered": False})


def check_file(name: str, data_dir: str | os.PathLike | None = None, *, registry=None) -> tuple[str, str]:
    """Status of one registered file: ``("ok"|"missing"|"bad", detail)``. Never raises for data problems."""
    entry = _entry(name, load_registry(registry))
    path = resolve_data_dir(data_dir) / entry["file"]
    if not path.is_file():
        return "missing", f"{path} not found"
    try:
        ds = load_uci(name, data_dir, registry=registry)
    except BNCBenchError as exc:
        return "bad", str(exc)
    return "ok", f"{ds.n_instances} rows, {ds.n_attributes} attributes, {ds.n_classes} classes"
