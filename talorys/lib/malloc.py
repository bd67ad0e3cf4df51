"""Giving freed memory back to the system after a burst of large temporaries (glibc, Linux).

glibc serves a block of 128 KB or more with an mmap of its own, unmapped at free, until such a
block is freed: from then on it raises that threshold to the freed block's size (up to 32 MB),
so later blocks of that size come from the heap, which keeps what is freed in its middle. The
local embedder's numpy temporaries are such blocks (a batch's activations: about 15 MB), and
under benchmarks/load.py the web's RSS grew by about 36 MB that it never gave back.

Fixing the threshold instead (mallopt) kept the RSS down but made every temporary a fresh
mmap whose pages are faulted in again: a batch of 16 texts took 220 ms instead of 120. So the
heap keeps serving them while a batch runs, and ``freed_memory_returned`` (malloc_trim) hands
what is free back once the batch is done: a millisecond or two, after work of a hundred.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # glibc's soname, not find_library("c"), which runs ldconfig.
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None


_TRIM = _malloc_trim()


def freed_memory_returned() -> bool:
    """Give the heap's free memory back to the system; False where that cannot be done (not
    glibc), and nothing changes."""
    return bool(_TRIM(0)) if _TRIM is not None else False
