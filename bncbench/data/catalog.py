"""The dataset catalog: reading ``registry.yaml``, dataset groups and name resolution.

The registry (``datasets/registry.yaml`` at the repository root, or the file named
by ``BNCBENCH_REGISTRY``) has one entry per dataset: where the file is, how to
parse it, which column is the class, which columns to drop, how the attributes
are typed, the shape and sha256 we expect, where the copy came from, the shape
the papers report and declarative transformations for derived versions (e.g.
abalone's rings binned into three classes; ``variants`` of an entry are derived datasets
of their own, such as ``mnist14``). Loading the files is
:mod:`bncbench.data.uci`'s job (and :mod:`bncbench.data.given_split`'s).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Iterable

from bncbench import paths, settings
from bncbench.data.dataset import BIG_THRESHOLD, DBL_BIG_THRESHOLD
from bncbench.data.formats.common import FORMATS
from bncbench.errors import BNCBenchError

__all__ = ["DESCRIPTIVE_FIELDS", "GROUP_NAMES", "PAPERS", "data_identity", "groups", "load_registry", "lookup",
           "paper_shapes", "registry_path", "resolve_names"]

DESCRIPTIVE_FIELDS = frozenset({"provenance", "paper", "matches_paper", "differences", "url", "openml_id",
                                "file_shape"})
"""The registry entry fields that describe a dataset without changing what it loads to: where the
file came from, how it compares with the papers, where ``data fetch`` downloads it. They stay out
of the dataset's identity (:func:`data_identity`), so editing them keeps the task keys, and so the
stored records, of the dataset. Every other field (the file's checksum, the parse options, the
transforms, the expected shape) is part of it; a field added to the registry later is too, until
it is listed here."""

PAPERS = {
    "zaidi2017": "Zaidi et al. 2017, Table 3",
    "petitjean2018": "Petitjean et al. 2018, Table 6",
    "zaidi_dbl": "Zaidi et al., deep-broad learning, Table 1",
}
"""The papers whose dataset tables the registry records, each dataset's shape as printed there: in
the entry (``paper.<key>``; null when the paper did not use the dataset) for the first two, in the
registry's ``papers.<key>`` table for later ones (written when an entry's whole content was part of
its records' task keys; :data:`DESCRIPTIVE_FIELDS` no longer are). Each key is also the group of the
datasets that paper used (:func:`paper_shapes`)."""

_PAPER_BIG = {"zaidi_dbl_big": ("zaidi_dbl", DBL_BIG_THRESHOLD)}
"""A paper's own *Big* subset: group name to (paper group, more rows than this in our copy)."""

GROUP_NAMES = ("all", "big", "little", "digits", *PAPERS, *_PAPER_BIG, "smoke")


def registry_path() -> Path:
    """The registry file: ``$BNCBENCH_REGISTRY`` or ``<repo>/datasets/registry.yaml``.

    Returns
    -------
    pathlib.Path
        The path of the registry YAML file (not checked for existence).
    """
    env = settings.registry_file()
    if env is not None:
        return env
    return paths.registry_dir() / "registry.yaml"


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
        if not isinstance(entry, dict) or ("file" not in entry and "files" not in entry):
            raise BNCBenchError(f"dataset registry {path}: entry {name!r} has no 'file'")
        fmt = entry.get("format", "arff")
        if fmt not in FORMATS and not (fmt == "idx" and "files" in entry):  # idx: images + labels files
            raise BNCBenchError(f"dataset registry {path}: entry {name!r} has unknown format {fmt!r}")
        if name in GROUP_NAMES:
            raise BNCBenchError(f"dataset registry {path}: {name!r} is a group name")
        e = dict(entry)
        e["name"] = str(name)
        out[str(name)] = e
        for vname, v in _variants(path, e).items():
            if vname in out or vname in GROUP_NAMES or vname in raw["datasets"]:
                raise BNCBenchError(f"dataset registry {path}: variant {vname!r} of {name!r} reuses a name")
            out[vname] = v
    extra = raw.get("groups") or {}
    if not isinstance(extra, dict):
        raise BNCBenchError(f"dataset registry {path}: 'groups' must be a mapping")
    out_groups = {str(k): [str(n) for n in v] for k, v in extra.items()}
    for g, members in out_groups.items():
        for n in members:
            if n not in out:
                raise BNCBenchError(f"dataset registry {path}: group {g!r} names unknown dataset {n!r}")
    _EXTRA_GROUPS[path] = out_groups
    _PAPER_TABLES[path] = _paper_tables(raw.get("papers"), out, path)
    return out


