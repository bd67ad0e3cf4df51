"""``/settings/``: the owner's settings, one form per section, each through
``owner_settings_update`` (the service PATCH /api/settings uses: all or nothing, the same
checks and bounds); push on this device; the API tokens (the accounts services, as
/api/auth/tokens); the calendar feed's URL, and a new one (talorys/owner/services/calendar.py).
Test connection is a button calling POST /api/settings/test-connection. The notification
channels' card is filled by static/talorys/js/settings-channels.js from /api/channels: this
view may not import talorys.notifications (the layers in pyproject.toml)."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from typing import Any
from zoneinfo import available_timezones

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from talorys.accounts.models import ApiToken
from talorys.accounts.selectors import api_token_list
from talorys.accounts.services import api_token_create, api_token_revoke
from talorys.lib.errors import ValidationFailed
from talorys.owner.middleware import OwnerRequest
from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings
from talorys.owner.selectors import (
    embeddings_provider_kind,
    model_endpoint,
    model_provider_kind,
    recall_mode,
)
from talorys.owner.services.calendar import calendar_path, calendar_secret_rotate
from talorys.owner.services.settings import owner_settings_update
from talorys.web.pages import form_text, owner_page, page_of, run_action, whole_number

BACK = "/settings/"
# Where the page keeps a new token's secret until it has shown it, once (the session is stored
# on the server, unlike the messages' cookie).
NEW_TOKEN_KEY = "talorys_new_token"

# The limits section: each setting, what the owner calls it, and what it bounds.
LIMITS = [
    ("daily_ai_requests", "Chat requests a day", "Requests to the chat model, in chat."),
    (
        "daily_scheduled_ai_requests",
        "Scheduled requests a day",
        "Requests to the chat model by automations.",
    ),
    ("daily_embedding_requests", "Embedding requests a day", "For semantic recall."),
    ("max_steps_per_turn", "Model steps per reply", "How many times one reply may call the model."),
    (
        "max_tool_calls_per_turn",
        "Tool calls per reply",
        "Tasks, notes, memories… one reply touches.",
    ),
    ("max_output_tokens", "Tokens per model step", "The longest answer of one step."),
    ("max_context_tokens", "Context tokens", "How much of the conversation the model sees."),
]
LABELS = {name: label for name, label, _help in LIMITS} | {
    "time_zone": "Time zone",
    "model_base_url": "Server URL",
    "model_name": "Model",
    "model_api_key": "API key",
    "embeddings_base_url": "Embeddings server URL",
    "embeddings_model": "Embeddings model",
    "embeddings_api_key": "Embeddings API key",
    "quiet_hours_start": "Quiet hours start",
    "quiet_hours_end": "Quiet hours end",
}


@functools.cache
def time_zones() -> list[str]:
    return sorted(available_timezones())


def _whole(request: HttpRequest, name: str) -> int:
    value = form_text(request, name)
    try:
        return int(value)
    except ValueError:
        if not value:
            raise ValidationFailed(f"{name} is empty: give a whole number.") from None
        raise ValidationFailed(f"{name}: “{value[:40]}” is not a whole number.") from None


def _time(request: HttpRequest, name: str) -> dt.time | None:
    value = form_text(request, name)
    if not value:
        return None
    try:
        return dt.time.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(f"{name}: “{value[:40]}” is not a time like 22:00.") from None


def _key(request: HttpRequest, name: str) -> dict[str, str]:
    """A write-only key: a blank field keeps the stored one (sends nothing), "Remove" clears it."""
    if request.POST.get(f"{name}_remove"):
        return {name: ""}
    value = form_text(request, name)
    return {name: value} if value else {}


def _model_changes(request: HttpRequest) -> dict[str, Any]:
    return {
        "model_base_url": form_text(request, "model_base_url"),
        "model_name": form_text(request, "model_name"),
        "model_sees_images": bool(request.POST.get("model_sees_images")),
        **_key(request, "model_api_key"),
    }


def _embeddings_changes(request: HttpRequest) -> dict[str, Any]:
    return {
        "semantic_enabled": bool(request.POST.get("semantic_enabled")),
        "embeddings_base_url": form_text(request, "embeddings_base_url"),
        "embeddings_model": form_text(request, "embeddings_model"),
        **_key(request, "embeddings_api_key"),
    }


# section -> (what its form changes, what the owner reads when it is saved)
SECTIONS: dict[str, tuple[Callable[[HttpRequest], dict[str, Any]], str]] = {
    "time_zone": (lambda r: {"time_zone": form_text(r, "time_zone")}, "Time zone saved."),
    "model": (_model_changes, "Model provider saved."),
    "embeddings": (_embeddings_changes, "Embeddings saved."),
    "limits": (lambda r: {name: _whole(r, name) for name, _l, _h in LIMITS}, "Limits saved."),
    "quiet_hours": (
        lambda r: {name: _time(r, name) for name in ("quiet_hours_start", "quiet_hours_end")},
        "Quiet hours saved.",
    ),
    "calendar_details": (
        lambda r: {"calendar_feed_details": bool(r.POST.get("calendar_feed_details"))},
        "Calendar feed saved.",
    ),
}


def _token_create(request: HttpRequest, user: User) -> str:
    token, raw = api_token_create(
        user=user, name=form_text(request, "name"), scope=form_text(request, "scope")
    )
    request.session[NEW_TOKEN_KEY] = {"name": token.name, "token": raw}
    return f"Token “{token.name}” made. Copy it now: it is shown this once."


def _token_revoke(request: HttpRequest, user: User) -> str:
    token_id = whole_number(request.POST, "token_id", label="Token")
    if token_id is None:
        raise ValidationFailed("Say which token to revoke.")
    token = api_token_revoke(user=user, token_id=token_id)
    return f"Token “{token.name}” revoked: scripts using it are refused from now on."


def _post(request: HttpRequest) -> HttpResponse:
    section = form_text(request, "section")
    user: User = request.user  # type: ignore[assignment]
    if section in SECTIONS:
        read, done = SECTIONS[section]
        # The service names settings as the API does; the page names them as its labels do.
        return run_action(
            request,
            lambda: owner_settings_update(**read(request)),
            back=f"{BACK}#{section}",
            done=done,
            labels=LABELS,
        )
    action: Callable[[], object]
    if section == "token_create":
        action, anchor = (lambda: _token_create(request, user)), "tokens"
    elif section == "token_revoke":
        action, anchor = (lambda: _token_revoke(request, user)), "tokens"
    elif section == "calendar_rotate":
        action, anchor = _calendar_rotate, "calendar"
    else:
        action, anchor = _unknown_section, ""
    return run_action(request, action, back=f"{BACK}#{anchor}", done=lambda said: said)


def _calendar_rotate() -> str:
    calendar_secret_rotate()
    return "New calendar address made: subscribe to it again; the old one no longer works."


def _unknown_section() -> None:
    raise ValidationFailed("Unknown settings section.")


@owner_page("GET", "POST")
def settings_page(request: OwnerRequest) -> HttpResponse:
    if request.method == "POST":
        return _post(request)
    row: OwnerSettings = request.owner_settings
    return render(
        request,
        "owner/settings.html",
        {
            "row": row,
            "zones": time_zones(),
            "provider": model_provider_kind(owner_settings=row),
            "endpoint": model_endpoint(owner_settings=row),
            "embeddings_provider": embeddings_provider_kind(owner_settings=row),
            "recall_mode": recall_mode(owner_settings=row),
            "limits": [
                {
                    "name": name,
                    "label": label,
                    "help": help_text,
                    "value": getattr(row, name),
                    "min": SETTINGS_BOUNDS[name][0],
                    "max": SETTINGS_BOUNDS[name][1],
                }
                for name, label, help_text in LIMITS
            ],
            "max_lengths": {
                "url": OwnerSettings.URL_MAX,
                "model": OwnerSettings.MODEL_NAME_MAX,
                "key": OwnerSettings.API_KEY_MAX,
                "token_name": ApiToken.NAME_MAX,
            },
            "tokens": page_of(request, api_token_list(user=request.user)),  # type: ignore[arg-type]
            # Where MCP clients connect with a token (config/mcp/, docs/clients.md).
            "mcp_url": request.build_absolute_uri("/mcp"),
            # The OpenAI-compatible API's base URL (agent/completions/, docs/clients.md).
            "v1_url": request.build_absolute_uri("/v1"),
            "calendar_url": (
                feed := request.build_absolute_uri(calendar_path(row.calendar_secret))
            ),
            # The same feed for "Subscribe": calendar apps open webcal:// addresses.
            "calendar_webcal": "webcal://" + feed.split("://", 1)[1],
            "scopes": ApiToken.Scope.choices,
            "new_token": request.session.pop(NEW_TOKEN_KEY, None),
        },
    )
