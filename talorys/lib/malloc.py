"""Large blocks go back to the system when they are freed (glibc's malloc, on Linux).

glibc serves a block of 128 KB or more with an mmap of its own, unmapped at free, until such a
block is freed: from then on it raises that threshold to the freed block's size (up to 32 MB),
so later blocks of that size come from the heap, which keeps what is freed in its middle. The
local embedder's numpy temporaries are such blocks (a batch's activations: about 15 MB), and
under benchmarks/load.py the web's RSS grew by about 36 MB more that it never gave back. Setting
the threshold (mallopt's M_MMAP_THRESHOLD) turns the raising off, as the environment variable
MALLOC_MMAP_THRESHOLD_ would, for whichever way the process was started.
"""

from __future__ import annotations

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # glibc's malloc.h
THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value


def large_blocks_returned() -> bool:
    """Fix this process's mmap threshold; False where that cannot be done (not glibc: musl has
    no mallopt, macOS another allocator), and the process runs as before."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        # glibc's soname, not find_library("c"), which runs ldconfig at every start.
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES))
