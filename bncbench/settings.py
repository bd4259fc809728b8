"""Every setting bncbench reads from the environment, and the only module that reads it.

* ``BNCBENCH_DATA_DIR``: the data directory of the registered datasets, when no ``data_dir``
  is given (:mod:`bncbench.data.locate`; unset: an error that says so);
* ``BNCBENCH_CACHE_DIR``: the parsed-table cache (:mod:`bncbench.data.cache`; unset:
  ``~/.cache/bncbench``);
* ``BNCBENCH_REGISTRY``: the dataset registry file (:mod:`bncbench.data.catalog`; unset:
  ``datasets/registry.yaml`` of the repository);
* ``BNCBENCH_CONF_DIR``: the Hydra config directory (:mod:`bncbench.paths`; unset: ``conf/``);
* ``BNCBENCH_PLUGINS``: comma-separated plug-in modules to import (:mod:`bncbench.components`);
* ``WEKA_JAR``: Weka's jar, to run Weka as a peer (:mod:`bncbench.peers.weka`; unset: Debian's);
* ``BNCBENCH_GIGAL_SOURCE``: a source checkout or git directory of the authors' KDB / SkDB learner
  ("Gigal", github ``anamf/SKDB``), to build and run it as a peer (:mod:`bncbench.peers.gigal`;
  unset: the peer is skipped);
* ``BNCBENCH_ANCHORS_DIR``: the directory of values measured from the papers' authors' code
  (:mod:`bncbench.peers.gigal`; unset: ``shared/anchors`` beside the repository);
* ``BNCBENCH_MALLOC_KEEP``: ``0`` leaves glibc's allocator as it is in the runner's processes
  (:mod:`bncbench.harness.allocator`; unset: large arrays from the heap, freed memory kept), as
  does any ``MALLOC_*`` variable (glibc's own tuning, which wins);
* the variable a registry entry names as its ``directory: {env: ...}`` (``BNCBENCH_DIGITS_DIR``):
  that entry's directory (:mod:`bncbench.data.locate`; unset: its ``sibling`` beside the data
  directory).

A variable set to the empty string counts as unset. Every value is read when it is asked for,
never kept, so the environment may change between two calls (tests do). The defaults belong to
the modules named above; this module only says what is set.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ANCHORS_DIR", "CACHE_DIR", "CONF_DIR", "DATA_DIR", "GIGAL_SOURCE", "MALLOC_KEEP", "PLUGINS", "REGISTRY",
           "WEKA_JAR", "anchors_dir", "cache_dir", "conf_dir", "data_dir", "directory", "gigal_source", "malloc_keep",
           "plugins", "registry_file", "weka_jar"]

DATA_DIR = "BNCBENCH_DATA_DIR"
CACHE_DIR = "BNCBENCH_CACHE_DIR"
REGISTRY = "BNCBENCH_REGISTRY"
CONF_DIR = "BNCBENCH_CONF_DIR"
PLUGINS = "BNCBENCH_PLUGINS"
WEKA_JAR = "WEKA_JAR"
GIGAL_SOURCE = "BNCBENCH_GIGAL_SOURCE"
ANCHORS_DIR = "BNCBENCH_ANCHORS_DIR"
MALLOC_KEEP = "BNCBENCH_MALLOC_KEEP"


def _get(variable: str) -> str | None:
    value = os.environ.get(variable)
    return value if value else None


def _path(variable: str) -> Path | None:
    value = _get(variable)
    return Path(value).expanduser() if value is not None else None


def data_dir() -> str | None:
    """``$BNCBENCH_DATA_DIR`` as set (``~`` not expanded), or ``None``.

    Returns
    -------
    str or None
        The variable's value.
    """
    return _get(DATA_DIR)


def cache_dir() -> Path | None:
    """``$BNCBENCH_CACHE_DIR``, ``~`` expanded, or ``None``.

    Returns
    -------
    pathlib.Path or None
        The directory it names.
    """
    return _path(CACHE_DIR)


def registry_file() -> Path | None:
    """``$BNCBENCH_REGISTRY``, ``~`` expanded, or ``None``.

    Returns
    -------
    pathlib.Path or None
        The registry file it names.
    """
    return _path(REGISTRY)


def conf_dir() -> Path | None:
    """``$BNCBENCH_CONF_DIR`` as set, or ``None``.

    Returns
    -------
    pathlib.Path or None
        The config directory it names (not resolved).
    """
    value = _get(CONF_DIR)
    return Path(value) if value is not None else None


def plugins() -> list[str]:
    """The module names listed in ``$BNCBENCH_PLUGINS`` (comma-separated, blanks ignored).

    Returns
    -------
    list of str
        The names, in order; empty when the variable is unset.
    """
    return [m.strip() for m in (_get(PLUGINS) or "").split(",") if m.strip()]


def weka_jar() -> Path | None:
    """``$WEKA_JAR`` as set, or ``None``.

    Returns
    -------
    pathlib.Path or None
        The jar it names.
    """
    value = _get(WEKA_JAR)
    return Path(value) if value is not None else None


def directory(variable: str) -> Path | None:
    """The directory named by a variable a registry entry declares (``directory: {env: VARIABLE}``).

    Parameters
    ----------
    variable : str
        The variable's name, e.g. ``BNCBENCH_DIGITS_DIR``.

    Returns
    -------
    pathlib.Path or None
        Its value, ``~`` expanded, or ``None`` when it is unset.
    """
    return _path(variable)


def gigal_source() -> Path | None:
    """``$BNCBENCH_GIGAL_SOURCE``, ``~`` expanded, or ``None``.

    Returns
    -------
    pathlib.Path or None
        The source checkout or git directory of the authors' KDB / SkDB learner it names.
    """
    return _path(GIGAL_SOURCE)


def anchors_dir() -> Path | None:
    """``$BNCBENCH_ANCHORS_DIR``, ``~`` expanded, or ``None``.

    Returns
    -------
    pathlib.Path or None
        The directory of the anchors (values measured from the authors' code) it names.
    """
    return _path(ANCHORS_DIR)


def malloc_keep(environ=None) -> bool:
    """Whether the runner may tune glibc's allocator: ``$BNCBENCH_MALLOC_KEEP`` is not ``0`` and no
    ``MALLOC_*`` variable (glibc's own settings) is set.

    Parameters
    ----------
    environ : mapping, optional
        The environment to judge instead of this process's (tests).

    Returns
    -------
    bool
    """
    environ = os.environ if environ is None else environ
    if (environ.get(MALLOC_KEEP) or "1").strip() == "0":
        return False
    return not any(k.startswith("MALLOC_") for k in environ)
