"""Embedders: text into unit vectors for recall, and which one is on.

- ``HttpEmbedder``: an OpenAI-compatible ``/embeddings`` server (talorys/providers/
  openai_embeddings.py speaks the wire format), batched, each request reserved from the day's
  embedding budget before it is sent. Opt-in: configured on /settings/, and then it wins.
- ``LocalEmbedder``: the install's embedder process (talorys/embedder/: all-MiniLM-L6-v2 on
  onnxruntime, started by talorys_run), asked over the same wire format on its Unix socket (or
  TALORYS_EMBEDDER_URL); no budget (it costs nothing), nothing leaves the machine. No web
  process or worker loads the model.

Vector recall is on when the owner's ``semantic_enabled`` is set (the default) and one of them
is available (a configured server first). Otherwise recall is the keyword engine alone.

The embedder's ``name`` is stored with every vector: a different model (or server) makes every
stored vector stale, and the reindex embeds them again.

A query never waits long for its vector (``embed_query``): at most QUERY_BUDGET (250 ms) for
the local process, whatever it is doing (down, restarting, busy); past it that recall is a
keyword recall, and the vector, when it comes, is kept for the next one. Items without a vector
rank by keyword meanwhile, and the lazy passes embed them later. A turn starts its question's
vector at the claim (``query_prefetch``), so it is ready, or on its way, when recall asks.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Protocol, runtime_checkable

import httpx
import numpy as np
from django.conf import settings

from talorys.embedder import model_files
from talorys.embedder.address import EmbedderAddress, embedder_address
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import (
    embeddings_endpoint,
    embeddings_provider_kind,
    owner_settings_get,
    owner_settings_kept,
    recall_mode,
)
from talorys.owner.services.usage import usage_reserve
from talorys.providers.base import ProviderError
from talorys.providers.openai_embeddings import EmbeddingsConfig, OpenAIEmbeddingsClient

logger = logging.getLogger(__name__)

# A vector is made from the start of an item: a title and the first ~400 words say what it is
# about, and small embedding models read no more than that anyway.
EMBED_CHARS = 2_000
QUERY_CACHE_SIZE = 256
# A recall waits for its query's vector: a server slower than this is treated as down.
HTTP_TIMEOUT = 10.0
# The longest a recall waits for its query's vector from the local process (p50 is about 5 ms;
# a bulk chunk ahead of it about 30 ms). Past it the recall is keyword only, and the turn goes on.
QUERY_BUDGET = 0.25
# A bulk request (the lazy pass, a reindex: up to LOCAL_BATCH texts) to the local process.
LOCAL_TIMEOUT = 30.0
LOCAL_BATCH = 64


@runtime_checkable
class Embedder(Protocol):
    name: str
    # The cosine at or below which this model's vectors say nothing: hybrid recall gives such a
    # match no weight, so a query that matches nothing finds nothing (0: every cosine counts).
    floor: float
    # True: a document's vector is the mean of its sentences' (``document_vectors``).
    sentences: bool

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32, one unit-length row per text. Raises ProviderError or BudgetExhausted."""
        ...


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; a zero or non-finite row is the embedder's fault."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or not np.isfinite(vectors).all():
        raise ProviderError("bad_response", "The embedder returned non-finite numbers.")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ProviderError("bad_response", "The embedder returned an all-zero vector.")
    return vectors / norms


class HttpEmbedder:
    # A server's model is not known here, nor where its unrelated texts' cosines lie; a
    # configured model is trusted to read a whole document (and each sentence would be a cost).
    floor = 0.0
    sentences = False
    budgeted = True  # each request is reserved from the day's embedding budget
    dim = 0  # not known before its first vector

    def __init__(self, config: EmbeddingsConfig) -> None:
        self.config = config
        self.name = f"{config.model} @ {config.base_url.rstrip('/')}"
        self._client = OpenAIEmbeddingsClient(config)

    def embed(self, texts: list[str]) -> np.ndarray:
        rows: list[list[float]] = []
        size = max(1, self.config.batch_size)
        for start in range(0, len(texts), size):
            if self.budgeted:
                # Reserved before the request, like every provider call: a failed one spent it.
                usage_reserve(kind="embedding")
            rows.extend(self._client.embed_batch(texts[start : start + size]))
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(np.array(rows, dtype=np.float32))

    def close(self) -> None:
        self._client.close()


class LocalEmbedder(HttpEmbedder):
    """The install's embedder process (talorys/embedder/), through the same wire format and
    client. Free, so no budget is reserved. Its name is the model's wherever it runs (a socket,
    or compose's embedder service), with ":sentences": a document's vector is its sentences'
    mean (``document_pieces``), so the whole-text vectors stored before are made again."""

    name = f"{model_files.NAME}:sentences"
    floor = model_files.FLOOR
    sentences = True
    budgeted = False
    dim = model_files.DIM
    # The supervisor restarts a dead process within about a second: retry soon after.
    pause_after_failure = 2.0

    def __init__(self, address: EmbedderAddress) -> None:
        self.address = address
        self.pause_key = f"{self.name} @ {address}"
        transport = httpx.HTTPTransport(uds=str(address.socket)) if address.socket else None
        self.config = EmbeddingsConfig(
            base_url=f"{address.url}/v1",
            model=model_files.NAME,
            timeout=LOCAL_TIMEOUT,
            batch_size=LOCAL_BATCH,
        )
        self._client = OpenAIEmbeddingsClient(self.config, transport=transport)


