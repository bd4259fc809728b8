"""Process memory from Linux's ``/proc``, for the benchmarks that measure peak memory.

The peak is ``VmHWM`` (the resident high-water mark), which writing ``5`` to
``/proc/self/clear_refs`` resets to the current resident size, so a peak can be taken around
one step of a process. Imported by scripts run as ``python benchmarks/<script>.py`` (their
directory is on ``sys.path``).
"""

from __future__ import annotations

import os


def rss_now() -> int:
    """The process's resident size now, in bytes (``/proc/self/statm``)."""
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak(strict: bool = True) -> bool:
    """Reset ``VmHWM`` to the current resident size; False if the kernel does not allow it.

    With ``strict`` (the default) a failure raises the ``OSError`` instead of returning False.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        if strict:
            raise
        return False


def _field(path: str, name: str) -> int:
    with open(path) as fh:
        for line in fh:
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024
    return 0


def peak_since_reset() -> int:
    """``VmHWM`` in bytes: the largest resident size since the last :func:`reset_peak` (or start)."""
    return _field("/proc/self/status", "VmHWM")


def mem_available() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (0 if the kernel does not report it)."""
    return _field("/proc/meminfo", "MemAvailable")
