"""The dataset catalog: reading ``registry.yaml``, dataset groups and name resolution.

The registry (``datasets/registry.yaml`` at the repository root, or the file named
by ``BNCBENCH_REGISTRY``) has one entry per dataset: where the file is, how to
parse it, which column is the class, which columns to drop, how the attributes
are typed, the shape and sha256 we expect, where the copy came from, the shape
the papers report and declarative transformations for derived versions (e.g.
abalone's rings binned into three classes; ``variants`` of an entry are derived datasets
of their own, such as ``mnist14``). Loading the files is
:mod:`bncbench.data.uci`'s job.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Iterable

from bncbench.data.dataset import BIG_THRESHOLD
from bncbench.data.formats.common import _FORMATS
from bncbench.errors import BNCBenchError

__all__ = ["GROUP_NAMES", "groups", "load_registry", "registry_path", "resolve_names"]

GROUP_NAMES = ("all", "big", "little", "zaidi2017", "smoke")


def registry_path() -> Path:
    """The registry file: ``$BNCBENCH_REGISTRY`` or ``<repo>/datasets/registry.yaml``.

    Returns
    -------
    pathlib.Path
        The path of the registry YAML file (not checked for existence).
    """
    env = os.environ.get("BNCBENCH_REGISTRY")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parents[2] / "datasets" / "registry.yaml"


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
        if fmt not in _FORMATS and not (fmt == "idx" and "files" in entry):  # idx: images + labels files
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
    return out


_EXTRA_GROUPS: dict[str, dict[str, list[str]]] = {}


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
            _entry(m, reg)
            if m not in out:
                out.append(m)
    return out
