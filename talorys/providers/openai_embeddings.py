"""A client for OpenAI-compatible ``/embeddings`` (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp
server, LM Studio), synchronous over ``httpx`` because its callers (indexing, recall) are sync.

One ``embed_batch()`` call is one HTTP request, with no retries: the caller reserved one
embedding request from the owner's budget for it, and splits its texts into batches of at most
``batch_size`` itself. A failure is a ``ProviderError`` with the same kinds as the chat client.

The answer is checked strictly, because a vector that is quietly wrong poisons the index for
good, where a failed request can simply be tried again:

* ``data`` must hold exactly one object per text: a server that truncates or drops inputs would
  otherwise shift every later vector onto the wrong text.
* Each ``embedding`` must be a list of real numbers: booleans are ints to Python and strings
  (``"NaN"``, or base64 from a server that ignored ``encoding_format``) are not vectors.
* Every number must be finite: one NaN or infinity makes every cosine with that vector NaN, and
  sorting by NaN scores is meaningless. JSON's ``NaN``/``Infinity`` literals are refused too.
* One dimension for the whole batch, above 0 and at most ``MAX_DIMENSION``: vectors of mixed
  sizes cannot be compared, and a huge one is a broken server, not a model.
* ``index`` orders the vectors when the server sends it (OpenAI does not promise the input
  order), and then each of 0..n-1 must appear exactly once, so no text gets another's vector.
* The body is read up to ``max_response_bytes`` and within ``timeout`` once the headers came, so
  a runaway server costs bounded memory and time.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from talorys.providers.base import ProviderError
from talorys.providers.http_errors import bearer_headers, read_answer, transport_error

MAX_DIMENSION = 8192
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class EmbeddingsConfig:
    base_url: str
    model: str
    api_key: str = field(default="", repr=False)  # kept out of logs and tracebacks
    timeout: float = 30.0  # longest silence allowed, and longest the body may take to arrive
    batch_size: int = 64  # most texts one request may carry


class OpenAIEmbeddingsClient:
    max_response_bytes = MAX_RESPONSE_BYTES

    def __init__(
        self, config: EmbeddingsConfig, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.config = config
        self._client = httpx.Client(timeout=httpx.Timeout(config.timeout), transport=transport)

    @property
    def url(self) -> str:
        return self.config.base_url.rstrip("/") + "/embeddings"

    def close(self) -> None:
        self._client.close()

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in the order of ``texts``. Raises ProviderError; never retries."""
        if not texts:
            return []
        if len(texts) > self.config.batch_size:
            raise ValueError(f"{len(texts)} texts in one batch; at most {self.config.batch_size}.")
        body = {"model": self.config.model, "input": texts, "encoding_format": "float"}
        key = bearer_headers(self.config.api_key, server="embeddings server")
        headers = {"Accept": "application/json", **key}
        received_headers = False
        try:
            with self._client.stream("POST", self.url, json=body, headers=headers) as response:
                received_headers = True
                raw = read_answer(
                    response,
                    server="embeddings server",
                    max_bytes=self.max_response_bytes,
                    deadline=time.monotonic() + self.config.timeout,
                    timeout=self.config.timeout,
                )
        except httpx.HTTPError as error:
            raise transport_error(
                error,
                server="embeddings server",
                base_url=self.config.base_url,
                connect_timeout=self.config.timeout,
                read_timeout=self.config.timeout,
                received_headers=received_headers,
            ) from error
        return parse_embeddings(raw, len(texts))


def parse_embeddings(raw: bytes, count: int) -> list[list[float]]:
    """The ``count`` vectors in ``raw``, in input order, or ProviderError("bad_response")."""
    try:
        payload = json.loads(raw, parse_constant=_refuse_constant)
    except ValueError as error:  # also UnicodeDecodeError
        raise _bad(f"its body is not JSON ({error})") from error
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise _bad("its body has no 'data' list")
    if len(data) != count:
        raise _bad(f"{len(data)} embeddings for {count} inputs")
    if not all(isinstance(item, dict) for item in data):
        raise _bad("an item of 'data' is not an object")
    indexes = [item.get("index") for item in data if "index" in item]
    if indexes:
        if len(indexes) != count or not all(type(index) is int for index in indexes):
            raise _bad("'index' is missing or not an integer in some items")
        if sorted(indexes) != list(range(count)):
            raise _bad(f"the indexes {sorted(indexes)[:20]} are not each of 0..{count - 1} once")
        data = sorted(data, key=lambda item: item["index"])
    vectors = [_vector(item.get("embedding"), position) for position, item in enumerate(data)]
    dimension = len(vectors[0])
    if not 0 < dimension <= MAX_DIMENSION:
        raise _bad(f"a dimension of {dimension} (expected 1 to {MAX_DIMENSION})")
    if any(len(vector) != dimension for vector in vectors):
        raise _bad(f"vectors of different dimensions ({sorted({len(v) for v in vectors})})")
    return vectors


def _vector(value: Any, position: int) -> list[float]:
    if not isinstance(value, list):
        raise _bad(f"embedding {position} is not a list of numbers (got {type(value).__name__})")
    vector: list[float] = []
    for number in value:
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise _bad(f"embedding {position} holds {number!r}, not a number")
        try:
            number = float(number)
        except OverflowError:  # an integer literal too large for a float
            number = math.inf
        if not math.isfinite(number):
            raise _bad(f"embedding {position} holds {number!r}, not a finite number")
        vector.append(number)
    return vector


def _refuse_constant(name: str) -> Any:
    raise _bad(f"it holds {name}, not a finite number")


def _bad(reason: str) -> ProviderError:
    return ProviderError("bad_response", f"The embeddings server's answer is unusable: {reason}.")
