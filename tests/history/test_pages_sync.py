"""Every open page is told what changed (talorys/web/live.py): the conversation services and a
reverted change send their sync frame to the pages' group once committed, never before, and a
channel layer that fails costs the pages their update, not the caller its change."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from agent import services as agent_services
from agent.turn_saves import turn_finish
from talorys.history.changes import change_revert
from talorys.history.models import Change
from talorys.lib.errors import ValidationFailed
from talorys.web.live import PAGES_GROUP, pages_tell
from tests.agent.test_runner import conversation_with

pytestmark = pytest.mark.django_db


@pytest.fixture
def open_page() -> Any:
    """A page's channel in the pages' group; ``told()`` is what reached it so far."""
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(PAGES_GROUP, channel)

    async def drain() -> list[dict[str, Any]]:
        queue = layer.channels.get(channel)
        received = []
        while queue is not None and not queue.empty():
            received.append((await layer.receive(channel))["sync"])
        return received

    class Page:
        @staticmethod
        def told() -> list[dict[str, Any]]:
            return async_to_sync(drain)()

    yield Page
    async_to_sync(layer.group_discard)(PAGES_GROUP, channel)


def test_conversation_changes_are_told_once_committed(
    open_page, django_capture_on_commit_callbacks
):
    conversation = conversation_with(("user", "hi"), ("assistant", "Hello!"))

    with django_capture_on_commit_callbacks(execute=False) as waiting:
        agent_services.conversation_rename(conversation_id=conversation.pk, title="Greetings")
    assert open_page.told() == []  # not before the commit
    for callback in waiting:
        callback()
    with django_capture_on_commit_callbacks(execute=True):
        agent_services.conversation_delete(conversation_id=conversation.pk)
    with django_capture_on_commit_callbacks(execute=True):
        agent_services.conversation_restore(conversation_id=conversation.pk)

    said = {"what": "conversation", "conversation_id": conversation.pk}
    assert open_page.told() == [
        said | {"change": "renamed", "title": "Greetings"},
        said | {"change": "deleted"},
        said | {"change": "restored"},
    ]


def test_a_turn_begun_and_finished_is_told(open_page, django_capture_on_commit_callbacks):
    conversation = conversation_with(("user", "hi"), ("assistant", "Hello!"))
    with django_capture_on_commit_callbacks(execute=True):
        start = agent_services.turn_begin(conversation_id=conversation.pk, text="and now?")
    with django_capture_on_commit_callbacks(execute=True):
        turn_finish(
            conversation_id=conversation.pk,
            turn_id=start.turn_id,
            message_id=start.assistant_message_id,
            content="Now this.",
            tool_activity=[],
            status="complete",
        )
    assert [t["change"] for t in open_page.told()] == ["turn", "reply"]


def test_a_refused_rename_tells_nobody(open_page, django_capture_on_commit_callbacks):
    conversation = conversation_with(("user", "hi"))
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ValidationFailed):
        agent_services.conversation_rename(conversation_id=conversation.pk, title="   ")
    assert open_page.told() == []


def test_a_reverted_change_is_told_with_its_reply(open_page, django_capture_on_commit_callbacks):
    conversation = conversation_with(("user", "hi"))
    agent_services.conversation_rename(conversation_id=conversation.pk, title="Renamed")
    change = Change.objects.get(kind="conversation", action="update")
    open_page.told()
    with django_capture_on_commit_callbacks(execute=True):
        change_revert(change_id=change.pk)
    told = open_page.told()
    assert {"what": "change", "change_id": change.pk, "message_id": None} in told


def test_a_channel_layer_that_fails_costs_the_caller_nothing(
    settings, django_capture_on_commit_callbacks, caplog
):
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},  # nothing listens there
        }
    }
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    try:
        with django_capture_on_commit_callbacks(execute=True):
            pages_tell("conversation", conversation_id=1, change="renamed", title="x")
    finally:
        channel_layers.backends.clear()
    assert "Could not tell open pages that conversation changed" in caplog.text
