"""The chat pages: ``/`` (a new conversation) and ``/c/<id>/`` (one conversation).

The page is given the API's rules it shows before asking: the longest message the API takes
(the composer counts toward it and refuses past it, before sending), and which failed replies a
Retry can mend. The header's model badge names the open conversation's own model when it has
one (the default's name otherwise, talorys/owner/context.py); chat-model.js keeps it so when
another conversation is opened or the picker changes."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agent.models import Conversation
from agent.selectors import conversation_model
from agent.services import MAX_MESSAGE_CHARS
from talorys.web.pages import owner_page

# The codes of a failed reply that the same request may not meet again: the model server was
# slow, unreachable, busy or answered badly, this server was busy or lost the reply, another
# reply was being written. Only these (and a reply stopped before it began) are offered Retry:
# a refused message (VALIDATION), a refused API key or a spent budget would fail again the same.
RETRYABLE_CODES = (
    "PROVIDER_TIMEOUT",
    "PROVIDER_UNREACHABLE",
    "PROVIDER_RATE_LIMITED",
    "PROVIDER_BAD_RESPONSE",
    "RATE_LIMITED",
    "SERVICE_UNAVAILABLE",
    "INTERNAL",
    "INTERRUPTED",
    "CONFLICT",
)


@owner_page("GET")
def home(request: HttpRequest, conversation_id: int | None = None) -> HttpResponse:
    context = {
        "conversation_id": conversation_id,
        "title_max": Conversation.TITLE_MAX,
        "message_max": MAX_MESSAGE_CHARS,
        "retryable": " ".join(RETRYABLE_CODES),
    }
    model = conversation_model(conversation_id=conversation_id) if conversation_id else ""
    if model:  # over the context processor's default (a view's context wins)
        context["model_label"] = model
    return render(request, "home.html", context)
