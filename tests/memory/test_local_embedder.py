"""The default local embedder (numpy MiniLM): the same tokens and vectors as the reference
runtime, loaded from the install alone, and semantic recall on with no configuration."""

from __future__ import annotations

import importlib.util
import shutil

import numpy as np
import pytest

from benchmarks import recall_set
from memory import embeddings
from memory import services as memory_services
from talorys.owner.selectors import recall_mode
from talorys.owner.services.settings import owner_settings_get
from talorys.providers import local_embedding
from talorys.workspace import services
from tests.conftest import _missing

EDGE_TEXTS = [
    "I live in Berlin",
    "Where do I live?",
    "Café naïve résumé — ÉLAN, Straße, Ærø",
    "東京で会いましょう, 北京 too",
    "emoji 🎉🎉 and symbols: $5.00 + 3% = <ok> ~ a|b ^_^ `code`",
    "tabs\tand\nnewlines\r\nand\u00a0no-break\u2003spaces",
    "control\x00chars\x07here\u200b\ufeff",
    "unbelievably-hyphenated_words and CamelCaseWords and https://example.org/a?b=c",
    "x" * 150 + " a very long word",
    "Dr. Okonkwo's clinic extension is 4471 (ticket INC-20931)",
    "",
]


@pytest.fixture(scope="module")
def reference():
    """The onnxruntime runtime of the same file (the local-embeddings extra, in the dev install)."""
    if not all(importlib.util.find_spec(name) for name in ("onnxruntime", "tokenizers")):
        _missing("The local-embeddings extra (onnxruntime, tokenizers), to compare against")
    return local_embedding.OnnxEmbedder()


@pytest.fixture(scope="module")
def numpy_embedder():
    return local_embedding.NumpyEmbedder()


def corpus() -> list[str]:
    rs = recall_set.build(sessions=6, turns_per_session=20)
    return EDGE_TEXTS + [t.text for t in rs.turns] + [q.text for q in rs.questions]


def test_the_tokenizer_cuts_text_as_the_reference_does(numpy_embedder, reference):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(local_embedding._tokenizer_path()))
    tokenizer.enable_truncation(max_length=256)
    tokenizer.no_padding()
    ours = numpy_embedder._model.tokenizer
    long_text = " ".join(corpus())

    for text in [*corpus(), long_text]:
        assert ours.encode(text, max_tokens=256) == tokenizer.encode(text).ids, text
    assert len(ours.encode(long_text, max_tokens=256)) == 256


def test_numpy_vectors_are_the_reference_runtimes(numpy_embedder, reference):
    # The edge cases, every third text of the recall set (about 320: the whole, 958, took 16 s of
    # the suite) and one past the 256-token cut.
    texts = [*EDGE_TEXTS, *corpus()[len(EDGE_TEXTS) :: 3], " ".join(corpus()[:60])]

    ours = numpy_embedder.embed(texts)
    theirs = reference.embed(texts)

    assert ours.shape == theirs.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() > 0.9999
    assert numpy_embedder.name == reference.name


def test_a_texts_vector_does_not_depend_on_its_batch(numpy_embedder):
    short = "My daughter started the cello"
    alone = numpy_embedder.embed([short])[0]
    among = numpy_embedder.embed(["word " * 300, short, "another text of middling length"])

    assert float(alone @ among[1]) > 0.99999
    assert numpy_embedder.embed([]).shape == (0, 384)


def test_paraphrases_are_near_and_unrelated_texts_are_not(numpy_embedder):
    cello, instrument, bike = numpy_embedder.embed(
        [
            "My daughter started the cello",
            "Which instrument does my kid play?",
            "I bought a new bike",
        ]
    )

    assert float(cello @ instrument) > 0.5
    assert float(cello @ bike) < 0.2


@pytest.mark.django_db
def test_a_fresh_install_recalls_by_meaning_with_no_configuration(api):
    """Done-when: hybrid recall with no configuration; a paraphrase is found."""
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
def test_the_owner_can_switch_semantic_recall_off(api):
    api.post("/api/memories", {"text": "My daughter started the cello"})

    api.patch("/api/settings", {"semantic_enabled": False})
    found = api.get(
        "/api/search", {"q": "which instrument does my kid play", "kinds": "memories"}
    ).json()

    assert api.get("/api/settings").json()["recall_mode"] == "keyword"
    assert (found["mode"], found["items"]) == ("keyword", [])