_EXTRA_GROUPS: dict[str, dict[str, list[str]]] = {}
_PAPER_TABLES: dict[str, dict[str, dict[str, dict]]] = {}


def _paper_tables(papers, registry: dict, path: str) -> dict[str, dict[str, dict]]:
    """The ``papers`` section: ``{paper key: {dataset name: shape}}``, checked."""
    if not isinstance(papers or {}, dict):
        raise BNCBenchError(f"dataset registry {path}: 'papers' must be a mapping")
    out: dict[str, dict[str, dict]] = {}
    for key, table in (papers or {}).items():
        if key not in PAPERS or not isinstance(table, dict):
            raise BNCBenchError(f"dataset registry {path}: 'papers' has {key!r}; expected a table of one of "
                                f"{', '.join(PAPERS)}")
        unknown = [n for n in table if n not in registry]
        if unknown:
            raise BNCBenchError(f"dataset registry {path}: paper {key!r} names unknown dataset {unknown[0]!r}")
        out[str(key)] = {str(n): dict(shape) for n, shape in table.items() if shape}
    return out


def _variants(path: str, entry: dict) -> dict[str, dict]:
    """The derived datasets an entry declares under ``variants`` (removed from the entry).

    A variant is the entry with the variant's own fields in place of the entry's (its
    ``transforms``, ``expected`` shape, ``paper`` ...), and ``variant_of`` naming the entry:
    ``mnist14`` is ``mnist`` downsampled to 14 x 14 from the same files.
    """
    raw = entry.pop("variants", None) or {}
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise BNCBenchError(f"dataset registry {path}: 'variants' of {entry['name']!r} must map names to fields")
    return {str(k): {**entry, **v, "name": str(k), "variant_of": entry["name"]} for k, v in raw.items()}


def load_registry(path: str | os.PathLike | None = None) -> dict[str, dict]:
    """Return ``{name: entry}`` for every registered dataset (entries are dicts).

    The parsed registry is cached per path and modification time, so an edited
    file is re-read.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The registry file; default :func:`registry_path`.

    Returns
    -------
    dict of str to dict
        Each entry as written in the YAML, plus its ``name``.

    Raises
    ------
    BNCBenchError
        If the file is missing, not valid YAML or has an invalid entry or group.
    """
    p = Path(path) if path is not None else registry_path()
    try:
        mtime = p.stat().st_mtime
    except FileNotFoundError:
        raise BNCBenchError(f"dataset registry not found: {p}") from None
    return _load_registry_cached(str(p), mtime)


def __getattr__(attr: str) -> dict[str, dict]:  # lazy module attribute REGISTRY
    if attr == "REGISTRY":
        return load_registry()
    raise AttributeError(attr)


def data_identity(entry: dict) -> dict:
    """The part of a registry entry that determines the dataset it loads to.

    Parameters
    ----------
    entry : dict
        A registry entry (:func:`load_registry`).

    Returns
    -------
    dict
        ``entry`` without the :data:`DESCRIPTIVE_FIELDS`.
    """
    return {k: v for k, v in entry.items() if k not in DESCRIPTIVE_FIELDS}


def lookup(name: str, registry: dict | None = None) -> dict:
    """A registered dataset's entry.

    Parameters
    ----------
    name : str
        A dataset name (not a group).
    registry : dict, optional
        ``{name: entry}`` (:func:`load_registry`); default the project's registry.

    Returns
    -------
    dict
        Its entry.

    Raises
    ------
    BNCBenchError
        If the name is not registered (with up to five names of the same first three letters).
    """
    reg = registry if registry is not None else load_registry()
    if name not in reg:
        close = [n for n in reg if n.startswith(name[:3])][:5]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise BNCBenchError(f"unknown dataset {name!r}{hint}; see `python -m bncbench data list`")
    return reg[name]


