"""A web process never loads the model: a live daphne serves a chat turn with semantic recall on
(through the embedder process), and its memory map holds no onnxruntime or tokenizers library."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import services as memory_services
from talorys.owner.services.settings import owner_settings_update
from tests.agent.fake_openai import text
from tests.agent.test_runner import use_fake
from tests.agent.test_sse_live import logged_in, sse_events

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

RUNTIMES = ("onnxruntime", "tokenizers")


@pytest.fixture
def live_server_env(embedder_session) -> dict[str, str]:
    return {"TALORYS_EMBEDDER_URL": embedder_session.url}


def mapped_libraries(pid: int) -> set[str]:
    """The files mapped into process ``pid``."""
    lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return {line.split()[-1] for line in lines if len(line.split()) >= 6}


def test_a_web_process_recalls_by_meaning_without_the_model_runtime(live_servers, fake_openai):
    (server,) = live_servers(1)
    use_fake(fake_openai)
    owner_settings_update(semantic_enabled=True)
    memory_services.memory_create_unchecked(text="My daughter started the cello")
    memory_services.memory_create_unchecked(text="I renewed the car insurance in March")
    fake_openai.script(text("The cello."))
    client = logged_in(server.url)

    with client.stream(
        "POST", "/api/chat", json={"text": "Which instrument does my kid play?"}
    ) as r:
        received = list(sse_events(r))
    found = client.get(
        "/api/search", params={"q": "which instrument does my kid play", "kinds": "memories"}
    ).json()
    health = client.get("/api/health").json()
    client.close()

    assert received[-1][2]["status"] == "complete"
    # Semantic recall ran in that process: by meaning (no shared word), the memory came first...
    assert found["mode"] == "hybrid"
    assert found["items"][0]["title"] == "My daughter started the cello"
    system = fake_openai.requests[0]["messages"][0]["content"]
    assert "My daughter started the cello" in system
    assert health["embedder"] == "ok"
    # ...and no model runtime was ever mapped into it.
    mapped = mapped_libraries(server.pid)
    assert any("python" in path or "libc" in path for path in mapped)  # the map was read
    assert not [path for path in mapped if any(name in path for name in RUNTIMES)]
