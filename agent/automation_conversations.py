"""A scheduled prompt's answered run, saved as a conversation the owner can continue
(automations/services/runs.py calls it inside the run's transaction)."""

from __future__ import annotations

from typing import Any

from agent.models import Conversation, Message, Origin
from talorys.lib.validation import one_line
from talorys.providers.base import without_nul
from talorys.web.live import pages_tell


def conversation_from_automation(
    *, title: str, prompt: str, reply: str, tool_activity: list[Any]
) -> Conversation:
    """A scheduled prompt's run as a conversation (``Origin.AUTOMATION``): its stored prompt,
    then the model's answer with the tools it called. Titled by the run (``MODEL``: no turn
    retitles it); the owner continues it like any chat. Call inside the run's transaction."""
    conversation = Conversation.objects.create(
        title=one_line(without_nul(title))[: Conversation.TITLE_MAX] or "Scheduled prompt",
        title_source=Conversation.TitleSource.MODEL,
        origin=Origin.AUTOMATION,
    )
    prompt_message = Message.objects.create(
        conversation=conversation,
        role=Message.Role.USER,
        content=without_nul(prompt),
        origin=Origin.AUTOMATION,
    )
    Message.objects.create(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=without_nul(reply),
        origin=Origin.AUTOMATION,
        tool_activity=without_nul(tool_activity),
        parent=prompt_message,
    )
    # Open chat lists show it (sent on commit): talorys/web/live.py.
    pages_tell("conversation", conversation_id=conversation.pk, change="turn")
    return conversation
