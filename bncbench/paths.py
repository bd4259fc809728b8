"""Where the project's config and registry live.

bncbench is a source-tree harness (like lightning-hydra-template): ``conf/``
and ``datasets/`` sit beside the package in the repository, which is
installed in editable mode. ``BNCBENCH_CONF_DIR`` points elsewhere if needed.
"""

from __future__ import annotations

from pathlib import Path

from bncbench import settings

REPO_ROOT = Path(__file__).resolve().parents[1]


def conf_dir() -> Path:
    """The project's Hydra config directory.

    Returns
    -------
    pathlib.Path
        ``$BNCBENCH_CONF_DIR`` if set, else ``conf/`` of the repository, made absolute with
        symbolic links resolved. Whether it exists is not checked.
    """
    return (settings.conf_dir() or REPO_ROOT / "conf").resolve()


def registry_dir() -> Path:
    """The directory of the dataset registry.

    Returns
    -------
    pathlib.Path
        ``datasets/`` of the repository (not configurable; whether it exists is not checked).
    """
    return REPO_ROOT / "datasets"
