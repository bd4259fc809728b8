"""The runner's allocator setting: glibc keeps the memory it frees, for the next large array.

An optimized fit allocates arrays the size of its parameter vector at every evaluation (the
gradient, the penalty's terms, the iterate's copies): 32-56 MB each for DBL³ and LR³ on letter or
syncon. glibc serves blocks that large with a fresh ``mmap`` and gives them back at ``free``, so
every evaluation page-faults its arrays in again, zero-filled by the kernel: a third of such a
fit's CPU time was system time (``benchmarks/bench_malloc.py``; ``docs/benchmarks.md``, "Freed
memory kept"). :func:`keep_freed_memory` tells glibc (``mallopt``) to take large blocks from the
heap too and not to hand freed memory back, so the next array reuses pages already mapped. The
numbers computed are the same to the bit; the process's resident memory stays at its peak.

The runner calls it once per process before its first task (in every worker of an executor too).
It does nothing when ``BNCBENCH_MALLOC_KEEP=0``, when any ``MALLOC_*`` variable is set (the
user's own glibc tuning wins), or on a C library other than glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import platform

from bncbench import settings

ENV = settings.MALLOC_KEEP
"""Set to ``0`` to leave the allocator as it is."""

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_MAX = -1, -2, -4
"""glibc's ``mallopt`` parameters (``malloc.h``)."""

SETTINGS = ((M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, 2**31 - 1), (M_TOP_PAD, 256 << 20))
"""No block from ``mmap`` (large ones come from the heap as well), freed memory at the heap's top
kept up to 2 GiB (``mallopt`` takes an ``int``), and the heap grown 256 MiB at a time."""


def wanted(environ=None) -> bool:
    """Whether :func:`keep_freed_memory` applies :data:`SETTINGS` under ``environ`` on this machine.

    Parameters
    ----------
    environ : mapping, optional
        The environment to judge (default this process's: :func:`bncbench.settings.malloc_keep`).

    Returns
    -------
    bool
        False when ``BNCBENCH_MALLOC_KEEP=0``, when a ``MALLOC_*`` variable is set, or when the C
        library is not glibc.
    """
    return settings.malloc_keep(environ) and platform.libc_ver()[0] == "glibc"


@functools.lru_cache(maxsize=1)
def keep_freed_memory() -> bool:
    """Apply :data:`SETTINGS` to this process's glibc allocator, once (see the module's text).

    Returns
    -------
    bool
        Whether every setting was applied.
    """
    if not wanted():
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all(mallopt(param, value) == 1 for param, value in SETTINGS)
