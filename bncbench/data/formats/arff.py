"""The ARFF parser: ARFF text to a typed table (float64 and categorical columns)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bncbench.data.formats.common import to_categorical, to_float
from bncbench.errors import BNCBenchError

__all__ = ["ArffAttribute", "ArffTable", "parse_arff"]


@dataclass
class ArffAttribute:
    """One ``@attribute`` declaration of an ARFF header.

    Attributes
    ----------
    name : str
        The attribute's name (unquoted).
    kind : str
        ``"numeric"``, ``"nominal"`` or ``"string"`` (``parse_arff`` turns
        ``string`` attributes into ``nominal`` ones).
    values : list of str or None
        The declared nominal values in declaration order; ``None`` for numeric.
    """

    name: str
    kind: str  # "numeric" | "nominal" | "string"
    values: list[str] | None = None


@dataclass
class ArffTable:
    """A parsed ARFF file.

    Attributes
    ----------
    relation : str
        The ``@relation`` name.
    attributes : list of ArffAttribute
        The declared attributes, in file order.
    frame : pandas.DataFrame
        One column per attribute: float64 for numeric attributes, categorical
        with the declared values (in declaration order) for nominal ones.
    """

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

    Parameters
    ----------
    text : str
        The whole ARFF file as text.
    source : str, default ``"<string>"``
        Name of the text's origin (usually its path), used in error messages.

    Returns
    -------
    ArffTable
        The relation name, the attribute declarations and the typed frame.

    Raises
    ------
    BNCBenchError
        On a malformed header or data line, an undeclared nominal value, a
        non-numeric value of a numeric attribute, sparse instances, or a missing
        or empty ``@data`` section.
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
            frame[a.name] = to_float(vals, linenos, f"{source}", a.name)
        else:
            if a.kind == "string":
                a.values = sorted({v for v in vals if v is not None})
                a.kind = "nominal"
            frame[a.name] = to_categorical(vals, a.values or [], linenos, source, a.name)
    return ArffTable(relation, attrs, pd.DataFrame(frame))
