"""What the header of every page shows: which model answers, and the owner's zone."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from talorys.owner.selectors import model_endpoint, model_provider_kind


def owner_header(request: HttpRequest) -> dict[str, Any]:
    owner_settings = getattr(request, "owner_settings", None)
    if owner_settings is None:
        return {}
    demo = model_provider_kind(owner_settings=owner_settings) == "demo"
    label = "Demo model" if demo else model_endpoint(owner_settings=owner_settings).model
    # ``model_label`` is what the badge shows: the chat page puts a conversation's own model
    # there (agent/views.py); ``model_default_label`` stays the default's, for the page to go
    # back to when it opens a conversation on the default (static/talorys/js/chat-model.js).
    return {
        "owner_settings": owner_settings,
        "model_is_demo": demo,
        "model_label": label,
        "model_default_label": label,
    }