_lock = threading.Lock()
_http: dict[EmbeddingsConfig, HttpEmbedder] = {}
_local: dict[EmbedderAddress, LocalEmbedder] = {}


def local_embedder() -> LocalEmbedder:
    """The client of the embedder process at the settings' address (one per process and
    address: its connections outlive a turn)."""
    address = embedder_address()
    with _lock:
        embedder = _local.get(address)
        if embedder is None:
            embedder = _local[address] = LocalEmbedder(address)
        return embedder


def _http_embedder(config: EmbeddingsConfig) -> HttpEmbedder:
    # One per configuration and process: its connection pool outlives a turn.
    with _lock:
        embedder = _http.get(config)
        if embedder is None:
            for old in _http.values():
                old.close()
            _http.clear()
            embedder = _http[config] = HttpEmbedder(config)
        return embedder


# "Look the active embedder up" (a caller that has not yet), as a default argument.
ACTIVE = object()


def active_embedder(*, owner_settings: OwnerSettings | None = None) -> Embedder | None:
    """The embedder recall uses now, or None for keyword recall alone
    (talorys.owner.selectors.recall_mode says which, for the settings page). A caller that
    has the owner's settings at hand passes them."""
    owner = owner_settings or owner_settings_get()
    if recall_mode(owner_settings=owner) != "hybrid":
        return None
    if embeddings_provider_kind(owner_settings=owner) == "local":
        # Whether the process answers is each request's (and the health report's) to find.
        return local_embedder()
    endpoint = embeddings_endpoint(owner_settings=owner)
    return _http_embedder(
        EmbeddingsConfig(
            base_url=endpoint.base_url,
            model=endpoint.model,
            api_key=endpoint.api_key,
            timeout=HTTP_TIMEOUT,
        )
    )


# After a failure the embedder is left alone this long (per process): a server that is down
# would otherwise cost every recall its timeout, twice (the query, the lazy pass). The local
# process's is shorter (LocalEmbedder.pause_after_failure): it is restarted in about a second.
PAUSE_AFTER_FAILURE = 60.0
_paused_until: dict[str, float] = {}


def _pause_key(embedder: Embedder) -> str:
    return str(getattr(embedder, "pause_key", embedder.name))


def embed_texts(embedder: Embedder, texts: list[str], *, force: bool = False) -> np.ndarray:
    """``embedder.embed(texts)``, unless it failed less than PAUSE_AFTER_FAILURE ago (``force``:
    try anyway, as the catch-up and the reindex command do). A text whose vector is in the query
    cache is not embedded again: the owner's message, embedded as the turn's query, is indexed
    after the reply with that vector."""
    known = _cached(embedder.name, texts)
    todo = [text for i, text in enumerate(texts) if i not in known]
    if not todo:
        return np.stack([known[i] for i in range(len(texts))]) if texts else embedder.embed([])
    until = _paused_until.get(_pause_key(embedder), 0.0)
    if not force and time.monotonic() < until:
        raise ProviderError(
            "unreachable",
            f"The embedder failed lately; trying again in {until - time.monotonic():.0f} s.",
        )
    try:
        made = iter(embedder.embed(todo))
    except ProviderError:
        pause = getattr(embedder, "pause_after_failure", PAUSE_AFTER_FAILURE)
        _paused_until[_pause_key(embedder)] = time.monotonic() + pause
        raise
    return np.stack([known[i] if i in known else next(made) for i in range(len(texts))])


def _cached(name: str, texts: list[str]) -> dict[int, np.ndarray]:
    with _lock:
        return {
            i: vector
            for i, text in enumerate(texts)
            if (vector := _queries.get((name, text))) is not None
        }


_queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def embed_query(embedder: Embedder, text: str) -> np.ndarray:
    """The query's vector; the last few hundred are cached, so a turn that recalls the owner's
    message for memories, items and a search tool spends one request, not three. The local
    process's is waited for QUERY_BUDGET at most (ProviderError "timeout" past it): its request
    goes on, and its vector lands in the cache for the next recall."""
    key = (embedder.name, text)
    with _lock:
        cached = _queries.get(key)
        if cached is not None:
            _queries.move_to_end(key)
            return cached
    if not isinstance(embedder, LocalEmbedder):
        return _embed_and_keep(embedder, text)
    try:
        return _query_future(embedder, text).result(timeout=QUERY_BUDGET)
    except FutureTimeout:
        raise ProviderError(
            "timeout", f"The embedder took more than {QUERY_BUDGET * 1000:.0f} ms."
        ) from None


