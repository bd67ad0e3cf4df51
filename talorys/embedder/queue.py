"""The embedder process's one queue: which texts the model embeds next.

The rule, so that an owner's question never waits behind a bulk reindex:

* A request is a query when it holds at most ``SHORT`` texts (a recall's question: one text),
  else it is bulk (the lazy pass, a reindex).
* The model embeds at most ``CHUNK`` texts at a time. A bulk request is cut into chunks of
  ``CHUNK`` texts of similar length (sorted by length: less padding).
* Before each chunk, the queries waiting are served first, and together: every query waiting
  (up to ``CHUNK`` texts) goes into one model call. So a query waits for at most the chunk
  being embedded when it came (about 30 ms for 8 texts of 30 words), never for a whole bulk
  request.
* Bulk requests take turns, a chunk each, in the order they came: two reindexes at once both
  progress.

One thread runs the model (onnxruntime's own threads are the parallelism: one more call at
once would only share the same cores); the HTTP threads wait on their request.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

CHUNK = 8
SHORT = 2


@dataclass
class _Request:
    texts: list[str]
    vectors: np.ndarray | None = None
    # The rows still to embed, by length (bulk); a query's are all in one piece.
    todo: deque[list[int]] = field(default_factory=deque)
    left: int = 0
    error: Exception | None = None
    done: threading.Event = field(default_factory=threading.Event)


class EmbedQueue:
    """``embed(texts)`` from any thread, by the rule above; ``model`` is called on one thread."""

    def __init__(
        self,
        model: Callable[[list[str]], np.ndarray],
        dim: int,
        *,
        idle: Callable[[], object] = lambda: None,
    ) -> None:
        """``idle``: called on the model's thread when a call leaves no work waiting (the
        process gives its freed memory back then: malloc.py)."""
        self._model = model
        self._dim = dim
        self._idle = idle
        self._ready = threading.Condition()
        self._queries: deque[_Request] = deque()
        self._bulk: deque[_Request] = deque()
        threading.Thread(target=self._run, name="embedder-model", daemon=True).start()

    def waiting(self) -> int:
        """Requests not yet answered (for /health)."""
        with self._ready:
            return len(self._queries) + len(self._bulk)

    def embed(self, texts: list[str]) -> np.ndarray:
        request = _Request(texts, np.zeros((len(texts), self._dim), dtype=np.float32))
        if not texts:
            return request.vectors  # type: ignore[return-value]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        request.todo.extend(order[start : start + CHUNK] for start in range(0, len(order), CHUNK))
        request.left = len(request.todo)
        with self._ready:
            (self._queries if len(texts) <= SHORT else self._bulk).append(request)
            self._ready.notify()
        request.done.wait()
        if request.error is not None:
            raise request.error
        return request.vectors  # type: ignore[return-value]

    def _next(self) -> list[tuple[_Request, list[int]]]:
        """The next model call's rows: the waiting queries, else a chunk of the next bulk."""
        taken: list[tuple[_Request, list[int]]] = []
        count = 0
        while self._queries and (not taken or count + len(self._queries[0].texts) <= CHUNK):
            query = self._queries.popleft()
            taken.append((query, query.todo.popleft()))
            count += len(query.texts)
        if taken or not self._bulk:
            return taken
        bulk = self._bulk.popleft()
        taken.append((bulk, bulk.todo.popleft()))
        if bulk.todo:
            self._bulk.append(bulk)  # its next chunk after the other bulk requests' next
        return taken

    def _run(self) -> None:
        while True:
            with self._ready:
                taken = self._next()
            if not taken:
                self._idle()
                with self._ready:
                    while not (taken := self._next()):
                        self._ready.wait()
            texts = [request.texts[i] for request, rows in taken for i in rows]
            try:
                vectors = self._model(texts)
            except Exception as error:  # every request in this call fails, the process stays
                self._fail(taken, error)
                continue
            self._deliver(taken, vectors)

    def _deliver(self, taken: list[tuple[_Request, list[int]]], vectors: np.ndarray) -> None:
        start = 0
        for request, rows in taken:
            assert request.vectors is not None
            request.vectors[rows] = vectors[start : start + len(rows)]
            start += len(rows)
            request.left -= 1
            if request.left == 0:
                request.done.set()

    def _fail(self, taken: list[tuple[_Request, list[int]]], error: Exception) -> None:
        for request, _ in taken:
            if request.done.is_set():
                continue
            request.error = error
            with self._ready:  # its other chunks are not embedded for nothing
                if request in self._bulk:
                    self._bulk.remove(request)
            request.done.set()
