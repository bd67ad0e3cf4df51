"""Two halves of one numpy computation at once, on this thread and one helper thread.

numpy lets go of the interpreter lock inside its products, so two halves of a product (a
matrix's rows) run on two cores at the same time. Recall's vector scores (memory/recall/
index.py) use it where an owner waits: one query. It was written for a web process whose BLAS
was held to one thread (by the in-process embedder, now the embedder process's: talorys/
embedder/). Measured since, with BLAS's own threads free again (100,000 x 384 float32 rows times
a query, median of 60, on the 2-core machine): the plain product 5.0 ms, in halves 5.3 ms; with
BLAS held to one thread: 10.7 ms and 5.3 ms. So it no longer earns its place; it stays until the
ranking changes on another branch (memory/recall/index.py) have landed, then the product goes
back to one ``matrix @ query`` and this module goes. On a one-core machine the halves run one
after the other.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
ENABLED = (os.cpu_count() or 1) > 1
_NAME = "talorys-halves"
# pid -> the helper's pool: a process forked after a use (a Celery worker's child) has no thread
# behind its parent's pool, so each process makes its own.
_pools: dict[int, ThreadPoolExecutor] = {}
# Held while a caller's half is on the helper.
_idle = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    pid = os.getpid()
    pool = _pools.get(pid)
    if pool is None:
        pool = _pools.setdefault(pid, ThreadPoolExecutor(1, thread_name_prefix=_NAME))
    return pool


def at_once(first: Callable[[], T], second: Callable[[], T], *, split: bool = True) -> tuple[T, T]:
    """``(first(), second())``: ``second`` on the helper thread while ``first`` runs here, when
    ``split``, the machine has two cores and the helper is free; else one after the other."""
    if not (split and ENABLED) or threading.current_thread().name.startswith(_NAME):
        # (On the helper itself, waiting for the helper would wait for ever.)
        return first(), second()
    # A helper busy with another caller's half means the cores are busy too: queueing behind it
    # would only add waiting (under load, four turns' embeddings shared one helper), so the
    # halves run here, one after the other.
    if not _idle.acquire(blocking=False):
        return first(), second()
    try:
        other = _pool().submit(second)
        return first(), other.result()
    finally:
        _idle.release()
