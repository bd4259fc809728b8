"""The runner's allocator setting (bncbench.harness.allocator): large arrays from glibc's heap, kept when freed."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import platform
import subprocess
import sys

import pytest

from bncbench.harness import allocator

GLIBC = platform.libc_ver()[0] == "glibc"

# A child process: applies the setting (or not), then reports how much of a 64 MiB numpy array glibc holds in mmapped
# blocks (mallinfo2's hblkhd) while it lives, and whether a second array of that size after freeing the first faults
# its pages in again (minor faults).
CHILD = r"""
import ctypes, ctypes.util, json, resource, sys
import numpy as np
from bncbench.harness import allocator

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                                              "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
libc.mallinfo2.restype = MallInfo2
applied = allocator.keep_freed_memory()
a = np.ones(8 << 20)
mmapped = libc.mallinfo2().hblkhd
del a
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
b = np.ones(8 << 20)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"applied": applied, "mmapped": mmapped, "faults": faults}))
"""


def _child(**env):
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != allocator.ENV}
    out = subprocess.run([sys.executable, "-c", CHILD], env={**run_env, **env}, capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _has_mallinfo2() -> bool:
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallinfo2  # noqa: B018 - glibc >= 2.33
    except (OSError, AttributeError):
        return False
    return True


@pytest.mark.skipif(not GLIBC or not _has_mallinfo2(), reason="glibc >= 2.33 (mallopt, mallinfo2) only")
def test_large_arrays_come_from_the_heap_and_are_reused():
    on, off = _child(), _child(**{allocator.ENV: "0"})
    assert on["applied"] is True and off["applied"] is False
    assert off["mmapped"] >= 64 << 20  # glibc's default: a block this large is its own mapping
    assert on["mmapped"] < 16 << 20  # the setting: from the heap (what is mapped was mapped at import)
    # a second array of the same size reuses the freed pages: (almost) no page to fault in, where the default faults
    # in at least its 64 MiB again (16,384 pages of 4 KiB, or 32 huge pages of 2 MiB)
    assert on["faults"] < 32 <= off["faults"]


def test_the_users_settings_and_the_opt_out_win():
    assert not allocator.wanted({allocator.ENV: "0"})
    assert not allocator.wanted({"MALLOC_ARENA_MAX": "2"})  # the user's own glibc tuning: left alone
    assert not allocator.wanted({"MALLOC_MMAP_MAX_": "65536", allocator.ENV: "1"})
    assert allocator.wanted({}) is GLIBC
    assert allocator.wanted({allocator.ENV: "1"}) is GLIBC


@pytest.mark.skipif(not GLIBC, reason="glibc only")
def test_a_users_malloc_variable_leaves_the_process_as_it_is():
    child = _child(MALLOC_ARENA_MAX="4") if _has_mallinfo2() else None
    if child is None:
        pytest.skip("glibc >= 2.33 (mallinfo2) only")
    assert child["applied"] is False and child["mmapped"] >= 64 << 20
