"""Where a record was computed: the software versions and the processor, written into every record.

Where an L-BFGS run stops after hundreds of iterations on a weakly regularized objective depends
on floating-point rounding, so two machines (or two NumPy/SciPy/numba builds) can give optimized
models whose mean 0-1 loss differs in the third decimal while generative models agree
(docs/reproductions/zaidi_dbl_l2.md, "Rerun on a fresh machine"). The record says which
environment it came from, so such differences can be traced; it is not part of the task key (the
same task on another machine is the same experiment).
"""

from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from bncbench.paths import REPO_ROOT

PACKAGES = ("bncbench", "numpy", "scipy", "numba", "scikit-learn", "pandas")
"""The distributions whose versions a record names."""

KEYS = ("bncbench", "commit", "python", *PACKAGES[1:], "machine", "cpu")
"""Every key of :func:`environment`, in the order a report names them."""

DIRTY = "-dirty"
"""Appended to ``commit`` when tracked files differ from it (the records are not that commit's)."""


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                          check=True).stdout.strip()


def _git_commit() -> str | None:
    """The commit of the checkout bncbench is imported from, with :data:`DIRTY` appended when a tracked
    file differs from it; ``None`` outside a git checkout."""
    root = REPO_ROOT
    if not (root / ".git").exists():
        return None
    try:
        head = _git(root, "rev-parse", "HEAD")
        dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return None
    return (head + DIRTY if dirty else head) or None


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, str]:
    """The versions of :data:`PACKAGES`, Python's, the processor's model and the git commit.

    Read once per process.

    Returns
    -------
    dict of str to str
        ``python``, each installed name of :data:`PACKAGES`, ``machine`` (e.g. ``x86_64``), ``cpu``
        (the processor's model name) and ``commit`` when bncbench runs from a git checkout (ending in
        :data:`DIRTY` when tracked files were changed): the keys of :data:`KEYS`.
    """
    env = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            env[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    env["machine"], env["cpu"] = platform.machine(), _cpu_model()
    commit = _git_commit()
    if commit:
        env["commit"] = commit
    return env


__all__ = ["DIRTY", "KEYS", "PACKAGES", "environment"]
