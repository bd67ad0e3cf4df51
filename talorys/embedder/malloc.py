"""Giving freed memory back to the system once the embedder is idle (glibc, Linux).

onnxruntime's activations for a batch (its CPU arena is off: onnx.py) and the HTTP threads'
JSON are freed after each request, but glibc's heaps keep what is freed in their middle: after
1,000 texts of 30 words the process held about 50 MB more than after its load (231 MB against
178), for good. The queue calls ``freed_memory_returned`` (malloc_trim) when it runs out of work
(queue.py ``idle``): a millisecond or two after a burst, never between a bulk request's chunks;
then it held 186 MB (medians of two runs; /tmp variants of benchmarks/embedder_process.py).
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
