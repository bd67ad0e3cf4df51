"""The chat pages: ``/`` (a new conversation) and ``/c/<id>/`` (one conversation)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agent.models import Conversation
from talorys.lib.pages import owner_page


@owner_page("GET")
def home(request: HttpRequest, conversation_id: int | None = None) -> HttpResponse:
    return render(
        request,
        "home.html",
        {"conversation_id": conversation_id, "title_max": Conversation.TITLE_MAX},
    )