@pytest.mark.django_db
def test_a_changed_model_file_leaves_keyword_recall_working(tmp_path, monkeypatch):
    changed = tmp_path / "model.onnx"
    shutil.copyfile(local_embedding._model_path(), changed)
    with changed.open("r+b") as file:
        file.seek(-1, 2)
        file.write(b"\x00" if file.read(1) != b"\x00" else b"\x01")
    monkeypatch.setattr(local_embedding, "_model_path", lambda: changed)
    monkeypatch.setattr(local_embedding, "_instances", {})
    monkeypatch.setattr(local_embedding, "_failures", {})
    memory_services.memory_create(text="Sister Ana lives in Lisbon")

    with pytest.raises(RuntimeError, match="not the pinned file"):
        local_embedding.local_embedder()
    assert embeddings.active_embedder() is None
    # Tried once per process: the second call fails at once, with the same reason.
    with pytest.raises(RuntimeError, match="not the pinned file"):
        local_embedding.local_embedder()
    from memory import selectors

    assert selectors.recall_memories(query="Lisbon")[0].title == "Sister Ana lives in Lisbon"


def test_an_unknown_runtime_is_refused_at_start(tmp_path):
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            **os.environ,
            "TALORYS_DATA_DIR": str(tmp_path),
            "DJANGO_SETTINGS_MODULE": "talorys.settings",
            "TALORYS_LOCAL_EMBEDDER": "tensorflow",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "TALORYS_LOCAL_EMBEDDER='tensorflow': use numpy or onnxruntime" in result.stderr


@pytest.mark.django_db
def test_the_default_embedder_is_the_numpy_runtime():
    owner = owner_settings_get()
    assert recall_mode(owner_settings=owner) == "hybrid"
    assert isinstance(embeddings.active_embedder(), local_embedding.NumpyEmbedder)


@pytest.mark.django_db
def test_a_query_neither_worded_nor_meant_like_anything_finds_nothing():
    from memory import selectors

    memory_services.memory_create(text="My daughter started the cello")
    services.task_create(title="Renew the car insurance")

    assert selectors.recall_items(query="quantum chromodynamics lecture") == []
    # The conflict check still gets its nearest, however far, for the model to judge.
    near = selectors.recall_memories(query="quantum chromodynamics lecture", unrelated=True)
    assert [hit.title for hit in near] == ["My daughter started the cello"]


def test_a_forked_process_embeds_with_a_helper_of_its_own(numpy_embedder):
    """A Celery worker's child is forked: the parent's helper thread is not there."""
    import os
    import signal

    query = "Which instrument does my kid play?"
    expected = numpy_embedder.embed([query])[0]  # the parent's helper thread is running now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        signal.alarm(30)  # a child stuck on its parent's helper is ended, and the test fails
        try:
            os.write(write, numpy_embedder.embed([query])[0].tobytes())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        vector = np.frombuffer(pipe.read(), dtype=np.float32)
    os.waitpid(child, 0)

    assert vector.shape == (384,) and float(vector @ expected) > 0.99999


@pytest.mark.django_db
def test_a_message_embedded_as_the_query_is_indexed_with_that_vector(monkeypatch):
    from agent.models import Conversation, Message
    from memory import selectors

    embedder = local_embedding.local_embedder()
    asked: list[str] = []
    real_embed = embedder.embed
    monkeypatch.setattr(embedder, "embed", lambda texts: asked.extend(texts) or real_embed(texts))
    text = "Which instrument does my kid play these days?"
    selectors.recall_items(query=text)
    conversation = Conversation.objects.create(title="Music")
    message = Message.objects.create(conversation=conversation, role="user", content=text)
    Message.objects.create(conversation=conversation, role="assistant", content="The cello.")

    memory_services.reindex()

    assert asked.count(text) == 1 and "The cello." in asked
    from memory.models import RecallEntry

    entry = RecallEntry.objects.get(kind="messages", object_id=message.pk)
    assert entry.vector_model == local_embedding.NAME
    found = selectors.recall_items(query="what does my child play", kinds=["messages"])
    assert message.pk in {hit.id for hit in found}