def _embed_and_keep(embedder: Embedder, text: str) -> np.ndarray:
    vector = embed_texts(embedder, [text[:EMBED_CHARS]])[0]
    with _lock:
        _queries[(embedder.name, text)] = vector
        while len(_queries) > QUERY_CACHE_SIZE:
            _queries.popitem(last=False)
    return vector


_pending: dict[tuple[str, str], Future[np.ndarray]] = {}
_pools: dict[int, ThreadPoolExecutor] = {}


def _query_future(embedder: LocalEmbedder, text: str) -> Future[np.ndarray]:
    """The request for ``text``'s vector in flight, started now if none is."""
    key = (embedder.name, text)
    with _lock:
        future = _pending.get(key)
        if future is not None:
            return future
        # Per process: a forked child (a Celery worker's) has none of its parent's threads.
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = ThreadPoolExecutor(2, thread_name_prefix="query-vector")
        future = _pending[key] = pool.submit(_embed_and_keep, embedder, text)
    future.add_done_callback(lambda _: _forget(key, future))
    return future


def _forget(key: tuple[str, str], future: Future[np.ndarray]) -> None:
    with _lock:
        if _pending.get(key) is future:
            del _pending[key]


def query_prefetch(text: str) -> None:
    """Start ``text``'s vector from the local process now, without waiting and without a
    statement: a turn calls it before and after its claim (agent/runner/chat.py begin_turn, the
    chat socket's send), so the vector is made beside the claim and the turn's reads, and recall
    (embed_query) finds it ready or on its way. Guessed
    from this process's last read of the settings (before any: the environment's); a wrong
    guess costs one local embedding, which recall then does not use."""
    text = text.strip()
    owner = owner_settings_kept()
    if owner is not None:
        local = owner.semantic_enabled and embeddings_provider_kind(owner_settings=owner) == "local"
    else:
        local = not settings.TALORYS_EMBEDDINGS_BASE_URL
    if text and local and model_files.available():
        query_start(local_embedder(), text)


def query_start(embedder: LocalEmbedder, text: str) -> None:
    """Start ``text``'s vector from the local process unless it is cached, on its way, or the
    process failed a moment ago; ``embed_query`` waits for it."""
    if time.monotonic() < _paused_until.get(embedder.pause_key, 0.0):
        return
    with _lock:
        if (embedder.name, text) in _queries:
            return
    _query_future(embedder, text)


def document_text(title: str, body: str) -> str:
    return (f"{title}\n{body}" if title else body)[:EMBED_CHARS]


# Where a sentence ends: after its stop and the space that follows, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\s*\n\s*")
# A text that opens with a short name and a colon ("Caroline: ...", "Dr Lee: ...") says whose
# words follow: a transcript's speaker, a field's name.
_LABEL = re.compile(r"([^\W\d_][\w.'-]*(?: [\w.'-]+){0,2}): ")
MAX_SENTENCES = 16


def document_pieces(title: str, body: str) -> list[str]:
    """What a document's vector is made of, for an embedder that reads sentences: when the item
    has a context (its title, else the label its text opens with: "Caroline: ..."), each sentence
    of its first EMBED_CHARS carrying that context, so each says whose or what it is about (at
    most MAX_SENTENCES); otherwise, and for a single sentence, the whole text.

    Why: all-MiniLM-L6-v2 was trained on sentence pairs, and its mean over a paragraph blurs the
    statements in it and their subject. On LoCoMo's long chats (benchmarks/recall_longchat.py)
    the mean of a message's sentences, each with its speaker, ranks better than one vector of
    the message (hybrid R@10 0.754 vs 0.706, MRR 0.558 vs 0.491); without the context on each
    sentence the mean was worse than the whole (0.726 vs 0.737 in the prototype), and so it was
    on the recall set's unlabelled messages (MRR 0.666 vs 0.754): the context is the gain, the
    split lets it count."""
    text = body[:EMBED_CHARS]
    context = title.strip()
    if not context and (label := _LABEL.match(text)):
        context, text = label.group(1), text[label.end() :]
    pieces = [piece for piece in _SENTENCE_END.split(text) if piece.strip()]
    if not context or len(pieces) <= 1:
        return [document_text(title, body)]
    return [f"{context}: {piece}" for piece in pieces[:MAX_SENTENCES]]


def document_vectors(
    embedder: Embedder, documents: list[tuple[str, str]], *, force: bool = False
) -> np.ndarray:
    """One unit vector per (title, body): the embedder's vector of the document's text, or for
    an embedder that reads sentences the mean of its pieces' (``document_pieces``), all pieces
    of the batch in one ``embed_texts`` call."""
    if not embedder.sentences:
        texts = [document_text(title, body) for title, body in documents]
        return embed_texts(embedder, texts, force=force)
    pieces = [document_pieces(title, body) for title, body in documents]
    flat = embed_texts(embedder, [piece for group in pieces for piece in group], force=force)
    owners = np.repeat(np.arange(len(pieces)), [len(group) for group in pieces])
    sums = np.zeros((len(pieces), flat.shape[1] if flat.size else 0), dtype=np.float32)
    np.add.at(sums, owners, flat)
    return unit_rows(sums) if len(pieces) else sums