def _rows(entry: dict) -> int:
    return int(entry.get("expected", {}).get("rows", 0))


def paper_shapes(name: str, path: str | os.PathLike | None = None) -> dict[str, dict]:
    """The shape of dataset ``name`` in each paper of :data:`PAPERS` that used it.

    Parameters
    ----------
    name : str
        A registered dataset name.
    path : str or os.PathLike, optional
        The registry file; default :func:`registry_path`.

    Returns
    -------
    dict of str to dict
        Paper key to the shape as printed there (``table``, ``rows``,
        ``attributes_incl_class``, ``classes``), in :data:`PAPERS` order.

    Raises
    ------
    BNCBenchError
        If the name is not registered.
    """
    entry = lookup(name, load_registry(path))
    tables = _PAPER_TABLES.get(str(Path(path) if path is not None else registry_path()), {})
    in_entry = entry.get("paper") or {}
    out = {}
    for key in PAPERS:
        shape = in_entry.get(key) or tables.get(key, {}).get(name)
        if shape:
            out[key] = shape
    return out


def groups(path: str | os.PathLike | None = None) -> dict[str, list[str]]:
    """Dataset groups, derived from the entries except ``smoke``.

    ``all`` (the UCI collection: every entry without a ``directory`` of its own, variants
    excluded: they are the same data again); ``digits`` (the entries with one: MNIST, USPS);
    ``big`` (more than 10,000 rows, the threshold of Zaidi et al. 2017) and ``little`` (the
    others); one group per paper of :data:`PAPERS`
    (``zaidi2017``, ``petitjean2018``, ``zaidi_dbl``: the datasets with a shape
    in that paper, :func:`paper_shapes`); ``zaidi_dbl_big`` (the ``zaidi_dbl`` datasets
    with more than 100,000 rows in our copy, the deep-broad paper's threshold).
    ``smoke`` (and any other extra group) comes from the registry's ``groups``
    section.

    Parameters
    ----------
    path : str or os.PathLike, optional
        The registry file; default :func:`registry_path`.

    Returns
    -------
    dict of str to list of str
        Group name to the member dataset names, in registry order.
    """
    reg = load_registry(path)
    p = str(Path(path) if path is not None else registry_path())
    extra = _EXTRA_GROUPS.get(p, {})
    # the UCI collection; entries with a directory of their own (the digit sets) are the `digits` group;
    # a variant (covertype-grouped) is the same data again: in the paper groups that name it only
    names = [n for n in reg if "directory" not in reg[n]]
    collection = [n for n in names if "variant_of" not in reg[n]]
    out = {
        "all": collection,
        "big": [n for n in collection if _rows(reg[n]) > BIG_THRESHOLD],
        "little": [n for n in collection if _rows(reg[n]) <= BIG_THRESHOLD],
        "digits": [n for n in reg if "directory" in reg[n]],
    }
    shapes = {n: paper_shapes(n, path) for n in names}
    for key in PAPERS:
        out[key] = [n for n in names if key in shapes[n]]
    for g, (paper, threshold) in _PAPER_BIG.items():
        out[g] = [n for n in out[paper] if _rows(reg[n]) > threshold]
    out["smoke"] = list(extra.get("smoke", []))
    for g, members in extra.items():
        out.setdefault(g, list(members))
    return out


def resolve_names(names: str | Iterable[str], path: str | os.PathLike | None = None) -> list[str]:
    """Expand group names into dataset names (order kept, duplicates removed).

    Parameters
    ----------
    names : str or iterable of str
        Dataset and/or group names.
    path : str or os.PathLike, optional
        The registry file; default :func:`registry_path`.

    Returns
    -------
    list of str
        Registered dataset names.

    Raises
    ------
    BNCBenchError
        If a name is neither a group nor a registered dataset.
    """
    if isinstance(names, str):
        names = [names]
    reg = load_registry(path)
    gr = groups(path)
    out: list[str] = []
    for n in names:
        n = str(n)
        members = gr.get(n, [n])
        for m in members:
            lookup(m, reg)
            if m not in out:
                out.append(m)
    return out
