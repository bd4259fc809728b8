"""Resolve dataset names, groups and inline specs from a config to loaders.

A dataset entry in a config is a registry name (``adult``), an embedded name
(``sklearn-iris``, ``synth-tree``), a Feelders & Ivanovs perfect-graph name
(``[parents].[attributes].[domain].[sample size]``, ``2.5.2-3.1000``: source ``perfect``,
:func:`bncbench.data.perfect.load_perfect` with :func:`bncbench.data.perfect.default_seed`), a group name (``quickstart``, ``smoke``,
``zaidi2017``, ``feelders_synthetic``, ...), or an inline mapping such as
``{name: synth-x, source: synthetic, n_attributes: 20, p: 2, n_samples: 5000}``.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any, Iterable, Mapping

from bncbench.data.catalog import data_identity, groups, load_registry
from bncbench.data.dataset import Dataset
from bncbench.data.names import dataset_name
from bncbench.data.locate import describe_directory, entry_dir, entry_files, sha256_file
from bncbench.data.sources import SKLEARN_LOADERS, SYNTHETIC_PRESETS, load_sklearn, load_synthetic
from bncbench.data.perfect import NAME as PERFECT_NAME
from bncbench.data.perfect import PAPER_NAMES, default_seed, load_perfect
from bncbench.data.uci import load_file, load_uci
from bncbench.errors import BNCBenchError

EMBEDDED_GROUPS = {
    "quickstart": [
        "sklearn-iris",
        "sklearn-wine",
        "sklearn-breast_cancer",
        "sklearn-digits",
        *SYNTHETIC_PRESETS,
    ],
    "embedded": [*SKLEARN_LOADERS, *SYNTHETIC_PRESETS],
    "feelders_synthetic": list(PAPER_NAMES),
}


def uci_names() -> list[str]:
    """Names of the datasets in the registry file (``datasets/registry.yaml``).

    Returns
    -------
    list of str
        Every registered name, in registry order.

    Raises
    ------
    BNCBenchError
        If the registry file is missing or invalid (see :func:`bncbench.data.catalog.load_registry`).
    """
    return list(load_registry())


def all_groups() -> dict[str, list[str]]:
    """Every dataset group: the embedded ones, then the registry's.

    Returns
    -------
    dict of str to list of str
        Group name to member names: :data:`EMBEDDED_GROUPS` (``quickstart``, ``embedded``), plus
        every group of :func:`bncbench.data.catalog.groups` whose name is not embedded (an
        embedded group wins over a registry group of the same name).

    Raises
    ------
    BNCBenchError
        If the registry file is missing or invalid.
    """
    out = dict(EMBEDDED_GROUPS)
    for g, names in groups().items():
        out.setdefault(g, list(names))
    return out


def known_names() -> list[str]:
    """Every dataset name a config may use (groups not included).

    Returns
    -------
    list of str
        The scikit-learn names (:data:`~bncbench.data.sources.SKLEARN_LOADERS`), the synthetic
        presets (:data:`~bncbench.data.sources.SYNTHETIC_PRESETS`), then :func:`uci_names`.

    Raises
    ------
    BNCBenchError
        If the registry file is missing or invalid.
    """
    return [*SKLEARN_LOADERS, *SYNTHETIC_PRESETS, *uci_names()]


def resolve(
    entries: str | Mapping[str, Any] | Iterable[str | Mapping[str, Any]] | None,
) -> list[dict]:
    """Expand names and groups into a de-duplicated list of dataset specs.

    Each spec is a dict with at least ``name`` and ``source`` (``sklearn``,
    ``synthetic``, ``perfect``, ``uci`` or ``file``).

    Parameters
    ----------
    entries : str, mapping, or iterable of str or mapping
        One entry or several: a dataset name (embedded or registered), a group name (expanded
        recursively, up to three levels deep), or an inline spec mapping with a ``name`` (its
        ``source`` defaults to ``synthetic`` for a name starting with ``synth``, else ``file``).
        ``None`` is an error.

    Returns
    -------
    list of dict
        One spec per distinct name, in order of first appearance; a later entry of the same
        name replaces the earlier spec (keeping its position).

    Raises
    ------
    BNCBenchError
        If ``entries`` is ``None`` or expands to nothing, an inline spec has no ``name`` or a
        source other than ``synthetic``, ``perfect`` and ``file``, or a name is neither a dataset nor a group.
    """
    if entries is None:
        raise BNCBenchError("no datasets given (set dataset=NAME or dataset.names=[...])")
    if isinstance(entries, (str, dict)):
        entries = [entries]
    groups = all_groups()
    uci = set(uci_names())
    out: dict[str, dict] = {}

    def add(entry, depth=0):
        if isinstance(entry, dict) or hasattr(entry, "items"):
            spec = {str(k): v for k, v in dict(entry).items()}
            if "name" not in spec:
                raise BNCBenchError(f"dataset spec {spec} has no 'name'")
            dataset_name(spec["name"])  # 1e3, true, null, nan: refused, not renamed
            spec.setdefault("source", "synthetic" if str(spec["name"]).startswith("synth") else "file")
            if spec["source"] not in ("synthetic", "file", "perfect"):
                raise BNCBenchError(f"dataset {spec['name']!r}: unknown source {spec['source']!r}")
            out[str(spec["name"])] = spec
            return
        name = dataset_name(entry)
        if name in SKLEARN_LOADERS:
            out[name] = {"name": name, "source": "sklearn"}
        elif name in SYNTHETIC_PRESETS:
            out[name] = {"name": name, "source": "synthetic"}
        elif name in uci:
            out[name] = {"name": name, "source": "uci"}
        elif PERFECT_NAME.match(name):
            out[name] = {"name": name, "source": "perfect", "seed": default_seed(name)}
        elif name in groups and depth < 3:
            for member in groups[name]:
                add(member, depth + 1)
        else:
            raise BNCBenchError(
                f"unknown dataset or group {name!r} (see `python -m bncbench data list`; "
                f"groups: {', '.join(sorted(groups))})"
            )

    for e in entries:
        add(e)
    if not out:
        raise BNCBenchError("the dataset list is empty")
    return list(out.values())


def spec_fingerprint(spec: dict) -> str:
    """A stable identity for a dataset spec (with the file checksum for registry data).

    Computed once per spec and process: every task of a dataset asks for it.

    Parameters
    ----------
    spec : dict
        A resolved spec (see :func:`resolve`); JSON-serializable, other values are hashed
        by their ``str()``.

    Returns
    -------
    str
        16 hexadecimal digits of a sha256 over the spec plus, for ``source: uci``, the
        dataset's registry entry without its descriptive fields
        (:func:`bncbench.data.catalog.data_identity`: the file's sha256 and every parse option,
        not the provenance or the notes on the papers), and for ``source: file``, the sha256
        of the file at ``path`` (left out if it cannot be read).

    Raises
    ------
    KeyError
        If a ``uci`` spec names a dataset that is not in the registry.
    BNCBenchError
        If a ``uci`` spec's registry file is missing or invalid.
    """
    return _fingerprint(json.dumps(spec, sort_keys=True, default=str))


def legacy_spec_fingerprint(spec: dict) -> str | None:
    """The fingerprint of a ``uci`` spec as bncbench computed it before the descriptive fields left it.

    It hashed every field of the registry entry, its prose included, so a documentation edit
    orphaned the dataset's records. The runner re-keys records stored under it
    (:attr:`bncbench.harness.runner.Task.legacy_key`).

    Parameters
    ----------
    spec : dict
        A resolved spec.

    Returns
    -------
    str or None
        The old fingerprint, or ``None`` where it equals :func:`spec_fingerprint` (every
        source but ``uci``).
    """
    if spec.get("source") != "uci":
        return None
    return _fingerprint(json.dumps(spec, sort_keys=True, default=str), legacy=True)


@functools.lru_cache(maxsize=256)
def _fingerprint(spec_json: str, legacy: bool = False) -> str:
    spec = json.loads(spec_json)
    ident = dict(spec)
    if spec["source"] == "uci":  # the file's checksum and every parse option of its entry
        entry = load_registry()[spec["name"]]
        ident["entry"] = entry if legacy else data_identity(entry)
    elif spec["source"] == "file" and spec.get("path"):
        try:
            ident["file_sha256"] = sha256_file(spec["path"])
        except OSError:
            pass  # reported when the dataset is loaded
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=8)
def _load_cached(key: str, data_dir: str | None) -> Dataset:
    spec = json.loads(key)
    return _load(spec, data_dir)


def load(spec: dict, data_dir: str | None = None) -> Dataset:
    """Load the dataset described by a resolved spec (cached per process).

    The eight most recently used (spec, data directory) pairs are kept in memory; a spec is
    keyed by its JSON text, so equal specs share one :class:`Dataset` object (do not modify it).

    Parameters
    ----------
    spec : dict
        A resolved spec (see :func:`resolve`). ``sklearn``: loaded by :func:`load_sklearn`;
        ``synthetic``: its other keys are options of :func:`load_synthetic`; ``perfect``: of
        :func:`bncbench.data.perfect.load_perfect` (``seed``, ``n_classes``); ``uci``: loaded by
        :func:`bncbench.data.uci.load_uci`; ``file``: needs ``path`` and ``class_column``, its
        other keys are options of :func:`bncbench.data.uci.load_file`.
    data_dir : str, optional
        The data directory of ``uci`` datasets; default ``$BNCBENCH_DATA_DIR``.

    Returns
    -------
    Dataset
        The typed dataset; a ``file`` dataset is renamed to the spec's ``name``.

    Raises
    ------
    BNCBenchError
        If the source is unknown, a ``file`` spec lacks ``path`` or ``class_column``, or the
        loader fails (unknown name, missing or corrupt file, parse error, fewer than two
        classes, unknown synthetic option, ...).
    """
    return _load_cached(json.dumps(spec, sort_keys=True, default=str), data_dir)


def _load(spec: dict, data_dir: str | None) -> Dataset:
    src = spec["source"]
    name = spec["name"]
    if src == "sklearn":
        return load_sklearn(name)
    if src == "synthetic":
        opts = {k: v for k, v in spec.items() if k not in ("name", "source")}
        if "cardinality" in opts and not isinstance(opts["cardinality"], (int, float)):
            opts["cardinality"] = tuple(opts["cardinality"])
        return load_synthetic(name, **opts)
    if src == "perfect":
        return load_perfect(name, **{k: v for k, v in spec.items() if k not in ("name", "source")})
    if src == "uci":
        return load_uci(name, data_dir=data_dir)
    if src == "file":
        if "path" not in spec or "class_column" not in spec:
            raise BNCBenchError(f"dataset {name!r}: a file dataset needs 'path' and 'class_column'")
        opts = {k: v for k, v in spec.items() if k not in ("name", "source", "path", "class_column")}
        ds = load_file(spec["path"], spec["class_column"], **opts)
        ds.name = name
        return ds
    raise BNCBenchError(f"dataset {name!r}: unknown source {src!r}")


def check_available(specs: list[dict], data_dir: str | None, check=None) -> None:
    """Fail early, with one line, when a dataset cannot be used.

    Registry files must be present in the data directory; then every dataset
    is loaded once (checksums, parsing, at least two classes, at least one
    row), so a bad dataset stops the run before any task starts.

    Parameters
    ----------
    specs : list of dict
        Resolved specs (see :func:`resolve`).
    data_dir : str or None
        The data directory. ``None`` (or ``""``) is an error if a plain registry entry (one
        without a ``directory`` of its own) is among ``specs``, even when ``$BNCBENCH_DATA_DIR``
        is set; an entry with its own ``directory`` is found as
        :func:`bncbench.data.locate.entry_dir` finds it.
    check : callable, optional
        Called with every loaded :class:`~bncbench.data.dataset.Dataset`, e.g. to refuse one the
        protocol cannot evaluate (:func:`bncbench.harness.protocol.check_dataset_fits`).

    Raises
    ------
    BNCBenchError
        If a plain ``uci`` spec is given without ``data_dir``, a registered file is not
        found, or a dataset fails to load (see :func:`load`).
    """
    uci_specs = [s for s in specs if s["source"] == "uci"]
    plain = [s for s in uci_specs if "directory" not in load_registry()[s["name"]]]
    if plain and not data_dir:
        raise BNCBenchError(
            f"dataset {plain[0]['name']!r} needs the data directory: set BNCBENCH_DATA_DIR or data_dir=PATH"
        )
    for s in uci_specs:
        entry = load_registry()[s["name"]]
        ddir = entry_dir(entry, data_dir)
        where = describe_directory(entry) if "directory" in entry else "check BNCBENCH_DATA_DIR / data_dir"
        for f in entry_files(entry):
            path = ddir / f["file"]
            if not path.is_file():
                raise BNCBenchError(
                    f"dataset {s['name']!r}: {path} not found ({where}, "
                    "or `python -m bncbench data check`)"
                )
    for s in specs:
        ds = load(s, data_dir)
        if check is not None:
            check(ds)
