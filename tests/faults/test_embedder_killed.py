"""The embedder process killed (SIGKILL) while the owner chats: the turn still ends complete,
its recall by keyword, quickly; health says degraded and why; once the process is back, the
items left without a vector are embedded by the next lazy pass."""

from __future__ import annotations

import logging
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from agent.models import Message
from memory import embeddings
from memory import services as memory_services
from memory.models import RecallEntry
from talorys.ops.health import health_report
from talorys.owner.selectors import owner_settings_current
from talorys.owner.services.settings import owner_settings_update
from tests.agent.fake_openai import text
from tests.agent.test_runner import TURN_DATABASE, reply_of, turn, use_fake
from tests.conftest import embedder_process

pytestmark = TURN_DATABASE


@pytest.fixture
def folder():
    path = Path(tempfile.mkdtemp(prefix="tal-kill-"))  # short: a socket path has 107 bytes
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_killed_embedder_leaves_keyword_recall_and_its_items_are_embedded_later(
    folder, settings, fake_openai, caplog
):
    use_fake(fake_openai)
    owner_settings_update(semantic_enabled=True)
    memory_services.memory_create(text="Sister Ana lives in Lisbon")
    with embedder_process(folder) as embedder:
        settings.TALORYS_EMBEDDER_URL = embedder.url
        assert health_report().embedder == "ok"
        embedder.process.send_signal(signal.SIGKILL)
        embedder.process.wait()
        fake_openai.script(text("In Lisbon."))

        began = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="memory"):
            events = turn(text="Remind me, where does Ana live? Lisbon?")
        took = time.monotonic() - began

        report = health_report()
    reply = reply_of(events)
    assert (events[-1]["type"], reply.status) == ("done", Message.Status.COMPLETE)
    assert reply.content == "In Lisbon."
    assert "keyword only" in caplog.text  # the recall's mode, as the log tells it
    # The prompt still has the owner's memories.
    assert "Sister Ana lives in Lisbon" in fake_openai.requests[0]["messages"][0]["content"]
    assert took < 5  # no wait on the dead process (a refused socket fails at once)
    assert report.embedder == "unavailable" and "embedder" in report.problems
    assert report.status == "degraded" and report.database == "ok"
    assert "no answer at unix:" in report.embedder_error

    question = Message.objects.get(role="user", content__startswith="Remind me")
    assert not RecallEntry.objects.filter(
        kind="messages", object_id=question.pk, vector_model=embeddings.LocalEmbedder.name
    ).exists()

    # The process back on the same socket (talorys_run restarts it in about a second): after
    # the short pause, the next lazy pass embeds what was left.
    with embedder_process(folder):
        time.sleep(embeddings.LocalEmbedder.pause_after_failure)
        memory_services.reindex_recent()
        assert health_report().embedder == "ok"
    assert RecallEntry.objects.filter(
        kind="messages", object_id=question.pk, vector_model=embeddings.LocalEmbedder.name
    ).exists()


def test_the_questions_vector_is_made_at_the_claim_beside_the_turns_reads(
    folder, settings, fake_openai, caplog
):
    """The claim starts the question's vector (query_prefetch): once it is made, the embedder
    can die and the turn's recall is still by meaning; nothing asks the process again."""
    from asgiref.sync import async_to_sync

    from agent.runner import begin_turn, stream_turn
    from tests.waiting import wait_for

    use_fake(fake_openai)
    owner_settings_update(semantic_enabled=True)
    # The claim's guess reads the process's copy of the settings, as the last turn left it:
    # read them now, as a turn before this one would have (another test's copy may say off).
    owner_settings_current(version=None)
    question = "Which instrument does my kid play these days?"
    with embedder_process(folder) as embedder:
        settings.TALORYS_EMBEDDER_URL = embedder.url
        memory_services.memory_create(text="My daughter started the cello")
        memory_services.reindex()  # its vector, while the process is up
        fake_openai.script(text("The cello."))
        start = async_to_sync(begin_turn)(text=question)
        wait_for(
            lambda: (embeddings.LocalEmbedder.name, question) in embeddings._queries, "the vector"
        )
        embedder.process.send_signal(signal.SIGKILL)
        embedder.process.wait()

        async def rest() -> list[dict]:
            return [event async for event in stream_turn(start)]

        with caplog.at_level(logging.WARNING, logger="memory"):
            events = async_to_sync(rest)()

    assert events[-1]["status"] == Message.Status.COMPLETE
    # The recall used the vector made at the claim: it did not fall back to keywords.
    assert "keyword only" not in caplog.text
    assert "My daughter started the cello" in fake_openai.requests[0]["messages"][0]["content"]
