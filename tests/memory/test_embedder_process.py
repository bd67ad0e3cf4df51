"""The embedder process (talorys/embedder/): the old runtime's vectors through its socket, the
queue's rule (a query is not kept behind a bulk request), and semantic recall with no
configuration but the process talorys_run starts."""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from memory import embeddings, selectors
from memory import services as memory_services
from talorys.embedder import model_files
from talorys.embedder.queue import CHUNK, EmbedQueue
from talorys.owner.selectors import owner_settings_get, recall_mode
from talorys.workspace import services

REFERENCE = Path(__file__).with_name("minilm_numpy_reference.json")


def reference() -> tuple[list[str], np.ndarray]:
    """The removed numpy runtime's vectors (talorys/providers/minilm.py at 5b9aeb3), float16."""
    stored = json.loads(REFERENCE.read_text())
    raw = np.frombuffer(base64.b64decode(stored["float16_base64"]), dtype=np.float16)
    return stored["texts"], raw.reshape(len(stored["texts"]), 384).astype(np.float32)


@pytest.mark.django_db
def test_the_process_gives_the_old_runtimes_vectors_under_the_same_name(local_embeddings):
    texts, old = reference()

    embedder = embeddings.active_embedder()
    new = embedder.embed(texts)

    assert isinstance(embedder, embeddings.LocalEmbedder)
    assert new.shape == old.shape and new.dtype == np.float32
    assert np.allclose(np.linalg.norm(new, axis=1), 1.0, atol=1e-5)
    assert (new * old).sum(axis=1).min() >= 0.999
    # The model is the one the in-process runtime ran; the stored vectors' name says they are
    # sentence means (memory/embeddings.py document_pieces).
    assert model_files.NAME == "local:all-MiniLM-L6-v2-onnx-int8"
    assert embedder.name == f"{model_files.NAME}:sentences"


@pytest.mark.django_db
def test_a_texts_vector_does_not_depend_on_its_batch(local_embeddings):
    embedder = embeddings.active_embedder()
    short = "My daughter started the cello"
    alone = embedder.embed([short])[0]
    among = embedder.embed(["word " * 300, short, "another text of middling length"])

    assert float(alone @ among[1]) > 0.9999
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.django_db
def test_paraphrases_are_near_and_unrelated_texts_are_not(local_embeddings):
    cello, instrument, bike = embeddings.active_embedder().embed(
        [
            "My daughter started the cello",
            "Which instrument does my kid play?",
            "I bought a new bike",
        ]
    )

    assert float(cello @ instrument) > 0.5
    assert float(cello @ bike) < 0.2


def test_a_query_is_served_before_the_rest_of_a_bulk_request():
    calls: list[list[str]] = []
    first_call = threading.Event()
    release = threading.Event()

    def model(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        first_call.set()
        release.wait(10)  # the bulk's first chunk is being embedded when the query comes
        return np.ones((len(texts), 4), dtype=np.float32)

    queue = EmbedQueue(model, 4)
    bulk = [f"document number {i}" for i in range(5 * CHUNK)]
    worker = threading.Thread(target=queue.embed, args=(bulk,))
    worker.start()
    assert first_call.wait(10)
    asked = threading.Thread(target=queue.embed, args=(["where do I live?"],))
    asked.start()
    other = threading.Thread(target=queue.embed, args=(["what is my job?"],))
    other.start()
    time.sleep(0.2)  # both queries are queued behind the chunk under way
    release.set()
    for thread in (worker, asked, other):
        thread.join(10)

    assert len(calls[0]) == CHUNK and calls[0][0].startswith("document")
    # The two queries together, in the very next call; then the bulk's other chunks.
    assert sorted(calls[1]) == ["what is my job?", "where do I live?"]
    assert all(len(c) == CHUNK for c in calls[2:]) and len(calls) == 2 + 4


def test_a_failed_model_call_fails_its_requests_and_not_the_queue():
    def model(texts: list[str]) -> np.ndarray:
        if "boom" in texts:
            raise RuntimeError("the model broke")
        return np.ones((len(texts), 4), dtype=np.float32)

    queue = EmbedQueue(model, 4)
    with pytest.raises(RuntimeError, match="the model broke"):
        queue.embed(["boom"])
    assert queue.embed(["fine"]).shape == (1, 4)


@pytest.mark.django_db
def test_a_fresh_install_recalls_by_meaning_with_no_configuration(api, local_embeddings):
    """Done-when: hybrid recall with no configuration but the process; a paraphrase is found."""
    body = api.get("/api/settings").json()
    assert (body["recall_mode"], body["embeddings_provider"]) == ("hybrid", "local")
    cello = api.post("/api/memories", {"text": "My daughter started the cello"}).json()
    api.post("/api/memories", {"text": "I renewed the car insurance in March"})

    found = api.get(
        "/api/search", {"q": "which instrument does my kid play", "kinds": "memories"}
    ).json()

    assert found["mode"] == "hybrid"
    assert found["items"][0]["id"] == cello["id"]


@pytest.mark.django_db
def test_the_owner_can_switch_semantic_recall_off(api, local_embeddings):
    api.post("/api/memories", {"text": "My daughter started the cello"})

    api.patch("/api/settings", {"semantic_enabled": False})
    found = api.get(
        "/api/search", {"q": "which instrument does my kid play", "kinds": "memories"}
    ).json()

    assert api.get("/api/settings").json()["recall_mode"] == "keyword"
    assert (found["mode"], found["items"]) == ("keyword", [])


@pytest.mark.django_db
def test_with_no_process_recall_is_keyword_and_quick(api):
    """No embedder at the data dir's socket (talorys_run not running it): keyword recall, at once."""
    api.post("/api/memories", {"text": "Sister Ana lives in Lisbon"})
    assert recall_mode(owner_settings=owner_settings_get()) == "hybrid"  # as configured

    began = time.monotonic()
    found = api.get("/api/search", {"q": "Lisbon", "kinds": "memories"}).json()

    assert time.monotonic() - began < embeddings.QUERY_BUDGET + 1.0
    assert found["mode"] == "keyword" and found["items"][0]["title"] == "Sister Ana lives in Lisbon"


@pytest.mark.django_db
def test_a_query_neither_worded_nor_meant_like_anything_finds_nothing(local_embeddings):
    memory_services.memory_create(text="My daughter started the cello")
    services.task_create(title="Renew the car insurance")

    assert selectors.recall_items(query="quantum chromodynamics lecture") == []
    # The conflict check still gets its nearest, however far, for the model to judge.
    near = selectors.recall_memories(query="quantum chromodynamics lecture", unrelated=True)
    assert [hit.title for hit in near] == ["My daughter started the cello"]


@pytest.mark.django_db
def test_a_message_embedded_as_the_query_is_indexed_with_that_vector(local_embeddings):
    from agent.models import Conversation, Message
    from memory.models import RecallEntry

    text = "Which instrument does my kid play these days?"
    selectors.recall_items(query=text)
    conversation = Conversation.objects.create(title="Music")
    message = Message.objects.create(conversation=conversation, role="user", content=text)
    Message.objects.create(conversation=conversation, role="assistant", content="The cello.")

    memory_services.reindex()

    entry = RecallEntry.objects.get(kind="messages", object_id=message.pk)
    assert entry.vector_model == f"{model_files.NAME}:sentences"
    found = selectors.recall_items(query="what does my child play", kinds=["messages"])
    assert message.pk in {hit.id for hit in found}
